"""Shuffled batches (shuffle the data every epoch, cut it into batches): a dominating and a dominated pair.

**Relation.** Zero-out: the neighbouring dataset replaces one record x by a null record whose clipped
gradient is 0 (and that still occupies its place in the permutation). Under it the Poisson-sampled
step has exactly the add/remove pair (an absent record and a null one contribute the same 0), so
the two samplers' numbers compare at equal σ, batch size and steps (Chua et al., "How Private are
DP-SGD Implementations?", ICML 2024, §2, whose analysis uses this pair of datasets).

**Upper end (no amplification).** A permutation is drawn independently of the data; given it, x lies
in exactly one batch of each epoch, and only that step's sum moves, by a vector of norm ≤ 1. The E
epochs are then an adaptive composition of E Gaussian releases of sensitivity 1, i.e.
μ = √E/σ-GDP (Dong–Roth–Su Cor. 3.3), the law of ``Gaussian(σ/√E)``; by joint convexity over the
permutations the same pair dominates the run. With T_e batches per epoch (T_e = ⌊1/q⌋ for a batch of
size b = q·n; a kept short last batch only makes epochs longer), ``steps`` steps touch at most
E = ⌈steps/T_e⌉ epochs.

**Lower end (an explicit pair, Chua et al. 2024).** All other records have gradient −1 (one
dimension), x has +1, its neighbour the null record. Shifting every batch sum by the batch size b,
one epoch releases, over T_e steps, P = (1/T_e) Σₜ N(2eₜ, σ²I) and Q = (1/T_e) Σₜ N(eₜ, σ²I); epochs
are independent. Any post-processing of this pair is a pair the run can produce, so its hockey-stick
divergence is at most the run's. We post-process each epoch by the maximum coordinate M, binned:

    P(M ≤ c) = Φ((c − 2)/σ)·Φ(c/σ)^{T_e−1},   Q(M ≤ c) = Φ((c − 1)/σ)·Φ(c/σ)^{T_e−1}

(Chua et al. use the single threshold sets {M > C}; finer bins only help), giving a
``DiscretePair`` whose E-fold composition has a certified *lower* end from the PLD engine. Bin
masses are differences of the closed-form CDFs, computed in log space.

**A batch size that does not divide the dataset** (b = 256 of n = 60,000: 1/q = 234.375). The run
people execute keeps the short last batch (PyTorch's ``DataLoader(drop_last=False)``, the default):
every epoch has T_e = ⌈n/b⌉ = ⌈1/q⌉ batches of *known* sizes b_t (⌊1/q⌋ of b, one of n − b⌊n/b⌋),
and x lands in batch t with probability b_t/n. Shifting batch t's sum by its own size b_t, the epoch
releases P = Σₜ (b_t/n) N(2eₜ, σ²I) against Q = Σₜ (b_t/n) N(eₜ, σ²I) — the same pair with unequal
weights. The law of the maximum coordinate M does not depend on which coordinate carries the shift,
so P(M ≤ c) and Q(M ≤ c) are the formulas above with T_e = ⌈1/q⌉, whatever the weights: the lower
pair holds with T_e = ⌈1/q⌉ batches per epoch, counted over the ⌊steps/T_e⌋ complete epochs. (A run
that *drops* the short batch is a different run; its lower end is not computed here: stated in
``docs/samplers.md``.) The upper end is unchanged (E = ⌈steps/⌊1/q⌋⌉ epochs over-counts them).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import log_ndtr, ndtri

from optcomp._numerics import (
    SHUFFLE_HIGH_SF,
    SHUFFLE_LOW_CDF,
    FloatArray,
    check_int,
    check_positive,
    check_sampling_rate,
)
from optcomp.mechanisms.discrete import DiscretePair
from optcomp.mechanisms.gaussian import Gaussian

#: Relative slack within which 1/q counts as an integer number of batches per epoch.
INTEGER_BATCHES_RTOL = 1e-9
#: Number of bins of the maximum statistic of one epoch in the lower-bound pair.
SHUFFLE_BINS = 2000


def batches_per_epoch(sampling_rate: float) -> tuple[int, bool]:
    """(T_e, exact): T_e = 1/q rounded if it is an integer within rounding (exact), else ⌊1/q⌋."""
    q = check_sampling_rate("sampling_rate", sampling_rate)
    inv = 1.0 / q
    near = round(inv)
    if near >= 1 and abs(inv - near) <= INTEGER_BATCHES_RTOL * inv:
        return int(near), True
    return max(1, math.floor(inv)), False


def shuffle_epochs(steps: int, sampling_rate: float) -> int:
    """E = ⌈steps/T_e⌉: the epochs ``steps`` steps touch (module docstring)."""
    t = check_int("steps", steps, minimum=1)
    per_epoch, _ = batches_per_epoch(sampling_rate)
    return -(-t // per_epoch)


def shuffle_upper_mechanism(sigma: float, steps: int, sampling_rate: float) -> Gaussian:
    """``Gaussian(σ/√E)``: the no-amplification pair that dominates E shuffled epochs (zero-out)."""
    s = check_positive("noise_multiplier", sigma)
    return Gaussian(s / math.sqrt(shuffle_epochs(steps, sampling_rate)))


def _log_cdf(c: FloatArray, shift: float, sigma: float, t: int) -> FloatArray:
    return np.asarray(log_ndtr((c - shift) / sigma) + (t - 1) * log_ndtr(c / sigma), dtype=np.float64)


def bin_masses(log_cdf: FloatArray) -> FloatArray:
    """Masses of (−∞, c₀], (c₀, c₁], …, (c_{N−1}, ∞) from log F at the edges c₀ < … < c_{N−1}."""
    first = np.exp(log_cdf[:1])
    with np.errstate(divide="ignore", invalid="ignore"):
        middle = np.exp(log_cdf[1:]) * -np.expm1(log_cdf[:-1] - log_cdf[1:])
    middle = np.where(np.isneginf(log_cdf[1:]), 0.0, middle)
    last = -np.expm1(log_cdf[-1:])
    return np.concatenate([first, middle, last])


def lower_batches_per_epoch(sampling_rate: float) -> int:
    """T_e of the lower pair: 1/q when it is an integer, else ⌈1/q⌉ (the short last batch is kept)."""
    per_epoch, exact = batches_per_epoch(sampling_rate)
    return per_epoch if exact else per_epoch + 1


def shuffle_lower_pair(sigma: float, sampling_rate: float) -> DiscretePair:
    """One epoch of Chua et al.'s pair, post-processed to its binned maximum (module docstring), with
    T_e = :func:`lower_batches_per_epoch` batches (a short last batch kept when 1/q is not an integer)."""
    s = check_positive("noise_multiplier", sigma)
    t = lower_batches_per_epoch(sampling_rate)
    low = min(0.0, s * float(ndtri(SHUFFLE_LOW_CDF ** (1.0 / t))))
    high = 2.0 + s * float(-ndtri(SHUFFLE_HIGH_SF / t))
    edges = np.linspace(low, high, SHUFFLE_BINS - 1)
    p = bin_masses(_log_cdf(edges, 2.0, s, t))
    q = bin_masses(_log_cdf(edges, 1.0, s, t))
    return DiscretePair(tuple(p.tolist()), tuple(q.tolist()))


def shuffle_lower_items(sigma: float, sampling_rate: float, steps: int) -> list[tuple[DiscretePair, int]]:
    """The lower end's composition of ``steps`` shuffled steps: the epoch pair over the complete epochs
    (``[]``, lower end 0, when the run does not complete one epoch)."""
    epochs = check_int("steps", steps, minimum=1) // lower_batches_per_epoch(sampling_rate)
    return [(shuffle_lower_pair(sigma, sampling_rate), epochs)] if epochs >= 1 else []

"""Balls-in-bins (random allocation): each example goes to k of an epoch's t steps, uniformly at random.

**Pipeline and relation.** Per epoch, every example independently picks k of the t steps (k = 1:
balls-in-bins, Chua et al., AISTATS 2025; k-out-of-t: Feldman–Shenfeld's random allocation); step s
releases the sum of the clipped gradients allocated to it plus N(0, σ²). Relation: add/remove one
example x. The other examples' allocations do not depend on x, so conditioning on them and using
joint convexity, one epoch is dominated by — and, with all other gradients 0 and x's a unit vector,
equal to — the t-dimensional pair

    P = C(t, k)⁻¹ Σ_{|S| = k} N(1_S, σ²I_t),   Q = N(0, σ²I_t)   (remove; add: the swap).

Its privacy loss is a log-sum of lognormals with no closed-form law, so this module certifies the
two ends separately:

* **Lower end** (certified): any post-processing of the exact pair is a pair of the run. We take the
  maximum coordinate M, binned (as in :mod:`optcomp.mechanisms.shuffle`):
  P(M ≤ c) = Φ((c − 1)/σ)^k·Φ(c/σ)^{t−k},  Q(M ≤ c) = Φ(c/σ)^t; E epochs compose the binned pair.
* **Upper end** (certified, *not* tight): no amplification — x enters k steps of each epoch with
  sensitivity 1, so E epochs are dominated by ``Gaussian(σ/√(kE))`` (Dong–Roth–Su Cor. 3.3). The
  amplified upper bounds of Feldman–Shenfeld (``PLD_accounting``) are far smaller; their
  construction is not implemented here, so optcomp's upper end is labelled "no amplification".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import log_ndtr, ndtri

from optcomp._numerics import SHUFFLE_HIGH_SF, SHUFFLE_LOW_CDF, check_int, check_positive
from optcomp.mechanisms.discrete import DiscretePair
from optcomp.mechanisms.gaussian import Gaussian
from optcomp.mechanisms.shuffle import SHUFFLE_BINS, bin_masses


def allocation_upper_mechanism(sigma: float, *, selected: int = 1, epochs: int = 1) -> Gaussian:
    """``Gaussian(σ/√(kE))``: the no-amplification pair dominating E epochs (module docstring)."""
    s = check_positive("noise_multiplier", sigma)
    k = check_int("selected", selected, minimum=1)
    e = check_int("epochs", epochs, minimum=1)
    return Gaussian(s / math.sqrt(k * e))


def allocation_lower_pair(sigma: float, steps_per_epoch: int, *, selected: int = 1) -> DiscretePair:
    """One epoch's exact pair post-processed to its binned maximum coordinate (module docstring)."""
    s = check_positive("noise_multiplier", sigma)
    t = check_int("steps_per_epoch", steps_per_epoch, minimum=1)
    k = check_int("selected", selected, minimum=1, maximum=t)
    low = min(0.0, s * float(ndtri(SHUFFLE_LOW_CDF ** (1.0 / t))))
    high = 1.0 + s * float(-ndtri(SHUFFLE_HIGH_SF / t))
    edges = np.linspace(low, high, SHUFFLE_BINS - 1)
    log_p = k * log_ndtr((edges - 1.0) / s) + (t - k) * log_ndtr(edges / s)
    log_q = t * log_ndtr(edges / s)
    p = bin_masses(np.asarray(log_p, dtype=np.float64))
    q = bin_masses(np.asarray(log_q, dtype=np.float64))
    return DiscretePair(tuple(p.tolist()), tuple(q.tolist()))


@dataclass(frozen=True, slots=True, kw_only=True)
class RandomAllocation:
    """One epoch of k-out-of-t random allocation with a Gaussian step: a run description, not a law.

    dp_accounting's ``RandomAllocationDpEvent(event=GaussianDpEvent(σ), num_selected=k, num_steps=t)``
    (google/differential-privacy PR #414). optcomp has no exact privacy-loss law for it; it is accounted
    by two certified ends (module docstring): :meth:`upper_mechanism` dominates it (no amplification),
    :meth:`lower_pair` is dominated by it (the exact pair's binned maximum). Relation: add/remove.

    Attributes:
        sigma: noise multiplier σ > 0 of each step's Gaussian.
        steps: t ≥ 1 steps in the epoch.
        selected: k, 1 ≤ k ≤ t, the steps each example is allocated to.
    """

    sigma: float
    steps: int
    selected: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", check_positive("sigma", self.sigma))
        object.__setattr__(self, "steps", check_int("steps", self.steps, minimum=1))
        object.__setattr__(self, "selected", check_int("selected", self.selected, minimum=1, maximum=self.steps))

    def upper_mechanism(self) -> Gaussian:
        """``Gaussian(σ/√k)``: dominates the epoch (no amplification)."""
        return allocation_upper_mechanism(self.sigma, selected=self.selected)

    def lower_pair(self) -> DiscretePair:
        """The epoch's exact pair post-processed to its binned maximum coordinate: dominated by the epoch."""
        return allocation_lower_pair(self.sigma, self.steps, selected=self.selected)


def allocation_lower_items(sigma: float, sampling_rate: float, steps: int) -> list[tuple[DiscretePair, int]]:
    """The lower end's composition of ``steps`` balls-in-bins steps with t = 1/q steps per epoch: the
    epoch pair over the complete epochs (``[]``, lower end 0, when the run does not complete one)."""
    from optcomp.mechanisms.shuffle import batches_per_epoch

    per_epoch, _ = batches_per_epoch(sampling_rate)
    epochs = check_int("steps", steps, minimum=1) // per_epoch
    return [(allocation_lower_pair(sigma, per_epoch), epochs)] if epochs >= 1 else []

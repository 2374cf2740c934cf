"""The dominated (Lemma D) law of one balls-in-bins epoch: cell labels and conditional means.

Each factor is labelled by its grid cell k (ℓ in [ln t + kh, ln t + (k+1)h)), each sum of two partial
sums by the cell of x_i + x_j of its two labels (offset f(d) of :mod:`._allocation_grid`); the label J
is a function of the output, so the pair of its laws is a post-processing of (P_t, Q_t) and its
hockey-stick curve is a lower bound (``docs/samplers.md`` Lemma D). Each label carries envelopes of
Q(J = k) and of E_Q[S; J = k]/x_k; the P-mass of label k is E_Q[S; J = k]/t. A sum of two labels i ≤ j
with d = j − i lands at k = j + f(d), and

    Q_k += Q_i·Q_j,     E[S; k]/x_k += e^{−fh}·(R_i·e^{−dh}·Q_j + Q_i·R_j)      (R = E[S; ·]/x).

All terms are non-negative: lower (upper) envelopes come from lower (upper) inputs, widened by the
γ_M of the stage. Tails are dropped (an outcome ⊥ never in the test set), the left tail of a partial
sum is merged into its first kept label.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from optcomp._numerics import ALLOCATION_TAIL, SMALLEST_NORMAL, FloatArray
from optcomp._rounding import widen_down, widen_up
from optcomp.mechanisms._law import PrivacyLossLaw
from tests._references.allocation_legacy_grid import (
    Lower,
    Weights,
    _overlap,
    _pad,
    _power,
    _prefix,
    _roundings,
    factor_lower,
    weights,
)


def _band(outs: list[FloatArray], base: int, x: Lower, y: Lower, w: Weights, d_start: int, d_stop: float) -> None:
    """Adds the pairs (i of x, j of y, d = j − i in [d_start, d_stop)) to ``outs`` = [q_lo, q_hi, r_lo, r_hi]."""
    q_lo, q_hi, r_lo, r_hi = outs
    for f, d0, d1 in w.groups:
        lo, hi = max(d0, d_start), min(d1, d_stop)
        if lo >= hi:
            continue
        ones = np.ones(int(hi) - lo)
        c0l, c0h = np.convolve(x.q_lo, ones), np.convolve(x.q_hi, ones)
        cel, ceh = np.convolve(x.r_lo, w.e_lo[lo : int(hi)]), np.convolve(x.r_hi, w.e_hi[lo : int(hi)])
        j0, j1 = _overlap(x.first, lo, c0l.size, y.first, y.q_lo.size)
        if j0 >= j1:
            continue
        ys = slice(j0 - y.first, j1 - y.first)
        r = slice(j0 - x.first - lo, j1 - x.first - lo)
        o = slice(j0 + f - base, j1 + f - base)
        q_lo[o] += y.q_lo[ys] * c0l[r]
        q_hi[o] += y.q_hi[ys] * c0h[r]
        r_lo[o] += w.ef_lo[f] * (y.q_lo[ys] * cel[r] + y.r_lo[ys] * c0l[r])
        r_hi[o] += w.ef_hi[f] * (y.q_hi[ys] * ceh[r] + y.r_hi[ys] * c0h[r])
    if d_stop > w.far:
        start = max(w.far, d_start)
        for xq, xr, yq, yr, oq, orr, exp_scale in (
            (x.q_lo, x.r_lo, y.q_lo, y.r_lo, q_lo, r_lo, widen_down),
            (x.q_hi, x.r_hi, y.q_hi, y.r_hi, q_hi, r_hi, widen_up),
        ):
            c, _, j0, j1 = _prefix(xq, x.first, w.h, y.first, y.q_lo.size, start)
            _, u, _, _ = _prefix(xr, x.first, w.h, y.first, y.q_lo.size, start)
            if j0 < j1:
                ys = slice(j0 - y.first, j1 - y.first)
                o = slice(j0 - base, j1 - base)
                oq[o] += yq[ys] * c
                orr[o] += yq[ys] * exp_scale(u, 8) + yr[ys] * c


def combine_lower(a: Lower, b: Lower, w: Weights, tail: float = ALLOCATION_TAIL) -> Lower:
    """The labelled law of the sum of two independent partial sums (Lemma D), then trimmed."""
    top = w.groups[0][0] + 2
    base = min(a.first, b.first)
    n = max(a.first + a.q_lo.size, b.first + b.q_lo.size) + top - base
    outs = [np.zeros(n) for _ in range(4)]
    if a is b:
        _band(outs, base, a, a, w, 1, math.inf)
        outs = [2.0 * o for o in outs]
        _band(outs, base, a, a, w, 0, 1)
    else:
        _band(outs, base, a, b, w, 0, math.inf)
        _band(outs, base, b, a, w, 1, math.inf)
    m = _roundings(w, max(a.q_lo.size, b.q_lo.size))
    q_lo, r_lo = (np.maximum(widen_down(o, m + 4) - _pad(m), 0.0) for o in (outs[0], outs[2]))
    q_hi, r_hi = (widen_up(o, m + 4) + _pad(m) for o in (outs[1], outs[3]))
    return trim_lower(Lower(base, q_lo, q_hi, r_lo, r_hi, a.m + b.m), w.h, tail)


def trim_lower(s: Lower, h: float, tail: float = ALLOCATION_TAIL) -> Lower:
    """Drop the right tail (Q-mass up to ``tail``) as ⊥; merge the left tail (as much) into the first
    kept label (a coarser label is still a function of the output)."""
    right = np.cumsum(s.q_hi[::-1])[::-1]
    hi = max(int(np.searchsorted(-right, -tail, side="left")), 1)
    lo = min(int(np.searchsorted(np.cumsum(s.q_hi), tail, side="right")), hi - 1)
    arrays = [a[lo:hi].copy() for a in (s.q_lo, s.q_hi, s.r_lo, s.r_hi)]
    if lo > 0:
        with np.errstate(under="ignore"):
            scale = np.exp((np.arange(lo) - lo) * h)
        arrays[0][0] += math.fsum(s.q_lo[:lo].tolist())
        arrays[1][0] += math.fsum(s.q_hi[:lo].tolist())
        arrays[2][0] += math.fsum((s.r_lo[:lo] * scale).tolist())
        arrays[3][0] += math.fsum((s.r_hi[:lo] * scale).tolist())
        arrays[0][0], arrays[2][0] = widen_down(arrays[0][0], 16), widen_down(arrays[2][0], 16)
        arrays[1][0], arrays[3][0] = widen_up(arrays[1][0], 16), widen_up(arrays[3][0], 16)
    return Lower(s.first + lo, arrays[0], arrays[1], arrays[2], arrays[3], s.m)


@functools.lru_cache(maxsize=16)
def lower_laws(sigma: float, t: int, h: float, tail: float = ALLOCATION_TAIL) -> tuple[PrivacyLossLaw, PrivacyLossLaw]:
    """(remove, add) laws of the labelled pair (Lemma D): per label k, a loss label ln(E[S; k]/(t·Q_k))
    (any label is sound), a lower end of its P-mass and an upper end of its Q-mass (the add law: the
    same with the two roles exchanged), tails up to ``tail`` dropped. Cached per (σ, t, h, tail)."""
    w = weights(h)
    s = _power(t, factor_lower(1.0 / sigma, t, h, tail), lambda x, y: combine_lower(x, y, w, tail))
    assert isinstance(s, Lower)
    k = (s.first + np.arange(s.q_lo.size)).astype(np.float64)
    with np.errstate(under="ignore", over="ignore", divide="ignore", invalid="ignore"):
        ek = np.exp(k * h)
        p_lo = widen_down(s.r_lo * ek, 8)  # E[S; k]/t, lower
        p_hi = widen_up(s.r_hi * ek, 8)
        label = k * h + np.log(s.r_lo / s.q_hi)
    ok = (s.q_lo >= SMALLEST_NORMAL) & (p_lo >= SMALLEST_NORMAL) & np.isfinite(label)
    remove = PrivacyLossLaw(atom_losses=label[ok], atom_p=p_lo[ok], atom_q=s.q_hi[ok])
    add = PrivacyLossLaw(atom_losses=-label[ok], atom_p=s.q_lo[ok], atom_q=p_hi[ok])
    return remove, add

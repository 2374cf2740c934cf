"""Huge ε_i (> 745, where p_i = e^{ε_i}/(1 + e^{ε_i}) = 1 in float64): split off as a deterministic shift.

Such a mechanism's loss is +ε_i except with probability < 2⁻¹⁰⁷⁴ (MV Thm 1.5's canonical pair). The
engines compose the rest L' and this module shifts their answer by Σ c_i ε_i (a certified pair of
floats): the tiny − mass of each huge item goes to the +∞ atom of the upper envelope, and the lower end
rescales r by it. Answers beyond the float range are ``Bound(1.797…e308, inf)``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from optcomp._numerics import RELATIVE_SLACK, SMALLEST_SUBNORMAL, Bound, FloatArray, round_down, round_up
from optcomp._rounding import log1mexp
from optcomp.optimal._solve import Weights, delta_from_envelopes
from optcomp.optimal._spec import Spec, Target

#: ε_i above this are split off as a deterministic shift of the loss (p(ε_i) = 1 in float64).
HUGE_EPS: float = 745.0
_FLOAT_MAX = float(np.finfo(np.float64).max)


class HugeSplit(NamedTuple):
    """The rest of a composition and the shift of its huge items.

    Attributes:
        eps, counts: the pooled items with ε_i ≤ :data:`HUGE_EPS`.
        shift_lo, shift_hi: a certified bracket of Σ c_i ε_i over the huge items.
        n_huge: how many huge items (with multiplicity).
    """

    eps: FloatArray
    counts: np.ndarray
    shift_lo: float
    shift_hi: float
    n_huge: int

    @property
    def extra_mass(self) -> float:
        """The P-mass of the huge items' − outcomes (≤ 2⁻¹⁰⁷⁴ each), moved to +∞ in the upper envelope."""
        return self.n_huge * SMALLEST_SUBNORMAL


def split_huge(s: Spec) -> HugeSplit:
    """Split ``s`` into its rest and the shift of its items with ε_i > :data:`HUGE_EPS`."""
    huge = s.eps > HUGE_EPS
    if not huge.any():
        return HugeSplit(s.eps, s.counts, 0.0, 0.0, 0)
    with np.errstate(over="ignore"):
        terms = (s.eps[huge] * s.counts[huge].astype(np.float64)).tolist()
    total = math.fsum(terms) if all(math.isfinite(t) for t in terms) else math.inf
    if math.isfinite(total):
        lo, hi = round_down(total), round_up(total)
    else:
        lo, hi = _FLOAT_MAX, math.inf
    return HugeSplit(s.eps[~huge], s.counts[~huge], lo, hi, int(np.sum(s.counts[huge])))


def rest_target(target: Target, split: HugeSplit) -> Target:
    """The rest's target: dropping the huge items' − outcomes (P-mass ≤ n_huge·2⁻¹⁰⁷⁴) rescales r by ≤ that."""
    if not split.n_huge:
        return target
    return Target(target.log_lo, min(0.0, target.log_hi + 4.0 * split.extra_mass), target.kind)


def shifted_epsilon(b: Bound, split: HugeSplit, target: Target) -> Bound:
    """ε_g = shift + x from the rest's certified bracket ``b`` of max(0, x) (``target`` from :func:`rest_target`).

    The rest's engine answers max(0, x) for the root x of D'(x) = r, but x may be negative: the true
    ε_g = shift + x can lie below the shift. With A = {every huge item outputs +} (P(A) rescaled into
    target.log_hi), D(ε_g) ≥ P(A)·(1 − e^{ε_g − shift}·E_P e^{−L'}) ≥ P(A)·(1 − e^{ε_g − shift}), so
    x ≥ log(1 − r/P(A)) always; a positive certified lower end of the rest is kept as is.
    (Was: RandomizedResponse(746) at δ_g = 0.5 → [746, 746], truth 746 − ln 2; found by review.)
    """
    if not split.n_huge:
        return b
    sh_lo, sh_hi = split.shift_lo, split.shift_hi
    hi = round_up(sh_hi + b.upper) if math.isfinite(sh_hi + b.upper) else math.inf
    if b.lower > 0.0:
        low_x = b.lower
    else:
        v = log1mexp(min(target.log_hi, 0.0))
        low_x = round_down(v - RELATIVE_SLACK * abs(v)) if math.isfinite(v) else -math.inf
    lo = round_down(sh_lo + low_x) if math.isfinite(sh_lo + low_x) else (0.0 if low_x < 0 else _FLOAT_MAX)
    if split.eps.size == 0:
        # Only huge items: L = shift on A, so D(ε_g) ≤ P(Aᶜ) + (1 − e^{ε_g − shift})_+ and the upper end is
        # shift + log(1 − r⁻), r⁻ = (lower end of r) − P(Aᶜ) (above: shift + max(0, x), loose when x < 0).
        r_lo = round_down(math.exp(target.log_lo)) - split.extra_mass
        if r_lo > 0.0 and math.isfinite(sh_hi):
            v = math.log1p(-min(r_lo, 1.0))
            hi = min(hi, round_up(sh_hi + round_up(v)))
    return Bound(max(0.0, min(lo, hi, _FLOAT_MAX)), hi)


def trivial_delta(eps_g: float, split: HugeSplit, log_survive: tuple[float, float, float]) -> Bound | None:
    """δ_g when ε_g lies below the shift (or the shift overflows): only the trivial upper end 1 is claimed.

    D ∈ [1 − e^{ε_g − shift}, 1] (E_P e^{−L'} = 1). ``None`` when the engines must answer.
    """
    x = eps_g - split.shift_lo
    if not (split.n_huge and (x < 0.0 or split.shift_hi == math.inf)):
        return None
    d_lo = -math.expm1(min(0.0, x)) if x < 0 else 0.0
    lo = -math.expm1(log_survive[2] + math.log1p(-d_lo)) if d_lo < 1.0 else 1.0
    return Bound(max(0.0, round_down(lo)), 1.0)


def shifted_delta(
    up: Weights, lo_w: Weights, eps_g: float, split: HugeSplit, log_survive: tuple[float, float, float]
) -> Bound:
    """δ_g from the rest's envelopes: D(ε_g) = D'(ε_g − shift), shift ∈ [shift_lo, shift_hi], D' non-increasing."""
    x = eps_g - split.shift_lo
    if not split.n_huge:
        return delta_from_envelopes(up, lo_w, x, log_survive)
    hi_b = delta_from_envelopes(up, lo_w, max(0.0, eps_g - split.shift_hi), log_survive)
    lo_b = delta_from_envelopes(up, lo_w, x, log_survive)
    return Bound(min(lo_b.lower, hi_b.upper), hi_b.upper)

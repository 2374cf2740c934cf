"""ε ends from composed ends: the least ε whose certified upper δ is ≤ δ, the largest whose certified
lower δ exceeds δ (the searches of :meth:`optcomp.pld._realise.Direction.epsilon_upper` and
``epsilon_lower``, over any set of certified ends: the minimum / maximum of certified values is one).
"""

from __future__ import annotations

import math
import operator
from itertools import accumulate, repeat, takewhile

import numpy as np

from optcomp._inverse import float_boundary
from optcomp._inverse_many import batched_bisection, first_passing, zoomed_bisection
from optcomp._numerics import EPSILON_XTOL, FloatArray
from optcomp._rounding import rounding_error, widen_down, widen_up
from optcomp.mechanisms import PrivacyLossLaw
from optcomp.pld._query import LowerEnd, UpperEnd

#: How far (in units of the first gap) the upper ε search moves out before answering ε = inf.
_EXPANSION_RANGE = 2.0**63
#: Bisection steps before the exact root iteration of a lower ε end.
_COARSE_BISECTIONS = 8
#: First step of the downward scan for a lower ε end, relative to the upper end and to the requested
#: relative width: the lower end sits about a bracket's width (≤ relative_width·ε) below the upper one,
#: so the scan reaches it in a few doublings (any start gives a certified end; this one only its speed).
_SCAN_SHARE = 1.0 / 16.0
#: Points x₀, 2x₀ + 1, … a lower ε end tries upwards (when the downward scan found none) before giving up.
_EXPANSION_POINTS = 64
#: Relative accuracy trusted of a law's P(ℓ = +∞), as the cells trust atom masses (``_cells._ATOM_UNITS``);
#: the composed mass 1 − Π(1 − pᵢ)^kᵢ (log1p, a sum, expm1: a few ulps each) is widened by as many again.
_MASS_UNITS = 64


def atoms_upper(laws: list[tuple[PrivacyLossLaw, int]], delta: float) -> float:
    """A certified upper end of ε(δ) for a composition of purely atomic laws, from the atoms alone (∞ where
    it gives none): every finite composed loss is at most ℓ_max = Σ kᵢ·max ℓᵢ, so δ(ε) = P(L = +∞) =
    1 − Π(1 − pᵢ)^kᵢ for every ε ≥ ℓ_max (the hockey-stick integrand vanishes on the finite losses); when
    that mass (rounded up) is ≤ δ, ε(δ) ≤ max(ℓ_max, 0) rounded up. It answers where the grid cannot: an
    infinite-loss mass just below δ (the grid's tail allowance would exceed δ), an answer of exactly 0, and
    ε(0) of a pure pair (its largest loss)."""
    if any(law.continuous is not None for law, _ in laws):
        return math.inf
    terms: list[float] = []
    slack: list[float] = []
    log_fin = 0.0
    for law, k in laws:
        p = widen_up(law.p_inf, _MASS_UNITS)
        if p >= 1.0:
            return math.inf if delta < 1.0 else 0.0
        log_fin += k * math.log1p(-p)
        if law.atom_losses.size:  # a law without finite atoms puts all its P-mass at +∞: no finite loss
            top, pq = float(law.atom_losses[-1]), (float(law.atom_p[-1]), float(law.atom_q[-1]))
            lp, lq = (math.log(m) if m > 0.0 else 0.0 for m in pq)  # a mass that underflowed: ℓ given directly
            terms.append(k * top)
            # the top loss ln p − ln q as computed from masses trusted to _MASS_UNITS: its absolute error
            slack.append(k * rounding_error(2 * _MASS_UNITS + 8, 1.0 + abs(top) + abs(lp) + abs(lq)))
    mass = widen_up(-math.expm1(log_fin), _MASS_UNITS) if log_fin < 0.0 else 0.0
    if mass > delta:
        return math.inf
    spread = math.fsum(abs(t) for t in terms) * rounding_error(len(terms) + 4)  # k·ℓ products and the sum
    return max(math.fsum(terms) + math.fsum(slack) + spread, 0.0)


class InfiniteMassError(ValueError):
    """δ equals the composition's P-mass at ℓ = +∞ within the rounding its laws' masses are trusted to: the
    true ε(δ) is finite exactly when that mass is ≤ δ, which the masses cannot decide, so no certified upper
    end exists (the lower end is then a δ-independent 0 or the finite part's). Raised by name instead of a
    bracket [·, ∞]."""


def infinite_mass_range(laws: list[tuple[PrivacyLossLaw, int]]) -> tuple[float, float]:
    """[lower, upper] of the composed mass at +∞, 1 − Π(1 − pᵢ)^kᵢ, each pᵢ trusted to ``_MASS_UNITS``."""
    lo_fin = hi_fin = 0.0  # ln P(every step finite): its upper end gives the mass's lower end
    for law, k in laws:
        p_lo, p_hi = widen_down(law.p_inf, _MASS_UNITS), min(widen_up(law.p_inf, _MASS_UNITS), 1.0)
        lo_fin += k * math.log1p(-p_hi) if p_hi < 1.0 else -math.inf
        hi_fin += k * math.log1p(-max(p_lo, 0.0))
    low = max(widen_down(-math.expm1(hi_fin), _MASS_UNITS), 0.0) if hi_fin < 0.0 else 0.0
    high = min(widen_up(-math.expm1(lo_fin), _MASS_UNITS), 1.0) if lo_fin < 0.0 else 0.0
    return low, high


def refuse_at_infinite_mass(laws: list[tuple[PrivacyLossLaw, int]], delta: float) -> None:
    """Raise :class:`InfiniteMassError` where ``delta`` lies in the composed +∞ mass's rounding range
    (:func:`infinite_mass_range`) with the lower end ≤ δ < upper end: undecidable from the masses."""
    low, high = infinite_mass_range(laws)
    if low <= delta < high:
        raise InfiniteMassError(
            f"epsilon at delta={delta!r} cannot be certified: delta equals the composition's probability of an "
            f"infinite privacy loss (between {low!r} and {high!r}: its laws' masses are trusted to "
            f"{_MASS_UNITS} units of roundoff), and epsilon(delta) is finite only if that mass is <= delta; "
            f"ask at a delta above {high!r} (finite epsilon) or below {low!r} (epsilon = inf)"
        )


def upper_root(ends: list[UpperEnd], delta: float, xtol: float = EPSILON_XTOL) -> float:
    """Least ε found where the smallest of the ends' upper δ is ≤ ``delta`` (:meth:`._realise.Direction.epsilon_upper`),
    to a relative ``xtol``."""

    def upper_delta(x: FloatArray) -> FloatArray:
        return np.asarray(np.min([end.delta(x) for end in ends], axis=0), dtype=np.float64)

    def ok(e: float) -> bool:
        return bool(upper_delta(np.array([e]))[0] <= delta)

    if ok(0.0):
        return 0.0
    # out from past the grid's last loss by gaps g, 2g, 4g, … (x_n = 2x_{n−1} + 1 for g = x_0 + 1),
    # up to about 2^63·g; then the bisection from 0
    start = max(1.0, max(end.s_max() for end in ends) + 1.0)
    out = float_boundary(
        ok,
        name="epsilon",
        passing_above=True,
        fail=0.0,
        start=start,
        first_gap=start + 1.0,
        xtol=math.inf,
        highest=_EXPANSION_RANGE * (start + 1.0),
    )
    if out.passing is None:
        return math.inf
    # the bisection from 0, many points per δ read, clustered where δ is predicted to cross
    # (:func:`~optcomp._inverse_many.zoomed_bisection`: the least passing point read is returned)
    return zoomed_bisection(upper_delta, delta, 0.0, out.passing, xtol=xtol)[1]


def lower_root(ends: list[LowerEnd], delta: float, upper: float, p_inf_lo: float, width: float) -> float:
    """Largest ε found where the largest of the ends' lower δ exceeds ``delta`` (0 if none), searched
    down from ``upper`` from a first gap ``_SCAN_SHARE``·``width``·``upper`` (:meth:`._realise.Direction.epsilon_lower`)."""

    def ok(e: float) -> bool:
        return max(float(end.delta(np.array([e]))[0]) for end in ends) <= delta

    if ok(0.0):
        return 0.0
    lo = 0.0
    if math.isfinite(upper) and upper > 0:
        # scan down from the upper end by gaps g, 2g, 4g, … < upper (the computed lower δ need not be
        # monotone far from the tilt's window, so a bisection from 0 could stop in the wrong place)
        gaps = accumulate(repeat(2.0), operator.mul, initial=max(upper * width * _SCAN_SHARE, EPSILON_XTOL))
        down = list(takewhile(lambda g: g < upper, gaps))
        i = first_passing(lambda g: not ok(upper - g), down)
        lo = 0.0 if i is None else upper - down[i]
    if lo == 0.0:
        # out by x ↦ 2x + 1 (64 points at most), then _COARSE_BISECTIONS bisections
        x0 = upper if math.isfinite(upper) else max(end.s_max() for end in ends) + 1.0
        tries = list(accumulate(range(_EXPANSION_POINTS - 1), lambda x, _: 2 * x + 1.0, initial=x0))
        k = first_passing(ok, tries)
        if k is None:
            return tries[-1]
        lo = tries[k - 1] if k > 0 else 0.0
        lo = batched_bisection(
            lambda x: np.array([ok(float(v)) for v in x]), lo, tries[k], steps=_COARSE_BISECTIONS, levels=1
        )[0]
    target = widen_up(delta, 16) - widen_down(p_inf_lo, 16)
    best = lo
    for end in ends:
        best = max(best, end.root(lo, target))
    return best


__all__ = ["lower_root", "upper_root"]

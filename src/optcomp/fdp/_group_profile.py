"""Group privacy on the privacy profile: a certified upper δ(ε) of a group of g neighbours.

The trade-off route (:func:`optcomp.fdp.group_privacy` on :func:`optcomp.fdp.from_pld`) loses its
upper end for groups of 8 or more of a composed PLD (issue 27 item 1: the curve stops at the FFT floor
and its knot errors are absolute). This module works on the hockey-stick profile δ(ε) itself.

**Weak triangle inequality.** For measures P, Q, R and any real ε₁,

    H_{e^ε}(P‖R) ≤ H_{e^{ε₁}}(P‖Q) + e^{ε₁} · H_{e^{ε−ε₁}}(Q‖R).

Proof: pointwise P − e^ε R = (P − e^{ε₁}Q) + e^{ε₁}(Q − e^{ε−ε₁}R), and the positive part is
subadditive and positively homogeneous, so (P − e^ε R)₊ ≤ (P − e^{ε₁}Q)₊ + e^{ε₁}(Q − e^{ε−ε₁}R)₊;
integrate. For a chain D₀ ~ D₁ ~ … ~ D_g of neighbours (each link add or remove), with δ₁ an upper
bound of every link's profile (the engine's max over both directions), induction gives
δ_{a+b}(ε) ≤ δ_a(ε₁) + e^{ε₁} δ_b(ε − ε₁) for every ε₁, so the minimum over any finite set of ε₁ is an
upper bound (any grid is sound; a finer grid is only tighter). g is split in halves recursively.

**Grid and rounding.** Profiles live on ε_k = k·h with h a power of two, so every ε_k and ε_k − ε_j is
exact. The base profile is read from certified upper ends at every ``base_every``-th grid point; in
between, δ is convex and nonincreasing in s = e^ε (δ(s) = ∫ (p − s q)₊), so the chord in s between two
upper ends is an upper end; its weights w = expm1(−(ε_{i+1} − ε))/expm1(−(ε_{i+1} − ε_i)) and
1 − w = e^{−(ε_{i+1} − ε)} expm1(−(ε − ε_i))/expm1(−(ε_{i+1} − ε_i)) are formed from exact differences
with a few relative roundings each (charged by :data:`_CHORD_UNITS`). Beyond the last base point the
last upper end is kept (δ is nonincreasing). Each combination is a sum of two non-negative terms, one a
product with e^{ε_j} (exp within a few ulp), widened by :data:`_COMBINE_UNITS`. Every profile is also
capped at 1 and made nonincreasing (δ(ε_k) ≤ δ(ε_{k'}) for k' ≤ k). The readout ε(δ) is the first grid
point whose upper δ is ≤ δ, so the loss is at most one step h plus the ε₁ grid's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from optcomp._numerics import Bound, FloatArray
from optcomp._rounding import widen_up
from optcomp.fdp._group import group_privacy
from optcomp.fdp._readouts import _DeltaCurve, epsilon_at, from_pld
from optcomp.mechanisms import check_group_size

__all__ = ["GROUP_GRID_STEP", "GroupEpsilon", "GroupRoute", "group_delta_profile", "group_epsilon_upper", "group_profile"]

#: Default grid step h of the group profile (a power of two, so grid differences are exact).
GROUP_GRID_STEP: float = 2.0**-7

#: Relative widening of a chord value: two weights from expm1/exp/division (≤ 8 roundings, each
#: library call within 2 ulp) times two products and one sum, with margin (see :func:`widen_up`).
_CHORD_UNITS: float = 32.0

#: Relative widening of one combination δ_a + e^{ε₁}δ_b: exp (≤ 2 ulp) plus one product and one sum.
_COMBINE_UNITS: float = 16.0


def _chord_profile(base_upper: FloatArray, every: int, step: float, n: int) -> FloatArray:
    """Upper δ on the n grid points from upper ends at points 0, every, 2·every, … (chord in e^ε)."""
    k = np.arange(n)
    i = np.minimum(k // every, base_upper.size - 1)
    left = base_upper[i]
    right = base_upper[np.minimum(i + 1, base_upper.size - 1)]
    off = (k - i * every).astype(np.float64) * step  # ε − ε_i, exact
    cell = every * step  # ε_{i+1} − ε_i, exact
    den = -math.expm1(-cell)
    w = -np.expm1(-(cell - off)) / den
    w1 = np.exp(-(cell - off)) * (-np.expm1(-off)) / den
    chord = widen_up(w * left + w1 * right, _CHORD_UNITS)
    inside = (k // every) < base_upper.size - 1
    out = np.where(inside, np.minimum(chord, left), left)
    out[(k % every == 0) & inside] = left[(k % every == 0) & inside]
    return np.asarray(out, dtype=np.float64)


def _combine(da: FloatArray, db: FloatArray, step: float) -> FloatArray:
    """Upper δ_{a+b}(ε_k) = min_{0≤j≤k} δ_a(ε_j) + e^{ε_j} δ_b(ε_k − ε_j) (weak triangle inequality)."""
    n = da.size
    s = np.exp(np.arange(n, dtype=np.float64) * step)
    out = np.empty(n)
    for k in range(n):
        out[k] = np.min(da[: k + 1] + s[: k + 1] * db[k::-1])
    return np.minimum.accumulate(np.minimum(widen_up(out, _COMBINE_UNITS), 1.0))


def group_delta_profile(
    base_upper: npt.ArrayLike, g: int, *, every: int, step: float = GROUP_GRID_STEP, n: int
) -> FloatArray:
    """Certified upper δ_g(ε_k), k < n, of a group of g from one step's upper ends.

    Args:
        base_upper: certified upper ends of one neighbour step's δ(ε) (max over directions) at
            ε = 0, every·step, 2·every·step, ….
        g: group size ≥ 1.
        every: base points every ``every`` grid steps.
        step: grid step h (a power of two).
        n: number of grid points of the result.
    """
    if isinstance(g, bool) or not isinstance(g, int) or g < 1:
        raise ValueError(f"g must be an integer >= 1, got {g!r}")
    if step <= 0 or math.frexp(step)[0] != 0.5:
        raise ValueError(f"step must be a positive power of two, got {step!r}")
    base = np.minimum(np.asarray(base_upper, dtype=np.float64), 1.0)
    one = np.minimum.accumulate(_chord_profile(base, every, step, n))
    memo: dict[int, FloatArray] = {1: one}

    def prof(m: int) -> FloatArray:
        if m not in memo:
            memo[m] = _combine(prof(m // 2), prof(m - m // 2), step)
        return memo[m]

    return prof(g)


def group_epsilon_upper(
    pld: _DeltaCurve,
    g: int,
    delta: float,
    *,
    epsilon_max: float = 128.0,
    base_max: float = 40.0,
    base_step: float = 0.125,
    step: float = GROUP_GRID_STEP,
) -> float:
    """Certified upper end of ε(δ) for a group of g neighbours of ``pld`` (``inf`` if beyond ``epsilon_max``).

    Reads ``pld.delta_curve`` (upper ends, max over directions) at 0, base_step, …, base_max and
    applies :func:`group_delta_profile`; the answer is the first grid ε ≤ ``epsilon_max`` whose upper
    δ is ≤ ``delta``.

    Args:
        pld: a PLD (or any object with a certified ``delta_curve``).
        g: group size ≥ 1.
        delta: δ in (0, 1).
        epsilon_max: largest ε of the grid.
        base_max: largest ε at which one step's δ is read (beyond it the last value is kept).
        base_step: spacing of the base reads (a multiple of ``step``).
        step: grid step (a power of two).
    """
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    every = round(base_step / step)
    if every < 1 or every * step != base_step:
        raise ValueError(f"base_step must be a positive multiple of step={step!r}, got {base_step!r}")
    base_eps = np.arange(0, math.floor(base_max / base_step) + 1, dtype=np.float64) * base_step
    _, upper = pld.delta_curve(base_eps)
    n = int(epsilon_max / step) + 1
    prof = group_delta_profile(np.asarray(upper, dtype=np.float64), g, every=every, step=step, n=n)
    hit = np.flatnonzero(prof <= delta)
    return float(hit[0] * step) if hit.size else math.inf


#: Which route answered :meth:`optcomp.Composition.group_epsilon`.
GroupRoute = Literal["exact", "profile"]


@dataclass(frozen=True, slots=True)
class GroupEpsilon(Bound):
    """A certified bracket of a group's ε(δ) (a :class:`~optcomp.Bound`) that says how it was found.

    Attributes:
        lower: lower end (see :meth:`optcomp.Composition.group_epsilon` for what it bounds on each route).
        upper: certified upper end.
        route: ``"exact"`` (the mechanisms' group pairs, composed: a bracket of the group's ε) or
            ``"profile"`` (a bare PLD: the weak triangle inequality; lower end the one-record ε).
        reason: why the profile route answered (empty on the exact route).
    """

    route: GroupRoute = "profile"
    reason: str = ""


#: Why a bare PLD is read by the profile route (:func:`group_profile`'s default ``reason``).
BARE_PLD = "a bare PLD does not determine a group's privacy"


def group_profile(pld: _DeltaCurve, g: int, delta: float, *, reason: str = BARE_PLD) -> GroupEpsilon:
    """Certified bracket of ε(δ) for a group of at most g records of *any* mechanism whose one-record pair
    ``pld``'s law dominates: the profile route, a readout of the engine's δ(ε) curve.

    A PLD does not determine a group's privacy. ``upper`` is the smaller of :func:`group_epsilon_upper`
    (weak triangle inequality) and the trade-off route's (Dong–Roth–Su Thm 2.14 on
    :func:`optcomp.fdp.from_pld`), both certified. ``lower`` is the one-record ε's lower end read from the
    same curve (a group of at most g includes a single record; a lower end of the *mechanism* only where
    ``pld``'s law is its own pair: :meth:`optcomp.Composition.group_epsilon` asks its run bracket, whose
    lower composition supplies it). The trade-off route's own lower end is *not* used: it bounds Thm 2.14's
    curve, which can lie above a mechanism's group privacy (DP-SGD σ = 1, q = 0.01, 10³ steps, g = 8:
    Thm 2.14 lower 22.71, exact group ε ≤ 20.8963). Where the mechanisms are known and have group laws,
    :meth:`optcomp.Composition.group_epsilon` answers exactly instead.

    Args:
        pld: a PLD (or any object with a certified ``delta_curve``).
        g: group size, an integer ≥ 1.
        delta: δ in (0, 1).
        reason: why the profile route answers (reported in the result).

    Raises:
        ValueError: ``g`` not an integer ≥ 1 or ``delta`` outside (0, 1).
    """
    g = check_group_size(g)
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    one = epsilon_at(from_pld(pld), delta)
    if g == 1:
        return GroupEpsilon(one.lower, one.upper, route="profile", reason=reason)
    drs = epsilon_at(group_privacy(from_pld(pld), g), delta)
    upper = min(drs.upper, group_epsilon_upper(pld, g, delta))
    return GroupEpsilon(one.lower, upper, route="profile", reason=reason)

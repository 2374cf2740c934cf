"""Exact calibration for black boxes: the largest per-query ε₀ whose k-fold optimal composition meets (ε, δ).

OptComp((ε₀, δ₀)^k, δ) is non-decreasing in ε₀ (MV Lemma 5.3 with c_i ≥ 0), so the set of passing ε₀ is
an interval [0, ε₀*]. The one inverse solver (:func:`optcomp._inverse.solve`, increasing direction) on
the *certified upper* end of the homogeneous engine returns an evaluated ε₀ that provably passes (safe
side, proved there once); the certified *lower* ends give a bracket on ε₀*. KOV Cor. V.1 (ε₀ = √(ε²/(4k ln(e + ε/δ))), δ₀ = δ/(2k)) and Cor. V.2 are the
closed-form sufficient conditions reported next to it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from optcomp._inverse import solve
from optcomp._numerics import (
    CALIBRATION_RTOL,
    OPTIMAL_CALIBRATE_START,
    Bound,
    check_int,
    check_open_probability,
    check_positive,
    check_probability,
)
from optcomp.optimal._spec import homogeneous

#: Most queries (integers beyond 2**53 are not exact in float64).
_MAX_K = 2**53
#: Default relative width of the bracket on ε₀*: a quarter of the library's ``CALIBRATION_RTOL``. One
#: black-box evaluation costs about a millisecond, and at this width the solver's evaluated ε₀ is at or
#: above the one the earlier hand-written loop returned at ``CALIBRATION_RTOL`` on the README's and the
#: tests' cases (1.0, 1e-6, 100): 0.0240089 ≥ 0.0240086; rtol = 1e-3 itself landed at 0.0240029).
BLACK_BOX_CALIBRATION_RTOL: float = CALIBRATION_RTOL / 4


@dataclass(frozen=True, slots=True)
class BlackBoxCalibration:
    """The answer of :func:`calibrate`.

    Attributes:
        epsilon0: an evaluated per-query ε₀ whose k-fold composition is certified (ε, δ)-DP.
        bracket: ``Bound`` on the true largest ε₀* (``bracket.lower == epsilon0``).
        epsilon: certified ε bracket of the k-fold composition at ``epsilon0`` (upper ≤ target).
        kov_epsilon0, kov_delta0: KOV Cor. V.1's per-query budget for the same target.
    """

    epsilon0: float
    bracket: Bound
    epsilon: Bound
    kov_epsilon0: float
    kov_delta0: float


def calibrate(
    target_epsilon: float, target_delta: float, k: int, *, delta0: float = 0.0,
    rtol: float = BLACK_BOX_CALIBRATION_RTOL,
) -> BlackBoxCalibration:
    """Largest per-query ε₀ (given δ₀) such that k-fold optimal composition is (ε, δ)-DP (certified).

    Args:
        target_epsilon: ε > 0.
        target_delta: δ ∈ (0, 1].
        k: number of queries ≥ 1.
        delta0: per-query δ₀ ∈ [0, 1); the floor 1 − (1 − δ₀)^k must be below δ.
        rtol: relative width of the bracket on ε₀*, in (0, 1) (default ``BLACK_BOX_CALIBRATION_RTOL`` = 2.5e-4).

    Raises:
        ValueError: a parameter out of range, or δ₀ so large that no ε₀ ≥ 0 meets the target.
    """
    from optcomp import bounds
    from optcomp.optimal._api import epsilon as opt_epsilon

    eps = check_positive("target_epsilon", target_epsilon)
    dlt = check_probability("target_delta", target_delta)
    if dlt == 0.0:
        raise ValueError(f"target_delta must be in (0, 1], got {dlt!r}")
    kk = check_int("k", k, maximum=_MAX_K)
    d0 = check_probability("delta0", delta0)
    tol = check_open_probability("rtol", rtol)

    def bracket_at(e0: float) -> Bound:
        return opt_epsilon(homogeneous(e0, d0, kk), dlt)

    seen: dict[float, Bound] = {}

    def ev(e0: float) -> Bound:
        if e0 not in seen:
            seen[e0] = bracket_at(e0)
        return seen[e0]

    tiny = eps * OPTIMAL_CALIBRATE_START / kk
    if ev(tiny).upper > eps:
        raise ValueError(
            f"delta0={d0!r} is too large: k={kk} queries already exceed target_delta={dlt!r} at epsilon0 -> 0 "
            f"(floor 1 - (1 - delta0)^k)"
        )
    kov_e0, kov_d0 = bounds.kov_per_query_budget(eps, dlt, kk)
    # KOV Cor V.1's ε₀ (a sufficient condition at δ₀ = δ/2k) is a start close to the root
    _, found = solve(ev, eps, name="epsilon0", guess=max(kov_e0, tiny), rtol=tol, increasing=True, passing=tiny)
    lo = tiny if found is None else found  # never None: solve only moves the given passing end
    # ε₀* < every evaluated ε₀ whose certified *lower* end exceeds the target.
    above = [e0 for e0, b in seen.items() if b.lower > eps]
    upper_star = min(above) if above else math.inf
    return BlackBoxCalibration(lo, Bound(lo, max(lo, upper_star)), seen[lo], kov_e0, kov_d0)

"""Allocation: the largest common scale of weighted budgets that the chosen accounting certifies.

Free statistic i gets ε_i = s·w_i (w_i its weight); locked statistics keep their ε_i (``lock_epsilon``)
or the least ε_i that reaches their target accuracy (``lock_accuracy``) (:mod:`optcomp.planner._prepare`).
Each ε_i becomes noise by the rules of :mod:`optcomp.planner._noise`, so the accuracy of every free
statistic improves with s, and the certified ε of the whole plan grows with s. The planner returns the
largest s (to a relative ``SCALE_RTOL``) whose plan is *certified* feasible: the accounting's certified
upper ε at the plan's δ is at most ε − reserve. The accountings are in :mod:`optcomp.planner._accounting`
(the black-box and mechanism-aware modes ask the queries floor, :func:`optcomp.compose`), the searches in
:mod:`optcomp.planner._search`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

from optcomp._numerics import ProgressLine
from optcomp.planner._accounting import (
    ACCOUNTING,
    MODES,
    OPTIMAL_FINAL_TOLERANCE,
    OPTIMAL_SEARCH_TOLERANCE,
    PLANNER_PLD_RELATIVE_WIDTH,
    _optimal,
    certified_epsilon,
    check_mode,
    pld_accuracy,
)
from optcomp.planner._noise import APPROXIMATE, accuracy
from optcomp.planner._prepare import SCALE_RTOL, _Prepared, prepare
from optcomp.planner._schema import Plan, PlanError, show
from optcomp.planner._search import (
    MECHANISM_AWARE_RTOL,
    _black_box_floor,
    _search,
    _search_mechanism_aware,
    _search_optimal,
)


@dataclass(frozen=True, slots=True)
class StatisticResult:
    """The allocation of one statistic under one accounting mode.

    Attributes:
        name, kind, mechanism: from the plan.
        epsilon: ε_i (its components' ε sum to it); each component is ε_c-DP or (ε_c, δ_c)-DP alone.
        delta: δ_i of its Gaussian components in the black-box modes (0 for the Laplace family).
        noise: the noise scale of each component (Laplace/discrete b, Gaussian σ).
        accuracy: α of the (1 − β) interval (per bin for a histogram).
        accuracy_simultaneous: α holding for all bins at once (= ``accuracy`` except for histograms).
        locked: ``"epsilon"``, ``"accuracy"`` or ``None``.
        gain_vs_basic: α under basic composition / α here (> 1: more accurate than basic).
    """

    name: str
    kind: str
    mechanism: str
    epsilon: float
    delta: float
    noise: tuple[float, ...]
    accuracy: float
    accuracy_simultaneous: float
    locked: str | None
    gain_vs_basic: float


@dataclass(frozen=True, slots=True)
class ModeResult:
    """The allocation of a plan under one accounting mode.

    Attributes:
        mode: one of :data:`MODES`.
        scale: the common scale s of the free statistics (0 when every statistic is locked).
        epsilon_certified: certified upper ε of the whole plan at ``delta`` (≤ ``epsilon_budget``).
        epsilon_budget: ε − reserve.
        delta: the plan's δ.
        statistics: one :class:`StatisticResult` per statistic, in plan order.
        evaluations: accounting calls made by the search.
        seconds: wall time of this mode.
    """

    mode: str
    scale: float
    epsilon_certified: float
    epsilon_budget: float
    delta: float
    statistics: tuple[StatisticResult, ...]
    evaluations: int
    seconds: float



def _locks_do_not_fit(p: _Prepared, mode: str, value: float) -> PlanError:
    """The refusal of a plan whose locked statistics alone exceed the budget, naming the largest locks."""
    locks = sorted(((lk, i) for i, lk in enumerate(p.locked) if lk is not None), reverse=True)
    named = ", ".join(f"{show(p.plan.statistics[i].name)} (#{i + 1}) epsilon_i = {lk:.4g}" for lk, i in locks[:3])
    more = f" and {len(locks) - 3} more" if len(locks) > 3 else ""
    budget = f"{p.plan.epsilon!r}" + (f" - reserve {p.plan.reserve_epsilon!r}" if p.plan.reserve_epsilon else "")
    return PlanError(
        f"plan: field 'epsilon' {budget} is below the certified epsilon {value:.6g} that the locked statistics "
        f"need alone under {mode} accounting ({named}{more})",
        field="epsilon",
    )


def allocate(plan: Plan, mode: str, *, progress: ProgressLine | None = None, basic: ModeResult | None = None,
             optimal_result: ModeResult | None = None) -> ModeResult:
    """The allocation of ``plan`` under accounting ``mode`` (see the module docstring).

    Args:
        plan: a validated :class:`Plan`.
        mode: one of :data:`MODES`.
        progress: called with a line per accounting evaluation (``mechanism_aware`` is the slow one).
        basic: the ``basic`` result of the same plan, for the per-statistic gain (computed if not given).
        optimal_result: the ``optimal`` result of the same plan, where ``mechanism_aware`` starts
            (computed if not given).

    Returns:
        A :class:`ModeResult` whose ``epsilon_certified`` ≤ ``epsilon_budget``.

    Raises:
        PlanError: an invalid combination, or locked statistics that alone exceed the budget.
    """
    mode = check_mode(mode)
    t0 = time.perf_counter()
    p = prepare(plan)
    account = ACCOUNTING[mode]
    free_weight = math.fsum(st.weight for lk, st in zip(p.locked, plan.statistics) if lk is None)
    if any(lk is not None for lk in p.locked):
        # s = 0: the locked statistics alone (free ones release nothing). The accounting is non-decreasing
        # in s, so if they do not fit, no scale does: refused before any search. (Without locks the value
        # at s = 0 is 0: only Gaussian pairs (0, δ_c) with Σδ_c < δ remain.)
        value = account(p, p.epsilons(0.0))
        if mode == "mechanism_aware" and (value > p.budget or free_weight == 0.0):
            value = min(value, _optimal(p, p.epsilons(0.0)))  # the black box is certified for them too
        if value > p.budget:
            raise _locks_do_not_fit(p, mode, value)
    if free_weight == 0.0:
        s, calls = 0.0, 1
    else:
        locked_sum = math.fsum(lk for lk in p.locked if lk is not None)
        s0 = max(p.budget - locked_sum, p.budget / 100.0) / free_weight
        if mode == "mechanism_aware":
            # the optimal allocation, when the caller has it (plan_all), is certified for these mechanisms
            # too (black box): a floor for the search
            seed = None if optimal_result is None else (optimal_result.scale, optimal_result.epsilon_certified)
            s, value, calls = _search_mechanism_aware(p, s0, progress, seed)
            if seed is None:  # no optimal allocation given: one black-box check at the found scale
                s, value, more = _black_box_floor(p, s, value, progress)
                calls += more
        elif mode == "optimal":
            s, value, calls = _search_optimal(p, s0, progress)
        else:
            s, value, calls, _ = _search(lambda x: account(p, p.epsilons(x)), p.budget, s0, progress,
                                         SCALE_RTOL, limit=p.max_scale)
    eps = p.epsilons(s)
    scales = p.scales(eps)
    stats = []
    base = {r.name: r.accuracy for r in basic.statistics} if basic is not None else None
    if base is None and mode != "basic":
        base = {r.name: r.accuracy for r in allocate(plan, "basic").statistics}
    for st, cs, e, sc, lk in zip(plan.statistics, p.comps, eps, scales, p.locked):
        a, a_sim = accuracy(plan, st, cs, sc)
        ref = a if base is None else base[st.name]
        gain = ref / a if 0.0 < a < math.inf else (1.0 if ref == a else math.inf if a == 0.0 else 0.0)
        locked = "epsilon" if st.lock_epsilon is not None else "accuracy" if st.lock_accuracy is not None else None
        stats.append(StatisticResult(
            name=st.name, kind=st.kind, mechanism=st.mechanism, epsilon=e,
            delta=sum(p.gaussian_delta for c in cs if c.mechanism in APPROXIMATE),
            noise=sc, accuracy=a, accuracy_simultaneous=a_sim, locked=locked, gain_vs_basic=gain,
        ))
    return ModeResult(mode=mode, scale=s, epsilon_certified=value, epsilon_budget=p.budget, delta=plan.delta,
                      statistics=tuple(stats), evaluations=calls, seconds=time.perf_counter() - t0)


def plan_all(plan: Plan, modes: Sequence[str] = MODES, *, progress: ProgressLine | None = None) -> dict[str, ModeResult]:
    """Every requested mode's allocation, side by side (basic first: the gains are relative to it)."""
    wanted = [check_mode(m) for m in modes]
    basic = allocate(plan, "basic")
    out: dict[str, ModeResult] = {}
    for mode in MODES:
        if mode not in wanted:
            continue
        if mode == "basic":
            out[mode] = basic
            continue
        out[mode] = allocate(plan, mode, progress=progress if mode == "mechanism_aware" else None,
                             basic=basic, optimal_result=out.get("optimal"))
    return out


__all__ = [
    "MECHANISM_AWARE_RTOL",
    "MODES",
    "OPTIMAL_FINAL_TOLERANCE",
    "OPTIMAL_SEARCH_TOLERANCE",
    "PLANNER_PLD_RELATIVE_WIDTH",
    "SCALE_RTOL",
    "ModeResult",
    "StatisticResult",
    "allocate",
    "certified_epsilon",
    "plan_all",
    "pld_accuracy",
    "prepare",
]


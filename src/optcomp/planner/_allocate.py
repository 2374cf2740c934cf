"""Allocation: the largest common scale of weighted budgets that the chosen accounting certifies.

Free statistic i gets ε_i = s·w_i (w_i its weight); locked statistics keep their ε_i (``lock_epsilon``)
or the least ε_i that reaches their target accuracy (``lock_accuracy``). Each ε_i becomes noise by the
rules of :mod:`optcomp.planner._noise`, so the accuracy of every free statistic improves with s, and the
certified ε of the whole plan grows with s. The planner returns the largest s (to a relative
``SCALE_RTOL``) whose plan is *certified* feasible: the accounting's certified upper ε at the plan's δ is
at most ε − reserve. Accounting modes (all return a certified upper ε at the plan's δ):

* ``basic``: Σε_i, with Σδ_i ≤ δ (KOV Thm III.1).
* ``advanced``: heterogeneous advanced composition (Dwork–Rothblum–Vadhan; KOV Thm III.2 with per-step
  ε_i): min{Σε_i, Σε_i(e^{ε_i} − 1) + √(2 ln(1/δ̃)·Σε_i²)} with δ̃ = δ − Σδ_i.
* ``kov``: the KOV heterogeneous bound (KOV Thm III.5), δ̃ = 1 − (1 − δ)/Π(1 − δ_i)
  (:func:`optcomp.bounds.kov_bound_heterogeneous`).
* ``optimal``: optimal black-box composition of the (ε_i, δ_i) pairs (MV Thm 1.5,
  :func:`optcomp.optimal.epsilon`).
* ``mechanism_aware``: the composition of the actual mechanisms — the GDP closed form when every
  component is Gaussian (μ = √Σμ_i², Dong–Roth–Su Cor 3.3, feasibility checked by the certified
  δ_μ(ε) upper end), else the PLD engine (:func:`optcomp.compose`); the smaller of that certified ε and
  the optimal black-box one (both are certified upper bounds for the same mechanisms): the search
  starts from the ``optimal`` allocation, which is therefore never beaten by this mode.

In the black-box modes a Gaussian component is the pair (ε_c, δ_c) with δ_c = share·δ/G (G the number of
Gaussian components, ``share`` = ``gaussian_delta_share``, default 1/2); Laplace and discrete Laplace
components have δ_c = 0.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from optcomp import optimal
from optcomp._numerics import CALIBRATION_RTOL, Accuracy, round_down, round_up
from optcomp.bounds import kov_bound_heterogeneous
from optcomp.composition import compose
from optcomp.fdp._gdp import gdp_delta_bound, gdp_epsilon
from optcomp.planner._noise import Component, accuracy, components, mechanism_spec, noise_scale
from optcomp.planner._schema import Plan, PlanError, Statistic

MODES: tuple[str, ...] = ("basic", "advanced", "kov", "optimal", "mechanism_aware")

#: Relative precision of the common scale s: the returned s is certified feasible and within this
#: factor of the largest feasible one (as the accounting evaluates it). In ``mechanism_aware`` mode the
#: PLD bracket's own relative width (``PLANNER_PLD_RELATIVE_WIDTH``) is used instead when larger: the
#: certified ε jumps by about that much with the grid alignment, so a finer search only chases noise.
SCALE_RTOL: float = CALIBRATION_RTOL
#: Requested relative width of the PLD engine's certified ε bracket in ``mechanism_aware`` mode
#: (:class:`~optcomp.Accuracy` ``relative_width``; the engine picks its grid step for it). The upper end
#: stays certified at any width; a wider bracket only gives away up to about this fraction of ε.
PLANNER_PLD_RELATIVE_WIDTH: float = 5e-3


def pld_accuracy(budget: float, k: int) -> Accuracy:
    """The PLD engine's accuracy for a plan (``budget`` and ``k`` kept for the signature; the engine's
    width model chooses the step from the requested relative width)."""
    del budget, k
    return Accuracy(relative_width=PLANNER_PLD_RELATIVE_WIDTH)


#: Bracket width asked of :func:`optcomp.optimal.epsilon` (its ``tolerance``), relative to the budget:
#: coarse while the ``optimal`` search brackets the scale (about 20× cheaper on 1,000 distinct ε_i), fine
#: for its last steps. Every call's upper end is certified; the fine width costs at most about this
#: fraction of the budget.
OPTIMAL_SEARCH_TOLERANCE: float = 1e-2
OPTIMAL_FINAL_TOLERANCE: float = 2e-3
#: Most accounting evaluations of one search (bracketing plus refinement).
_MAX_EVALUATIONS = 80
#: Below s0·_FLOOR the free statistics are negligible: if the plan still fails, the locks alone do.
_FLOOR = 1e-6

Progress = Callable[[str], None]


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


@dataclass(frozen=True, slots=True)
class _Prepared:
    plan: Plan
    comps: tuple[tuple[Component, ...], ...]
    locked: tuple[float | None, ...]  # ε_i of locked statistics, None for free ones
    gaussian_delta: float  # δ_c of each Gaussian component
    budget: float

    def epsilons(self, s: float) -> list[float]:
        return [lk if lk is not None else s * st.weight for lk, st in zip(self.locked, self.plan.statistics)]

    def pairs(self, eps: Sequence[float]) -> list[tuple[float, float]]:
        out = []
        for e, comps in zip(eps, self.comps):
            for c in comps:
                out.append((c.share * e, self.gaussian_delta if c.mechanism == "gaussian" else 0.0))
        return out

    def scales(self, eps: Sequence[float]) -> list[tuple[float, ...]]:
        return [tuple(noise_scale(c, c.share * e, self.gaussian_delta) for c in comps)
                for e, comps in zip(eps, self.comps)]


def _lock_for_accuracy(plan: Plan, stat: Statistic, comps: tuple[Component, ...], gdelta: float) -> float:
    """The least ε_i (to a relative ``SCALE_RTOL``, on the safe side) at which α ≤ ``lock_accuracy``."""
    target = stat.lock_accuracy
    assert target is not None

    def ok(e: float) -> bool:
        scales = tuple(noise_scale(c, c.share * e, gdelta) for c in comps)
        return accuracy(plan, stat, comps, scales)[0] <= target

    hi = 1.0
    for _ in range(200):
        if ok(hi):
            break
        hi *= 2.0
    else:
        raise PlanError(f"statistic {stat.name!r}: field 'lock_accuracy' {target!r} is unreachable at any ε")
    lo = hi / 2.0
    for _ in range(2000):
        if lo < plan.epsilon * _FLOOR:  # a Gaussian with δ_c > 0 has finite noise even as ε_c → 0:
            return hi  # negligible ε_i reach the target; the one returned is on the safe side
        if not ok(lo):
            break
        hi, lo = lo, lo / 2.0
    else:
        return hi
    while hi / lo > 1.0 + SCALE_RTOL:
        mid = math.sqrt(lo) * math.sqrt(hi)
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


def prepare(plan: Plan) -> _Prepared:
    """Components, the Gaussian δ rule and the locked ε_i of ``plan`` (validation of combinations)."""
    comps = tuple(components(plan, s) for s in plan.statistics)
    n_gauss = sum(1 for cs in comps for c in cs if c.mechanism == "gaussian")
    if n_gauss and plan.delta == 0.0:
        raise PlanError("plan: field 'delta' must be > 0 when a statistic uses the gaussian mechanism, got 0.0")
    gdelta = plan.gaussian_delta_share * plan.delta / n_gauss if n_gauss else 0.0
    locked: list[float | None] = []
    for stat, cs in zip(plan.statistics, comps):
        if stat.lock_epsilon is not None:
            locked.append(stat.lock_epsilon)
        elif stat.lock_accuracy is not None:
            locked.append(_lock_for_accuracy(plan, stat, cs, gdelta))
        else:
            locked.append(None)
    budget = plan.epsilon - plan.reserve_epsilon
    return _Prepared(plan, comps, tuple(locked), gdelta, budget)


# ---------------------------------------------------------------------------------------------
# Accounting: certified upper ε of the plan at the plan's δ, per mode.
# ---------------------------------------------------------------------------------------------


def _basic(p: _Prepared, eps: Sequence[float]) -> float:
    pairs = p.pairs(eps)
    return round_up(math.fsum(e for e, _ in pairs))


def _advanced(p: _Prepared, eps: Sequence[float]) -> float:
    pairs = p.pairs(eps)
    total = math.fsum(e for e, _ in pairs)
    slack = round_down(p.plan.delta - math.fsum(d for _, d in pairs))
    if slack <= 0.0:
        return round_up(total)
    drift = math.fsum(e * math.expm1(e) for e, _ in pairs)
    spread = math.sqrt(2.0 * -math.log(slack) * math.fsum(e * e for e, _ in pairs))
    return round_up(min(total, drift + spread))


def _kov(p: _Prepared, eps: Sequence[float]) -> float:
    pairs = p.pairs(eps)
    log_surv = math.fsum(math.log1p(-d) for _, d in pairs)
    slack = max(0.0, round_down(-math.expm1(math.log1p(-p.plan.delta) - log_surv)))
    value, total_delta = kov_bound_heterogeneous(pairs, slack)
    if total_delta > p.plan.delta:
        value = math.fsum(e for e, _ in pairs)  # the slack-free first term of KOV eq. (8)
    return round_up(value)


def _optimal_at(p: _Prepared, eps: Sequence[float], relative_tolerance: float) -> float:
    tolerance = relative_tolerance * p.budget
    return optimal.epsilon(p.pairs(eps), p.plan.delta, tolerance=tolerance).upper


def _optimal(p: _Prepared, eps: Sequence[float]) -> float:
    # Both engine calls are certified upper bounds of the same OptComp: the smaller one is reported.
    return min(_optimal_at(p, eps, OPTIMAL_SEARCH_TOLERANCE), _optimal_at(p, eps, OPTIMAL_FINAL_TOLERANCE))


def _mechanism_aware(p: _Prepared, eps: Sequence[float]) -> float:
    scales = p.scales(eps)
    flat = [(c, sc) for cs, scs in zip(p.comps, scales) for c, sc in zip(cs, scs)]
    if all(c.mechanism == "gaussian" for c, _ in flat):
        mu = math.sqrt(math.fsum(c.copies * (c.sensitivity / sc) ** 2 for c, sc in flat))
        value = round_up(gdp_epsilon(mu, p.plan.delta))
        # gdp_epsilon is on the safe side; re-check with the certified δ upper end.
        return value if gdp_delta_bound(mu, value)[1] <= p.plan.delta else math.inf
    k = sum(c.copies for c, _ in flat)
    pld = compose(*[mechanism_spec(c, sc) for c, sc in flat], accuracy=pld_accuracy(p.budget, k))
    return pld.epsilon(p.plan.delta).upper


_ACCOUNTING: dict[str, Callable[[_Prepared, Sequence[float]], float]] = {
    "basic": _basic,
    "advanced": _advanced,
    "kov": _kov,
    "optimal": _optimal,
    "mechanism_aware": _mechanism_aware,
}


def certified_epsilon(plan: Plan, mode: str, epsilons: Sequence[float]) -> float:
    """Certified upper ε at the plan's δ of releasing the statistics with the given ε_i under ``mode``.

    For ``mechanism_aware`` this is the smaller of the PLD/GDP and the optimal black-box bounds, so it may be
    below a :class:`ModeResult`'s ``epsilon_certified`` (whose search can stop on a scale it certified by
    one of the two only); both are certified.
    """
    p = prepare(plan)
    mode = _check_mode(mode)
    value = _ACCOUNTING[mode](p, list(epsilons))
    if mode == "mechanism_aware":  # the black-box bound holds for the same mechanisms: keep the smaller
        value = min(value, _optimal(p, list(epsilons)))
    return value


def _check_mode(mode: object) -> str:
    if not isinstance(mode, str) or mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    return mode


# ---------------------------------------------------------------------------------------------
# The search for the largest certified-feasible scale.
# ---------------------------------------------------------------------------------------------


def _search(
    value_of: Callable[[float], float], budget: float, s0: float, progress: Progress | None, rtol: float,
    seed: tuple[float, float] | None = None,
) -> tuple[float, float, int]:
    """Largest s (to relative ``rtol``) with value_of(s) ≤ budget; value_of is non-decreasing.

    Returns (s, value_of(s), evaluations). Each round guesses the root g by a secant in log–log
    coordinates (certified ε is close to a power of the scale), then evaluates g·(1 − rtol/3) and, when
    that passes within 2·rtol of the budget, g·(1 + rtol/3): when the first passes and the second fails,
    the bracket is already narrower than rtol. The returned s always passed (certified feasible).
    ``seed``: a scale already known to be feasible, with its certified value (by another accounting).
    """
    calls = 0
    seen: dict[float, float] = {}
    lo: float | None = None
    hi: float | None = None
    r = rtol
    if seed is not None:
        seen[seed[0]] = seed[1]
        lo = seed[0]

    def f(s: float) -> bool:
        nonlocal calls, lo, hi
        if s not in seen:
            calls += 1
            seen[s] = value_of(s)
            if progress is not None:
                progress(f"evaluation {calls}: scale {s:.6g} -> certified epsilon {seen[s]:.6g}")
        ok = seen[s] <= budget
        if ok and (lo is None or s > lo):
            lo = s
        if not ok and (hi is None or s < hi):
            hi = s
        return ok

    def secant(x0: float, x1: float) -> float:
        v0, v1 = seen[x0], seen[x1]
        if not (0.0 < v0 < math.inf and 0.0 < v1 < math.inf) or v0 == v1 or x0 == x1:
            return math.nan
        slope = (math.log(v1) - math.log(v0)) / (math.log(x1) - math.log(x0))
        if not slope > 0.0:
            return math.nan
        return x1 * math.exp((math.log(budget) - math.log(v1)) / slope)

    def guess() -> float:
        if lo is not None and hi is not None:
            g = secant(lo, hi)
            span = math.log(hi / lo)
            if not math.isfinite(g):
                return math.sqrt(lo * hi)
            t = min(0.98, max(0.02, math.log(g / lo) / span))
            return lo * math.exp(t * span)
        xs = sorted(seen)
        known = lo if lo is not None else hi
        assert known is not None
        g = secant(xs[0], xs[-1]) if xs[-1] > xs[0] * (1.0 + 10.0 * r) else math.nan
        if not math.isfinite(g):
            v = seen[known]
            g = known * (budget / v if 0.0 < v < math.inf else (10.0 if v == 0.0 else 0.1))
        g = min(10.0 * known, max(0.1 * known, g))
        if lo is not None:  # only passing points so far: go up
            return max(g, lo * (1.0 + 2.0 * r))
        return min(g, known * (1.0 - 2.0 * r))

    g = s0 if seed is None else seed[0] * (1.0 + r)
    while calls < _MAX_EVALUATIONS:
        a = g * (1.0 - r / 3.0)
        if f(a) and seen[a] >= budget * (1.0 - 2.0 * r):
            f(g * (1.0 + r / 3.0))
        if lo is not None and hi is not None and hi <= lo * (1.0 + r):
            break
        if lo is None and hi is not None and hi < s0 * _FLOOR:
            break
        g = guess()
    if lo is None:
        raise PlanError("plan: the locked statistics alone exceed the budget under this accounting")
    return lo, seen[lo], calls


def _search_optimal(p: _Prepared, s0: float, progress: Progress | None) -> tuple[float, float, int]:
    """The ``optimal`` search in two phases: coarse engine tolerance, then fine from the coarse answer.

    The reported value is the smaller of the two certified upper ends at the final scale (as
    :func:`certified_epsilon` computes it).
    """
    def coarse(x: float) -> float:
        return _optimal_at(p, p.epsilons(x), OPTIMAL_SEARCH_TOLERANCE)

    def fine(x: float) -> float:
        return _optimal_at(p, p.epsilons(x), OPTIMAL_FINAL_TOLERANCE)

    try:
        s1, v1, c1 = _search(coarse, p.budget, s0, progress, 3.0 * SCALE_RTOL)
    except PlanError:  # the locks may fit only by the finer bracket: search with it alone
        s, value, calls = _search(fine, p.budget, s0, progress, SCALE_RTOL)
        return s, min(value, coarse(s)), calls + 1
    s, value, c2 = _search(fine, p.budget, s1, progress, SCALE_RTOL, (s1, v1))
    other = fine(s) if s == s1 else coarse(s)
    return s, min(value, other), c1 + c2 + 1


def allocate(plan: Plan, mode: str, *, progress: Progress | None = None, basic: ModeResult | None = None,
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
    mode = _check_mode(mode)
    t0 = time.perf_counter()
    p = prepare(plan)
    account = _ACCOUNTING[mode]
    free_weight = math.fsum(st.weight for lk, st in zip(p.locked, plan.statistics) if lk is None)
    if free_weight == 0.0:
        s, calls = 0.0, 1
        value = account(p, p.epsilons(0.0))
        if mode == "mechanism_aware":
            value = min(value, _optimal(p, p.epsilons(0.0)))
        if value > p.budget:
            raise PlanError(f"plan: the locked statistics need certified epsilon {value:.6g} under {mode} "
                            f"accounting, above the budget {p.budget:.6g}")
    else:
        locked_sum = math.fsum(lk for lk in p.locked if lk is not None)
        s0 = max(p.budget - locked_sum, p.budget / 100.0) / free_weight
        rtol, seed = SCALE_RTOL, None
        if mode == "mechanism_aware":
            rtol = max(SCALE_RTOL, PLANNER_PLD_RELATIVE_WIDTH)
            opt = optimal_result if optimal_result is not None else allocate(plan, "optimal", basic=basic)
            seed = (opt.scale, opt.epsilon_certified)  # certified for these mechanisms too (black box)
        if mode == "optimal":
            s, value, calls = _search_optimal(p, s0, progress)
        else:
            s, value, calls = _search(lambda x: account(p, p.epsilons(x)), p.budget, s0, progress, rtol, seed)
        if mode == "mechanism_aware":
            value = min(value, _optimal(p, p.epsilons(s)))
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
            delta=sum(p.gaussian_delta for c in cs if c.mechanism == "gaussian"),
            noise=sc, accuracy=a, accuracy_simultaneous=a_sim, locked=locked, gain_vs_basic=gain,
        ))
    return ModeResult(mode=mode, scale=s, epsilon_certified=value, epsilon_budget=p.budget, delta=plan.delta,
                      statistics=tuple(stats), evaluations=calls, seconds=time.perf_counter() - t0)


def plan_all(plan: Plan, modes: Sequence[str] = MODES, *, progress: Progress | None = None) -> dict[str, ModeResult]:
    """Every requested mode's allocation, side by side (basic first: the gains are relative to it)."""
    wanted = [_check_mode(m) for m in modes]
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


__all__ = ["MODES", "ModeResult", "StatisticResult", "allocate", "certified_epsilon", "plan_all", "prepare"]



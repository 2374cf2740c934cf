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
  δ_μ(ε) upper end), else the PLD engine (:func:`optcomp.compose` on a fixed grid step,
  :func:`pld_accuracy`). The search (:func:`_search_mechanism_aware`) places its few engine calls with
  an uncertified central-limit (GDP) model of the plan corrected by the certified values, and stops
  within ``MECHANISM_AWARE_RTOL`` of the budget. The optimal black-box bound is certified for the same
  mechanisms: given the ``optimal`` allocation (:func:`plan_all`) the search never goes below it;
  alone, one black-box evaluation at the found scale decides whether the ``optimal`` search should
  continue upwards (:func:`_black_box_floor`), so this mode is not beaten by ``optimal`` either.

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
from optcomp._inverse import SearchBudgetExceeded, solve
from optcomp._numerics import CALIBRATION_RTOL, PLANNER_MIN_GRID_STEP, Accuracy, Bound, round_down, round_up
from optcomp.bounds import kov_bound_heterogeneous
from optcomp.composition import compose
from optcomp.fdp._gdp import gdp_delta_bound, gdp_epsilon
from optcomp.mechanisms import Mechanism
from optcomp.planner._model import _Model
from optcomp.planner._noise import (
    Component,
    accuracy,
    components,
    gaussian_mus,
    mechanism_spec,
    noise_scale,
)
from optcomp.planner._schema import MAX_EPSILON, Plan, PlanError, Statistic, show
from optcomp.pld import GridTooLargeError

MODES: tuple[str, ...] = ("basic", "advanced", "kov", "optimal", "mechanism_aware")

#: Relative precision of the common scale s: the returned s is certified feasible and within this
#: factor of the largest feasible one (as the accounting evaluates it).
SCALE_RTOL: float = CALIBRATION_RTOL
#: Relative width aimed at for the PLD engine's certified ε bracket in ``mechanism_aware`` mode. It sets a
#: *fixed* grid step (:func:`pld_accuracy`, one realisation per evaluation instead of the engine's coarse
#: first pass and refinement); the upper end stays certified at any step, a coarser step only gives
#: away up to about this fraction of ε.
PLANNER_PLD_RELATIVE_WIDTH: float = 1e-3
#: Coarsest grid step relative to the budget (few laws: the evaluations are cheap; a few Laplace laws have
#: atoms at ±ε_c, whose discretisation error is first order in the step).
_PLD_MAX_RELATIVE_STEP: float = 1e-3
#: Finest grid step used (``_numerics.PLANNER_MIN_GRID_STEP``).
_PLD_MIN_STEP: float = PLANNER_MIN_GRID_STEP
#: ``mechanism_aware`` search: it aims at a certified ε of budget·(1 − ``_MA_AIM``) and stops at a
#: certified-feasible scale whose certified ε is at least budget·(1 − ``MECHANISM_AWARE_RTOL``) (or
#: when the bracket of the scale is narrower than ``SCALE_RTOL``). The unspent part of the budget is
#: then below this fraction of it.
MECHANISM_AWARE_RTOL: float = 2.5e-3
_MA_AIM: float = 1e-3
#: Largest factor one ``mechanism_aware`` step moves the scale (steps from a certified ε of 0 grow 10, 100,
#: 10⁴, ... up to it: a tiny budget far below the Gaussians' δ share leaves ε at 0 for many decades).
_MA_MAX_REACH: float = 1e64
#: A bracket of the scale wider than this factor is halved geometrically (after blind steps).
_MA_WIDE_BRACKET: float = 1e4
#: A mechanism-aware evaluation whose bracket is wider than this many times
#: ``PLANNER_PLD_RELATIVE_WIDTH`` is redone once on a finer step (first-order error: few Laplace atoms).
_PLD_REFINE_TRIGGER: float = 3.0


def pld_accuracy(budget: float, k: int) -> Accuracy:
    """The PLD engine's accuracy for a mechanism-aware evaluation: a fixed grid step Δ.

    ``k`` is the number of distinct-law steps (non-Gaussian component copies, plus one for all the
    Gaussians, which compose into one law). Both ends of the engine's bracket are off by about 3kΔ²/ε
    in ε for these laws (measured on mixed plans), so Δ = ε·√(w/(3k)) (w =
    ``PLANNER_PLD_RELATIVE_WIDTH``), at most ``_PLD_MAX_RELATIVE_STEP``·ε and at least
    ``_PLD_MIN_STEP`` (a coarser step stays certified). A deterministic function of the plan:
    :func:`certified_epsilon` reproduces the search's values.
    """
    rel = min(_PLD_MAX_RELATIVE_STEP, math.sqrt(PLANNER_PLD_RELATIVE_WIDTH / (3.0 * max(k, 1))))
    return Accuracy(grid_step=max(budget * rel, _PLD_MIN_STEP))


#: Bracket width asked of :func:`optcomp.optimal.epsilon` (its ``tolerance``), relative to the budget:
#: coarse while the ``optimal`` search brackets the scale (about 20× cheaper on 1,000 distinct ε_i), fine
#: for its last steps. Every call's upper end is certified; the fine width costs at most about this
#: fraction of the budget.
OPTIMAL_SEARCH_TOLERANCE: float = 1e-2
OPTIMAL_FINAL_TOLERANCE: float = 2e-3
#: Fixed grid steps tried (each 4× coarser) before the engine's own choice, when memory runs out.
_MAX_COARSENINGS = 4
#: The scale search aims this fraction of its ``rtol`` past each predicted root (the accountings are
#: smooth in s, so the secant's prediction is good): the returned scale lands within about this
#: fraction of the largest feasible one.
_SEARCH_AIM = 0.1
#: Doublings either side of the start the scale search may go (the whole float range).
_SEARCH_SPAN = 2100
#: No free ε_i beyond this many times ``MAX_EPSILON`` is searched: a plan's certified ε is then above
#: any budget (a pure ε_i-DP release alone needs about ε_i; a Gaussian's nominal ε_i understates it).
_MAX_FREE_EPSILON_FACTOR = 2.0
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

    @property
    def max_scale(self) -> float:
        """Largest scale worth searching: the largest free ε_i reaches ``_MAX_FREE_EPSILON_FACTOR``·MAX_EPSILON."""
        free = [st.weight for lk, st in zip(self.locked, self.plan.statistics) if lk is None]
        return _MAX_FREE_EPSILON_FACTOR * MAX_EPSILON / max(free) if free else 0.0

    def epsilons(self, s: float) -> list[float]:
        return [lk if lk is not None else s * st.weight for lk, st in zip(self.locked, self.plan.statistics)]

    def pairs(self, eps: Sequence[float]) -> list[tuple[float, float]]:
        out = []
        for e, comps in zip(eps, self.comps):
            for c in comps:
                out.append((c.share * e, self.gaussian_delta if c.mechanism == "gaussian" else 0.0))
        return out

    def scales(self, eps: Sequence[float]) -> list[tuple[float, ...]]:
        if self.gaussian_delta > 0.0:  # calibrate every Gaussian at once (memoised for noise_scale)
            gaussian_mus([c.share * e for e, comps in zip(eps, self.comps) for c in comps
                          if c.mechanism == "gaussian" and c.share * e > 0.0], self.gaussian_delta)
        return [tuple(noise_scale(c, c.share * e, self.gaussian_delta) for c in comps)
                for e, comps in zip(eps, self.comps)]


def _lock_for_accuracy(plan: Plan, index: int, stat: Statistic, comps: tuple[Component, ...], gdelta: float) -> float:
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
        raise PlanError(f"statistic {show(stat.name)} (#{index + 1}): field 'lock_accuracy' {target!r} is unreachable "
                        f"at any epsilon_i (the best accuracy reached is above it)", field="lock_accuracy", index=index)
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
    comps = tuple(components(plan, s, i) for i, s in enumerate(plan.statistics))
    n_gauss = sum(1 for cs in comps for c in cs if c.mechanism == "gaussian")
    if n_gauss and plan.delta == 0.0:
        raise PlanError("plan: field 'delta' must be > 0 when a statistic uses the gaussian mechanism, got 0.0",
                        field="delta")
    gdelta = plan.gaussian_delta_share * plan.delta / n_gauss if n_gauss else 0.0
    locked: list[float | None] = []
    for i, (stat, cs) in enumerate(zip(plan.statistics, comps)):
        if stat.lock_epsilon is not None:
            locked.append(stat.lock_epsilon)
        elif stat.lock_accuracy is not None:
            locked.append(_lock_for_accuracy(plan, i, stat, cs, gdelta))
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
    # hypot: Σε_i² would underflow to 0 for tiny ε_i (and overflow for none here); the drift terms ε_i² may
    # underflow too, each by less than the smallest subnormal, which is added back per term
    drift = math.fsum(e * math.expm1(e) for e, _ in pairs) + len(pairs) * math.ulp(0.0)
    spread = math.sqrt(2.0 * -math.log(slack)) * math.hypot(*(e for e, _ in pairs))
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
    # a component with infinite noise (ε_c = 0: a free statistic at scale 0) releases nothing: its privacy
    # loss is identically 0, so leaving it out is exact
    flat = [(c, sc) for cs, scs in zip(p.comps, scales) for c, sc in zip(cs, scs) if sc < math.inf]
    if not flat:
        return 0.0
    if all(c.mechanism == "gaussian" for c, _ in flat):
        mu = math.sqrt(math.fsum(c.copies * (c.sensitivity / sc) ** 2 for c, sc in flat))
        value = round_up(gdp_epsilon(mu, p.plan.delta))
        # gdp_epsilon is on the safe side; re-check with the certified δ upper end.
        return value if gdp_delta_bound(mu, value)[1] <= p.plan.delta else math.inf
    if p.plan.delta == 0.0:
        # only Laplace-family components (prepare refuses Gaussians at δ = 0): each one's loss reaches its
        # ε_c with positive probability, so ε(0) of the composition is exactly Σε_c (basic composition)
        return _basic(p, eps)
    k = sum(c.copies for c, _ in flat if c.mechanism != "gaussian")
    k += any(c.mechanism == "gaussian" for c, _ in flat)
    items = [mechanism_spec(c, sc) for c, sc in flat]
    acc = pld_accuracy(p.budget, k)
    assert acc.grid_step is not None
    step = acc.grid_step
    b = _pld_epsilon(items, step, p.plan.delta)
    width = (b.upper - b.lower) / max(b.upper, 1e-2 * p.budget)
    if math.isfinite(b.upper) and width > _PLD_REFINE_TRIGGER * PLANNER_PLD_RELATIVE_WIDTH:
        # the error is first order in the step here (atoms of few Laplace laws deep in the tail): one
        # finer realisation; both upper ends are certified, the smaller is kept
        finer = step * max(0.1, PLANNER_PLD_RELATIVE_WIDTH / width)
        return min(b.upper, _pld_epsilon(items, finer, p.plan.delta).upper)
    return b.upper


def _pld_epsilon(items: Sequence[tuple[Mechanism, int]], step: float, delta: float) -> Bound:
    """The engine's certified ε(δ) bracket at grid step ``step`` (coarser steps if memory runs out)."""
    for _ in range(_MAX_COARSENINGS):
        try:
            return compose(*items, accuracy=Accuracy(grid_step=step)).epsilon(delta)
        except GridTooLargeError:  # a step too fine for the memory cap: a coarser one is still certified
            step *= 4.0
    return compose(*items, accuracy=Accuracy(relative_width=PLANNER_PLD_RELATIVE_WIDTH)).epsilon(delta)


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
    seed: tuple[float, float] | None = None, limit: float = math.inf,
) -> tuple[float, float, int]:
    """Largest s (to relative ``rtol``) with value_of(s) ≤ budget; value_of is non-decreasing.

    :func:`optcomp._inverse.solve` in the increasing direction (a secant in log–log coordinates, slope 1
    to start with: certified ε is close to proportional to the scale), with at most ``_MAX_EVALUATIONS``
    evaluations, cached ones included. Returns (s, value_of(s), evaluations); the returned s was evaluated
    and passed (certified feasible; the proof is :func:`~optcomp._inverse.solve`'s). ``seed``: a scale
    already known to be feasible, with its certified value (by another accounting). The search ranges
    over every normal float up to ``limit`` (a budget far below the Gaussians' δ share can leave the
    accounting at 0 for scales many decades above its start: the solver's blind steps accelerate).
    """
    seen: dict[float, float] = {}
    calls = 0
    if seed is not None:
        seen[seed[0]] = seed[1]

    def evaluate(s: float) -> float:
        nonlocal calls
        if s not in seen:
            calls += 1
            seen[s] = value_of(s)
            if progress is not None:
                progress(f"evaluation {calls}: scale {s:.6g} -> certified epsilon {seen[s]:.6g}")
        return seen[s]

    guess = s0 if seed is None else seed[0] * (1.0 + rtol)
    try:
        _, passing = solve(evaluate, budget, name="scale", guess=guess, rtol=rtol, increasing=True,
                           passing=None if seed is None else seed[0], slope_hint=1.0, budget=_MAX_EVALUATIONS,
                           aim=_SEARCH_AIM * rtol, span=_SEARCH_SPAN, limit=max(limit, guess))
    except SearchBudgetExceeded as exc:
        raise PlanError(f"plan: {exc}", field="epsilon") from exc
    if passing is None:
        raise PlanError(f"plan: field 'epsilon': no common scale down to {guess * 2.0**-60:.3g} fits the budget "
                        f"{budget:.6g}", field="epsilon")
    return passing, seen[passing], calls


def _search_mechanism_aware(
    p: _Prepared, s0: float, progress: Progress | None, seed: tuple[float, float] | None,
) -> tuple[float, float, int]:
    """The ``mechanism_aware`` search: few certified engine evaluations, placed by :class:`_Model`.

    Every evaluated scale is certified by the engine (:func:`_mechanism_aware`). The first is the model's
    root of ε(s) = budget·(1 − ``_MA_AIM``); each next one corrects the model by the ratio certified/model at
    the bracketing points seen so far (log-linear in s between two). The search stops at a passing scale
    whose certified ε is within ``MECHANISM_AWARE_RTOL`` of the budget, or when the bracket of the largest
    feasible scale is narrower than ``SCALE_RTOL``; it returns the largest passing scale (and its value).
    ``seed``: a scale known to be feasible by another certified accounting (the optimal black box), with
    its certified value: a floor of the bracket, returned when no evaluated scale above it passes.
    """
    budget = p.budget
    aim = budget * (1.0 - _MA_AIM)
    accept = budget * (1.0 - MECHANISM_AWARE_RTOL)
    model = _Model(p)
    max_scale = p.max_scale
    seen: dict[float, float] = {}
    lo: float | None = seed[0] if seed is not None else None
    hi: float | None = None
    calls = 0

    def evaluate(s: float) -> float:
        nonlocal calls, lo, hi
        if s not in seen:
            calls += 1
            seen[s] = _mechanism_aware(p, p.epsilons(s))
            if progress is not None:
                progress(f"evaluation {calls}: scale {s:.6g} -> certified epsilon {seen[s]:.6g}")
        v = seen[s]
        if v <= budget:
            if lo is None or s > lo:
                lo = s
        elif hi is None or s < hi:
            hi = s
        return v

    def correction() -> Callable[[float], float]:
        """log(certified/model) as a function of ln s: through the two evaluated points whose certified
        values are nearest the aim (log-linear between them, slope clipped), constant with one."""
        anchors = [(math.log(x), math.log(v), math.log(m)) for x, v in seen.items()
                   if 0.0 < v < math.inf and 0.0 < (m := model.epsilon(x)) < math.inf]
        anchors.sort(key=lambda a: abs(a[1] - math.log(aim)))
        if not anchors:
            return lambda x: 0.0
        x0, r0 = anchors[0][0], anchors[0][1] - anchors[0][2]
        if len(anchors) == 1 or anchors[1][0] == x0:
            return lambda x: r0
        slope = (anchors[1][1] - anchors[1][2] - r0) / (anchors[1][0] - x0)
        slope = max(-1.0, min(1.0, slope))
        return lambda x: r0 + slope * (x - x0)

    reach = 10.0  # most a step moves; squared after each step from a value of 0 (no information)

    def next_guess(last: float) -> float:
        nonlocal reach
        v = seen.get(last, math.nan)
        reach = min(reach * reach, _MA_MAX_REACH) if v == 0.0 else 10.0
        model.refit(last)
        g = model.solve(aim, correction(), last) if model.usable else math.nan
        if not math.isfinite(g) or g <= 0.0:  # no model: a power law of exponent 1 through the last value
            g = last * (aim / v if 0.0 < v < math.inf else (reach if v == 0.0 else 0.1))
        g = min(reach * last, max(last / reach, g), max_scale)
        if lo is not None and hi is not None:
            wide = hi > _MA_WIDE_BRACKET * lo  # the model's guesses only creep through such a bracket
            if wide or not lo * (1.0 + 0.25 * SCALE_RTOL) < g < hi * (1.0 - 0.25 * SCALE_RTOL):
                g = math.sqrt(lo) * math.sqrt(hi)
        elif lo is not None:
            g = max(g, lo * (1.0 + SCALE_RTOL))
        elif hi is not None:
            g = min(g, hi * (1.0 - SCALE_RTOL))
        return g

    g = next_guess(seed[0] if seed is not None else s0)
    for _ in range(2 * _MAX_EVALUATIONS):
        if calls >= _MAX_EVALUATIONS:
            break
        v = evaluate(g)
        if accept <= v <= budget:
            break
        if lo is not None and hi is not None and hi <= lo * (1.0 + SCALE_RTOL):
            break
        if lo is None and hi is not None and hi < s0 * _FLOOR:
            break
        g = next_guess(g)
    if lo is None:
        raise PlanError(f"plan: field 'epsilon': no common scale fits the budget {budget:.6g} under "
                        "mechanism_aware accounting", field="epsilon")
    if lo not in seen:  # nothing above the seed passed: the seed (certified by the black box) stands
        assert seed is not None
        return seed[0], seed[1], calls
    return lo, seen[lo], calls


def _black_box_floor(p: _Prepared, s: float, value: float, progress: Progress | None) -> tuple[float, float, int]:
    """Keep ``mechanism_aware`` no worse than ``optimal`` (to the search precision) without its search.

    One optimal black-box evaluation at the found scale s (certified for the same mechanisms): where it
    is not below the engine's value, the black box would not allow a larger scale (the usual case). Where
    it is (few Laplace laws deep in the tail, where the PLD grid error is first order and OptComp is all
    but exact), the ``optimal`` search goes on upwards from s. Returns (s, certified ε, evaluations).
    """
    def fine(x: float) -> float:
        return _optimal_at(p, p.epsilons(x), OPTIMAL_FINAL_TOLERANCE)

    v = fine(s)
    if not v < value:
        return s, value, 1
    s2, v2, calls = _search(fine, p.budget, s, progress, SCALE_RTOL, (s, v), p.max_scale)
    return (s2, v2, calls + 1) if s2 > s else (s, v, calls + 1)


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
        s1, v1, c1 = _search(coarse, p.budget, s0, progress, 3.0 * SCALE_RTOL, limit=p.max_scale)
    except PlanError:  # the locks may fit only by the finer bracket: search with it alone
        s, value, calls = _search(fine, p.budget, s0, progress, SCALE_RTOL, limit=p.max_scale)
        return s, min(value, coarse(s)), calls + 1
    s, value, c2 = _search(fine, p.budget, s1, progress, SCALE_RTOL, (s1, v1), p.max_scale)
    other = fine(s) if s == s1 else coarse(s)
    return s, min(value, other), c1 + c2 + 1


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
            s, value, calls = _search(lambda x: account(p, p.epsilons(x)), p.budget, s0, progress, SCALE_RTOL,
                                      limit=p.max_scale)
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



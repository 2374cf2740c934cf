"""Accounting: the certified upper ε of a plan at the plan's δ, under each mode.

Every mode returns a certified upper ε of releasing the statistics with the given ε_i
(:class:`~optcomp.planner._prepare._Prepared` turns them into components, pairs and noise):

* ``basic``: Σε_i, with Σδ_i ≤ δ (KOV Thm III.1). An ε-BR step (a quantile's exponential mechanism) is
  ε-DP and counts ε here: basic composition knows nothing finer.
* ``advanced``: heterogeneous advanced composition (Dwork–Rothblum–Vadhan; KOV Thm III.2 with per-step
  ε_i): min{Σε_i, Σε_i(e^{ε_i} − 1) + √(2 ln(1/δ̃)·Σε_i²)} with δ̃ = δ − Σδ_i. Its proof is Azuma–Hoeffding
  on the privacy loss: step i's loss has conditional mean ≤ ε_i(e^{ε_i} − 1) and lies in an interval of
  width 2ε_i. An ε_j-BR step's loss lies in an interval of width ε_j with mean ≤ KL_max(ε_j) =
  ε/(e^ε − 1) − 1 + ln((e^ε − 1)/ε) ≤ ε²/8 (Dong–Durfee–Rogers 2020, the BR advanced composition), so BR
  steps enter as drift KL_max(ε_j) and half-width ε_j/2 in the same sum (:func:`_azuma`).
* ``kov``: the KOV heterogeneous bound (KOV Thm III.5), δ̃ = 1 − (1 − δ)/Π(1 − δ_i)
  (:func:`optcomp.bounds.kov_bound_heterogeneous`). Its third term is the same Azuma bound with the
  exact mean of the worst ε-DP pair (ε·tanh(ε/2)); with BR steps the smaller of KOV (BR counted as ε-DP)
  and that Azuma bound with each BR step's own drift and width (both certified at the same δ̃).
* ``optimal``: optimal black-box composition of the (ε_i, δ_i) pairs (KOV Thm III.3, MV Thm 1.5), asked of
  the queries floor: ``optcomp.compose`` of :class:`~optcomp.mechanisms.EpsilonDelta` items, whose
  routing sends them to :mod:`optcomp.optimal` (:func:`_black_box`). A BR step enters as the black box it
  is, :class:`~optcomp.mechanisms.BoundedRange` (every ε-BR pair is dominated by a member of the BR
  family): the floor then answers by the adaptive BR recursion (``docs/selection.md`` §2), with the BR
  steps *last* (:func:`_br_last`): each BR step's worst pair may then depend on the outputs of every other
  statistic, which bounds the plan in whatever order its statistics are released, adaptively or not (the
  fixed steps' laws do not depend on earlier outputs, so a strategy of any release order is one of this
  order's: move the fixed steps after a BR step to before it, their outputs being independent of it).
* ``mechanism_aware``: the composition of the actual mechanisms, asked of the queries floor
  (``optcomp.compose(...).epsilon(δ)``): all Gaussian, it answers by the GDP closed form (μ merged by
  :func:`optcomp._items.merged_mu`, Dong–Roth–Su Cor 3.3); with a BR step by the adaptive BR recursion,
  BR steps last as in ``optimal`` (the exponential mechanism is exactly ε-BR, its worst pair a member of
  the BR family); otherwise on the
  PLD grid, at a fixed grid step (:func:`pld_accuracy`). The black-box bound is certified for the same mechanisms:
  :func:`certified_epsilon` reports the smaller of the two.

The planner's widths are :class:`~optcomp.Accuracy` values: a width in ε relative to the budget is the
floor's ``relative_width`` (measured by :meth:`~optcomp.Bound.relative_width_above`) at ε = budget.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import TypeVar

from optcomp._numerics import (
    EPSILON_WIDTH_FLOOR,
    PLANNER_MIN_GRID_STEP,
    Accuracy,
    Bound,
    round_down,
    round_up,
)
from optcomp.bounds import kov_bound_heterogeneous
from optcomp.composition import compose
from optcomp.mechanisms import BoundedRange, EpsilonDelta, Mechanism
from optcomp.mechanisms.bounded_range import kl_max
from optcomp.planner._noise import BOUNDED_RANGE, mechanism_spec
from optcomp.planner._prepare import _Prepared, prepare
from optcomp.planner._schema import Plan
from optcomp.pld import GridTooLargeError
from optcomp.queries import Composition

MODES: tuple[str, ...] = ("basic", "advanced", "kov", "optimal", "mechanism_aware")

#: Relative width aimed at for the PLD engine's certified ε bracket in ``mechanism_aware`` mode. It sets a
#: *fixed* grid step (:func:`pld_accuracy`, one realisation per evaluation instead of the engine's coarse
#: first pass and refinement); the upper end stays certified at any step, a coarser step only gives
#: away up to about this fraction of ε.
PLANNER_PLD_RELATIVE_WIDTH: float = 1e-3
#: Relative bracket width asked of the adaptive BR recursion in ``mechanism_aware`` mode (plans with a
#: quantile). Its upper end converges faster than its lower one: on the census example at 3e-3 it is within
#: 1e-6 of the 1e-3 one, in a fifth of the time (0.31 s against 1.7 s CPU); only the upper end is used.
ADAPTIVE_RELATIVE_WIDTH: float = 3e-3
#: Coarsest grid step relative to the budget (few laws: the evaluations are cheap; a few Laplace laws have
#: atoms at ±ε_c, whose discretisation error is first order in the step).
_PLD_MAX_RELATIVE_STEP: float = 1e-3
#: Finest grid step used (``_numerics.PLANNER_MIN_GRID_STEP``).
_PLD_MIN_STEP: float = PLANNER_MIN_GRID_STEP
#: A mechanism-aware evaluation whose bracket is wider than this many times
#: ``PLANNER_PLD_RELATIVE_WIDTH`` is redone once on a finer step (first-order error: few Laplace atoms).
_PLD_REFINE_TRIGGER: float = 3.0
#: The grid brackets' relative width is measured above this fraction of the budget.
_PLD_WIDTH_FLOOR: float = 1e-2
#: Fixed grid steps tried (each 4× coarser) before the engine's own choice, when memory runs out.
_MAX_COARSENINGS = 4
#: Bracket width in ε asked of the black-box composition, relative to the budget: coarse while the
#: ``optimal`` search brackets the scale, fine for its last steps. Every call's upper end is certified;
#: the fine width costs at most about this fraction of the budget.
OPTIMAL_SEARCH_TOLERANCE: float = 1e-2
OPTIMAL_FINAL_TOLERANCE: float = 2e-3
#: A black-box width the optimal engine cannot reach is asked again this many times 8× coarser.
_BLACK_BOX_COARSENINGS = 3

Accounting = Callable[[_Prepared, Sequence[float]], float]
T = TypeVar("T")


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


def black_box_accuracy(budget: float, relative_tolerance: float) -> Accuracy:
    """A bracket width in ε of ``relative_tolerance``·budget, as the one accuracy dialect.

    ``Accuracy.relative_width`` is (upper − lower)/max(upper, ``EPSILON_WIDTH_FLOOR``)
    (:meth:`~optcomp.Bound.relative_width_above`); at upper = budget that width is
    ``relative_tolerance``·budget / max(budget, ``EPSILON_WIDTH_FLOOR``).
    """
    return Accuracy(relative_width=relative_tolerance * budget / max(budget, EPSILON_WIDTH_FLOOR))


#: Below this ε the drift of a BR step is bounded by ε²/8 (rounded up) instead of the mpmath KL_max: the two
#: differ by a relative O(ε²), and KL_max's working precision grows as ε falls.
_KL_SMALL = 1e-4


@functools.lru_cache(maxsize=4096)
def _br_drift(epsilon: float) -> float:
    """KL_max(ε) of one ε-BR step, rounded up (:func:`optcomp.mechanisms.bounded_range.kl_max`; ε²/8 below
    ``_KL_SMALL``)."""
    if epsilon <= 0.0:
        return 0.0
    if epsilon < _KL_SMALL:
        return round_up(epsilon * epsilon / 8.0) + math.ulp(0.0)
    return kl_max(epsilon)


def _azuma(pairs: Sequence[tuple[float, float]], bounded: Sequence[bool], slack: float, *, tight: bool) -> float:
    """Azuma–Hoeffding bound on the composed privacy loss, exceeded with probability ≤ ``slack``.

    Step i's loss (given the past) has mean ≤ m_i and lies in an interval of width 2h_i, so the sum exceeds
    Σm_i + √(2 ln(1/slack)·Σh_i²) with probability ≤ slack (DRV10 Thm III.3's proof). ε-DP step: h = ε and
    m = ε(e^ε − 1) (DRV10, ``tight=False``) or ε·tanh(ε/2) (the worst ε-DP pair's KL, KOV Thm III.5,
    ``tight=True``); ε-BR step: h = ε/2, m = KL_max(ε). Each drift term is rounded up; subnormal
    underflow is added back per term.
    """
    drift = 0.0
    terms = []
    for (e, _), br in zip(pairs, bounded):
        if br:
            terms.append(_br_drift(e))
        else:
            terms.append(e * math.tanh(e / 2.0) if tight else e * math.expm1(e))
    drift = round_up(math.fsum(terms), 8.0 * 2.0**-52) + len(terms) * math.ulp(0.0)
    halves = (e / 2.0 if br else e for (e, _), br in zip(pairs, bounded))
    spread = math.sqrt(2.0 * -math.log(slack)) * math.hypot(*halves)
    return round_up(drift + spread)


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
    return min(round_up(total), _azuma(pairs, p.bounded_range, slack, tight=False))


def _kov(p: _Prepared, eps: Sequence[float]) -> float:
    pairs = p.pairs(eps)
    log_surv = math.fsum(math.log1p(-d) for _, d in pairs)
    slack = max(0.0, round_down(-math.expm1(math.log1p(-p.plan.delta) - log_surv)))
    value, total_delta = kov_bound_heterogeneous(pairs, slack)
    if total_delta > p.plan.delta:
        value = math.fsum(e for e, _ in pairs)  # the slack-free first term of KOV eq. (8)
    value = round_up(value)
    bounded = p.bounded_range
    if any(bounded) and slack > 0.0:  # BR steps as what they are: the Azuma bound with their own drift/width
        value = min(value, _azuma(pairs, bounded, slack, tight=True))
    return value


def _br_last(items: Sequence[tuple[T, bool]]) -> list[T]:
    """The items, those flagged bounded-range moved to the end (each group in plan order): the composition
    order of the adaptive recursion (module docstring: the most adaptive order, sound for every release order;
    it is also the cheapest, one fixed-step run per pass)."""
    return [x for x, br in items if not br] + [x for x, br in items if br]


def black_box_bound(p: _Prepared, eps: Sequence[float], relative_tolerance: float) -> Bound:
    """Certified ε bracket of the optimal black-box composition of the plan's (ε_c, δ_c) pairs.

    The queries floor answers ``compose`` of :class:`~optcomp.mechanisms.EpsilonDelta` items (by
    :mod:`optcomp.optimal`: KOV Thm III.3, MV Thms 1.4–1.5) at :func:`black_box_accuracy`; a width it
    cannot reach (``GridTooLargeError``) is asked again coarser (any upper end is certified), and
    [0, ∞] (infeasible, the safe side) is returned if none is reached.
    """
    items: list[tuple[tuple[Mechanism, int], bool]] = []
    for (e, d), br in zip(p.pairs(eps), p.bounded_range):
        if br:
            if e > 0.0:  # an ε = 0 selection releases nothing about the data
                items.append(((BoundedRange(e), 1), True))
        else:
            items.append(((EpsilonDelta(epsilon=e, delta=d), 1), False))
    if not items:
        return Bound(0.0, 0.0)
    composition = compose(*_br_last(items))
    accuracy = black_box_accuracy(p.budget, relative_tolerance)
    for _ in range(_BLACK_BOX_COARSENINGS + 1):
        try:
            return composition.epsilon(p.plan.delta, accuracy=accuracy)
        except GridTooLargeError:
            accuracy = Accuracy(relative_width=min(0.5, 8.0 * accuracy.relative_width))
    return Bound(0.0, math.inf)


def _black_box(p: _Prepared, eps: Sequence[float], relative_tolerance: float) -> float:
    """The certified upper end of :func:`black_box_bound`."""
    return black_box_bound(p, eps, relative_tolerance).upper


def _optimal(p: _Prepared, eps: Sequence[float]) -> float:
    # Both widths give certified upper bounds of the same OptComp: the smaller one is reported.
    return min(_black_box(p, eps, OPTIMAL_SEARCH_TOLERANCE), _black_box(p, eps, OPTIMAL_FINAL_TOLERANCE))


def _mechanism_aware(p: _Prepared, eps: Sequence[float]) -> float:
    scales = p.scales(eps)
    # a component with infinite noise (ε_c = 0: a free statistic at scale 0) releases nothing: its privacy
    # loss is identically 0, so leaving it out is exact
    flat = [(c, sc) for cs, scs in zip(p.comps, scales) for c, sc in zip(cs, scs) if sc < math.inf]
    if not flat:
        return 0.0
    if p.plan.delta == 0.0:
        # only Laplace-family components (prepare refuses Gaussians at δ = 0): each one's loss reaches its
        # ε_c with positive probability, so ε(0) of the composition is exactly Σε_c (basic composition)
        return _basic(p, eps)
    composition = compose(*_br_last([(mechanism_spec(c, sc), c.mechanism in BOUNDED_RANGE) for c, sc in flat]))
    closed = Accuracy(relative_width=PLANNER_PLD_RELATIVE_WIDTH)
    engine = composition.engine(closed)
    if engine == "adaptive":  # a quantile (BR step): the adaptive recursion, whose upper end converges first
        return composition.epsilon(p.plan.delta, accuracy=Accuracy(relative_width=ADAPTIVE_RELATIVE_WIDTH)).upper
    if engine != "grid":  # the floor's closed form (all Gaussian: GDP) needs no step
        return composition.epsilon(p.plan.delta, accuracy=closed).upper
    k = sum(c.copies for c, _ in flat if c.mechanism != "gaussian")
    k += any(c.mechanism == "gaussian" for c, _ in flat)
    step = pld_accuracy(p.budget, k).grid_step
    assert step is not None
    b = _grid_epsilon(composition, step, p.plan.delta)
    width = b.relative_width_above(_PLD_WIDTH_FLOOR * p.budget)
    if math.isfinite(b.upper) and width > _PLD_REFINE_TRIGGER * PLANNER_PLD_RELATIVE_WIDTH:
        # the error is first order in the step here (atoms of few Laplace laws deep in the tail): one
        # finer realisation; both upper ends are certified, the smaller is kept
        finer = step * max(0.1, PLANNER_PLD_RELATIVE_WIDTH / width)
        return min(b.upper, _grid_epsilon(composition, finer, p.plan.delta).upper)
    return b.upper


def _grid_epsilon(composition: Composition, step: float, delta: float) -> Bound:
    """The floor's certified ε(δ) bracket on the grid at step ``step`` (coarser steps if memory runs out)."""
    for _ in range(_MAX_COARSENINGS):
        try:
            return composition.epsilon(delta, accuracy=Accuracy(grid_step=step))
        except GridTooLargeError:  # a step too fine for the memory cap: a coarser one is still certified
            step *= 4.0
    return composition.epsilon(delta, accuracy=Accuracy(relative_width=PLANNER_PLD_RELATIVE_WIDTH))


ACCOUNTING: dict[str, Accounting] = {
    "basic": _basic,
    "advanced": _advanced,
    "kov": _kov,
    "optimal": _optimal,
    "mechanism_aware": _mechanism_aware,
}


def check_mode(mode: object) -> str:
    """``mode`` if it is one of :data:`MODES`, else ``ValueError`` naming them."""
    if not isinstance(mode, str) or mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    return mode


def certified_epsilon(plan: Plan, mode: str, epsilons: Sequence[float]) -> float:
    """Certified upper ε at the plan's δ of releasing the statistics with the given ε_i under ``mode``.

    For ``mechanism_aware`` this is the smaller of the floor's mechanism bound (GDP or PLD) and the
    optimal black-box bound, so it may be below a :class:`ModeResult`'s ``epsilon_certified`` (whose
    search can stop on a scale it certified by one of the two only); both are certified.
    """
    p = prepare(plan)
    mode = check_mode(mode)
    value = ACCOUNTING[mode](p, list(epsilons))
    if mode == "mechanism_aware":  # the black-box bound holds for the same mechanisms: keep the smaller
        value = min(value, _optimal(p, list(epsilons)))
    return value

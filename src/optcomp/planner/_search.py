"""The searches for the largest certified-feasible common scale s of a plan, per accounting mode.

The plan's certified ε (:mod:`optcomp.planner._accounting`) grows with s; every search returns an s that
was evaluated and passed (certified ε ≤ budget):

* :func:`_search` — :func:`optcomp._inverse.solve` in the increasing direction (basic, advanced, kov, and
  each phase of :func:`_search_optimal`, coarse then fine black-box widths).
* :func:`_search_mechanism_aware` — :func:`~optcomp._inverse.solve` with few floor evaluations, placed by
  an uncertified central-limit (GDP) model of the plan (:class:`~optcomp.planner._model._Model`, solve's
  ``propose`` step) corrected by the certified values; it stops within ``MECHANISM_AWARE_RTOL`` of the
  budget (solve's ``accept``). The optimal black-box bound is certified for the same
  mechanisms: given the ``optimal`` allocation the search never goes below it; alone, one black-box
  evaluation at the found scale decides whether the ``optimal`` search should continue upwards
  (:func:`_black_box_floor`), so this mode is not beaten by ``optimal`` either.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

from optcomp._inverse import SearchBracket, SearchBudgetExceeded, solve
from optcomp._numerics import EPSILON_WIDTH_FLOOR, Bound, ProgressLine
from optcomp.planner._accounting import (
    OPTIMAL_FINAL_TOLERANCE,
    OPTIMAL_SEARCH_TOLERANCE,
    _black_box,
    _mechanism_aware,
    black_box_accuracy,
    black_box_bound,
)
from optcomp.planner._model import _Model
from optcomp.planner._prepare import _FLOOR, SCALE_RTOL, _Prepared
from optcomp.planner._schema import PlanError

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
#: The scale search aims this fraction of its ``rtol`` past each predicted root (the accountings are
#: smooth in s, so the secant's prediction is good): the returned scale lands within about this
#: fraction of the largest feasible one.
_SEARCH_AIM = 0.1
#: Doublings either side of the start the scale search may go (the whole float range).
_SEARCH_SPAN = 2100
#: Relative precision of the ``optimal`` search's fine phase: finer than ``SCALE_RTOL`` (the black-box
#: engine's value jitters with the scale by about its bracket width, so the coarse phase's bracket says
#: little about where in it the fine root lies; one or two more calls land the scale closer to it).
_OPTIMAL_FINAL_RTOL: float = SCALE_RTOL / 2.0
#: Most accounting evaluations of one search (bracketing plus refinement).
_MAX_EVALUATIONS = 80



class _Found(NamedTuple):
    """A search's answer: the largest passing scale, its certified value, the evaluations made, and the
    smallest failing scale evaluated (``None``: none failed)."""

    scale: float
    value: float
    evaluations: int
    fail: float | None = None


def _search(
    value_of: Callable[[float], float], budget: float, s0: float, progress: ProgressLine | None, rtol: float,
    seed: tuple[float, float] | None = None, limit: float = math.inf, fail: float | None = None,
) -> _Found:
    """Largest s (to relative ``rtol``) with value_of(s) ≤ budget; value_of is non-decreasing.

    :func:`optcomp._inverse.solve` in the increasing direction (a secant in log–log coordinates, slope 1
    to start with: certified ε is close to proportional to the scale), with at most ``_MAX_EVALUATIONS``
    evaluations, cached ones included. Returns (s, value_of(s), evaluations); the returned s was evaluated
    and passed (certified feasible; the proof is :func:`~optcomp._inverse.solve`'s). ``seed``: a scale
    already known to be feasible, with its certified value (by another accounting); ``fail``: one known
    to fail (by value_of's own measure, e.g. a reused evaluation). The search ranges
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
        failing, passing = solve(evaluate, budget, name="scale", guess=guess, rtol=rtol, increasing=True, fail=fail,
                                 passing=None if seed is None else seed[0], slope_hint=1.0,
                                 budget=_MAX_EVALUATIONS, aim=_SEARCH_AIM * rtol, span=_SEARCH_SPAN,
                                 limit=max(limit, guess))
    except SearchBudgetExceeded as exc:
        raise PlanError(f"plan: {exc}", field="epsilon") from exc
    if passing is None:
        raise PlanError(f"plan: field 'epsilon': no common scale down to {guess * 2.0**-60:.3g} fits the budget "
                        f"{budget:.6g}", field="epsilon")
    return _Found(passing, seen[passing], calls, failing)


class _MechanismAwareSearch:
    """The model side of one ``mechanism_aware`` search: the certified values seen, the GDP model and its
    step reach. The bracket of the largest feasible scale is :func:`~optcomp._inverse.solve`'s."""

    def __init__(self, p: _Prepared, progress: ProgressLine | None) -> None:
        self.p = p
        self.progress = progress
        self.aim = p.budget * (1.0 - _MA_AIM)
        self.model = _Model(p)
        self.seen: dict[float, float] = {}
        self.calls = 0
        self.reach = 10.0  # most a step moves; squared after each step from a value of 0 (no information)

    def evaluate(self, s: float) -> float:
        """The floor's certified ε at scale s (cached)."""
        if s not in self.seen:
            self.calls += 1
            self.seen[s] = _mechanism_aware(self.p, self.p.epsilons(s))
            if self.progress is not None:
                self.progress(f"evaluation {self.calls}: scale {s:.6g} -> certified epsilon {self.seen[s]:.6g}")
        return self.seen[s]

    def correction(self) -> Callable[[float], float]:
        """log(certified/model) as a function of ln s: through the two evaluated points whose certified
        values are nearest the aim (log-linear between them, slope clipped), constant with one."""
        anchors = [(math.log(x), math.log(v), math.log(m)) for x, v in self.seen.items()
                   if 0.0 < v < math.inf and 0.0 < (m := self.model.epsilon(x)) < math.inf]
        anchors.sort(key=lambda a: abs(a[1] - math.log(self.aim)))
        if not anchors:
            return lambda x: 0.0
        x0, r0 = anchors[0][0], anchors[0][1] - anchors[0][2]
        if len(anchors) == 1 or anchors[1][0] == x0:
            return lambda x: r0
        slope = (anchors[1][1] - anchors[1][2] - r0) / (anchors[1][0] - x0)
        slope = max(-1.0, min(1.0, slope))
        return lambda x: r0 + slope * (x - x0)

    def next_guess(self, last: float, bracket: SearchBracket) -> float:
        """The next scale: the corrected model's root, within the reach of ``last`` and inside ``bracket``
        (``passing`` the largest scale that passed, ``fail`` the smallest that failed)."""
        v = self.seen.get(last, math.nan)
        self.reach = min(self.reach * self.reach, _MA_MAX_REACH) if v == 0.0 else 10.0
        self.model.refit(last)
        g = self.model.solve(self.aim, self.correction(), last) if self.model.usable else math.nan
        if not math.isfinite(g) or g <= 0.0:  # no model: a power law of exponent 1 through the last value
            g = last * (self.aim / v if 0.0 < v < math.inf else (self.reach if v == 0.0 else 0.1))
        g = min(self.reach * last, max(last / self.reach, g), self.p.max_scale)
        lo, hi = bracket.passing, bracket.fail
        if lo is not None and hi is not None:
            wide = hi > _MA_WIDE_BRACKET * lo  # the model's guesses only creep through such a bracket
            if wide or not lo * (1.0 + 0.25 * SCALE_RTOL) < g < hi * (1.0 - 0.25 * SCALE_RTOL):
                g = math.sqrt(lo) * math.sqrt(hi)
        elif lo is not None:
            g = max(g, lo * (1.0 + SCALE_RTOL))
        elif hi is not None:
            g = min(g, hi * (1.0 - SCALE_RTOL))
        return g


def _search_mechanism_aware(
    p: _Prepared, s0: float, progress: ProgressLine | None, seed: tuple[float, float] | None,
) -> tuple[float, float, int]:
    """The ``mechanism_aware`` search: few certified floor evaluations, placed by :class:`_Model`.

    Every evaluated scale is certified by the queries floor (:func:`_mechanism_aware`). The first is the
    model's root of ε(s) = budget·(1 − ``_MA_AIM``); each next one corrects the model by the ratio
    certified/model at the bracketing points seen so far (log-linear in s between two). The search stops
    at a passing scale whose certified ε is within ``MECHANISM_AWARE_RTOL`` of the budget, or when the
    bracket of the largest feasible scale is narrower than ``SCALE_RTOL``; it returns the largest passing
    scale (and its value). ``seed``: a scale known to be feasible by another certified accounting (the
    optimal black box), with its certified value: a floor of the bracket, returned when no evaluated
    scale above it passes. The loop, the bracket, the stops and the safe side are
    :func:`~optcomp._inverse.solve`'s (the model is its ``propose`` step, the early stop its ``accept``);
    a failure below s0·``_FLOOR`` with nothing passing ends it (the range's lower end).
    """
    search = _MechanismAwareSearch(p, progress)
    known = None if seed is None else seed[0]
    first = search.next_guess(s0 if known is None else known, SearchBracket(None, known))
    try:
        found = solve(search.evaluate, p.budget, name="scale", guess=first, rtol=SCALE_RTOL, increasing=True,
                      passing=known, limit=max(p.max_scale, first), budget=_MAX_EVALUATIONS, span=_SEARCH_SPAN,
                      lowest=math.nextafter(s0 * _FLOOR, 0.0), accept=p.budget * (1.0 - MECHANISM_AWARE_RTOL),
                      propose=lambda x, v, bracket: search.next_guess(x, bracket))
    except SearchBudgetExceeded as exc:  # out of evaluations: the largest passing scale so far stands
        found = exc.bracket
    if found.passing is None:
        raise PlanError(f"plan: field 'epsilon': no common scale fits the budget {p.budget:.6g} under "
                        "mechanism_aware accounting", field="epsilon")
    if found.passing not in search.seen:  # nothing above the seed passed: the seed (certified by the black box) stands
        assert seed is not None
        return seed[0], seed[1], search.calls
    return found.passing, search.seen[found.passing], search.calls


def _black_box_floor(p: _Prepared, s: float, value: float, progress: ProgressLine | None) -> tuple[float, float, int]:
    """Keep ``mechanism_aware`` no worse than ``optimal`` (to the search precision) without its search.

    One optimal black-box evaluation at the found scale s (certified for the same mechanisms): where it
    is not below the floor's mechanism value, the black box would not allow a larger scale (the usual
    case). Where it is (few Laplace laws deep in the tail, where the PLD grid error is first order and
    OptComp is all but exact), the ``optimal`` search goes on upwards from s. Returns (s, certified ε,
    evaluations).
    """
    def fine(x: float) -> float:
        return _black_box(p, p.epsilons(x), OPTIMAL_FINAL_TOLERANCE)

    v = fine(s)
    if not v < value:
        return s, value, 1
    s2, v2, calls, _ = _search(fine, p.budget, s, progress, SCALE_RTOL, (s, v), p.max_scale)
    return (s2, v2, calls + 1) if s2 > s else (s, v, calls + 1)


def _search_optimal(p: _Prepared, s0: float, progress: ProgressLine | None) -> tuple[float, float, int]:
    """The ``optimal`` search in two phases: coarse black-box width, then fine from the coarse answer.

    The coarse phase pins the scale to 3·``SCALE_RTOL``; the fine one goes on from its passing scale to
    ``_OPTIMAL_FINAL_RTOL``. A bracket the floor returned is kept per scale: one already as narrow as the
    fine width asks (measured as the floor measures it, :meth:`~optcomp.Bound.relative_width_above`)
    serves the fine phase as is, so a coarse failing scale can bound the fine search from above. When
    the first coarse bracket is already that narrow (the floor's first pass meets both widths at this
    budget), there is no cheaper phase: one search on the reported value to ``_OPTIMAL_FINAL_RTOL``. The
    reported value is the smaller of the two widths' certified upper ends at the final scale (as
    :func:`~optcomp.planner._accounting.certified_epsilon` computes it).
    """
    brackets: dict[tuple[float, float], Bound] = {}
    fine_width = black_box_accuracy(p.budget, OPTIMAL_FINAL_TOLERANCE).relative_width
    calls = 0

    def reusable(x: float) -> bool:  # the coarse bracket at x is as narrow as the fine width asks
        b = brackets.get((x, OPTIMAL_SEARCH_TOLERANCE))
        return b is not None and b.relative_width_above(EPSILON_WIDTH_FLOOR) <= fine_width

    def bound(x: float, tolerance: float) -> Bound:
        nonlocal calls
        if (x, tolerance) not in brackets:
            if tolerance == OPTIMAL_FINAL_TOLERANCE and reusable(x):
                brackets[x, tolerance] = brackets[x, OPTIMAL_SEARCH_TOLERANCE]
            else:
                calls += 1
                brackets[x, tolerance] = black_box_bound(p, p.epsilons(x), tolerance)
        return brackets[x, tolerance]

    def coarse(x: float) -> float:
        return bound(x, OPTIMAL_SEARCH_TOLERANCE).upper

    def fine(x: float) -> float:
        return bound(x, OPTIMAL_FINAL_TOLERANCE).upper

    def both(x: float) -> float:  # the reported value: a coarse call, and a fine one only if it is not as narrow
        return min(coarse(x), fine(x))

    coarse(s0)  # its width tells whether the coarse phase is any coarser at this budget
    if reusable(s0):  # it is not: one search on the reported value, to the fine precision
        s, value, _, _ = _search(both, p.budget, s0, progress, _OPTIMAL_FINAL_RTOL, limit=p.max_scale)
        return s, value, calls
    try:
        s1, v1, _, f1 = _search(coarse, p.budget, s0, progress, 3.0 * SCALE_RTOL, limit=p.max_scale)
    except PlanError:  # the locks may fit only by the finer bracket: search with it alone
        s, value, _, _ = _search(fine, p.budget, s0, progress, _OPTIMAL_FINAL_RTOL, limit=p.max_scale)
        return s, min(value, coarse(s)), calls
    fail = f1 if f1 is not None and reusable(f1) and fine(f1) > p.budget else None
    # near the root the coarse bracket is as narrow as the fine one asks: search the reported value (one call each)
    fine_phase = both if reusable(s1) else fine
    s, value, _, _ = _search(fine_phase, p.budget, s1, progress, _OPTIMAL_FINAL_RTOL, (s1, v1), p.max_scale, fail)
    return s, min(value, fine(s), coarse(s)), calls


__all__ = ["MECHANISM_AWARE_RTOL"]

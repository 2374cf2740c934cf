"""The one inverse solver: the smallest or largest parameter whose certified value meets a target.

Every inverse problem of optcomp (least noise for a target ε, most DP-SGD steps, the planner's largest
common scale, the largest per-query ε₀) is the same question: given a parameter x > 0 and a *certified*
value v(x) (the upper end of a :class:`~optcomp.Bound`, a certified upper bound given as a float, or a
pass/fail verdict on it) that is monotone in x, find the boundary of the set {x : v(x) ≤ target}.
:func:`solve` answers it once, with a safeguarded secant in (ln x, ln v), a counted evaluation budget and
a proof that what it returns is on the safe side (see its docstring). It imports only :mod:`_numerics`.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

import numpy as np
import numpy.typing as npt

from optcomp._numerics import Accuracy, Bound, FloatArray

#: Evaluations one :func:`solve` call may make by default. Every call of the evaluator counts, also one
#: answered from a cache: a search that revisits points (e.g. when the bracket can no longer shrink in
#: floating point) ends with :class:`SearchBudgetExceeded` instead of looping.
DEFAULT_EVALUATION_BUDGET = 200
#: How far (a factor 2**60) a one-sided search moves from its guess before it concludes that nothing
#: (or everything) passes in that direction.
MAX_DOUBLINGS = 60
#: Consecutive blind one-sided steps (no prediction: a value of 0 or inf) multiply x by 2, 4, 16, 256, ...
#: (the factor squares each time) up to 2**(2**this): a root many decades away is reached in few steps.
_MAX_BLIND_LEVEL = 6
#: Largest |ln(predicted / x)| of one secant prediction (beyond it exp would leave the float range).
_MAX_LOG_SHIFT = 50.0

#: What an evaluator returns at x: a certified bracket (its ``side`` end is compared with the target), a
#: certified value (a float), a verdict (``True``: meets the target), or ``None`` (could not be evaluated
#: here, e.g. the engine's grid limit: counts as failing).
Evaluation = Bound | float | bool | None


class SearchBracket(NamedTuple):
    """The answer of every search here: ``passing`` meets the target (evaluated, or given), ``fail`` does
    not; either is ``None`` where the search range holds no such point (:func:`solve`'s Returns)."""

    fail: float | None
    passing: float | None


class SearchBudgetExceeded(ValueError):
    """An inverse search used its evaluation budget without pinning the root (names the parameter);
    ``bracket``: the :class:`SearchBracket` reached (its ``passing`` end is as safe as a returned one)."""

    def __init__(self, message: str, bracket: SearchBracket | None = None) -> None:
        super().__init__(message)
        self.bracket = SearchBracket(None, None) if bracket is None else bracket


class NotMonotoneError(ValueError):
    """The certified values contradict the declared monotone direction (names the parameter)."""


def _as_value(result: Evaluation, side: Literal["upper", "lower"], target: float) -> float:
    if result is None:
        return math.inf
    if isinstance(result, bool):
        return -math.inf if result else math.inf  # a verdict: below or above any target
    if isinstance(result, Bound):
        return result.upper if side == "upper" else result.lower
    v = float(result)
    return math.inf if math.isnan(v) else v


def _log_width(a: float | None, b: float | None) -> float:
    if a is None or b is None or a <= 0.0 or b <= 0.0:
        return math.inf
    return abs(math.log(b / a))


def log_slope(points: list[tuple[float, float]]) -> float | None:
    """d ln v / d ln x from the two most recent points with finite positive values (``None`` if unknown)."""
    usable = [(x, v) for x, v in points if 0.0 < v < math.inf and x > 0.0]
    if len(usable) < 2:
        return None
    (x1, v1), (x2, v2) = usable[-2], usable[-1]
    if x1 == x2 or v1 == v2:
        return None
    slope = (math.log(v2) - math.log(v1)) / (math.log(x2) - math.log(x1))
    return slope if math.isfinite(slope) else None


def _adjacent(a: float, b: float, integer: bool) -> bool:
    """No float (integer) lies strictly between ``a`` and ``b``: the bracket cannot shrink further."""
    lo, hi = min(a, b), max(a, b)
    return hi - lo <= 1.0 if integer else math.nextafter(lo, math.inf) >= hi


def solve(
    evaluate: Callable[[float], Evaluation],
    target: float,
    *,
    name: str,
    guess: float,
    rtol: float,
    increasing: bool = False,
    integer: bool = False,
    side: Literal["upper", "lower"] = "upper",
    fail: float | None = None,
    passing: float | None = None,
    slope_hint: float | None = None,
    limit: float = math.inf,
    budget: int = DEFAULT_EVALUATION_BUDGET,
    aim: float | None = None,
    span: int = MAX_DOUBLINGS,
    lowest: float | None = None,
    accept: float | None = None,
    propose: Callable[[float, float, SearchBracket], float] | None = None,
) -> SearchBracket:
    """The boundary of {x > 0 : v(x) ≤ target}, v the certified value of ``evaluate``; safe side returned.

    v is assumed monotone: non-increasing in x (a noise scale: more noise, less loss) unless
    ``increasing`` (a number of steps, a budget scale). Each step predicts the root by a secant in
    (ln x, ln v) through the last two finite values (or ``slope_hint``) and aims just past it, by a
    factor 1 + ``rtol``/3, on the side not yet pinned, so that a good prediction ends the search in two
    evaluations; one-sided steps move at most a factor 4 (16, 256, ... after consecutive steps held at
    the cap), except blind ones (a value of 0 or ∞ allows no
    prediction), which move by 2, 4, 16, 256, ... (the factor squares each time, up to 2**64); a step
    that fails twice to halve the bracket is replaced by bisection (geometric; integer midpoints with
    ``integer``). x stays within [2**-``span``·guess, 2**``span``·guess] ∩ [smallest positive float,
    ``limit``].

    **Safe side (the proof, once for every inverse of optcomp).** ``passing`` is only ever set to an x
    that was given as ``passing`` or at which ``evaluate`` was called and returned a value ≤ ``target``;
    ``fail`` only to a given ``fail`` or an evaluated x with a value > ``target`` (``None`` and ``NaN``
    count as failing). Both are updated only to evaluated points, and nothing else is returned. Hence
    the returned ``passing`` has a certified value ≤ ``target`` *whatever the true shape of v*: monotonicity
    only decides how fast the bracket shrinks, never whether the answer is safe. When the search
    converges, ``fail`` and ``passing`` are within a factor 1 + ``rtol`` (adjacent integers, or adjacent
    floats where float64 cannot resolve ``rtol``), so with v monotone the true boundary lies between them.

    Args:
        evaluate: x ↦ a :class:`Bound` (its ``side`` end decides), a float (the certified value), a
            bool (whether x meets the target) or ``None`` (not evaluable here: fails).
        target: the value to meet (v(x) ≤ target passes).
        name: the parameter the caller solves for, named in every error.
        guess: the first x evaluated (> 0).
        rtol: relative precision of the bracket, in (0, 1).
        increasing: v is non-decreasing in x (the passing side is below the root); else non-increasing.
        integer: x is an integer ≥ 1.
        side: which end of a returned :class:`Bound` is compared with the target.
        fail, passing: known ends of the bracket (their values are not re-evaluated).
        slope_hint: d ln v / d ln x to use until two finite values are known.
        limit: largest x evaluated (the increasing direction's search range).
        budget: most calls of ``evaluate`` (cached answers included), ≥ 1.
        span: the search range in doublings either side of ``guess`` (see above).
        aim: how far past a predicted root (relative) each step aims; default ``rtol``/3. Smaller lands
            closer to the root when predictions are good, at the risk of more evaluations when not.
        lowest: the lower end of the search range instead of 2**-``span``·``guess``.
        accept: stop at a passing x whose value is ≥ ``accept`` (close enough to ``target``).
        propose: ``(x, v, bracket) -> next x``, a caller's model that replaces the secant step and its
            safeguards (e.g. the planner's central-limit model); the bracket, the stops and the safe side
            stay this function's.

    Returns:
        :class:`SearchBracket` ``(fail, passing)``: ``passing`` stays ``None`` if nothing in the search range passes (up to its
        upper end, or down to its lower end when ``increasing``); ``fail`` stays ``None`` if everything in
        the other direction over the range passes. With ``increasing`` and an x at ``limit`` that passes,
        the search stops there.

    Raises:
        SearchBudgetExceeded: ``budget`` evaluations did not pin the root (names ``name``).
        NotMonotoneError: two :class:`Bound` evaluations certify the opposite direction (a lower end above
            another point's upper end on the wrong side), e.g. a family whose parameter is not a noise scale.
    """
    if not (guess > 0.0 and math.isfinite(guess)):
        raise ValueError(f"{name}: the search needs a finite positive start, got {guess!r}")
    lowest = max(math.ldexp(guess, -span), math.ulp(0.0)) if lowest is None else lowest
    up = span + math.frexp(guess)[1]  # ldexp(guess, span) overflows from an exponent 1024 on
    highest = min(limit, math.ldexp(guess, span) if up < sys.float_info.max_exp else sys.float_info.max)
    search = _Search(
        target, increasing, integer, rtol, 1.0 + (rtol / 3.0 if aim is None else aim), lowest, highest, limit
    )
    search.fail, search.passing = fail, passing
    brackets: list[tuple[float, Bound]] = []
    points: list[tuple[float, float]] = []
    x = guess
    for _ in range(budget):
        if integer:
            x = float(max(1, round(x)))
        x = min(x, limit)
        result = evaluate(x)
        v = _as_value(result, side, target)
        if isinstance(result, Bound):
            _check_direction(brackets, x, result, increasing, name)
        points.append((x, v))
        if search.record(x, v) or search.at_range_end(x, v) or (accept is not None and accept <= v <= target):
            return SearchBracket(search.fail, search.passing)
        if propose is not None:
            x = propose(x, v, SearchBracket(search.fail, search.passing))
        else:
            x = search.next_x(x, v, search.predict(points, slope_hint, x, v))
    raise SearchBudgetExceeded(
        f"{name}: the search did not pin the root of its certified value = {target:.6g} within {budget} "
        f"evaluations (bracket {_show(search.fail)} .. {_show(search.passing)})",
        SearchBracket(search.fail, search.passing),
    )


@dataclass
class _Search:
    """The state of one :func:`solve` call: the bracket ends (``fail``, ``passing``: given or evaluated
    points only) and the step controller's counters, with the call's settings. Each method is one step of the
    loop in :func:`solve`; none of them evaluates anything."""

    target: float
    increasing: bool
    integer: bool
    rtol: float
    aim_factor: float
    lowest: float
    highest: float
    limit: float
    fail: float | None = None
    passing: float | None = None
    blind: int = 0
    clamped: int = 0
    shrink_failures: int = 0

    def toward_pass(self, x: float, factor: float) -> float:
        """x moved by ``factor`` towards the passing side (up for a noise scale, down when increasing)."""
        return x / factor if self.increasing else x * factor

    def record(self, x: float, v: float) -> bool:
        """Move the bracket end that x's value ``v`` certifies (the safe-side proof of :func:`solve`);
        ``True`` when the bracket has converged (within 1 + rtol, or adjacent)."""
        fail, passing = self.fail, self.passing
        old = _log_width(fail, passing)
        if v <= self.target:
            passing = x if passing is None else (max(passing, x) if self.increasing else min(passing, x))
        else:
            fail = x if fail is None else (min(fail, x) if self.increasing else max(fail, x))
        self.fail, self.passing = fail, passing
        if fail is not None and passing is not None:
            if _log_width(fail, passing) <= math.log1p(self.rtol) or _adjacent(fail, passing, self.integer):
                return True
            self.shrink_failures = self.shrink_failures + 1 if _log_width(fail, passing) > 0.5 * old else 0
        return False

    def at_range_end(self, x: float, v: float) -> bool:
        """Whether x is an end of the search range that settles the answer (the end left unknown is
        set to ``None``: nothing passes, or everything does, in that direction)."""
        if self.increasing:
            if v <= self.target and x >= self.limit:
                return True
            if self.passing is None and x <= (1.0 if self.integer else self.lowest):
                return True
            if self.fail is None and x >= self.highest:
                return True
        else:
            if self.passing is None and x >= self.highest:
                return True
            if self.fail is None and x <= self.lowest:
                return True
        return False

    def predict(
        self, points: list[tuple[float, float]], slope_hint: float | None, x: float, v: float
    ) -> float | None:
        """The root predicted by a secant in (ln x, ln v) through the last two finite values (or the
        hinted slope); ``None`` when the slope is unknown or points the wrong way."""
        slope = log_slope(points) or slope_hint
        sign = 1.0 if self.increasing else -1.0
        if slope is None or slope * sign <= 0 or not 0.0 < v < math.inf or not self.target > 0.0:
            return None
        # the shift is clipped only to keep exp finite (one-sided steps are clipped to 4× anyway)
        shift = (math.log(self.target) - math.log(v)) / slope
        return x * math.exp(max(-_MAX_LOG_SHIFT, min(_MAX_LOG_SHIFT, shift)))

    def next_x(self, x: float, v: float, predicted: float | None) -> float:
        """The next point: just past the predicted root on the side not yet pinned (else a factor 2),
        then safeguarded (:meth:`bracketed`, :meth:`blind_step`, :meth:`one_sided`) and made integer."""
        fails = v > self.target
        if predicted is not None and 0.0 < predicted < math.inf:
            factor = self.aim_factor if fails else 1.0 / self.aim_factor
            nxt = self.toward_pass(predicted, factor)
        else:
            nxt = self.toward_pass(x, 2.0) if fails else self.toward_pass(x, 0.5)
        fail, passing = self.fail, self.passing
        if fail is not None and passing is not None:
            nxt = self.bracketed(nxt, min(fail, passing), max(fail, passing))
        elif predicted is None:
            nxt = self.blind_step(x, fails)
        else:
            nxt = self.one_sided(x, nxt, fails)
        return self.integer_step(x, nxt, fails) if self.integer else nxt

    def bracketed(self, nxt: float, lo: float, hi: float) -> float:
        """Inside the bracket [lo, hi]: bisect (geometrically) when the step leaves it or failed twice
        to halve it."""
        if self.shrink_failures >= 2 or not lo < nxt < hi:
            self.shrink_failures = 0
            mid = math.sqrt(lo) * math.sqrt(hi)
            return mid if lo < mid < hi else lo + 0.5 * (hi - lo)  # a few ulps apart: the float between
        return nxt

    def blind_step(self, x: float, fails: bool) -> float:
        """One-sided with no prediction: move by 2, 4, 16, 256, ... (the factor squares each time)."""
        factor = 2.0 ** (2 ** min(self.blind, _MAX_BLIND_LEVEL))
        self.blind += 1
        nxt = self.toward_pass(x, factor) if fails else self.toward_pass(x, 1.0 / factor)
        return min(max(nxt, self.lowest), self.highest)

    def one_sided(self, x: float, nxt: float, fails: bool) -> float:
        """One-sided with a prediction: move at most a factor 4 (16, 256, ... after steps held at the
        cap), at least 1 + rtol/3."""
        self.blind = 0
        cap: float = 4.0 ** (2 ** min(self.clamped, _MAX_BLIND_LEVEL))
        ratio = min(max(nxt / x, 1.0 / cap), cap)
        self.clamped = self.clamped + 1 if ratio in (cap, 1.0 / cap) else 0
        if abs(math.log(ratio)) < math.log1p(self.rtol / 3.0):
            step = 1.0 + self.rtol / 3.0
            ratio = self.toward_pass(1.0, step) if fails else self.toward_pass(1.0, 1.0 / step)
        return min(max(x * ratio, self.lowest), self.highest)

    def integer_step(self, x: float, nxt: float, fails: bool) -> float:
        """``nxt`` rounded to an integer that makes progress (the integer midpoint inside a bracket)."""
        nxt = float(round(nxt))
        if self.fail is not None and self.passing is not None:
            lo_i, hi_i = min(self.fail, self.passing), max(self.fail, self.passing)
            if not lo_i < nxt < hi_i:
                nxt = float((int(lo_i) + int(hi_i)) // 2)
        elif nxt == x:
            nxt = max(x + (1.0 if (not fails) == self.increasing else -1.0), 1.0)
        return nxt


def _show(x: float | None) -> str:
    return "unknown" if x is None else f"{x:.6g}"


def _check_direction(seen: list[tuple[float, Bound]], x: float, b: Bound, increasing: bool, name: str) -> None:
    """Raise :class:`NotMonotoneError` if ``b`` at x and an earlier bracket certify the wrong direction."""
    for y, c in seen:
        if y == x:
            continue
        (small_x, small_b), (big_x, big_b) = ((y, c), (x, b)) if y < x else ((x, b), (y, c))
        wrong = big_b.upper < small_b.lower if increasing else big_b.lower > small_b.upper
        if wrong:
            trend = "falls" if increasing else "grows"
            raise NotMonotoneError(
                f"{name}: the certified value {trend} with the parameter (x = {small_x:.6g} -> "
                f"[{small_b.lower:.6g}, {small_b.upper:.6g}], x = {big_x:.6g} -> [{big_b.lower:.6g}, "
                f"{big_b.upper:.6g}]): it is not {'non-decreasing' if increasing else 'non-increasing'} "
                "in the searched parameter"
            )
    seen.append((x, b))


# -- the coarse-to-fine layer: one certified value on ever finer grids ------------------------------

#: Coarse-to-fine searches: the first pass evaluates on a grid this many times coarser than asked.
COARSE_GRID_FACTOR = 16.0
#: Relative tolerance of the coarse passes (they only place the fine search; never returned).
COARSE_RTOL = 2e-2
#: Grid-step factors of the passes of an inverse, coarsest first, relative to the requested accuracy.
SEARCH_LEVELS: tuple[float, ...] = (COARSE_GRID_FACTOR, COARSE_GRID_FACTOR**0.5)


def coarse_accuracy(accuracy: Accuracy, factor: float = COARSE_GRID_FACTOR) -> Accuracy:
    """``accuracy`` on a grid ``factor`` times coarser (its brackets as certified, only wider): an expert
    ``grid_step`` times ``factor``, else the relative width times ``factor²`` (the engine's width is second
    order in the step), capped at 1/2. The one place that knows how to coarsen."""
    if accuracy.grid_step is not None:
        return dataclasses.replace(accuracy, grid_step=accuracy.grid_step * factor)
    return dataclasses.replace(accuracy, relative_width=min(0.5, accuracy.relative_width * factor**2))


def level_accuracies(accuracy: Accuracy) -> tuple[list[Accuracy], list[float]]:
    """The coarse accuracies of an inverse's passes (coarsest first) and the step ratios between
    consecutive passes, the last ratio being to ``accuracy`` itself."""
    coarse = [coarse_accuracy(accuracy, f) for f in SEARCH_LEVELS]
    factors = [*SEARCH_LEVELS, 1.0]
    return coarse, [factors[i] / factors[i + 1] for i in range(len(SEARCH_LEVELS))]


@dataclass
class Probe:
    """Memoised evaluations of a certified bracket ``evaluate(x) -> Bound``.

    An exception of a type in ``infeasible`` (the engine's grid limit) at some x is recorded as ``None``,
    "not feasible here" (it always fails the target), instead of ending the search; the last one is kept
    so that a search in which *nothing* is feasible can raise it."""

    evaluate: Callable[[float], Bound]
    infeasible: tuple[type[Exception], ...] = ()
    seen: dict[float, Bound | None] = dataclasses.field(default_factory=dict)
    last_error: Exception | None = None

    def __call__(self, x: float) -> Bound | None:
        if x not in self.seen:
            try:
                self.seen[x] = self.evaluate(x)
            except self.infeasible as err:
                self.seen[x] = None
                self.last_error = err
        return self.seen[x]


def _level_guess(
    probe: Probe, fail: float | None, passing: float, target: float, ratio: float, increasing: bool
) -> tuple[float, float | None]:
    """Where the next, ``ratio`` times finer level is predicted to cross the target, and the slope: the
    finer upper end ≈ midpoint + half-width/``ratio`` of this level's bracket (bracket widths scale with
    the grid step), solved by a log-log secant through this level's last failing and passing points."""
    pts = []
    for x in (fail, passing):
        b = None if x is None else probe(x)
        if x is not None and b is not None and math.isfinite(b.upper):
            pts.append((x, 0.5 * (b.lower + b.upper) + 0.5 * b.width / ratio))
    slope = log_slope(pts)
    if slope is None:
        slope = log_slope(sorted((x, b.upper) for x, b in probe.seen.items() if b is not None)[-2:])
    if slope is None or (slope > 0) != increasing or not pts or not pts[-1][1] > 0.0:
        return passing, slope
    x, v = pts[-1]
    return x * math.exp((math.log(target) - math.log(v)) / slope), slope


def multilevel_search(
    levels: Sequence[Probe],
    target: float,
    *,
    start: float,
    rtol: float,
    ratios: Sequence[float],
    name: str = "noise",
    increasing: bool = False,
    integer: bool = False,
    limit: float = math.inf,
) -> tuple[SearchBracket, float | None]:
    """Coarse-to-fine :func:`solve` over ``levels`` (the same certified bracket on ever finer grids).

    Each level but the last is solved to ``COARSE_RTOL`` on its upper end; the next starts from the
    crossing predicted by :func:`_level_guess` (``ratios[i]``: grid-step ratio of level i to the next),
    aimed just past it on the passing side. The last level is solved to ``rtol`` (``integer``: exactly, to
    adjacent integers). A point whose *lower* end exceeds the target (at any level) certainly fails at
    every level, so the last level never evaluates beyond it. Every returned point is one :func:`solve`
    returned (its safe-side proof).

    Returns:
        The last level's :class:`SearchBracket`, and the certified failing point closest to the root.
    """
    guess, slope = start, None
    certain_fail: float | None = None
    for i, probe in enumerate(levels):
        last = i == len(levels) - 1
        tol = (0.0 if integer else rtol) if last else COARSE_RTOL
        found = solve(probe, target, name=name, guess=guess, rtol=tol, increasing=increasing, integer=integer,
                      fail=certain_fail if last else None, slope_hint=slope, limit=limit,
                      aim=rtol / 3.0 if last and integer else None)
        fails = [x for p in levels for x, b in p.seen.items() if b is None or b.lower > target]
        certain_fail = (min(fails) if increasing else max(fails)) if fails else None
        if last or found.passing is None:
            return found, certain_fail
        guess, slope = _level_guess(probe, found.fail, found.passing, target, ratios[i], increasing)
        aim = 1.0 + (rtol if i == len(levels) - 2 else COARSE_RTOL) / 3.0
        guess = guess / aim if increasing else guess * aim
        if certain_fail is not None:  # never start beyond a certain failure
            guess = min(guess, certain_fail) if increasing else max(guess, certain_fail)
    return SearchBracket(None, None), certain_fail


# -- the float boundary of a verdict: adjacent floats, no model --------------------------------------


def float_boundary(
    passes: Callable[[float], bool],
    *,
    name: str,
    passing_above: bool,
    fail: float | None = None,
    passing: float | None = None,
    start: float | None = None,
    first_gap: float | None = None,
    xtol: float = 0.0,
    lowest: float = 0.0,
    highest: float = sys.float_info.max,
) -> SearchBracket:
    """The boundary of {x : ``passes(x)``}, a verdict monotone in x, to adjacent floats.

    The passing side is above the boundary when ``passing_above`` (a noise scale), below it otherwise.
    Without both ends, the search first moves out of ``start`` towards the missing end by gaps of g, 2g,
    4g, ... (g = ``first_gap``, default one ulp of ``start``: a start within a few ulps of the root, e.g.
    a closed-form root, costs a few evaluations; g = ``start`` doubles x), within [``lowest``,
    ``highest``]; then it bisects (midpoints (lo + hi)/2) until the ends are adjacent floats, or
    ``hi − lo ≤ xtol·max(1, |hi|)`` (``xtol = inf``: no bisection, the first passing point is kept).

    **Safe side**: as for :func:`solve`, ``passing`` is only ever a given ``passing`` or an x where
    ``passes(x)`` was true, ``fail`` a given ``fail`` or an x where it was false; nothing else is returned.

    Args:
        passes: x ↦ whether x meets the target.
        name: the parameter searched for (named in errors).
        passing_above: whether larger x pass (else smaller x do).
        fail, passing: known ends (not re-evaluated).
        start: the first point evaluated when an end is missing (finite).
        first_gap: the first outward step (default ``math.ulp(start)``).
        xtol: stop earlier, at a width ``xtol·max(1, hi)`` (0: adjacent floats).
        lowest, highest: the range of the outward steps.

    Returns:
        :class:`SearchBracket`; an end the range holds no evaluated point for stays ``None``
        (``passing``: nothing in range passes; ``fail``: everything does).
    """
    while fail is None or passing is None:  # outward from start, gaps doubling from one ulp
        if start is None or not math.isfinite(start):
            raise ValueError(f"{name}: the boundary search needs a finite start, got {start!r}")
        x, gap = start, math.ulp(start) if first_gap is None else first_gap
        while True:
            ok = passes(x)
            fail, passing = (fail, x) if ok else (x, passing)
            if fail is not None and passing is not None:
                break
            step_up = ok != passing_above  # towards the missing end
            if (step_up and x >= highest) or (not step_up and x <= lowest):
                return SearchBracket(fail, passing)
            x = min(x + gap, highest) if step_up else max(x - gap, lowest)
            gap *= 2.0
    while True:
        lo, hi = min(fail, passing), max(fail, passing)
        if hi - lo <= xtol * max(1.0, abs(hi)):
            return SearchBracket(fail, passing)
        mid = 0.5 * (lo + hi)
        if not lo < mid < hi:
            mid = lo + 0.5 * (hi - lo)  # (lo + hi) overflowed, or the ends are adjacent
        if not lo < mid < hi:
            return SearchBracket(fail, passing)
        if passes(mid):
            passing = mid
        else:
            fail = mid


def float_boundaries(
    passes: Callable[[FloatArray], npt.NDArray[np.bool_]], start: FloatArray, *, passing_above: bool,
    doublings: int = 2100,
) -> tuple[FloatArray, FloatArray]:
    """:func:`float_boundary` of many monotone verdicts at once, over x > 0: ``passes(x)[i]`` is verdict i
    at ``x[i]``. Each x doubles or halves from ``start`` towards its missing end (at most ``doublings``
    times), then every bracket is bisected (midpoints lo + (hi − lo)/2) until its ends are adjacent floats.

    **Safe side**, as for :func:`solve`: ``passing[i]`` is only ever an x at which verdict i was true,
    ``fail[i]`` one at which it was false (NaN where the range held none); nothing else is returned.

    Returns:
        ``(fail, passing)``, two arrays.
    """
    x = np.array(start, dtype=np.float64)
    fail, passing = np.full_like(x, np.nan), np.full_like(x, np.nan)
    ok = passes(x)
    factor = np.where(ok != passing_above, 2.0, 0.5)  # towards the missing end
    for _ in range(doublings + 1):
        fail, passing = np.where(ok, fail, x), np.where(ok, x, passing)
        missing = np.isnan(fail) | np.isnan(passing)
        if not missing.any():
            break
        x = np.where(missing, x * factor, x)
        ok = passes(x)
    lo, hi = (fail, passing) if passing_above else (passing, fail)
    while True:
        mid = lo + 0.5 * (hi - lo)
        moving = (lo < mid) & (mid < hi)  # NaN ends compare false: an unbracketed verdict stays
        if not moving.any():
            return (lo, hi) if passing_above else (hi, lo)
        to_lo = passes(np.where(moving, mid, x)) != passing_above  # mid is on the lower end's side
        lo, hi = np.where(moving & to_lo, mid, lo), np.where(moving & ~to_lo, mid, hi)


__all__ = [
    "COARSE_GRID_FACTOR",
    "COARSE_RTOL",
    "DEFAULT_EVALUATION_BUDGET",
    "SEARCH_LEVELS",
    "Evaluation",
    "NotMonotoneError",
    "Probe",
    "SearchBracket",
    "SearchBudgetExceeded",
    "coarse_accuracy",
    "float_boundaries",
    "float_boundary",
    "level_accuracies",
    "log_slope",
    "multilevel_search",
    "solve",
]


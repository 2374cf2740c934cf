"""The one inverse solver: the smallest or largest parameter whose certified value meets a target.

Every inverse problem of optcomp (least noise for a target ε, most DP-SGD steps, the planner's largest
common scale, the largest per-query ε₀) is the same question: given a parameter x > 0 and a *certified*
value v(x) (the upper end of a :class:`~optcomp.Bound`, a certified upper bound given as a float, or a
pass/fail verdict on it) that is monotone in x, find the boundary of the set {x : v(x) ≤ target}.
:func:`solve` answers it once, with a safeguarded secant in (ln x, ln v), a counted evaluation budget and
a proof that what it returns is on the safe side (see its docstring). It imports only :mod:`_numerics`.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from typing import Literal

from optcomp._numerics import Bound

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


class SearchBudgetExceeded(ValueError):
    """An inverse search used its evaluation budget without pinning the root (names the parameter)."""


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
) -> tuple[float | None, float | None]:
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

    Returns:
        ``(fail, passing)``: ``passing`` stays ``None`` if nothing in the search range passes (up to its
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

    def toward_pass(x: float, factor: float) -> float:
        return x / factor if increasing else x * factor

    lowest = max(math.ldexp(guess, -span), math.ulp(0.0))
    up = span + math.frexp(guess)[1]  # ldexp(guess, span) overflows from an exponent 1024 on
    highest = min(limit, math.ldexp(guess, span) if up < sys.float_info.max_exp else sys.float_info.max)
    blind = clamped = 0
    brackets: list[tuple[float, Bound]] = []
    points: list[tuple[float, float]] = []
    x = guess
    shrink_failures = 0
    for _ in range(budget):
        if integer:
            x = float(max(1, round(x)))
        x = min(x, limit)
        result = evaluate(x)
        v = _as_value(result, side, target)
        if isinstance(result, Bound):
            _check_direction(brackets, x, result, increasing, name)
        points.append((x, v))
        old = _log_width(fail, passing)
        if v <= target:
            passing = x if passing is None else (max(passing, x) if increasing else min(passing, x))
        else:
            fail = x if fail is None else (min(fail, x) if increasing else max(fail, x))
        if fail is not None and passing is not None:
            if _log_width(fail, passing) <= math.log1p(rtol) or _adjacent(fail, passing, integer):
                return fail, passing
            shrink_failures = shrink_failures + 1 if _log_width(fail, passing) > 0.5 * old else 0
        # The ends of the search range.
        if increasing:
            if v <= target and x >= limit:
                return fail, passing
            if passing is None and x <= (1.0 if integer else lowest):
                return fail, None
            if fail is None and x >= highest:
                return None, passing
        else:
            if passing is None and x >= highest:
                return fail, None
            if fail is None and x <= lowest:
                return None, passing
        # Predict the root from the local log-log slope.
        slope = log_slope(points) or slope_hint
        sign = 1.0 if increasing else -1.0
        if slope is None or slope * sign <= 0 or not 0.0 < v < math.inf or not target > 0.0:
            predicted = None
        else:  # the shift is clipped only to keep exp finite (one-sided steps are clipped to 4× anyway)
            shift = (math.log(target) - math.log(v)) / slope
            predicted = x * math.exp(max(-_MAX_LOG_SHIFT, min(_MAX_LOG_SHIFT, shift)))
        aim_factor = 1.0 + (rtol / 3.0 if aim is None else aim)
        if predicted is not None and 0.0 < predicted < math.inf:
            nxt = toward_pass(predicted, aim_factor) if v > target else toward_pass(predicted, 1.0 / aim_factor)
        else:
            nxt = toward_pass(x, 2.0) if v > target else toward_pass(x, 0.5)
        if fail is not None and passing is not None:
            lo, hi = min(fail, passing), max(fail, passing)
            if shrink_failures >= 2 or not lo < nxt < hi:
                nxt = math.sqrt(lo) * math.sqrt(hi)
                shrink_failures = 0
        elif predicted is None:  # one-sided and blind: an accelerating step
            factor = 2.0 ** (2 ** min(blind, _MAX_BLIND_LEVEL))
            blind += 1
            nxt = min(max(toward_pass(x, factor) if v > target else toward_pass(x, 1.0 / factor), lowest), highest)
        else:  # one-sided: move at most a factor 4 per step (16, 256, ... after steps held at it), at least 1 + rtol/3
            blind = 0
            cap = 4.0 ** (2 ** min(clamped, _MAX_BLIND_LEVEL))
            ratio = min(max(nxt / x, 1.0 / cap), cap)
            clamped = clamped + 1 if ratio in (cap, 1.0 / cap) else 0
            if abs(math.log(ratio)) < math.log1p(rtol / 3.0):
                step = 1.0 + rtol / 3.0
                ratio = toward_pass(1.0, step) if v > target else toward_pass(1.0, 1.0 / step)
            nxt = min(max(x * ratio, lowest), highest)
        if integer:
            nxt = float(round(nxt))
            if fail is not None and passing is not None:
                lo_i, hi_i = min(fail, passing), max(fail, passing)
                if not lo_i < nxt < hi_i:
                    nxt = float((int(lo_i) + int(hi_i)) // 2)
            elif nxt == x:
                nxt = max(x + (1.0 if (v <= target) == increasing else -1.0), 1.0)
        x = nxt
    raise SearchBudgetExceeded(
        f"{name}: the search did not pin the root of its certified value = {target:.6g} within {budget} "
        f"evaluations (bracket {_show(fail)} .. {_show(passing)})"
    )


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


__all__ = [
    "DEFAULT_EVALUATION_BUDGET",
    "Evaluation",
    "NotMonotoneError",
    "SearchBudgetExceeded",
    "log_slope",
    "solve",
]

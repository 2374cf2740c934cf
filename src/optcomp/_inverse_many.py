"""Bisections whose verdict takes many points at once (the batched side of :mod:`optcomp._inverse`).

:func:`optcomp._inverse.float_boundary` bisects one point per evaluation. When the verdict is read from an
array function (a composed grid's δ(ε) at many ε costs about what one ε costs), :func:`batched_bisection`
evaluates the whole next ``levels`` levels of the *same* bisection tree in one call and then walks that
tree with the verdicts it got. The walk visits exactly the midpoints the one-point bisection visits, with
the same stop rule, so the result is bit for bit the one-point bisection's — whatever the verdict, monotone
or not, as long as the verdict at a point does not depend on which other points share its call. It imports
only :mod:`_numerics`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt

from optcomp._inverse import (
    Evaluation,
    NotMonotoneError,
    SearchBracket,
    SearchBudgetExceeded,
    float_boundary,
    solve,
)
from optcomp._numerics import Bound, FloatArray

#: Evaluations :func:`lowest_passing` gives the secant inside its cell before bisecting instead.
_CELL_BUDGET = 12

#: Bisection levels evaluated per call by default (2^levels − 1 points).
DEFAULT_LEVELS = 5


def _midpoint(lo: float, hi: float, xtol: float) -> float | None:
    """The next point of :func:`optcomp._inverse.float_boundary`'s bisection of [lo, hi] (its midpoint
    rule and its stop rule), or None where that bisection stops."""
    if hi - lo <= xtol * max(1.0, abs(hi)):
        return None
    mid = 0.5 * (lo + hi)
    if not lo < mid < hi:
        mid = lo + 0.5 * (hi - lo)  # (lo + hi) overflowed, or the ends are adjacent
    return mid if lo < mid < hi else None


def _subtree(lo: float, hi: float, levels: int, xtol: float) -> list[float]:
    """Every midpoint the bisection of [lo, hi] can visit in its next ``levels`` steps."""
    out: list[float] = []
    stack = [(lo, hi, levels)]
    while stack:
        a, b, depth = stack.pop()
        mid = _midpoint(a, b, xtol)
        if mid is None or depth == 0:
            continue
        out.append(mid)
        stack.extend(((a, mid, depth - 1), (mid, b, depth - 1)))
    return out


def first_passing(passes: Callable[[float], bool], points: Sequence[float]) -> int | None:
    """The index of the first of ``points`` (in order, evaluated one at a time, none after it) where
    ``passes`` is true; None if none is. A scan along points the caller places (a downward or outward
    search whose points are part of its answer), so that the caller holds no search loop."""
    for i, x in enumerate(points):
        if passes(x):
            return i
    return None


def batched_bisection(
    passes: Callable[[FloatArray], npt.NDArray[np.bool_]],
    fail: float,
    passing: float,
    *,
    xtol: float = 0.0,
    steps: int | None = None,
    levels: int = DEFAULT_LEVELS,
) -> tuple[float, float]:
    """:func:`optcomp._inverse.float_boundary`'s bisection phase from both ends, ``levels`` levels a call.

    Bisects [fail, passing] (either order: the passing side is the ``passing`` end's side) with midpoints
    (lo + hi)/2 until the ends are adjacent floats, or ``hi − lo ≤ xtol·max(1, |hi|)``, or after ``steps``
    bisections. ``passes(x)[i]`` is the verdict at ``x[i]``; it is called with the up to 2^levels − 1
    midpoints the next ``levels`` steps can visit, and the walk then takes the branch each verdict picks.

    **Same answer**: the walk's midpoints, verdicts and stop are those of the one-point bisection (each
    node's midpoint depends only on its ends), so the result is bit for bit the one-point result for any
    verdict whose value at a point does not depend on the other points of the call. **Safe side**, as for
    :func:`optcomp._inverse.float_boundary`: ``passing`` is only ever the given ``passing`` or a point
    where the verdict was true, ``fail`` the given ``fail`` or one where it was false.

    Returns:
        ``(fail, passing)``.
    """
    if levels < 1:
        raise ValueError(f"levels must be ≥ 1, got {levels}")
    left = -1 if steps is None else steps
    while left != 0:
        lo, hi = min(fail, passing), max(fail, passing)
        mids = _subtree(lo, hi, levels if left < 0 else min(levels, left), xtol)
        if not mids:
            return fail, passing
        verdicts = dict(zip(mids, passes(np.array(mids, dtype=np.float64)).tolist(), strict=True))
        for _ in range(levels):
            mid = _midpoint(min(fail, passing), max(fail, passing), xtol)
            if mid is None or left == 0:
                return fail, passing
            passing, fail = (mid, fail) if verdicts[mid] else (passing, mid)
            left -= 1
    return fail, passing


def _zoom_points(lo: float, hi: float, guess: float, points: int) -> FloatArray:
    """The points of one :func:`zoomed_bisection` call inside (lo, hi): an even grid of ``points`` + 1
    intervals (the bracket shrinks at least that much), and ``guess`` ± (hi − lo)·4⁻ʲ, j = 1…``points``."""
    width = hi - lo
    even = lo + width * (np.arange(1, points + 1, dtype=np.float64) / (points + 1))
    offsets = width * np.float64(4.0) ** -np.arange(1, points + 1, dtype=np.float64)
    near = np.concatenate(([guess], guess - offsets, guess + offsets))
    pts = np.unique(np.concatenate((even, near)))
    return np.asarray(pts[(pts > lo) & (pts < hi)], dtype=np.float64)


def zoomed_bisection(
    values: Callable[[FloatArray], FloatArray],
    threshold: float,
    fail: float,
    passing: float,
    *,
    xtol: float,
    points: int = 15,
    rounds: int = 64,
) -> tuple[float, float]:
    """The boundary between ``fail`` < ``passing`` of the verdict ``values(x) ≤ threshold``, to
    ``hi − lo ≤ xtol·max(1, |hi|)`` as :func:`batched_bisection`, with fewer calls when ``values`` is
    smooth: each call reads an even grid of the bracket and points clustered (4⁻ʲ of the bracket) around
    the root that log-linear interpolation of the values at the bracket's ends predicts.

    **Safe side**, as for :func:`batched_bisection`: the returned ``passing`` is the given one or a point
    where the verdict was true (the least such point read), ``fail`` the given one or a point below it
    where it was false; nothing else is assumed of ``values`` (elementwise: a point's value does not depend
    on the other points of the call). At most ``rounds`` calls; the bracket shrinks at least
    ``points`` + 1-fold per call.

    Returns:
        ``(fail, passing)``.
    """
    if not fail < passing:
        raise ValueError(f"fail must be below passing, got {fail!r} and {passing!r}")
    lo, hi = fail, passing
    v_lo = v_hi = np.nan
    for _ in range(rounds):
        if hi - lo <= xtol * max(1.0, abs(hi)):
            break
        guess = 0.5 * (lo + hi)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = (np.log(v_lo) - np.log(threshold)) / (np.log(v_lo) - np.log(v_hi))
        if np.isfinite(t) and 0.0 < t < 1.0:
            guess = lo + float(t) * (hi - lo)
        pts = _zoom_points(lo, hi, guess, points)
        if pts.size == 0:
            break
        vals = np.asarray(values(pts), dtype=np.float64)
        ok = vals <= threshold
        if np.any(ok):
            k = int(np.argmax(ok))  # the least passing point read
            hi, v_hi = float(pts[k]), float(vals[k])
            pts, vals = pts[:k], vals[:k]
        below = np.flatnonzero(~(vals <= threshold))
        if below.size:
            lo, v_lo = float(pts[below[-1]]), float(vals[below[-1]])
    return lo, hi


__all__ = ["DEFAULT_LEVELS", "batched_bisection", "first_passing", "zoomed_bisection"]


# -- the least passing point of a value that need not be monotone: a scan, then one cell refined ---------


def lowest_passing(
    evaluate: Callable[[float], Evaluation],
    target: float,
    *,
    name: str,
    passing: float,
    lowest: float,
    ratio: float,
    rtol: float,
    cleared: Callable[[float], float] | None = None,
    known_fail: float | None = None,
    side: Literal["upper", "lower"] = "upper",
) -> SearchBracket:
    """The least passing point, on a scan's resolution, of a certified value v(x) *not* assumed monotone.

    :func:`optcomp._inverse.solve` finds *a* boundary of {x : v(x) ≤ target}; where v is bumpy (a discrete
    Gaussian's ε in σ: its loss lattice moves with σ) a passing x may lie below the one it returns. This scans upward from
    ``lowest``: at each point x, ``cleared(x)`` (optional) returns a y ≥ x such that every point of [x, y]
    certainly fails (true value > target, so no certified upper end there passes); the scan then moves on to
    max(y, x·``ratio``), evaluating v only at points no cleared span covers, and stops at the first that
    passes; ``passing`` (known to pass, not re-evaluated) ends the scan. The cell between the last failing
    point and the first passing one is then bisected (:func:`optcomp._inverse.float_boundary`) to a width ``rtol``·hi;
    ``known_fail`` (a point known to fail below ``passing``, e.g. the :func:`optcomp._inverse.solve` bracket's other end) is
    that cell's failing end when the scan reaches ``passing``, so a bracket already pinned costs nothing.

    **Safe side**: ``passing`` is returned only as given or as an x evaluated with v(x) ≤ ``target``, ``fail``
    only as an x evaluated failing or a point certified failing (as in :func:`optcomp._inverse.solve`). **Least**: every
    scanned point below the returned bracket fails and every cleared span provably holds no passing x; a
    passing range narrower than a factor ``ratio`` between two scanned points may be missed (the scan's
    resolution).

    Returns:
        :class:`SearchBracket` ``(fail, passing)``; ``fail`` is ``None`` when ``lowest`` itself passes
        (nothing was searched below it).
    """
    if not (0.0 < lowest and ratio > 1.0 and passing > 0.0):
        raise ValueError(f"{name}: the scan needs 0 < lowest, ratio > 1 and passing > 0, got {lowest!r}, "
                         f"{ratio!r}, {passing!r}")

    def passes(x: float) -> bool:  # as solve reads an evaluation: None, NaN and False fail
        r = evaluate(x)
        if r is None or isinstance(r, bool):
            return bool(r)
        return (float(getattr(r, side)) if isinstance(r, Bound) else float(r)) <= target

    fail: float | None = None
    x = lowest
    while x < passing:
        end = x if cleared is None else cleared(x)
        if end > x or not passes(x):
            if end < passing:
                fail = end
            x = max(end, x * ratio)
            continue
        if fail is None:
            return SearchBracket(None, x)
        passing = x
        break
    else:
        if known_fail is not None and (fail is None or fail < known_fail) and known_fail < passing:
            fail = known_fail
    if fail is None or fail >= passing:
        return SearchBracket(fail if fail is not None and fail < passing else None, passing)
    if passing / fail <= 1.0 + rtol:
        return SearchBracket(fail, passing)
    try:  # the secant inside the cell (its safe side holds whatever the shape), else plain bisection
        found = solve(evaluate, target, name=name, guess=math.sqrt(fail * passing), rtol=rtol, side=side,
                      fail=fail, passing=passing, lowest=fail, limit=passing, budget=_CELL_BUDGET)
        if found.fail is not None and found.passing is not None:
            return found
    except (NotMonotoneError, SearchBudgetExceeded):
        pass
    return float_boundary(passes, name=name, passing_above=True, fail=fail, passing=passing,
                          xtol=rtol * min(1.0, passing))

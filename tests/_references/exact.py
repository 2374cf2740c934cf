"""Exact comparisons of floats with high-precision truths: the float's exact binary value (or a value
computed from it at ``MPMATH_DPS`` digits) set against an mpmath truth, with no rounding on the test's side."""

from __future__ import annotations

import math
from collections.abc import Iterable

import mpmath

from tests.tolerances import MPMATH_DPS


def reciprocal(x: float) -> mpmath.mpf:
    """1/x at ``MPMATH_DPS`` digits (x's exact binary value inverted)."""
    with mpmath.workdps(MPMATH_DPS):
        return 1 / mpmath.mpf(x)


def brackets(bound: Iterable[float], truth: mpmath.mpf | float) -> bool:
    """lower ≤ truth ≤ upper, with both ends at their exact binary values (no rounding of the truth)."""
    lo, hi = bound
    return mpmath.mpf(lo) <= truth <= mpmath.mpf(hi)


def at_least_within(got: float, truth: mpmath.mpf, rtol: float, floor: float = 0.0) -> bool:
    """truth ≤ got ≤ max(truth·(1 + rtol), floor), exactly: an upper end on the safe side, within a stated
    relative excess (or below ``floor``, e.g. the least subnormal where the truth underflows)."""
    g = mpmath.mpf(got)
    return truth <= g <= max(truth * (1 + mpmath.mpf(rtol)), mpmath.mpf(floor))


def excess(got: float, truth: mpmath.mpf) -> float:
    """got − truth, computed at ``MPMATH_DPS`` digits from got's exact value, as a float."""
    with mpmath.workdps(MPMATH_DPS):
        return float(mpmath.mpf(got) - truth)


def upper_within_ulps(got: float, truth: mpmath.mpf, rel: float) -> bool:
    """truth ≤ got ≤ truth·(1 + rel) + the least subnormal, exactly: a closed form rounded to its safe side
    and within ``rel`` (a few tens of ulps) of the truth."""
    g = mpmath.mpf(got)
    return g >= truth and g <= truth * (1 + mpmath.mpf(rel)) + mpmath.mpf(math.ulp(0.0))


def lower_within_ulps(got: float, truth: mpmath.mpf, rel: float) -> bool:
    """got ≤ truth ≤ got·(1 + rel), exactly: a closed form rounded down, within ``rel`` of the truth."""
    g = mpmath.mpf(got)
    return g <= truth <= g * (1 + mpmath.mpf(rel))


def abs_error_at_most(got: float, truth: mpmath.mpf, atol: float, rel: float) -> bool:
    """|got − truth| ≤ atol + rel·(1 + |truth|), evaluated exactly (at ``MPMATH_DPS`` digits)."""
    with mpmath.workdps(MPMATH_DPS):
        return bool(abs(mpmath.mpf(got) - truth) <= atol + rel * (1 + abs(truth)))


def decimal(text: str) -> mpmath.mpf:
    """The decimal ``text`` as an mpf at the ambient precision (a quoted number, not its nearest double)."""
    return mpmath.mpf(text)

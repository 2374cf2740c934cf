"""``_inverse_many.batched_bisection`` is bit for bit ``_inverse.float_boundary``'s bisection (any verdict); ``zoomed_bisection`` keeps the safe side."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optcomp._inverse import float_boundary
from optcomp._inverse_many import batched_bisection, first_passing, zoomed_bisection
from optcomp._numerics import EPSILON_XTOL


def _verdict(seed: int, monotone: bool, root: float):  # type: ignore[no-untyped-def]
    def one(x: float) -> bool:
        if monotone:
            return x >= root
        return bool(math.sin(x * 1e3 + seed) > -0.3)  # not monotone: still the same walk

    return one


@settings(max_examples=60, deadline=None)
@given(
    hi=st.floats(1e-300, 1e300),
    frac=st.floats(0.0, 1.0),
    seed=st.integers(0, 100),
    monotone=st.booleans(),
    xtol=st.sampled_from([0.0, EPSILON_XTOL, 1e-3]),
    levels=st.integers(1, 6),
)
def test_same_answer_as_one_point_bisection(
    hi: float, frac: float, seed: int, monotone: bool, xtol: float, levels: int
) -> None:
    one = _verdict(seed, monotone, frac * hi)
    calls: list[int] = []

    def many(x: np.ndarray) -> np.ndarray:
        calls.append(x.size)
        return np.array([one(float(v)) for v in x])

    old = float_boundary(one, name="x", passing_above=True, fail=0.0, passing=hi, xtol=xtol)
    new = batched_bisection(many, 0.0, hi, xtol=xtol, levels=levels)
    assert new == (old.fail, old.passing)
    assert all(size <= 2**levels - 1 for size in calls)


@pytest.mark.parametrize("steps", [0, 1, 3, 8])
def test_step_count_matches_plain_bisection(steps: int) -> None:
    lo, hi = 0.0, 7.0
    for _ in range(steps):  # the plain loop this replaces
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if mid >= math.pi else (mid, hi)
    fail, passing = batched_bisection(lambda x: x >= math.pi, 0.0, 7.0, steps=steps, levels=4)
    assert (fail, passing) == (lo, hi)


def test_levels_must_be_positive() -> None:
    with pytest.raises(ValueError, match="levels"):
        batched_bisection(lambda x: x > 1.0, 0.0, 2.0, levels=0)


def test_first_passing_stops_at_the_first_and_evaluates_none_after() -> None:
    seen: list[float] = []

    def passes(x: float) -> bool:
        seen.append(x)
        return x > 2.5

    assert first_passing(passes, [1.0, 2.0, 3.0, 4.0]) == 2
    assert seen == [1.0, 2.0, 3.0]
    assert first_passing(passes, [0.0, 1.0]) is None


@settings(max_examples=60, deadline=None)
@given(
    scale=st.floats(1e-3, 1e3),
    rate=st.floats(0.1, 1e4),
    log_threshold=st.floats(-700.0, -1.0),
    seed=st.integers(0, 100),
    monotone=st.booleans(),
)
def test_zoomed_bisection_keeps_the_safe_side_and_meets_xtol(
    scale: float, rate: float, log_threshold: float, seed: int, monotone: bool
) -> None:
    """``zoomed_bisection`` (the ε(δ) upper end's search): the returned ``passing`` was read with a value
    ≤ the threshold (or is the given end), ``fail`` with a value above it; on a monotone δ-like curve
    e^{−rate·x} the two are within ``xtol`` of each other and bracket the exact root."""
    threshold = math.exp(log_threshold)
    read: dict[float, float] = {}

    def values(x: np.ndarray) -> np.ndarray:
        v = np.exp(-rate * x)
        if not monotone:
            v = np.where(np.sin(x * 1e3 + seed) > 0.6, 0.0, v)  # spurious passing points
        read.update(zip(x.tolist(), v.tolist(), strict=True))
        return np.asarray(v, dtype=np.float64)

    hi = scale * (1.0 - log_threshold / rate)  # values(hi) ≤ threshold in the monotone case
    assume_ok = math.exp(-rate * hi) <= threshold
    fail, passing = zoomed_bisection(values, threshold, 0.0, hi, xtol=EPSILON_XTOL)
    assert fail < passing
    assert passing == hi or read[passing] <= threshold
    assert fail == 0.0 or read[fail] > threshold
    if monotone and assume_ok:
        root = -log_threshold / rate
        assert passing - fail <= EPSILON_XTOL * max(1.0, passing)
        assert fail <= root * (1 + 1e-12) and passing >= root * (1 - 1e-12)


def test_zoomed_bisection_takes_few_calls_on_a_smooth_curve() -> None:
    calls: list[int] = []

    def values(x: np.ndarray) -> np.ndarray:
        calls.append(x.size)
        return np.asarray(np.exp(-3.0 * x - x**2), dtype=np.float64)

    fail, passing = zoomed_bisection(values, 1e-5, 0.0, 50.0, xtol=EPSILON_XTOL)
    assert passing - fail <= EPSILON_XTOL * max(1.0, passing)
    assert len(calls) <= 6  # a plain 31-point batched bisection takes 9 here


def test_zoomed_bisection_wants_an_ordered_bracket() -> None:
    with pytest.raises(ValueError, match="fail must be below passing"):
        zoomed_bisection(lambda x: x, 0.5, 1.0, 0.0, xtol=0.0)

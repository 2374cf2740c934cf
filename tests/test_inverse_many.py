"""``_inverse_many.batched_bisection`` is bit for bit ``_inverse.float_boundary``'s bisection (any verdict)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optcomp._inverse import float_boundary
from optcomp._inverse_many import batched_bisection, first_passing
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

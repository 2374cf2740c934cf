from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from optcomp import Bound
from optcomp._numerics import (
    check_int,
    check_nonnegative,
    check_probability,
    check_sampling_rate,
    log1mexp,
    log1mexp_array,
    logsubexp,
    round_down,
    round_up,
)
from tests.tolerances import MPMATH_DPS


def test_bound_orders_and_unpacks() -> None:
    b = Bound(1.0, 2.0)
    lo, hi = b
    assert (lo, hi) == (1.0, 2.0) and b.width == 1.0 and b.contains(1.5)
    with pytest.raises(ValueError, match="lower <= upper"):
        Bound(2.0, 1.0)
    with pytest.raises(ValueError, match="NaN"):
        Bound(float("nan"), 1.0)


@pytest.mark.parametrize(
    ("check", "value", "name"),
    [
        (check_nonnegative, -1.0, "epsilon"),
        (check_nonnegative, float("nan"), "epsilon"),
        (check_probability, 1.5, "delta"),
        (check_probability, -0.1, "delta"),
        (check_sampling_rate, 0.0, "sampling_rate"),
        (check_sampling_rate, 1.01, "sampling_rate"),
    ],
)
def test_validators_name_parameter(check, value, name) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=name):
        check(name, value)


@pytest.mark.parametrize("value", [0, -3, 2.0, True, "3", np.float64(2.0)])
def test_check_int_rejects(value: object) -> None:
    with pytest.raises(ValueError, match="k must be an integer"):
        check_int("k", value)


def test_check_int_accepts_numpy() -> None:
    assert check_int("k", np.int64(5)) == 5


@given(st.floats(min_value=-700, max_value=-1e-300))
def test_log1mexp_matches_mpmath(x: float) -> None:
    mpmath.mp.dps = MPMATH_DPS
    xm = mpmath.mpf(x)
    ref = float(mpmath.log1p(-mpmath.exp(xm)) if x < -0.5 else mpmath.log(-mpmath.expm1(xm)))
    assert math.isclose(log1mexp(x), ref, rel_tol=1e-14, abs_tol=1e-300)


def test_logsubexp() -> None:
    assert math.isclose(logsubexp(math.log(3), math.log(1)), math.log(2), rel_tol=1e-15)
    assert logsubexp(1.0, 1.0) == -math.inf


@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300))
def test_round_up_down_bracket(x: float) -> None:
    assert round_down(x) <= x <= round_up(x)


@given(st.lists(st.floats(min_value=-700, max_value=0.0), min_size=1, max_size=20))
def test_log1mexp_array_matches_scalar(xs: list[float]) -> None:
    got = log1mexp_array(np.array(xs))
    for x, g in zip(xs, got):
        assert g == log1mexp(x) or math.isclose(g, log1mexp(x), rel_tol=1e-15)

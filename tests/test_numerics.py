from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from optcomp import Bound
from optcomp._numerics import (
    EPSILON_WIDTH_FLOOR,
    UNIT_ROUNDOFF,
    check_int,
    check_nonnegative,
    check_probability,
    check_sampling_rate,
    round_down,
    round_up,
)
from optcomp._rounding import (
    dot_error_bound,
    log1mexp,
    log1mexp_array,
    log_sum_exp,
    log_sum_exp_down,
    log_sum_exp_up,
    logsubexp,
    suffix_log_sum_exp,
    suffix_log_sum_exp_error,
    sum_error_bound,
    widen_down,
    widen_up,
)
from tests._references import abs_error_at_most, brackets, log1mexp_exact, log_sum_exp_exact


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
    ref = log1mexp_exact(x)
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


# --- the rounding vocabulary, checked against exact rational / 50-digit arithmetic --------------------

_POSITIVE = st.floats(min_value=2.0**-500, max_value=2.0**500)


@given(st.lists(_POSITIVE, min_size=2, max_size=40), st.booleans())
def test_widen_encloses_a_chain_of_roundings(xs: list[float], product: bool) -> None:
    """m = len(xs) − 1 roundings (a product or a left-to-right sum of positives): widen by m + 2 / m + 1 units."""
    computed, exact = xs[0], Fraction(xs[0])
    for x in xs[1:]:
        computed, exact = (computed * x, exact * Fraction(x)) if product else (computed + x, exact + Fraction(x))
    if not (math.isfinite(computed) and computed > 2.0**-1000):
        return  # overflow/underflow: outside the relative rounding model
    m = len(xs) - 1
    assert Fraction(widen_down(computed, m + 1)) <= exact <= Fraction(widen_up(computed, m + 2))


@given(st.floats(min_value=0.0, max_value=1e300), st.integers(min_value=1, max_value=2**20))
def test_widen_moves_outwards_by_the_stated_units(x: float, units: int) -> None:
    up, down = Fraction(widen_up(x, units)), Fraction(widen_down(x, units))
    assert down <= Fraction(x) <= up
    if x > 2.0**-1000:  # relative model: the factor is honoured up to one rounding of the product
        slack = Fraction(units - 1) * Fraction(UNIT_ROUNDOFF)
        assert up >= Fraction(x) * (1 + slack) / (1 + Fraction(UNIT_ROUNDOFF))
        assert up <= Fraction(x) * (1 + Fraction(units + 2) * Fraction(UNIT_ROUNDOFF))


@given(st.lists(st.floats(min_value=-1e200, max_value=1e200), min_size=0, max_size=60))
def test_sum_error_bound_covers_any_summation_order(xs: list[float]) -> None:
    exact = sum((Fraction(x) for x in xs), Fraction(0))
    arr = np.array(xs, dtype=np.float64)
    bound = Fraction(sum_error_bound(len(xs), float(np.sum(np.abs(arr)))))
    left_to_right = 0.0
    for x in xs:
        left_to_right += x
    for computed in (left_to_right, float(np.sum(arr)), float(np.sum(arr[::-1]))):
        assert abs(Fraction(computed) - exact) <= bound


def test_sum_error_bound_is_higham() -> None:
    n, s = 1000, 3.0
    g = (n - 1) * UNIT_ROUNDOFF / (1 - (n - 1) * UNIT_ROUNDOFF)
    assert g * s <= sum_error_bound(n, s) <= g * s * (1 + 2 * g + 16 * UNIT_ROUNDOFF)
    assert sum_error_bound(1, 5.0) == 0.0 and sum_error_bound(0, 0.0) == 0.0


_LOG_TERMS = st.lists(
    st.one_of(st.floats(min_value=-800.0, max_value=800.0), st.just(-math.inf)), min_size=1, max_size=50
)


@given(_LOG_TERMS)
def test_log_sum_exp_up_and_down_enclose_the_exact_value(xs: list[float]) -> None:
    if all(x == -math.inf for x in xs):
        assert log_sum_exp_up(xs) == log_sum_exp_down(xs) == -math.inf
        return
    exact = log_sum_exp_exact(xs)
    assert brackets((log_sum_exp_down(xs), log_sum_exp_up(xs)), exact)
    assert log_sum_exp_down(xs) <= log_sum_exp(xs) <= log_sum_exp_up(xs)


def test_log_sum_exp_edges() -> None:
    assert log_sum_exp([]) == -math.inf and log_sum_exp([math.inf, 0.0]) == math.inf
    assert log_sum_exp([0.0, 0.0]) == math.log(2.0)


@given(st.lists(st.floats(min_value=-700.0, max_value=0.0), min_size=1, max_size=30))
def test_suffix_log_sum_exp_within_its_error(xs: list[float]) -> None:
    """Log weights (≤ 0), as the optimal engine's envelopes use it."""
    out = suffix_log_sum_exp(np.array(xs))
    assert out[-1] == -math.inf and out.size == len(xs) + 1
    tol = suffix_log_sum_exp_error(len(xs))
    for j in range(len(xs)):
        exact = log_sum_exp_exact(xs[j:])
        assert abs_error_at_most(out[j], exact, tol, 8 * UNIT_ROUNDOFF)


def test_relative_width_has_one_definition() -> None:
    b = Bound(1.0, 2.0)
    assert b.relative_width == b.relative_width_above(0.0) == 0.5
    assert Bound(0.0, 0.001).relative_width_above(EPSILON_WIDTH_FLOOR) == 0.001 / EPSILON_WIDTH_FLOOR
    assert Bound(0.0, 0.0).relative_width == 0.0 and Bound(3.0, 3.0).relative_width_above(1.0) == 0.0
    assert Bound(1.0, math.inf).relative_width_above(EPSILON_WIDTH_FLOOR) == math.inf
    assert Bound(-1.0, 0.0).relative_width == math.inf


@given(
    st.lists(
        st.tuples(st.floats(min_value=-1e100, max_value=1e100), st.floats(min_value=-1e100, max_value=1e100)),
        max_size=40,
    )
)
def test_dot_error_bound_covers_products_and_their_sum(pairs: list[tuple[float, float]]) -> None:
    exact = sum((Fraction(a) * Fraction(b) for a, b in pairs), Fraction(0))
    products = np.array([a * b for a, b in pairs], dtype=np.float64)
    tiny = any(a != 0 and b != 0 and abs(Fraction(a) * Fraction(b)) < Fraction(2) ** -1000 for a, b in pairs)
    if tiny or not np.all(np.isfinite(products)):
        return  # overflow or underflowing products: outside the relative rounding model
    bound = Fraction(dot_error_bound(len(pairs), float(np.sum(np.abs(products)))))
    assert abs(Fraction(float(np.sum(products))) - exact) <= bound


def test_rounding_vocabulary_builds_only_on_numerics() -> None:
    """The two numeric floors (docs/architecture.md): _numerics imports nothing of ours, _rounding only it."""
    import ast
    from pathlib import Path

    src = Path(__file__).resolve().parents[1] / "src" / "optcomp"

    def ours(name: str) -> set[str]:
        tree = ast.parse((src / name).read_text(encoding="utf-8"))
        modules = {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        return {m for m in modules if m.startswith("optcomp")}

    assert ours("_numerics.py") == set()
    assert ours("_rounding.py") == {"optcomp._numerics"}

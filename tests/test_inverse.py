"""The one inverse solver (`optcomp._inverse.solve`): safe side, counted budget, blind steps, direction check."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optcomp import Bound, optimal
from optcomp._inverse import NotMonotoneError, SearchBudgetExceeded, solve
from optcomp._numerics import CALIBRATION_RTOL, EPSILON_XTOL
from optcomp.fdp import gdp_delta, gdp_mu_for

RTOL = 1e-3


@settings(max_examples=200, deadline=None)
@given(
    root=st.floats(1e-200, 1e200),
    power=st.floats(0.2, 5.0),
    wobble=st.floats(0.0, 0.5),
    guess=st.floats(1e-100, 1e100),
    increasing=st.booleans(),
)
def test_returns_an_evaluated_passing_point_within_rtol(
    root: float, power: float, wobble: float, guess: float, increasing: bool
) -> None:
    """Whatever the curve, the returned ``passing`` was evaluated and passed; with a monotone curve the
    bracket [fail, passing] holds the root within 1 + rtol."""
    seen: dict[float, float] = {}

    def value(x: float) -> float:  # monotone: (x/root)^±power, with a multiplicative wobble ≤ 1 + wobble
        r = math.log(x / root) * (power if increasing else -power)
        v = math.exp(max(-700.0, min(700.0, r))) * (1.0 + wobble * (0.5 + 0.5 * math.tanh(r)))
        seen[x] = v
        return v

    fail, passing = solve(value, 1.0 + wobble, name="x", guess=guess, rtol=RTOL, increasing=increasing,
                          span=2000)
    assert passing is not None and fail is not None
    assert passing in seen and seen[passing] <= 1.0 + wobble
    assert fail in seen and seen[fail] > 1.0 + wobble
    assert max(fail, passing) / min(fail, passing) <= 1.0 + RTOL or math.nextafter(min(fail, passing), math.inf) >= max(
        fail, passing)


def test_cached_evaluations_spend_the_budget() -> None:
    """A verdict that flips between adjacent floats is pinned (adjacent floats end the search); one that no
    bracket can pin (a lying, non-monotone evaluator) ends with SearchBudgetExceeded, not a loop."""
    calls = 0

    def flip(x: float) -> bool:
        nonlocal calls
        calls += 1
        return x <= 1e-320  # a root among subnormals: float64 cannot resolve rtol there

    fail, passing = solve(flip, 0.5, name="scale", guess=1e-300, rtol=RTOL, increasing=True, span=2000)
    assert passing is not None and passing <= 1e-320 < (fail or math.inf)

    memo: dict[float, float] = {}
    calls = 0

    def cached(x: float) -> float:  # a caller's cache: a repeated x costs nothing here, yet counts there
        nonlocal calls
        calls += 1
        return memo.setdefault(x, 1.0 / x)

    with pytest.raises(SearchBudgetExceeded, match="scale"):
        solve(cached, 1.0, name="scale", guess=1e-9, rtol=1e-15, budget=5)
    assert calls == 5


def test_blind_steps_cross_many_decades() -> None:
    """A value of 0 until 1e-8 (a δ-dominated plan): reached from 1e-300 within 80 evaluations."""
    calls = 0

    def value(x: float) -> float:
        nonlocal calls
        calls += 1
        return 0.0 if x < 1e-8 else 1.0

    fail, passing = solve(value, 1e-300, name="scale", guess=1e-300, rtol=RTOL, increasing=True, span=2100,
                          budget=80)
    assert passing is not None and fail is not None and passing < 1e-8 <= fail <= passing * (1 + RTOL)
    assert calls <= 80


def test_wrong_direction_is_named() -> None:
    with pytest.raises(NotMonotoneError, match="sigma"):
        solve(lambda x: Bound(x, x), 1.0, name="sigma", guess=3.0, rtol=RTOL)  # grows: not a noise scale


# --- the engines' inverses that use the solver ---------------------------------------------------


@pytest.mark.parametrize("epsilon", [0.0, 0.5, 2.0, 50.0])
@pytest.mark.parametrize("delta", [1e-300, 1e-6, 0.5, 0.999999])
def test_gdp_mu_for_meets_gdp_delta_and_is_tight(epsilon: float, delta: float) -> None:
    """μ from the solver is certified by the public δ (gdp_delta, also at δ → 1) and a failing μ is near."""
    mu = gdp_mu_for(epsilon, delta)
    assert mu > 0.0 or epsilon == 0.0
    assert gdp_delta(mu, epsilon) <= delta
    if mu > 0.0:
        assert gdp_delta(mu * (1.0 + 4.0 * EPSILON_XTOL), epsilon) > delta


@pytest.mark.parametrize(("epsilon", "delta"), [(1.0, 1e-5), (0.3, 1e-9), (3.0, 0.1)])
def test_black_box_calibration_brackets_the_single_query_root(epsilon: float, delta: float) -> None:
    """k = 1: ε₀* = ln((e^ε + δ)/(1 − δ)) (one ε₀-DP pair: δ(ε) = (e^ε₀ − e^ε)/(1 + e^ε₀)) lies in the
    bracket the solver leaves, whose lower end is the returned, certified ε₀."""
    c = optimal.calibrate(epsilon, delta, 1)
    truth = math.log((math.exp(epsilon) + delta) / (1.0 - delta))
    assert c.epsilon.upper <= epsilon
    assert c.bracket.lower == c.epsilon0 <= truth <= c.bracket.upper
    assert c.bracket.upper <= c.epsilon0 * (1.0 + 2.0 * CALIBRATION_RTOL)

"""Trade-off values: evaluation, inverse, symmetrization, envelopes, conversions, comparisons, readouts."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optcomp.fdp import (
    PiecewiseLinearTradeOff,
    TradeOff,
    advantage,
    alpha_grid,
    attack_tpr,
    delta_at,
    epsilon_delta_composition,
    epsilon_delta_tradeoff,
    from_delta_curve,
    from_distributions,
    from_epsilon_delta_family,
    gaussian_tradeoff,
    gdp_delta,
    subsample,
)
from tests._references import pmf_pair_delta_exact
from tests.tolerances import EXACT_RTOL, FDP_CHORD_DELTA_ATOL, FDP_DELTA_CURVE_WIDTH, METHOD_RTOL

GRID = alpha_grid(401)
eps_st = st.floats(0.0, 5.0)
delta_st = st.floats(0.0, 0.5)


def _pmf(draw_vals: list[float]) -> np.ndarray:
    v = np.asarray(draw_vals, dtype=np.float64)
    return v / v.sum()


pmf_pair = st.integers(2, 6).flatmap(
    lambda n: st.tuples(
        st.lists(st.floats(0.01, 1.0), min_size=n, max_size=n),
        st.lists(st.floats(0.01, 1.0), min_size=n, max_size=n),
    )
)


def _is_tradeoff(f: TradeOff) -> bool:
    y = np.asarray(f(GRID))
    ok_range = np.all((y >= 0) & (y <= 1 - GRID + EXACT_RTOL))
    ok_mono = np.all(np.diff(y) <= EXACT_RTOL)
    return bool(ok_range and ok_mono)


def test_epsilon_delta_tradeoff_closed_form() -> None:
    eps, d = 1.0, 0.1
    f = epsilon_delta_tradeoff(eps, d)
    a = GRID
    truth = np.maximum.reduce([np.zeros_like(a), 1 - d - math.exp(eps) * a, math.exp(-eps) * (1 - d - a)])
    np.testing.assert_allclose(f(a), truth, atol=EXACT_RTOL)
    assert f.symmetric and f.inverse() is f
    assert isinstance(f(0.3), float)


def test_gaussian_tradeoff_values_and_symmetry() -> None:
    g = gaussian_tradeoff(1.0)
    assert g(0.0) == 1.0 and g(1.0) == 0.0
    # G_μ(α) = Φ(Φ⁻¹(1−α) − μ): at α = Φ(−μ/2) the curve crosses the diagonal (symmetric point).
    from scipy.stats import norm

    a = norm.cdf(-0.5)
    assert g(a) == pytest.approx(a, rel=EXACT_RTOL)
    assert gaussian_tradeoff(0.0).dominates(g)
    assert not g.dominates(gaussian_tradeoff(0.5))


@given(pmf_pair)
@settings(max_examples=40, deadline=None)
def test_neyman_pearson_curve_is_a_tradeoff_and_inverse_swaps(pair: tuple[list[float], list[float]]) -> None:
    p, q = _pmf(pair[0]), _pmf(pair[1])
    f = from_distributions(p, q)
    g = from_distributions(q, p)
    assert _is_tradeoff(f)
    # T(Q, P) = T(P, Q)⁻¹, and the generic bisection inverse agrees with the exact one.
    np.testing.assert_allclose(f.inverse()(GRID), g(GRID), atol=METHOD_RTOL)
    from optcomp.fdp._tradeoff import _BisectionInverse

    np.testing.assert_allclose(_BisectionInverse(f)(GRID), g(GRID), atol=METHOD_RTOL)
    s = f.symmetrized()
    assert s.dominates(f, atol=METHOD_RTOL) and s.dominates(g, atol=METHOD_RTOL)
    np.testing.assert_allclose(s.inverse()(GRID), s(GRID), atol=METHOD_RTOL)


def test_delta_read_through_the_inverse_keeps_its_lower_end_below_the_truth() -> None:
    """Found by hypothesis (make test, 2026-12-07): read through the inverse, a knot α = 1 − Σ(prefix of q) had an
    absolute error ~m·u that e^ε multiplied (1.1e-14 at ε = 4) beyond the relative error model: the lower end
    0.017432987166935716 was above the exact 0.0174329871669338. The knots are tail sums now."""
    p = _pmf([1.0] * 6)
    q = _pmf([1.0, 1.0, 0.875, 0.375, 0.39856757108518454, 0.010000000000000002])
    b = delta_at(from_distributions(p, q), 4.0)
    exact = pmf_pair_delta_exact(p.tolist(), q.tolist(), 4.0)
    assert b.lower <= exact <= b.upper


@given(pmf_pair, st.floats(0.0, 4.0))
@settings(max_examples=40, deadline=None)
def test_delta_is_hockey_stick_both_ways(pair: tuple[list[float], list[float]], eps: float) -> None:
    p, q = _pmf(pair[0]), _pmf(pair[1])
    f = from_distributions(p, q)
    truth = max(np.maximum(p - math.exp(eps) * q, 0).sum(), np.maximum(q - math.exp(eps) * p, 0).sum())
    assert f.delta(eps) == pytest.approx(truth, abs=METHOD_RTOL)
    exact = pmf_pair_delta_exact(p.tolist(), q.tolist(), eps)  # the same float pmfs, summed exactly: no slack
    b = delta_at(f, eps)
    assert b.lower <= exact <= b.upper


@given(eps_st, delta_st)
@settings(max_examples=40, deadline=None)
def test_round_trip_f_to_delta_family_to_f(eps: float, delta: float) -> None:
    f = epsilon_delta_tradeoff(eps, delta)
    eps_grid = np.unique(np.concatenate([np.linspace(0, 6, 61), [eps]]))
    back = from_epsilon_delta_family(eps_grid, f.delta(eps_grid))
    np.testing.assert_allclose(back(GRID), f(GRID), atol=METHOD_RTOL)


@given(pmf_pair)
@settings(max_examples=30, deadline=None)
def test_round_trip_symmetric_curve_through_its_slopes(pair: tuple[list[float], list[float]]) -> None:
    f = from_distributions(_pmf(pair[0]), _pmf(pair[1])).symmetrized()
    slopes = -np.diff(f.beta) / np.diff(f.alpha)
    eps_grid = np.unique(np.concatenate([[0.0], np.log(slopes[slopes >= 1.0])]))
    back = from_epsilon_delta_family(eps_grid, f.delta(eps_grid))
    np.testing.assert_allclose(back(GRID), f(GRID), atol=METHOD_RTOL)


def test_gdp_delta_is_the_conjugate_of_g_mu() -> None:
    g = gaussian_tradeoff(1.5)
    pl = g.to_piecewise_linear(alpha_grid(20001))  # chords ≥ G_μ, so conjugate δ ≤ exact δ
    for eps in (0.0, 0.5, 1.0, 3.0):
        approx = pl.delta(eps)
        exact = gdp_delta(1.5, eps)
        assert approx <= exact + EXACT_RTOL
        assert approx == pytest.approx(exact, abs=FDP_CHORD_DELTA_ATOL)


def test_delta_curve_bracket_contains_gaussian() -> None:
    mu = 1.0
    eps = np.linspace(0.0, 8.0, 161)
    d = gdp_delta(mu, eps)
    b = from_delta_curve(eps, d, d)
    lo, hi = b(GRID)
    truth = gaussian_tradeoff(mu)(GRID)
    assert np.all(lo <= truth + EXACT_RTOL) and np.all(truth <= hi)
    assert np.max(np.asarray(hi) - np.asarray(lo)) < FDP_DELTA_CURVE_WIDTH


def test_convex_envelope_and_dominance() -> None:
    f = PiecewiseLinearTradeOff(np.array([0.0, 0.3, 0.5, 1.0]), np.array([1.0, 0.2, 0.19, 0.0]))
    env = f.convex_envelope()
    assert f.dominates(env)
    slopes = np.diff(env.beta) / np.diff(env.alpha)
    assert np.all(np.diff(slopes) >= 0)
    assert env(0.5) < f(0.5)


def test_readouts_gaussian() -> None:
    g = gaussian_tradeoff(1.0)
    from scipy.stats import norm

    adv = 2 * norm.cdf(0.5) - 1
    assert advantage(g).lower <= adv <= advantage(g).upper
    tpr = attack_tpr(g, 0.01)
    assert tpr.lower <= 1 - g(0.01) <= tpr.upper


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: gaussian_tradeoff(1.0)(1.5), "alpha"),
        (lambda: gaussian_tradeoff(1.0)(-0.1), "alpha"),
        (lambda: gaussian_tradeoff(1.0)(np.array([0.1, float("nan")])), "alpha"),
        (lambda: epsilon_delta_tradeoff(-1.0, 0.0), "epsilon"),
        (lambda: epsilon_delta_tradeoff(1.0, 1.5), "delta"),
        (lambda: from_distributions([0.5, 0.5], [0.9, 0.9]), "q"),
        (lambda: from_distributions([-0.5, 1.5], [0.5, 0.5]), "p"),
        (lambda: from_epsilon_delta_family([1.0], [2.0]), "deltas"),
        (lambda: attack_tpr(gaussian_tradeoff(1.0), 2.0), "fpr"),
        (lambda: delta_at(gaussian_tradeoff(1.0), -1.0), "epsilon"),
    ],
)
def test_bad_inputs_raise(call: object, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        call()  # type: ignore[operator]


def test_delta_at_beyond_float_exponent_range() -> None:
    """ε > 709 (e^ε overflows): δ(ε) is read as the limit slope → ∞, no OverflowError; still a bracket."""
    floor = -math.expm1(3 * math.log1p(-0.01))
    assert delta_at(epsilon_delta_composition(1.0, 0.01, 3), 710.0).upper >= floor
    assert delta_at(gaussian_tradeoff(1.0), 1e6).upper <= math.ulp(0.0)  # truth ≈ e^{-10^{12}/2} > 0
    b = delta_at(subsample(gaussian_tradeoff(1.0), 0.1), 710.0)
    assert 0.0 <= b.lower <= b.upper <= delta_at(subsample(gaussian_tradeoff(1.0), 0.1), 700.0).upper

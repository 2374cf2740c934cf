"""Privacy regions (KOV Section II, Thm III.3, Remark A.1)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optcomp import bounds, optimal
from optcomp.region import PrivacyRegion, composed, from_optimal
from tests._references import kov_theorem_iii3_deltas
from tests.tolerances import EXACT_RTOL


def test_single_region_boundary_is_f_eps_delta() -> None:
    eps, dlt = 0.7, 0.05
    r = PrivacyRegion.from_dp(eps, dlt)
    alphas, betas = r.boundary(101)
    expected = np.maximum(0.0, np.maximum(1 - dlt - math.exp(eps) * alphas, math.exp(-eps) * (1 - dlt - alphas)))
    assert np.allclose(betas, expected, rtol=EXACT_RTOL, atol=0.0)
    for a, b in zip(alphas, betas):
        assert r.contains(float(a), min(1.0, float(b) * (1 + EXACT_RTOL) + EXACT_RTOL))
    assert not r.contains(0.1, 0.5)  # 0.1·e^0.7 + 0.5 < 0.95
    assert r.contains(1.0, 1.0) and r.contains(0.0, 1.0)


@settings(max_examples=40, deadline=None)
@given(eps=st.floats(0.0, 5.0), dlt=st.floats(0.0, 1.0))
def test_tv_bound_is_remark_a1(eps: float, dlt: float) -> None:
    r = PrivacyRegion.from_dp(eps, dlt)
    assert r.tv_bound() == pytest.approx(bounds.tv_bound(eps, dlt), rel=EXACT_RTOL, abs=EXACT_RTOL)
    # The TV bound is attained on the diagonal and no boundary point exceeds it.
    alphas, betas = r.boundary(301)
    assert float(np.max(1 - alphas - betas)) <= r.tv_bound() + EXACT_RTOL


def test_intersection_takes_the_max() -> None:
    a = PrivacyRegion.from_dp(1.0, 0.0)
    b = PrivacyRegion.from_dp(0.2, 0.1)
    both = a & b
    grid = np.linspace(0, 1, 57)
    assert np.allclose(both.beta(grid), np.maximum(a.beta(grid), b.beta(grid)), rtol=0.0, atol=EXACT_RTOL)
    assert both.tv_bound() == min(a.tv_bound(), b.tv_bound())
    assert both.contains(0.5, 0.5) and not both.contains(0.2, 0.3)


def test_composed_region_kov_fig3() -> None:
    """30-fold (0.1, 0.001): constraints ((k − 2i)ε, 1 − (1 − δ)^k (1 − δ_i)) with δ_i from eq. (6)."""
    eps, dlt, k = 0.1, 0.001, 30
    region = composed(eps, dlt, k)
    assert len(region.constraints) == k // 2 + 1
    truths = kov_theorem_iii3_deltas(eps, dlt, k)
    for i, (eps_i, delta_i) in enumerate(region.constraints):
        truth = float(truths[i])
        assert eps_i == pytest.approx((k - 2 * i) * eps, rel=EXACT_RTOL)
        assert truth <= delta_i <= truth * (1 + EXACT_RTOL)


def test_composed_region_inside_basic_and_kov() -> None:
    eps, dlt, k = 0.1, 0.001, 30
    region = composed(eps, dlt, k)
    grid = np.linspace(0, 1, 201)
    for e_g, d_g in (bounds.basic(eps, dlt, k), bounds.kov_bound(eps, dlt, k, 1e-3), bounds.advanced_drv(eps, dlt, k, 1e-3)):
        outer = PrivacyRegion.from_dp(e_g, d_g)
        assert np.all(region.beta(grid) >= outer.beta(grid) * (1 - EXACT_RTOL) - EXACT_RTOL)


def test_composed_k1_is_the_single_region() -> None:
    r = composed(0.4, 0.01, 1)
    grid = np.linspace(0, 1, 33)
    assert np.allclose(r.beta(grid), PrivacyRegion.from_dp(0.4, 0.01).beta(grid), rtol=EXACT_RTOL, atol=EXACT_RTOL)


def test_from_optimal_matches_composed_at_the_knots() -> None:
    eps, k = 0.2, 12
    knots = [(k - 2 * i) * eps for i in range(k // 2 + 1)]
    a = from_optimal([(eps, 0.0)] * k, knots)
    b = composed(eps, 0.0, k)
    grid = np.linspace(0, 1, 41)
    assert np.allclose(a.beta(grid), b.beta(grid), rtol=EXACT_RTOL, atol=EXACT_RTOL)
    het = from_optimal([(0.1, 0.0), (0.3, 1e-3), (0.2, 0.0)], [0.0, 0.2, 0.4])
    assert het.constraints[0][1] == pytest.approx(optimal.delta([(0.1, 0.0), (0.3, 1e-3), (0.2, 0.0)], 0.0).upper)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: PrivacyRegion(()), "constraints"),
        (lambda: PrivacyRegion(((0.1, 2.0),)), "delta"),
        (lambda: PrivacyRegion(((-0.1, 0.0),)), "epsilon"),
        (lambda: PrivacyRegion.from_dp(float("nan"), 0.0), "epsilon"),
        (lambda: PrivacyRegion.from_dp(0.1, 0.0).contains(1.5, 0.0), "alpha"),
        (lambda: PrivacyRegion.from_dp(0.1, 0.0).contains(0.5, float("nan")), "beta"),
        (lambda: PrivacyRegion.from_dp(0.1, 0.0).beta([0.2, -0.1]), "alpha"),
        (lambda: PrivacyRegion.from_dp(0.1, 0.0).boundary(1), "n"),
        (lambda: composed(0.1, 0.0, 0), "k"),
        (lambda: composed(0.1, 0.0, 3.0), "k"),
        (lambda: from_optimal([(0.1, 0.0)], []), "epsilons"),
        (lambda: PrivacyRegion.from_dp(0.1, 0.0).intersect("x"), "other"),
    ],
)
def test_bad_inputs_raise(call: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()  # type: ignore[operator]


@settings(max_examples=30, deadline=None)
@given(
    pairs=st.lists(st.tuples(st.floats(0.0, 4.0), st.floats(0.0, 0.5)), min_size=1, max_size=6),
)
def test_region_and_tradeoff_are_one_object(pairs: list[tuple[float, float]]) -> None:
    """PrivacyRegion ↔ PiecewiseLinearTradeOff round trip: same boundary, and β = max of KOV eq. (2)'s lines."""
    r = PrivacyRegion(tuple(pairs))
    grid = np.linspace(0.0, 1.0, 97)
    lines = np.max(
        [np.maximum(0.0, np.maximum(1 - d - math.exp(e) * grid, math.exp(-e) * (1 - d - grid))) for e, d in pairs],
        axis=0,
    )
    np.testing.assert_allclose(r.beta(grid), lines, rtol=0.0, atol=EXACT_RTOL)
    back = PrivacyRegion.from_tradeoff(r.to_tradeoff())
    np.testing.assert_allclose(back.beta(grid), r.beta(grid), rtol=0.0, atol=EXACT_RTOL)
    assert back.tv_bound() == pytest.approx(r.tv_bound(), abs=EXACT_RTOL)

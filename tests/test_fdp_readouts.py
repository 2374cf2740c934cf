"""Certified f-DP readouts against independent mpmath truths: both ends of every Bound on the right side.

Covers the exact (ε, δ) composition at every k (against ``optcomp.optimal`` at large kε² and against the
KOV Thm III.3 sum in mpmath down to δ ≈ 1e-35), ``delta_at`` / ``epsilon_at`` / ``attack_tpr`` on
Gaussian, subsampled and composed curves, and the search-range edge of ``epsilon_at``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from optcomp import optimal
from optcomp.fdp import (
    MAX_COMPOSITION_K,
    EpsilonDeltaComposition,
    PiecewiseLinearTradeOff,
    attack_tpr,
    delta_at,
    epsilon_at,
    epsilon_delta_composition,
    gaussian_tradeoff,
    subsample,
)
from tests._references import (
    brackets,
    epsilon_delta_composition_delta,
    gaussian_attack_tpr,
    gdp_delta,
    gdp_epsilon,
    no_failure_probability,
    subsampled_gaussian_delta,
)
from tests.tolerances import (
    FDP_COMPOSITION_DELTA_RTOL,
    GDP_ATOL,
    METHOD_RTOL,
    OPTIMAL_LARGE_K_RTOL,
)


def _inside(b: object, truth: object) -> bool:
    return brackets(b, truth)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# The (ε, δ) composition: exact at every k.
# ---------------------------------------------------------------------------------------------


def test_composition_at_large_k_keeps_the_mass_at_alpha_zero() -> None:
    """Regression: k = 200000, (0.1, 1e-6) reported β(0) = 1.5e-10 (underflowed P-masses read as a drop)."""
    f = epsilon_delta_composition(0.1, 1e-6, 200_000)
    truth = no_failure_probability(1e-6, 200_000)
    assert f(0.0) == pytest.approx(float(truth), rel=FDP_COMPOSITION_DELTA_RTOL)
    # just above α = 0 the curve is still the Neyman–Pearson curve: β(α) ≤ β(0), and β(1) = 0
    assert f(1e-300) <= f(0.0) and f(1.0) == 0.0


@pytest.mark.parametrize(
    "eps,delta,k,eps_g",
    [(1.0, 0.0, 5000, 2500.0), (0.1, 0.0, 150_000, 200.0), (0.1, 1e-6, 200_000, 150.0), (0.3, 1e-7, 20_000, 120.0)],
)
def test_composition_delta_matches_optimal_at_large_k_eps_squared(eps: float, delta: float, k: int, eps_g: float) -> None:
    """kε² from 1500 to 5000: the f-DP readout equals MV/KOV's optimal δ (regression: it returned 1.0)."""
    ours = delta_at(epsilon_delta_composition(eps, delta, k), eps_g)
    ref = optimal.delta(optimal.homogeneous(eps, delta, k), eps_g)
    assert ours.lower <= ref.upper and ref.lower <= ours.upper  # the two certified brackets overlap
    assert ours.upper == pytest.approx(ref.upper, rel=OPTIMAL_LARGE_K_RTOL * 100)
    assert 0.0 < ours.lower < 1.0


@pytest.mark.parametrize(
    "eps,delta,k,eps_g",
    [(0.5, 0.0, 200, 95.0), (1.0, 0.0, 100, 96.0), (1.0, 0.0, 100, 90.0), (2.0, 0.0, 10, 19.0), (0.5, 1e-3, 50, 20.0)],
)
def test_composition_delta_is_certified_in_relative_terms(eps: float, delta: float, k: int, eps_g: float) -> None:
    """δ down to 4e-35 (regression: the knot readout returned 0 or 2.9e-14 there)."""
    truth = epsilon_delta_composition_delta(eps, delta, k, eps_g)
    f = epsilon_delta_composition(eps, delta, k)
    b = delta_at(f, eps_g)
    assert _inside(b, truth)
    assert b.lower > 0.0 and b.upper <= float(truth) * (1 + FDP_COMPOSITION_DELTA_RTOL)
    assert f.delta(eps_g) == b.upper  # the float readout is the certified upper end


@given(
    st.floats(0.01, 3.0),
    st.floats(0.0, 0.1) | st.just(0.0),
    st.integers(1, 80),
    st.floats(0.0, 1.0),
)
@example(1.0, 0.0, 1, 0.9999999999999999)  # ε_g one ulp below the knot kε: δ' = 8e-17, kept relative
@example(1.0, 2.4765e-41, 1, 1.0)  # ε_g on the knot kε with a tiny δ: δ(ε_g) = δ, kept relative
@settings(max_examples=60, deadline=None)
def test_composition_delta_bracket_contains_mpmath(eps: float, delta: float, k: int, frac: float) -> None:
    eps_g = frac * k * eps
    truth = epsilon_delta_composition_delta(eps, delta, k, eps_g)
    b = epsilon_delta_composition(eps, delta, k).delta_bound(eps_g)
    assert _inside(b, truth)
    if truth > 0:
        assert b.upper <= float(truth) * (1 + FDP_COMPOSITION_DELTA_RTOL) + GDP_ATOL


@given(st.floats(0.01, 2.0), st.floats(0.0, 0.01), st.integers(1, 60))
@settings(max_examples=30, deadline=None)
def test_composition_curve_is_the_kov_region_boundary(eps: float, delta: float, k: int) -> None:
    """The knots satisfy β(α) ≥ every line of KOV Thm III.3 and touch one of them at each knot."""
    f = epsilon_delta_composition(eps, delta, k)
    assert isinstance(f, EpsilonDeltaComposition) and isinstance(f, PiecewiseLinearTradeOff)
    eps_g = np.array([(k - 2 * i) * eps for i in range(k // 2 + 1)])
    d_g = np.array([f.delta_bound(float(e)).upper for e in eps_g])
    a = f.alpha
    lines = np.maximum(1 - d_g[None, :] - np.exp(eps_g)[None, :] * a[:, None], 0.0).max(axis=1)
    assert np.all(f.beta >= lines - METHOD_RTOL)


def test_composition_rejects_k_beyond_the_exact_limit() -> None:
    with pytest.raises(ValueError, match=r"k must be an integer in \[1, .*optimal"):
        epsilon_delta_composition(0.1, 0.0, MAX_COMPOSITION_K + 1)


# ---------------------------------------------------------------------------------------------
# Gaussian and subsampled curves.
# ---------------------------------------------------------------------------------------------


@given(st.floats(0.05, 5.0), st.floats(0.0, 40.0))
@settings(max_examples=60, deadline=None)
def test_delta_at_gaussian_contains_mpmath(mu: float, eps: float) -> None:
    assert _inside(delta_at(gaussian_tradeoff(mu), eps), gdp_delta(mu, eps))


@given(st.floats(0.3, 4.0), st.sampled_from([1e-3, 1e-6, 1e-10]))
@settings(max_examples=25, deadline=None)
def test_epsilon_at_gaussian_contains_mpmath(mu: float, delta: float) -> None:
    b = epsilon_at(gaussian_tradeoff(mu), delta)
    assert _inside(b, gdp_epsilon(mu, delta))


def test_epsilon_at_beyond_the_search_range_has_a_finite_lower_end() -> None:
    """Regression: Bound(inf, inf) when the true ε exceeds epsilon_max (inf is not a lower bound)."""
    truth = gdp_epsilon(12.0, 1e-12)
    assert truth > 50
    b = epsilon_at(gaussian_tradeoff(12.0), 1e-12)
    assert b.lower == 50.0 and b.upper == math.inf and _inside(b, truth)
    wide = epsilon_at(gaussian_tradeoff(12.0), 1e-12, epsilon_max=200.0)
    assert _inside(wide, truth) and wide.upper < 200.0


@pytest.mark.parametrize("mu,p", [(1.0, 0.01), (2.0, 0.2), (0.5, 0.5), (1.0, 1.0)])
def test_delta_at_subsample_contains_mpmath_down_to_tiny_delta(mu: float, p: float) -> None:
    """Regression: the lower end was 0.25 % above the truth near δ = 1e-14 (relative rounding of an absolute error)."""
    sub = subsample(gaussian_tradeoff(mu), p)
    for eps in np.linspace(0.0, 10.0, 21):
        truth = subsampled_gaussian_delta(mu, p, float(eps))
        assert _inside(delta_at(sub, float(eps)), truth), (eps, truth)


@given(st.floats(0.3, 3.0), st.floats(0.01, 1.0), st.floats(0.0, 8.0))
@settings(max_examples=25, deadline=None)
def test_delta_at_subsample_property(mu: float, p: float, eps: float) -> None:
    assert _inside(delta_at(subsample(gaussian_tradeoff(mu), p), eps), subsampled_gaussian_delta(mu, p, eps))


@given(st.floats(0.1, 4.0), st.floats(0.0, 1.0))
@settings(max_examples=40, deadline=None)
def test_attack_tpr_contains_mpmath(mu: float, fpr: float) -> None:
    truth = gaussian_attack_tpr(mu, fpr)
    assert _inside(attack_tpr(gaussian_tradeoff(mu), fpr), truth)


@given(st.floats(0.05, 2.0), st.integers(2, 40), st.sampled_from([1e-3, 1e-6, 1e-9]))
@settings(max_examples=20, deadline=None)
def test_epsilon_at_composition_brackets_the_mpmath_root(eps: float, k: int, delta: float) -> None:
    """ε(δ) of the k-fold composition: δ_true(lower) > δ ≥ δ_true(upper), δ_true from the KOV sum."""
    b = epsilon_at(epsilon_delta_composition(eps, 0.0, k), delta, epsilon_max=k * eps + 1.0)  # ε ≤ kε always
    if b.lower > 0.0:
        assert epsilon_delta_composition_delta(eps, 0.0, k, b.lower) > delta
    assert b.upper < math.inf and epsilon_delta_composition_delta(eps, 0.0, k, b.upper) <= delta


def test_composition_delta_at_a_knot_with_tiny_delta_is_sound() -> None:
    """ε_g exactly at the knot kε with δ ≈ 4e-285 (a draw that once failed only because the reference
    lost δ in 1 − (1 − δ)^k): the bracket contains the 50-digit truth."""
    truth = epsilon_delta_composition_delta(1.0, 4.2892031251005445e-285, 1, 1.0)
    assert _inside(epsilon_delta_composition(1.0, 4.2892031251005445e-285, 1).delta_bound(1.0), truth)


@given(st.floats(0.01, 3.0), st.floats(1e-300, 1e-20), st.integers(1, 60), st.integers(0, 30))
@settings(max_examples=60, deadline=None)
def test_composition_delta_on_the_knots_keeps_a_tiny_delta_relative(
    eps: float, delta: float, k: int, j: int
) -> None:
    """On ε_g = fl(ε(k − 2j)) (a knot, up to the rounding of the product) the bracket holds the 50-digit
    value and stays within a relative 1e-6 of it, however small δ is."""
    eps_g = eps * max(k - 2 * min(j, k // 2), 0)
    truth = epsilon_delta_composition_delta(eps, delta, k, eps_g)
    b = epsilon_delta_composition(eps, delta, k).delta_bound(eps_g)
    assert _inside(b, truth)
    assert b.upper <= float(truth) * (1 + FDP_COMPOSITION_DELTA_RTOL) + GDP_ATOL


def test_composition_delta_at_a_knot_with_tiny_delta_is_tight() -> None:
    """At ε_g exactly on a knot the vanishing term e^{kε} − e^{ε_g} is computed exactly (Sterbenz), so a
    δ of 4e-285 is kept in relative terms (it carried an absolute slack of ≈ 4e-32 before)."""
    truth = epsilon_delta_composition_delta(1.0, 4.2892031251005445e-285, 1, 1.0)
    b = epsilon_delta_composition(1.0, 4.2892031251005445e-285, 1).delta_bound(1.0)
    assert b.upper <= float(truth) * (1 + FDP_COMPOSITION_DELTA_RTOL) + GDP_ATOL

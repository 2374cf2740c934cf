"""PLD engine v2: the split (upper) and quantised-outcome (lower) brackets against independent truths.

Closed forms in mpmath: k-fold Gaussian (GDP), k-fold canonical (ε, δ) (= optcomp.optimal's exact
answer), single Laplace, k-fold two-point pairs by exact binomial enumeration; deep tails down to
δ = 1e-300; the automatic accuracy (relative width) and the memory cap. Public API only.
"""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optcomp import Accuracy, compose, optimal
from optcomp.mechanisms import (
    DiscretePair,
    EpsilonDelta,
    Gaussian,
    Laplace,
    PoissonSubsampled,
    privacy_loss_laws,
)
from optcomp.pld import GridTooLargeError, PrivacyLossDistribution
from tests._references import gdp_delta, gdp_epsilon, laplace_epsilon, two_point_pair_delta
from tests.tolerances import PLD_COARSE_STEP, PLD_TEST_STEP


def pld_of(mechanism: object, accuracy: Accuracy) -> PrivacyLossDistribution:
    return PrivacyLossDistribution.from_laws(*privacy_loss_laws(mechanism), accuracy=accuracy)


@settings(max_examples=12, deadline=None)
@given(
    p=st.floats(0.05, 0.95),
    q=st.floats(0.05, 0.95),
    k=st.integers(1, 120),
    eps=st.floats(0.0, 5.0),
    step=st.sampled_from([PLD_TEST_STEP, 3e-3, PLD_COARSE_STEP]),
)
def test_hypothesis_two_point_pairs_by_enumeration(
    p: float, q: float, k: int, eps: float, step: float
) -> None:
    pld = pld_of(DiscretePair((p, 1 - p), (q, 1 - q)), Accuracy(grid_step=step)).self_compose(k)
    b = pld.delta(eps)
    truth = two_point_pair_delta(p, q, k, eps)
    assert b.lower <= truth <= b.upper, (b, truth)


@pytest.mark.parametrize("eps,delta,k", [(0.1, 0.0, 40), (0.5, 1e-6, 12), (1.3, 1e-4, 5)])
def test_kfold_canonical_matches_optimal_composition(eps: float, delta: float, k: int) -> None:
    pld = compose((EpsilonDelta(eps, delta=delta), k), accuracy=Accuracy(grid_step=PLD_TEST_STEP))
    for target in [1e-2, 1e-5, 1e-9]:
        b = pld.epsilon(target)
        exact = optimal.epsilon([(eps, delta)] * k, target)
        assert b.lower <= exact.upper and exact.lower <= b.upper, (target, b, exact)


@pytest.mark.parametrize("sigma,k", [(1.0, 10), (0.3, 1), (2.0, 40)])
@pytest.mark.parametrize("delta", [1e-20, 1e-100, 1e-300])
def test_deep_tails_contain_gdp_truth(sigma: float, k: int, delta: float) -> None:
    pld = compose((Gaussian(sigma), k))  # default accuracy: requested relative width
    b = pld.epsilon(delta)
    truth = gdp_epsilon(math.sqrt(k) / sigma, delta)
    assert b.lower <= truth <= b.upper, (b, truth)
    assert b.upper - b.lower <= 0.01 * truth  # certified, and still narrow (tilted FFT)


@settings(max_examples=10, deadline=None)
@given(sigma=st.floats(0.4, 3.0), k=st.integers(1, 50), log10_delta=st.integers(-300, -2))
def test_hypothesis_gaussian_epsilon_any_delta(sigma: float, k: int, log10_delta: int) -> None:
    delta = 10.0**log10_delta
    b = compose((Gaussian(sigma), k), accuracy=Accuracy(grid_step=PLD_COARSE_STEP)).epsilon(delta)
    truth = gdp_epsilon(math.sqrt(k) / sigma, delta)
    assert b.lower <= truth <= b.upper, (b, truth)


def test_default_accuracy_meets_requested_width() -> None:
    pld = compose((PoissonSubsampled(Gaussian(1.0), sampling_rate=0.01), 1000))
    b = pld.epsilon(1e-5)
    assert (b.upper - b.lower) / max(b.upper, 0.01) <= Accuracy().relative_width
    coarse = compose((PoissonSubsampled(Gaussian(1.0), sampling_rate=0.01), 1000), accuracy=Accuracy(relative_width=0.01))
    c = coarse.epsilon(1e-5)
    assert c.lower <= b.upper and b.lower <= c.upper
    assert (c.upper - c.lower) / c.upper <= 0.01


def test_tiny_scale_laplace_is_exact_enough() -> None:
    """Laplace(0.001): ε₀ = 1000; ε(δ) = ε₀ + 2 ln(1 − δ) (one step, closed form)."""
    b = compose((Laplace(0.001), 1)).epsilon(1e-5)
    truth = laplace_epsilon(1000, 1e-5)
    assert b.lower <= truth <= b.upper
    assert b.width <= 1e-4 * truth


@pytest.mark.parametrize("eps", [0.0, 0.4, 1.0, 2.5])
def test_single_laplace_delta_closed_form(eps: float) -> None:
    b = compose((Laplace(0.8), 1)).delta(eps)
    truth = max(0.0, 1 - math.exp((eps - 1 / 0.8) / 2))
    assert b.lower <= truth <= b.upper


def test_both_directions_subsampled_gaussian_k_fold_is_at_least_each_direction() -> None:
    """The reported δ is the max over the remove/add directions: at ε = 0 both are the TV distance."""
    pld = compose((PoissonSubsampled(Gaussian(0.7), sampling_rate=0.3), 3), accuracy=Accuracy(grid_step=PLD_TEST_STEP))
    lo, hi = pld.delta_curve([0.0, 0.5, 1.0, 2.0])
    assert all(a <= b for a, b in zip(lo, hi, strict=True))
    assert all(x >= y for x, y in itertools.pairwise(hi))


def test_memory_cap_raises_named_error() -> None:
    small = Accuracy(relative_width=1e-7, memory_cap=2**22)
    with pytest.raises(GridTooLargeError, match="memory_cap"):
        compose((PoissonSubsampled(Gaussian(1.0), sampling_rate=0.01), 10_000), accuracy=small).epsilon(1e-5)


def test_accuracy_validation() -> None:
    with pytest.raises(ValueError, match="relative_width"):
        Accuracy(relative_width=0.0)
    with pytest.raises(ValueError, match="memory_cap"):
        Accuracy(memory_cap=10)
    with pytest.raises(ValueError, match="grid_step"):
        Accuracy(grid_step=-1.0)


def test_epsilon_estimate_lies_in_bracket() -> None:
    pld = compose((Gaussian(2.0), 30))
    b = pld.epsilon(1e-6)
    est = pld.epsilon_estimate(1e-6)
    assert b.lower <= est <= b.upper
    assert abs(est - gdp_epsilon(math.sqrt(30) / 2.0, 1e-6)) <= b.width


def test_gdp_delta_bracket_default_accuracy() -> None:
    pld = compose((Gaussian(1.0), 25))
    for eps in [0.5, 5.0, 20.0, 40.0]:
        b = pld.delta(eps)
        truth = gdp_delta(5.0, eps)
        assert b.lower <= truth <= b.upper, (eps, b, truth)

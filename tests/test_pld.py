"""PLD engine: certified brackets against closed forms and 50-digit mpmath truths (public API only)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optcomp import DEFAULT_ACCURACY, Accuracy
from optcomp.mechanisms import (
    DiscretePair,
    EpsilonDelta,
    Gaussian,
    KaryRandomizedResponse,
    Laplace,
    PoissonSubsampled,
    PrivacyLossLaw,
    RandomizedResponse,
    privacy_loss_laws,
)
from optcomp.pld import GridTooLargeError, PrivacyLossDistribution
from tests._references import (
    delta_floor,
    epsilon_delta_composition_delta,
    gdp_delta,
    gdp_epsilon,
    poisson_gaussian_delta,
)
from tests.tolerances import (
    COARSE_GRID_STEP,
    LAW_GRID_RTOL,
    PLD_COARSE_STEP,
    PLD_FINE_STEP,
    PLD_TEST_STEP,
)

COARSE = Accuracy(grid_step=PLD_COARSE_STEP)
TEST = Accuracy(grid_step=PLD_TEST_STEP)


def pld_of(mechanism: object, accuracy: Accuracy = TEST) -> PrivacyLossDistribution:
    return PrivacyLossDistribution.from_laws(*privacy_loss_laws(mechanism), accuracy=accuracy)


# -- truths inside the brackets ----------------------------------------------------------------------


@pytest.mark.parametrize("sigma,k", [(1.0, 1), (0.5, 4), (2.0, 30), (1.0, 200)])
def test_kfold_gaussian_delta_contains_gdp_truth(sigma: float, k: int) -> None:
    pld = pld_of(Gaussian(sigma=sigma)).self_compose(k)
    mu = math.sqrt(k) / sigma
    # ε values from the bulk down to δ ≈ 1e-12
    for target in [0.3, 1e-2, 1e-5, 1e-9, 1e-12]:
        eps = float(gdp_epsilon(mu, target))
        b = pld.delta(eps)
        truth = gdp_delta(mu, eps)
        assert b.lower <= truth <= b.upper, (eps, b, truth)


@pytest.mark.parametrize("sigma,k", [(1.0, 10), (0.3, 3)])
def test_kfold_gaussian_epsilon_contains_gdp_truth(sigma: float, k: int) -> None:
    pld = pld_of(Gaussian(sigma=sigma)).self_compose(k)
    mu = math.sqrt(k) / sigma
    for delta in [1e-3, 1e-6, 1e-10, 1e-12]:
        b = pld.epsilon(delta)
        truth = gdp_epsilon(mu, delta)
        assert b.lower <= truth <= b.upper, (delta, b, truth)
        if delta >= 1e-10:  # below, additive error floors hand over to the (looser) Chernoff bound
            assert b.width <= 0.02 * truth + 0.05


def test_tiny_delta_is_certified_down_to_1e_300() -> None:
    pld = pld_of(Gaussian(sigma=1.0)).self_compose(10)
    mu = math.sqrt(10)
    b = pld.epsilon(1e-300)
    assert math.isfinite(b.upper)
    truth = gdp_epsilon(mu, 1e-300)
    assert b.lower <= truth <= b.upper
    d = pld.delta(b.upper)
    assert d.upper <= 1e-300


@pytest.mark.parametrize("eps,delta,k", [(0.1, 0.0, 50), (0.5, 1e-4, 20), (1.0, 1e-3, 7)])
def test_kfold_canonical_against_binomial_sum(eps: float, delta: float, k: int) -> None:
    pld = pld_of(EpsilonDelta(eps, delta=delta)).self_compose(k)
    for eps_g in [0.0, 0.3, 1.0, 2.5, 0.5 * k * eps]:
        b = pld.delta(eps_g)
        truth = epsilon_delta_composition_delta(eps, delta, k, eps_g)
        assert b.lower <= truth <= b.upper, (eps_g, b, truth)


def test_randomized_response_single_and_composed() -> None:
    eps = 0.7
    single = pld_of(RandomizedResponse(eps))
    for e in [0.0, 0.3, 0.69, 0.8]:
        truth = max(0.0, (math.exp(eps) - math.exp(e)) / (1 + math.exp(eps)))
        b = single.delta(e)
        assert b.lower <= truth <= b.upper
    comp = single.self_compose(9)
    for e in [0.0, 1.4, 3.0]:
        b = comp.delta(e)
        truth = epsilon_delta_composition_delta(eps, 0.0, 9, e)
        assert b.lower <= truth <= b.upper


def test_single_laplace_closed_form() -> None:
    scale = 0.8  # ε0 = 1/b
    pld = pld_of(Laplace(scale=scale))
    eps0 = 1 / scale
    for e in [0.0, 0.2, 0.7, 1.2, 1.3]:
        truth = max(0.0, 1 - math.exp((e - eps0) / 2))
        b = pld.delta(e)
        assert b.lower <= truth <= b.upper, (e, b, truth)
        assert b.width <= 1e-3


def test_subsampled_gaussian_single_both_directions() -> None:
    q, sigma = 0.2, 0.8
    pld = pld_of(PoissonSubsampled(Gaussian(sigma=sigma), sampling_rate=q))
    for e in [0.0, 0.1, 0.5, 1.0, 2.0]:
        truth = max(poisson_gaussian_delta(sigma, q, e, add=False), poisson_gaussian_delta(sigma, q, e, add=True))
        b = pld.delta(e)
        assert b.lower <= truth <= b.upper, (e, b, truth)


def test_heterogeneous_gaussians_match_gdp_quadrature() -> None:
    a = pld_of(Gaussian(sigma=1.0)).self_compose(3)
    b = pld_of(Gaussian(sigma=2.0)).self_compose(5)
    mu = math.sqrt(3 / 1.0 + 5 / 4.0)
    ab, ba = a.compose(b), b.compose(a)
    for e in [0.5, 2.0, 5.0]:
        truth = gdp_delta(mu, e)
        x, y = ab.delta(e), ba.delta(e)
        assert x.lower <= truth <= x.upper
        assert y.lower <= truth <= y.upper
        assert max(x.lower, y.lower) <= min(x.upper, y.upper)  # commutative within the stated error


def test_mass_at_infinity_is_reported() -> None:
    k, delta = 5, 1e-3
    pld = pld_of(EpsilonDelta(0.5, delta=delta)).self_compose(k)
    floor = delta_floor([delta] * k)  # the float δ's exact value
    b = pld.delta(100.0)
    assert b.lower <= floor <= b.upper
    assert tuple(pld.epsilon(float(floor) / 2)) == (math.inf, math.inf)


# -- properties ---------------------------------------------------------------------------------------


@settings(max_examples=20, deadline=None)
@given(
    sigma=st.floats(0.3, 5.0),
    k=st.integers(1, 300),
    eps=st.floats(0.0, 30.0),
    step=st.sampled_from([2e-4, 1e-3, 4e-3, 1e-2]),
)
def test_hypothesis_no_counterexample_gaussian(sigma: float, k: int, eps: float, step: float) -> None:
    pld = pld_of(Gaussian(sigma=sigma), Accuracy(grid_step=step)).self_compose(k)
    b = pld.delta(eps)
    truth = gdp_delta(math.sqrt(k) / sigma, eps)
    assert b.lower <= truth <= b.upper


def test_delta_curve_vectorised_and_monotone() -> None:
    pld = pld_of(PoissonSubsampled(Gaussian(sigma=1.0), sampling_rate=0.05)).self_compose(50)
    eps = np.linspace(0.0, 4.0, 41)
    lo, hi = pld.delta_curve(eps)
    assert np.all(lo <= hi)
    assert np.all(np.diff(hi) <= 0) and np.all(np.diff(lo) <= 0)
    b = pld.delta(float(eps[7]))
    assert (b.lower, b.upper) == (lo[7], hi[7])


def test_tightening_accuracy_narrows_bracket() -> None:
    mech = PoissonSubsampled(Gaussian(sigma=1.0), sampling_rate=0.02)
    widths = [
        pld_of(mech, Accuracy(grid_step=s)).self_compose(300).epsilon(1e-5).width
        for s in (4e-3, 1e-3, 2.5e-4)
    ]
    assert widths[0] > widths[1] > widths[2]
    assert widths[2] < widths[0] / 8


def test_default_accuracy_dpsgd_bracket_is_within_one_percent() -> None:
    pld = pld_of(PoissonSubsampled(Gaussian(sigma=1.0), sampling_rate=0.01), DEFAULT_ACCURACY).self_compose(1000)
    b = pld.epsilon(1e-5)
    assert b.relative_width <= 0.01


def test_grid_too_large_raises_named_error() -> None:
    pld = pld_of(Gaussian(sigma=0.3), Accuracy(grid_step=PLD_FINE_STEP)).self_compose(10_000_000)
    with pytest.raises(GridTooLargeError, match="grid_step"):
        pld.delta(1.0)
    assert issubclass(GridTooLargeError, ValueError)
    small = Accuracy(relative_width=1e-9, memory_cap=2**24)
    with pytest.raises(GridTooLargeError, match="relative_width"):
        pld_of(Gaussian(sigma=1.0), small).self_compose(100).epsilon(1e-5)


# -- validation ---------------------------------------------------------------------------------------


def test_invalid_inputs_raise() -> None:
    pld = pld_of(RandomizedResponse(1.0), COARSE)
    with pytest.raises(ValueError, match="epsilon"):
        pld.delta(float("nan"))
    with pytest.raises(ValueError, match="epsilon"):
        pld.delta(-1.0)
    with pytest.raises(ValueError, match="delta"):
        pld.epsilon(1.5)
    with pytest.raises(ValueError, match="k"):
        pld.self_compose(0)
    with pytest.raises(ValueError, match="k"):
        pld.self_compose(True)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="epsilons"):
        pld.delta_curve([0.1, float("inf")])
    with pytest.raises(ValueError, match="grid_step"):
        Accuracy(grid_step=0.0)
    with pytest.raises(TypeError, match="remove"):
        PrivacyLossDistribution.from_laws("gaussian")  # type: ignore[arg-type]


def test_from_discrete_law_and_symmetry_flag() -> None:
    law = PrivacyLossLaw.from_discrete(np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.3, 0.5]))
    pld = PrivacyLossDistribution.from_laws(law, accuracy=COARSE)
    assert pld.symmetric
    truth = 0.3  # Σ (p − q)_+ at ε = 0
    b = pld.delta(0.0)
    assert b.lower <= truth <= b.upper
    fine = PrivacyLossDistribution.from_laws(law, accuracy=Accuracy(grid_step=PLD_FINE_STEP)).delta(0.0)
    assert fine.lower <= truth <= fine.upper
    assert fine.width <= LAW_GRID_RTOL


@settings(max_examples=15, deadline=None)
@given(
    eps=st.floats(0.0, 2.0),
    delta=st.sampled_from([0.0, 1e-9, 1e-4, 0.05]),
    k=st.integers(1, 60),
    eps_g=st.floats(0.0, 10.0),
    step=st.sampled_from([3e-4, 1e-3, 7e-3]),
)
def test_hypothesis_no_counterexample_canonical(
    eps: float, delta: float, k: int, eps_g: float, step: float
) -> None:
    pld = pld_of(EpsilonDelta(eps, delta=delta), Accuracy(grid_step=step)).self_compose(k)
    b = pld.delta(eps_g)
    truth = epsilon_delta_composition_delta(eps, delta, k, eps_g)
    assert b.lower <= truth <= b.upper


@settings(max_examples=15, deadline=None)
@given(
    q=st.floats(0.001, 1.0),
    sigma=st.floats(0.3, 4.0),
    eps=st.floats(0.0, 6.0),
    step=st.sampled_from([1e-4, 1e-3, 1e-2]),
)
def test_hypothesis_no_counterexample_subsampled_single(
    q: float, sigma: float, eps: float, step: float
) -> None:
    pld = pld_of(PoissonSubsampled(Gaussian(sigma=sigma), sampling_rate=q), Accuracy(grid_step=step))
    b = pld.delta(eps)
    truth = max(poisson_gaussian_delta(sigma, q, eps, add=False), poisson_gaussian_delta(sigma, q, eps, add=True))
    assert b.lower <= truth <= b.upper


@pytest.mark.parametrize(
    "mechanism",
    [EpsilonDelta(1.0, delta=1.0), EpsilonDelta(0.0, delta=0.0), EpsilonDelta(0.0, delta=0.3), EpsilonDelta(50.0, delta=0.0)],
)
def test_degenerate_laws(mechanism: EpsilonDelta) -> None:
    k = 3
    pld = pld_of(mechanism).self_compose(k)
    for e in [0.0, 1.0, 149.0]:
        b = pld.delta(e)
        truth = epsilon_delta_composition_delta(mechanism.epsilon, mechanism.delta, k, e)
        assert b.lower <= truth <= b.upper


def test_asymmetric_compose_commutative_within_error() -> None:
    a = pld_of(PoissonSubsampled(Gaussian(sigma=1.0), sampling_rate=0.1)).self_compose(20)
    b = pld_of(Gaussian(sigma=3.0)).self_compose(2)
    ab, ba = a.compose(b), b.compose(a)
    assert not ab.symmetric
    for e in [0.2, 1.0, 3.0]:
        x, y = ab.delta(e), ba.delta(e)
        assert max(x.lower, y.lower) <= min(x.upper, y.upper)
    ea, eb = ab.epsilon(1e-6), ba.epsilon(1e-6)
    assert max(ea.lower, eb.lower) <= min(ea.upper, eb.upper)


def test_plds_of_different_accuracies_compose_at_the_finer() -> None:
    """Accuracy belongs to the query (issue 25): a PLD holds laws, so composing PLDs of different
    accuracies is the composition at the finer one (the same brackets), certified against GDP."""
    coarse, fine = pld_of(Gaussian(sigma=1.0), COARSE), pld_of(Gaussian(sigma=2.0), TEST).self_compose(3)
    mixed = coarse.compose(fine)
    assert mixed.accuracy == TEST == fine.compose(coarse).accuracy
    same = pld_of(Gaussian(sigma=1.0), TEST).compose(fine)
    mu = math.sqrt(1.0 + 3.0 / 4.0)
    for e in [0.0, 1.0, 3.0]:
        b = mixed.delta(e)
        assert (b.lower, b.upper) == (same.delta(e).lower, same.delta(e).upper)
        assert b.lower <= gdp_delta(mu, e) <= b.upper
    wide = pld_of(Gaussian(sigma=1.0), Accuracy(relative_width=1e-2))  # automatic: the smaller width wins
    assert wide.compose(pld_of(Gaussian(sigma=2.0), DEFAULT_ACCURACY)).accuracy == DEFAULT_ACCURACY


def test_ten_million_steps_give_a_finite_narrow_bracket() -> None:
    pld = pld_of(PoissonSubsampled(Gaussian(sigma=1.0), sampling_rate=1e-3), Accuracy(grid_step=PLD_FINE_STEP))
    b = pld.self_compose(10_000_000).epsilon(1e-5)
    assert 0 < b.lower <= b.upper < math.inf
    assert b.relative_width < 0.1


def test_tail_query_on_concentrated_tilted_laws() -> None:
    """ε(1e-300) of 3×RR(ε1) ⊗ 2×KaryRR(ε2, 4): the tilted FFT concentrates on the top atom (variance
    ~1e-313) and must not overflow its window search; truth ε = 3ε1 + 2ε2 − O(1e-300)."""
    e1, e2 = 1.2681507208363119, 0.0734720324800896
    accuracy = Accuracy(grid_step=COARSE_GRID_STEP)
    rr = pld_of(RandomizedResponse(e1), accuracy)
    kary = pld_of(KaryRandomizedResponse(e2, k=4), accuracy)
    b = rr.self_compose(3).compose(kary.self_compose(2)).epsilon(1e-300)
    assert b.lower <= 3 * e1 + 2 * e2 <= b.upper


def test_epsilon_lower_end_beyond_fft_window() -> None:
    """1000 × asymmetric pair at δ = 1e-100: the certified lower δ exceeds δ past the FFT window's end, so
    the lower ε must keep searching (it returned inf, above the truth ≈ 403, and Bound raised)."""
    p, q, k = 0.5118216247002567, 0.29280281594928975, 1000
    pld = pld_of(DiscretePair((p, 1 - p), (q, 1 - q)), COARSE).self_compose(k)
    b = pld.epsilon(1e-100)
    max_loss = k * max(math.log(p / q), math.log((1 - q) / (1 - p)))
    assert 0.0 < b.lower <= b.upper < max_loss
    assert pld.delta(b.upper).upper <= 1e-100 < pld.delta(b.lower).lower


def test_tilted_bound_does_not_turn_nan_past_the_largest_loss() -> None:
    """50 × asymmetric pair just above max L = 50 ln(p/q): e^{L_c − θx} overflowed times 0 gave a NaN lower
    δ, and ε(1e-100)'s lower end landed above the truth (≈ max L)."""
    p, q, k = 0.2966263296627448, 0.2710374059377919, 50
    pld = pld_of(DiscretePair((p, 1 - p), (q, 1 - q)), COARSE).self_compose(k)
    max_loss = k * math.log(p / q)
    b = pld.delta(max_loss + 0.001)
    assert b.lower == 0.0 <= b.upper
    e = pld.epsilon(1e-100)
    assert e.lower <= max_loss <= e.upper


def test_delta_at_huge_epsilon_is_answered_not_overflowed() -> None:
    """Issue 19: δ(1e308) raised OverflowError; the truth is 0 and the certified bracket contains it."""
    import optcomp
    from optcomp.mechanisms import Gaussian as _Gaussian

    b = optcomp.compose((_Gaussian(1.0), 10)).delta(1e308)
    assert b.lower == 0.0
    assert 0.0 <= b.upper <= 1e-300  # read at the grid's last loss through a deep tilt


@pytest.mark.slow
def test_dpsgd_twenty_million_steps_has_no_internal_nan() -> None:
    """Issue 19: inf·0 in the lower end's test set (a Q-empty bin whose weight overflows) made the CLI
    refuse this valid input; the library answer is [1478.41, 1478.54]."""
    import warnings

    from optcomp import dpsgd

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        b = dpsgd.epsilon(1.1, 0.01, 20_000_000, 1e-5)
    assert 1478.0 < b.lower <= b.upper < 1479.0


def test_no_silent_zero_to_inf_bracket() -> None:
    """10¹³ subsampled Gaussians: the composed FFT error bound overflows at every grid the memory cap
    allows; the engine refuses (GridTooLargeError, a ValueError) instead of answering [0, inf]."""
    import optcomp
    from optcomp import GridTooLargeError
    from optcomp.mechanisms import Gaussian, PoissonSubsampled

    # one level: no finite bracket at any step; two levels (counts √k per level) give a finite but wide
    # bracket at a coarse step, and the refinement then meets the memory cap (docs/pld.md §5a)
    with pytest.raises(GridTooLargeError, match="no finite certified bracket|not reached before the memory cap"):
        optcomp.compose((PoissonSubsampled(Gaussian(1.0), sampling_rate=1e-6), 10**13)).epsilon(1e-5)


def test_no_silent_zero_to_one_delta_bracket() -> None:
    """The δ query refuses what the ε query refuses (above): where the composed error bound reaches 1 at
    every grid, δ(ε) is not answered with the trivial [0, 1] (it was, after the whole refinement schedule,
    while ε(δ) raised) but with GridTooLargeError naming why; with a fixed Accuracy.grid_step too."""
    import optcomp
    from optcomp import GridTooLargeError
    from optcomp.mechanisms import Gaussian, PoissonSubsampled

    huge = optcomp.compose((PoissonSubsampled(Gaussian(1.0), sampling_rate=1e-6), 10**13))
    with pytest.raises(GridTooLargeError, match="no informative certified bracket for delta at epsilon = 1"):
        huge.delta(1.0)
    fixed = optcomp.compose((PoissonSubsampled(Gaussian(1.0), sampling_rate=0.01), 2**40),
                            accuracy=Accuracy(grid_step=327.68))
    with pytest.raises(GridTooLargeError, match="Accuracy.grid_step"):
        fixed.delta(1.0)
    near_one = optcomp.compose((PoissonSubsampled(Gaussian(1.0), sampling_rate=0.01), 2**20)).delta(1.0)
    assert 0.99 < near_one.lower <= near_one.upper == 1.0  # an upper end of 1 alone is an answer: not refused

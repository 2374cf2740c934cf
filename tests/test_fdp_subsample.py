"""Subsampling operator C_p (DRS Thm 4.2) as a certified bracket, noisy-SGD CLT μ, operational readouts."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import optcomp
from optcomp import DEFAULT_ACCURACY
from optcomp import mechanisms as mech
from optcomp.fdp import (
    advantage,
    alpha_grid,
    attack_tpr,
    delta_at,
    epsilon_delta_tradeoff,
    gaussian_tradeoff,
    gdp_epsilon,
    noisy_sgd_mu_estimate,
    subsample,
)
from optcomp.fdp._tradeoff import _lower_hull
from tests._references import gdp_delta as gdp_delta_exact
from tests._references import subsampled_gaussian_delta
from tests.tolerances import CLT_MU_RTOL, EXACT_RTOL, FDP_SUBSAMPLE_WIDTH, METHOD_RTOL

GRID = alpha_grid(401)


def _dense_reference(f, p: float) -> np.ndarray:  # type: ignore[no-untyped-def]
    """min{f_p, f_p⁻¹}** from a much finer sampling (itself ≥ the truth, like the bracket's upper end)."""
    xs = np.unique(np.concatenate([np.linspace(0, 1, 100001), alpha_grid(20001), GRID]))
    fp = p * np.asarray(f(xs)) + (1 - p) * (1 - xs)
    x = np.concatenate([xs, fp, [1.0]])
    y = np.concatenate([fp, xs, [0.0]])
    o = np.lexsort((y, x))
    hx, hy = _lower_hull(x[o], y[o])
    return np.interp(GRID, hx, hy)


@pytest.mark.parametrize("mu,p", [(1.0, 0.1), (2.0, 0.5), (0.5, 0.01)])
def test_subsample_bracket_contains_dense_envelope(mu: float, p: float) -> None:
    b = subsample(gaussian_tradeoff(mu), p)
    lo, hi = b(GRID)
    ref = _dense_reference(gaussian_tradeoff(mu), p)
    assert np.all(lo <= ref)
    assert np.all(lo <= hi)
    assert float(np.max(np.asarray(hi) - np.asarray(lo))) < FDP_SUBSAMPLE_WIDTH


@given(st.floats(0.1, 3.0), st.floats(0.0, 0.2), st.floats(0.01, 1.0))
@settings(max_examples=20, deadline=None)
def test_subsampled_eps_delta_beats_classical_amplification(eps: float, d: float, p: float) -> None:
    # (ε,δ)-DP subsampled without replacement is (log(1 + p(e^ε − 1)), pδ)-DP; C_p is at least as strong.
    b = subsample(epsilon_delta_tradeoff(eps, d), p)
    classical = epsilon_delta_tradeoff(math.log1p(p * math.expm1(eps)), p * d)
    assert b.lower.dominates(classical, atol=METHOD_RTOL)


def test_subsample_p_one_is_identity_on_symmetric() -> None:
    f = gaussian_tradeoff(1.0)
    lo, hi = subsample(f, 1.0)(GRID)
    truth = np.asarray(f(GRID))
    assert np.all(lo <= truth + EXACT_RTOL) and np.all(truth <= hi + EXACT_RTOL)


def test_noisy_sgd_mu_estimate_scaling_and_large_noise_limit() -> None:
    """μ ∝ p√T for both schemes, and both tend to p√T/σ as σ → ∞ (e^{1/σ²} − 1 ≈ 1/σ²; DRS §5's
    e^{1/σ²}Φ(1.5/σ) + 3Φ(−0.5/σ) − 2 ≈ 1/(2σ²)) — a wrong constant in either formula fails this."""
    p, sigma, t = 256 / 60000, 1.1, 15 * 60000 // 256
    for sampling in ("poisson", "without_replacement"):
        mu = noisy_sgd_mu_estimate(p, sigma, t, sampling=sampling)  # type: ignore[arg-type]
        assert noisy_sgd_mu_estimate(p, sigma, 4 * t, sampling=sampling) == pytest.approx(2 * mu)  # type: ignore[arg-type]
        assert noisy_sgd_mu_estimate(2 * p, sigma, t, sampling=sampling) == pytest.approx(2 * mu)  # type: ignore[arg-type]
        big = noisy_sgd_mu_estimate(p, 100.0, t, sampling=sampling)  # type: ignore[arg-type]
        assert big == pytest.approx(p * math.sqrt(t) / 100.0, rel=CLT_MU_RTOL / 10)
    # σ = 1.1: sampling without replacement costs more privacy than Poisson (0.3687 vs 0.2868)
    assert noisy_sgd_mu_estimate(p, sigma, t, sampling="without_replacement") > noisy_sgd_mu_estimate(p, sigma, t)


def test_readouts_on_bracket_contain_the_truth() -> None:
    """advantage, δ(ε) and the attack TPR of C_0.2(G_1) against the mpmath hockey-stick truth."""
    b = subsample(gaussian_tradeoff(1.0), 0.2)
    for eps, got in ((0.0, advantage(b)), (1.0, delta_at(b, 1.0)), (3.0, delta_at(b, 3.0))):
        truth = subsampled_gaussian_delta(1.0, 0.2, eps)
        assert got.lower <= truth <= got.upper
        assert got.width < FDP_SUBSAMPLE_WIDTH
    tpr = attack_tpr(b, 0.05)
    dense = float(np.interp(0.05, GRID, _dense_reference(gaussian_tradeoff(1.0), 0.2)))  # ≥ the true curve
    assert 0.05 < tpr.lower and 1 - dense <= tpr.upper and tpr.width < FDP_SUBSAMPLE_WIDTH


def test_bad_inputs() -> None:
    with pytest.raises(ValueError, match="sampling_rate"):
        subsample(gaussian_tradeoff(1.0), 0.0)
    with pytest.raises(ValueError, match="sampling_rate"):
        subsample(gaussian_tradeoff(1.0), 1.5)
    with pytest.raises(ValueError, match="noise_multiplier"):
        noisy_sgd_mu_estimate(0.1, -1.0, 10)
    with pytest.raises(ValueError, match="steps"):
        noisy_sgd_mu_estimate(0.1, 1.0, 0)
    with pytest.raises(ValueError, match="sampling"):
        noisy_sgd_mu_estimate(0.1, 1.0, 10, sampling="shuffle")  # type: ignore[arg-type]


def test_clt_mu_approaches_certified_pld_as_t_grows() -> None:
    c, sigma, delta = 0.5, 1.0, 1e-5
    gaps = []
    for t in (100, 1600, 6400):
        p = c / math.sqrt(t)
        pld = optcomp.compose((mech.PoissonSubsampled(mech.Gaussian(sigma=sigma), sampling_rate=p), t))
        certified = pld.epsilon(delta)
        eps_clt = gdp_epsilon(noisy_sgd_mu_estimate(p, sigma, t), delta)
        gaps.append(certified.lower - eps_clt)
    assert gaps[0] > gaps[1] > gaps[2] > 0.0


def test_without_replacement_pld_matches_drs_formula_not_poisson() -> None:
    c, sigma, delta, t = 0.5, 1.0, 1e-5, 1600
    p = c / math.sqrt(t)
    pld = optcomp.compose((mech.SubsampledWithoutReplacement(mech.Gaussian(sigma=sigma), sampling_rate=p), t))
    mid = pld.dominating().epsilon(delta).midpoint  # the composed symmetrized law, C_p(G)^⊗t (not the run's lower end)
    wor = gdp_epsilon(noisy_sgd_mu_estimate(p, sigma, t, sampling="without_replacement"), delta)
    poisson = gdp_epsilon(noisy_sgd_mu_estimate(p, sigma, t), delta)
    assert abs(mid - wor) < abs(mid - poisson) / 10


@pytest.mark.parametrize("p", [0.1, 0.5])
def test_single_step_c_p_agrees_with_pld_engine(p: float) -> None:
    pld = optcomp.compose(mech.SubsampledWithoutReplacement(mech.Gaussian(sigma=1.0), sampling_rate=p))
    b = subsample(gaussian_tradeoff(1.0), p)
    for eps in (0.0, 0.3, 1.0):
        ours, theirs = delta_at(b, eps), pld.delta(eps)
        assert ours.lower <= theirs.upper and theirs.lower <= ours.upper
        assert ours.width <= FDP_SUBSAMPLE_WIDTH and theirs.width <= DEFAULT_ACCURACY.relative_width * theirs.upper


def test_from_pld_bracket_contains_gaussian_curve() -> None:
    from optcomp.fdp import from_pld

    pld = optcomp.compose((mech.Gaussian(sigma=2.0), 4))  # 4 × G_0.5 = G_1 (DRS Cor. 3.3)
    b = from_pld(pld, np.linspace(0.0, 8.0, 161))
    lo, hi = b(GRID)
    truth = np.asarray(gaussian_tradeoff(1.0)(GRID))
    assert np.all(lo <= truth + EXACT_RTOL) and np.all(truth <= hi + EXACT_RTOL)


def test_tensor_bracket_contains_exact_composition() -> None:
    from optcomp import tensor_bracket
    from optcomp.fdp import epsilon_delta_composition

    b = tensor_bracket((epsilon_delta_tradeoff(0.1, 1e-4), 100), epsilons=np.linspace(0.0, 6.0, 241))
    lo, hi = b(GRID)
    exact = np.asarray(epsilon_delta_composition(0.1, 1e-4, 100)(GRID))
    assert np.all(lo <= exact + EXACT_RTOL) and np.all(exact <= hi + EXACT_RTOL)


def test_epsilon_at_matches_gdp_epsilon() -> None:
    from optcomp.fdp import epsilon_at

    b = epsilon_at(gaussian_tradeoff(1.0), 1e-5)
    exact = gdp_epsilon(1.0, 1e-5)
    assert b.lower <= exact <= b.upper  # certified: no slack needed
    with pytest.raises(ValueError, match="delta"):
        epsilon_at(gaussian_tradeoff(1.0), 2.0)


def test_readouts_accept_a_pld() -> None:
    pld = optcomp.compose((mech.Gaussian(sigma=2.0), 4))  # G_1
    g = gaussian_tradeoff(1.0)
    assert delta_at(pld, 1.0).contains(float(gdp_delta_exact(1.0, 1.0)))
    tpr = attack_tpr(pld, 0.01)
    assert tpr.lower <= 1 - g(0.01) <= tpr.upper
    adv = advantage(pld)
    assert adv.lower <= float(gdp_delta_exact(1.0, 0.0)) <= adv.upper
    with pytest.raises(ValueError, match="expected"):
        attack_tpr(object(), 0.1)  # type: ignore[arg-type]


def test_subsample_vertices_stay_in_unit_square() -> None:
    """Regression (hypothesis): an extrapolated end line rounded to 1 + 1e-15 made the reflected hull invalid."""
    eps, p = 2.228777793115229, 0.9145123818287437
    b = subsample(epsilon_delta_tradeoff(eps, 0.0), p)
    classical = epsilon_delta_tradeoff(math.log1p(p * math.expm1(eps)), 0.0)
    assert b.lower.dominates(classical, atol=METHOD_RTOL)

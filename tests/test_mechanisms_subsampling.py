"""Subsampled laws against direct computation on the mixture pairs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optcomp.mechanisms import (
    EpsilonDelta,
    Gaussian,
    Laplace,
    PoissonSubsampled,
    PrivacyLossLaw,
    ShiftedTruncatedLaplace,
    SubsampledWithoutReplacement,
    privacy_loss_laws,
)
from tests._references import (
    canonical_pmfs,
    discrete_delta,
    gdp_delta,
    poisson_gaussian_delta,
    poisson_gaussian_log_p_sf,
    poisson_laplace_delta,
)
from tests.test_mechanisms import law_delta, law_total_masses
from tests.tolerances import EXACT_RTOL, GDP_ATOL, LAW_GRID_RTOL, PMF_ATOL


@settings(max_examples=40, deadline=None)
@given(
    sigma=st.floats(0.3, 20.0),
    q=st.one_of(st.just(1.0), st.floats(1e-4, 1.0)),
    epsilon=st.floats(0.0, 5.0),
)
def test_poisson_gaussian_matches_mixture_closed_form(sigma: float, q: float, epsilon: float) -> None:
    remove, add = privacy_loss_laws(PoissonSubsampled(Gaussian(sigma), sampling_rate=q))
    for law, is_add in ((remove, False), (add, True)):
        truth = float(poisson_gaussian_delta(sigma, q, epsilon, add=is_add))
        assert law_delta(law, epsilon) == pytest.approx(truth, rel=EXACT_RTOL, abs=PMF_ATOL)
        p_total, q_total = law_total_masses(law)
        assert p_total == pytest.approx(1.0, rel=EXACT_RTOL)
        assert q_total == pytest.approx(1.0, rel=EXACT_RTOL)


def test_poisson_gaussian_far_tail() -> None:
    """δ around 1e-250: the log tails keep relative accuracy where the mixture is tiny."""
    law, _ = privacy_loss_laws(PoissonSubsampled(Gaussian(0.5), sampling_rate=0.01))
    assert law.continuous is not None
    x = np.array([100.0])
    truth = poisson_gaussian_log_p_sf("0.5", "0.01", 100)
    assert float(truth) < -600
    assert law.continuous.p_logsf(x)[0] == pytest.approx(float(truth), rel=EXACT_RTOL)


def test_poisson_q_is_one_is_base() -> None:
    base = privacy_loss_laws(Gaussian(1.0))
    sub = privacy_loss_laws(PoissonSubsampled(Gaussian(1.0), sampling_rate=1.0))
    for eps in (0.0, 1.0, 3.0):
        assert law_delta(sub[0], eps) == pytest.approx(law_delta(base[0], eps), rel=EXACT_RTOL)
        assert law_delta(sub[1], eps) == pytest.approx(law_delta(base[1], eps), rel=EXACT_RTOL)


@settings(max_examples=60, deadline=None)
@given(
    epsilon=st.floats(0.0, 5.0),
    delta=st.floats(0.0, 1.0),
    q=st.floats(1e-3, 1.0),
    at=st.floats(-2.0, 6.0),
)
def test_poisson_discrete_base_matches_mixture_pmf(epsilon: float, delta: float, q: float, at: float) -> None:
    remove, add = privacy_loss_laws(PoissonSubsampled(EpsilonDelta(epsilon, delta=delta), sampling_rate=q))
    p, qq = canonical_pmfs(epsilon, delta)
    mixture = q * p + (1 - q) * qq
    assert law_delta(remove, at) == pytest.approx(
        discrete_delta(mixture, qq, at), rel=EXACT_RTOL, abs=PMF_ATOL
    )
    assert law_delta(add, at) == pytest.approx(discrete_delta(qq, mixture, at), rel=EXACT_RTOL, abs=PMF_ATOL)
    reference = PrivacyLossLaw.from_discrete(mixture, qq)
    assert remove.p_inf == pytest.approx(reference.p_inf, rel=EXACT_RTOL, abs=PMF_ATOL)
    assert remove.q_neg_inf == pytest.approx(reference.q_neg_inf, rel=EXACT_RTOL, abs=PMF_ATOL)


@settings(max_examples=30, deadline=None)
@given(sigma=st.floats(0.3, 5.0), q=st.floats(1e-3, 0.999))
def test_poisson_p_and_q_laws_consistent(sigma: float, q: float) -> None:
    """dQ = e^{−L} dP on the continuous part: Q(L > x) = ∫_x e^{−l} dP(l)."""
    law, _ = privacy_loss_laws(PoissonSubsampled(Gaussian(sigma), sampling_rate=q))
    assert law.continuous is not None
    lo = law.continuous.lower
    grid = lo + np.expm1(np.linspace(0.0, math.log1p(40.0 + 10.0 / sigma**2), 40001))
    cdf = np.exp(law.continuous.p_logcdf(grid))
    mids = 0.5 * (grid[1:] + grid[:-1])
    assert float(np.sum(np.diff(cdf) * np.exp(-mids))) == pytest.approx(1.0, rel=LAW_GRID_RTOL)


@settings(max_examples=40, deadline=None)
@given(sigma=st.floats(0.3, 10.0), q=st.floats(1e-3, 1.0), epsilon=st.floats(0.0, 4.0))
def test_without_replacement_is_q_times_base_delta(sigma: float, q: float, epsilon: float) -> None:
    """Balle–Barthe–Gaboardi Thm 9 (tight): δ'(ln(1 + q(e^ε − 1))) = q·δ(ε), both directions."""
    remove, add = privacy_loss_laws(SubsampledWithoutReplacement(Gaussian(sigma), sampling_rate=q))
    assert remove is add
    amplified = math.log1p(q * math.expm1(epsilon))
    assert law_delta(remove, amplified) == pytest.approx(
        q * gdp_delta(1 / sigma, epsilon), rel=EXACT_RTOL, abs=GDP_ATOL
    )
    p_total, q_total = law_total_masses(remove)
    assert p_total == pytest.approx(1.0, rel=EXACT_RTOL)
    assert q_total == pytest.approx(1.0, rel=EXACT_RTOL)
    # symmetric: δ(ε) for ε < 0 follows from the swap identity H_a(P||Q) = 1 − a + a·H_{1/a}(Q||P)
    neg = -0.3
    assert law_delta(remove, neg) == pytest.approx(
        1 - math.exp(neg) + math.exp(neg) * law_delta(remove.swapped(), -neg), rel=EXACT_RTOL, abs=PMF_ATOL
    )


@settings(max_examples=40, deadline=None)
@given(epsilon=st.floats(0.0, 5.0), delta=st.floats(0.0, 1.0), q=st.floats(1e-3, 1.0), at=st.floats(0.0, 5.0))
def test_without_replacement_discrete_base(epsilon: float, delta: float, q: float, at: float) -> None:
    law, _ = privacy_loss_laws(SubsampledWithoutReplacement(EpsilonDelta(epsilon, delta=delta), sampling_rate=q))
    p, qq = canonical_pmfs(epsilon, delta)
    amplified = math.log1p(q * math.expm1(at))
    assert law_delta(law, amplified) == pytest.approx(
        q * discrete_delta(p, qq, at), rel=EXACT_RTOL, abs=PMF_ATOL
    )
    p_total, q_total = law_total_masses(law)
    assert p_total == pytest.approx(1.0, rel=EXACT_RTOL)
    assert q_total == pytest.approx(1.0, rel=EXACT_RTOL)


def test_without_replacement_refuses_asymmetric_base() -> None:
    asymmetric = ShiftedTruncatedLaplace(2.0, mean=5.0)
    with pytest.raises(NotImplementedError, match="symmetric"):
        privacy_loss_laws(SubsampledWithoutReplacement(asymmetric, sampling_rate=0.1))


def test_wrappers_refuse_a_base_that_fixes_the_other_relation() -> None:
    poisson = PoissonSubsampled(Gaussian(1.0), sampling_rate=0.5)
    wor = SubsampledWithoutReplacement(Gaussian(1.0), sampling_rate=0.5)
    with pytest.raises(ValueError, match="different neighbouring relations: 'substitution' and 'add_remove'"):
        SubsampledWithoutReplacement(poisson, sampling_rate=0.1)
    with pytest.raises(ValueError, match="different neighbouring relations: 'add_remove' and 'substitution'"):
        PoissonSubsampled(wor, sampling_rate=0.1)
    assert PoissonSubsampled(poisson, sampling_rate=0.5).neighbouring == "add_remove"


@pytest.mark.parametrize("rate", [0.0, -0.1, 1.5, math.nan, True])
@pytest.mark.parametrize("cls", [PoissonSubsampled, SubsampledWithoutReplacement])
def test_sampling_rate_validation(cls: type, rate: float) -> None:
    with pytest.raises(ValueError, match="sampling_rate"):
        cls(Gaussian(1.0), sampling_rate=rate)


def test_neighbouring_relations_are_stated() -> None:
    """Only the subsampling wrappers fix a relation; every base mechanism is relation-agnostic."""
    assert PoissonSubsampled.neighbouring == "add_remove"
    assert SubsampledWithoutReplacement.neighbouring == "substitution"
    from tests.test_mechanisms_consistency import MECHANISMS

    for mechanism in MECHANISMS:
        if not isinstance(mechanism, (PoissonSubsampled, SubsampledWithoutReplacement)):
            assert mechanism.neighbouring is None, mechanism


@pytest.mark.parametrize(("scale", "q"), [(1.0, 0.2), (0.3, 0.05), (2.0, 0.9)])
@pytest.mark.parametrize("epsilon", [-0.2, 0.0, 0.02, 0.3])
def test_poisson_laplace_by_quadrature(scale: float, q: float, epsilon: float) -> None:
    remove, add = privacy_loss_laws(PoissonSubsampled(Laplace(scale), sampling_rate=q))
    for law, is_add in ((remove, False), (add, True)):
        truth = poisson_laplace_delta(scale, q, epsilon, add=is_add)
        assert law_delta(law, epsilon) == pytest.approx(truth, rel=EXACT_RTOL, abs=PMF_ATOL)
    p_total, q_total = law_total_masses(remove)
    assert p_total == pytest.approx(1.0, rel=EXACT_RTOL)
    assert q_total == pytest.approx(1.0, rel=EXACT_RTOL)


@pytest.mark.parametrize(("scale", "q"), [(1.0, 0.2), (0.3, 0.05)])
@pytest.mark.parametrize("epsilon", [0.0, 0.3, 1.5])
def test_without_replacement_laplace(scale: float, q: float, epsilon: float) -> None:
    law, _ = privacy_loss_laws(SubsampledWithoutReplacement(Laplace(scale), sampling_rate=q))
    base, _ = privacy_loss_laws(Laplace(scale))
    amplified = math.log1p(q * math.expm1(epsilon))
    assert law_delta(law, amplified) == pytest.approx(
        q * law_delta(base, epsilon), rel=EXACT_RTOL, abs=PMF_ATOL
    )
    p_total, q_total = law_total_masses(law)
    assert p_total == pytest.approx(1.0, rel=EXACT_RTOL)
    assert q_total == pytest.approx(1.0, rel=EXACT_RTOL)


@pytest.mark.parametrize("cls", [PoissonSubsampled, SubsampledWithoutReplacement])
def test_base_mechanism_validation(cls: type) -> None:
    with pytest.raises(ValueError, match="mechanism"):
        cls(1.0, sampling_rate=0.5)


def test_subnormal_sampling_rate_has_no_internal_nan() -> None:
    """q = 5e-324: (1 − q)/q and (eˣ − 1)/q overflow; the law keeps them in log space (the inverse
    dpsgd.noise_multiplier(1.0, 5e-324, 1, 1e-5) used to see NaNs and report that no σ meets ε ≤ 1)."""
    import warnings

    import optcomp
    from optcomp import dpsgd
    from optcomp.mechanisms import Gaussian, PoissonSubsampled

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        b = optcomp.compose((PoissonSubsampled(Gaussian(1.0), sampling_rate=5e-324), 1)).epsilon(1e-5)
        assert b.lower == 0.0 <= b.upper
        sigma = dpsgd.noise_multiplier(1.0, 5e-324, 1, 1e-5)
        assert dpsgd.epsilon(sigma, 5e-324, 1, 1e-5).upper <= 1.0

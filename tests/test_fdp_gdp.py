"""Gaussian DP closed forms: δ(ε) against 50-digit mpmath, inversions, composition, group privacy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optcomp.fdp import (
    delta_at,
    gaussian_tradeoff,
    gdp_compose,
    gdp_delta,
    gdp_epsilon,
    gdp_group,
    gdp_log_delta,
    gdp_mu_for,
    group_privacy,
    tensor,
)
from tests._references import gdp_composed_mu
from tests._references import gdp_delta as _mp_delta
from tests._references import gdp_log_delta as _mp_log_delta
from tests.tolerances import EXACT_RTOL, GDP_ATOL, GDP_RTOL

MUS = [0.5, 1.0, 2.0, 4.0]
EPSILONS = [0.0, 0.5, 1.0, 3.0]


@pytest.mark.parametrize("mu", MUS)
@pytest.mark.parametrize("eps", EPSILONS)
def test_gdp_delta_matches_mpmath(mu: float, eps: float) -> None:
    truth = float(_mp_delta(mu, eps))
    assert gdp_delta(mu, eps) == pytest.approx(truth, rel=GDP_RTOL, abs=GDP_ATOL)


@pytest.mark.parametrize("mu,eps", [(0.5, 10.0), (0.05, 1.0), (1.0, 50.0), (0.1, 30.0)])
def test_gdp_log_delta_far_tail_matches_mpmath(mu: float, eps: float) -> None:
    truth = float(_mp_log_delta(mu, eps))
    assert gdp_log_delta(mu, eps) == pytest.approx(truth, rel=GDP_RTOL)


def test_gdp_delta_underflows_to_zero_within_atol() -> None:
    assert gdp_delta(0.05, 3.0) == pytest.approx(float(_mp_delta(0.05, 3.0)), abs=GDP_ATOL)
    assert gdp_log_delta(0.05, 3.0) < -700.0


def test_gdp_delta_vectorised_and_edges() -> None:
    eps = np.array(EPSILONS)
    out = gdp_delta(1.0, eps)
    assert isinstance(out, np.ndarray) and out.shape == eps.shape
    assert np.all(np.diff(out) < 0)
    assert gdp_delta(0.0, 1.0) == 0.0
    assert gdp_delta(1.0, math.inf) == 0.0


@pytest.mark.parametrize("mu", MUS)
@pytest.mark.parametrize("eps", [0.5, 1.0, 3.0])
def test_gdp_epsilon_inverts_delta(mu: float, eps: float) -> None:
    d = gdp_delta(mu, eps)
    e = gdp_epsilon(mu, d)
    assert e >= eps - EXACT_RTOL * max(1.0, eps)
    assert e == pytest.approx(eps, abs=EXACT_RTOL * max(1.0, eps) * 10)
    assert gdp_delta(mu, e) <= d


def test_gdp_epsilon_edges_and_vectorised() -> None:
    assert gdp_epsilon(1.0, 0.0) == math.inf
    assert gdp_epsilon(1.0, 1.0) == 0.0
    assert gdp_epsilon(1.0, 0.9) == 0.0  # δ(0) = 2Φ(1/2) − 1 ≈ 0.383
    out = gdp_epsilon(1.0, np.array([1e-5, 1e-3]))
    assert isinstance(out, np.ndarray) and out[0] > out[1] > 0


@given(st.floats(0.0, 5.0), st.floats(2.0**-40, 0.5))
@settings(max_examples=30, deadline=None)
def test_gdp_mu_for_is_safe_and_tight(eps: float, delta: float) -> None:
    mu = gdp_mu_for(eps, delta)
    assert gdp_delta(mu, eps) <= delta
    assert gdp_delta(mu * (1 + 1e-6) + 1e-9, eps) > delta


def test_gdp_composition_identity() -> None:
    mus = [0.3, 0.4, 1.2]
    assert gdp_compose(mus) == pytest.approx(math.sqrt(sum(m * m for m in mus)), rel=EXACT_RTOL)
    g = tensor(*[gaussian_tradeoff(m) for m in mus])
    a = np.linspace(0, 1, 101)
    np.testing.assert_allclose(g(a), gaussian_tradeoff(1.3)(a), rtol=EXACT_RTOL, atol=EXACT_RTOL)


def test_gdp_group_privacy_identity() -> None:
    assert gdp_group(0.7, 3) == pytest.approx(2.1)
    # The general operator 1 − (1 − f)^{∘k} on G_μ reproduces G_{kμ}: evaluate it through a generic wrapper.
    from optcomp.fdp import TradeOff

    class Wrapped(TradeOff):
        def _evaluate(self, alpha: np.ndarray) -> np.ndarray:
            return np.asarray(gaussian_tradeoff(0.7)(alpha))

    a = np.linspace(0, 1, 101)
    np.testing.assert_allclose(group_privacy(Wrapped(), 3)(a), gaussian_tradeoff(2.1)(a), atol=EXACT_RTOL)


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: gdp_delta(-1.0, 1.0), "mu"),
        (lambda: gdp_delta(1.0, -0.5), "epsilon"),
        (lambda: gdp_delta(float("nan"), 1.0), "mu"),
        (lambda: gdp_epsilon(1.0, 1.5), "delta"),
        (lambda: gdp_mu_for(1.0, 0.0), "delta"),
        (lambda: gdp_mu_for(-1.0, 0.1), "epsilon"),
        (lambda: gdp_group(1.0, 0), "k"),
        (lambda: gaussian_tradeoff(-0.1), "mu"),
    ],
)
def test_bad_inputs_raise(call: object, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        call()  # type: ignore[operator]


@pytest.mark.parametrize(
    ("mu", "eps"),
    [(0.0050325154793973495, 0.10716769476107833), (0.0013831826701098103, 0.0024158059767425506), (2.4e-6, 0.0)],
)
def test_delta_at_gaussian_contains_truth_for_small_mu(mu: float, eps: float) -> None:
    """Small μ: the closed form cancels (error ≈ u·|a|/μ, ~4e-12 relative); the certified readout covers it."""
    b = delta_at(gaussian_tradeoff(mu), eps)
    truth = _mp_delta(mu, eps)
    assert b.lower <= truth <= b.upper


@given(
    st.lists(st.tuples(st.floats(1e-300, 1e300), st.integers(0, 10**12)), min_size=1, max_size=6),
)
@settings(max_examples=200, deadline=None)
def test_gdp_compose_with_counts_is_within_its_stated_error(terms: list[tuple[float, int]]) -> None:
    """√(Σ kᵢμᵢ²) within 4.5u of the 50-digit value, whatever the range of the squares (rescaled path)."""
    mus = [m for m, _ in terms]
    counts = [k for _, k in terms]
    truth = gdp_composed_mu((m, 1.0, k) for m, k in terms)
    ours = gdp_compose(mus, counts)
    if truth == 0:
        assert ours == 0.0
        return
    assert abs(ours - float(truth)) <= 4.5 * 2.0**-53 * float(truth) * (1 + 1e-12)


def test_gdp_compose_counts_are_the_list_it_stands_for() -> None:
    assert gdp_compose([0.5], [4]) == 1.0 == gdp_compose([0.5] * 4)
    assert gdp_compose([3.0, 4.0]) == 5.0
    assert gdp_compose([1e200, 1e200]) == pytest.approx(math.sqrt(2) * 1e200, rel=1e-15)  # squares overflow
    assert gdp_compose([3e-200, 4e-200]) == pytest.approx(5e-200, rel=1e-15)  # squares underflow
    assert gdp_compose([]) == 0.0 and gdp_compose([2.0], [0]) == 0.0
    with pytest.raises(ValueError, match="counts must have one entry per mu"):
        gdp_compose([1.0, 2.0], [1])
    with pytest.raises(ValueError, match=r"counts\[0\]"):
        gdp_compose([1.0], [-1])


def test_gdp_compose_subnormal_square_takes_the_rescaled_path() -> None:
    """μ = 9.17e-156, k = 265: μ² is subnormal (8.4e-311) although kμ² is normal; the direct path lost 30 ulps
    (hypothesis found it). The rescaled path is within the stated 4.5u."""
    truth = float(gdp_composed_mu([(9.17e-156, 1.0, 265)]))
    assert abs(gdp_compose([9.17e-156], [265]) - truth) <= 4.5 * 2.0**-53 * truth

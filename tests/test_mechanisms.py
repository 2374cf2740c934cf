"""Laws of the basic mechanisms against direct numerical computation of their (P, Q) pair."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optcomp.mechanisms import EpsilonDelta, Gaussian, PrivacyLossLaw, privacy_loss_laws
from tests._references import (
    canonical_pmfs,
    discrete_delta,
    gaussian_delta_by_quadrature,
    gaussian_loss_log_sf,
    gdp_delta,
)
from tests.tolerances import EXACT_RTOL, GDP_ATOL, LAW_GRID_RTOL, PMF_ATOL


def law_delta(law: PrivacyLossLaw, epsilon: float) -> float:
    """δ_{P||Q}(ε) = E_P[(1 − e^{ε−L})_+] from a law: atoms, +∞ mass and P(L>ε) − e^ε Q(L>ε)."""
    above = law.atom_losses > epsilon
    total = law.p_inf + math.fsum(law.atom_p[above] - math.exp(epsilon) * law.atom_q[above])
    if law.continuous is not None:
        x = np.array([epsilon])
        total += math.exp(law.continuous.p_logsf(x)[0]) - math.exp(epsilon + law.continuous.q_logsf(x)[0])
    return total


def law_total_masses(law: PrivacyLossLaw) -> tuple[float, float]:
    """Total P- and Q-mass of a law (should both be 1)."""
    p, q = law.p_inf + law.atom_p.sum(), law.q_neg_inf + law.atom_q.sum()
    if law.continuous is not None:
        lo = np.array([-np.inf])
        p += math.exp(law.continuous.p_logsf(lo)[0])
        q += math.exp(law.continuous.q_logsf(lo)[0])
    return p, q


# --- Gaussian -------------------------------------------------------------------------------------


@pytest.mark.parametrize("sigma", [0.3, 1.0, 5.0])
@pytest.mark.parametrize("epsilon", [0.0, 0.5, 2.0, 10.0])
def test_gaussian_delta_matches_gdp_closed_form(sigma: float, epsilon: float) -> None:
    remove, add = privacy_loss_laws(Gaussian(sigma))
    truth = float(gdp_delta(1.0 / sigma, epsilon))
    assert law_delta(remove, epsilon) == pytest.approx(truth, rel=EXACT_RTOL, abs=GDP_ATOL)
    assert remove is add


def test_gaussian_far_tail_matches_mpmath() -> None:
    law, _ = privacy_loss_laws(Gaussian(0.5, sensitivity=1.0))
    x = np.array([60.0])
    truth_p, truth_q = gaussian_loss_log_sf(2.0, 60.0)
    assert law.continuous is not None
    assert law.continuous.p_logsf(x)[0] == pytest.approx(float(truth_p), rel=EXACT_RTOL)
    assert law.continuous.q_logsf(x)[0] == pytest.approx(float(truth_q), rel=EXACT_RTOL)
    assert math.exp(law.continuous.p_logsf(x)[0]) < 1e-180


def test_gaussian_delta_by_quadrature() -> None:
    sigma, delta_s, epsilon = 1.3, 0.7, 0.4
    law, _ = privacy_loss_laws(Gaussian(sigma, sensitivity=delta_s))
    truth = gaussian_delta_by_quadrature(sigma, delta_s, epsilon)
    assert law_delta(law, epsilon) == pytest.approx(truth, rel=EXACT_RTOL)


@settings(max_examples=40, deadline=None)
@given(sigma=st.floats(0.2, 50.0), sens=st.floats(0.1, 2.0))
def test_gaussian_p_and_q_laws_consistent(sigma: float, sens: float) -> None:
    law, _ = privacy_loss_laws(Gaussian(sigma, sensitivity=sens))
    p_total, q_total = law_total_masses(law)
    assert p_total == pytest.approx(1.0, rel=EXACT_RTOL)
    assert q_total == pytest.approx(1.0, rel=EXACT_RTOL)
    # dQ = e^{-L} dP: compare Q(L > x) with a quadrature of e^{-l} dP(l) on a grid.
    assert law.continuous is not None
    mu = sens / sigma
    lo, hi = -mu * mu / 2 - 8 * mu, mu * mu / 2 + 8 * mu
    grid = np.linspace(lo, hi, int((hi - lo) / 0.005) + 2)
    cdf = np.exp(law.continuous.p_logcdf(grid))
    mids = 0.5 * (grid[1:] + grid[:-1])
    e_q = float(np.sum(np.diff(cdf) * np.exp(-mids)))
    assert e_q == pytest.approx(1.0, rel=LAW_GRID_RTOL)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"sigma": 0.0}, "sigma"),
        ({"sigma": -1.0}, "sigma"),
        ({"sigma": math.nan}, "sigma"),
        ({"sigma": math.inf}, "sigma"),
        ({"sigma": True}, "sigma"),
        ({"sigma": 1.0, "sensitivity": 0.0}, "sensitivity"),
        ({"sigma": 1.0, "sensitivity": math.nan}, "sensitivity"),
    ],
)
def test_gaussian_validation(kwargs: dict[str, float], name: str) -> None:
    with pytest.raises(ValueError, match=name):
        Gaussian(**kwargs)


# --- EpsilonDelta ---------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    epsilon=st.floats(0.0, 20.0),
    delta=st.one_of(st.just(0.0), st.just(1.0), st.floats(0.0, 1.0)),
    at=st.floats(0.0, 25.0),
)
def test_epsilon_delta_law_matches_canonical_pmfs(epsilon: float, delta: float, at: float) -> None:
    remove, add = privacy_loss_laws(EpsilonDelta(epsilon, delta=delta))
    p, q = canonical_pmfs(epsilon, delta)
    assert remove is add
    assert law_delta(remove, at) == pytest.approx(discrete_delta(p, q, at), rel=EXACT_RTOL, abs=PMF_ATOL)
    reference = PrivacyLossLaw.from_discrete(p, q)
    assert remove.p_inf == reference.p_inf and remove.q_neg_inf == reference.q_neg_inf
    p_total, q_total = law_total_masses(remove)
    assert p_total == pytest.approx(1.0, rel=EXACT_RTOL)
    assert q_total == pytest.approx(1.0, rel=EXACT_RTOL)


@pytest.mark.parametrize(
    ("args", "name"),
    [
        ((-0.1, 0.0), "epsilon"),
        ((math.nan, 0.0), "epsilon"),
        ((1.0, 1.5), "delta"),
        ((1.0, -0.1), "delta"),
        ((1.0, math.nan), "delta"),
        ((math.inf, 0.0), "epsilon"),
    ],
)
def test_epsilon_delta_validation(args: tuple[float, float], name: str) -> None:
    with pytest.raises(ValueError, match=name):
        EpsilonDelta(args[0], delta=args[1])


def test_unknown_mechanism_raises_type_error() -> None:
    with pytest.raises(TypeError, match="mechanism"):
        privacy_loss_laws(object())

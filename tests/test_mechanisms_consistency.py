"""Every law, every mechanism: P- and Q-sides consistent (dQ = e^{−L} dP) and total mass 1."""

from __future__ import annotations

import math

import numpy as np
import pytest

from optcomp.mechanisms import (
    DiscreteLaplace,
    DiscretePair,
    EpsilonDelta,
    Gaussian,
    KaryRandomizedResponse,
    Laplace,
    PoissonSubsampled,
    PrivacyLossLaw,
    RandomizedResponse,
    ShiftedTruncatedLaplace,
    SubsampledWithoutReplacement,
    TruncatedLaplace,
    privacy_loss_laws,
)
from tests.test_mechanisms import law_delta, law_total_masses
from tests.tolerances import EXACT_RTOL, PMF_ATOL

MECHANISMS = [
    Gaussian(1.0),
    Gaussian(0.3, sensitivity=2.0),
    EpsilonDelta(1.0, 1e-3),
    RandomizedResponse(2.0),
    KaryRandomizedResponse(1.0, 7),
    DiscretePair((0.2, 0.3, 0.5, 0.0), (0.1, 0.0, 0.6, 0.3)),
    DiscreteLaplace(0.8, 3),
    Laplace(0.5),
    TruncatedLaplace(1.0, 2.5),
    TruncatedLaplace(1.0, 0.8),
    ShiftedTruncatedLaplace(12.4, 2.0, 2),
    PoissonSubsampled(Gaussian(0.8), 0.05),
    PoissonSubsampled(Laplace(1.0), 0.3),
    PoissonSubsampled(EpsilonDelta(1.0, 1e-2), 0.2),
    PoissonSubsampled(PoissonSubsampled(Gaussian(1.0), 0.5), 0.5),
    SubsampledWithoutReplacement(Gaussian(1.0, sensitivity=2.0), 0.1),
    SubsampledWithoutReplacement(Laplace(1.0), 0.4),
    SubsampledWithoutReplacement(EpsilonDelta(0.5, 1e-3), 0.3),
]


def check_cellwise(law: PrivacyLossLaw) -> None:
    """On every grid cell [a, b]: P(cell)·e^{−b} ≤ Q(cell) ≤ P(cell)·e^{−a} (continuous part)."""
    c = law.continuous
    if c is None:
        return
    lo, hi = max(c.lower, -30.0), min(c.upper, 30.0)
    x = np.linspace(lo, hi, 30001)
    with np.errstate(over="ignore"):
        p_cell = np.diff(np.exp(c.p_logcdf(x)))
        q_cell = np.diff(np.exp(c.q_logcdf(x)))
    slack = PMF_ATOL + EXACT_RTOL * q_cell
    assert np.all(q_cell <= p_cell * np.exp(-x[:-1]) + slack)
    assert np.all(q_cell >= p_cell * np.exp(-x[1:]) - slack)
    # log cdf and log sf agree: P(L ≤ x) + P(L > x) = total continuous mass
    total_p = math.exp(float(c.p_logsf(np.array([-np.inf]))[0]))
    np.testing.assert_allclose(np.exp(c.p_logcdf(x)) + np.exp(c.p_logsf(x)), total_p, rtol=EXACT_RTOL)
    total_q = math.exp(float(c.q_logsf(np.array([-np.inf]))[0]))
    np.testing.assert_allclose(np.exp(c.q_logcdf(x)) + np.exp(c.q_logsf(x)), total_q, rtol=EXACT_RTOL)


@pytest.mark.parametrize("mechanism", MECHANISMS, ids=repr)
def test_law_consistency(mechanism: object) -> None:
    remove, add = privacy_loss_laws(mechanism)
    for law in (remove, add):
        p_total, q_total = law_total_masses(law)
        assert p_total == pytest.approx(1.0, rel=EXACT_RTOL)
        assert q_total == pytest.approx(1.0, rel=EXACT_RTOL)
        np.testing.assert_allclose(law.atom_q, law.atom_p * np.exp(-law.atom_losses), rtol=EXACT_RTOL)
        check_cellwise(law)
    # the add law is the law of the swapped pair: δ_add(ε) = 1 − e^ε + e^ε δ_remove(−ε)
    for eps in (0.0, 0.4, 1.5):
        swapped = 1 - math.exp(eps) + math.exp(eps) * law_delta(remove, -eps)
        assert law_delta(add, eps) == pytest.approx(swapped, rel=EXACT_RTOL, abs=PMF_ATOL)

"""Every law, every mechanism: P- and Q-sides consistent (dQ = e^{−L} dP) and total mass 1."""

from __future__ import annotations

import math

import numpy as np
import pytest

from optcomp._numerics import SMALLEST_NORMAL
from optcomp.mechanisms import (
    DiscreteGaussian,
    DiscreteLaplace,
    DiscretePair,
    EpsilonDelta,
    Gaussian,
    KaryRandomizedResponse,
    Laplace,
    MixtureOfGaussians,
    PoissonSubsampled,
    PrivacyLossLaw,
    RandomizedResponse,
    ShiftedTruncatedLaplace,
    Staircase,
    SubsampledWithoutReplacement,
    TruncatedLaplace,
    TruncatedPoissonGaussian,
    privacy_loss_laws,
)
from tests._references import without_replacement_laplace_log_q_sf
from tests.test_mechanisms import law_delta, law_total_masses
from tests.tolerances import EXACT_RTOL, PMF_ATOL

MECHANISMS = [
    Gaussian(1.0),
    Gaussian(0.3, sensitivity=2.0),
    EpsilonDelta(1.0, delta=1e-3),
    RandomizedResponse(2.0),
    KaryRandomizedResponse(1.0, k=7),
    DiscretePair((0.2, 0.3, 0.5, 0.0), (0.1, 0.0, 0.6, 0.3)),
    DiscreteLaplace(0.8, sensitivity=3),
    Laplace(0.5),
    TruncatedLaplace(1.0, truncation=2.5),
    TruncatedLaplace(1.0, truncation=0.8),
    ShiftedTruncatedLaplace(2.0, mean=12.4, sensitivity=2),
    PoissonSubsampled(Gaussian(0.8), sampling_rate=0.05),
    PoissonSubsampled(Laplace(1.0), sampling_rate=0.3),
    PoissonSubsampled(EpsilonDelta(1.0, delta=1e-2), sampling_rate=0.2),
    PoissonSubsampled(PoissonSubsampled(Gaussian(1.0), sampling_rate=0.5), sampling_rate=0.5),
    SubsampledWithoutReplacement(Gaussian(1.0, sensitivity=2.0), sampling_rate=0.1),
    SubsampledWithoutReplacement(Laplace(1.0), sampling_rate=0.4),
    SubsampledWithoutReplacement(EpsilonDelta(0.5, delta=1e-3), sampling_rate=0.3),
    SubsampledWithoutReplacement(Laplace(0.01), sampling_rate=0.5),
    PoissonSubsampled(Gaussian(0.05), sampling_rate=1e-6),
    Staircase(1.0, gamma=0.3),
    Staircase(2.0, gamma=0.8, sensitivity=3.0),
    Staircase(0.5),
    PoissonSubsampled(Staircase(1.5, gamma=0.0), sampling_rate=0.1),
    MixtureOfGaussians(1.0, sensitivities=(0.0, 1.0, 2.0), probabilities=(0.5, 0.3, 0.2)),
    MixtureOfGaussians(0.3, sensitivities=(0.5, 3.0), probabilities=(0.9, 0.1)),
    MixtureOfGaussians(5.0, sensitivities=tuple(float(j) for j in range(9)), probabilities=(0.2,) + (0.1,) * 8),
    DiscreteGaussian(1.0),
    DiscreteGaussian(0.3, sensitivity=2),
    DiscreteGaussian(2.0, shift=(3, 4)),
    DiscreteGaussian(1.5, sensitivity=1.5, dimension=3),
    PoissonSubsampled(DiscreteGaussian(1.0), sampling_rate=0.1),
    SubsampledWithoutReplacement(DiscreteGaussian(1.0, sensitivity=2), sampling_rate=0.1),
]

#: Mechanisms that fix a relation other than the subsampling wrappers (issue 17): same invariants.
RELATION_FIXING = [
    TruncatedPoissonGaussian(1.1, dataset_size=1000, sampling_rate=0.05, max_batch_size=55),
    TruncatedPoissonGaussian(0.7, dataset_size=40, sampling_rate=0.5, max_batch_size=12),
]


def check_monotone(law: PrivacyLossLaw) -> None:
    """Log tails finite or −inf, never NaN or positive, and monotone to rounding, from −inf to +inf."""
    c = law.continuous
    if c is None:
        return
    x = np.concatenate([[-np.inf, c.lower, c.upper, np.inf], np.linspace(-800.0, 800.0, 4001)])
    x = np.sort(np.concatenate([x, -np.logspace(-12, 3, 61), np.logspace(-12, 3, 61)]))
    for name in ("p_logsf", "p_logcdf", "q_logsf", "q_logcdf"):
        v = getattr(c, name)(x)
        assert not np.any(np.isnan(v)) and np.all(v <= 0.0), name
        finite = np.isfinite(v[1:]) & np.isfinite(v[:-1])
        step = (v[1:][finite] - v[:-1][finite]) * (1.0 if name.endswith("cdf") else -1.0)
        assert np.all(step >= -EXACT_RTOL * np.maximum(1.0, np.abs(v[1:][finite]))), name


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


@pytest.mark.parametrize("mechanism", MECHANISMS + RELATION_FIXING, ids=repr)
def test_law_consistency(mechanism: object) -> None:
    remove, add = privacy_loss_laws(mechanism)
    for law in (remove, add):
        p_total, q_total = law_total_masses(law)
        assert p_total == pytest.approx(1.0, rel=EXACT_RTOL)
        assert q_total == pytest.approx(1.0, rel=EXACT_RTOL)
        # below the normal range a mass keeps only absolute accuracy (a discrete Gaussian's far atoms)
        normal = (law.atom_p >= SMALLEST_NORMAL) & (law.atom_q >= SMALLEST_NORMAL)
        np.testing.assert_allclose(law.atom_q[normal], (law.atom_p * np.exp(-law.atom_losses))[normal], rtol=EXACT_RTOL)
        check_cellwise(law)
        check_monotone(law)
    # the add law is the law of the swapped pair: δ_add(ε) = 1 − e^ε + e^ε δ_remove(−ε)
    for eps in (0.0, 0.4, 1.5):
        swapped = 1 - math.exp(eps) + math.exp(eps) * law_delta(remove, -eps)
        assert law_delta(add, eps) == pytest.approx(swapped, rel=EXACT_RTOL, abs=PMF_ATOL)


def test_without_replacement_middle_mass_keeps_relative_accuracy() -> None:
    """WOR Laplace(b = 0.01), q = 1/2: R's continuous mass sits at both ends of (ln ½, 100); the mass in
    between (e^{−33}) is not a difference of numbers near ½ (regression)."""
    law, _ = privacy_loss_laws(SubsampledWithoutReplacement(Laplace(0.01), sampling_rate=0.5))
    assert law.continuous is not None
    for t in (36.0, 10.0, 1.0):
        log_truth = without_replacement_laplace_log_q_sf(100, "0.5", t)
        value = law.continuous.q_logsf(np.array([-t]))[0]
        assert value == pytest.approx(float(log_truth), rel=EXACT_RTOL)

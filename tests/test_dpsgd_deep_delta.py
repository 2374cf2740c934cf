"""DP-SGD inverses at deep δ: answered and certified down to ``MIN_INVERSE_DELTA`` = 1e−300, refused by name
below it (where the PLD engine's upper ε is loose or infinite and the σ search used to run for minutes)."""

from __future__ import annotations

import mpmath
import pytest

from optcomp import dpsgd


def _gaussian_sigma(epsilon: float, delta: float, steps: int) -> mpmath.mpf:
    """σ at which T full-batch Gaussian steps (μ = √T/σ GDP, exact) meet (ε, δ): 60-digit bisection on
    δ(ε) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ). Subsampling only adds privacy, so DP-SGD's least σ is below it."""
    with mpmath.workdps(60):
        def delta_at(sigma: mpmath.mpf) -> mpmath.mpf:
            mu = mpmath.sqrt(steps) / sigma
            return mpmath.ncdf(mu / 2 - epsilon / mu) - mpmath.exp(epsilon) * mpmath.ncdf(-mu / 2 - epsilon / mu)

        lo, hi = mpmath.mpf(1), mpmath.mpf(10**4)
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if delta_at(mid) > delta else (lo, mid)
        return hi


def test_noise_multiplier_at_delta_1e120_is_certified() -> None:
    sigma = dpsgd.noise_multiplier(20.0, 0.01, 1000, 1e-120)
    assert dpsgd.epsilon(sigma, 0.01, 1000, 1e-120).upper <= 20.0
    assert sigma < _gaussian_sigma(20.0, 1e-120, 1000)


@pytest.mark.parametrize("delta", [1e-301, 1e-310, 5e-324])
def test_inverses_below_the_supported_delta_are_refused_by_name(delta: float) -> None:
    with pytest.raises(ValueError, match=r"delta must be in \[1e-300, 1\)"):
        dpsgd.noise_multiplier(20.0, 0.01, 1000, delta)
    with pytest.raises(ValueError, match=r"delta must be in \[1e-300, 1\)"):
        dpsgd.steps(20.0, 2.0, 0.01, delta)

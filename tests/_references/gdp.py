"""Gaussian differential privacy: δ_μ(ε) and its inverses (Dong–Roth–Su §2.4, Cor. 2.13)."""

from __future__ import annotations

from collections.abc import Iterable

import mpmath

from tests.tolerances import MPMATH_DPS


def gdp_delta(mu: float, epsilon: float) -> mpmath.mpf:
    """δ(ε) of μ-GDP: Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (Dong–Roth–Su, "Gaussian Differential Privacy",
    Cor. 2.13 "GDP to DP"). Arguments in the order of the paper's δ_μ(ε): μ first, then ε."""
    with mpmath.workdps(MPMATH_DPS):
        m, e = mpmath.mpf(mu), mpmath.mpf(epsilon)
        if m == 0:
            return mpmath.mpf(0)
        return mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)


def gdp_epsilon(mu: float, delta: float) -> mpmath.mpf:
    """The ε with δ_μ(ε) = δ (δ_μ is strictly decreasing in ε), by bisection at ``MPMATH_DPS`` digits."""
    with mpmath.workdps(MPMATH_DPS):
        target = mpmath.mpf(delta)
        lo, hi = mpmath.mpf(0), mpmath.mpf(1)
        while gdp_delta(mu, float(hi)) > target:
            hi *= 2
        for _ in range(200):
            mid = (lo + hi) / 2
            m, e = mpmath.mpf(mu), mid
            val = mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)
            if val > target:
                lo = mid
            else:
                hi = mid
        return hi


def gdp_mu(epsilon: float, delta: float) -> float:
    """The largest μ whose GDP ε(δ) is ≤ ε, i.e. the root of δ_μ(ε) = δ in μ (δ_μ(ε) is increasing in μ), by
    120 bisection steps at ``MPMATH_DPS`` digits; the lower end, as a float."""
    with mpmath.workdps(MPMATH_DPS):
        lo, hi = mpmath.mpf(0), mpmath.mpf(1)
        while gdp_delta(float(hi), epsilon) < delta:
            hi *= 2
        for _ in range(120):
            mid = (lo + hi) / 2
            if gdp_delta(mid, epsilon) < delta:
                lo = mid
            else:
                hi = mid
        return float(lo)


def gdp_log_delta(mu: float, epsilon: float) -> mpmath.mpf:
    """log δ_μ(ε) at ``MPMATH_DPS`` digits (the log of ``gdp_delta``, for the far tail)."""
    with mpmath.workdps(MPMATH_DPS):
        return mpmath.log(gdp_delta(mu, epsilon))


def gdp_composed_mu(terms: Iterable[tuple[float, float, int]]) -> mpmath.mpf:
    """μ = √(Σ kᵢ (Δᵢ/σᵢ)²) of the composition of kᵢ Gaussians of sensitivity Δᵢ and noise σᵢ, each
    Δᵢ/σᵢ-GDP (Dong–Roth–Su Cor 3.3), at ``MPMATH_DPS`` digits; ``terms`` are (Δᵢ, σᵢ, kᵢ)."""
    with mpmath.workdps(MPMATH_DPS):
        return mpmath.sqrt(mpmath.fsum(k * (mpmath.mpf(d) / mpmath.mpf(s)) ** 2 for d, s, k in terms))

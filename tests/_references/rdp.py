"""Rényi divergences by mpmath quadrature, with the densities they integrate (Mironov 2017, Def. 3)."""

from __future__ import annotations

from collections.abc import Callable

import mpmath

from tests.tolerances import MPMATH_DPS

Density = Callable[[mpmath.mpf], mpmath.mpf]


def renyi_divergence(p: Density, q: Density, alpha: float, lo: float, hi: float, points: list[float]) -> mpmath.mpf:
    """D_α(P‖Q) = log ∫ p^α q^{1−α} / (α − 1) (Mironov 2017, Def. 3) by mpmath quadrature on [lo, hi] split at
    ``points``, at ``MPMATH_DPS // 2`` digits (the densities are evaluated at that precision)."""
    with mpmath.workdps(MPMATH_DPS // 2):
        a = mpmath.mpf(alpha)
        integral = mpmath.quad(lambda x: p(x) ** a * q(x) ** (1 - a), [lo, *points, hi])
        return mpmath.log(integral) / (a - 1)


def normal_pdf(mean: float, sigma: float) -> Density:
    """The density of N(mean, σ²)."""
    return lambda x: mpmath.npdf(x, mean, sigma)


def laplace_pdf(loc: float, scale: float) -> Density:
    """The density e^{−|x − loc|/b}/(2b) of Laplace(loc, b)."""
    return lambda x: mpmath.exp(-abs(x - loc) / scale) / (2 * scale)


def gaussian_mixture_pdf(sigma: float, sampling_rate: float) -> Density:
    """The density of (1 − q)N(0, σ²) + qN(1, σ²), the Poisson-subsampled Gaussian's P (remove)."""
    q = sampling_rate
    return lambda x: (1 - q) * mpmath.npdf(x, 0, sigma) + q * mpmath.npdf(x, 1, sigma)

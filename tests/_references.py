"""Independent reference values for the tests, computed from the papers' formulas with mpmath.

One home for every closed form the tests compare against (never a copy per test file). Each function
evaluates the formula as written in the paper, at ``MPMATH_DPS`` digits, without going through any
optcomp code, and returns an ``mpmath.mpf`` (callers convert with ``float`` where they need to).
"""

from __future__ import annotations

import mpmath

from tests.tolerances import MPMATH_DPS

__all__ = [
    "epsilon_delta_composition_delta",
    "gdp_delta",
    "gdp_epsilon",
    "subsampled_gaussian_delta",
]


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


def epsilon_delta_composition_delta(epsilon: float, delta: float, k: int, epsilon_g: float) -> mpmath.mpf:
    """Optimal δ at ε_g of the k-fold composition of (ε, δ)-DP (Kairouz–Oh–Viswanath, "The Composition
    Theorem for Differential Privacy", Thm III.3; Murtagh–Vadhan Thm 1.4):

    δ = 1 − (1 − δ)^k (1 − δ'),  δ' = (1 + e^ε)^{−k} Σ_{ℓ : (k−2ℓ)ε > ε_g} C(k, ℓ)(e^{(k−ℓ)ε} − e^{ε_g + ℓε}),

    evaluated as Δ + (1 − Δ)δ' with Δ = 1 − (1 − δ)^k so that a tiny δ' is not lost in 1 − (1 − δ').
    """
    with mpmath.workdps(MPMATH_DPS + 20):
        e, eg, d = mpmath.mpf(epsilon), mpmath.mpf(epsilon_g), mpmath.mpf(delta)
        pure = mpmath.fsum(
            mpmath.binomial(k, ell) * (mpmath.exp((k - ell) * e) - mpmath.exp(eg + ell * e))
            for ell in range(k + 1)
            if (k - 2 * ell) * e > eg
        ) / (1 + mpmath.exp(e)) ** k
        big = 1 - (1 - d) ** k
        return big + (1 - big) * pure


def subsampled_gaussian_delta(mu: float, sampling_rate: float, epsilon: float) -> mpmath.mpf:
    """δ(ε) of C_p(G_μ) (Dong–Roth–Su Thm 4.2), the max of the two hockey-stick divergences of the pair
    P = N(0, 1), Q = (1 − p)N(0, 1) + pN(μ, 1) (f_p = T(P, Q); the convex hull of min{f_p, f_p⁻¹} has the
    max of the two conjugates):

    H(Q‖P) = (1 − p)Φ(−x₁) + pΦ(μ − x₁) − e^ε Φ(−x₁), x₁ = (log((e^ε − 1 + p)/p) + μ²/2)/μ;
    H(P‖Q) = Φ(x₂) − e^ε[(1 − p)Φ(x₂) + pΦ(x₂ − μ)], x₂ = (log((e^{−ε} − 1 + p)/p) + μ²/2)/μ, when e^{−ε} > 1 − p.
    """
    with mpmath.workdps(MPMATH_DPS):
        m, p, e = mpmath.mpf(mu), mpmath.mpf(sampling_rate), mpmath.mpf(epsilon)
        x1 = (mpmath.log((mpmath.exp(e) - 1 + p) / p) + m * m / 2) / m
        d1 = (1 - p) * mpmath.ncdf(-x1) + p * mpmath.ncdf(m - x1) - mpmath.exp(e) * mpmath.ncdf(-x1)
        d2 = mpmath.mpf(0)
        if mpmath.exp(-e) > 1 - p:
            x2 = (mpmath.log((mpmath.exp(-e) - 1 + p) / p) + m * m / 2) / m
            d2 = mpmath.ncdf(x2) - mpmath.exp(e) * ((1 - p) * mpmath.ncdf(x2) + p * mpmath.ncdf(x2 - m))
        return max(d1, d2, mpmath.mpf(0))

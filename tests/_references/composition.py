"""Composition of (ε, δ)-DP: the optimal theorems (KOV Thm III.3, Murtagh–Vadhan Thms 1.4/1.5) and the
classic closed forms (DRV, KOV Thm III.4, Smith–Ullman), term by term in mpmath."""

from __future__ import annotations

from collections.abc import Sequence

import mpmath

from tests.tolerances import MPMATH_DPS


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
        big = -mpmath.expm1(k * mpmath.log1p(-d))  # 1 − (1 − δ)^k without cancelling a tiny δ
        return big + (1 - big) * pure


def classic_closed_forms(epsilon: float, delta: float, k: int, delta_slack: float) -> dict[str, mpmath.mpf]:
    """The classic composition theorems' closed forms at ``MPMATH_DPS`` digits (``optcomp.bounds``):
    DRV advanced ε = kε(e^ε − 1) + ε√(2k ln(1/δ̃)) (KOV Thm III.2), lecture-notes ε =
    kε tanh(ε/2) + ε√(2k ln(1/δ̃)) (Smith–Ullman Thm 1.1), KOV ε = min{kε, kε tanh(ε/2) +
    ε√(2k ln(e + √k ε/δ̃)), kε tanh(ε/2) + ε√(2k ln(1/δ̃))} and δ = 1 − (1 − δ)^k (1 − δ̃) (KOV Thm III.4),
    the TV bound δ + (1 − δ) tanh(ε/2) (KOV Remark A.1(b)) and KOV Cor V.1's ε₀ = ε/√(4k ln(e + ε/δ))."""
    with mpmath.workdps(MPMATH_DPS):
        e, d, s, kk = mpmath.mpf(epsilon), mpmath.mpf(delta), mpmath.mpf(delta_slack), mpmath.mpf(k)
        drift = kk * e * mpmath.tanh(e / 2)
        root = e * mpmath.sqrt(2 * kk * mpmath.log(1 / s))
        return {
            "drv": kk * e * mpmath.expm1(e) + root,
            "notes": drift + root,
            "kov": min(kk * e, drift + e * mpmath.sqrt(2 * kk * mpmath.log(mpmath.e + mpmath.sqrt(kk) * e / s)), drift + root),
            "kov_delta": -mpmath.expm1(kk * mpmath.log1p(-d) + mpmath.log1p(-s)),  # 1 − (1 − δ)^k (1 − δ̃)
            "tv": total_variation_bound(epsilon, delta),
            "per_query": e / mpmath.sqrt(4 * kk * mpmath.log(mpmath.e + e / d)) if d > 0 else mpmath.mpf(0),
        }


def kov_corollary_v1(epsilon: float, delta: float, k: int) -> tuple[mpmath.mpf, mpmath.mpf]:
    """(ε₀, σ²) of KOV Cor V.1 at ``MPMATH_DPS`` digits: the per-query budget ε₀ = √(ε²/(4k ln(e + ε/δ)))
    (with δ₀ = δ/(2k)) and the Gaussian noise variance σ² = 8k ln(e + ε/δ)/ε² for a unit-sensitivity query."""
    with mpmath.workdps(MPMATH_DPS):
        var = 8 * k * mpmath.log(mpmath.e + mpmath.mpf(epsilon) / delta) / epsilon**2
        e0 = mpmath.sqrt(epsilon**2 / (4 * k * mpmath.log(mpmath.e + mpmath.mpf(epsilon) / delta)))
        return e0, var


def delta_floor(deltas: Sequence[float]) -> mpmath.mpf:
    """1 − Π(1 − δᵢ) at ``MPMATH_DPS`` digits: the composed loss's mass at +∞, the least δ_g any ε reaches
    (KOV Thm III.3 / Murtagh–Vadhan Thm 1.5: δ_g = 1 − Π(1 − δᵢ)(1 − δ′) with δ′ ≥ 0)."""
    with mpmath.workdps(MPMATH_DPS):
        return 1 - mpmath.fprod(1 - mpmath.mpf(d) for d in deltas)


def no_failure_probability(delta: float, k: int) -> mpmath.mpf:
    """(1 − δ)^k at 30 digits: the P-mass that k (ε, δ) steps leave off the +∞ atom (KOV Thm III.3's
    (1 − δ)^k factor), the value of the composed trade-off curve at α = 0."""
    with mpmath.workdps(30):
        return (1 - mpmath.mpf(delta)) ** k


def total_variation_bound(epsilon: float, delta: float) -> mpmath.mpf:
    """δ + (1 − δ) tanh(ε/2) = 1 − 2(1 − δ)/(1 + e^ε), the total-variation distance any (ε, δ)-DP pair can
    reach (KOV Remark A.1(b)), at ``MPMATH_DPS`` digits."""
    with mpmath.workdps(MPMATH_DPS):
        e, d = mpmath.mpf(epsilon), mpmath.mpf(delta)
        return d + (1 - d) * mpmath.tanh(e / 2)

"""References for the ledger's release kinds of issue 35 item 4 and the planner's discrete Gaussian.

* :func:`laplace_renyi` — D_α of the Laplace pair Lap(0, 1) vs Lap(ε, 1), Mironov 2017 Prop 6:
  (1/(α−1))·log[α/(2α−1)·e^{(α−1)ε} + (α−1)/(2α−1)·e^{−αε}];
* :func:`laplace_kl` — its limit α → 1, the KL divergence ε + e^{−ε} − 1;
* :func:`cks_epsilon` — (α, αρ)-RDP ⇒ (αρ + log(1 − 1/α) − (log δ + log α)/(α − 1), δ)-DP (Canonne–Kamath–
  Steinke 2020 Prop 12), the least over a grid of orders;
* :func:`discrete_gaussian_half_width` — the least m ≥ 0 with P(|X| ≥ m + 1) ≤ β for X ~ N_ℤ(0, σ²), the
  masses e^{−x²/(2σ²)}/Z summed (|x| ≤ 60σ + 20; the rest is below 10⁻⁷⁰⁰).

Each works at its own precision (``dps``) and returns mpmath numbers (compare them with :func:`as_mpf` of an
exact rational).
"""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction

import mpmath


def as_mpf(x: Fraction, dps: int = 150) -> mpmath.mpf:
    """An exact rational at ``dps`` digits (the quotient rounded once)."""
    with mpmath.workdps(dps):
        return mpmath.mpf(x.numerator) / x.denominator


def laplace_renyi(epsilon: Fraction, alpha: mpmath.mpf | float, dps: int = 150) -> mpmath.mpf:
    """D_α(Lap(0, 1) ‖ Lap(ε, 1)) (Mironov 2017 Prop 6), at ``dps`` digits."""
    with mpmath.workdps(dps):
        e, a = as_mpf(epsilon, dps), mpmath.mpf(alpha)
        return +(mpmath.log(a / (2 * a - 1) * mpmath.exp((a - 1) * e) + (a - 1) / (2 * a - 1) * mpmath.exp(-a * e))
                 / (a - 1))


def laplace_renyi_orders(dps: int = 150) -> list[mpmath.mpf]:
    """Orders from 1 + 10⁻¹² to 10⁴: 1 + 10⁻ᵏ (k = 1..12; the last one first in the list is 1 + 10⁻¹),
    then 9/8 to 399/8 in steps of 1/8, then 10², 10³, 10⁴."""
    with mpmath.workdps(dps):
        out = [1 + mpmath.mpf(10) ** -k for k in range(1, 13)] + [mpmath.mpf(x) / 8 for x in range(9, 400)]
        return out + [mpmath.mpf(10) ** k for k in range(2, 5)]


def laplace_kl(epsilon: Fraction, dps: int = 150) -> mpmath.mpf:
    """KL(Lap(0, 1) ‖ Lap(ε, 1)) = ε + e^{−ε} − 1, at ``dps`` digits."""
    with mpmath.workdps(dps):
        e = as_mpf(epsilon, dps)
        return +(e + mpmath.expm1(-e))


def cks_epsilon(rho: Fraction, delta: Fraction, alphas: Iterable[mpmath.mpf | float], dps: int = 40) -> mpmath.mpf:
    """min over ``alphas`` of αρ + log(1 − 1/α) − (log δ + log α)/(α − 1) (CKS 2020 Prop 12)."""
    with mpmath.workdps(dps):
        r, d = as_mpf(rho, dps), as_mpf(delta, dps)
        return min(r * a + mpmath.log(1 - 1 / a) - (mpmath.log(d) + mpmath.log(a)) / (a - 1)
                   for a in (mpmath.mpf(x) for x in alphas))


def orders_grid(step: float = 0.01, count: int = 20000) -> list[float]:
    """1 + step·i for i = 1..count−1 (the grid :func:`cks_epsilon` is searched on)."""
    return [1 + step * i for i in range(1, count)]


def discrete_gaussian_half_width(sigma: float, beta: float, dps: int = 40) -> int:
    """The least m ≥ 0 with P(|X| ≥ m + 1) ≤ β, X ~ N_ℤ(0, σ²) (module docstring)."""
    with mpmath.workdps(dps):
        s2 = 2 * mpmath.mpf(sigma) ** 2
        top = int(60 * sigma) + 20
        w = [mpmath.exp(-mpmath.mpf(x * x) / s2) for x in range(top + 1)]
        z = w[0] + 2 * mpmath.fsum(w[1:])
        m = 0
        while 2 * mpmath.fsum(w[m + 1:]) / z > beta:
            m += 1
        return m

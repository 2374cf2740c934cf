"""The staircase mechanism (Geng–Viswanath, "The optimal noise-adding mechanism in differential privacy",
2016): its density read off the definition, and δ, moments and k-fold δ integrated or enumerated exactly."""

from __future__ import annotations

import itertools
import math

import mpmath

from tests.tolerances import MPMATH_DPS


def staircase_density(x: mpmath.mpf, eps: mpmath.mpf, gamma: mpmath.mpf, sens: mpmath.mpf) -> mpmath.mpf:
    """Geng–Viswanath's staircase density, read off its definition: a on [0, γΔ), a·e^{−ε} on [γΔ, Δ),
    and that period repeated with an extra factor e^{−kε} on [kΔ, (k+1)Δ); symmetric."""
    b = mpmath.exp(-eps)
    a = (1 - b) / (2 * sens * (gamma + (1 - gamma) * b))
    t = abs(x) / sens
    k = mpmath.floor(t)
    return a * b**k * (1 if t - k < gamma else b)


def _staircase_breakpoints(gamma: float, sens: float, periods: int) -> list[mpmath.mpf]:
    """Every point where f(y) or f(y − Δ) can jump, on [−periods·Δ, (periods + 1)·Δ]."""
    pts = set()
    for k in range(-periods - 1, periods + 2):
        for off in (0, gamma, -gamma):
            for shift in (0, 1):
                pts.add((k + off + shift) * mpmath.mpf(sens))
    return sorted(p for p in pts if -periods * sens <= p <= (periods + 1) * sens)


def staircase_delta(eps: float, gamma: float, sens: float, eps_prime: float) -> mpmath.mpf:
    """δ(ε') = ∫ max(f(y − Δ) − e^{ε'} f(y), 0) dy of the staircase density f (``staircase_density``), exactly on
    every cell of constancy at ``MPMATH_DPS`` digits, tails beyond ±NΔ (N = ⌈80/ε⌉) ignored (their mass is below
    e^{−Nε}/2, far below the tolerance)."""
    with mpmath.workdps(MPMATH_DPS):
        e, g, d = mpmath.mpf(eps), mpmath.mpf(gamma), mpmath.mpf(sens)
        periods = math.ceil(80.0 / eps)
        pts = _staircase_breakpoints(gamma, sens, periods)
        total = mpmath.mpf(0)
        for lo, hi in itertools.pairwise(pts):
            mid = (lo + hi) / 2
            total += max(staircase_density(mid - d, e, g, d) - mpmath.exp(eps_prime) * staircase_density(mid, e, g, d), 0) * (hi - lo)
        return total


def staircase_moments(eps: float, gamma: float, sens: float) -> tuple[mpmath.mpf, mpmath.mpf]:
    """(E|X|, E X²) of the staircase noise, integrated exactly (piecewise constant density, ``staircase_density``)
    over N = ⌈100/ε⌉ periods on each side, at ``MPMATH_DPS`` digits (Geng–Viswanath's moments by definition)."""
    with mpmath.workdps(MPMATH_DPS):
        e, g, d = mpmath.mpf(eps), mpmath.mpf(gamma), mpmath.mpf(sens)
        periods = math.ceil(100.0 / eps)
        second = first = mpmath.mpf(0)
        for k in range(periods):
            for lo, hi in (((k) * d, (k + g) * d), ((k + g) * d, (k + 1) * d)):
                if hi > lo:
                    level = staircase_density((lo + hi) / 2, e, g, d)
                    second += 2 * level * (hi**3 - lo**3) / 3
                    first += 2 * level * (hi**2 - lo**2) / 2
        return first, second


def three_atom_kfold_delta(eps: float, p_plus: float, p_minus: float, p_zero: float, k: int, eps_prime: float) -> float:
    """δ(ε') of k steps whose loss is +ε, −ε or 0 with P-masses (p₊, p₋, p₀) (the staircase's law): the
    trinomial sum Σ_{(n₊ − n₋)ε > ε'} k!/(n₊! n₋! n₀!) p₊^{n₊} p₋^{n₋} p₀^{n₀} (1 − e^{ε' − (n₊ − n₋)ε}), the loss
    (n₊ − n₋)ε taken in float as the engine sees it, at ``MPMATH_DPS`` digits, as a float."""
    with mpmath.workdps(MPMATH_DPS):
        truth = mpmath.mpf(0)
        for plus in range(k + 1):
            for minus in range(k + 1 - plus):
                zero = k - plus - minus
                loss = (plus - minus) * eps
                if loss > eps_prime:
                    weight = mpmath.factorial(k) / (mpmath.factorial(plus) * mpmath.factorial(minus) * mpmath.factorial(zero))
                    pmass = weight * mpmath.mpf(p_plus) ** plus * mpmath.mpf(p_minus) ** minus * mpmath.mpf(p_zero) ** zero
                    truth += pmass * (1 - mpmath.exp(eps_prime - loss))
        return float(truth)

"""The staircase mechanism (Geng–Viswanath, "The optimal noise-adding mechanism in differential privacy").

**Noise.** For ε > 0, γ ∈ [0, 1] and sensitivity Δ > 0, with b = e^{−ε}, the staircase density is
piecewise constant and symmetric,

    f(x) = a(γ)·b^{m(|x|)},   m(t) = ⌊t/Δ + 1 − γ⌋   (t ≥ 0),
    a(γ) = (1 − b) / (2Δ(γ + (1 − γ)b)),

i.e. a on |x| < γΔ, a·b on γΔ ≤ |x| < Δ, and the same two steps repeated on every [kΔ, (k+1)Δ) with an
extra factor b^k (Geng–Viswanath, Definition of the staircase-shaped distribution, eq. (staircase)).
Normalisation: 2Σ_k b^k·aΔ(γ + (1 − γ)b) = 2aΔ(γ + (1 − γ)b)/(1 − b) = 1.

**Privacy loss.** Pair P = Δ + X, Q = X (shift by the full sensitivity). L(y) = ln f(y − Δ) − ln f(y)
= ε·(m(|y|) − m(|y − Δ|)). Shifting by Δ adds exactly one step, so L = +ε for y ≥ Δ and −ε for y ≤ 0;
on (0, Δ), with c = min(γ, 1 − γ), L = −ε on (0, cΔ), 0 on the middle piece of length |1 − 2γ|Δ and +ε on
(Δ − cΔ, Δ). Hence the law is three atoms (derived in full in ``docs/papers.md``):

    P(L = +ε) = 1/2 + aΔc,     P(L = −ε) = b·P(L = +ε),     P(L = 0) = 1 − (1 + b)·P(L = +ε),

with Q(L = ℓ) = e^{−ℓ}P(L = ℓ). The reflection y ↦ Δ − y swaps P and Q, so the pair is symmetric. At
γ = 1/2 the middle atom vanishes and the law is that of randomized response RR(ε); for every γ the
mechanism is (ε, 0)-DP and δ(ε') = P(L = ε)(1 − e^{ε'−ε}) for 0 ≤ ε' ≤ ε.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar, Literal

from optcomp._numerics import POSITIVE, PROBABILITY, Domain, check_positive, check_probability
from optcomp.mechanisms._dispatch import LawPair, privacy_loss_laws
from optcomp.mechanisms._spec import Neighbouring, validate_parameters
from optcomp.mechanisms.discrete import merged_law

#: Cost functions for which Geng–Viswanath give the optimal γ in closed form.
Cost = Literal["l1", "l2"]


def _density_level(epsilon: float, gamma: float, sensitivity: float) -> float:
    """a(γ) = (1 − b)/(2Δ(γ + (1 − γ)b)), b = e^{−ε}: the density on |x| < γΔ."""
    b = math.exp(-epsilon)
    return -math.expm1(-epsilon) / (2.0 * sensitivity * (gamma + (1.0 - gamma) * b))


@dataclass(frozen=True, slots=True)
class Staircase:
    """Staircase mechanism f(D) + X on a query of ℓ₁-sensitivity Δ: (ε, 0)-DP (Geng–Viswanath).

    The noise density is the staircase of the module docstring; ``gamma`` places the step inside each
    period of length Δ (γ = 1/2 has the privacy-loss law of randomized response; the γ minimising the
    expected ℓ₁ or ℓ₂ cost is :func:`optimal_gamma`). Law: module docstring.

    Attributes:
        epsilon: ε > 0 (the ratio of consecutive density levels is e^{−ε}).
        gamma: γ in [0, 1], keyword-only; default: the ℓ₂-optimal γ for ``epsilon``.
        sensitivity: Δ > 0, keyword-only.
    """

    epsilon: float
    gamma: float
    sensitivity: float
    neighbouring: ClassVar[Neighbouring | None] = None
    domains: ClassVar[Mapping[str, Domain]] = {"epsilon": POSITIVE, "gamma": PROBABILITY, "sensitivity": POSITIVE}

    def __init__(self, epsilon: float, *, gamma: float | None = None, sensitivity: float = 1.0) -> None:
        eps = POSITIVE.validate("epsilon", epsilon)
        object.__setattr__(self, "epsilon", eps)
        object.__setattr__(self, "gamma", optimal_gamma(eps, "l2") if gamma is None else gamma)
        object.__setattr__(self, "sensitivity", sensitivity)
        validate_parameters(self)

    @property
    def variance(self) -> float:
        """E[X²] of the noise in closed form (:func:`staircase_variance`)."""
        return staircase_variance(self.epsilon, self.gamma, sensitivity=self.sensitivity)

    @property
    def mean_absolute(self) -> float:
        """E|X| of the noise in closed form (:func:`staircase_mean_absolute`)."""
        return staircase_mean_absolute(self.epsilon, self.gamma, sensitivity=self.sensitivity)


def _geometric_moments(b: float) -> tuple[float, float, float]:
    """S₀ = Σ_k b^k, S₁ = Σ_k k b^k, S₂ = Σ_k k² b^k over k ≥ 0 (0 ≤ b < 1), with 1 − b = −expm1(ln b)."""
    one_minus = 1.0 - b
    return 1.0 / one_minus, b / one_minus**2, b * (1.0 + b) / one_minus**3


def staircase_variance(epsilon: float, gamma: float, *, sensitivity: float = 1.0) -> float:
    """Variance E[X²] of staircase noise (Geng–Viswanath; derived by summing the steps).

    With b = e^{−ε} and S_n = Σ_{k≥0} kⁿbᵏ (S₀ = 1/(1−b), S₁ = b/(1−b)², S₂ = b(1+b)/(1−b)³):

        E[X²] = (2aΔ³/3)·[3γS₂ + 3γ²S₁ + γ³S₀ + b(3(1−γ)S₂ + 3(1−γ²)S₁ + (1−γ³)S₀)],

    from ∫_{kΔ}^{(k+γ)Δ} x² dx = Δ³((k+γ)³ − k³)/3 and ∫_{(k+γ)Δ}^{(k+1)Δ} x² dx = Δ³((k+1)³ − (k+γ)³)/3.

    Args:
        epsilon: ε > 0.
        gamma: γ in [0, 1].
        sensitivity: Δ > 0.
    """
    eps = check_positive("epsilon", epsilon)
    g = check_probability("gamma", gamma)
    d = check_positive("sensitivity", sensitivity)
    b = math.exp(-eps)
    s0, s1, s2 = _geometric_moments(b)
    a_delta = _density_level(eps, g, 1.0)  # aΔ (dimensionless)
    inner = 3 * g * s2 + 3 * g * g * s1 + g**3 * s0 + b * (3 * (1 - g) * s2 + 3 * (1 - g * g) * s1 + (1 - g**3) * s0)
    return 2.0 * a_delta * d * d * inner / 3.0


def staircase_mean_absolute(epsilon: float, gamma: float, *, sensitivity: float = 1.0) -> float:
    """E|X| of staircase noise: (2aΔ²/2)·[2γS₁ + γ²S₀ + b(2(1−γ)S₁ + (1−γ²)S₀)] (same sums as the variance).

    Args:
        epsilon: ε > 0.
        gamma: γ in [0, 1].
        sensitivity: Δ > 0.
    """
    eps = check_positive("epsilon", epsilon)
    g = check_probability("gamma", gamma)
    d = check_positive("sensitivity", sensitivity)
    b = math.exp(-eps)
    s0, s1, _ = _geometric_moments(b)
    a_delta = _density_level(eps, g, 1.0)
    inner = 2 * g * s1 + g * g * s0 + b * (2 * (1 - g) * s1 + (1 - g * g) * s0)
    return a_delta * d * inner


def optimal_gamma(epsilon: float, cost: Cost = "l2") -> float:
    """The γ minimising the expected cost of staircase noise, in closed form (Geng–Viswanath).

    * ``cost="l1"`` (E|X|): γ* = 1/(1 + e^{ε/2}) (Geng–Viswanath, Theorem on the ℓ₁ cost, minimal noise
      amplitude).
    * ``cost="l2"`` (E[X²]): with b = e^{−ε}, γ* = −b/(1−b) + (b − 2b² + 2b⁴ − b⁵)^{1/3}/(2^{1/3}(1−b)²)
      (Geng–Viswanath, Theorem on the ℓ₂ cost, minimal noise power). Since b − 2b² + 2b⁴ − b⁵ =
      b(1+b)(1−b)³ this is ((b(1+b)/2)^{1/3} − b)/(1 − b), evaluated as b·expm1((2ε + ln((1+b)/2))/3)/(1−b)
      to avoid the cancellation of the printed form for small ε; its limit at ε → 0 is 1/2.

    Both are checked in ``tests/test_staircase.py`` against a numerical minimisation of
    :func:`staircase_mean_absolute` / :func:`staircase_variance`.

    Args:
        epsilon: ε > 0.
        cost: ``"l1"`` or ``"l2"``.
    """
    eps = check_positive("epsilon", epsilon)
    if cost == "l1":
        return 1.0 / (1.0 + math.exp(eps / 2.0))
    if cost == "l2":
        # (b(1+b)/2)^{1/3} − b = b·expm1((2ε + ln(1 − (1−b)/2))/3): no cancellation for small ε.
        one_minus = -math.expm1(-eps)
        gap = math.exp(-eps) * math.expm1((2.0 * eps + math.log1p(-one_minus / 2.0)) / 3.0)
        return gap / one_minus
    raise ValueError(f"cost must be one of ('l1', 'l2'), got {cost!r}")


@privacy_loss_laws.register
def _staircase_laws(mechanism: Staircase) -> LawPair:
    eps, g = mechanism.epsilon, mechanism.gamma
    b = math.exp(-eps)
    a_delta = _density_level(eps, g, 1.0)
    high = 0.5 + a_delta * min(g, 1.0 - g)  # P(L = +ε) = 1/2 + aΔ·min(γ, 1 − γ)
    low = b * high  # P(L = −ε)
    # P(L = 0) = 1 − (1 + b)P(L = +ε) = (1 − b)|1 − 2γ|·w / (2(γ + (1 − γ)b)), w = b (γ ≤ 1/2) or 1:
    # the same number without the cancellation of the difference (exactly 0 at γ = 1/2).
    w = b if g <= 0.5 else 1.0
    zero = -math.expm1(-eps) * abs(1.0 - 2.0 * g) * w / (2.0 * (g + (1.0 - g) * b))
    law = merged_law([-eps, 0.0, eps], [low, zero, high], [high, zero, low])
    return (law, law)

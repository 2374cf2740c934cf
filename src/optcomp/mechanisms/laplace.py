"""Laplace-type mechanisms: Laplace, truncated Laplace, and the shifted, truncated (rounded) Laplace noise
of Vuvuzela's dummy traffic.

**Laplace and truncated Laplace.** Noise density ∝ e^{−|x|/b} on [−A, A] (A = ∞: Laplace), pair
P = Δ + noise, Q = noise, ε = Δ/b. On the overlap of the supports the loss is
L(x) = (|x| − |x − Δ|)/b: +ε for x ≥ Δ, −ε for x ≤ 0 and (2x − Δ)/b in between, so the law has atoms at
±ε and a continuous part on (ℓ₀, −ℓ₀), ℓ₀ = max(−ε, (Δ − 2A)/b). With Z = 1 − e^{−A/b}:

    P(L ≤ ℓ, continuous) = e^{(ℓ₀−ε)/2}·expm1((ℓ − ℓ₀)/2) / (2Z),
    P(L > ℓ, continuous) = e^{(ℓ−ε)/2}·expm1((−ℓ₀ − ℓ)/2) / (2Z),

and the Q-law is the P-law of −L (reflection x ↦ Δ − x swaps P and Q): the pair is symmetric. The
atoms (present for A > Δ) carry P-mass (1 − e^{−(A−Δ)/b})/(2Z) at +ε and e^{−ε} times that at −ε.
Truncation leaves P-mass where Q has none: p_inf = q_neg_inf = noise mass above A − Δ.
For A = ∞ these reduce to the familiar P(L = ε) = 1/2, P(L = −ε) = e^{−ε}/2.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass
from typing import ClassVar

import numpy as np

from optcomp._numerics import NONNEGATIVE, POSITIVE, POSITIVE_OR_INF, Domain, FloatArray, integers
from optcomp._rounding import log_expm1
from optcomp.mechanisms._dispatch import LawPair, privacy_loss_laws
from optcomp.mechanisms._group import group_mechanism, group_sensitivity
from optcomp.mechanisms._law import PrivacyLossLaw
from optcomp.mechanisms._spec import Neighbouring, check_loss_scale, validate_parameters
from optcomp.mechanisms._tails import as_array
from optcomp.mechanisms.discrete import merged_law


@dataclass(frozen=True, slots=True)
class LaplaceLoss:
    """Continuous part of the (truncated) Laplace law (module docstring).

    Attributes:
        epsilon: ε = Δ/b.
        lower: ℓ₀ = max(−ε, (Δ − 2A)/b) < 0; the support is (ℓ₀, −ℓ₀).
        log_norm: ln(1/(2Z)).
    """

    epsilon: float
    lower: float
    log_norm: float

    @property
    def upper(self) -> float:
        return -self.lower

    def _clip(self, x: FloatArray) -> FloatArray:
        return np.clip(as_array(x), self.lower, self.upper)

    def p_logcdf(self, x: FloatArray) -> FloatArray:
        """log[e^{(ℓ₀−ε)/2}·expm1((ℓ − ℓ₀)/2)/(2Z)]."""
        return (
            self.log_norm + 0.5 * (self.lower - self.epsilon) + log_expm1(0.5 * (self._clip(x) - self.lower))
        )

    def p_logsf(self, x: FloatArray) -> FloatArray:
        """log[e^{(ℓ−ε)/2}·expm1((−ℓ₀ − ℓ)/2)/(2Z)]."""
        ell = self._clip(x)
        return self.log_norm + 0.5 * (ell - self.epsilon) + log_expm1(0.5 * (self.upper - ell))

    def q_logsf(self, x: FloatArray) -> FloatArray:
        """Q(L > ℓ) = P(L < −ℓ)."""
        return self.p_logcdf(-as_array(x))

    def q_logcdf(self, x: FloatArray) -> FloatArray:
        """Q(L ≤ ℓ) = P(L ≥ −ℓ)."""
        return self.p_logsf(-as_array(x))


def _truncated_laplace_law(scale: float, sensitivity: float, truncation: float) -> PrivacyLossLaw:
    """The law of the module docstring for noise on [−A, A] (A = ``truncation``, possibly ∞)."""
    b, delta_s, a = scale, sensitivity, truncation
    eps = delta_s / b
    two_z = 2.0 * -math.expm1(-a / b)  # 2Z, = 2 for A = ∞
    if delta_s >= 2.0 * a:
        return PrivacyLossLaw(p_inf=1.0, q_neg_inf=1.0)
    if a >= delta_s:
        p_inf = math.exp(-(a - delta_s) / b) * -math.expm1(-eps) / two_z if math.isfinite(a) else 0.0
    else:
        p_inf = 0.5 + -math.expm1((a - delta_s) / b) / two_z
    lower = max(-eps, (delta_s - 2.0 * a) / b)
    continuous = LaplaceLoss(epsilon=eps, lower=lower, log_norm=-math.log(two_z))
    if a > delta_s:
        high = -math.expm1(-(a - delta_s) / b) / two_z  # P-mass at +ε
        low = math.exp(-eps) * high  # P-mass at −ε
        return PrivacyLossLaw(
            atom_losses=np.array([-eps, eps]),
            atom_p=np.array([low, high]),
            atom_q=np.array([high, low]),
            p_inf=p_inf,
            q_neg_inf=p_inf,
            continuous=continuous,
        )
    return PrivacyLossLaw(p_inf=p_inf, q_neg_inf=p_inf, continuous=continuous)


@dataclass(frozen=True, slots=True)
class Laplace:
    """Laplace mechanism f(D) + Lap(b) on a query of ℓ₁-sensitivity Δ: ε-DP with ε = Δ/b.

    ``Laplace(scale, *, sensitivity=1.0)``. Pair P = Lap(Δ, b), Q = Lap(0, b) (symmetric;
    relation-agnostic). Law: module docstring with A = ∞.

    Attributes:
        scale: noise scale b > 0.
        sensitivity: ℓ₁-sensitivity Δ > 0.
    """

    scale: float
    _: KW_ONLY
    sensitivity: float = 1.0
    neighbouring: ClassVar[Neighbouring | None] = None
    domains: ClassVar[Mapping[str, Domain]] = {"scale": POSITIVE, "sensitivity": POSITIVE}

    def __post_init__(self) -> None:
        validate_parameters(self)
        check_loss_scale(self, scale="scale")

    @property
    def epsilon(self) -> float:
        """ε = Δ/b."""
        return self.sensitivity / self.scale


@dataclass(frozen=True, slots=True)
class TruncatedLaplace:
    """Laplace noise conditioned on [−A, A]: density e^{−|x|/b}/(2b(1 − e^{−A/b})) on [−A, A].

    ``TruncatedLaplace(scale, *, truncation, sensitivity=1.0)``. Pair P = Δ + noise, Q = noise
    (symmetric; relation-agnostic); outputs outside the common support give the δ part
    p_inf = q_neg_inf = noise mass above A − Δ (module docstring for the whole law).

    Attributes:
        scale: b > 0.
        truncation: A > 0, the noise is conditioned on [−A, A] (``inf`` allowed: plain Laplace).
        sensitivity: Δ > 0.
    """

    scale: float
    _: KW_ONLY
    truncation: float
    sensitivity: float = 1.0
    neighbouring: ClassVar[Neighbouring | None] = None
    domains: ClassVar[Mapping[str, Domain]] = {
        "scale": POSITIVE,
        "truncation": POSITIVE_OR_INF,
        "sensitivity": POSITIVE,
    }

    def __post_init__(self) -> None:
        validate_parameters(self)
        check_loss_scale(self, scale="scale")


@privacy_loss_laws.register
def _laplace_laws(mechanism: Laplace) -> LawPair:
    law = _truncated_laplace_law(mechanism.scale, mechanism.sensitivity, math.inf)
    return (law, law)


@group_mechanism.register
def _laplace_group(mechanism: Laplace, g: int) -> Laplace:
    """Sensitivity gΔ: ε = gΔ/b per run (:mod:`optcomp.mechanisms._group`)."""
    return Laplace(mechanism.scale, sensitivity=group_sensitivity(g, mechanism.sensitivity))


@privacy_loss_laws.register
def _truncated_laplace_laws(mechanism: TruncatedLaplace) -> LawPair:
    law = _truncated_laplace_law(mechanism.scale, mechanism.sensitivity, mechanism.truncation)
    return (law, law)


# --- Vuvuzela dummy traffic ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ShiftedTruncatedLaplace:
    """Dummy-traffic noise of Vuvuzela (privacy-buckets excerpt, §2.3; van den Hooff et al. 2015).

    The server adds N = max(0, ⌈Y⌉) dummy messages, Y ~ Laplace(mean, scale): Laplace noise *shifted* by
    ``mean`` so that it is rarely negative, rounded up to an integer and *truncated* at 0. The adversary
    sees a count c + N; one user's action changes c by ``sensitivity`` = Δ messages. Remove pair:
    P = c + Δ + N, Q = c + N; add pair: the swap (not symmetric: the atom of N at 0 breaks symmetry).

    pmf of N: P(N = 0) = F(0), P(N = k) = F(k) − F(k − 1) for k ≥ 1, F the Laplace(mean, scale) CDF.
    Outputs c, …, c + Δ − 1 have Q-mass F(Δ − 1) and no P-mass (q_neg_inf). The loss at output c + Δ + j
    is ln pmf(j) − ln pmf(j + Δ): −Δ/b for 1 ≤ j ≤ ⌊mean⌋ − Δ and +Δ/b for j ≥ ⌈mean⌉ + 1 (whole Laplace
    tails, summed in closed form), explicit for the O(Δ) values of j in between and j = 0. The law is
    therefore finite and exact, whatever the mean (Vuvuzela uses mean 300 000, scale 13 800).

    ``ShiftedTruncatedLaplace(scale, *, mean, sensitivity=1)`` (relation-agnostic, like every base
    mechanism: Δ is stated for the relation the caller uses).

    Attributes:
        scale: Laplace scale b > 0.
        mean: location of the Laplace before rounding, ≥ 0.
        sensitivity: Δ, a positive integer number of messages.
    """

    scale: float
    _: KW_ONLY
    mean: float
    sensitivity: int = 1
    neighbouring: ClassVar[Neighbouring | None] = None
    domains: ClassVar[Mapping[str, Domain]] = {
        "scale": POSITIVE,
        "mean": NONNEGATIVE,
        "sensitivity": integers(1),
    }

    def __post_init__(self) -> None:
        validate_parameters(self)
        check_loss_scale(self, scale="scale")


def _rounded_laplace_logpmf(k: FloatArray, mean: float, b: float) -> FloatArray:
    """ln P(max(0, ⌈Y⌉) = k), Y ~ Laplace(mean, b), for integers k ≥ 0 (mean ≥ 0), in closed form."""
    k = as_array(k)
    log_half = math.log(0.5)
    log_cell = math.log(-math.expm1(-1.0 / b))  # ln(1 − e^{−1/b})
    out = np.empty_like(k)
    zero = k == 0
    left = (k >= 1) & (k <= mean)
    right = (k >= 1) & (k - 1 >= mean)
    mid = (k >= 1) & ~left & ~right
    out[zero] = log_half - mean / b
    out[left] = log_half + (k[left] - mean) / b + log_cell
    out[right] = log_half - (k[right] - 1 - mean) / b + log_cell
    km = k[mid]
    out[mid] = np.log1p(-0.5 * (np.exp(-(km - mean) / b) + np.exp((km - 1 - mean) / b)))
    return out


@privacy_loss_laws.register
def _shifted_truncated_laplace_laws(mechanism: ShiftedTruncatedLaplace) -> LawPair:
    m, b, d = mechanism.mean, mechanism.scale, mechanism.sensitivity
    j_lo = math.floor(m) - d  # 1 ≤ j ≤ j_lo: j and j + Δ both at or left of the mean
    j_hi = max(1, math.ceil(m) + 1)  # j ≥ j_hi: j − 1 and j + Δ − 1 right of the mean
    middle = np.concatenate([[0.0], np.arange(max(1, j_lo + 1), j_hi, dtype=np.float64)])
    log_p = _rounded_laplace_logpmf(middle, m, b)
    log_q = _rounded_laplace_logpmf(middle + d, m, b)
    losses = [*(log_p - log_q).tolist(), d / b]
    atom_p = [*np.exp(log_p).tolist(), 0.5 * math.exp(-(j_hi - 1 - m) / b)]
    atom_q = [*np.exp(log_q).tolist(), 0.5 * math.exp(-(j_hi + d - 1 - m) / b)]
    if j_lo >= 1:
        losses.append(-d / b)
        atom_p.append(0.5 * math.exp(-m / b) * math.expm1(j_lo / b))
        atom_q.append(0.5 * math.exp((d - m) / b) * math.expm1(j_lo / b))
    if d - 1 <= m:
        q_neg_inf = 0.5 * math.exp((d - 1 - m) / b)
    else:
        q_neg_inf = 1.0 - 0.5 * math.exp(-(d - 1 - m) / b)
    remove = merged_law(losses, atom_p, atom_q, q_neg_inf=q_neg_inf)
    return (remove, remove.swapped())

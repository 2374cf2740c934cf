"""The Gaussian mechanism and the exact law of its privacy loss."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass
from typing import ClassVar

import numpy as np
import numpy.typing as npt
from scipy.special import log_ndtr

from optcomp._numerics import POSITIVE, Domain, FloatArray
from optcomp.mechanisms._dispatch import LawPair, privacy_loss_laws
from optcomp.mechanisms._group import group_mechanism, group_sensitivity
from optcomp.mechanisms._law import PrivacyLossLaw
from optcomp.mechanisms._spec import Neighbouring, check_loss_scale, validate_parameters
from optcomp.mechanisms._tails import as_array


@dataclass(frozen=True, slots=True)
class Gaussian:
    """Gaussian mechanism: f(D) + N(0, σ²) on a query of sensitivity Δ; it is μ-GDP with μ = Δ/σ
    (Dong–Roth–Su Thm 2.5, ``shared/MATH.md``).

    ``Gaussian(sigma, *, sensitivity=1.0)``. The worst-case pair is P = N(Δ, σ²), Q = N(0, σ²)
    (symmetric: T(P, Q) = T(Q, P)). ``sensitivity`` is the largest ‖f(D) − f(D')‖₂ over neighbouring
    datasets of whichever relation the caller uses (relation-agnostic: ``neighbouring = None``).

    Attributes:
        sigma: noise standard deviation σ > 0.
        sensitivity: ℓ₂-sensitivity Δ > 0 of the query.
    """

    sigma: float
    _: KW_ONLY
    sensitivity: float = 1.0
    neighbouring: ClassVar[Neighbouring | None] = None
    domains: ClassVar[Mapping[str, Domain]] = {"sigma": POSITIVE, "sensitivity": POSITIVE}

    def __post_init__(self) -> None:
        validate_parameters(self)
        check_loss_scale(self, scale="sigma")

    @property
    def mu(self) -> float:
        """The GDP parameter μ = Δ/σ."""
        return self.sensitivity / self.sigma


@dataclass(frozen=True, slots=True)
class GaussianLoss:
    """Continuous law of L = ln(dP/dQ) for P = N(μ, 1), Q = N(0, 1): L = μX − μ²/2.

    Under P, L ~ N(μ²/2, μ²); under Q, L ~ N(−μ²/2, μ²). Tails use ``scipy.special.log_ndtr``
    (accurate far into both tails: log Φ(−38) ≈ −730, log Φ(−1e150) is finite).
    """

    mu: float
    lower: float = -math.inf
    upper: float = math.inf

    def _z(self, x: npt.ArrayLike, sign: float) -> FloatArray:
        return as_array(x) / self.mu - sign * 0.5 * self.mu  # (x ∓ μ²/2)/μ without forming μ² (μ up to 1e308)

    def p_logsf(self, x: FloatArray) -> FloatArray:
        """log P(L > x) = log Φ(−(x − μ²/2)/μ)."""
        return np.asarray(log_ndtr(-self._z(x, 1.0)), dtype=np.float64)

    def p_logcdf(self, x: FloatArray) -> FloatArray:
        """log P(L ≤ x) = log Φ((x − μ²/2)/μ)."""
        return np.asarray(log_ndtr(self._z(x, 1.0)), dtype=np.float64)

    def q_logsf(self, x: FloatArray) -> FloatArray:
        """log Q(L > x) = log Φ(−(x + μ²/2)/μ)."""
        return np.asarray(log_ndtr(-self._z(x, -1.0)), dtype=np.float64)

    def q_logcdf(self, x: FloatArray) -> FloatArray:
        """log Q(L ≤ x) = log Φ((x + μ²/2)/μ)."""
        return np.asarray(log_ndtr(self._z(x, -1.0)), dtype=np.float64)


@privacy_loss_laws.register
def _gaussian_laws(mechanism: Gaussian) -> LawPair:
    law = PrivacyLossLaw(continuous=GaussianLoss(mu=mechanism.mu))
    return (law, law)


@group_mechanism.register
def _gaussian_group(mechanism: Gaussian, g: int) -> Gaussian:
    """Sensitivity gΔ: μ becomes gμ (Dong–Roth–Su Thm 2.14; :mod:`optcomp.mechanisms._group`)."""
    return Gaussian(mechanism.sigma, sensitivity=group_sensitivity(g, mechanism.sensitivity))

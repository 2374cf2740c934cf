"""The law of K, the number of candidates a private selection runs (independent of the data).

Every route of :mod:`optcomp.selection` reads K through its probability generating function
φ(x) = E[x^K] on [0, 1]: the best of K independent runs has CDF φ(F) along the candidates' order
(F the CDF of one run), so φ and φ' are all the accounting needs. Each law states

* ``pgf(x)`` = φ(x), ``pgf_tail(d)`` = 1 − φ(1 − d) (accurate for tiny d: the "at least one run lands in
  a set of mass d" probability), ``log_dpgf(x)`` = log φ'(x) (φ' is increasing: φ is convex);
* ``pgf_error``: an absolute bound on the rounding error of ``pgf`` at a float argument in [0, 1]
  (Higham's model, ``optcomp._rounding``), and ``log_dpgf_error(x)``: the same for ``log_dpgf``;
* ``mean`` = E[K] = φ'(1) and ``min_count`` (the smallest K with positive mass).

Laws (Papernot–Steinke, ICLR 2022, "Hyperparameter tuning with Rényi differential privacy", Def. 1, §3.2):

* :class:`TruncatedNegativeBinomial` D_{η,γ}: P[K = k] = (1−γ)^k/(γ^{−η} − 1)·Π_{ℓ<k}(ℓ+η)/(ℓ+1) for
  k ≥ 1, η > −1, η ≠ 0; η = 0 is the logarithmic law P[K = k] = (1−γ)^k/(k·log(1/γ)) and η = 1 the
  geometric law γ(1−γ)^{k−1} (:func:`Geometric`, :func:`Logarithmic`). With c = 1 − γ:
  φ(x) = ((1 − cx)^{−η} − 1)/(γ^{−η} − 1) (η = 0: log(1 − cx)/log γ), E[K] = η(1−γ)/(γ(1 − γ^η))
  (η = 0: (1/γ − 1)/log(1/γ)).
* :class:`Poisson` (μ): φ(x) = e^{μ(x−1)}; K = 0 (nothing released) with probability e^{−μ}.
* :class:`Binomial` (n, p): φ(x) = (1 − p + px)^n; p = 1 is a fixed count of n runs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt
from scipy.optimize import brentq

from optcomp._numerics import (
    OPEN_PROBABILITY,
    SAMPLING_RATE,
    UNIT_ROUNDOFF,
    Domain,
    FloatArray,
    check_int,
)

#: η must exceed −1 (Papernot–Steinke Def. 1): the law's normalisation γ^{−η} − 1 and the weights
#: Π(ℓ + η) keep one sign only there.
ETA = Domain(-1.0, math.inf, lower_closed=False)
#: A mean number of runs above 1 (the truncated negative binomial laws have K ≥ 1, so E[K] = 1 only for
#: γ = 1, a single run).
#: Smallest |η| ≠ 0 accepted: below it the shape is the logarithmic law (η = 0) to every digit a float carries,
#: while γ^η − 1 and the normaliser's expm1 underflow; such a shape is refused by name (pass η = 0).
ETA_SMALLEST_NONZERO = 1e-6
MEAN_ABOVE_ONE = Domain(1.0, math.inf, lower_closed=False)
#: Largest Poisson mean / binomial n accepted: beyond it φ' and the routes' terms leave useful ranges.
MAX_MEAN = 1e6
#: The range of log γ that :meth:`TruncatedNegativeBinomial.from_mean` searches (γ from 1e-300 to 1 − 2⁻⁴⁰).
_LOG_GAMMA_MIN = math.log(1e-300)
_LOG_GAMMA_MAX = math.log1p(-(2.0**-40))
#: Units of u = 2⁻⁵³ charged per rounding-sensitive operation of the pgf formulas (a generous count:
#: each formula is a handful of roundings, amplified by the condition numbers stated in each law).
_PGF_UNITS = 64.0


def _array(x: npt.ArrayLike) -> FloatArray:
    return np.asarray(x, dtype=np.float64)


@runtime_checkable
class Repetitions(Protocol):
    """What every law of K provides (module docstring)."""

    @property
    def name(self) -> str: ...

    @property
    def mean(self) -> float: ...

    @property
    def min_count(self) -> int: ...

    @property
    def pgf_error(self) -> float: ...

    def pgf(self, x: npt.ArrayLike) -> FloatArray: ...

    def pgf_tail(self, d: npt.ArrayLike) -> FloatArray: ...

    def log_dpgf(self, x: npt.ArrayLike) -> FloatArray: ...

    def log_dpgf_error(self, x: npt.ArrayLike) -> FloatArray: ...

    def describe(self) -> str: ...


def _check(obj: object, domains: Mapping[str, Domain]) -> None:
    for field_name, domain in domains.items():
        object.__setattr__(obj, field_name, domain.check(field_name, getattr(obj, field_name)))


@dataclass(frozen=True, slots=True)
class TruncatedNegativeBinomial:
    """K ~ D_{η,γ} (Papernot–Steinke Def. 1; module docstring): η > −1, γ ∈ (0, 1).

    φ'(x) = C·(1 − cx)^{−(1+η)} with c = 1 − γ, C = ηc/(γ^{−η} − 1) (η = 0: c/log(1/γ)): φ' is
    increasing and the ratio φ'(x)/φ'(y) is ((1 − cy)/(1 − cx))^{1+η}.

    Attributes:
        eta: the shape η > −1 (1: geometric, 0: logarithmic).
        gamma: the parameter γ ∈ (0, 1) (geometric: the stopping probability, E[K] = 1/γ).
    """

    eta: float
    gamma: float
    domains: ClassVar[Mapping[str, Domain]] = {"eta": ETA, "gamma": OPEN_PROBABILITY}

    def __post_init__(self) -> None:
        _check(self, self.domains)
        if not self.gamma < 1.0:
            raise ValueError(f"gamma must be in (0, 1), got {self.gamma!r}")
        if not math.isfinite(self.eta):
            raise ValueError(f"eta must be a finite number > -1, got {self.eta!r}")
        if 0.0 < abs(self.eta) < ETA_SMALLEST_NONZERO:
            raise ValueError(
                f"eta must be 0 (logarithmic) or at least {ETA_SMALLEST_NONZERO:g} in absolute value, got {self.eta!r}"
            )

    @classmethod
    def from_mean(cls, eta: float, mean: float) -> TruncatedNegativeBinomial:
        """The law D_{η,γ} whose mean is ``mean`` (> 1): γ solved to double precision (Brent's method on
        the closed-form mean, which decreases from ∞ to 1 as γ goes from 0 to 1). The returned γ *is* the
        law the statement is for: sample K with it (geometric: γ = 1/mean)."""
        e = ETA.check("eta", eta)
        m = MEAN_ABOVE_ONE.check("mean", mean)
        if not math.isfinite(e) or not math.isfinite(m):
            raise ValueError(f"eta and mean must be finite, got eta={eta!r}, mean={mean!r}")
        if e == 1.0:
            return cls(1.0, 1.0 / m)
        # log-space root in t = log γ ∈ [log 1e-300, log(1 − 2⁻⁴⁰)]: the mean decreases in t (∞ at γ → 0, 1 at γ → 1)
        def gap(t: float) -> float:
            return math.log(cls._mean_of(e, math.exp(t))) - math.log(m)

        if gap(_LOG_GAMMA_MIN) < 0.0:
            raise ValueError(f"mean must be reachable with gamma >= 1e-300 for eta={e!r}, got mean={m!r}")
        if gap(_LOG_GAMMA_MAX) >= 0.0:
            raise ValueError(f"mean is too close to 1 for eta={e!r} (gamma would round to 1), got mean={m!r}")
        t = brentq(gap, _LOG_GAMMA_MIN, _LOG_GAMMA_MAX, xtol=UNIT_ROUNDOFF, rtol=8 * UNIT_ROUNDOFF)
        return cls(e, math.exp(t))

    @staticmethod
    def _mean_of(eta: float, gamma: float) -> float:
        c = 1.0 - gamma
        if eta == 0.0:
            return c / (gamma * -math.log(gamma))
        return eta * c / (gamma * -math.expm1(eta * math.log(gamma)))

    @property
    def name(self) -> str:
        if self.eta == 1.0:
            return "geometric"
        if self.eta == 0.0:
            return "logarithmic"
        return "truncated_negative_binomial"

    @property
    def mean(self) -> float:
        return self._mean_of(self.eta, self.gamma)

    @property
    def min_count(self) -> int:
        return 1

    @property
    def _c(self) -> float:
        return 1.0 - self.gamma

    @property
    def _norm(self) -> float:
        """γ^{−η} − 1 = expm1(−η log γ) (η ≠ 0), or log(1/γ) (η = 0): positive for η > 0, negative below."""
        return -math.log(self.gamma) if self.eta == 0.0 else math.expm1(-self.eta * math.log(self.gamma))

    @property
    def pgf_error(self) -> float:
        # log1p(−cx) has absolute error ≤ u(1/γ + |log γ|)·2; times |η| and through expm1 (≤ max(1, γ^{−η})),
        # divided by the normalisation: the condition number below (module _PGF_UNITS per rounding).
        lg = -math.log(self.gamma)
        arg = 1.0 / self.gamma + lg
        if self.eta == 0.0:
            return _PGF_UNITS * UNIT_ROUNDOFF * (arg / lg + 1.0)
        big = max(1.0, math.exp(min(self.eta * lg, 700.0)))
        return _PGF_UNITS * UNIT_ROUNDOFF * (big * (abs(self.eta) * arg + 2.0) / abs(self._norm) + 1.0)

    def pgf(self, x: npt.ArrayLike) -> FloatArray:
        v = np.log1p(-self._c * _array(x))
        if self.eta == 0.0:
            return np.asarray(v / math.log(self.gamma), dtype=np.float64)
        return np.asarray(np.expm1(-self.eta * v) / self._norm, dtype=np.float64)

    def pgf_tail(self, d: npt.ArrayLike) -> FloatArray:
        w = np.log1p(self._c * _array(d) / self.gamma)  # 1 − c(1 − d) = γ + cd
        if self.eta == 0.0:
            return np.asarray(w / -math.log(self.gamma), dtype=np.float64)
        return np.asarray(-np.expm1(-self.eta * w) / -math.expm1(self.eta * math.log(self.gamma)), dtype=np.float64)

    def log_dpgf(self, x: npt.ArrayLike) -> FloatArray:
        if self.eta == 0.0:
            log_c = math.log(self._c) - math.log(-math.log(self.gamma))
        else:
            log_c = math.log(self.eta * self._c / self._norm)
        return np.asarray(log_c - (1.0 + self.eta) * np.log1p(-self._c * _array(x)), dtype=np.float64)

    def log_dpgf_error(self, x: npt.ArrayLike) -> FloatArray:
        xs = _array(x)
        one_minus = 1.0 - self._c * xs
        cond = (1.0 + abs(self.eta)) * (np.abs(np.log(one_minus)) + 2.0 / one_minus) + abs(math.log(self.gamma)) + 8.0
        return np.asarray(_PGF_UNITS * UNIT_ROUNDOFF * cond, dtype=np.float64)

    def describe(self) -> str:
        head = {"geometric": "Geometric", "logarithmic": "Logarithmic"}.get(self.name, f"TNB(eta={self.eta:g})")
        return f"K ~ {head}(gamma={self.gamma:.10g}), E[K] = {self.mean:.6g}"


def Geometric(gamma: float | None = None, *, mean: float | None = None) -> TruncatedNegativeBinomial:
    """K ~ Geometric(γ): P[K = k] = γ(1 − γ)^{k−1}, k ≥ 1, E[K] = 1/γ (D_{1,γ}; Liu–Talwar's random
    stopping). Give ``gamma`` in (0, 1) or ``mean`` > 1 (γ = 1/mean)."""
    if (gamma is None) == (mean is None):
        raise ValueError("give exactly one of gamma (in (0, 1)) and mean (> 1)")
    if gamma is not None:
        return TruncatedNegativeBinomial(1.0, gamma)
    assert mean is not None  # exactly one of the two (checked above)
    return TruncatedNegativeBinomial.from_mean(1.0, mean)


def Logarithmic(gamma: float | None = None, *, mean: float | None = None) -> TruncatedNegativeBinomial:
    """K ~ Logarithmic(γ): P[K = k] = (1 − γ)^k/(k·log(1/γ)), k ≥ 1 (D_{0,γ}). Give ``gamma`` or ``mean``."""
    if (gamma is None) == (mean is None):
        raise ValueError("give exactly one of gamma (in (0, 1)) and mean (> 1)")
    if gamma is not None:
        return TruncatedNegativeBinomial(0.0, gamma)
    assert mean is not None  # exactly one of the two (checked above)
    return TruncatedNegativeBinomial.from_mean(0.0, mean)


@dataclass(frozen=True, slots=True)
class Poisson:
    """K ~ Poisson(μ): φ(x) = e^{μ(x−1)}, φ'(x) = μe^{μ(x−1)}; with probability e^{−μ} nothing runs and
    nothing (⊥) is released (Papernot–Steinke §3.2, Thm 6).

    Attributes:
        mean: μ in (0, 1e6].
    """

    mean: float
    domains: ClassVar[Mapping[str, Domain]] = {"mean": Domain(0.0, MAX_MEAN, lower_closed=False, upper_closed=True)}

    def __post_init__(self) -> None:
        _check(self, self.domains)

    @property
    def name(self) -> str:
        return "poisson"

    @property
    def min_count(self) -> int:
        return 0

    @property
    def pgf_error(self) -> float:
        return _PGF_UNITS * UNIT_ROUNDOFF * (2.0 * self.mean + 2.0)

    def pgf(self, x: npt.ArrayLike) -> FloatArray:
        return np.asarray(np.exp(self.mean * (_array(x) - 1.0)), dtype=np.float64)

    def pgf_tail(self, d: npt.ArrayLike) -> FloatArray:
        return np.asarray(-np.expm1(-self.mean * _array(d)), dtype=np.float64)

    def log_dpgf(self, x: npt.ArrayLike) -> FloatArray:
        return np.asarray(math.log(self.mean) + self.mean * (_array(x) - 1.0), dtype=np.float64)

    def log_dpgf_error(self, x: npt.ArrayLike) -> FloatArray:
        return np.full_like(_array(x), _PGF_UNITS * UNIT_ROUNDOFF * (2.0 * self.mean + abs(math.log(self.mean)) + 4.0))

    def describe(self) -> str:
        return f"K ~ Poisson(mean={self.mean:.10g})"


@dataclass(frozen=True, slots=True)
class Binomial:
    """K ~ Binomial(n, p): φ(x) = (1 − p + px)^n, φ'(x) = np(1 − p + px)^{n−1}; ``p = 1`` is a fixed
    number n of runs. K = 0 (nothing released) with probability (1 − p)^n.

    Attributes:
        n: the number of trials, an integer in [1, 1e6].
        p: the success probability in (0, 1].
    """

    n: int
    p: float = 1.0
    domains: ClassVar[Mapping[str, Domain]] = {"p": SAMPLING_RATE}

    def __post_init__(self) -> None:
        object.__setattr__(self, "n", check_int("n", self.n, minimum=1, maximum=int(MAX_MEAN)))
        _check(self, self.domains)

    @property
    def name(self) -> str:
        return "fixed" if self.p == 1.0 else "binomial"

    @property
    def mean(self) -> float:
        return self.n * self.p

    @property
    def min_count(self) -> int:
        return self.n if self.p == 1.0 else 0

    @property
    def pgf_error(self) -> float:
        return _PGF_UNITS * UNIT_ROUNDOFF * (2.0 * self.n + 4.0)

    def pgf(self, x: npt.ArrayLike) -> FloatArray:
        return np.asarray((1.0 - self.p + self.p * _array(x)) ** self.n, dtype=np.float64)

    def pgf_tail(self, d: npt.ArrayLike) -> FloatArray:
        return np.asarray(-np.expm1(self.n * np.log1p(-self.p * _array(d))), dtype=np.float64)

    def log_dpgf(self, x: npt.ArrayLike) -> FloatArray:
        xs = _array(x)
        if self.n == 1:  # φ' ≡ p
            return np.full_like(xs, math.log(self.p))
        with np.errstate(divide="ignore"):
            return np.asarray(math.log(self.n * self.p) + (self.n - 1) * np.log(1.0 - self.p + self.p * xs), dtype=np.float64)

    def log_dpgf_error(self, x: npt.ArrayLike) -> FloatArray:
        # 1 − p + px carries a relative error ≤ 2u(1 − p + px')/(1 − p + px) with x' = x (terms ≥ 0): ≤ 2u;
        # its log an absolute 2u more per unit of |log|, times n − 1; plus log(np) and the sum.
        xs = _array(x)
        with np.errstate(divide="ignore"):
            log_base = np.abs(np.log(1.0 - self.p + self.p * xs))
        cond = (self.n - 1) * (np.where(np.isfinite(log_base), log_base, 0.0) + 4.0) + math.log(self.n) + 8.0
        return np.asarray(_PGF_UNITS * UNIT_ROUNDOFF * cond, dtype=np.float64)

    def describe(self) -> str:
        if self.p == 1.0:
            return f"K = {self.n} (fixed)"
        return f"K ~ Binomial(n={self.n}, p={self.p:.10g})"


def check_repetitions(name: str, value: object) -> Repetitions:
    """``value`` if it is a law of K of this module, else ``ValueError`` naming ``name``."""
    if not isinstance(value, (TruncatedNegativeBinomial, Poisson, Binomial)):
        raise ValueError(  # noqa: TRY004 (contract: ValueError)
            f"{name} must be a law of K (optcomp.selection.Geometric, Logarithmic, "
            f"TruncatedNegativeBinomial, Poisson or Binomial), got {value!r}"
        )
    return value


__all__ = [
    "Binomial",
    "Geometric",
    "Logarithmic",
    "Poisson",
    "Repetitions",
    "TruncatedNegativeBinomial",
    "check_repetitions",
]

"""The discrete Gaussian mechanism (Canonne–Kamath–Steinke 2020) and the exact lattice law of its loss.

The discrete Gaussian N_ℤ(0, σ²) puts mass e^{−x²/(2σ²)}/Z(σ) on each integer x, Z(σ) = Σ_{x∈ℤ} e^{−x²/(2σ²)}
(CKS Def 1). Added to an integer query that moves by Δ between neighbouring datasets, the pair is
P = Δ + X, Q = X, and the privacy loss at P's outcome Δ + x is

    L = ln P(Δ + x)/Q(Δ + x) = (Δ² + 2Δx)/(2σ²),   x ~ N_ℤ(0, σ²),

so L lives on the exact lattice Δ²/(2σ²) + (Δ/σ²)ℤ. The pair is symmetric (N_ℤ(0, σ²) is symmetric and
shift-invariant on ℤ), so the add direction has the same law. For an integer *vector* query with
independent coordinates the shift is a vector v and the loss is the sum over coordinates,
Σ_t (v_t² + 2v_t x_t)/(2σ²): the per-shift law is the composition of the coordinates' laws.

**Not a function of the ℓ₂ norm.** For the continuous Gaussian the shift's ℓ₂ norm decides everything; for
the discrete one, integer shifts of equal ℓ₂ norm give different ε ((5, 0) and (3, 4): ``docs/dgauss.md``).
What *is* ordered: each coordinate's pair is monotone in |v_t| (a location family with monotone likelihood
ratio: the optimal tests are thresholds, whose type-II error falls as the shift grows, so the trade-off
curve of a larger shift lies below), and composition preserves that order. So among the integer shifts
allowed by a stated sensitivity (ℓ₂, ℓ₁ or ℓ∞ ball, in a dimension), the worst one is *determined* exactly
when the coordinatewise maximum of the sorted feasible shifts, M_t = max{m : t·m² ≤ Δ²} (ℓ₂), ⌊Δ/t⌋ (ℓ₁),
⌊Δ⌋ (ℓ∞), is itself feasible; it is then that M. Otherwise :class:`DiscreteGaussian` refuses by name,
naming two incomparable feasible shifts, and asks for the shift itself.

The normaliser is computed in 200-bit arithmetic with a certified truncation bound (the theta-function
tail Σ_{x>n} e^{−x²/(2σ²)} ≤ e^{−(n+1)²/(2σ²)}/(1 − e^{−(n+1)/σ²}) below σ = 2, Poisson summation
Z = σ√(2π)(1 + 2Σ_{k≥1} e^{−2π²σ²k²}) with the same kind of tail above it), and the masses in double-double
arithmetic: each is within 8 units of roundoff of e^{−x²/(2σ²)}/Z (relative). Mass beyond the half-width T
(each side below e^{−800}, far under the smallest double) is left out of the laws; the lattice engine
charges it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from fractions import Fraction
from typing import Any, ClassVar, Literal

import mpmath
import numpy as np
import numpy.typing as npt

from optcomp._numerics import (
    LOSS_SCALE,
    MAX_LOSS_SCALE,
    POSITIVE,
    Domain,
    FloatArray,
    GridTooLargeError,
    LossScaleError,
)
from optcomp._rounding import rounding_error
from optcomp.mechanisms._dgauss_scan import Profile, cleared_until, epsilon_floor, least_sigma, proven_floor
from optcomp.mechanisms._group import group_mechanism
from optcomp.mechanisms._lattice import LatticeFactor, LatticeLaw, lattice_law
from optcomp.mechanisms._spec import Neighbouring, validate_parameters

__all__ = [
    "MAX_LATTICE_POINTS",
    "DiscreteGaussian",
    "Norm",
    "cleared_until",
    "epsilon_floor",
    "half_inverse_variance",
    "half_width",
    "largest_squared_norm",
    "least_sigma",
    "log_normaliser",
    "log_pmf",
    "pmf",
    "proven_floor",
    "worst_shift",
]

#: The norms a sensitivity may be stated in.
Norm = Literal["l2", "l1", "linf"]
_NORMS: tuple[Norm, ...] = ("l2", "l1", "linf")
#: Most lattice points one law (or one factor of the lattice engine) holds: 2²³ (64 MiB per array).
MAX_LATTICE_POINTS = 2**23
#: ln of the mass each side of the kept range may carry (e^{−800} ≈ 4e−348: below every double).
_LOG_TAIL = -800.0
#: Below this σ the normaliser is summed directly; from it on by Poisson summation.
_POISSON_SIGMA = 2.0
#: Working precision (bits) of the normaliser.
_PRECISION_BITS = 200
#: ln of the relative truncation of the direct sum of the normaliser (e^{−240}, far below 2^−200).
_DIRECT_LOG_TRUNCATION = 240.0
#: Terms k = 1 … this of the Poisson sum (its remainder is below e^{−2π²σ²·25} ≤ e^{−1970} at σ ≥ 2).
_POISSON_TERMS = 4
#: Veltkamp's splitting constant 2²⁷ + 1 (Dekker's exact product of two doubles).
_SPLITTER = 134217729.0
#: Relative error of a computed mass (units of roundoff): exp of the leading part (≤ 4u), exp of the tiny
#: remainder (≤ 2u), their product (u) and the remainder's own rounding (far below u): 8 units in all.
MASS_ERROR_UNITS = 8


# -- the normaliser and the masses ------------------------------------------------------------------------
@functools.lru_cache(maxsize=256)
def log_normaliser(sigma: float) -> tuple[float, float]:
    """ln Z(σ), Z(σ) = Σ_{x∈ℤ} e^{−x²/(2σ²)}, as a double-double (hi, lo) with |hi + lo − ln Z| ≤ 2^−150.

    Below σ = 2 the sum over |x| ≤ n is taken and its tail bounded by the geometric series
    2e^{−(n+1)²/(2σ²)}/(1 − e^{−(n+1)/σ²}); from σ = 2 on, Poisson summation (exact for the Gaussian)
    gives Z = σ√(2π)(1 + 2Σ_{k≥1} e^{−2π²σ²k²}), whose remainder after k = 4 is bounded the same way. Both in
    200-bit arithmetic; ln Z lies in [ln S, ln(S + tail)] and its midpoint is returned.
    """
    with mpmath.workprec(_PRECISION_BITS):
        s = mpmath.mpf(sigma)
        two_var = 2 * s * s
        if sigma < _POISSON_SIGMA:
            n = math.ceil(sigma * math.sqrt(2.0 * _DIRECT_LOG_TRUNCATION)) + 1
            total = 1 + 2 * mpmath.fsum(mpmath.exp(-mpmath.mpf(x * x) / two_var) for x in range(1, n + 1))
            m = mpmath.mpf(n + 1)
            tail = 2 * mpmath.exp(-m * m / two_var) / -mpmath.expm1(-m / (s * s))
        else:
            a = 2 * mpmath.pi**2 * s * s
            scale = mpmath.sqrt(2 * mpmath.pi) * s
            total = scale * (1 + 2 * mpmath.fsum(mpmath.exp(-a * k * k) for k in range(1, _POISSON_TERMS + 1)))
            kk = _POISSON_TERMS + 1
            tail = scale * 2 * mpmath.exp(-a * kk * kk) / -mpmath.expm1(-a * (2 * kk + 1))
        mid = (mpmath.log(total) + mpmath.log(total + tail)) / 2
        hi = float(mid)
        return hi, float(mid - hi)


def half_width(sigma: float) -> int:
    """T(σ): each side of [−T, T] carries P-mass ≤ e^{−800} under N_ℤ(0, σ²).

    For m = T + 1, Σ_{x≥m} e^{−x²/(2σ²)} ≤ e^{−m²/(2σ²)}/(1 − e^{−m/σ²}) ≤ e^{−m²/(2σ²)}(1 + σ²/m), and
    Z ≥ 1; m = ⌈σ√(2(801 + ln(1 + σ/40)))⌉ makes the bound ≤ e^{−800} (m ≥ 40σ, so σ²/m ≤ σ/40; the extra
    unit covers the rounding of the square root)."""
    return max(1, math.ceil(sigma * math.sqrt(2.0 * (1.0 - _LOG_TAIL + math.log1p(sigma / 40.0)))))


def _two_sum(a: FloatArray, b: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Knuth's TwoSum: s + e = a + b exactly."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _split(a: FloatArray) -> tuple[FloatArray, FloatArray]:
    t = _SPLITTER * a
    hi = t - (t - a)
    return hi, a - hi


def _two_product(a: FloatArray, b: float) -> tuple[FloatArray, FloatArray]:
    """Dekker's TwoProduct: p + e = a·b exactly (no overflow or underflow in the range used here)."""
    p = a * b
    a1, a2 = _split(a)
    b1, b2 = _split(np.asarray(b, dtype=np.float64))
    return p, ((a1 * b1 - p) + a1 * b2 + a2 * b1) + a2 * b2


@functools.lru_cache(maxsize=256)
def half_inverse_variance(sigma: float) -> tuple[float, float]:
    """c = 1/(2σ²) (exact for a float σ) as a double-double (hi, lo)."""
    c = 1 / (2 * Fraction(sigma) ** 2)
    hi = float(c)
    return hi, float(c - Fraction(hi))


def log_pmf(sigma: float, x: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    """ln N_ℤ(0, σ²)(x) = −x²/(2σ²) − ln Z(σ) as a double-double (hi, lo), for integers |x| < 2²⁶.

    x² is exact in a double; x²·c is split exactly by Dekker's product (c = 1/(2σ²) as a double-double),
    and the sum with −ln Z by TwoSum: |hi + lo − ln p(x)| ≤ 4u·|lo| + 2^−150, far below an ulp of hi."""
    xs = np.asarray(x, dtype=np.int64)
    sq = (xs * xs).astype(np.float64)
    c_hi, c_lo = half_inverse_variance(sigma)
    e_hi, e_err = _two_product(sq, c_hi)
    z_hi, z_lo = log_normaliser(sigma)
    s, t = _two_sum(-e_hi, np.full(sq.shape, -z_hi))
    return s, t - (e_err + sq * c_lo) - z_lo


def pmf(sigma: float, x: npt.ArrayLike) -> FloatArray:
    """N_ℤ(0, σ²)(x), each mass within ``MASS_ERROR_UNITS`` units of roundoff (relative; below the
    normal range, within the smallest subnormal absolutely)."""
    hi, lo = log_pmf(sigma, x)
    with np.errstate(under="ignore"):
        return np.asarray(np.exp(hi) * np.exp(lo), dtype=np.float64)


# -- the worst shift of a stated sensitivity ---------------------------------------------------------------
def _largest_entries(bound: int, norm: Norm, count: int) -> list[int]:
    """M_t for t = 1, 2, …, count (the largest t-th entry of a sorted integer shift within ``bound``), stopping
    once their total exceeds the bound (then no shift dominates all others) or an entry is 0."""
    out: list[int] = []
    total = 0
    for t in range(1, count + 1):
        m = math.isqrt(bound // t) if norm == "l2" else (bound // t if norm == "l1" else bound)
        if m == 0:
            break
        out.append(m)
        total = total + m * m if norm == "l2" else (total + m if norm == "l1" else m)
        if total > bound:
            break
    return out


def _size(v: Sequence[int], norm: Norm) -> int:
    """‖v‖² (ℓ₂), ‖v‖₁ or ‖v‖∞ of an integer vector, exactly."""
    if norm == "l2":
        return sum(x * x for x in v)
    return sum(v) if norm == "l1" else max(v)


def _integer_bound(sensitivity: float | Fraction, norm: Norm) -> int:
    """The integer bound on ‖v‖² (ℓ₂) or ‖v‖ (ℓ₁, ℓ∞) that integer shifts within ``sensitivity`` meet: the floor
    of Δ² (or Δ), taken up to the next integer when Δ² (or Δ) lies within 8 roundings below it — so a Δ given
    as a rounded √3 admits (1, 1, 1). Admitting more shifts only enlarges the worst case (the safe side)."""
    delta = Fraction(sensitivity)
    value = delta * delta if norm == "l2" else delta
    up = math.ceil(value)
    return up if up - value <= Fraction(rounding_error(8, float(value))) else math.floor(value)


def _greedy(bound: int, norm: Norm, count: int) -> list[int]:
    """The lexicographically largest sorted shift within ``bound`` (fill the first coordinate, then the next;
    ℓ₂ or ℓ₁: an ℓ∞ shift is always determined)."""
    out: list[int] = []
    room = bound
    for _ in range(count):
        m = math.isqrt(room) if norm == "l2" else room
        if m == 0:
            break
        out.append(m)
        room -= m * m if norm == "l2" else m
    return out


def worst_shift(sensitivity: float, dimension: int | None, norm: Norm) -> tuple[int, ...]:
    """The worst integer shift (sorted, non-increasing, zeros dropped) of the stated sensitivity, when it is
    determined (module docstring); ``ValueError`` naming two incomparable allowed shifts otherwise.

    Args:
        sensitivity: Δ ≥ 1, the bound on the shift's norm (a Δ² or Δ within 8 roundings below an integer is
            read as that integer: :func:`_integer_bound`).
        dimension: the number of coordinates, or ``None`` (any number: the worst over all dimensions).
        norm: ``"l2"``, ``"l1"`` or ``"linf"``.
    """
    if dimension is None and norm == "linf":
        raise ValueError(
            "the worst integer shift of an linf sensitivity in an unknown dimension is unbounded (every "
            "coordinate may move): give dimension="
        )
    bound = _integer_bound(sensitivity, norm)
    # no sorted allowed shift has more non-zero entries than ⌊Δ²⌋ (ℓ₂) or ⌊Δ⌋ (ℓ₁)
    count = int(dimension or 1) if norm == "linf" else (bound if dimension is None else min(dimension, bound))
    top = _largest_entries(bound, norm, count)
    if _size(top, norm) <= bound:
        return tuple(top)
    greedy = _greedy(bound, norm, count)
    t = next(i for i, m in enumerate(top) if i >= len(greedy) or m > greedy[i]) + 1
    flat = [top[t - 1]] * t
    where = "any dimension" if dimension is None else f"dimension {dimension}"
    raise ValueError(
        f"the worst integer shift of {norm} sensitivity {sensitivity:g} in {where} is not determined: "
        f"{tuple(greedy)} and {tuple(flat)} are both allowed and neither dominates the other (a discrete "
        "Gaussian's ε is not a function of the shift's norm: docs/dgauss.md); give the shift itself, "
        "DiscreteGaussian(sigma, shift=(...))"
    )


def _sum_of_two_squares(n: int) -> bool:
    a = 0
    while 2 * a * a <= n:
        b = math.isqrt(n - a * a)
        if b * b == n - a * a:
            return True
        a += 1
    return False


def _sum_of_three_squares(n: int) -> bool:
    """Legendre's three-square theorem: n is a sum of three squares iff it is not 4^a(8b + 7)."""
    while n and n % 4 == 0:
        n //= 4
    return n % 8 != 7


def largest_squared_norm(sensitivity: float | Fraction, dimension: int | None, norm: Norm) -> int:
    """max ‖v‖₂² over the integer shifts v allowed by a sensitivity (``norm`` ball of radius Δ, at most
    ``dimension`` non-zero coordinates; ``None``: any number), exactly — whether or not the worst shift is
    determined (:func:`worst_shift`): the discrete Gaussian's zCDP parameter ρ = max ‖v‖²/(2σ²) needs only it.

    With B the integer bound of :func:`_integer_bound` (the same reading of a Δ a few roundings below an
    integer): ℓ₁ gives B² (one coordinate carries it all), ℓ∞ gives d·B² (every coordinate; the dimension
    is needed), ℓ₂ gives the largest n ≤ B that is a sum of d integer squares: n = B from d ≥ 4 on
    (Lagrange's four-square theorem), the largest n ≤ B not of the form 4^a(8b + 7) for d = 3 (Legendre's
    three-square theorem), found by search for d = 2 and ⌊√B⌋² for d = 1.
    """
    if norm not in _NORMS:
        raise ValueError(f"norm must be one of {_NORMS}, got {norm!r}")
    if dimension is None and norm == "linf":
        raise ValueError("the largest integer shift of an linf sensitivity in an unknown dimension is unbounded "
                         "(every coordinate may move): give dimension=")
    bound = _integer_bound(sensitivity, norm)
    if norm == "l1":
        return bound * bound
    if norm == "linf":
        assert dimension is not None
        return dimension * bound * bound
    d = 4 if dimension is None else dimension
    if d >= 4:
        return bound
    if d == 1:
        return math.isqrt(bound) ** 2
    test = _sum_of_three_squares if d == 3 else _sum_of_two_squares
    return next(n for n in range(bound, -1, -1) if test(n))


# -- the specification ---------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class DiscreteGaussian:
    """Discrete Gaussian mechanism: f(D) + X, X ~ N_ℤ(0, σ²) in each coordinate, on an integer-valued query
    (Canonne–Kamath–Steinke 2020, Def 1; the module docstring has the law).

    ``DiscreteGaussian(sigma, *, sensitivity=1, dimension=1, norm="l2")``: the worst integer shift of
    ``norm`` at most ``sensitivity`` in ``dimension`` coordinates (``None``: any number) — refused by name
    where it is not determined (module docstring: integer shifts of one ℓ₂ norm give different ε);
    ``DiscreteGaussian(sigma, *, shift=(3, 4))``: the law of one given integer shift vector. In dimension 1
    every norm gives the shift ⌊Δ⌋. Relation-agnostic (state the sensitivity for the relation you use).

    Attributes:
        sigma: σ > 0, the scale of N_ℤ(0, σ²) (its variance is below σ²).
        sensitivity: Δ ≥ 1, the bound on the query's move in ``norm``.
        dimension: the number of coordinates (≥ 1), or ``None`` for an unknown number.
        norm: ``"l2"``, ``"l1"`` or ``"linf"``.
        shift: a given integer shift vector instead (then leave the other three at their defaults).
    """

    sigma: float
    _: KW_ONLY
    sensitivity: float = 1.0
    dimension: int | None = 1
    norm: Norm = "l2"
    shift: tuple[int, ...] | None = None
    _worst: tuple[int, ...] = field(init=False, repr=False, compare=False, default=())
    neighbouring: ClassVar[Neighbouring | None] = None
    domains: ClassVar[Mapping[str, Domain]] = {"sigma": POSITIVE, "sensitivity": Domain(1.0, math.inf)}
    #: ε is not monotone in σ (the loss lattice moves with σ): a σ search must scan (:func:`least_sigma`).
    noise_monotone: ClassVar[bool] = False

    def least_noise(
        self,
        upper: Callable[[float], Any],
        profile: Callable[[float], Profile | None],
        target: float,
        delta: float,
        copies: int,
        *,
        passing: float,
        known_fail: float | None,
        rtol: float,
    ) -> tuple[float, float]:
        """:func:`least_sigma` for ``copies`` releases of this shift (the calibrator's hook for a family
        whose ε is not monotone in its noise)."""
        return least_sigma(upper, profile, target, delta, self._worst, copies, passing=passing,
                           known_fail=known_fail, rtol=rtol)

    def __post_init__(self) -> None:
        validate_parameters(self)
        if self.norm not in _NORMS:
            raise ValueError(f"norm must be one of {_NORMS}, got {self.norm!r}")
        if self.dimension is not None and (
            isinstance(self.dimension, bool) or not isinstance(self.dimension, int) or self.dimension < 1
        ):
            raise ValueError(f"dimension must be an integer >= 1 or None, got {self.dimension!r}")
        if self.shift is None:
            worst = worst_shift(self.sensitivity, self.dimension, self.norm)
        else:
            if (self.sensitivity, self.dimension, self.norm) != (1.0, 1, "l2"):
                raise ValueError("give either shift= or sensitivity=/dimension=/norm=, not both")
            object.__setattr__(self, "shift", _check_shift(self.shift))
            worst = tuple(sorted((abs(v) for v in self.shift if v), reverse=True))
        object.__setattr__(self, "_worst", worst)
        norm2 = math.sqrt(sum(v * v for v in worst))
        if not LOSS_SCALE.contains(norm2 / self.sigma):
            raise LossScaleError(
                f"sigma must be at least ||shift||/{MAX_LOSS_SCALE:g} = {norm2 / MAX_LOSS_SCALE:.6g} for the "
                f"shift {worst} (the privacy-loss scale ||shift||/sigma must be {LOSS_SCALE}), got sigma={self.sigma!r}"
            )

    @property
    def worst(self) -> tuple[int, ...]:
        """The shift whose law is accounted (sorted |v_t|, non-increasing, zeros dropped)."""
        return self._worst

    @property
    def rho(self) -> float:
        """ρ = ‖v‖²/(2σ²): the mechanism is ρ-zCDP (CKS Prop 5, summed over coordinates); not tight."""
        return float(Fraction(sum(v * v for v in self._worst)) / (2 * Fraction(self.sigma) ** 2))


def _check_shift(shift: object) -> tuple[int, ...]:
    if isinstance(shift, (str, bytes)) or not isinstance(shift, Sequence) or not shift:
        raise ValueError(f"shift must be a non-empty sequence of integers, got {shift!r}")
    out = []
    for i, v in enumerate(shift):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise ValueError(f"shift[{i}] must be an integer, got {v!r}")  # noqa: TRY004 (contract: ValueError)
        out.append(int(v))
    if not any(out):
        raise ValueError(f"shift must have a non-zero entry (a zero shift releases nothing private), got {shift!r}")
    return tuple(out)


def _counts(worst: Sequence[int]) -> list[tuple[int, int]]:
    """(|v_t|, how many coordinates have it), largest first."""
    pooled: dict[int, int] = {}
    for v in worst:
        pooled[v] = pooled.get(v, 0) + 1
    return list(pooled.items())


# -- the laws --------------------------------------------------------------------------------------------------
def _factor(sigma: float, v: int) -> LatticeFactor:
    """One coordinate of shift v: loss c·(v² + 2v·x) for x ∈ [−T, T]."""
    t = half_width(sigma)

    def masses(tilt: float) -> tuple[FloatArray, float]:
        x = np.arange(-t, t + 1, dtype=np.int64)
        hi, lo = log_pmf(sigma, x)
        shift = tilt * (x + t).astype(np.float64)
        logs = hi + shift + lo
        err = rounding_error(4, float(np.max(np.abs(hi) + np.abs(shift))) + 1.0)
        return np.asarray(logs, dtype=np.float64), err

    # the variance of N_ℤ(0, σ²) is below σ² (CKS §2; it only sizes the engine's window)
    return LatticeFactor(v * v, 2 * v, -t, 2 * t + 1, sigma * sigma, math.log(2.0) + _LOG_TAIL, masses)


@lattice_law.register
def _discrete_gaussian_lattice(mechanism: DiscreteGaussian) -> LatticeLaw | None:
    if 2 * half_width(mechanism.sigma) + 1 > MAX_LATTICE_POINTS:
        return None
    factors = tuple((_factor(mechanism.sigma, v), k) for v, k in _counts(mechanism.worst))
    return LatticeLaw(1 / (2 * Fraction(mechanism.sigma) ** 2), factors, f"discrete Gaussian σ={mechanism.sigma:g}")


@group_mechanism.register
def _discrete_gaussian_group(mechanism: DiscreteGaussian, g: int) -> DiscreteGaussian:
    """A group of g records moves an integer query by at most g times the worst shift: the shift g·v
    (each coordinate's pair is monotone in |v_t|, module docstring)."""
    return DiscreteGaussian(mechanism.sigma, shift=tuple(g * v for v in mechanism.worst))


def check_lattice_size(points: int, what: str) -> None:
    """``GridTooLargeError`` when a law would need more than ``MAX_LATTICE_POINTS`` points."""
    if points > MAX_LATTICE_POINTS:
        raise GridTooLargeError(
            f"{what} needs {points} lattice points (at most {MAX_LATTICE_POINTS} are held); use a smaller "
            "sigma or shift, or compose fewer coordinates"
        )


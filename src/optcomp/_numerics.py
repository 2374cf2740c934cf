"""The numeric vocabulary of optcomp: the certified ``Bound``, tolerances, validators and log-space helpers.

Everything in optcomp that is not an exact closed form returns a :class:`Bound` ``(lower, upper)``.
``upper`` is *certified*: it is never below the true value, with rounding direction, truncation and
floating-point error accounted for by the function that produced it (its docstring says how).
``lower`` is a valid lower bound under the same accounting.

This module imports nothing of ours; every other module may import it.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TypeVar, overload

import numpy as np
import numpy.typing as npt
from scipy.special import gammaln

FloatArray = npt.NDArray[np.float64]
_Real = TypeVar("_Real", float, FloatArray)

# ---------------------------------------------------------------------------------------------
# Tolerances: the one place for the numbers that decide how careful we are.
# ---------------------------------------------------------------------------------------------

#: Unit roundoff of IEEE double precision (2^-53).
UNIT_ROUNDOFF: float = 2.0**-53

#: The smallest positive subnormal double, 2⁻¹⁰⁷⁴: the absolute error of a result that underflows.
SMALLEST_SUBNORMAL: float = 5e-324

#: An absolute pad far below every quantity it is added to: keeps a divisor non-zero (``max(x, TINY_PAD)``)
#: or a certified positive bound strictly positive.
TINY_PAD: float = 1e-300

#: A deliberately generous relative margin (about 9·10⁶ u) for formulas whose rounding is not itemised
#: operation by operation: a geometric tail sum whose ratio comes from exp/log (``optimal._homogeneous``)
#: and a Chernoff exponent minimised over a few Newton steps (``optimal._freq``). It covers thousands of
#: roundings and exp of arguments up to 10⁶ in size; itemising those two is the next engineer's job.
GENEROUS_RELATIVE_SLACK: float = 1e-9

#: The exact engines of ``optcomp.optimal`` stop refining once their bracket is this narrow (relative):
#: float noise, far below any tolerance a caller can ask for.
OPTIMAL_EXACT_RELATIVE_WIDTH: float = 2.0**-30

#: ``optcomp.optimal`` evaluates r = 1 − (1 − δ_g)/Π(1 − δ_i) in float64 when its certified relative error
#: is below this, else in 256-bit mpmath (near the δ floor).
OPTIMAL_R_RTOL: float = 2.0**-20

#: ``optimal.calibrate`` starts its bisection at ε·2⁻⁶⁰/k: a per-query ε₀ so small that every target is met.
OPTIMAL_CALIBRATE_START: float = 2.0**-60

#: Relative slack added to a computed quantity before it is reported as an upper bound (and removed
#: before it is reported as a lower bound). It covers the rounding error of a few dozen floating-point
#: operations in a well-conditioned log-space formula; functions whose error can be larger account for
#: it explicitly and say so in their docstrings.
RELATIVE_SLACK: float = 64 * UNIT_ROUNDOFF

#: Absolute slack for probabilities computed as sums of O(n) terms in [0, 1]: added per term.
ABSOLUTE_SLACK_PER_TERM: float = 4 * UNIT_ROUNDOFF

#: Error of one float operation or one elementary function (exp, log, log1p, expm1, logaddexp), which
#: numpy/libm evaluate to within an ulp or two: 4u leaves a margin; error propagation in certified
#: log-space sums is written as multiples of it.
FEW_ULPS: float = 4 * UNIT_ROUNDOFF

#: Assumed accuracy of scipy's log-space special functions (``gammaln``, ``log_ndtr``, ``erfcx``):
#: absolute error at most ``SPECIAL_FUNCTION_LOG_ERROR * max(1, |value|)`` (they are good to a few ulps;
#: 64 leaves a wide margin). Certified log-space sums (f-DP composition) widen each term by this much.
SPECIAL_FUNCTION_LOG_ERROR: float = 64 * UNIT_ROUNDOFF

#: Absolute slack on a trade-off curve value or a δ read off one: the curves are O(1) sums of values in
#: [0, 1], each evaluated to a few ulps, so 64 roundings of quantities ≤ 1 cover them (f-DP readouts,
#: the vertices of the subsampling hulls, the conjugate upper curve of ``from_delta_curve``).
CURVE_ABSOLUTE_SLACK: float = 64 * UNIT_ROUNDOFF

#: Per-unit error of the GDP log δ formula: |error of log δ| ≤ GDP_LOG_ERROR_PER_UNIT · (κ + a² + |log δ| + 8)
#: with κ the cancellation factor of its one subtraction (8 roundings per unit of conditioning).
GDP_LOG_ERROR_PER_UNIT: float = 8 * UNIT_ROUNDOFF

#: ε brackets are measured relative to max(ε upper, EPSILON_WIDTH_FLOOR) (``Bound.relative_width_above``,
#: ``Accuracy.relative_width``): a bracket near ε = 0 is asked for an absolute width instead.
EPSILON_WIDTH_FLOOR: float = 0.01

#: Default tolerance for root finding on ε (absolute); the bracket returned always contains the root.
EPSILON_XTOL: float = 1e-12

#: The PLD tail-window search stops once its bracket is this narrow (absolute + relative): far below any
#: grid step, and only the window's size depends on it (the mass outside is charged either way).
PLD_TAIL_XTOL: float = 1e-10

#: Default relative tolerance for root finding, passed to ``scipy.optimize.brentq``.
ROOT_RTOL: float = 4 * UNIT_ROUNDOFF

#: Relative tolerance of calibrated noise / step counts (``optcomp.calibrate``, ``optcomp.dpsgd``): the
#: bisection stops when the passing and failing noise differ by this factor. The returned value always
#: passes (safe side); this only decides how close to the true root it lands.
CALIBRATION_RTOL: float = 1e-3
#: Finest PLD grid step the planner asks for (a budget of 10⁻⁶ would ask for ~10⁻¹⁰ on large plans; finer
#: is pointless for a planning answer, and a subnormal step leaves the engine's index range).
PLANNER_MIN_GRID_STEP: float = 1e-12


def fft_error_bound(n: int, mass: float = 1.0, multiplications: int = 1) -> float:
    """A bound on the absolute error of each coefficient of an FFT-based convolution product.

    For a length-``n`` complex FFT computed with the Cooley–Tukey algorithm in floating point, the
    computed transform ŷ of x satisfies ‖ŷ − y‖₂ ≤ (log₂ n)·η·‖y‖₂ with η ≈ 5u (Higham, *Accuracy and
    Stability of Numerical Algorithms*, 2nd ed., Thm 24.2). A product of ``multiplications`` transforms of
    probability vectors of total mass ``mass`` followed by an inverse transform therefore has a per-bin
    error of at most (multiplications + 2)·log₂(n)·5u·mass, up to second-order terms, which the factor 2
    below absorbs. This is the budget every FFT result in optcomp is widened by.
    """
    if n < 2:
        return 0.0
    return 2.0 * (multiplications + 2) * math.log2(n) * 5.0 * UNIT_ROUNDOFF * mass


# ---------------------------------------------------------------------------------------------
# The Bound value.
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Bound:
    """A certified bracket ``lower <= truth <= upper`` of a real quantity (ε, δ, μ, noise scale, ...).

    ``upper`` is never below the truth: the function that returns a ``Bound`` documents which errors it
    covers (rounding direction, truncation, floating point). ``upper`` may be ``inf`` where nothing
    finite can be certified; ``lower`` may be ``0`` or ``-inf`` likewise. A ``Bound`` unpacks as a pair::

        lo, hi = optcomp.optimal.epsilon([(0.1, 0.0)] * 100, 1e-6)
    """

    lower: float
    upper: float

    def __post_init__(self) -> None:
        lo, hi = float(self.lower), float(self.upper)
        if math.isnan(lo) or math.isnan(hi):
            raise ValueError(f"Bound endpoints must not be NaN, got ({lo}, {hi})")
        if lo > hi:
            raise ValueError(f"Bound needs lower <= upper, got ({lo!r}, {hi!r})")
        object.__setattr__(self, "lower", lo)
        object.__setattr__(self, "upper", hi)

    @classmethod
    def exact(cls, value: float) -> Bound:
        """A degenerate bracket for a value known exactly (closed form evaluated without loss)."""
        return cls(value, value)

    @property
    def width(self) -> float:
        """``upper - lower`` (``inf`` if either end is infinite)."""
        return self.upper - self.lower

    @property
    def midpoint(self) -> float:
        """The centre of the bracket: an *estimate*, not a bound."""
        return 0.5 * (self.lower + self.upper)

    @property
    def relative_width(self) -> float:
        """``width / |upper|`` (0 for a zero-width bracket at 0): :meth:`relative_width_above` with floor 0."""
        return self.relative_width_above(0.0)

    def relative_width_above(self, floor: float) -> float:
        """The one definition of relative width: ``(upper − lower) / max(|upper|, floor)``.

        ``floor`` keeps brackets near 0 from needing an impossible relative width: ε brackets use
        :data:`EPSILON_WIDTH_FLOOR` (the ``Accuracy.relative_width`` convention), δ brackets 0.
        A zero-width bracket has relative width 0 whatever its position; an infinite end gives ``inf``.

        Args:
            floor: the smallest denominator (≥ 0).
        """
        width = self.width
        if width == 0.0:
            return 0.0
        scale = max(abs(self.upper), floor)
        return math.inf if scale == 0.0 or math.isinf(width) else width / scale

    def contains(self, value: float) -> bool:
        """Whether ``lower <= value <= upper``."""
        return self.lower <= value <= self.upper

    def __iter__(self) -> Iterator[float]:
        yield self.lower
        yield self.upper

    def __str__(self) -> str:
        return f"[{self.lower:.10g}, {self.upper:.10g}]"


# ---------------------------------------------------------------------------------------------
# Safe-side rounding.
# ---------------------------------------------------------------------------------------------


def round_up(x: float, relative: float = RELATIVE_SLACK) -> float:
    """``x`` moved up by a relative ``relative`` and one ulp: a safe upper end for a computed value."""
    if not math.isfinite(x):
        return x
    y = x + abs(x) * relative
    return math.nextafter(y, math.inf)


def round_down(x: float, relative: float = RELATIVE_SLACK) -> float:
    """``x`` moved down by a relative ``relative`` and one ulp: a safe lower end for a computed value."""
    if not math.isfinite(x):
        return x
    y = x - abs(x) * relative
    return math.nextafter(y, -math.inf)


# ---------------------------------------------------------------------------------------------
# The rounding vocabulary: every certified engine states its slack in these words.
#
# Rounding model (all helpers below): IEEE-754 binary64, round to nearest, so every basic operation
# (+, −, ×, ÷, √) returns fl(a ∘ b) = (a ∘ b)(1 + θ) with |θ| ≤ u = 2⁻⁵³ (Higham, *Accuracy and Stability
# of Numerical Algorithms*, 2nd ed., §2.2, eq. (2.4)); numpy's and libm's exp, log, log1p, expm1 are
# within 1 ulp (relative ≤ 2u). A quantity computed by m such roundings carries a relative error of at
# most γ_m = m·u/(1 − m·u) (Higham Lemma 3.1). Subnormal results are not covered by relative bounds:
# engines that can underflow add an absolute term (a multiple of the smallest subnormal) themselves.
# ---------------------------------------------------------------------------------------------


def widen_up(x: _Real, units: float) -> _Real:
    """``x`` multiplied by ``1 + units·u``: a safe upper end for a non-negative computed value.

    With ``units`` an integer in [2, 2²⁶], 1 + units·u is computed with an error of at most u (exactly
    when ``units`` is even), and the product rounds to nearest, so for x̂ ≥ 0 the result is at least
    x̂·(1 + (units − 1)u)/(1 + u). If x̂ came from at most ``units − 2`` roundings of a non-negative exact
    value x (relative error ≤ γ_{units−2}), the result is ≥ x: (1 − γ_m)(1 + (m + 1)u) ≥ 1 + u for
    m ≤ 2²⁵ (Higham Lemma 3.1). So ``widen_up(x, 4)`` covers two roundings, ``widen_up(x, 64)`` 62.
    For x < 0 the result moves towards 0 (use :func:`widen_down` on −x). Works elementwise on arrays.

    Args:
        x: the computed value(s), ≥ 0.
        units: the relative widening in units of the unit roundoff u = 2⁻⁵³.
    """
    return x * (1.0 + units * UNIT_ROUNDOFF)


def widen_down(x: _Real, units: float) -> _Real:
    """``x`` multiplied by ``1 − units·u``: a safe lower end for a non-negative computed value.

    1 − units·u is exact for an integer ``units`` in [1, 2⁵²] (it lies in [½, 1), where the spacing is
    u); the product rounds to nearest. If x̂ ≥ 0 came from at most ``units − 1`` roundings of an exact
    x ≥ 0, x̂ ≤ x/(1 − (units − 1)u), and (1 − units·u)(1 + u) ≤ 1 − (units − 1)u, so the result is ≤ x
    (Higham Lemma 3.1). Works elementwise on arrays.

    Args:
        x: the computed value(s), ≥ 0.
        units: the relative narrowing in units of u = 2⁻⁵³.
    """
    return x * (1.0 - units * UNIT_ROUNDOFF)


def next_up(x: _Real) -> _Real:
    """The next float above ``x`` (elementwise): one ulp outwards, for a value already rounded correctly
    or with its error charged elsewhere (IEEE-754 ``nextUp``; ``inf`` stays ``inf``)."""
    if isinstance(x, np.ndarray):
        return np.nextafter(x, math.inf)
    return math.nextafter(x, math.inf)


def next_down(x: _Real) -> _Real:
    """The next float below ``x`` (elementwise): one ulp outwards (IEEE-754 ``nextDown``)."""
    if isinstance(x, np.ndarray):
        return np.nextafter(x, -math.inf)
    return math.nextafter(x, -math.inf)


@overload
def rounding_error(roundings: float, magnitude: float = 1.0) -> float: ...
@overload
def rounding_error(roundings: float, magnitude: FloatArray) -> FloatArray: ...
def rounding_error(roundings: float, magnitude: float | FloatArray = 1.0) -> float | FloatArray:
    """``roundings·u·magnitude``: the absolute error of that many roundings of values of size ≤ ``magnitude``.

    One rounding of a value y moves it by at most u·|y| (round to nearest); errors that add up without
    amplification (a log-space formula summing logs, each step's result bounded by ``magnitude``) total
    at most ``roundings·u·magnitude``. The caller states the count and the magnitudes (its docstring
    says which operations they are); the product is computed as (roundings·u)·magnitude, exact in its
    first factor, and callers add it with room to spare (their counts include a margin). Elementwise on
    arrays.

    Args:
        roundings: the number of roundings (or unit-roundoff multiples of a relative error) charged.
        magnitude: a bound on the size of the values rounded (≥ 0).
    """
    return roundings * UNIT_ROUNDOFF * magnitude


def gamma(n: int) -> float:
    """γ_n = n·u/(1 − n·u), rounded up: the relative error bound of n roundings (Higham Lemma 3.1).

    Args:
        n: the number of roundings, 0 ≤ n < 2⁵⁰.
    """
    if n <= 0:
        return 0.0
    nu = n * UNIT_ROUNDOFF  # exact (n < 2^53 times a power of two)
    return widen_up(nu / (1.0 - nu), 4)  # 1 − nu exact for n < 2^50; one division covered by 4u


def sum_error_bound(n: int, abs_sum: float) -> float:
    """A bound on |fl(Σxᵢ) − Σxᵢ| for n floats summed in any order (recursive, pairwise, blocked).

    Higham §4.2, eq. (4.4): |fl(Σxᵢ) − Σxᵢ| ≤ γ_{n−1}·Σ|xᵢ|. ``abs_sum`` is Σ|xᵢ| as *computed* (also a
    sum of n floats, so abs_sum ≥ (1 − γ_{n−1})·Σ|xᵢ|); the bound returned is γ_{n−1}·abs_sum/(1 − γ_{n−1}),
    evaluated with upward widening. It does not cover errors in the xᵢ themselves.

    Args:
        n: the number of terms (≥ 0).
        abs_sum: the computed Σ|xᵢ| (≥ 0; ``inf`` gives ``inf``).
    """
    if n <= 1 or abs_sum == 0.0:
        return 0.0
    g = gamma(n - 1)
    return widen_up(g * abs_sum / (1.0 - g), 4)  # two roundings after γ (1 − g rounds down ≤ u: in the 4u)


def dot_error_bound(n: int, abs_sum: float) -> float:
    """A bound on |fl(Σ aᵢbᵢ) − Σ aᵢbᵢ| for n products summed in any order (Higham §3.1, eq. (3.5)).

    |fl(xᵀy) − xᵀy| ≤ γ_n·Σ|xᵢyᵢ|: one rounding per product, n − 1 in the sum. ``abs_sum`` is Σ|fl(aᵢbᵢ)|
    as computed (≥ (1 − γ_n)·Σ|aᵢbᵢ|), so :func:`sum_error_bound` with n + 1 terms (γ_n·abs_sum/(1 − γ_n))
    covers it.

    Args:
        n: the number of products.
        abs_sum: the computed Σ|aᵢbᵢ| (≥ 0).
    """
    return sum_error_bound(n + 1, abs_sum)


def clip_probability_upper(p: float) -> float:
    """An upper bound on a probability, after safe rounding, capped at the trivially true value 1."""
    return min(1.0, max(0.0, p))


# ---------------------------------------------------------------------------------------------
# Validators: one message shape everywhere ("<name> must be <range>, got <value>").
# ---------------------------------------------------------------------------------------------


def _as_real(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {value!r}")  # noqa: TRY004 (contract: ValueError)
    x = float(value)
    if math.isnan(x):
        raise ValueError(f"{name} must be a number, got nan")
    return x


@dataclass(frozen=True, slots=True)
class Domain:
    """A parameter domain, declared once and reused (scipy.stats declares its parameter domains so).

    The interval from ``lower`` to ``upper``, each end open or closed (a closed infinite end admits
    ±inf itself); with ``integer`` only ``int`` values (``bool`` and floats excluded). The same object
    validates (:meth:`check`), documents (``str(domain)`` is the range in every error message) and
    drives the hypothesis strategies of the tests (``tests/strategies.py`` reads its fields).

    Attributes:
        lower: lower end (may be ``-inf``).
        upper: upper end (may be ``inf``).
        lower_closed: whether ``lower`` itself is allowed.
        upper_closed: whether ``upper`` itself is allowed.
        integer: whether values must be integers.
    """

    lower: float
    upper: float
    lower_closed: bool = True
    upper_closed: bool = False
    integer: bool = False

    def __str__(self) -> str:
        if self.integer:
            lo, hi = int(self.lower), self.upper
            # a huge maximum (10**300) is shown as 1e+300, not as its 301 digits
            top = str(int(hi)) if hi < _EXACT_INTEGER_SHOWN else f"{hi:.6g}"
            return f">= {lo}" if math.isinf(hi) else f"in [{lo}, {top}]"
        left = "[" if self.lower_closed else "("
        right = "]" if self.upper_closed else ")"
        return f"in {left}{_show(self.lower)}, {_show(self.upper)}{right}"

    def contains(self, x: float) -> bool:
        """Whether the real number ``x`` lies in the domain (the integer flag aside)."""
        above = x >= self.lower if self.lower_closed else x > self.lower
        below = x <= self.upper if self.upper_closed else x < self.upper
        return bool(above and below)

    def check(self, name: str, value: object) -> float:
        """``value`` as a float in the domain, else ``ValueError("<name> must be in <range>, got <value>")``."""
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise ValueError(f"{name} must be a real number {self}, got {value!r}")  # noqa: TRY004 (contract: ValueError)
        x = float(value)
        if not self.contains(x):  # also NaN
            raise ValueError(f"{name} must be {self}, got {x!r}")
        return x + 0.0  # −0.0 is stored as 0.0 (it would otherwise print as "-0.0")

    def check_int(self, name: str, value: object) -> int:
        """``value`` as an ``int`` in the domain (``bool`` and floats rejected)."""
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise ValueError(f"{name} must be an integer {self}, got {value!r}")  # noqa: TRY004 (contract: ValueError)
        k = int(value)
        if not self.contains(k):
            shown = repr(k) if abs(k) < _EXACT_INTEGER_SHOWN else f"about {'-' if k < 0 else ''}10^{len(str(abs(k))) - 1}"
            raise ValueError(f"{name} must be an integer {self}, got {shown}")
        return k

    def validate(self, name: str, value: object) -> float | int:
        """:meth:`check_int` for an integer domain, :meth:`check` otherwise."""
        return self.check_int(name, value) if self.integer else self.check(name, value)


#: Integer domain ends from this size on are shown in float notation (messages stay short).
_EXACT_INTEGER_SHOWN = 1e16


def _show(x: float) -> str:
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:g}"


#: The parameter domains of optcomp, one object per domain.
FINITE = Domain(-math.inf, math.inf, lower_closed=False, upper_closed=False)
NONNEGATIVE = Domain(0.0, math.inf)
NONNEGATIVE_OR_INF = Domain(0.0, math.inf, upper_closed=True)
POSITIVE = Domain(0.0, math.inf, lower_closed=False)
POSITIVE_OR_INF = Domain(0.0, math.inf, lower_closed=False, upper_closed=True)
PROBABILITY = Domain(0.0, 1.0, upper_closed=True)
OPEN_PROBABILITY = Domain(0.0, 1.0, lower_closed=False)
SAMPLING_RATE = Domain(0.0, 1.0, lower_closed=False, upper_closed=True)


def integers(minimum: int, maximum: int | None = None) -> Domain:
    """The integer domain [minimum, maximum] (no upper end when ``maximum`` is ``None``)."""
    return Domain(float(minimum), math.inf if maximum is None else float(maximum), upper_closed=True, integer=True)


def check_finite(name: str, value: object) -> float:
    """``value`` as a finite float, or ``ValueError`` naming ``name``."""
    x = _as_real(name, value)
    if not math.isfinite(x):
        raise ValueError(f"{name} must be finite, got {x!r}")
    return x


def check_nonnegative(name: str, value: object, *, allow_inf: bool = False) -> float:
    """``value`` as a float in [0, ∞) (or [0, ∞] with ``allow_inf``)."""
    return (NONNEGATIVE_OR_INF if allow_inf else NONNEGATIVE).check(name, value)


def check_positive(name: str, value: object, *, allow_inf: bool = False) -> float:
    """``value`` as a float in (0, ∞) (or (0, ∞] with ``allow_inf``)."""
    return (POSITIVE_OR_INF if allow_inf else POSITIVE).check(name, value)


def check_probability(name: str, value: object) -> float:
    """``value`` as a float in [0, 1]."""
    return PROBABILITY.check(name, value)


def check_open_probability(name: str, value: object) -> float:
    """``value`` as a float in (0, 1)."""
    return OPEN_PROBABILITY.check(name, value)


def check_sampling_rate(name: str, value: object) -> float:
    """``value`` as a float in (0, 1] (a sampling rate)."""
    return SAMPLING_RATE.check(name, value)


def check_int(name: str, value: object, *, minimum: int = 1, maximum: int | None = None) -> int:
    """``value`` as an ``int`` ≥ ``minimum`` (and ≤ ``maximum``). ``bool`` and floats are rejected."""
    return integers(minimum, maximum).check_int(name, value)


def check_epsilon_delta(epsilon: object, delta: object, *, prefix: str = "") -> tuple[float, float]:
    """Validate one (ε, δ) pair: ε in [0, ∞), δ in [0, 1]. ``prefix`` names its place (``"mechanisms[3]."``)."""
    return (NONNEGATIVE.check(f"{prefix}epsilon", epsilon), PROBABILITY.check(f"{prefix}delta", delta))


def check_epsilon_delta_pairs(name: str, pairs: object) -> list[tuple[float, float]]:
    """A non-empty sequence of (ε, δ) pairs, each validated by :func:`check_epsilon_delta`.

    The one validator of (ε, δ) lists (``bounds``, ``region``): ``ValueError`` naming ``name`` for a
    non-sequence, an empty one or an entry that is not a pair, and ``name[i].epsilon``/``name[i].delta``
    for a value out of range.
    """
    if isinstance(pairs, (str, bytes)) or not isinstance(pairs, Iterable):
        raise ValueError(f"{name} must be a sequence of (epsilon, delta) pairs, got {pairs!r}")  # noqa: TRY004 (contract: ValueError)
    items = list(pairs)
    if not items:
        raise ValueError(f"{name} must contain at least one (epsilon, delta) pair, got {pairs!r}")
    out: list[tuple[float, float]] = []
    for i, pair in enumerate(items):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise ValueError(f"{name}[{i}] must be an (epsilon, delta) pair, got {pair!r}")
        out.append(check_epsilon_delta(pair[0], pair[1], prefix=f"{name}[{i}]."))
    return out


#: Σp of a probability vector of n entries may differ from 1 by n·PROBABILITY_SUM_SLACK_PER_TERM: the
#: rounding of n stored probabilities and of their sum (each within a few units in the last place),
#: with room for vectors built as products or differences of exact probabilities (f-DP tensor products).
PROBABILITY_SUM_SLACK_PER_TERM: float = 64 * UNIT_ROUNDOFF


def check_probability_vector(name: str, values: object, *, normalised: bool = True) -> FloatArray:
    """``values`` as a non-empty 1-d float array of probabilities, the one validator of such vectors.

    Every entry must be in [0, 1] (NaN rejected); with ``normalised`` the entries must also sum to 1
    within n·``PROBABILITY_SUM_SLACK_PER_TERM`` (sums are exact ``math.fsum``). Nothing is rescaled.
    """
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name} must be a 1-d array of probabilities, got {values!r}") from err
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-d array of probabilities, got shape {arr.shape}")
    if not np.all((arr >= 0.0) & (arr <= 1.0)):  # also rejects nan
        raise ValueError(f"{name} must hold probabilities in [0, 1], got {arr.tolist()[:5]!r}")
    if normalised:
        total = math.fsum(arr.tolist())
        if abs(total - 1.0) > PROBABILITY_SUM_SLACK_PER_TERM * arr.size:
            raise ValueError(f"{name} must sum to 1, got sum {total!r}")
    return arr


# ---------------------------------------------------------------------------------------------
# Log-space helpers.
# ---------------------------------------------------------------------------------------------


def log1mexp(x: float) -> float:
    """log(1 − eˣ) for x ≤ 0, accurate everywhere (Mächler 2012); −inf at x = 0."""
    if x > 0:
        raise ValueError(f"log1mexp needs x <= 0, got {x!r}")
    if x == 0:
        return -math.inf
    if x > -math.log(2.0):
        return math.log(-math.expm1(x))
    return math.log1p(-math.exp(x))


def log1mexp_array(x: npt.ArrayLike) -> FloatArray:
    """log(1 − eˣ) elementwise for x ≤ 0 (Mächler 2012): −inf at 0, 0 at −inf (NaN for x > 0)."""
    arr = np.asarray(x, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(arr > -math.log(2.0), np.log(-np.expm1(arr)), np.log1p(-np.exp(arr)))
    return np.asarray(out, dtype=np.float64)


def logsubexp(a: float, b: float) -> float:
    """log(eᵃ − eᵇ) for a ≥ b; −inf when a = b."""
    if b > a:
        raise ValueError(f"logsubexp needs a >= b, got a={a!r}, b={b!r}")
    if b == -math.inf:
        return a
    return a + log1mexp(b - a)


def log_binomial(n: int, k: FloatArray | int) -> FloatArray:
    """log C(n, k), vectorised over ``k`` (via ``scipy.special.gammaln``)."""
    kk = np.asarray(k, dtype=np.float64)
    return np.asarray(gammaln(n + 1.0) - gammaln(kk + 1.0) - gammaln(n - kk + 1.0), dtype=np.float64)


def log_sum_exp(values: npt.ArrayLike) -> float:
    """log Σ exp(vᵢ) = m + log Σ exp(vᵢ − m) with m = max vᵢ: −inf for an empty input or all −inf.

    Nearest-rounded, not certified: :func:`log_sum_exp_up` is the rounded-up variant and
    :func:`log_sum_exp_error` the error bound between them.
    """
    arr = np.asarray(values, dtype=np.float64)
    if arr.size == 0:
        return -math.inf
    m = float(np.max(arr))
    if m == -math.inf:
        return -math.inf
    if m == math.inf:
        return math.inf
    return m + math.log(float(np.sum(np.exp(arr - m))))


def log_sum_exp_error(n: int, value: float) -> float:
    """A bound on |:func:`log_sum_exp` − log Σ exp(vᵢ)| for n terms (finite or −inf) whose result is ``value``.

    With m = max vᵢ and S = Σ exp(vᵢ − m) ∈ [1, n]: vᵢ − m rounds once (absolute u·|vᵢ − m|, a relative
    factor e^{±u|vᵢ−m|} on its exponential) and exp adds 2u, so term i is off by at most
    e^{vᵢ−m}(u|vᵢ − m|·1.01 + 2.01u) ≤ (0.38 + 2.01·e^{vᵢ−m})u absolutely (x·e^{−x} ≤ 1/e; terms that
    underflow lose less than 2⁻¹⁰⁷⁴ each). Relative to S ≥ 1 that is (0.38n + 2.01)u, and the sum of n
    non-negative terms adds γ_{n−1} (Higham §4.2), so log S is off by at most (1.4n + 4)u for
    n < 2²⁰; log adds 2u·log n ≤ 2n·u and m + log S one rounding of the result (1.01u·|value|). In
    all ≤ (3.4n + 4)u + 1.01u·|value|, returned as ``(4n + 16)·u·(1 + |value|)`` rounded up.

    Args:
        n: the number of terms (n < 2²⁰).
        value: the computed log-sum-exp.
    """
    if n <= 0 or not math.isfinite(value):
        return 0.0
    return widen_up((4.0 * n + 16.0) * UNIT_ROUNDOFF * (1.0 + abs(value)), 8)


def log_sum_exp_up(values: npt.ArrayLike) -> float:
    """:func:`log_sum_exp` rounded up: never below the exact log Σ exp(vᵢ) of the given floats."""
    arr = np.asarray(values, dtype=np.float64)
    v = log_sum_exp(arr)
    return v + log_sum_exp_error(int(arr.size), v) if math.isfinite(v) else v


def log_sum_exp_down(values: npt.ArrayLike) -> float:
    """:func:`log_sum_exp` rounded down: never above the exact log Σ exp(vᵢ) of the given floats."""
    arr = np.asarray(values, dtype=np.float64)
    v = log_sum_exp(arr)
    return v - log_sum_exp_error(int(arr.size), v) if math.isfinite(v) else v


#: Block length of :func:`suffix_log_sum_exp` (its relative error is ≤ (block + #blocks + 8)·2u).
SUFFIX_BLOCK: int = 2048


def suffix_log_sum_exp(a: FloatArray) -> FloatArray:
    """out[j] = log Σ_{i ≥ j} exp(a[i]) for j = 0 … n, out[n] = −inf, in O(n).

    Blocks of :data:`SUFFIX_BLOCK` entries are summed with their own maximum as scale (never
    underflowing), and the running total of the later blocks is added in log space. For log weights
    (every a[i] ≤ 0, so |scale| ≤ |out[j]|) the log error of out[j] is at most
    :func:`suffix_log_sum_exp_error` (recursive summation of positive terms, Higham §4.2) plus the
    exp/log rounding, 8u·(1 + |out[j]|), which callers charge with the magnitudes of their results.
    """
    n = a.size
    out = np.full(n + 1, -math.inf)
    run = -math.inf
    with np.errstate(divide="ignore", invalid="ignore"):
        for start in range(((n - 1) // SUFFIX_BLOCK) * SUFFIX_BLOCK, -1, -SUFFIX_BLOCK):
            part = a[start : start + SUFFIX_BLOCK]
            local = _block_suffix(part)
            out[start : start + part.size] = np.logaddexp(local, run)
            run = float(out[start])
    return out


#: A block's suffix sums restart with a new scale once they drop this many nats below the current one.
_SUFFIX_RESCALE_NATS = 600.0


def _block_suffix(part: FloatArray) -> FloatArray:
    res = np.full(part.size, -math.inf)
    start = 0
    while start < part.size:
        sub = part[start:]
        m = float(np.max(sub))
        if m == -math.inf:
            break
        loc = np.log(np.cumsum(np.exp(sub - m)[::-1])[::-1]) + m
        res[start:] = loc
        far = np.flatnonzero(loc < m - _SUFFIX_RESCALE_NATS)
        if far.size == 0:
            break
        start += int(far[0])
    return res


def suffix_log_sum_exp_error(n: int) -> float:
    """Relative error bound of :func:`suffix_log_sum_exp` on n terms, as a log error (Higham §4.2)."""
    return (min(n, SUFFIX_BLOCK) + n / SUFFIX_BLOCK + 8.0) * UNIT_ROUNDOFF * 2.0


# ---------------------------------------------------------------------------------------------
# Accuracy: the one knob of the numerical engines (appended for the PLD engine, issue 4).
# ---------------------------------------------------------------------------------------------

#: Assumed accuracy of a law's log tail functions (``p_logsf`` ...): absolute error at most
#: ``LAW_LOG_ERROR * max(1, |value|)``. The PLD engine widens every cell mass by this much.
LAW_LOG_ERROR: float = 64 * UNIT_ROUNDOFF

#: Total P-mass per direction that the PLD engine's per-step windows may move to +∞ (upper end) or
#: drop (lower end): far below any δ a query can ask about (δ ≥ 1e-300).
PLD_LAW_TAIL: float = 1e-305

#: Relative width an ε bracket may have before the automatic grid refinement stops trying to reach the
#: requested width (only below δ = PLD_DEEP_DELTA, where the request is a goal, not a promise).
PLD_DEEP_DELTA: float = 1e-15

#: First grid step of the automatic refinement (a coarse pass whose width calibrates the width model).
PLD_FIRST_STEP: float = 1e-2

#: Shuffled batches (``optcomp.mechanisms.shuffle``): the binned maximum of one epoch's lower-bound
#: pair covers values from its CDF = SHUFFLE_LOW_CDF up to one coordinate's survival SHUFFLE_HIGH_SF/T
#: (the end bins take the rest: coarser bins only weaken a lower bound, never invalidate it).
SHUFFLE_LOW_CDF: float = 1e-12
SHUFFLE_HIGH_SF: float = 1e-18

#: Mixture of Gaussians (``optcomp.mechanisms.mixture``): shifts μ = c/σ below MIXTURE_MIN_MU are
#: rounded *up* to it (a larger shift only increases both hockey-stick curves, so the law stays an
#: upper bound; it keeps Newton's start and μ·z finite); μ above MIXTURE_MAX_MU is refused (μ² overflows).
MIXTURE_MIN_MU: float = 2.0**-500
MIXTURE_MAX_MU: float = 2.0**500


@dataclass(frozen=True, slots=True, kw_only=True)
class Accuracy:
    """The accuracy knob of the PLD engine: a requested relative width, or an expert grid step.

    Attributes:
        relative_width: the requested relative width (upper − lower)/max(upper, 0.01) of ε brackets
            (of δ brackets: (upper − lower)/upper). The engine picks the grid step from a coarse first
            pass and the second-order width model, and refines until the width is met; if the memory
            cap is hit first it raises :class:`~optcomp.pld.GridTooLargeError` (ε queries with
            δ ≥ 1e-15; δ queries and deeper tails return the narrowest certified bracket reached).
        grid_step: expert override: a fixed loss-grid step Δ (no refinement). Both ends of the
            bracket are off the truth by O(k·Δ²) for smooth laws (``docs/pld.md``).
        tail_mass: the mass an FFT window may leave outside (it is added to upper ends and
            subtracted from lower ends; deep tails use tilted windows with the same tolerance).
        memory_cap: bytes of working arrays the engine may allocate for one realisation (default
            1 GiB); a grid that would need more raises ``GridTooLargeError``.
    """

    relative_width: float = 1e-4
    grid_step: float | None = None
    tail_mass: float = 1e-14
    memory_cap: int = 2**30

    def __post_init__(self) -> None:
        check_open_probability("relative_width", self.relative_width)
        if self.grid_step is not None:
            check_positive("grid_step", self.grid_step)
        check_open_probability("tail_mass", self.tail_mass)
        check_int("memory_cap", self.memory_cap, minimum=2**20)


#: The accuracy every public function uses unless given another.
DEFAULT_ACCURACY: Accuracy = Accuracy()


__all__ = [
    "ABSOLUTE_SLACK_PER_TERM",
    "CALIBRATION_RTOL",
    "CURVE_ABSOLUTE_SLACK",
    "DEFAULT_ACCURACY",
    "EPSILON_WIDTH_FLOOR",
    "EPSILON_XTOL",
    "FEW_ULPS",
    "FINITE",
    "GDP_LOG_ERROR_PER_UNIT",
    "GENEROUS_RELATIVE_SLACK",
    "LAW_LOG_ERROR",
    "NONNEGATIVE",
    "NONNEGATIVE_OR_INF",
    "OPEN_PROBABILITY",
    "OPTIMAL_CALIBRATE_START",
    "OPTIMAL_EXACT_RELATIVE_WIDTH",
    "OPTIMAL_R_RTOL",
    "PLD_DEEP_DELTA",
    "PLD_FIRST_STEP",
    "PLD_LAW_TAIL",
    "PLD_TAIL_XTOL",
    "POSITIVE",
    "POSITIVE_OR_INF",
    "PROBABILITY",
    "PROBABILITY_SUM_SLACK_PER_TERM",
    "RELATIVE_SLACK",
    "ROOT_RTOL",
    "SAMPLING_RATE",
    "SMALLEST_SUBNORMAL",
    "SPECIAL_FUNCTION_LOG_ERROR",
    "SUFFIX_BLOCK",
    "TINY_PAD",
    "UNIT_ROUNDOFF",
    "Accuracy",
    "Bound",
    "Domain",
    "FloatArray",
    "check_epsilon_delta",
    "check_epsilon_delta_pairs",
    "check_finite",
    "check_int",
    "check_nonnegative",
    "check_open_probability",
    "check_positive",
    "check_probability",
    "check_probability_vector",
    "check_sampling_rate",
    "clip_probability_upper",
    "dot_error_bound",
    "fft_error_bound",
    "gamma",
    "integers",
    "log1mexp",
    "log1mexp_array",
    "log_binomial",
    "log_sum_exp",
    "log_sum_exp_down",
    "log_sum_exp_error",
    "log_sum_exp_up",
    "logsubexp",
    "next_down",
    "next_up",
    "round_down",
    "round_up",
    "rounding_error",
    "suffix_log_sum_exp",
    "suffix_log_sum_exp_error",
    "sum_error_bound",
    "widen_down",
    "widen_up",
]

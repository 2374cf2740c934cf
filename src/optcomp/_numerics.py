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
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.special import gammaln, logsumexp

FloatArray = npt.NDArray[np.float64]

# ---------------------------------------------------------------------------------------------
# Tolerances: the one place for the numbers that decide how careful we are.
# ---------------------------------------------------------------------------------------------

#: Unit roundoff of IEEE double precision (2^-53).
UNIT_ROUNDOFF: float = 2.0**-53

#: Relative slack added to a computed quantity before it is reported as an upper bound (and removed
#: before it is reported as a lower bound). It covers the rounding error of a few dozen floating-point
#: operations in a well-conditioned log-space formula; functions whose error can be larger account for
#: it explicitly and say so in their docstrings.
RELATIVE_SLACK: float = 64 * UNIT_ROUNDOFF

#: Absolute slack for probabilities computed as sums of O(n) terms in [0, 1]: added per term.
ABSOLUTE_SLACK_PER_TERM: float = 4 * UNIT_ROUNDOFF

#: Default tolerance for root finding on ε (absolute); the bracket returned always contains the root.
EPSILON_XTOL: float = 1e-12

#: Default relative tolerance for root finding, passed to ``scipy.optimize.brentq``.
ROOT_RTOL: float = 4 * UNIT_ROUNDOFF

#: Relative tolerance of calibrated noise / step counts (``optcomp.calibrate``, ``optcomp.dpsgd``): the
#: bisection stops when the passing and failing noise differ by this factor. The returned value always
#: passes (safe side); this only decides how close to the true root it lands.
CALIBRATION_RTOL: float = 1e-3


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
        """``width / upper`` (0 for a zero-width bracket at 0)."""
        if self.upper == 0.0:
            return 0.0
        return self.width / abs(self.upper)

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


def check_finite(name: str, value: object) -> float:
    """``value`` as a finite float, or ``ValueError`` naming ``name``."""
    x = _as_real(name, value)
    if not math.isfinite(x):
        raise ValueError(f"{name} must be finite, got {x!r}")
    return x


def check_nonnegative(name: str, value: object, *, allow_inf: bool = False) -> float:
    """``value`` as a float in [0, ∞) (or [0, ∞] with ``allow_inf``)."""
    x = _as_real(name, value)
    if x < 0 or (math.isinf(x) and not allow_inf):
        rng = "[0, inf]" if allow_inf else "[0, inf)"
        raise ValueError(f"{name} must be in {rng}, got {x!r}")
    return x


def check_positive(name: str, value: object, *, allow_inf: bool = False) -> float:
    """``value`` as a float in (0, ∞)."""
    x = _as_real(name, value)
    if not x > 0 or (math.isinf(x) and not allow_inf):
        rng = "(0, inf]" if allow_inf else "(0, inf)"
        raise ValueError(f"{name} must be in {rng}, got {x!r}")
    return x


def check_probability(name: str, value: object) -> float:
    """``value`` as a float in [0, 1]."""
    x = _as_real(name, value)
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"{name} must be in [0, 1], got {x!r}")
    return x


def check_open_probability(name: str, value: object) -> float:
    """``value`` as a float in (0, 1)."""
    x = _as_real(name, value)
    if not 0.0 < x < 1.0:
        raise ValueError(f"{name} must be in (0, 1), got {x!r}")
    return x


def check_sampling_rate(name: str, value: object) -> float:
    """``value`` as a float in (0, 1] (a sampling rate)."""
    x = _as_real(name, value)
    if not 0.0 < x <= 1.0:
        raise ValueError(f"{name} must be in (0, 1], got {x!r}")
    return x


def check_int(name: str, value: object, *, minimum: int = 1, maximum: int | None = None) -> int:
    """``value`` as an ``int`` ≥ ``minimum`` (and ≤ ``maximum``). ``bool`` and floats are rejected."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")  # noqa: TRY004 (contract: ValueError)
    k = int(value)
    if k < minimum or (maximum is not None and k > maximum):
        rng = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"
        raise ValueError(f"{name} must be an integer {rng}, got {k!r}")
    return k


def check_epsilon_delta(epsilon: object, delta: object, *, prefix: str = "") -> tuple[float, float]:
    """Validate one (ε, δ) pair: ε in [0, ∞), δ in [0, 1]."""
    return (check_nonnegative(f"{prefix}epsilon", epsilon), check_probability(f"{prefix}delta", delta))


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
    """log Σ exp(values) (``scipy.special.logsumexp``), −inf for an empty input."""
    arr = np.asarray(values, dtype=np.float64)
    if arr.size == 0:
        return -math.inf
    return float(logsumexp(arr))


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
    "DEFAULT_ACCURACY",
    "EPSILON_XTOL",
    "LAW_LOG_ERROR",
    "PLD_DEEP_DELTA",
    "PLD_FIRST_STEP",
    "PLD_LAW_TAIL",
    "RELATIVE_SLACK",
    "ROOT_RTOL",
    "UNIT_ROUNDOFF",
    "Accuracy",
    "Bound",
    "FloatArray",
    "check_epsilon_delta",
    "check_finite",
    "check_int",
    "check_nonnegative",
    "check_open_probability",
    "check_positive",
    "check_probability",
    "check_sampling_rate",
    "clip_probability_upper",
    "fft_error_bound",
    "log1mexp",
    "log1mexp_array",
    "log_binomial",
    "log_sum_exp",
    "logsubexp",
    "round_down",
    "round_up",
]

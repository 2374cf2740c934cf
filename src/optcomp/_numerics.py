"""The numeric values of optcomp: the certified ``Bound``, ``Accuracy``, the named tolerances and validators.

Everything in optcomp that is not an exact closed form returns a :class:`Bound` ``(lower, upper)``.
``upper`` is *certified*: it is never below the true value, with rounding direction, truncation and
floating-point error accounted for by the function that produced it (its docstring says how).
``lower`` is a valid lower bound under the same accounting.

The rounding vocabulary that certified engines state their slack in (``widen_up``, ``rounding_error``,
``sum_error_bound``, ``log_sum_exp_up``, …) and the log-space helpers live in :mod:`optcomp._rounding`,
which builds on the constants here. This module imports nothing of ours; every other module may import it.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
EpsDelta = tuple[float, float]  # an (ε, δ) pair: a black box's guarantee
Progress = Callable[[int, int], None]  # a callback of long work, told (done, total) as it advances
ProgressLine = Callable[[str], None]  # a callback told one line of news (a stage begun, a table written)

# ---------------------------------------------------------------------------------------------
# Tolerances: the one place for the numbers that decide how careful we are.
# ---------------------------------------------------------------------------------------------

#: Unit roundoff of IEEE double precision (2^-53).
UNIT_ROUNDOFF: float = 2.0**-53

#: The smallest positive subnormal double, 2⁻¹⁰⁷⁴: the absolute error of a result that underflows.
SMALLEST_SUBNORMAL: float = 5e-324
#: The smallest positive normal double, 2⁻¹⁰²²: below it a result carries an absolute, not relative, error.
SMALLEST_NORMAL: float = 2.0**-1022
#: Smallest product |a·b| for which Dekker's TwoProduct error term is exact (none of its partial products
#: reaches the subnormal range: 2^-1022 · 2^53 with a margin).
EXACT_PRODUCT_MIN: float = 2.0**-900

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

#: ``optimal.calibrate`` first checks ε₀ = ε·2⁻⁶⁰/k, so small that every feasible target is met (else δ₀ is
#: too large), and hands it to the inverse solver as the known passing end.
OPTIMAL_CALIBRATE_START: float = 2.0**-60

#: Margin on a first-order error bound e·(1 + O(e)), e ≪ 1 %, for its higher-order terms (pld._fft, _rounding).
ERROR_BOUND_MARGIN: float = 1.01

#: Relative slack added to a computed quantity before it is reported as an upper bound (and removed
#: before it is reported as a lower bound). It covers the rounding error of a few dozen floating-point
#: operations in a well-conditioned log-space formula; functions whose error can be larger account for
#: it explicitly and say so in their docstrings.
RELATIVE_SLACK: float = 64 * UNIT_ROUNDOFF

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

#: Relative tolerance of calibrated noise / step counts (``optcomp.calibrate``, ``optcomp.dpsgd``): the
#: bisection stops when the passing and failing noise differ by this factor. The returned value always
#: passes (safe side); this only decides how close to the true root it lands.
CALIBRATION_RTOL: float = 1e-3
#: Relative tolerance of a parameter calibrated onto a mechanism family (``calibrate.noise_for_target``,
#: ``dpsgd.noise_multiplier``): the returned value is within this of the least parameter whose
#: *certified* ε meets the target (issue 26, item 6).
PARAMETER_RTOL: float = 1e-5
#: Finest PLD grid step the planner asks for (a budget of 10⁻⁶ would ask for ~10⁻¹⁰ on large plans; finer
#: is pointless for a planning answer, and a subnormal step leaves the engine's index range).
PLANNER_MIN_GRID_STEP: float = 1e-12

#: Smallest α of the geometric parts of ``fdp.alpha_grid`` (points 2⁻⁴⁰ … 0.5 and their mirror images
#: resolve the ends of [0, 1], where trade-off curves bend most).
ALPHA_GRID_MIN: float = 2.0**-40


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
# Safe-side rounding: the generic ends of a Bound (RELATIVE_SLACK and one ulp). Slack counted
# operation by operation is stated with optcomp._rounding's vocabulary instead.
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
# Validators: one message shape everywhere ("<name> must be <range>, got <value>").
# ---------------------------------------------------------------------------------------------


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
NONNEGATIVE = Domain(0.0, math.inf)
NONNEGATIVE_OR_INF = Domain(0.0, math.inf, upper_closed=True)
POSITIVE = Domain(0.0, math.inf, lower_closed=False)
POSITIVE_OR_INF = Domain(0.0, math.inf, lower_closed=False, upper_closed=True)
PROBABILITY = Domain(0.0, 1.0, upper_closed=True)
OPEN_PROBABILITY = Domain(0.0, 1.0, lower_closed=False)
SAMPLING_RATE = Domain(0.0, 1.0, lower_closed=False, upper_closed=True)
#: Largest mean privacy loss (≈ ε) of a composition ``dpsgd.epsilon``/``delta`` attempt; the PLD engine's
#: memory cap is reached far below it at the default accuracy.
MAX_MEAN_LOSS = 1e6


class GridTooLargeError(ValueError):
    """The requested accuracy needs more working memory than ``Accuracy.memory_cap`` allows.

    Raised instead of silently coarsening the grid. The message names what to change: a larger
    ``Accuracy.relative_width`` (or ``grid_step``), a larger ``Accuracy.memory_cap``, or fewer
    compositions. ``bracket``: the narrowest certified bracket reached, where the raiser has one (else
    ``None``). (Defined here, below the engines, so that :class:`LossScaleError` can be one;
    ``optcomp.pld.GridTooLargeError`` is this class.)
    """

    bracket: Bound | None = None


class LossScaleError(GridTooLargeError):
    """A mechanism's privacy-loss scale Δ/b lies outside :data:`LOSS_SCALE`: no grid spans it.

    Raised at construction with the noise parameter named. A kind of :class:`GridTooLargeError`, so
    that an inverse search that probes such a noise level counts it as failing there (as it does a
    grid beyond the memory cap) instead of stopping.
    """


#: Largest privacy-loss scale Δ/b of an additive-noise mechanism (Gaussian μ = Δ/σ, Laplace ε = Δ/b) that
#: the engines compute: beyond it their float arithmetic leaves its range (measured: a grid cell of
#: Laplace at Δ/b = 3e9 overflows e^Δ; discrete Laplace at 1e15 overflows the cell index; Gaussian μ = 1e200
#: overflows μ²), and far below it every answer is already ε = Δ/b or "no grid fits the memory cap".
MAX_LOSS_SCALE: float = 1e9
#: The domain of Δ/b (a ratio 0, from an underflow, is as far outside as an infinite one).
LOSS_SCALE = Domain(0.0, MAX_LOSS_SCALE, lower_closed=False, upper_closed=True)


def integers(minimum: int, maximum: int | None = None) -> Domain:
    """The integer domain [minimum, maximum] (no upper end when ``maximum`` is ``None``)."""
    return Domain(float(minimum), math.inf if maximum is None else float(maximum), upper_closed=True, integer=True)


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


def check_epsilons(epsilons: npt.ArrayLike) -> FloatArray:
    """``epsilons`` as a flat float array, each in [0, inf) (``ValueError`` naming the first bad one)."""
    eps = np.asarray(epsilons, dtype=np.float64).ravel()
    if eps.size and (not np.all(np.isfinite(eps)) or np.any(eps < 0)):
        bad = eps[~(np.isfinite(eps) & (eps >= 0))][0]
        raise ValueError(f"epsilons must be in [0, inf), got {bad!r}")
    return eps


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

#: Balls-in-bins epochs (``optcomp.mechanisms._allocation_grid``): the mass each revealed or spread tail
#: may carry (all accounted, at ±∞ or S = 0: certified at any δ) where a query names no δ.
ALLOCATION_TAIL: float = 1e-30
#: Balls-in-bins: the share of a query's δ all tails of all epochs may add (``docs/samplers.md`` Lemma E).
ALLOCATION_TAIL_SHARE: float = 1e-6
#: Balls-in-bins: ℓ_min leaves the spread of factors below it a variance x_min²·Q(ℓ < ℓ_min) ≤ this·h².
ALLOCATION_LOW_VARIANCE: float = 1e-4

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


def finer_accuracy(a: Accuracy, b: Accuracy) -> Accuracy:
    """The default accuracy of a composition of two compositions (``Composition.compose`` and
    ``PrivacyLossDistribution.compose``): the finer of each knob (the smaller relative width and tail
    mass, the larger memory cap; a fixed grid step only if both fix one, the smaller). Queries
    answered at it are at least as accurate as either default asked."""
    if a == b:
        return a
    step = None if a.grid_step is None or b.grid_step is None else min(a.grid_step, b.grid_step)
    return replace(
        a,
        relative_width=min(a.relative_width, b.relative_width),
        grid_step=step,
        tail_mass=min(a.tail_mass, b.tail_mass),
        memory_cap=max(a.memory_cap, b.memory_cap),
    )


__all__ = [
    "ALLOCATION_LOW_VARIANCE",
    "ALLOCATION_TAIL",
    "ALLOCATION_TAIL_SHARE",
    "ALPHA_GRID_MIN",
    "CALIBRATION_RTOL",
    "CURVE_ABSOLUTE_SLACK",
    "DEFAULT_ACCURACY",
    "EPSILON_WIDTH_FLOOR",
    "EPSILON_XTOL",
    "ERROR_BOUND_MARGIN",
    "EXACT_PRODUCT_MIN",
    "FEW_ULPS",
    "GDP_LOG_ERROR_PER_UNIT",
    "GENEROUS_RELATIVE_SLACK",
    "LAW_LOG_ERROR",
    "LOSS_SCALE",
    "MAX_LOSS_SCALE",
    "NONNEGATIVE",
    "OPEN_PROBABILITY",
    "OPTIMAL_CALIBRATE_START",
    "OPTIMAL_EXACT_RELATIVE_WIDTH",
    "OPTIMAL_R_RTOL",
    "PARAMETER_RTOL",
    "PLD_DEEP_DELTA",
    "PLD_FIRST_STEP",
    "PLD_LAW_TAIL",
    "PLD_TAIL_XTOL",
    "POSITIVE",
    "POSITIVE_OR_INF",
    "PROBABILITY",
    "PROBABILITY_SUM_SLACK_PER_TERM",
    "RELATIVE_SLACK",
    "SAMPLING_RATE",
    "SMALLEST_NORMAL",
    "SMALLEST_SUBNORMAL",
    "SPECIAL_FUNCTION_LOG_ERROR",
    "TINY_PAD",
    "UNIT_ROUNDOFF",
    "Accuracy",
    "Bound",
    "Domain",
    "EpsDelta",
    "FloatArray",
    "GridTooLargeError",
    "LossScaleError",
    "Progress",
    "ProgressLine",
    "check_epsilon_delta",
    "check_epsilon_delta_pairs",
    "check_epsilons",
    "check_int",
    "check_nonnegative",
    "check_open_probability",
    "check_positive",
    "check_probability",
    "check_probability_vector",
    "check_sampling_rate",
    "finer_accuracy",
    "integers",
    "round_down",
    "round_up",
]

"""The engines a composition's queries are answered by: one small protocol, six implementations.

The router (:meth:`optcomp.queries.Composition.route`, the one routing rule) hands back an
:class:`Engine` for one accuracy; every query of a :class:`~optcomp.queries.Composition` is one call on
it, and no code outside the router branches on which engine it is:

* :class:`GdpEngine` — Gaussians only: μ-GDP with μ = √(Σ kᵢμᵢ²) (Dong–Roth–Su Cor 3.3) is *equivalent*
  to the curve δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (DRS Cor 2.13), bracketed by
  :func:`optcomp.fdp.gdp_delta_bound` at μ rounded outward; ε(δ) is the float boundary of those
  certified values (:func:`optcomp._inverse.float_boundary`). No accuracy knob.
* :class:`OptimalEngine` — canonical (ε, δ) black boxes: :mod:`optcomp.optimal` (KOV Thm III.3,
  MV Thms 1.4–1.5), driven only through :class:`~optcomp.Accuracy` (``optimal``'s ``Goal.of`` is the one
  translation of an accuracy into its grid step).
* :class:`LatticeEngine` — items whose losses live on one exact lattice (discrete Gaussians of one σ): the
  exact convolution over the lattice index (:class:`optcomp.pld.LatticeDistribution`), built on first use;
* :class:`GridEngine` — anything else: the certified PLD grid (:class:`optcomp.pld.PrivacyLossDistribution`),
  built on first use.
* :class:`RenyiEngine` — items known only by their Rényi curve (``ZeroConcentrated``, ``Renyi``), with
  any mechanisms that have a Rényi curve: the summed curve converted by :class:`optcomp.rdp.RenyiConversion`
  (the closed form and the certified optimal conversion; each answer says which route gave it).
* :class:`AdaptiveEngine` — compositions with bounded-range steps (the exponential mechanism and kin), in the
  order given: the adaptive backward recursion (:mod:`optcomp.adaptive`, ``docs/selection.md``).

Every method returns brackets whose ``upper`` is certified (each engine's docstring says how);
``epsilon_estimate`` is the one uncertified answer and says so in its name; ``answers`` is the batch (the grid
shares realisations through :func:`optcomp.pld.refine_batch`; the others ask one by one).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal, Protocol

import numpy as np

from optcomp import optimal
from optcomp._inverse import float_boundary
from optcomp._numerics import EPSILON_WIDTH_FLOOR, PLD_DEEP_DELTA, Accuracy, Bound, FloatArray
from optcomp.adaptive import AdaptiveRecursion
from optcomp.fdp import gdp_delta_bound, gdp_epsilon
from optcomp.pld import (
    GridTooLargeError,
    HockeyStickCurve,
    LatticeDistribution,
    PrivacyLossDistribution,
    Reached,
    WarmStart,
    delta_width,
    epsilon_width,
    epsilons_at_step,
    refine_batch,
)
from optcomp.rdp import RenyiConversion

#: The names of the engines (what :meth:`optcomp.queries.Composition.engine` reports).
EngineName = Literal["gdp", "optimal", "lattice", "grid", "renyi", "adaptive"]

#: Points of the default δ(ε) curve (0 … 20) of engines without a placement of their own.
CURVE_POINTS = 201
#: Largest ε of that default curve.
CURVE_EPSILON_MAX = 20.0
#: Largest ε whose e^ε is a finite float64.
_EXP_MAX = 709.0
#: Upper δ ends of μ-GDP are read at ε' = min(ε, μ(μ/2 + this)), where a = −ε'/μ + μ/2 = −this: δ_μ
#: decreases in ε, so δ(ε) ≤ δ(ε'), and there δ has underflowed while ``gdp_delta_bound``'s error bound
#: is finite.
GDP_TAIL_A = 1e4
#: Errors one query of a batch (:meth:`Engine.answers`) keeps as its answer instead of stopping the others:
#: an engine's refusal or a value out of its range.
QUERY_ERRORS = (ValueError, ArithmeticError, MemoryError, NotImplementedError)


@dataclass
class Answers:
    """What :meth:`Engine.answers` returns: per δ the certified ε bracket, per ε the certified δ bracket, or
    the error that query raised (:data:`QUERY_ERRORS`)."""

    epsilons: dict[float, Bound | Exception] = field(default_factory=dict)
    deltas: dict[float, Bound | Exception] = field(default_factory=dict)


class Engine(Protocol):
    """What the router hands back: the queries of one composition at one accuracy."""

    @property
    def name(self) -> EngineName:
        """Which engine this is (reported by ``Composition.engine``; never branched on)."""
        ...

    def epsilon(self, delta: float, strict: bool) -> Bound:
        """Certified bracket of ε(δ); ``strict``: raise ``GridTooLargeError`` where the accuracy's
        relative width cannot be reached (only the grid and optimal engines have a width to miss)."""
        ...

    def delta(self, epsilon: float) -> Bound:
        """Certified bracket of δ(ε)."""
        ...

    def delta_curve(self, epsilons: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Certified (lower, upper) of δ(ε) at each ε of ``epsilons`` (validated by the caller)."""
        ...

    def curve(self, epsilons: FloatArray | None) -> HockeyStickCurve:
        """The certified δ(ε) curve (points placed by the engine unless given)."""
        ...

    def epsilon_estimate(self, delta: float) -> float:
        """An *uncertified* point estimate of ε(δ)."""
        ...

    def answers(self, deltas: Sequence[float], epsilons: Sequence[float], *, warm: WarmStart | None = None,
                position: int = 0) -> Answers:
        """Every ε(δ) of ``deltas`` and δ(ε) of ``epsilons`` as :meth:`epsilon` (strict for δ ≥
        ``PLD_DEEP_DELTA``) and :meth:`delta` answer them, each query's error kept as its answer. The grid
        shares realisations between them (:func:`optcomp.pld.refine_batch`, warm-started along a chain by
        ``warm`` at ``position``); the others ask one by one (:func:`each_answer`)."""
        ...


def one_answer(query: Callable[[float], Bound], x: float, reached: Bound | None) -> Bound | Exception:
    """``query(x)``, or its error. Where it refuses because the width cannot be reached
    (``GridTooLargeError``), the narrowest certified bracket reached is kept: ``reached`` (shared passes),
    else the one the refusal carries."""
    try:
        return query(x)
    except GridTooLargeError as exc:
        if reached is not None:
            return reached
        return exc.bracket if exc.bracket is not None else exc
    except QUERY_ERRORS as exc:
        return exc


def each_answer(engine: Engine | _OneByOne, deltas: Sequence[float], epsilons: Sequence[float],
                reached: Reached | None = None, target: float = math.inf) -> Answers:
    """:meth:`Engine.answers` one query at a time: each δ and ε not already answered within ``target`` by
    ``reached`` (nor stopped at the memory cap there) asked of ``engine`` alone."""
    reached = Reached() if reached is None else reached
    out = Answers()
    for d in deltas:
        b = reached.epsilons.get(d)
        keep = b is not None and (epsilon_width(b) <= target or reached.capped)
        out.epsilons[d] = b if keep and b is not None else one_answer(
            lambda x: engine.epsilon(x, strict=x >= PLD_DEEP_DELTA), d, b)
    for e in epsilons:
        b = reached.deltas.get(e)
        keep = b is not None and (delta_width(b) <= target or reached.capped)
        out.deltas[e] = b if keep and b is not None else one_answer(engine.delta, e, b)
    return out


def _default_epsilons(epsilons: FloatArray | None) -> FloatArray:
    return np.linspace(0.0, CURVE_EPSILON_MAX, CURVE_POINTS) if epsilons is None else epsilons


def _curve_of(engine: Engine, epsilons: FloatArray | None) -> HockeyStickCurve:
    grid = _default_epsilons(epsilons)
    lo, hi = engine.delta_curve(grid)
    return HockeyStickCurve(grid, lo, hi)


def _third_point(b: Bound) -> float:
    """(U + 2L)/3 of a bracket [L, U] (the grid ends' errors have a ratio near 2:1, ``docs/pld.md`` §7)."""
    return b.upper if not math.isfinite(b.upper) else (b.upper + 2 * b.lower) / 3


class _OneByOne:
    """:meth:`Engine.answers` for an engine that shares nothing between queries: each asked alone."""

    def epsilon(self, delta: float, strict: bool) -> Bound:
        raise NotImplementedError  # pragma: no cover - each engine below defines it

    def delta(self, epsilon: float) -> Bound:
        raise NotImplementedError  # pragma: no cover - each engine below defines it

    def answers(self, deltas: Sequence[float], epsilons: Sequence[float], *, warm: WarmStart | None = None,
                position: int = 0) -> Answers:
        return each_answer(self, deltas, epsilons)


# -- the grid ----------------------------------------------------------------------------------------

def _refusal(message: str, bracket: Bound) -> GridTooLargeError:
    """The width refusal, carrying the narrowest certified bracket reached (``.bracket``)."""
    error = GridTooLargeError(message)
    error.bracket = bracket
    return error

@dataclass
class GridEngine:
    """The certified PLD grid at ``accuracy``; ``at`` makes the grid of an accuracy on first use (the
    composition caches it per accuracy)."""

    at: Callable[[Accuracy], PrivacyLossDistribution]
    accuracy: Accuracy
    name: EngineName = "grid"

    @property
    def pld(self) -> PrivacyLossDistribution:
        return self.at(self.accuracy)

    def build(self) -> PrivacyLossDistribution:
        """The grid at this engine's accuracy (what the GDP engine's curve placement reads)."""
        return self.pld

    def answers(self, deltas: Sequence[float], epsilons: Sequence[float], *, warm: WarmStart | None = None,
                position: int = 0) -> Answers:
        """Every query read off shared realisations (:func:`optcomp.pld.refine_batch`): at each grid step one
        realisation answers every ε(δ) (:func:`optcomp.pld.epsilons_at_step`: deepest first, sharing probes and
        tilted ends) and the δ(ε) curve; a query still wider than the accuracy's width afterwards (unless the
        passes stopped at the memory cap, where the plain route stops too) is asked alone (:meth:`epsilon`,
        :meth:`delta`), which refines further or raises. Certified: every bracket is a certified pass's."""
        acc = self.accuracy

        def pass_at(step: float, ds: list[float], es: list[float]) -> tuple[dict[float, Bound], dict[float, Bound]]:
            pld = self.at(replace(acc, grid_step=step))
            eps = epsilons_at_step(pld, step, ds) if ds else {}
            if not es:
                return eps, {}
            lo, hi = pld.delta_curve(list(es))
            return eps, {e: Bound(float(a), float(b)) for e, a, b in zip(es, lo, hi, strict=True)}

        reached = refine_batch(pass_at, deltas, epsilons, acc, warm, position)
        if acc.grid_step is not None:  # one pass at the step asked for: what it reached is the answer
            return each_answer(self, deltas, epsilons, reached, math.inf)
        return each_answer(self, deltas, epsilons, reached, acc.relative_width)

    def epsilon(self, delta: float, strict: bool) -> Bound:
        """:meth:`PrivacyLossDistribution.epsilon` (strict for δ ≥ ``PLD_DEEP_DELTA`` there)."""
        return self.pld.epsilon(delta)

    def delta(self, epsilon: float) -> Bound:
        return self.pld.delta(epsilon)

    def delta_curve(self, epsilons: FloatArray) -> tuple[FloatArray, FloatArray]:
        return self.pld.delta_curve(epsilons)

    def curve(self, epsilons: FloatArray | None) -> HockeyStickCurve:
        """One realisation for every point, placed where the curve bends unless given."""
        return self.pld.hockey_stick_curve(epsilons)

    def epsilon_estimate(self, delta: float) -> float:
        return _third_point(self.pld.epsilon(delta))


# -- the exact lattice ------------------------------------------------------------------------------------
@dataclass
class LatticeEngine(_OneByOne):
    """The exact lattice composition (:class:`optcomp.pld.LatticeDistribution`); ``build`` makes it on first use.

    Certified at both ends: the truncated mass, the masses' and tilts' rounding, the FFT error and window,
    and the rounding of the loss positions are all charged (``optcomp.pld._lattice``); brackets are typically
    ten digits narrow (relative), whatever the accuracy asks."""

    build: Callable[[], LatticeDistribution]
    name: EngineName = "lattice"

    def epsilon(self, delta: float, strict: bool) -> Bound:
        """:meth:`LatticeDistribution.epsilon` (never wider than any width a caller can ask for)."""
        return self.build().epsilon(delta)

    def delta(self, epsilon: float) -> Bound:
        return self.build().delta(epsilon)

    def delta_curve(self, epsilons: FloatArray) -> tuple[FloatArray, FloatArray]:
        return self.build().delta_curve(epsilons)

    def curve(self, epsilons: FloatArray | None) -> HockeyStickCurve:
        """:meth:`delta_curve` on ``epsilons`` (default 0 … 20 in 201 steps), each point certified."""
        return _curve_of(self, epsilons)

    def epsilon_estimate(self, delta: float) -> float:
        return _third_point(self.build().epsilon(delta))


# -- the optimal black-box engine -----------------------------------------------------------------------
@dataclass
class OptimalEngine(_OneByOne):
    """(ε, δ) black boxes through :mod:`optcomp.optimal`, at ``accuracy`` (its one translation, ``Goal.of``).

    Certified at both ends (MV Thm 1.5: dominating and dominated envelopes, see :func:`optcomp.optimal.epsilon`).
    """

    items: Sequence[tuple[float, float]]
    accuracy: Accuracy
    name: EngineName = "optimal"

    def epsilon(self, delta: float, strict: bool) -> Bound:
        b = optimal.epsilon(self.items, delta, accuracy=self.accuracy)
        target = self.accuracy.relative_width
        if strict and math.isfinite(b.upper) and b.relative_width_above(EPSILON_WIDTH_FLOOR) > target:
            raise _refusal(
                f"the requested relative width {target:g} is not reached by the optimal black-box engine "
                f"(bracket [{b.lower!r}, {b.upper!r}]); ask for a larger Accuracy.relative_width, or query "
                "optcomp.optimal.epsilon with a larger max_points", b)
        return b

    def delta(self, epsilon: float) -> Bound:
        return optimal.delta(self.items, epsilon, accuracy=self.accuracy)

    def delta_curve(self, epsilons: FloatArray) -> tuple[FloatArray, FloatArray]:
        bounds = [self.delta(float(e)) for e in epsilons]
        return (np.array([b.lower for b in bounds], dtype=np.float64),
                np.array([b.upper for b in bounds], dtype=np.float64))

    def curve(self, epsilons: FloatArray | None) -> HockeyStickCurve:
        """:meth:`delta_curve` on ``epsilons`` (default 0 … 20 in 201 steps), each point certified."""
        return _curve_of(self, epsilons)

    def epsilon_estimate(self, delta: float) -> float:
        return _third_point(self.epsilon(delta, strict=False))


# -- the GDP closed form --------------------------------------------------------------------------------
def _gdp_tail(mu: float) -> float:
    """ε' = μ(μ/2 + ``GDP_TAIL_A``): beyond it δ_μ(ε) ≤ δ_μ(ε') has underflowed."""
    return mu * (mu / 2 + GDP_TAIL_A)


def gdp_upper(mu: float, epsilon: float) -> float:
    """A certified upper end of δ_μ(ε), read at min(ε, ε') (δ_μ decreases in ε)."""
    return gdp_delta_bound(mu, min(epsilon, _gdp_tail(mu)))[1]


def gdp_lower(mu: float, epsilon: float) -> float:
    """A certified lower end of δ_μ(ε) (0, trivially, beyond ε')."""
    return gdp_delta_bound(mu, epsilon)[0] if epsilon <= _gdp_tail(mu) else 0.0


def _newton(mu: float, root: float, delta: float, end: Callable[[float, float], float]) -> float:
    """Where the search for the boundary of ``end(mu, ε) ≤ delta`` starts: the closed-form root moved by
    one Newton step on the certified end, (end(μ, root) − δ)/|δ_μ'(root)|, δ_μ'(ε) = −e^ε Φ(−ε/μ − μ/2)
    (DRS Cor 2.13). Only a start: the boundary search decides (on certified values) what is returned."""
    slope = math.exp(root) * 0.5 * math.erfc((root / mu + mu / 2) / math.sqrt(2.0)) if root < _EXP_MAX else 0.0
    if not 0.0 < slope < math.inf:
        return root
    moved = root + (end(mu, root) - delta) / slope
    return moved if 0.0 <= moved < math.inf else root


@dataclass
class GdpEngine(_OneByOne):
    """μ-GDP for μ ∈ [``mu_lo``, ``mu_hi``] (δ increases with μ; DRS Cor 2.13, certified ends).

    ``mu`` is the merged μ itself (for the uncertified estimate); ``grid`` builds the PLD grid, whose
    point placement a whole curve reuses (:meth:`curve`)."""

    mu_lo: float
    mu_hi: float
    mu: float
    grid: Callable[[], PrivacyLossDistribution]
    name: EngineName = field(default="gdp")

    def delta(self, epsilon: float) -> Bound:
        return Bound(gdp_lower(self.mu_lo, epsilon), gdp_upper(self.mu_hi, epsilon))

    def delta_curve(self, epsilons: FloatArray) -> tuple[FloatArray, FloatArray]:
        bounds = [self.delta(float(e)) for e in epsilons]
        return (np.array([b.lower for b in bounds], dtype=np.float64),
                np.array([b.upper for b in bounds], dtype=np.float64))

    def epsilon(self, delta: float, strict: bool) -> Bound:
        """ε(δ) on certified δ values only (δ_μ(ε) decreases in ε), each end to adjacent floats.

        ``upper``: the least float ε (from the closed-form root at ``mu_hi``, :func:`optcomp.fdp.gdp_epsilon`)
        whose certified upper δ at ``mu_hi`` is ≤ ``delta``; ``lower``: the largest float ε below the root
        at ``mu_lo`` whose certified lower δ at ``mu_lo`` exceeds ``delta`` (or 0). Both are
        :func:`optcomp._inverse.float_boundary` on those verdicts (its safe-side proof).
        """
        if delta == 0.0:
            return Bound(math.inf, math.inf)  # δ_μ(ε) > 0 for every finite ε when μ > 0
        if gdp_upper(self.mu_hi, 0.0) <= delta:
            upper = 0.0
        else:
            start = _newton(self.mu_hi, gdp_epsilon(self.mu_hi, delta), delta, gdp_upper)
            found = float_boundary(lambda e: gdp_upper(self.mu_hi, e) <= delta, name="epsilon", passing_above=True,
                                   start=start)
            upper = math.inf if found.passing is None else found.passing
        if upper == 0.0 or gdp_lower(self.mu_lo, 0.0) <= delta:
            return Bound(0.0, upper)
        start = min(_newton(self.mu_lo, gdp_epsilon(self.mu_lo, delta), delta, gdp_lower), upper)
        below = float_boundary(lambda e: gdp_lower(self.mu_lo, e) <= delta, name="epsilon", passing_above=True,
                               passing=upper if math.isfinite(upper) else None, start=start)
        return Bound(0.0 if below.fail is None else below.fail, upper)

    def curve(self, epsilons: FloatArray | None) -> HockeyStickCurve:
        """The closed form at the points the grid places where the curve bends (or at ``epsilons``),
        intersected with the grid's own certified ends there (both certified: the intersection is)."""
        placed = self.grid().hockey_stick_curve(epsilons)
        lo, hi = self.delta_curve(placed.epsilons)
        return HockeyStickCurve(placed.epsilons, np.maximum(lo, placed.lower), np.minimum(hi, placed.upper))

    def epsilon_estimate(self, delta: float) -> float:
        """The GDP closed form ε(δ) at the merged μ itself (Brent's root stepped up by its solver tolerance),
        brought into the certified bracket (which is narrower than that step): an estimate."""
        b = self.epsilon(delta, strict=False)
        return min(max(gdp_epsilon(self.mu, delta), b.lower), b.upper)


# -- the Rényi conversion ------------------------------------------------------------------------------
@dataclass
class RenyiEngine(_OneByOne):
    """A composition known through its Rényi curve (an item is a ``ZeroConcentrated`` or ``Renyi`` black box):
    :class:`optcomp.rdp.RenyiConversion` of the summed curve (:func:`optcomp.rdp.stated_curve`).

    ``epsilon``/``delta`` return :class:`optcomp.rdp.ConversionBound` brackets (a ``Bound`` that names the
    route — ``"optimal"``: the dual certificate, ``"closed_form"``: Canonne–Kamath–Steinke Prop. 12 — and
    carries the verified witness law of its lower end); the upper end is the smaller certified one, and the
    bracket holds for every mechanism with that curve. Answers are cached per query value (each is a
    linear program). ``delta_curve``/``curve``: the closed form above, the witness laws found so far below.
    """

    conversion: RenyiConversion
    name: EngineName = "renyi"
    _eps: dict[float, Bound] = field(default_factory=dict, repr=False)
    _deltas: dict[float, Bound] = field(default_factory=dict, repr=False)

    def epsilon(self, delta: float, strict: bool) -> Bound:
        """The conversion's ε bracket (both routes; the tighter upper end). ``strict``: a bracket wider
        than ``Accuracy.relative_width`` (relative to max(upper, ``EPSILON_WIDTH_FLOOR``)) raises
        :class:`~optcomp.pld.GridTooLargeError` carrying it as ``.bracket`` (as the grid engine does)."""
        if delta not in self._eps:
            self._eps[delta] = self.conversion.epsilon(delta)
        b = self._eps[delta]
        target = self.conversion.accuracy.relative_width
        if strict and math.isfinite(b.upper) and b.relative_width_above(EPSILON_WIDTH_FLOOR) > target:
            raise _refusal(
                f"the requested relative width {target:g} is not reached by the Renyi conversion at "
                f"delta={delta:g}: the width is {b.relative_width_above(EPSILON_WIDTH_FLOOR):.3g} "
                f"(bracket [{b.lower!r}, {b.upper!r}], route {getattr(b, 'route', '?')}); ask for a larger "
                "Accuracy.relative_width (the bracket is on the exception's .bracket)", b)
        return b

    def delta(self, epsilon: float) -> Bound:
        if epsilon not in self._deltas:
            self._deltas[epsilon] = self.conversion.delta(epsilon)
        return self._deltas[epsilon]

    def delta_curve(self, epsilons: FloatArray) -> tuple[FloatArray, FloatArray]:
        return self.conversion.delta_curve(epsilons)

    def curve(self, epsilons: FloatArray | None) -> HockeyStickCurve:
        """:meth:`delta_curve` on ``epsilons`` (default 0 … 20 in 201 steps)."""
        return _curve_of(self, epsilons)

    def epsilon_estimate(self, delta: float) -> float:
        return self.epsilon(delta, strict=False).midpoint


# -- the adaptive bounded-range recursion ------------------------------------------------------------------
@dataclass
class AdaptiveEngine(_OneByOne):
    """Compositions with bounded-range steps, in the order given, against an adaptive analyst: the backward
    recursion of :class:`optcomp.adaptive.AdaptiveRecursion` (``docs/selection.md`` §2).

    Certified at both ends: the upper end is the chord-in-e^x bound with each t-cell's closed-form maximum and
    the fixed steps' split kernels, rounded up; the lower end an adversary restricted to a grid of t on the
    fixed steps' pooled lattice pairs, exact on the lattice, rounded down (``docs/selection.md`` §2.2–2.3).
    """

    recursion: AdaptiveRecursion
    name: EngineName = "adaptive"

    def epsilon(self, delta: float, strict: bool) -> Bound:
        """:meth:`AdaptiveRecursion.epsilon` (strict: ``GridTooLargeError`` where the width is not reached)."""
        return self.recursion.epsilon(delta, strict)

    def delta(self, epsilon: float) -> Bound:
        return self.recursion.delta(epsilon)

    def delta_curve(self, epsilons: FloatArray) -> tuple[FloatArray, FloatArray]:
        return self.recursion.delta_curve(epsilons)

    def curve(self, epsilons: FloatArray | None) -> HockeyStickCurve:
        """:meth:`delta_curve` on ``epsilons`` (default 0 … 20 in 201 steps), one refinement for all points."""
        return _curve_of(self, epsilons)

    def epsilon_estimate(self, delta: float) -> float:
        return self.recursion.epsilon_estimate(delta)


__all__ = [
    "CURVE_POINTS",
    "QUERY_ERRORS",
    "AdaptiveEngine",
    "Answers",
    "Engine",
    "EngineName",
    "GdpEngine",
    "GridEngine",
    "LatticeEngine",
    "OptimalEngine",
    "RenyiEngine",
    "each_answer",
    "gdp_lower",
    "gdp_upper",
    "one_answer",
]

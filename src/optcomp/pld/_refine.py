"""The one refinement schedule of the grid engine: how a certified bracket is narrowed to a requested width
by refining the grid step (issue 33 item 2; ``docs/architecture.md``, "The refinement schedule").

Every pass is certified whatever its step (``docs/pld.md``: the split pair dominates at every Δ; FFT error
bars and window mass are charged), so the schedule decides only *how many* passes a query costs and how fine
its last one is; nothing certified depends on it. It owns:

* the **one relative width** of a bracket (:func:`epsilon_width`, :func:`delta_width`): ε brackets relative
  to max(upper, ``EPSILON_WIDTH_FLOOR``), δ brackets to their upper end (0 below ``DELTA_WIDTH_FLOOR``);
* the **step rule** (:func:`next_step`): the width is of second order in Δ (``WIDTH_ORDER``; the order is
  re-measured between two passes in the asymptotic range, clamped to ``ORDER_RANGE``); the next step is the
  predicted one times ``STEP_MARGIN``, never more than ``MAX_STEP_RATIO`` of the last; a first pass too fine
  for the memory cap is coarsened by ``COARSENING``; at most ``MAX_PASSES`` passes;
* three drivers of that rule — one query on one realisation per pass (:func:`refine`, the engine's
  ``epsilon``/``delta``/``delta_curve``), laws that themselves live on the step (:func:`refine_stepped`:
  balls-in-bins, :class:`SteppedLaws` whose laws the caller's ``bracket_at(accuracy)`` rebuilds at each step),
  and many queries of one composition sharing each pass's realisation with a warm start along a chain of
  compositions (:func:`refine_batch`, ``Engine.answers``; :class:`WarmStart`).

No other module holds a refinement constant or spells a relative width (``tests/test_style.py``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from optcomp._numerics import EPSILON_WIDTH_FLOOR, PLD_FIRST_STEP, Accuracy, Bound
from optcomp.pld._cells import GridTooLargeError

#: Refinement passes of the automatic grid step.
MAX_PASSES = 7
#: Largest ratio of one refinement's step to the previous one (a near miss refines by less than 2×: every
#: pass costs ∝ 1/Δ, and the width model's prediction is what is trusted, with ``STEP_MARGIN``).
MAX_STEP_RATIO = 0.7
#: Safety factor on the width model's predicted step.
STEP_MARGIN = 0.85
#: Order of the width in the grid step (both ends are off by O(kΔ²), ``docs/pld.md`` §7).
WIDTH_ORDER = 2.0
#: Widths below which two passes estimate the width's order in Δ (above, ``WIDTH_ORDER`` is used).
ASYMPTOTIC = 0.05
#: Bounds on a measured order.
ORDER_RANGE = (1.0, 2.2)
#: Passes a start placed by the per-step width model (:func:`._stepmodel.first_step`) may take before the plain
#: schedule replays the query: the first, and one from its own width after a near miss ...
MODEL_PASSES = 2
#: ... which is a first pass no wider than this times the target (the model lands within it by design).
MODEL_MISS = 4.0
#: Coarsening of a first pass too fine for the span (its vectors exceed the memory cap).
COARSENING = 8.0
#: δ upper ends below which a δ bracket's relative width counts as met.
DELTA_WIDTH_FLOOR = 1e-300
#: Smallest ratio of one refinement's step to the previous one after a warm start (a later composition of a
#: chain): a pass far wider than the width model predicted there is off the model (at ε ≈ 60–140, σ = 0.5, a
#: lower end's search can stop at a coarse scan point: width 0.0128 at one step, 5e-5 at a 9 % finer one),
#: and its Δ² extrapolation (a 13× finer step, 4·10⁶-point tilted ends) is not trusted beyond 4×.
MIN_WARM_RATIO = 0.25
#: The width's growth exponent in the composed count at a fixed step before a chain has measured it (the
#: √T model) ...
GROWTH = 0.5
#: ... and the range a measured one is clamped to (measured on the issue-26 grid: about 0 to 0.8).
GROWTH_RANGE = (0.0, 1.0)
#: Largest ratio of one refinement's step to the previous one for laws that live on a dyadic step
#: (:func:`refine_stepped`: each next step is at most the current one divided by 1.25).
STEPPED_MAX_RATIO = 1.0 / 1.25


# -- the one relative width and the step rule -----------------------------------------------------------
def epsilon_width(b: Bound) -> float:
    """The relative width of an ε bracket: (upper − lower)/max(upper, ``EPSILON_WIDTH_FLOOR``), 0 when the
    ends are equal (the ``Accuracy.relative_width`` convention)."""
    if b.upper == b.lower:
        return 0.0
    return (b.upper - b.lower) / max(b.upper, EPSILON_WIDTH_FLOOR)


def delta_width(b: Bound) -> float:
    """The relative width of a δ bracket: (upper − lower)/upper, 0 when upper ≤ ``DELTA_WIDTH_FLOOR``."""
    return 0.0 if b.upper <= DELTA_WIDTH_FLOOR else (b.upper - b.lower) / b.upper


def width_order(history: Sequence[tuple[float, float]]) -> float:
    """The width's order in Δ: measured between the last two passes' (step, width) where both are in the
    asymptotic range (clamped to ``ORDER_RANGE``), else ``WIDTH_ORDER``."""
    if len(history) >= 2:
        (s0, w0), (s1, w1) = history[-2], history[-1]
        if ASYMPTOTIC > w0 > w1 > 0 and s0 != s1:
            lo, hi = ORDER_RANGE
            return min(hi, max(lo, math.log(w0 / w1) / math.log(s0 / s1)))
    return WIDTH_ORDER


def step_ratio(history: Sequence[tuple[float, float]], target: float,
               max_ratio: float = MAX_STEP_RATIO) -> float:
    """The ratio of the next step to the last pass's: ``STEP_MARGIN`` times the step the width model predicts
    for ``target`` (order :func:`width_order`), at most ``max_ratio``."""
    _, w = history[-1]
    return float(min(max_ratio, STEP_MARGIN * (target / w) ** (1.0 / width_order(history))))


def next_step(history: Sequence[tuple[float, float]], target: float) -> float:
    """The next grid step after the passes' (step, relative width): the last step times :func:`step_ratio`."""
    return float(history[-1][0] * step_ratio(history, target))


# -- one query, one realisation per pass ----------------------------------------------------------------
_Dirs = TypeVar("_Dirs")
_In_contra = TypeVar("_In_contra", contravariant=True)


class Measure(Protocol[_In_contra]):
    """A query run on one realisation (``dirs``), and its relative width (``docs/pld.md`` §0)."""

    @property
    def model_start(self) -> bool: ...

    def reset(self) -> None: ...

    def run(self, dirs: _In_contra) -> Bound: ...

    def width(self, b: Bound) -> float: ...


@dataclass
class _Passes(Generic[_Dirs]):
    """The state of :func:`refine`'s passes from one first step."""

    measure: Measure[_Dirs]
    dirs_at: Callable[[float], _Dirs]
    history: list[tuple[float, float]] = field(default_factory=list)

    def one(self, step: float, target: float | None) -> tuple[Bound, bool]:
        """One pass at ``step``: (bound, partial). With a ``target``, a measure that can tell from the
        untilted ends alone that the pass misses it (``failing``) skips the tilted work: the pass is
        *partial*, its width a lower bound on the full pass's (issue 27 item 7)."""
        dirs = self.dirs_at(step)
        failing = getattr(self.measure, "failing", None)
        if target is not None and failing is not None:
            b = failing(dirs, target)
            if b is not None:
                return b, True
        return self.measure.run(dirs), False

    def complete(self) -> Bound | None:
        """The full measure at the finest pass's step that realises, finest first (a step whose full-window
        vectors exceed the memory cap gives way to the coarser one); ``None`` if none does."""
        for step, _ in reversed(self.history):
            try:
                return self.measure.run(self.dirs_at(step))
            except GridTooLargeError:
                continue
        return None


def refine(measure: Measure[_Dirs], accuracy: Accuracy, dirs_at: Callable[[float], _Dirs], *,
           strict: bool, first: float | None = None) -> Bound:
    """``measure`` at ``accuracy.grid_step``, or refined coarse to fine until its width meets
    ``accuracy.relative_width``.

    A pass after the first whose measure can tell from the untilted ends alone that it misses the target is
    cut short; whatever pass ends the refinement is run in full, so the bracket returned is always a full
    pass's (issue 27 item 7). ``first``: a start placed by a width model (speed only: kept when it meets the
    width within ``passes`` passes; anything else — a first pass over ``give_up``× the target, the memory cap
    — replays the plain schedule from ``PLD_FIRST_STEP`` from scratch, so no query raises or returns wider
    than it would without the model). ``strict``: a width not reached raises ``GridTooLargeError``.
    """
    if accuracy.grid_step is not None:
        return measure.run(dirs_at(accuracy.grid_step))
    if first is not None:
        try:
            b = _schedule(measure, accuracy, dirs_at, False, first, MODEL_PASSES,
                          MODEL_MISS * accuracy.relative_width)
            if measure.width(b) <= accuracy.relative_width:
                return b
        except GridTooLargeError:
            pass
        measure.reset()
    return _schedule(measure, accuracy, dirs_at, strict, PLD_FIRST_STEP)


def _schedule(measure: Measure[_Dirs], acc: Accuracy, dirs_at: Callable[[float], _Dirs], strict: bool,
              step: float, passes: int | None = None, give_up: float = math.inf) -> Bound:
    """:func:`refine`'s passes from a first grid step ``step``, at most ``passes``, stopping early (the bracket
    returned as it is) after a pass wider than ``give_up``."""
    target = acc.relative_width
    passes = MAX_PASSES if passes is None else passes
    run = _Passes(measure, dirs_at)
    history = run.history
    best: Bound | None = None
    partial = False
    for n in range(passes):
        try:
            b, cut = run.one(step, target if history and n < passes - 1 else None)
            if cut and not math.isfinite(measure.width(b)):
                b, cut = measure.run(dirs_at(step)), False  # a partial bracket is never returned
        except GridTooLargeError as err:
            if best is None and not history:
                step *= COARSENING  # the first pass itself is too fine for this span: coarsen it
                continue
            if partial:
                best, partial = run.complete(), False
            if strict and best is not None and measure.width(best) > target:
                raise GridTooLargeError(
                    f"the requested relative width {target:g} is not reached before the memory cap "
                    f"({acc.memory_cap} bytes): at grid step {history[-1][0]:g} the width is "
                    f"{measure.width(best):.3g}; ask for a larger Accuracy.relative_width or raise "
                    f"Accuracy.memory_cap ({err})"
                ) from err
            break
        w = measure.width(b)
        best, partial = b, cut
        # the step rule reads the pass's own width (an intersected bracket's width can stall on a lucky
        # coarse pass: a discrete law's error is not monotone in the step)
        own = getattr(measure, "pass_width", w)
        history.append((step, own if math.isfinite(own) else w))
        if w <= target or w > give_up:
            return b
        if not math.isfinite(w):
            if strict and b.lower == 0.0 and math.isinf(b.upper):  # [0, inf]: no answer, refuse it
                raise GridTooLargeError(
                    f"no finite certified bracket at grid step {step:g}: the composed error bound "
                    "overflows the floating-point range (too many compositions for one grid: compose "
                    "fewer mechanisms); ask for a larger Accuracy.relative_width"
                )
            return b
        step = next_step(history, target)
    if partial:  # the loop ended on a cut-short pass: the bracket returned is a full pass's
        best = run.complete()
    if best is None:
        raise GridTooLargeError(
            "no grid step fits the memory cap; raise Accuracy.memory_cap or compose fewer mechanisms"
        )
    if strict and measure.width(best) > target:
        raise GridTooLargeError(
            f"the requested relative width {target:g} is not reached after {MAX_PASSES} refinements "
            f"(width {measure.width(best):.3g} at grid step {history[-1][0]:g}); ask for a larger "
            "Accuracy.relative_width or use an explicit Accuracy.grid_step"
        )
    return best


# -- laws that live on the step --------------------------------------------------------------------------
#: Before a second pass that would take more than STEPPED_PROBE_RATIO times the first's work (and more than
#: 1/STEPPED_PROBE_SHARE of a pass's work limit), a probe pass at STEPPED_PROBE_FACTOR times the first step
#: (~1/16 of its work) fits width ≈ a·h² + w0: where w0 ≥ the requested width and the width shrank less than
#: STEPPED_STALL over the 16-fold h², the refusal by name comes without that pass (balls-in-bins σ = 2,
#: t = 10⁷: 5e10 operations).
STEPPED_PROBE_FACTOR, STEPPED_PROBE_RATIO, STEPPED_PROBE_SHARE = 4.0, 4.0, 16.0
#: A finer pass whose width is above this share of a coarser one's (h² fell ≥ 36 %) has stalled
#: (:func:`_no_step_meets`).
STEPPED_STALL = 0.8


class SteppedLaws(Protocol):
    """Laws that live on a grid step h in (0, 1] (balls-in-bins: ``mechanisms.allocation.AllocationRun``),
    as :func:`refine_stepped` places the steps: the mechanism's own placement and its counted work."""

    @property
    def title(self) -> str:
        """The laws' name in a refusal ("balls-in-bins")."""
        ...

    @property
    def work(self) -> float:
        """The operations counted so far (a running total: a pass's work is its difference)."""
        ...

    @property
    def max_work(self) -> float:
        """The most operations one pass may take (its laws together)."""
        ...

    def first_step(self, target: float) -> float:
        """The first step of a refinement towards relative width ``target`` (one the laws exist at)."""
        ...

    def step_below(self, h: float) -> float:
        """The largest step the laws exist at that is at most ``h``."""
        ...


@dataclass(frozen=True, slots=True)
class SteppedBracket:
    """What :func:`refine_stepped` returns: the run's certified bracket and the laws' own bracket (the
    run's upper end may be capped by a fixed second one; the laws' lower end bounds the laws, not the run),
    both from the pass at ``grid_step``."""

    run: Bound
    pair: Bound
    grid_step: float


def refine_stepped(laws: SteppedLaws, bracket_at: Callable[[Accuracy], tuple[Bound, Bound]], accuracy: Accuracy,
                   *, floor: float, strict: bool = True) -> SteppedBracket:
    """A certified bracket of a run whose laws live on the grid step h, refining h until it meets
    ``accuracy.relative_width``, or ``GridTooLargeError`` (``strict``) naming why.

    ``bracket_at(acc)``: ``(run, pair)`` at h = ``acc.grid_step`` (the laws rebuilt at h, engine grid Δ = h):
    the query's certified bracket of the run and the laws' own (``run.upper == pair.upper`` where the run's
    upper end is the laws'; a cap — balls-in-bins: no amplification — is a fixed value no step moves). The
    caller builds both (:meth:`optcomp.dpsgd.Run.bound` merges the ends by
    :class:`optcomp.queries.RunBracket`); this loop only places the steps.

    The width is (upper − lower)/max(upper, ``floor``). The first step is ``laws.first_step(w)``; each next
    is ``laws.step_below`` of h times :func:`step_ratio` (order ``WIDTH_ORDER`` from one pass, ``STEP_MARGIN``,
    at most ``STEPPED_MAX_RATIO``). Width ≈ a·h² + w0 is fitted to the last two passes of the laws' own
    width (w0: the laws' compounded rounding bounds, which no step removes), and where w0 ≥ w while the width
    shrank less than ``STEPPED_STALL`` the refinement stops by name. Before a costly second pass a probe at
    ``STEPPED_PROBE_FACTOR`` times the first step is the fit's other point (STEPPED_PROBE_FACTOR; its bracket,
    wider, is not kept). Every pass is certified. A pass whose laws would exceed ``laws.max_work`` (predicted
    from the last pass's counted work, which grows as h⁻²; or ``GridTooLargeError`` from the laws) ends the
    refinement: with ``strict`` (ε queries at δ ≥ PLD_DEEP_DELTA, as the grid engine) the refusal names the
    width reached and carries the narrowest certified bracket as its ``bracket`` attribute; otherwise that
    bracket is returned (δ queries, deep δ: the engine's convention). ``accuracy.grid_step`` fixes h
    (``laws.step_below`` of it, at most 1): one pass, no width asked.
    """
    def at(h: float) -> Accuracy:
        return Accuracy(grid_step=h, tail_mass=accuracy.tail_mass, memory_cap=accuracy.memory_cap)

    target, limit = accuracy.relative_width, laws.max_work
    fixed = accuracy.grid_step is not None
    h = laws.step_below(min(1.0, accuracy.grid_step)) if accuracy.grid_step is not None else laws.first_step(target)
    best: SteppedBracket | None = None
    width = work = math.inf
    last, stalled = (math.inf, math.inf), ""
    probe: tuple[SteppedBracket, float, float, float] | None = None  # the first pass (best, width, work) and its next h
    while True:
        try:
            if stalled:
                raise GridTooLargeError(stalled)
            if best is not None and work * (best.grid_step / h) ** 2 > limit:
                raise GridTooLargeError(f"it would take about {work * (best.grid_step / h) ** 2:.3g} operations "
                                        f"(limit {limit:g} for the laws)")
            done = laws.work
            run, pair = bracket_at(at(h))
            now = laws.work - done
        except GridTooLargeError as err:
            if probe is not None:
                best, width, work, h = probe
            if best is None:
                raise
            if not strict:
                return best
            refusal = GridTooLargeError(
                f"the requested relative width {target:g} is not reached by the {laws.title} grid: at grid step "
                f"{best.grid_step:g} the width is {width:.3g}, and the next step {h:g} is refused: "
                f"{str(err).split('; ask for')[0]}; ask for a larger Accuracy.relative_width"
            )
            refusal.bracket = best.run  # the narrowest certified bracket reached
            raise refusal from err
        found = SteppedBracket(run, pair, h)
        measured = run.relative_width_above(floor) if run.upper > 0 else 0.0
        if fixed or measured <= target:
            return found
        mine = run.upper == pair.upper  # the bracket is the laws' (not the cap's, a fixed value)
        if probe is not None:  # the coarser probe: the fit, then back to the first pass and its next step
            best, width, work, h = probe if measured >= probe[1] else (found, measured, now, probe[3])
            if mine and math.isfinite(measured):
                stalled = _no_step_meets(last, (found.grid_step, measured), target)
            probe = None
            continue
        best, width, work = found, measured, now
        if not math.isfinite(width):  # no finite upper end at any grid: nothing to refine
            if strict:
                raise GridTooLargeError(
                    f"no finite certified upper end for the {laws.title} run at grid step {h:g} (bracket "
                    f"[{run.lower!r}, {run.upper!r}]); ask for a larger Accuracy.relative_width"
                )
            return best
        first = not math.isfinite(last[1])  # no earlier point of the laws' to fit against
        if mine and not first:
            stalled = _no_step_meets(last, (h, width), target)
        last = (h, width) if mine else (math.inf, math.inf)
        step = laws.step_below(h * step_ratio([(h, width)], target, max_ratio=STEPPED_MAX_RATIO))
        ahead = work * (h / step) ** 2  # the next pass's predicted work
        if mine and first and limit / STEPPED_PROBE_SHARE < ahead <= limit \
                and ahead > STEPPED_PROBE_RATIO * work and STEPPED_PROBE_FACTOR * h <= 1.0:
            probe, step = (best, width, work, step), STEPPED_PROBE_FACTOR * h
        h = step


def _no_step_meets(one: tuple[float, float], other: tuple[float, float], target: float) -> str:
    """The stop by name of :func:`refine_stepped`: width ≈ a·h² + w0 through two passes' (h, width); where w0
    (the laws' step-independent rounding bounds) ≥ ``target`` while the finer pass's width is above
    ``STEPPED_STALL`` of the coarser's, no step meets the target: the reason, else ""."""
    (h_fine, w_fine), (h_coarse, w_coarse) = sorted([one, other])
    a = (w_coarse - w_fine) / (h_coarse**2 - h_fine**2)
    w0 = max(0.0, w_fine - a * h_fine * h_fine)
    if w0 >= target and w_fine > STEPPED_STALL * w_coarse:
        return f"the width no longer shrinks with the step (about {w0:.2g} of it does not depend on it)"
    return ""


# -- many queries of one composition, sharing each pass (``Engine.answers``) ----------------------------
@dataclass
class WarmStart:
    """Where the previous composition of a chain (the sweep: a DP-SGD step at an earlier T) had its easiest
    query meet the target, and how the width grew along the chain at a fixed step (:func:`refine_batch`).

    ``position`` is where a composition lies along the chain (the sweep: its T); the width at a fixed step is
    modelled as growing like position^g, g measured between the last two positions (``GROWTH`` until then)."""

    position: int = 0
    step: float = 0.0
    width: float = 0.0
    #: the exponent g of the width's growth w ∝ position^g at a fixed step
    growth: float = GROWTH

    def record(self, position: int, step: float, width: float) -> None:
        """Keep the pass at grid step ``step`` whose narrowest bracket (``width``) met the target first, and
        the growth exponent it shows against the previous position's (widths scaled to one step by the Δ²
        model; both in the asymptotic range, else the previous exponent is kept)."""
        if 0 < self.position < position and 0 < self.width < ASYMPTOTIC and 0 < width < ASYMPTOTIC:
            ratio = (width / step**WIDTH_ORDER) / (self.width / self.step**WIDTH_ORDER)
            lo, hi = GROWTH_RANGE
            self.growth = min(hi, max(lo, math.log(ratio) / math.log(position / self.position)))
        self.position, self.step, self.width = position, step, width

    def start(self, position: int, target: float) -> float:
        """The first grid step to try at ``position``: the step at which the previous position's *easiest*
        query met its width, scaled by the width model (up to 1/``MAX_STEP_RATIO`` coarser), or
        ``PLD_FIRST_STEP``. Starting where the easiest query is served lets it retire at the first pass; the
        harder ones refine from there (starting at the hardest one's step makes every query pay the finest
        grid)."""
        if self.position == 0:
            return PLD_FIRST_STEP
        if self.width <= 0.0 or not math.isfinite(self.width):
            return self.step
        predicted = self.width * math.pow(position / self.position, self.growth)
        scale: float = STEP_MARGIN * math.pow(target / predicted, 1.0 / WIDTH_ORDER)
        return self.step * min(1.0 / MAX_STEP_RATIO, scale)


@dataclass
class Reached:
    """What :func:`refine_batch` reached: the narrowest certified bracket of each query it answered (ε per δ,
    δ per ε), and whether the passes stopped at the memory cap."""

    epsilons: dict[float, Bound] = field(default_factory=dict)
    deltas: dict[float, Bound] = field(default_factory=dict)
    capped: bool = False

    def widths(self, epsilons: dict[float, Bound], deltas: dict[float, Bound]) -> list[float]:
        return [epsilon_width(b) for b in epsilons.values()] + [delta_width(b) for b in deltas.values()]


#: One pass of :func:`refine_batch`: (ε bracket per δ, δ bracket per ε) at a grid step, for the δ and ε given.
BatchPass = Callable[[float, list[float], list[float]], tuple[dict[float, Bound], dict[float, Bound]]]


def refine_batch(pass_at: BatchPass, deltas: Sequence[float], epsilons: Sequence[float], accuracy: Accuracy,
                 warm: WarmStart | None = None, position: int = 0) -> Reached:
    """Every query of one composition read off shared realisations, refined by the step rule.

    The first step is ``accuracy.grid_step`` (one pass) or ``warm.start`` (``PLD_FIRST_STEP`` on a cold
    chain); each pass answers the queries still wider than ``accuracy.relative_width`` (a query whose bracket
    meets it retires), the next step is :func:`step_ratio` of the widest bracket of the pass (after a warm
    start never finer than ``MIN_WARM_RATIO`` of the last: an off-model pass is not extrapolated), at most
    ``MAX_PASSES`` passes; a first pass too fine for the memory cap is coarsened by ``COARSENING``, a later
    one ends the passes (``capped``). ``warm`` records where the easiest query met the target (or the finest
    pass). Every bracket kept is a certified pass's; a query still too wide is the caller's to re-ask.
    """
    warm = WarmStart() if warm is None else warm
    target = accuracy.relative_width
    fixed = accuracy.grid_step is not None
    step = accuracy.grid_step if accuracy.grid_step is not None else warm.start(position, target)
    floor = MIN_WARM_RATIO if warm.position else 0.0  # a warm start's refinements are bounded
    out = Reached()
    pending_d, pending_e = list(deltas), list(epsilons)
    history: list[tuple[float, float]] = []
    recorded = False
    for _ in range(1 if fixed else MAX_PASSES):
        try:
            eps, dlt = pass_at(step, pending_d, pending_e)
        except GridTooLargeError:
            if not history:
                step *= COARSENING  # the first pass is too fine for this span: coarsen it
                continue
            out.capped = True  # the memory cap: the plain route would stop at the same cap
            break
        out.epsilons.update(eps)
        out.deltas.update(dlt)
        widths = out.widths(eps, dlt)
        w, easiest = max([0.0, *widths]), min([math.inf, *widths])
        if not recorded and easiest <= target:  # the next position starts where the easiest query met it
            warm.record(position, step, easiest)
            recorded = True
        history.append((step, w))
        pending_d = [d for d in pending_d if epsilon_width(out.epsilons[d]) > target]
        pending_e = [e for e in pending_e if delta_width(out.deltas[e]) > target]
        if not (pending_d or pending_e) or not math.isfinite(w):
            break
        step *= max(floor, step_ratio(history, target))
    if not recorded and history:  # no query met the target: the next position starts from the last pass
        warm.record(position, *min(history))
    return out

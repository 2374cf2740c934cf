"""Evaluating the points of a sweep, sharing work between them (``docs/sweep.md``, "Reuse of work").

The unit of work is a *chain*: the ε/δ points of one DP-SGD step (one σ, q and sampler; every T, δ and
ε of the grid), or one inverse point (σ or T for a target ε). Within a chain:

1. **One step mechanism** — the step's mechanism (``Run.items()``) is built once per T from the same
   specs, and everything below is keyed by it.
2. **One realisation per composed PLD answers every query** — for each T, every ε-at-δ and δ-at-ε
   query of the chain is read off the *same* realisation of the T-fold composition: a PLD at a fixed
   grid step Δ (the public expert knob ``Accuracy(grid_step=Δ)``) is realised once and cached by the
   engine, and the ε(δ) of every δ (:func:`optcomp.pld.epsilons_at_step`: deepest first, sharing probes and
   tilted ends) and ``pld.delta_curve(ε)`` on it are queries, not new FFTs. Δ is
   refined as :meth:`optcomp.pld.PrivacyLossDistribution.epsilon` refines it (coarse first pass, the
   second-order width model, at most the same number of passes), on the *widest* of the queries, until
   every bracket meets ``accuracy.relative_width``.
3. **One step schedule along T** — the engine composes T steps in one spectral power (its cost does not
   grow with T beyond the window), and its certified bracket depends only on the laws, their total
   count and the grid (``PrivacyLossDistribution`` merges counts of one law: composing T₁ then T₂ − T₁
   steps *is* the T₂-fold composition, bit for bit). What repeated squaring would save is therefore
   already saved; what the T axis shares is the grid-step schedule: the T values are taken in
   increasing order and each starts from the step at which the previous T's easiest query met the target
   (scaled by the width model), so the coarse first pass of a lone query is skipped.

Soundness: every bracket is the engine's certified bracket at some grid step: the upper end is certified
at *every* step (``docs/pld.md``: the split pair dominates the run whatever Δ; FFT error bars and window
mass are added), so the choice of Δ — shared, warm-started — only decides the width. A bracket still wider
than the target after the shared passes is recomputed alone by the plain route
(``compose(...).epsilon(δ)``, exactly :func:`optcomp.dpsgd.epsilon`), which refines further or raises;
so every row meets the contract of :func:`optcomp.dpsgd.epsilon`/``delta``. Compositions the routing rule
does not send to the grid (q = 1: the GDP closed form) are queried exactly as there.

A chain's rows depend only on the chain (its points, in its order), never on the executor, the batch or
the process: the same grid gives the same digits on any executor.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from optcomp import dpsgd
from optcomp._numerics import PLD_FIRST_STEP, Accuracy, Bound
from optcomp.pld import GridTooLargeError, epsilons_at_step
from optcomp.queries import Composition
from optcomp.sweep._spec import Point

#: Refinement passes of the shared grid step (as ``PrivacyLossDistribution``'s automatic refinement).
_MAX_PASSES = 7
#: Largest ratio of one refinement's step to the previous one (as the engine's refinement).
_MAX_STEP_RATIO = 0.7
#: Safety factor on the width model's predicted step (as the engine's refinement).
_STEP_MARGIN = 0.85
#: Order of the width in the grid step (both ends are off by O(kΔ²), ``docs/pld.md``).
_WIDTH_ORDER = 2.0
#: Widths below which two passes estimate the width's order in Δ (as the engine's refinement).
_ASYMPTOTIC = 0.05
#: Bounds on the estimated order (as the engine's refinement).
_ORDER_RANGE = (1.0, 2.2)
#: The width's growth exponent in T at a fixed step before a chain has measured it (the √T model) ...
_GROWTH = 0.5
#: ... and the range a measured one is clamped to (measured on the issue-26 grid: about 0 to 0.8).
_GROWTH_RANGE = (0.0, 1.0)
#: Smallest ratio of one refinement's step to the previous one after a warm start (a later T of a chain):
#: a pass far wider than the width model predicted there is off the model (at ε ≈ 60–140, σ = 0.5, a lower
#: end's search can stop at a coarse scan point: width 0.0128 at one step, 5e-5 at a 9 % finer one), and
#: its Δ² extrapolation (a 13× finer step, 4·10⁶-point tilted ends) is not trusted beyond 4×.
_MIN_WARM_RATIO = 0.25
#: How much coarser than the previous T's step the next T may start (the inverse of a refinement's ratio).
_MAX_COARSENING = 1.0 / _MAX_STEP_RATIO
#: ε floor of the relative width of an ε bracket, (upper − lower)/max(upper, this) (the engine's).
_EPSILON_WIDTH_FLOOR = 0.01
#: δ upper ends below which a δ bracket's relative width counts as met (the engine's ``_FLOOR_WIDTH``).
_DELTA_WIDTH_FLOOR = 1e-300
#: Errors a row stores instead of stopping the sweep (an engine's refusal or a value out of range).
ROW_ERRORS = (ValueError, ArithmeticError, MemoryError, NotImplementedError)


@dataclass(frozen=True)
class Row:
    """One evaluated point.

    Attributes:
        key: :attr:`Point.key`.
        index: the point's row number.
        lower, upper: the certified bracket (ε or δ queries); ``None`` for inverse queries and errors.
        value: σ or T (inverse queries; evaluated, on the safe side); ``None`` otherwise.
        relation: the neighbouring relation the row holds for (:data:`optcomp.dpsgd.SAMPLING_RELATION`).
        error: ``"ExceptionType: message"`` when the evaluation failed, else ``None``.
        width: the bracket's relative width, as the engine measures it (``None`` for inverse queries).
    """

    key: str
    index: int
    lower: float | None
    upper: float | None
    value: float | None
    relation: str
    error: str | None = None
    width: float | None = None


def relation(point: Point) -> str:
    """The neighbouring relation a point's answer is stated for."""
    sampling = str(point.get("sampling", "poisson"))
    base = dpsgd.SAMPLING_RELATION.get(sampling, "")
    k = point.get("examples_per_user", 1)
    return f"{base} (a user with <= {k} examples)" if isinstance(k, int) and k > 1 else base


def chain_key(point: Point) -> tuple[object, ...]:
    """Points with equal keys share a chain: one step mechanism (ε/δ queries); inverse points are alone."""
    if point.query not in ("epsilon", "delta"):
        return ("inverse", point.index)
    shared = tuple((k, v) for k, v in point.params if k not in ("steps", "delta", "epsilon"))
    return ("step", shared, point.accuracy)


def _width_epsilon(b: Bound) -> float:
    return 0.0 if b.upper == b.lower else (b.upper - b.lower) / max(b.upper, _EPSILON_WIDTH_FLOOR)


def _width_delta(b: Bound) -> float:
    return 0.0 if b.upper <= _DELTA_WIDTH_FLOOR else (b.upper - b.lower) / b.upper


@dataclass
class _Schedule:
    """Where the previous T of a chain had its easiest query meet the target (the warm start of the next
    T), and how the width grew along T at a fixed step."""

    steps: int = 0
    step: float = 0.0
    width: float = 0.0
    #: the exponent g of the width's growth w ∝ T^g at a fixed step (measured between the last two T)
    growth: float = _GROWTH

    def record(self, steps: int, step: float, width: float) -> None:
        """Keep the pass of ``steps`` at grid step ``step`` whose narrowest bracket (``width``) met the
        target first, and the growth exponent it shows against the previous T's (widths scaled to one
        step by the Δ² model; both in the asymptotic range, else the previous exponent is kept)."""
        if 0 < self.steps < steps and 0 < self.width < _ASYMPTOTIC and 0 < width < _ASYMPTOTIC:
            ratio = (width / step**_WIDTH_ORDER) / (self.width / self.step**_WIDTH_ORDER)
            lo, hi = _GROWTH_RANGE
            self.growth = min(hi, max(lo, math.log(ratio) / math.log(steps / self.steps)))
        self.steps, self.step, self.width = steps, step, width

    def start(self, steps: int, target: float) -> float:
        """The first grid step to try at ``steps``: the step at which the previous T's *easiest* query
        met its width, scaled by the width model (the width grows like T^g at a fixed step, g measured
        along the chain, 1/2 until two T have measured it; up to ``_MAX_COARSENING`` coarser), or the
        engine's first step. Starting where the easiest query is served lets it retire at the first pass;
        the harder ones refine from there (starting at the hardest one's step makes every query pay the
        finest grid)."""
        if self.steps == 0:
            return PLD_FIRST_STEP
        if self.width <= 0.0 or not math.isfinite(self.width):
            return self.step
        predicted = self.width * math.pow(steps / self.steps, self.growth)
        scale: float = _STEP_MARGIN * math.pow(target / predicted, 1.0 / _WIDTH_ORDER)
        return self.step * min(_MAX_COARSENING, scale)


@dataclass
class _Answers:
    """ε brackets per δ and δ brackets per ε of one composition."""

    eps: dict[float, Bound | str] = field(default_factory=dict)
    dlt: dict[float, Bound | str] = field(default_factory=dict)

    def min_width(self) -> float:
        """The smallest relative width of the brackets (errors excluded; ``inf`` if none)."""
        ws = [_width_epsilon(b) for b in self.eps.values() if isinstance(b, Bound)]
        ws += [_width_delta(b) for b in self.dlt.values() if isinstance(b, Bound)]
        return min([math.inf, *ws])

    def width(self) -> float:
        """The largest relative width of the brackets (errors excluded)."""
        ws = [_width_epsilon(b) for b in self.eps.values() if isinstance(b, Bound)]
        ws += [_width_delta(b) for b in self.dlt.values() if isinstance(b, Bound)]
        return max([0.0, *ws])


def _pass(composition: Composition, acc: Accuracy, step: float,
          deltas: Sequence[float], epsilons: Sequence[float]) -> _Answers:
    """Every query on one realisation at grid step ``step`` (certified at any step)."""
    pld = composition.pld(replace(acc, grid_step=step))
    out = _Answers(dict[float, Bound | str](epsilons_at_step(pld, step, deltas) if deltas else {}))
    if epsilons:
        lo, hi = pld.delta_curve(list(epsilons))
        out.dlt = {e: Bound(float(a), float(b)) for e, a, b in zip(epsilons, lo, hi, strict=True)}
    return out


def answer(composition: Composition, acc: Accuracy, deltas: Sequence[float],
           epsilons: Sequence[float], schedule: _Schedule, steps: int) -> _Answers:
    """Certified ε(δ) for each δ and δ(ε) for each ε of one composition's law, from shared realisations.

    See the module docstring: a shared, warm-started grid step refined like the engine's; any bracket
    still wider than ``acc.relative_width`` recomputed by the plain route — unless the passes stopped at
    the memory cap, where the plain route stops too: the narrowest certified bracket reached is kept.
    """
    comp = composition.dominating()  # the law's own brackets: the run bracket takes the lower ends (_bounds)
    if comp.engine() != "grid":
        return _Answers({d: _plain(comp.epsilon, d, None) for d in deltas},
                        {e: _plain(comp.delta, e, None) for e in epsilons})
    target = acc.relative_width
    step = acc.grid_step if acc.grid_step is not None else schedule.start(steps, target)
    warm = _MIN_WARM_RATIO if schedule.steps else None  # a warm start's refinements are bounded
    best = _Answers()
    pending_d, pending_e = list(deltas), list(epsilons)
    history: list[tuple[float, float]] = []
    capped = recorded = False
    for _ in range(1 if acc.grid_step is not None else _MAX_PASSES):
        try:
            got = _pass(comp, acc, step, pending_d, pending_e)
        except GridTooLargeError:
            if not history:
                step *= 8.0  # the first pass is too fine for this span: coarsen it (as the engine does)
                continue
            capped = True  # the memory cap: the plain route would stop at the same cap
            break
        best.eps.update(got.eps)
        best.dlt.update(got.dlt)
        w = got.width()
        if not recorded and got.min_width() <= target:  # the next T starts where the easiest query met it
            schedule.record(steps, step, got.min_width())
            recorded = True
        history.append((step, w))
        # a query whose bracket meets the target retires: the finer passes answer only the others
        pending_d = [d for d in pending_d if _too_wide(best.eps[d], _width_epsilon, target)]
        pending_e = [e for e in pending_e if _too_wide(best.dlt[e], _width_delta, target)]
        if not (pending_d or pending_e) or not math.isfinite(w):
            break
        ratio = min(_MAX_STEP_RATIO, _STEP_MARGIN * (target / w) ** (1.0 / _order(history)))
        step *= ratio if warm is None else max(warm, ratio)
    if not recorded and history:  # no query met the target: the next T starts from the last pass
        schedule.record(steps, *min(history))
    if acc.grid_step is None:  # the plain route for what the shared passes left too wide (or never reached)
        for d in deltas:
            b = best.eps.get(d)
            if not isinstance(b, Bound) or (_width_epsilon(b) > target and not capped):
                best.eps[d] = _plain(comp.epsilon, d, b)
        for e in epsilons:
            b = best.dlt.get(e)
            if not isinstance(b, Bound) or (_width_delta(b) > target and not capped):
                best.dlt[e] = _plain(comp.delta, e, b)
    return best


def _too_wide(b: Bound | str, width: Callable[[Bound], float], target: float) -> bool:
    return isinstance(b, Bound) and width(b) > target


def _plain(query: Callable[[float], Bound], x: float, reached: Bound | str | None) -> Bound | str:
    """``query(x)`` by the plain route, or its error (stored in the row). Where the plain route refuses
    because the width cannot be reached (``GridTooLargeError``), the narrowest certified bracket the shared
    passes reached is kept (its width is stored with the row), or the one the refusal carries (balls-in-bins)."""
    try:
        return query(x)
    except GridTooLargeError as exc:
        if isinstance(reached, Bound):
            return reached
        return exc.bracket if exc.bracket is not None else _error(exc)
    except ROW_ERRORS as exc:
        return _error(exc)


def _order(history: list[tuple[float, float]]) -> float:
    """The width's order in Δ from the last two passes (the engine's estimate), else 2."""
    if len(history) >= 2:
        (s0, w0), (s1, w1) = history[-2], history[-1]
        if _ASYMPTOTIC > w0 > w1 > 0 and s0 != s1:
            lo, hi = _ORDER_RANGE
            return min(hi, max(lo, math.log(w0 / w1) / math.log(s0 / s1)))
    return _WIDTH_ORDER


def _own_bracket(run: dpsgd.Run, point: Point, acc: Accuracy) -> Bound | str:
    """One point of a sampler that refines its own laws (balls-in-bins: the epoch laws' grid step h), by
    :meth:`optcomp.dpsgd.Run.bound` exactly as :func:`optcomp.dpsgd.epsilon`/``delta`` (the query takes the
    composition's own accuracy: each pass composes at its grid step h); or its error."""
    if point.query == "epsilon":
        d = _number(point, "delta")
        return _plain(lambda _: run.bound(lambda c: c.epsilon(d), acc, delta=d), d, None)
    e = _number(point, "epsilon")
    return _plain(lambda _: run.bound(lambda c: c.delta(e), acc, floor=0.0), e, None)


def _number(point: Point, name: str) -> float:
    v = point.get(name)
    if not isinstance(v, (int, float)):  # pragma: no cover - the grid validated every point
        raise ValueError(f"{name} is missing from {point.describe()}")  # noqa: TRY004 (contract)
    return float(v)


def _run_of(point: Point, steps: int) -> dpsgd.Run:
    g = point.get
    return dpsgd.Run.checked(g("noise_multiplier"), g("sampling_rate"), steps, g("sampling", "poisson"),
                             g("examples_per_user", 1), g("dataset_size"), g("max_batch_size"))


def _error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {' '.join(str(exc).splitlines())}"


def evaluate_chain(points: Sequence[Point]) -> list[Row]:
    """The rows of one chain (:func:`chain_key`), in the chain's order; a failing T or point stores its
    error in its rows and the chain goes on."""
    if points[0].query not in ("epsilon", "delta"):
        return [_inverse(p) for p in points]
    by_steps: dict[int, list[Point]] = {}
    for p in points:
        by_steps.setdefault(int(_number(p, "steps")), []).append(p)
    upper, lower = _Schedule(), _Schedule()
    rows: dict[int, Row] = {}
    for steps in sorted(by_steps):
        group = by_steps[steps]
        try:
            bounds = _bounds(group, steps, upper, lower)
        except ROW_ERRORS as exc:
            rows.update((p.index, Row(p.key, p.index, None, None, None, relation(p), _error(exc))) for p in group)
            continue
        for p in group:
            b = bounds[p.index]
            if isinstance(b, str):
                rows[p.index] = Row(p.key, p.index, None, None, None, relation(p), b)
            else:
                w = _width_epsilon(b) if p.query == "epsilon" else _width_delta(b)
                rows[p.index] = Row(p.key, p.index, b.lower, b.upper, None, relation(p), None, w)
    return [rows[p.index] for p in points]


def _bounds(group: Sequence[Point], steps: int, upper: _Schedule, lower: _Schedule) -> dict[int, Bound | str]:
    """The bracket (or error) of each point of one T: the run bracket (:meth:`optcomp.dpsgd.Run.bracket`)
    asked for each end's answers (:func:`answer`: upper ends of its dominating composition, lower ends of its
    dominated one where it has one) and merging them (:meth:`~optcomp.queries.RunBracket.merge`)."""
    run = _run_of(group[0], steps)
    acc = group[0].accuracy
    if run.sampler.stepped:  # refines its own epoch laws' step (dpsgd.Run.bound): nothing shared
        return {p.index: _own_bracket(run, p, acc) for p in group}
    deltas = sorted({_number(p, "delta") for p in group if p.query == "epsilon"})
    epsilons = sorted({_number(p, "epsilon") for p in group if p.query == "delta"})
    bracket = run.bracket(acc)
    up = answer(bracket.upper, acc, deltas, epsilons, upper, steps)
    dominated = None if bracket.exact or bracket.lower is None else bracket.lower
    low = answer(dominated, acc, deltas, epsilons, lower, steps) if dominated is not None else None
    out: dict[int, Bound | str] = {}
    for p in group:
        if p.query == "epsilon":
            x, table, low_table = _number(p, "delta"), up.eps, (low.eps if low else None)
        else:
            x, table, low_table = _number(p, "epsilon"), up.dlt, (low.dlt if low else None)
        b, lb = table[x], (low_table[x] if low_table is not None else None)
        if isinstance(b, Bound):  # an error of either end is the row's
            b = lb if isinstance(lb, str) else bracket.merge(b, lb)
        out[p.index] = b
    return out


def _inverse(point: Point) -> Row:
    """σ (``noise_multiplier`` query) or T (``steps`` query) for a target ε, on the safe side: the value
    returned by :func:`optcomp.dpsgd.noise_multiplier` / :func:`optcomp.dpsgd.steps` (evaluated, its
    certified upper ε ≤ the target)."""
    g = point.get
    opts: dict[str, Any] = {
        "sampling": g("sampling", "poisson"), "examples_per_user": g("examples_per_user", 1),
        "dataset_size": g("dataset_size"), "max_batch_size": g("max_batch_size"), "accuracy": point.accuracy,
    }
    target, q, d = _number(point, "target_epsilon"), _number(point, "sampling_rate"), _number(point, "delta")
    try:
        if point.query == "noise_multiplier":
            value = float(dpsgd.noise_multiplier(target, q, int(_number(point, "steps")), d, **opts))
        else:
            if g("max_steps") is not None:
                opts["max_steps"] = int(_number(point, "max_steps"))
            value = float(dpsgd.steps(target, _number(point, "noise_multiplier"), q, d, **opts))
    except ROW_ERRORS as exc:
        return Row(point.key, point.index, None, None, None, relation(point), _error(exc))
    return Row(point.key, point.index, None, None, value, relation(point))


def evaluate_task(chains: Sequence[Sequence[Point]]) -> tuple[list[Row], float]:
    """The rows of a batch of chains, and the CPU seconds of this process spent computing them (the
    worker's entry point; CPU rather than wall time, so that a loaded machine does not inflate it).

    Runs under the command line's floating-point state wherever it runs (a NaN produced inside an engine
    raises, and the row stores the error; overflow and underflow stay IEEE), so that every executor gives
    the same rows."""
    start = time.process_time()
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="raise"):
        rows = [row for chain in chains for row in evaluate_chain(chain)]
    return rows, time.process_time() - start

"""Evaluating the points of a sweep, sharing work between them (``docs/sweep.md``, "Reuse of work").

The unit of work is a *chain*: the ε/δ points of one DP-SGD step (one σ, q and sampler; every T, δ and
ε of the grid), or one inverse point (σ or T for a target ε). Within a chain:

1. **One step mechanism** — the step's mechanism (``Run.items()``) is built once per T from the same
   specs, and everything below is keyed by it.
2. **One realisation per composed PLD answers every query** — for each T the run is asked for all of
   its queries at once (:meth:`optcomp.dpsgd.Run.answers` → :meth:`optcomp.queries.RunBracket.answers` →
   :meth:`optcomp.engines.Engine.answers`): on the grid every ε-at-δ and δ-at-ε query of the chain is read
   off the *same* realisation of the T-fold composition at a grid step Δ (the ε(δ) of every δ by
   :func:`optcomp.pld.epsilons_at_step`: deepest first, sharing probes and tilted ends; the δ(ε) curve on
   it), not new FFTs; Δ is refined by the one refinement schedule (:func:`optcomp.pld.refine_batch`, the
   engine's step rule) on the *widest* of the queries until every bracket meets ``accuracy.relative_width``.
   Other engines answer query by query.
3. **One step schedule along T** — the engine composes T steps in one spectral power (its cost does not
   grow with T beyond the window), and its certified bracket depends only on the laws, their total
   count and the grid (``PrivacyLossDistribution`` merges counts of one law: composing T₁ then T₂ − T₁
   steps *is* the T₂-fold composition, bit for bit). What repeated squaring would save is therefore
   already saved; what the T axis shares is the grid-step schedule: the T values are taken in
   increasing order and each starts from the step at which the previous T's easiest query met the target
   (scaled by the width model: :class:`optcomp.pld.WarmStart`, one per end of the run bracket), so the
   coarse first pass of a lone query is skipped.

Soundness: every bracket is the engine's certified bracket at some grid step: the upper end is certified
at *every* step (``docs/pld.md``: the split pair dominates the run whatever Δ; FFT error bars and window
mass are added), so the choice of Δ — shared, warm-started — only decides the width. A bracket still wider
than the target after the shared passes is recomputed alone by the plain route
(``compose(...).epsilon(δ)``, exactly :func:`optcomp.dpsgd.epsilon`), which refines further or raises;
so every row meets the contract of :func:`optcomp.dpsgd.epsilon`/``delta``. Compositions the routing rule
does not send to the grid (q = 1: the GDP closed form) are queried exactly as there, and a sampler whose
laws live on a grid step of their own (balls-in-bins) refines them per query (:meth:`optcomp.dpsgd.Run.bound`).

A chain's rows depend only on the chain (its points, in its order), never on the executor, the batch or
the process: the same grid gives the same digits on any executor.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from optcomp import dpsgd
from optcomp._numerics import Bound
from optcomp.engines import QUERY_ERRORS
from optcomp.pld import WarmStart, delta_width, epsilon_width
from optcomp.sweep._spec import Point

#: Errors a row stores instead of stopping the sweep (an engine's refusal or a value out of range).
ROW_ERRORS = QUERY_ERRORS


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
    warm = (WarmStart(), WarmStart())  # the run bracket's upper and lower compositions, along T
    rows: dict[int, Row] = {}
    for steps in sorted(by_steps):
        group = by_steps[steps]
        try:
            bounds = _bounds(group, steps, warm)
        except ROW_ERRORS as exc:
            rows.update((p.index, Row(p.key, p.index, None, None, None, relation(p), _error(exc))) for p in group)
            continue
        for p in group:
            b = bounds[p.index]
            if isinstance(b, str):
                rows[p.index] = Row(p.key, p.index, None, None, None, relation(p), b)
            else:
                w = epsilon_width(b) if p.query == "epsilon" else delta_width(b)
                rows[p.index] = Row(p.key, p.index, b.lower, b.upper, None, relation(p), None, w)
    return [rows[p.index] for p in points]


def _bounds(group: Sequence[Point], steps: int, warm: tuple[WarmStart, WarmStart]) -> dict[int, Bound | str]:
    """The bracket (or error) of each point of one T: the run asked for every query of the group at once
    (:meth:`optcomp.dpsgd.Run.answers`, warm-started along the chain)."""
    run = _run_of(group[0], steps)
    deltas = sorted({_number(p, "delta") for p in group if p.query == "epsilon"})
    epsilons = sorted({_number(p, "epsilon") for p in group if p.query == "delta"})
    got = run.answers(deltas, epsilons, group[0].accuracy, warm=warm)
    out: dict[int, Bound | str] = {}
    for p in group:
        b = got.epsilons[_number(p, "delta")] if p.query == "epsilon" else got.deltas[_number(p, "epsilon")]
        out[p.index] = _error(b) if isinstance(b, Exception) else b
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

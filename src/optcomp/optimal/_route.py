"""Which engine answers, at which grid step: the one place ``optcomp.optimal`` decides (issue 16).

:func:`choose` picks the engine for the non-huge part of a composition (empty, homogeneous binomial,
brute force, exact lattice, or the split grid as the fallback); :class:`Goal` is the caller's accuracy
translated once (an ``Accuracy``'s relative width, or the expert ``tolerance`` in ε); :func:`epsilon_rest`
refines the grid step until the goal is met; :func:`delta_envelopes` does the same for δ queries.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np

from optcomp._numerics import (
    EPSILON_WIDTH_FLOOR,
    OPTIMAL_EXACT_RELATIVE_WIDTH,
    TINY_PAD,
    Accuracy,
    Bound,
    FloatArray,
)
from optcomp._rounding import rounding_error
from optcomp.optimal import _split
from optcomp.optimal._brute import BRUTE_FORCE_MAX_K, brute_weights
from optcomp.optimal._homogeneous import DEFAULT_DEPTH, homogeneous_weights
from optcomp.optimal._solve import EMPTY, Weights, epsilon_from_envelopes
from optcomp.optimal._spec import Target

Method = Literal["auto", "exact", "grid", "mv"]
Engine = Literal["empty", "homogeneous", "brute", "lattice", "grid"]

#: Default target width (in ε) of the bracket returned for off-lattice heterogeneous inputs.
DEFAULT_TOLERANCE: float = 1e-3
#: Width model of the split engine, w ≈ c(k)·kΔ² with c(k) = _WIDTH_C0 + _WIDTH_C1/√k (fitted on
#: ε_i ~ U[0.001, 0.1], δ = 1e-6, k = 10²…10⁵: c = 1.1, 0.45, 0.23, 0.16; slightly above all of them).
_WIDTH_C0 = 0.15
_WIDTH_C1 = 10.0
#: The first grid step aims at this fraction of the tolerance, so that one pass usually suffices.
_FIRST_AIM = 0.7
#: δ queries: Δ = √(_DELTA_STEP_C · tolerance / k) (one pass unless a relative width is asked for).
_DELTA_STEP_C = 8.0
#: Width of the composed window in units of √(Σ c_i ε_i²)/Δ (Hoeffding, see :mod:`._tree`).
_WINDOW_SIGMAS = 19.2
#: Passes of the refinement at most; a pass that would shrink Δ by less than _MIN_SHRINK stops it.
_MAX_PASSES = 4
_MIN_SHRINK = 0.95
#: Lattice detection: ε_i/Δ must be an integer to within this many units of roundoff (relative).
_LATTICE_UNITS = 64.0


@dataclass(frozen=True, slots=True)
class Goal:
    """The accuracy of one query, translated once.

    Attributes:
        tolerance: expert override, a bracket width in ε (the split engine's Δ is chosen for it).
        relative_width: from ``Accuracy``: (upper − lower)/max(upper, 0.01) for ε brackets,
            (upper − lower)/upper for δ brackets (:meth:`~optcomp.Bound.relative_width_above`).
        grid_step: from ``Accuracy.grid_step``: a fixed split-engine step (one pass).
    """

    tolerance: float | None = None
    relative_width: float | None = None
    grid_step: float | None = None

    @classmethod
    def of(cls, accuracy: Accuracy | None, tolerance: float | None) -> Goal:
        """``tolerance`` (expert) or ``accuracy``, at most one of them; neither: :data:`DEFAULT_TOLERANCE`."""
        if accuracy is not None and tolerance is not None:
            raise ValueError("give accuracy or tolerance, not both (tolerance is the expert override)")
        if accuracy is None:
            return cls(tolerance=DEFAULT_TOLERANCE if tolerance is None else tolerance)
        if not isinstance(accuracy, Accuracy):
            raise ValueError(f"accuracy must be an optcomp.Accuracy, got {accuracy!r}")  # noqa: TRY004 (contract)
        return cls(relative_width=accuracy.relative_width, grid_step=accuracy.grid_step)

    def epsilon_tolerance(self, scale: float) -> float:
        """A width in ε for an answer near ``scale`` (the relative width times max(scale, 0.01))."""
        if self.tolerance is not None:
            return self.tolerance
        assert self.relative_width is not None
        return self.relative_width * max(scale, EPSILON_WIDTH_FLOOR)

    def grid_tolerance(self, scale: float, first: bool = False) -> float:
        """The width in ε the split engine's grid aims at. A tolerance: itself. An ``Accuracy``: its first
        pass aims at :data:`DEFAULT_TOLERANCE` (one pass meets most relative widths; every accuracy then
        starts from the same grid), later passes at :meth:`epsilon_tolerance`, never above
        :data:`DEFAULT_TOLERANCE` (a coarse relative width is not answered more loosely than the default)."""
        if self.tolerance is not None:
            return self.tolerance
        return DEFAULT_TOLERANCE if first else min(DEFAULT_TOLERANCE, self.epsilon_tolerance(scale))

    def epsilon_met(self, b: Bound) -> bool:
        """Whether the ε bracket ``b`` is as narrow as asked (for an ``Accuracy``: its relative width,
        and a width ≤ :data:`DEFAULT_TOLERANCE`, :meth:`grid_tolerance`)."""
        if self.tolerance is not None:
            return b.width <= self.tolerance
        assert self.relative_width is not None
        return b.relative_width_above(EPSILON_WIDTH_FLOOR) <= self.relative_width and b.width <= DEFAULT_TOLERANCE

    def delta_met(self, b: Bound) -> bool:
        """Whether the δ bracket ``b`` is as narrow as asked (a tolerance asks for one pass only)."""
        return self.relative_width is None or b.relative_width_above(0.0) <= self.relative_width


def detect_lattice(eps: FloatArray, counts: np.ndarray, max_points: int) -> float | None:
    """A unit Δ = min ε_i / j (j ≤ 16) with every ε_i/Δ an integer up to 64 ulps and a window ≤ max_points."""
    m = float(np.min(eps))
    for j in range(1, 17):
        unit = m / j
        a = eps / unit
        ar = np.rint(a)
        if np.all(ar >= 1) and np.all(np.abs(a - ar) <= rounding_error(_LATTICE_UNITS, a)):
            if _WINDOW_SIGMAS * math.sqrt(float(np.sum(counts * ar * ar))) <= max_points:
                return unit
            return None
    return None


def min_step(eps: FloatArray, counts: np.ndarray, max_points: int) -> float:
    """The finest split-engine step whose composed window fits in ``max_points``."""
    return _WINDOW_SIGMAS * math.sqrt(float(np.sum(counts * eps * eps))) / max_points


def choose(
    eps: FloatArray, counts: np.ndarray, method: Method, max_points: int, step: float | None
) -> tuple[Engine, float | None]:
    """The engine for the non-huge items, and its lattice unit or grid step: the one routing decision.

    Order: nothing left; one distinct ε (binomial, any k); ≤ ``BRUTE_FORCE_MAX_K`` items (all subsets,
    unless ``method="grid"``); a common lattice whose window fits (exact) when no step is asked for, the
    method is ``"exact"``, or the lattice is not much finer than the step; else the split grid at
    ``step`` (the fallback), which ``method="exact"`` refuses with a ``ValueError``.
    """
    n = int(np.sum(counts))
    if eps.size == 0:
        return "empty", None
    if eps.size == 1:
        return "homogeneous", None
    if n <= BRUTE_FORCE_MAX_K and method != "grid":
        return "brute", None
    unit = detect_lattice(eps, counts, max_points)
    if unit is not None and (step is None or method == "exact" or unit >= step / 4.0):
        return "lattice", unit
    if method == "exact":
        raise ValueError(
            "method='exact' needs equal epsilons, at most "
            f"{BRUTE_FORCE_MAX_K} non-zero epsilons, or epsilons on a common lattice with a window of at most "
            f"max_points={max_points} points; got {eps.size} distinct real epsilons (use method='auto')"
        )
    assert step is not None
    return "grid", step


def envelopes(
    eps: FloatArray,
    counts: np.ndarray,
    method: Method,
    max_points: int,
    step: float | None,
    centre: float,
    depth: float,
) -> tuple[Weights, Weights, bool]:
    """(upper, lower, exact?) for the non-huge part, by the engine :func:`choose` picks."""
    engine, unit = choose(eps, counts, method, max_points, step)
    if engine == "empty":
        return EMPTY, EMPTY, True
    if engine == "homogeneous":
        up, lo = homogeneous_weights(float(eps[0]), int(counts[0]), depth)
        return up, lo, True
    if engine == "brute":
        up, lo = brute_weights(np.repeat(eps, counts))
        return up, lo, True
    assert unit is not None
    up, lo = _split.envelopes(eps, counts, unit, centre)
    return up, lo, engine == "lattice"


def with_extra(w: Weights, extra: float) -> Weights:
    """``w`` with ``extra`` more mass at +∞ (capped at 1)."""
    return Weights(w.loss, w.logw, min(1.0, w.inf_mass + extra)) if extra > 0 else w


def epsilon_rest(
    eps: FloatArray,
    counts: np.ndarray,
    target: Target,
    method: Method,
    goal: Goal,
    max_points: int,
    extra: float,
) -> Bound:
    """ε(δ) of the non-huge part: grid refined until ``goal`` is met (certified brackets intersected)."""
    if eps.size == 0:
        return epsilon_from_envelopes(with_extra(EMPTY, extra), EMPTY, target)
    depth = -target.log_lo if math.isfinite(target.log_lo) else DEFAULT_DEPTH
    log_r = target.log_hi if math.isfinite(target.log_hi) else -DEFAULT_DEPTH
    centre = _split.eps_guess(eps, counts, log_r)
    n = float(np.sum(counts))
    finest = min_step(eps, counts, max_points)
    tolerance = goal.grid_tolerance(centre, first=True)
    if goal.grid_step is not None:
        step = max(goal.grid_step, finest)
    else:
        # Width model w ≈ c(k)·kΔ² (see _WIDTH_C0): aim below the tolerance so one pass usually suffices.
        c_k = _WIDTH_C0 + _WIDTH_C1 / math.sqrt(n)
        step = max(math.sqrt(_FIRST_AIM * tolerance / (c_k * n)), finest)
    best: Bound | None = None
    for attempt in range(_MAX_PASSES):
        up, lo, exact = envelopes(eps, counts, method, max_points, step, centre, depth)
        b = epsilon_from_envelopes(with_extra(up, extra), lo, target)
        best = b if best is None else Bound(max(best.lower, b.lower), min(best.upper, b.upper))
        if not math.isfinite(best.upper):
            break
        if best.width <= OPTIMAL_EXACT_RELATIVE_WIDTH * best.upper if exact else goal.epsilon_met(best):
            break
        if (attempt and exact) or goal.grid_step is not None:
            break
        centre = best.midpoint
        if not exact:
            tolerance = goal.grid_tolerance(best.upper)
            new_step = max(step * math.sqrt(_FIRST_AIM * tolerance / max(b.width, TINY_PAD)), finest)
            if new_step >= _MIN_SHRINK * step and attempt:
                break
            step = min(step, new_step)
    assert best is not None
    return best


def delta_rest(
    eps: FloatArray,
    counts: np.ndarray,
    method: Method,
    goal: Goal,
    max_points: int,
    centre: float,
    evaluate: Callable[[Weights, Weights], Bound],
) -> Bound:
    """δ(ε) of the non-huge part: ``evaluate(upper, lower)`` on the envelopes, refined for a relative width."""
    if eps.size == 0:
        return evaluate(EMPTY, EMPTY)
    n = float(np.sum(counts))
    finest = min_step(eps, counts, max_points)
    if goal.grid_step is not None:
        step = max(goal.grid_step, finest)
    else:
        tolerance = goal.tolerance if goal.tolerance is not None else DEFAULT_TOLERANCE
        step = max(math.sqrt(_DELTA_STEP_C * tolerance / n), finest)
    best: Bound | None = None
    for attempt in range(_MAX_PASSES):
        up, lo, exact = envelopes(eps, counts, method, max_points, step, centre, DEFAULT_DEPTH)
        b = evaluate(up, lo)
        best = b if best is None else Bound(max(best.lower, b.lower), min(best.upper, b.upper))
        if exact or goal.grid_step is not None or goal.delta_met(best):
            break
        assert goal.relative_width is not None
        # δ widths scale like Δ² (both ends O(kΔ²)): shrink Δ by the square root of the shortfall.
        ratio = goal.relative_width / max(b.relative_width_above(0.0), TINY_PAD)
        new_step = max(step * math.sqrt(_FIRST_AIM * ratio), finest)
        if new_step >= _MIN_SHRINK * step and attempt:
            break
        step = min(step, new_step)
    assert best is not None
    return best

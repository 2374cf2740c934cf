"""Passes of the backward recursion and the certified queries read from them (``docs/selection.md`` §2).

A *pass* builds, for one lattice step h and one query window, the bracketed curve δ(x) of the whole
composition at the window's lattice points, for each direction of the neighbouring relation (the remove and the
add laws of the fixed steps; one direction when all are symmetric), by applying the transforms from the last
step to the first (:mod:`._steps`). Queries take the maximum over the directions and read between lattice
points by the certified rules of :class:`~optcomp.adaptive._curve.Curve`.

**Refinement.** The first pass uses a coarse lattice (``FIRST_CELLS`` cells per smallest BR ε); each later one
refines from the width model of the passes (both ends are off by O(h²) per step: the chord interpolation and
the grid of t), as the PLD grid does. Brackets of all passes are intersected (each is certified). ε queries
with δ ≥ ``PLD_DEEP_DELTA`` raise :class:`~optcomp.pld.GridTooLargeError` when the requested width is not reached
within the memory cap; δ queries and deeper ε queries return the narrowest bracket reached. A δ query at or
beyond the largest privacy loss (Σ ε_j plus the fixed laws' largest losses) is exactly 0; one beyond the query cap
(:meth:`AdaptiveRecursion._query_cap`, far out in the tail) is [0, upper δ(cap)] (δ is non-increasing).

**Inverse.** ε(δ) is the float boundary (:func:`optcomp._inverse.float_boundary`) of the verdict "certified upper
δ(ε) ≤ δ" (the upper end) and of "certified lower δ(ε) ≤ δ" (its failing side is the lower end), started at
the lattice points where the verdicts change.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from optcomp._inverse import float_boundary
from optcomp._numerics import EPSILON_WIDTH_FLOOR, Accuracy, Bound, FloatArray, GridTooLargeError
from optcomp._rounding import next_down, next_up, widen_down
from optcomp._threads import single_threaded
from optcomp.adaptive._curve import Curve
from optcomp.adaptive._plan import (
    BRRun,
    FixedRun,
    Run,
    Transform,
    kernel_refinement,
    lattice_step,
    symmetric,
    transforms,
    unit,
    windows,
)
from optcomp.adaptive._steps import br_step, fixed_step
from optcomp.pld import ORDER_RANGE, STEP_MARGIN

#: Lattice cells per smallest BR ε of the first pass.
FIRST_CELLS = 8
#: Refinement passes at most.
MAX_PASSES = 8
#: Share of the requested width that window truncation may cost (the windows' η).
_TRUNCATION_SHARE = 1e-2
#: Bytes per lattice point and t-row of a BR transform's working arrays (its lattice rows and temporaries).
_BYTES_PER_CELL_POINT = 40
#: Largest growth of the cell count from one pass to the next (the margin on the width model's step and the
#: clamp of a measured order are the grid schedule's, :mod:`optcomp.pld._refine`).
_MAX_REFINE = 4.0
#: The smallest absolute δ error a window is sized for.
_ETA_FLOOR = 1e-300


@dataclass
class Pass:
    """One pass: its lattice step and the curve of each direction on the query window."""

    step: float
    cells: int
    curves: list[Curve]

    def upper(self, x: float) -> float:
        return max(c.upper_at(x) for c in self.curves)

    def lower(self, x: float) -> float:
        return max(c.lower_at(x) for c in self.curves)

    def upper_points(self) -> tuple[int, FloatArray]:
        c0 = self.curves[0]
        return c0.first, np.max([c.upper for c in self.curves], axis=0)

    def lower_points(self) -> tuple[int, FloatArray]:
        c0 = self.curves[0]
        return c0.first, np.max([c.lower for c in self.curves], axis=0)


@dataclass
class AdaptiveRecursion:
    """The queries of one ordered composition with BR steps at one accuracy (module docstring)."""

    runs: tuple[Run, ...]
    accuracy: Accuracy
    _transforms: dict[int, tuple[float, list[Transform]]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if not any(isinstance(r, BRRun) for r in self.runs):
            raise ValueError("the adaptive engine needs at least one bounded-range step")
        self.directions = 1 if symmetric(self.runs) else 2
        self.u, self.power_of_two = unit(self.runs)
        self.refine = kernel_refinement(self.runs)

    # -- passes ---------------------------------------------------------------------------------------
    def _cells(self, cells: float) -> int:
        c = max(1, math.ceil(cells))
        return 1 << (c - 1).bit_length() if self.power_of_two else c

    def _steps(self, cells: int) -> tuple[float, list[Transform]]:
        if cells not in self._transforms:
            self._transforms.clear()  # one lattice kept: a pass reuses its kernels for the next query only
            h = lattice_step(self.u, cells)
            self._transforms[cells] = (h, transforms(self.runs, h, self.accuracy, self.directions, self.refine))
        return self._transforms[cells]

    def run_pass(self, cells: int, x_lo: float, x_hi: float, eta: float) -> Pass:
        """The curves on the lattice points covering [x_lo, x_hi] (and one more on each side) at ``cells``, with
        the BLAS pools limited to one thread (:func:`optcomp._threads.single_threaded`: the direct convolutions'
        dot products woke OpenBLAS's pool per output; on a loaded machine that cost more than the work)."""
        with single_threaded():
            return self._run_pass(cells, x_lo, x_hi, eta)

    def _run_pass(self, cells: int, x_lo: float, x_hi: float, eta: float) -> Pass:
        h, steps = self._steps(cells)
        q_lo, q_hi = math.floor(x_lo / h) - 1, math.ceil(x_hi / h) + 2
        wins = windows(steps, h, q_lo, q_hi, eta)
        worst = max(((s.cells + 1) * (b - a + 2 * s.cells + 3) for s, (a, b) in zip(steps, wins[:-1], strict=True)),
                    default=0)
        if worst * _BYTES_PER_CELL_POINT > self.accuracy.memory_cap:
            raise GridTooLargeError(
                f"a bounded-range step of the recursion needs {worst} lattice values at step {h:g} (the memory cap "
                f"allows {self.accuracy.memory_cap // _BYTES_PER_CELL_POINT}); ask for a larger "
                "Accuracy.relative_width, or raise Accuracy.memory_cap"
            )
        curves = []
        for d in range(self.directions):
            curve = Curve.final(h)
            for i in range(len(steps) - 1, -1, -1):
                na, nb = wins[i]
                st = steps[i]
                if st.cells:
                    curve = br_step(curve, st.epsilon, st.cells, na, nb)
                else:
                    curve = fixed_step(curve, st.kernels[d][0], st.kernels[d][1], na, nb)
            curves.append(curve)
        return Pass(h, cells, curves)

    def _next(self, history: list[tuple[int, float]], target: float) -> int:
        """The next pass's cell count from the passes' (cells, relative width): the width model's order (2, or
        the order measured between the last two passes, in ``ORDER_RANGE``) at ``STEP_MARGIN`` of its prediction."""
        cells, w = history[-1]
        order = 2.0
        if len(history) >= 2:
            (c0, w0), (c1, w1) = history[-2], history[-1]
            if w0 > w1 > 0 and c1 > c0:
                order = min(ORDER_RANGE[1], max(ORDER_RANGE[0], math.log(w0 / w1) / math.log(c1 / c0)))
        grow = (w / target) ** (1.0 / order) / STEP_MARGIN if w > 0 and math.isfinite(w) else _MAX_REFINE
        return self._cells(cells * min(_MAX_REFINE, max(1.4, grow)))

    def _first_cells(self) -> int:
        if self.accuracy.grid_step is not None:
            return self._cells(self.u / self.accuracy.grid_step)
        return self._cells(FIRST_CELLS)

    # -- δ(ε) --------------------------------------------------------------------------------------------
    def delta_curve(self, epsilons: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Certified (lower, upper) of δ at each ε ≥ 0, refined until every point with δ > 0 meets the width."""
        all_eps = np.asarray(epsilons, dtype=np.float64)
        lower_all, upper_all = np.zeros(all_eps.size), np.ones(all_eps.size)
        if all_eps.size == 0:
            return lower_all, upper_all
        # at and beyond the largest privacy loss δ = 0 exactly; beyond the cap, δ ≤ δ(cap) (non-increasing)
        todo = all_eps < self._epsilon_at_zero().upper
        upper_all[~todo] = 0.0
        if not np.any(todo):
            return lower_all, upper_all
        cap = self._query_cap()
        capped = all_eps[todo] > cap
        eps = np.minimum(all_eps[todo], cap)
        lower, upper = np.zeros(eps.size), np.ones(eps.size)
        cells, history = self._first_cells(), []
        eta = self.accuracy.tail_mass
        target = self.accuracy.relative_width
        for n_pass in range(MAX_PASSES):
            try:
                p = self.run_pass(cells, float(np.min(eps)), float(np.max(eps)), eta)
            except GridTooLargeError:
                if n_pass == 0:
                    raise
                break  # δ queries return the narrowest bracket reached (module docstring)
            lower = np.maximum(lower, [0.0 if c else p.lower(float(e)) for e, c in zip(eps, capped, strict=True)])
            upper = np.minimum(upper, [p.upper(float(e)) for e in eps])
            lower = np.minimum(lower, upper)
            with np.errstate(invalid="ignore", divide="ignore"):
                width = np.where((upper > 0) & ~capped, (upper - lower) / upper, 0.0)
            w = float(np.max(width))
            if w <= target or self.accuracy.grid_step is not None:
                break
            history.append((cells, w))
            live = upper[(upper > 0) & ~capped]
            eta = max(float(np.min(live)) * target * _TRUNCATION_SHARE, _ETA_FLOOR) if live.size else eta
            try:
                cells = self._next(history, target)
                self.run_pass_check(cells)
            except GridTooLargeError:
                break
        lower_all[todo], upper_all[todo] = lower, upper
        return lower_all, upper_all

    def _query_cap(self) -> float:
        """The largest ε a δ query is evaluated at: twice the window placement of δ = 1e-300, plus 1 (beyond
        it the answer is [0, upper δ(cap)], certified because δ is non-increasing; a placement only)."""
        return 2.0 * self._guess(_ETA_FLOOR) + 1.0

    def run_pass_check(self, cells: int) -> None:
        """Raise :class:`GridTooLargeError` now if a pass at ``cells`` cannot fit (its kernels too)."""
        self._steps(cells)

    def delta(self, epsilon: float) -> Bound:
        lo, hi = self.delta_curve(np.array([epsilon]))
        return Bound(float(lo[0]), float(hi[0]))

    # -- ε(δ) ---------------------------------------------------------------------------------------------
    def epsilon(self, delta: float, strict: bool) -> Bound:
        """Certified bracket of ε(δ) (module docstring)."""
        if delta >= 1.0:
            return Bound(0.0, 0.0)
        if delta == 0.0:
            return self._epsilon_at_zero()
        if self._certain_infinite_mass() > delta:
            return Bound(math.inf, math.inf)  # δ(ε) ≥ P(some step's loss is +∞) > δ at every ε
        target = self.accuracy.relative_width
        eta = max(delta * target * _TRUNCATION_SHARE, _ETA_FLOOR)
        best = Bound(0.0, math.inf)
        window = (0.0, self._guess(delta))
        cells, history = self._first_cells(), []
        for n_pass in range(MAX_PASSES):
            try:
                p = self.run_pass(cells, window[0], window[1], eta)
            except GridTooLargeError:
                if strict or n_pass == 0:
                    raise
                return best
            hi = self._upper_root(p, delta)
            if hi is None and math.isinf(best.upper):
                window = (window[0], 2.0 * window[1] + 1.0)  # the answer lies beyond the window: widen it
                continue
            lo = self._lower_root(p, delta)
            up = best.upper if hi is None else min(best.upper, hi)
            best = Bound(min(max(best.lower, lo), up), up)
            w = best.relative_width_above(EPSILON_WIDTH_FLOOR)
            if w <= target or self.accuracy.grid_step is not None:
                return best
            history.append((cells, w))
            try:
                cells = self._next(history, target)
                self.run_pass_check(cells)
            except GridTooLargeError:
                if strict:
                    raise
                return best
            h = lattice_step(self.u, cells)
            window = (max(0.0, best.lower - 2.0 * h), best.upper + 2.0 * h)
        if strict:
            raise GridTooLargeError(
                f"the requested relative width {target:g} is not reached by the adaptive bounded-range engine in "
                f"{MAX_PASSES} passes (bracket [{best.lower!r}, {best.upper!r}]); ask for a larger "
                "Accuracy.relative_width"
            )
        return best

    def _certain_infinite_mass(self) -> float:
        """A lower end of P(some fixed step's loss is +∞) = 1 − Π(1 − p_inf)^k in the larger direction."""
        best = 0.0
        for d in range(self.directions):
            log_fin = 0.0
            for run in self.runs:
                if isinstance(run, FixedRun):
                    for law, k in run.direction(d == 1):
                        log_fin += k * math.log1p(-law.p_inf) if law.p_inf < 1.0 else -math.inf
            best = max(best, widen_down(-math.expm1(widen_down(log_fin, 8)), 8) if log_fin > -math.inf else 1.0)
        return best

    def _upper_root(self, p: Pass, delta: float) -> float | None:
        """The least ε ≥ 0 found whose certified upper δ is ≤ δ (``None``: none in the window)."""
        first, up = p.upper_points()
        if p.upper(0.0) <= delta:
            return 0.0
        ok = np.flatnonzero(up <= delta)
        if ok.size == 0:
            return None
        n = first + int(ok[0])
        passing = n * p.step
        fail = (n - 1) * p.step
        if fail < 0.0 or p.upper(fail) <= delta:
            fail = 0.0
        found = float_boundary(lambda x: p.upper(x) <= delta, name="epsilon", passing_above=True, fail=fail,
                               passing=passing)
        return found.passing

    def _lower_root(self, p: Pass, delta: float) -> float:
        """The largest ε found whose certified lower δ exceeds δ (0 if none)."""
        first, low = p.lower_points()
        above = np.flatnonzero(low > delta)
        if above.size == 0:
            return 0.0
        n = first + int(above[-1])
        fail = n * p.step
        if fail <= 0.0 or not p.lower(fail) > delta:
            return 0.0
        passing = (n + 1) * p.step
        if p.lower(passing) > delta:
            return fail  # the verdict is not monotone here (it never is for certified ends): keep the safe end
        found = float_boundary(lambda x: p.lower(x) <= delta, name="epsilon", passing_above=True, fail=fail,
                               passing=passing)
        return 0.0 if found.fail is None else found.fail

    def _guess(self, delta: float) -> float:
        """A window end for the first pass: the Hoeffding bound D + √(V ln(1/δ)/2) of the BR steps plus each
        fixed block's mean + √(2·var·ln(1/δ)) (a placement only: a pass that finds no upper end widens it)."""
        br = [r for r in self.runs if isinstance(r, BRRun)]
        from optcomp.mechanisms.bounded_range import kl_max

        drift = sum(kl_max(r.epsilon) * r.count for r in br)
        var = sum(r.epsilon**2 * r.count for r in br)
        log_d = -math.log(delta)  # not log(1/δ): 1/δ overflows for subnormal δ
        guess = drift + math.sqrt(var * log_d / 2.0)
        h, steps = self._steps(self._first_cells())
        for st in steps:
            if st.cells == 0:
                up = st.kernels[0][0]
                j = (up.first + np.arange(up.values.size)) * h
                mass = float(np.sum(up.values))
                if mass > 0:
                    mean = float(np.dot(up.values, j)) / mass
                    sd = math.sqrt(max(float(np.dot(up.values, (j - mean) ** 2)) / mass, 0.0))
                    guess += max(mean, 0.0) + sd * math.sqrt(2.0 * log_d)
        return max(guess, 4.0 * h)

    def _epsilon_at_zero(self) -> Bound:
        """ε(0): the largest privacy loss a path reaches, Σ ε_j over the BR steps (approached as t_j → ε_j) plus
        each fixed law's largest loss (∞ for a law with unbounded loss or mass at +∞), the larger direction."""
        best = Fraction(0)
        for d in range(self.directions):
            total = Fraction(0)
            for run in self.runs:
                if isinstance(run, BRRun):
                    total += Fraction(run.epsilon) * run.count
                    continue
                for law, k in run.direction(d == 1):
                    if law.continuous is not None or law.p_inf > 0 or law.atom_losses.size == 0:
                        return Bound(math.inf, math.inf)
                    total += max(Fraction(float(law.atom_losses[-1])), Fraction(0)) * k
            best = max(best, total)
        value = float(best)
        lo = value if Fraction(value) <= best else next_down(value)
        hi = value if Fraction(value) >= best else next_up(value)
        return Bound(max(lo, 0.0), hi)

    def epsilon_estimate(self, delta: float) -> float:
        b = self.epsilon(delta, strict=False)
        return b.upper if not math.isfinite(b.upper) else (b.upper + 2.0 * b.lower) / 3.0


__all__ = ["FIRST_CELLS", "MAX_PASSES", "AdaptiveRecursion", "Pass"]

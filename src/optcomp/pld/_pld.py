"""The public :class:`PrivacyLossDistribution`: a thin immutable value holding both ends per direction.

Data flow, one idea per module: :mod:`._cells` (a law → certified cell masses) →
:mod:`._dominating` (upper end: the split pair) and :mod:`._dominated` (lower end: the
quantised-outcome pair) → :mod:`._fft` (composition, window, error bars) → :mod:`._query` (δ(ε),
ε(δ)). This module only merges parts, picks the grid step and the tilt, and takes maxima over the
two directions of the neighbouring relation.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from scipy.special import logsumexp

from optcomp._numerics import (
    DEFAULT_ACCURACY,
    EPSILON_XTOL,
    PLD_DEEP_DELTA,
    PLD_FIRST_STEP,
    PLD_LAW_TAIL,
    UNIT_ROUNDOFF,
    Accuracy,
    Bound,
    FloatArray,
    check_int,
    check_nonnegative,
    check_probability,
)
from optcomp.mechanisms._law import PrivacyLossLaw
from optcomp.mechanisms._spec import Neighbouring, check_neighbouring, combined_relation
from optcomp.pld._cells import BYTES_KEPT_PER_CELL, BYTES_PER_CELL, GridTooLargeError, cells, window
from optcomp.pld._dominated import Quantised, quantise
from optcomp.pld._dominating import Split, split
from optcomp.pld._fft import BYTES_PER_POINT, Composed, compose
from optcomp.pld._fft import window as fft_window
from optcomp.pld._query import LowerEnd, UpperEnd, bisect, tilt

_U = UNIT_ROUNDOFF
#: Tilts θ (per unit of loss) the deep-tail queries choose from (0 = untilted).
_THETAS = np.concatenate([[0.0], 2.0 ** (np.arange(-7 * 16, 13 * 16 + 1) / 16)])
#: A bound is re-read through a tilted composition when its FFT error floor exceeds this fraction of it.
_TILT_TRIGGER = 1e-4
#: Composed vectors of one realisation that stay in memory per FFT point (bytes), on top of the work.
_KEPT_PER_POINT = 96
#: Bisection steps before the exact root iteration of a lower ε end.
_COARSE_BISECTIONS = 8
#: First step (relative to the upper end) of the downward scan for a lower ε end.
_SCAN_START = 1e-7
#: Widths below which two passes estimate the width's order in Δ (above, the model's order 2 is used).
_ASYMPTOTIC = 0.05
#: Refinement passes of the automatic grid step.
_MAX_PASSES = 7
#: Largest ratio of one refinement's step to the previous one (a near miss refines by less than 2×:
#: every pass costs ∝ 1/Δ, and the width model's prediction is what is trusted, with a 0.85 margin).
_MAX_STEP_RATIO = 0.7
#: Relative width below which ε(δ) lower ends stop the bisection early (a fraction of the target).
_FLOOR_WIDTH = 1e-300


def _merge(parts: list[tuple[PrivacyLossLaw, int]]) -> list[tuple[PrivacyLossLaw, int]]:
    """Counts of the same law object added (order of first appearance kept)."""
    out: dict[int, tuple[PrivacyLossLaw, int]] = {}
    for law, k in parts:
        kk = out[id(law)][1] if id(law) in out else 0
        out[id(law)] = (law, kk + k)
    return list(out.values())


@dataclass
class _Vectors:
    """Split and quantised vectors of every part on one set of per-step windows, and the envelopes
    of P(some step at +∞) they imply (the split's includes the mass its windows moved there)."""

    splits: list[tuple[Split, int]]
    quants: list[tuple[Quantised, int]]
    p_inf_hi: float
    p_inf_lo: float


#: Per-law vectors of one grid step, shared by the two directions (a symmetric mechanism's law is the
#: same object in both): key (id(law), span).
_Memo = dict[tuple[int, tuple[float, float]], tuple[Split, Quantised]]


def _vectors(
    laws: list[tuple[PrivacyLossLaw, int]],
    step: float,
    acc: Accuracy,
    spans: list[tuple[float, float]],
    memo: _Memo | None = None,
) -> _Vectors:
    max_cells = acc.memory_cap // BYTES_PER_CELL
    needed = sum(math.floor(b / step) - math.floor(a / step) + 3 for a, b in spans)
    if needed > acc.memory_cap // BYTES_KEPT_PER_CELL:
        raise GridTooLargeError(
            f"the {len(laws)} distinct privacy-loss laws need {needed} grid cells of step {step:g} "
            f"(the memory cap allows {acc.memory_cap // BYTES_KEPT_PER_CELL}); ask for a larger "
            "Accuracy.relative_width or grid_step, or raise Accuracy.memory_cap"
        )
    splits, quants = [], []
    log_hi = log_lo = 0.0
    memo = {} if memo is None else memo
    for (law, k), span in zip(laws, spans, strict=True):
        key = (id(law), span)
        if key not in memo:
            c = cells(law, step, span, max_cells)
            memo[key] = (split(c), quantise(c))
        sp, qu = memo[key]
        splits.append((sp, k))
        quants.append((qu, k))
        log_hi += k * (math.log1p(-sp.p_inf) if sp.p_inf < 1 else -math.inf)
        log_lo += k * (math.log1p(-qu.p_inf) if qu.p_inf < 1 else -math.inf)
    p_hi = min(1.0, -math.expm1(log_hi * (1 + 8 * _U)) * (1 + 8 * _U)) if log_hi > -math.inf else 1.0
    p_lo = max(0.0, -math.expm1(log_lo * (1 - 8 * _U)) * (1 - 8 * _U)) if log_lo > -math.inf else 1.0
    return _Vectors(splits, quants, p_hi, p_lo)


@dataclass
class _Direction:
    """One direction of the neighbouring relation at one grid step: split and quantised vectors of
    every part, and (lazily, per tilt θ) the composed upper and lower ends.

    The untilted ends use *bulk* windows (each per-step tail beyond P-mass tail_mass/(8·count) moves
    to +∞ / onto the first point for the upper end, and is dropped for the lower end); tilted ends,
    which read the deep tail, use *full* windows (per-step tails down to ``PLD_LAW_TAIL``), built on
    first use.
    """

    laws: list[tuple[PrivacyLossLaw, int]]
    bulk: _Vectors
    full_spans: Callable[[], list[tuple[float, float]]]
    memo: _Memo
    acc: Accuracy
    step: float
    log_tau: float
    max_len: int
    count: int
    _full: _Vectors | None = None
    _upper: dict[int, UpperEnd | None] = field(default_factory=dict)
    _lower: dict[int, LowerEnd | None] = field(default_factory=dict)
    _cumulant: dict[int, float] | None = None

    @classmethod
    def build(
        cls,
        laws: list[tuple[PrivacyLossLaw, int]],
        step: float,
        acc: Accuracy,
        spans: list[tuple[float, float]],
        full_spans: Callable[[], list[tuple[float, float]]],
        memo: _Memo,
    ) -> _Direction:
        bulk = _vectors(laws, step, acc, spans, memo)
        count = sum(k for _, k in laws)
        max_len = acc.memory_cap // (BYTES_PER_POINT + _KEPT_PER_POINT)
        return cls(laws, bulk, full_spans, memo, acc, step, math.log(acc.tail_mass / 4), max_len, count)

    @property
    def p_inf_hi(self) -> float:
        return self.bulk.p_inf_hi

    @property
    def p_law(self) -> float:
        """P(some step at +∞) from the laws alone (an estimate, used to decide on tilts only)."""
        log_fin = sum(k * (math.log1p(-law.p_inf) if law.p_inf < 1 else -math.inf) for law, k in self.laws)
        return -math.expm1(log_fin) if log_fin > -math.inf else 1.0

    @property
    def cut(self) -> float:
        """The P-mass the bulk windows moved to +∞ or dropped (what only the full windows resolve)."""
        return max(0.0, self.bulk.p_inf_hi - self.p_law)

    @property
    def p_inf_lo(self) -> float:
        return self.bulk.p_inf_lo

    def full(self) -> _Vectors:
        if self._full is None:
            self._full = _vectors(self.laws, self.step, self.acc, self.full_spans(), self.memo)
        return self._full

    def vectors(self, ti: int) -> _Vectors:
        return self.bulk if ti == 0 else self.full()

    # -- tilt ---------------------------------------------------------------------------------------
    def cumulant(self, ti: int) -> float:
        """K(θ) = Σ k ln Σ_c x_c e^{θ cΔ} of the (full) split vectors at θ = ``_THETAS[ti]``."""
        if self._cumulant is None:
            self._cumulant = {}
        if ti not in self._cumulant:
            th = float(_THETAS[ti])
            out = 0.0
            for sp, k in self.full().splits:
                pos = np.isfinite(sp.log_masses)
                c = (sp.first + np.flatnonzero(pos)) * self.step
                out += k * float(logsumexp(sp.log_masses[pos] + th * c))
            self._cumulant[ti] = out
        return self._cumulant[ti]

    def _argmin(self, f: Callable[[int], float]) -> int:
        """Index in 1 … len(_THETAS) − 1 minimising a unimodal f (ternary search on the index)."""
        lo, hi = 1, _THETAS.size - 1
        while hi - lo > 2:
            m1 = lo + (hi - lo) // 3
            m2 = hi - (hi - lo) // 3
            if f(m1) <= f(m2):
                hi = m2
            else:
                lo = m1
        return min(range(lo, hi + 1), key=f)

    def theta_for_eps(self, eps: float) -> int:
        """The tilt minimising the Chernoff bound K(θ) − θε at ε (the saddle point, on the grid)."""
        return self._argmin(lambda i: self.cumulant(i) - float(_THETAS[i]) * eps)

    def theta_for_delta(self, delta: float) -> int:
        """The tilt minimising the Chernoff ε bound (K(θ) − ln δ)/θ for δ (δ = 0: the smallest double).

        The tilt only decides tightness (every tilt gives a certified end), so δ = 0 may pick the
        deepest one."""
        ld = math.log(max(delta, math.ulp(0.0)))
        return self._argmin(lambda i: (self.cumulant(i) - ld) / float(_THETAS[i]))

    # -- ends -----------------------------------------------------------------------------------------
    def upper(self, ti: int) -> UpperEnd | None:
        if ti not in self._upper:
            th = float(_THETAS[ti])
            vs = self.vectors(ti)
            vecs, log_scale, slack = [], 0.0, 0.0
            for sp, k in vs.splits:
                x, lm = tilt(sp.log_masses, sp.first, self.step, th, 1.0)
                vecs.append((x, k))
                log_scale += k * lm
                slack += k * abs(lm)
            p_inf = vs.p_inf_hi
            first = sum(k * sp.first for sp, k in vs.splits)
            try:
                if not all(np.any(x > 0) for x, _ in vecs):
                    self._upper[ti] = None
                else:
                    if len(vecs) == 1 and vecs[0][1] == 1:  # one step: the vector itself, exact
                        comp = Composed(vecs[0][0], first, 0.0, 0.0)
                    else:
                        win = fft_window(vecs, self.log_tau, self.max_len)
                        comp = compose(vecs, win)
                        comp = Composed(comp.values, first + comp.first, comp.fft_error, comp.wrap)
                    ls = 4 * _U * (slack + len(vecs) + 1)
                    self._upper[ti] = UpperEnd(comp, self.step, th, log_scale, ls, p_inf)
            except GridTooLargeError:
                if ti == 0:
                    raise
                self._upper[ti] = None
        return self._upper[ti]

    def lower(self, ti: int) -> LowerEnd | None:
        if ti not in self._lower:
            th = float(_THETAS[ti])
            vs = self.vectors(ti)
            pv, av = [], []
            lp = la = slack = 0.0
            for qu, k in vs.quants:
                x, lm = tilt(qu.log_p, qu.first, self.step, th, -1.0)
                pv.append((x, k))
                lp += k * lm
                y, lma = tilt(qu.log_q_hat, qu.first, self.step, th, 1.0, normalise=True)
                av.append((y, k))
                la += k * lma
                slack += k * (abs(lm) + abs(lma))
            first = sum(k * qu.first for qu, k in vs.quants)
            try:
                if not all(np.any(x > 0) for x, _ in pv) or not all(np.all(np.isfinite(y)) for y, _ in av):
                    self._lower[ti] = None
                else:
                    if len(pv) == 1 and pv[0][1] == 1:  # one step: the vectors themselves, exact
                        cp = Composed(pv[0][0], first, 0.0, 0.0)
                        ca = Composed(av[0][0], first, 0.0, 0.0)
                    else:
                        win = fft_window(pv, self.log_tau, self.max_len)
                        cp = compose(pv, win)
                        ca = compose(av, (win[0], win[1], 0.0))
                        cp = Composed(cp.values, first + cp.first, cp.fft_error, cp.wrap)
                        ca = Composed(ca.values, first + ca.first, ca.fft_error, 0.0)
                    # index tilt e^{θΔJ} = e^{θ(s_J − kΔ/2)}: fold e^{θkΔ/2} into both scales
                    half = th * self.count * self.step / 2
                    ls = 4 * _U * (slack + len(pv) + 1 + abs(half))
                    self._lower[ti] = LowerEnd(
                        cp, ca, self.count, self.step, th, lp + half, la + half, ls, vs.p_inf_lo
                    )
            except GridTooLargeError:
                if ti == 0:
                    raise
                self._lower[ti] = None
        return self._lower[ti]

    def delta_upper(self, eps: FloatArray) -> FloatArray:
        base = self.upper(0)
        if base is None:
            return np.full(eps.size, max(self.p_inf_hi, 0.0) if self._all_infinite() else 1.0)
        out = base.delta(eps)
        fin = out - self.p_law
        need = base.floor * math.exp(base.log_slack) + self.cut > _TILT_TRIGGER * np.maximum(fin, 0.0)
        for i in np.flatnonzero(need):
            ti = self.theta_for_eps(float(eps[i]))
            if ti == 0:
                continue
            end = self.upper(ti)
            if end is not None:
                out[i] = min(out[i], float(end.delta(eps[i : i + 1])[0]))
        return out

    def _all_infinite(self) -> bool:
        return any(not np.any(np.isfinite(sp.log_masses)) for sp, _ in self.bulk.splits)

    def delta_lower(self, eps: FloatArray, hint: FloatArray | None = None) -> FloatArray:
        """Certified lower δ(ε); where the untilted FFT floor matters, the tilts that suit ε and the
        δ level ``hint`` (an upper δ at ε, as ε(δ) would choose) are tried too."""
        base = self.lower(0)
        if base is None:
            return np.full(eps.size, self.p_inf_lo)
        out = base.delta(eps)
        floor = base.err_p + math.e * base.err_a + self.cut
        for i in range(eps.size):
            fin = out[i] - self.p_inf_lo
            if fin >= floor / _TILT_TRIGGER:
                continue
            tis = {self.theta_for_eps(float(eps[i]))}
            if hint is not None and 0 < hint[i] < 1:
                tis.add(self.theta_for_delta(float(hint[i])))
            for ti in tis - {0}:
                end = self.lower(ti)
                if end is not None:
                    out[i] = max(out[i], float(end.delta(eps[i : i + 1])[0]))
        return out

    def epsilon_upper(self, delta: float) -> float:
        """Least ε found (bisection) whose certified upper δ is ≤ ``delta``."""
        if self.p_law >= delta:
            return math.inf
        base = self.upper(0)
        if base is None:
            return math.inf
        ends = [base]
        if base.floor * math.exp(base.log_slack) + self.cut > _TILT_TRIGGER * (delta - self.p_law):
            t = self.upper(self.theta_for_delta(delta))
            if t is not None:
                ends.append(t)

        def ok(e: float) -> bool:
            x = np.array([e])
            return min(float(end.delta(x)[0]) for end in ends) <= delta

        if ok(0.0):
            return 0.0
        hi = max(1.0, max(end.s_max() for end in ends) + 1.0)
        for _ in range(64):
            if ok(hi):
                break
            hi = 2 * hi + 1.0
        else:
            return math.inf
        return bisect(0.0, hi, ok, "hi", EPSILON_XTOL)

    def epsilon_lower(self, delta: float, upper: float) -> float:
        """Largest ε found (bisection) whose certified lower δ exceeds ``delta`` (0 if none)."""
        if self.p_inf_lo > delta:
            return math.inf
        base = self.lower(0)
        if base is None:
            return 0.0
        ends = [base]
        if (base.err_p + math.e * base.err_a + self.cut) > _TILT_TRIGGER * (delta - self.p_inf_lo):
            t = self.lower(self.theta_for_delta(delta))
            if t is not None:
                ends.append(t)

        def ok(e: float) -> bool:
            return max(float(end.delta(np.array([e]))[0]) for end in ends) <= delta

        if ok(0.0):
            return 0.0
        lo = 0.0
        if math.isfinite(upper) and upper > 0:
            # scan down from the upper end (the computed lower δ need not be monotone far from the
            # tilt's window, so a bisection from 0 could stop in the wrong place)
            gap = max(upper * _SCAN_START, EPSILON_XTOL)
            while gap < upper:
                if not ok(upper - gap):
                    lo = upper - gap
                    break
                gap *= 2.0
        if lo == 0.0:
            hi = upper if math.isfinite(upper) else max(end.s_max() for end in ends) + 1.0
            for _ in range(64):
                if ok(hi):
                    break
                lo, hi = hi, 2 * hi + 1.0
            else:
                return lo
            for _ in range(_COARSE_BISECTIONS):
                mid = 0.5 * (lo + hi)
                if ok(mid):
                    hi = mid
                else:
                    lo = mid
        target = delta * (1 + 16 * _U) - self.p_inf_lo * (1 - 16 * _U)
        best = lo
        for end in ends:
            best = max(best, end.root(lo, target))
        return best


class PrivacyLossDistribution:
    """Privacy loss distribution of a (heterogeneous) composition, with certified δ(ε) brackets.

    A PLD is a list of parts (remove law, add law, count); compositions only extend the list. A query
    realises each direction of the neighbouring relation on a grid of step Δ (chosen from
    ``accuracy.relative_width`` by a coarse first pass and refinement, or ``accuracy.grid_step``):

    * ``upper``: the exact hockey-stick value of the connect-the-dots *split* pair, which dominates
      the true pair (``docs/pld.md`` Lemma 1), computed from upper envelopes (Lemma 4) with the FFT
      error bars and the mass outside the FFT window added;
    * ``lower``: P_J(T) − e^ε Q_J(T) of the *quantised-outcome* pair (the summed cell index J, a
      post-processing, Lemma 2) on the test set T of bins with a positive computed difference, from
      lower envelopes of P and upper envelopes of Q, FFT error bars and folded mass subtracted.

    Both ends are off the truth by O(k·Δ²) for smooth laws. Small δ are read through exponentially
    tilted compositions (relative accuracy down to δ = 1e-300). δ(ε) is the maximum over the remove
    and add directions; ε(δ) is found by bisection on the certified values of each end.

    A pure grid engine: which engine answers a composition (this grid, the GDP closed form or
    :mod:`optcomp.optimal`) is decided by :mod:`optcomp.queries`.
    """

    def __init__(
        self,
        parts: tuple[tuple[PrivacyLossLaw, PrivacyLossLaw | None, int], ...],
        accuracy: Accuracy,
        neighbouring: Neighbouring | None = None,
    ) -> None:
        self._parts = parts
        self._accuracy = accuracy
        self._neighbouring = check_neighbouring("neighbouring", neighbouring)
        self._count = sum(k for _, _, k in parts)
        self._realised: dict[float, tuple[_Direction, ...]] = {}
        self._spans: dict[tuple[int, int], tuple[float, float]] = {}

    # -- construction -----------------------------------------------------------------------------
    @classmethod
    def from_laws(
        cls,
        remove: PrivacyLossLaw,
        add: PrivacyLossLaw | None = None,
        *,
        accuracy: Accuracy = DEFAULT_ACCURACY,
        neighbouring: Neighbouring | None = None,
    ) -> PrivacyLossDistribution:
        """The PLD of one mechanism from its exact laws.

        Args:
            remove: law of L = ln(dP/dQ) for the remove-direction pair (P, Q).
            add: law for the reversed pair; ``None`` (or ``remove`` itself) means symmetric.
            accuracy: the requested width or grid step (:class:`~optcomp.Accuracy`).
            neighbouring: the relation the laws are stated for, or ``None`` (relation-agnostic).
        """
        if not isinstance(remove, PrivacyLossLaw):
            raise TypeError(f"remove must be a PrivacyLossLaw, got {remove!r}")
        if add is not None and not isinstance(add, PrivacyLossLaw):
            raise TypeError(f"add must be a PrivacyLossLaw or None, got {add!r}")
        if not isinstance(accuracy, Accuracy):
            raise TypeError(f"accuracy must be an Accuracy, got {accuracy!r}")
        return cls(((remove, None if add is remove else add, 1),), accuracy, neighbouring)

    @property
    def accuracy(self) -> Accuracy:
        """The accuracy this PLD is realised with."""
        return self._accuracy

    @property
    def neighbouring(self) -> Neighbouring | None:
        """The neighbouring relation this PLD is stated for (``None``: relation-agnostic, i.e. valid for
        whichever relation the mechanisms' sensitivities were stated under)."""
        return self._neighbouring

    @property
    def count(self) -> int:
        """The number of mechanisms composed."""
        return self._count

    @property
    def symmetric(self) -> bool:
        """Whether every part is symmetric (then only one direction is computed)."""
        return all(add is None for _, add, _ in self._parts)

    def compose(self, other: PrivacyLossDistribution) -> PrivacyLossDistribution:
        """The PLD of running both compositions (heterogeneous; realised lazily)."""
        if not isinstance(other, PrivacyLossDistribution):
            raise TypeError(f"other must be a PrivacyLossDistribution, got {other!r}")
        if other._accuracy != self._accuracy:
            raise ValueError(
                f"cannot compose PLDs of different accuracy: {self._accuracy} and {other._accuracy}"
            )
        relation = combined_relation(self._neighbouring, other._neighbouring, what="the two PLDs")
        return PrivacyLossDistribution(self._parts + other._parts, self._accuracy, relation)

    def self_compose(self, k: int) -> PrivacyLossDistribution:
        """The k-fold composition; its cost does not grow with k beyond the width of the grid."""
        k = check_int("k", k, minimum=1)
        return PrivacyLossDistribution(
            tuple((r, a, c * k) for r, a, c in self._parts),
            self._accuracy,
            self._neighbouring,
        )

    # -- realisation ------------------------------------------------------------------------------
    def _laws(self) -> list[list[tuple[PrivacyLossLaw, int]]]:
        remove = _merge([(r, k) for r, _, k in self._parts])
        if self.symmetric:
            return [remove]
        return [remove, _merge([(r if a is None else a, k) for r, a, k in self._parts])]

    def _span(self, law: PrivacyLossLaw, key: int) -> tuple[float, float]:
        """The loss interval one law's grid covers: bulk (key 0) or full (key 1) windows, cached."""
        if (id(law), key) not in self._spans:
            if key == 0:
                lt = math.log(self._accuracy.tail_mass) - math.log(8.0 * self.count)
            else:
                lt = math.log(PLD_LAW_TAIL) - math.log(4.0 * self.count)
            self._spans[(id(law), key)] = window(law, lt)
        return self._spans[(id(law), key)]

    def _directions(self, step: float) -> tuple[_Direction, ...]:
        if step not in self._realised:
            # per-law vectors are shared by both directions; full windows (deep-tail tilts) are only
            # searched for when a query needs them
            memo: _Memo = {}
            dirs = []
            for laws in self._laws():
                spans = [self._span(law, 0) for law, _ in laws]

                def full(laws: list[tuple[PrivacyLossLaw, int]] = laws) -> list[tuple[float, float]]:
                    return [self._span(law, 1) for law, _ in laws]

                dirs.append(_Direction.build(laws, step, self._accuracy, spans, full, memo))
            # keep only the finest realisation (and this one): memory stays bounded by one grid
            for old in [s for s in self._realised if s != step]:
                del self._realised[old]
            self._realised[step] = tuple(dirs)
        return self._realised[step]

    def _steps(self) -> list[float]:
        """Grid steps to try, coarse to fine: the fixed one, or the automatic first pass."""
        acc = self._accuracy
        return [acc.grid_step] if acc.grid_step is not None else [PLD_FIRST_STEP]

    def _refine(self, measure: _Measure, strict: bool) -> Bound:
        """Run ``measure`` at the fixed step, or refine the step until its relative width is met."""
        acc = self._accuracy
        if acc.grid_step is not None:
            return measure.run(self._directions(acc.grid_step))
        target = acc.relative_width
        step = PLD_FIRST_STEP
        history: list[tuple[float, float]] = []
        best: Bound | None = None
        for _ in range(_MAX_PASSES):
            try:
                b = measure.run(self._directions(step))
            except GridTooLargeError as err:
                if best is None and not history:
                    step *= 8.0  # the first pass itself is too fine for this span: coarsen it
                    continue
                if strict and best is not None and measure.width(best) > target:
                    raise GridTooLargeError(
                        f"the requested relative width {target:g} is not reached before the memory cap "
                        f"({acc.memory_cap} bytes): at grid step {history[-1][0]:g} the width is "
                        f"{measure.width(best):.3g}; ask for a larger Accuracy.relative_width or raise "
                        f"Accuracy.memory_cap ({err})"
                    ) from err
                break
            w = measure.width(b)
            best = b
            history.append((step, w))
            if w <= target or not math.isfinite(w) or not measure.refinable(b):
                return b
            order = 2.0
            if len(history) >= 2:
                (s0, w0), (s1, w1) = history[-2], history[-1]
                if _ASYMPTOTIC > w0 > w1 > 0 and s0 != s1:
                    order = min(2.2, max(1.0, math.log(w0 / w1) / math.log(s0 / s1)))
            step = step * min(_MAX_STEP_RATIO, 0.85 * (target / w) ** (1.0 / order))
        if best is None:
            raise GridTooLargeError(
                "no grid step fits the memory cap; raise Accuracy.memory_cap or compose fewer mechanisms"
            )
        if strict and measure.width(best) > target:
            raise GridTooLargeError(
                f"the requested relative width {target:g} is not reached after {_MAX_PASSES} refinements "
                f"(width {measure.width(best):.3g} at grid step {history[-1][0]:g}); ask for a larger "
                "Accuracy.relative_width or use an explicit Accuracy.grid_step"
            )
        return best

    # -- queries ----------------------------------------------------------------------------------
    def delta(self, epsilon: float) -> Bound:
        """Certified bracket of δ(ε) = max(δ_remove(ε), δ_add(ε)), δ_{P‖Q}(ε) = E_P[(1 − e^{ε−L})_+].

        Args:
            epsilon: ε ≥ 0.
        """
        eps = check_nonnegative("epsilon", epsilon)
        return self._refine(_DeltaMeasure(np.array([eps])), strict=False)

    def delta_curve(self, epsilons: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
        """Vectorised :meth:`delta`: arrays (lower, upper) of δ(ε) for each ε ≥ 0 in ``epsilons``."""
        eps = np.asarray(epsilons, dtype=np.float64).ravel()
        if eps.size and (not np.all(np.isfinite(eps)) or np.any(eps < 0)):
            bad = eps[~(np.isfinite(eps) & (eps >= 0))][0]
            raise ValueError(f"epsilons must be in [0, inf), got {bad!r}")
        m = _DeltaMeasure(eps)
        self._refine(m, strict=False)
        assert m.last is not None
        return m.last

    def epsilon(self, delta: float) -> Bound:
        """Certified bracket of ε(δ) = inf{ε ≥ 0 : δ(ε) ≤ δ}.

        ``upper`` is an ε whose certified upper δ is ≤ ``delta``; ``lower`` is an ε whose certified
        lower δ exceeds ``delta`` (or 0). Either may be ``inf`` (e.g. when the mass at +∞ exceeds
        ``delta``). With the automatic accuracy the grid is refined until
        (upper − lower)/max(upper, 0.01) ≤ ``accuracy.relative_width``; for δ ≥ ``PLD_DEEP_DELTA`` a width the
        memory cap cannot reach raises :class:`GridTooLargeError`.

        Args:
            delta: δ in [0, 1].
        """
        delta = check_probability("delta", delta)
        return self._refine(_EpsilonMeasure(delta), strict=delta >= PLD_DEEP_DELTA)

    def epsilon_estimate(self, delta: float) -> float:
        """An *uncertified* point estimate (U + 2L)/3 of ε(δ) from the bracket [L, U].

        The two ends' errors are second order with a ratio near 2:1 for smooth laws and many steps
        (``docs/pld.md`` §7), which this weighting cancels; it is not a bound.
        """
        b = self.epsilon(delta)
        if not math.isfinite(b.upper):
            return b.upper
        return (b.upper + 2 * b.lower) / 3

    def __repr__(self) -> str:
        return f"PrivacyLossDistribution(count={self.count}, parts={len(self._parts)}, accuracy={self._accuracy})"


class _Measure:
    """A query run on one realisation, and its relative width."""

    def run(self, dirs: tuple[_Direction, ...]) -> Bound:
        raise NotImplementedError

    def width(self, b: Bound) -> float:
        raise NotImplementedError

    def refinable(self, b: Bound) -> bool:
        return True


class _EpsilonMeasure(_Measure):
    def __init__(self, delta: float) -> None:
        self.delta = delta

    def run(self, dirs: tuple[_Direction, ...]) -> Bound:
        ups = [d.epsilon_upper(self.delta) for d in dirs]
        upper = max(ups)
        lower = 0.0
        # a direction whose own upper ε is below the lower ε already found cannot raise it: skip its
        # (costly) lower end
        for u, d in sorted(zip(ups, dirs, strict=True), key=lambda t: -t[0]):
            if u <= lower:
                continue
            lower = max(lower, d.epsilon_lower(self.delta, upper))
        return Bound(min(lower, upper), upper)

    def width(self, b: Bound) -> float:
        return self.width_of(b)

    @staticmethod
    def width_of(b: Bound) -> float:
        if b.upper == b.lower:
            return 0.0
        return (b.upper - b.lower) / max(b.upper, 0.01)


class _DeltaMeasure(_Measure):
    def __init__(self, eps: FloatArray) -> None:
        self.eps = eps
        self.last: tuple[FloatArray, FloatArray] | None = None

    def run(self, dirs: tuple[_Direction, ...]) -> Bound:
        ups = [d.delta_upper(self.eps) for d in dirs]
        hi = np.max(ups, axis=0)
        lo = np.zeros(self.eps.size)
        for i in np.argsort([-float(np.max(u)) if u.size else 0.0 for u in ups]):
            if self.eps.size and not np.any(ups[i] > lo):
                continue  # this direction's upper δ is below the lower δ already found everywhere
            lo = np.maximum(lo, dirs[i].delta_lower(self.eps, ups[i]))
        lo = np.minimum(lo, hi)
        self.last = (lo, hi)
        if self.eps.size == 0:
            return Bound(0.0, 0.0)
        i = int(np.argmax(self._widths(lo, hi)))
        return Bound(float(lo[i]), float(hi[i]))

    @staticmethod
    def _widths(lo: FloatArray, hi: FloatArray) -> FloatArray:
        with np.errstate(invalid="ignore", divide="ignore"):
            w = np.where(hi > _FLOOR_WIDTH, (hi - lo) / hi, 0.0)
        return np.asarray(w, dtype=np.float64)

    def width(self, b: Bound) -> float:
        assert self.last is not None
        w = self._widths(*self.last)
        return float(np.max(w)) if w.size else 0.0

    def refinable(self, b: Bound) -> bool:
        return True

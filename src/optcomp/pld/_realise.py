"""Realisation of one direction of the neighbouring relation at one grid step (``docs/pld.md``).

:func:`realise` turns the laws of a composition, a grid step and the per-law loss windows into a
:class:`Direction`: the split (dominating, upper end) and quantised-outcome (dominated, lower end)
vectors of every part, and, per exponential tilt θ, the composed ends built on first use
(:mod:`._cells` → :mod:`._dominating`/:mod:`._dominated` → :mod:`._fft` → :mod:`._query`).
A ``Direction`` is frozen: its fields never change; the composed ends it builds are memoised in
private caches (a value of the laws, the step and the accuracy).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import accumulate, repeat, takewhile
from typing import TypeVar

import numpy as np
import numpy.typing as npt
from scipy.special import logsumexp

from optcomp._inverse import float_boundary
from optcomp._inverse_many import batched_bisection, first_passing
from optcomp._numerics import EPSILON_XTOL, Accuracy, FloatArray
from optcomp._rounding import rounding_error, widen_down, widen_up
from optcomp.mechanisms import PrivacyLossLaw
from optcomp.pld._blocks import BLOCK_MIN_COUNT, Shape, blocked, lower_blocks, upper_blocks
from optcomp.pld._cells import BYTES_KEPT_PER_CELL, BYTES_PER_CELL, GridTooLargeError, cells
from optcomp.pld._dominated import Quantised, quantise
from optcomp.pld._dominating import Split, split
from optcomp.pld._fft import BYTES_PER_POINT, Composed, compose
from optcomp.pld._fft import window as fft_window
from optcomp.pld._query import LowerEnd, UpperEnd, tilt

#: Share of live (not underflowing) terms below which :func:`_log_sum_exp` skips the exp of the others.
_LIVE_SHARE = 0.9
#: −x beyond which exp(x) is exactly 0.0 (it is below −745.14), with room for exp's own error.
_EXP_ZERO = 760.0
#: Tilts θ (per unit of loss) the deep-tail queries choose from (0 = untilted).
_THETAS = np.concatenate([[0.0], 2.0 ** (np.arange(-7 * 16, 13 * 16 + 1) / 16)])
#: A bound is re-read through a tilted composition when its FFT error floor exceeds this fraction of it.
_TILT_TRIGGER = 1e-4
#: Composed vectors of one realisation that stay in memory per FFT point (bytes), on top of the work.
_KEPT_PER_POINT = 96
#: Bisection steps before the exact root iteration of a lower ε end.
_COARSE_BISECTIONS = 8
#: How far (in units of the first gap) the upper ε search moves out before answering ε = inf.
_EXPANSION_RANGE = 2.0**63
#: First step (relative to the upper end) of the downward scan for a lower ε end.
_SCAN_START = 1e-7
#: Points x₀, 2x₀ + 1, … a lower ε end tries upwards (when the downward scan found none) before giving up.
_EXPANSION_POINTS = 64


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
Memo = dict[tuple[int, tuple[float, float]], tuple[Split, Quantised]]


def _vectors(
    laws: list[tuple[PrivacyLossLaw, int]],
    step: float,
    acc: Accuracy,
    spans: list[tuple[float, float]],
    memo: Memo | None = None,
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
    p_hi = min(1.0, widen_up(-math.expm1(widen_up(log_hi, 8)), 8)) if log_hi > -math.inf else 1.0
    p_lo = max(0.0, widen_down(-math.expm1(widen_down(log_lo, 8)), 8)) if log_lo > -math.inf else 1.0
    return _Vectors(splits, quants, p_hi, p_lo)


@dataclass(frozen=True, eq=False)
class Direction:
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
    memo: Memo
    acc: Accuracy
    step: float
    log_tau: float
    max_len: int
    count: int
    # memoised on first use (never rebound): the full-window vectors, the ends and cumulants per tilt
    _full: list[_Vectors] = field(default_factory=list)
    _upper: dict[int, UpperEnd | None] = field(default_factory=dict)
    _lower: dict[int, LowerEnd | None] = field(default_factory=dict)
    _cumulant: dict[int, float] = field(default_factory=dict)
    _terms: list[tuple[FloatArray, FloatArray, int]] = field(default_factory=list)

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
        if not self._full:
            self._full.append(_vectors(self.laws, self.step, self.acc, self.full_spans(), self.memo))
        return self._full[0]

    def vectors(self, ti: int) -> _Vectors:
        return self.bulk if ti == 0 else self.full()

    # -- tilt ---------------------------------------------------------------------------------------
    def cumulant(self, ti: int) -> float:
        """K(θ) = Σ k ln Σ_c x_c e^{θ cΔ} of the (full) split vectors at θ = ``_THETAS[ti]``.

        Only chooses tilts (every tilt gives a certified end): the value is scipy's ``logsumexp`` of
        each split's finite log-masses + θ·loss, computed by :func:`_log_sum_exp` with the same float
        operations on arrays gathered once per direction (issue 27 item 7)."""
        if ti not in self._cumulant:
            th = float(_THETAS[ti])
            out = 0.0
            for lm, c, k in self._support():
                a = np.multiply(c, th)  # lm + θc, in one buffer (the same float operations)
                out += k * _log_sum_exp(np.add(a, lm, out=a))
            self._cumulant[ti] = out
        return self._cumulant[ti]

    def _support(self) -> list[tuple[FloatArray, FloatArray, int]]:
        """(finite log-masses, their losses cΔ, count) of each full split vector, gathered once."""
        if not self._terms:
            for sp, k in self.full().splits:
                pos = np.isfinite(sp.log_masses)
                c = np.asarray((sp.first + np.flatnonzero(pos)) * self.step, dtype=np.float64)
                self._terms.append((sp.log_masses[pos], c, k))
        return self._terms

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

            def build() -> UpperEnd | None:
                if not all(np.any(x > 0) for x, _ in vecs):
                    return None
                ls = rounding_error(4, slack + len(vecs) + 1)
                sh = self._shape(vecs) if ti == 0 else None
                if sh is not None:  # two levels (Lemma 5)
                    two = upper_blocks(vecs[0][0], vs.splits[0][0].first, sh, self.step, self.log_tau, self.max_len)
                    return UpperEnd(two.composed, two.step, th, log_scale, ls, p_inf)
                win = None if _one_step(vecs) else fft_window(vecs, self.log_tau, self.max_len)
                return UpperEnd(_fold(vecs, first, win), self.step, th, log_scale, ls, p_inf)

            self._upper[ti] = _guarded(ti, build)
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

            def build() -> LowerEnd | None:
                if not all(np.any(x > 0) for x, _ in pv) or not all(np.all(np.isfinite(y)) for y, _ in av):
                    return None
                sh = self._shape(pv) if ti == 0 else None
                if sh is not None:  # two levels (Lemma 6)
                    two = lower_blocks(pv[0][0], av[0][0], vs.quants[0][0].first, sh, self.step, self.log_tau, self.max_len)
                    ls0 = rounding_error(4, slack + 2) + two.log_slack
                    return LowerEnd(two.p, two.a, two.count, two.step, th, lp, la + two.log_a_shift, ls0, vs.p_inf_lo)
                win = None if _one_step(pv) else fft_window(pv, self.log_tau, self.max_len)
                cp = _fold(pv, first, win)
                # the Q-side vectors share P's window; its wrap-around is not charged (lower end)
                ca = _fold(av, first, None if win is None else (win[0], win[1], 0.0), keep_wrap=False)
                # index tilt e^{θΔJ} = e^{θ(s_J − kΔ/2)}: fold e^{θkΔ/2} into both scales
                half = th * self.count * self.step / 2
                ls = rounding_error(4, slack + len(pv) + 1 + abs(half))
                return LowerEnd(cp, ca, self.count, self.step, th, lp + half, la + half, ls, vs.p_inf_lo)

            self._lower[ti] = _guarded(ti, build)
        return self._lower[ti]

    def _shape(self, vecs: list[tuple[FloatArray, int]]) -> Shape | None:
        """The two-level shape of an untilted end (:func:`._blocks.blocked`; ``None``: one level)."""
        if len(vecs) != 1 or vecs[0][1] < BLOCK_MIN_COUNT:
            return None
        return blocked(vecs, self.acc.memory_cap, max(b - a for a, b in self.full_spans()) / self.step, self.step)

    def delta_upper(self, eps: FloatArray, cap: FloatArray | None = None) -> FloatArray:
        """Certified upper δ(ε); where the untilted FFT floor matters, tilted ends are read too.

        The tilted ends are shared across the points (issue 27 item 7): points are visited deepest
        first, each reads every tilted end already built, and a new end (at the point's saddle tilt)
        is built only where none of them resolves it — its floor at ε a share ≤ ``_TILT_TRIGGER`` of
        its value. An end tilted for a deeper ε carries its tilted mass above the shallower ones, so
        one end usually serves many points. Every end read is certified, and the minimum is taken.

        ``cap``: a certified upper δ of another direction at each ε; the caller takes the maximum of
        the directions, so a point whose value here is already ≤ ``cap`` needs no tilt (the maximum is
        the same whatever this direction's value below it)."""
        base = self.upper(0)
        if base is None:
            return np.full(eps.size, max(self.p_inf_hi, 0.0) if self._all_infinite() else 1.0)
        out = base.delta(eps)
        need = self._upper_wants_tilt(base, out)
        if cap is not None:
            need &= out > cap
        for i in sorted(np.flatnonzero(need).tolist(), key=lambda j: -float(eps[j])):
            x = eps[i : i + 1]
            ti = self.theta_for_eps(float(eps[i]))
            for end in self._nearest(self._upper, ti):  # the built ends, nearest tilt first
                v = float(end.delta(x)[0])
                out[i] = min(out[i], v)
                if end.floor_at(float(x[0])) <= _TILT_TRIGGER * max(v - self.p_law, 0.0):
                    ti = 0  # resolved by this end
                    break
            if ti == 0 or (cap is not None and out[i] <= cap[i]):
                continue
            new = self.upper(ti)
            if new is not None:
                out[i] = min(out[i], float(new.delta(x)[0]))
        return out

    def _upper_wants_tilt(self, base: UpperEnd, out: FloatArray) -> npt.NDArray[np.bool_]:
        """Where the untilted upper δ ``out`` is not resolved by ``base``: its FFT floor (and the cut
        tails) exceed ``_TILT_TRIGGER`` of its finite part."""
        fin = out - self.p_law
        return np.asarray(base.floor * math.exp(base.log_slack) + self.cut > _TILT_TRIGGER * np.maximum(fin, 0.0))

    def _lower_settled(self, base: LowerEnd, out: FloatArray) -> npt.NDArray[np.bool_]:
        """Where the untilted lower δ ``out`` is final: its finite part is ≥ its floor / ``_TILT_TRIGGER``."""
        floor = base.err_p + math.e * base.err_a + self.cut
        return np.asarray(out - self.p_inf_lo >= floor / _TILT_TRIGGER)

    def untilted(self, eps: FloatArray) -> tuple[FloatArray, npt.NDArray[np.bool_], FloatArray] | None:
        """(upper δ, resolved, ceiling) at ``eps`` read from the untilted ends alone. Where ``resolved``,
        :meth:`delta_upper` returns exactly this upper δ whatever the other direction gives (elsewhere
        at most it: a tilted end only lowers it). ``ceiling`` bounds any lower δ this direction
        certifies: the untilted lower δ where :meth:`delta_lower` keeps it, else the upper δ (a
        certified lower end is ≤ δ ≤ a certified upper end). ``None`` when an untilted end is missing.

        Cheap (no full-window vectors, no tilted FFT): a refinement pass that these values already show
        to miss its width target skips the tilted work (issue 27 item 7)."""
        up, lo = self.upper(0), self.lower(0)
        if up is None or lo is None:
            return None
        hi = up.delta(eps)
        low = lo.delta(eps)
        return hi, ~self._upper_wants_tilt(up, hi), np.where(self._lower_settled(lo, low), low, hi)

    @staticmethod
    def _nearest(ends: dict[int, _End | None], ti: int) -> list[_End]:
        """The tilted ends built so far (θ index > 0), nearest to θ index ``ti`` first."""
        return [e for t, e in sorted(ends.items(), key=lambda te: abs(te[0] - ti)) if t > 0 and e is not None]

    def _all_infinite(self) -> bool:
        return any(not np.any(np.isfinite(sp.log_masses)) for sp, _ in self.bulk.splits)

    def delta_lower(
        self, eps: FloatArray, hint: FloatArray | None = None, known: FloatArray | None = None
    ) -> FloatArray:
        """Certified lower δ(ε); where the untilted FFT floor matters, the tilts that suit ε and the
        δ level ``hint`` (an upper δ at ε, as ε(δ) would choose) are tried too.

        Shared as in :meth:`delta_upper`: points are visited deepest first and read every tilted
        lower end already built; new ends are built only where the best value so far is not within
        ``_TILT_TRIGGER`` (relative) of ``hint`` (without a hint, always, as before). ``known``: a
        certified lower δ of another direction at each ε; where ``hint`` ≤ ``known`` this direction
        cannot raise the caller's maximum, and no tilt is tried."""
        base = self.lower(0)
        if base is None:
            return np.full(eps.size, self.p_inf_lo)
        out = base.delta(eps)
        settled = self._lower_settled(base, out)
        order = sorted(range(eps.size), key=lambda j: -float(eps[j]))
        for i in order:
            if settled[i] or (known is not None and hint is not None and hint[i] <= known[i]):
                continue
            x = eps[i : i + 1]
            ti = self.theta_for_eps(float(eps[i]))
            near = hint is not None and 0 < hint[i] < 1
            for end in self._nearest(self._lower, ti):  # the built ends, nearest tilt first
                out[i] = max(out[i], float(end.delta(x)[0]))
                if near and hint is not None and out[i] - self.p_inf_lo >= (1.0 - _TILT_TRIGGER) * (hint[i] - self.p_inf_lo):
                    break
            else:
                near = False
            if near:
                continue  # within _TILT_TRIGGER of the upper δ: no new end
            tis = {ti}
            if hint is not None and 0 < hint[i] < 1:
                tis.add(self.theta_for_delta(float(hint[i])))
            for t in tis - {0}:
                built = self.lower(t)
                if built is not None:
                    out[i] = max(out[i], float(built.delta(x)[0]))
        return out

    def epsilon_upper(self, delta: float) -> float:
        """Least ε found (bisection) whose certified upper δ is ≤ ``delta``.

        The bisection reads δ at 31 points a call (:func:`optcomp._inverse_many.batched_bisection`); its
        answer is bit for bit that of a one-point bisection, since :meth:`UpperEnd.delta` is elementwise."""
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

        def passes(x: FloatArray) -> npt.NDArray[np.bool_]:
            return np.asarray(np.min([end.delta(x) for end in ends], axis=0) <= delta)

        def ok(e: float) -> bool:
            return bool(passes(np.array([e]))[0])

        if ok(0.0):
            return 0.0
        # out from past the grid's last loss by gaps g, 2g, 4g, … (x_n = 2x_{n−1} + 1 for g = x_0 + 1),
        # up to about 2^63·g; then the bisection from 0
        start = max(1.0, max(end.s_max() for end in ends) + 1.0)
        out = float_boundary(
            ok,
            name="epsilon",
            passing_above=True,
            fail=0.0,
            start=start,
            first_gap=start + 1.0,
            xtol=math.inf,
            highest=_EXPANSION_RANGE * (start + 1.0),
        )
        if out.passing is None:
            return math.inf
        # the bisection from 0, several levels per δ read (the same points and answer as one at a time)
        return batched_bisection(passes, 0.0, out.passing, xtol=EPSILON_XTOL)[1]

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
            # scan down from the upper end by gaps g, 2g, 4g, … < upper (the computed lower δ need not be
            # monotone far from the tilt's window, so a bisection from 0 could stop in the wrong place)
            gaps = accumulate(repeat(2.0), operator.mul, initial=max(upper * _SCAN_START, EPSILON_XTOL))
            down = list(takewhile(lambda g: g < upper, gaps))
            i = first_passing(lambda g: not ok(upper - g), down)
            lo = 0.0 if i is None else upper - down[i]
        if lo == 0.0:
            # out by x ↦ 2x + 1 (64 points at most), then _COARSE_BISECTIONS bisections
            x0 = upper if math.isfinite(upper) else max(end.s_max() for end in ends) + 1.0
            tries = list(accumulate(range(_EXPANSION_POINTS - 1), lambda x, _: 2 * x + 1.0, initial=x0))
            k = first_passing(ok, tries)
            if k is None:
                return tries[-1]
            lo = tries[k - 1] if k > 0 else 0.0
            lo = batched_bisection(
                lambda x: np.array([ok(float(v)) for v in x]), lo, tries[k], steps=_COARSE_BISECTIONS, levels=1
            )[0]
        target = widen_up(delta, 16) - widen_down(self.p_inf_lo, 16)
        best = lo
        for end in ends:
            best = max(best, end.root(lo, target))
        return best


def realise(
    laws: list[tuple[PrivacyLossLaw, int]],
    step: float,
    acc: Accuracy,
    spans: list[tuple[float, float]],
    full_spans: Callable[[], list[tuple[float, float]]],
    memo: Memo,
) -> Direction:
    """One direction of the relation (its laws with counts) realised on a grid of step ``step``.

    Args:
        laws: the direction's distinct laws and their counts.
        step: the grid step Δ.
        acc: the accuracy (tail mass of the windows, memory cap).
        spans: the bulk loss window of each law (tail mass ``tail_mass``/(8·count)).
        full_spans: the full windows (per-law tails down to ``PLD_LAW_TAIL``), computed on demand.
        memo: per-law vectors shared with the other direction (a symmetric law is one object).

    Raises:
        GridTooLargeError: the bulk vectors need more cells than ``acc.memory_cap`` allows.
    """
    bulk = _vectors(laws, step, acc, spans, memo)
    count = sum(k for _, k in laws)
    max_len = acc.memory_cap // (BYTES_PER_POINT + _KEPT_PER_POINT)
    return Direction(laws, bulk, full_spans, memo, acc, step, math.log(acc.tail_mass / 4), max_len, count)


_End = TypeVar("_End", UpperEnd, LowerEnd)


def upper_ends(dirs: tuple[Direction, ...], eps: FloatArray) -> list[FloatArray]:
    """``[d.delta_upper(eps, cap) for d in dirs]``, each direction capped by the ones before it.

    The caller takes the maximum over the directions; a direction's point already below another's
    certified upper δ needs no tilt (that maximum is unchanged: :meth:`Direction.delta_upper`). The
    direction with the larger Chernoff estimate K(θ) − θε at the deepest ε goes first, so that the
    other, typically far below it in the deep tail, is capped."""
    order = list(range(len(dirs)))
    if len(dirs) > 1 and eps.size and np.any(eps > 0):
        deep = float(np.max(eps))

        def chernoff(i: int) -> float:
            d = dirs[i]
            if d.upper(0) is None:
                return math.inf
            ti = d.theta_for_eps(deep)
            return d.cumulant(ti) - float(_THETAS[ti]) * deep

        order.sort(key=chernoff, reverse=True)
    out: list[FloatArray] = [np.empty(0)] * len(dirs)
    cap: FloatArray | None = None
    for i in order:
        out[i] = dirs[i].delta_upper(eps, cap)
        cap = out[i] if cap is None else np.maximum(cap, out[i])
    return out


def _log_sum_exp(a: FloatArray) -> float:
    """ln Σ e^{a} of a finite vector with the float operations of ``scipy.special.logsumexp`` (≥ 1.15:
    the maxima are taken out of the sum, ln(1 + rest/count) + ln count + max), so a tilt chosen from
    it is the one scipy's value chooses; without scipy's wrapper work. ``a`` is overwritten.

    Terms with a − max < −``_EXP_ZERO`` are exactly 0.0 after exp; where they are many (a steep tilt),
    they are written as zeros in place instead of computed (exp is slowest there), so the summed vector,
    and its sum, are the same bit for bit (issue 27 item 7)."""
    if a.size == 0:
        return -math.inf
    top = np.max(a, keepdims=True)
    at_top = a == top
    count = np.sum(at_top, keepdims=True, dtype=np.float64)
    a[at_top] = -np.inf
    np.subtract(a, top, out=a)
    live = a >= -_EXP_ZERO
    if np.count_nonzero(live) < _LIVE_SHARE * a.size:
        terms = np.zeros(a.size)
        np.exp(a, out=terms, where=live)
    else:
        terms = np.exp(a, out=a)
    rest = np.sum(terms, keepdims=True)
    rest = np.where(rest == 0, rest, rest / count)
    out = float((np.log1p(rest) + np.log(count) + top)[0])
    if not math.isfinite(out):  # pragma: no cover - finite input: scipy would fall back to ln Σ e^a
        return float(logsumexp(a))
    return out


def _guarded(ti: int, build: Callable[[], _End | None]) -> _End | None:
    """``build()``; a tilted end (θ index ``ti`` > 0) whose FFT would exceed the memory cap is
    ``None`` (the query keeps the untilted end), the untilted one raises."""
    try:
        return build()
    except GridTooLargeError:
        if ti == 0:
            raise
        return None


def _one_step(vecs: list[tuple[FloatArray, int]]) -> bool:
    """Whether the composition is a single step (its vector is the answer, no FFT)."""
    return len(vecs) == 1 and vecs[0][1] == 1


def _fold(
    vecs: list[tuple[FloatArray, int]],
    first: int,
    win: tuple[int, int, float] | None,
    *,
    keep_wrap: bool = True,
) -> Composed:
    """Πᵢ xᵢ^{*kᵢ} on ``win`` placed at grid index ``first`` (``win`` ``None``: one step, exact)."""
    if win is None:
        return Composed(vecs[0][0], first, 0.0, 0.0)
    c = compose(vecs, win)
    return Composed(c.values, first + c.first, c.fft_error, c.wrap if keep_wrap else 0.0)

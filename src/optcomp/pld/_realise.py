"""Realisation of one direction of the neighbouring relation at one grid step (``docs/pld.md``).

:func:`realise` turns the laws of a composition, a grid step and the per-law loss windows into a
:class:`Direction`: the split (dominating, upper end) and quantised-outcome (dominated, lower end)
vectors of every part, and, per exponential tilt θ, the composed ends built on first use
(:mod:`._cells` → :mod:`._dominating`/:mod:`._dominated` → :mod:`._fft` → :mod:`._query`).
A ``Direction`` is frozen: its fields never change; the composed ends it builds are memoised in
private caches (a value of the laws, the step and the accuracy).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from optcomp._numerics import Accuracy, FloatArray
from optcomp._rounding import rounding_error
from optcomp.mechanisms import PrivacyLossLaw
from optcomp.pld._blocks import BLOCK_MIN_COUNT, Shape, blocked, fits_refined, lower_blocks, upper_blocks
from optcomp.pld._cells import GridTooLargeError
from optcomp.pld._fft import BYTES_PER_POINT, Composed, compose
from optcomp.pld._fft import window as fft_window
from optcomp.pld._query import LowerEnd, UpperEnd, tilt
from optcomp.pld._roots import atoms_upper, lower_root, refuse_at_infinite_mass, upper_root
from optcomp.pld._windows import Memo, Vectors, Windows

#: Tilts θ (per unit of loss) the deep-tail queries choose from (0 = untilted).
_THETAS = np.concatenate([[0.0], 2.0 ** (np.arange(-7 * 16, 13 * 16 + 1) / 16)])
#: A bound is re-read through a tilted composition when its FFT error floor exceeds this fraction of it.
_TILT_TRIGGER = 1e-4
#: A tilted end is built at the mildest tilt whose predicted floor is ≤ this share of relative_width·δ
#: (for ε(δ), of relative_width·θε·δ: a relative δ error r moves ε by ≈ r/(θε) relative): the floor
#: then adds ≤ 2 % of the width target to a bracket (``docs/pld.md`` §6).
_TILT_AIM = 0.02
#: A mild tilt is chosen for this share of the allowed floor: the prediction reads ε₀ (the untilted
#: answer, not the final one) and the untilted end's floor (a tilted window may be longer).
_PREDICTION_MARGIN = 8.0
#: Relative tolerance of the untilted ε answer that places a mild tilt's prediction (e^{θ·1e-6·ε} ≈ 1).
_NEAR_XTOL = 1e-6
#: Exponent cap of a predicted floor's scale (e^{700} is finite).
_EXP_MAX = 700.0
#: Composed vectors of one realisation that stay in memory per FFT point (bytes), on top of the work.
_KEPT_PER_POINT = 96


@dataclass(frozen=True, eq=False)
class Direction:
    """One direction of the neighbouring relation at one grid step: split and quantised vectors of
    every part, and (lazily, per tilt θ and window level) the composed upper and lower ends.

    The untilted ends use the *bulk* windows (level 0: each per-step tail beyond P-mass
    tail_mass/(8·count) moves to +∞ / onto the first point for the upper end, and is dropped for the
    lower end); a tilted end, which reads the deep tail, uses the narrowest window level whose cut is
    negligible at the δ it resolves (:meth:`Windows.level_for`, ``docs/pld.md`` §4), built on first use.
    """

    win: Windows
    acc: Accuracy
    step: float
    log_tau: float
    max_len: int
    count: int
    #: whether a large-count untilted end may go through two levels (:mod:`._blocks`; ε(δ) queries only)
    blocks: bool = True
    # memoised on first use (never rebound): the ends per (tilt index, window level)
    _upper: dict[tuple[int, int], UpperEnd | None] = field(default_factory=dict)
    _lower: dict[tuple[int, int], LowerEnd | None] = field(default_factory=dict)

    @property
    def bulk(self) -> Vectors:
        return self.win.at(0)

    @property
    def p_inf_hi(self) -> float:
        return self.bulk.p_inf_hi

    @property
    def p_law(self) -> float:
        """P(some step at +∞) from the laws alone (an estimate, used to decide on tilts only)."""
        return self.win.p_law

    @property
    def cut(self) -> float:
        """The P-mass the bulk windows moved to +∞ or dropped (what only deeper windows resolve)."""
        return self.win.cut(0)

    @property
    def p_inf_lo(self) -> float:
        return self.bulk.p_inf_lo

    def full(self) -> Vectors:
        """The vectors on the full windows (per-step tails down to ``PLD_LAW_TAIL``)."""
        return self.win.at(self.win.full)

    # -- tilt ---------------------------------------------------------------------------------------
    def cumulant(self, ti: int, level: int) -> float:
        """K(θ) of the split vectors of window ``level`` at θ = ``_THETAS[ti]`` (:meth:`Windows.cumulant`)."""
        return self.win.cumulant(level, float(_THETAS[ti]))

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

    def theta_for_eps(self, eps: float, level: int) -> int:
        """The tilt minimising the Chernoff bound K(θ) − θε at ε (the saddle point, on the grid), K
        that of window ``level`` (any tilt is certified: the level's K only decides tightness)."""
        return self._argmin(lambda i: self.cumulant(i, level) - float(_THETAS[i]) * eps)

    def theta_for_delta(self, delta: float, level: int) -> int:
        """The tilt minimising the Chernoff ε bound (K(θ) − ln δ)/θ for δ (δ = 0: the smallest double).

        The tilt only decides tightness (every tilt gives a certified end), so δ = 0 may pick the
        deepest one."""
        ld = math.log(max(delta, math.ulp(0.0)))
        return self._argmin(lambda i: (self.cumulant(i, level) - ld) / float(_THETAS[i]))

    def _cheapest(self, ti: int, eps: float, allowed: float, level: int, floor: float) -> int:
        """The smallest tilt index in 1 … ``ti`` whose predicted floor at ε, ``floor``·e^{K(θ) − θε}
        (``floor`` an end's FFT floor in units of its scale), is ≤ ``allowed``; ``ti`` if none is.

        Every tilt reads the same δ up to its floor (each end is certified, ``docs/pld.md`` §6), but
        the FFT window grows with θ — a heavy right tail tilted by e^{θℓ} spreads the composition —
        so the mildest tilt that resolves δ is the cheapest (DP-SGD σ = 0.89, q = 10⁻⁴, T = 10⁵ at
        ε = 0.244: θ = 11.8 on 655,360 points against the saddle's θ = 32 on 4,251,528). K(θ) − θε
        is convex in θ, so the tilts that pass form an interval; ``ti`` passing, ``bisect`` finds its
        start (an optimisation: any tilt is certified)."""
        if not (0 < allowed < math.inf and 0 < floor < math.inf):
            return ti
        aim = math.log(allowed) - math.log(floor)

        def passes(j: int) -> bool:
            return self.cumulant(j, level) - float(_THETAS[j]) * eps <= aim

        if not passes(ti):
            return ti
        return 1 + bisect.bisect_left(range(1, ti + 1), True, key=passes)

    def _share(self) -> float:
        """The relative δ error a tilted end's floor may add (``_TILT_AIM``·relative_width)."""
        return _TILT_AIM * self.acc.relative_width

    def _resolves(self, end: UpperEnd | LowerEnd | None, ti: int, level: int, eps: float, allowed: float) -> bool:
        """Whether ``end`` (tilt index ``ti``) reads δ at ε with a floor (its unit floor times its scale
        e^{K(θ) − θε}) ≤ ``allowed``."""
        scale = self.cumulant(ti, level) - float(_THETAS[ti]) * eps
        return end is not None and _floor(end) * math.exp(min(scale, _EXP_MAX)) <= allowed

    def _tilted_root(self, build: Callable[[int, int], _End | None], root: Callable[[list[_End]], float],
                     base: _End, fin: float, ti: int, level: int, near: float) -> float:
        """``root`` of the ends ``base`` and a tilted end: the mildest tilt predicted to resolve a δ of
        finite part ``fin`` at ε ≈ ``near`` within 1/``_PREDICTION_MARGIN`` of the allowed floor
        (:meth:`_cheapest`), and, where its floor at the answer misses the allowed one, the tilt
        ``ti`` (the Chernoff-optimal one) too. Every end is certified: the root
        of any set of ends is a certified ε end."""
        allowed = self._share() * max(1.0, float(_THETAS[ti]) * near) * fin
        aim = allowed / _PREDICTION_MARGIN
        tc = self._cheapest(ti, near, aim, level, _floor(base)) if 0 < near < math.inf else ti
        ends: list[_End] = [base]
        mild = build(tc, level)
        if mild is not None:
            ends.append(mild)
        out = root(ends)
        if tc == ti or (0 < out < math.inf and self._resolves(mild, tc, level, out, allowed)):
            return out
        saddle = build(ti, level)
        if saddle is None:
            return out
        ends.append(saddle)
        return root(ends)

    def _estimate(self, eps: float, bound: float) -> float:
        """An estimate of δ's finite part at ε (to choose a window level only): the smaller of the
        certified upper δ ``bound``'s and the bulk windows' Chernoff bound e^{K(θ) − θε}."""
        ti = self.theta_for_eps(eps, 0)
        chernoff = math.exp(min(0.0, self.cumulant(ti, 0) - float(_THETAS[ti]) * eps))
        return min(bound - self.p_law, chernoff)

    # -- ends -----------------------------------------------------------------------------------------
    def upper(self, ti: int, level: int = 0) -> UpperEnd | None:
        """The upper end tilted by θ = ``_THETAS[ti]`` on window ``level`` (0 when untilted)."""
        key = (ti, level if ti else 0)
        if key not in self._upper:
            th = float(_THETAS[ti])
            vs = self.win.at(key[1])
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

            self._upper[key] = _guarded(ti, build)
        return self._upper[key]

    def lower(self, ti: int, level: int = 0) -> LowerEnd | None:
        """The lower end tilted by θ = ``_THETAS[ti]`` on window ``level`` (0 when untilted)."""
        key = (ti, level if ti else 0)
        if key not in self._lower:
            th = float(_THETAS[ti])
            vs = self.win.at(key[1])
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

            self._lower[key] = _guarded(ti, build)
        return self._lower[key]

    def _shape(self, vecs: list[tuple[FloatArray, int]]) -> Shape | None:
        """The two-level shape of an untilted end (:func:`._blocks.blocked`; ``None``: one level)."""
        if not self.blocks or len(vecs) != 1 or vecs[0][1] < BLOCK_MIN_COUNT:
            return None
        # the full windows' cells only enter a memory test: an upper bound that passes it decides it
        # as the windows themselves would (they are computed only when it fails)
        full = max(b - a for a, b in self.win.span_bounds(self.win.full)) / self.step
        if not fits_refined(full, self.acc.memory_cap):
            full = max(b - a for a, b in self.win.spans(self.win.full)) / self.step
        return blocked(vecs, self.acc.memory_cap, full, self.step)

    def delta_upper(self, eps: FloatArray, cap: FloatArray | None = None) -> FloatArray:
        """Certified upper δ(ε); where the untilted FFT floor matters, tilted ends are read too.

        The tilted ends are shared across the points (issue 27 item 7): points are visited deepest
        first, each reads every tilted end this call has built, and a new end (at the point's saddle tilt)
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
        least = 0  # the deepest window level a point has used: shallower points use it too (shared ends)
        seen: set[tuple[int, int]] = set()  # the ends this call built or asked for (see _nearest)
        for i in sorted(np.flatnonzero(need).tolist(), key=lambda j: -float(eps[j])):
            c = None if cap is None else float(cap[i])
            out[i], least = self._upper_tilted(float(eps[i]), float(out[i]), c, least, seen)
        return out

    def _upper_tilted(
        self, e: float, v: float, cap: float | None, least: int, seen: set[tuple[int, int]]
    ) -> tuple[float, int]:
        """The upper δ ``v`` at ε = ``e`` lowered by tilted ends: the built ones, nearest tilt first,
        until one resolves it (its floor at ε ≤ ``_TILT_TRIGGER`` of its value's finite part f, and
        its window level serves f: :meth:`Windows.serves`); else a new end at the saddle tilt on the
        level the estimated δ asks for (:meth:`Windows.level_for`) or ``least`` if deeper, and again
        one level deeper when its value asks for one (each level's end is certified; the minimum is
        taken). Returns (the upper δ, the level used)."""
        x = np.array([e])
        level = least if least == self.win.full else max(least, self.win.level_for(self._estimate(e, v)))
        while True:
            ti = self.theta_for_eps(e, level)
            for (_, lv), end in self._nearest(self._upper, ti, seen):
                w = float(end.delta(x)[0])
                v = min(v, w)
                fin = max(w - self.p_law, 0.0)
                if end.floor_at(e) <= _TILT_TRIGGER * fin and self.win.serves(lv, fin):
                    return v, level  # resolved by this end
            if cap is not None and v <= cap:
                return v, level
            new = self.upper(ti, level)
            seen.add((ti, level))
            if new is not None:
                v = min(v, float(new.delta(x)[0]))
            deeper = self.win.level_for(v - self.p_law)
            if deeper <= level:
                return v, level
            level = deeper

    def _upper_wants_tilt(self, base: UpperEnd, out: FloatArray) -> npt.NDArray[np.bool_]:
        """Where the untilted upper δ ``out`` is not resolved by ``base``: its FFT floor (and the cut
        tails) exceed ``_TILT_TRIGGER`` of its finite part."""
        fin = out - self.p_law
        return np.asarray(base.unit_floor + self.cut > _TILT_TRIGGER * np.maximum(fin, 0.0))

    def _lower_settled(self, base: LowerEnd, out: FloatArray) -> npt.NDArray[np.bool_]:
        """Where the untilted lower δ ``out`` is final: its finite part is ≥ its floor / ``_TILT_TRIGGER``."""
        return np.asarray(out - self.p_inf_lo >= (base.unit_floor + self.cut) / _TILT_TRIGGER)

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
    def _nearest(
        ends: dict[tuple[int, int], _End | None], ti: int, seen: set[tuple[int, int]]
    ) -> list[tuple[tuple[int, int], _End]]:
        """The tilted ends (θ index > 0) this call has built or asked for (``seen``: an end cached by an
        earlier query is read only when this call asks for it too, where the cached end is the one it
        would build, so an answer never depends on the queries before it), with their keys (θ index,
        level), nearest to θ index ``ti`` first (then the shallower level first)."""
        built = [(k, e) for k, e in ends.items() if k[0] > 0 and e is not None and k in seen]
        return sorted(built, key=lambda ke: (abs(ke[0][0] - ti), ke[0][1]))

    def _all_infinite(self) -> bool:
        return any(not np.any(np.isfinite(sp.log_masses)) for sp, _ in self.bulk.splits)

    def delta_lower(
        self, eps: FloatArray, hint: FloatArray | None = None, known: FloatArray | None = None
    ) -> FloatArray:
        """Certified lower δ(ε); where the untilted FFT floor matters, the tilts that suit ε and the
        δ level ``hint`` (an upper δ at ε, as ε(δ) would choose) are tried too.

        Shared as in :meth:`delta_upper`: points are visited deepest first and read every tilted
        lower end this call has built; new ends are built only where the best value so far is not within
        ``_TILT_TRIGGER`` (relative) of ``hint`` (without a hint, always, as before). ``known``: a
        certified lower δ of another direction at each ε; where ``hint`` ≤ ``known`` this direction
        cannot raise the caller's maximum, and no tilt is tried."""
        base = self.lower(0)
        if base is None:
            return np.full(eps.size, self.p_inf_lo)
        out = base.delta(eps)
        settled = self._lower_settled(base, out)
        order = sorted(range(eps.size), key=lambda j: -float(eps[j]))
        least = 0  # the deepest window level a point has used: shallower points use it too (shared ends)
        seen: set[tuple[int, int]] = set()  # the ends this call built or asked for (see _nearest)
        for i in order:
            if settled[i] or (known is not None and hint is not None and hint[i] <= known[i]):
                continue
            x = eps[i : i + 1]
            near = hint is not None and 0 < hint[i] < 1
            if least < self.win.full:
                est = self._estimate(float(eps[i]), float(hint[i]) if hint is not None else 1.0)
                least = max(least, self.win.level_for(est))
            level = least
            ti = self.theta_for_eps(float(eps[i]), level)
            for _, end in self._nearest(self._lower, ti, seen):  # this call's ends, nearest tilt first
                out[i] = max(out[i], float(end.delta(x)[0]))
                if near and hint is not None and out[i] - self.p_inf_lo >= (1.0 - _TILT_TRIGGER) * (hint[i] - self.p_inf_lo):
                    break
            else:
                near = False
            if near:
                continue  # within _TILT_TRIGGER of the upper δ: no new end
            tis = {ti}
            if hint is not None and 0 < hint[i] < 1:
                tis.add(self.theta_for_delta(float(hint[i]), level))
            for t in tis - {0}:
                built = self.lower(t, level)
                seen.add((t, level))
                if built is not None:
                    out[i] = max(out[i], float(built.delta(x)[0]))
        return out

    def epsilon_upper(self, delta: float) -> float:
        """Least ε found (bisection) whose certified upper δ is ≤ ``delta``, to ``EPSILON_XTOL``.

        The bisection reads δ at about 45 points a call, clustered where the interpolated δ crosses
        ``delta`` (:func:`optcomp._inverse_many.zoomed_bisection`: 3–4 calls where the plain bisection
        took 9); the ε returned is a point whose upper δ was read ≤ ``delta``, or the atoms' own end
        (:func:`._roots.atoms_upper`) where that is lower."""
        cap = atoms_upper(self.win.laws, delta)
        if math.isinf(cap):
            refuse_at_infinite_mass(self.win.laws, delta)
        if self.p_law >= delta:
            return cap
        base = self.upper(0)
        if base is None:
            return cap
        if base.unit_floor + self.cut <= _TILT_TRIGGER * (delta - self.p_law):
            return min(upper_root([base], delta), cap)
        level = self.win.level_for(delta - self.p_law)
        near = upper_root([base], delta, _NEAR_XTOL)  # the untilted answer: where the tilted ends are read

        def root(ends: list[UpperEnd]) -> float:
            return upper_root(ends, delta)

        return min(cap, self._tilted_root(self.upper, root, base, delta - self.p_law,
                                          self.theta_for_delta(delta, level), level, near))

    def epsilon_lower(self, delta: float, upper: float) -> float:
        """Largest ε found (bisection) whose certified lower δ exceeds ``delta`` (0 if none)."""
        if self.p_inf_lo > delta:
            return math.inf
        base = self.lower(0)
        if base is None:
            return 0.0

        def root(ends: list[LowerEnd]) -> float:
            return lower_root(ends, delta, upper, self.p_inf_lo, self.acc.relative_width)

        if base.unit_floor + self.cut <= _TILT_TRIGGER * (delta - self.p_inf_lo):
            return root([base])
        level = self.win.level_for(delta - self.p_law)
        ti = self.theta_for_delta(delta, level)
        return self._tilted_root(self.lower, root, base, delta - self.p_inf_lo, ti, level, upper)


def realise(
    laws: list[tuple[PrivacyLossLaw, int]],
    step: float,
    acc: Accuracy,
    spans: Callable[[int], list[tuple[float, float]]],
    tails: list[float],
    memo: Memo,
    blocks: bool = True,
) -> Direction:
    """One direction of the relation (its laws with counts) realised on a grid of step ``step``.

    Args:
        laws: the direction's distinct laws and their counts.
        step: the grid step Δ.
        acc: the accuracy (tail mass of the windows, memory cap).
        spans: the loss window of each law at a window level (0: bulk, tail mass ``tail_mass``/(8·count);
            the last: full, per-law tails down to ``PLD_LAW_TAIL``), computed on demand.
        tails: the per-step ln tail mass of each level (:func:`optcomp.pld._windows.log_tails`).
        memo: per-law vectors shared with the other direction (a symmetric law is one object).
        blocks: whether large-count untilted ends may be composed in two levels (``docs/pld.md`` §5a).

    Raises:
        GridTooLargeError: the bulk vectors need more cells than ``acc.memory_cap`` allows.
    """
    win = Windows(laws, step, acc, spans, memo, tails)
    win.at(0)
    count = sum(k for _, k in laws)
    max_len = acc.memory_cap // (BYTES_PER_POINT + _KEPT_PER_POINT)
    return Direction(win, acc, step, math.log(acc.tail_mass / 4), max_len, count, blocks)


_End = TypeVar("_End", UpperEnd, LowerEnd)


def upper_ends(dirs: Sequence[Direction], eps: FloatArray) -> list[FloatArray]:
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
            ti = d.theta_for_eps(deep, 0)
            return d.cumulant(ti, 0) - float(_THETAS[ti]) * deep

        order.sort(key=chernoff, reverse=True)
    out: list[FloatArray] = [np.empty(0)] * len(dirs)
    cap: FloatArray | None = None
    for i in order:
        out[i] = dirs[i].delta_upper(eps, cap)
        cap = out[i] if cap is None else np.maximum(cap, out[i])
    return out


def _floor(end: UpperEnd | LowerEnd | None) -> float:
    """An end's FFT floor in units of its scale; 0 for a missing end."""
    return 0.0 if end is None else end.unit_floor


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

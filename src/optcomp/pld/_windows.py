"""Per-step loss windows of one direction at several depths, and the vectors realised on each
(``docs/pld.md`` §4).

A *level* is a per-step tail mass: level 0 is the *bulk* window (P-tail tail_mass/(8k) per law, the
untilted ends'), the last level the *full* window (``PLD_LAW_TAIL``/(4k)), and in between the tail
falls by ``LADDER_DECADES`` decades per level. Every level gives certified ends: the split moves the
P-mass beyond the window to +∞ (the upper δ gains at most the level's *cut*, Lemma 3(ii)) and the
quantised pair sends it to ⊥ (the lower δ loses at most the cut, Lemma 2). So a tilted end reading a
δ whose finite part is f needs only the narrowest level whose cut is ≤ ``CUT_SHARE``·(relative width)·f
(:meth:`Windows.level_for`): its bracket is the full window's to within that share of f. Levels are
realised on first use and kept, with their tilt-search cumulants (:meth:`Windows.cumulant`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy.special import logsumexp

from optcomp._numerics import PLD_LAW_TAIL, Accuracy, FloatArray
from optcomp._rounding import widen_down, widen_up
from optcomp.mechanisms import PrivacyLossLaw
from optcomp.pld._cells import BYTES_KEPT_PER_CELL, BYTES_PER_CELL, GridTooLargeError, cells, window
from optcomp.pld._dominated import Quantised, quantise
from optcomp.pld._dominating import Split, split

#: Decades the per-step tail mass falls from one window level to the next (bulk → full).
LADDER_DECADES = 10.0
#: A level serves a δ whose finite part is f when its cut (and nominal cut) is ≤ CUT_SHARE·relative_width·f:
#: the δ read moves by at most ≈ twice that share of f, an ε read at it by ≈ 2·CUT_SHARE·relative_width/(θε)
#: relative (θ the tilt, θε ≳ 1 in the tail): ≈ 2 % of the width target (``docs/pld.md`` §4).
CUT_SHARE = 1e-2
#: Share of live (not underflowing) terms below which :func:`_log_sum_exp` skips the exp of the others.
_LIVE_SHARE = 0.9
#: −x beyond which exp(x) is exactly 0.0 (it is below −745.14), with room for exp's own error.
_EXP_ZERO = 760.0


@dataclass
class Vectors:
    """Split and quantised vectors of every part on one set of per-step windows, and the envelopes
    of P(some step at +∞) they imply (the split's includes the mass its windows moved there)."""

    splits: list[tuple[Split, int]]
    quants: list[tuple[Quantised, int]]
    p_inf_hi: float
    p_inf_lo: float


#: Per-law vectors of one grid step, shared by the two directions (a symmetric mechanism's law is the
#: same object in both): key (id(law), span).
Memo = dict[tuple[int, tuple[float, float]], tuple[Split, Quantised]]


def vectors(
    laws: list[tuple[PrivacyLossLaw, int]],
    step: float,
    acc: Accuracy,
    spans: list[tuple[float, float]],
    memo: Memo | None = None,
) -> Vectors:
    """The split and quantised vectors of every law on its window ``spans`` at grid step ``step``.

    Raises:
        GridTooLargeError: the windows need more cells than ``acc.memory_cap`` allows.
    """
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
    return Vectors(splits, quants, p_hi, p_lo)


def log_tails(tail_mass: float, count: int) -> list[float]:
    """ln of the per-step tail mass of each level: bulk, then ``LADDER_DECADES`` decades deeper per
    level, then full (just bulk and full when the full window is not the deeper one)."""
    bulk = math.log(tail_mass) - math.log(8.0 * count)
    full = math.log(PLD_LAW_TAIL) - math.log(4.0 * count)
    rung = LADDER_DECADES * math.log(10.0)
    out = [bulk]
    while out[-1] - rung > full:
        out.append(out[-1] - rung)
    return [*out, full]


@dataclass(eq=False)
class Windows:
    """The vectors of one direction's laws at each window level (realised on first use, kept).

    ``spans(level)`` gives the laws' windows at a level (cached by the caller); ``tails`` the
    per-step ln tail mass of each level (:func:`log_tails`)."""

    laws: list[tuple[PrivacyLossLaw, int]]
    step: float
    acc: Accuracy
    spans: Callable[[int], list[tuple[float, float]]]
    memo: Memo
    tails: list[float]
    _vecs: dict[int, Vectors] = field(default_factory=dict)
    _terms: dict[int, list[tuple[FloatArray, FloatArray, int]]] = field(default_factory=dict)
    _cumulant: dict[tuple[int, float], float] = field(default_factory=dict)
    _bounds: dict[int, list[tuple[float, float]]] = field(default_factory=dict)

    @property
    def count(self) -> int:
        return sum(k for _, k in self.laws)

    @property
    def p_law(self) -> float:
        """P(some step at +∞) from the laws alone (an estimate, used to choose tilts and levels only)."""
        log_fin = sum(k * (math.log1p(-law.p_inf) if law.p_inf < 1 else -math.inf) for law, k in self.laws)
        return -math.expm1(log_fin) if log_fin > -math.inf else 1.0

    @property
    def full(self) -> int:
        """The deepest level (the full windows)."""
        return len(self.tails) - 1

    def at(self, level: int) -> Vectors:
        if level not in self._vecs:
            self._vecs[level] = vectors(self.laws, self.step, self.acc, self.spans(level), self.memo)
        return self._vecs[level]

    def span_bounds(self, level: int) -> list[tuple[float, float]]:
        """Intervals containing the laws' windows at a level (``spans(level)``), from the tail searches'
        doubling points only (:func:`._cells.window` unrefined): for size checks that an upper bound on
        the span decides (the full level's, far cheaper than the windows themselves)."""
        if level not in self._bounds:
            self._bounds[level] = [window(law, self.tails[level], refine=False) for law, _ in self.laws]
        return self._bounds[level]

    def cut(self, level: int) -> float:
        """The P-mass the level's windows moved to +∞ or dropped (what deeper levels resolve)."""
        return max(0.0, self.at(level).p_inf_hi - self.p_law)

    def serves(self, level: int, fin: float) -> bool:
        """Whether ``level`` passes :meth:`level_for`'s test at ``fin`` (or is the full level)."""
        share = CUT_SHARE * self.acc.relative_width * max(fin, 0.0)
        return level == self.full or (2.0 * self.count * math.exp(self.tails[level]) <= share and self.cut(level) <= share)

    def level_for(self, fin: float) -> int:
        """The narrowest level whose nominal cut 2k·e^{tail} (both tails of every step) and realised cut
        are ≤ ``CUT_SHARE``·relative_width·``fin`` (the full one if none); a level failing the nominal
        test is not realised."""
        share = CUT_SHARE * self.acc.relative_width * max(fin, 0.0)
        for level, lt in enumerate(self.tails[:-1]):
            if 2.0 * self.count * math.exp(lt) <= share and self.cut(level) <= share:
                return level
        return self.full

    def cumulant(self, level: int, theta: float) -> float:
        """K(θ) = Σ k ln Σ_c x_c e^{θ cΔ} of the level's split vectors.

        Only chooses tilts (every tilt gives a certified end): the value is scipy's ``logsumexp`` of
        each split's finite log-masses + θ·loss, computed by :func:`_log_sum_exp` with the same float
        operations on arrays gathered once per level (issue 27 item 7)."""
        if (level, theta) not in self._cumulant:
            out = 0.0
            for lm, c, k in self._support(level):
                a = np.multiply(c, theta)  # lm + θc, in one buffer (the same float operations)
                out += k * _log_sum_exp(np.add(a, lm, out=a))
            self._cumulant[(level, theta)] = out
        return self._cumulant[(level, theta)]

    def _support(self, level: int) -> list[tuple[FloatArray, FloatArray, int]]:
        """(finite log-masses, their losses cΔ, count) of each split vector of a level, gathered once."""
        if level not in self._terms:
            terms = []
            for sp, k in self.at(level).splits:
                pos = np.isfinite(sp.log_masses)
                c = np.asarray((sp.first + np.flatnonzero(pos)) * self.step, dtype=np.float64)
                terms.append((sp.log_masses[pos], c, k))
            self._terms[level] = terms
        return self._terms[level]


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

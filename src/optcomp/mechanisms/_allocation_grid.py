"""The law of one balls-in-bins epoch by certified repeated convolution on geometric grids.

One epoch of t steps with one allocated step per record is, by ``docs/samplers.md`` Lemma A, the pair
(P_t, Q_t) with likelihood ratio S/t, S = Σᵢ Xᵢ a sum of t i.i.d. lognormal factors Xᵢ = e^{ℓᵢ},
ℓᵢ ~ N(−μ²/2, μ²) under Q (μ = 1/σ). This module builds the Q-law of S on the grid x_j = t·e^{jh}
(h dyadic), so that an atom at x_j has privacy loss exactly jh, in two ways:

* **upper** (Lemma C, ``docs/samplers.md``): every factor, and every sum of two partial sums, is split
  onto the two grid points around it *preserving the mean*. Then E[S′ | output] = S and the pair
  ((s/t)·Q′, Q′) dominates (P_t, Q_t) in both directions. Only upper envelopes of the Q-masses are
  carried (δ is increasing in every mass at a fixed loss). Tails: factors above ℓ_max are revealed
  (singular atoms, bounded by union bounds), atoms of a partial sum above the trimming threshold are
  revealed too (P-mass ≤ Σ q_k·(x_k + t − m)/t, m the factors in the partial), factors below ℓ_min
  and partial sums below the threshold are split onto {0, x_cut} (mean-preserving; S = 0 has loss −∞).
* **lower** (Lemma D, :mod:`optcomp.mechanisms._allocation_lower`): labels instead of splits.

**A grid per stage** (:func:`stage_step`). The t-fold sum is built by binary powering; a stage whose
partial sum holds m factors works on the grid step h_m = h·2^e, e = ⌊log₂(ALLOCATION_STAGE_SPREAD·√(t/m))⌋
(at least 0, at most ALLOCATION_STAGE_LEVELS), so the first stages, whose laws are widest, run on
coarser grids, and the last ones on h itself. Lemma C asks only that each split preserve the mean, on
any grid: a partial sum on h_m is a grid point of every finer dyadic grid (x_i on h_m is x_{2i} on
h_m/2), so a stage takes its inputs onto the finer input grid exactly, and splits each sum onto its
two neighbours on its own, finer or equal, output grid. The split adds to the final S/t a variance of
about (m/t)·h_m²/6 per stage (the stage's law appears t/m times in the sum, each split adds
(m·h_m)²/6): the coarser early grids add about as much as each late stage, while their cells, the
bulk of the work, shrink by up to 2^{2·levels}. The refinement on h (the width it measures) covers
the rest: soundness never depends on the schedule.

**Rounding.** The split weights w(d) of a sum x_j + x_{j−d} (input grid h_in, output grid h_out) are
tabulated once per (h_in, h_out) (float, with their error bound added outwards; the cell offset f(d)
is decided in 40-digit mpmath where the float value is near a tie: a wrong offset would make a weight
negative). Every stage is a sum of non-negative terms (direct convolutions by ``numpy.convolve``, no
FFT; the far field d ≥ D_far by dyadic block prefixes; the terms summed pairwise by
:class:`._allocation_sums.Accumulator`), so its float result is within γ_M relative of the exact sum of
the same inputs (Higham Lemma 3.1 along each term's path, M its depth: the longest group's convolution,
one product, the accumulator's depth — about ln 2/h, no longer the tens of thousands of terms summed one
after another, which compounded over an epoch to a relative error that no finer grid removed), plus an
absolute underflow term per operation; results are widened by that. The single subtraction of the far field's lower weight 1 − w(d) ≥ 1/2 is
bounded explicitly. A weight's absolute error (≤ 16u·(e^{−dh_in} + expm1((f+1)h_out))/(e^{fh_out}·expm1(h_out)))
only ever adds mass: w_hi + (1 − w)_hi ≥ 1. Factor cells come from :mod:`._allocation_cells` (Gauss–
Legendre integrals with a certified relative error per cell, no differences of CDFs).
"""

from __future__ import annotations

import bisect
import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar

import mpmath
import numpy as np

try:  # numpy.convolve's kernel (numpy ≥ 2; numpy 1.x below): numpy.convolve(a, v) is correlate(a, v[::-1], 2)
    from numpy._core.multiarray import correlate as _correlate
except ImportError:  # pragma: no cover
    from numpy.core.multiarray import correlate as _correlate  # type: ignore[no-redef]

from optcomp._numerics import ALLOCATION_TAIL, SMALLEST_SUBNORMAL, FloatArray, GridTooLargeError
from optcomp._rounding import next_up, rounding_error, widen_down, widen_up
from optcomp.mechanisms._allocation_cells import factor_cells, flag_masses, window
from optcomp.mechanisms._allocation_sums import Accumulator, BlockSums, operations
from optcomp.mechanisms._law import PrivacyLossLaw

#: Decimal digits of the mpmath tie decisions.
_DIGITS = 40
#: Largest work (multiply-adds and element operations, :func:`count_work`) of one epoch law, all stages
#: (some tens of seconds): beyond it a grid is refused (``GridTooLargeError``), never coarsened silently.
MAX_WORK = 4e10
#: Roundings charged per term beyond the counted ones (products with tabulated weights, exp tables).
_TERM_ROUNDINGS = 8
#: Stage grids: h_m = h·2^e with e = ⌊log₂(ALLOCATION_STAGE_SPREAD·√(t/m))⌋ clipped to [0, STAGE_LEVELS].
ALLOCATION_STAGE_SPREAD = 0.5
#: The most the first stages' grid is coarser than the epoch's: 2^ALLOCATION_STAGE_LEVELS.
ALLOCATION_STAGE_LEVELS = 12


def stage_step(h: float, t: int, m: int) -> float:
    """The grid step of a stage whose output holds ``m`` of the epoch's ``t`` factors (module docstring)."""
    e = math.floor(math.log2(max(ALLOCATION_STAGE_SPREAD * math.sqrt(t / m), 1.0)))
    return h * 2.0 ** min(e, ALLOCATION_STAGE_LEVELS)


@dataclass(frozen=True)
class Weights:
    """Split tables of one (input grid step, output grid step) pair, all rounded outwards.

    Attributes:
        h_in, h_out: the grid steps; ``ratio`` = h_in/h_out (a power of two ≥ 1).
        groups: (f, d0, d1): the differences d in [d0, d1) whose sum x_j(1 + e^{−d·h_in}) lies in
            [y_{r·j+f}, y_{r·j+f+1}) on the output grid y; together they cover 0 ≤ d < min(far, reach).
        w_hi, om_hi: upper ends of the weight w(d) to y_{rj+f+1} and of 1 − w(d) to y_{rj+f}.
        e_lo, e_hi: envelopes of e^{−d·h_in}, d < far.
        ef_lo, ef_hi: envelopes of e^{−f·h_out}, f ≤ groups[0].f.
        far: D_far, the first d with w(d) ≤ 1/2 and f(d) = 0 (all larger d too).
        expm1_lo: a lower end of e^{h_out} − 1.
    """

    h_in: float
    h_out: float
    ratio: int
    groups: tuple[tuple[int, int, int], ...]
    w_hi: FloatArray
    om_hi: FloatArray
    e_lo: FloatArray
    e_hi: FloatArray
    ef_lo: FloatArray
    ef_hi: FloatArray
    far: int
    expm1_lo: float
    starts: tuple[int, ...] = ()
    ends: tuple[int, ...] = ()


#: A computed f(d) = ln(1 + e^{−d·h_in})/h_out this close to an integer is decided in mpmath instead.
_TIE_MARGIN = 1e-6


def _exact_f(d: int, h_in: float, h_out: float) -> int:
    """⌊ln(1 + e^{−d·h_in})/h_out⌋ in 40-digit arithmetic (the float value was within _TIE_MARGIN of an integer)."""
    with mpmath.workdps(_DIGITS):
        return int(mpmath.floor(mpmath.log1p(mpmath.exp(-d * mpmath.mpf(h_in))) / mpmath.mpf(h_out)))


@functools.lru_cache(maxsize=16)
def weights(h_in: float, h_out: float | None = None, reach: int | None = None) -> Weights:
    """The split tables of input grid step ``h_in`` onto output grid step ``h_out`` (default ``h_in``) for the
    differences d < min(far, ``reach``) (default all up to far; a stage asks for the next power of two
    above its laws' span, so a narrow law on a fine grid does not tabulate 10⁵ differences it never
    meets), cached (module docstring).

    f(d) from the float value of ln(1 + e^{−d·h_in})/h_out (error ≪ _TIE_MARGIN: exp and log1p within
    1 ulp), in 40-digit mpmath where that value is within _TIE_MARGIN of an integer. The weights
    w = (e^{−d·h_in} − expm1(f·h_out))/(e^{f·h_out}·expm1(h_out)) and 1 − w = (expm1((f+1)h_out) − e^{−d·h_in})/(…)
    carry an absolute error of at most 16u·(e^{−d·h_in} + expm1((f+1)h_out))/(e^{f·h_out}·expm1(h_out))
    (numerator: two values within 1 ulp and one subtraction; denominator: three roundings), added outwards.
    """
    h_out = h_in if h_out is None else h_out
    ratio = round(h_in / h_out)
    e1 = math.expm1(h_out)
    far = math.ceil(math.log(2.0 / e1) / h_in) + 1  # e^{−d·h_in} ≤ expm1(h_out)/2 for d ≥ far: f = 0, w ≤ 1/2
    size = far if reach is None else min(far, reach)
    d = np.arange(size, dtype=np.float64)
    ed = np.exp(-d * h_in)
    g = np.log1p(ed) / h_out
    f = np.floor(g).astype(np.int64)
    for i in np.flatnonzero(np.abs(g - np.round(g)) < _TIE_MARGIN):
        f[i] = _exact_f(int(i), h_in, h_out)
    fh = f * h_out
    den = np.exp(fh) * e1
    err = rounding_error(16, (ed + np.expm1(fh + h_out)) / den)
    w_hi = np.minimum((ed - np.expm1(fh)) / den + err, 1.0)
    om_hi = np.minimum((np.expm1(fh + h_out) - ed) / den + err, 1.0)
    groups = []
    d0 = 0
    for i in np.flatnonzero(np.diff(f)) + 1:
        groups.append((int(f[d0]), d0, int(i)))
        d0 = int(i)
    groups.append((int(f[d0]), d0, size))
    ef = np.exp(-np.arange(int(f[0]) + 2) * h_out)
    return Weights(
        h_in, h_out, ratio, tuple(groups), w_hi, om_hi, widen_down(ed, 4), widen_up(ed, 4), widen_down(ef, 4),
        widen_up(ef, 4), far, widen_down(e1, 4), tuple(g[1] for g in groups), tuple(g[2] for g in groups),
    )


@dataclass(frozen=True)
class Upper:
    """Upper envelopes of a partial sum of m factors on the grid step h: Q-masses at x_{first+i}, at 0,
    and the P- and Q-masses its revealed parts contribute to the epoch's +∞ / −∞ atoms."""

    first: int
    q: FloatArray
    zero: float
    p_flag: float
    q_flag: float
    m: int
    h: float


def pad(units: int) -> float:
    """Absolute underflow slack of ``units`` roundings whose results may be subnormal."""
    return 4.0 * units * SMALLEST_SUBNORMAL


#: Work done by the stage kernels of this process (multiply-adds and element operations, counted from the
#: array sizes): the refinement reads it to predict a finer pass's work (deterministic, not a clock).
WORK = [0.0]


def count_work(amount: float, budget: float) -> None:
    """Add ``amount`` to :data:`WORK`; refuse (``GridTooLargeError``) once a law's work passes its ``budget``
    (the value of WORK at which the law must stop): a grid is refused, never coarsened silently."""
    WORK[0] += amount
    if WORK[0] > budget:
        raise GridTooLargeError(
            f"a balls-in-bins epoch law needs more than {MAX_WORK:g} operations at this grid step (the work "
            "limit); ask for a larger Accuracy.relative_width or grid_step"
        )


_P = ParamSpec("_P")
_R = TypeVar("_R")


def counted_cache(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """``functools.lru_cache(maxsize=16)`` of an epoch law that, on a hit, adds to :data:`WORK` the work the
    law took when it was built: the refinement predicts a finer pass's work from the WORK a pass took
    (:func:`optcomp.pld.refine_stepped`), and a pass served from the cache would
    otherwise count 0 — in a warm process (a sweep, a notebook) the next, refused step would be built up
    to the work limit (tens of seconds) instead of refused by the prediction. ``__wrapped__``: the uncached
    law; ``cache_clear``: as lru_cache's."""

    @functools.lru_cache(maxsize=16)
    def built(*args: Any, **kwargs: Any) -> tuple[_R, float]:
        start = WORK[0]
        out = fn(*args, **kwargs)
        return out, WORK[0] - start

    @functools.wraps(fn)
    def cached(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        before = WORK[0]
        out, work = built(*args, **kwargs)  # type: ignore[arg-type]  # (the laws take hashable arguments)
        if WORK[0] == before:  # a hit (a nested law's hit has replayed its own work already)
            WORK[0] += work
        return out

    cached.cache_clear = built.cache_clear  # type: ignore[attr-defined]
    return cached


def factor_upper(mu: float, t: int, h: float, tail: float = ALLOCATION_TAIL) -> Upper:
    """The factor law split onto the grid step ``h`` (Lemma C step 1: the split of each cell's values onto
    its two ends, computed per cell by :func:`._allocation_cells.factor_cells`), tail budget ``tail``."""
    j_lo, j_hi = window(mu, t, h, tail)
    cells = factor_cells(mu, t, h, j_lo, j_hi)
    scale = 1.0 + cells.rel
    q = np.zeros(j_hi - j_lo + 1)
    q[:-1] += cells.down * scale
    q[1:] += cells.up * scale
    q[0] += cells.below[1]  # mean-preserving spread of the factors below ℓ_min onto {0, x_min}
    q = widen_up(q, 8) + pad(4)
    zero = max(0.0, cells.below[0] - cells.below[2]) + rounding_error(2, cells.below[0])  # Q(ℓ<ℓ_min) − E[X; ·]/x_min
    return Upper(j_lo, q, float(zero), 0.0, 0.0, 1, h)


def refine(first: int, arrays: list[FloatArray], ratio: int) -> tuple[int, list[FloatArray]]:
    """The same atoms on a grid ``ratio`` times finer: x_i on step h is x_{ratio·i} on step h/ratio (exact)."""
    if ratio == 1:
        return first, arrays
    out = []
    for a in arrays:
        b = np.zeros(ratio * (a.size - 1) + 1)
        b[::ratio] = a
        out.append(b)
    return ratio * first, out


def _on_step(s: Upper, h: float) -> Upper:
    first, (q,) = refine(s.first, [s.q], round(s.h / h))
    return Upper(first, q, s.zero, s.p_flag, s.q_flag, s.m, h)


def overlap(fx: int, d0: int, clen: int, fy: int, ny: int) -> tuple[int, int]:
    """The anchors j (absolute) with a convolution value (j = fx + d0 + r, 0 ≤ r < clen) and a y entry."""
    return max(fy, fx + d0), min(fy + ny, fx + d0 + clen)


def group_range(fx: int, nx: int, fy: int, ny: int, lo: int, hi: int) -> tuple[int, int, int, int]:
    """For the differences d in [lo, hi): the anchors [j0, j1) (entries of y with a partner i = j − d in x)
    and the entries [i0, i1) of x they reach (absolute indices; j0 ≥ j1 when there is none)."""
    j0, j1 = overlap(fx, lo, nx + hi - lo - 1, fy, ny)
    return j0, j1, max(fx, j0 - hi + 1), min(fx + nx, j1 - lo)


def core(q: FloatArray, first: int, h: float, theta: float) -> tuple[int, int, float, float]:
    """The core [c0, c1) (indices into ``q``) of a partial sum's law on step ``h``: each side outside it
    carries Q-mass ≤ θ/2 and Σ q_k·x_k/t ≤ θ/2. Returns (c0, c1, Q_out, M_out): upper ends of the Q-mass
    and of E_Q[S; outside]/t outside the core (fsum, widened), for the pairs revealed in :func:`combine_upper`."""
    n = q.size
    with np.errstate(under="ignore", over="ignore"):
        em = q * np.exp((first + np.arange(n)) * h)
    half = theta / 2
    c0 = int(min(np.searchsorted(np.cumsum(q), half, side="right"), np.searchsorted(np.cumsum(em), half, side="right")))
    c1 = n - int(min(np.searchsorted(np.cumsum(q[::-1]), half, side="right"),
                     np.searchsorted(np.cumsum(em[::-1]), half, side="right")))
    c0 = min(c0, max(c1 - 1, 0))
    outside = [*q[:c0].tolist(), *q[c1:].tolist()]
    moment = [*em[:c0].tolist(), *em[c1:].tolist()]
    return c0, c1, widen_up(math.fsum(outside), 8), widen_up(math.fsum(moment), 8)


def reachable(w: Weights, x: Upper | Any, y: Upper | Any, d_start: int) -> tuple[tuple[int, int, int], ...]:
    """The groups of ``w`` with a difference d ≥ ``d_start`` that some pair (i of x, j of y, j − i = d) has
    (bisected: a narrow law on a fine grid meets a few hundred of its ln 2/h groups)."""
    d_max = y.first + y.q.size - 1 - x.first
    return w.groups[bisect.bisect_right(w.ends, d_start) : bisect.bisect_right(w.starts, d_max)]


def _part(s: Upper, lo: int, hi: int) -> Upper:
    return Upper(s.first + lo, s.q[lo:hi], 0.0, 0.0, 0.0, s.m, s.h)


def prefix(x: FloatArray, fx: int, h: float, fy: int, ny: int, far: int) -> tuple[FloatArray, FloatArray, int, int, int]:
    """For anchors j in y's range: C_j = Σ_{i ≤ j−far} xᵢ and U_j = Σ_{i ≤ j−far} xᵢ e^{−(j−i)h} (both from the
    dyadic block prefixes of :mod:`._allocation_sums`, C within γ_D, U within γ_{D+8}), the anchor range
    [j0, j1) where they are non-empty, and D (the prefixes' depth)."""
    nx = x.size
    j0, j1 = max(fy, fx + far), fy + ny
    if j0 >= j1:
        return np.zeros(0), np.zeros(0), j0, j0, 0
    counts = np.minimum(np.arange(j0, j1) - far - fx, nx - 1) + 1
    with np.errstate(under="ignore"):
        sums = BlockSums(np.vstack([x, x * np.exp((np.arange(nx) - nx) * h)]), 0, nx.bit_length())
        c, u = sums.prefix(counts)
        u = u * np.exp(-(np.arange(j0, j1) - fx - nx) * h)
    return c, u, j0, j1, sums.depth


def _convolve(a: FloatArray, v: FloatArray) -> FloatArray:
    """``numpy.convolve(a, v)`` (mode "full"), the same kernel called without its Python wrapper (tens of
    thousands of short convolutions per law)."""
    return _correlate(a, v[::-1], 2) if a.size >= v.size else _correlate(v, a[::-1], 2)  # type: ignore[call-overload,no-any-return]


#: Terms per chunk buffer of a stage's accumulator (:mod:`._allocation_sums`): the convolutions' depth (the
#: longest group, ≈ ln 2/h) dominates the upper law's roundings, so few, large chunks (fewer merges).
_UPPER_CHUNK = 128


def _band_upper(
    acc: Accumulator, base: int, x: Upper, y: Upper, w: Weights, d_start: int, d_stop: float, budget: float
) -> int:
    """Adds Σ over pairs (i of x, j of y, d = j − i in [d_start, d_stop)) of xᵢyⱼ split onto the output
    grid's points r·j + f(d) (row 0 of ``acc``: the part (1 − w) to the lower point) and r·j + f(d) + 1 (row 1,
    at r·j + f(d): shifted when the rows are merged); ``acc`` indexed from ``base`` on the output grid, the
    work counted against ``budget`` (:func:`count_work`). Each group's value is one term of ``acc``: a
    convolution of at most ``longest`` products and one product with yⱼ. Returns the far field's depth."""
    r = w.ratio
    x_end, y_end, work, depth = x.first + x.q.size, y.first + y.q.size, 0, 0
    for f, d0, d1 in reachable(w, x, y, d_start):
        lo, hi = max(d0, d_start), int(min(d1, d_stop))
        j0, j1 = max(y.first, x.first + lo), min(y_end, x_end + hi - 1)  # overlap(): anchors with a partner
        if lo >= hi or j0 >= j1:
            continue
        i0, i1, n = max(x.first, j0 - hi + 1), min(x_end, j1 - lo), j1 - j0
        work += (i1 - i0 + 4) * (hi - lo) + 6 * n
        yy = y.q[j0 - y.first : j1 - y.first]
        k = j0 - i0 - lo  # convolution entry k: anchor j = i0 + lo + k
        xs = x.q[i0 - x.first : i1 - x.first]
        o = r * j0 + f - base
        rows = acc.target(o, o + r * n)
        rows[0, o : o + r * n : r] += yy * _convolve(xs, w.om_hi[lo:hi])[k : k + n]
        rows[1, o : o + r * n : r] += yy * _convolve(xs, w.w_hi[lo:hi])[k : k + n]
    count_work(work, budget)
    if d_stop > w.far:
        c, u, j0, j1, depth = prefix(x.q, x.first, w.h_in, y.first, y.q.size, max(w.far, d_start))
        if j0 < j1:
            yy = y.q[j0 - y.first : j1 - y.first]
            up = u / w.expm1_lo
            low = np.maximum(c - up, 0.0) + rounding_error(4 * (depth + 16), c + up)
            o = r * j0 - base
            acc.target(o, o + r * (j1 - j0))[:, o : o + r * (j1 - j0) : r] += np.vstack([yy * low, yy * up])
    return depth


def roundings(w: Weights, acc: Accumulator, far: int) -> int:
    """Roundings on any term's path to an output entry of a stage (module docstring): a group's value is a
    convolution of at most ``longest`` products (the far field's U: a block prefix of depth ``far`` and
    ten more: the scaled terms, the exp factor, the division), times yⱼ, summed by ``acc`` (its depth), the two rows merged, the zero atom's product."""
    longest = max(d1 - d0 for _, d0, d1 in w.groups)
    return max(longest, far + 10) + 1 + acc.depth + 1 + _TERM_ROUNDINGS


def combine_upper(
    a: Upper, b: Upper, t: int, h_out: float, tail: float = ALLOCATION_TAIL, budget: float = math.inf
) -> Upper:
    """The split law of the sum of two independent partial sums (Lemma C step 2) on the grid ``h_out``,
    then trimmed; the inputs are first taken onto the finer of their two grids (exactly)."""
    h_in = min(a.h, b.h)
    same = a is b
    a = _on_step(a, h_in)
    b = a if same else _on_step(b, h_in)
    span = max(a.first + a.q.size, b.first + b.q.size) - min(a.first, b.first)
    w = weights(h_in, h_out, 1 << span.bit_length())  # every difference of the two laws is below it
    r = w.ratio
    top = w.groups[0][0] + 2
    base = r * min(a.first, b.first)
    acc = Accumulator(2, r * max(a.first + a.q.size, b.first + b.q.size) + top - base, _UPPER_CHUNK)
    theta = math.sqrt(tail / 3)
    a0, a1, qa, ma = core(a.q, a.first, h_in, theta)
    b0, b1, qb, mb = (a0, a1, qa, ma) if same else core(b.q, b.first, h_in, theta)
    far = 0
    if same:  # ordered pairs i < j twice (y doubled: exact), i = j once; at least one of the two in the core
        inner = _part(a, a0, a1)
        twice = Upper(inner.first, 2.0 * inner.q, 0.0, 0.0, 0.0, a.m, a.h)
        tail_twice = _part(a, a1, a.q.size)
        tail_twice = Upper(tail_twice.first, 2.0 * tail_twice.q, 0.0, 0.0, 0.0, a.m, a.h)
        far = max(_band_upper(acc, base, a, twice, w, 1, math.inf, budget),
                  _band_upper(acc, base, inner, tail_twice, w, 1, math.inf, budget),
                  _band_upper(acc, base, inner, inner, w, 0, 1, budget))
    else:
        for x, y, (x0, x1), (y0, y1), start in ((a, b, (a0, a1), (b0, b1), 0), (b, a, (b0, b1), (a0, a1), 1)):
            inner = _part(x, x0, x1)
            far = max(far, _band_upper(acc, base, x, _part(y, y0, y1), w, start, math.inf, budget),
                      _band_upper(acc, base, inner, _part(y, 0, y0), w, start, math.inf, budget),
                      _band_upper(acc, base, inner, _part(y, y1, y.q.size), w, start, math.inf, budget))
    # the pairs with both partial sums outside their cores are revealed (Lemma C: more output only helps):
    # Q-mass ≤ Q_a·Q_b, P-mass in the epoch E[(S_a + S_b + rest); both out]/t ≤ M_a·Q_b + Q_a·M_b + Q_a·Q_b
    pair_q = widen_up(qa * qb, 4)
    pair_p = widen_up(ma * qb + qa * mb + pair_q, 8)
    # An event S_x = 0 (a spread tail, Lemma C) of mass at most ``tail`` is revealed: Q-mass zero_x, P-mass in the
    # epoch zero_x·E[S_y + rest]/t ≤ zero_x (the split law's mean is at most the exact one). Carried on, it
    # would make a copy of the other law one doubling below it that no trimming removes; a larger one (the
    # factors' part below ℓ_min) is carried: S_x = 0 plus y's atoms are y's points, exactly.
    revealed = 0.0
    for x, y in ((a, b), (b, a)):
        if x.zero <= tail:
            revealed += x.zero
        else:
            o = r * y.first - base
            acc.target(o, o + r * y.q.size)[0, o : o + r * y.q.size : r] += x.zero * y.q
    zero = 0.0 if max(a.zero, b.zero) <= tail else widen_up(a.zero * b.zero, 4) + pad(2)
    revealed = widen_up(revealed, 4)
    rows = acc.total()
    out = rows[0]
    out[1:] += rows[1, :-1]  # row 1 holds the parts sent one point up (the top entry of row 1 is never written)
    m = roundings(w, acc, far)
    out = widen_up(out, m + 4) + pad(operations(acc.terms, max(a.q.size, b.q.size), max(a.q.size, b.q.size)))
    merged = Upper(base, out, zero, widen_up(a.p_flag + b.p_flag + pair_p + revealed, 4),
                   widen_up(a.q_flag + b.q_flag + pair_q + revealed, 4), a.m + b.m, h_out)
    return trim_upper(merged, t, tail)


def trim_upper(s: Upper, t: int, tail: float = ALLOCATION_TAIL) -> Upper:
    """Reveal the right tail (its P-mass ≤ Σ q_k(x_k + t − m)/t, Q-mass ≤ Σ q_k, that P-mass bound up to
    ``tail``) and spread the left tail onto {0, x_cut} (mean-preserving, Q-mass up to ``tail``)."""
    q, h = s.q, s.h
    n = q.size
    k = np.arange(n)
    with np.errstate(under="ignore", over="ignore"):
        xr = np.exp((s.first + k) * h)  # x_k / t
    pm = q * (xr + (t - s.m) / t)
    right = np.cumsum(pm[::-1])[::-1]
    hi = int(np.searchsorted(-right, -tail, side="left"))  # first index whose suffix ≤ tail
    hi = max(hi, 1)
    left = np.cumsum(q)
    lo = int(np.searchsorted(left, tail, side="right"))  # entries [0, lo) have prefix ≤ tail
    lo = min(lo, hi - 1)
    p_flag, q_flag, zero = s.p_flag, s.q_flag, s.zero
    if hi < n:
        p_flag = widen_up(math.fsum(pm[hi:].tolist()) * (1 + rounding_error(8)), 4)
        p_flag = widen_up(s.p_flag + p_flag, 4)
        q_flag = widen_up(s.q_flag + widen_up(math.fsum(q[hi:].tolist()), 4), 4)
    kept = q[lo:hi].copy()
    if lo > 0:
        with np.errstate(under="ignore"):
            moved = q[:lo] * np.exp((k[:lo] - lo) * h)
        kept[0] = widen_up(kept[0] + widen_up(math.fsum(moved.tolist()), 8), 4)
        zero = widen_up(zero + widen_up(math.fsum(q[:lo].tolist()), 4), 4)
    return Upper(s.first + lo, kept, zero, p_flag, q_flag, s.m, h)


_Partial = TypeVar("_Partial")


def power(t: int, factor: Callable[[int], _Partial], combine: Callable[[_Partial, _Partial, int], _Partial]) -> _Partial:
    """The t-fold sum of the factor law (``docs/samplers.md`` §5, the stages of :func:`stage_step`): t = 2^k·o,
    o odd; S_o by binary powering (the powers S_{2^a} by squaring, the odd part's running sum by products),
    then k squarings: ⌊log₂ t⌋ + popcount(t) − 1 combinations, as plain binary powering, but the products
    (twice a squaring's work: no symmetry) come before the last k stages, on smaller and coarser laws.
    ``factor(m)``: the factor law on the grid of a stage of m factors; ``combine(x, y, m)``: the law of an
    independent sum on the grid of a stage of m factors. A running sum is built on the grid of the power it
    meets next (so the two inputs of a product share their grid: nothing is embedded)."""
    k = (t & -t).bit_length() - 1
    o = t >> k
    bits = [a for a in range(o.bit_length()) if o >> a & 1]  # bits[0] = 0: o is odd
    result = factor(1 << bits[1]) if len(bits) > 1 else factor(1) if k == 0 else factor(o)
    p = factor(1)
    for a in range(1, o.bit_length()):
        p = combine(p, p, 1 << a)
        if o >> a & 1:
            nxt = [b for b in bits if b > a]
            result = combine(result, p, 1 << nxt[0] if nxt else o)
    for i in range(1, k + 1):
        result = combine(result, result, o << i)
    return result


def constant_split(c: int, t: int, h: float) -> tuple[int, float, float, float]:
    """(k, w_hi, (1 − w)_hi, c/x_k): the constant c ≥ 1 on the grid x_j = t·e^{jh}, x_k ≤ c < x_{k+1}, split
    onto x_k, x_{k+1} with the mean-preserving weight w = (c/x_k − 1)/expm1(h) (40-digit arithmetic,
    each float rounded outwards; c/x_k to nearest, within 1 ulp)."""
    with mpmath.workdps(_DIGITS):
        hm = mpmath.mpf(h)
        ratio = mpmath.mpf(c) / t
        k = int(mpmath.floor(mpmath.log(ratio) / hm))
        rel = ratio * mpmath.exp(-k * hm)
        w = (rel - 1) / mpmath.expm1(hm)
        return k, _float_up(w), _float_up(1 - w), float(rel)


def _float_up(x: mpmath.mpf) -> float:
    """The least float ≥ the 40-digit ``x`` (a float rounded to nearest is within one ulp of it)."""
    v = float(x)
    return v if mpmath.mpf(v) >= x else next_up(v)


def constant_upper(c: int, t: int, h: float) -> Upper:
    """The constant c (the t − T' factors' mean a partial epoch of T' of t steps adds, ``docs/samplers.md``
    §5) split onto its two grid points (Lemma C: a mean-preserving split of a constant)."""
    k, w_hi, om_hi, _ = constant_split(c, t, h)
    return Upper(k, np.array([om_hi, w_hi]), 0.0, 0.0, 0.0, c, h)


@counted_cache
def upper_law(sigma: float, t: int, h: float, tail: float = ALLOCATION_TAIL, taken: int | None = None) -> PrivacyLossLaw:
    """The remove-direction law of the split pair (Lemma C): atoms at losses jh with upper envelopes of
    their masses, P(+∞) and Q(−∞) from the revealed tails and S = 0, each tail of mass up to ``tail``
    (``docs/samplers.md`` Lemma E), the stages on :func:`stage_step`'s grids. ``taken`` = T' < t: the first
    T' steps of an epoch, whose likelihood ratio is (X₁ + … + X_T' + t − T')/t (the constant split too).
    Cached per (σ, t, h, tail, taken)."""
    mu = 1.0 / sigma
    taken = t if taken is None else taken
    budget = WORK[0] + MAX_WORK
    s = power(taken, lambda m: factor_upper(mu, t, stage_step(h, t, m), tail),
              lambda x, y, m: combine_upper(x, y, t, stage_step(h, t, m), tail * (x.m + y.m) / t, budget))
    s = _on_step(s, h)  # t = 1: the factor's own grid is h already
    if taken < t:
        s = combine_upper(s, constant_upper(t - taken, t, h), t, h, tail, budget)  # one copy: the whole budget
    # each factor copy reveals the part above its own grid's λ_max; the finest grid's is the smallest
    # (a dyadic ceiling), so F = {some factor above it} contains every revealed part (union bound)
    pf, qf = flag_masses(mu, t, window(mu, t, h, tail)[1], h)
    keep = s.q > 0
    k = (s.first + np.flatnonzero(keep)).astype(np.float64)
    q = s.q[keep]
    with np.errstate(under="ignore", over="ignore"):
        p = widen_up(q * np.exp(k * h), 8)
    return PrivacyLossLaw(
        atom_losses=k * h,
        atom_p=p,
        atom_q=q,
        p_inf=min(1.0, widen_up(pf + s.p_flag, 4)),
        q_neg_inf=min(1.0, widen_up(qf + s.q_flag + s.zero, 4)),
    )


@counted_cache
def upper_laws(
    sigma: float, t: int, h: float, tail: float = ALLOCATION_TAIL, taken: int | None = None
) -> tuple[PrivacyLossLaw, PrivacyLossLaw]:
    """(remove, add) laws of the split pair: :func:`upper_law` and its swap (one pipeline, Lemma C)."""
    law = upper_law(sigma, t, h, tail, taken)
    return law, law.swapped()

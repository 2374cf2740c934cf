"""The dominated (Lemma D) law of one balls-in-bins epoch: cell labels and conditional means.

Each factor is labelled by its grid cell k (λ = ℓ − ln t in [kh, (k+1)h)), each sum of two partial
sums by the cell, on the stage's output grid, of x_i + x_j of its two labels (offset f(d) of
:mod:`._allocation_grid`, the same stage grids :func:`~._allocation_grid.stage_step`); the label J is a
function of the output, so the pair of its laws is a post-processing of (P_t, Q_t) and its
hockey-stick curve is a lower bound (``docs/samplers.md`` Lemma D), on any grids. Each label carries
Q(J = k) and its P-mass in the epoch's pair, E_Q[S; J = k]/t (S the partial sum: the other factors'
part enters when the sums meet). A sum of two labels i ≤ j with d = j − i (input grid h_in) lands at
k = r·j + f(d) on the output grid h_out = h_in/r, and

    Q_k += Q_i·Q_j,     P_k += P_i·Q_j + Q_i·P_j        (E[S_a + S_b; i, j] = E[S_a; i]Q(j) + Q(i)E[S_b; j]),

sums of products with unit weights: a group's Σ over its differences is a window sum of the input's
labels, a slice of their dyadic block sums (:mod:`._allocation_sums`), and the terms are summed pairwise.

**Rounding: one relative bound per law.** Every term is a product of non-negative inputs, so if every
entry of the inputs is within a relative ρ_a (ρ_b) of its exact value, every exact output entry is within
(1 ± ρ_a)(1 ± ρ_b) of the exact sum of the computed terms, and the float sum is within γ_M of that
(Higham Lemma 3.1; M the depth of the summation tree, logarithmic: :func:`combine_lower`): ρ_out =
e^{ρ_a + ρ_b + γ_M} − 1 covers both sides. The factor cells carry their own relative bounds
(:mod:`._allocation_cells`, the largest is taken). Entries below _FLOOR are dropped (label ⊥), so an
underflowed product (absolute error ≤ 2⁻¹⁰⁷⁴ per rounding) is a relative error of at most N·2⁻¹⁰⁷⁴/_FLOOR
(N the operations feeding an entry), charged too. Only at the end are the envelopes formed: a lower end of each
P-mass and an upper end of each Q-mass (the add law: the other two). Dropped tails, the pairs of two
partial sums outside their cores (:func:`~._allocation_grid.core`) and a factor's part below ℓ_min
whose envelope underflows are an outcome ⊥ never in any test set; the left tail of a partial sum is
merged into its first kept label (a coarser label is still a function of the output).

The earlier code (``tests/_references/allocation_legacy_lower.py``, the reference it is checked against)
carried lower and upper envelopes of Q and of E[S]/x_k: four convolutions per group, weighted by
e^{−d·h}, and one grid for every stage; this law sums windows, unweighted, on the stage grids.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

import numpy as np

from optcomp._numerics import ALLOCATION_TAIL, SMALLEST_NORMAL, SMALLEST_SUBNORMAL, FloatArray
from optcomp._rounding import gamma, rounding_error, widen_down, widen_up
from optcomp.mechanisms._allocation_cells import factor_cells, window
from optcomp.mechanisms._allocation_grid import (
    MAX_WORK,
    WORK,
    Weights,
    constant_split,
    core,
    count_work,
    counted_cache,
    power,
    refine,
    stage_step,
    weights,
)
from optcomp.mechanisms._allocation_sums import Accumulator, BlockSums, operations
from optcomp.mechanisms._law import PrivacyLossLaw

#: Entries of a partial sum below this are dropped (label ⊥): the relative bound then covers underflow.
_FLOOR = 1e-270


@dataclass(frozen=True)
class Lower:
    """Values of Q(J = k) (``q``) and of E_Q[S; J = k]/t (``p``) for the labels k = first + i of a partial sum
    of m factors on the grid step h, every entry within the relative ``rel`` of its exact value."""

    first: int
    q: FloatArray
    p: FloatArray
    rel: float
    m: int
    h: float


def compound(*rels: float) -> float:
    """A relative bound ρ with Π(1 + ρᵢ) ≤ 1 + ρ and Π(1 − ρᵢ) ≥ 1 − ρ: e^{Σρᵢ} − 1, rounded up (never
    1 + ρ − 1 in float, which would lose the small ρ to the rounding of 1 + ρ)."""
    return widen_up(math.expm1(widen_up(math.fsum(rels), 8)), 8)


def factor_lower(mu: float, t: int, h: float, tail: float = ALLOCATION_TAIL) -> Lower:
    """The factor law labelled by its cells (Lemma D), P-masses E_Q[X; cell]/t = r_j·e^{jh} (one product and
    one exp: 4u more); the part below ℓ_min joins the first cell (its value the midpoint of its envelopes,
    their half-width over the lower end its relative error), or is dropped (⊥) where that end underflows."""
    j_lo, j_hi = window(mu, t, h, tail)
    cells = factor_cells(mu, t, h, j_lo, j_hi)
    q = cells.q.copy()
    with np.errstate(under="ignore"):
        p = cells.r * np.exp(np.arange(j_lo, j_hi) * h)
    rel = compound(float(np.max(cells.rel)), rounding_error(4))
    q_hi, r_hi, r_lo, q_lo = cells.below
    if q_lo > 0 and r_lo > 0:
        scale = math.exp(j_lo * h)  # x_min/t: the below part's E[X]/x_min times it, 4u more
        q[0] += (q_lo + q_hi) / 2
        p[0] += (r_lo + r_hi) / 2 * scale
        rel = max(rel, widen_up((q_hi - q_lo) / (2 * q_lo), 8), widen_up((r_hi - r_lo) / (2 * r_lo), 8))
        rel = compound(rel, rounding_error(12))  # the two sums, the product with the scale
    return Lower(j_lo, q, p, rel, 1, h)


def _part(s: Lower, lo: int, hi: int) -> Lower:
    return Lower(s.first + lo, s.q[lo:hi], s.p[lo:hi], s.rel, s.m, s.h)


def _on_step(s: Lower, h: float) -> Lower:
    first, (q, p) = refine(s.first, [s.q, s.p], round(s.h / h))
    return Lower(first, q, p, s.rel, s.m, h)


@dataclass(frozen=True)
class _Side:
    """A partial sum's labels as one band's x (its rows' block sums) or y (its rows, doubled for the ordered
    pairs of a square: exact)."""

    first: int
    size: int
    rows: FloatArray
    sums: BlockSums | None


def _x_side(s: Lower, pad: int, levels: int) -> _Side:
    return _Side(s.first, s.q.size, np.empty((2, 0)), BlockSums(np.vstack([s.q, s.p]), pad, levels))


def _y_side(s: Lower, scale: float = 1.0) -> _Side:
    return _Side(s.first, s.q.size, scale * np.vstack([s.q, s.p]), None)


def _band(acc: Accumulator, base: int, x: _Side, y: _Side, w: Weights, d_start: int, d_stop: float, budget: float) -> None:
    """Adds the pairs (i of x, j of y, d = j − i in [d_start, d_stop)) to ``acc``'s rows [q, p] at the output
    grid's label r·j + f(d) (indexed from ``base`` on the output grid; work against ``budget``, counted as the
    convolutions this replaced counted it: the refinement's work predictions, and so its refusals, keep
    their scale). A group's Σ_{d} x_{j−d} over its differences is a window of x's block sums
    (:mod:`._allocation_sums`), a slice."""
    ratio = w.ratio
    sums = x.sums
    assert sums is not None
    d_max = y.first + y.size - 1 - x.first  # as reachable(): the groups some pair meets
    x_end, y_end, work = x.first + x.size, y.first + y.size, 0
    for f, d0, d1 in w.groups[bisect.bisect_right(w.ends, d_start) : bisect.bisect_right(w.starts, d_max)]:
        lo, hi = max(d0, d_start), int(min(d1, d_stop))
        j0, j1 = max(y.first, x.first + lo), min(y_end, x_end + hi - 1)  # overlap(): anchors with a partner
        if lo >= hi or j0 >= j1:
            continue
        n = j1 - j0
        work += (min(x_end, j1 - lo) - max(x.first, j0 - hi + 1) + 4) * (hi - lo) + 6 * n  # as the convolutions did
        win = sums.window(j0 - hi + 1 - x.first, hi - lo, n)  # [Σ q, Σ p] over each anchor's window
        ys = j0 - y.first
        term = win * y.rows[0, ys : ys + n]  # [yq·Σq, yq·Σp]
        term[1] += win[0] * y.rows[1, ys : ys + n]  # + yp·Σq
        at = ratio * j0 + f - base
        acc.target(at, at + ratio * n)[:, at : at + ratio * n : ratio] += term
    count_work(work, budget)
    if d_stop > w.far:  # f = 0: the sum of everything at distance ≥ far lands on the anchor's point
        start = max(w.far, d_start)
        j0, j1 = max(y.first, x.first + start), y.first + y.size
        if j0 < j1:
            counts = np.minimum(np.arange(j0, j1) - start - x.first, x.size - 1) + 1
            c = sums.prefix(counts)
            yq, yp = y.rows[0, j0 - y.first : j1 - y.first], y.rows[1, j0 - y.first : j1 - y.first]
            o = slice(ratio * j0 - base, ratio * j1 - base, ratio)
            out = acc.target(o.start, o.stop)
            out[0, o] += yq * c[0]
            out[1, o] += yq * c[1] + yp * c[0]


def combine_lower(
    a: Lower, b: Lower, t: int, h_out: float, tail: float = ALLOCATION_TAIL, budget: float = math.inf
) -> Lower:
    """The labelled law of the sum of two independent partial sums (Lemma D) on the grid ``h_out``, then
    trimmed; the inputs are first taken onto the finer of their two grids (exactly). Rounding: every
    output entry is a sum of non-negative terms by a tree of depth at most the block sums' depth + 2 (the
    products, the P-sum) + the accumulator's (:mod:`._allocation_sums`), charged as γ of that depth."""
    h_in = min(a.h, b.h)
    same = a is b
    a = _on_step(a, h_in)
    b = a if same else _on_step(b, h_in)
    span = max(a.first + a.q.size, b.first + b.q.size) - min(a.first, b.first)
    w = weights(h_in, h_out, 1 << span.bit_length())  # every difference of the two laws is below it
    top = w.groups[0][0] + 2
    base = w.ratio * min(a.first, b.first)
    n = w.ratio * max(a.first + a.q.size, b.first + b.q.size) + top - base
    acc = Accumulator(2, n)
    pad = max(d1 - d0 for _, d0, d1 in w.groups)  # a window reaches at most this far outside x
    levels = max(pad, a.q.size, b.q.size).bit_length()  # windows and the far field's prefixes
    theta = math.sqrt(tail / 3)  # pairs with both partial sums outside their cores are dropped (⊥)
    a0, a1, _, _ = core(a.q, a.first, h_in, theta)
    b0, b1 = (a0, a1) if same else core(b.q, b.first, h_in, theta)[:2]
    sides: list[BlockSums] = []
    if same:  # ordered pairs i < j twice (y doubled: exact), i = j once; at least one of the two in the core
        inner = _part(a, a0, a1)
        xa, xi = _x_side(a, pad, levels), _x_side(inner, pad, levels)
        sides += [s.sums for s in (xa, xi) if s.sums is not None]
        _band(acc, base, xa, _y_side(inner, 2.0), w, 1, math.inf, budget)
        _band(acc, base, xi, _y_side(_part(a, a1, a.q.size), 2.0), w, 1, math.inf, budget)
        _band(acc, base, xi, _y_side(inner), w, 0, 1, budget)
    else:
        for x, y, (x0, x1), (y0, y1), start in ((a, b, (a0, a1), (b0, b1), 0), (b, a, (b0, b1), (a0, a1), 1)):
            xs, xi = _x_side(x, pad, levels), _x_side(_part(x, x0, x1), pad, levels)
            sides += [s.sums for s in (xs, xi) if s.sums is not None]
            _band(acc, base, xs, _y_side(_part(y, y0, y1)), w, start, math.inf, budget)
            _band(acc, base, xi, _y_side(_part(y, 0, y0)), w, start, math.inf, budget)
            _band(acc, base, xi, _y_side(_part(y, y1, y.q.size)), w, start, math.inf, budget)
    q, p = acc.total()
    m = max(s.depth for s in sides) + 2 + acc.depth + 4
    ops = operations(acc.terms, pad, max(a.q.size, b.q.size))
    dead = (q < _FLOOR) | (p < _FLOOR)
    q[dead], p[dead] = 0.0, 0.0
    rel = compound(a.rel, b.rel, gamma(m), ops * SMALLEST_SUBNORMAL / _FLOOR)
    return trim_lower(Lower(base, q, p, rel, a.m + b.m, h_out), t, tail)


def trim_lower(s: Lower, t: int, tail: float = ALLOCATION_TAIL) -> Lower:
    """Drop the right tail (P- plus Q-mass, in the epoch, up to ``tail``) as ⊥; merge the left tail (Q-mass
    up to ``tail``) into the first kept label (a coarser label is still a function of the output)."""
    pm = s.p + s.q * ((t - s.m) / t + 1.0)  # P-mass E[S_total; k]/t, plus the Q-mass
    right = np.cumsum(pm[::-1])[::-1]
    hi = max(int(np.searchsorted(-right, -tail, side="left")), 1)
    lo = min(int(np.searchsorted(np.cumsum(s.q), tail, side="right")), hi - 1)
    q, p = s.q[lo:hi].copy(), s.p[lo:hi].copy()
    rel = s.rel
    if lo > 0:
        q[0] += math.fsum(s.q[:lo].tolist())
        p[0] += math.fsum(s.p[:lo].tolist())
        rel = compound(rel, rounding_error(4))
    return Lower(s.first + lo, q, p, rel, s.m, s.h)


@counted_cache
def lower_laws(
    sigma: float, t: int, h: float, tail: float = ALLOCATION_TAIL, taken: int | None = None
) -> tuple[PrivacyLossLaw, PrivacyLossLaw]:
    """(remove, add) laws of the labelled pair (Lemma D): per label k, a loss label ln(P_k/Q_k) (any label is
    sound), a lower end of its P-mass and an upper end of its Q-mass (the add law: the same with the two
    roles exchanged), tails up to ``tail`` dropped, the stages on :func:`~._allocation_grid.stage_step`'s
    grids. ``taken`` = T' < t: the first T' steps of an epoch (the constant t − T' labelled by its grid point
    below, its P-mass (t − T')/t). Cached per (σ, t, h, tail, taken)."""
    mu = 1.0 / sigma
    taken = t if taken is None else taken
    budget = WORK[0] + MAX_WORK
    s = power(taken, lambda m: factor_lower(mu, t, stage_step(h, t, m), tail),
              lambda x, y, m: combine_lower(x, y, t, stage_step(h, t, m), tail * (x.m + y.m) / t, budget))
    s = _on_step(s, h)
    if taken < t:
        const = Lower(constant_split(t - taken, t, h)[0], np.ones(1), np.array([(t - taken) / t]), rounding_error(2),
                      t - taken, h)
        s = combine_lower(s, const, t, h, tail, budget)
    keep = (s.q > 0) & (s.p > 0)
    q, p = s.q[keep], s.p[keep]
    down, up = 1.0 - s.rel, 1.0 + s.rel
    with np.errstate(under="ignore", divide="ignore", invalid="ignore"):
        p_lo, p_hi = widen_down(p * down, 4), widen_up(p * up, 4)
        q_lo, q_hi = widen_down(q * down, 4), widen_up(q * up, 4)
        label = np.log(p / q)
    ok = (q_lo >= SMALLEST_NORMAL) & (p_lo >= SMALLEST_NORMAL) & np.isfinite(label)
    remove = PrivacyLossLaw(atom_losses=label[ok], atom_p=p_lo[ok], atom_q=q_hi[ok])
    add = PrivacyLossLaw(atom_losses=-label[ok], atom_p=q_lo[ok], atom_q=p_hi[ok])
    return remove, add

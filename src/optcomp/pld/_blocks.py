"""Two-level ("block") composition of one large-count part (``docs/pld.md`` §5a, Lemmas 5 and 6).

A part composed k times at grid step Δ is composed in two levels: **level 1** forms the m-fold block
y = x^{*m} at the fine step Δ on its own (small) window; the block is then **regridded** onto the coarse
step Δ' = RΔ (cells aligned: fine index j lies in coarse cell ⌊j/R⌋); **level 2** composes the r = ⌊k/m⌋
regridded blocks and the regridded remainder block (k − r·m steps) at Δ'. The window of level 1 is about
one step's support plus √m spreads, that of level 2 the k-fold spread in units of Δ' — together a few
times fewer FFT points than one level at Δ. The regrid costs a second-order error Δ'² once per block
instead of mΔ² (so R ≈ √m balances the two levels; the refinement loop sees a width ∝ Δ², with m and R
fixed functions of k).

Upper end (Lemma 5): the regrid is the split kernel (Lemma 1) applied to the fine-grid pair (y, y e^{−ℓ}),
the level-1 mass outside its window is charged as mass at +∞, and the level-1 float error enters through
a telescoping bound on the r-fold product (any [0, 1]-weighted sum of ∏ aᵢ moves by at most
Σᵢ kᵢ‖aᵢ − bᵢ‖₁ Mᵢ^{kᵢ−1} ∏_{j≠i} Mⱼ^{kⱼ}, Mᵢ ≥ both masses). Lower end (Lemma 6): the coarse index
K = Σ_blocks ⌊J_b/R⌋ is a post-processing of the output, so Lemma 2 holds for it; its P- and Q-masses are
convolutions of the binned block masses, the tilted Q-masses binned with weights e^{s'_C − s_j} about the
cell's centre (≤ e^{Δ'/2}: the representative loss s'_C is centred, so the test set is not shifted).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.fft

from optcomp._numerics import SMALLEST_SUBNORMAL, FloatArray
from optcomp._rounding import rounding_error, widen_down, widen_up
from optcomp.pld._cells import BYTES_PER_CELL, GridTooLargeError
from optcomp.pld._fft import LONG_DOUBLE_COUNT, Composed, compose
from optcomp.pld._fft import window as fft_window

#: Parts composed at least this many times go through two levels (below, one level is as cheap).
BLOCK_MIN_COUNT = 4096
#: Two levels need the composed spread to be this many times one step's support.
_SPREAD_RATIO = 8
#: Variance (in grid steps²) a grid can add to one step's loss (the split kernel: at most 1/4); taken
#: off the vector's variance, so that a coarse first pass whose grid dwarfs the loss does not pass the
#: spread test that the fine passes fail (the gate would flip between passes).
_GRID_VARIANCE = 0.25
#: Two levels need room to refine one step's cells by this factor under the memory cap.
_CELL_HEADROOM = 2
#: ln of a mass factor beyond which a charge is taken as infinite (e^700 is near the double range).
_LOG_HUGE = 700.0
#: Counts above this keep one level: Σ_b h_b (2⁻¹⁰ steps, about k/R) must stay exact in a double.
_MAX_BLOCK_COUNT = 2**42
#: Largest coarse step Δ' = RΔ of two levels. The regrid's weights expm1((R − o)Δ)/expm1(RΔ) and the
#: binning weights e^{(h·R − m)Δ/2 − oΔ} are certified with a fixed widening (16u, 8u) that covers their
#: relative error (≤ (7 + 2RΔ)u) only for a bounded RΔ, and expm1(RΔ) overflows past 709 (NaN weights);
#: coarser grids (a user's grid_step, a huge loss scale) keep one level, which is as fast there.
_MAX_COARSE_STEP = 1.0
#: Fractional bits of a block's representative offset h (in units of Δ'/2).
_REPRESENTATIVE_BITS = 10
#: Candidates on each side of √k tried as the block size before one with a remainder is taken.
_DIVISOR_SEARCH = 2048
#: Level-2 windows of at least this many points are transformed in double (:func:`_level_two_wide`):
#: its double-precision error (∝ r·u) is of the order of the level-1 charge Σ_b 2E_b (∝ r·u too), so the
#: ends' floors grow by a bounded factor (``docs/pld.md`` §5a), and a double transform costs a fraction;
#: shorter windows (coarse passes) keep long double, which costs little there and keeps their floors.
LEVEL_TWO_DOUBLE_LEN = 2048
#: The smallest positive double (absolute error of an operation in the subnormal range).
_TINY = SMALLEST_SUBNORMAL


@dataclass(frozen=True)
class Shape:
    """k = r·m + rem steps: r blocks of m steps and one remainder block; coarse step R·Δ."""

    m: int
    r: int
    rem: int
    ratio: int


def shape(count: int) -> Shape | None:
    """The block shape of a part composed ``count`` times (``None``: one level). m ≈ √k minimises
    n₁ + n₂ ∝ √m + √k/R with R ≈ √m ≈ k^{1/4}, which balances the two levels' second-order errors."""
    if count < BLOCK_MIN_COUNT:
        return None
    m = _near_divisor(count)
    ratio = max(2, round(math.sqrt(m)))
    return Shape(m, count // m, count % m, ratio)


def blocked(vecs: list[tuple[FloatArray, int]], memory_cap: int, full_cells: float, step: float) -> Shape | None:
    """The block shape when the untilted end of ``vecs`` goes through two levels, else ``None``.

    Two levels only for one part composed ≥ ``BLOCK_MIN_COUNT`` times whose composed spread (16√(k·var)
    grid points) is at least ``_SPREAD_RATIO`` times one step's support (else level 1 costs about as much
    as one level), and whose per-step cells (``full_cells``: those of the full windows the tilted ends
    use) could still be refined by ``_CELL_HEADROOM`` under the memory cap: two levels double the width
    at a given step, so the refinement asks for a √2 finer step; near the cap one level, narrower at the
    same step, is kept (no new ``GridTooLargeError``). The spread test is a ratio that hardly moves with
    the step, so the width model of the refinement stays ∝ Δ² away from the cap. A coarse step
    Δ' = R·``step`` above ``_MAX_COARSE_STEP`` keeps one level (the weights' rounding bounds need it)."""
    if len(vecs) != 1 or not BLOCK_MIN_COUNT <= vecs[0][1] <= _MAX_BLOCK_COUNT:
        return None
    x, k = vecs[0]
    if not fits_refined(max(x.size, full_cells), memory_cap):
        return None
    tot = float(np.sum(x))
    j = np.arange(x.size, dtype=np.float64)
    mu = float(np.dot(x, j)) / tot
    var = max(float(np.dot(x, (j - mu) ** 2)) / tot - _GRID_VARIANCE, 0.0)
    if not _spread_test(k, var, x.size):
        return None
    sh = shape(k)
    return sh if sh is not None and sh.ratio * step <= _MAX_COARSE_STEP else None


def fits_refined(cells: float, memory_cap: int) -> bool:
    """Whether ``cells`` per-step cells could be refined ``_CELL_HEADROOM`` times under ``memory_cap``
    (:func:`blocked`'s memory test; monotone in ``cells``, so an upper bound that passes decides it)."""
    return cells * _CELL_HEADROOM <= memory_cap // BYTES_PER_CELL


def _near_divisor(count: int) -> int:
    """A divisor of ``count`` within a factor 1.5 of √count (the nearest), else ⌊√count⌋: with no
    remainder block, level 1 is one composition instead of two."""
    root = math.isqrt(count)
    for d in range(min(root // 3, _DIVISOR_SEARCH) + 1):
        for m in (root + d, root - d):
            if count % m == 0:
                return m
    return root


@dataclass(frozen=True)
class _Block:
    """A regridded block: coarse vector ``z`` from coarse index ``first``, its count at level 2, an
    ℓ₁ bound ``l1`` on its distance to the exact reference block, and a bound ``mass`` ≥ both masses."""

    z: FloatArray
    first: int
    count: int
    l1: float
    mass: float


def _union_window(
    groups: list[list[tuple[FloatArray, int]]], log_tau: float, max_len: int
) -> tuple[int, int, list[float]]:
    """One window [A, A + N) containing each group's Chernoff window (:func:`._fft.window`), and each
    group's wrap: the mass outside a larger window is at most the mass outside the group's own."""
    wins = [fft_window(g, log_tau, max_len) for g in groups]
    a = min(w[0] for w in wins)
    b = max(w[0] + w[1] - 1 for w in wins)
    n = scipy.fft.next_fast_len(b - a + 1, real=True)
    if n > max_len:
        raise GridTooLargeError(
            f"a level-1 block spans {n} grid points (the memory cap allows {max_len}); ask for a larger "
            "Accuracy.relative_width or grid_step, or raise Accuracy.memory_cap"
        )
    return a, n, [w[2] for w in wins]


def _rows(y: FloatArray, j0: int, ratio: int) -> tuple[FloatArray, int]:
    """y (fine indices from j0) as rows of ``ratio`` fine points, one row per coarse cell from ⌊j0/R⌋."""
    c0 = j0 // ratio
    lead = j0 - c0 * ratio
    size = -(-(lead + y.size) // ratio) * ratio
    buf = np.zeros(size)
    buf[lead : lead + y.size] = y
    return buf.reshape(-1, ratio), c0


def _mass_up(y: FloatArray) -> float:
    """Σy rounded up (pairwise summation of non-negative terms, plus subnormal rounding)."""
    return float(widen_up(float(np.sum(y)), 4 * math.log2(y.size + 2) + 4)) + y.size * _TINY


def regrid_split(y: FloatArray, j0: int, ratio: int, step: float) -> tuple[FloatArray, int]:
    """The split kernel (Lemma 1) of the fine pair (y, y e^{−ℓ}), ℓ = jΔ, onto the coarse grid RΔ.

    Coarse cell C = [CΔ', (C + 1)Δ') holds the fine points j = CR + o, o < R; its P-mass goes to CΔ'
    (α_C = Σ_o w_o y_j, w_o = expm1((R − o)Δ)/expm1(RΔ) ∈ (0, 1], w₀ = 1) and to (C + 1)Δ' (the rest).
    Certified as in Lemma 3: the weights and α are rounded down (mass moved up), the cell's mass rounded
    up and the rest computed from it rounded up (mass added); every sum is of non-negative terms. The
    result dominates L⁺y, L⁺ the exact kernel with the rounded-down weights (column sums 1). The
    weights' relative error is ≤ (7 + 2RΔ)u, inside their 16u widening for RΔ ≤ ``_MAX_COARSE_STEP``
    (:func:`blocked`).

    Returns:
        (z, first): the coarse P-masses from coarse index ``first``.
    """
    rows, c0 = _rows(y, j0, ratio)
    o = np.arange(ratio, dtype=np.float64)
    w = widen_down(np.expm1((ratio - o) * step) / np.expm1(ratio * step), 16)
    units = 2 * ratio + 8
    alpha = np.maximum(widen_down(rows @ w, units) - units * _TINY, 0.0)
    mass = widen_up(rows.sum(axis=1), units) + units * _TINY
    rest = widen_up(np.maximum(mass - alpha, 0.0), 4) + _TINY
    z = np.zeros(alpha.size + 1)
    z[:-1] = alpha
    z[1:] += rest
    return np.asarray(widen_up(z, 4), dtype=np.float64), c0


def bin_masses(
    y: FloatArray, j0: int, ratio: int, step: float, tilt: float | None
) -> tuple[FloatArray, int, float, float]:
    """Fine masses binned onto coarse cells ⌊j/R⌋ (Lemma 6): Σ_{j∈C} y_j, or with ``tilt`` the tilted
    Q-masses Σ_{j∈C} y_j e^{(tilt − o)Δ} (o = j − CR).

    Returns:
        (binned, first coarse index, ℓ₁ bound on the distance to the exact binning of y, the largest
        weight w ≥ 1): sums of R non-negative terms, weights each within 8u(2 + |argument|) relative.
    """
    rows, c0 = _rows(y, j0, ratio)
    total = _mass_up(y)
    if tilt is None:
        return rows.sum(axis=1), c0, rounding_error(ratio + 4, total) + rows.size * _TINY, 1.0
    arg = (tilt - np.arange(ratio, dtype=np.float64)) * step
    w = np.exp(arg)
    top = float(widen_up(math.exp(max(0.0, float(np.max(arg)))), 8))
    rel = rounding_error(2 * ratio + 16, 2 + float(np.max(np.abs(arg))))
    return rows @ w, c0, rel * total * top + 2 * rows.size * _TINY, top


def _telescoped(blocks: list[_Block]) -> float:
    """Σᵢ kᵢ‖aᵢ − bᵢ‖₁ Mᵢ^{kᵢ−1} ∏_{j≠i} Mⱼ^{kⱼ}: how far any [0, 1]-weighted sum of ∏ aᵢ^{*kᵢ} can be
    from ∏ bᵢ^{*kᵢ} when ‖aᵢ − bᵢ‖₁ ≤ l1ᵢ and both masses are ≤ Mᵢ (a^{*k} − b^{*k} telescopes into k
    terms a^{*i} * (a − b) * b^{*(k−1−i)}, and ‖f * g‖₁ ≤ ‖f‖₁‖g‖₁), rounded up."""
    log_all = math.fsum(b.count * math.log(b.mass) for b in blocks)
    log_all = log_all + rounding_error(8, abs(log_all) + 1)
    terms = math.fsum(b.count * b.l1 / b.mass for b in blocks)
    if log_all > _LOG_HUGE:
        return math.inf
    return float(widen_up(terms * math.exp(log_all), 16))


def _level_one(x: FloatArray, count: int, win: tuple[int, int, float], first: int) -> tuple[FloatArray, int, float]:
    """x^{*count} on ``win`` (circular), its first fine index and its FFT error (any [0, 1]-weighted sum)."""
    if count == 1:
        return x, first, 0.0
    c = compose([(x, count)], win)
    return c.values, count * first + c.first, c.fft_error


@dataclass(frozen=True)
class BlockUpper:
    """The level-2 composition of the regridded split blocks (coarse step ``step``): its floor already
    holds the level-1 charges (telescoped FFT error, level-1 wrap as mass at +∞)."""

    composed: Composed
    step: float


def upper_blocks(x: FloatArray, first: int, sh: Shape, step: float, log_tau: float, max_len: int) -> BlockUpper:
    """Two-level composition of the split vector ``x`` (fine indices from ``first``), k = r·m + rem times.

    Lemma 5 (``docs/pld.md`` §5a): with W the level-1 wraps (mass outside the level-1 windows) and
    E₁ the level-1 FFT errors, any [0, 1]-weighted sum of x^{*k} (in particular the finite part of δ of
    the split pair at any ε) is at most the same sum of the level-2 composition of the computed regridded
    blocks, plus the level-2 FFT error and wrap, plus Σ_b W_b·max(1, ‖x‖₁)^k, plus the telescoped
    ℓ₁ distances 2E₁ of the blocks (:func:`_telescoped`).
    """
    count = sh.m * sh.r + sh.rem
    counts = [(sh.m, sh.r)] + ([(sh.rem, 1)] if sh.rem else [])
    tau1 = log_tau - math.log(count)
    blocks: list[_Block] = []
    wrap = 0.0
    for c, times in counts:
        win = fft_window([(x, c)], tau1, max_len) if c > 1 else (0, x.size, 0.0)
        y, j0, err = _level_one(x, c, win, first)
        z, c0 = regrid_split(y, j0, sh.ratio, step)
        l1 = widen_up(2 * err, 4)
        blocks.append(_Block(z, c0, times, l1, _mass_up(y) + l1))
        wrap += times * win[2]
    log_x = count * max(0.0, math.log(_mass_up(x)))
    log_x += rounding_error(8, log_x + 1)
    charge = (widen_up(wrap, 8) * math.exp(log_x) if log_x <= _LOG_HUGE else math.inf) + _telescoped(blocks)
    comp = _level_two([(b.z, b.count) for b in blocks], sum(b.count * b.first for b in blocks), log_tau, max_len)
    out = Composed(comp.values, comp.first, comp.fft_error + widen_up(charge, 8), comp.wrap)
    return BlockUpper(out, sh.ratio * step)


def _level_two(parts: list[tuple[FloatArray, int]], first: int, log_tau: float, max_len: int) -> Composed:
    """Π parts on their Chernoff window, placed at coarse index ``first`` (P side: wrap kept)."""
    win = fft_window(parts, log_tau, max_len)
    c = compose(parts, win, _level_two_wide(win[1]))
    return Composed(c.values, first + c.first, c.fft_error, c.wrap)


def _level_two_wide(n: int) -> int:
    """``wide_from`` of :func:`._fft.compose` for a level-2 window of n points: double from
    ``LEVEL_TWO_DOUBLE_LEN`` points on (no count is transformed in long double), else the default."""
    return 2**62 if n >= LEVEL_TWO_DOUBLE_LEN else LONG_DOUBLE_COUNT


def representative(count: int, ratio: int) -> float:
    """h with the coarse representative loss (C + h/2)Δ' of a block of ``count`` steps: the centre
    (CR + (R − 1)/2 + count/2)Δ of the fine representatives in cell C, rounded to a multiple of
    2^−``_REPRESENTATIVE_BITS`` in units of Δ' (so the summed offset Σ h_b/2 is exact in a double and the
    bias per block is below 2^−11 Δ': centred, the lower end's test set τ-restriction is not shifted)."""
    scale = float(1 << _REPRESENTATIVE_BITS)
    return float(round((count + ratio - 1) / ratio * scale)) / scale


@dataclass(frozen=True)
class BlockLower:
    """The level-2 compositions of the binned quantised blocks: P-masses ``p`` (its wrap and the
    telescoped level-1 charge in its error) and tilted Q-masses ``a`` (charges in its error), on one
    coarse window, with loss s_K = (first + K + count/2)Δ' (``count`` = Σ_b h_b, :func:`representative`);
    the Â blocks are normalised, ``log_a_shift`` (to add to the lower end's ln A) holds their masses and
    ``log_slack`` its rounding."""

    p: Composed
    a: Composed
    count: float
    step: float
    log_a_shift: float
    log_slack: float


def lower_blocks(
    p: FloatArray, a: FloatArray, first: int, sh: Shape, step: float, log_tau: float, max_len: int
) -> BlockLower:
    """Two-level composition of the quantised pair (P-masses ``p``, normalised tilted Q-masses ``a``).

    Lemma 6 (``docs/pld.md`` §5a): the P-side error (subtracted) is the level-2 FFT error and wrap plus
    the telescoped ℓ₁ distances of the binned blocks to the exact binned blocks (2E₁ + 2W₁ per block,
    E₁ the level-1 FFT error and W₁ the wrap of the level-1 window, plus the binning's rounding); the
    A side's (added) the same with the A side's level-1 error and wrap (mass lost outside the level-1
    window must be charged there, unlike at level 2 where only folding, the safe direction, happens).
    """
    count = sh.m * sh.r + sh.rem
    counts = [(sh.m, sh.r)] + ([(sh.rem, 1)] if sh.rem else [])
    tau1 = log_tau - math.log(count)
    bp: list[_Block] = []
    ba: list[_Block] = []
    h_total = 0.0
    log_shift = slack = 0.0
    for c, times in counts:
        if c > 1:
            a0, n, (wp, wa) = _union_window([[(p, c)], [(a, c)]], tau1, max_len)
        else:
            a0, n, (wp, wa) = 0, p.size, (0.0, 0.0)
        h = representative(c, sh.ratio)
        h_total += times * h
        for vec, wr, out, tilt in ((p, wp, bp, None), (a, wa, ba, (h * sh.ratio - c) / 2)):
            y, j0, err = _level_one(vec, c, (a0, n, wr), first)
            z, c0, bin_err, top = bin_masses(y, j0, sh.ratio, step, tilt)
            l1 = widen_up(2 * (err + widen_up(wr, 4)) * top + bin_err, 8)
            if tilt is not None:  # Â side: normalised (the weights exceed 1; the r-th power must not overflow)
                z, l1, shift = _normalised(z, l1)
                log_shift += times * shift
                slack += times * abs(shift)
            out.append(_Block(z, c0, times, l1, _mass_up(z) + l1))
    first2 = sum(b.count * b.first for b in bp)
    win = fft_window([(b.z, b.count) for b in bp], log_tau, max_len)
    cp = compose([(b.z, b.count) for b in bp], win, _level_two_wide(win[1]))
    ca = compose([(b.z, b.count) for b in ba], (win[0], win[1], 0.0), _level_two_wide(win[1]))
    pc = Composed(cp.values, first2 + cp.first, cp.fft_error + _telescoped(bp), cp.wrap)
    ac = Composed(ca.values, first2 + ca.first, ca.fft_error + _telescoped(ba), 0.0)
    return BlockLower(pc, ac, h_total, sh.ratio * step, log_shift, rounding_error(4, slack + len(counts) + 1))


def _normalised(z: FloatArray, l1: float) -> tuple[FloatArray, float, float]:
    """(z/M, l1/M rounded up plus the division's rounding, ln M) for M the computed mass of z: the
    reference block is scaled by the same exact number M, so the ℓ₁ bound scales; ln M goes into the
    lower end's log scale (its rounding into the log slack)."""
    mass = float(np.sum(z))
    if not mass > 0:
        return z, l1, 0.0
    out = z / mass
    return out, float(widen_up(l1 / mass, 4)) + rounding_error(2, _mass_up(out)), math.log(mass)


def likely_two_level(count: int, scale: float, support: float) -> bool:
    """Whether :func:`blocked` is expected to compose one law in two levels: its spread test in loss
    units, where the grid step cancels (16√k·s against ``_SPREAD_RATIO`` × the bulk window's span).
    Speed only: the refinement's step model (:mod:`._stepmodel`) aims √2 finer where two levels double
    the width at a given step; :func:`blocked` itself decides on the realised vector."""
    return _spread_test(count, scale * scale, support)


def _spread_test(count: int, variance: float, support: float) -> bool:
    """The two-level spread test of :func:`blocked` and :func:`likely_two_level`: a count in
    [``BLOCK_MIN_COUNT``, ``_MAX_BLOCK_COUNT``] whose composed spread 16√(k·variance) is at least
    ``_SPREAD_RATIO`` times one step's ``support`` (variance and support in one unit: grid points there,
    loss here)."""
    return BLOCK_MIN_COUNT <= count <= _MAX_BLOCK_COUNT and 16 * math.sqrt(count * variance) >= _SPREAD_RATIO * support

"""Certified *lattice kernels* of a block of fixed mechanisms: what a backward recursion over the privacy-loss
lattice {nΔ} needs to take the expectation of a function through the block (``docs/selection.md`` §2.3).

A recursion that carries δ_rest(x) (the hockey-stick curve of whatever runs after the block, possibly adaptive)
through a block of fixed pairs needs E_P[δ_rest(x − L)], L the block's total privacy loss under P. The function
φ(p, q) = p·g(e^x q/p), g(y) = δ_rest(ln y), is what one outcome of mass (p, q) contributes; g is decreasing and
convex in y (a supremum of P(S) − yQ(S)), so φ is increasing in p, decreasing in q, positively homogeneous and
jointly convex (hence subadditive), with φ(p, 0) = p and φ(0, q) = 0.

* **Upper kernel**: the connect-the-dots *split* of every step (:mod:`._dominating`, Lemma 1: the true pair
  is a post-processing of it, so splitting raises Σφ), composed by FFT (:mod:`._fft`): P-masses ``values[j]``
  at losses (first + j)Δ with ``error`` bounding the FFT error and the mass outside the FFT window on any
  [0, 1]-weighted sum, and ``p_inf`` bounding P(some step at +∞) (windowed tails included, as in the grid).
  Hence E_P[g] ≤ Σ_j values_j·w_j + error + p_inf for every [0, 1]-valued w = δ_rest(x − ·) of this form.
* **Lower kernel**: the *pooled lattice pair* of every step. Start from the quantised cell pair with
  envelopes (m_c⁻, q_c⁺) (Lemma 2: quantising is a post-processing; lowering p and raising q lowers φ); pool
  consecutive cells, splitting a cell by fractions where needed (subadditivity and homogeneity of φ: pooling
  lowers Σφ), into groups whose pooled ratio P_G/Q_G is at least e^{n_GΔ} for a lattice point n_G: then
  φ(P_G, Q_G) ≥ P_G·g(e^{x − n_GΔ}) (g decreasing). :func:`pool` builds the groups greedily from the lowest
  cell up so that each group's ratio is e^{n_GΔ}(1 + ``POOL_MARGIN``) — pooled across a lattice point, no
  first-order rounding except in the last group, at the top of the law's range — and the result is the
  P-mass vector of the groups on the lattice. Per step the
  pooling costs O(Δ²), as the quantisation does. Composed by FFT, the lower end reads
  Σ_j values_j·w_j − error + p_inf (P-only mass counted at +∞, Q-only mass dropped: φ(0, q) = 0).

Each step's inequality holds for every g of this shape, and so does each one's inner function E[g(· − L)]
(a positive mixture of such g), so the block's composed kernels bound its expectation step by step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from optcomp._numerics import Accuracy, FloatArray
from optcomp._rounding import rounding_error, widen_down, widen_up
from optcomp.mechanisms import PrivacyLossLaw
from optcomp.pld._cells import _ATOM_UNITS, BYTES_PER_CELL, cells, window
from optcomp.pld._dominating import split
from optcomp.pld._fft import BYTES_PER_POINT, compose
from optcomp.pld._fft import window as fft_window
from optcomp.pld._query import tilt

#: Relative margin by which a pooled group is built above its lattice point e^{nΔ}: above the rounding of the
#: group's sums (a few hundred ulps), below any width a query asks for (a loss shift of 2⁻³⁷ per step).
LATTICE_POOL_MARGIN = rounding_error(1 << 16)
#: Roundings charged per cell summed into a group (the running sums, the fraction's products, the split).
_ROUNDINGS_PER_TERM = 8


@dataclass(frozen=True)
class LatticeKernel:
    """P-masses on the lattice of one block: ``values[j]`` at loss (``first`` + j)Δ; ``error`` bounds the
    floating-point and window error of any [0, 1]-weighted sum of them; ``p_inf`` bounds (above for an upper
    kernel, below for a lower one) the P-mass at +∞ (module docstring)."""

    step: float
    first: int
    values: FloatArray
    error: float
    p_inf: float

    @property
    def last(self) -> int:
        return self.first + self.values.size - 1


def _tail(accuracy: Accuracy, count: int) -> float:
    """ln of the per-step P-tail a law's window leaves out (as the grid's bulk windows)."""
    return math.log(accuracy.tail_mass) - math.log(8.0 * max(count, 1))


def _close(out: dict[int, float], group: list[float], n: int, step: float) -> None:
    """Add a closed group's P-mass (rounded down) at the largest lattice point n′ ≤ n whose e^{n′Δ} its
    certified ratio P⁻/Q⁺ reaches (its sums rounded outwards by ``_ROUNDINGS_PER_TERM`` roundings per cell)."""
    terms = group[2] + 2
    p_lo = widen_down(group[0], _ROUNDINGS_PER_TERM * terms + 4)
    q_hi = widen_up(group[1], _ROUNDINGS_PER_TERM * terms + 4)
    if p_lo > 0.0 and q_hi > 0.0:
        ratio = math.log(p_lo) - math.log(q_hi)
        slack = rounding_error(8, abs(math.log(p_lo)) + abs(math.log(q_hi)) + abs(n * step) + 1.0)
        n = min(n, math.floor((ratio - slack) / step))
        while n * step + slack > ratio:  # the float quotient may be one off
            n -= 1
        out[n] = out.get(n, 0.0) + p_lo


def _greedy(m: FloatArray, q: FloatArray, step: float, cells_in_order: range, upward: bool,
            out: dict[int, float]) -> None:
    """Pool the cells of ``cells_in_order`` (all with 0 < P, Q; :func:`pool`) into ``out``.

    Upward (cells by increasing loss): a group aims at the lattice point at or above the ratio of its first
    cell and takes cells until its pooled ratio reaches r = e^{nΔ}(1 + margin); downward, at the point at or
    below it, taking cells until the ratio falls to r. The cell that would carry the group past r is split by
    the fraction that makes the ratio exactly r; its remainder opens the next group. So every group but the
    last straddles its lattice point and gets it with no rounding; the last is rounded (:func:`_close`)."""
    group: list[float] = [0.0, 0.0, 0.0]  # P, Q, number of terms
    target: int | None = None
    for c in cells_in_order:
        p, qc = float(m[c]), float(q[c])
        while p > 0.0:
            if target is None:
                ratio = (math.log(p) - math.log(qc)) / step
                target = math.ceil(ratio) if upward else math.floor(ratio)
                group[:] = [p, qc, 1.0]
                break
            r = math.exp(target * step) * (1.0 + LATTICE_POOL_MARGIN)
            total_p, total_q = group[0] + p, r * (group[1] + qc)
            if (total_p <= total_q) if upward else (total_p >= total_q):
                group[0], group[1], group[2] = total_p, group[1] + qc, group[2] + 1.0
                break
            frac = (r * group[1] - group[0]) / (p - r * qc)
            frac = min(1.0, max(0.0, frac))
            group[0] += frac * p
            group[1] += frac * qc
            group[2] += 1.0
            _close(out, group, target, step)
            p, qc, target = (1.0 - frac) * p, (1.0 - frac) * qc, None
    if target is not None:
        _close(out, group, target, step)


def pool(m: FloatArray, q: FloatArray, step: float) -> tuple[int, FloatArray, float]:
    """The pooled lattice pair of one step (module docstring) from lower P-masses ``m`` and upper Q-masses
    ``q`` of consecutive cells, in order of increasing loss: (first lattice index, P-masses of the groups on
    the lattice from there, P-only mass).

    The cells below a junction are pooled upward from the lowest, those above it downward from the highest
    (:func:`_greedy`), so an atom at either end of the law's range (a Laplace law's ±ε) is pooled with the
    continuous part next to it; the two groups that meet at the junction are rounded. The junction is the
    pair of adjacent cells of least P-mass (the rounding costs O(mass·Δ) there)."""
    out: dict[int, float] = {}
    both = (m > 0.0) & (q > 0.0)
    p_only = float(np.sum(m[(m > 0.0) & ~(q > 0.0)]))
    live = np.flatnonzero(both)
    if live.size:
        pair = m[live[:-1]] + m[live[1:]] if live.size > 1 else m[live]
        k = int(np.argmin(pair)) + 1 if live.size > 1 else 1  # cells live[:k] upward, live[k:] downward
        mm, qq = m[live], q[live]
        _greedy(mm, qq, step, range(k), True, out)
        _greedy(mm, qq, step, range(live.size - 1, k - 1, -1), False, out)
    if not out:
        return 0, np.zeros(1), widen_down(p_only, 2 * m.size + 4)
    first = min(out)
    vec = np.zeros(max(out) - first + 1)
    for n, v in out.items():
        vec[n - first] = v
    return first, vec, widen_down(p_only, 2 * m.size + 4)


def _on_lattice(law: PrivacyLossLaw, step: float) -> tuple[PrivacyLossLaw, dict[int, float]]:
    """The law without its atoms that sit exactly on lattice points (ℓ = nΔ as reals), and those atoms' P-masses
    (lower envelopes: the law's atom masses are trusted to ``_ATOM_UNITS`` roundings) by lattice point: such an
    atom is its own group at ratio e^{nΔ} exactly (the pair's dQ = e^{−ℓ}dP), which a ratio re-checked from
    rounded sums could only place one point lower."""
    exact: dict[int, float] = {}
    keep = np.ones(law.atom_losses.size, dtype=bool)
    unit = Fraction(step)
    for i, (loss, p) in enumerate(zip(law.atom_losses.tolist(), law.atom_p.tolist(), strict=True)):
        n = round(loss / step)
        if p > 0.0 and Fraction(loss) == n * unit:
            exact[n] = exact.get(n, 0.0) + widen_down(p, _ATOM_UNITS)
            keep[i] = False
    if keep.all():
        return law, exact
    rest = PrivacyLossLaw(atom_losses=law.atom_losses[keep], atom_p=law.atom_p[keep], atom_q=law.atom_q[keep],
                          p_inf=law.p_inf, q_neg_inf=law.q_neg_inf, continuous=law.continuous)
    return rest, exact


def _law_vectors(law: PrivacyLossLaw, step: float, log_tail: float, max_cells: int) -> tuple[
    tuple[int, FloatArray, float], tuple[int, FloatArray, float]
]:
    """(upper, lower) of one law: (first lattice index, P-masses, P-mass at +∞) of its split and of its
    pooled lattice pair (atoms on lattice points placed there directly, :func:`_on_lattice`)."""
    c = cells(law, step, window(law, log_tail), max_cells)
    sp = split(c)
    up, _ = tilt(sp.log_masses, sp.first, step, 0.0, 1.0)
    rest, exact = _on_lattice(law, step)
    if rest is not law:
        c = cells(rest, step, window(law, log_tail), max_cells)
    m_lo, _ = tilt(c.lm_lo, c.first, step, 0.0, -1.0)
    q_hi, _ = tilt(c.lq_hi, c.first, step, 0.0, 1.0)
    first, low, p_only = pool(np.maximum(m_lo, 0.0), q_hi, step)
    if exact:
        lo_n = min(first, min(exact)) if np.any(low > 0) else min(exact)
        hi_n = max(first + low.size - 1, max(exact)) if np.any(low > 0) else max(exact)
        merged = np.zeros(hi_n - lo_n + 1)
        if np.any(low > 0):
            merged[first - lo_n : first - lo_n + low.size] = low
        for n, v in exact.items():
            merged[n - lo_n] += v
        first, low = lo_n, merged
    p_inf_lo = widen_down(c.p_inf_lo + p_only, 4)
    return (sp.first, up, sp.p_inf), (first, low, p_inf_lo)


def _block_p_inf(parts: list[tuple[float, int]], upper: bool) -> float:
    """1 − Π(1 − pᵢ)^{kᵢ}: P(some step at +∞), rounded outwards (as :func:`._windows.vectors`)."""
    log_fin = 0.0
    for p, k in parts:
        if p >= 1.0:
            return 1.0
        log_fin += k * math.log1p(-p)
    if upper:
        return min(1.0, widen_up(-math.expm1(widen_up(log_fin, 8)), 8))
    return max(0.0, widen_down(-math.expm1(widen_down(log_fin, 8)), 8))


def _compose(vecs: list[tuple[int, FloatArray, int]], step: float, accuracy: Accuracy, p_inf: float) -> LatticeKernel:
    """Πᵢ vᵢ^{*kᵢ} by FFT on a Chernoff window (:mod:`._fft`), its error charged; one step alone exactly."""
    first = sum(k * f for f, _, k in vecs)
    if len(vecs) == 1 and vecs[0][2] == 1:
        return LatticeKernel(step, first, vecs[0][1], 0.0, p_inf)
    parts = [(v, k) for _, v, k in vecs]
    max_len = accuracy.memory_cap // (BYTES_PER_POINT + 2 * BYTES_PER_POINT)
    win = fft_window(parts, math.log(accuracy.tail_mass / 4), max_len)
    comp = compose(parts, win)
    err = widen_up(comp.fft_error + comp.wrap, 16)
    return LatticeKernel(step, first + comp.first, np.asarray(comp.values, dtype=np.float64), err, p_inf)


def lattice_kernels(
    laws: list[tuple[PrivacyLossLaw, int]], step: float, accuracy: Accuracy, total_count: int | None = None
) -> tuple[LatticeKernel, LatticeKernel]:
    """The (upper, lower) lattice kernels of the block that runs ``count`` copies of each law, at grid step
    ``step`` (module docstring).

    Args:
        laws: the block's distinct laws (one direction) with their counts.
        step: the lattice step Δ > 0.
        accuracy: tail mass of the windows and memory cap (``accuracy.grid_step`` is not read).
        total_count: the number of fixed steps the windows' tail is shared by (default: this block's).

    Raises:
        GridTooLargeError: a law's window or the block's FFT needs more than the memory cap.
    """
    count = sum(k for _, k in laws)
    log_tail = _tail(accuracy, count if total_count is None else total_count)
    max_cells = accuracy.memory_cap // BYTES_PER_CELL
    ups, lows, p_up, p_lo = [], [], [], []
    for law, k in laws:
        (fu, vu, pu), (fl, vl, pl) = _law_vectors(law, step, log_tail, max_cells)
        ups.append((fu, vu, k))
        lows.append((fl, vl, k))
        p_up.append((pu, k))
        p_lo.append((pl, k))
    upper = _compose(ups, step, accuracy, _block_p_inf(p_up, True))
    lower = _compose(lows, step, accuracy, _block_p_inf(p_lo, False))
    return upper, lower


__all__ = ["LatticeKernel", "lattice_kernels", "pool"]

"""Certified composition of non-negative vectors on an integer lattice: tilt, tree, window, errors.

A node holds one or two vectors over lattice indices [offset, offset + size). Each vector is kept
*exponentially tilted and normalised*: the true masses are v(j) = arr(j)·exp(log_m − θ·j), so that the
part of the law that decides the answer (near the target loss) has entries of order 1 and an absolute
floating-point error is small relative to it. ``err`` bounds |arr − exact| entrywise (absolute, tilted
units); the caller applies it in its envelope's direction.

Merging is convolution (direct below 2¹⁶ products, else FFT with :func:`optcomp._rounding.fft_error_bound`);
errors propagate as e_x·mass_y + e_y·mass_x + 2e_x·e_y·m + (convolution error). After each merge the
node is cut to a window of ``WINDOW_SDS`` standard deviations: for the lower end around the first
vector's tilted mean, for the upper end from the *untilted* mean (the bulk of the law: moving it would
shift real probability) up to the tilted mean. The window only saves work; the cut-off mass is
accounted exactly:

* ``side="upper"`` (one vector, the P-law of a dominating pair): mass below the window is moved up to its
  first index (moving P-mass to a larger loss keeps domination: merge it with a Q-only atom to undo), mass
  above it goes to the +∞ atom ``inf_p``;
* ``side="lower"`` (two vectors, P and tilted Q of a dominated pair): both are cropped to the same
  indices — mapping those outcomes to a symbol ⊥ that the test set never contains is a post-processing.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from optcomp._numerics import FloatArray
from optcomp._rounding import fft_error_bound, log_sum_exp_down, log_sum_exp_up, rounding_error, widen_up

Side = Literal["upper", "lower"]
#: Half-width of the window in standard deviations (only tightness depends on it, never soundness).
WINDOW_SDS = 9.0
#: ln(1/τ)/2 of the Hoeffding distance kept on both sides of the untilted mean (τ = e⁻⁴⁶).
_HOEFFDING_HALF_LOG = 23.0
#: Direct convolution (relative error only) when the product of lengths is at most this.
_DIRECT_MAX = 2**22
#: Relative slack on masses moved by the window (covers their own float evaluation).
_MOVE_SLACK = rounding_error(64.0)


@dataclass(slots=True)
class Node:
    """Tilted vectors over lattice indices [offset, offset + size) (see the module docstring)."""

    offset: int
    arrs: list[FloatArray]
    errs: list[float]
    log_m: list[float]
    mean0: float  # untilted mean of the index (the bulk of the P law)
    var0: float  # untilted variance of the index
    inf_p: float
    range2: float = 0.0  # Σ over the independent items of (range of the item's index)², for Hoeffding
    moved: float = 0.0  # untilted P-mass moved up by windows so far (upper side)

    @property
    def size(self) -> int:
        return int(self.arrs[0].size)


def leaf(
    offset: int, arrs: list[FloatArray], log_m: list[float], mean0: float, var0: float, range2: float
) -> Node:
    """A leaf from exact-up-to-rounding tilted vectors (their rounding is the caller's relative η)."""
    return Node(offset, arrs, [0.0] * len(arrs), log_m, mean0, var0, 0.0, range2)


def _conv(a: FloatArray, b: FloatArray) -> tuple[FloatArray, float]:
    m = min(a.size, b.size)
    if a.size * b.size <= _DIRECT_MAX or m <= 64:
        out = np.convolve(a, b)
        return out, rounding_error(2.0 * (m + 1), float(np.max(out))) if out.size else 0.0
    from scipy import signal  # here: scipy.signal costs 0.3 s to import (the CLI's cold start)

    out = signal.fftconvolve(a, b)
    np.maximum(out, 0.0, out=out)
    n = a.size + b.size - 1
    mass = max(float(np.sum(a)), 1.0) * max(float(np.sum(b)), 1.0)
    return out, fft_error_bound(int(2 ** math.ceil(math.log2(n))), mass, 2)


def merge(x: Node, y: Node, theta: float, side: Side) -> Node:
    """Product of two nodes, windowed."""
    arrs: list[FloatArray] = []
    errs: list[float] = []
    for ax, ay, ex, ey in zip(x.arrs, y.arrs, x.errs, y.errs):
        out, e = _conv(ax, ay)
        m = min(ax.size, ay.size)
        errs.append(ex * float(np.sum(ay)) + ey * float(np.sum(ax)) + 2.0 * ex * ey * m + e)
        arrs.append(out)
    node = Node(
        x.offset + y.offset,
        arrs,
        errs,
        [a + b for a, b in zip(x.log_m, y.log_m)],
        x.mean0 + y.mean0,
        x.var0 + y.var0,
        x.inf_p + y.inf_p,
        x.range2 + y.range2,
        x.moved + y.moved,
    )
    return window(node, theta, side)


def window(node: Node, theta: float, side: Side) -> Node:
    """Cut ``node`` to its Hoeffding window, accounting the cut mass (module docstring)."""
    arr = node.arrs[0]
    size = arr.size
    total = float(np.sum(arr))
    if total <= 0.0 or size < 64:
        return node
    jj = np.arange(size, dtype=np.float64)
    mean = float(np.sum(jj * arr)) / total
    sd = math.sqrt(max(float(np.sum((jj - mean) ** 2 * arr)) / total, 0.0))
    h = WINDOW_SDS * sd + 2.0
    if side == "lower":
        lo = max(0, math.floor(mean - h))
        hi = min(size - 1, math.ceil(mean + h))
    else:
        # Upper end: keep the bulk too, far enough that Hoeffding makes the moved masses negligible.
        hoeff = math.sqrt(_HOEFFDING_HALF_LOG * node.range2) + 2.0
        bulk = node.mean0 - node.offset
        lo = max(0, math.floor(min(mean - h, bulk - WINDOW_SDS * math.sqrt(node.var0) - 2.0, bulk - hoeff)))
        hi = min(size - 1, math.ceil(max(mean + h, bulk + hoeff)))
    if hi < lo or (hi - lo + 1) > 0.8 * size:
        return node
    if side == "lower":
        arrs = [a[lo : hi + 1].copy() for a in node.arrs]
        return Node(
            node.offset + lo,
            arrs,
            node.errs,
            node.log_m,
            node.mean0,
            node.var0,
            node.inf_p,
            node.range2,
            node.moved,
        )
    err = node.errs[0]
    inf_p = node.inf_p
    new = arr[lo : hi + 1].copy()
    lm = node.log_m[0]
    moved_total = node.moved
    with np.errstate(divide="ignore", over="ignore"):
        if lo > 0:
            # Untilted P-mass below lo, bounded twice: directly (its tilted error is amplified by
            # e^{θ(lo − j)}), and as 1 − (certified mass from lo on), the law having total mass 1.
            j = np.arange(size, dtype=np.float64) + node.offset
            log_fac = lm - theta * j
            log_lo, log_hi = np.log(arr[:lo] + err), np.log(np.maximum(arr[lo:] - err, 0.0))
            fac_size = abs(lm) + np.abs(theta * j)  # operands of lm − θ·j (its rounding is relative to them)
            direct = log_sum_exp_up(log_lo + log_fac[:lo]) + _term_error(log_lo, fac_size[:lo]) + _MOVE_SLACK
            kept = log_sum_exp_down(log_hi + log_fac[lo:]) - _term_error(log_hi, fac_size[lo:])
            rest = -math.expm1(kept - _MOVE_SLACK * (size + 4)) if kept < 0.0 else 0.0
            # Hoeffding on the independent items (moves only go up, so the node's law is stochastically
            # above the plain product): P(index < lo) ≤ exp(−2t²/Σ range²), t = mean0 − lo.
            t = node.mean0 - 2.0 * abs(node.mean0) * _MOVE_SLACK - (node.offset + lo)
            hoeff = -2.0 * t * t / node.range2 if t > 0.0 and node.range2 > 0.0 else 0.0
            log_moved = min(direct, math.log(rest) if rest > 0.0 else -math.inf, hoeff) + _MOVE_SLACK
            moved = math.exp(log_moved + theta * (node.offset + lo) - lm) if log_moved > -math.inf else 0.0
            if not moved <= 1.0:  # more than unit tilted mass would inflate errors: keep everything
                return node
            new[0] += moved
            moved_total += math.exp(log_moved)
        if hi < size - 1:
            j = np.arange(hi + 1, size, dtype=np.float64) + node.offset
            tail = float(np.sum(np.exp(np.log(arr[hi + 1 :] + err) + lm - theta * j)))
            # Hoeffding on the plain product, plus every mass moved up so far (each can add at most
            # its own size to a right tail).
            t = (node.offset + hi + 1) - node.mean0 - 2.0 * abs(node.mean0) * _MOVE_SLACK
            if t > 0.0 and node.range2 > 0.0:
                tail = min(tail, math.exp(-2.0 * t * t / node.range2) + moved_total)
            inf_p += widen_up(tail, 64)
    return Node(
        node.offset + lo, [new], node.errs, node.log_m, node.mean0, node.var0, inf_p, node.range2, moved_total
    )


def _term_error(log_mass: FloatArray, fac_size: FloatArray) -> float:
    """Absolute error of the terms log(mass) + (lm − θ·j) fed to a log-sum-exp: log, the product θ·j,
    the subtraction and the final sum each round once, relative to operands of size at most |log mass|
    and ``fac_size`` = |lm| + |θ·j|, so each term is off by at most 4u·(|log mass| + fac_size) (−inf terms
    contribute nothing)."""
    size = np.abs(log_mass) + fac_size
    size = size[np.isfinite(size)]
    return float(rounding_error(4.0, float(np.max(size)))) if size.size else 0.0


def power(x: Node, c: int, theta: float, side: Side) -> Node:
    """x composed with itself c times (binary powering, windowed after every merge)."""
    result: Node | None = None
    base = x
    while True:
        if c & 1:
            result = base if result is None else merge(result, base, theta, side)
        c >>= 1
        if not c:
            break
        base = merge(base, base, theta, side)
    assert result is not None
    return result


def combine(leaves: list[Node], theta: float, side: Side) -> Node:
    """Product of all leaves in Huffman order (two shortest first), windowed after every merge."""
    heap: list[tuple[int, int, Node]] = [(nd.size, i, nd) for i, nd in enumerate(leaves)]
    heapq.heapify(heap)
    counter = len(heap)
    while len(heap) > 1:
        _, _, x = heapq.heappop(heap)
        _, _, y = heapq.heappop(heap)
        z = merge(x, y, theta, side)
        heapq.heappush(heap, (z.size, counter, z))
        counter += 1
    return heap[0][2]

"""Sums of non-negative terms of shallow rounding depth for the balls-in-bins laws: window sums from
dyadic block sums, prefix sums from the same blocks, and an accumulator that adds many terms pairwise.

**Why.** A sum of n non-negative floats computed by any tree whose paths from a term to the result hold
at most D roundings is within γ_D relative of the exact sum (Higham Lemma 3.1 applied along each path;
the relative errors of non-negative terms cannot cancel). Summed one after another (``numpy.convolve``'s
dot products, ``numpy.cumsum``, repeated ``out += term``) D is the number of terms, which on a fine
grid is tens of thousands per stage; compounded over the t-fold sum of an epoch (one relative bound per
law, :mod:`._allocation_lower`) that made a relative error of about t·γ_{10⁴} — 3·10⁻⁷ at t = 10⁵ —
that no finer grid removes. Here D is logarithmic:

* :class:`BlockSums`: T_k[i] = Σ_{i ≤ l < i + 2^k} x_l for every start i (T_k = T_{k−1} + T_{k−1} shifted by
  2^{k−1}: depth k), on rows padded with zeros (adding 0 is exact). A window of length L is the sum of the
  blocks of the binary digits of L, placed one after another: ≤ popcount(L) − 1 more additions, so depth
  ≤ 2·levels. Every window of a group of anchors is then a *slice* of each table (no gather), so one group
  of the merge costs a few vector operations instead of a convolution.
* :meth:`BlockSums.prefix`: Σ_{l < k} x_l for a vector of counts k, the blocks of k's binary digits
  (gathered per level), depth ≤ 2·levels.
* :class:`Accumulator`: terms added into a chunk buffer (at most ``chunk`` terms per entry), the chunk
  buffers summed pairwise as a binary counter: depth ≤ chunk + 2·⌈log₂(chunks + 1)⌉ (each buffer added
  and cleared only in the columns written: a stage's output reaches ln 2/h beyond its anchors).

Each class reports its depth; the caller charges γ of the sum of the depths along a term's path.
Underflow (a result below the normal range) is an absolute error per rounding, not a relative one: the
caller charges it by the number of operations feeding an entry (:func:`operations`).
"""

from __future__ import annotations

import numpy as np

from optcomp._numerics import FloatArray

#: Terms added into one chunk buffer of an :class:`Accumulator` before it joins the pairwise sum.
ACCUMULATOR_CHUNK = 16


class BlockSums:
    """Dyadic block sums of the rows of ``rows`` (shape (r, n)) padded by ``pad`` zeros on each side, up to
    blocks of 2^``levels`` entries (module docstring)."""

    def __init__(self, rows: FloatArray, pad: int, levels: int) -> None:
        r, n = rows.shape
        padded = np.zeros((r, n + 2 * pad))
        padded[:, pad : pad + n] = rows
        self.tables = [padded]
        for k in range(1, levels + 1):
            half = 1 << (k - 1)
            prev = self.tables[-1]
            if prev.shape[1] <= half:
                break
            self.tables.append(prev[:, :-half] + prev[:, half:])
        self.pad = pad
        self.n = n
        self.cache: dict[int, FloatArray] = {}

    @property
    def depth(self) -> int:
        """Roundings on any term's path to a :meth:`window` or :meth:`prefix` value: 2·(levels built)."""
        return 2 * len(self.tables)

    def window(self, start: int, length: int, count: int) -> FloatArray:
        """W[:, c] = Σ_{0 ≤ l < length} rows[:, start + c + l] for 0 ≤ c < ``count`` (rows index; entries outside
        [0, n) are the padding's zeros: −pad ≤ start, start + count + length − 1 ≤ n + pad). A view."""
        s = start + self.pad
        return self.sliding(length)[:, s : s + count]

    def sliding(self, length: int) -> FloatArray:
        """Every window of ``length`` entries of the padded rows, by start (cached per length: a stage meets a
        few hundred lengths, most of its groups one of a few short ones): the blocks of length's binary
        digits, largest first, placed one after another."""
        out = self.cache.get(length)
        if out is None:
            top = length.bit_length() - 1
            size = self.tables[0].shape[1] - length + 1
            out, s = self.tables[top][:, :size], 1 << top
            for k in range(top - 1, -1, -1):
                if length >> k & 1:
                    out = out + self.tables[k][:, s : s + size]
                    s += 1 << k
            self.cache[length] = out
        return out

    def prefix(self, counts: FloatArray | np.ndarray) -> FloatArray:
        """P[:, c] = Σ_{0 ≤ l < counts[c]} rows[:, l] (0 ≤ counts[c] ≤ n), from the blocks of each count's binary
        digits, largest first (``len(tables)`` must exceed the bit length of n)."""
        k = np.asarray(counts, dtype=np.int64)
        out = np.zeros((self.tables[0].shape[0], k.size))
        for level in range(len(self.tables) - 1, -1, -1):
            has = (k >> level & 1).astype(bool)
            if has.any():
                at = ((k[has] >> (level + 1)) << (level + 1)) + self.pad  # the block's first entry
                out[:, has] += self.tables[level][:, at]
        return out


class Accumulator:
    """A (rows, size) array summed from terms: :meth:`target` gives the buffer the next term is added into
    (each entry at most once per term, within the columns it names); every ``chunk`` terms the buffer joins a
    binary counter of pairwise sums (module docstring). Only the columns a buffer was written in are added
    or cleared (the rest are zeros: adding them is exact), and cleared buffers are reused."""

    def __init__(self, rows: int, size: int, chunk: int = ACCUMULATOR_CHUNK) -> None:
        self.shape = (rows, size)
        self.chunk = chunk
        self.count = 0
        self.chunks = 0
        self.terms = 0  # terms added so far
        self.free: list[FloatArray] = []
        self.buffer, self.span = np.zeros(self.shape), (size, 0)
        self.stack: list[tuple[int, FloatArray, tuple[int, int]]] = []  # (level, sum of 2^level chunks, columns)

    def target(self, lo: int, hi: int) -> FloatArray:
        """The buffer the next term is added into, in its columns [lo, hi) only (one term: each entry once)."""
        if self.count == self.chunk:
            self._push()
        self.count += 1
        self.terms += 1
        self.span = (min(self.span[0], lo), max(self.span[1], hi))
        return self.buffer

    def _push(self) -> None:
        merged, span, level = self.buffer, self.span, 0
        while self.stack and self.stack[-1][0] == level:
            _, other, cols = self.stack.pop()
            if cols[1] - cols[0] > span[1] - span[0]:  # add the narrower into the wider (a + b = b + a)
                merged, other, span, cols = other, merged, cols, span
            if cols[0] < cols[1]:
                merged[:, cols[0] : cols[1]] += other[:, cols[0] : cols[1]]
                other[:, cols[0] : cols[1]] = 0.0
            self.free.append(other)
            span = (min(cols[0], span[0]), max(cols[1], span[1]))
            level += 1
        self.stack.append((level, merged, span))
        self.chunks += 1
        self.buffer = self.free.pop() if self.free else np.zeros(self.shape)
        self.span = (self.shape[1], 0)
        self.count = 0

    def total(self) -> FloatArray:
        """The sum of every term (the counter's sums added smallest first)."""
        if self.count:
            self._push()
        if not self.stack:
            return np.zeros(self.shape)
        out = self.stack[-1][1].copy()
        for _, part, (first, stop) in reversed(self.stack[:-1]):
            if first < stop:
                out[:, first:stop] += part[:, first:stop]
        return out

    @property
    def depth(self) -> int:
        """Roundings on any term's path to :meth:`total`: chunk (its chunk buffer) + level (the pairwise sums)
        + the number of counter entries (the final sum), with level and entries ≤ bit length of chunks + 1."""
        return self.chunk + 2 * (self.chunks + 1).bit_length()


def operations(terms: int, length: int, size: int) -> int:
    """A bound on the roundings feeding one entry of a sum of ``terms`` terms, each a product of a window of
    at most ``length`` entries (the far field: a prefix of at most ``size``) with one or two factors: its
    additions and products, the pairwise merges, for the underflow charge (module docstring)."""
    return terms * (max(length, size) + 4) + 2 * terms + 64

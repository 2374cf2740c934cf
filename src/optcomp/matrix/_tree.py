"""Exact Δ² of the DP-FTRL binary tree under b-min-sep participation: an integer max-plus dynamic program.

For the tree strategy (:class:`optcomp.matrix.Tree`) C is the {0, 1} node–step incidence matrix, so its
Gram matrix is non-negative and Δ² = max_π Σ_v |π ∩ v|² over the released nodes v (``docs/matrix.md``
P4). The program computes this maximum exactly, in integers (Kairouz et al., arXiv 2103.00039, App. D
states such a program; this one is our own, proved in ``docs/matrix.md`` P4):

**State.** For a node v of length L whose first r ≤ L steps are real (r < L only at the right edge of a
padded tree), and m ≥ 1, let T_v[m][a][z] be the largest Σ_{u ⊆ v released} |π ∩ u|² over patterns π in
v's real steps with |π| = m, first participation a steps after v's start and last one z steps before v's
real end, where a and z are *clipped* at c = min_sep − 1 (the value c stands for "≥ c"). The empty
pattern has value 0.

**Merge.** v = (left, right), left full (r₁ = L₁) whenever the right holds a real step. A pattern of v is a
pattern of the left, of the right, or both joined: the joint is allowed iff the gap between the left's
last and the right's first participation, z₁ + a₂ + 1, is ≥ min_sep, i.e. z₁ + a₂ ≥ c — decided exactly
by the clipped values (if either is clipped, z₁ + a₂ ≥ c holds). New offsets: a = a₁ (or min(c, L₁ + a₂)
from the right alone), z = z₂ (or min(c, z₁ + r₂)). Node v adds m² if released. Nodes with equal
(L, r) have equal tables and are computed once.

**Restarts** join the trees' root tables in sequence with nothing added above them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

#: Most states (k + 1)(c + 1)² of one table (64 MiB of int64): beyond it the program is refused, naming min_sep.
MAX_STATES = 2**23
#: The value of an infeasible state (any negative value is infeasible: feasible values are ≥ 0).
_NEG = -(1 << 40)

Table = npt.NDArray[np.int64]  # shape (k + 1, c + 1, c + 1); index 0 unused (the empty pattern is 0)


@dataclass
class _Program:
    k: int
    c: int
    completion: bool

    def empty(self) -> Table:
        return np.full((self.k + 1, self.c + 1, self.c + 1), _NEG, dtype=np.int64)

    def leaf(self) -> Table:
        t = self.empty()
        t[1, 0, 0] = 1  # the leaf is a released node containing the one participation
        return t

    def shift_z(self, t: Table, by: int) -> Table:
        """z ↦ min(c, z + by) (the pattern's last participation moves ``by`` further from the end)."""
        if by == 0:
            return t.copy()
        c, out = self.c, self.empty()
        if by <= c:
            out[:, :, by:c] = t[:, :, : c - by]
        out[:, :, c] = t[:, :, max(0, c - by) :].max(axis=2)
        return out

    def shift_a(self, t: Table, by: int) -> Table:
        """a ↦ min(c, a + by)."""
        return np.ascontiguousarray(self.shift_z(t.transpose(0, 2, 1), by).transpose(0, 2, 1))

    def join(self, left: Table, right: Table, l1: int, r2: int, released: bool) -> Table:
        """The table of a node whose children have tables ``left`` (full, length l1) and ``right`` (r2 real)."""
        out = np.maximum(self.shift_z(left, r2), self.shift_a(right, l1))
        # S[m][t][z] = max_{a ≥ t} right[m][a][z]; the joint needs a₂ ≥ c − z₁.
        suffix = np.maximum.accumulate(right[:, ::-1, :], axis=1)[:, ::-1, :]
        live_l = [m for m in range(1, self.k + 1) if left[m].max() >= 0]
        live_r = [m for m in range(1, self.k + 1) if right[m].max() >= 0]
        for m1 in live_l:
            for m2 in live_r:
                if m1 + m2 > self.k:
                    continue
                a_mat, b_mat = left[m1], suffix[m2][::-1, :]  # b_mat[z₁] = S[c − z₁]
                best = out[m1 + m2]
                live_b = b_mat.max(axis=1) >= 0
                for z1 in np.flatnonzero((a_mat.max(axis=0) >= 0) & live_b):
                    rows = np.flatnonzero(a_mat[:, z1] >= 0)  # sparse for small nodes: update those rows only
                    best[rows] = np.maximum(best[rows], a_mat[rows, z1, None] + b_mat[z1][None, :])
        out[out < 0] = _NEG
        if released:
            squares = (np.arange(self.k + 1, dtype=np.int64) ** 2)[:, None, None]
            out = np.where(out >= 0, out + squares, _NEG)
        return out

    def join_max(self, left: Table, right: Table, released: bool) -> int:
        """max over all states of :meth:`join`'s table, in O(k²c) (the root needs no table)."""
        squares = [m * m if released else 0 for m in range(self.k + 1)]
        best = max([0] + [int(t[m].max()) + squares[m] for t in (left, right) for m in range(1, self.k + 1)
                          if t[m].max() >= 0])
        col_left = left.max(axis=1)  # [m][z₁] = max_a left[m][a][z₁]
        row_right = np.maximum.accumulate(right.max(axis=2)[:, ::-1], axis=1)  # [m][c − z₁] = max_{a ≥ c − z₁}
        for m1 in range(1, self.k + 1):
            for m2 in range(1, self.k + 1 - m1):
                ok = (col_left[m1] >= 0) & (row_right[m2] >= 0)
                if ok.any():
                    joint = col_left[m1][ok] + row_right[m2][ok]
                    best = max(best, int(joint.max()) + squares[m1 + m2])
        return best

    def root_max(self, length: int, real: int) -> int:
        """The largest value of the node (``length``, ``real``) (its table is not built)."""
        if real == 0:
            return 0
        if length == 1:
            return 1
        half = length // 2
        memo: dict[tuple[int, int], Table] = {}
        left = self.node(half, min(real, half), memo)
        right = self.node(half, max(0, real - half), memo)
        return self.join_max(left, right, self.completion or real == length)

    def node(self, length: int, real: int, memo: dict[tuple[int, int], Table]) -> Table:
        """The table of a dyadic node of ``length`` steps whose first ``real`` are real steps."""
        key = (length, real)
        if key in memo:
            return memo[key]
        if real == 0:
            table = self.empty()
        elif length == 1:
            table = self.leaf()
        else:
            half = length // 2
            left = self.node(half, min(real, half), memo)
            r2 = max(0, real - half)
            right = self.node(half, r2, memo)
            released = self.completion or real == length
            table = self.join(left, right, half, r2, released)
        memo[key] = table
        return table


def tree_sensitivity_squared(step_counts: tuple[int, ...], completion: bool, min_sep: int, k: int) -> int:
    """max_π Σ_v |π ∩ v|² over b-min-sep patterns with ≤ k participations, exact (module docstring).

    Args:
        step_counts: the steps of each tree (restarts), each ≥ 1.
        completion: whether each tree is padded to a power of two with all nodes released.
        min_sep: b ≥ 1 (y − x convention).
        k: the most participations, ≥ 1.
    """
    if not step_counts:
        raise ValueError("step_counts must be non-empty")
    if (k + 1) * min_sep * min_sep > MAX_STATES:
        raise ValueError(
            f"min_sep must satisfy (k + 1)·min_sep² <= {MAX_STATES} for the tree's dynamic program (its tables "
            f"hold that many integers), got min_sep={min_sep} with k={k} participations"
        )
    program = _Program(k, min_sep - 1, completion)
    sizes = [1 << (m - 1).bit_length() for m in step_counts]
    if len(step_counts) == 1:
        return program.root_max(sizes[0], step_counts[0])
    total = program.node(sizes[0], step_counts[0], {})
    length = step_counts[0]
    for size, m in zip(sizes[1:-1], step_counts[1:-1], strict=True):
        total = program.join(total, program.node(size, m, {}), length, m, released=False)
        length += m
    last = program.node(sizes[-1], step_counts[-1], {})
    return program.join_max(total, last, released=False)


def tree_brute_force(step_counts: tuple[int, ...], completion: bool, patterns: list[tuple[int, ...]]) -> int:
    """max over the given patterns of Σ_v |π ∩ v|², by listing the released nodes (tests, small n)."""
    nodes: list[tuple[int, int]] = []
    start = 0
    for m in step_counts:
        size = 1 << (m - 1).bit_length()
        length = 1
        while length <= size:
            for lo in range(0, size, length):
                if (completion and lo < m) or lo + length <= m:
                    nodes.append((start + lo, start + min(lo + length, m)))
            length *= 2
        start += m
    return max(
        (sum(sum(1 for p in pi if lo <= p < hi) ** 2 for lo, hi in nodes) for pi in patterns), default=0
    )

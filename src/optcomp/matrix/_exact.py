"""Exact rational helpers of the sensitivity room: VecSens in integers, pattern values, outward floats.

Everything here is exact (``fractions.Fraction`` or Python integers over one common denominator); the
only roundings are :func:`float_down`/:func:`float_up`, which round a rational to the adjacent float on
the stated side.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

from optcomp._rounding import next_down, next_up


def float_down(x: Fraction) -> float:
    """The largest float ≤ x (``float`` rounds to nearest; one step down when it rounded up)."""
    f = float(x)
    return next_down(f) if Fraction(f) > x else f


def float_up(x: Fraction) -> float:
    """The smallest float ≥ x."""
    f = float(x)
    return next_up(f) if Fraction(f) < x else f


def sqrt_down(x: Fraction) -> float:
    """The largest float r with r² ≤ x found from √ of the rounded-down float (checked exactly)."""
    if x <= 0:
        return 0.0
    r = math.sqrt(float_down(x))
    while Fraction(r) ** 2 > x:
        r = next_down(r)
    return r


def sqrt_up(x: Fraction) -> float:
    """A float r ≥ √x with r² ≥ x checked exactly (x ≥ 0); exact squares come back exact."""
    if x <= 0:
        return 0.0
    r = math.sqrt(float_up(x))
    while Fraction(r) ** 2 < x:
        r = next_up(r)
    return r


def common_denominator(values: Sequence[Fraction]) -> tuple[int, list[int]]:
    """(D, [D·v]): the values over one integer denominator (exact)."""
    d = math.lcm(*(v.denominator for v in values)) if values else 1
    return d, [v.numerator * (d // v.denominator) for v in values]


def vecsens_int(ints: Sequence[int], min_sep: int, k: int) -> tuple[int, tuple[int, ...]]:
    """max_π Σ_{i∈π} ints[i] over b-min-sep sets π with |π| ≤ k, and a maximiser (exact integers).

    The max-plus dynamic program of "(Amplified) Banded Matrix Factorization" (arXiv 2306.08153,
    Algorithm 3, VecSens): F[i][m] = max(x[i] + F[i + b][m − 1], F[i + 1][m]); the maximiser is read back
    from the table.
    """
    n = len(ints)
    # best[m][i]: the best value of at most m participations within steps i..n-1 (0 beyond n).
    best = [[0] * (n + min_sep + 1)]
    for _ in range(k):
        prev, row = best[-1], [0] * (n + min_sep + 1)
        for i in range(n - 1, -1, -1):
            row[i] = max(row[i + 1], ints[i] + prev[i + min_sep])
        best.append(row)
    witness: list[int] = []
    i, m = 0, k
    while i < n and m > 0:
        if best[m][i] == best[m][i + 1]:
            i += 1
        else:
            witness.append(i)
            i, m = i + min_sep, m - 1
    return best[k][0], tuple(witness)


def vecsens(values: Sequence[Fraction], min_sep: int, k: int) -> tuple[Fraction, tuple[int, ...]]:
    """:func:`vecsens_int` on rationals, over one common denominator (exact)."""
    d, ints = common_denominator(values)
    value, witness = vecsens_int(ints, min_sep, k)
    return Fraction(value, d), witness


def greedy_signed_norm(columns: Sequence[dict[int, Fraction]]) -> Fraction:
    """‖Σ_i s_i c_i‖² with signs s_i chosen greedily (s_i = sign⟨Σ_{j<i} s_j c_j, c_i⟩): an exhibited value."""
    acc: dict[int, Fraction] = {}
    for col in columns:
        inner = sum((acc.get(r, Fraction(0)) * v for r, v in col.items()), Fraction(0))
        sign = -1 if inner < 0 else 1
        for r, v in col.items():
            acc[r] = acc.get(r, Fraction(0)) + sign * v
    return sum((v * v for v in acc.values()), Fraction(0))


def pattern_lower_value(columns: Sequence[dict[int, Fraction]]) -> Fraction:
    """An exhibited lower bound on sup_g ‖Σ_{i∈π} c_i g_iᵀ‖_F² for one π: the larger of
    Σ‖c_i‖² (g_i orthonormal) and ‖Σ s_i c_i‖² (g_i = s_i·u, greedy signs)."""
    trace = sum((v * v for col in columns for v in col.values()), Fraction(0))
    return max(trace, greedy_signed_norm(columns))

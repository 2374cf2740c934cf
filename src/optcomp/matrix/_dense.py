"""Certified Δ² brackets for a general (dense) strategy: float Gram matrices with forward error bounds.

The Gram matrix X = CᵀC of an n_out × n float matrix is computed in float64; each entry's error is at
most γ_{n_out}·(|C|ᵀ|C|)_{ij} (Higham §3.1, eq. (3.5); :func:`optcomp._rounding.dot_error_bound`) plus
(n_out + 1) smallest subnormals for products that underflow, so
X_lo = X − E and X_hi = X + E, each moved one ulp outward, bracket X entrywise. Upper ends are then
dynamic programs on X_hi (or |X|) whose every addition is rounded up (``nextafter``): a float sum of
non-negative terms rounded up after each addition is ≥ the exact sum. Lower ends are exhibited: a
concrete participation set π and gradients g_i, evaluated exactly in ``Fraction``s from C's columns
(:func:`optcomp.matrix._exact.pattern_lower_value`).

Methods (``docs/matrix.md`` P2):

* ``banded-vecsens``: columns at distance ≥ min_sep have disjoint row supports (checked exactly on C's
  zero pattern), so Δ² = max_π Σ_{i∈π} ‖c_i‖² — VecSens on the diagonal bracket;
* ``alg4-bound``: otherwise, the row-wise VecSens of |X| followed by VecSens on the row maxima
  (arXiv 2306.08153, Algorithm 4), an upper bound for any C;
* ``abs-bound``: fixed-epoch, Σ_{i,j∈π} |X_ij| per pattern (arXiv 2306.08153, Eq. (5)); exact when
  X ≥ 0 is certified and X is exact.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from optcomp._numerics import Progress
from optcomp._rounding import dot_error_bound, next_down, next_up, widen_up
from optcomp.matrix._exact import pattern_lower_value, vecsens

FloatArray = npt.NDArray[np.float64]

#: Most bytes of the Gram bracket's float64 working arrays (C, and about eight n × n arrays live at once).
MAX_DENSE_BYTES = 2**31
#: Most elementary float operations: the two Gram products (n_out·n² each) and the VecSens passes
#: (k of them over the n × n bound, a few operations per entry): about 2⁻²⁸ s each on one core, so ~4 min.
MAX_DENSE_WORK = 2**36


def check_cost(n_out: int, n: int, k: int, what: str) -> None:
    """Refuse (``ValueError`` naming n) the Gram bracket of an n_out × n strategy with k participations
    when its arrays or its work exceed :data:`MAX_DENSE_BYTES` or :data:`MAX_DENSE_WORK`, before any array
    is built."""
    memory = 8 * (n_out * n + 8 * n * n)
    work = n * n * (2 * n_out + 4 * k)
    if memory > MAX_DENSE_BYTES or work > MAX_DENSE_WORK:
        # the largest square strategy with the same participations per step that fits both limits
        fits = int(min(math.sqrt(MAX_DENSE_BYTES / 72), (MAX_DENSE_WORK / (2 + 4 * k / n)) ** (1 / 3)))
        raise ValueError(
            f"n: the sensitivity of {what} under this pattern goes through its float Gram matrix: about "
            f"{memory / 2**30:.3g} GiB of arrays and {work:.3g} operations for n={n} steps and {k} participations "
            f"(limits {MAX_DENSE_BYTES / 2**30:g} GiB, {MAX_DENSE_WORK:.3g}); use at most about {fits} steps "
            "(as many participations per step), fewer participations, or an exact route (Toeplitz: bands <= min_sep, or non-negative "
            "non-increasing coefficients)"
        )


def gram_bracket(c: FloatArray) -> tuple[FloatArray, FloatArray]:
    """(X_lo, X_hi) with X_lo ≤ CᵀC ≤ X_hi entrywise (module docstring)."""
    n_out = c.shape[0]
    x = c.T @ c
    abs_gram = np.abs(c).T @ np.abs(c)
    factor = dot_error_bound(n_out, 1.0)  # γ·1/(1 − γ), rounded up; linear in abs_sum
    # one product rounding covered by the widening; the absolute term covers products that underflow to
    # subnormals or 0 (relative bounds do not hold there: each such product errs by ≤ the smallest subnormal).
    err = widen_up(factor * abs_gram, 4) + (n_out + 1) * math.ulp(0.0)
    return next_down(x - err), next_up(x + err)


def _vecsens_up(
    values: FloatArray, min_sep: int, k: int, progress: Progress | None = None
) -> FloatArray:
    """Row-wise VecSens of a (rows × n) non-negative float array, every addition rounded up."""
    rows, n = values.shape
    f = np.zeros((rows, n + min_sep))
    for done in range(1, k + 1):
        f[:, :n] = next_up(values + f[:, min_sep : min_sep + n])
        f = np.maximum.accumulate(f[:, ::-1], axis=1)[:, ::-1]
        if progress is not None:
            progress(done, k)
    out: FloatArray = f[:, 0]
    return out


def supports_disjoint(c: FloatArray, distance: int) -> bool:
    """Whether columns i < j with j − i ≥ ``distance`` have disjoint row supports (exact, from zeros)."""
    nonzero = c != 0.0
    rows = np.arange(c.shape[0])
    first = np.where(nonzero.any(axis=0), np.where(nonzero, rows[:, None], c.shape[0]).min(axis=0), c.shape[0])
    last = np.where(nonzero.any(axis=0), np.where(nonzero, rows[:, None], -1).max(axis=0), -1)
    if distance >= c.shape[1]:
        return True
    prefix_last = np.maximum.accumulate(last)[: c.shape[1] - distance]
    return bool(np.all(prefix_last < first[distance:]))


def _column(c: FloatArray, i: int) -> dict[int, Fraction]:
    col = c[:, i]
    return {int(r): Fraction(float(col[r])) for r in np.flatnonzero(col)}


def _lower(c: FloatArray, candidates: list[tuple[int, ...]]) -> tuple[Fraction, tuple[int, ...]]:
    """The best exhibited value over candidate patterns (exact)."""
    best = Fraction(0)
    witness: tuple[int, ...] = ()
    for pi in candidates:
        value = pattern_lower_value([_column(c, i) for i in pi])
        if value > best:
            best, witness = value, pi
    return best, witness


def single(c: FloatArray) -> tuple[Fraction, Fraction, str, tuple[int, ...]]:
    """Δ² = max_i ‖c_i‖² (exact lower end from the best column; upper from the bracketed diagonal)."""
    _, x_hi = gram_bracket(c)
    diag = np.diag(x_hi)
    i = int(np.argmax(diag))
    lower = pattern_lower_value([_column(c, i)])
    return lower, max(lower, Fraction(float(diag.max()))), "single-participation", (i,)


def min_sep(
    c: FloatArray, sep: int, k: int, progress: Progress | None = None
) -> tuple[Fraction, Fraction, str, tuple[int, ...]]:
    """Δ² bracket under b-min-sep participation with ≤ k participations (module docstring)."""
    n = c.shape[1]
    x_lo, x_hi = gram_bracket(c)
    diag_hi = [Fraction(float(v)) for v in np.diag(x_hi)]
    diag_value, diag_witness = vecsens(diag_hi, sep, k)
    progression = tuple(range(0, min(n, k * sep), sep))
    if supports_disjoint(c, sep):
        lower, witness = _lower(c, [diag_witness, progression])
        return lower, max(lower, diag_value), "banded-vecsens", witness
    nonnegative = bool(np.all(x_lo >= 0.0))
    bound = np.maximum(np.abs(x_lo), np.abs(x_hi))
    row_max = _vecsens_up(bound, sep, k, progress)
    upper_float = float(_vecsens_up(row_max[None, :], sep, k)[0])
    _, row_witness = vecsens([Fraction(float(v)) for v in row_max], sep, k)
    lower, witness = _lower(c, [diag_witness, row_witness, progression])
    method = "nonnegative-gram alg4-bound" if nonnegative else "alg4-bound"
    return lower, max(lower, Fraction(upper_float)), method, witness


def fixed_epoch(c: FloatArray, epochs: int) -> tuple[Fraction, Fraction, str, tuple[int, ...]]:
    """Δ² bracket under (k, b)-fixed-epoch participation: the b patterns {j, j + b, …} one by one."""
    n = c.shape[1]
    b = n // epochs
    x_lo, x_hi = gram_bracket(c)
    patterns = [tuple(range(j, n, b)) for j in range(b)]
    if supports_disjoint(c, b):
        sums = [sum((Fraction(float(x_hi[i, i])) for i in pi), Fraction(0)) for pi in patterns]
        method = "fixed-epoch-orthogonal"
    else:
        bound = np.maximum(np.abs(x_lo), np.abs(x_hi))
        sums = [sum((Fraction(float(v)) for v in bound[np.ix_(pi, pi)].ravel()), Fraction(0)) for pi in patterns]
        method = "fixed-epoch-abs-bound"
    j = max(range(b), key=lambda i: sums[i])
    lower, witness = _lower(c, [patterns[j]])
    return lower, max(lower, sums[j]), method, witness

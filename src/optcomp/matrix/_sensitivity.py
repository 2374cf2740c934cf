"""``matrix.sensitivity(strategy, pattern)``: a certified bracket on Δ (and Δ²) and the method used.

Δ² = max_{π∈Π} sup_{‖g_i‖≤1} ‖Σ_{i∈π} c_i g_iᵀ‖_F² (``docs/matrix.md`` §1). Each (strategy, pattern)
pair has one small function in :data:`_ROUTES` (a registry, no isinstance ladder). Exact methods
(``SensitivityBound.exact``) return lower = upper as one rational:

* ``single-participation``: Δ² = max_i ‖c_i‖²;
* ``banded-vecsens``: C has ≤ b bands and min_sep ≥ b, so columns of one π are orthogonal and
  Δ² = max_π Σ‖c_i‖² (VecSens, arXiv 2306.08153 Alg. 3);
* ``toeplitz-closed-form``: Toeplitz coefficients non-negative and non-increasing (checked exactly on the
  rationals): the worst π is {0, b, …, (k − 1)b} and Δ² = ‖Σ_{j<k} c_{jb}‖² (Kalinin–Lampert, arXiv
  2405.13763, Thm 2, as cited by jax_privacy ``toeplitz.minsep_sensitivity_squared``);
* ``fixed-epoch-orthogonal`` / ``fixed-epoch-nonnegative``: the b patterns of (k, b)-fixed-epoch, each
  exact (orthogonal columns, or X ≥ 0 so equal g_i attain the sup);
* ``tree-dp``: the integer dynamic program of :mod:`optcomp.matrix._tree`.

Otherwise (``optcomp.matrix._dense``) a certified upper bound (``alg4-bound``, ``abs-bound``) beside an
exhibited lower bound: the ``witness`` participation set, evaluated exactly. Every Δ² end is an exact
``Fraction``; the float ends of :attr:`SensitivityBound.squared` and Δ are rounded outward.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from optcomp._numerics import Bound
from optcomp.matrix import _dense
from optcomp.matrix._exact import float_down, float_up, sqrt_down, sqrt_up, vecsens_int
from optcomp.matrix._pattern import FixedEpoch, MinSep, Pattern, Single, check_pattern
from optcomp.matrix._strategy import Blt, Dense, Toeplitz, Tree
from optcomp.matrix._tree import tree_sensitivity_squared


@dataclass(frozen=True)
class SensitivityBound:
    """A certified bracket on the L2 sensitivity Δ of C X under a participation pattern.

    Attributes:
        squared_lower: an exact rational ≤ Δ² (attained by ``witness`` where one is given).
        squared_upper: an exact rational ≥ Δ².
        method: how it was obtained (module docstring).
        witness: a participation set attaining ``squared_lower`` (exhibited lower bound), or ().
    """

    squared_lower: Fraction
    squared_upper: Fraction
    method: str
    witness: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if not 0 <= self.squared_lower <= self.squared_upper:
            raise ValueError(f"a sensitivity bracket needs 0 <= lower <= upper, got {self.squared_lower}, {self.squared_upper}")

    @property
    def exact(self) -> bool:
        """Whether Δ² is known exactly (``squared_lower == squared_upper``)."""
        return self.squared_lower == self.squared_upper

    @property
    def squared(self) -> Bound:
        """Δ² as floats rounded outward."""
        return Bound(float_down(self.squared_lower), float_up(self.squared_upper))

    @property
    def lower(self) -> float:
        """A float ≤ Δ."""
        return sqrt_down(self.squared_lower)

    @property
    def upper(self) -> float:
        """A float ≥ Δ."""
        return sqrt_up(self.squared_upper)

    @property
    def bound(self) -> Bound:
        """Δ as a :class:`~optcomp.Bound` (outward)."""
        return Bound(self.lower, self.upper)


def _exact(value: Fraction, method: str, witness: tuple[int, ...] = ()) -> SensitivityBound:
    return SensitivityBound(value, value, method, witness)


# ---------------------------------------------------------------------------------------------
# Toeplitz (and BSR): exact integer arithmetic over the coefficients' common denominator.
# ---------------------------------------------------------------------------------------------


def _toeplitz_value(s: Toeplitz, pi: tuple[int, ...]) -> Fraction:
    """‖Σ_{i∈π} c_i‖² exactly (the value of π with equal g_i)."""
    d, ints = s._scaled
    v = [0] * s.n
    for i in pi:
        for t, c in enumerate(ints[: s.n - i]):
            v[i + t] += c
    return Fraction(sum(x * x for x in v), d * d)


def _non_increasing(coefs: tuple[Fraction, ...]) -> bool:
    return coefs[-1] >= 0 and all(a >= b for a, b in itertools.pairwise(coefs))


def _toeplitz_single(s: Toeplitz, p: Single) -> SensitivityBound:
    d2, norms = s.scaled_column_norms_squared()
    return _exact(Fraction(norms[0], d2), "single-participation", (0,))


def _toeplitz_min_sep(s: Toeplitz, p: MinSep) -> SensitivityBound:
    k, b = p.participations(s.n), p.min_sep
    if k == 1:
        return _toeplitz_single(s, Single())
    if b >= s.bands:
        d2, norms = s.scaled_column_norms_squared()
        value, witness = vecsens_int(norms, b, k)
        return _exact(Fraction(value, d2), "banded-vecsens", witness)
    if _non_increasing(s.coefs):
        witness = tuple(range(0, k * b, b))
        return _exact(_toeplitz_value(s, witness), "toeplitz-closed-form", witness)
    return _dense_route(s, p)


def _toeplitz_fixed_epoch(s: Toeplitz, p: FixedEpoch) -> SensitivityBound:
    b = s.n // p.epochs
    patterns = [tuple(range(j, s.n, b)) for j in range(b)]
    if b >= s.bands:
        d2, norms = s.scaled_column_norms_squared()
        sums = [sum(norms[i] for i in pi) for pi in patterns]
        j = max(range(b), key=lambda i: sums[i])
        return _exact(Fraction(sums[j], d2), "fixed-epoch-orthogonal", patterns[j])
    if all(c >= 0 for c in s.coefs):
        # X ≥ 0, so each pattern's value is ‖Σ_{i∈π} c_i‖²; shifting a pattern left keeps its differences and
        # only adds non-negative terms (docs/matrix.md P2), so the pattern starting at step 0 is the largest.
        return _exact(_toeplitz_value(s, patterns[0]), "fixed-epoch-nonnegative", patterns[0])
    return _dense_route(s, p)


def _dense_route(s: Toeplitz, p: Pattern) -> SensitivityBound:
    """A Toeplitz strategy outside the exact cases, through the float Gram bracket (exact float coefficients)."""
    if any(Fraction(float(c)) != c for c in s.coefs):
        raise ValueError(
            "coefs: no certified sensitivity route for a Toeplitz strategy with signed or increasing "
            "coefficients that are not floats (give float coefficients, or fewer bands than min_sep)"
        )
    return _ROUTES[(Dense, type(p))](Dense(s.dense_array()), p)


# ---------------------------------------------------------------------------------------------
# BLT: an exact enclosure 0 ≤ C_lo ≤ C ≤ C_hi; Δ² is monotone in the entries of a non-negative C.
# ---------------------------------------------------------------------------------------------


def _blt(s: Blt, p: Pattern) -> SensitivityBound:
    """Δ² of a BLT bracketed through its enclosure (``docs/matrix.md`` P3).

    For C ≥ 0, Δ² = max_π 1ᵀX_ππ1 is non-decreasing in every entry of C, so Δ²(C_lo) ≤ Δ²(C) ≤ Δ²(C_hi).
    When the exact parameters make C non-increasing (Σω ≤ 1), Thm 2 fixes the worst π* for C itself and
    the bracket is [F_lo(π*), F_hi(π*)] with F the exact pattern value on each enclosure.
    """
    lo, hi = s.enclosure()
    if isinstance(p, MinSep) and s.non_increasing and p.participations(s.n) > 1:
        k, b = p.participations(s.n), p.min_sep
        pi = tuple(range(0, k * b, b))
        return SensitivityBound(_toeplitz_value(lo, pi), _toeplitz_value(hi, pi), "blt-closed-form-enclosure", pi)
    low, high = sensitivity(lo, p), sensitivity(hi, p)
    return SensitivityBound(low.squared_lower, high.squared_upper, f"blt-enclosure ({high.method})", low.witness)


# ---------------------------------------------------------------------------------------------
# Dense and tree.
# ---------------------------------------------------------------------------------------------


def _dense_single(s: Dense, p: Single) -> SensitivityBound:
    return SensitivityBound(*_dense.single(s.matrix))


def _dense_min_sep(s: Dense, p: MinSep) -> SensitivityBound:
    k = p.participations(s.n)
    if k == 1:
        return _dense_single(s, Single())
    return SensitivityBound(*_dense.min_sep(s.matrix, p.min_sep, k))


def _dense_fixed_epoch(s: Dense, p: FixedEpoch) -> SensitivityBound:
    return SensitivityBound(*_dense.fixed_epoch(s.matrix, p.epochs))


def _tree_single(s: Tree, p: Single) -> SensitivityBound:
    return _exact(Fraction(s.depth()), "tree-depth")


def _tree_min_sep(s: Tree, p: MinSep) -> SensitivityBound:
    k = p.participations(s.n)
    return _exact(Fraction(tree_sensitivity_squared(s.step_counts, s.completion, p.min_sep, k)), "tree-dp")


def tree_pattern_value(s: Tree, pi: tuple[int, ...]) -> int:
    """Σ_v |π ∩ v|² over the released nodes of ``s`` (one pattern, exact)."""
    total, start = 0, 0
    for m in s.step_counts:
        inside = [p - start for p in pi if start <= p < start + m]
        length, size = 1, 1 << (m - 1).bit_length()
        while length <= size:
            counts: dict[int, int] = {}
            for p in inside:
                counts[p // length] = counts.get(p // length, 0) + 1
            total += sum(v * v for j, v in counts.items() if s.completion or (j + 1) * length <= m)
            length *= 2
        start += m
    return total


def _tree_fixed_epoch(s: Tree, p: FixedEpoch) -> SensitivityBound:
    b = s.n // p.epochs
    values = [(tree_pattern_value(s, tuple(range(j, s.n, b))), j) for j in range(b)]
    value, j = max(values)
    return _exact(Fraction(value), "fixed-epoch-nonnegative", tuple(range(j, s.n, b)))


_ROUTES: dict[tuple[type, type], Callable[[Any, Any], SensitivityBound]] = {
    (Toeplitz, Single): _toeplitz_single,
    (Toeplitz, MinSep): _toeplitz_min_sep,
    (Toeplitz, FixedEpoch): _toeplitz_fixed_epoch,
    (Blt, Single): _blt,
    (Blt, MinSep): _blt,
    (Blt, FixedEpoch): _blt,
    (Dense, Single): _dense_single,
    (Dense, MinSep): _dense_min_sep,
    (Dense, FixedEpoch): _dense_fixed_epoch,
    (Tree, Single): _tree_single,
    (Tree, MinSep): _tree_min_sep,
    (Tree, FixedEpoch): _tree_fixed_epoch,
}


def check_strategy(strategy: object) -> Toeplitz | Blt | Dense | Tree:
    """``strategy`` if it is one of the strategy specifications; ``ValueError`` naming it otherwise."""
    if not isinstance(strategy, (Toeplitz, Blt, Dense, Tree)):
        raise ValueError(  # noqa: TRY004 (contract: ValueError)
            "strategy must be matrix.toeplitz(...), bsr(...), blt(...), dense(...) or tree(...), "
            f"got {type(strategy).__name__}"
        )
    return strategy


def sensitivity(strategy: Toeplitz | Blt | Dense | Tree, pattern: Pattern) -> SensitivityBound:
    """A certified bracket on Δ (and Δ²) of ``strategy`` under ``pattern`` (module docstring).

    Args:
        strategy: a strategy specification (:func:`optcomp.matrix.toeplitz`, ``bsr``, ``blt``, ``dense``,
            ``tree``).
        pattern: :func:`optcomp.matrix.single`, ``fixed_epoch(k)`` (k must divide n) or
            ``min_sep(b, k)`` (b ≤ n).

    Returns:
        A :class:`SensitivityBound` whose ``squared_lower`` ≤ Δ² ≤ ``squared_upper`` (exact rationals).

    Raises:
        ValueError: a strategy or pattern that is not one, or a pattern that does not fit n (naming
            ``epochs`` or ``min_sep``).
    """
    s = check_strategy(strategy)
    p = check_pattern(pattern, s.n)
    return _ROUTES[(type(s), type(p))](s, p)


def max_column_norm_squared(strategy: Toeplitz | Blt | Dense | Tree) -> tuple[Fraction, Fraction]:
    """ζ² = max_i ‖c_i‖² as an exact bracket (jax_privacy's normaliser): single-participation Δ²."""
    b = sensitivity(strategy, Single())
    return b.squared_lower, b.squared_upper


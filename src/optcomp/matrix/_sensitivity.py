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
import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from optcomp._numerics import Bound, Progress
from optcomp.matrix import _dense
from optcomp.matrix._exact import float_down, float_up, sqrt_down, sqrt_up
from optcomp.matrix._pattern import FixedEpoch, MinSep, Pattern, Single, check_pattern
from optcomp.matrix._strategy import MAX_BSR_BANDS, MAX_EXACT_BITS, Blt, Dense, Toeplitz, Tree
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


def check_exact_cost(s: Toeplitz) -> None:
    """Refuse, before any exact arithmetic, a Toeplitz strategy whose exact integers are too large.

    The exact routes work on the coefficients over their common denominator D: ``bands`` integers of
    about log₂ D bits each (BSR: D = 4^(bands − 1)), squared and summed, so their cost grows like
    bands × log₂ D (the integers' total size) times the cost of one multiplication; the number of
    participations costs nothing more (each route is O(bands)). D is grown one coefficient at a time and
    the work refused, naming ``bands``, as soon as bands × log₂ D passes :data:`MAX_EXACT_BITS`.
    """
    d, extra = 1, 0
    for c in s.coefs:
        if d % c.denominator:
            d = math.lcm(d, c.denominator)
        extra = max(extra, abs(c.numerator).bit_length() - c.denominator.bit_length())
        bits = d.bit_length() + extra
        if bits * s.bands > MAX_EXACT_BITS:
            raise ValueError(
                f"bands: the exact sensitivity of this {s.label} strategy (n={s.n}, bands={s.bands}) works on "
                f"{s.bands} integers of at least {bits} bits each (its coefficients over their common "
                f"denominator), more than the limit of {MAX_EXACT_BITS} bits in all; use fewer bands (BSR: "
                f"bands <= {MAX_BSR_BANDS}) or coefficients with smaller denominators"
            )


# ---------------------------------------------------------------------------------------------
# Toeplitz (and BSR): exact integer arithmetic over the coefficients' common denominator.
# ---------------------------------------------------------------------------------------------


def _residues_below(end: int, residue: int, step: int) -> int:
    """How many r in [0, end) have r ≡ residue (mod step)."""
    return max(0, (end - residue + step - 1) // step)


def _progression_value(s: Toeplitz, step: int, count: int) -> Fraction:
    """‖Σ_{i∈π} c_i‖² (the value of π with equal g_i) of the progression π = {0, step, …, (count − 1)·step},
    exact, in O(bands) integer operations (summing the columns takes O(count·bands) and n integers).

    With the scaled coefficients c_t (0 outside [0, bands)), row r of Σ_{i∈π} c_i is
    v_r = Σ_{j<count} c_{r−j·step} = P(r) − P(r − M), M = count·step, where P(r) = Σ_{j≥0} c_{r−j·step}
    (P = 0 below 0). For r ≥ bands − 1 every term of P(r) is in range, so P(r) = S(r mod step) with
    S(ρ) = Σ_{t≡ρ} c_t: v_r = P(r) for r < M; v_r = 0 for r ≥ M + bands − 1 (both P(r) and P(r − M) are
    S of the same residue); the rows in between are summed one by one (fewer than bands of them), and the
    rows of [bands, min(n, M)) by residue, each S(ρ)² times its number of rows.
    """
    d, c = s._scaled
    bands, n, m = s.bands, s.n, count * step
    prefix = list(c)  # P(r) for r < bands: c_r + P(r − step)
    for r in range(step, bands):
        prefix[r] += prefix[r - step]
    by_residue: dict[int, int] = {}
    for t, value in enumerate(c):
        by_residue[t % step] = by_residue.get(t % step, 0) + value

    def p(r: int) -> int:
        if r < 0:
            return 0
        return prefix[r] if r < bands else by_residue.get(r % step, 0)

    end = min(n, m)
    direct = min(end, bands)
    total = sum(x * x for x in prefix[:direct])
    if end > direct:
        total += sum(v * v * (_residues_below(end, rho, step) - _residues_below(direct, rho, step))
                     for rho, v in by_residue.items())
    total += sum((p(r) - p(r - m)) ** 2 for r in range(m, min(n, m + bands - 1)))
    return Fraction(total, d * d)


def _front_norms(s: Toeplitz, step: int, count: int) -> tuple[int, tuple[int, ...]]:
    """Σ_{j<count} D²‖c_{j·step}‖² and its pattern {0, step, …}: the column norms of a Toeplitz strategy are
    non-increasing in i (‖c_i‖² sums the first min(bands, n − i) squares), so over b-min-sep sets of at most
    ``count`` participations (all non-negative terms) the front progression is a maximiser: the j-th point
    q_j of any such set has q_j ≥ j·step. O(bands/step) terms are summed one by one, the full-band columns
    counted at once."""
    full = s.scaled_column_norm_squared(0) if s.n >= s.bands else 0
    # columns j·step with n − j·step ≥ bands have the full norm: j ≤ (n − bands) // step
    n_full = min(count, (s.n - s.bands) // step + 1) if s.n >= s.bands else 0
    total = n_full * full + sum(s.scaled_column_norm_squared(j * step) for j in range(n_full, count))
    return total, tuple(range(0, count * step, step))


def _non_increasing(coefs: tuple[Fraction, ...]) -> bool:
    return coefs[-1] >= 0 and all(a >= b for a, b in itertools.pairwise(coefs))


def _toeplitz_single(s: Toeplitz, p: Single, progress: Progress | None) -> SensitivityBound:
    check_exact_cost(s)
    d, _ = s._scaled
    return _exact(Fraction(s.scaled_column_norm_squared(0), d * d), "single-participation", (0,))


def _toeplitz_min_sep(s: Toeplitz, p: MinSep, progress: Progress | None) -> SensitivityBound:
    k, b = p.participations(s.n), p.min_sep
    if k == 1:
        return _toeplitz_single(s, Single(), progress)
    if b >= s.bands:  # VecSens on non-increasing column norms: the front progression (_front_norms)
        check_exact_cost(s)
        d, _ = s._scaled
        value, witness = _front_norms(s, b, k)
        return _exact(Fraction(value, d * d), "banded-vecsens", witness)
    if _non_increasing(s.coefs):
        check_exact_cost(s)
        return _exact(_progression_value(s, b, k), "toeplitz-closed-form", tuple(range(0, k * b, b)))
    return _dense_route(s, p, progress)


def _toeplitz_fixed_epoch(s: Toeplitz, p: FixedEpoch, progress: Progress | None) -> SensitivityBound:
    b = s.n // p.epochs
    count = -(-s.n // b)  # the pattern {j, j + b, …} starting at step 0 has the most participations
    front = tuple(range(0, s.n, b))
    if b >= s.bands:
        # Orthogonal columns: each pattern's value is Σ‖c_i‖², and the norms are non-increasing in i, so the
        # pattern starting at step 0 is the largest (the first of the largest).
        check_exact_cost(s)
        d, _ = s._scaled
        return _exact(Fraction(_front_norms(s, b, count)[0], d * d), "fixed-epoch-orthogonal", front)
    if all(c >= 0 for c in s.coefs):
        # X ≥ 0, so each pattern's value is ‖Σ_{i∈π} c_i‖²; shifting a pattern left keeps its differences and
        # only adds non-negative terms (docs/matrix.md P2), so the pattern starting at step 0 is the largest.
        check_exact_cost(s)
        return _exact(_progression_value(s, b, count), "fixed-epoch-nonnegative", front)
    return _dense_route(s, p, progress)


def _dense_route(s: Toeplitz, p: Pattern, progress: Progress | None) -> SensitivityBound:
    """A Toeplitz strategy outside the exact cases, through the float Gram bracket (exact float coefficients)."""
    if any(Fraction(float(c)) != c for c in s.coefs):
        raise ValueError(
            "coefs: no certified sensitivity route for a Toeplitz strategy with signed or increasing "
            "coefficients that are not floats (give float coefficients, or fewer bands than min_sep)"
        )
    _dense.check_cost(s.n, s.n, p.participations(s.n), f"a Toeplitz strategy with signed or increasing "
                      f"coefficients (n={s.n}, bands={s.bands})")
    return _ROUTES[(Dense, type(p))](Dense(s.dense_array()), p, progress)


# ---------------------------------------------------------------------------------------------
# BLT: an exact enclosure 0 ≤ C_lo ≤ C ≤ C_hi; Δ² is monotone in the entries of a non-negative C.
# ---------------------------------------------------------------------------------------------


#: Most steps of a BLT strategy: its enclosure is built one step at a time in floats (a few µs per step) and
#: each end has up to n coefficients of up to ~1,100 bits (float powers over 2^1074) for the exact routes.
MAX_BLT_STEPS = MAX_EXACT_BITS // 1100


def _blt(s: Blt, p: Pattern, progress: Progress | None) -> SensitivityBound:
    """Δ² of a BLT bracketed through its enclosure (``docs/matrix.md`` P3).

    For C ≥ 0, Δ² = max_π 1ᵀX_ππ1 is non-decreasing in every entry of C, so Δ²(C_lo) ≤ Δ²(C) ≤ Δ²(C_hi).
    When the exact parameters make C non-increasing (Σω ≤ 1), Thm 2 fixes the worst π* for C itself and
    the bracket is [F_lo(π*), F_hi(π*)] with F the exact pattern value on each enclosure.
    """
    if s.n > MAX_BLT_STEPS:
        raise ValueError(
            f"n: the sensitivity of a BLT strategy is computed through an exact enclosure built step by step, "
            f"at most {MAX_BLT_STEPS} steps, got n={s.n}; use fewer steps"
        )
    lo, hi = s.enclosure()
    if isinstance(p, MinSep) and s.non_increasing and p.participations(s.n) > 1:
        k, b = p.participations(s.n), p.min_sep
        check_exact_cost(lo)
        check_exact_cost(hi)
        return SensitivityBound(_progression_value(lo, b, k), _progression_value(hi, b, k),
                                "blt-closed-form-enclosure", tuple(range(0, k * b, b)))
    low, high = sensitivity(lo, p, progress=progress), sensitivity(hi, p, progress=progress)
    return SensitivityBound(low.squared_lower, high.squared_upper, f"blt-enclosure ({high.method})", low.witness)


# ---------------------------------------------------------------------------------------------
# Dense and tree.
# ---------------------------------------------------------------------------------------------


def _check_dense(s: Dense, k: int) -> None:
    rows = int(s.matrix.shape[0])
    _dense.check_cost(rows, s.n, k, f"a dense strategy ({rows} × {s.n})")


def _dense_single(s: Dense, p: Single, progress: Progress | None) -> SensitivityBound:
    _check_dense(s, 1)
    return SensitivityBound(*_dense.single(s.matrix))


def _dense_min_sep(s: Dense, p: MinSep, progress: Progress | None) -> SensitivityBound:
    k = p.participations(s.n)
    if k == 1:
        return _dense_single(s, Single(), progress)
    _check_dense(s, k)
    return SensitivityBound(*_dense.min_sep(s.matrix, p.min_sep, k, progress))


def _dense_fixed_epoch(s: Dense, p: FixedEpoch, progress: Progress | None) -> SensitivityBound:
    _check_dense(s, p.epochs)
    return SensitivityBound(*_dense.fixed_epoch(s.matrix, p.epochs))


def _tree_single(s: Tree, p: Single, progress: Progress | None) -> SensitivityBound:
    return _exact(Fraction(s.depth()), "tree-depth")


def _tree_min_sep(s: Tree, p: MinSep, progress: Progress | None) -> SensitivityBound:
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


#: Most Python-level steps of the tree's fixed-epoch scan: every pattern's value, n·(log₂ n + trees) in all.
MAX_TREE_SCAN = 2**25


def _tree_fixed_epoch(s: Tree, p: FixedEpoch, progress: Progress | None) -> SensitivityBound:
    b = s.n // p.epochs
    work = s.n * (s.n.bit_length() + len(s.step_counts))
    if work > MAX_TREE_SCAN:
        raise ValueError(
            f"n: the fixed-epoch sensitivity of a tree strategy scans all {b} patterns of {p.epochs} "
            f"participations (about n·(log₂ n + trees) = {work} steps for n={s.n}), more than the limit of "
            f"{MAX_TREE_SCAN}; use fewer steps"
        )
    values = []
    for j in range(b):
        values.append((tree_pattern_value(s, tuple(range(j, s.n, b))), j))
        if progress is not None and (j + 1) % 256 == 0:
            progress(j + 1, b)
    value, j = max(values)
    return _exact(Fraction(value), "fixed-epoch-nonnegative", tuple(range(j, s.n, b)))


_ROUTES: dict[tuple[type, type], Callable[[Any, Any, Progress | None], SensitivityBound]] = {
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


def sensitivity(
    strategy: Toeplitz | Blt | Dense | Tree, pattern: Pattern, *, progress: Progress | None = None
) -> SensitivityBound:
    """A certified bracket on Δ (and Δ²) of ``strategy`` under ``pattern`` (module docstring).

    Args:
        strategy: a strategy specification (:func:`optcomp.matrix.toeplitz`, ``bsr``, ``blt``, ``dense``,
            ``tree``).
        pattern: :func:`optcomp.matrix.single`, ``fixed_epoch(k)`` (k must divide n) or
            ``min_sep(b, k)`` (b ≤ n).
        progress: called as ``progress(done, total)`` during long work (the dense routes' passes, the
            tree's fixed-epoch scan); the exact Toeplitz routes take O(bands) integer operations and
            report nothing.

    Returns:
        A :class:`SensitivityBound` whose ``squared_lower`` ≤ Δ² ≤ ``squared_upper`` (exact rationals).

    Raises:
        ValueError: a strategy or pattern that is not one, or a pattern that does not fit n (naming
            ``epochs`` or ``min_sep``); work beyond the cost limits, refused before it starts and naming
            the size to reduce (``bands``: :data:`MAX_EXACT_BITS`; ``n``: the dense routes'
            ``_dense.MAX_DENSE_BYTES``/``MAX_DENSE_WORK``, :data:`MAX_BLT_STEPS`, :data:`MAX_TREE_SCAN`;
            ``min_sep``: the tree's ``MAX_STATES``).
    """
    s = check_strategy(strategy)
    p = check_pattern(pattern, s.n)
    return _ROUTES[(type(s), type(p))](s, p, progress)


def max_column_norm_squared(strategy: Toeplitz | Blt | Dense | Tree) -> tuple[Fraction, Fraction]:
    """ζ² = max_i ‖c_i‖² as an exact bracket (jax_privacy's normaliser): single-participation Δ²."""
    b = sensitivity(strategy, Single())
    return b.squared_lower, b.squared_upper


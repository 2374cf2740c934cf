"""Strategy matrices C of the matrix mechanism as frozen specifications, with exact arithmetic.

A strategy is the encoder C of a factorization A = B C (``docs/matrix.md`` §1): the mechanism releases
C X + Z, Z ~ N(0, σ²ζ²). Every specification here is frozen and validated at construction, and every
float it is given is taken as the exact rational it is (``fractions.Fraction(x)`` is exact for a
float), so the sensitivities of :mod:`optcomp.matrix._sensitivity` can be computed without rounding:

* :class:`Toeplitz`: lower-triangular Toeplitz with coefficients c₀, c₁, … (banded when fewer
  coefficients than steps); :func:`toeplitz`, and :func:`bsr` (Kalinin–Lampert's banded square root,
  c_t = binom(2t, t)/4ᵗ, exact dyadic rationals);
* :class:`Blt`: a buffered linear Toeplitz matrix, c₀ = 1, c_t = Σ_j ω_j θ_j^{t−1} (jax_privacy's
  ``BufferedToeplitz`` convention, ``output_scale`` ω and ``buf_decay`` θ); its coefficients are
  enclosed by two exact Toeplitz strategies (outward-rounded floats), :meth:`Blt.enclosure`;
* :class:`Dense`: any n_out × n matrix (float64);
* :class:`Tree`: the binary-tree (DP-FTRL) incidence matrix, with restarts and tree completion.

Columns are the steps 0 … n − 1 (0-based); ``column_norms_squared`` are exact ``Fraction``s.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from optcomp._numerics import check_int

#: Largest number of steps a strategy may have (exact integer arithmetic beyond is pointless here).
MAX_STEPS = 10**7
#: Most bits of exact integer work an exact sensitivity may take: bands × the bits of the coefficients over
#: their common denominator (``optcomp.matrix._sensitivity.check_exact_cost``); BSR with b bands takes ≈ 2b².
MAX_EXACT_BITS = 2**28
#: Most bands of a BSR strategy: its coefficients binom(2t, t)/4ᵗ have denominators of 2t bits, so
#: 2·bands² ≤ MAX_EXACT_BITS (11,585 bands; its exact sensitivities take a few seconds).
MAX_BSR_BANDS = math.isqrt(MAX_EXACT_BITS // 2)


def _as_fraction(name: str, value: object) -> Fraction:
    """``value`` (int, float, Fraction, numpy scalar) as the exact rational it is; ``ValueError`` otherwise."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a real number, got {value!r}")  # noqa: TRY004 (contract: ValueError)
    if isinstance(value, Fraction):
        return value
    if isinstance(value, (int, np.integer)):
        return Fraction(int(value))
    try:
        x = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number, got {value!r}") from None
    if not math.isfinite(x):
        raise ValueError(f"{name} must be finite, got {x!r}")
    return Fraction(x)


def _fractions(name: str, values: object) -> tuple[Fraction, ...]:
    if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray)):
        raise ValueError(f"{name} must be a sequence of real numbers, got {values!r}")  # noqa: TRY004 (contract: ValueError)
    return tuple(_as_fraction(f"{name}[{i}]", v) for i, v in enumerate(values))


@dataclass(frozen=True)
class Toeplitz:
    """Lower-triangular Toeplitz strategy C[i + t, i] = c_t (t < len(coefs), i + t < n), exact.

    Attributes:
        coefs: the coefficients c₀ ≠ 0, c₁, … as exact rationals (``bands`` = their number ≤ n).
        n: the number of steps (C is n × n).
        label: how the strategy was built (``"toeplitz"``, ``"bsr"``, ``"blt-lower"``, ...), for statements.
    """

    coefs: tuple[Fraction, ...]
    n: int
    label: str = "toeplitz"

    def __post_init__(self) -> None:
        object.__setattr__(self, "n", check_int("n", self.n, minimum=1, maximum=MAX_STEPS))
        coefs = _fractions("coefs", self.coefs)
        if not coefs:
            raise ValueError("coefs must have at least one coefficient, got ()")
        if coefs[0] == 0:
            raise ValueError("coefs[0] must be non-zero (C must be invertible), got 0")
        if len(coefs) > self.n:
            if any(c != 0 for c in coefs[self.n :]):
                raise ValueError(f"coefs has {len(coefs)} coefficients, more than n={self.n} steps")
            coefs = coefs[: self.n]
        while len(coefs) > 1 and coefs[-1] == 0:
            coefs = coefs[:-1]
        object.__setattr__(self, "coefs", coefs)

    @property
    def bands(self) -> int:
        """The number of non-zero diagonals (C is banded when bands < n)."""
        return len(self.coefs)

    @property
    def lower_triangular(self) -> bool:
        """Always ``True``: C (and hence C⁻¹) is lower-triangular, as streaming needs."""
        return True

    @cached_property
    def _scaled(self) -> tuple[int, tuple[int, ...]]:
        """(D, (D·c_t)_t): the coefficients over one common denominator D, as integers."""
        d = math.lcm(*(c.denominator for c in self.coefs))
        return d, tuple(c.numerator * (d // c.denominator) for c in self.coefs)

    @cached_property
    def _norm_prefix(self) -> tuple[int, ...]:
        """Prefix sums of (D c_t)²: the scaled squared norm of a column with t entries is entry t."""
        _, ints = self._scaled
        out = [0]
        for v in ints:
            out.append(out[-1] + v * v)
        return tuple(out)

    def column_norms_squared(self) -> list[Fraction]:
        """‖c_i‖² for every column i, exact: Σ_{t < min(bands, n − i)} c_t²."""
        d, _ = self._scaled
        prefix, b = self._norm_prefix, self.bands
        return [Fraction(prefix[min(b, self.n - i)], d * d) for i in range(self.n)]

    def scaled_column_norms_squared(self) -> tuple[int, list[int]]:
        """(D², [D²‖c_i‖²]): the column norms over one integer denominator (for integer dynamic programs)."""
        d, _ = self._scaled
        prefix, b = self._norm_prefix, self.bands
        return d * d, [prefix[min(b, self.n - i)] for i in range(self.n)]

    def scaled_column_norm_squared(self, i: int) -> int:
        """D²‖c_i‖² for one column i (exact integer; D as in :meth:`scaled_column_norms_squared`)."""
        return self._norm_prefix[min(self.bands, self.n - i)]

    def column(self, i: int) -> dict[int, Fraction]:
        """Column i as {row: entry} (non-zero entries only)."""
        return {i + t: c for t, c in enumerate(self.coefs) if i + t < self.n and c != 0}

    def dense_array(self) -> npt.NDArray[np.float64]:
        """C as a float64 array (coefficients rounded to nearest; for display and cross-checks only)."""
        out = np.zeros((self.n, self.n))
        for t, c in enumerate(self.coefs):
            idx = np.arange(self.n - t)
            out[idx + t, idx] = float(c)
        return out


def toeplitz(coefs: Sequence[Any] | npt.ArrayLike, n: int | None = None) -> Toeplitz:
    """A lower-triangular Toeplitz strategy from its coefficients (floats taken as exact rationals).

    Args:
        coefs: c₀ ≠ 0, c₁, … (banded when fewer than ``n``).
        n: the number of steps (default: the number of coefficients).
    """
    values = list(np.asarray(coefs, dtype=object).ravel()) if isinstance(coefs, np.ndarray) else coefs
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise ValueError(f"coefs must be a sequence of real numbers, got {coefs!r}")  # noqa: TRY004 (contract: ValueError)
    steps = len(values) if n is None else n
    return Toeplitz(tuple(_as_fraction(f"coefs[{i}]", v) for i, v in enumerate(values)), steps)


def bsr_coefficients(bands: int) -> tuple[Fraction, ...]:
    """The first ``bands`` coefficients of (1 − x)^{−1/2}: c_t = binom(2t, t)/4ᵗ (exact).

    These are the Toeplitz coefficients of the square root of the prefix-sum matrix A (C² = A for the
    full matrix); the banded square root keeps the first ``bands`` (Kalinin–Lampert, "Banded Square
    Root Matrix Factorization for Differentially Private Model Training", arXiv 2405.13763, §3).
    """
    b = check_int("bands", bands, minimum=1, maximum=MAX_STEPS)
    out = [Fraction(1)]
    for t in range(1, b):
        out.append(out[-1] * Fraction(2 * t - 1, 2 * t))  # binom(2t,t)/4^t = Π_{s ≤ t} (2s − 1)/(2s)
    return tuple(out)


def bsr(n: int, bands: int) -> Toeplitz:
    """Kalinin–Lampert's banded square root (BSR) with ``bands`` ≤ n bands, exact (arXiv 2405.13763)."""
    steps = check_int("n", n, minimum=1, maximum=MAX_STEPS)
    b = check_int("bands", bands, minimum=1, maximum=steps)
    if b > MAX_BSR_BANDS:  # before the coefficients: their exact denominators grow like 4^bands
        raise ValueError(
            f"bands must be at most {MAX_BSR_BANDS} for a BSR strategy (its exact coefficients binom(2t, t)/4^t "
            f"have denominators of 2t bits; every sensitivity works on them exactly), got {b}"
        )
    return Toeplitz(bsr_coefficients(b), steps, "bsr")


@dataclass(frozen=True, slots=True)
class Blt:
    """A buffered linear Toeplitz strategy: c₀ = 1, c_t = Σ_j ω_j θ_j^{t−1} (t ≥ 1), n steps.

    The convention of jax_privacy's ``BufferedToeplitz`` (``buf_decay`` θ, ``output_scale`` ω;
    McMahan et al., "Efficient and Near-Optimal Noise Generation for Streaming Differential Privacy",
    arXiv 2404.16706). Parameters are validated as θ_j ∈ [0, 1] and ω_j ≥ 0, the case in which every
    c_t ≥ 0 and the sequence is non-increasing from t = 1 on (c_t − c_{t+1} = Σ ω_j θ_j^{t−1}(1 − θ_j));
    with Σω_j ≤ 1 also c₁ ≤ c₀ (checked exactly on the rationals, :attr:`non_increasing`).

    The powers are not evaluated in exact arithmetic (their denominators grow like 2^{53t}); instead
    :meth:`enclosure` gives two exact Toeplitz strategies with 0 ≤ C_lo ≤ C ≤ C_hi entrywise, whose
    coefficients are the float powers and sums rounded down and up (one ``nextafter`` per operation).
    """

    buf_decay: tuple[Fraction, ...]
    output_scale: tuple[Fraction, ...]
    n: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "n", check_int("n", self.n, minimum=1, maximum=MAX_STEPS))
        theta = _fractions("buf_decay", self.buf_decay)
        omega = _fractions("output_scale", self.output_scale)
        if len(theta) != len(omega) or not theta:
            raise ValueError(
                f"buf_decay and output_scale must have the same non-zero length, got {len(theta)} and {len(omega)}"
            )
        for i, t in enumerate(theta):
            if not 0 <= t <= 1:
                raise ValueError(f"buf_decay[{i}] must be in [0, 1], got {float(t)!r}")
        for i, w in enumerate(omega):
            if w < 0:
                raise ValueError(f"output_scale[{i}] must be >= 0, got {float(w)!r}")
        object.__setattr__(self, "buf_decay", theta)
        object.__setattr__(self, "output_scale", omega)

    @property
    def lower_triangular(self) -> bool:
        """Always ``True``."""
        return True

    @property
    def non_increasing(self) -> bool:
        """c₀ ≥ c₁ ≥ … ≥ 0 exactly: Σω_j ≤ 1 (the rest follows from θ_j ∈ [0, 1], ω_j ≥ 0)."""
        return sum(self.output_scale, Fraction(0)) <= 1

    def enclosure(self) -> tuple[Toeplitz, Toeplitz]:
        """(C_lo, C_hi): exact Toeplitz strategies with 0 ≤ C_lo ≤ C ≤ C_hi entrywise.

        Each power θ^{t−1} and each product and sum is evaluated in float64 and moved one ulp down
        (up) after every operation; all terms are non-negative, so the directed results bracket the
        exact value (round-to-nearest errs by at most half an ulp).
        """
        theta = np.array([float(t) for t in self.buf_decay])
        omega = np.array([float(w) for w in self.output_scale])
        # float(Fraction) rounds to nearest: step outward once to enclose the exact parameter.
        ends = []
        for direction in (-math.inf, math.inf):
            th = np.clip(np.nextafter(theta, direction), 0.0, 1.0)
            om = np.maximum(np.nextafter(omega, direction), 0.0)
            power = np.ones_like(th)
            coefs = [1.0]
            for _ in range(1, self.n):
                term = np.maximum(np.nextafter(om * power, direction), 0.0)
                total = 0.0
                for v in term:
                    total = max(math.nextafter(total + float(v), direction), 0.0)
                coefs.append(total)
                power = np.maximum(np.nextafter(power * th, direction), 0.0)
            ends.append(Toeplitz(tuple(Fraction(c) for c in coefs), self.n, "blt"))
        return ends[0], ends[1]


def blt(buf_decay: Sequence[Any], output_scale: Sequence[Any], n: int) -> Blt:
    """A BLT strategy (jax_privacy's ``BufferedToeplitz`` parameters, floats taken exactly)."""
    return Blt(_fractions("buf_decay", buf_decay), _fractions("output_scale", output_scale), n)


@dataclass(frozen=True, eq=False)
class Dense:
    """Any strategy matrix C (n_out × n, float64, each entry the exact rational it is).

    Attributes:
        matrix: C (read-only copy). Equality and hashing are by content.
    """

    matrix: npt.NDArray[np.float64]
    _key: bytes = field(init=False, repr=False)

    def __post_init__(self) -> None:
        c = np.array(self.matrix, dtype=np.float64, copy=True)
        if c.ndim != 2 or c.shape[0] < 1 or c.shape[1] < 1:
            raise ValueError(f"matrix must be a non-empty 2-D array, got shape {c.shape}")
        if not np.all(np.isfinite(c)):
            raise ValueError("matrix must have finite entries only")
        c.setflags(write=False)
        object.__setattr__(self, "matrix", c)
        object.__setattr__(self, "_key", c.tobytes() + repr(c.shape).encode())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Dense) and self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    @property
    def n(self) -> int:
        """The number of steps (columns)."""
        return int(self.matrix.shape[1])

    @property
    def lower_triangular(self) -> bool:
        """Whether C is square and lower-triangular with a non-zero diagonal (streamable: C⁻¹ lower-triangular)."""
        c = self.matrix
        if c.shape[0] != c.shape[1]:
            return False
        return bool(np.all(np.triu(c, 1) == 0.0) and np.all(np.diag(c) != 0.0))

    def column(self, i: int) -> dict[int, Fraction]:
        """Column i as {row: exact entry} (non-zero entries only)."""
        col = self.matrix[:, i]
        return {int(r): Fraction(float(col[r])) for r in np.flatnonzero(col)}

    def column_norms_squared(self) -> list[Fraction]:
        """‖c_i‖² for every column, exact (Fractions of the float entries)."""
        return [sum((v * v for v in self.column(i).values()), Fraction(0)) for i in range(self.n)]

    def dense_array(self) -> npt.NDArray[np.float64]:
        """C itself."""
        return self.matrix


def dense(matrix: npt.ArrayLike) -> Dense:
    """A dense strategy from any 2-D array (floats taken as the exact rationals they are)."""
    return Dense(np.asarray(matrix, dtype=np.float64))


@dataclass(frozen=True, slots=True)
class Tree:
    """The binary-tree strategy of DP-FTRL (Kairouz et al., ICML 2021, arXiv 2103.00039, §4 and App. D).

    The steps are cut into consecutive trees of ``step_counts`` steps (one tree: no restarts). In a tree
    of m steps every dyadic interval [j·2ʰ, (j + 1)·2ʰ) of its steps is a node, and C has one {0, 1} row
    per released node (1 on the node's steps). Without completion a node is released once all its steps
    have run (it lies inside [0, m)); with ``completion`` the tree is padded to 2^⌈log₂ m⌉ virtual steps
    (gradient 0) and every node that contains a real step is released.

    Attributes:
        step_counts: the number of steps of each tree (their sum is ``n``).
        completion: pad each tree to a power of two and release all its nodes.
    """

    step_counts: tuple[int, ...]
    completion: bool = False

    def __post_init__(self) -> None:
        counts = self.step_counts
        if isinstance(counts, (str, bytes)) or not isinstance(counts, Sequence) or not counts:
            raise ValueError(f"step_counts must be a non-empty sequence of integers >= 1, got {counts!r}")
        checked = tuple(check_int(f"step_counts[{i}]", c, minimum=1, maximum=MAX_STEPS) for i, c in enumerate(counts))
        if sum(checked) > MAX_STEPS:
            raise ValueError(f"step_counts must sum to at most {MAX_STEPS}, got {sum(checked)}")
        if not isinstance(self.completion, bool):
            raise ValueError(f"completion must be True or False, got {self.completion!r}")  # noqa: TRY004
        object.__setattr__(self, "step_counts", checked)

    @property
    def n(self) -> int:
        """The total number of steps."""
        return sum(self.step_counts)

    @property
    def lower_triangular(self) -> bool:
        """``True``: the tree's noise is streamed online (each node's noise is drawn when it completes)."""
        return True

    def depth(self) -> int:
        """The largest number of released nodes containing one step: Δ² under single participation."""
        if self.completion:
            return max((m - 1).bit_length() + 1 for m in self.step_counts)
        return max(m.bit_length() for m in self.step_counts)  # ⌈log₂(m + 1)⌉

    def column_norms_squared(self) -> list[Fraction]:
        """‖c_i‖² = the number of released nodes containing step i."""
        out: list[Fraction] = []
        for m in self.step_counts:
            size = 1 << (m - 1).bit_length() if self.completion else m
            for i in range(m):
                count, length = 0, 1
                while length <= size:
                    start = (i // length) * length
                    count += 1 if self.completion or start + length <= m else 0
                    length *= 2
                out.append(Fraction(count))
        return out


def tree(n: int | None = None, *, step_counts: Sequence[int] | None = None, completion: bool = False) -> Tree:
    """The DP-FTRL binary-tree strategy over ``n`` steps (one tree), or trees of ``step_counts`` steps."""
    if (n is None) == (step_counts is None):
        raise ValueError("tree needs exactly one of n (one tree) and step_counts (restarts)")
    counts = (check_int("n", n, minimum=1, maximum=MAX_STEPS),) if n is not None else tuple(step_counts or ())
    return Tree(counts, completion)


Strategy = Toeplitz | Blt | Dense | Tree

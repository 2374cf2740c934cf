"""Participation patterns: which sets π of steps one record may contribute to.

One convention throughout (the one of jax_privacy and of "(Amplified) Banded Matrix Factorization",
arXiv 2306.08153): ``min_sep`` is y − x for two successive participations x < y, so ``min_sep = 1``
allows every step. The DP-FTRL notebook (google-research/federated
``dp_ftrl/blogpost_supplemental_privacy_accounting.ipynb``) and tensorflow_privacy count the steps
*strictly between* two participations (y − x − 1); :func:`from_min_separation` is the one explicit
converter from that convention.

* :class:`Single`: |π| = 1 (Denisov et al. 2022);
* :class:`FixedEpoch`: (k, b)-fixed-epoch, π = {j, j + b, …, j + (k − 1)b}, n = k·b (ME-MF,
  arXiv 2211.06530, §2);
* :class:`MinSep`: successive steps ≥ ``min_sep`` apart and |π| ≤ ``max_participations``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import combinations, pairwise

from optcomp._numerics import check_int


@dataclass(frozen=True, slots=True)
class Single:
    """Single participation: each record contributes to at most one step."""

    def participations(self, n: int) -> int:
        """1."""
        return 1

    def check_fits(self, n: int) -> None:
        """Every n ≥ 1 fits."""

    def describe(self) -> str:
        """One phrase for statements."""
        return "single participation"


@dataclass(frozen=True, slots=True)
class FixedEpoch:
    """(k, b)-fixed-epoch participation: k epochs of b steps, a record in step j of every epoch.

    Attributes:
        epochs: k ≥ 1 (n must be a multiple of k; b = n/k).
    """

    epochs: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "epochs", check_int("epochs", self.epochs, minimum=1))

    def participations(self, n: int) -> int:
        """k."""
        return self.epochs

    def check_fits(self, n: int) -> None:
        """``ValueError`` naming ``epochs`` unless k divides n."""
        if n % self.epochs:
            raise ValueError(f"epochs must divide the number of steps n={n}, got epochs={self.epochs}")

    def describe(self) -> str:
        """One phrase for statements."""
        return f"({self.epochs}, b)-fixed-epoch participation"


@dataclass(frozen=True, slots=True)
class MinSep:
    """b-min-sep participation: successive participations x < y have y − x ≥ ``min_sep``; at most k of them.

    Attributes:
        min_sep: b ≥ 1 in the y − x convention (1 allows every step).
        max_participations: k ≥ 1, or ``None`` for as many as fit (⌈n/b⌉).
    """

    min_sep: int
    max_participations: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "min_sep", check_int("min_sep", self.min_sep, minimum=1))
        if self.max_participations is not None:
            k = check_int("max_participations", self.max_participations, minimum=1)
            object.__setattr__(self, "max_participations", k)

    def feasible(self, n: int) -> int:
        """⌈n / min_sep⌉: the most participations that fit in n steps."""
        return -(-n // self.min_sep)

    def participations(self, n: int) -> int:
        """min(k, ⌈n/b⌉)."""
        fit = self.feasible(n)
        return fit if self.max_participations is None else min(fit, self.max_participations)

    def check_fits(self, n: int) -> None:
        """``ValueError`` naming ``min_sep`` if it exceeds n (then only single participation fits)."""
        if self.min_sep > n:
            raise ValueError(f"min_sep must be at most the number of steps n={n}, got min_sep={self.min_sep}")

    def describe(self) -> str:
        """One phrase for statements."""
        cap = "" if self.max_participations is None else f", at most {self.max_participations} participations"
        return f"{self.min_sep}-min-sep participation (min_sep = y − x{cap})"


Pattern = Single | FixedEpoch | MinSep


def single() -> Single:
    """Single participation."""
    return Single()


def fixed_epoch(epochs: int) -> FixedEpoch:
    """(k, b)-fixed-epoch participation with k = ``epochs`` (b = n/k)."""
    return FixedEpoch(epochs)


def min_sep(min_sep: int, max_participations: int | None = None) -> MinSep:
    """b-min-sep participation (``min_sep`` = y − x ≥ 1), at most ``max_participations``."""
    return MinSep(min_sep, max_participations)


def from_min_separation(min_separation: int, max_participations: int | None = None) -> MinSep:
    """The DP-FTRL notebook's ``min_separation`` (steps strictly between, y − x − 1 ≥ 0) as :class:`MinSep`.

    ``min_separation = 313`` (the Gboard es-ES launch) is ``min_sep = 314``.
    """
    gap = check_int("min_separation", min_separation, minimum=0)
    return MinSep(gap + 1, max_participations)


def check_pattern(pattern: object, n: int) -> Pattern:
    """``pattern`` if it is a pattern that fits n steps; ``ValueError`` naming the parameter otherwise."""
    if not isinstance(pattern, (Single, FixedEpoch, MinSep)):
        raise ValueError(f"pattern must be matrix.single(), fixed_epoch(k) or min_sep(b, k), got {pattern!r}")  # noqa: TRY004
    pattern.check_fits(n)
    return pattern


def all_patterns(pattern: Pattern, n: int) -> Iterator[tuple[int, ...]]:
    """Every maximal-or-not participation set π allowed in n steps (small n: brute force and tests)."""
    if isinstance(pattern, Single):
        yield from ((i,) for i in range(n))
    elif isinstance(pattern, FixedEpoch):
        b = n // pattern.epochs
        yield from (tuple(range(j, n, b)) for j in range(b))
    else:
        k = pattern.participations(n)
        for m in range(1, k + 1):
            for pi in combinations(range(n), m):
                if all(y - x >= pattern.min_sep for x, y in pairwise(pi)):
                    yield pi

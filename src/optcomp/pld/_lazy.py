"""The directions of one grid step, each realised on first use (speed only).

An ε(δ) pass often never reads one direction at its own step: a direction whose earlier upper end is
already below the other's is not recomposed, and one probed at a coarser step
(:meth:`optcomp.pld._pld._EpsilonMeasure._probe_upper`) is read there instead. Building its cells anyway
cost about a tenth of a q = 10⁻³ DP-SGD query. :class:`Directions` holds the recipe and builds direction
``i`` on the first ``dirs[i]``; what it builds is exactly what the eager tuple held (same laws, step,
windows and shared per-law vectors), so every answer is bit for bit the same.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import overload

from optcomp.pld._realise import Direction
from optcomp.pld._windows import Memo


class Directions(Sequence[Direction]):
    """The directions of the neighbouring relation at one grid step ``step``, built on first access.

    Args:
        step: the grid step.
        count: the number of directions.
        build: ``build(i, memo)`` realises direction ``i``; ``memo`` (per-law vectors) is shared by the
            directions of this step, as in the eager realisation.
    """

    def __init__(self, step: float, count: int, build: Callable[[int, Memo], Direction]) -> None:
        self.step = step
        self._build = build
        self._memo: Memo = {}
        self._dirs: list[Direction | None] = [None] * count

    def __len__(self) -> int:
        return len(self._dirs)

    @overload
    def __getitem__(self, i: int) -> Direction: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[Direction]: ...

    def __getitem__(self, i: int | slice) -> Direction | Sequence[Direction]:
        if isinstance(i, slice):
            return [self[j] for j in range(len(self._dirs))[i]]
        j = range(len(self._dirs))[i]  # IndexError past the end, as a tuple's
        d = self._dirs[j]
        if d is None:
            d = self._dirs[j] = self._build(j, self._memo)
        return d

"""Mechanisms whose privacy loss lives on an exact lattice, and the one registry that says so.

Some mechanisms have a privacy loss that takes values on a lattice known exactly: the discrete Gaussian
on a query of integer sensitivity Δ has loss L = (Δ² + 2Δx)/(2σ²) for noise x ∈ ℤ (Canonne–Kamath–Steinke
2020, ``docs/dgauss.md``), i.e. L = c·(offset + stride·j) with c = 1/(2σ²), offset Δ², stride 2Δ. A
composition of such laws with *one* unit c lives on c·(Σ offsets + g·ℤ), g the gcd of the strides, so its
k-fold law is an exact convolution over integer indices: the only errors are the truncation of each factor
and the floating-point error of the convolution, both of which the lattice engine
(:mod:`optcomp.pld._lattice`) charges.

:func:`lattice_law` is a :func:`functools.singledispatch` function, like
:func:`~optcomp.mechanisms.privacy_loss_laws`: a mechanism module registers one small function for its
spec class returning a :class:`LatticeLaw` (or ``None`` where that instance has no exact lattice); every
other mechanism has none. The router (:meth:`optcomp.queries.Composition.route`) sends a composition whose
items all share one lattice unit to the lattice engine; anything else goes to the grid.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import singledispatch

from optcomp._numerics import FloatArray
from optcomp.mechanisms._spec import Mechanism

__all__ = ["LatticeFactor", "LatticeLaw", "common_lattice", "lattice_law"]


@dataclass(frozen=True)
class LatticeFactor:
    """One factor of a lattice law: loss L = c·(offset + stride·j) for j = first … first + size − 1.

    The P-masses themselves are computed on demand (:meth:`masses`), since a factor may be long and the
    router only needs its description. Two factors compose exactly when their units c are equal.

    Attributes:
        offset: the integer offset of the loss (in units of c).
        stride: the integer step between consecutive j (in units of c), > 0.
        first: the first index j kept.
        size: how many consecutive indices are kept.
        variance: an upper bound on the variance of j under P (places the engine's window; not a bound
            the answer relies on).
        log_tail: ln of a certified upper bound on the P-mass at indices outside the kept range (charged
            by the engine's upper end).
        masses: ``tilt ↦ (log_p_tilted, max_log_error)``: for a tilt t (per unit of j), the natural logs of
            p_j·e^{t(j − first)} for the kept j, and a bound on the absolute error of each log value (the
            engine turns it into a relative error of the masses).
    """

    offset: int
    stride: int
    first: int
    size: int
    variance: float
    log_tail: float
    masses: Callable[[float], tuple[FloatArray, float]]


@dataclass(frozen=True)
class LatticeLaw:
    """The exact lattice law of one run of a mechanism: a product of independent factors on one unit.

    The loss of one run is the sum over ``factors`` of each factor's loss (each repeated ``count`` times),
    all in units of ``unit``; the law is symmetric in the neighbouring pair (the add direction's law is
    the remove direction's), which is what the lattice engine needs.

    Attributes:
        unit: the exact lattice unit c (a rational: c = 1/(2σ²) is exact for a float σ).
        factors: ``(factor, count)`` pairs.
        label: a short description for messages.
    """

    unit: Fraction
    factors: tuple[tuple[LatticeFactor, int], ...]
    label: str

    @property
    def unit_float(self) -> float:
        """``unit`` correctly rounded to a float (relative error ≤ u)."""
        return float(self.unit)


@singledispatch
def lattice_law(mechanism: Mechanism) -> LatticeLaw | None:
    """The exact lattice law of one run of ``mechanism``, or ``None`` if it has none (the default)."""
    del mechanism
    return None


def common_lattice(items: Sequence[tuple[Mechanism, int]]) -> list[tuple[LatticeLaw, int]] | None:
    """The lattice laws of ``items`` when every item has one and all share one unit; else ``None``."""
    laws: list[tuple[LatticeLaw, int]] = []
    unit: Fraction | None = None
    for mechanism, k in items:
        law = lattice_law(mechanism)
        if law is None or (unit is not None and law.unit != unit):
            return None
        unit = law.unit
        laws.append((law, k))
    return laws if laws else None

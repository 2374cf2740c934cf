"""The Rényi curve a composition is converted from: every item's curve summed, rounded outward.

A composition holding a :class:`~optcomp.mechanisms.ZeroConcentrated` or :class:`~optcomp.mechanisms.Renyi`
item is known to the conversions only through :class:`StatedCurve`, an upper bound on D_α of the
composition in both directions (RDP composes by adding, Mironov 2017 Prop. 1, for adaptive composition
too). It takes one of two forms:

* **zCDP form** (``rho`` set): every item is zCDP-linear, a ``ZeroConcentrated(ρ)``, a ``Gaussian``
  (exactly (μ²/2)-zCDP, Bun–Steinke Prop 1.6) or a ``DiscreteGaussian`` ((‖v‖²/(2σ²))-zCDP, CKS Prop 5), so the composition is ρ-zCDP with ρ = Σ kᵢρᵢ: D_α ≤ αρ at
  *every* order α > 1 and, as α → 1, KL ≤ ρ in both directions.
* **finite form** (``orders``/``values``): D_α ≤ values[i] at orders[i] only. The orders are the union of
  the :class:`~optcomp.mechanisms.Renyi` items' orders (an item stated at other orders is bounded at these
  by :func:`renyi_upper`; an order where some item is unbounded is dropped), or, with no such item,
  :data:`~optcomp.rdp.DEFAULT_ORDERS`. Mechanism items contribute :func:`~optcomp.rdp.of_mechanism`
  (their exact curve, outward; integer-order-exact for the Poisson-subsampled Gaussian).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from optcomp._numerics import NONNEGATIVE, FloatArray
from optcomp._rounding import next_up, rounding_error
from optcomp.mechanisms import DiscreteGaussian, Gaussian, Mechanism
from optcomp.mechanisms.renyi import Renyi, ZeroConcentrated, is_renyi_item
from optcomp.rdp._curves import DEFAULT_ORDERS, check_orders, of_mechanism


@dataclass(frozen=True, slots=True)
class StatedCurve:
    """An upper bound on the Rényi curve of a composition, both directions (module docstring).

    Attributes:
        rho: the zCDP form's ρ (D_α ≤ αρ for every α > 1; KL ≤ ρ), or ``None``.
        orders: the finite form's orders (strictly increasing, > 1), or ``None``.
        values: the finite form's bounds on D_α at ``orders`` (finite, ≥ 0), or ``None``.
        source: how the orders were chosen (shown with every answer).
    """

    rho: float | None
    orders: FloatArray | None = None
    values: FloatArray | None = None
    source: str = ""

    def __post_init__(self) -> None:
        if (self.rho is None) == (self.orders is None):
            raise ValueError("a StatedCurve is either zCDP (rho) or finite (orders and values), exactly one")
        if self.rho is not None:
            object.__setattr__(self, "rho", NONNEGATIVE.check("rho", self.rho))
            return
        orders = check_orders(np.asarray(self.orders, dtype=np.float64))
        values = np.asarray(self.values, dtype=np.float64)
        if np.any(np.diff(orders) <= 0.0):
            raise ValueError(f"orders must be strictly increasing, got {orders.tolist()[:8]!r}")
        if values.shape != orders.shape or not np.all(np.isfinite(values) & (values >= 0.0)):
            raise ValueError(f"values must be finite numbers >= 0, one per order, got {values.tolist()[:8]!r}")
        object.__setattr__(self, "orders", orders)
        object.__setattr__(self, "values", values)

    @property
    def every_order(self) -> bool:
        """Whether the curve is stated at every α > 1 (the zCDP form)."""
        return self.rho is not None

    def at(self, alphas: npt.ArrayLike) -> FloatArray:
        """Upper bounds on D_α at ``alphas`` (zCDP form: αρ rounded up; finite form: only its orders)."""
        a = np.asarray(alphas, dtype=np.float64)
        if self.rho is not None:
            return np.asarray(next_up(a * self.rho), dtype=np.float64)
        assert self.orders is not None and self.values is not None
        return renyi_upper(self.orders, self.values, a)

    def describe(self) -> str:
        """One line: what the curve states."""
        if self.rho is not None:
            return f"rho-zCDP with rho = {self.rho!r}: D_alpha <= alpha*rho at every order alpha > 1, both directions"
        assert self.orders is not None
        return f"D_alpha bounded at {self.orders.size} orders ({self.source}), both directions"


def renyi_upper(orders: FloatArray, values: FloatArray, alphas: FloatArray) -> FloatArray:
    """Upper bounds on D_α at ``alphas`` of a law with D_{αᵢ} ≤ vᵢ at the given orders (both directions).

    Every law has D_α non-decreasing in α and (α − 1)D_α convex in α with value 0 at α = 1 (van
    Erven–Harremoës 2014, Thms 3 and 11). So between two orders a < α < b, D_α ≤ v_b and
    (α − 1)D_α ≤ the chord of (a − 1)v_a and (b − 1)v_b; below the first order D_α ≤ v₁; above the last
    nothing is known (``inf``). Each value is rounded up (the chord by a few roundings).
    """
    a = np.asarray(alphas, dtype=np.float64)
    out = np.full(a.shape, math.inf)
    idx = np.searchsorted(orders, a, side="left")  # orders[idx-1] < α ≤ orders[idx]
    inside = idx < orders.size
    exact = inside & (orders[np.minimum(idx, orders.size - 1)] == a)
    out[exact] = values[idx[exact]]
    below = inside & ~exact & (idx == 0)
    out[below] = values[0]
    mid = inside & ~exact & (idx > 0)
    if np.any(mid):
        j = idx[mid]
        lo_a, hi_a, lo_v, hi_v, x = orders[j - 1], orders[j], values[j - 1], values[j], a[mid]
        with np.errstate(invalid="ignore"):
            weight = (x - lo_a) / (hi_a - lo_a)
            chord = ((1.0 - weight) * (lo_a - 1.0) * lo_v + weight * (hi_a - 1.0) * hi_v) / (x - 1.0)
        chord = np.where(np.isfinite(chord), chord + rounding_error(16, np.abs(chord)), np.inf)
        out[mid] = np.minimum(hi_v, chord)
    return out


def _zcdp_rho(item: Mechanism) -> float | None:
    """ρ of a zCDP-linear item (ZeroConcentrated: ρ; Gaussian: Δ²/(2σ²) exactly; DiscreteGaussian:
    ‖v‖²/(2σ²), CKS Prop 5; rounded up), else ``None``."""
    if isinstance(item, ZeroConcentrated):
        return item.rho
    if isinstance(item, Gaussian):
        exact = Fraction(item.sensitivity) ** 2 / (2 * Fraction(item.sigma) ** 2)
    elif isinstance(item, DiscreteGaussian):
        exact = Fraction(sum(v * v for v in item.worst)) / (2 * Fraction(item.sigma) ** 2)
    else:
        return None
    value = float(exact)
    return value if Fraction(value) >= exact else float(next_up(value))


def stated_curve(items: Sequence[tuple[Mechanism, int]]) -> StatedCurve:
    """The :class:`StatedCurve` of a composition of ``(mechanism, count)`` items (module docstring).

    Raises:
        ValueError: an item with no finite Rényi curve here (an (ε, δ > 0) box, a continuous law without
            a closed form), or Rényi items whose orders leave no order at which every item is bounded.
    """
    rhos = [(_zcdp_rho(m), k) for m, k in items]
    if all(r is not None for r, _ in rhos):
        return StatedCurve(rho=_sum_up([(float(r), k) for r, k in rhos if r is not None]))
    renyi = [m for m, _ in items if isinstance(m, Renyi)]
    if renyi:
        orders = np.unique(np.concatenate([np.asarray(m.orders, dtype=np.float64) for m in renyi]))
        source = "the orders of the Renyi items"
    else:
        orders = np.asarray(DEFAULT_ORDERS, dtype=np.float64)
        source = "optcomp.rdp.DEFAULT_ORDERS (dp_accounting's default orders)"
    curves = [(_item_curve(mechanism, orders), k) for mechanism, k in items]
    total = np.array([_sum_up([(float(c[i]), k) for c, k in curves]) for i in range(orders.size)], dtype=np.float64)
    keep = np.isfinite(total)
    if not np.any(keep):
        raise ValueError(
            "the items leave no order at which every one is bounded (a Renyi item bounds nothing above its "
            "largest order, nor where its epsilon is inf); state the curves at common orders"
        )
    return StatedCurve(rho=None, orders=orders[keep], values=total[keep], source=source)


def _sum_up(terms: list[tuple[float, int]]) -> float:
    """Σ kᵢ·vᵢ computed exactly (rationals) and rounded up to a float; ``inf`` if any vᵢ is."""
    if any(math.isinf(v) for v, _ in terms):
        return math.inf
    exact = sum((Fraction(v) * k for v, k in terms), Fraction(0))
    value = float(exact)
    return value if Fraction(value) >= exact else float(next_up(value))


def _item_curve(mechanism: Mechanism, orders: FloatArray) -> FloatArray:
    """One item's upper curve at ``orders`` (``inf`` where it states nothing)."""
    if isinstance(mechanism, ZeroConcentrated):
        return np.asarray(next_up(orders * mechanism.rho), dtype=np.float64)
    if isinstance(mechanism, Renyi):
        return renyi_upper(np.asarray(mechanism.orders), np.asarray(mechanism.epsilons), orders)
    try:
        return of_mechanism(mechanism, orders)
    except NotImplementedError as exc:
        raise ValueError(
            f"{mechanism!r} cannot be composed with Renyi or zCDP items: {exc} (only mechanisms with a finite "
            "Renyi curve compose with curve-known black boxes)"
        ) from exc


def holds_renyi_item(items: Sequence[tuple[Mechanism, int]]) -> bool:
    """Whether any item is known only by its Rényi curve (the router's test)."""
    return any(is_renyi_item(m) for m, _ in items)

"""Black boxes known only by their Rényi curve: ρ-zCDP (:class:`ZeroConcentrated`) and an RDP curve
stated at finitely many orders (:class:`Renyi`).

A mechanism M is (α, r)-RDP when D_α(M(D)‖M(D')) ≤ r for every pair of neighbouring datasets, with
D_α(P‖Q) = log E_Q[(dP/dQ)^α]/(α − 1) (Mironov 2017, "Rényi differential privacy", Def. 3), and ρ-zCDP
when it is (α, αρ)-RDP for every α > 1 (Bun–Steinke 2016, "Concentrated differential privacy", Def. 1.1).

**Both directions.** Both neighbouring relations of optcomp are symmetric: D ~ D' exactly when D' ~ D
(adding a record is removing it read backwards; a substitution read backwards is a substitution). A curve
stated "for all neighbouring datasets" therefore bounds D_α(M(D)‖M(D')) *and* D_α(M(D')‖M(D)) for each
pair: the conversions of :mod:`optcomp.rdp` use both directions (for the optimal conversion this is what
rules out laws whose Q-mass sits where P has none). Both specifications are relation-agnostic
(``neighbouring = None``): the curve is stated for whichever relation the user states it for.

Neither has a privacy-loss law: :func:`~optcomp.mechanisms.privacy_loss_laws` refuses them with a
``ValueError`` that says so, and :func:`optcomp.compose` routes every composition holding one to the Rényi
conversion (:class:`optcomp.engines.RenyiEngine`).
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar, TypeGuard

from optcomp._numerics import MAX_LOSS_SCALE, NONNEGATIVE, Domain
from optcomp._rounding import next_up
from optcomp.mechanisms._dispatch import LawPair, privacy_loss_laws
from optcomp.mechanisms._group import group_mechanism
from optcomp.mechanisms._spec import Neighbouring, validate_parameters
from optcomp.mechanisms.gaussian import Gaussian


@dataclass(frozen=True, slots=True)
class ZeroConcentrated:
    """A ρ-zCDP black box: D_α(M(D)‖M(D')) ≤ αρ for every α > 1, both directions (module docstring).

    ``ZeroConcentrated(rho)``; ρ = 0 is a mechanism that reveals nothing (δ(ε) = 0 for ε ≥ 0). The
    Gaussian mechanism N(0, σ²) on a Δ-sensitive query is exactly (Δ²/(2σ²))-zCDP (Bun–Steinke Prop 1.6),
    so :class:`~optcomp.mechanisms.Gaussian` items compose with these as ρ = μ²/2.

    Attributes:
        rho: ρ ≥ 0.
    """

    rho: float
    neighbouring: ClassVar[Neighbouring | None] = None
    domains: ClassVar[Mapping[str, Domain]] = {"rho": NONNEGATIVE}

    def __post_init__(self) -> None:
        validate_parameters(self)


def _real(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {value!r}")  # noqa: TRY004 (contract: ValueError)
    return float(value)


def _sequence(name: str, values: object) -> list[object]:
    if isinstance(values, numbers.Real) and not isinstance(values, bool):
        return [values]  # one order
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise ValueError(f"{name} must be a sequence of numbers, got {values!r}")  # noqa: TRY004 (contract: ValueError)
    items: list[object] = list(values)  # a tuple, a list, a numpy array ...
    if not items:
        raise ValueError(f"{name} must hold at least one value, got {values!r}")
    return items


@dataclass(frozen=True, slots=True)
class Renyi:
    """A black box known by its Rényi curve at finitely many orders: D_α ≤ εᵢ at α = αᵢ, both directions.

    ``Renyi(orders, epsilons)``: ``orders`` strictly increasing, each a finite number > 1 (one number: one
    order); ``epsilons`` one value ≥ 0 per order (``inf``: nothing stated at that order). Nothing is assumed between the
    orders beyond what every law obeys (D_α is non-decreasing in α and (α − 1)D_α is convex: van
    Erven–Harremoës 2014, Thms 3 and 11), which is how a composition with items stated at other orders
    bounds this one there (:func:`optcomp.rdp.renyi_upper`).

    Attributes:
        orders: the orders αᵢ > 1, strictly increasing (stored as a tuple of floats).
        epsilons: the stated εᵢ = bound on D_{αᵢ} (a tuple of floats, same length).
    """

    orders: tuple[float, ...]
    epsilons: tuple[float, ...]
    neighbouring: ClassVar[Neighbouring | None] = None
    domains: ClassVar[Mapping[str, Domain]] = {}

    def __post_init__(self) -> None:
        orders = [_real("orders", a) for a in _sequence("orders", self.orders)]
        epsilons = [_real("epsilons", e) for e in _sequence("epsilons", self.epsilons)]
        for a in orders:
            if not (math.isfinite(a) and a > 1.0):
                raise ValueError(f"orders must be finite numbers > 1, got {a!r}")
        for previous, a in itertools.pairwise(orders):
            if not a > previous:
                kind = "duplicate" if a == previous else "unsorted"
                raise ValueError(f"orders must be strictly increasing ({kind}: {previous!r} then {a!r}), got {orders!r}")
        if len(epsilons) != len(orders):
            raise ValueError(
                f"epsilons must hold one value per order: got {len(orders)} orders and {len(epsilons)} epsilons"
            )
        for e in epsilons:
            if not e >= 0.0:  # also NaN
                raise ValueError(f"epsilons must be in [0, inf], got {e!r}")
        if all(math.isinf(e) for e in epsilons):
            raise ValueError("epsilons must hold at least one finite value (inf states nothing at its order)")
        object.__setattr__(self, "orders", tuple(o + 0.0 for o in orders))
        object.__setattr__(self, "epsilons", tuple(e + 0.0 for e in epsilons))


class NoPrivacyLossLawError(ValueError):
    """A black box known only by its Rényi curve has no privacy-loss law for the grid engines."""


def _no_law(mechanism: object) -> LawPair:
    raise NoPrivacyLossLawError(
        f"{mechanism!r} has no privacy-loss law: it is known only by its Rényi curve. Its compositions are "
        "answered by the Rényi conversion (optcomp.compose(...).epsilon/delta, engine 'renyi'); the PLD grid, "
        "group privacy and f-DP readouts need the mechanisms' laws"
    )


privacy_loss_laws.register(ZeroConcentrated, _no_law)
privacy_loss_laws.register(Renyi, _no_law)


@group_mechanism.register
def _zcdp_group(mechanism: ZeroConcentrated, g: int) -> ZeroConcentrated:
    """Groups of g records: (g²ρ)-zCDP (Bun–Steinke 2016, Prop. 27), g²ρ rounded up; attained by the
    Gaussian (μ becomes gμ)."""
    exact = Fraction(g) ** 2 * Fraction(mechanism.rho)
    rho = float(exact)
    return ZeroConcentrated(rho if Fraction(rho) >= exact else next_up(rho))


def _gaussian_at_most(rate: Fraction) -> Gaussian | None:
    """The Gaussian N(0, σ²) on a sensitivity-1 query whose curve α/(2σ²) is at most α·``rate`` at every
    order (σ² ≥ 1/(2·rate), checked in rationals; σ at least the smallest the engines take), or ``None``
    for rate 0 (nothing but a silent mechanism meets it)."""
    if rate <= 0:
        return None
    sigma = max(1.0 / math.sqrt(2.0 * float(rate)), 1.0 / MAX_LOSS_SCALE)
    while 2 * rate * Fraction(sigma) ** 2 < 1:
        sigma = next_up(sigma)
    return Gaussian(sigma)


def run_stand_in(mechanism: ZeroConcentrated | Renyi) -> Gaussian | None:
    """A mechanism known exactly that meets the item's curve — a possible run of the black box, so a
    composition of these has lower ends that are the run's (``Composition.dominated``):

    * ``ZeroConcentrated(ρ)``: the Gaussian with μ = √(2ρ) (rounded down), exactly (μ²/2)-zCDP
      (Bun–Steinke Prop 1.6);
    * ``Renyi(orders, epsilons)``: the Gaussian with μ² = 2·minᵢ εᵢ/αᵢ over the finite εᵢ, whose D_α = αμ²/2
      is at most εᵢ at every stated order;
    * ``None`` where that Gaussian is silent (ρ = 0, or some εᵢ = 0: P = Q).
    """
    if isinstance(mechanism, ZeroConcentrated):
        return _gaussian_at_most(Fraction(mechanism.rho))
    rates = [Fraction(e) / Fraction(a) for a, e in zip(mechanism.orders, mechanism.epsilons, strict=True) if math.isfinite(e)]
    return _gaussian_at_most(min(rates))


def is_renyi_item(mechanism: object) -> TypeGuard[ZeroConcentrated | Renyi]:
    """Whether ``mechanism`` is known only by its Rényi curve (a :class:`ZeroConcentrated` or :class:`Renyi`)."""
    return isinstance(mechanism, (ZeroConcentrated, Renyi))

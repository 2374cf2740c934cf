"""What a release declares before it touches the data: frozen, validated, stored exactly.

Every release is one non-interactive mechanism whose privacy parameters are fixed before it runs
(``docs/ledger.md`` §1). The ledger charges it in its currency (:mod:`._currency`); a plan ledger checks
that it is dominated by its slot. Parameters are exact rationals (:func:`._exact.exact`): ``"0.01"`` is
1/100, the float ``0.01`` is its binary value. :func:`from_json` and :meth:`Release.to_json` round-trip
exactly; :func:`from_mechanism` maps the mechanisms of :mod:`optcomp.mechanisms` that have one.

**A kind is a charge rule.** A stored release is recomputed bit for bit by ``verify()`` under the rule of
its kind, so a rule never changes for a kind already stored: a tighter rule is a new kind
(``docs/ledger.md`` §2.9). ``laplace`` is such a kind: a Laplace release was stored as ``pure`` before it
existed and stays charged as any ε-DP mechanism (ε²/2 in zCDP); a ``laplace`` release is charged its
tight zCDP ε + e^{−ε} − 1. Optional fields (the δ share of ``zcdp``) are left out of the JSON when not
given, so a release stored before they existed reads back as the same object.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from functools import singledispatch
from typing import Any, ClassVar

from optcomp.ledger._exact import Number, encode, exact
from optcomp.mechanisms import (
    DiscreteGaussian,
    EpsilonDelta,
    Gaussian,
    Laplace,
    Mechanism,
    RandomizedResponse,
    Renyi,
    ZeroConcentrated,
)
from optcomp.mechanisms.discrete_gaussian import Norm, largest_squared_norm


class ChargeError(ValueError):
    """A release that this currency cannot charge (e.g. a Gaussian in the ``basic`` currency); the message
    names why and what would charge it."""


def _nonneg(name: str, value: object) -> Fraction:
    x = exact(name, value)
    if x < 0:
        raise ValueError(f"{name} must be ≥ 0, got {value!r}")
    return x


def _positive(name: str, value: object) -> Fraction:
    x = exact(name, value)
    if x <= 0:
        raise ValueError(f"{name} must be > 0, got {value!r}")
    return x


def _probability(name: str, value: object) -> Fraction:
    x = exact(name, value)
    if not 0 <= x <= 1:
        raise ValueError(f"{name} must be in [0, 1], got {value!r}")
    return x


def _share(value: object) -> Fraction | None:
    """The optional δ share of a release known by its zCDP or Rényi curve: None, or a number in (0, 1)."""
    if value is None:
        return None
    x = exact("delta", value)
    if not 0 < x < 1:
        raise ValueError(f"delta (the δ share an (ε, δ) currency converts at) must be in (0, 1), got {value!r}")
    return x


def _with_share(out: dict[str, Any], delta: Fraction | None) -> dict[str, Any]:
    if delta is not None:
        out["delta"] = encode(delta)
    return out


@dataclass(frozen=True, slots=True)
class Release:
    """Base of the release kinds; ``kind`` names it in storage and in the currencies' charge tables."""

    kind: ClassVar[str] = ""

    def to_json(self) -> dict[str, Any]:
        """Canonical JSON object: ``kind`` plus every parameter encoded exactly."""
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class PureDP(Release):
    """An ε-DP mechanism (any: randomized response RR(ε) is the worst, KOV Thm II.5)."""

    kind: ClassVar[str] = "pure"
    epsilon: Fraction

    def __init__(self, epsilon: Number) -> None:
        object.__setattr__(self, "epsilon", _nonneg("epsilon", epsilon))

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "epsilon": encode(self.epsilon)}


@dataclass(frozen=True, slots=True)
class ApproxDP(Release):
    """An (ε, δ)-DP black box."""

    kind: ClassVar[str] = "approx"
    epsilon: Fraction
    delta: Fraction

    def __init__(self, epsilon: Number, delta: Number) -> None:
        object.__setattr__(self, "epsilon", _nonneg("epsilon", epsilon))
        object.__setattr__(self, "delta", _probability("delta", delta))

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "epsilon": encode(self.epsilon), "delta": encode(self.delta)}


@dataclass(frozen=True, slots=True)
class GaussianRelease(Release):
    """The Gaussian mechanism N(0, σ²) on a Δ-sensitive query: Δ/σ-GDP (Dong–Roth–Su Thm 2.5),
    Δ²/(2σ²)-zCDP (Bun–Steinke Prop 1.6), (α, αΔ²/(2σ²))-RDP (Mironov Prop 7)."""

    kind: ClassVar[str] = "gaussian"
    sigma: Fraction
    sensitivity: Fraction

    def __init__(self, sigma: Number, sensitivity: Number = 1) -> None:
        object.__setattr__(self, "sigma", _positive("sigma", sigma))
        object.__setattr__(self, "sensitivity", _positive("sensitivity", sensitivity))

    @property
    def mu_squared(self) -> Fraction:
        """μ² = Δ²/σ², exact."""
        return (self.sensitivity / self.sigma) ** 2

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "sigma": encode(self.sigma), "sensitivity": encode(self.sensitivity)}


@dataclass(frozen=True, slots=True)
class ZCDPRelease(Release):
    """A ρ-zCDP mechanism (Bun–Steinke Def. 1.1): D_α ≤ αρ at every order α > 1.

    ``delta`` (optional, in (0, 1)): the δ share at which an (ε, δ) currency (``basic``, which has no ρ)
    charges it, as the (ε, δ)-DP its conversion certifies (CKS Prop 12); the ρ currencies ignore it."""

    kind: ClassVar[str] = "zcdp"
    rho: Fraction
    delta: Fraction | None

    def __init__(self, rho: Number, delta: Number | None = None) -> None:
        object.__setattr__(self, "rho", _nonneg("rho", rho))
        object.__setattr__(self, "delta", _share(delta))

    def to_json(self) -> dict[str, Any]:
        return _with_share({"kind": self.kind, "rho": encode(self.rho)}, self.delta)


@dataclass(frozen=True, slots=True)
class LaplaceRelease(Release):
    """The Laplace mechanism Lap(b) on a Δ-sensitive (ℓ₁) query: ε-DP with ε = Δ/b (Dwork–Roth Thm 3.6), and
    exactly (ε + e^{−ε} − 1)-zCDP (Harrison–Manurangsi 2026, "Exact zCDP characterizations for fundamental
    differentially private mechanisms", FORC 2026 / arXiv 2510.25746: the supremum of D_α/α is the limit
    α → 1, the KL divergence) — below the ε²/2 of a ``pure`` release, which may be any ε-DP mechanism."""

    kind: ClassVar[str] = "laplace"
    scale: Fraction
    sensitivity: Fraction

    def __init__(self, scale: Number, sensitivity: Number = 1) -> None:
        object.__setattr__(self, "scale", _positive("scale", scale))
        object.__setattr__(self, "sensitivity", _positive("sensitivity", sensitivity))

    @property
    def epsilon(self) -> Fraction:
        """ε = Δ/b, exact."""
        return self.sensitivity / self.scale

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "scale": encode(self.scale), "sensitivity": encode(self.sensitivity)}


@dataclass(frozen=True, slots=True)
class RenyiRelease(Release):
    """A mechanism known by its Rényi curve at finitely many orders: D_α ≤ εᵢ at α = αᵢ (Mironov 2017 Def. 3),
    for every pair of neighbours (both directions: the relations are symmetric).

    Nothing is assumed between or beyond the orders except what every pair of laws obeys (D_α is
    non-decreasing in α and (α − 1)D_α is convex with value 0 at α = 1: van Erven–Harremoës 2014,
    Thms 3 and 11); above the largest order nothing is implied (``docs/ledger.md`` §2.9).

    Args:
        orders: αᵢ > 1, strictly increasing (exact numbers).
        epsilons: εᵢ ≥ 0, one per order (finite: leave out an order with nothing stated).
        delta: optional δ share in (0, 1) for the (ε, δ) currencies (as :class:`ZCDPRelease`).
    """

    kind: ClassVar[str] = "renyi"
    orders: tuple[Fraction, ...]
    epsilons: tuple[Fraction, ...]
    delta: Fraction | None

    def __init__(self, orders: Any, epsilons: Any, delta: Number | None = None) -> None:
        os_, es = _numbers("orders", orders), _numbers("epsilons", epsilons)
        if len(os_) != len(es):
            raise ValueError(f"epsilons must hold one value per order: got {len(os_)} orders and {len(es)} epsilons")
        for i, a in enumerate(os_):
            if a <= 1:
                raise ValueError(f"orders must be > 1, got {float(a)!r}")
            if i and a <= os_[i - 1]:
                raise ValueError(f"orders must be strictly increasing, got {float(os_[i - 1])!r} then {float(a)!r}")
        for e in es:
            if e < 0:
                raise ValueError(f"epsilons must be ≥ 0, got {float(e)!r}")
        object.__setattr__(self, "orders", os_)
        object.__setattr__(self, "epsilons", es)
        object.__setattr__(self, "delta", _share(delta))

    def to_json(self) -> dict[str, Any]:
        return _with_share({"kind": self.kind, "orders": [encode(a) for a in self.orders],
                            "epsilons": [encode(e) for e in self.epsilons]}, self.delta)


def _numbers(name: str, values: Any) -> tuple[Fraction, ...]:
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        values = [values]
    out = tuple(exact(name, v) for v in values)
    if not out:
        raise ValueError(f"{name} must hold at least one number, got {values!r}")
    return out


_DG_NORMS: tuple[str, ...] = ("l2", "l1", "linf")


@dataclass(frozen=True, slots=True)
class DiscreteGaussianRelease(Release):
    """The discrete Gaussian N_ℤ(0, σ²) added to each coordinate of an integer query whose integer shifts
    have ``norm`` at most Δ in ``dimension`` coordinates (Canonne–Kamath–Steinke 2020; ``docs/dgauss.md``).

    zCDP: a shift v gives D_α = Σ_t [αv_t²/(2σ²) + log(θ((1−α)v_t)/Z)/(α − 1)] with θ(c) = Σ_x e^{−(x−c)²/(2σ²)}
    ≤ θ(0) = Z, so D_α ≤ α‖v‖²/(2σ²) at every order, with equality where (α − 1)v is integral (CKS Prop 5, per
    coordinate, summed): the release is exactly ρ-zCDP with ρ = max ‖v‖²/(2σ²) over the allowed shifts
    (:func:`~optcomp.mechanisms.discrete_gaussian.largest_squared_norm`; ⌊Δ⌋²/(2σ²) in one dimension). It is
    *not* Δ/σ-GDP (``docs/dgauss.md`` §4). Plan mode composes its exact lattice law.

    Args:
        sigma: σ > 0. sensitivity: Δ ≥ 1. dimension: coordinates ≥ 1, or None (any number; not with
        ``linf``). norm: ``l2``, ``l1`` or ``linf``. delta: optional δ share (as :class:`ZCDPRelease`).
    """

    kind: ClassVar[str] = "discrete_gaussian"
    sigma: Fraction
    sensitivity: Fraction
    dimension: int | None
    norm: str
    delta: Fraction | None

    def __init__(self, sigma: Number, sensitivity: Number = 1, dimension: int | None = 1, norm: str = "l2",
                 delta: Number | None = None) -> None:
        object.__setattr__(self, "sigma", _positive("sigma", sigma))
        d = exact("sensitivity", sensitivity)
        if d < 1:
            raise ValueError(f"sensitivity must be ≥ 1 (integer shifts: a smaller one allows none), got {sensitivity!r}")
        object.__setattr__(self, "sensitivity", d)
        if dimension is not None and (isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 1):
            raise ValueError(f"dimension must be an integer ≥ 1 or None (any number), got {dimension!r}")
        object.__setattr__(self, "dimension", dimension)
        if norm not in _DG_NORMS:
            raise ValueError(f"norm must be one of {', '.join(_DG_NORMS)}, got {norm!r}")
        object.__setattr__(self, "norm", norm)
        object.__setattr__(self, "delta", _share(delta))
        largest_squared_norm(d, dimension, self._norm)  # an linf ball in no stated dimension is refused here

    @property
    def _norm(self) -> Norm:
        return "l1" if self.norm == "l1" else "linf" if self.norm == "linf" else "l2"

    @property
    def rho(self) -> Fraction:
        """ρ = max ‖v‖²/(2σ²) over the allowed integer shifts, exact (the class docstring)."""
        return Fraction(largest_squared_norm(self.sensitivity, self.dimension, self._norm)) / (2 * self.sigma**2)

    def mechanism(self) -> DiscreteGaussian:
        """The mechanism specification of plan mode's exact lattice law: σ must be a double exactly (the
        law is not shown to be monotone in σ, so σ is not rounded) and the worst shift determined
        (``docs/dgauss.md`` §1); ``ValueError`` naming which otherwise."""
        if Fraction(float(self.sigma)) != self.sigma:
            raise ValueError(f"sigma = {self.sigma} is not a double: a discrete Gaussian slot composes the law at "
                             "that exact σ (it is not rounded); give σ as a double")
        s = float(self.sensitivity)
        up = s if Fraction(s) >= self.sensitivity else math.nextafter(s, math.inf)
        return DiscreteGaussian(float(self.sigma), sensitivity=up, dimension=self.dimension, norm=self._norm)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "sigma": encode(self.sigma), "sensitivity": encode(self.sensitivity)}
        if self.dimension != 1:
            out["dimension"] = self.dimension
        if self.norm != "l2":
            out["norm"] = self.norm
        return _with_share(out, self.delta)


@dataclass(frozen=True, slots=True)
class BatchRelease(Release):
    """A whole fixed plan of (ε, δ) black boxes declared before any of it runs, charged as one filter
    step at its certified optimal composition (ε_g upper end at ``delta``; ``docs/ledger.md`` §3)."""

    kind: ClassVar[str] = "batch"
    items: tuple[PureDP | ApproxDP, ...] = field(default=())
    delta: Fraction = Fraction(0)

    def __init__(self, items: tuple[PureDP | ApproxDP, ...] | list[PureDP | ApproxDP], delta: Number) -> None:
        its = tuple(items)
        if not its or not all(isinstance(i, (PureDP, ApproxDP)) for i in its):
            raise ValueError("items must be a non-empty sequence of PureDP/ApproxDP releases")
        object.__setattr__(self, "items", its)
        object.__setattr__(self, "delta", _probability("delta", delta))

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "items": [i.to_json() for i in self.items], "delta": encode(self.delta)}


def _batch_from_json(d: dict[str, Any]) -> BatchRelease:
    items = [from_json(i) for i in d["items"]]
    return BatchRelease([i for i in items if isinstance(i, (PureDP, ApproxDP))], d["delta"])


_DECODERS: dict[str, Any] = {
    "pure": lambda d: PureDP(d["epsilon"]),
    "approx": lambda d: ApproxDP(d["epsilon"], d["delta"]),
    "gaussian": lambda d: GaussianRelease(d["sigma"], d["sensitivity"]),
    "zcdp": lambda d: ZCDPRelease(d["rho"], d.get("delta")),
    "batch": _batch_from_json,
    "laplace": lambda d: LaplaceRelease(d["scale"], d.get("sensitivity", 1)),
    "renyi": lambda d: RenyiRelease(d["orders"], d["epsilons"], d.get("delta")),
    "discrete_gaussian": lambda d: DiscreteGaussianRelease(d["sigma"], d.get("sensitivity", 1),
                                                           d.get("dimension", 1), d.get("norm", "l2"), d.get("delta")),
}


def from_json(d: object) -> Release:
    """Inverse of :meth:`Release.to_json`; ``ValueError`` for an unknown kind or bad parameters."""
    if not isinstance(d, dict) or d.get("kind") not in _DECODERS:
        raise ValueError(f"release must be an object with kind in {sorted(_DECODERS)}, got {d!r}")
    try:
        out: Release = _DECODERS[d["kind"]](d)
    except KeyError as e:
        raise ValueError(f"release of kind {d['kind']!r} lacks the parameter {e.args[0]!r}") from None
    return out


@singledispatch
def from_mechanism(mechanism: Mechanism) -> Release:
    """The release a mechanism of :mod:`optcomp.mechanisms` declares (exact in its float parameters)."""
    raise ValueError(f"mechanism {type(mechanism).__name__} has no ledger release kind; declare it as "
                     "PureDP/ApproxDP/GaussianRelease/ZCDPRelease/LaplaceRelease/RenyiRelease/DiscreteGaussianRelease")


@from_mechanism.register
def _(mechanism: RandomizedResponse) -> Release:
    return PureDP(mechanism.epsilon)


@from_mechanism.register
def _(mechanism: Laplace) -> Release:
    return LaplaceRelease(mechanism.scale, mechanism.sensitivity)


@from_mechanism.register
def _(mechanism: EpsilonDelta) -> Release:
    return ApproxDP(mechanism.epsilon, mechanism.delta) if mechanism.delta else PureDP(mechanism.epsilon)


@from_mechanism.register
def _(mechanism: Gaussian) -> Release:
    return GaussianRelease(mechanism.sigma, mechanism.sensitivity)


@from_mechanism.register
def _(mechanism: ZeroConcentrated) -> Release:
    return ZCDPRelease(mechanism.rho)


@from_mechanism.register
def _(mechanism: Renyi) -> Release:
    kept = [(a, e) for a, e in zip(mechanism.orders, mechanism.epsilons, strict=True) if math.isfinite(e)]
    return RenyiRelease([a for a, _ in kept], [e for _, e in kept])


@from_mechanism.register
def _(mechanism: DiscreteGaussian) -> Release:
    if mechanism.shift is not None:
        raise ValueError("a DiscreteGaussian given by its shift has no ledger release kind: declare its "
                         "sensitivity (DiscreteGaussianRelease(sigma, sensitivity=…, dimension=…, norm=…))")
    return DiscreteGaussianRelease(mechanism.sigma, mechanism.sensitivity, mechanism.dimension, mechanism.norm)

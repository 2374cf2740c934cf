"""What a release declares before it touches the data: frozen, validated, stored exactly.

Every release is one non-interactive mechanism whose privacy parameters are fixed before it runs
(``docs/ledger.md`` §1). The ledger charges it in its currency (:mod:`._currency`); a plan ledger checks
that it is dominated by its slot. Parameters are exact rationals (:func:`._exact.exact`): ``"0.01"`` is
1/100, the float ``0.01`` is its binary value. :func:`from_json` and :meth:`Release.to_json` round-trip
exactly; :func:`from_mechanism` maps the mechanisms of :mod:`optcomp.mechanisms` that have one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from functools import singledispatch
from typing import Any, ClassVar

from optcomp.ledger._exact import Number, encode, exact
from optcomp.mechanisms import EpsilonDelta, Gaussian, Laplace, Mechanism, RandomizedResponse


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
    """A ρ-zCDP mechanism (Bun–Steinke Def. 1.1)."""

    kind: ClassVar[str] = "zcdp"
    rho: Fraction

    def __init__(self, rho: Number) -> None:
        object.__setattr__(self, "rho", _nonneg("rho", rho))

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "rho": encode(self.rho)}


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
    "zcdp": lambda d: ZCDPRelease(d["rho"]),
    "batch": _batch_from_json,
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
    raise ValueError(f"mechanism {type(mechanism).__name__} has no ledger release kind; "
                     "declare it as PureDP/ApproxDP/GaussianRelease/ZCDPRelease")


@from_mechanism.register
def _(mechanism: RandomizedResponse) -> Release:
    return PureDP(mechanism.epsilon)


@from_mechanism.register
def _(mechanism: Laplace) -> Release:
    return PureDP(Fraction(mechanism.sensitivity) / Fraction(mechanism.scale))


@from_mechanism.register
def _(mechanism: EpsilonDelta) -> Release:
    return ApproxDP(mechanism.epsilon, mechanism.delta) if mechanism.delta else PureDP(mechanism.epsilon)


@from_mechanism.register
def _(mechanism: Gaussian) -> Release:
    return GaussianRelease(mechanism.sigma, mechanism.sensitivity)

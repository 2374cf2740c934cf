"""What a mechanism specification is: the typed :class:`Mechanism` protocol, the neighbouring relation,
and the one validation step every specification runs at construction.

A specification is a frozen, hashable dataclass describing *what ran*; its defining parameter is
positional and every other field keyword-only (``Laplace(10.0, sensitivity=2.0)``,
``EpsilonDelta(0.5, delta=1e-6)``). Each class declares its parameter domains once, in
``domains`` (name → :class:`optcomp._numerics.Domain`); :func:`validate_parameters` checks them, error
messages print them, and the tests draw hypothesis examples from them.

**Neighbouring relation.** Once its sensitivity is stated, a base mechanism's dominating pair is the
same under add/remove and under substitution, so base mechanisms are *relation-agnostic*
(``neighbouring = None``): the caller states the sensitivity for the relation they use. Only the
subsampling wrappers fix a relation — Poisson subsampling is analysed under add/remove, sampling
without replacement under substitution — and :func:`optcomp.compose` refuses to combine items that fix
different relations.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar, Literal, Protocol, runtime_checkable

from optcomp._numerics import LOSS_SCALE, MAX_LOSS_SCALE, Domain, LossScaleError

#: The two neighbouring relations: add or remove one record, or replace one record.
Neighbouring = Literal["add_remove", "substitution"]

#: The allowed values of a ``neighbouring`` argument (``None`` aside).
NEIGHBOURING_RELATIONS: tuple[Neighbouring, ...] = ("add_remove", "substitution")

#: The relations a guarantee may be *stated* for: the two above and zero-out (one record's contribution
#: replaced by zero: DP-FTRL, shuffled epochs), under which a sum of clipped contributions moves by the same
#: Δ as under add/remove, so mechanisms carry no relation of their own for it (``optcomp.interop``,
#: ``optcomp.matrix``, ``optcomp.dpsgd``'s samplers).
Relation = Literal["add_remove", "substitution", "zero_out"]

#: The values of :data:`Relation`, in that order.
RELATIONS: tuple[Relation, ...] = ("add_remove", "substitution", "zero_out")


@runtime_checkable
class Mechanism(Protocol):
    """A frozen, validated, hashable mechanism specification (the argument type of every engine).

    Attributes:
        neighbouring: the relation the specification fixes (``"add_remove"`` for
            :class:`~optcomp.mechanisms.PoissonSubsampled`, ``"substitution"`` for
            :class:`~optcomp.mechanisms.SubsampledWithoutReplacement`), or ``None`` for a
            relation-agnostic base mechanism.
        domains: parameter name → its declared :class:`~optcomp._numerics.Domain`.
    """

    neighbouring: ClassVar[Neighbouring | None]
    domains: ClassVar[Mapping[str, Domain]]

    def __hash__(self) -> int: ...


def check_neighbouring(name: str, value: object) -> Neighbouring | None:
    """``value`` if it is ``None``, ``"add_remove"`` or ``"substitution"``, else ``ValueError`` naming ``name``."""
    if value is None:
        return None
    for relation in NEIGHBOURING_RELATIONS:
        if value == relation:
            return relation
    raise ValueError(f"{name} must be one of {NEIGHBOURING_RELATIONS} or None, got {value!r}")


def validate_parameters(spec: Mechanism) -> None:
    """Check every field named in ``spec.domains`` against its domain and store the converted value.

    Called from each specification's ``__post_init__``; the ``ValueError`` names the field, its
    domain and the value (``"scale must be in (0, inf), got -1.0"``).
    """
    for field_name, domain in type(spec).domains.items():
        object.__setattr__(spec, field_name, domain.validate(field_name, getattr(spec, field_name)))


def check_loss_scale(spec: Mechanism, *, scale: str, sensitivity: str = "sensitivity") -> None:
    """Refuse a mechanism whose privacy-loss scale Δ/b (fields ``sensitivity``/``scale``) lies outside
    :data:`~optcomp._numerics.LOSS_SCALE`, the range the engines compute (issue 27, item 18).

    Each field alone is in its domain, but their ratio sets the size of every privacy loss: beyond
    ``MAX_LOSS_SCALE`` (or where the ratio underflows to 0) the engines' arithmetic would leave the float
    range. The ``ValueError`` (a :class:`~optcomp._numerics.LossScaleError`: an inverse search counts the
    noise level as failing, as for a grid beyond the memory cap) names the noise parameter and the range
    it may take for the given Δ.
    """
    b, d = float(getattr(spec, scale)), float(getattr(spec, sensitivity))
    ratio = d / b
    if LOSS_SCALE.contains(ratio):
        return
    if ratio > 0.0:
        raise LossScaleError(
            f"{scale} must be at least {sensitivity}/{MAX_LOSS_SCALE:g} = {d / MAX_LOSS_SCALE:.6g} for "
            f"{sensitivity}={d!r} (the privacy-loss scale {sensitivity}/{scale} must be {LOSS_SCALE} for the "
            f"engines to compute it), got {scale}={b!r}"
        )
    raise LossScaleError(
        f"{sensitivity}/{scale} underflows to 0 for {sensitivity}={d!r} and {scale}={b!r}: the privacy-loss "
        f"scale {sensitivity}/{scale} must be a positive float {LOSS_SCALE} for the engines to compute it"
    )


def combined_relation(
    first: Neighbouring | None, second: Neighbouring | None, *, what: str = "items"
) -> Neighbouring | None:
    """The relation of a composition of two parts: the one either fixes, ``ValueError`` if they differ."""
    if first is not None and second is not None and first != second:
        raise ValueError(
            f"{what} fix different neighbouring relations: {first!r} and {second!r}; a privacy "
            "statement holds for one relation (account for each relation separately)"
        )
    return first if first is not None else second

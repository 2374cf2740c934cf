"""The neighbouring relation of an imported description, and the one call into :func:`optcomp.compose`.

A ``DpEvent`` tree carries no neighbouring relation: dp_accounting takes it as an argument of the
accountant (``NeighboringRelation.ADD_OR_REMOVE_ONE``, ``REPLACE_ONE`` or ``REPLACE_SPECIAL``). optcomp takes it
as the ``neighbouring`` argument of :func:`optcomp.interop.from_dp_event`, spelled ``"add_remove"``,
``"substitution"`` or ``"zero_out"`` (dp_accounting's enum members are accepted too and mapped by name).

``"zero_out"`` (``REPLACE_SPECIAL``: one record's contribution replaced by zero) is the relation of
DP-FTRL and of dp_accounting's ``SingleEpochTreeAggregationDpEvent``. A sum of clipped contributions moves
by the same Δ under zero-out as under add/remove, so every event is read as under add/remove, except
those whose law is stated for one relation only (randomized response, sampling without replacement,
random allocation, truncated Poisson) and the tree event, which is read under zero-out only (as
dp_accounting does). The mechanisms carry no relation of their own for zero-out: :func:`compose_items`
composes them without one, and the :class:`~optcomp.interop.EventComposition` reports ``"zero_out"``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from optcomp._numerics import DEFAULT_ACCURACY, Accuracy
from optcomp.mechanisms import RELATIONS as NEIGHBOURING
from optcomp.mechanisms import Relation as Neighbouring

if TYPE_CHECKING:
    from optcomp.mechanisms import Mechanism
    from optcomp.queries import Composition

__all__ = ["NEIGHBOURING", "Neighbouring", "check_neighbouring", "compose_items"]

#: The relations an imported description may be read under: :data:`optcomp.mechanisms.RELATIONS`
#: (``NEIGHBOURING``; the type :data:`optcomp.mechanisms.Relation` as ``Neighbouring``).

#: dp_accounting's ``NeighboringRelation`` member names → optcomp's spelling.
_DP_ACCOUNTING_NAMES: dict[str, Neighbouring] = {
    "ADD_OR_REMOVE_ONE": "add_remove",
    "REPLACE_ONE": "substitution",
    "REPLACE_SPECIAL": "zero_out",
}


def check_neighbouring(value: object) -> Neighbouring:
    """``value`` as ``"add_remove"``, ``"substitution"`` or ``"zero_out"``; ``ValueError`` naming ``neighbouring``.

    Accepts optcomp's strings and dp_accounting's ``NeighboringRelation.ADD_OR_REMOVE_ONE`` /
    ``REPLACE_ONE`` / ``REPLACE_SPECIAL`` (duck-typed by member name).
    """
    if isinstance(value, str):
        for relation in NEIGHBOURING:
            if value == relation:
                return relation
    name = getattr(value, "name", None)
    if isinstance(name, str) and not isinstance(value, str) and name in _DP_ACCOUNTING_NAMES:
        return _DP_ACCOUNTING_NAMES[name]
    raise ValueError(
        f"neighbouring must be one of {NEIGHBOURING} (or dp_accounting's ADD_OR_REMOVE_ONE / REPLACE_ONE / "
        "REPLACE_SPECIAL), "
        f"got {value!r}"
    )


def compose_items(
    items: Sequence[tuple[Mechanism, int]], neighbouring: Neighbouring, accuracy: Accuracy = DEFAULT_ACCURACY
) -> Composition:
    """``optcomp.compose(*items)`` for mechanisms already stated for ``neighbouring``.

    The mechanisms built by :mod:`optcomp.interop` carry the relation in their parameters (e.g. a
    Gaussian's sensitivity is 2 under substitution), so the relation is not passed on. This is the one
    place that calls :func:`optcomp.compose`; the relation is passed on so that the result reports it
    (and ``compose`` refuses items that fix another relation).
    """
    from optcomp import compose

    return compose(*items, neighbouring=None if neighbouring == "zero_out" else neighbouring, accuracy=accuracy)

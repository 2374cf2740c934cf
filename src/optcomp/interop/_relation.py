"""The neighbouring relation of an imported description, and the one call into :func:`optcomp.compose`.

A ``DpEvent`` tree carries no neighbouring relation: dp_accounting takes it as an argument of the
accountant (``NeighboringRelation.ADD_OR_REMOVE_ONE`` or ``REPLACE_ONE``). optcomp takes it as the
``neighbouring`` argument of :func:`optcomp.interop.from_dp_event`, spelled ``"add_remove"`` or
``"substitution"`` (dp_accounting's enum members are accepted too and mapped by name).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from optcomp._numerics import DEFAULT_ACCURACY, Accuracy

if TYPE_CHECKING:
    from optcomp.mechanisms import Mechanism
    from optcomp.queries import Composition

Neighbouring = Literal["add_remove", "substitution"]

#: The relations an imported description may be read under.
NEIGHBOURING: tuple[Neighbouring, ...] = ("add_remove", "substitution")

#: dp_accounting's ``NeighboringRelation`` member names → optcomp's spelling.
_DP_ACCOUNTING_NAMES: dict[str, Neighbouring] = {
    "ADD_OR_REMOVE_ONE": "add_remove",
    "REPLACE_ONE": "substitution",
}


def check_neighbouring(value: object) -> Neighbouring:
    """``value`` as ``"add_remove"`` or ``"substitution"``; ``ValueError`` naming ``neighbouring`` otherwise.

    Accepts optcomp's strings and dp_accounting's ``NeighboringRelation.ADD_OR_REMOVE_ONE`` /
    ``REPLACE_ONE`` (duck-typed by member name; ``REPLACE_SPECIAL`` is refused).
    """
    if isinstance(value, str):
        if value == "add_remove":
            return "add_remove"
        if value == "substitution":
            return "substitution"
    name = getattr(value, "name", None)
    if isinstance(name, str) and not isinstance(value, str) and name in _DP_ACCOUNTING_NAMES:
        return _DP_ACCOUNTING_NAMES[name]
    raise ValueError(
        f"neighbouring must be one of {NEIGHBOURING} (or dp_accounting's ADD_OR_REMOVE_ONE / REPLACE_ONE), "
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

    return compose(*items, neighbouring=neighbouring, accuracy=accuracy)

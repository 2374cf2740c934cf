"""The one entry point from a mechanism specification to the exact laws of its privacy loss.

:func:`privacy_loss_laws` is a :func:`functools.singledispatch` function: each mechanism module
registers one small function for its spec class. The pair returned is ``(remove_law, add_law)``:

* ``remove_law`` is the law of L = ln(dP/dQ) for P = M(D), Q = M(D') where D' is D with one record
  removed (or, under the substitution relation, with one record replaced);
* ``add_law`` is the law for the reversed pair (Q, P).

For a mechanism whose pair is symmetric (T(P, Q) = T(Q, P): Gaussian, Laplace, randomized response,
the canonical (ε, δ) mechanism) both entries are *the same object*; engines and subsampling may use
``remove_law is add_law`` as the symmetry flag.
"""

from __future__ import annotations

from functools import singledispatch
from typing import TypeGuard

from optcomp.mechanisms._law import PrivacyLossLaw
from optcomp.mechanisms._spec import Mechanism

#: ``(remove_law, add_law)``; see :func:`privacy_loss_laws`.
LawPair = tuple[PrivacyLossLaw, PrivacyLossLaw]


@singledispatch
def privacy_loss_laws(mechanism: Mechanism) -> LawPair:
    """The exact privacy-loss laws ``(remove_law, add_law)`` of one run of ``mechanism``.

    Args:
        mechanism: a frozen mechanism specification from :mod:`optcomp.mechanisms`.

    Returns:
        ``(remove_law, add_law)``: the law of L = ln(dP/dQ) under the remove-direction pair (P, Q)
        and under the reversed pair (Q, P). Symmetric mechanisms return the same object twice.

    Raises:
        TypeError: if ``mechanism`` is not a registered mechanism specification.
    """
    raise TypeError(f"mechanism must be an optcomp mechanism specification, got {mechanism!r}")


def is_symmetric(laws: LawPair) -> bool:
    """Whether a law pair was declared symmetric by its mechanism (both entries the same object)."""
    return laws[0] is laws[1]


def is_mechanism(value: object) -> TypeGuard[Mechanism]:
    """Whether ``value`` is a registered mechanism specification (a :class:`Mechanism` with laws)."""
    return isinstance(value, Mechanism) and (
        privacy_loss_laws.dispatch(type(value)) is not privacy_loss_laws.dispatch(object)
    )


def check_mechanism(name: str, value: object) -> Mechanism:
    """``value`` if it is a registered mechanism specification, else ``ValueError`` naming ``name``."""
    if not isinstance(value, Mechanism) or not is_mechanism(value):
        raise ValueError(f"{name} must be an optcomp mechanism specification, got {value!r}")
    return value

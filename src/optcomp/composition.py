"""``optcomp.compose``: a sequence of mechanisms as one immutable :class:`~optcomp.queries.Composition`.

This module validates and pools the items (``(mechanism, count)`` pairs; equal specifications add
their counts) and settles the neighbouring relation they agree on. Which engine answers the queries
(the GDP closed form, :mod:`optcomp.optimal` for (ε, δ) black boxes, or the PLD grid) is decided by
the queries floor, :mod:`optcomp.queries`.
"""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np
import numpy.typing as npt

from optcomp._items import arranged
from optcomp._numerics import DEFAULT_ACCURACY, Accuracy, check_int
from optcomp.fdp import TradeOff, TradeOffBracket, from_pld, tensor_items
from optcomp.mechanisms import Mechanism, Neighbouring, check_neighbouring, is_mechanism
from optcomp.queries import Composition

#: One argument of :func:`compose`: a mechanism specification or a ``(mechanism, count)`` pair.
Item = Mechanism | tuple[Mechanism, int]

_ITEM_SHAPE = "a mechanism specification (optcomp.mechanisms) or a (mechanism, count) pair"


def _normalise(item: object, position: int) -> tuple[Mechanism, int]:
    """``item`` as ``(mechanism, count)``, or a ``ValueError`` that says what was expected."""
    name = f"items[{position}]"
    if isinstance(item, (tuple, list)):
        if len(item) != 2:
            raise ValueError(f"{name} must be {_ITEM_SHAPE}, got a {len(item)}-tuple {item!r}")
        mechanism, count = item
        if not is_mechanism(mechanism):
            hint = ""
            if all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in item):
                hint = (
                    "; an (epsilon, delta) pair of a black-box mechanism goes to optcomp.optimal "
                    f"(or compose EpsilonDelta({item[0]!r}, delta={item[1]!r}))"
                )
            raise ValueError(
                f"{name} must be {_ITEM_SHAPE}; got {item!r}, whose first entry is not a mechanism{hint}"
            )
        return mechanism, check_int("count", count, minimum=1)
    if not is_mechanism(item) or not isinstance(item, Hashable):
        raise ValueError(f"{name} must be {_ITEM_SHAPE}, got {item!r}")
    return item, 1


def _relation(counts: dict[Mechanism, int], neighbouring: Neighbouring | None) -> Neighbouring | None:
    """The one relation the items and ``neighbouring`` agree on (``None``: none fixes one)."""
    fixed: dict[Neighbouring, Mechanism] = {}
    for mechanism in counts:
        relation = mechanism.neighbouring
        if relation is not None:
            fixed.setdefault(relation, mechanism)
    if len(fixed) > 1:
        shown = "; ".join(f"{m!r} fixes {r!r}" for r, m in fixed.items())
        raise ValueError(
            f"items fix different neighbouring relations ({shown}); a composition is stated for one "
            "relation: account for each relation separately"
        )
    if neighbouring is not None and fixed and neighbouring not in fixed:
        (relation, mechanism), = fixed.items()
        raise ValueError(
            f"neighbouring={neighbouring!r} contradicts {mechanism!r}, which fixes {relation!r}"
        )
    return neighbouring if neighbouring is not None else next(iter(fixed), None)


def compose(
    *items: Item,
    neighbouring: Neighbouring | None = None,
    accuracy: Accuracy = DEFAULT_ACCURACY,
) -> Composition:
    """The composition of running every item (adaptively) in sequence.

    Args:
        *items: mechanism specifications from :mod:`optcomp.mechanisms`, or ``(mechanism, count)``
            pairs meaning ``count`` ≥ 1 runs of the same mechanism. Equal specifications are pooled —
            except in a composition with a bounded-range step (``BoundedRange``, ``ExponentialMechanism``, …):
            it keeps the order given, merging only adjacent equal items, because under adaptivity the
            order of BR and other steps matters (the adaptive engine composes them in that order).
        neighbouring: the relation the composition is stated for, ``"add_remove"`` or
            ``"substitution"``; ``None`` (default) takes the relation the items fix, if any. Base
            mechanisms fix none (their sensitivities are stated for the caller's relation); the
            subsampling wrappers fix theirs, and items that fix different relations are refused.
        accuracy: the accuracy the queries use unless given another (:class:`optcomp.Accuracy`).

    Returns:
        A frozen :class:`~optcomp.queries.Composition` whose ``delta``/``epsilon`` queries give
        certified brackets from the engine :meth:`~optcomp.queries.Composition.engine` picks, whose
        ``neighbouring`` attribute reports the relation (``None``: relation-agnostic) and whose
        ``pld(accuracy)`` is the PLD grid.

    Raises:
        ValueError: no items; a malformed item (not a mechanism or a ``(mechanism, count)`` pair —
            (ε, δ) pairs of black boxes go to :mod:`optcomp.optimal`); a count that is not an integer
            ≥ 1; items that fix different neighbouring relations, or one that contradicts
            ``neighbouring``; ``accuracy`` not an :class:`~optcomp.Accuracy`; a lower-only law
            (``AllocationEpochLower``: its composition has no upper end; :func:`dominated_composition`).
        NotImplementedError: a mechanism whose law cannot be built exactly (e.g. an asymmetric base under
            ``SubsampledWithoutReplacement``).
    """
    pairs = _pairs(items, accuracy)
    relation = check_neighbouring("neighbouring", neighbouring)
    counts = _pooled(pairs)
    for mechanism in counts:
        if getattr(mechanism, "lower_only", False):
            raise ValueError(
                f"{type(mechanism).__name__} is a lower-only law (a dominated pair with lower P- and upper "
                "Q-envelopes, docs/samplers.md §5 Lemma D): a composition of it has no upper end, so it is not "
                "a mechanism to compose; account for the run with optcomp.dpsgd.epsilon(..., "
                "sampling='balls_in_bins'), or compose AllocationEpoch for the upper end"
            )
    return Composition(arranged(pairs), _relation(counts, relation), accuracy)


def _pairs(items: tuple[Item, ...], accuracy: object) -> list[tuple[Mechanism, int]]:
    """The items validated, as (mechanism, count) pairs in the order given."""
    if not items:
        raise ValueError(f"compose needs at least one item ({_ITEM_SHAPE}), got none")
    if not isinstance(accuracy, Accuracy):
        raise ValueError(f"accuracy must be an optcomp.Accuracy, got {accuracy!r}")  # noqa: TRY004 (contract: ValueError)
    return [_normalise(item, position) for position, item in enumerate(items)]


def _pooled(pairs: list[tuple[Mechanism, int]]) -> dict[Mechanism, int]:
    """Equal specifications pooled (their counts added)."""
    counts: dict[Mechanism, int] = {}
    for mechanism, k in pairs:
        counts[mechanism] = counts.get(mechanism, 0) + k
    return counts


def dominated_composition(*items: Item, accuracy: Accuracy = DEFAULT_ACCURACY) -> Composition:
    """The composition of pairs a run *dominates*, for the run's lower end only: as :func:`compose`, but
    lower-only laws (``lower_only``: ``AllocationEpochLower``, whose P-masses are lower and Q-masses upper
    envelopes) are accepted. Only the lower ends of its brackets bound anything (``dpsgd`` and
    ``interop`` read them); its upper ends are not upper bounds of any run."""
    pairs = _pairs(items, accuracy)
    return Composition(arranged(pairs), _relation(_pooled(pairs), None), accuracy)


def tensor_bracket(
    *items: TradeOff | tuple[TradeOff, int],
    accuracy: Accuracy = DEFAULT_ACCURACY,
    epsilons: npt.ArrayLike | None = None,
) -> TradeOffBracket:
    """Certified bracket of f1 ⊗ … ⊗ fn (each with a count) via the engines (DRS Thm 3.2).

    The mechanisms of :func:`optcomp.fdp.tensor_items` (each piecewise-linear f = T(P, Q) as its discrete
    pair, each G_μ as the Gaussian mechanism with σ = 1/μ) composed by :func:`compose` (Gaussians only: the
    GDP closed form at the grid's curve points) and read by :func:`optcomp.fdp.from_pld`. The engine's δ(ε)
    bracket is two-sided (max over both orders), so the result brackets the *symmetrized* composed curve —
    the guarantee of a mechanism that is f_i-DP for all ordered neighbouring pairs. See
    :func:`~optcomp.fdp.from_delta_curve` for the direction of each side.

    Args:
        *items: trade-off functions or ``(f, count)`` pairs.
        accuracy: the accuracy of the composition's curve.
        epsilons: ε grid for the δ curve (starting at 0; default 0 … 20 in 400 steps).
    """
    eps = None if epsilons is None else np.asarray(epsilons, dtype=np.float64)
    return from_pld(compose(*tensor_items(*items), accuracy=accuracy), eps)

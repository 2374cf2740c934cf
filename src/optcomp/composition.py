"""``optcomp.compose``: the privacy-loss distribution of a sequence of mechanisms.

Each *distinct* mechanism's PLD is built once from its exact laws
(:func:`optcomp.mechanisms.privacy_loss_laws` → ``PrivacyLossDistribution.from_laws``) and composed
``count`` times with ``self_compose``; distinct PLDs are then combined with ``compose``. Privacy losses
of independent (even adaptively chosen) mechanisms add, so the PLD of the composition is the
convolution of the PLDs (``shared/MATH.md``; KOV Thm III.3 for adaptivity).

Closed form used before any discretisation: Gaussian mechanisms compose exactly into one Gaussian,
G_{μ₁} ⊗ G_{μ₂} = G_{√(μ₁² + μ₂²)} (Dong–Roth–Su Cor 3.3), so all Gaussian items (any σ, Δ, count)
become the single ``Gaussian(sigma=1/μ)`` with μ = √(Σ countᵢ·(Δᵢ/σᵢ)²) and cost one discretisation and
no FFT error. The result is always a ``PrivacyLossDistribution``.

(ε, δ) black boxes: when *every* item is an ``EpsilonDelta`` (or a ``RandomizedResponse``, the case
δ = 0) and the accuracy is automatic, the PLD answers ε and δ queries from :mod:`optcomp.optimal`
(``PrivacyLossDistribution.from_epsilon_delta``): the composition of canonical pairs is exactly the
optimal black-box composition (KOV Thm III.3), which that engine brackets exactly for one distinct ε
(Murtagh–Vadhan Thm 1.4, e.g. 10⁴ × (0.01, 10⁻⁹) in milliseconds, where the grid would need a step the
memory cap does not allow) and with certified ends otherwise. Mixed with any other mechanism, or with
an explicit ``Accuracy.grid_step``, the grid engine answers.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Hashable

from optcomp._numerics import DEFAULT_ACCURACY, Accuracy, check_int
from optcomp.mechanisms import (
    EpsilonDelta,
    Gaussian,
    Mechanism,
    Neighbouring,
    RandomizedResponse,
    privacy_loss_laws,
)
from optcomp.mechanisms._dispatch import is_mechanism
from optcomp.mechanisms._spec import check_neighbouring
from optcomp.pld import PrivacyLossDistribution

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
    return item, 1  # type: ignore[return-value]  # is_mechanism checked the protocol


def _merge_gaussians(counts: dict[Mechanism, int]) -> dict[Mechanism, int]:
    """All Gaussian items replaced by one Gaussian with μ² = Σ countᵢ μᵢ² (Dong–Roth–Su Cor 3.3)."""
    gaussians = [(m, k) for m, k in counts.items() if isinstance(m, Gaussian)]
    if len(gaussians) <= 1 and all(k == 1 for _, k in gaussians):
        return counts
    mu = math.sqrt(math.fsum(k * m.mu**2 for m, k in gaussians))
    merged: dict[Mechanism, int] = {Gaussian(1.0 / mu): 1}
    merged.update((m, k) for m, k in counts.items() if not isinstance(m, Gaussian))
    return merged


def _black_box(mechanism: Mechanism) -> tuple[float, float] | None:
    """(ε, δ) of a mechanism whose pair is the KOV canonical one (``EpsilonDelta``, ``RandomizedResponse``)."""
    if isinstance(mechanism, EpsilonDelta):
        return mechanism.epsilon, mechanism.delta
    if isinstance(mechanism, RandomizedResponse):
        return mechanism.epsilon, 0.0
    return None


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
) -> PrivacyLossDistribution:
    """The PLD of running every item (adaptively) in sequence.

    Args:
        *items: mechanism specifications from :mod:`optcomp.mechanisms`, or ``(mechanism, count)``
            pairs meaning ``count`` ≥ 1 runs of the same mechanism. Equal specifications are pooled.
        neighbouring: the relation the composition is stated for, ``"add_remove"`` or
            ``"substitution"``; ``None`` (default) takes the relation the items fix, if any. Base
            mechanisms fix none (their sensitivities are stated for the caller's relation); the
            subsampling wrappers fix theirs, and items that fix different relations are refused.
        accuracy: the engine's accuracy knob (:class:`optcomp.Accuracy`).

    Returns:
        A ``PrivacyLossDistribution`` whose ``delta``/``epsilon`` queries give certified brackets and
        whose ``neighbouring`` attribute reports the relation (``None``: relation-agnostic).

    Raises:
        ValueError: no items; a malformed item (not a mechanism or a ``(mechanism, count)`` pair —
            (ε, δ) pairs of black boxes go to :mod:`optcomp.optimal`); a count that is not an integer
            ≥ 1; items that fix different neighbouring relations, or one that contradicts
            ``neighbouring``; ``accuracy`` not an :class:`~optcomp.Accuracy`.
        NotImplementedError: a mechanism whose law cannot be built exactly (e.g. an asymmetric base under
            ``SubsampledWithoutReplacement``).
    """
    if not items:
        raise ValueError(f"compose needs at least one item ({_ITEM_SHAPE}), got none")
    if not isinstance(accuracy, Accuracy):
        raise ValueError(f"accuracy must be an optcomp.Accuracy, got {accuracy!r}")  # noqa: TRY004 (contract: ValueError)
    relation = check_neighbouring("neighbouring", neighbouring)
    counts: dict[Mechanism, int] = {}
    for position, item in enumerate(items):
        mechanism, k = _normalise(item, position)
        counts[mechanism] = counts.get(mechanism, 0) + k
    relation = _relation(counts, relation)
    counts = _merge_gaussians(counts)
    plds = []
    for mechanism, k in counts.items():
        remove, add = privacy_loss_laws(mechanism)
        box = _black_box(mechanism)
        if box is not None:
            pld = PrivacyLossDistribution.from_epsilon_delta(
                *box, remove, accuracy=accuracy, neighbouring=relation
            )
        else:
            pld = PrivacyLossDistribution.from_laws(remove, add, accuracy=accuracy, neighbouring=relation)
        plds.append(pld.self_compose(k) if k > 1 else pld)
    return functools.reduce(lambda left, right: left.compose(right), plds)

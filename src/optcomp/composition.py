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
"""

from __future__ import annotations

import functools
import math
from collections.abc import Hashable

from optcomp._numerics import DEFAULT_ACCURACY, Accuracy, check_int
from optcomp.mechanisms import Gaussian, privacy_loss_laws
from optcomp.pld import PrivacyLossDistribution

#: One argument of :func:`compose`: a mechanism specification or a ``(mechanism, count)`` pair.
Item = object


def _normalise(item: Item) -> tuple[Hashable, int]:
    """``item`` as ``(mechanism, count)``: ``ValueError`` for a bad count, ``TypeError`` for a bad spec."""
    if isinstance(item, tuple):
        if len(item) != 2:
            raise ValueError(
                f"items must be a mechanism or a (mechanism, count) pair, got a {len(item)}-tuple"
            )
        mechanism, count = item
        k = check_int("count", count, minimum=1)
    else:
        mechanism, k = item, 1
    if not isinstance(mechanism, Hashable):
        raise TypeError(f"mechanism must be a (hashable) optcomp mechanism specification, got {mechanism!r}")
    return mechanism, k


def _merge_gaussians(counts: dict[Hashable, int]) -> dict[Hashable, int]:
    """All Gaussian items replaced by one Gaussian with μ² = Σ countᵢ μᵢ² (Dong–Roth–Su Cor 3.3)."""
    gaussians = [(m, k) for m, k in counts.items() if isinstance(m, Gaussian)]
    if len(gaussians) <= 1 and all(k == 1 for _, k in gaussians):
        return counts
    mu = math.sqrt(math.fsum(k * m.mu**2 for m, k in gaussians))
    merged: dict[Hashable, int] = {Gaussian(sigma=1.0 / mu): 1}
    merged.update((m, k) for m, k in counts.items() if not isinstance(m, Gaussian))
    return merged


def compose(*items: Item, accuracy: Accuracy = DEFAULT_ACCURACY) -> PrivacyLossDistribution:
    """The PLD of running every item (adaptively) in sequence.

    Args:
        *items: mechanism specifications from :mod:`optcomp.mechanisms`, or ``(mechanism, count)``
            pairs meaning ``count`` ≥ 1 runs of the same mechanism. Equal specifications are pooled.
        accuracy: the engine's accuracy knob (:class:`optcomp.Accuracy`).

    Returns:
        A ``PrivacyLossDistribution`` whose ``delta``/``epsilon`` queries give certified brackets.

    Raises:
        ValueError: no items, a malformed item, or a count that is not an integer ≥ 1.
        TypeError: an item that is not a mechanism specification, or ``accuracy`` not an ``Accuracy``.
        NotImplementedError: a mechanism whose law cannot be built exactly (e.g. an asymmetric base under
            ``SubsampledWithoutReplacement``).
    """
    if not items:
        raise ValueError("compose needs at least one mechanism, got none")
    if not isinstance(accuracy, Accuracy):
        raise TypeError(f"accuracy must be an optcomp.Accuracy, got {accuracy!r}")
    counts: dict[Hashable, int] = {}
    for item in items:
        mechanism, k = _normalise(item)
        counts[mechanism] = counts.get(mechanism, 0) + k
    counts = _merge_gaussians(counts)
    plds = []
    for mechanism, k in counts.items():
        remove, add = privacy_loss_laws(mechanism)
        pld = PrivacyLossDistribution.from_laws(remove, add, accuracy=accuracy)
        plds.append(pld.self_compose(k) if k > 1 else pld)
    return functools.reduce(lambda left, right: left.compose(right), plds)

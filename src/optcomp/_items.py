"""A composition's items, arranged: pooled or kept in order, Gaussians merged, dominated counterparts.

The queries floor's pure functions of ``(mechanism, count)`` tuples, below :mod:`optcomp.queries` (which
routes and answers) and :mod:`optcomp.composition` (which validates): :func:`arranged` (equal items pooled,
or, for a composition with a bounded-range step, kept in the order given and merged only where adjacent),
:func:`merged_mu` / :func:`dominating_gaussian` / :func:`merge_gaussians` (DRS Cor 3.3), :func:`black_box`
(the KOV canonical pairs), :func:`adaptive_runs` (the adaptive engine's runs) and :func:`dominated_items`
(which pairs bound a run from below: :class:`optcomp.queries.RunBracket`'s lower composition).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from optcomp._numerics import UNIT_ROUNDOFF, round_down, round_up
from optcomp.adaptive import BRRun, FixedRun, Run
from optcomp.fdp import gdp_compose
from optcomp.mechanisms import (
    BoundedRange,
    EpsilonDelta,
    Gaussian,
    LaplaceNoisyMax,
    Mechanism,
    PermuteAndFlip,
    RandomizedResponse,
    SubsampledWithoutReplacement,
    privacy_loss_laws,
)
from optcomp.mechanisms.renyi import is_renyi_item
from optcomp.mechanisms.truncated import dominated_counterpart

#: Relative error of :func:`merged_mu`: ≤ 3.5u from μᵢ = Δᵢ/σᵢ, its square, kᵢ·, ``fsum`` and ``sqrt``
#: (each correctly rounded, all terms positive), ≤ 5.5u on ``gdp_compose``'s rescaled path (squares
#: outside the normal range); widened outward by 8u, above both.
MU_SLACK = 8.0 * UNIT_ROUNDOFF

def merged_mu(gaussians: Iterable[tuple[Gaussian, int]]) -> float:
    """μ of the composition of ``count`` runs of each Gaussian: √(Σ kᵢ μᵢ²), μᵢ = Δᵢ/σᵢ.

    Gaussian mechanisms compose exactly, G_{μ₁} ⊗ G_{μ₂} = G_{√(μ₁² + μ₂²)} (Dong–Roth–Su Cor 3.3):
    :func:`optcomp.fdp.gdp_compose`, the one home of the rule (relative error ≤ 4.5u from the computed
    μᵢ, each of which adds u: ≤ 5.5u in all; :class:`Composition` widens it outward by ``MU_SLACK``).
    """
    pairs = list(gaussians)
    return gdp_compose([m.mu for m, _ in pairs], [k for _, k in pairs])


def dominating_gaussian(gaussians: Iterable[tuple[Gaussian, int]]) -> Gaussian:
    """One ``Gaussian(sigma=1/μ)`` at least as distinguishing as the exact merge of the runs (DRS Cor 3.3).

    μ is :func:`merged_mu` widened up by its rounding (``MU_SLACK``) and σ = 1/μ rounded down, so
    every certified upper end computed from it (directly, or after subsampling, which is monotone in
    the dominating pair) is an upper end for the exact composition; lower ends may sit that few-ulp
    step above the exact merge's."""
    return Gaussian(round_down(1.0 / round_up(merged_mu(gaussians), MU_SLACK), 0.0))


def merge_gaussians(counts: dict[Mechanism, int]) -> dict[Mechanism, int]:
    """All Gaussian items replaced by their :func:`dominating_gaussian` (first, then the other items in
    their order); unchanged when there is at most one Gaussian run once."""
    gaussians = [(m, k) for m, k in counts.items() if isinstance(m, Gaussian)]
    if len(gaussians) <= 1 and all(k == 1 for _, k in gaussians):
        return counts
    merged: dict[Mechanism, int] = {dominating_gaussian(gaussians): 1}
    merged.update((m, k) for m, k in counts.items() if not isinstance(m, Gaussian))
    return merged


def black_box(mechanism: Mechanism) -> tuple[float, float] | None:
    """(ε, δ) of a mechanism whose pair is the KOV canonical one (``EpsilonDelta``, ``RandomizedResponse``)."""
    if isinstance(mechanism, EpsilonDelta):
        return mechanism.epsilon, mechanism.delta
    if isinstance(mechanism, (RandomizedResponse, PermuteAndFlip, LaplaceNoisyMax)):
        return mechanism.epsilon, 0.0  # the ε-DP pair (these selections are not bounded-range)
    return None


def ordered(pairs: Iterable[tuple[Mechanism, int]]) -> bool:
    """Whether a composition of these items keeps its order: it has a bounded-range step (module docstring)."""
    return any(isinstance(m, BoundedRange) for m, _ in pairs)


def sequence(pairs: Iterable[tuple[Mechanism, int]]) -> tuple[tuple[Mechanism, int], ...]:
    """The items in order, equal *adjacent* items merged (the order-keeping counterpart of pooling)."""
    out: list[tuple[Mechanism, int]] = []
    for mechanism, k in pairs:
        if out and out[-1][0] == mechanism:
            out[-1] = (mechanism, out[-1][1] + k)
        else:
            out.append((mechanism, k))
    return tuple(out)


def arranged(pairs: Iterable[tuple[Mechanism, int]]) -> tuple[tuple[Mechanism, int], ...]:
    """:func:`sequence` for compositions that keep their order (:func:`ordered`), else :func:`pool`."""
    items = tuple(pairs)
    return sequence(items) if ordered(items) else pool(items)


def adaptive_runs(items: Sequence[tuple[Mechanism, int]]) -> tuple[Run, ...]:
    """The runs of the adaptive engine: each BR item a :class:`~optcomp.adaptive.BRRun`, each maximal stretch of
    other items one :class:`~optcomp.adaptive.FixedRun` (its Gaussians merged into their dominating Gaussian,
    :func:`merge_gaussians`; fixed pairs commute)."""
    runs: list[Run] = []
    block: dict[Mechanism, int] = {}

    def flush() -> None:
        if block:
            laws = []
            for mechanism, k in merge_gaussians(dict(block)).items():
                remove, add = privacy_loss_laws(mechanism)
                laws.append((remove, None if add is remove else add, k))
            runs.append(FixedRun(tuple(laws)))
            block.clear()

    for mechanism, k in items:
        if isinstance(mechanism, BoundedRange):
            flush()
            runs.append(BRRun(mechanism.epsilon, k))
        else:
            block[mechanism] = block.get(mechanism, 0) + k
    flush()
    return tuple(runs)


def pool(pairs: Iterable[tuple[Mechanism, int]]) -> tuple[tuple[Mechanism, int], ...]:
    """Counts of equal mechanisms added (order of first appearance kept)."""
    counts: dict[Mechanism, int] = {}
    for mechanism, k in pairs:
        counts[mechanism] = counts.get(mechanism, 0) + k
    return tuple(counts.items())


def dominated_items(items: Sequence[tuple[Mechanism, int]]) -> tuple[tuple[Mechanism, int], ...] | None:
    """The items whose composition's lower ends bound the run's from below (each item's
    :func:`~optcomp.mechanisms.truncated.dominated_counterpart`, equal ones pooled), or ``None`` where the
    items' own composition's lower ends already do: every item's law is its run's own pair, or the run is
    one fixed-size step alone (the symmetrized law of one step is attained). Compose the result with no
    relation fixed (the one its items fix: add/remove, or none)."""

    def own(m: Mechanism) -> bool:  # q = 1: no sampling, the step is its base (stated for substitution)
        return (isinstance(m, SubsampledWithoutReplacement) and m.sampling_rate == 1.0) or dominated_counterpart(m) is m

    if all(own(m) for m, _ in items):
        return None
    if len(items) == 1 and items[0][1] == 1 and (is_renyi_item(items[0][0]) or
                                                 isinstance(items[0][0], SubsampledWithoutReplacement)):
        return None  # one curve-known box (the worst law of its curve is a run) or one fixed-size step alone
    counterparts = [(dominated_counterpart(m), k) for m, k in items]
    silent = RandomizedResponse(0.0)
    if any(m != silent for m, _ in counterparts):
        counterparts = [(m, k) for m, k in counterparts if m != silent]  # a silent run adds nothing
    return arranged(counterparts)  # in order where the run keeps it

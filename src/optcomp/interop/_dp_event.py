"""dp_accounting ``DpEvent`` trees (objects, named tuples or JSON) → an optcomp composition.

Three spellings of the same tree are read, duck-typed so that dp_accounting is never imported here:

* the event objects themselves (recognised by class name, fields read by attribute);
* their ``to_named_tuple()`` form (``class_name`` plus the fields);
* the JSON schema of ``docs/interop.md``: ``{"class_name": "GaussianDpEvent", "noise_multiplier": 1.1}``,
  nested events as nested objects, lists as lists (``"module_name"`` is optional and ignored).

Each event maps to a mechanism specification of :mod:`optcomp.mechanisms` *stated for the neighbouring
relation given* (dp_accounting's event semantics; ``docs/interop.md`` has the table):

==================================  ====================================  ===================================
event                               add/remove one record                 substitution (replace one record)
==================================  ====================================  ===================================
``GaussianDpEvent(z)``              ``Gaussian(sigma=z)``                 ``Gaussian(sigma=z, sensitivity=2)``
``LaplaceDpEvent(s)``               ``Laplace(scale=s)``                  ``Laplace(scale=s, sensitivity=2)``
``DiscreteLaplaceDpEvent(a, C)``    ``DiscreteLaplace(1/a, C)``           ``DiscreteLaplace(1/a, 2C)``
``RandomizedResponseDpEvent(p,k)``  refused (as dp_accounting does)       k-ary RR, e^ε = 1 + k(1 − p)/p
``EpsilonDeltaDpEvent(ε, δ)``       ``EpsilonDelta(ε, δ)``                ``EpsilonDelta(ε, δ)``
``PoissonSampledDpEvent(q, e)``     ``PoissonSubsampled(M(e), q)``        refused; ``sampling="fixed_size"``:
                                                                          ``SubsampledWithoutReplacement``
``SampledWithoutReplacement(n,m,e)``refused (dataset size changes)        ``SubsampledWithoutReplacement``
``MixtureOfGaussiansDpEvent``       ``MixtureOfGaussians``                 same (the event states the pair)
``DiscreteGaussianDpEvent(σ, Δ, d)`` ``DiscreteGaussian`` (worst shift)    same (the event states f's Δ)
``TruncatedSubsampledGaussian...``  ``TruncatedPoissonGaussian``           refused (law is for add/remove)
``RandomAllocationDpEvent(e, k, t)`` ``RandomAllocation`` (two ends)       refused (law is for add/remove)
``SingleEpochTreeAggregation(z, m)`` zero-out only: ``Gaussian(z, √depth)``  refused (as dp_accounting)
``SelfComposed`` / ``Composed``     counts multiply / lists concatenate   same
``NoOpDpEvent``                     nothing                               nothing
``NonPrivateDpEvent``               fully distinguishing pair: ε = ∞      same
==================================  ====================================  ===================================

``EpsilonDeltaDpEvent`` is optcomp's extension of the schema (dp_accounting 0.6 has no such class): an
(ε, δ)-DP black box, composed optimally. Under sampling, the sampled sub-tree must reduce to one
mechanism: a single event, or a composition of Gaussians (exactly one Gaussian with μ² = Σ kᵢμᵢ²,
Dong–Roth–Su Cor 3.3, since the pair's likelihood ratio depends on one linear statistic). Anything else
there, and every event without an exact law here (sampling with replacement, zCDP, a discrete Gaussian
whose worst integer shift the sensitivity does not determine, ...), is a ``ValueError`` naming the event
and its path in the tree — never a silent approximation. Where a peer's number for the tree is no
guarantee for the run described, the result carries a :class:`~optcomp.interop.PeerWarning` (and a
``PeerUnderReportWarning`` is issued): :mod:`optcomp.interop._safety`.

``RandomAllocationDpEvent(event=GaussianDpEvent(σ), num_selected=k, num_steps=t)`` (dp_accounting after
google/differential-privacy PR #414; fields and their order as in that repository's
``python/dp_accounting/dp_accounting/dp_event_test.py``: ``RandomAllocationDpEvent(event=...,
num_selected=10, num_steps=100)`` and the positional ``(NoOpDpEvent(), 0, 1)``) is one epoch of t
steps in which each example is allocated to k of them (jax_privacy's ``RandomAllocationConfig`` builds
it with ``num_steps = iterations``, ``num_selected = total_participations``). optcomp has no exact law
for it (``docs/samplers.md`` §5): it is kept apart from ``items`` as a
:class:`~optcomp.mechanisms.allocation.RandomAllocation`, and a query's upper end composes its
dominating amplified epochs (``RandomAllocation.upper_items``), its lower end the dominated pair
(``RandomAllocation.lower_pair``).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Literal

from optcomp._items import dominating_gaussian
from optcomp._numerics import DEFAULT_ACCURACY, Accuracy, Bound
from optcomp.interop._fields import _integer, _node, _real, _short
from optcomp.interop._relation import Neighbouring, check_neighbouring, compose_items
from optcomp.interop._safety import (
    PeerWarning,
    emit,
    fixed_size_replace_one,
    poisson_read_as_fixed_size,
    sampled_discrete_gaussian,
)
from optcomp.interop._sampler_events import FIELD_DEFAULTS, NON_PRIVATE, SAMPLER_EVENTS
from optcomp.mechanisms import (
    DiscreteGaussian,
    DiscreteLaplace,
    EpsilonDelta,
    Gaussian,
    KaryRandomizedResponse,
    Laplace,
    Mechanism,
    PoissonSubsampled,
    RandomizedResponse,
    SubsampledWithoutReplacement,
)
from optcomp.mechanisms.allocation import RandomAllocation
from optcomp.mechanisms.truncated import dominated_counterpart
from optcomp.queries import Composition, RunBracket

#: Supported event classes and their fields, in dp_accounting's order (the JSON schema).
SUPPORTED: dict[str, tuple[str, ...]] = {
    "NoOpDpEvent": (),
    "NonPrivateDpEvent": (),
    "GaussianDpEvent": ("noise_multiplier",),
    "LaplaceDpEvent": ("noise_multiplier",),
    "DiscreteLaplaceDpEvent": ("noise_parameter", "sensitivity"),
    "RandomizedResponseDpEvent": ("noise_parameter", "num_buckets"),
    "EpsilonDeltaDpEvent": ("epsilon", "delta"),
    "SelfComposedDpEvent": ("event", "count"),
    "ComposedDpEvent": ("events",),
    "PoissonSampledDpEvent": ("sampling_probability", "event"),
    "SampledWithoutReplacementDpEvent": ("source_dataset_size", "sample_size", "event"),
    # Field order of google/differential-privacy python/dp_accounting/dp_accounting/dp_event_test.py
    # (after PR #414): RandomAllocationDpEvent(event, num_selected, num_steps).
    "RandomAllocationDpEvent": ("event", "num_selected", "num_steps"),
    "SingleEpochTreeAggregationDpEvent": ("noise_multiplier", "step_counts"),
    **{name: fields for name, (fields, _) in SAMPLER_EVENTS.items()},
}

#: dp_accounting events optcomp refuses, with the reason given in the error.
UNSUPPORTED: dict[str, str] = {
    "UnsupportedDpEvent": "the event declares that it has no DP description",
    "SampledWithReplacementDpEvent": "no exact law of sampling with replacement is implemented",
    "RepeatAndSelectDpEvent": "a selection is read at the root of a tree by optcomp.interop.from_repeat_and_select "
    "(optcomp select --dp-event FILE); inside a composition it is not supported",
    "ZCDpEvent": "a zCDP guarantee is not a privacy-loss law (only RDP-style bounds follow from it)",
}

#: How the batches of a run were formed, as the user states it: as the sampling events say (``"event"``), or
#: fixed-size batches (``"fixed_size"``: each ``PoissonSampledDpEvent(q, e)`` is a uniform batch of rate q,
#: accounted under substitution as ``optcomp.dpsgd``'s ``"fixed_size"``).
Sampling = Literal["event", "fixed_size"]
SAMPLINGS: tuple[Sampling, ...] = ("event", "fixed_size")

#: ``"none"`` (no mechanism) or the engine :meth:`optcomp.queries.Composition.engine` picks.
Engine = Literal["none", "gdp", "optimal", "lattice", "grid", "renyi", "adaptive"]


@dataclass(frozen=True)
class EventComposition:
    """The composition an imported description stands for, and its certified queries.

    Attributes:
        items: ``(mechanism, count)`` pairs, the arguments of :func:`optcomp.compose` (equal
            mechanisms pooled, order of first appearance kept). Empty for a tree of no-ops.
        neighbouring: the relation the mechanisms are stated for.
        non_private: paths of the ``NonPrivateDpEvent`` nodes met (outside sampling they make the
            whole composition non-private; under sampling they are accounted exactly).
        allocations: ``(RandomAllocation, count)`` pairs read from ``RandomAllocationDpEvent``s
            (no exact law: the upper end composes ``items`` with each one's dominating epochs,
            ``RandomAllocation.upper_items``, the lower end ``items`` with each one's dominated pair).
        warnings: where a peer's number for this tree is no guarantee for the run described
            (:class:`~optcomp.interop.PeerWarning`, ``docs/interop.md`` §8); optcomp's bracket is unaffected.

    Which engine answers (``engine``):

    * ``"none"``: no mechanism at all — ε = 0 and δ = 0 exactly;
    * otherwise what the queries floor decides for the (upper end's) items at the default accuracy,
      :meth:`optcomp.queries.Composition.engine`: ``"gdp"`` (Gaussians only: the GDP closed form),
      ``"optimal"`` (``EpsilonDelta`` items only: the optimal composition of (ε, δ)-DP black boxes,
      Kairouz–Oh–Viswanath Thm III.3, Murtagh–Vadhan Thm 1.5; this also covers a top-level
      ``NonPrivateDpEvent``) or ``"grid"`` (the PLD engine's certified bracket).

    The label is read from the floor, not decided here; every query goes through :func:`optcomp.compose`.
    """

    items: tuple[tuple[Mechanism, int], ...]
    neighbouring: Neighbouring
    non_private: tuple[str, ...] = field(default=())
    allocations: tuple[tuple[RandomAllocation, int], ...] = field(default=())
    warnings: tuple[PeerWarning, ...] = field(default=())

    @property
    def empty(self) -> bool:
        """No mechanism at all: ε = 0 and δ = 0 exactly (``engine`` is ``"none"``)."""
        return not self.items and not self.allocations

    @property
    def engine(self) -> Engine:
        """``"none"``, or the floor's engine for the upper end's items (class docstring)."""
        if self.empty:
            return "none"
        return compose_items(self.dominating_items(), self.neighbouring, DEFAULT_ACCURACY).engine()

    def dominating_items(self) -> tuple[tuple[Mechanism, int], ...]:
        """``items`` and each allocation's dominating epochs (``RandomAllocation.upper_items``: the
        amplified split pair, Lemma B blocks for k > 1): the upper end's composition."""
        blocks = [(m, c * k) for a, k in self.allocations for m, c in a.upper_items()]
        return _pooled([*self.items, *blocks])

    def dominated_items(self) -> tuple[tuple[Mechanism, int], ...]:
        """The lower end's composition: ``items`` with each truncated-Poisson or fixed-size step replaced by
        :func:`~optcomp.mechanisms.truncated.dominated_counterpart`, and each allocation's dominated pair."""
        pairs: list[tuple[Mechanism, int]] = [(a.lower_pair(), k) for a, k in self.allocations]
        return _pooled([*((dominated_counterpart(m), k) for m, k in self.items), *pairs])

    @property
    def has_dominating_pairs(self) -> bool:
        """Whether some item's law only dominates the run (allocations, truncated Poisson, fixed size): then the
        lower end comes from :meth:`dominated_items`, not from the dominating composition."""
        return bool(self.allocations) or any(dominated_counterpart(m) is not m for m, _ in self.items)

    @property
    def private(self) -> bool:
        """False when the composition contains a non-private release outside any sampling (ε = ∞)."""
        return not any(m == NON_PRIVATE for m, _ in self.items)

    def pld(self, *, accuracy: Accuracy = DEFAULT_ACCURACY) -> Composition:
        """The composition as :func:`optcomp.compose` returns it (its ``pld()`` is the PLD grid;
        ``ValueError`` if it is empty).

        With ``allocations``, a truncated-Poisson or a fixed-size step there is no exact law: this is the
        *dominating* composition (:meth:`dominating_items`, ``lower_end="law"``: ``Composition.dominating``),
        whose bracket's lower end is not the run's; :meth:`epsilon` and :meth:`delta` take their lower end
        from :meth:`dominated_items` instead.
        """
        return self._composition(accuracy).dominating()

    def _composition(self, accuracy: Accuracy) -> Composition:
        """:meth:`dominating_items` composed, with the queries floor's run lower ends (``Composition.dominated``)."""
        if not self.items and not self.allocations:
            raise ValueError("the composition has no mechanism (only no-op events); its ε and δ are 0")
        return compose_items(self.dominating_items(), self.neighbouring, accuracy)

    def dominated_pld(self, *, accuracy: Accuracy = DEFAULT_ACCURACY) -> Composition:
        """The composition of :meth:`dominated_items` (:meth:`pld` itself when there are no dominating pairs):
        its ε/δ lower ends, and its trade-off curve's upper end (the attack side), bound the run's."""
        if not self.has_dominating_pairs:
            return self.pld(accuracy=accuracy)
        # no relation passed on: a fixed-size step's counterpart is PoissonSubsampled, stated for add/remove;
        # an allocation's labelled pair is a lower-only law (its lower end is all that is read)
        from optcomp.composition import dominated_composition

        return dominated_composition(*self.dominated_items(), accuracy=accuracy)

    def run_bracket(self, *, accuracy: Accuracy = DEFAULT_ACCURACY) -> RunBracket:
        """The run's :class:`~optcomp.queries.RunBracket`: upper ends from :meth:`pld`, lower ends from
        :meth:`dominated_pld` with allocations (each one's dominated pair), else from the composition's own
        (truncated-Poisson and fixed-size steps: their explicit pairs, ``Composition.run_bracket``)."""
        if not self.allocations:
            return self._composition(accuracy).run_bracket()
        return RunBracket(self.pld(accuracy=accuracy), self.dominated_pld(accuracy=accuracy))

    def epsilon(self, delta: float, *, accuracy: Accuracy = DEFAULT_ACCURACY) -> Bound:
        """Certified bracket on the optimal ε at ``delta`` (``upper`` certified by the engine used).

        ``Bound(inf, inf)`` for a non-private composition (exact: δ(ε) = 1 for every ε).
        """
        from optcomp._numerics import check_probability

        d = check_probability("delta", delta)
        if self.empty:
            return Bound.exact(0.0)
        if not self.private:
            return Bound(math.inf, math.inf) if d < 1.0 else Bound.exact(0.0)
        return self.run_bracket(accuracy=accuracy).epsilon(d)  # the floor picks the engine (optcomp.queries)

    def delta(self, epsilon: float, *, accuracy: Accuracy = DEFAULT_ACCURACY) -> Bound:
        """Certified bracket on the optimal δ at ``epsilon`` (``Bound(1, 1)`` when not private)."""
        from optcomp._numerics import check_nonnegative

        e = check_nonnegative("epsilon", epsilon)
        if self.empty:
            return Bound.exact(0.0)
        if not self.private:
            return Bound.exact(1.0)
        return self.run_bracket(accuracy=accuracy).delta(e)

    def to_dp_event_json(self) -> dict[str, Any]:
        """This composition in the JSON schema of ``docs/interop.md`` (see :func:`to_dp_event_json`)."""
        from optcomp.interop._export import to_dp_event_json

        return to_dp_event_json(*self.items, *self.allocations, neighbouring=self.neighbouring)


def _pooled(items: Sequence[tuple[Mechanism, int]]) -> tuple[tuple[Mechanism, int], ...]:
    """Equal mechanisms' counts added, order of first appearance kept."""
    pooled: dict[Mechanism, int] = {}
    for m, k in items:
        pooled[m] = pooled.get(m, 0) + k
    return tuple(pooled.items())


def _check_fields(name: str, fields: dict[str, Any], path: str) -> None:
    if name in UNSUPPORTED:
        raise ValueError(f"{name} at {path} is not supported by optcomp: {UNSUPPORTED[name]}")
    if name not in SUPPORTED:
        known = ", ".join(sorted(SUPPORTED))
        raise ValueError(f"{path}: unknown event class_name {name!r}; supported: {known}")
    expected = SUPPORTED[name]
    missing = [f for f in expected if f not in fields]
    extra = sorted(set(fields) - set(expected))
    if missing:
        raise ValueError(f"{path}: {name} needs field(s) {missing}, has {sorted(fields)}")
    if extra:
        raise ValueError(f"{path}: {name} has unknown field(s) {extra}; its fields are {list(expected)}")


# ---------------------------------------------------------------------------------------------
# The walk: a tree → (mechanism, count) items.
# ---------------------------------------------------------------------------------------------


@dataclass
class _Walk:
    neighbouring: Neighbouring
    sampling: Sampling = "event"
    items: dict[Mechanism, int] = field(default_factory=dict)
    non_private: list[str] = field(default_factory=list)
    allocations: dict[RandomAllocation, int] = field(default_factory=dict)
    warnings: list[PeerWarning] = field(default_factory=list)

    def add(self, mechanism: Mechanism | None, count: int) -> None:
        if mechanism is not None and count > 0:
            self.items[mechanism] = self.items.get(mechanism, 0) + count

    def visit(self, node: object, path: str, count: int) -> None:
        """Add the items of ``node`` run ``count`` times."""
        name, fields = _node(node, path)
        fields = {**FIELD_DEFAULTS.get(name, {}), **fields}
        _check_fields(name, fields, path)
        if name == "ComposedDpEvent":
            events = fields["events"]
            if isinstance(events, (str, bytes, Mapping)) or not isinstance(events, Sequence):
                raise ValueError(f"{path}.events must be a list of events, got {_short(events)}")
            for i, child in enumerate(events):
                self.visit(child, f"{path}.events[{i}]", count)
            return
        if name == "SelfComposedDpEvent":
            k = _integer(f"{path}.count", fields["count"], low=0)
            self.visit(fields["event"], f"{path}.event", count * k)
            return
        if name == "RandomAllocationDpEvent":
            found = self.random_allocation(fields, path)
            if isinstance(found, RandomAllocation):
                self.allocations[found] = self.allocations.get(found, 0) + count
            else:
                self.add(found, count)
            return
        if name == "NonPrivateDpEvent":
            self.non_private.append(path)
        self.add(self.mechanism(name, fields, path), count)

    def random_allocation(self, fields: dict[str, Any], path: str) -> RandomAllocation | Mechanism | None:
        """``RandomAllocationDpEvent`` → ``RandomAllocation`` (module docstring), a no-op or non-private."""
        if self.neighbouring != "add_remove":
            raise ValueError(
                f"RandomAllocationDpEvent at {path} is supported under add/remove only (optcomp's pairs "
                "are derived for that relation, as jax_privacy states it); use neighbouring='add_remove'"
            )
        t = _integer(f"{path}.num_steps", fields["num_steps"], low=1)
        k = _integer(f"{path}.num_selected", fields["num_selected"], low=0, high=t)
        inner = self.single(fields["event"], f"{path}.event")
        if k == 0 or inner is None:
            return None
        if inner == NON_PRIVATE:
            return NON_PRIVATE
        if not isinstance(inner, Gaussian):
            raise ValueError(  # noqa: TRY004 (contract: ValueError)
                f"{path}.event: RandomAllocationDpEvent is supported with a Gaussian step only (the pairs "
                f"of docs/samplers.md §5), got {type(inner).__name__}"
            )
        return RandomAllocation(sigma=inner.sigma / inner.sensitivity, steps=t, selected=k)

    def mechanism(self, name: str, fields: dict[str, Any], path: str) -> Mechanism | None:
        """The one mechanism of a non-composition node (``None`` for a no-op)."""
        substitution = self.neighbouring == "substitution"
        if name == "NoOpDpEvent":
            return None
        if name == "NonPrivateDpEvent":
            return NON_PRIVATE
        if name in SAMPLER_EVENTS:  # docs/samplers.md: MixtureOfGaussians, TruncatedPoissonGaussian
            found = SAMPLER_EVENTS[name][1](fields, path, self.neighbouring)
            if found == NON_PRIVATE:
                self.non_private.append(path)
            return found
        if name in ("GaussianDpEvent", "LaplaceDpEvent"):
            z = _real(f"{path}.noise_multiplier", fields["noise_multiplier"], low=0.0)
            if z == 0.0:  # the exact sum is released (dp_accounting: non-private as well)
                self.non_private.append(path)
                return NON_PRIVATE
            cls = Gaussian if name == "GaussianDpEvent" else Laplace
            # ‖vᵢ‖ ≤ C per record: the sum moves by C when one is added/removed, 2C when one is replaced.
            if cls is Gaussian:
                return Gaussian(sigma=z, sensitivity=2.0 if substitution else 1.0)
            return Laplace(scale=z, sensitivity=2.0 if substitution else 1.0)
        if name == "DiscreteLaplaceDpEvent":
            a = _real(f"{path}.noise_parameter", fields["noise_parameter"], low=0.0, low_open=True)
            c = _integer(f"{path}.sensitivity", fields["sensitivity"], low=0)
            if c == 0:
                return None
            return DiscreteLaplace(1.0 / a, sensitivity=2 * c if substitution else c)
        if name == "RandomizedResponseDpEvent":
            return self.randomized_response(fields, path)
        if name == "SingleEpochTreeAggregationDpEvent":
            return self.tree_aggregation(fields, path)
        if name == "EpsilonDeltaDpEvent":
            eps = _real(f"{path}.epsilon", fields["epsilon"], low=0.0)
            dlt = _real(f"{path}.delta", fields["delta"], low=0.0, high=1.0)
            return EpsilonDelta(eps, delta=dlt)
        if name == "PoissonSampledDpEvent":
            return self.poisson(fields, path)
        # SampledWithoutReplacementDpEvent
        if not substitution:
            raise ValueError(
                f"SampledWithoutReplacementDpEvent at {path} is supported under substitution only (a "
                "fixed-size sample of a dataset whose size changes is not defined); use "
                "neighbouring='substitution'"
            )
        n = _integer(f"{path}.source_dataset_size", fields["source_dataset_size"], low=1)
        m = _integer(f"{path}.sample_size", fields["sample_size"], low=0, high=n)
        inner = self.single(fields["event"], f"{path}.event")
        if m == 0 or inner is None:
            return None
        self.sampled(inner, path, fixed_size=True)
        return inner if m == n else SubsampledWithoutReplacement(inner, sampling_rate=m / n)

    def poisson(self, fields: dict[str, Any], path: str) -> Mechanism | None:
        """``PoissonSampledDpEvent(q, e)``: Poisson sampling under add/remove, or — with ``sampling="fixed_size"``
        — uniform batches of rate q under substitution (as ``SampledWithoutReplacementDpEvent``)."""
        fixed = self.sampling == "fixed_size"
        if fixed != (self.neighbouring == "substitution"):
            if fixed:
                raise ValueError(
                    f"PoissonSampledDpEvent at {path}: fixed-size batches (sampling='fixed_size') are accounted "
                    "under substitution (REPLACE_ONE, as optcomp.dpsgd's 'fixed_size'); use neighbouring='substitution'"
                )
            raise ValueError(
                f"PoissonSampledDpEvent at {path} is not supported under substitution: optcomp has no tight law "
                "for Poisson sampling when a record is replaced (dp_accounting's PLDAccountant answers it as "
                "Poisson sampling, which does not hold for fixed-size batches); for fixed-size batches pass "
                "sampling='fixed_size' (optcomp account --sampling fixed_size), else use neighbouring='add_remove'"
            )
        q = _real(f"{path}.sampling_probability", fields["sampling_probability"], low=0.0, high=1.0)
        inner = self.single(fields["event"], f"{path}.event")
        if q == 0.0 or inner is None:
            return None
        self.sampled(inner, path, fixed_size=fixed)
        if q == 1.0:
            return inner
        return SubsampledWithoutReplacement(inner, sampling_rate=q) if fixed else PoissonSubsampled(inner, sampling_rate=q)

    def sampled(self, inner: Mechanism, path: str, *, fixed_size: bool) -> None:
        """The peers' under-reports for a sampled ``inner`` (``optcomp.interop._safety``)."""
        if isinstance(inner, DiscreteGaussian):
            self.warnings.append(sampled_discrete_gaussian(f"{path}.event"))
        elif isinstance(inner, Gaussian) and fixed_size:
            poisson = self.sampling == "fixed_size"
            self.warnings.append(poisson_read_as_fixed_size(path) if poisson else fixed_size_replace_one(path))

    def tree_aggregation(self, fields: dict[str, Any], path: str) -> Mechanism | None:
        """``SingleEpochTreeAggregationDpEvent(z, m)``: every record at most once across the trees of m steps
        (Kairouz et al., arXiv 2103.00039, App. D), so Δ² = max over trees of the depth ⌈log₂(mᵢ + 1)⌉
        under zero-out (``docs/matrix.md`` §3): ``Gaussian(z, sensitivity=√depth)``, √ rounded up (the
        lower end of a query is then at most one ulp of μ above the truth's)."""
        if self.neighbouring != "zero_out":
            raise ValueError(
                f"SingleEpochTreeAggregationDpEvent at {path} is supported under zero_out only (dp_accounting's "
                "REPLACE_SPECIAL, the relation its accountants use); use neighbouring='zero_out'"
            )
        z = _real(f"{path}.noise_multiplier", fields["noise_multiplier"], low=0.0)
        counts = fields["step_counts"]
        if isinstance(counts, (str, bytes, Mapping)) or not isinstance(counts, (Sequence, numbers.Integral)):
            raise ValueError(f"{path}.step_counts must be an integer or a list of integers, got {_short(counts)}")  # noqa: TRY004 (contract: ValueError)
        steps = [counts] if isinstance(counts, numbers.Integral) else list(counts)
        if not steps:
            raise ValueError(f"{path}.step_counts must be non-empty")
        sizes = [_integer(f"{path}.step_counts[{i}]", c, low=0) for i, c in enumerate(steps)]
        depth = max(m.bit_length() for m in sizes)  # ⌈log₂(m + 1)⌉
        if depth == 0:
            return None
        if z == 0.0:
            self.non_private.append(path)
            return NON_PRIVATE
        root = math.sqrt(depth)
        while Fraction(root) ** 2 < depth:  # checked exactly
            root = math.nextafter(root, math.inf)
        return Gaussian(sigma=z, sensitivity=root)

    def randomized_response(self, fields: dict[str, Any], path: str) -> Mechanism | None:
        """k-ary RR with noise p: true bucket w.p. 1 − p + p/k, each other w.p. p/k, so under substitution
        e^ε = (1 − p + p/k)/(p/k) = 1 + k(1 − p)/p (dp_accounting ``from_randomized_response``)."""
        if self.neighbouring != "substitution":
            raise ValueError(
                f"RandomizedResponseDpEvent at {path} needs neighbouring='substitution' (a record's "
                "bucket is replaced), as in dp_accounting; got 'add_remove'"
            )
        p = _real(f"{path}.noise_parameter", fields["noise_parameter"], low=0.0, high=1.0)
        k = _integer(f"{path}.num_buckets", fields["num_buckets"], low=1)
        if k == 1:
            return None
        if p == 0.0:  # the true bucket is always reported
            self.non_private.append(path)
            return NON_PRIVATE
        eps = math.log1p(k * (1.0 - p) / p)
        return RandomizedResponse(eps) if k == 2 else KaryRandomizedResponse(eps, k=k)

    def single(self, node: object, path: str) -> Mechanism | None:
        """The one mechanism a sampled sub-tree stands for (module docstring), or ``None`` for a no-op."""
        sub = _Walk(self.neighbouring, self.sampling)
        sub.visit(node, path, 1)
        self.non_private.extend(sub.non_private)
        self.warnings.extend(sub.warnings)
        if sub.allocations:
            raise ValueError(
                f"{path}: a RandomAllocationDpEvent cannot be sampled or allocated again (no law of the "
                "nested scheme is implemented)"
            )
        items = list(sub.items.items())
        if not items:
            return None
        if any(m == NON_PRIVATE for m, _ in items):
            return NON_PRIVATE
        if len(items) == 1 and items[0][1] == 1:
            return items[0][0]
        if all(isinstance(m, Gaussian) for m, _ in items):
            return dominating_gaussian((m, k) for m, k in items if isinstance(m, Gaussian))
        names = ", ".join(f"{type(m).__name__} x{k}" for m, k in items)
        raise ValueError(
            f"{path}: sampling a composition of {names} is not supported (the amplified law of a "
            "composition is not implemented; only a single mechanism or Gaussians can be sampled)"
        )


def from_dp_event(
    event: object, *, neighbouring: object = "add_remove", sampling: Sampling = "event"
) -> EventComposition:
    """The composition a dp_accounting ``DpEvent`` tree describes (module docstring for the mapping).

    Args:
        event: a ``DpEvent`` object, its ``to_named_tuple()`` form, or the JSON form of
            ``docs/interop.md`` (a dict ``{"class_name": ..., field: value, ...}``, nested).
        neighbouring: ``"add_remove"`` (dp_accounting's default ``ADD_OR_REMOVE_ONE``) or
            ``"substitution"`` (``REPLACE_ONE``); dp_accounting's enum members are accepted.
        sampling: how the run's batches were formed: ``"event"`` (as the sampling events say, the default)
            or ``"fixed_size"`` (each ``PoissonSampledDpEvent(q, e)`` is a uniform batch of rate q, under
            substitution).

    Warns:
        PeerUnderReportWarning: once per :attr:`EventComposition.warnings` entry, where a peer's number for
            this tree is no guarantee for the run described (``docs/interop.md`` §8).

    Returns:
        An :class:`EventComposition`; its ``epsilon(δ)``/``delta(ε)`` are certified brackets.

    Raises:
        ValueError: an unsupported event, a malformed node or an out-of-range field; the message names
            the event and its path in the tree (``root.events[2].event``).
    """
    rel = check_neighbouring(neighbouring)
    if sampling not in SAMPLINGS:
        raise ValueError(f"sampling must be one of {SAMPLINGS}, got {sampling!r}")
    walk = _Walk(rel, sampling)
    walk.visit(event, "root", 1)
    found = tuple(dict.fromkeys(walk.warnings))  # one per event path
    emit(found)
    return EventComposition(
        tuple(walk.items.items()), rel, tuple(walk.non_private), tuple(walk.allocations.items()), found
    )

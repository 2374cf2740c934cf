"""The queries floor: one place decides which engine answers a composition, and at what accuracy.

A :class:`Composition` (built by :func:`optcomp.compose`) is a frozen value: the pooled
``(mechanism, count)`` items and the neighbouring relation. :meth:`Composition.route` is the one routing
rule of the package: for an accuracy it hands back an :class:`~optcomp.engines.Engine` (cached per
accuracy), and each query — ``epsilon``, ``delta``, ``delta_curve``, ``hockey_stick_curve``,
``epsilon_estimate`` — is one call on it (``docs/architecture.md``):

* ``"gdp"`` — every item a :class:`~optcomp.mechanisms.Gaussian` (automatic accuracy): the Gaussians
  compose exactly into μ = √(Σ kᵢ μᵢ²) (Dong–Roth–Su Cor 3.3, :func:`merged_mu`), and μ-GDP is
  *equivalent* to its (ε, δ(ε)) curve (DRS Cor 2.13): :class:`~optcomp.engines.GdpEngine`.
* ``"optimal"`` — every item an (ε, δ) black box (``EpsilonDelta``; ``RandomizedResponse`` is δ = 0)
  whose ε ≤ ``optimal.HUGE_EPS`` (automatic accuracy): the composition of the KOV canonical pairs *is*
  the optimal black-box composition (KOV Thm III.3): :class:`~optcomp.engines.OptimalEngine`, which
  hands the :class:`~optcomp.Accuracy` itself to :mod:`optcomp.optimal` (its one translation).
* ``"lattice"`` — every item's loss on one exact lattice (:func:`~optcomp.mechanisms.lattice_law`:
  discrete Gaussians of one σ), automatic accuracy, and the composition's estimated window within half the
  memory cap: the exact convolution over the lattice index (:class:`~optcomp.engines.LatticeEngine`).
* ``"adaptive"`` — any item a :class:`~optcomp.mechanisms.BoundedRange` step (the exponential mechanism,
  Gumbel noisy max, top-k peeling): the adaptive backward recursion over the steps *in the order given*
  (:class:`~optcomp.engines.AdaptiveEngine`; ``Accuracy.grid_step`` is its lattice step). Such compositions
  keep their order (:func:`sequence`): under adaptivity a fixed step before a BR step is worth more to the
  analyst than one after it, so equal items are merged only where they are adjacent.
* ``"grid"`` — anything else, or an explicit ``Accuracy.grid_step`` (the expert override): the
  certified PLD grid (:class:`~optcomp.engines.GridEngine`), also available as :meth:`Composition.pld`.
* ``"renyi"`` — first of all, any item known only by its Rényi curve (``ZeroConcentrated``, ``Renyi``):
  no law exists for the grid, so the summed curve is converted (:class:`~optcomp.engines.RenyiEngine`,
  :mod:`optcomp.rdp`; both routes, the tighter certified one answers and says so).

**Lower ends are the run's.** A few mechanisms have no exact law, only a *dominating* one whose upper ends
are certified for the run but whose lower ends are not: a truncated-Poisson step
(:class:`~optcomp.mechanisms.TruncatedPoissonGaussian`, whose law reveals the truncation event) and a
fixed-size step (:class:`~optcomp.mechanisms.SubsampledWithoutReplacement`, q < 1, whose symmetrized law
is attained for one step but whose composition is not shown attained). A :class:`RunBracket` is the one
home of the rule "upper ends from a composition that dominates the run, lower ends from one the run
dominates": :meth:`Composition.run_bracket` builds it from the items' own
:func:`~optcomp.mechanisms.truncated.dominated_counterpart` pairs (:func:`dominated_items`, attained by
explicit datasets), and every query of a composition whose items hold such a step is its run bracket's;
applications whose run has a dominated pair of its own (a sampler's, an allocation's, a matrix
mechanism's groups) build the :class:`RunBracket` themselves and ask it (``docs/architecture.md``).

Accuracy belongs to the query (``epsilon(δ, accuracy=...)``); a composition's ``accuracy`` is only the
default its queries use, and compositions of different defaults compose (the result takes the finer,
:func:`finer_accuracy`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal, overload

import numpy as np
import numpy.typing as npt

from optcomp import optimal, rdp
from optcomp._items import (
    MU_SLACK,
    adaptive_runs,
    arranged,
    black_box,
    dominated_items,
    merge_gaussians,
    merged_mu,
    ordered,
    sequence,
)
from optcomp._numerics import (
    DEFAULT_ACCURACY,
    PLD_DEEP_DELTA,
    Accuracy,
    Bound,
    FloatArray,
    check_epsilons,
    check_int,
    check_nonnegative,
    check_open_probability,
    check_probability,
    finer_accuracy,
    round_down,
    round_up,
)
from optcomp.adaptive import AdaptiveRecursion
from optcomp.engines import (
    AdaptiveEngine,
    Answers,
    Engine,
    EngineName,
    GdpEngine,
    GridEngine,
    LatticeEngine,
    OptimalEngine,
    RenyiEngine,
)
from optcomp.fdp import GroupEpsilon, group_profile
from optcomp.mechanisms import (
    BoundedRange,
    Gaussian,
    Mechanism,
    Neighbouring,
    NoGroupLawError,
    check_group_size,
    combined_relation,
    common_lattice,
    group_mechanism,
    privacy_loss_laws,
)
from optcomp.pld import HockeyStickCurve, LatticeDistribution, PrivacyLossDistribution, WarmStart, fits

#: Largest number of (non-identical) black-box items routed to :mod:`optcomp.optimal` (a list of that
#: many references is built; above it the grid engine answers).
_BLACK_BOX_MAX_ITEMS = 1 << 22
#: μᵢ and merged μ kept on the GDP route: the range where ``gdp_delta_bound`` is informative at every ε
#: (with the engine's tail cap; outside it, e.g. μ = 1e-12 or 1e8, its ends degrade to [0, 1] or overflow).
_GDP_MU_RANGE = (1e-8, 1e6)

#: Whose lower ends a composition's queries report: the run's (``"run"``, the default; module docstring)
#: or its law's own (``"law"``: :meth:`Composition.dominating`).
LowerEnd = Literal["run", "law"]


@dataclass(frozen=True, slots=True)
class Composition:
    """The adaptive composition of mechanisms, and its certified ε/δ queries (module docstring).

    Built by :func:`optcomp.compose`, which validates and pools the items; a frozen value (the engines
    :meth:`route` and the grids :meth:`pld` cache per accuracy are not part of it).

    Attributes:
        items: the pooled ``(mechanism, count)`` pairs, in order of first appearance.
        neighbouring: the relation the composition is stated for (``None``: relation-agnostic).
        accuracy: the accuracy queries use when not given one (:class:`~optcomp.Accuracy`).
        lower_end: ``"run"`` (default): lower ends bound the run's ε/δ from below, taken from
            :meth:`dominated` where an item's law only dominates the run (a truncated-Poisson or fixed-size
            step, module docstring); ``"law"``: the brackets of the items' own laws (:meth:`dominating`).
            Upper ends are the same either way. :meth:`compose`, :meth:`self_compose` and :meth:`group`
            return ``"run"`` compositions; :meth:`pld` is the law's grid either way.
    """

    items: tuple[tuple[Mechanism, int], ...]
    neighbouring: Neighbouring | None = None
    accuracy: Accuracy = DEFAULT_ACCURACY
    lower_end: LowerEnd = "run"
    _plds: dict[Accuracy, PrivacyLossDistribution] = field(
        default_factory=dict, init=False, repr=False, compare=False, hash=False
    )
    _engines: dict[Accuracy, Engine] = field(default_factory=dict, init=False, repr=False, compare=False, hash=False)
    _views: dict[LowerEnd, Composition | None] = field(
        default_factory=dict, init=False, repr=False, compare=False, hash=False
    )

    def __post_init__(self) -> None:
        if self.lower_end not in ("run", "law"):
            raise ValueError(f"lower_end must be 'run' or 'law', got {self.lower_end!r}")

    # -- whose lower ends ---------------------------------------------------------------------------
    def dominated(self) -> Composition | None:
        """The composition whose lower ends the queries report (cached), or ``None`` where the items' own
        lower ends are the run's (every item its own counterpart, one fixed-size step alone, or
        ``lower_end="law"``).

        The items are :func:`dominated_items` (each a truncated-Poisson step's explicit dataset pair, a
        fixed-size step's attained one-direction ``PoissonSubsampled`` pair), composed with no relation
        fixed (:func:`optcomp.compose`), at this composition's default accuracy: each is one dataset pair
        of the run (or dominated by one), so its ε/δ lower ends are the run's. It is the value
        ``optcomp.compose(*items, accuracy=self.accuracy)`` builds; :meth:`run_bracket` pairs it with
        :meth:`dominating`.
        """
        if self.lower_end == "law":
            return None
        if "run" not in self._views:
            items = dominated_items(self.items)
            # no relation fixed: the one the counterparts fix (add/remove), as optcomp.compose(*items) takes it
            relation = None if items is None else next((m.neighbouring for m, _ in items if m.neighbouring), None)
            self._views["run"] = None if items is None else Composition(items, relation, self.accuracy)
        return self._views["run"]

    def dominating(self) -> Composition:
        """This composition with ``lower_end="law"``: the brackets of the items' own (dominating) laws,
        e.g. ``optcomp dpsgd``'s "dominating pair" row. It shares this composition's grids and engines
        (nothing is built twice); it is this composition when ``lower_end`` is already ``"law"``."""
        if self.lower_end == "law":
            return self
        view = self._views.get("law")
        if view is None:
            view = Composition(self.items, self.neighbouring, self.accuracy, "law")
            object.__setattr__(view, "_plds", self._plds)  # frozen: the shared caches are set once, here
            object.__setattr__(view, "_engines", self._engines)
            self._views["law"] = view
        return view

    def run_bracket(self) -> RunBracket:
        """The run this composition describes, as its :class:`RunBracket`: upper ends from
        :meth:`dominating`, lower ends from :meth:`dominated` (or the law's own, where it is the run's)."""
        law = self.dominating()
        return RunBracket(law, self.dominated() or law)

    def _run(self) -> RunBracket | None:
        """:meth:`run_bracket` where some lower end is not the law's own (``None``: the law is the run's)."""
        return None if self.dominated() is None else self.run_bracket()

    # -- the routing rule ---------------------------------------------------------------------------
    def route(self, accuracy: Accuracy | None = None) -> Engine:
        """The engine that answers this composition's queries at ``accuracy`` (cached per accuracy).

        The one routing rule: an item known only by its Rényi curve selects the Rényi conversion; else a
        bounded-range step selects the adaptive recursion (in the order given); else an
        explicit ``accuracy.grid_step`` selects the grid; otherwise all-Gaussian
        items whose μᵢ and merged μ lie in [1e-8, 1e6] select the GDP closed form; all-black-box items with
        every εᵢ ≤ ``optimal.HUGE_EPS`` (whose − outcome does not underflow) and at most 2²² items unless
        they are all one pair select ``optimal``; items all on one exact lattice (discrete Gaussians of one σ)
        whose composition fits half the memory cap select ``lattice``; anything else the grid.
        """
        acc = self._accuracy(accuracy)
        engine = self._engines.get(acc)
        if engine is None:
            engine = self._engines[acc] = self._decide(acc)
        return engine

    def engine(self, accuracy: Accuracy | None = None) -> EngineName:
        """The name of the engine :meth:`route` picks at ``accuracy`` (``"gdp"``, ``"optimal"``, ``"lattice"``,
        ``"grid"``, ``"renyi"``, ``"adaptive"``)."""
        return self.route(accuracy).name

    def _decide(self, acc: Accuracy) -> Engine:
        if rdp.holds_renyi_item(self.items):  # no law to grid: the summed Rényi curve, converted
            return RenyiEngine(rdp.RenyiConversion(rdp.stated_curve(self.items), accuracy=acc))
        if ordered(self.items):
            return AdaptiveEngine(AdaptiveRecursion(adaptive_runs(self.items), acc))
        grid = GridEngine(self.pld, acc)
        if acc.grid_step is not None:
            return grid
        lo, hi = _GDP_MU_RANGE
        if all(isinstance(m, Gaussian) and lo <= m.mu <= hi for m, _ in self.items):
            mu = merged_mu(self._gaussians())
            if lo <= mu <= hi:
                return GdpEngine(round_down(mu, MU_SLACK), round_up(mu, MU_SLACK), mu, grid.build)
        boxes = self._black_box_items()
        if boxes is not None:
            return OptimalEngine(boxes, acc)
        laws = common_lattice(self.items)
        if laws is not None and fits(laws, acc):
            return LatticeEngine(functools.cache(lambda: LatticeDistribution(laws, acc)))
        return grid

    def _accuracy(self, accuracy: Accuracy | None) -> Accuracy:
        if accuracy is None:
            return self.accuracy
        if not isinstance(accuracy, Accuracy):
            raise ValueError(f"accuracy must be an optcomp.Accuracy, got {accuracy!r}")  # noqa: TRY004 (contract: ValueError)
        return accuracy

    def _gaussians(self) -> list[tuple[Gaussian, int]]:
        return [(m, k) for m, k in self.items if isinstance(m, Gaussian)]

    def _black_box_items(self) -> Sequence[tuple[float, float]] | None:
        """The (ε, δ) pairs, with multiplicity, when every item is a canonical black box the optimal
        engine answers tightly (``route``); else ``None``."""
        pairs: dict[tuple[float, float], int] = {}
        for mechanism, k in self.items:
            box = black_box(mechanism)
            if box is None or box[0] > optimal.HUGE_EPS:
                # ε_i whose − outcome underflows: optimal treats them as a shift and is loose below
                # it (a mix of such items with others); the grid engine answers these tightly.
                return None
            pairs[box] = pairs.get(box, 0) + k
        if len(pairs) == 1:
            ((eps, dlt), k), = pairs.items()
            return optimal.homogeneous(eps, dlt, k)
        if sum(pairs.values()) > _BLACK_BOX_MAX_ITEMS:
            return None  # the optimal engine takes a list of pairs: too long to materialise
        out: list[tuple[float, float]] = []
        for pair, k in pairs.items():
            out.extend([pair] * k)  # one tuple object repeated: pooled by identity there
        return out

    # -- the grid -----------------------------------------------------------------------------------
    def pld(self, accuracy: Accuracy | None = None) -> PrivacyLossDistribution:
        """The certified PLD grid of this composition (cached per accuracy), for grid-specific work.

        Each distinct mechanism's PLD is built once from its exact laws and self-composed ``count``
        times; the Gaussians are first merged into one (:func:`merge_gaussians`: one discretisation,
        no FFT error between them); the PLD of the composition is the convolution of the parts' PLDs
        (privacy losses of adaptively chosen mechanisms add, KOV Thm III.3).
        """
        acc = self._accuracy(accuracy)
        cached = self._plds.get(acc)
        if cached is not None:
            return cached
        if ordered(self.items):
            raise ValueError(
                "a composition with bounded-range steps has no single privacy-loss distribution (each step is a "
                "family of pairs an adaptive analyst chooses from); its queries use the adaptive engine"
            )
        plds = []
        for mechanism, k in merge_gaussians(dict(self.items)).items():
            remove, add = privacy_loss_laws(mechanism)
            one = PrivacyLossDistribution.from_laws(remove, add, accuracy=acc, neighbouring=self.neighbouring)
            plds.append(one.self_compose(k) if k > 1 else one)
        pld = functools.reduce(lambda left, right: left.compose(right), plds)
        self._plds[acc] = pld
        return pld

    @property
    def count(self) -> int:
        """The number of mechanisms composed."""
        return sum(k for _, k in self.items)

    @property
    def symmetric(self) -> bool:
        """Whether every item's privacy-loss law is the same in both directions (a bounded-range step's family
        is closed under the swap)."""
        if ordered(self.items):
            laws = (privacy_loss_laws(m) for m, _ in self.items if not isinstance(m, BoundedRange))
            return all(remove is add for remove, add in laws)
        return self.pld().symmetric

    # -- composition ------------------------------------------------------------------------------
    @overload
    def compose(self, other: Composition) -> Composition: ...
    @overload
    def compose(self, other: PrivacyLossDistribution) -> PrivacyLossDistribution: ...
    def compose(
        self, other: Composition | PrivacyLossDistribution
    ) -> Composition | PrivacyLossDistribution:
        """Running both compositions (default accuracy: the finer of the two, :func:`finer_accuracy`); a
        grid ``PrivacyLossDistribution`` ``other`` composes on the grid at its accuracy."""
        if isinstance(other, PrivacyLossDistribution):
            return self.pld(other.accuracy).compose(other)
        if not isinstance(other, Composition):
            raise ValueError(f"other must be a Composition, got {other!r}")  # noqa: TRY004 (contract: ValueError)
        relation = combined_relation(self.neighbouring, other.neighbouring, what="the two compositions")
        return Composition(arranged(self.items + other.items), relation, finer_accuracy(self.accuracy, other.accuracy))

    def self_compose(self, k: int) -> Composition:
        """The k-fold composition (every count multiplied by ``k`` ≥ 1; a composition that keeps its order, one
        with bounded-range steps, runs its sequence k times over)."""
        k = check_int("k", k, minimum=1)
        if ordered(self.items):
            return Composition(sequence(self.items * k), self.neighbouring, self.accuracy)
        return Composition(tuple((m, c * k) for m, c in self.items), self.neighbouring, self.accuracy)

    def group(self, g: int) -> Composition:
        """The composition of the group pairs: privacy of a group of at most ``g`` records, exactly.

        Each mechanism is replaced by :func:`~optcomp.mechanisms.group_mechanism`'s specification (the
        tight dominating pair of a group of g records: sensitivity gΔ for additive noise, the
        Bin(g, q)-mixture for Poisson-subsampled Gaussians; proofs in ``optcomp.mechanisms._group``), and
        the counts are kept: adaptive composition of dominating pairs dominates (Zhu–Dong–Wang 2022).
        Both ends of every query on the result are certified brackets of the group's ε/δ, taken as the
        worst case over datasets and Δ-sensitive queries (clipped gradients), as for ordinary DP: the pairs
        are attained (a counting query; all of the group's gradients aligned), so the lower end is a
        lower bound of that worst case. Under add/remove with a Poisson-subsampled item, the group is added
        or removed as a whole (a path mixing additions and removals is not covered).

        Args:
            g: group size, an integer ≥ 1 (``g = 1`` returns this composition).

        Raises:
            ValueError: ``g`` not an integer ≥ 1, or :class:`~optcomp.mechanisms.NoGroupLawError` (a
                ``ValueError``) naming a mechanism without an exact group law.
        """
        g = check_group_size(g)
        if g == 1:
            return self
        items = tuple((group_mechanism(m, g), k) for m, k in self.items)
        return Composition(arranged(items), self.neighbouring, self.accuracy)

    # -- queries: each one call on the routed engine ----------------------------------------------
    def delta(self, epsilon: float, *, accuracy: Accuracy | None = None) -> Bound:
        """Certified bracket of δ(ε) = max over the relation's directions of E_P[(1 − e^{ε−L})_+].

        Args:
            epsilon: ε ≥ 0.
            accuracy: the accuracy of this query (default: the composition's ``accuracy``).
        """
        eps = check_nonnegative("epsilon", epsilon)
        run = self._run()
        return self.route(accuracy).delta(eps) if run is None else run.delta(eps, accuracy=accuracy)

    def delta_curve(
        self, epsilons: npt.ArrayLike, *, accuracy: Accuracy | None = None
    ) -> tuple[FloatArray, FloatArray]:
        """Vectorised :meth:`delta`: arrays (lower, upper) of δ(ε) for each ε ≥ 0 in ``epsilons``."""
        eps = check_epsilons(epsilons)
        run = self._run()
        return self.route(accuracy).delta_curve(eps) if run is None else run.delta_curve(eps, accuracy=accuracy)

    def hockey_stick_curve(
        self, epsilons: npt.ArrayLike | None = None, *, accuracy: Accuracy | None = None
    ) -> HockeyStickCurve:
        """The certified δ(ε) curve (what :func:`optcomp.fdp.from_pld` reads), from the routed engine: the
        grid places its points where the curve bends unless given (one realisation for every point); the
        GDP closed form is read at those points (intersected with the grid's ends); the optimal engine
        answers each point of ``epsilons`` (default 0 … 20 in 201 steps)."""
        eps = None if epsilons is None else check_epsilons(epsilons)
        run = self._run()
        return self.route(accuracy).curve(eps) if run is None else run.hockey_stick_curve(eps, accuracy=accuracy)

    def epsilon(self, delta: float, *, accuracy: Accuracy | None = None) -> Bound:
        """Certified bracket of ε(δ) = inf{ε ≥ 0 : δ(ε) ≤ δ}.

        ``upper`` is an ε whose certified upper δ is ≤ ``delta``; ``lower`` an ε whose certified lower
        δ exceeds ``delta`` (or 0). On the grid and optimal engines, a requested
        ``accuracy.relative_width`` the engine cannot reach raises
        :class:`~optcomp.pld.GridTooLargeError` for δ ≥ ``PLD_DEEP_DELTA``.

        Args:
            delta: δ in [0, 1].
            accuracy: the accuracy of this query (default: the composition's ``accuracy``).
        """
        d = check_probability("delta", delta)
        run = self._run()
        return self.route(accuracy).epsilon(d, strict=d >= PLD_DEEP_DELTA) if run is None else run.epsilon(
            d, accuracy=accuracy)

    def group_epsilon(self, g: int, delta: float, *, accuracy: Accuracy | None = None) -> GroupEpsilon:
        """Certified bracket of ε(δ) for a group of at most ``g`` records, and the route that answered.

        **Exact route** (every mechanism has a group law, :func:`~optcomp.mechanisms.group_mechanism`):
        ``self.group(g).epsilon(delta)``, the engine's certified bracket of the composed group pairs; both
        ends bracket the group's ε as the worst case over datasets and Δ-sensitive queries (:meth:`group`).

        **Profile route** (a mechanism without one, e.g. sampling without replacement or balls-in-bins;
        ``reason`` says which): the grid's readout :func:`optcomp.fdp.group_profile` — upper end the weak
        triangle inequality on the privacy profile, or Dong–Roth–Su Thm 2.14 on the trade-off curve if
        smaller (certified for every mechanism the composition's law dominates), lower end the one-record
        ε's (a group of at most g includes one record) — asked of :meth:`run_bracket`: the lower end is the
        *run's* one-record ε (from :meth:`dominated` where the law only dominates the run).

        Args:
            g: group size, an integer ≥ 1.
            delta: δ in (0, 1).
            accuracy: the accuracy of this query (default: the composition's ``accuracy``).

        Raises:
            ValueError: ``g`` not an integer ≥ 1 or ``delta`` outside (0, 1).
        """
        g = check_group_size(g)
        d = check_open_probability("delta", delta)
        try:
            grouped = self.group(g)
        except NoGroupLawError as why:
            b = self.run_bracket().read(lambda c: group_profile(c.pld(accuracy), g, d),
                                        lambda c: group_profile(c.pld(accuracy), 1, d))
            return GroupEpsilon(b.lower, b.upper, route="profile", reason=str(why))
        exact = grouped.epsilon(d, accuracy=accuracy)
        return GroupEpsilon(exact.lower, exact.upper, route="exact")

    def epsilon_estimate(self, delta: float, *, accuracy: Accuracy | None = None) -> float:
        """An *uncertified* point estimate of ε(δ): the GDP closed form on the ``"gdp"`` engine, else
        (U + 2L)/3 of the bracket [L, U] (the grid ends' errors have a ratio near 2:1, ``docs/pld.md``
        §7); of the items' own laws (the dominating composition's ε, not :meth:`dominated`'s)."""
        d = check_probability("delta", delta)
        return self.route(accuracy).epsilon_estimate(d)

    def __reduce__(self) -> tuple[type[Composition], tuple[object, ...]]:
        """Pickles as its value (items, relation, default accuracy, lower end): the caches stay behind."""
        return (Composition, (self.items, self.neighbouring, self.accuracy, self.lower_end))

    def __repr__(self) -> str:
        shown = ", ".join(f"({m!r}, {k})" for m, k in self.items)
        law = ", lower_end='law'" if self.lower_end == "law" else ""
        return f"Composition(items=({shown}), neighbouring={self.neighbouring!r}, accuracy={self.accuracy}{law})"


# -- the run bracket: the one merge of a run's ends ------------------------------------------------------
@dataclass(frozen=True, slots=True)
class RunBracket:
    """A run's certified brackets from two compositions: upper ends from ``upper`` (its law dominates the
    run), lower ends from ``lower`` (the run dominates it: explicit dataset pairs, or pairs they dominate).

    The one home of the merge "lower end from the dominated composition, upper end from the dominating
    one" (:meth:`merge`; ``tests/test_style.py`` finds no other): both are certified for the run, so the
    bracket [min(lower's lower end, upper end), upper end] holds the run's ε or δ. Built by
    :meth:`Composition.run_bracket` (the items' own counterparts, :func:`dominated_items`) or directly by an
    application whose run has a dominated pair of its own (``dpsgd``'s samplers, ``interop``'s allocations,
    ``matrix``'s groups; ``docs/architecture.md``).

    Attributes:
        upper: a composition whose law dominates the run (its own upper ends are read: ``dominating()``).
        lower: a composition the run dominates; ``upper`` itself where the law is the run's own pair (its
            bracket is the answer); ``None`` where no dominated pair is known (lower end 0).
        cap: another composition whose law dominates the run (``None``: none); the upper end is the smaller
            of the two (balls-in-bins: the amplified epochs and no amplification, ``docs/samplers.md`` §5).
    """

    upper: Composition
    lower: Composition | None
    cap: Composition | None = None

    @classmethod
    def own(cls, composition: Composition) -> RunBracket:
        """The bracket of ``composition``'s own law, taken as the run's (no dominated pair is read)."""
        law = composition.dominating()
        return cls(law, law)

    @property
    def exact(self) -> bool:
        """Whether the upper composition's own lower ends are the run's (``lower`` is ``upper``)."""
        return self.lower is self.upper and self.cap is None

    def merge(self, upper: Bound, lower: Bound | None = None, cap: Bound | None = None) -> Bound:
        """The one merge: ``upper`` (the dominating composition's bracket) with its upper end capped by
        ``cap``'s and its lower end replaced by ``lower``'s (the dominated composition's bracket; 0 where
        :attr:`lower` is ``None``), clipped to the upper end. Returns ``upper`` itself when :attr:`exact`."""
        if self.exact:
            return upper
        low = 0.0 if lower is None or self.lower is None else lower.lower
        if cap is not None and cap.upper < upper.upper:
            return Bound(min(low, cap.upper), cap.upper)
        own = getattr(upper, "with_lower", None)  # a ConversionBound drops its witness (rdp/_convert.py)
        return own(min(low, upper.upper)) if own is not None else replace(upper, lower=min(low, upper.upper))

    def read(self, query: Callable[[Composition], Bound],
             lower_query: Callable[[Composition], Bound] | None = None) -> Bound:
        """``query`` asked of each composition and merged (:meth:`merge`); ``lower_query`` (default
        ``query``) is asked of :attr:`lower`, whose upper end is not read."""
        upper = query(self.upper.dominating())
        if self.exact:
            return upper
        cap = None if self.cap is None else query(self.cap.dominating())
        lower = None if self.lower is None else (lower_query or query)(self.lower)
        return self.merge(upper, lower, cap)

    def epsilon(self, delta: float, *, accuracy: Accuracy | None = None) -> Bound:
        """Certified bracket of the run's ε(δ) (:meth:`Composition.epsilon` of each, merged)."""
        return self.read(lambda c: c.epsilon(delta, accuracy=accuracy))

    def delta(self, epsilon: float, *, accuracy: Accuracy | None = None) -> Bound:
        """Certified bracket of the run's δ(ε) (:meth:`Composition.delta` of each, merged)."""
        return self.read(lambda c: c.delta(epsilon, accuracy=accuracy))

    def epsilons(self, deltas: Iterable[float], *, accuracy: Accuracy | None = None) -> list[Bound]:
        """:meth:`epsilon` at each δ of ``deltas`` (in order)."""
        return [self.epsilon(d, accuracy=accuracy) for d in deltas]

    def deltas(self, epsilons: Iterable[float], *, accuracy: Accuracy | None = None) -> list[Bound]:
        """:meth:`delta` at each ε of ``epsilons`` (in order)."""
        return [self.delta(e, accuracy=accuracy) for e in epsilons]

    def answers(self, deltas: Sequence[float], epsilons: Sequence[float], *,
                warm: tuple[WarmStart, WarmStart] | None = None, position: int = 0) -> Answers:
        """Every ε(δ) of ``deltas`` and δ(ε) of ``epsilons`` of the run: each composition's batch
        (:meth:`optcomp.engines.Engine.answers`: the grid shares realisations, warm-started by ``warm`` — the
        upper and the lower composition's — at ``position``), merged query by query (:meth:`merge`); an
        error of either end is the query's answer."""
        up_warm, low_warm = (None, None) if warm is None else warm

        def batch(c: Composition, w: WarmStart | None) -> Answers:
            return c.dominating().route().answers(deltas, epsilons, warm=w, position=position)

        up = batch(self.upper, up_warm)
        if self.exact:
            return up
        low = None if self.lower is None else batch(self.lower, low_warm)
        cap = None if self.cap is None else batch(self.cap, None)

        def merged(u: Bound | Exception, x: float, table: Callable[[Answers], dict[float, Bound | Exception]]) -> Bound | Exception:
            lo, c = (None if a is None else table(a)[x] for a in (low, cap))
            for part in (u, lo, c):
                if isinstance(part, Exception):
                    return part
            assert isinstance(u, Bound)
            return self.merge(u, lo if isinstance(lo, Bound) else None, c if isinstance(c, Bound) else None)

        return Answers({d: merged(b, d, lambda a: a.epsilons) for d, b in up.epsilons.items()},
                       {e: merged(b, e, lambda a: a.deltas) for e, b in up.deltas.items()})

    def delta_curve(self, epsilons: npt.ArrayLike, *, accuracy: Accuracy | None = None) -> tuple[FloatArray, FloatArray]:
        """Arrays (lower, upper) of the run's δ(ε) at each ε ≥ 0 of ``epsilons`` (merged pointwise)."""
        lower, upper = self.upper.dominating().delta_curve(epsilons, accuracy=accuracy)
        return self._curve_ends(lower, upper, epsilons, accuracy)

    def hockey_stick_curve(
        self, epsilons: npt.ArrayLike | None = None, *, accuracy: Accuracy | None = None
    ) -> HockeyStickCurve:
        """The run's certified δ(ε) curve: :attr:`upper`'s (its points), lower ends merged at those points."""
        curve = self.upper.dominating().hockey_stick_curve(epsilons, accuracy=accuracy)
        lower, upper = self._curve_ends(curve.lower, curve.upper, curve.epsilons, accuracy)
        return HockeyStickCurve(curve.epsilons, lower, upper)

    def _curve_ends(self, lower: FloatArray, upper: FloatArray, epsilons: npt.ArrayLike,
                    accuracy: Accuracy | None) -> tuple[FloatArray, FloatArray]:
        """:meth:`merge`, pointwise on a curve's arrays."""
        if self.exact:
            return lower, upper
        if self.cap is not None:
            upper = np.minimum(upper, self.cap.dominating().delta_curve(epsilons, accuracy=accuracy)[1])
        if self.lower is None:
            return np.zeros_like(upper), upper
        return np.minimum(self.lower.delta_curve(epsilons, accuracy=accuracy)[0], upper), upper

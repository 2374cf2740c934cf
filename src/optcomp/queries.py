"""The queries floor: one place decides which engine answers a composition, and at what accuracy.

A :class:`Composition` (built by :func:`optcomp.compose`) is a frozen value: the pooled
``(mechanism, count)`` items and the neighbouring relation. Its queries ``epsilon``, ``delta``,
``delta_curve`` and ``epsilon_estimate`` all go through :meth:`Composition.engine`, the one routing
rule of the package:

* ``"gdp"`` — every item a :class:`~optcomp.mechanisms.Gaussian` (automatic accuracy): the Gaussians
  compose exactly into μ = √(Σ kᵢ μᵢ²) (Dong–Roth–Su Cor 3.3, :func:`merged_mu`), and μ-GDP is
  *equivalent* to the (ε, δ(ε)) curve δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (DRS Cor 2.13, "GDP to
  DP"). The bracket comes from :func:`optcomp.fdp.gdp_delta_bound` (log-space evaluation widened by
  its error bound) at μ rounded outward, and ε(δ) is inverted on those certified values.
* ``"optimal"`` — every item an (ε, δ) black box (``EpsilonDelta``; ``RandomizedResponse`` is δ = 0)
  whose ε ≤ ``optimal.HUGE_EPS`` (automatic accuracy): the composition of the KOV canonical pairs *is*
  the optimal black-box composition (KOV Thm III.3), answered by :mod:`optcomp.optimal`, exact for
  one distinct εᵢ (Murtagh–Vadhan Thm 1.4) and certified at both ends otherwise (MV Thm 1.5).
* ``"grid"`` — anything else, or an explicit ``Accuracy.grid_step`` (the expert override): the
  certified PLD grid (:class:`optcomp.pld.PrivacyLossDistribution`, ``docs/pld.md``), available as
  :meth:`Composition.pld` for grid-specific work.

Accuracy is translated here, once per engine: the grid takes :class:`~optcomp.Accuracy` itself
(``relative_width`` drives its refinement); ``optimal`` takes a ``tolerance`` (a width in ε, resp. a
step whose δ error is second order) refined from ``relative_width`` by :func:`_optimal_epsilon` and
:func:`_optimal_delta`; the GDP closed form has no knob (its bracket is a few ulps wide).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal, overload

import numpy as np
import numpy.typing as npt

from optcomp import optimal
from optcomp._numerics import (
    DEFAULT_ACCURACY,
    PLD_DEEP_DELTA,
    UNIT_ROUNDOFF,
    Accuracy,
    Bound,
    FloatArray,
    check_int,
    check_nonnegative,
    check_probability,
    round_down,
    round_up,
)
from optcomp.fdp._gdp import gdp_compose, gdp_delta_bound, gdp_epsilon
from optcomp.mechanisms import (
    EpsilonDelta,
    Gaussian,
    Mechanism,
    Neighbouring,
    RandomizedResponse,
    privacy_loss_laws,
)
from optcomp.mechanisms._spec import combined_relation
from optcomp.pld import GridTooLargeError, PrivacyLossDistribution
from optcomp.pld._curve import HockeyStickCurve

#: The engines a query can be answered by (module docstring).
Engine = Literal["gdp", "optimal", "grid"]

#: Largest number of (non-identical) black-box items routed to :mod:`optcomp.optimal` (a list of that
#: many references is built; above it the grid engine answers).
_BLACK_BOX_MAX_ITEMS = 1 << 22
#: Refinements of the optimal engine's tolerance towards the requested relative width.
_BLACK_BOX_PASSES = 4
#: Relative error of :func:`merged_mu`: ≤ 3.5u from μᵢ = Δᵢ/σᵢ, its square, kᵢ·, ``fsum`` and ``sqrt``
#: (each correctly rounded, all terms positive), ≤ 5.5u on ``gdp_compose``'s rescaled path (squares
#: outside the normal range); widened outward by 8u, above both.
_MU_SLACK = 8.0 * UNIT_ROUNDOFF
#: μᵢ and merged μ kept on the GDP route: the range where ``gdp_delta_bound`` is informative at every ε
#: (with the cap below; outside it, e.g. μ = 1e-12 or 1e8, its ends degrade to [0, 1] or overflow).
_GDP_MU_RANGE = (1e-8, 1e6)
#: Upper δ ends are read at ε' = min(ε, μ(μ/2 + this)), where a = −ε'/μ + μ/2 = −this: δ_μ decreases in
#: ε, so δ(ε) ≤ δ(ε'), and there δ has underflowed while ``gdp_delta_bound``'s error bound is finite.
_GDP_TAIL_A = 1e4
#: δ brackets narrower than this (relative to their upper end) are not refined further.
_DELTA_FLOOR = 1e-300
#: Steps of the outward search that turns the GDP closed-form ε into a certified bracket.
_GDP_SEARCH_STEPS = 2100


def merged_mu(gaussians: Iterable[tuple[Gaussian, int]]) -> float:
    """μ of the composition of ``count`` runs of each Gaussian: √(Σ kᵢ μᵢ²), μᵢ = Δᵢ/σᵢ.

    Gaussian mechanisms compose exactly, G_{μ₁} ⊗ G_{μ₂} = G_{√(μ₁² + μ₂²)} (Dong–Roth–Su Cor 3.3):
    :func:`optcomp.fdp.gdp_compose`, the one home of the rule (relative error ≤ 4.5u from the computed
    μᵢ, each of which adds u: ≤ 5.5u in all; :class:`Composition` widens it outward by ``_MU_SLACK``).
    """
    pairs = list(gaussians)
    return gdp_compose([m.mu for m, _ in pairs], [k for _, k in pairs])


def dominating_gaussian(gaussians: Iterable[tuple[Gaussian, int]]) -> Gaussian:
    """One ``Gaussian(sigma=1/μ)`` at least as distinguishing as the exact merge of the runs (DRS Cor 3.3).

    μ is :func:`merged_mu` widened up by its rounding (``_MU_SLACK``) and σ = 1/μ rounded down, so
    every certified upper end computed from it (directly, or after subsampling, which is monotone in
    the dominating pair) is an upper end for the exact composition; lower ends may sit that few-ulp
    step above the exact merge's."""
    return Gaussian(round_down(1.0 / round_up(merged_mu(gaussians), _MU_SLACK), 0.0))


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
    if isinstance(mechanism, RandomizedResponse):
        return mechanism.epsilon, 0.0
    return None


def _pool(pairs: Iterable[tuple[Mechanism, int]]) -> tuple[tuple[Mechanism, int], ...]:
    """Counts of equal mechanisms added (order of first appearance kept)."""
    counts: dict[Mechanism, int] = {}
    for mechanism, k in pairs:
        counts[mechanism] = counts.get(mechanism, 0) + k
    return tuple(counts.items())


#: Points of the default δ(ε) curve (0 … 20) of (ε, δ) black boxes (the optimal engine).
_CURVE_POINTS = 201


@dataclass(frozen=True, slots=True)
class Composition:
    """The adaptive composition of mechanisms, and its certified ε/δ queries (module docstring).

    Built by :func:`optcomp.compose`, which validates and pools the items; a frozen value (the
    grid realisations :meth:`pld` caches are not part of it).

    Attributes:
        items: the pooled ``(mechanism, count)`` pairs, in order of first appearance.
        neighbouring: the relation the composition is stated for (``None``: relation-agnostic).
        accuracy: the accuracy queries use when not given one (:class:`~optcomp.Accuracy`).
    """

    items: tuple[tuple[Mechanism, int], ...]
    neighbouring: Neighbouring | None = None
    accuracy: Accuracy = DEFAULT_ACCURACY
    _plds: dict[Accuracy, PrivacyLossDistribution] = field(
        default_factory=dict, init=False, repr=False, compare=False, hash=False
    )

    # -- the routing rule ---------------------------------------------------------------------------
    def engine(self, accuracy: Accuracy | None = None) -> Engine:
        """The engine that answers this composition's queries at ``accuracy`` (module docstring).

        An explicit ``accuracy.grid_step`` always selects the grid. Otherwise all-Gaussian items whose
        μᵢ and merged μ lie in [1e-8, 1e6] select ``"gdp"``; all-black-box items with every
        εᵢ ≤ ``optimal.HUGE_EPS`` (whose − outcome does not underflow) and at most 2²² items unless they
        are all one pair select ``"optimal"``; anything else ``"grid"``.
        """
        return self._decide(self._accuracy(accuracy))[0]

    def _decide(self, acc: Accuracy) -> tuple[Engine, Sequence[tuple[float, float]] | None]:
        """The engine (:meth:`engine`), and the optimal engine's (ε, δ) items when it is chosen."""
        if acc.grid_step is not None:
            return "grid", None
        lo, hi = _GDP_MU_RANGE
        if all(isinstance(m, Gaussian) and lo <= m.mu <= hi for m, _ in self.items):
            mu = merged_mu(self._gaussians())
            if lo <= mu <= hi:
                return "gdp", None
        boxes = self._black_box_items()
        if boxes is not None:
            return "optimal", boxes
        return "grid", None

    def _accuracy(self, accuracy: Accuracy | None) -> Accuracy:
        if accuracy is None:
            return self.accuracy
        if not isinstance(accuracy, Accuracy):
            raise ValueError(f"accuracy must be an optcomp.Accuracy, got {accuracy!r}")  # noqa: TRY004 (contract: ValueError)
        return accuracy

    def _gaussians(self) -> list[tuple[Gaussian, int]]:
        return [(m, k) for m, k in self.items if isinstance(m, Gaussian)]

    def _mu(self) -> tuple[float, float]:
        """(lower, upper) of the merged GDP μ (:func:`merged_mu` widened by its rounding error)."""
        mu = merged_mu(self._gaussians())
        return round_down(mu, _MU_SLACK), round_up(mu, _MU_SLACK)

    def _black_box_items(self) -> Sequence[tuple[float, float]] | None:
        """The (ε, δ) pairs, with multiplicity, when every item is a canonical black box the optimal
        engine answers tightly (``engine``); else ``None``."""
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
        """Whether every item's privacy-loss law is the same in both directions."""
        return self.pld().symmetric

    # -- composition ------------------------------------------------------------------------------
    @overload
    def compose(self, other: Composition) -> Composition: ...
    @overload
    def compose(self, other: PrivacyLossDistribution) -> PrivacyLossDistribution: ...
    def compose(
        self, other: Composition | PrivacyLossDistribution
    ) -> Composition | PrivacyLossDistribution:
        """Running both compositions; a grid ``PrivacyLossDistribution`` ``other`` composes on the grid."""
        if isinstance(other, PrivacyLossDistribution):
            return self.pld(other.accuracy).compose(other)
        if not isinstance(other, Composition):
            raise ValueError(f"other must be a Composition, got {other!r}")  # noqa: TRY004 (contract: ValueError)
        if other.accuracy != self.accuracy:
            raise ValueError(
                f"cannot compose compositions of different accuracy: {self.accuracy} and {other.accuracy}"
            )
        relation = combined_relation(self.neighbouring, other.neighbouring, what="the two compositions")
        return Composition(_pool(self.items + other.items), relation, self.accuracy)

    def self_compose(self, k: int) -> Composition:
        """The k-fold composition (every count multiplied by ``k`` ≥ 1)."""
        k = check_int("k", k, minimum=1)
        return Composition(tuple((m, c * k) for m, c in self.items), self.neighbouring, self.accuracy)

    # -- queries ----------------------------------------------------------------------------------
    def delta(self, epsilon: float, *, accuracy: Accuracy | None = None) -> Bound:
        """Certified bracket of δ(ε) = max over the relation's directions of E_P[(1 − e^{ε−L})_+].

        Args:
            epsilon: ε ≥ 0.
            accuracy: overrides the composition's ``accuracy``.
        """
        eps = check_nonnegative("epsilon", epsilon)
        acc = self._accuracy(accuracy)
        engine, boxes = self._decide(acc)
        if engine == "gdp":
            return _gdp_delta(*self._mu(), eps)
        if boxes is not None:
            return _optimal_delta(boxes, eps, acc.relative_width)
        return self.pld(acc).delta(eps)

    def delta_curve(
        self, epsilons: npt.ArrayLike, *, accuracy: Accuracy | None = None
    ) -> tuple[FloatArray, FloatArray]:
        """Vectorised :meth:`delta`: arrays (lower, upper) of δ(ε) for each ε ≥ 0 in ``epsilons``."""
        acc = self._accuracy(accuracy)
        engine, boxes = self._decide(acc)
        if engine == "grid":
            return self.pld(acc).delta_curve(epsilons)
        eps = np.asarray(epsilons, dtype=np.float64).ravel()
        if eps.size and (not np.all(np.isfinite(eps)) or np.any(eps < 0)):
            bad = eps[~(np.isfinite(eps) & (eps >= 0))][0]
            raise ValueError(f"epsilons must be in [0, inf), got {bad!r}")
        if boxes is not None:
            bounds = [_optimal_delta(boxes, float(e), acc.relative_width) for e in eps]
        else:
            mu_lo, mu_hi = self._mu()
            bounds = [_gdp_delta(mu_lo, mu_hi, float(e)) for e in eps]
        return (
            np.array([b.lower for b in bounds], dtype=np.float64),
            np.array([b.upper for b in bounds], dtype=np.float64),
        )

    def hockey_stick_curve(
        self, epsilons: npt.ArrayLike | None = None, *, accuracy: Accuracy | None = None
    ) -> HockeyStickCurve:
        """The certified δ(ε) curve (what :func:`optcomp.fdp.from_pld` reads). Gaussian-only and mixed
        compositions: one grid realisation for every point (:meth:`PrivacyLossDistribution.hockey_stick_curve`,
        points placed where the curve bends unless given — a whole curve wants that placement more than
        the GDP closed form's tightness at a few points); (ε, δ) black boxes: the optimal engine's
        :meth:`delta_curve` on ``epsilons`` (default 0 … 20 in 201 steps), each point certified."""
        acc = self._accuracy(accuracy)
        _, boxes = self._decide(acc)
        if boxes is None:
            return self.pld(acc).hockey_stick_curve(epsilons)
        grid = np.linspace(0.0, 20.0, _CURVE_POINTS) if epsilons is None else np.asarray(epsilons, dtype=np.float64)
        lo, hi = self.delta_curve(grid, accuracy=acc)
        return HockeyStickCurve(grid.ravel(), lo, hi)

    def epsilon(self, delta: float, *, accuracy: Accuracy | None = None) -> Bound:
        """Certified bracket of ε(δ) = inf{ε ≥ 0 : δ(ε) ≤ δ}.

        ``upper`` is an ε whose certified upper δ is ≤ ``delta``; ``lower`` an ε whose certified lower
        δ exceeds ``delta`` (or 0). On the grid and optimal engines, a requested
        ``accuracy.relative_width`` the engine cannot reach raises
        :class:`~optcomp.pld.GridTooLargeError` for δ ≥ ``PLD_DEEP_DELTA``.

        Args:
            delta: δ in [0, 1].
            accuracy: overrides the composition's ``accuracy``.
        """
        delta = check_probability("delta", delta)
        acc = self._accuracy(accuracy)
        engine, boxes = self._decide(acc)
        if engine == "gdp":
            return _gdp_epsilon(*self._mu(), delta)
        if boxes is not None:
            return _optimal_epsilon(boxes, delta, acc.relative_width, delta >= PLD_DEEP_DELTA)
        return self.pld(acc).epsilon(delta)

    def epsilon_estimate(self, delta: float, *, accuracy: Accuracy | None = None) -> float:
        """An *uncertified* point estimate of ε(δ): the GDP closed form on the ``"gdp"`` engine, else
        (U + 2L)/3 of the bracket [L, U] (the grid ends' errors have a ratio near 2:1, ``docs/pld.md``
        §7)."""
        acc = self._accuracy(accuracy)
        if self.engine(acc) == "gdp":
            d = check_probability("delta", delta)
            return gdp_epsilon(merged_mu(self._gaussians()), d)
        b = self.epsilon(delta, accuracy=acc)
        if not math.isfinite(b.upper):
            return b.upper
        return (b.upper + 2 * b.lower) / 3

    def __repr__(self) -> str:
        shown = ", ".join(f"({m!r}, {k})" for m, k in self.items)
        return f"Composition(items=({shown}), neighbouring={self.neighbouring!r}, accuracy={self.accuracy})"


# -- the GDP engine ---------------------------------------------------------------------------------
def _gdp_tail(mu: float) -> float:
    """ε' = μ(μ/2 + ``_GDP_TAIL_A``): beyond it δ_μ(ε) ≤ δ_μ(ε') has underflowed."""
    return mu * (mu / 2 + _GDP_TAIL_A)


def _gdp_upper(mu: float, epsilon: float) -> float:
    """A certified upper end of δ_μ(ε), read at min(ε, ε') (δ_μ decreases in ε)."""
    return gdp_delta_bound(mu, min(epsilon, _gdp_tail(mu)))[1]


def _gdp_lower(mu: float, epsilon: float) -> float:
    """A certified lower end of δ_μ(ε) (0, trivially, beyond ε')."""
    return gdp_delta_bound(mu, epsilon)[0] if epsilon <= _gdp_tail(mu) else 0.0


def _gdp_delta(mu_lo: float, mu_hi: float, epsilon: float) -> Bound:
    """δ(ε) of μ-GDP for μ ∈ [mu_lo, mu_hi] (δ increases with μ; DRS Cor 2.13, certified ends)."""
    return Bound(_gdp_lower(mu_lo, epsilon), _gdp_upper(mu_hi, epsilon))


def _gdp_epsilon(mu_lo: float, mu_hi: float, delta: float) -> Bound:
    """ε(δ) of μ-GDP for μ ∈ [mu_lo, mu_hi], on certified δ values only (δ_μ(ε) decreases in ε).

    ``upper``: the closed-form root at ``mu_hi`` (:func:`optcomp.fdp.gdp_epsilon`), moved up until the
    certified upper δ at ``mu_hi`` is ≤ ``delta``; ``lower``: moved down from the root at ``mu_lo``
    until the certified lower δ at ``mu_lo`` exceeds ``delta`` (or 0).
    """
    if delta == 0.0:
        return Bound(math.inf, math.inf)  # δ_μ(ε) > 0 for every finite ε when μ > 0
    if _gdp_upper(mu_hi, 0.0) <= delta:
        upper = 0.0
    else:
        upper = gdp_epsilon(mu_hi, delta)
        gap = math.ulp(upper)
        for _ in range(_GDP_SEARCH_STEPS):
            if _gdp_upper(mu_hi, upper) <= delta:
                break
            upper, gap = round_up(upper + gap, 0.0), 2.0 * gap
        else:
            upper = math.inf
    if upper == 0.0 or _gdp_lower(mu_lo, 0.0) <= delta:
        return Bound(0.0, upper)
    root = min(gdp_epsilon(mu_lo, delta), upper)
    gap = math.ulp(root)
    lower = 0.0
    for _ in range(_GDP_SEARCH_STEPS):
        candidate = round_down(root - gap, 0.0)
        if candidate <= 0.0:
            break
        if _gdp_lower(mu_lo, candidate) > delta:
            lower = candidate
            break
        gap *= 2.0
    return Bound(lower, upper)


# -- the optimal engine -----------------------------------------------------------------------------
def _epsilon_width(b: Bound) -> float:
    """Relative width (upper − lower)/max(upper, 0.01) of an ε bracket (the grid's definition)."""
    if b.upper == b.lower:
        return 0.0
    return (b.upper - b.lower) / max(b.upper, 0.01)


def _optimal_epsilon(
    items: Sequence[tuple[float, float]], delta: float, target: float, strict: bool
) -> Bound:
    """ε(δ) of a composition of canonical (ε, δ) black boxes from :func:`optcomp.optimal.epsilon`
    (certified at both ends; MV Thm 1.5), its ``tolerance`` (a width in ε) refined until the relative
    width (upper − lower)/max(upper, 0.01) meets ``target``; ``GridTooLargeError`` if it cannot
    (``strict``)."""
    tol = optimal.DEFAULT_TOLERANCE
    b = optimal.epsilon(items, delta, tolerance=tol)
    for _ in range(_BLACK_BOX_PASSES):
        w = _epsilon_width(b)
        if w <= target or not math.isfinite(b.upper):
            return b
        tol = min(tol / 2, 0.5 * target * max(b.upper, 0.01))
        b = optimal.epsilon(items, delta, tolerance=tol)
    if strict and _epsilon_width(b) > target:
        raise GridTooLargeError(
            f"the requested relative width {target:g} is not reached by the optimal black-box engine "
            f"(bracket [{b.lower!r}, {b.upper!r}]); ask for a larger Accuracy.relative_width, or query "
            "optcomp.optimal.epsilon with a larger max_points"
        )
    return b


def _optimal_delta(items: Sequence[tuple[float, float]], epsilon: float, target: float) -> Bound:
    """δ(ε) of a composition of canonical (ε, δ) black boxes from :func:`optcomp.optimal.delta`
    (certified at both ends), refined towards the relative width (upper − lower)/upper ≤ ``target``
    (the narrowest bracket reached is returned, as for the grid engine's δ queries)."""
    tol = optimal.DEFAULT_TOLERANCE
    b = optimal.delta(items, epsilon, tolerance=tol)
    for _ in range(_BLACK_BOX_PASSES):
        if b.upper <= _DELTA_FLOOR or (b.upper - b.lower) / b.upper <= target:
            break
        # the split engine's δ error is second order in its step, i.e. ∝ tolerance
        tol = tol * max(1e-3, min(0.5, 0.5 * target * b.upper / (b.upper - b.lower)))
        b = optimal.delta(items, epsilon, tolerance=tol)
    return b

"""The public :class:`PrivacyLossDistribution`: a thin immutable value holding both ends per direction.

Data flow, one idea per module: :mod:`._cells` (a law → certified cell masses) →
:mod:`._dominating` (upper end: the split pair) and :mod:`._dominated` (lower end: the
quantised-outcome pair) → :mod:`._fft` (composition, window, error bars) → :mod:`._query` (δ(ε),
ε(δ)); :mod:`._realise` builds one direction at one grid step (and its tilted ends). This module
only merges parts, picks the grid step, and takes maxima over the two directions of the
neighbouring relation.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from optcomp._numerics import (
    DEFAULT_ACCURACY,
    EPSILON_WIDTH_FLOOR,
    PLD_DEEP_DELTA,
    PLD_FIRST_STEP,
    Accuracy,
    Bound,
    FloatArray,
    check_epsilons,
    check_int,
    check_nonnegative,
    check_probability,
    finer_accuracy,
)
from optcomp._threads import single_threaded
from optcomp.mechanisms import Neighbouring, PrivacyLossLaw, check_neighbouring, combined_relation
from optcomp.pld._cells import window
from optcomp.pld._curve import HockeyStickCurve, hockey_stick_curve
from optcomp.pld._lazy import Directions
from optcomp.pld._query import informative_delta
from optcomp.pld._realise import Direction, realise, upper_ends
from optcomp.pld._refine import DELTA_WIDTH_FLOOR, STEP_MARGIN, epsilon_width, refine
from optcomp.pld._stepmodel import MODEL_DEEPEST_DELTA, first_step
from optcomp.pld._windows import Memo, log_tails

#: Coarsening of a probe of a direction no pass has read yet (e.g. the add direction in a model-placed
#: first pass): its upper error is about this squared times the pass's.
_FRESH_PROBE = 6.0
#: Refinement of a probe of one direction (:meth:`_EpsilonMeasure._probe_upper`) when its last pass
#: left no lower end to estimate its error from.
_PROBE_REFINEMENT = 4.0

def _merge(parts: list[tuple[PrivacyLossLaw, int]]) -> list[tuple[PrivacyLossLaw, int]]:
    """Counts of the same law object added (order of first appearance kept)."""
    out: dict[int, tuple[PrivacyLossLaw, int]] = {}
    for law, k in parts:
        kk = out[id(law)][1] if id(law) in out else 0
        out[id(law)] = (law, kk + k)
    return list(out.values())


class PrivacyLossDistribution:
    """Privacy loss distribution of a (heterogeneous) composition, with certified δ(ε) brackets.

    A PLD is a list of parts (remove law, add law, count); compositions only extend the list. A query
    realises each direction of the neighbouring relation on a grid of step Δ (chosen from
    ``accuracy.relative_width`` by a coarse first pass and refinement, or ``accuracy.grid_step``):

    * ``upper``: the exact hockey-stick value of the connect-the-dots *split* pair, which dominates
      the true pair (``docs/pld.md`` Lemma 1), computed from upper envelopes (Lemma 4) with the FFT
      error bars and the mass outside the FFT window added;
    * ``lower``: P_J(T) − e^ε Q_J(T) of the *quantised-outcome* pair (the summed cell index J, a
      post-processing, Lemma 2) on the test set T of bins with a positive computed difference, from
      lower envelopes of P and upper envelopes of Q, FFT error bars and folded mass subtracted.

    Both ends are off the truth by O(k·Δ²) for smooth laws. Small δ are read through exponentially
    tilted compositions (relative accuracy down to δ = 1e-300). δ(ε) is the maximum over the remove
    and add directions; ε(δ) is found by bisection on the certified values of each end.

    A pure grid engine: which engine answers a composition (this grid, the GDP closed form or
    :mod:`optcomp.optimal`) is decided by :mod:`optcomp.queries`.
    """

    def __init__(
        self,
        parts: tuple[tuple[PrivacyLossLaw, PrivacyLossLaw | None, int], ...],
        accuracy: Accuracy,
        neighbouring: Neighbouring | None = None,
    ) -> None:
        self._parts = parts
        self._accuracy = accuracy
        self._neighbouring = check_neighbouring("neighbouring", neighbouring)
        self._count = sum(k for _, _, k in parts)
        self._realised: dict[tuple[float, bool], Directions] = {}
        self._spans: dict[tuple[int, int], tuple[float, float]] = {}

    # -- construction -----------------------------------------------------------------------------
    @classmethod
    def from_laws(
        cls,
        remove: PrivacyLossLaw,
        add: PrivacyLossLaw | None = None,
        *,
        accuracy: Accuracy = DEFAULT_ACCURACY,
        neighbouring: Neighbouring | None = None,
    ) -> PrivacyLossDistribution:
        """The PLD of one mechanism from its exact laws.

        Args:
            remove: law of L = ln(dP/dQ) for the remove-direction pair (P, Q).
            add: law for the reversed pair; ``None`` (or ``remove`` itself) means symmetric.
            accuracy: the requested width or grid step (:class:`~optcomp.Accuracy`).
            neighbouring: the relation the laws are stated for, or ``None`` (relation-agnostic).
        """
        if not isinstance(remove, PrivacyLossLaw):
            raise TypeError(f"remove must be a PrivacyLossLaw, got {remove!r}")
        if add is not None and not isinstance(add, PrivacyLossLaw):
            raise TypeError(f"add must be a PrivacyLossLaw or None, got {add!r}")
        if not isinstance(accuracy, Accuracy):
            raise TypeError(f"accuracy must be an Accuracy, got {accuracy!r}")
        return cls(((remove, None if add is remove else add, 1),), accuracy, neighbouring)

    @property
    def accuracy(self) -> Accuracy:
        """The accuracy this PLD is realised with."""
        return self._accuracy

    @property
    def neighbouring(self) -> Neighbouring | None:
        """The neighbouring relation this PLD is stated for (``None``: relation-agnostic, i.e. valid for
        whichever relation the mechanisms' sensitivities were stated under)."""
        return self._neighbouring

    @property
    def count(self) -> int:
        """The number of mechanisms composed."""
        return self._count

    @property
    def symmetric(self) -> bool:
        """Whether every part is symmetric (then only one direction is computed)."""
        return all(add is None for _, add, _ in self._parts)

    def compose(self, other: PrivacyLossDistribution) -> PrivacyLossDistribution:
        """The PLD of running both compositions (heterogeneous; realised lazily, at query time).

        The result's accuracy is the finer of the two (:func:`~optcomp._numerics.finer_accuracy`, as
        for ``Composition.compose``): the parts are laws, not grids, so nothing realised at either
        accuracy is reused.
        """
        if not isinstance(other, PrivacyLossDistribution):
            raise TypeError(f"other must be a PrivacyLossDistribution, got {other!r}")
        relation = combined_relation(self._neighbouring, other._neighbouring, what="the two PLDs")
        accuracy = finer_accuracy(self._accuracy, other._accuracy)
        return PrivacyLossDistribution(self._parts + other._parts, accuracy, relation)

    def self_compose(self, k: int) -> PrivacyLossDistribution:
        """The k-fold composition; its cost does not grow with k beyond the width of the grid."""
        k = check_int("k", k, minimum=1)
        return PrivacyLossDistribution(
            tuple((r, a, c * k) for r, a, c in self._parts),
            self._accuracy,
            self._neighbouring,
        )

    # -- realisation ------------------------------------------------------------------------------
    def _laws(self) -> list[list[tuple[PrivacyLossLaw, int]]]:
        remove = _merge([(r, k) for r, _, k in self._parts])
        if self.symmetric:
            return [remove]
        return [remove, _merge([(r if a is None else a, k) for r, a, k in self._parts])]

    def _span(self, law: PrivacyLossLaw, level: int) -> tuple[float, float]:
        """The loss interval one law's grid covers at a window level (0: bulk, last: full), cached."""
        if (id(law), level) not in self._spans:
            self._spans[(id(law), level)] = window(law, log_tails(self._accuracy.tail_mass, self.count)[level])
        return self._spans[(id(law), level)]

    def _realise(
        self, laws: list[tuple[PrivacyLossLaw, int]], step: float, memo: Memo, blocks: bool = True
    ) -> Direction:
        """One direction's laws realised at ``step`` (bulk windows; deeper window levels on demand)."""

        def spans(level: int) -> list[tuple[float, float]]:
            return [self._span(law, level) for law, _ in laws]

        tails = log_tails(self._accuracy.tail_mass, self.count)
        return realise(laws, step, self._accuracy, spans, tails, memo, blocks)

    def _directions(self, step: float, blocks: bool = True) -> Directions:
        """Both directions at ``step``, each realised on first use (:class:`._lazy.Directions`); per-law
        vectors are shared by both, full windows (deep-tail tilts) only searched for when needed.
        ``blocks``: two levels allowed (ε(δ) only: their higher FFT floor sent deep δ(ε) curves to tilts)."""
        key = (step, blocks)
        if key not in self._realised:
            laws = self._laws()
            # keep only this realisation: a query's answer never depends on earlier queries' grids
            self._realised.clear()
            self._realised[key] = Directions(step, len(laws), lambda i, memo: self._realise(laws[i], step, memo, blocks))
        return self._realised[key]

    def _dirs(self, measure: _Measure, step: float) -> Directions:
        """:meth:`_directions` for ``measure`` (two levels only where it asks for them: ``two_level``)."""
        return self._directions(step, bool(getattr(measure, "two_level", False)))

    def _direction(self, i: int, step: float) -> Direction:
        """Direction ``i`` alone at ``step``, not kept (a coarser read of one direction)."""
        return self._realise(self._laws()[i], step, {})

    def _refine(self, measure: _Measure, strict: bool) -> Bound:
        """``measure`` by the one refinement schedule (:func:`._refine.refine`), started where the per-step
        width model puts the target when the measure allows it (:mod:`._stepmodel`, ``docs/pld.md`` §0); BLAS
        pools limited to one thread meanwhile (:func:`optcomp._threads.single_threaded`)."""
        acc = self._accuracy
        with single_threaded():
            first = None
            if acc.grid_step is None and getattr(measure, "model_start", False):  # duck-typed measures: plain start
                laws = self._laws()
                span = self._span(laws[0][0][0], 0) if laws and laws[0] else (math.nan, math.nan)
                support = span[1] - span[0]
                first = first_step(laws, acc.relative_width, support if math.isfinite(support) else None)
            return refine(measure, acc, lambda step: self._dirs(measure, step), strict=strict, first=first)

    # -- queries ----------------------------------------------------------------------------------
    def delta(self, epsilon: float) -> Bound:
        """Certified bracket of δ(ε) = max(δ_remove(ε), δ_add(ε)), δ_{P‖Q}(ε) = E_P[(1 − e^{ε−L})_+]; the
        narrowest reached, but never the trivial [0, 1] (:func:`._query.informative_delta` raises).

        Args:
            epsilon: ε ≥ 0.
        """
        eps = check_nonnegative("epsilon", epsilon)
        return informative_delta(self._refine(_DeltaMeasure(np.array([eps])), strict=False), eps)

    def hockey_stick_curve(self, epsilons: npt.ArrayLike | None = None) -> HockeyStickCurve:
        """The whole certified δ(ε) curve from one realisation (:func:`optcomp.pld._curve.hockey_stick_curve`):
        the ε points placed where the curve bends unless given, tilted compositions only where needed."""
        return hockey_stick_curve(self, epsilons)

    def delta_curve(self, epsilons: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
        """Vectorised :meth:`delta`: arrays (lower, upper) of δ(ε) for each ε ≥ 0 in ``epsilons``."""
        m = _DeltaMeasure(check_epsilons(epsilons))
        self._refine(m, strict=False)
        assert m.last is not None
        return m.last

    def epsilon(self, delta: float) -> Bound:
        """Certified bracket of ε(δ) = inf{ε ≥ 0 : δ(ε) ≤ δ}.

        ``upper`` is an ε whose certified upper δ is ≤ ``delta``; ``lower`` is an ε whose certified
        lower δ exceeds ``delta`` (or 0). Either may be ``inf`` (e.g. when the mass at +∞ exceeds
        ``delta``). With the automatic accuracy the grid is refined until
        (upper − lower)/max(upper, 0.01) ≤ ``accuracy.relative_width``; for δ ≥ ``PLD_DEEP_DELTA`` a width the
        memory cap cannot reach raises :class:`GridTooLargeError`.

        Args:
            delta: δ in [0, 1].
        """
        delta = check_probability("delta", delta)
        measure = _EpsilonMeasure(delta, self._accuracy.relative_width, self._direction)
        return self._refine(measure, strict=delta >= PLD_DEEP_DELTA)

    def epsilon_estimate(self, delta: float) -> float:
        """An *uncertified* point estimate (U + 2L)/3 of ε(δ) from the bracket [L, U].

        The two ends' errors are second order with a ratio near 2:1 for smooth laws and many steps
        (``docs/pld.md`` §7), which this weighting cancels; it is not a bound.
        """
        b = self.epsilon(delta)
        if not math.isfinite(b.upper):
            return b.upper
        return (b.upper + 2 * b.lower) / 3

    def __repr__(self) -> str:
        return f"PrivacyLossDistribution(count={self.count}, parts={len(self._parts)}, accuracy={self._accuracy})"


class _Measure:
    """A query run on one realisation, and its relative width."""

    @property
    def model_start(self) -> bool:
        """Whether the refinement may start at the width model's step (:func:`._stepmodel.first_step`)."""
        return False
    #: Whether large counts may be composed in two levels (:meth:`PrivacyLossDistribution._directions`).
    two_level = False

    def reset(self) -> None:
        """Forget what earlier passes left (before the plain schedule replays a model-placed one's)."""

    def run(self, dirs: Sequence[Direction]) -> Bound:
        raise NotImplementedError

    def width(self, b: Bound) -> float:
        raise NotImplementedError


class _EpsilonMeasure(_Measure):
    """ε(δ) on one realisation, intersected with the brackets of the coarser passes before it.

    Every pass's ends are certified for the same ε(δ) = max over directions of ε_dir(δ), so the bracket
    kept is [max of all lower ends, max over directions of the least upper end found for it]: never wider
    than the current pass's own. A direction whose least upper end so far is already ≤ the upper end of
    the directions computed in this pass cannot raise the maximum, and is not recomposed (for DP-SGD the
    add direction's ε is below the remove direction's by more than a coarse pass's error); one whose
    earlier bracket says a step between the two passes' would bring it below that upper end (less the
    target width) is read at that step first (``probe``, :meth:`_probe_upper`).
    """

    two_level = True

    @property
    def model_start(self) -> bool:
        """Deep δ (below ``_stepmodel.MODEL_DEEPEST_DELTA``) keeps the plain start."""
        return self.delta >= MODEL_DEEPEST_DELTA

    def __init__(
        self, delta: float, target: float = 0.0, probe: Callable[[int, float], Direction] | None = None
    ) -> None:
        self.delta = delta
        self.target = target
        self.probe = probe
        self.reset()

    def reset(self) -> None:
        self.uppers: dict[int, float] = {}
        self.lower = 0.0
        #: per direction, (step, upper end, lower end or 0) of the last pass that computed its upper end
        self.last: dict[int, tuple[float, float, float]] = {}
        #: the relative width of the last pass's own bracket (not intersected with earlier passes)
        self.pass_width = math.inf

    def run(self, dirs: Sequence[Direction]) -> Bound:
        order = sorted(range(len(dirs)), key=lambda i: -self.uppers.get(i, math.inf))
        ups: dict[int, float] = {}
        last = dict(self.last)
        upper = own_upper = -math.inf  # the intersection's, and this pass's own (for the step model)
        # the pass's step, from the first direction (always computed: nothing is below -inf); the others
        # are realised only if read at this step (:class:`._lazy.Directions`)
        step = dirs[order[0]].step
        for i in order:
            known = self.uppers.get(i, math.inf)
            mine = known
            if i not in self.uppers or known > upper:  # else it cannot raise the maximum: keep its end
                probed = self._probe_upper(i, step, upper)
                if probed is not None:
                    last[i] = (probed[0], probed[1], 0.0)
                    mine = probed[1]
                else:
                    mine = dirs[i].epsilon_upper(self.delta)
                    last[i] = (step, mine, 0.0)
                known = min(known, mine)
            ups[i] = known
            upper = max(upper, known)
            own_upper = max(own_upper, mine)
        lower = self.lower
        own_lower = 0.0
        # a direction whose own upper ε is below the lower ε already found cannot raise it: skip its
        # (costly) lower end
        for i in order:
            if ups[i] <= lower:
                continue
            low = dirs[i].epsilon_lower(self.delta, upper)
            if last[i][0] == step:
                last[i] = (last[i][0], last[i][1], low)
            lower = max(lower, low)
            own_lower = max(own_lower, low)
        # kept only once the whole pass has run (a pass that fails, e.g. GridTooLargeError, leaves none)
        self.uppers, self.lower, self.last = ups, lower, last
        self.pass_width = self.width_of(Bound(min(own_lower or lower, own_upper), own_upper))
        return Bound(min(lower, upper), upper)

    def _probe_upper(self, i: int, step: float, upper: float) -> tuple[float, float] | None:
        """``(step', upper end)`` of direction ``i`` at a step' coarser than ``step``, when its last bracket
        [l, u] at step s predicts one below ``upper`` less the target width: its upper error is about 2/3 of
        the width (``docs/pld.md`` §7) and scales like step², so step' = 0.85·s·√((goal − e)/(u − e)),
        e = l + (u − l)/3. ``None`` (compute it at ``step``) when there is no such bracket, the step' is
        under twice ``step``, or its upper end does not reach the goal. Speed only: any step's end is
        certified. Without a lower end at step s the probe is at s/``_PROBE_REFINEMENT``."""
        if self.probe is None or not math.isfinite(upper):
            return None
        goal = upper - self.target * max(upper, EPSILON_WIDTH_FLOOR)
        s0, u0, l0 = self.last.get(i, (step * _FRESH_PROBE, math.inf, 0.0))
        if i not in self.last:  # never read yet: a fixed coarsening, no coarser than the plain start
            coarse = s0 if s0 <= PLD_FIRST_STEP else 0.0
        elif not u0 < math.inf:
            return None
        elif l0 <= 0.0:  # no lower end at that step (e.g. a deep δ): no error estimate, a fixed refinement
            coarse = s0 / _PROBE_REFINEMENT
        else:
            est = l0 + (u0 - l0) / 3
            if not est < goal < u0:
                return None
            coarse = s0 * STEP_MARGIN * math.sqrt((goal - est) / (u0 - est))
        if coarse < 2 * step:
            return None
        u = self.probe(i, coarse).epsilon_upper(self.delta)
        return (coarse, u) if u <= goal else None

    def width(self, b: Bound) -> float:
        return self.width_of(b)

    @staticmethod
    def width_of(b: Bound) -> float:
        return epsilon_width(b)


class _DeltaMeasure(_Measure):
    def __init__(self, eps: FloatArray) -> None:
        self.eps = eps
        self.last: tuple[FloatArray, FloatArray] | None = None
        #: the width of the last pass when it was cut short by :meth:`failing` (else ``None``)
        self.partial: float | None = None

    def failing(self, dirs: Sequence[Direction], target: float) -> Bound | None:
        """A bound at the widest point the untilted ends settle (:meth:`Direction.untilted`), if that
        width already exceeds ``target``; else ``None``.

        A point is settled where the largest untilted upper δ is resolved untilted in its direction:
        :meth:`run` then returns exactly that upper δ (tilts only lower a direction's upper δ), and a
        lower δ no higher than the largest ceiling (clipped to it). So the full pass is at least this
        wide there and misses the target whatever its tilted ends give: they need not be built (issue
        27 item 7). The width kept for the step model is this lower bound on the full pass's."""
        parts = [d.untilted(self.eps) for d in dirs]
        if self.eps.size == 0 or any(p is None for p in parts):
            return None
        ups = np.array([p[0] for p in parts if p is not None])
        resolved = np.array([p[1] for p in parts if p is not None])
        hi = np.max(ups, axis=0)
        settled = np.any(resolved & (ups == hi), axis=0)
        lo = np.minimum(np.max([p[2] for p in parts if p is not None], axis=0), hi)
        w = np.where(settled, self._widths(lo, hi), 0.0)
        i = int(np.argmax(w))
        if not (math.isfinite(float(w[i])) and w[i] > target):
            return None
        self.partial = float(w[i])
        return Bound(float(lo[i]), float(hi[i]))

    def run(self, dirs: Sequence[Direction]) -> Bound:
        self.partial = None
        ups = upper_ends(dirs, self.eps)
        hi = np.max(ups, axis=0)
        lo = np.zeros(self.eps.size)
        for i in np.argsort([-float(np.max(u)) if u.size else 0.0 for u in ups]):
            if self.eps.size and not np.any(ups[i] > lo):
                continue  # this direction's upper δ is below the lower δ already found everywhere
            lo = np.maximum(lo, dirs[i].delta_lower(self.eps, ups[i], lo))
        lo = np.minimum(lo, hi)
        self.last = (lo, hi)
        if self.eps.size == 0:
            return Bound(0.0, 0.0)
        i = int(np.argmax(self._widths(lo, hi)))
        return Bound(float(lo[i]), float(hi[i]))

    @staticmethod
    def _widths(lo: FloatArray, hi: FloatArray) -> FloatArray:
        with np.errstate(invalid="ignore", divide="ignore"):
            w = np.where(hi > DELTA_WIDTH_FLOOR, (hi - lo) / hi, 0.0)
        return np.asarray(w, dtype=np.float64)

    def width(self, b: Bound) -> float:
        if self.partial is not None:
            return self.partial
        assert self.last is not None
        w = self._widths(*self.last)
        return float(np.max(w)) if w.size else 0.0

"""Balls-in-bins (random allocation): each example goes to k of an epoch's t steps, uniformly at random.

**Pipeline and relation.** Per epoch, every example independently picks k of the t steps (k = 1:
balls-in-bins, Chua et al., AISTATS 2025; k-out-of-t: Feldman–Shenfeld's random allocation); step s
releases the sum of the clipped gradients allocated to it plus N(0, σ²). Relation: add/remove one
example x. The other examples' allocations do not depend on x, so conditioning on them and using
joint convexity, one epoch is dominated by — and, with all other gradients 0 and x's a unit vector,
equal to — the t-dimensional pair

    P = C(t, k)⁻¹ Σ_{|S| = k} N(1_S, σ²I_t),   Q = N(0, σ²I_t)   (remove; add: the swap).

Its likelihood ratio is S/t, S a sum of t i.i.d. lognormals (k = 1), with no closed-form law; this
module certifies the two ends (``docs/samplers.md`` §5, Lemmas A–D):

* **Upper end, amplified** (:class:`AllocationEpoch`, Lemma C): the law of S by mean-preserving splits
  on the geometric grid x_j = t·e^{jh} (:mod:`optcomp.mechanisms._allocation_grid`), a genuine
  dominating pair in both directions; k > 1 via the floor/ceil blocks of Lemma B (not tight).
* **Lower end** (:class:`AllocationEpochLower`, Lemma D): the same recursion with labels (merges to
  conditional means), a dominated pair (:mod:`optcomp.mechanisms._allocation_lower`); for k > 1 the
  binned maximum coordinate M of the exact pair (as in :mod:`optcomp.mechanisms.shuffle`):
  P(M ≤ c) = Φ((c − 1)/σ)^k·Φ(c/σ)^{t−k},  Q(M ≤ c) = Φ(c/σ)^t.
* ``allocation_upper_mechanism``: the earlier no-amplification pair ``Gaussian(σ/√(kE))``
  (Dong–Roth–Su Cor. 3.3), kept for comparison.

:class:`AllocationRun` is a run's epoch laws at any grid step: the :class:`optcomp.pld.SteppedLaws` whose
step :func:`optcomp.pld.refine_stepped` refines for :mod:`optcomp.dpsgd`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass
from typing import ClassVar

import numpy as np
from scipy.special import log_ndtr, ndtri

from optcomp._numerics import (
    ALLOCATION_TAIL,
    ALLOCATION_TAIL_SHARE,
    POSITIVE,
    SHUFFLE_HIGH_SF,
    SHUFFLE_LOW_CDF,
    Domain,
    check_int,
    check_positive,
    integers,
)
from optcomp.mechanisms._dispatch import LawPair, privacy_loss_laws
from optcomp.mechanisms._group import NoGroupLawError, group_mechanism
from optcomp.mechanisms._spec import Mechanism, Neighbouring, validate_parameters
from optcomp.mechanisms.discrete import DiscretePair
from optcomp.mechanisms.gaussian import Gaussian
from optcomp.mechanisms.shuffle import SHUFFLE_BINS, bin_masses


def allocation_upper_mechanism(sigma: float, *, selected: int = 1, epochs: int = 1) -> Gaussian:
    """``Gaussian(σ/√(kE))``: the no-amplification pair dominating E epochs (module docstring)."""
    s = check_positive("noise_multiplier", sigma)
    k = check_int("selected", selected, minimum=1)
    e = check_int("epochs", epochs, minimum=1)
    return Gaussian(s / math.sqrt(k * e))


def allocation_lower_pair(sigma: float, steps_per_epoch: int, *, selected: int = 1) -> DiscretePair:
    """One epoch's exact pair post-processed to its binned maximum coordinate (module docstring)."""
    s = check_positive("noise_multiplier", sigma)
    t = check_int("steps_per_epoch", steps_per_epoch, minimum=1)
    k = check_int("selected", selected, minimum=1, maximum=t)
    low = min(0.0, s * float(ndtri(SHUFFLE_LOW_CDF ** (1.0 / t))))
    high = 1.0 + s * float(-ndtri(SHUFFLE_HIGH_SF / t))
    edges = np.linspace(low, high, SHUFFLE_BINS - 1)
    log_p = k * log_ndtr((edges - 1.0) / s) + (t - k) * log_ndtr(edges / s)
    log_q = t * log_ndtr(edges / s)
    p = bin_masses(np.asarray(log_p, dtype=np.float64))
    q = bin_masses(np.asarray(log_q, dtype=np.float64))
    return DiscretePair(tuple(p.tolist()), tuple(q.tolist()))


#: Grid step of the epoch laws where a composition is built without refinement (``Run.items``: the
#: inverses' searches, ``RandomAllocation.upper_items``).
ALLOCATION_ITEM_STEP = 2.0**-10
#: Coarsest first grid step of the balls-in-bins refinement.
ALLOCATION_FIRST_STEP = 2.0**-7
#: The refinement's first step: the largest at most ALLOCATION_START_FACTOR·s·√w, s the epoch's loss scale
#: and w the requested width (measured on the benchmark rows: the width met needs h ≈ 1.7–1.9·s·√w where
#: the bulk of S/t decides ε, the lower the heavier its tail: σ = 0.8, t = 10 needs 0.8·s·√w).
ALLOCATION_START_FACTOR = 1.7
#: The first step is placed as if the requested width were at least this (a cheap pass that measures the
#: work; a finer width is then reached, or refused by the work prediction, without a first huge pass).
ALLOCATION_START_WIDTH = 1e-4


#: The most each tail of an epoch law may carry at a query's δ (Lemma E: ALLOCATION_TAIL_SHARE·δ over the tails).
ALLOCATION_TAIL_MAX = 1e-9
#: The tail budgets an epoch law may be asked for (``docs/samplers.md`` Lemma E).
TAIL_BUDGET = Domain(0.0, ALLOCATION_TAIL_MAX, lower_closed=False, upper_closed=True)


def allocation_tail(delta: float | None, epochs: int, steps: int) -> float:
    """The tail budget τ of each epoch law for a query at ``delta`` over ``epochs`` epoch laws of ``steps``
    steps (``docs/samplers.md`` Lemma E): min(ALLOCATION_TAIL_MAX, ALLOCATION_TAIL_SHARE·δ/(E·c_t)),
    c_t = 5(n_t + 1) tails per epoch, n_t = ⌊log₂ t⌋ + popcount(t) (the combinations, a partial epoch's
    constant included; each reveals a right tail, the pairs outside both cores and up to two events
    S = 0, and spreads a left tail). Then all tails together add at most ALLOCATION_TAIL_SHARE·δ to δ(ε),
    in each direction. ``None`` (a query that does not name its δ): ALLOCATION_TAIL."""
    if delta is None:
        return ALLOCATION_TAIL
    combines = steps.bit_length() - 1 + steps.bit_count()
    return min(ALLOCATION_TAIL_MAX, ALLOCATION_TAIL_SHARE * delta / (epochs * 5 * (combines + 1)))


def allocation_scale(sigma: float, steps: int) -> float:
    """The spread, in nats, of one epoch's privacy loss ln(S/t): min(μ, √(expm1(μ²)/t)) (one factor's
    ln X has deviation μ; the mean S/t of t factors has deviation √(Var X/t)). Only places the first
    grid step of the refinement (:meth:`AllocationRun.first_step`); nothing returned depends on it."""
    mu = 1.0 / sigma
    return min(mu, math.sqrt(math.expm1(min(mu * mu, 700.0)) / steps))


def _dyadic(name: str, value: object) -> float:
    """A grid step 2^-n or 1.5·2^-n, n ≥ 0, at most 1 (float mantissa 1/2 or 3/4): every multiple jh of it
    with |j| < 2^50 is exact, and the stage grids h·2^e share its lattice (``docs/samplers.md`` §5)."""
    h = check_positive(name, value)
    m, _ = math.frexp(h)
    if m not in (0.5, 0.75) or h > 1.0:
        raise ValueError(
            f"{name} must be a power of two 2^-n or 1.5·2^-n with n >= 0, at most 1 (a dyadic grid step), got "
            f"{value!r}"
        )
    return h


def grid_step_below(h: float) -> float:
    """The largest grid step 2^-n or 1.5·2^-n (as :func:`_dyadic` accepts) that is at most ``h`` (0 < h ≤ 1)."""
    power = 2.0 ** math.floor(math.log2(h))
    return 1.5 * power if 1.5 * power <= min(h, 1.0) else power


def _taken(steps: int, taken: object) -> int:
    return steps if taken is None else check_int("taken", taken, minimum=1, maximum=steps)


@dataclass(frozen=True, slots=True)
class AllocationEpoch:
    """One balls-in-bins epoch (t steps, one per record, Gaussian noise σ) as its *dominating* split pair.

    ``AllocationEpoch(sigma, *, steps, grid_step)``: the law of ``docs/samplers.md`` Lemma C on the
    geometric grid x_j = t·e^{jh}, h = ``grid_step`` (dyadic): atoms at losses jh with certified upper
    envelopes of their masses (:mod:`optcomp.mechanisms._allocation_grid`); the add direction is its
    swap. Relation: add/remove. Composing it E times dominates E epochs (Lemma A); with
    ``Accuracy(grid_step=h)`` the engine's own split is exact on it.

    Attributes:
        sigma: noise multiplier σ > 0.
        steps: t ≥ 1 steps in the epoch.
        grid_step: the dyadic grid step h.
        tail: the mass each revealed or spread tail may carry, in (0, ALLOCATION_TAIL_MAX] (Lemma E;
            :func:`allocation_tail` picks it for a query's δ).
        taken: T' ≤ t, the steps of the epoch that ran (a partial last epoch: its first T' steps, whose
            likelihood ratio is (X₁ + … + X_T' + t − T')/t, ``docs/samplers.md`` §5); default all t.
    """

    sigma: float
    _: KW_ONLY
    steps: int
    grid_step: float
    tail: float = ALLOCATION_TAIL
    taken: int | None = None
    neighbouring: ClassVar[Neighbouring | None] = "add_remove"
    domains: ClassVar[Mapping[str, Domain]] = {"sigma": POSITIVE, "steps": integers(1)}

    def __post_init__(self) -> None:
        validate_parameters(self)
        object.__setattr__(self, "grid_step", _dyadic("grid_step", self.grid_step))
        object.__setattr__(self, "tail", TAIL_BUDGET.validate("tail", self.tail))
        object.__setattr__(self, "taken", _taken(self.steps, self.taken))


@dataclass(frozen=True, slots=True)
class AllocationEpochLower:
    """One balls-in-bins epoch as its *dominated* labelled pair (``docs/samplers.md`` Lemma D): a
    **lower-only** law.

    ``AllocationEpochLower(sigma, *, steps, grid_step)``: lower envelopes of P-masses and upper
    envelopes of Q-masses of the cell labels (:mod:`optcomp.mechanisms._allocation_lower`); only the
    *lower* end of a composition of it means anything, so :func:`optcomp.compose` refuses it
    (``lower_only``); :func:`optcomp.composition.dominated_composition` composes it for a lower end.
    ``tail``, ``taken``: as for :class:`AllocationEpoch`. Relation: add/remove.
    """

    sigma: float
    _: KW_ONLY
    steps: int
    grid_step: float
    tail: float = ALLOCATION_TAIL
    taken: int | None = None
    neighbouring: ClassVar[Neighbouring | None] = "add_remove"
    domains: ClassVar[Mapping[str, Domain]] = {"sigma": POSITIVE, "steps": integers(1)}
    #: Its composition's upper end bounds nothing: refused by ``compose`` (issue 32 item 9).
    lower_only: ClassVar[bool] = True

    def __post_init__(self) -> None:
        validate_parameters(self)
        object.__setattr__(self, "grid_step", _dyadic("grid_step", self.grid_step))
        object.__setattr__(self, "tail", TAIL_BUDGET.validate("tail", self.tail))
        object.__setattr__(self, "taken", _taken(self.steps, self.taken))


@privacy_loss_laws.register
def _allocation_epoch_laws(mechanism: AllocationEpoch) -> LawPair:
    from optcomp.mechanisms._allocation_grid import upper_laws

    return upper_laws(mechanism.sigma, mechanism.steps, mechanism.grid_step, mechanism.tail, mechanism.taken)


@privacy_loss_laws.register
def _allocation_epoch_lower_laws(mechanism: AllocationEpochLower) -> LawPair:
    from optcomp.mechanisms._allocation_lower import lower_laws

    return lower_laws(mechanism.sigma, mechanism.steps, mechanism.grid_step, mechanism.tail, mechanism.taken)


@group_mechanism.register(AllocationEpoch)
@group_mechanism.register(AllocationEpochLower)
def _allocation_group(mechanism: Mechanism, g: int) -> Mechanism:
    """Refused: a group's records share the epoch's steps (balls-in-bins), no one-record law composes to it."""
    raise NoGroupLawError(
        f"{type(mechanism).__name__} (balls-in-bins random allocation) has no exact group-privacy law: the "
        "group's records are allocated within one epoch and share its steps, which the one-record pair does "
        "not describe"
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class RandomAllocation:
    """One epoch of k-out-of-t random allocation with a Gaussian step: a run description, not a law.

    dp_accounting's ``RandomAllocationDpEvent(event=GaussianDpEvent(σ), num_selected=k, num_steps=t)``
    (google/differential-privacy PR #414). optcomp has no exact privacy-loss law for it; it is accounted
    by two certified ends (module docstring): :meth:`upper_mechanism` dominates it (no amplification),
    :meth:`lower_pair` is dominated by it (the exact pair's binned maximum). Relation: add/remove.

    Attributes:
        sigma: noise multiplier σ > 0 of each step's Gaussian.
        steps: t ≥ 1 steps in the epoch.
        selected: k, 1 ≤ k ≤ t, the steps each example is allocated to.
    """

    sigma: float
    steps: int
    selected: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", check_positive("sigma", self.sigma))
        object.__setattr__(self, "steps", check_int("steps", self.steps, minimum=1))
        object.__setattr__(self, "selected", check_int("selected", self.selected, minimum=1, maximum=self.steps))

    def upper_mechanism(self) -> Gaussian:
        """``Gaussian(σ/√k)``: dominates the epoch (no amplification; kept for comparison)."""
        return allocation_upper_mechanism(self.sigma, selected=self.selected)

    def upper_items(self, grid_step: float = ALLOCATION_ITEM_STEP) -> list[tuple[AllocationEpoch, int]]:
        """The amplified dominating composition: one :class:`AllocationEpoch` for k = 1; for k > 1 the
        floor/ceil blocks of ``docs/samplers.md`` Lemma B (k epochs of 1-of-⌊t/k⌋ or 1-of-⌈t/k⌉ steps,
        certified, **not tight**)."""
        k, t = self.selected, self.steps
        big = t % k  # blocks of ⌈t/k⌉ steps; the other k − big have ⌊t/k⌋
        sizes = [(t // k + 1, big), (t // k, k - big)]
        return [(AllocationEpoch(self.sigma, steps=size, grid_step=grid_step), n) for size, n in sizes if n > 0]

    def lower_pair(self) -> AllocationEpochLower | DiscretePair:
        """A pair dominated by the epoch: the labelled pair of Lemma D for k = 1 (tight as h → 0), the
        binned maximum coordinate of the exact k-of-t pair for k > 1."""
        if self.selected == 1:
            return AllocationEpochLower(self.sigma, steps=self.steps, grid_step=ALLOCATION_ITEM_STEP)
        return allocation_lower_pair(self.sigma, self.steps, selected=self.selected)


def _epochs(sampling_rate: float, steps: int) -> tuple[int, int, int]:
    """(t, E, T'): t = 1/q steps per epoch, E = ⌊T/t⌋ complete epochs, T' = T − E·t steps of a last one."""
    from optcomp.mechanisms.shuffle import batches_per_epoch

    per_epoch, _ = batches_per_epoch(sampling_rate)
    total = check_int("steps", steps, minimum=1)
    return per_epoch, total // per_epoch, total % per_epoch


@dataclass(frozen=True, slots=True)
class AllocationRun:
    """A balls-in-bins run's epoch laws at any grid step (``docs/samplers.md`` §5; Lemma A: E = ⌊T/t⌋ complete
    epochs and, if T' = T − E·t > 0, the first T' steps of one more, both ends exact): the
    :class:`~optcomp.pld.SteppedLaws` whose step :func:`~optcomp.pld.refine_stepped` refines
    (``dpsgd.SAMPLERS["balls_in_bins"].stepped`` builds it).

    Attributes:
        sigma: noise multiplier σ.
        rate: the sampling rate 1/t.
        steps: T ≥ 1 steps of the run.
        tail: each epoch law's tail budget (:func:`allocation_tail` of the query's δ).
    """

    sigma: float
    rate: float
    steps: int
    tail: float = ALLOCATION_TAIL

    @classmethod
    def of(cls, sigma: float, rate: float, steps: int, delta: float | None) -> AllocationRun:
        """The run with the tail budget of a query at ``delta`` (``None``: ALLOCATION_TAIL)."""
        t, full, rest = _epochs(rate, steps)
        return cls(sigma, rate, steps, allocation_tail(delta, full + (rest > 0), t))

    title: ClassVar[str] = "balls-in-bins"

    @property
    def scale(self) -> float:
        """:func:`allocation_scale` of one epoch (places the refinement's first step)."""
        return allocation_scale(self.sigma, _epochs(self.rate, self.steps)[0])

    @property
    def work(self) -> float:
        """The epoch laws' counted operations so far (``_allocation_grid.WORK``)."""
        from optcomp.mechanisms._allocation_grid import WORK

        return WORK[0]

    @property
    def max_work(self) -> float:
        """The most one pass may count: MAX_WORK for each of its two laws (upper and lower)."""
        from optcomp.mechanisms._allocation_grid import MAX_WORK

        return 2 * MAX_WORK

    def first_step(self, target: float) -> float:
        """The largest grid step at most ALLOCATION_START_FACTOR·s·√w (s = :attr:`scale`, w = ``target``, at
        least ALLOCATION_START_WIDTH) and ALLOCATION_FIRST_STEP: the width is of second order in h and met
        at h ≈ 1.7–1.9·s·√w on the benchmark rows (``docs/samplers.md`` §5)."""
        start = ALLOCATION_START_FACTOR * self.scale * math.sqrt(max(target, ALLOCATION_START_WIDTH))
        return grid_step_below(min(ALLOCATION_FIRST_STEP, start))

    @staticmethod
    def step_below(h: float) -> float:
        """:func:`grid_step_below`: the epoch laws exist at dyadic steps 2^-n and 1.5·2^-n."""
        return grid_step_below(h)

    def upper_items(self, step: float | None = None) -> list[tuple[Mechanism, int]]:
        """The upper end's composition: the split epoch pair of Lemma C (:class:`AllocationEpoch`, grid step
        ``step``, default ALLOCATION_ITEM_STEP) over the complete epochs and a partial last one."""
        return self._items(AllocationEpoch, step)

    def lower_items(self, step: float | None = None) -> list[tuple[Mechanism, int]]:
        """The lower end's composition: the labelled pair of Lemma D (:class:`AllocationEpochLower`, a
        lower-only law), as :meth:`upper_items`."""
        return self._items(AllocationEpochLower, step)

    def no_amplification(self) -> Gaussian:
        """:func:`allocation_upper_mechanism` over the ⌈T/t⌉ epochs the run touches (a second certified
        upper end: each example is in one step per epoch)."""
        _, full, rest = _epochs(self.rate, self.steps)
        return allocation_upper_mechanism(self.sigma, epochs=full + (rest > 0))

    def _items(self, kind: type[AllocationEpoch | AllocationEpochLower], step: float | None) -> list[tuple[Mechanism, int]]:
        t, full, rest = _epochs(self.rate, self.steps)
        h = step or ALLOCATION_ITEM_STEP
        items: list[tuple[Mechanism, int]] = [(kind(self.sigma, steps=t, grid_step=h, tail=self.tail), full)] if full else []
        if rest:
            items.append((kind(self.sigma, steps=t, grid_step=h, tail=self.tail, taken=rest), 1))
        return items

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

:func:`allocation_bracket` refines the grid step for :mod:`optcomp.dpsgd`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
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
    Accuracy,
    Bound,
    Domain,
    GridTooLargeError,
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


#: Finest grid step the balls-in-bins refinement tries (each halving costs about 4×).
ALLOCATION_FINEST_STEP = 2.0**-11
#: First grid step of the balls-in-bins refinement.
ALLOCATION_FIRST_STEP = 2.0**-8
#: Grid step of the epoch laws where a composition is built without refinement (``Run.items``, and the
#: upper-end-only searches of the inverses at a requested width below 1e-3).
ALLOCATION_ITEM_STEP = 2.0**-10
#: Grid step of the upper-end-only searches at a requested width of 1e-3 or more.
ALLOCATION_COARSE_STEP = 2.0**-9
#: Requested relative width at or above which the upper-end-only searches use ALLOCATION_COARSE_STEP.
ALLOCATION_COARSE_WIDTH = 1e-3


#: The tail budgets an epoch law may be asked for (``docs/samplers.md`` Lemma E).
TAIL_BUDGET = Domain(0.0, ALLOCATION_TAIL, lower_closed=False, upper_closed=True)


def allocation_tail(delta: float | None, epochs: int, steps: int) -> float:
    """The tail budget τ of each epoch law for a query at ``delta`` over ``epochs`` epochs of ``steps``
    steps (``docs/samplers.md`` Lemma E): min(ALLOCATION_TAIL, ALLOCATION_TAIL_SHARE·δ/(E·c_t)),
    c_t = 3(n_t + 1) tails per epoch, n_t = ⌊log₂ t⌋ + popcount(t) − 1 partial sums trimmed. Then all
    tails together add at most ALLOCATION_TAIL_SHARE·δ to δ(ε), in each direction. ``None`` (a query
    that does not name its δ): ALLOCATION_TAIL. Equal to ALLOCATION_TAIL wherever that is already
    small enough (δ ≥ 10⁻¹⁰ for every run of up to 10⁹ epochs)."""
    if delta is None:
        return ALLOCATION_TAIL
    combines = steps.bit_length() - 1 + steps.bit_count() - 1
    return min(ALLOCATION_TAIL, ALLOCATION_TAIL_SHARE * delta / (epochs * 3 * (combines + 1)))


def _dyadic(name: str, value: object) -> float:
    h = check_positive(name, value)
    m, _ = math.frexp(h)
    if m != 0.5 or h > 1.0:
        raise ValueError(f"{name} must be a power of two 2^-n with n >= 0 (a dyadic grid step), got {value!r}")
    return h


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
        tail: the mass each revealed or spread tail may carry, in (0, ALLOCATION_TAIL] (Lemma E;
            :func:`allocation_tail` picks it for a query's δ).
    """

    sigma: float
    _: KW_ONLY
    steps: int
    grid_step: float
    tail: float = ALLOCATION_TAIL
    neighbouring: ClassVar[Neighbouring | None] = "add_remove"
    domains: ClassVar[Mapping[str, Domain]] = {"sigma": POSITIVE, "steps": integers(1)}

    def __post_init__(self) -> None:
        validate_parameters(self)
        object.__setattr__(self, "grid_step", _dyadic("grid_step", self.grid_step))
        object.__setattr__(self, "tail", TAIL_BUDGET.validate("tail", self.tail))


@dataclass(frozen=True, slots=True)
class AllocationEpochLower:
    """One balls-in-bins epoch as its *dominated* labelled pair (``docs/samplers.md`` Lemma D).

    ``AllocationEpochLower(sigma, *, steps, grid_step)``: lower envelopes of P-masses and upper
    envelopes of Q-masses of the cell labels (:mod:`optcomp.mechanisms._allocation_lower`); only the
    *lower* end of a composition of it means anything; ``tail``: the mass each dropped tail may carry,
    as for :class:`AllocationEpoch`. Relation: add/remove.
    """

    sigma: float
    _: KW_ONLY
    steps: int
    grid_step: float
    tail: float = ALLOCATION_TAIL
    neighbouring: ClassVar[Neighbouring | None] = "add_remove"
    domains: ClassVar[Mapping[str, Domain]] = {"sigma": POSITIVE, "steps": integers(1)}

    def __post_init__(self) -> None:
        validate_parameters(self)
        object.__setattr__(self, "grid_step", _dyadic("grid_step", self.grid_step))
        object.__setattr__(self, "tail", TAIL_BUDGET.validate("tail", self.tail))


@privacy_loss_laws.register
def _allocation_epoch_laws(mechanism: AllocationEpoch) -> LawPair:
    from optcomp.mechanisms._allocation_grid import upper_laws

    return upper_laws(mechanism.sigma, mechanism.steps, mechanism.grid_step, mechanism.tail)


@privacy_loss_laws.register
def _allocation_epoch_lower_laws(mechanism: AllocationEpochLower) -> LawPair:
    from optcomp.mechanisms._allocation_lower import lower_laws

    return lower_laws(mechanism.sigma, mechanism.steps, mechanism.grid_step, mechanism.tail)


@group_mechanism.register(AllocationEpoch)
@group_mechanism.register(AllocationEpochLower)
def _allocation_group(mechanism: Mechanism, g: int) -> Mechanism:
    """Refused: a group's records share the epoch's steps (balls-in-bins), no one-record law composes to it."""
    raise NoGroupLawError(
        f"{type(mechanism).__name__} (balls-in-bins random allocation) has no exact group-privacy law: the "
        "group's records are allocated within one epoch and share its steps, which the one-record pair does "
        "not describe"
    )


def allocation_bracket(
    bracket_at: Callable[[Accuracy], Bound],
    accuracy: Accuracy,
    *,
    lower: bool = True,
    floor: float,
    refine: bool = True,
) -> Bound:
    """A certified bracket for a balls-in-bins run, refining the dyadic grid step h.

    ``bracket_at(acc)``: the query's certified bracket of the run at the grid step h = ``acc.grid_step``
    (engine grid Δ = h), from its run bracket (built by the caller, :func:`optcomp.dpsgd.Run.bound`, so this
    refinement imports nothing above the mechanisms floor): upper ends from ⌈T/t⌉ epochs of
    :class:`AllocationEpoch` capped by no amplification, lower ends from ⌊T/t⌋ epochs of
    :class:`AllocationEpochLower` (``docs/samplers.md`` Lemmas A, C, D). From h = ALLOCATION_FIRST_STEP, h is
    halved (or divided by up to 8, as the second-order width model predicts) until
    (upper − lower)/max(upper, ``floor``) ≤ ``accuracy.relative_width`` or h reaches
    ALLOCATION_FINEST_STEP, where the narrowest bracket reached is returned (every pass is certified).
    ``accuracy.grid_step`` fixes h (rounded down to a power of two, at least ALLOCATION_FINEST_STEP);
    ``refine=False`` (no complete epoch: the lower end is 0 at every h) stops after the first pass; a grid
    too large for one convolution (``GridTooLargeError``) ends the refinement with the bracket reached (and
    is raised if it is the first). ``lower=False`` (the inverses' searches, which test the upper end only)
    evaluates ``bracket_at`` once, at ALLOCATION_COARSE_STEP or ALLOCATION_ITEM_STEP by the requested width.
    """

    def at(h: float) -> Accuracy:
        return Accuracy(grid_step=h, tail_mass=accuracy.tail_mass, memory_cap=accuracy.memory_cap)

    if accuracy.grid_step is not None:
        h = min(1.0, max(ALLOCATION_FINEST_STEP, 2.0 ** math.floor(math.log2(accuracy.grid_step))))
    elif not lower:
        h = ALLOCATION_COARSE_STEP if accuracy.relative_width >= ALLOCATION_COARSE_WIDTH else ALLOCATION_ITEM_STEP
    else:
        h = ALLOCATION_FIRST_STEP
    best: Bound | None = None
    while True:
        try:
            bound = bracket_at(at(h))
        except GridTooLargeError:
            if best is None:
                raise
            return best  # the finer grid does not fit: the narrowest certified bracket reached
        if not lower:
            return bound
        best = bound
        width = (bound.upper - bound.lower) / max(bound.upper, floor) if bound.upper > 0 else 0.0
        if width <= accuracy.relative_width or accuracy.grid_step is not None or not refine:
            return bound
        if h <= ALLOCATION_FINEST_STEP or not math.isfinite(width):
            return bound
        ratio = math.sqrt(max(accuracy.relative_width / width, 1.0 / 64.0))  # width ∝ h² (observed)
        h = max(ALLOCATION_FINEST_STEP, min(h / 2, 2.0 ** math.floor(math.log2(h * ratio))))


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


def allocation_lower_items(
    sigma: float, sampling_rate: float, steps: int, *, step: float | None = None, tail: float = ALLOCATION_TAIL
) -> list[tuple[Mechanism, int]]:
    """The lower end's composition of ``steps`` balls-in-bins steps with t = 1/q steps per epoch: the
    labelled epoch pair of ``docs/samplers.md`` Lemma D (:class:`AllocationEpochLower`, on the grid step
    ``step``, default ALLOCATION_ITEM_STEP, tail budget ``tail``) over the complete epochs (``[]``,
    lower end 0, when the run does not complete one)."""
    from optcomp.mechanisms.shuffle import batches_per_epoch

    per_epoch, _ = batches_per_epoch(sampling_rate)
    epochs = check_int("steps", steps, minimum=1) // per_epoch
    pair = AllocationEpochLower(sigma, steps=per_epoch, grid_step=step or ALLOCATION_ITEM_STEP, tail=tail)
    return [(pair, epochs)] if epochs >= 1 else []



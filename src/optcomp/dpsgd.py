"""DP-SGD accounting: ε and δ of noisy SGD under a batch sampler, and the two inverse problems.

One DP-SGD step clips each per-example gradient to norm 1 (sensitivity Δ = 1), sums the gradients of a
batch and adds N(0, σ²) noise, σ = ``noise_multiplier``; ``steps`` steps compose adaptively (the
``steps``-fold convolution of one step's loss, ``shared/MATH.md``). Poisson batches by default (each
record kept with probability ``sampling_rate`` = q: the pair (N(0, σ²), (1 − q)·N(0, σ²) + q·N(1, σ²))
and its swap, Koskela–Jälkö–Honkela 2020 §5); ``sampling=`` picks another row of :data:`SAMPLERS`
(``docs/samplers.md`` has the pairs and proofs), ``examples_per_user`` user-level DP-SGD. A run's bracket is
a :class:`optcomp.queries.RunBracket` (:meth:`Run.bracket`): upper ends of the dominating composition,
lower ends of a dominated one. :func:`tradeoff` reads the run's trade-off curve; :func:`noise_multiplier`
and :func:`steps` are :func:`optcomp.calibrate.noise_for_target` on the certified upper end (the safe
side of the root: the value returned was evaluated and meets the target).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol, TypedDict, Unpack

from optcomp._numerics import (
    DEFAULT_ACCURACY,
    EPSILON_WIDTH_FLOOR,
    MAX_MEAN_LOSS,
    PARAMETER_RTOL,
    PLD_DEEP_DELTA,
    PLD_LAW_TAIL,
    Accuracy,
    Bound,
    Domain,
    check_int,
    check_nonnegative,
    check_open_probability,
    check_positive,
    check_sampling_rate,
)
from optcomp.calibrate import noise_for_target
from optcomp.composition import compose, dominated_composition
from optcomp.engines import Answers, one_answer
from optcomp.mechanisms import (
    Gaussian,
    PoissonSubsampled,
    SubsampledWithoutReplacement,
    TruncatedPoissonGaussian,
    check_user_level_mean,
    user_level_mixture,
)
from optcomp.mechanisms.shuffle import (
    batches_per_epoch,
    shuffle_lower_items,
    shuffle_upper_mechanism,
)
from optcomp.pld import WarmStart, refine_stepped
from optcomp.queries import RunBracket

if TYPE_CHECKING:
    from optcomp.fdp import TradeOffBracket
    from optcomp.mechanisms import Mechanism
    from optcomp.pld import SteppedBracket, SteppedLaws

    class SteppedRun(SteppedLaws, Protocol):
        """A run's laws at any grid step h (``Sampler.stepped``; ``docs/architecture.md``)."""

        def upper_items(self, step: float | None = None) -> list[tuple[Mechanism, int]]: ...
        def lower_items(self, step: float | None = None) -> list[tuple[Mechanism, int]]: ...
        def no_amplification(self) -> Mechanism: ...

#: The names of :data:`SAMPLERS`, for type checkers (``tests/test_samplers.py`` checks they agree).
Sampling = Literal["poisson", "fixed_size", "truncated_poisson", "shuffle", "balls_in_bins"]


class SamplerOptions(TypedDict, total=False):
    """The sampler keywords of every query here (:func:`epsilon` documents them; absent: its default)."""

    sampling: Sampling
    examples_per_user: int
    dataset_size: int | None
    max_batch_size: int | None


#: Most steps accounted (integers beyond 2**53 are not exact in float64).
MAX_STEPS = 2**53
#: Largest ε target of the inverses (as the planner's budget): an ε beyond it protects nothing (a likelihood
#: ratio of e^100), and the σ that reaches it is so small that each engine evaluation takes long.
MAX_TARGET_EPSILON = 100.0
_TARGET = Domain(0.0, MAX_TARGET_EPSILON, lower_closed=False, upper_closed=True)
#: Smallest δ the inverses (:func:`noise_multiplier`, :func:`steps`) calibrate at: the PLD engine's per-step
#: windows leave up to ``PLD_LAW_TAIL`` (1e−305) of mass unresolved per direction, so below it the certified
#: upper ε is loose or infinite (σ = 2, q = 0.01, T = 1000: [20.34, ∞] at δ = 1e−310) and a σ search walks out
#: for minutes, each evaluation slower; refused by name instead.
MIN_INVERSE_DELTA = 1e-300
#: Beyond this x, ln(1 + x²) = 2 ln x in float64 and x² may overflow (:func:`_sigma_guess`).
_GUESS_X_LIMIT = 1e10
_GUESS_X_MAX = 1e300
#: Below this σ, e^{1/σ²} overflows (the convexity bound alone is used).
_SIGMA_EXP_FLOOR = 0.04


@dataclass(frozen=True)
class Sampler:
    """One batch sampler: the one row a new sampler adds to :data:`SAMPLERS` (``docs/architecture.md``).

    Attributes:
        items: run → its dominating composition, as ``(mechanism, count)`` items (the upper end).
        relation: the neighbouring relation its number is stated for.
        batches: how the batches are formed, in words (the privacy statement; fields ``{q}``, ``{n}``, ``{b}``).
        title: the sampler's name in words ("Poisson sampling").
        exact: whether its items are the run's own pair (else they only dominate the run).
        pair_row: whether ``optcomp dpsgd`` prints the items' own bracket on a row of its own (where it differs
            from the run's): samplers whose items only dominate the run. Not balls-in-bins: its pair is
            attained (Lemma A), the split pair of Lemma C is only the grid its bracket was computed on.
        lower: run → a dominated composition of its own (``[]``: lower end 0); ``None`` where the items'
            own counterparts give it (:meth:`optcomp.queries.Composition.run_bracket`).
        tradeoff: whether its pair (or the attained pairs) gives the run's trade-off curve (:func:`tradeoff`).
        per_step: whether it is a law of one step (an Opacus history is step by step); ``False``: of a run.
        stepped: (run, δ) → its laws at any grid step h (a ``SteppedRun``) where they live on a step that
            :meth:`Run.bound` refines (balls-in-bins); ``None``: fixed laws.
        user_level: whether ``examples_per_user`` > 1 is supported.
        sized: whether it takes (and needs) ``dataset_size`` and ``max_batch_size``.
        epochs: whether ``sampling_rate`` must be 1/t for an integer number t of steps per epoch.
    """

    items: Callable[[Run], list[tuple[Mechanism, int]]]
    relation: str
    batches: str
    title: str
    exact: bool = False
    pair_row: bool = True
    lower: Callable[[Run], list[tuple[Mechanism, int]]] | None = None
    tradeoff: bool = False
    per_step: bool = True
    stepped: Callable[[Run, float | None], SteppedRun] | None = None
    user_level: bool = False
    sized: bool = False
    epochs: bool = False


@dataclass(frozen=True)
class Run:
    """A validated DP-SGD run (:meth:`checked`): σ, q, the number of steps and the sampler's options, as the
    arguments of :func:`epsilon` (which documents them)."""

    sigma: float
    q: float
    steps: int
    sampling: str = "poisson"
    examples_per_user: int = 1
    dataset_size: int | None = None
    max_batch_size: int | None = None

    @classmethod
    def checked(
        cls,
        sigma: object,
        q: object,
        steps: object,
        sampling: object = "poisson",
        examples_per_user: object = 1,
        dataset_size: object = None,
        max_batch_size: object = None,
    ) -> Run:
        """Validate every parameter (``ValueError`` naming it) and their combination (the sampler's row)."""
        s, rate, t = _validate(sigma, q, steps)
        if sampling not in SAMPLERS:
            raise ValueError(f"sampling must be one of {SUPPORTED_SAMPLING}, got {sampling!r}")
        name, row = str(sampling), SAMPLERS[str(sampling)]
        k = check_int("examples_per_user", examples_per_user, minimum=1)
        if k > 1 and not row.user_level:
            users = ", ".join(f"sampling={n!r}" for n, r in SAMPLERS.items() if r.user_level)
            raise ValueError(f"examples_per_user > 1 is supported with {users} only (no sound user-level law is "
                             f"implemented for {name!r}), got examples_per_user={k}")
        n = b = None
        sized = [n for n, r in SAMPLERS.items() if r.sized]
        if row.sized:
            if dataset_size is None or max_batch_size is None:
                raise ValueError(f"sampling={name!r} needs dataset_size and max_batch_size (integers >= 1)")
            n = check_int("dataset_size", dataset_size, minimum=1)
            b = check_int("max_batch_size", max_batch_size, minimum=1)
        elif dataset_size is not None or max_batch_size is not None:
            raise ValueError(f"dataset_size and max_batch_size apply to sampling={' or '.join(map(repr, sized))} "
                             f"only, got sampling={name!r}")
        if row.epochs and not batches_per_epoch(rate)[1]:
            raise ValueError(f"sampling={name!r} needs sampling_rate = 1/t for an integer number t of steps per "
                             f"epoch, got sampling_rate={rate!r}")
        return cls(s, rate, t, name, k, n, b)

    @property
    def sampler(self) -> Sampler:
        """Its row of :data:`SAMPLERS`."""
        return SAMPLERS[self.sampling]

    def items(self) -> list[tuple[Mechanism, int]]:
        """The dominating composition (upper end) as ``(mechanism, count)`` items."""
        return self.sampler.items(self)

    def at(self, *, sigma: float | None = None, steps: int | None = None) -> Run:
        """This run with another σ or number of steps, validated again (what the inverses search over)."""
        return Run.checked(self.sigma if sigma is None else sigma, self.q, self.steps if steps is None else steps,
                           self.sampling, self.examples_per_user, self.dataset_size, self.max_batch_size)

    def bracket(self, accuracy: Accuracy) -> RunBracket:
        """The run's :class:`~optcomp.queries.RunBracket`: upper ends from :meth:`items`, lower ends from the
        sampler's own dominated composition (``Sampler.lower``; ``[]``: lower end 0) or else from the items'
        counterparts (truncated Poisson: all other gradients 0; fixed size, T > 1: the attained
        one-direction pairs), or the items' own where their law is the run's. Balls-in-bins: at its item
        step, unrefined (:meth:`bound` refines it)."""
        composition = compose(*self.items(), accuracy=accuracy)
        if self.sampler.lower is None:
            return composition.run_bracket()
        low = self.sampler.lower(self)
        return RunBracket(composition.dominating(), dominated_composition(*low, accuracy=accuracy) if low else None)

    def brackets(self, query: Callable[[RunBracket], Bound], accuracy: Accuracy, *,
                 delta: float | None = None, strict: bool = False) -> tuple[Bound, Bound]:
        """``(run, dominating_pair)``: the run's bracket (:meth:`bound`; ``delta``, ``strict`` as there) and
        :meth:`items`' own (balls-in-bins: the split pair's, from the same pass)."""
        if self.sampler.stepped is not None:
            found = _stepped(self.sampler.stepped(self, delta), query, accuracy, EPSILON_WIDTH_FLOOR, strict)
            return found.run, found.pair
        bracket = self.bracket(accuracy)
        return query(bracket), query(RunBracket.own(bracket.upper))

    def bound(self, query: Callable[[RunBracket], Bound], accuracy: Accuracy, *,
              floor: float = EPSILON_WIDTH_FLOOR, delta: float | None = None, strict: bool = False) -> Bound:
        """``query`` of the run's bracket (:meth:`bracket`). Balls-in-bins refines its grid step until the width
        (upper − lower)/max(upper, ``floor``) is ``accuracy.relative_width``, else ``GridTooLargeError``
        (``strict``: ε at δ ≥ PLD_DEEP_DELTA) or the narrowest bracket, the tail budget set by ``delta``."""
        if self.sampler.stepped is not None:
            return _stepped(self.sampler.stepped(self, delta), query, accuracy, floor, strict).run
        return query(self.bracket(accuracy))

    def answers(self, deltas: Sequence[float], epsilons: Sequence[float], accuracy: Accuracy, *,
                warm: tuple[WarmStart, WarmStart] | None = None) -> Answers:
        """Every ε(δ) of ``deltas`` and δ(ε) of ``epsilons`` of the run, as :func:`epsilon`/:func:`delta` would
        certify them, each query's error kept as its answer: the run bracket's batch
        (:meth:`~optcomp.queries.RunBracket.answers`, warm-started along a chain of T by ``warm``); a stepped
        sampler's queries each refine its own laws (:meth:`bound`: nothing is shared)."""
        if self.sampler.stepped is None:
            return self.bracket(accuracy).answers(deltas, epsilons, warm=warm, position=self.steps)
        return Answers(
            {d: one_answer(lambda x: self.bound(lambda c: c.epsilon(x), accuracy, delta=x), d, None) for d in deltas},
            {e: one_answer(lambda x: self.bound(lambda c: c.delta(x), accuracy, floor=0.0), e, None) for e in epsilons})


def _poisson(run: Run) -> list[tuple[Mechanism, int]]:
    if run.examples_per_user > 1:
        check_user_level_mean(run.sigma, run.q, run.steps, run.examples_per_user)
        return [(user_level_mixture(run.sigma, run.q, run.examples_per_user), run.steps)]
    if run.q == 1.0:  # no sampling: the floor composes the Gaussians in closed form (optcomp.queries)
        return [(Gaussian(sigma=run.sigma), run.steps)]
    return [(PoissonSubsampled(Gaussian(sigma=run.sigma), sampling_rate=run.q), run.steps)]


def _fixed_size(run: Run) -> list[tuple[Mechanism, int]]:
    # Replacing one record moves a sum of gradients clipped to norm 1 by at most 2.
    step = SubsampledWithoutReplacement(Gaussian(sigma=run.sigma, sensitivity=2.0), sampling_rate=run.q)
    return [(step, run.steps)]


def _truncated_poisson(run: Run) -> list[tuple[Mechanism, int]]:
    n, b = run.dataset_size, run.max_batch_size
    if n is None or b is None:  # pragma: no cover - Run.checked() guarantees both
        raise ValueError("sampling='truncated_poisson' needs dataset_size and max_batch_size")
    return [(TruncatedPoissonGaussian(run.sigma, dataset_size=n, sampling_rate=run.q, max_batch_size=b), run.steps)]


def _shuffle(run: Run) -> list[tuple[Mechanism, int]]:
    return [(shuffle_upper_mechanism(run.sigma, run.steps, run.q), 1)]


def _shuffle_lower(run: Run) -> list[tuple[Mechanism, int]]:
    return list(shuffle_lower_items(run.sigma, run.q, run.steps))  # Chua et al.'s pair over complete epochs


def _allocation(run: Run, delta: float | None = None) -> SteppedRun:
    from optcomp.mechanisms.allocation import AllocationRun

    return AllocationRun.of(run.sigma, run.q, run.steps, delta)  # Lemmas A, C, D: split and labelled epochs


def _stepped(laws: SteppedRun, query: Callable[[RunBracket], Bound], accuracy: Accuracy, floor: float,
             strict: bool) -> SteppedBracket:
    """``query`` of the run bracket at each grid step h that :func:`optcomp.pld.refine_stepped` tries: upper
    ends from ``laws.upper_items(h)`` capped by ``laws.no_amplification()``, lower ends from
    ``laws.lower_items(h)`` (lower-only laws), the tail budget set by the query's δ (``Sampler.stepped``)."""
    cap = compose((laws.no_amplification(), 1), accuracy=accuracy)

    def at(acc: Accuracy) -> tuple[Bound, Bound]:
        upper = compose(*laws.upper_items(acc.grid_step), accuracy=acc)
        lower = dominated_composition(*laws.lower_items(acc.grid_step), accuracy=acc)
        return query(RunBracket(upper, lower, cap)), query(RunBracket.own(upper))

    return refine_stepped(laws, at, accuracy, floor=floor, strict=strict)


#: The samplers (``docs/samplers.md``): one row each; :data:`SUPPORTED_SAMPLING` and
#: :data:`SAMPLING_RELATION` are read from it.
SAMPLERS: dict[str, Sampler] = {
    "poisson": Sampler(_poisson, "add_remove", "each step used a Poisson-sampled batch: every record was "
                       "included independently with probability q = {q}", "Poisson sampling", exact=True, pair_row=False,
                       tradeoff=True, user_level=True),
    "fixed_size": Sampler(_fixed_size, "substitution", "each step used a batch of fixed size m = q·n drawn "
                          "uniformly without replacement, independently of the other steps (q = m/n = {q})",
                          "independent fixed-size sampling", tradeoff=True),
    "truncated_poisson": Sampler(_truncated_poisson, "add_remove", "each step drew a Poisson sample (rate "
                                 "q = {q}) from n = {n} records and, if it held more than B = {b} records, kept "
                                 "a uniformly random B of them", "truncated Poisson sampling", sized=True),
    "shuffle": Sampler(_shuffle, "zero_out", "the data were reshuffled every epoch and cut into 1/q batches "
                       "(q = {q}), each record used once per epoch", "shuffled epochs", lower=_shuffle_lower,
                       per_step=False),
    "balls_in_bins": Sampler(lambda run: _allocation(run).upper_items(), "add_remove", "every epoch of 1/q steps "
                             "(q = {q}) put each record into one uniformly random step (balls-in-bins)",
                             "balls-in-bins sampling", lower=lambda run: _allocation(run).lower_items(),
                             pair_row=False, per_step=False, stepped=_allocation, epochs=True),
}

#: Sampling schemes :mod:`optcomp.dpsgd` accounts for (``docs/samplers.md``).
SUPPORTED_SAMPLING: tuple[str, ...] = tuple(SAMPLERS)

#: The neighbouring relation each sampling scheme's number is stated for (``docs/samplers.md``).
SAMPLING_RELATION: dict[str, str] = {name: sampler.relation for name, sampler in SAMPLERS.items()}


def _validate(noise_multiplier: object, sampling_rate: object, steps: object) -> tuple[float, float, int]:
    sigma = check_positive("noise_multiplier", noise_multiplier)
    q = check_sampling_rate("sampling_rate", sampling_rate)
    k = check_int("steps", steps, minimum=1, maximum=MAX_STEPS)
    # The composed loss has mean k·KL(step) ≤ k·min{q²(e^{1/σ²} − 1), q/σ²}/2 (χ² bound; convexity of KL
    # in the mixture, KL(N(1, σ²)‖N(0, σ²)) = 1/(2σ²)); both are tight within a small factor for q ≪ 1 or
    # q = 1. Refused up front where that mean is beyond what the engine's grids can span.
    with_chi2 = q * q * math.expm1(1.0 / (sigma * sigma)) if sigma > _SIGMA_EXP_FLOOR else math.inf
    convexity = q / sigma / sigma  # (never 1/(σ·σ): σ·σ underflows to 0 for σ below 1e-162; inf is fine)
    mean = k * min(with_chi2, convexity) / 2.0
    if mean > MAX_MEAN_LOSS:
        from optcomp.pld import GridTooLargeError  # a ValueError; inside an inverse it means "fails here"

        raise GridTooLargeError(
            f"steps={k} with noise_multiplier={sigma!r} and sampling_rate={q!r}: the composed privacy loss has "
            f"mean about {mean:.3g}, beyond {MAX_MEAN_LOSS:g} (an epsilon that large protects nothing, and no "
            "grid spans it); use fewer steps or more noise"
        )
    return sigma, q, k


def epsilon(
    noise_multiplier: float,
    sampling_rate: float,
    steps: int,
    delta: float,
    *,
    accuracy: Accuracy = DEFAULT_ACCURACY,
    **sampler: Unpack[SamplerOptions],
) -> Bound:
    """Certified ε(δ) = inf{ε : δ_{P‖Q}(ε) ≤ δ and δ_{Q‖P}(ε) ≤ δ} of DP-SGD (``shared/MATH.md``) under the
    batch sampler ``sampling``: its run bracket (:meth:`Run.bound`; the sampler's row of :data:`SAMPLERS`,
    proofs and relations in ``docs/samplers.md``):

    ``"poisson"`` (add/remove, tight; k > 1 examples per user: :func:`user_level_mixture`), ``"fixed_size"``
    (substitution; lower end from the attained one-direction pairs for T > 1), ``"truncated_poisson"``
    (add/remove; upper end a pair revealing the truncation, lower end an explicit pair), ``"shuffle"``
    (zero-out; upper end no amplification, lower end Chua et al.'s pair) and ``"balls_in_bins"`` (add/remove;
    split and merged epochs, the grid step refined to ``accuracy.relative_width`` down to h = 2⁻¹¹).

    Args:
        noise_multiplier: σ, the noise standard deviation over the clipping norm; > 0.
        sampling_rate: q in (0, 1]: the Poisson rate, m/n (fixed size) or 1/(steps per epoch).
        steps: number of steps T; an integer ≥ 1.
        delta: target δ in (0, 1).
        sampling: a name of :data:`SAMPLERS` (default ``"poisson"``).
        examples_per_user: k ≥ 1 examples per privacy unit (k > 1 with Poisson only).
        dataset_size, max_batch_size: n ≥ 1 and the cap B ≥ 1 (``"truncated_poisson"`` only, required there).
        accuracy: the accuracy of the engines (:class:`optcomp.Accuracy`).

    Returns:
        ``Bound(lower, upper)`` on the run's optimal ε, both ends certified for the run.

    Raises:
        ValueError: a parameter is outside its range (the message names it).
    """
    run = Run.checked(noise_multiplier, sampling_rate, steps, **sampler)
    d = check_open_probability("delta", delta)
    return run.bound(lambda pld: pld.epsilon(d), accuracy, delta=d, strict=d >= PLD_DEEP_DELTA)


def epsilon_brackets(
    noise_multiplier: float,
    sampling_rate: float,
    steps: int,
    delta: float,
    *,
    accuracy: Accuracy = DEFAULT_ACCURACY,
    **sampler: Unpack[SamplerOptions],
) -> tuple[Bound, Bound]:
    """``(run, dominating_pair)``: :func:`epsilon`'s bracket and the bracket on the ε of the run's
    *dominating pair* (the composition whose upper end :func:`epsilon` reports), from one evaluation.

    For ``"poisson"`` that pair is the run's own and the two are equal. For the other samplers the pair only
    dominates the run: its ``upper`` is the run's (balls-in-bins: the run's is the smaller of it and no
    amplification's, ``docs/samplers.md`` §5), but its ``lower`` bounds *that pair's* ε — **not** the run's
    (``run.lower`` does). Arguments as in :func:`epsilon`.
    """
    run = Run.checked(noise_multiplier, sampling_rate, steps, **sampler)
    d = check_open_probability("delta", delta)
    return run.brackets(lambda pld: pld.epsilon(d), accuracy, delta=d, strict=d >= PLD_DEEP_DELTA)


def delta(
    noise_multiplier: float,
    sampling_rate: float,
    steps: int,
    epsilon: float,
    *,
    accuracy: Accuracy = DEFAULT_ACCURACY,
    **sampler: Unpack[SamplerOptions],
) -> Bound:
    """Certified δ(ε) = max(δ_{P‖Q}(ε), δ_{Q‖P}(ε)) of DP-SGD (``shared/MATH.md``): the run bracket's, ε ≥ 0
    finite; other arguments as in :func:`epsilon`. Both ends certified for the run."""
    run = Run.checked(noise_multiplier, sampling_rate, steps, **sampler)
    e = check_nonnegative("epsilon", epsilon)
    return run.bound(lambda pld: pld.delta(e), accuracy, floor=0.0)


def tradeoff(
    noise_multiplier: float,
    sampling_rate: float,
    steps: int,
    *,
    accuracy: Accuracy = DEFAULT_ACCURACY,
    **sampler: Unpack[SamplerOptions],
) -> TradeOffBracket:
    """Certified bracket of the trade-off function f of a DP-SGD run (Dong–Roth–Su §2.1: at false-positive
    rate α no membership-inference attack has a true-positive rate above 1 − f(α); the Neyman–Pearson test
    of the run's pair attains it), read by :func:`optcomp.fdp.from_pld` from the run bracket
    (:meth:`Run.bracket`): ``lower`` from the dominating composition (the guarantee: TPR ≤ 1 − lower(α)),
    ``upper`` from the dominated one (fixed size, T > 1: the attained one-direction pairs; else the run's
    own pair). Only samplers whose attack side is the run's are accepted (``Sampler.tradeoff``: Poisson, per
    record or per user, and fixed size); the others are refused rather than half-answered. Arguments as in
    :func:`epsilon`; :func:`optcomp.fdp.attack_tpr` and :func:`optcomp.fdp.advantage` read the result.

    Raises:
        ValueError: a parameter out of range (the message names it), or a sampler without an exact pair.
    """
    from optcomp.fdp import TradeOffBracket, from_pld

    exact = tuple(name for name, row in SAMPLERS.items() if row.tradeoff)
    sampling = sampler.get("sampling", "poisson")
    if sampling not in exact:
        raise ValueError(
            f"sampling must be one of {', '.join(exact)} for a trade-off curve (samplers with an exact "
            f"pair; {sampling!r} has a dominating pair only, whose curve is not the run's), got {sampling!r}"
        )
    bracket = Run.checked(noise_multiplier, sampling_rate, steps, **sampler).bracket(accuracy)
    curve = from_pld(bracket.upper)  # the law's own curves
    if bracket.exact or bracket.lower is None:
        return curve
    return TradeOffBracket(lower=curve.lower, upper=from_pld(bracket.lower).upper)


def noise_multiplier(
    target_epsilon: float,
    sampling_rate: float,
    steps: int,
    delta: float,
    *,
    accuracy: Accuracy = DEFAULT_ACCURACY,
    rtol: float = PARAMETER_RTOL,
    **sampler: Unpack[SamplerOptions],
) -> float:
    """The smallest σ (to relative tolerance ``rtol``, in (0, 1)) whose *certified* ε is ≤ ``target_epsilon``.

    :func:`optcomp.calibrate.noise_for_target` (its docstring: how the σ returned relates to the least σ)
    on the run's dominating composition (:meth:`Run.items`), from the central-limit guess σ₀
    (``_sigma_guess``). The σ returned was evaluated at ``accuracy`` and passed, so
    ``epsilon(noise_multiplier(t, q, T, δ), q, T, δ).upper <= t`` by construction. Other arguments as in
    :func:`epsilon`.

    Raises:
        ValueError: a parameter is out of range (``delta`` below :data:`MIN_INVERSE_DELTA` included), or no
            σ ≤ 2**60 meets the target at this ``accuracy`` (the target is below the engine's resolution).
    """
    target = _TARGET.check("target_epsilon", target_epsilon)
    run = Run.checked(1.0, sampling_rate, steps, **sampler)
    d = _inverse_delta(delta)
    tol = check_open_probability("rtol", rtol)
    cal = noise_for_target(lambda sigma: run.at(sigma=sigma).items(), target, d, 1, accuracy=accuracy,
                           rtol=tol, start=_sigma_guess(target, run.q, run.steps, d), bracket=False)
    return cal.noise


def _inverse_delta(delta: object) -> float:
    """δ for an inverse: in (0, 1), and at least :data:`MIN_INVERSE_DELTA` (refused by name below it)."""
    d = check_open_probability("delta", delta)
    if d < MIN_INVERSE_DELTA:
        raise ValueError(
            f"delta must be in [{MIN_INVERSE_DELTA:g}, 1) for a DP-SGD calibration, got {d!r}: below it the PLD "
            f"engine's certified upper epsilon is loose or infinite (its windows leave {PLD_LAW_TAIL:g} of mass "
            "unresolved), so no noise or step count can be certified"
        )
    return d


def _sigma_guess(target: float, q: float, k: int, delta: float) -> float:
    """A starting scale for the σ search (only where the search starts; nothing returned depends on it).

    The central-limit approximation of DP-SGD (Bu, Dong, Long, Su, "Deep learning with Gaussian
    differential privacy", 2020) makes T steps about μ-GDP with μ = q·√(T·(e^{1/σ²} − 1)); with the
    small-μ reading ε ≈ μ·√(2 ln(1/δ)) of the GDP curve, σ₀ = 1/√(ln(1 + (μ/(q√T))²)).
    """
    mu = target / math.sqrt(-2.0 * math.log(delta))  # not log(1/δ): 1/δ overflows at subnormal δ
    x = min(mu / (q * math.sqrt(k)), _GUESS_X_MAX)  # q ≈ 5e-324 would make x infinite
    if x < _GUESS_X_LIMIT:
        return 1.0 / math.sqrt(math.log1p(x * x))
    return 1.0 / math.sqrt(2.0 * math.log(x))  # ln(1 + x²) = 2 ln x in float64 here (x² would overflow)


def steps(
    target_epsilon: float,
    noise_multiplier: float,
    sampling_rate: float,
    delta: float,
    *,
    accuracy: Accuracy = DEFAULT_ACCURACY,
    max_steps: int = 10**7,
    rtol: float = PARAMETER_RTOL,
    **sampler: Unpack[SamplerOptions],
) -> int:
    """The largest number of steps T ≤ ``max_steps`` whose *certified* ε is ≤ the target, exactly.

    :func:`optcomp.calibrate.noise_for_target` (increasing, integer) on the run's dominating composition
    from the CLT-scale guess T₀ = (εσ/q)²/(2 ln(1/δ)): ``epsilon(σ, q, steps(t, σ, q, δ), δ).upper <= t``
    by construction, and T + 1 steps do not certify the target at ``accuracy`` (the true largest may exceed
    T by the engine's bracket width). ``rtol`` in (0, 1): how far past a predicted root the search aims (the
    answer is exact regardless). Other arguments as in :func:`epsilon`.

    Raises:
        ValueError: a parameter is out of range (``delta`` below :data:`MIN_INVERSE_DELTA` included); even
            one step exceeds the target; or ``max_steps``
            steps still meet the target (the answer would exceed the search limit).
    """
    target = _TARGET.check("target_epsilon", target_epsilon)
    run = Run.checked(noise_multiplier, sampling_rate, 1, **sampler)
    d = _inverse_delta(delta)
    limit = check_int("max_steps", max_steps, minimum=1, maximum=MAX_STEPS)
    tol = check_open_probability("rtol", rtol)
    guess = min(max((target * run.sigma / run.q) ** 2 / (-2.0 * math.log(d)), 1.0), float(limit))  # 1/d overflows
    try:
        cal = noise_for_target(lambda t: run.at(steps=int(t)).items(), target, d, 1, accuracy=accuracy,
                               rtol=tol, increasing=True, integer=True, start=guess, limit=limit, bracket=False)
    except ValueError as exc:
        if "not met by any parameter" not in str(exc):
            raise
        raise ValueError(f"target_epsilon={target!r} is exceeded already after 1 step (certified upper ε)") from exc
    if cal.noise >= limit:
        raise ValueError(f"target_epsilon={target!r} is still met after max_steps={limit}")
    return int(cal.noise)


__all__ = ["SAMPLERS", "SAMPLING_RELATION", "SUPPORTED_SAMPLING", "Run", "Sampler", "SamplerOptions", "delta", "epsilon",
           "epsilon_brackets", "noise_multiplier", "steps", "tradeoff", "user_level_mixture"]

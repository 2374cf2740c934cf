"""DP-SGD accounting: ε and δ of noisy SGD under a batch sampler, and the two inverse problems.

Poisson by default; ``sampling=`` picks fixed-size, truncated Poisson, shuffled or balls-in-bins batches,
``examples_per_user`` user-level DP-SGD. A sampler is one function in ``_SAMPLERS`` (the dominating
composition; :meth:`Run.lower_items` the dominated one); ``docs/samplers.md`` has the proofs.

One DP-SGD step clips each per-example gradient to norm 1 (sensitivity Δ = 1), sums the gradients of a
Poisson-subsampled batch (each record kept independently with probability ``sampling_rate`` = q) and adds
N(0, σ²) noise, σ = ``noise_multiplier``. Under the add/remove-one relation its privacy loss is that of
the pair (N(0, σ²), (1 − q)·N(0, σ²) + q·N(1, σ²)) and its swap (Koskela–Jälkö–Honkela 2020, §5; the
remove and add directions are both accounted for by :class:`optcomp.mechanisms.PoissonSubsampled`).
``steps`` steps compose adaptively: the ``steps``-fold convolution of one step's loss (``shared/MATH.md``).

* :func:`epsilon` and :func:`delta`: :func:`optcomp.compose` queries, the PLD engine's certified bracket
  (pessimistic upper, optimistic lower, of the dominating and dominated compositions, :meth:`Run.bound`).
* :func:`tradeoff`: the run's trade-off curve (attack TPR at each FPR; ``optcomp._dpsgd_tradeoff``).
* :func:`noise_multiplier` and :func:`steps` are :func:`optcomp.calibrate.noise_for_target` on the
  run's dominating composition (coarse-to-fine, **on the certified upper bound**), and always return the
  *safe side* of the root: the returned σ (resp. number of steps) has been evaluated and its certified
  upper ε is ≤ the target, so it provably meets the target; σ is within ``rtol`` (default 1e-5) of the
  least σ whose certified ε meets the target, T is the largest such T exactly.

``sampling_rate = 1``: ``steps`` Gaussian steps with noise σ are exactly one with noise σ/√steps (μ-GDP,
μ = √steps/σ, Dong–Roth–Su Cor. 3.3), and that single step is accounted.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from optcomp._dpsgd_tradeoff import tradeoff
from optcomp._numerics import (
    ALLOCATION_TAIL,
    DEFAULT_ACCURACY,
    EPSILON_WIDTH_FLOOR,
    MAX_MEAN_LOSS,
    PARAMETER_RTOL,
    PLD_DEEP_DELTA,
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
from optcomp.mechanisms import check_user_level_mean, user_level_mixture

if TYPE_CHECKING:
    from optcomp.mechanisms import Mechanism, TruncatedPoissonGaussian
    from optcomp.mechanisms.allocation import AllocationBracket
    from optcomp.queries import Composition

Sampling = Literal["poisson", "fixed_size", "truncated_poisson", "shuffle", "balls_in_bins"]

#: Sampling schemes :mod:`optcomp.dpsgd` accounts for (``docs/samplers.md``).
SUPPORTED_SAMPLING: tuple[str, ...] = ("poisson", "fixed_size", "truncated_poisson", "shuffle", "balls_in_bins")

#: The neighbouring relation each sampling scheme's number is stated for (``docs/samplers.md``).
SAMPLING_RELATION: dict[str, str] = {
    "poisson": "add_remove",
    "fixed_size": "substitution",
    "truncated_poisson": "add_remove",
    "shuffle": "zero_out",
    "balls_in_bins": "add_remove",
}

#: Most steps accounted (integers beyond 2**53 are not exact in float64).
MAX_STEPS = 2**53
#: Largest ε target of the inverses (as the planner's budget): an ε beyond it protects nothing (a likelihood
#: ratio of e^100), and the σ that reaches it is so small that each engine evaluation takes long.
MAX_TARGET_EPSILON = 100.0
_TARGET = Domain(0.0, MAX_TARGET_EPSILON, lower_closed=False, upper_closed=True)
#: Beyond this x, ln(1 + x²) = 2 ln x in float64 and x² may overflow (:func:`_sigma_guess`).
_GUESS_X_LIMIT = 1e10
_GUESS_X_MAX = 1e300
#: Below this σ, e^{1/σ²} overflows (the convexity bound alone is used).
_SIGMA_EXP_FLOOR = 0.04


def _check_sampling(sampling: object) -> str:
    if sampling not in SUPPORTED_SAMPLING:
        raise ValueError(f"sampling must be one of {SUPPORTED_SAMPLING}, got {sampling!r}")
    return str(sampling)


@dataclass(frozen=True)
class Run:
    """A validated DP-SGD run: the parameters every query of this module shares.

    Attributes:
        sigma: noise multiplier σ > 0.
        q: sampling rate (Poisson, truncated Poisson), batch fraction m/n (fixed size) or
            1/(batches per epoch) (shuffle), in (0, 1].
        steps: number of steps ≥ 1.
        sampling: one of :data:`SUPPORTED_SAMPLING`.
        examples_per_user: k ≥ 1 examples per privacy unit (k > 1: Poisson only).
        dataset_size: n (truncated Poisson only).
        max_batch_size: B (truncated Poisson only).
    """

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
        sampling: object,
        examples_per_user: object = 1,
        dataset_size: object = None,
        max_batch_size: object = None,
    ) -> Run:
        """Validate every parameter (``ValueError`` naming it) and their combination."""
        from optcomp.mechanisms.shuffle import batches_per_epoch

        s, rate, t = _validate(sigma, q, steps)
        name = _check_sampling(sampling)
        k = check_int("examples_per_user", examples_per_user, minimum=1)
        if k > 1 and name != "poisson":
            raise ValueError(
                "examples_per_user > 1 is supported with sampling='poisson' only (no sound user-level "
                f"law is implemented for {name!r}), got examples_per_user={k}"
            )
        n = b = None
        if name == "truncated_poisson":
            if dataset_size is None or max_batch_size is None:
                raise ValueError(
                    "sampling='truncated_poisson' needs dataset_size and max_batch_size (integers >= 1)"
                )
            n = check_int("dataset_size", dataset_size, minimum=1)
            b = check_int("max_batch_size", max_batch_size, minimum=1)
        elif name == "balls_in_bins" and not batches_per_epoch(rate)[1]:
            raise ValueError(
                "sampling='balls_in_bins' needs sampling_rate = 1/t for an integer number t of steps per "
                f"epoch, got sampling_rate={rate!r}"
            )
        if name != "truncated_poisson" and (dataset_size is not None or max_batch_size is not None):
            raise ValueError(
                "dataset_size and max_batch_size apply to sampling='truncated_poisson' only, "
                f"got sampling={name!r}"
            )
        return cls(s, rate, t, name, k, n, b)

    def items(self) -> list[tuple[Mechanism, int]]:
        """The dominating composition (upper end) as ``(mechanism, count)`` items."""
        return _SAMPLERS[self.sampling](self)

    def lower_items(self, step: float | None = None) -> list[tuple[Mechanism, int]] | None:
        """A dominated composition whose lower end bounds the run's ε from below, where it differs
        from :meth:`items` (truncated Poisson: all other gradients 0; fixed size, T > 1: the attained
        one-direction pairs; shuffle: Chua et al.'s pair; balls-in-bins: Lemma D's lower-only labelled pair,
        grid step ``step``, for ``composition.dominated_composition``). ``None``: :meth:`items`' bracket is the
        answer; ``[]``: lower end 0."""
        from optcomp.mechanisms import Gaussian, PoissonSubsampled
        from optcomp.mechanisms.allocation import allocation_lower_items
        from optcomp.mechanisms.shuffle import shuffle_lower_items
        from optcomp.mechanisms.truncated import truncated_poisson_lower_pair

        if self.sampling == "truncated_poisson":
            return [(truncated_poisson_lower_pair(_truncated_step(self)), self.steps)]
        if self.sampling == "fixed_size" and self.steps > 1 and self.q < 1.0:  # docs/samplers.md §1
            return [(PoissonSubsampled(Gaussian(self.sigma, sensitivity=2.0), sampling_rate=self.q), self.steps)]
        if self.sampling == "shuffle":
            return list(shuffle_lower_items(self.sigma, self.q, self.steps))
        if self.sampling == "balls_in_bins":
            return list(allocation_lower_items(self.sigma, self.q, self.steps, step=step))
        return None

    def brackets(
        self, query: Callable[[Composition], Bound], accuracy: Accuracy, *, delta: float | None = None,
        strict: bool = False,
    ) -> tuple[Bound, Bound]:
        """``(run, dominating_pair)``: the run's bracket (:meth:`bound`, ``delta``, ``strict`` as there) and
        :meth:`items`' own (``Composition.dominating``; balls-in-bins: the split pair's, from the same pass)."""
        from optcomp import compose

        if self.sampling == "balls_in_bins":
            found = self._allocation(query, accuracy, EPSILON_WIDTH_FLOOR, delta, strict)
            return found.run, found.pair
        composition = compose(*self.items(), accuracy=accuracy)
        upper, lower_items = query(composition.dominating()), self.lower_items()  # the law's own bracket
        if lower_items is None:
            return upper, upper
        dominated = composition.dominated() or (compose(*lower_items, accuracy=accuracy) if lower_items else None)
        low = query(dominated).lower if dominated is not None else 0.0  # truncated, fixed size: the floor's
        return Bound(min(low, upper.upper), upper.upper), upper

    def bound(
        self,
        query: Callable[[Composition], Bound],
        accuracy: Accuracy,
        *,
        lower: bool = True,
        floor: float = EPSILON_WIDTH_FLOOR,
        delta: float | None = None,
        strict: bool = False,
    ) -> Bound:
        """The run's bracket (:meth:`brackets`; ``lower=False``: :meth:`items`' own). Balls-in-bins refines its
        grid step until the width (upper − lower)/max(upper, ``floor``) is ``accuracy.relative_width``, else
        ``GridTooLargeError`` (``strict``: ε at δ ≥ PLD_DEEP_DELTA) or the narrowest bracket, the tail budget
        set by ``delta`` (``mechanisms.allocation.allocation_bracket``, ``AllocationRun``)."""
        from optcomp import compose

        if self.sampling == "balls_in_bins":
            found = self._allocation(query, accuracy, floor, delta, strict)
            return found.run if lower else found.pair
        return self.brackets(query, accuracy)[0] if lower else query(compose(*self.items(), accuracy=accuracy).dominating())

    def _allocation(self, query: Callable[[Composition], Bound], accuracy: Accuracy, floor: float,
                    delta: float | None, strict: bool) -> AllocationBracket:
        """Balls-in-bins: ``allocation_bracket`` on this run's ``AllocationRun`` (its laws at each pass's step)."""
        from optcomp import compose
        from optcomp.composition import dominated_composition
        from optcomp.mechanisms.allocation import AllocationRun, allocation_bracket

        laws = AllocationRun.of(self.sigma, self.q, self.steps, delta)
        plain = query(compose((laws.no_amplification(), 1), accuracy=accuracy))
        return allocation_bracket(
            lambda acc: query(compose(*laws.upper_items(acc.grid_step), accuracy=acc)),
            lambda acc: query(dominated_composition(*laws.lower_items(acc.grid_step), accuracy=acc)).lower,
            accuracy, floor=floor, plain=plain, strict=strict, scale=laws.scale,
        )


def _poisson(run: Run) -> list[tuple[Mechanism, int]]:
    from optcomp.mechanisms import Gaussian, PoissonSubsampled

    if run.examples_per_user > 1:
        check_user_level_mean(run.sigma, run.q, run.steps, run.examples_per_user)
        return [(user_level_mixture(run.sigma, run.q, run.examples_per_user), run.steps)]
    if run.q == 1.0:  # no sampling: the floor composes the Gaussians in closed form (optcomp.queries)
        return [(Gaussian(sigma=run.sigma), run.steps)]
    return [(PoissonSubsampled(Gaussian(sigma=run.sigma), sampling_rate=run.q), run.steps)]


def _fixed_size(run: Run) -> list[tuple[Mechanism, int]]:
    from optcomp.mechanisms import Gaussian, SubsampledWithoutReplacement

    # Replacing one record moves a sum of gradients clipped to norm 1 by at most 2.
    step = SubsampledWithoutReplacement(Gaussian(sigma=run.sigma, sensitivity=2.0), sampling_rate=run.q)
    return [(step, run.steps)]


def _truncated_step(run: Run) -> TruncatedPoissonGaussian:
    from optcomp.mechanisms import TruncatedPoissonGaussian

    n, b = run.dataset_size, run.max_batch_size
    if n is None or b is None:  # pragma: no cover - Run.checked() guarantees both
        raise ValueError("sampling='truncated_poisson' needs dataset_size and max_batch_size")
    return TruncatedPoissonGaussian(run.sigma, dataset_size=n, sampling_rate=run.q, max_batch_size=b)


def _truncated_poisson(run: Run) -> list[tuple[Mechanism, int]]:
    return [(_truncated_step(run), run.steps)]


def _shuffle(run: Run) -> list[tuple[Mechanism, int]]:
    from optcomp.mechanisms.shuffle import shuffle_upper_mechanism

    return [(shuffle_upper_mechanism(run.sigma, run.steps, run.q), 1)]


def _balls_in_bins(run: Run, step: float | None = None, tail: float = ALLOCATION_TAIL) -> list[tuple[Mechanism, int]]:
    from optcomp.mechanisms.allocation import AllocationRun

    return AllocationRun(run.sigma, run.q, run.steps, tail).upper_items(step)


#: sampling scheme → the dominating composition of a run (one small function each).
_SAMPLERS: dict[str, Callable[[Run], list[tuple[Mechanism, int]]]] = {
    "poisson": _poisson,
    "fixed_size": _fixed_size,
    "truncated_poisson": _truncated_poisson,
    "shuffle": _shuffle,
    "balls_in_bins": _balls_in_bins,
}


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
    sampling: Sampling = "poisson",
    examples_per_user: int = 1,
    dataset_size: int | None = None,
    max_batch_size: int | None = None,
    accuracy: Accuracy = DEFAULT_ACCURACY,
) -> Bound:
    """Certified ε of DP-SGD at a given δ, for the batch sampler ``sampling`` (``docs/samplers.md``).

    The privacy-loss distribution of one step's dominating pair is composed ``steps`` times and
    queried for ε(δ) = inf{ε : δ_{P‖Q}(ε) ≤ δ and δ_{Q‖P}(ε) ≤ δ} (``shared/MATH.md``). Per sampler
    (relation in :data:`SAMPLING_RELATION`):

    * ``"poisson"``: ``PoissonSubsampled(Gaussian(σ), q)``, add/remove (tight); with
      ``examples_per_user`` = k > 1 the user-level step :func:`user_level_mixture` (add/remove of a
      user with at most k examples);
    * ``"fixed_size"``: uniform batches of m = q·n records, independent across steps, substitution: upper
      end ``compose((SubsampledWithoutReplacement(Gaussian(σ, sensitivity=2), q), steps))``'s (tight per
      step; its composition is not shown attained), lower end the attained one-direction pairs' (T > 1);
    * ``"truncated_poisson"``: Poisson then capped at ``max_batch_size`` out of ``dataset_size``
      records: add/remove; upper end from the dominating pair
      :class:`~optcomp.mechanisms.TruncatedPoissonGaussian` (certified for the run, not tight), lower
      end from the explicit pair with all other gradients 0
      (:func:`~optcomp.mechanisms.truncated.truncated_poisson_lower_pair`, certified for the run). The
      dominating pair's own bracket is the second value of :func:`epsilon_brackets`;
    * ``"shuffle"``: reshuffled epochs of 1/q batches: upper end from ``Gaussian(σ/√E)`` (no
      amplification), lower end from Chua et al.'s explicit pair (:mod:`optcomp.mechanisms.shuffle`);
      zero-out relation. Both ends bound the run's ε.
    * ``"balls_in_bins"``: each example in one uniformly random step of each epoch of t = 1/q steps
      (:mod:`optcomp.mechanisms.allocation`), add/remove: the worst-case epoch pair (Lemma A of
      ``docs/samplers.md``) bounded above by mean-preserving splits (amplified, certified) over
      ⌈T/t⌉ epochs and below by merges (certified) over ⌊T/t⌋ epochs, the grid step refined to
      ``accuracy.relative_width`` (down to h = 2⁻¹¹; then the narrowest certified bracket reached).

    Args:
        noise_multiplier: σ, the noise standard deviation over the clipping norm; > 0.
        sampling_rate: q, the Poisson sampling probability of each record; in (0, 1].
        steps: number of steps; an integer ≥ 1.
        delta: target δ in (0, 1).
        sampling: ``"poisson"`` (default), ``"fixed_size"``, ``"truncated_poisson"``, ``"shuffle"`` or
            ``"balls_in_bins"``.
        examples_per_user: k ≥ 1 examples per privacy unit (k > 1 with Poisson only).
        dataset_size: n ≥ 1 (``"truncated_poisson"`` only, required there).
        max_batch_size: the cap B ≥ 1 (``"truncated_poisson"`` only, required there).
        accuracy: discretisation of the PLD engine (see :class:`optcomp.Accuracy`).

    Returns:
        ``Bound(lower, upper)`` on the run's optimal ε: both ends certified for the run (``upper`` as
        documented in :meth:`optcomp.pld.PrivacyLossDistribution.epsilon`; ``lower`` from the run's own
        pair, or for fixed size, truncated Poisson, shuffle and balls-in-bins from explicit dominated pairs).

    Raises:
        ValueError: a parameter is outside its range (the message names it).
    """
    run = Run.checked(
        noise_multiplier, sampling_rate, steps, sampling, examples_per_user, dataset_size, max_batch_size
    )
    d = check_open_probability("delta", delta)
    return run.bound(lambda pld: pld.epsilon(d), accuracy, delta=d, strict=d >= PLD_DEEP_DELTA)


def epsilon_brackets(
    noise_multiplier: float,
    sampling_rate: float,
    steps: int,
    delta: float,
    *,
    sampling: Sampling = "poisson",
    examples_per_user: int = 1,
    dataset_size: int | None = None,
    max_batch_size: int | None = None,
    accuracy: Accuracy = DEFAULT_ACCURACY,
) -> tuple[Bound, Bound]:
    """``(run, dominating_pair)``: :func:`epsilon`'s bracket and the bracket on the ε of the run's
    *dominating pair* (the composition whose upper end :func:`epsilon` reports), from one evaluation.

    For ``"poisson"`` that pair is the run's own and the two are equal. For ``"fixed_size"`` (T > 1: the
    per-step symmetrization), ``"truncated_poisson"`` (the pair revealing the truncation), ``"shuffle"`` (no
    amplification) and ``"balls_in_bins"`` (Lemma C's split epochs) the pair only dominates the run: its
    ``upper`` is the run's (balls-in-bins: the run's is the smaller of it and no amplification's,
    ``docs/samplers.md`` §5), but its ``lower`` bounds *that pair's* ε — **not** the run's (``run.lower`` does).
    """
    run = Run.checked(
        noise_multiplier, sampling_rate, steps, sampling, examples_per_user, dataset_size, max_batch_size
    )
    d = check_open_probability("delta", delta)
    return run.brackets(lambda pld: pld.epsilon(d), accuracy, delta=d, strict=d >= PLD_DEEP_DELTA)


def delta(
    noise_multiplier: float,
    sampling_rate: float,
    steps: int,
    epsilon: float,
    *,
    sampling: Sampling = "poisson",
    examples_per_user: int = 1,
    dataset_size: int | None = None,
    max_batch_size: int | None = None,
    accuracy: Accuracy = DEFAULT_ACCURACY,
) -> Bound:
    """Certified δ(ε) of DP-SGD: max(δ_{P‖Q}(ε), δ_{Q‖P}(ε)) of the composed PLD (``shared/MATH.md``).

    Args:
        noise_multiplier: σ > 0.
        sampling_rate: q in (0, 1].
        steps: integer ≥ 1.
        epsilon: ε ≥ 0 (finite).
        sampling, examples_per_user, dataset_size, max_batch_size: as in :func:`epsilon`.
        accuracy: discretisation of the PLD engine.

    Returns:
        ``Bound(lower, upper)`` on the tight δ(ε); ``upper`` certified.

    Raises:
        ValueError: a parameter is outside its range.
    """
    run = Run.checked(
        noise_multiplier, sampling_rate, steps, sampling, examples_per_user, dataset_size, max_batch_size
    )
    e = check_nonnegative("epsilon", epsilon)
    return run.bound(lambda pld: pld.delta(e), accuracy, floor=0.0)


def noise_multiplier(
    target_epsilon: float,
    sampling_rate: float,
    steps: int,
    delta: float,
    *,
    sampling: Sampling = "poisson",
    examples_per_user: int = 1,
    dataset_size: int | None = None,
    max_batch_size: int | None = None,
    accuracy: Accuracy = DEFAULT_ACCURACY,
    rtol: float = PARAMETER_RTOL,
) -> float:
    """The smallest σ (to relative tolerance ``rtol``) whose *certified* ε is ≤ ``target_epsilon``.

    :func:`optcomp.calibrate.noise_for_target` on the run's dominating composition (:meth:`Run.items`),
    from the central-limit guess σ₀ (``_sigma_guess``): passes on grids 16 and 4 times coarser bracket the
    root to 2 %, then a safeguarded secant at ``accuracy`` ends with evaluated σ_fail < σ_pass,
    σ_pass/σ_fail ≤ 1 + rtol. A σ whose grid would exceed the engine's limit counts as failing.

    **How the returned σ relates to the minimal σ.** (1) It was evaluated at ``accuracy`` and passed, so
    ``epsilon(noise_multiplier(t, q, T, δ), q, T, δ).upper <= t`` holds by construction (the run is
    (t, δ)-DP at it). (2) It is within ``rtol`` (relative) of σ_c, the least σ whose *certified* ε at
    ``accuracy`` meets the target (the certified ε being non-increasing in σ). (3) The true least σ*
    (exact ε) lies in ``calibrate.noise_for_target(...).bracket``, below σ_c by about the engine's
    bracket width seen through the slope of ε(σ).

    Args:
        target_epsilon: ε target > 0.
        sampling_rate: q in (0, 1].
        steps: integer ≥ 1.
        delta: δ in (0, 1).
        sampling, examples_per_user, dataset_size, max_batch_size: as in :func:`epsilon`.
        accuracy: discretisation of the PLD engine.
        rtol: relative tolerance of the returned σ, in (0, 1).

    Returns:
        σ > 0 that provably meets the target.

    Raises:
        ValueError: a parameter is out of range, or no σ ≤ 2**60 meets the target at this ``accuracy``
            (the target is below the engine's resolution).
    """
    target = _TARGET.check("target_epsilon", target_epsilon)
    q = check_sampling_rate("sampling_rate", sampling_rate)
    k = check_int("steps", steps, minimum=1, maximum=MAX_STEPS)
    d = check_open_probability("delta", delta)
    tol = check_open_probability("rtol", rtol)
    opts = _sampler_options(Run.checked(1.0, q, k, sampling, examples_per_user, dataset_size, max_batch_size))
    cal = noise_for_target(lambda sigma: _run(sigma, q, k, opts).items(), target, d, 1, accuracy=accuracy,
                           rtol=tol, start=_sigma_guess(target, q, k, d), bracket=False)
    return cal.noise


def _run(sigma: float, q: float, steps: int, opts: dict[str, Any]) -> Run:
    """The validated run the searches evaluate (its dominating composition: their certified upper end)."""
    return Run.checked(sigma, q, steps, opts["sampling"], opts["examples_per_user"], opts["dataset_size"],
                       opts["max_batch_size"])


def _sampler_options(run: Run) -> dict[str, Any]:
    """The sampler keywords of :func:`epsilon` for a validated run (passed on by the searches)."""
    return {
        "sampling": run.sampling,
        "examples_per_user": run.examples_per_user,
        "dataset_size": run.dataset_size,
        "max_batch_size": run.max_batch_size,
    }


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
    sampling: Sampling = "poisson",
    examples_per_user: int = 1,
    dataset_size: int | None = None,
    max_batch_size: int | None = None,
    accuracy: Accuracy = DEFAULT_ACCURACY,
    max_steps: int = 10**7,
    rtol: float = PARAMETER_RTOL,
) -> int:
    """The largest number of steps whose *certified* ε is ≤ the target, exactly.

    :func:`optcomp.calibrate.noise_for_target` (increasing, integer) on the run's dominating composition:
    from the CLT-scale guess T₀ = (εσ/q)²/(2 ln(1/δ)), passes on grids 16 and 4 times coarser bracket T
    to 2 % (a T whose grid exceeds the engine's limit counts as failing), then the search at
    ``accuracy`` ends with evaluated T_pass and T_fail = T_pass + 1. So
    ``epsilon(σ, q, steps(t, σ, q, δ), δ).upper <= t`` holds by construction, and T + 1 steps do not
    certify the target at ``accuracy`` (the certified ε being non-decreasing in T, T is the largest
    certified number of steps; the true largest may exceed it by the engine's bracket width).

    Args:
        target_epsilon: ε target > 0.
        noise_multiplier: σ > 0.
        sampling_rate: q in (0, 1].
        delta: δ in (0, 1).
        sampling, examples_per_user, dataset_size, max_batch_size: as in :func:`epsilon`.
        accuracy: discretisation of the PLD engine.
        max_steps: search limit, an integer ≥ 1.
        rtol: in (0, 1): how far past a predicted root the search aims (the answer is exact regardless).

    Returns:
        The number of steps T ≥ 1.

    Raises:
        ValueError: a parameter is out of range; even one step exceeds the target; or ``max_steps``
            steps still meet the target (the answer would exceed the search limit).
    """
    target = _TARGET.check("target_epsilon", target_epsilon)
    sigma = check_positive("noise_multiplier", noise_multiplier)
    q = check_sampling_rate("sampling_rate", sampling_rate)
    d = check_open_probability("delta", delta)
    limit = check_int("max_steps", max_steps, minimum=1, maximum=MAX_STEPS)
    tol = check_open_probability("rtol", rtol)
    opts = _sampler_options(Run.checked(sigma, q, 1, sampling, examples_per_user, dataset_size, max_batch_size))
    guess = min(max((target * sigma / q) ** 2 / (-2.0 * math.log(d)), 1.0), float(limit))  # 1/d overflows
    try:
        cal = noise_for_target(lambda t: _run(sigma, q, int(t), opts).items(), target, d, 1, accuracy=accuracy,
                               rtol=tol, increasing=True, integer=True, start=guess, limit=limit, bracket=False)
    except ValueError as exc:
        if "not met by any parameter" not in str(exc):
            raise
        raise ValueError(f"target_epsilon={target!r} is exceeded already after 1 step (certified upper ε)") from exc
    if cal.noise >= limit:
        raise ValueError(f"target_epsilon={target!r} is still met after max_steps={limit}")
    return int(cal.noise)


__all__ = [
    "SAMPLING_RELATION",
    "SUPPORTED_SAMPLING",
    "Run",
    "delta",
    "epsilon",
    "epsilon_brackets",
    "noise_multiplier",
    "steps",
    "tradeoff",
    "user_level_mixture",
]

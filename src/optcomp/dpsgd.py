"""DP-SGD accounting: ε and δ of noisy SGD with Poisson subsampling, and the two inverse problems.

One DP-SGD step clips each per-example gradient to norm 1 (sensitivity Δ = 1), sums the gradients of a
Poisson-subsampled batch (each record kept independently with probability ``sampling_rate`` = q) and adds
N(0, σ²) noise, σ = ``noise_multiplier``. Under the add/remove-one relation its privacy loss is that of
the pair (N(0, σ²), (1 − q)·N(0, σ²) + q·N(1, σ²)) and its swap (Koskela–Jälkö–Honkela 2020, §5; the
remove and add directions are both accounted for by :class:`optcomp.mechanisms.PoissonSubsampled`).
``steps`` such steps compose adaptively; their privacy-loss distribution is the ``steps``-fold
convolution of one step's (``shared/MATH.md``, "Composition of independent mechanisms").

* :func:`epsilon` and :func:`delta` are thin queries over :func:`optcomp.compose`; the returned
  :class:`~optcomp.Bound` is the PLD engine's certified bracket (pessimistic upper, optimistic lower;
  see :class:`optcomp.pld.PrivacyLossDistribution`).
* :func:`noise_multiplier` and :func:`steps` invert them coarse-to-fine (passes on grids 16 and 4
  times coarser place a safeguarded secant at the requested accuracy) **on the certified upper
  bound**, and always return the *safe side* of the root: the returned σ (resp. number of steps) has
  been evaluated and its certified upper ε is ≤ the target, so it provably meets the target.

With ``sampling_rate = 1`` there is no subsampling: ``steps`` Gaussian steps with noise σ are exactly one
Gaussian step with noise σ/√steps (μ-GDP with μ = √steps/σ, Dong–Roth–Su Cor. 3.3), and that single
step is what is accounted.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from optcomp._numerics import (
    CALIBRATION_RTOL,
    DEFAULT_ACCURACY,
    Accuracy,
    Bound,
    Domain,
    check_int,
    check_nonnegative,
    check_open_probability,
    check_positive,
    check_sampling_rate,
)
from optcomp.calibrate import Probe, level_accuracies, multilevel_search, smallest_passing_noise

if TYPE_CHECKING:
    from optcomp.pld import PrivacyLossDistribution

Sampling = Literal["poisson"]

#: Most steps accounted (integers beyond 2**53 are not exact in float64).
MAX_STEPS = 2**53
#: Largest mean privacy loss (≈ ε) of a composition :func:`epsilon`/:func:`delta` attempt; the PLD engine's
#: memory cap is reached far below it at the default accuracy.
MAX_MEAN_LOSS = 1e6
#: Largest ε target of the inverses (as the planner's budget): an ε beyond it protects nothing (a likelihood
#: ratio of e^100), and the σ that reaches it is so small that each engine evaluation takes long.
MAX_TARGET_EPSILON = 100.0
_TARGET = Domain(0.0, MAX_TARGET_EPSILON, lower_closed=False, upper_closed=True)
#: Beyond this x, ln(1 + x²) = 2 ln x in float64 and x² may overflow (:func:`_sigma_guess`).
_GUESS_X_LIMIT = 1e10
_GUESS_X_MAX = 1e300
#: Below this σ, e^{1/σ²} overflows (the convexity bound alone is used).
_SIGMA_EXP_FLOOR = 0.04

#: Sampling schemes :mod:`optcomp.dpsgd` accounts for.
SUPPORTED_SAMPLING: tuple[str, ...] = ("poisson",)


def _check_sampling(sampling: object) -> str:
    if sampling not in SUPPORTED_SAMPLING:
        raise ValueError(f"sampling must be one of {SUPPORTED_SAMPLING}, got {sampling!r}")
    return str(sampling)


def _composition(
    noise_multiplier: float, sampling_rate: float, steps: int, accuracy: Accuracy
) -> PrivacyLossDistribution:
    """The PLD of ``steps`` DP-SGD steps (``optcomp.compose`` of the subsampled Gaussian)."""
    from optcomp import compose
    from optcomp.mechanisms import Gaussian, PoissonSubsampled

    if sampling_rate == 1.0:
        # k Gaussians with noise σ are one Gaussian with noise σ/√k (GDP μ's add in quadrature).
        return compose(Gaussian(sigma=noise_multiplier / math.sqrt(steps)), accuracy=accuracy)
    step = PoissonSubsampled(Gaussian(sigma=noise_multiplier), sampling_rate=sampling_rate)
    return compose((step, steps), accuracy=accuracy)


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
    accuracy: Accuracy = DEFAULT_ACCURACY,
) -> Bound:
    """Certified ε of DP-SGD at a given δ (add/remove-one relation).

    The privacy-loss distribution of one Poisson-subsampled Gaussian step is composed ``steps`` times
    and queried for ε(δ) = inf{ε : δ_{P‖Q}(ε) ≤ δ and δ_{Q‖P}(ε) ≤ δ} (``shared/MATH.md``).

    Args:
        noise_multiplier: σ, the noise standard deviation over the clipping norm; > 0.
        sampling_rate: q, the Poisson sampling probability of each record; in (0, 1].
        steps: number of steps; an integer ≥ 1.
        delta: target δ in (0, 1).
        sampling: only ``"poisson"`` is supported; anything else raises ``ValueError``.
        accuracy: discretisation of the PLD engine (see :class:`optcomp.Accuracy`).

    Returns:
        ``Bound(lower, upper)`` on the optimal ε; ``upper`` is certified as documented in
        :meth:`optcomp.pld.PrivacyLossDistribution.epsilon`.

    Raises:
        ValueError: a parameter is outside its range (the message names it).
    """
    sigma, q, k = _validate(noise_multiplier, sampling_rate, steps)
    d = check_open_probability("delta", delta)
    _check_sampling(sampling)
    pld = _composition(sigma, q, k, accuracy)
    return pld.epsilon(d)


def delta(
    noise_multiplier: float,
    sampling_rate: float,
    steps: int,
    epsilon: float,
    *,
    sampling: Sampling = "poisson",
    accuracy: Accuracy = DEFAULT_ACCURACY,
) -> Bound:
    """Certified δ(ε) of DP-SGD: max(δ_{P‖Q}(ε), δ_{Q‖P}(ε)) of the composed PLD (``shared/MATH.md``).

    Args:
        noise_multiplier: σ > 0.
        sampling_rate: q in (0, 1].
        steps: integer ≥ 1.
        epsilon: ε ≥ 0 (finite).
        sampling: only ``"poisson"``.
        accuracy: discretisation of the PLD engine.

    Returns:
        ``Bound(lower, upper)`` on the tight δ(ε); ``upper`` certified.

    Raises:
        ValueError: a parameter is outside its range.
    """
    sigma, q, k = _validate(noise_multiplier, sampling_rate, steps)
    e = check_nonnegative("epsilon", epsilon)
    _check_sampling(sampling)
    pld = _composition(sigma, q, k, accuracy)
    return pld.delta(e)


def noise_multiplier(
    target_epsilon: float,
    sampling_rate: float,
    steps: int,
    delta: float,
    *,
    sampling: Sampling = "poisson",
    accuracy: Accuracy = DEFAULT_ACCURACY,
    rtol: float = CALIBRATION_RTOL,
) -> float:
    """The smallest σ (to relative tolerance ``rtol``) whose *certified* ε is ≤ ``target_epsilon``.

    Coarse-to-fine root search on the predicate ``epsilon(σ, ...).upper <= target_epsilon``
    (:func:`optcomp.calibrate.smallest_passing_noise`): from the central-limit guess σ₀
    (``_sigma_guess``), passes on grids 16 and 4 times coarser bracket the
    root to 2 %, then a safeguarded secant at ``accuracy`` ends with evaluated σ_fail < σ_pass,
    σ_pass/σ_fail ≤ 1 + rtol. A σ whose grid would exceed the engine's limit (tiny σ, huge ε) counts
    as failing, not as an error. Only points that were evaluated at ``accuracy`` and passed are ever
    returned, so the result is on the safe side of the root whatever the shape of the upper bound:
    ``epsilon(noise_multiplier(t, q, T, δ), q, T, δ).upper <= t`` holds by construction (at the same
    ``accuracy``). The true minimal σ may be smaller by the engine's bracket width plus ``rtol``.

    Args:
        target_epsilon: ε target > 0.
        sampling_rate: q in (0, 1].
        steps: integer ≥ 1.
        delta: δ in (0, 1).
        sampling: only ``"poisson"``.
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
    _check_sampling(sampling)

    coarse, ratios = level_accuracies(accuracy)

    def at(acc: Accuracy) -> Callable[[float], Bound]:
        return lambda sigma: epsilon(sigma, q, k, d, accuracy=acc)

    return smallest_passing_noise(
        at(accuracy),
        target,
        rtol=tol,
        name="target_epsilon",
        start=_sigma_guess(target, q, k, d),
        coarse=[at(a) for a in coarse],
        ratios=ratios,
    )


def _sigma_guess(target: float, q: float, k: int, delta: float) -> float:
    """A starting scale for the σ search (only where the search starts; nothing returned depends on it).

    The central-limit approximation of DP-SGD (Bu, Dong, Long, Su, "Deep learning with Gaussian
    differential privacy", 2020) makes T steps about μ-GDP with μ = q·√(T·(e^{1/σ²} − 1)); with the
    small-μ reading ε ≈ μ·√(2 ln(1/δ)) of the GDP curve, σ₀ = 1/√(ln(1 + (μ/(q√T))²)).
    """
    mu = target / math.sqrt(2.0 * math.log(1.0 / delta))
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
    accuracy: Accuracy = DEFAULT_ACCURACY,
    max_steps: int = 10**7,
    rtol: float = CALIBRATION_RTOL,
) -> int:
    """The largest number of steps (to relative tolerance ``rtol``) whose *certified* ε is ≤ the target.

    Coarse-to-fine integer search on the predicate ``epsilon(σ, q, T, δ).upper <= target_epsilon``:
    from the CLT-scale guess T₀ = (εσ/q)²/(2 ln(1/δ)), passes on grids 16 and 4 times coarser
    bracket T to 2 % (a T whose grid exceeds the engine's limit counts as failing), then a
    safeguarded secant at ``accuracy`` ends with evaluated T_pass < T_fail, T_fail ≤ (1 + rtol)·T_pass
    or T_fail = T_pass + 1. Only an evaluated passing T is returned, so
    ``epsilon(σ, q, steps(t, σ, q, δ), δ).upper <= t`` holds by construction: the result is on the
    safe side (possibly smaller than the true maximum by the engine's bracket width and ``rtol``).

    Args:
        target_epsilon: ε target > 0.
        noise_multiplier: σ > 0.
        sampling_rate: q in (0, 1].
        delta: δ in (0, 1).
        sampling: only ``"poisson"``.
        accuracy: discretisation of the PLD engine.
        max_steps: search limit, an integer ≥ 1.
        rtol: relative tolerance of the returned T, in (0, 1) (adjacent integers below 1/rtol steps).

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
    _check_sampling(sampling)
    coarse, ratios = level_accuracies(accuracy)

    def probe(acc: Accuracy) -> Probe:
        return Probe(lambda t: epsilon(sigma, q, int(t), d, accuracy=acc))

    guess = min(max((target * sigma / q) ** 2 / (2.0 * math.log(1.0 / d)), 1.0), float(limit))
    probes = [probe(a) for a in [*coarse, accuracy]]
    _, good, _ = multilevel_search(
        probes, target, start=guess, rtol=tol, ratios=ratios, increasing=True, integer=True, limit=limit
    )
    if good is None:
        raise ValueError(f"target_epsilon={target!r} is exceeded already after 1 step (certified upper ε)")
    if good >= limit:
        raise ValueError(f"target_epsilon={target!r} is still met after max_steps={limit}")
    return int(good)


__all__ = ["SUPPORTED_SAMPLING", "delta", "epsilon", "noise_multiplier", "steps"]

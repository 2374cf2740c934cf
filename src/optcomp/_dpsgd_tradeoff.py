"""The trade-off curve of a DP-SGD run (:func:`optcomp.dpsgd.tradeoff`): what the most powerful
membership-inference attack on the trained model can achieve.

A run is μ-GDP-like in spirit but not in law: its exact curve is read from the composed privacy-loss
distribution of the run's pair by :func:`optcomp.fdp.from_pld` (DRS Prop. 2.8 for the lower curve, the
guarantee; convex duality, DRS §2.4, for the upper curve). Only samplers with an *exact* pair are
accepted: for a dominating pair (truncated Poisson, shuffled epochs, balls-in-bins) the lower curve
would still be a guarantee, but the upper curve — the attack that certainly succeeds — would not be the
run's, so those are refused rather than half-answered.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from optcomp._numerics import DEFAULT_ACCURACY, Accuracy

if TYPE_CHECKING:
    from optcomp.dpsgd import Sampling
    from optcomp.fdp import TradeOffBracket

#: Samplers whose step pair is the run's exact pair (``optcomp.dpsgd`` docstring): Poisson (per record
#: or per user, add/remove) and fixed-size batches (substitution).
EXACT_SAMPLING: tuple[str, ...] = ("poisson", "fixed_size")


def tradeoff(
    noise_multiplier: float,
    sampling_rate: float,
    steps: int,
    *,
    sampling: Sampling = "poisson",
    examples_per_user: int = 1,
    accuracy: Accuracy = DEFAULT_ACCURACY,
) -> TradeOffBracket:
    """Certified bracket of the trade-off function f of a DP-SGD run (Dong–Roth–Su §2.1: at false-positive
    rate α no membership-inference attack has a true-positive rate above 1 − f(α); the Neyman–Pearson test
    of the run's pair attains it).

    The run's composition (:meth:`optcomp.dpsgd.Run.items`: ``PoissonSubsampled(Gaussian(σ), q)``, the
    user-level mixture for ``examples_per_user`` > 1, or ``SubsampledWithoutReplacement(Gaussian(σ, 2),
    q)`` for fixed-size batches, ``steps`` times) is read by :func:`optcomp.fdp.from_pld`: ``lower`` is
    certified below the run's f (the guarantee: TPR ≤ 1 − lower(α)), ``upper`` above it — for fixed-size
    batches and T > 1 ``upper`` is that of the attained one-direction pairs
    (:meth:`optcomp.dpsgd.Run.lower_items`), as the symmetrized step's composition only dominates the run.
    :func:`optcomp.fdp.attack_tpr` and :func:`optcomp.fdp.advantage` read it as Bounds.

    Args:
        noise_multiplier, sampling_rate, steps, examples_per_user, accuracy: as in
            :func:`optcomp.dpsgd.epsilon`.
        sampling: ``"poisson"`` (add/remove) or ``"fixed_size"`` (substitution); the samplers with only a
            dominating pair are refused (module docstring).

    Raises:
        ValueError: a parameter out of range (the message names it), or a sampler without an exact pair.
    """
    from optcomp import compose
    from optcomp.dpsgd import Run
    from optcomp.fdp import TradeOffBracket, from_pld

    if sampling not in EXACT_SAMPLING:
        raise ValueError(
            f"sampling must be one of {', '.join(EXACT_SAMPLING)} for a trade-off curve (samplers with an exact "
            f"pair; {sampling!r} has a dominating pair only, whose curve is not the run's), got {sampling!r}"
        )
    run = Run.checked(noise_multiplier, sampling_rate, steps, sampling, examples_per_user)
    curve = from_pld(compose(*run.items(), accuracy=accuracy).dominating())  # the law's own curves
    attained = run.lower_items()  # fixed size, T > 1: the symmetrized step's composition only dominates
    if attained is None:
        return curve
    return TradeOffBracket(lower=curve.lower, upper=from_pld(compose(*attained, accuracy=accuracy)).upper)

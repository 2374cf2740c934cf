"""Noise calibration: the least noise that meets an (ε, δ) target after k-fold composition, certified.

:func:`noise_for_target` works for any mechanism family of :mod:`optcomp.mechanisms` with one noise
scale (Gaussian σ, Laplace scale, a Poisson-subsampled Gaussian's σ, ...), given as a callable
``noise ↦ mechanism`` or as a mechanism class (whose noise field is named or is its first field). It
bisects on the certified bracket of :func:`optcomp.compose`'s ε and returns

* ``noise``: a value that was evaluated and whose certified upper ε is ≤ the target (the safe side);
* ``bracket``: a :class:`~optcomp.Bound` on the true minimal noise
  σ* = inf{σ : ε_true(σ) ≤ target}, valid whenever ε_true is non-increasing in the noise (true for every
  family here: more noise is a post-processing of less, e.g. adding independent N(0, τ²) to N(0, σ²)).

:func:`kov_noise_variance` and :func:`kov_per_query_budget` give the Kairouz–Oh–Viswanath closed-form
sufficient conditions (KOV Cor. V.1, Cor. V.2, Thm V.3) to compare against.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from optcomp._numerics import (
    CALIBRATION_RTOL,
    DEFAULT_ACCURACY,
    Accuracy,
    Bound,
    check_int,
    check_open_probability,
    check_positive,
    check_probability,
)
from optcomp.bounds import kov_per_query_budget  # KOV Cor. V.1 lives in bounds.py (one home per theorem)

#: Widening gives up after this many doublings (a factor 2**60 in the noise).
_MAX_DOUBLINGS = 60


@dataclass(frozen=True, slots=True)
class Calibration:
    """The answer of :func:`noise_for_target`.

    Attributes:
        noise: the calibrated noise; its certified ε after k-fold composition is ≤ the target.
        bracket: lower and upper bound on the true minimal noise (``bracket.upper == noise``).
        epsilon: the certified ε bracket of the k-fold composition at ``noise``.
        kov_noise: the KOV Thm V.3 / Cor. V.2 standard deviation √(8kΔ² log(e + ε/δ))/ε (Δ = 1),
            expressed as the family's noise parameter only for Gaussian σ; reported for comparison.
    """

    noise: float
    bracket: Bound
    epsilon: Bound
    kov_noise: float


def _search(
    evaluate: Callable[[float], Bound], target: float, rtol: float, name: str, start: float = 1.0
) -> tuple[float, float, dict[float, Bound]]:
    """Geometric bisection on noise for ``evaluate(noise).upper <= target``.

    Returns ``(fail, passing, seen)``: ``passing`` was evaluated and its upper bound meets the target,
    ``fail`` (possibly 0) is a point whose upper bound does not, ``passing / fail <= 1 + rtol``, and
    ``seen`` maps every evaluated noise to its bracket. Only the upper bound decides, so ``passing`` is
    on the safe side whatever the shape of the bound. The search starts at ``start`` (a scale hint:
    evaluations at small noise, i.e. large ε, are the expensive ones).
    """
    seen: dict[float, Bound] = {}

    def passes(x: float) -> bool:
        if x not in seen:
            seen[x] = evaluate(x)
        return seen[x].upper <= target

    lo, hi = start, start
    if passes(start):
        lo = start / 2.0
        for _ in range(_MAX_DOUBLINGS):
            if not passes(lo):
                break
            hi, lo = lo, lo / 2.0
        else:
            return 0.0, hi, seen
    else:
        for _ in range(_MAX_DOUBLINGS):
            hi *= 2.0
            if passes(hi):
                break
            lo = hi
        else:
            raise ValueError(
                f"{name}={target!r} is not met by any noise up to {hi!r} at this accuracy; "
                "refine the accuracy or raise the target"
            )
    while hi / lo > 1.0 + rtol:
        mid = math.sqrt(lo * hi)
        if passes(mid):
            hi = mid
        else:
            lo = mid
    return lo, hi, seen


def smallest_passing_noise(
    evaluate: Callable[[float], Bound],
    target: float,
    *,
    rtol: float = CALIBRATION_RTOL,
    name: str = "target",
    start: float = 1.0,
) -> float:
    """The least evaluated noise (to relative ``rtol``) with ``evaluate(noise).upper <= target``.

    Shared by :func:`noise_for_target` and :func:`optcomp.dpsgd.noise_multiplier`; see :func:`_search`.

    Raises:
        ValueError: ``target`` not in (0, ∞), ``rtol`` not in (0, 1), ``start`` not in (0, ∞), or no
            noise up to 2**60 passes.
    """
    tgt = check_positive(name, target)
    tol = check_open_probability("rtol", rtol)
    first = check_positive("start", start)
    return _search(evaluate, tgt, tol, name, first)[1]


def _family_callable(family: Any, noise_field: str | None) -> Callable[[float], Any]:
    if isinstance(family, type):
        if noise_field is None:
            if not dataclasses.is_dataclass(family):
                raise ValueError(f"family must be a callable or a dataclass mechanism class, got {family!r}")
            noise_field = dataclasses.fields(family)[0].name
        fields = [f for f in dataclasses.fields(family) if f.init] if dataclasses.is_dataclass(family) else []
        names = [f.name for f in fields]
        if fields and noise_field not in names:
            raise ValueError(f"noise_field must be one of {names}, got {noise_field!r}")
        required = [
            f.name
            for f in fields
            if f.name != noise_field and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        ]
        if required:
            raise ValueError(
                f"family {family.__name__} needs {required} besides {noise_field!r}; "
                "pass a callable noise -> mechanism instead, got the class"
            )
        field_name = noise_field
        cls = family
        return lambda noise: cls(**{field_name: noise})
    if not callable(family):
        raise ValueError(f"family must be a callable noise -> mechanism or a mechanism class, got {family!r}")  # noqa: TRY004 (STYLE: bad input is ValueError)
    if noise_field is not None:
        raise ValueError(f"noise_field is only used with a mechanism class, got {noise_field!r}")
    fn: Callable[[float], Any] = family
    return fn


def noise_for_target(
    family: Any,
    target_epsilon: float,
    target_delta: float,
    k: int,
    *,
    noise_field: str | None = None,
    accuracy: Accuracy = DEFAULT_ACCURACY,
    rtol: float = CALIBRATION_RTOL,
) -> Calibration:
    """The least noise of a one-parameter family meeting (ε, δ) after k-fold composition, certified.

    For noise s let ε(s) be the optimal ε at δ = ``target_delta`` of the k-fold composition of
    ``family(s)`` (its privacy-loss distribution convolved k times, ``shared/MATH.md``), bracketed by
    :func:`optcomp.compose` ``(...).epsilon(δ)`` as [ε_lo(s), ε_up(s)]. Bisection in log s gives

    * ``noise`` = an evaluated s with ε_up(s) ≤ ε (so it provably meets the target), and
      noise/s_fail ≤ 1 + ``rtol`` for an evaluated s_fail with ε_up(s_fail) > ε;
    * ``bracket`` = [max{s evaluated : ε_lo(s) > ε}, noise] ∋ s*, the true least noise, assuming ε(s)
      is non-increasing (more noise is a post-processing of less). The lower end is refined by a
      second bisection on ε_lo; its gap to ``noise`` is the engine's bracket width, seen through the
      slope of ε(s), plus ``rtol``.

    Args:
        family: a callable ``noise -> mechanism`` (e.g. ``lambda s: PoissonSubsampled(Gaussian(sigma=s),
            sampling_rate=0.01)``), or a mechanism class such as ``Gaussian`` / ``Laplace`` (its noise
            field is ``noise_field`` or else its first dataclass field: ``sigma``, ``scale``).
        target_epsilon: ε > 0.
        target_delta: δ in (0, 1).
        k: number of compositions, an integer ≥ 1.
        noise_field: with a class ``family``, the name of its noise parameter.
        accuracy: discretisation of the PLD engine.
        rtol: relative tolerance of the bisection, in (0, 1).

    Returns:
        A :class:`Calibration` (noise, bracket, ε bracket at noise, KOV Thm V.3 σ for comparison).

    Raises:
        ValueError: a parameter is out of range, or no noise up to 2**60 meets the target.
    """
    from optcomp import compose

    eps = check_positive("target_epsilon", target_epsilon)
    dlt = check_open_probability("target_delta", target_delta)
    kk = check_int("k", k, minimum=1)
    tol = check_open_probability("rtol", rtol)
    make = _family_callable(family, noise_field)

    def evaluate(noise: float) -> Bound:
        pld = compose((make(noise), kk), accuracy=accuracy)
        result: Bound = pld.epsilon(dlt)
        return result

    kov_sigma = math.sqrt(kov_noise_variance(eps, dlt, kk))
    # KOV's sufficient σ (Δ = 1) is the natural scale; the search halves down from it.
    _, noise, seen = _search(evaluate, eps, tol, "target_epsilon", start=kov_sigma)
    # Lower end of the bracket of s*: the largest evaluated s whose *lower* ε still exceeds the target.
    below = [s for s, b in seen.items() if b.lower > eps]
    lo = max(below) if below else 0.0
    above = [s for s, b in seen.items() if b.lower <= eps and s > lo]
    hi = min(above) if above else noise
    while lo > 0.0 and hi / lo > 1.0 + tol:
        mid = math.sqrt(lo * hi)
        if evaluate(mid).lower > eps:
            lo = mid
        else:
            hi = mid
    return Calibration(
        noise=noise,
        bracket=Bound(min(lo, noise), noise),
        epsilon=seen[noise],
        kov_noise=kov_sigma,
    )


def kov_noise_variance(
    target_epsilon: float, target_delta: float, k: int, *, sensitivity: float = 1.0
) -> float:
    """Noise variance sufficient for (ε, δ)-DP after k-fold adaptive composition (KOV Cor. V.2, Thm V.3).

    σ² = 8 k Δ² log(e + ε/δ) / ε², for Laplace noise (Cor. V.2) and Gaussian noise (Thm V.3), any
    ε > 0 and δ ∈ (0, 1]. A Laplace distribution of scale b has variance 2b², so b = √(σ²/2).

    Args:
        target_epsilon: ε > 0.
        target_delta: δ in (0, 1].
        k: number of compositions ≥ 1.
        sensitivity: Δ > 0.

    Returns:
        The variance σ² (a sufficient condition, not the least noise).
    """
    eps = check_positive("target_epsilon", target_epsilon)
    dlt = check_probability("target_delta", target_delta)
    if dlt == 0.0:
        raise ValueError(f"target_delta must be in (0, 1], got {dlt!r}")
    kk = check_int("k", k, minimum=1)
    d = check_positive("sensitivity", sensitivity)
    return 8.0 * kk * d * d * math.log(math.e + eps / dlt) / (eps * eps)


__all__ = [
    "Calibration",
    "kov_noise_variance",
    "kov_per_query_budget",
    "noise_for_target",
    "smallest_passing_noise",
]

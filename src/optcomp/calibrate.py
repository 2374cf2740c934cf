"""Noise calibration: the least noise that meets an (ε, δ) target after k-fold composition, certified.

:func:`noise_for_target` works for any mechanism family of :mod:`optcomp.mechanisms` with one noise
scale (Gaussian σ, Laplace scale, a Poisson-subsampled Gaussian's σ, ...), given as a callable
``noise ↦ mechanism`` or as a mechanism class (whose noise field is named or is its first field). It
searches coarse-to-fine on the certified bracket of :func:`optcomp.compose`'s ε
(:func:`optcomp._inverse.multilevel_search`, the one home of inversion: grids 16 and 4 times coarser
place a safeguarded secant at the requested accuracy; a ``GridTooLargeError`` at a candidate counts as
"not feasible here") and returns

* ``noise``: a value that was evaluated and whose certified upper ε is ≤ the target (the safe side);
* ``bracket``: a :class:`~optcomp.Bound` on the true minimal noise
  σ* = inf{σ : ε_true(σ) ≤ target}, valid whenever ε_true is non-increasing in the noise (more noise is a
  post-processing of less, e.g. adding independent N(0, τ²) to N(0, σ²)). Not so for the discrete
  Gaussian (a sum of two is not one; its loss lattice moves with σ, and ε(σ) has bumps): a mechanism with
  ``noise_monotone = False`` is re-searched by its ``least_noise`` scan (the least passing σ on a grid of
  ratio 1.005, spans proved failing skipped), and the bracket's lower end is then a *proven* floor.

:func:`kov_noise_variance` and :func:`kov_per_query_budget` give the Kairouz–Oh–Viswanath closed-form
sufficient conditions (KOV Cor. V.1, Cor. V.2, Thm V.3) to compare against.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

from optcomp._inverse import (
    COARSE_GRID_FACTOR,
    NotMonotoneError,
    Probe,
    SearchBracket,
    coarse_accuracy,
    level_accuracies,
    multilevel_search,
    solve,
)
from optcomp._numerics import (
    CALIBRATION_RTOL,
    DEFAULT_ACCURACY,
    PARAMETER_RTOL,
    Accuracy,
    Bound,
    check_int,
    check_open_probability,
    check_positive,
    check_probability,
)
from optcomp.bounds import (  # KOV Cor. V.1 lives in bounds.py (one home per theorem)
    K_MAX,
    kov_per_query_budget,
)
from optcomp.pld import GridTooLargeError

if TYPE_CHECKING:
    from optcomp.queries import LowerEnd

#: Most compositions :func:`noise_for_target` accounts (integers beyond 2**53 are not exact in float64).
MAX_COMPOSITIONS = 2**53


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


def _raise_infeasible(name: str, target: float, error: Exception | None, what: str = "noise up to 2**60 times "
                      "the start") -> NoReturn:
    reason = f" (the engine's grid limit was hit: {error})" if error is not None else ""
    raise ValueError(
        f"{name}={target!r} is not met by any {what} at this accuracy{reason}; refine the accuracy or raise "
        "the target"
    )


def smallest_passing_noise(
    evaluate: Callable[[float], Bound],
    target: float,
    *,
    rtol: float = CALIBRATION_RTOL,
    name: str = "target",
    start: float = 1.0,
    coarse: Sequence[Callable[[float], Bound]] = (),
    ratios: Sequence[float] = (),
) -> float:
    """The least evaluated noise (to relative ``rtol``) with ``evaluate(noise).upper <= target``, for an
    evaluator that is not a mechanism family (:func:`noise_for_target` is the calibrator of those).

    :func:`optcomp._inverse.multilevel_search` (its safe-side proof): ``coarse`` is the same bracket on
    coarser grids, coarsest first, used to place the fine search (``ratios``: their grid-step ratios,
    default ``COARSE_GRID_FACTOR`` each); a ``GridTooLargeError`` at a candidate counts as failing there.

    Raises:
        ValueError: ``target`` not in (0, ∞), ``rtol`` not in (0, 1), ``start`` not in (0, ∞), or no
            noise up to 2**60 × ``start`` passes.
    """
    tgt = check_positive(name, target)
    tol = check_open_probability("rtol", rtol)
    first = check_positive("start", start)
    probes = [Probe(f, (GridTooLargeError,)) for f in [*coarse, evaluate]]
    found, _ = multilevel_search(
        probes, tgt, start=first, rtol=tol, ratios=list(ratios) or [COARSE_GRID_FACTOR] * len(coarse), name=name
    )
    if found.passing is None:
        _raise_infeasible(name, tgt, next((p.last_error for p in probes if p.last_error), None))
    return found.passing


def _family_name(family: Any, noise_field: str | None) -> str:
    if isinstance(family, type):
        fields = dataclasses.fields(family) if dataclasses.is_dataclass(family) else ()
        name = noise_field or (fields[0].name if fields else "?")
        return f"{family.__name__} (searched parameter {name!r})"
    return getattr(family, "__name__", repr(family))


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


def _evaluator(
    make: Callable[[float], Any], k: int, delta: float, accuracy: Accuracy, lower_end: LowerEnd = "run"
) -> Callable[[float], Bound]:
    """x ↦ the certified ε(δ) bracket of ``k`` runs of what ``make(x)`` describes, at ``accuracy``: a
    mechanism, or a list of ``(mechanism, count)`` items (a run; each count multiplied by ``k``); with
    ``lower_end="law"`` the items' own laws' bracket (``Composition.dominating``: no dominated composition is
    built where only the upper end is read)."""
    from optcomp import compose

    def evaluate(x: float) -> Bound:
        made = make(x)
        items = [(m, c * k) for m, c in made] if isinstance(made, list) else [(made, k)]
        composition = compose(*items, accuracy=accuracy)
        result: Bound = (composition if lower_end == "run" else composition.dominating()).epsilon(delta)
        return result

    return evaluate


def noise_for_target(
    family: Any,
    target_epsilon: float,
    target_delta: float,
    k: int,
    *,
    noise_field: str | None = None,
    accuracy: Accuracy = DEFAULT_ACCURACY,
    rtol: float = PARAMETER_RTOL,
    increasing: bool = False,
    integer: bool = False,
    start: float | None = None,
    limit: float = math.inf,
    bracket: bool = True,
) -> Calibration:
    """The least noise (or, ``increasing``, the largest parameter) of a one-parameter family of
    mechanisms meeting (ε, δ) after k-fold composition, certified: the one parameter → mechanisms
    calibrator (:func:`optcomp.dpsgd.noise_multiplier` and :func:`optcomp.dpsgd.steps` call it).

    For a parameter s let ε(s) be the optimal ε at δ = ``target_delta`` of the k-fold composition of
    ``family(s)`` (``shared/MATH.md``), bracketed by :func:`optcomp.compose` ``(...).epsilon(δ)`` as
    [ε_lo(s), ε_up(s)]. The coarse-to-fine search :func:`optcomp._inverse.multilevel_search` (passes on
    grids 16 and 4 times coarser, then a safeguarded secant at ``accuracy``; a ``GridTooLargeError`` at a
    candidate counts as failing there) gives

    * ``noise`` = an s evaluated at ``accuracy`` with ε_up(s) ≤ ε (it provably meets the target),
      within a factor 1 + ``rtol`` (``integer``: adjacent to) an s_fail with ε_up(s_fail) > ε (evaluated at
      ``accuracy``, or certified to fail: a coarser pass's ε_lo(s_fail) > ε). So, ε_up being monotone,
      ``noise`` is within ``rtol`` (relative) of the least s whose *certified* ε meets the target (the
      largest, exactly, for ``integer``);
    * ``bracket`` ∋ s*, the true least noise (largest parameter): [max{s : ε_lo(s) > ε at some grid},
      noise] (``increasing``: [noise, min{...}]), assuming ε(s) is monotone (more noise is a
      post-processing of less; more steps compose more). With ``bracket`` its far end is refined on the
      lower ends of the grid 4 times coarser than ``accuracy`` (certified; its gap to ``noise`` is that
      grid's bracket width seen through the slope of ε(s)); else it is the closest certain failure seen.

    Args:
        family: a callable ``s -> mechanism`` (e.g. ``lambda s: PoissonSubsampled(Gaussian(sigma=s),
            sampling_rate=0.01)``) or ``s -> [(mechanism, count), ...]`` (a run), or a mechanism class
            such as ``Gaussian`` / ``Laplace`` (its noise field is ``noise_field`` or else its first
            dataclass field: ``sigma``, ``scale``).
        target_epsilon: ε > 0.
        target_delta: δ in (0, 1).
        k: number of compositions, an integer ≥ 1.
        noise_field: with a class ``family``, the name of its noise parameter.
        accuracy: the accuracy of every ε query.
        rtol: relative tolerance of the search, in (0, 1) (``integer``: the answer is exact regardless).
        increasing: ε grows with the parameter (a number of steps): the largest passing one is sought.
        integer: the parameter is an integer ≥ 1.
        start: where the search starts (default: KOV's sufficient σ, below).
        limit: the largest parameter evaluated.
        bracket: refine the far end of ``bracket`` (a few evaluations on a coarser grid); ``False``:
            only upper ends are read, and ``epsilon`` is the items' own laws' bracket (``Composition.dominating``:
            for a truncated-Poisson or fixed-size item its lower end is not the run's).

    Returns:
        A :class:`Calibration` (noise, bracket, ε bracket at noise, KOV Thm V.3 σ for comparison).

    Raises:
        ValueError: a parameter is out of range, or no parameter in the search range meets the target.
    """
    eps = check_positive("target_epsilon", target_epsilon)
    dlt = check_open_probability("target_delta", target_delta)
    kk = check_int("k", k, minimum=1, maximum=MAX_COMPOSITIONS)
    tol = check_open_probability("rtol", rtol)
    make = _family_callable(family, noise_field)
    kov_sigma = math.sqrt(kov_noise_variance(eps, dlt, kk))
    coarse, ratios = level_accuracies(accuracy)
    side: LowerEnd = "run" if bracket else "law"  # without a bracket on s*, only upper ends are read
    probes = [Probe(_evaluator(make, kk, dlt, a, side), (GridTooLargeError,)) for a in [*coarse, accuracy]]
    try:  # KOV's sufficient σ (Δ = 1) is the natural scale of a noise; the search starts from it
        found, _ = multilevel_search(probes, eps, start=kov_sigma if start is None else start, rtol=tol,
                                     ratios=ratios, name="target_epsilon", increasing=increasing,
                                     integer=integer, limit=limit)
    except NotMonotoneError as exc:
        raise ValueError(f"family {_family_name(family, noise_field)} is not a noise family: {exc} "
                         "(pass noise_field, or a callable noise -> mechanism whose epsilon falls with noise)") from exc
    noise = found.passing
    if noise is None:
        what = "parameter down to 1" if increasing else "noise up to 2**60 times the start"
        _raise_infeasible("target_epsilon", eps, next((p.last_error for p in probes if p.last_error), None), what)
    rescanned = None if increasing or integer else _rescan(make, probes[-1], kk, dlt, eps, accuracy, found, tol)
    if rescanned is not None:
        noise, far = rescanned
    else:
        far = _far_end(probes, eps, noise, tol, increasing, integer, bracket)
    seen = probes[-1].seen[noise]
    if seen is None:  # noise passed, so it was evaluated
        raise RuntimeError("internal: the returned noise has no evaluation")
    return Calibration(
        noise=noise,
        bracket=Bound(noise, far) if increasing else Bound(min(far, noise), noise),
        epsilon=seen,
        kov_noise=kov_sigma,
    )


def _rescan(
    make: Callable[[float], Any], probe: Probe, k: int, delta: float, eps: float, accuracy: Accuracy,
    found: SearchBracket, tol: float,
) -> tuple[float, float] | None:
    """For a family whose ε is not monotone in its noise (a mechanism with ``noise_monotone = False``, whose
    searched field is its ``sigma``): its ``least_noise`` scan below the secant's answer, which returns the
    least passing noise on the scan's resolution and a *proven* floor (every noise below it fails), the
    bracket's lower end in place of :func:`_far_end`'s (which assumes monotonicity). ``None`` otherwise."""
    from optcomp import compose

    noise = found.passing
    if noise is None:
        return None
    made = make(noise)
    if isinstance(made, list) or getattr(made, "noise_monotone", True):
        return None
    least_noise = getattr(made, "least_noise", None)
    half = make(noise / 2.0)
    if least_noise is None or getattr(made, "sigma", None) != noise or getattr(half, "sigma", None) != noise / 2.0:
        raise ValueError(f"the family's epsilon is not monotone in its parameter ({type(made).__name__}) and the "
                         "searched parameter is not its sigma: no certified least value can be found")
    cache: dict[float, Any] = {}

    def profile(s: float) -> Any:
        if s not in cache:
            try:
                cache[s] = compose((make(s), k), accuracy=accuracy)
            except (GridTooLargeError, ValueError):
                cache[s] = None
        return cache[s]

    result: tuple[float, float] = least_noise(probe, profile, eps, delta, k, passing=noise, known_fail=found.fail,
                                              rtol=tol)
    return result


def _far_end(
    probes: Sequence[Probe], eps: float, noise: float, tol: float, increasing: bool, integer: bool, refine: bool
) -> float:
    """The end of the bracket on s* away from ``noise``: the closest evaluated s (any level) whose *lower*
    ε exceeds the target (then ε_true(s) > target), refined on the second-finest level's lower end."""
    beyond = [s for p in probes for s, b in p.seen.items()
              if b is not None and b.lower > eps and (s > noise if increasing else s < noise)]
    far = min(beyond, default=math.inf) if increasing else max(beyond, default=0.0)
    if refine and 0.0 < far < math.inf and max(far, noise) / min(far, noise) > 1.0 + tol:
        helper = probes[-2] if len(probes) > 1 else probes[-1]
        lower_fail = solve(helper, eps, name="target_epsilon", guess=math.sqrt(far * noise),
                           rtol=max(tol, CALIBRATION_RTOL), fail=far, passing=noise, side="lower",
                           increasing=increasing, integer=integer).fail
        if lower_fail is not None:
            far = min(far, lower_fail) if increasing else max(far, lower_fail)
    return far


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
    kk = check_int("k", k, minimum=1, maximum=K_MAX)
    d = check_positive("sensitivity", sensitivity)
    return 8.0 * kk * d * d * math.log(math.e + eps / dlt) / (eps * eps)


__all__ = [
    "COARSE_GRID_FACTOR",
    "Calibration",
    "coarse_accuracy",
    "kov_noise_variance",
    "kov_per_query_budget",
    "level_accuracies",
    "noise_for_target",
    "smallest_passing_noise",
]

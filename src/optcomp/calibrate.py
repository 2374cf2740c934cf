"""Noise calibration: the least noise that meets an (ε, δ) target after k-fold composition, certified.

:func:`noise_for_target` works for any mechanism family of :mod:`optcomp.mechanisms` with one noise
scale (Gaussian σ, Laplace scale, a Poisson-subsampled Gaussian's σ, ...), given as a callable
``noise ↦ mechanism`` or as a mechanism class (whose noise field is named or is its first field). It
searches coarse-to-fine on the certified bracket of :func:`optcomp.compose`'s ε
(:func:`multilevel_search`: grids 16 and 4 times coarser place a safeguarded secant at the requested
accuracy; a ``GridTooLargeError`` at a candidate counts as "not feasible here") and returns

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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NoReturn

from optcomp._inverse import NotMonotoneError, log_slope, solve
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
from optcomp.bounds import (  # KOV Cor. V.1 lives in bounds.py (one home per theorem)
    K_MAX,
    kov_per_query_budget,
)
from optcomp.pld import GridTooLargeError

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


#: Coarse-to-fine searches: the first pass evaluates on a grid this many times coarser than asked.
COARSE_GRID_FACTOR = 16.0

#: Relative tolerance of the coarse pass (it only places the fine search; its answers are never returned).
COARSE_RTOL = 2e-2


def coarse_accuracy(accuracy: Accuracy, factor: float = COARSE_GRID_FACTOR) -> Accuracy:
    """``accuracy`` on a grid ``factor`` times coarser: the coarse passes of every inverse (their
    brackets are as certified as the fine ones, only wider). The one place that knows how to coarsen.

    With an expert ``grid_step`` the step is multiplied by ``factor``; otherwise the requested relative
    width is multiplied by ``factor²`` (the engine's width is second order in the step, so this is the
    same coarsening), capped at 1/2."""
    if accuracy.grid_step is not None:
        return dataclasses.replace(accuracy, grid_step=accuracy.grid_step * factor)
    return dataclasses.replace(accuracy, relative_width=min(0.5, accuracy.relative_width * factor**2))


#: Grid-step factors of the passes of an inverse, coarsest first, relative to the requested accuracy.
SEARCH_LEVELS: tuple[float, ...] = (COARSE_GRID_FACTOR, COARSE_GRID_FACTOR**0.5)


def level_accuracies(accuracy: Accuracy) -> tuple[list[Accuracy], list[float]]:
    """The coarse accuracies of an inverse's passes (coarsest first) and the step ratios between
    consecutive passes, the last ratio being to ``accuracy`` itself."""
    coarse = [coarse_accuracy(accuracy, f) for f in SEARCH_LEVELS]
    factors = [*SEARCH_LEVELS, 1.0]
    return coarse, [factors[i] / factors[i + 1] for i in range(len(SEARCH_LEVELS))]


@dataclass
class Probe:
    """Memoised evaluations of a certified bracket ``evaluate(x) -> Bound``.

    A :class:`~optcomp.pld.GridTooLargeError` at some x is recorded as ``None`` — "not feasible here,
    move on" (it always fails the target) — instead of ending the search; the last such error is kept
    so that a search in which *nothing* is feasible can raise it.
    """

    evaluate: Callable[[float], Bound]
    seen: dict[float, Bound | None] = dataclasses.field(default_factory=dict)
    last_error: GridTooLargeError | None = None

    def __call__(self, x: float) -> Bound | None:
        if x not in self.seen:
            try:
                self.seen[x] = self.evaluate(x)
            except GridTooLargeError as err:
                self.seen[x] = None
                self.last_error = err
        return self.seen[x]

    def value(self, x: float, side: str = "upper") -> float:
        """The ``side`` end of the bracket at x (``inf`` where infeasible)."""
        b = self(x)
        return math.inf if b is None else float(getattr(b, side))


def refine(
    probe: Probe,
    target: float,
    *,
    guess: float,
    rtol: float,
    fail: float | None = None,
    passing: float | None = None,
    side: Literal["upper", "lower"] = "upper",
    increasing: bool = False,
    integer: bool = False,
    slope_hint: float | None = None,
    limit: float = math.inf,
    name: str = "noise",
) -> tuple[float | None, float | None]:
    """Locate the root of ``probe.value(x, side) <= target``: :func:`optcomp._inverse.solve` on ``probe``.

    The result ``(fail, passing)`` holds only evaluated points (or the given ends); ``passing`` meets the
    target and ``fail`` does not, with max/min ≤ 1 + ``rtol`` (adjacent for ``integer``); the proof that
    ``passing`` is on the safe side is :func:`~optcomp._inverse.solve`'s. ``passing`` stays ``None`` if no
    x up to ``limit`` (down to 0 when ``increasing``) passes, and ``fail`` stays ``None`` when every x
    down to 2**-60 × guess passes.
    """
    return solve(probe, target, name=name, guess=guess, rtol=rtol, increasing=increasing, integer=integer,
                 side=side, fail=fail, passing=passing, slope_hint=slope_hint, limit=limit)


def _level_guess(
    probe: Probe, fail: float | None, passing: float, target: float, ratio: float, increasing: bool
) -> tuple[float, float | None]:
    """Where the next, ``ratio`` times finer level is predicted to cross the target, and the slope.

    Model: the finer upper end ≈ midpoint + half-width/``ratio`` of this level's bracket (the truth is
    near the midpoint, and bracket widths scale with the grid step); solved by a log-log secant
    through this level's last failing and passing points.
    """
    pts = []
    for x in (fail, passing):
        b = None if x is None else probe(x)
        if x is not None and b is not None and math.isfinite(b.upper):
            pts.append((x, 0.5 * (b.lower + b.upper) + 0.5 * b.width / ratio))
    slope = log_slope(pts)
    if slope is None:
        pts_all = sorted((x, b.upper) for x, b in probe.seen.items() if b is not None)
        slope = log_slope(pts_all[-2:])
    if slope is None or (slope > 0) != increasing or not pts or not pts[-1][1] > 0.0:
        return passing, slope
    x, v = pts[-1]
    return x * math.exp((math.log(target) - math.log(v)) / slope), slope


def multilevel_search(
    levels: Sequence[Probe],
    target: float,
    *,
    start: float,
    rtol: float,
    ratios: Sequence[float],
    increasing: bool = False,
    integer: bool = False,
    limit: float = math.inf,
) -> tuple[float | None, float | None, float | None]:
    """Coarse-to-fine root search over ``levels`` (the same certified bracket on ever finer grids).

    Each level but the last is searched to ``COARSE_RTOL`` on its upper end; the next starts from the
    crossing predicted by :func:`_level_guess` (``ratios[i]``: grid-step ratio of level i to the next),
    aimed just past it on the passing side. The last level is searched to ``rtol``. Evaluations whose
    *lower* end already exceeds the target (at any level) certainly fail at every level (the truth
    exceeds the target), so the last level never evaluates beyond them.

    Returns ``(fail, passing, certain_fail)`` of the last level (``refine``'s ends) and the certified
    failing point closest to the root, or ``None`` where unknown.
    """
    guess, slope = start, None
    certain_fail: float | None = None

    def closest_certain_fail() -> float | None:
        fails = [x for p in levels for x, b in p.seen.items() if b is None or b.lower > target]
        if not fails:
            return None
        return min(fails) if increasing else max(fails)

    for i, probe in enumerate(levels):
        last = i == len(levels) - 1
        tol = rtol if last else COARSE_RTOL
        fail, passing = refine(
            probe,
            target,
            guess=guess,
            rtol=tol,
            fail=certain_fail if last else None,
            increasing=increasing,
            integer=integer,
            slope_hint=slope,
            limit=limit,
        )
        certain_fail = closest_certain_fail()
        if last or passing is None:
            return fail, passing, certain_fail
        guess, slope = _level_guess(probe, fail, passing, target, ratios[i], increasing)
        aim = 1.0 + levels_aim(rtol if i == len(levels) - 2 else COARSE_RTOL)
        guess = guess / aim if increasing else guess * aim
        if certain_fail is not None:  # never start beyond a certain failure
            guess = min(guess, certain_fail) if increasing else max(guess, certain_fail)
    return None, None, certain_fail


def levels_aim(tol: float) -> float:
    """How far past a predicted crossing the first evaluation of a level is placed (relative)."""
    return tol / 3.0


def _search(
    evaluate: Callable[[float], Bound],
    target: float,
    rtol: float,
    name: str,
    start: float = 1.0,
    coarse: Sequence[Callable[[float], Bound]] = (),
    ratios: Sequence[float] = (),
) -> tuple[float, float, dict[float, Bound]]:
    """Least noise with ``evaluate(noise).upper <= target``, coarse-to-fine (:func:`multilevel_search`).

    Returns ``(fail, passing, seen)``: ``passing`` was evaluated by ``evaluate`` and its upper bound meets
    the target, ``fail`` (possibly 0) does not (or is certified to fail: a coarser level's *lower* end
    above the target), ``passing / fail <= 1 + rtol``, and ``seen`` maps every noise evaluated by
    ``evaluate`` to its bracket. Only ``evaluate``'s upper bound decides what is returned, so
    ``passing`` is on the safe side whatever the shape of the bound. ``coarse``: the same bracket on
    coarser grids, coarsest first (``ratios``: grid-step ratios between consecutive levels, the last to
    ``evaluate``'s). A ``GridTooLargeError`` at a candidate counts as failing there (:class:`Probe`).
    """
    probes = [Probe(f) for f in coarse] + [Probe(evaluate)]
    fail, passing, _ = multilevel_search(
        probes, target, start=start, rtol=rtol, ratios=list(ratios) or [COARSE_GRID_FACTOR] * len(coarse)
    )
    if passing is None:
        _raise_infeasible(name, target, next((p.last_error for p in probes if p.last_error), None))
    seen = {x: b for x, b in probes[-1].seen.items() if b is not None}
    return (fail or 0.0), passing, seen


def _raise_infeasible(name: str, target: float, error: GridTooLargeError | None) -> NoReturn:
    reason = f" (the engine's grid limit was hit: {error})" if error is not None else ""
    raise ValueError(
        f"{name}={target!r} is not met by any noise up to 2**60 times the start at this accuracy{reason}; "
        "refine the accuracy or raise the target"
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
    """The least evaluated noise (to relative ``rtol``) with ``evaluate(noise).upper <= target``.

    Shared by :func:`noise_for_target` and :func:`optcomp.dpsgd.noise_multiplier`; see :func:`_search`
    (``coarse``: the same bracket on coarser grids, coarsest first, used to place the fine search;
    ``ratios``: their grid-step ratios, default :data:`COARSE_GRID_FACTOR` each).

    Raises:
        ValueError: ``target`` not in (0, ∞), ``rtol`` not in (0, 1), ``start`` not in (0, ∞), or no
            noise up to 2**60 × ``start`` passes.
    """
    tgt = check_positive(name, target)
    tol = check_open_probability("rtol", rtol)
    first = check_positive("start", start)
    return _search(evaluate, tgt, tol, name, first, coarse, ratios)[1]


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
    make: Callable[[float], Any], k: int, delta: float, accuracy: Accuracy
) -> Callable[[float], Bound]:
    """noise ↦ the certified ε(δ) bracket of ``k`` runs of ``make(noise)`` at ``accuracy``."""
    from optcomp import compose

    def evaluate(noise: float) -> Bound:
        result: Bound = compose((make(noise), k), accuracy=accuracy).epsilon(delta)
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
    rtol: float = CALIBRATION_RTOL,
) -> Calibration:
    """The least noise of a one-parameter family meeting (ε, δ) after k-fold composition, certified.

    For noise s let ε(s) be the optimal ε at δ = ``target_delta`` of the k-fold composition of
    ``family(s)`` (its privacy-loss distribution convolved k times, ``shared/MATH.md``), bracketed by
    :func:`optcomp.compose` ``(...).epsilon(δ)`` as [ε_lo(s), ε_up(s)]. A coarse-to-fine search
    (:func:`multilevel_search`: passes on grids 16 and 4 times coarser, then a safeguarded secant at
    ``accuracy``; a ``GridTooLargeError`` at a candidate counts as failing there) gives

    * ``noise`` = an s evaluated at ``accuracy`` with ε_up(s) ≤ ε (so it provably meets the target),
      and noise/s_fail ≤ 1 + ``rtol`` for an s_fail with ε_up(s_fail) > ε (evaluated at ``accuracy``,
      or certified to fail: a coarser pass's ε_lo(s_fail) > ε);
    * ``bracket`` = [max{s evaluated : ε_lo(s) > ε at some grid}, noise] ∋ s*, the true least noise,
      assuming ε(s) is non-increasing (more noise is a post-processing of less). The lower end is
      refined on the lower ends of the grid 4 times coarser than ``accuracy`` (cheap; as certified);
      its gap to ``noise`` is that grid's bracket width, seen through the slope of ε(s), plus ``rtol``.

    Args:
        family: a callable ``noise -> mechanism`` (e.g. ``lambda s: PoissonSubsampled(Gaussian(sigma=s),
            sampling_rate=0.01)``), or a mechanism class such as ``Gaussian`` / ``Laplace`` (its noise
            field is ``noise_field`` or else its first dataclass field: ``sigma``, ``scale``).
        target_epsilon: ε > 0.
        target_delta: δ in (0, 1).
        k: number of compositions, an integer ≥ 1.
        noise_field: with a class ``family``, the name of its noise parameter.
        accuracy: discretisation of the PLD engine.
        rtol: relative tolerance of the search, in (0, 1).

    Returns:
        A :class:`Calibration` (noise, bracket, ε bracket at noise, KOV Thm V.3 σ for comparison).

    Raises:
        ValueError: a parameter is out of range, or no noise up to 2**60 meets the target.
    """

    eps = check_positive("target_epsilon", target_epsilon)
    dlt = check_open_probability("target_delta", target_delta)
    kk = check_int("k", k, minimum=1, maximum=MAX_COMPOSITIONS)
    tol = check_open_probability("rtol", rtol)
    make = _family_callable(family, noise_field)
    kov_sigma = math.sqrt(kov_noise_variance(eps, dlt, kk))
    coarse, ratios = level_accuracies(accuracy)
    probes = [Probe(_evaluator(make, kk, dlt, a)) for a in [*coarse, accuracy]]
    # KOV's sufficient σ (Δ = 1) is the natural scale; the search starts from it.
    try:
        _, noise, _ = multilevel_search(probes, eps, start=kov_sigma, rtol=tol, ratios=ratios)
    except NotMonotoneError as exc:
        raise ValueError(f"family {_family_name(family, noise_field)} is not a noise family: {exc} "
                         "(pass noise_field, or a callable noise -> mechanism whose epsilon falls with noise)") from exc
    if noise is None:
        _raise_infeasible("target_epsilon", eps, next((p.last_error for p in probes if p.last_error), None))
    # Lower end of the bracket of s*: the largest evaluated s (any level) whose *lower* ε exceeds the
    # target (then ε_true(s) > target), refined on the second-finest level's lower end (cheap; certified).
    below = [s for p in probes for s, b in p.seen.items() if b is not None and b.lower > eps and s < noise]
    lo = max(below, default=0.0)
    if lo > 0.0 and noise / lo > 1.0 + tol:
        helper = probes[-2] if len(probes) > 1 else probes[-1]
        lower_fail, _ = refine(
            helper, eps, guess=math.sqrt(lo * noise), rtol=tol, fail=lo, passing=noise, side="lower"
        )
        lo = max(lo, lower_fail or 0.0)
    seen = probes[-1].seen[noise]
    if seen is None:  # noise passed, so it was evaluated
        raise RuntimeError("internal: the returned noise has no evaluation")
    return Calibration(
        noise=noise,
        bracket=Bound(min(lo, noise), noise),
        epsilon=seen,
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
    kk = check_int("k", k, minimum=1, maximum=K_MAX)
    d = check_positive("sensitivity", sensitivity)
    return 8.0 * kk * d * d * math.log(math.e + eps / dlt) / (eps * eps)


__all__ = [
    "Calibration",
    "kov_noise_variance",
    "kov_per_query_budget",
    "noise_for_target",
    "smallest_passing_noise",
]

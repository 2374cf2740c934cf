"""``optcomp.optimal.epsilon`` and ``optcomp.optimal.delta``: the package's two queries (its docstring has
the engines they route to), in their own module so that :mod:`._calibrate` reads them without importing the
package that imports it."""

from __future__ import annotations

import math
from collections.abc import Sequence

from optcomp._numerics import (
    Accuracy,
    Bound,
    EpsDelta,
    Progress,
    check_int,
    check_nonnegative,
    check_positive,
    check_probability,
    round_down,
    round_up,
)
from optcomp.optimal import _split
from optcomp.optimal._huge import (
    rest_target,
    shifted_delta,
    shifted_epsilon,
    split_huge,
    trivial_delta,
)
from optcomp.optimal._route import Goal, Method, delta_rest, epsilon_rest, with_extra
from optcomp.optimal._solve import Weights
from optcomp.optimal._spec import Spec, log_r_bracket, spec

#: Default work limit of the split engine: the largest composed window (lattice points) it builds.
DEFAULT_MAX_POINTS: int = 2**22


def _check_common(
    method: object, accuracy: Accuracy | None, tolerance: object, max_points: object
) -> tuple[Method, Goal, int]:
    if method not in ("auto", "exact", "grid", "mv"):
        raise ValueError(f"method must be one of 'auto', 'exact', 'grid', 'mv', got {method!r}")
    tol = None if tolerance is None else check_positive("tolerance", tolerance)
    mp = check_int("max_points", max_points, minimum=16)
    return method, Goal.of(accuracy, tol), mp


def epsilon(
    mechanisms: Sequence[EpsDelta],
    delta: float,
    *,
    accuracy: Accuracy | None = None,
    method: Method = "auto",
    tolerance: float | None = None,
    max_points: int = DEFAULT_MAX_POINTS,
    progress: Progress | None = None,
) -> Bound:
    """Optimal ε_g = OptComp((ε_1, δ_1), …, (ε_k, δ_k), δ_g) (KOV Thm III.3; MV Thms 1.4, 1.5, 1.7).

    Args:
        mechanisms: non-empty sequence of (ε_i, δ_i) pairs, or :func:`homogeneous`. Repeated pairs are
            pooled first (10⁷ copies of one pair is the homogeneous problem).
        delta: target δ_g ∈ [0, 1].
        accuracy: the library's accuracy knob: ``Accuracy.relative_width`` is the requested
            (upper − lower)/max(upper, 0.01) of the bracket, and never wider than ``DEFAULT_TOLERANCE``
            (the split engine refines Δ for both; exact engines are narrower anyway; this is the one
            translation of an ``Accuracy``, ``_route.Goal``), ``Accuracy.grid_step`` fixes the split engine's Δ (one pass).
            ``tail_mass`` and ``memory_cap`` do not apply here (the work limit is ``max_points``).
            Give ``accuracy`` or ``tolerance``, not both; neither means ``tolerance=DEFAULT_TOLERANCE``.
        method: ``"auto"`` (homogeneous binomial at any k, brute force for ≤ 16 non-zero ε_i, else the
            split engine — exact on a common lattice, else Δ chosen for the accuracy), ``"exact"``
            (raises instead of returning a bracket wider than float noise), ``"grid"`` (the split engine
            even where an exact engine applies), ``"mv"`` (MV Thm 1.7 with η = the width asked for).
        tolerance: expert override: a target bracket width in ε (split engine: Δ is chosen for it;
            ``"mv"``: η).
        max_points: work limit of the split engine (largest composed window) — the answer is returned at
            the finest Δ this allows when the accuracy needs more; ``"mv"`` refuses sizes whose
            estimated cost exceeds its own limit.
        progress: ``"mv"`` only: called as ``progress(done, total)`` after every step of its search.

    Returns:
        ``Bound``: ``upper`` certified (dominating pair, weights' float error as e^{±η}, FFT error, the
        closed-form root's own rounding, r with certified error); ``lower`` certified likewise.
        ``Bound(inf, inf)`` below the δ floor; ``Bound(0, 0)`` when ε_g = 0 meets δ_g.
    """
    method, goal, max_points = _check_common(method, accuracy, tolerance, max_points)
    delta_g = check_probability("delta", delta)
    s = spec(mechanisms)
    if method == "mv":
        from optcomp.optimal._mv import epsilon_mv

        return epsilon_mv(s, delta_g, _mv_eta(goal, s, delta_g), progress)
    target = log_r_bracket(delta_g, s)
    if target.kind == "below":
        return Bound(math.inf, math.inf)
    if target.kind == "zero":
        lo, hi = s.max_loss()
        return Bound(lo, hi)
    split = split_huge(s)
    target = rest_target(target, split)
    b = epsilon_rest(split.eps, split.counts, target, method, goal, max_points, split.extra_mass)
    return shifted_epsilon(b, split, target)


def _mv_eta(goal: Goal, s: Spec, delta_g: float) -> float:
    """MV Thm 1.7's η (additive in ε): the tolerance, or the relative width at the split engine's ε guess."""
    if goal.tolerance is not None:
        return goal.tolerance
    target = log_r_bracket(delta_g, s)
    log_r = target.log_hi if math.isfinite(target.log_hi) and s.eps.size else -1.0
    guess = _split.eps_guess(s.eps, s.counts, log_r) if s.eps.size and target.kind == "positive" else 0.0
    return goal.epsilon_tolerance(guess)


def delta(
    mechanisms: Sequence[EpsDelta],
    epsilon: float,
    *,
    accuracy: Accuracy | None = None,
    method: Method = "auto",
    tolerance: float | None = None,
    max_points: int = DEFAULT_MAX_POINTS,
) -> Bound:
    """Optimal δ_g of the adaptive composition at ε_g (KOV Thm III.3; MV Thms 1.4, 1.5).

    δ_g(ε_g) = 1 − Π(1 − δ_i)·(1 − D(ε_g)), D(ε_g) = E[(1 − e^{ε_g − L})_+] (module docstring).

    Args:
        mechanisms: non-empty sequence of (ε_i, δ_i) pairs (ε_i ≥ 0, δ_i ∈ [0, 1]), or :func:`homogeneous`.
        epsilon: ε_g ≥ 0 (``inf`` gives the floor 1 − Π(1 − δ_i)).
        accuracy: ``Accuracy.relative_width`` is the requested (upper − lower)/upper of the δ bracket
            (the split engine refines Δ for it); ``Accuracy.grid_step`` fixes Δ. Give ``accuracy`` or
            ``tolerance``, not both; neither means one pass at ``tolerance=DEFAULT_TOLERANCE``.
        method: as in :func:`epsilon`; ``"mv"`` computes ε only.
        tolerance: expert override: a width in ε from which the split engine's Δ is chosen (one pass).
        max_points: work limit of the split engine.

    Returns:
        ``Bound`` on δ_g: the D bracket of the engine's two envelopes, and Π(1 − δ_i) with its
        certified error, evaluated with expm1/log1p and rounded outwards.
    """
    method, goal, max_points = _check_common(method, accuracy, tolerance, max_points)
    eps_g = check_nonnegative("epsilon", epsilon, allow_inf=True)
    s = spec(mechanisms)
    if method == "mv":
        raise ValueError(
            "method='mv' (MV Thm 1.7) computes epsilon only; use method='auto', 'exact' or 'grid'"
        )
    ls = s.log_survive()
    if ls[2] == -math.inf:
        return Bound(1.0, 1.0)
    if math.isinf(eps_g) or eps_g >= s.max_loss()[1]:
        if ls[0] == 0.0 and ls[1] == 0.0:
            return Bound(0.0, 0.0)
        return Bound(max(0.0, round_down(-math.expm1(ls[2]))), min(1.0, round_up(-math.expm1(ls[1]))))
    split = split_huge(s)
    trivial = trivial_delta(eps_g, split, ls)
    if trivial is not None:
        return trivial

    def evaluate(up: Weights, lo_w: Weights) -> Bound:
        return shifted_delta(with_extra(up, split.extra_mass), lo_w, eps_g, split, ls)

    return delta_rest(split.eps, split.counts, method, goal, max_points, eps_g - split.shift_lo, evaluate)

"""The prepared plan: each statistic's components, the Gaussians' δ rule and the locked ε_i.

Free statistic i gets ε_i = s·w_i (w_i its weight, s the common scale the searches of
:mod:`optcomp.planner._search` look for); locked statistics keep their ε_i (``lock_epsilon``) or the least
ε_i that reaches their target accuracy (``lock_accuracy``, :func:`_lock_for_accuracy`). Each Gaussian
component of the black-box modes is the pair (ε_c, δ_c) with δ_c = share·δ/G (G the number of Gaussian and
discrete Gaussian components, ``share`` = ``gaussian_delta_share``); Laplace-family components have δ_c = 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from optcomp._inverse import SearchBudgetExceeded, solve
from optcomp._numerics import CALIBRATION_RTOL
from optcomp.planner._noise import (
    APPROXIMATE,
    BOUNDED_RANGE,
    Component,
    accuracy,
    components,
    gaussian_mus,
    noise_scale,
)
from optcomp.planner._schema import MAX_EPSILON, Plan, PlanError, Statistic, show

#: Relative precision of the common scale s: the returned s is certified feasible and within this
#: factor of the largest feasible one (as the accounting evaluates it).
SCALE_RTOL: float = CALIBRATION_RTOL
#: Relative precision of the least ε_i of an accuracy lock: its evaluations are cheap (noise and α, no
#: accounting), so it is pinned closely and the locked statistic takes no more of the budget than it needs.
_LOCK_RTOL: float = 1e-6
#: No free ε_i beyond this many times ``MAX_EPSILON`` is searched: a plan's certified ε is then above
#: any budget (a pure ε_i-DP release alone needs about ε_i; a Gaussian's nominal ε_i understates it).
_MAX_FREE_EPSILON_FACTOR = 2.0
#: Below s0·_FLOOR the free statistics are negligible: if the plan still fails, the locks alone do. An
#: accuracy lock met below ε·_FLOOR is given (about) that ε_i.
_FLOOR = 1e-6
#: The lock search ranges over ε_i in [2⁻²⁰⁰, 2²⁰⁰] (from 1): a target not met at 2²⁰⁰ is unreachable.
_LOCK_SPAN = 200


@dataclass(frozen=True, slots=True)
class _Prepared:
    plan: Plan
    comps: tuple[tuple[Component, ...], ...]
    locked: tuple[float | None, ...]  # ε_i of locked statistics, None for free ones
    gaussian_delta: float  # δ_c of each Gaussian component
    budget: float

    @property
    def max_scale(self) -> float:
        """Largest scale worth searching: the largest free ε_i reaches ``_MAX_FREE_EPSILON_FACTOR``·MAX_EPSILON."""
        free = [st.weight for lk, st in zip(self.locked, self.plan.statistics) if lk is None]
        return _MAX_FREE_EPSILON_FACTOR * MAX_EPSILON / max(free) if free else 0.0

    def epsilons(self, s: float) -> list[float]:
        return [lk if lk is not None else s * st.weight for lk, st in zip(self.locked, self.plan.statistics)]

    def pairs(self, eps: Sequence[float]) -> list[tuple[float, float]]:
        out = []
        for e, comps in zip(eps, self.comps):
            for c in comps:
                out.append((c.share * e, self.gaussian_delta if c.mechanism in APPROXIMATE else 0.0))
        return out

    @property
    def bounded_range(self) -> list[bool]:
        """Per pair of :meth:`pairs` (same order): whether that component is an ε_c-bounded-range step."""
        return [c.mechanism in BOUNDED_RANGE for comps in self.comps for c in comps]

    def scales(self, eps: Sequence[float]) -> list[tuple[float, ...]]:
        if self.gaussian_delta > 0.0:  # calibrate every Gaussian at once (memoised for noise_scale)
            gaussian_mus([c.share * e for e, comps in zip(eps, self.comps) for c in comps
                          if c.mechanism in APPROXIMATE and c.share * e > 0.0], self.gaussian_delta)
        return [tuple(noise_scale(c, c.share * e, self.gaussian_delta) for c in comps)
                for e, comps in zip(eps, self.comps)]


def _lock_for_accuracy(plan: Plan, index: int, stat: Statistic, comps: tuple[Component, ...], gdelta: float) -> float:
    """The least ε_i (to a relative ``_LOCK_RTOL``, on the safe side) at which α ≤ ``lock_accuracy``.

    α(ε_i) is non-increasing (each component's noise falls as its ε_c grows: b = copies·Δ/ε_c, σ = Δ/μ(ε_c)),
    so this is :func:`optcomp._inverse.solve` with the passing side above the root, on the verdict α ≤
    target of the exact α of :func:`optcomp.planner._noise.accuracy` (a verdict, not α itself: the discrete
    Laplace's α is an integer, flat over ranges of ε_i, where a secant cannot move; the solver doubles out
    and bisects). An ε_i below ε·``_FLOOR`` counts as failing: a Gaussian with δ_c > 0 has finite noise
    even as ε_c → 0, so a target may be met at every ε_i, and such an ε_i is negligible. The ε_i returned
    was evaluated and met the target.
    """
    target = stat.lock_accuracy
    assert target is not None
    floor = plan.epsilon * _FLOOR

    def meets(e: float) -> bool:
        if e < floor:
            return False
        return accuracy(plan, stat, comps, tuple(noise_scale(c, c.share * e, gdelta) for c in comps))[0] <= target

    where = f"statistic {show(stat.name)} (#{index + 1}): field 'lock_accuracy' {target!r}"
    try:
        _, passing = solve(meets, target, name=where, guess=1.0, rtol=_LOCK_RTOL, span=_LOCK_SPAN)
    except SearchBudgetExceeded as exc:
        raise PlanError(str(exc), field="lock_accuracy", index=index) from exc
    if passing is None:
        raise PlanError(f"{where} is unreachable at any epsilon_i (the best accuracy reached is above it)",
                        field="lock_accuracy", index=index)
    return passing


def prepare(plan: Plan) -> _Prepared:
    """Components, the Gaussian δ rule and the locked ε_i of ``plan`` (validation of combinations)."""
    comps = tuple(components(plan, s, i) for i, s in enumerate(plan.statistics))
    n_gauss = sum(1 for cs in comps for c in cs if c.mechanism in APPROXIMATE)
    if n_gauss and plan.delta == 0.0:
        used = sorted({c.mechanism for cs in comps for c in cs if c.mechanism in APPROXIMATE})
        raise PlanError(f"plan: field 'delta' must be > 0 when a statistic uses the {' or '.join(used)} mechanism, "
                        "got 0.0", field="delta")
    gdelta = plan.gaussian_delta_share * plan.delta / n_gauss if n_gauss else 0.0
    locked: list[float | None] = []
    for i, (stat, cs) in enumerate(zip(plan.statistics, comps)):
        if stat.lock_epsilon is not None:
            locked.append(stat.lock_epsilon)
        elif stat.lock_accuracy is not None:
            locked.append(_lock_for_accuracy(plan, i, stat, cs, gdelta))
        else:
            locked.append(None)
    budget = plan.epsilon - plan.reserve_epsilon
    return _Prepared(plan, comps, tuple(locked), gdelta, budget)


__all__ = ["SCALE_RTOL", "prepare"]

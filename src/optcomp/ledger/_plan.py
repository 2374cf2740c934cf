"""Plan mode: a fixed list of slots composed optimally at creation; each release dominated by its slot.

Parameters fixed before any output is seen are the non-adaptive setting, where optimal composition is
valid: through :func:`optcomp.compose`, which answers black boxes by :mod:`optcomp.optimal` (KOV Thm III.3,
MV Thm 1.5) and plans with Gaussian slots by its certified PLD (``docs/pld.md``). Creation refuses unless the
bracket's **upper end** is ≤ ε at δ. A release consumes a slot at or after the next unused one (skipping
is allowed: running fewer mechanisms post-processes the plan) and must be dominated by it:

* ``pure``/``approx`` slot (ε, δ): a ``pure`` or ``approx`` release with ε′ ≤ ε and δ′ ≤ δ (an
  (ε′, δ′)-DP mechanism is (ε, δ)-DP);
* ``gaussian`` slot (σ, Δ): a Gaussian with Δ′/σ′ ≤ Δ/σ (its privacy-loss law is then a post-processing
  of the slot's: Gaussian pairs are ordered by μ = Δ/σ: G_μ ≥ G_μ′ for μ ≤ μ′, DRS Thm 2.5 and their Thm 2.7 (Blackwell));
* ``zcdp``/``batch`` slots are refused (not a fixed mechanism to compose optimally).

The plan is part of the ledger's immutable configuration: it cannot change after creation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import optcomp
from optcomp.ledger._exact import exact
from optcomp.ledger._release import ApproxDP, GaussianRelease, PureDP, Release
from optcomp.mechanisms import EpsilonDelta, Gaussian


def _float_up(x: Fraction) -> float:
    f = float(x)
    return f if Fraction(f) >= x else math.nextafter(f, math.inf)


def _float_down(x: Fraction) -> float:
    f = float(x)
    return f if Fraction(f) <= x else math.nextafter(f, -math.inf)


def _pair(r: Release) -> tuple[float, float]:
    if isinstance(r, PureDP):
        return _float_up(r.epsilon), 0.0
    if isinstance(r, ApproxDP):
        return _float_up(r.epsilon), _float_up(r.delta)
    raise ValueError(f"plan slots must be pure, approx or gaussian releases, got {r.kind}")


def certify(slots: Sequence[Release], epsilon: Fraction, delta: Fraction) -> dict[str, Any]:
    """The plan's certified (lower, upper) ε at δ and the engine used; ``ValueError`` unless upper ≤ ε.

    Slot parameters are rounded to floats on the safe side first (ε, δ up; σ down, Δ up).
    """
    if not slots:
        raise ValueError("plan must have at least one slot")
    d = float(delta) if Fraction(float(delta)) <= delta else math.nextafter(float(delta), 0.0)
    if all(isinstance(s, (PureDP, ApproxDP)) for s in slots):
        boxes = optcomp.compose(*[EpsilonDelta(e, delta=dd) for e, dd in map(_pair, slots)])
        b = boxes.epsilon(d)
        engine = f"optcomp.compose, engine {boxes.engine()} (KOV Thm III.3 / MV Thm 1.5)"
    else:
        items: list[Any] = []
        for s in slots:
            if isinstance(s, GaussianRelease):
                items.append(Gaussian(_float_down(s.sigma), sensitivity=_float_up(s.sensitivity)))
            else:
                e, dd = _pair(s)
                items.append(EpsilonDelta(e, delta=dd))
        b = optcomp.compose(*items).epsilon(d)
        engine = "optcomp.compose PLD, certified upper end (docs/pld.md)"
    if not exact("plan epsilon", b.upper) <= epsilon:
        raise ValueError(f"plan does not fit the budget: its certified ε at δ = {float(delta):g} is "
                         f"[{b.lower:.10g}, {b.upper:.10g}] > epsilon = {float(epsilon):g}")
    return {"engine": engine, "lower": b.lower.hex(), "upper": b.upper.hex(), "delta": d.hex(),
            "version": optcomp.__dict__.get("__version__", "0.1.0"), "slots": len(slots)}


def dominated(release: Release, slot: Release) -> bool:
    """Whether ``release`` is dominated by ``slot`` (module docstring)."""
    if isinstance(slot, GaussianRelease):
        return isinstance(release, GaussianRelease) and release.mu_squared <= slot.mu_squared
    if isinstance(slot, (PureDP, ApproxDP)) and isinstance(release, (PureDP, ApproxDP)):
        return release.epsilon <= slot.epsilon and getattr(release, "delta", 0) <= getattr(slot, "delta", 0)
    return False



def slots_from_planner(plan: Any, result: Any) -> list[Release]:
    """The slots of a planner allocation (:func:`optcomp.planner.plan_all`, mode ``optimal``): one
    (ε_c, δ_c) black box per component of every statistic, exactly the pairs the planner certified."""
    from optcomp.planner import prepare

    pairs = prepare(plan).pairs([s.epsilon for s in result.statistics])
    return [ApproxDP(e, d) if d else PureDP(e) for e, d in pairs if e > 0 or d > 0]

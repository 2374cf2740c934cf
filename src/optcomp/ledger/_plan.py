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
* ``laplace`` slot (ε = Δ/b): a Laplace release with ε′ ≤ ε (Laplace pairs are ordered by ε the same way:
  a location family with a monotone likelihood ratio); a ``pure``/``approx`` slot also takes a Laplace
  release with ε′ ≤ ε (it is ε′-DP);
* ``discrete_gaussian`` slot: a discrete Gaussian release of the same σ whose worst integer shift is, sorted,
  coordinatewise at most the slot's (each coordinate's pair is monotone in |v_t| and composition keeps the
  order, ``docs/dgauss.md`` §1);
* ``zcdp`` slot ρ: any release with a zCDP bound ρ′ ≤ ρ (zCDP, Gaussian μ²/2, discrete Gaussian, Laplace
  ε + e^{−ε} − 1, pure ε²/2); ``renyi`` slot: any release whose Rényi bound at each of the slot's orders is at
  most the slot's there (a Rényi curve, or a release with a curve at every order). A plan with such a slot
  is certified by the Rényi conversion of its slots' curves (``docs/rdp.md``), which holds for *any*
  mechanisms with curves below them, so a release with a smaller curve is covered. There the pure slots
  are composed as randomized response RR(ε) (the worst ε-DP pair: every ε-DP mechanism is a post-processing
  of it, KOV Thm II.5, so its curve is the largest), and an (ε, δ > 0) slot is refused by name (it has no
  Rényi curve);
* ``br`` slot (an ε-bounded-range step, the planner's quantile): a ``br`` release with ε′ ≤ ε (ε′-BR is
  ε-BR); a ``pure``/``approx`` slot also takes a ``br`` release with ε′ ≤ ε (it is ε′-DP). A plan with a
  ``br`` slot is certified by the adaptive BR recursion in slot order (``docs/selection.md`` §2), which is
  the order releases consume slots in; in a Rényi-conversion plan it composes as randomized response
  RR(ε) (ε-BR is ε-DP);
* ``batch`` slots are refused (a plan in a plan is one longer plan).

The plan is part of the ledger's immutable configuration: it cannot change after creation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import optcomp
from optcomp.ledger._choices import BoundedRangeRelease
from optcomp.ledger._costs import laplace_rdp, laplace_zcdp, renyi_at
from optcomp.ledger._currency import rr_rdp
from optcomp.ledger._exact import exact
from optcomp.ledger._release import (
    ApproxDP,
    DiscreteGaussianRelease,
    GaussianRelease,
    LaplaceRelease,
    PureDP,
    Release,
    RenyiRelease,
    ZCDPRelease,
)
from optcomp.mechanisms import (
    BoundedRange,
    EpsilonDelta,
    Gaussian,
    Laplace,
    RandomizedResponse,
    Renyi,
    ZeroConcentrated,
)


def _float_up(x: Fraction) -> float:
    f = float(x)
    return f if Fraction(f) >= x else math.nextafter(f, math.inf)


def _float_down(x: Fraction) -> float:
    f = float(x)
    return f if Fraction(f) <= x else math.nextafter(f, -math.inf)


_SLOT_KINDS = "pure, approx, gaussian, laplace, discrete_gaussian, br, zcdp or renyi"


def _pair(r: Release) -> tuple[float, float]:
    if isinstance(r, PureDP):
        return _float_up(r.epsilon), 0.0
    if isinstance(r, ApproxDP):
        return _float_up(r.epsilon), _float_up(r.delta)
    raise ValueError(f"plan slots must be {_SLOT_KINDS} releases, got {r.kind}")


def _renyi_slot(r: RenyiRelease) -> Renyi:
    """The slot's curve as a :class:`~optcomp.mechanisms.Renyi` item: each order rounded *down* to a double
    (D_α is non-decreasing in α, so a bound at α holds at any smaller order; orders that meet keep the
    smaller bound) and each bound rounded up."""
    points: dict[float, float] = {}
    for a, e in zip(r.orders, r.epsilons, strict=True):
        a_down, e_up = _float_down(a), _float_up(e)
        points[a_down] = min(e_up, points.get(a_down, math.inf))
    if min(points) <= 1.0:
        raise ValueError(f"renyi slot: the order {float(r.orders[0])!r} is within a rounding of 1; state it at a "
                         "larger order")
    orders = sorted(points)
    return Renyi(tuple(orders), tuple(points[a] for a in orders))


def _slot_item(s: Release, curves: bool) -> Any:
    """The mechanism item a slot composes as (every parameter rounded to a double on the safe side);
    ``curves``: the plan goes through the Rényi conversion (it has a zcdp or renyi slot)."""
    if isinstance(s, GaussianRelease):
        return Gaussian(_float_down(s.sigma), sensitivity=_float_up(s.sensitivity))
    if isinstance(s, LaplaceRelease):
        return Laplace(_float_down(s.scale), sensitivity=_float_up(s.sensitivity))
    if isinstance(s, DiscreteGaussianRelease):
        return s.mechanism()
    if isinstance(s, BoundedRangeRelease):
        return RandomizedResponse(_float_up(s.epsilon)) if curves else BoundedRange(_float_up(s.epsilon))
    if isinstance(s, ZCDPRelease):
        return ZeroConcentrated(_float_up(s.rho))
    if isinstance(s, RenyiRelease):
        return _renyi_slot(s)
    e, d = _pair(s)
    if curves and d > 0:
        raise ValueError(f"a plan with zcdp or renyi slots is certified by the Rényi conversion of its slots' "
                         f"curves, and the (ε, δ) slot ε = {e:g}, δ = {d:g} has none (δ > 0 allows an infinite "
                         "Rényi divergence); declare that slot's mechanism (gaussian, laplace, …) instead")
    return RandomizedResponse(e) if curves else EpsilonDelta(e, delta=d)


_ENGINE_WORDS = {
    "renyi": "optcomp.compose, Rényi conversion of the slots' curves, certified upper end (docs/rdp.md)",
    "lattice": "optcomp.compose, exact lattice engine, certified upper end (docs/dgauss.md)",
    "adaptive": "optcomp.compose, adaptive bounded-range recursion, certified upper end (docs/selection.md)",
}


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
        curves = any(isinstance(s, (ZCDPRelease, RenyiRelease)) for s in slots)
        composition = optcomp.compose(*[_slot_item(s, curves) for s in slots])
        b = composition.epsilon(d)
        engine = _ENGINE_WORDS.get(composition.engine(), "optcomp.compose PLD, certified upper end (docs/pld.md)")
    if not exact("plan epsilon", b.upper) <= epsilon:
        raise ValueError(f"plan does not fit the budget: its certified ε at δ = {float(delta):g} is "
                         f"[{b.lower:.10g}, {b.upper:.10g}] > epsilon = {float(epsilon):g}")
    return {"engine": engine, "lower": b.lower.hex(), "upper": b.upper.hex(), "delta": d.hex(),
            "version": optcomp.__dict__.get("__version__", "0.1.0"), "slots": len(slots)}


def zcdp_bound(release: Release) -> Fraction | None:
    """A ρ with ``release`` ρ-zCDP (exact or rounded up), or None: zCDP ρ; Gaussian μ²/2 (Bun–Steinke Prop
    1.6); discrete Gaussian ‖v‖²/(2σ²) (CKS Prop 5); Laplace ε + e^{−ε} − 1 (Harrison–Manurangsi); pure ε²/2
    (Bun–Steinke Prop 1.4)."""
    if isinstance(release, (ZCDPRelease, DiscreteGaussianRelease, BoundedRangeRelease)):
        return release.rho
    if isinstance(release, GaussianRelease):
        return release.mu_squared / 2
    if isinstance(release, LaplaceRelease):
        return laplace_zcdp(release.epsilon)
    if isinstance(release, PureDP):
        return release.epsilon**2 / 2
    return None


def renyi_bound(release: Release, alpha: Fraction) -> Fraction | None:
    """An upper bound on D_α of ``release`` (exact or rounded up), or None: a Rényi curve's implied bound;
    the exact curves of randomized response (any ε-DP release) and Laplace; αρ of a zCDP bound."""
    if isinstance(release, RenyiRelease):
        return renyi_at(release.orders, release.epsilons, alpha)
    if isinstance(release, PureDP):
        return rr_rdp(release.epsilon, alpha)
    if isinstance(release, LaplaceRelease):
        return laplace_rdp(release.epsilon, alpha)
    rho = zcdp_bound(release)
    return None if rho is None else alpha * rho


def _shift_dominated(release: DiscreteGaussianRelease, slot: DiscreteGaussianRelease) -> bool:
    try:
        mine, theirs = release.mechanism().worst, slot.mechanism().worst
    except ValueError:  # an undetermined worst shift: no one shift stands for the release
        return False
    return len(mine) <= len(theirs) and all(a <= b for a, b in zip(mine, theirs, strict=False))


def dominated(release: Release, slot: Release) -> bool:
    """Whether ``release`` is dominated by ``slot`` (module docstring)."""
    if isinstance(slot, GaussianRelease):
        return isinstance(release, GaussianRelease) and release.mu_squared <= slot.mu_squared
    if isinstance(slot, BoundedRangeRelease):
        return isinstance(release, BoundedRangeRelease) and release.epsilon <= slot.epsilon
    if isinstance(slot, (PureDP, ApproxDP)) and isinstance(release, (PureDP, ApproxDP, LaplaceRelease,
                                                                      BoundedRangeRelease)):
        return release.epsilon <= slot.epsilon and getattr(release, "delta", 0) <= getattr(slot, "delta", 0)
    if isinstance(slot, LaplaceRelease):
        return isinstance(release, LaplaceRelease) and release.epsilon <= slot.epsilon
    if isinstance(slot, DiscreteGaussianRelease):
        return (isinstance(release, DiscreteGaussianRelease) and release.sigma == slot.sigma
                and _shift_dominated(release, slot))
    if isinstance(slot, ZCDPRelease):
        rho = zcdp_bound(release)
        return rho is not None and rho <= slot.rho
    if isinstance(slot, RenyiRelease):
        bounds = [renyi_bound(release, a) for a in slot.orders]
        return all(b is not None and b <= e for b, e in zip(bounds, slot.epsilons, strict=True))
    return False



def slots_from_planner(plan: Any, result: Any) -> list[Release]:
    """The slots of a planner allocation (:func:`optcomp.planner.plan_all`, mode ``optimal``): one
    (ε_c, δ_c) black box per component of every statistic (an ε_c-BR step for a quantile), exactly the
    steps the planner certified, in plan order."""
    from optcomp.planner import prepare

    p = prepare(plan)
    pairs = p.pairs([s.epsilon for s in result.statistics])
    return [BoundedRangeRelease(e) if br else ApproxDP(e, d) if d else PureDP(e)
            for (e, d), br in zip(pairs, p.bounded_range, strict=True) if e > 0 or d > 0]

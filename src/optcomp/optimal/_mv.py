"""Murtagh–Vadhan Thm 1.7 as published: binary search over ε* with Dyer's knapsack DP (MV Lemmas 5.1–5.3).

β = η/(k(1 + ε̄) + 1), ε0 = ln(1 + β), a_i = ⌈ε_i(1/β + 1)⌉, ε'_i = a_i ε0 ≥ ε_i; binary search for the
least integer a* with OptComp((ε'_i, δ_i)…, δ_g) ≤ a*·ε0 (Lemma 5.2).

Lemma 5.2's test, inequality (5.1), divided by Π(1 + e^{ε'_i}), is a difference of two probabilities:
with B = ⌊(Σa_i − a*)/2⌋,

    P(Σ_{i∈T} a_i ≤ B | i ∈ T w.p. 1 − p_i)  −  e^{a* ε0} · P(Σ_{i∈T} a_i ≤ B | i ∈ T w.p. p_i)  ≤  r,

(p_i = e^{ε'_i}/(1 + e^{ε'_i})), each probability computed by Dyer's table F(r, s) (Lemma 5.1) on
probabilities in [0, 1] (no overflow at any Σε_i; the factor e^{a* ε0} is applied in log space). Each
DP step is a convex combination of non-negative numbers (relative error ≤ 3u per step): the test uses
γ = 3(k + 2)u in the conservative direction ("passes" for the upper end, "fails" for the lower end).

Cost O(k·Σa_i·log Σa_i) = O(k³ ε̄(1 + ε̄)/η · log(…)); :func:`mv_cost_seconds` estimates it up front and
sizes above ``MV_MAX_SECONDS`` are refused with a ValueError.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from optcomp._numerics import SMALLEST_SUBNORMAL, Bound, Progress, round_down, round_up
from optcomp._rounding import rounding_error, widen_down, widen_up
from optcomp.optimal._solve import log1mexp_scalar
from optcomp.optimal._spec import Spec, Target, log_r_bracket

#: Refuse ``method="mv"`` when its estimated running time exceeds this (seconds).
MV_MAX_SECONDS: float = 120.0
#: Estimated cost of one DP cell update (seconds), plus a per-item overhead.
_CELL_SECONDS = 3e-9
_ITEM_SECONDS = 4e-6
_TINY = SMALLEST_SUBNORMAL


def _params(eps: np.ndarray, counts: np.ndarray, eta: float) -> tuple[float, float, np.ndarray]:
    k = float(np.sum(counts))
    bar = float(np.sum(eps * counts)) / k
    beta = eta / (k * (1.0 + bar) + 1.0)
    eps0 = math.log1p(beta)
    a = np.ceil(eps * (1.0 / beta + 1.0))
    return beta, eps0, a


def mv_cost_seconds(s: Spec, eta: float) -> float:
    """Estimated running time of :func:`epsilon_mv` (two binary searches of two DPs each)."""
    if s.eps.size == 0:
        return 0.0
    _, _, a = _params(s.eps, s.counts, eta)
    total = float(np.sum(a * s.counts))
    k = float(np.sum(s.counts))
    tests = 2.0 * (math.log2(total + 2.0) + 1.0)
    return tests * 2.0 * k * (_CELL_SECONDS * (total / 2.0 + 1.0) + _ITEM_SECONDS)


def _dyer(a: list[int], pi: list[float], budget: int) -> float:
    """P(Σ_{i∈T} a_i ≤ B), i ∈ T independently w.p. π_i (MV Lemma 5.1 on probabilities, one row kept)."""
    f = np.ones(budget + 1)  # F(0, s) = 1: the empty sum is ≤ s
    for ai, p in zip(a, pi):
        if ai <= budget:
            f[ai:] = (1.0 - p) * f[ai:] + p * f[: budget + 1 - ai]
            f[:ai] *= 1.0 - p
        else:
            f *= 1.0 - p
    return float(f[budget])


def _test(
    a: list[int],
    p_plus: list[float],
    p_minus: list[float],
    eps0: float,
    a_star: int,
    log_r: float,
    upper: bool,
) -> bool:
    """Lemma 5.2: True if OptComp(ε', δ_g) ≤ a*·ε0 is certain (upper) / not certainly false (lower)."""
    n = sum(a)
    if a_star >= n:
        return True  # ε* ≥ Σε′_i = max L: D(ε*) = 0 ≤ r
    budget = (n - a_star) // 2
    units = 3.0 * (len(a) + 2)  # Dyer's sums: 3 roundings per term (relative)
    fm = _dyer(a, p_minus, budget)
    fp = _dyer(a, p_plus, budget)
    slack = len(a) * _TINY
    if upper:
        lta = math.log(widen_up(fm, units) + slack) if widen_up(fm, units) + slack > 0 else -math.inf
        ltb = widen_down(a_star * eps0, 4) + (
            math.log(max(widen_down(fp, units) - slack, 0.0)) if widen_down(fp, units) > slack else -math.inf
        )
    else:
        lta = math.log(max(widen_down(fm, units) - slack, 0.0)) if widen_down(fm, units) > slack else -math.inf
        ltb = widen_up(a_star * eps0, 4) + math.log(widen_up(fp, units) + slack)
    if ltb >= lta:
        return True
    log_lhs = lta + log1mexp_scalar(ltb - lta)
    return (
        log_lhs <= log_r - rounding_error(8.0, abs(log_lhs) + 1.0)
        if upper
        else log_lhs <= log_r + rounding_error(8.0, abs(log_lhs) + 1.0)
    )


def _search(
    a: list[int],
    p_plus: list[float],
    p_minus: list[float],
    eps0: float,
    log_r: float,
    upper: bool,
    tick: Callable[[], None],
) -> int:
    lo, hi = 0, sum(a)
    while lo < hi:
        mid = (lo + hi) // 2
        ok = _test(a, p_plus, p_minus, eps0, mid, log_r, upper)
        tick()
        if ok:
            hi = mid
        else:
            lo = mid + 1
    return lo


def epsilon_mv(s: Spec, delta_g: float, eta: float, progress: Progress | None) -> Bound:
    """The MV Thm 1.7 algorithm with its guarantee as a Bound (module docstring).

    * upper = a*·ε0 (rounded up): OptComp(ε_i) ≤ OptComp(ε'_i) ≤ a*·ε0 (Thm 1.7, first inequality).
    * lower: with c = Σ β(ε_i + 1) ≥ Σ(ε'_i − ε_i), Lemma 5.3 gives OptComp(ε'_i, e^{c/2}δ_g) − c ≤
      OptComp(ε_i, δ_g); a second search at e^{c/2}δ_g (certified "fails") gives lower = (a′ − 1)ε0 − c.
    """
    if not eta < 1.0:
        raise ValueError(f"tolerance must be in (0, 1) for method='mv' (MV Thm 1.7 eta), got {eta!r}")
    target = log_r_bracket(delta_g, s)
    if target.kind == "below":
        return Bound(math.inf, math.inf)
    if s.eps.size == 0:
        return Bound(0.0, 0.0)
    cost = mv_cost_seconds(s, eta)
    if cost > MV_MAX_SECONDS:
        raise ValueError(
            f"method='mv' (MV Thm 1.7) would take about {cost:.3g} s for k={s.n_items}, tolerance={eta!r} "
            f"(more than {MV_MAX_SECONDS:g} s; cost grows like k^3/eta): use method='auto' (the split engine)"
        )
    beta, eps0, a_arr = _params(s.eps, s.counts, eta)
    a = [int(x) for x, c in zip(a_arr.tolist(), s.counts.tolist()) for _ in range(int(c))]
    e_prime = np.repeat(a_arr * eps0, s.counts)
    p_plus = (1.0 / (1.0 + np.exp(-e_prime))).tolist()
    p_minus = (1.0 / (1.0 + np.exp(e_prime))).tolist()
    total_steps = 2 * (math.ceil(math.log2(sum(a) + 1)) + 1)
    done = [0]

    def tick() -> None:
        done[0] += 1
        if progress is not None:
            progress(done[0], total_steps)

    if target.kind == "zero":
        log_r_up = -math.inf
    elif target.kind == "ambiguous":
        return Bound(0.0, math.inf)
    else:
        log_r_up = target.log_lo
    a_star = _search(a, p_plus, p_minus, eps0, log_r_up, True, tick)
    upper = round_up(a_star * eps0)
    c = beta * float(np.sum(s.counts * (1.0 + s.eps)))
    scaled = delta_g * math.exp(c / 2.0)
    if scaled >= 1.0:
        return Bound(0.0, upper)
    t2: Target = log_r_bracket(scaled, s)
    if t2.kind in ("below", "zero"):
        return Bound(0.0, upper)
    a_lo = _search(a, p_plus, p_minus, eps0, t2.log_hi, False, tick)
    if a_lo <= 0:
        return Bound(0.0, upper)
    lower = max(0.0, round_down((a_lo - 1) * eps0 - c))
    if progress is not None:
        progress(total_steps, total_steps)
    return Bound(min(lower, upper), upper)

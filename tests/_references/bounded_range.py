"""Bounded-range (BR) references in mpmath, computed from the definitions without optcomp code.

* :func:`br_pair`: the worst-case pair (P_t, Q_t) of an ε-BR step (Durfee–Rogers 2019):
  p_t = (1 − e^{t−ε})/(1 − e^{−ε}), q_t = (e^{−t} − e^{−ε})/(1 − e^{−ε}), losses t (A) and t − ε (B).
* :func:`nonadaptive_closed_form`: Dong–Durfee–Rogers 2020 Thm 3 for k ε₀-BR steps fixed in advance,
  max over ℓ of Σ_i C(k, i) q_t^{k−i}(1 − q_t)^i [e^{kt − iε₀} − e^ε]_+, t = clip((ε + (ℓ+1)ε₀)/(k+1), 0, ε₀).
* :func:`nonadaptive_scan`: the same objective maximised over a fine grid of t (checks the theorem's claim
  that the candidates hold the maximum).
* :func:`adaptive_tree_optimum`: the adaptive optimum over strategies that pick t from a grid at every node
  of the outcome tree, by *exhaustive enumeration of the strategies* (no dynamic programming): a strategy
  assigns a grid t to each history; its value at ε is Σ over leaves (P(leaf) − e^ε Q(leaf))_+.
* :func:`nonadaptive_grid_optimum`: the maximum over t-vectors fixed in advance, every t_j from a grid
  (brute force over all vectors), heterogeneous ε_j allowed.
* :func:`fixed_then_br_delta`: δ(ε) of a fixed discrete pair followed (or preceded) by one adaptive BR step
  whose t is chosen per history from a fine grid (the tree for mixed compositions).
* :func:`kl_max`, :func:`br_renyi`: the KL divergence maximised over t and D_α(P_t‖Q_t) at one t.
"""

from __future__ import annotations

import itertools

import mpmath
from mpmath import mpf


def br_pair(epsilon: float, t: object) -> tuple[mpf, mpf]:
    """(p_t, q_t) = (P_t(A), Q_t(A)) of the ε-BR worst-case pair at t ∈ [0, ε]."""
    e, tt = mpf(epsilon), mpf(t)
    den = 1 - mpmath.exp(-e)
    return (1 - mpmath.exp(tt - e)) / den, (mpmath.exp(-tt) - mpmath.exp(-e)) / den


def _hockey(pairs: list[tuple[mpf, mpf]], epsilon: float) -> mpf:
    """Σ over outcomes (P − e^ε Q)_+."""
    e = mpmath.exp(mpf(epsilon))
    return mpmath.fsum(max(p - e * q, 0) for p, q in pairs)


def nonadaptive_value(epsilon0: float, k: int, epsilon: float, t: object) -> mpf:
    """δ(ε) of k copies of (P_t, Q_t): Σ_i C(k,i) q^{k−i}(1−q)^i [e^{kt − iε₀} − e^ε]_+."""
    e0, eps, tt = mpf(epsilon0), mpf(epsilon), mpf(t)
    _, q = br_pair(epsilon0, tt)
    terms = []
    for i in range(k + 1):
        hinge = mpmath.exp(k * tt - i * e0) - mpmath.exp(eps)
        if hinge > 0:
            terms.append(mpmath.binomial(k, i) * q ** (k - i) * (1 - q) ** i * hinge)
    return mpmath.fsum(terms)


def nonadaptive_closed_form(epsilon0: float, k: int, epsilon: float) -> mpf:
    """DDR20 Thm 3 (module docstring), at the ambient precision."""
    e0, eps = mpf(epsilon0), mpf(epsilon)
    best = mpf(0)
    for ell in range(k + 1):
        t = min(max((eps + (ell + 1) * e0) / (k + 1), mpf(0)), e0)
        best = max(best, nonadaptive_value(epsilon0, k, epsilon, t))
    return best


def nonadaptive_scan(epsilon0: float, k: int, epsilon: float, points: int = 2000) -> mpf:
    """max over t on a grid of ``points`` + 1 values in [0, ε₀] of the same objective."""
    e0 = mpf(epsilon0)
    return max(nonadaptive_value(epsilon0, k, epsilon, e0 * j / points) for j in range(points + 1))


def _leaves(epsilons: list[float], strategy: dict[tuple[int, ...], object]) -> list[tuple[mpf, mpf]]:
    """(P, Q) of every leaf of the outcome tree under a strategy history → t."""
    out: list[tuple[mpf, mpf]] = []

    def walk(history: tuple[int, ...], p: mpf, q: mpf) -> None:
        j = len(history)
        if j == len(epsilons):
            out.append((p, q))
            return
        pa, qa = br_pair(epsilons[j], strategy[history])
        walk((*history, 0), p * pa, q * qa)
        walk((*history, 1), p * (1 - pa), q * (1 - qa))

    walk((), mpf(1), mpf(1))
    return out


def adaptive_tree_optimum(epsilons: list[float], epsilon: float, grids: list[list[object]]) -> mpf:
    """max over all adaptive strategies with t_j ∈ ``grids[j]`` at every history of step j (k ≤ 3), by
    enumerating the strategies."""
    histories = [list(itertools.product((0, 1), repeat=j)) for j in range(len(epsilons))]
    slots = [(h, j) for j in range(len(epsilons)) for h in histories[j]]
    best = mpf(0)
    for choice in itertools.product(*[grids[j] for _, j in slots]):
        strategy = {h: t for (h, _), t in zip(slots, choice, strict=True)}
        best = max(best, _hockey(_leaves(epsilons, strategy), epsilon))
    return best


def nonadaptive_grid_optimum(epsilons: list[float], epsilon: float, grids: list[list[object]]) -> mpf:
    """max over t-vectors fixed in advance, t_j ∈ ``grids[j]``, by brute force."""
    best = mpf(0)
    for ts in itertools.product(*grids):
        strategy = {h: ts[len(h)] for j in range(len(epsilons)) for h in itertools.product((0, 1), repeat=j)}
        best = max(best, _hockey(_leaves(epsilons, strategy), epsilon))
    return best


def fixed_then_br_delta(p: list[float], q: list[float], epsilon0: float, epsilon: float, fixed_first: bool,
                        points: int = 400) -> mpf:
    """δ(ε) of a fixed pair (p, q) (finite outcomes, both positive) and one ε₀-BR step, adaptive: with the fixed
    step first, t is chosen per outcome of it (each from a grid of ``points`` + 1 values); with the BR step
    first, one t before the fixed step."""
    grid = [mpf(epsilon0) * j / points for j in range(points + 1)]
    e = mpmath.exp(mpf(epsilon))
    fixed = [(mpf(a), mpf(b)) for a, b in zip(p, q, strict=True)]

    def br_after(pf: mpf, qf: mpf) -> mpf:  # the best t for one history
        best = mpf(0)
        for t in grid:
            pa, qa = br_pair(epsilon0, t)
            v = max(pf * pa - e * qf * qa, 0) + max(pf * (1 - pa) - e * qf * (1 - qa), 0)
            best = max(best, v)
        return best

    if fixed_first:
        return mpmath.fsum(br_after(pf, qf) for pf, qf in fixed)
    best = mpf(0)
    for t in grid:
        pa, qa = br_pair(epsilon0, t)
        v = mpmath.fsum(max(x * pf - e * y * qf, 0) for x, y in ((pa, qa), (1 - pa, 1 - qa)) for pf, qf in fixed)
        best = max(best, v)
    return best


def kl_max(epsilon: float) -> mpf:
    """max_t KL(P_t‖Q_t) = ε/(e^ε − 1) − 1 + ln((e^ε − 1)/ε)."""
    e = mpf(epsilon)
    return e / mpmath.expm1(e) - 1 + mpmath.log(mpmath.expm1(e) / e)


def br_renyi(epsilon: float, alpha: float, t: object) -> mpf:
    """D_α(P_t‖Q_t) = ln[p^α q^{1−α} + (1 − p)^α (1 − q)^{1−α}]/(α − 1)."""
    p, q = br_pair(epsilon, t)
    a = mpf(alpha)
    return mpmath.log(p**a * q ** (1 - a) + (1 - p) ** a * (1 - q) ** (1 - a)) / (a - 1)


def laplace_renyi(epsilon: float, alpha: float) -> mpf:
    """D_α of the Laplace mechanism (Mironov 2017, Prop. 6)."""
    e, a = mpf(epsilon), mpf(alpha)
    return mpmath.log(a / (2 * a - 1) * mpmath.exp((a - 1) * e) + (a - 1) / (2 * a - 1) * mpmath.exp(-a * e)) / (a - 1)


def rr_renyi(epsilon: float, alpha: float) -> mpf:
    """D_α of randomized response RR(ε)."""
    e, a = mpf(epsilon), mpf(alpha)
    p = mpmath.exp(e) / (1 + mpmath.exp(e))
    return mpmath.log(p**a * (1 - p) ** (1 - a) + (1 - p) ** a * p ** (1 - a)) / (a - 1)


def family_renyi_max(epsilon: float, alpha: float, iterations: int = 200) -> mpf:
    """sup_t D_α(P_t‖Q_t) by golden-section search over t ∈ [0, ε] (E_{Q_t}[(P_t/Q_t)^α] is unimodal in t:
    u^{α−1}(a − b·u) in u = e^t)."""
    lo, hi = mpf(0), mpf(epsilon)
    g = (mpmath.sqrt(5) - 1) / 2
    for _ in range(iterations):
        a, b = hi - g * (hi - lo), lo + g * (hi - lo)
        if br_renyi(epsilon, alpha, a) < br_renyi(epsilon, alpha, b):
            lo = a
        else:
            hi = b
    return br_renyi(epsilon, alpha, (lo + hi) / 2)


def uniform_grids(epsilons: list[float], cells: list[int]) -> list[list[mpf]]:
    """The t-grids {ε_j·i/cells_j : i = 0 … cells_j} of each step, exact in mpmath."""
    return [[mpf(e) * i / c for i in range(c + 1)] for e, c in zip(epsilons, cells, strict=True)]


def kl_scan(epsilon: float, points: int = 400) -> mpf:
    """max over t on a grid (interior points) of KL(P_t‖Q_t)."""
    best = mpf(0)
    for j in range(1, points):
        p, q = br_pair(epsilon, mpf(epsilon) * j / points)
        best = max(best, p * mpmath.log(p / q) + (1 - p) * mpmath.log((1 - p) / (1 - q)))
    return best


def laplace_kl(epsilon: float) -> mpf:
    """KL divergence of the Laplace mechanism, ε + e^{−ε} − 1."""
    e = mpf(epsilon)
    return e + mpmath.expm1(-e)


def rr_kl(epsilon: float) -> mpf:
    """KL divergence of randomized response, ε·tanh(ε/2)."""
    e = mpf(epsilon)
    return e * mpmath.tanh(e / 2)


# --- the exponential mechanism for a quantile, run exactly (the planner's quantile statistic) -----------------


def quantile_counts(records: tuple[int, ...], candidates: int) -> list[int]:
    """c(y_j) = #{records below candidate j}: a record in slot s ∈ [0, G] lies between candidates s − 1 and s."""
    return [sum(1 for r in records if r < j + 1) for j in range(candidates)]


def quantile_utilities(records: tuple[int, ...], candidates: int, q: float) -> list[float]:
    """u(y_j) = −|c(y_j) − q·n| (Smith 2011's quantile utility over a public candidate grid)."""
    n = len(records)
    return [-abs(c - q * n) for c in quantile_counts(records, candidates)]


def exponential_mechanism_law(utilities: list[float], temperature: float) -> list[mpmath.mpf]:
    """P(y_j) = exp(u_j/b)/Σ exp(u_i/b) (McSherry–Talwar with b = 2Δ/ε), at ``MPMATH_DPS`` digits."""
    b = mpmath.mpf(temperature)
    w = [mpmath.exp(mpmath.mpf(u) / b) for u in utilities]
    z = mpmath.fsum(w)
    return [x / z for x in w]


def log_ratio_width(p: list[mpmath.mpf], q: list[mpmath.mpf]) -> float:
    """max_y ln(p/q) − min_y ln(p/q): the bounded-range width of a pair on a finite range."""
    logs = [mpmath.log(a / c) for a, c in zip(p, q)]
    return float(max(logs) - min(logs))


def excess_tail(p: list[mpmath.mpf], errors: list[float], alpha: float) -> float:
    """P[error − min error > α] under the law ``p`` (rounded to a float after an exact-enough sum)."""
    best = min(errors)
    return float(mpmath.fsum(pj for pj, e in zip(p, errors) if e - best > alpha))


def worst_case_tail(candidates: int, alpha: float, temperature: float) -> float:
    """(G − 1)e^{−α/b}/(1 + (G − 1)e^{−α/b}): the tail with every other candidate at excess just above α."""
    w = (candidates - 1) * mpmath.exp(-mpmath.mpf(alpha) / temperature)
    return float(w / (1 + w))

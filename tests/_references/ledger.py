"""References for the privacy ledger (``optcomp.ledger``): randomized-response transcripts enumerated leaf by
leaf for adaptive (filter) composition, and the per-currency admission thresholds and counts recomputed from
their closed forms (Bun–Steinke Prop 1.3, Canonne–Kamath–Steinke Prop 12, Mironov Prop 5, Dong–Roth–Su
Cor. 2.13, the binomial form of KOV Thm III.3).

The tree functions work at the ambient mpmath precision; callers pick it with ``dps`` where offered.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import mpmath

from tests.tolerances import MPMATH_DPS

#: An adaptive RR tree: (ε, subtree after output 0, subtree after output 1), or None for a leaf.
Tree = tuple[Fraction, Any, Any] | None


def rr_keep_probability(eps: Fraction) -> mpmath.mpf:
    """P[RR(ε) reports the true bit] = e^ε/(1 + e^ε)."""
    e = mpmath.mpf(eps.numerator) / eps.denominator
    return 1 / (1 + mpmath.exp(-e))


def rr_tree_leaves(tree: Tree, p: mpmath.mpf, q: mpmath.mpf) -> list[tuple[mpmath.mpf, mpmath.mpf]]:
    """(P, Q) of every transcript of an adaptive RR tree: P with the individual's bit 1, Q with it 0."""
    if tree is None:
        return [(p, q)]
    e, on0, on1 = tree
    t = rr_keep_probability(e)
    return rr_tree_leaves(on1, p * t, q * (1 - t)) + rr_tree_leaves(on0, p * (1 - t), q * t)


def hockey_stick_both_ways(pairs: list[tuple[mpmath.mpf, mpmath.mpf]], eps: float) -> tuple[mpmath.mpf, mpmath.mpf]:
    """δ(ε) of a finite pair of laws in both directions: Σ (P − e^ε Q)_+ and Σ (Q − e^ε P)_+."""
    k = mpmath.exp(mpmath.mpf(eps))
    return (mpmath.fsum(max(0, p - k * q) for p, q in pairs), mpmath.fsum(max(0, q - k * p) for p, q in pairs))


def rr_tree_deltas(tree: Tree, eps: float) -> tuple[mpmath.mpf, mpmath.mpf]:
    """(forward, reverse) δ(ε) of an adaptive RR tree's transcript, every leaf enumerated."""
    return hockey_stick_both_ways(rr_tree_leaves(tree, mpmath.mpf(1), mpmath.mpf(1)), eps)


def rr_path_delta(path: Sequence[Fraction], eps: float) -> mpmath.mpf:
    """Optimal δ(ε) of the non-adaptive composition RR(ε_1) ⊗ … (exact: all 2^k outputs)."""
    tree: Tree = None
    for e in reversed(path):
        tree = (e, tree, tree)
    return hockey_stick_both_ways(rr_tree_leaves(tree, mpmath.mpf(1), mpmath.mpf(1)), eps)[0]


def rr_worst_tree(
    menu: Sequence[Fraction], depth: int, eps: float, admits: Callable[[list[Fraction]], bool]
) -> mpmath.mpf:
    """max over every RR tree of depth ≤ ``depth`` whose every path the filter ``admits``, of the
    transcript's δ(ε) (forward; the reverse is the same maximum by relabelling outputs). The maximum
    splits over nodes because δ is a sum over leaves and each node's choice is free."""
    k = mpmath.exp(mpmath.mpf(eps))

    def v(hist: list[Fraction], p: mpmath.mpf, q: mpmath.mpf) -> mpmath.mpf:
        best = max(mpmath.mpf(0), p - k * q)
        if len(hist) < depth:
            for e in menu:
                if admits([*hist, e]):
                    t = rr_keep_probability(e)
                    best = max(best, v([*hist, e], p * t, q * (1 - t)) + v([*hist, e], p * (1 - t), q * t))
        return best

    return v([], mpmath.mpf(1), mpmath.mpf(1))


def admitted_counts(ei: Fraction, orders: Sequence[float]) -> dict[str, int]:
    """How many RR(ε_i) queries each ledger currency admits at (ε, δ) = (1, 1e-6), from the closed forms at
    ``MPMATH_DPS`` digits: basic ⌊1/ε_i⌋; approx-zCDP ρ* = (√(L + ε) − √L)², L = ln(1/δ) (Bun–Steinke
    Prop 1.3) over ρ_i = ε_i²/2; zCDP the CKS Prop 12 conversion ε = ρα + log(1 − 1/α) − (log δ + log α)/(α − 1)
    at its best α; RDP the same offset at the best order of ``orders`` over RR's Rényi divergence (Mironov
    Prop 5); GDP μ* with δ_μ*(1) = δ over μ_i = 2√2 erfinv(2p − 1) (Dong–Roth–Su Cor. 2.13, RR ↦ G_{μ_i} at
    its touching point); plan the largest k with δ_k(1) ≤ δ of the k-fold RR (KOV Thm III.3, binomial form)."""
    with mpmath.workdps(MPMATH_DPS):
        eps, delta = mpmath.mpf(1), mpmath.mpf(10) ** -6
        e = mpmath.mpf(ei.numerator) / ei.denominator
        L = -mpmath.log(delta)
        out = {"basic": int(1 / ei)}
        out["approx-zcdp"] = int(mpmath.floor((mpmath.sqrt(L + eps) - mpmath.sqrt(L)) ** 2 / (e * e / 2)))

        def offset(a: mpmath.mpf) -> mpmath.mpf:
            return mpmath.log(1 - 1 / a) - (mpmath.log(delta) + mpmath.log(a)) / (a - 1)

        a_star = mpmath.findroot(lambda a: mpmath.diff(lambda x: (eps - offset(x)) / x, a), 20)
        out["zcdp"] = int(mpmath.floor((eps - offset(a_star)) / a_star / (e * e / 2)))
        p = rr_keep_probability(ei)

        def rr(a: mpmath.mpf) -> mpmath.mpf:
            return mpmath.log(p**a * (1 - p) ** (1 - a) + (1 - p) ** a * p ** (1 - a)) / (a - 1)

        out["rdp"] = max(int(mpmath.floor((eps - offset(mpmath.mpf(a))) / rr(mpmath.mpf(a))))
                         for a in orders if eps > offset(mpmath.mpf(a)))
        mu_i = 2 * mpmath.sqrt(2) * mpmath.erfinv(2 * p - 1)
        mu = mpmath.findroot(lambda m: mpmath.ncdf(-eps / m + m / 2) - mpmath.e * mpmath.ncdf(-eps / m - m / 2) - delta,
                             (mpmath.mpf("0.01"), mpmath.mpf(5)), solver="bisect")
        out["gdp"] = int(mpmath.floor(mu**2 / mu_i**2))

        def plan_delta(k: int) -> mpmath.mpf:  # k-fold RR(ε_i) at ε = 1: E_P[(1 − e^{1 − L})_+], L = ε_i(k − 2j)
            return mpmath.fsum(mpmath.binomial(k, j) * p ** (k - j) * (1 - p) ** j
                               * max(0, 1 - mpmath.exp(eps - e * (k - 2 * j))) for j in range(k + 1))

        lo, hi = int(1 / ei), 20 * int(1 / ei)  # plan_delta(lo) = 0 ≤ δ < plan_delta(hi); δ grows with k
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if plan_delta(mid) <= delta else (lo, mid)
        out["plan"] = lo
    return out


def approx_zcdp_rho_star(epsilon: int, delta_log10: int, rtol_log10: int) -> tuple[Fraction, Fraction]:
    """[ρ*(1 − r), ρ*] as 45-digit decimal Fractions, r = 10^rtol_log10: ρ* = (√(L + ε) − √L)², L = ln(1/δ),
    δ = 10^delta_log10, the largest ρ with ρ-zCDP ⇒ (ε, δ)-DP (Bun–Steinke Prop 1.3), at ``MPMATH_DPS`` digits."""
    with mpmath.workdps(MPMATH_DPS):
        eps, delta = mpmath.mpf(epsilon), mpmath.mpf(10) ** delta_log10
        L = -mpmath.log(delta)
        rho_star = (mpmath.sqrt(L + eps) - mpmath.sqrt(L)) ** 2
        lower = rho_star * (1 - mpmath.mpf(10) ** rtol_log10)
        return Fraction(mpmath.nstr(lower, 45)), Fraction(mpmath.nstr(rho_star, 45))


def gdp_delta_at_mu_squared(mu_squared: Fraction, epsilon: int, delta_log10: int, rtol_log10: int) -> tuple[
    mpmath.mpf, mpmath.mpf, mpmath.mpf
]:
    """(δ(1 − r), δ_μ(ε), δ) at ``MPMATH_DPS`` digits, μ = √(μ²) from an exact Fraction, δ = 10^delta_log10,
    r = 10^rtol_log10: δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (Dong–Roth–Su Cor. 2.13)."""
    with mpmath.workdps(MPMATH_DPS):
        eps, delta = mpmath.mpf(epsilon), mpmath.mpf(10) ** delta_log10
        mu = mpmath.sqrt(mpmath.mpf(mu_squared.numerator) / mu_squared.denominator)
        d = mpmath.ncdf(-eps / mu + mu / 2) - mpmath.exp(eps) * mpmath.ncdf(-eps / mu - mu / 2)
        return delta * (1 - mpmath.mpf(10) ** rtol_log10), d, delta


def at_precision(dps: int) -> Any:
    """A context in which the tree functions above (and arithmetic on their results) run at ``dps`` digits."""
    return mpmath.workdps(dps)

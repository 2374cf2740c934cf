"""Private selection references: laws of K by their pmf series, and the exact best-of-K law (mpmath).

* K's pmf as the papers define it (Papernot–Steinke Def. 1: truncated negative binomial D_{η,γ},
  logarithmic, geometric; Poisson; binomial), its pgf and mean summed term by term (not the closed forms
  optcomp evaluates);
* the exact output law of best-of-K on outputs y₁ < … < y_n with masses p (dataset D) and q (neighbour D'):
  P_sel(y_i) = G(F_i) − G(F_{i−1}), G the pgf, F the CDF along the order (design note §3), its δ(ε) in both
  directions, and the worst order (all permutations; an analyst may score candidates in any order);
* Papernot–Steinke Thm 2 / Thm 6 evaluated as written, for given RDP inputs.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

import mpmath

from tests.tolerances import MPMATH_DPS

#: Series terms below this are dropped (their sum is far below a double's resolution).
_SERIES_EPS = mpmath.mpf(10) ** -60


def k_pmf(kind: str, params: dict[str, float], k: int) -> mpmath.mpf:
    """P[K = k] of the law ``kind``: "tnb" (η, γ; η = 0 logarithmic), "poisson" (μ), "binomial" (n, p)."""
    with mpmath.workdps(MPMATH_DPS):
        if kind == "poisson":
            mu = mpmath.mpf(params["mu"])
            return mpmath.exp(-mu) * mu**k / mpmath.factorial(k)
        if kind == "binomial":
            n, p = int(params["n"]), mpmath.mpf(params["p"])
            return mpmath.binomial(n, k) * p**k * (1 - p) ** (n - k) if 0 <= k <= n else mpmath.mpf(0)
        eta, gamma = mpmath.mpf(params["eta"]), mpmath.mpf(params["gamma"])
        if k < 1:
            return mpmath.mpf(0)
        if eta == 0:
            return (1 - gamma) ** k / (k * mpmath.log(1 / gamma))
        prod = mpmath.fprod((ell + eta) / (ell + 1) for ell in range(k))
        return (1 - gamma) ** k / (gamma ** (-eta) - 1) * prod


def _terms(kind: str, params: dict[str, float]) -> list[mpmath.mpf]:
    """P[K = k] for k = 0, 1, … until the terms fall below ``_SERIES_EPS`` (all n + 1 for a binomial); the
    truncated negative binomial's product Π(ℓ + η)/(ℓ + 1) is carried from one k to the next."""
    if kind == "binomial":
        return [k_pmf(kind, params, k) for k in range(int(params["n"]) + 1)]
    if kind == "poisson":
        out: list[mpmath.mpf] = []
        k = 0
        while k <= 5 or out[-1] >= _SERIES_EPS:
            out.append(k_pmf(kind, params, k))
            k += 1
        return out
    with mpmath.workdps(MPMATH_DPS):
        eta, gamma = mpmath.mpf(params["eta"]), mpmath.mpf(params["gamma"])
        out = [mpmath.mpf(0)]
        prod, power, k = mpmath.mpf(1), mpmath.mpf(1), 1
        while k <= 5 or abs(out[-1]) >= _SERIES_EPS:
            power *= 1 - gamma
            if eta == 0:
                out.append(power / (k * mpmath.log(1 / gamma)))
            else:
                prod *= (k - 1 + eta) / k
                out.append(power / mpmath.expm1(-eta * mpmath.log(gamma)) * prod)
            k += 1
        return out


def k_pgf(kind: str, params: dict[str, float]) -> Callable[[object], mpmath.mpf]:
    """x ↦ E[x^K] in closed form at 50 digits (the papers' formulas: ((1 − cx)^{−η} − 1)/(γ^{−η} − 1),
    log(1 − cx)/log γ, e^{μ(x−1)}, (1 − p + px)^n); :func:`k_pgf_series` is the pmf's series it is checked
    against (``tests/test_selection.py``)."""

    def pgf(x: object) -> mpmath.mpf:
        with mpmath.workdps(MPMATH_DPS):
            xm = mpmath.mpf(x)  # type: ignore[arg-type]
            if kind == "poisson":
                return mpmath.exp(mpmath.mpf(params["mu"]) * (xm - 1))
            if kind == "binomial":
                p = mpmath.mpf(params["p"])
                return (1 - p + p * xm) ** int(params["n"])
            eta, gamma = mpmath.mpf(params["eta"]), mpmath.mpf(params["gamma"])
            c = 1 - gamma
            if eta == 0:
                return mpmath.log(1 - c * xm) / mpmath.log(gamma)
            # (y^{−η} − 1) as expm1(−η log y): exact in relative terms for every η (also η ≈ 0)
            return mpmath.expm1(-eta * mpmath.log(1 - c * xm)) / mpmath.expm1(-eta * mpmath.log(gamma))

    return pgf


def k_pgf_series(kind: str, params: dict[str, float]) -> Callable[[object], mpmath.mpf]:
    """x ↦ Σ_k P[K = k]·x^k, summed from the pmf."""
    terms = _terms(kind, params)

    def pgf(x: object) -> mpmath.mpf:
        with mpmath.workdps(MPMATH_DPS):
            xm = mpmath.mpf(x)  # type: ignore[arg-type]
            return mpmath.fsum(t * xm**k for k, t in enumerate(terms))

    return pgf


def k_dpgf(kind: str, params: dict[str, float]) -> Callable[[object], mpmath.mpf]:
    """x ↦ φ'(x) = Σ_k k·P[K = k]·x^{k−1}, summed from the pmf."""
    terms = _terms(kind, params)

    def dpgf(x: object) -> mpmath.mpf:
        with mpmath.workdps(MPMATH_DPS):
            xm = mpmath.mpf(x)  # type: ignore[arg-type]
            return mpmath.fsum(k * t * xm ** (k - 1) for k, t in enumerate(terms) if k > 0)

    return dpgf


def k_mean(kind: str, params: dict[str, float]) -> mpmath.mpf:
    """E[K] = Σ k·P[K = k]."""
    with mpmath.workdps(MPMATH_DPS):
        return mpmath.fsum(k * t for k, t in enumerate(_terms(kind, params)))


def best_of_k_delta(p: Sequence[float], q: Sequence[float], pgf: Callable[[object], mpmath.mpf], epsilon: float) -> mpmath.mpf:
    """δ(ε) of best-of-K on outputs with masses ``p``/``q`` in the order given: max over both directions of
    Σ_i (P_sel(y_i) − e^ε Q_sel(y_i))₊ with P_sel(y_i) = G(F_i) − G(F_{i−1}) (⊥ has equal mass G(0) both ways)."""
    with mpmath.workdps(MPMATH_DPS):
        e = mpmath.exp(mpmath.mpf(epsilon))
        fp = [mpmath.mpf(0)]
        fq = [mpmath.mpf(0)]
        for a, b in zip(p, q):
            fp.append(fp[-1] + mpmath.mpf(a))
            fq.append(fq[-1] + mpmath.mpf(b))
        sp = [pgf(fp[i + 1]) - pgf(fp[i]) for i in range(len(p))]
        sq = [pgf(fq[i + 1]) - pgf(fq[i]) for i in range(len(q))]
        forward = mpmath.fsum(max(a - e * b, 0) for a, b in zip(sp, sq))
        backward = mpmath.fsum(max(b - e * a, 0) for a, b in zip(sp, sq))
        return max(forward, backward)


def worst_order_delta(p: Sequence[float], q: Sequence[float], pgf: Callable[[object], mpmath.mpf], epsilon: float) -> mpmath.mpf:
    """The largest :func:`best_of_k_delta` over every order of the outputs (n ≤ 7): the pgf is evaluated
    once per subset of outputs (the prefix sets of every order)."""
    n = len(p)
    with mpmath.workdps(MPMATH_DPS):
        e = mpmath.exp(mpmath.mpf(epsilon))
        gp: dict[frozenset[int], mpmath.mpf] = {}
        gq: dict[frozenset[int], mpmath.mpf] = {}
        for size in range(n + 1):
            for subset in itertools.combinations(range(n), size):
                key = frozenset(subset)
                gp[key] = pgf(mpmath.fsum(mpmath.mpf(p[i]) for i in subset))
                gq[key] = pgf(mpmath.fsum(mpmath.mpf(q[i]) for i in subset))
        best = mpmath.mpf(0)
        for order in itertools.permutations(range(n)):
            forward, backward = mpmath.mpf(0), mpmath.mpf(0)
            prefix: frozenset[int] = frozenset()
            for i in order:
                nxt = prefix | {i}
                sp, sq = gp[nxt] - gp[prefix], gq[nxt] - gq[prefix]
                forward += max(sp - e * sq, 0)
                backward += max(sq - e * sp, 0)
                prefix = nxt
            best = max(best, forward, backward)
        return best


def randomized_response_pair(epsilon: float) -> tuple[list[float], list[float]]:
    """RR(ε)'s two outputs: p = (e^ε, 1)/(1 + e^ε) and q = (1, e^ε)/(1 + e^ε) (floats of the 50-digit values)."""
    with mpmath.workdps(MPMATH_DPS):
        e = mpmath.exp(mpmath.mpf(epsilon))
        a, b = e / (1 + e), 1 / (1 + e)
        return [float(a), float(b)], [float(b), float(a)]


def ps_theorem2(orders: Sequence[float], rdp: Sequence[float], eta: float, gamma: float, mean: float) -> list[mpmath.mpf]:
    """Papernot–Steinke Thm 2 as written: ε'(λ) = ε(λ) + (1+η)·min_λ̂[(1 − 1/λ̂)ε(λ̂) + log(1/γ)/λ̂]
    + log(E[K])/(λ − 1), λ̂ over ``orders``."""
    with mpmath.workdps(MPMATH_DPS):
        hat = min((1 - 1 / mpmath.mpf(a)) * mpmath.mpf(r) + mpmath.log(1 / mpmath.mpf(gamma)) / mpmath.mpf(a)
                  for a, r in zip(orders, rdp))
        return [mpmath.mpf(r) + (1 + mpmath.mpf(eta)) * hat + mpmath.log(mpmath.mpf(mean)) / (mpmath.mpf(a) - 1)
                for a, r in zip(orders, rdp)]


def ps_theorem6(orders: Sequence[float], rdp: Sequence[float], mu: float, delta_hat: Sequence[float]) -> list[mpmath.mpf]:
    """Papernot–Steinke Thm 6 as written: ε'(λ) = ε(λ) + μδ̂ + log(μ)/(λ − 1)."""
    with mpmath.workdps(MPMATH_DPS):
        m = mpmath.mpf(mu)
        return [mpmath.mpf(r) + m * mpmath.mpf(d) + mpmath.log(m) / (mpmath.mpf(a) - 1)
                for a, r, d in zip(orders, rdp, delta_hat)]


def gaussian_rdp(orders: Sequence[float], mu: float) -> list[mpmath.mpf]:
    """ρ(λ) = λμ²/2 of the Gaussian mechanism (Mironov 2017, Prop. 7)."""
    with mpmath.workdps(MPMATH_DPS):
        return [mpmath.mpf(a) * mpmath.mpf(mu) ** 2 / 2 for a in orders]


def poisson_pure_epsilon(epsilon0: object, mean: object) -> mpmath.mpf:
    """ε₀ + μ·tanh(ε₀/2): best of Poisson(μ) runs of a pure ε₀-DP base (``docs/private-selection.md`` §3), from
    exact decimal strings or rationals at the ambient precision."""
    e, mu = mpmath.mpf(str(epsilon0)), mpmath.mpf(str(mean))
    return e + mu * mpmath.tanh(e / 2)

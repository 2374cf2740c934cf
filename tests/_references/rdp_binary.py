"""An independent reference for the optimal conversion of a Rényi curve: the best **two-point** law.

Why two points are enough. Let (P, Q) be any pair meeting the curve (D_α ≤ r(α) both directions) and
S = {dP/dQ > e^ε} its optimal set, so δ(ε) = P(S) − e^ε Q(S). The indicator of S is a post-processing:
(Bern(P(S)), Bern(Q(S))) meets the curve too (data processing, each direction) and has the same
P(S) − e^ε Q(S). So the largest δ(ε) over all pairs is the largest p − e^ε q over Bernoulli pairs
(p, q) meeting the curve — a problem in two numbers, solved here by a different method from optcomp's
(no linear program, no dual): the feasible set {(p, q)} is convex (E_Q[(P/Q)^α] is a perspective, jointly
convex), so for fixed q the feasible p form an interval [·, p*(q)] found by bisection, and p*(q) is
concave in q: δ*(ε) = max_q p*(q) − e^ε q and ε*(δ) = log max_q (p*(q) − δ)/q are one-dimensional
unimodal searches (golden section in log q).

Float64 for the search (log-space moments with log1p, no cancellation), then the pair found re-checked
in mpmath at 50 digits (finite curves: at every stated order; zCDP: at 4,000 orders from 1 + 1e-9 to
1e5 and the KL limit, with the curve tightened by ``margin`` during the search so that the pair found
clears it). Not a certificate for every order of a zCDP curve (a dense sweep), and the search is a float
search: an **independent reference** for the audit, not part of the library.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mpmath
import numpy as np

_LOGIT_HI = 745.0  # p = 1 − e^{−745}: the largest p the bisection tries
_BISECT = 200
_GOLDEN = 160
_ZCDP_ORDERS = 1.0 + np.geomspace(1e-9, 1e5, 4000)
_ZCDP_SEARCH = 1.0 + np.geomspace(1e-8, 1e4, 600)


@dataclass(frozen=True)
class Curve:
    """Either ρ-zCDP (``rho``) or a finite curve (``orders``, ``values``), stated both directions."""

    rho: float | None = None
    orders: tuple[float, ...] = ()
    values: tuple[float, ...] = ()

    def search(self, margin: float) -> tuple[np.ndarray, np.ndarray]:
        """Orders and caps C = (α − 1) r(α)·(1 − margin) of the float search."""
        if self.rho is not None:
            a = _ZCDP_SEARCH
            return a, (a - 1.0) * a * self.rho * (1.0 - margin)
        a = np.array(self.orders, dtype=np.float64)
        v = np.array(self.values, dtype=np.float64)
        keep = np.isfinite(v)
        return a[keep], (a[keep] - 1.0) * v[keep] * (1.0 - margin)


def _log_moment(lp: np.ndarray, l1p: np.ndarray, lq: np.ndarray, l1q: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """log(p^α q^{1−α} + (1−p)^α (1−q)^{1−α}) from logs (broadcast)."""
    return np.logaddexp(alpha * lp + (1.0 - alpha) * lq, alpha * l1p + (1.0 - alpha) * l1q)


def _feasible(p_logit: np.ndarray, lq: float, l1q: float, alphas: np.ndarray, caps: np.ndarray,
              rho: float | None = None) -> np.ndarray:
    """Whether Bern(p), Bern(q) meet D_α ≤ C/(α − 1) in both directions at every order (p by its logit).
    zCDP (``rho``): the worst order of the grid is refined by golden section in log(α − 1) (the ratio
    (α − 1)D_α/(ρα(α − 1)) peaks sharply between grid points), and both KLs are checked."""
    lp = -np.logaddexp(0.0, -p_logit)
    l1p = -np.logaddexp(0.0, p_logit)
    a = alphas[:, None]
    fwd = _log_moment(lp[None, :], l1p[None, :], lq, l1q, a)
    rev = _log_moment(np.full_like(lp, lq)[None, :], np.full_like(lp, l1q)[None, :], lp[None, :], l1p[None, :], a)
    ok = np.all((fwd <= caps[:, None]) & (rev <= caps[:, None]), axis=0)
    if rho is None:
        return ok
    scale = caps[0] / ((alphas[0] - 1.0) * alphas[0])  # ρ(1 − margin)
    for j in np.flatnonzero(ok):
        x, y, z, w = float(lp[j]), float(l1p[j]), lq, l1q
        for u, v, s, t in ((x, y, z, w), (z, w, x, y)):  # both directions
            p, _q = math.exp(u), math.exp(s)
            kl = p * (u - s) + (1.0 - p) * (v - t) if p < 1.0 else math.inf
            if kl > scale:
                ok[j] = False
                break
            ratio = (_log_moment(np.array(u), np.array(v), s, t, alphas) / caps)
            i = int(np.argmax(ratio))
            lo = math.log(alphas[max(i - 1, 0)] - 1.0)
            hi = math.log(alphas[min(i + 1, alphas.size - 1)] - 1.0)

            def r(la: float, u: float = u, v: float = v, s: float = s, t: float = t) -> float:
                al = 1.0 + math.exp(la)
                return float(_log_moment(np.array(u), np.array(v), s, t, np.array(al))) / (scale * al * (al - 1.0))

            if _golden_max(r, lo, hi, 60)[1] > 1.0:
                ok[j] = False
                break
    return ok


def p_star(lq: float, alphas: np.ndarray, caps: np.ndarray, rho: float | None = None) -> float:
    """log of the largest p ≥ q with (Bern(p), Bern(q)) meeting the caps (bisection on logit p)."""
    q = math.exp(lq)
    l1q = math.log1p(-q)
    lo = lq - l1q  # logit q: feasible (P = Q)
    hi = _LOGIT_HI
    if _feasible(np.array([hi]), lq, l1q, alphas, caps, rho)[0]:
        return -math.log1p(math.exp(-hi))
    for _ in range(_BISECT):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if _feasible(np.array([mid]), lq, l1q, alphas, caps, rho)[0]:
            lo = mid
        else:
            hi = mid
    return -float(np.logaddexp(0.0, -lo))


def _golden_max(f, lo: float, hi: float, iters: int = _GOLDEN) -> tuple[float, float]:
    """(argmax, max) of a unimodal f on [lo, hi] (golden section)."""
    g = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = lo, hi
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(iters):
        if fc >= fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = f(d)
    return (c, fc) if fc >= fd else (d, fd)


@dataclass(frozen=True)
class Pair:
    """A Bernoulli pair (p, q) (P(S), Q(S)); value: p − e^ε q or ε, per the query."""

    p: float
    q: float
    value: float


def best_delta(curve: Curve, epsilon: float, *, margin: float = 1e-10, lq_min: float = -700.0) -> Pair:
    """The best two-point law's δ(ε) (float search), with the pair."""
    alphas, caps = curve.search(margin)
    e = math.exp(epsilon)

    def h(lq: float) -> float:
        return math.exp(p_star(lq, alphas, caps, curve.rho)) - e * math.exp(lq)

    lq, _ = _golden_max(h, lq_min, -1e-12)
    lp = p_star(lq, alphas, caps, curve.rho)
    p, q = math.exp(lp), math.exp(lq)
    return Pair(p, q, p - e * q)


def best_epsilon(curve: Curve, delta: float, *, margin: float = 1e-10, lq_min: float = -700.0) -> Pair:
    """The best two-point law's ε(δ) = log max_q (p*(q) − δ)/q (float search), with the pair."""
    alphas, caps = curve.search(margin)

    def g(lq: float) -> float:
        lp = p_star(lq, alphas, caps, curve.rho)
        p = math.exp(lp)
        # below the q where p*(q) passes δ, p* increases with q: a surrogate that keeps g unimodal
        return math.log(p - delta) - lq if p > delta else -1e6 + lp

    lq, val = _golden_max(g, lq_min, -1e-12)
    p, q = math.exp(p_star(lq, alphas, caps, curve.rho)), math.exp(lq)
    return Pair(p, q, max(val, 0.0))


# -- mpmath re-checks ------------------------------------------------------------------------------------


def mp_divergences(p: float, q: float, alpha: mpmath.mpf) -> tuple[mpmath.mpf, mpmath.mpf]:
    """(α − 1)·D_α both directions of the Bernoulli pair, 50 digits."""
    with mpmath.workdps(50):
        P, Q = mpmath.mpf(p), mpmath.mpf(q)
        fwd = mpmath.log(P**alpha * Q ** (1 - alpha) + (1 - P) ** alpha * (1 - Q) ** (1 - alpha))
        rev = mpmath.log(Q**alpha * P ** (1 - alpha) + (1 - Q) ** alpha * (1 - P) ** (1 - alpha))
        return fwd, rev


def mp_meets(curve: Curve, p: float, q: float) -> bool:
    """Whether the pair meets the curve, in mpmath (zCDP: a dense sweep of orders and both KLs)."""
    with mpmath.workdps(50):
        if curve.rho is not None:
            rho = mpmath.mpf(curve.rho)
            P, Q = mpmath.mpf(p), mpmath.mpf(q)
            kl = P * mpmath.log(P / Q) + (1 - P) * mpmath.log((1 - P) / (1 - Q))
            kl_rev = Q * mpmath.log(Q / P) + (1 - Q) * mpmath.log((1 - Q) / (1 - P))
            if kl > rho or kl_rev > rho:
                return False
            for a in _ZCDP_ORDERS.tolist():
                al = mpmath.mpf(a)
                fwd, rev = mp_divergences(p, q, al)
                cap = rho * al * (al - 1)
                if fwd > cap or rev > cap:
                    return False
            return True
        for a, v in zip(curve.orders, curve.values, strict=True):
            if not math.isfinite(v):
                continue
            al = mpmath.mpf(a)
            fwd, rev = mp_divergences(p, q, al)
            if fwd > (al - 1) * mpmath.mpf(v) or rev > (al - 1) * mpmath.mpf(v):
                return False
        return True


def mp_delta(p: float, q: float, epsilon: float) -> mpmath.mpf:
    """p − e^ε q at 50 digits (the pair's δ(ε) when positive)."""
    with mpmath.workdps(50):
        return max(mpmath.mpf(0), mpmath.mpf(p) - mpmath.exp(mpmath.mpf(epsilon)) * mpmath.mpf(q))


def mp_epsilon(p: float, q: float, delta: float) -> mpmath.mpf:
    """The pair's ε(δ) = log((p − δ)/q) at 50 digits (0 if p − δ ≤ q)."""
    with mpmath.workdps(50):
        num = mpmath.mpf(p) - mpmath.mpf(delta)
        return max(mpmath.mpf(0), mpmath.log(num / mpmath.mpf(q))) if num > 0 else mpmath.mpf(0)


# -- two-point certificates (optcomp.rdp.BinaryCertificate) re-checked --------------------------------------


def _row_value(kind: str, alpha: mpmath.mpf, cap: mpmath.mpf, p: mpmath.mpf, q: mpmath.mpf) -> mpmath.mpf:
    """One normalised row at (p, q): g(x, y)e^{−cap} (Rényi moment of order α) or kl(x‖y)/cap."""
    x, y = (p, q) if kind in ("fwd", "kl_fwd") else (q, p)
    if kind in ("fwd", "rev"):
        return (x**alpha * y ** (1 - alpha) + (1 - x) ** alpha * (1 - y) ** (1 - alpha)) * mpmath.exp(-cap)
    return (x * mpmath.log(x / y) + (1 - x) * mpmath.log((1 - x) / (1 - y))) / cap


def binary_lagrangian(cert: object, p: mpmath.mpf, q: mpmath.mpf) -> mpmath.mpf:
    """L(p, q) = p − e^ε q − Σ multiplier·(row − 1) of a two-point certificate, at 50 digits."""
    c = cert
    with mpmath.workdps(50):
        val = p - mpmath.exp(mpmath.mpf(c.epsilon)) * q  # type: ignore[attr-defined]
        for kind, alpha, cap, lam in c.rows:  # type: ignore[attr-defined]
            val -= mpmath.mpf(lam) * (_row_value(kind, mpmath.mpf(alpha), mpmath.mpf(cap), p, q) - 1)
        return val


def binary_certificate_value(cert: object) -> mpmath.mpf:
    """The certificate's bound recomputed at 50 digits: L(x₀) plus max over [0, 1]² of ∇L(x₀)·(x − x₀)
    (gradient by mpmath's numerical differentiation, an independent route to the derivatives)."""
    c = cert
    with mpmath.workdps(60):
        p0, q0 = mpmath.mpf(c.p0), mpmath.mpf(c.q0)  # type: ignore[attr-defined]
        val = binary_lagrangian(cert, p0, q0)
        dp = mpmath.diff(lambda t: binary_lagrangian(cert, t, q0), p0, h=p0 * mpmath.mpf(10) ** -20)
        dq = mpmath.diff(lambda t: binary_lagrangian(cert, p0, t), q0, h=q0 * mpmath.mpf(10) ** -20)
        rise = max(-dp * p0, dp * (1 - p0)) + max(-dq * q0, dq * (1 - q0))
        return val + rise


def binary_lagrangian_grid_max(cert: object, points: int = 60) -> mpmath.mpf:
    """max of L over a log-spaced grid of (p, q) in (0, 1)² around x₀ (a brute-force check of the claim that
    L's maximum over the square is at most the certificate's bound)."""
    c = cert
    with mpmath.workdps(50):
        p0, q0 = mpmath.mpf(c.p0), mpmath.mpf(c.q0)  # type: ignore[attr-defined]
        ps = sorted({p0 * mpmath.mpf(10) ** (k / 10) for k in range(-points // 2, points // 2) if p0 * mpmath.mpf(10) ** (k / 10) < 1})
        qs = sorted({q0 * mpmath.mpf(10) ** (k / 10) for k in range(-points // 2, points // 2) if q0 * mpmath.mpf(10) ** (k / 10) < 1})
        return max(binary_lagrangian(cert, p, q) for p in ps for q in qs)


#: Exported names (``tests._references``).
BinaryCurve = Curve
best_pair_delta = best_delta
best_pair_epsilon = best_epsilon
pair_delta = mp_delta
pair_epsilon = mp_epsilon
pair_meets = mp_meets

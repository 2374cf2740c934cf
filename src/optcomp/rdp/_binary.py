"""The optimal conversion through two-point laws: a float search, a witness and a Lagrangian certificate.

**Two points suffice** (``docs/rdp.md`` §5). For any pair (P, Q) meeting a Rényi curve in both directions,
let S = {dP/dQ > e^ε}: δ(ε) = P(S) − e^ε Q(S), and (Bern(P(S)), Bern(Q(S))) — the indicator of S, a
post-processing of the pair — meets the curve too (data processing, each order, each direction, KL too).
So the largest δ(ε) over every law with the curve is

    δ*(ε) = max { p − γq : (p, q) ∈ K },   γ = e^ε,

with K the Bernoulli pairs meeting it, a **convex** set: each row g(p, q) = p^α q^{1−α} +
(1 − p)^α (1 − q)^{1−α} ≤ e^{C_α} (C_α = (α − 1)·r(α); forward, and reverse with p, q swapped) is a sum of
perspectives of t ↦ t^α, jointly convex, and so are the KL rows kl(p‖q) ≤ K, kl(q‖p) ≤ K of zCDP curves.

* **Search** (floats, uncertified). For fixed q the feasible p form an interval around q whose right end
  p*(q) is found by bisection in logit p; p*(q) is concave (the upper boundary of a convex set), so
  max_q p*(q) − γq and max_q (p*(q) − δ)/q are unimodal in log q (golden section). zCDP curves hold every
  order: the search uses finitely many and exchanges — the order where the pair found exceeds the curve
  most is added — until none is exceeded by more than a small fraction.
* **Lower end**: the pair found with every cap tightened by 1 − η is a two-atom
  :class:`~optcomp.rdp.WitnessLaw` whose every claim is re-verified in interval arithmetic
  (:meth:`~optcomp.rdp.WitnessLaw.meets`; zCDP: at every α > 1).
* **Upper end**: Lagrangian duality. For multipliers λ ≥ 0 on the rows (each row divided by its
  right-hand side), L(p, q) = p − γq − Σλᵢ(gᵢ(p, q)/cᵢ − 1) is concave on [0, 1]² and p − γq ≤ L on K, so
  δ*(ε) ≤ max_{[0,1]²} L, and a concave function lies below its tangent plane at any interior x₀:

      max L ≤ L(x₀) + Σ_j max(−∂_jL(x₀)·x₀_j, ∂_jL(x₀)·(1 − x₀_j)).

  λ solves the KKT conditions at the pair found (non-negative least squares on the nearly active rows),
  x₀ maximises L (Newton in logit coordinates at ``_PRECISION`` bits, so ∇L(x₀) is negligible), and
  L(x₀), ∇L(x₀) are enclosed in ``mpmath.iv`` interval arithmetic with x₀ held exactly. The bound holds
  for **any** λ ≥ 0 and any x₀ (the KKT choice only makes it tight); zCDP curves use finitely many orders,
  a relaxation, so it is still an upper bound for the curve at every order.

Nothing here is trusted but the final enclosures: a search that misses only loosens the bracket, and any
failure (Newton not converging, an overflow) returns ``None`` so that the caller falls back to the linear
program (:mod:`._lp`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import mpmath
import numpy as np
from mpmath import iv
from scipy.optimize import nnls

from optcomp._numerics import FEW_ULPS, TINY_PAD, FloatArray
from optcomp._rounding import RDP_CERT_EXCESS, RDP_LOG_Q_TOP, RDP_SCAN_FIRST_GAP, next_up
from optcomp.rdp._witness import WitnessLaw

#: Bits of the Newton iteration and of the interval enclosures of the certificate.
_PRECISION = 240
#: Bisection steps of p*(q) in logit p (from logit q to ``_LOGIT_TOP``: float resolution is reached first).
_BISECT = 72
_LOGIT_TOP = 740.0
#: Golden-section steps over log q, the range searched, and the narrower range of a warm restart.
_GOLDEN = 64
_GOLDEN_WARM = 44
_LOG_Q_RANGE = (-700.0, RDP_LOG_Q_TOP)
_WARM_SPAN = 3.0
#: zCDP: first orders (α − 1 geometric over [1e-4, max(8(α̂ − 1), 16)], α̂ the closed form's order), the
#: exchange's scan of orders, its rounds, and the excess (relative to the tightened cap) it tolerates.
_FIRST_ORDERS = 40
_SCAN_ORDERS = 3072
_EXCHANGE_ROUNDS = 12
_EXCHANGE_SLACK = 0.25
_SCAN_NEAR = 0.99
_CERT_EXCESS = RDP_CERT_EXCESS
#: Rows whose relative slack at the pair found is below this are offered to the KKT least squares.
_ACTIVE_SLACK = 1e-5
_ACTIVE_MAX = 6
#: Newton: iterations, and the gradient size (relative to p + γq) at which it stops.
_NEWTON_STEPS = 80
_NEWTON_TOL = mpmath.mpf(2) ** -200


@dataclass(frozen=True, slots=True)
class Rows:
    """The constraints of the two-point problem.

    Attributes:
        orders: the orders α > 1 of the forward and reverse rows.
        caps: C_α = (α − 1)·r(α) at ``orders``, rounded up (≥ 0, finite).
        kl: the bound K on both KLs (zCDP: ρ), or ``None``.
    """

    orders: FloatArray
    caps: FloatArray
    kl: float | None

    def tightened(self, eta: float) -> Rows:
        """Every right-hand side multiplied by 1 − η (the witness's room)."""
        return Rows(self.orders, self.caps * (1.0 - eta), None if self.kl is None else self.kl * (1.0 - eta))


# -- the float search --------------------------------------------------------------------------------------


def _log_moments(lx: FloatArray, l1x: FloatArray, ly: float, l1y: float, orders: FloatArray) -> FloatArray:
    """log(x^α y^{1−α} + (1 − x)^α (1 − y)^{1−α}) for candidates x (columns) at ``orders`` (rows)."""
    a = orders[:, None]
    return np.asarray(np.logaddexp(a * lx[None, :] + (1.0 - a) * ly, a * l1x[None, :] + (1.0 - a) * l1y),
                      dtype=np.float64)


def _feasible(t: FloatArray, lq: float, l1q: float, rows: Rows) -> FloatArray:
    """Whether (Bern(p), Bern(q)) meets every row, for p = sigmoid(t) (a vector), in float."""
    lp = -np.logaddexp(0.0, -t)
    l1p = -np.logaddexp(0.0, t)
    c = rows.caps[:, None]
    with np.errstate(over="ignore", invalid="ignore"):
        fwd = _log_moments(lp, l1p, lq, l1q, rows.orders)
        a = rows.orders[:, None]
        rev = np.logaddexp(a * lq + (1.0 - a) * lp[None, :], a * l1q + (1.0 - a) * l1p[None, :])
        ok = np.all((fwd <= c) & (rev <= c), axis=0)
        if rows.kl is not None:
            p, q = np.exp(lp), math.exp(lq)
            kl_pq = p * (lp - lq) + (1.0 - p) * (l1p - l1q)
            kl_qp = q * (lq - lp) + (1.0 - q) * (l1q - l1p)
            ok &= (kl_pq <= rows.kl) & (kl_qp <= rows.kl)
    return np.asarray(ok, dtype=np.bool_)


def _p_star(lq: float, rows: Rows) -> float:
    """log p*(q): the largest p ≥ q with the pair meeting every row (bisection in logit p)."""
    l1q = math.log1p(-math.exp(lq))
    lo, hi = lq - l1q, _LOGIT_TOP
    if _feasible(np.array([hi]), lq, l1q, rows)[0]:
        lo = hi
    else:
        for _ in range(_BISECT):
            mid = 0.5 * (lo + hi)
            if not lo < mid < hi:
                break
            if _feasible(np.array([mid]), lq, l1q, rows)[0]:
                lo = mid
            else:
                hi = mid
    return -float(np.logaddexp(0.0, -lo))


def _golden_max(f: Callable[[float], float], lo: float, hi: float, steps: int) -> float:
    """The argmax of a unimodal ``f`` on [lo, hi] (golden section)."""
    g = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = lo, hi
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(steps):
        if fc >= fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = f(d)
    return c if fc >= fd else d


def _search(rows: Rows, objective: Callable[[float, float], float], warm: float | None) -> tuple[float, float]:
    """(log p, log q) maximising ``objective(log p*(q), log q)`` over log q (unimodal)."""
    lo, hi = _LOG_Q_RANGE
    steps = _GOLDEN
    if warm is not None:
        lo, hi, steps = max(lo, warm - _WARM_SPAN), min(hi, warm + _WARM_SPAN), _GOLDEN_WARM
    lq = _golden_max(lambda x: objective(_p_star(x, rows), x), lo, hi, steps)
    return _p_star(lq, rows), lq


def _worst_orders(lp: float, lq: float, rho: float, scale: float) -> FloatArray:
    """zCDP: the local maxima α of (α − 1)D_α/(ρα(α − 1)) (either direction) above 1 + ``_EXCHANGE_SLACK``·η,
    each refined by golden section in log(α − 1); ``scale`` = 1 − η/… the fraction of ρ allowed."""
    l1p, l1q = math.log1p(-math.exp(lp)), math.log1p(-math.exp(lq))
    dinf = max(abs(lp - lq), abs(l1p - l1q))
    top = max(2.0 * dinf / max(rho, TINY_PAD), 4.0)
    logs = np.linspace(math.log(RDP_SCAN_FIRST_GAP), math.log(top), _SCAN_ORDERS)
    alphas = 1.0 + np.exp(logs)
    out: list[float] = []
    for x, x1, y, y1 in ((lp, l1p, lq, l1q), (lq, l1q, lp, l1p)):
        with np.errstate(over="ignore", invalid="ignore"):
            ratio = _log_moments(np.array([x]), np.array([x1]), y, y1, alphas)[:, 0] / (rho * scale * alphas * (alphas - 1.0))
        ratio = np.where(np.isfinite(ratio), ratio, np.inf)
        left = np.concatenate([[True], ratio[1:] > ratio[:-1]])
        right = np.concatenate([ratio[:-1] >= ratio[1:], [True]])
        for i in np.flatnonzero(left & right):
            if ratio[i] <= _SCAN_NEAR:  # a peak between scan points is refined if the scan comes near 1
                continue

            def r(s: float, x: float = x, x1: float = x1, y: float = y, y1: float = y1) -> float:
                a = 1.0 + math.exp(s)
                v = _log_moments(np.array([x]), np.array([x1]), y, y1, np.array([a]))[0, 0]
                return float(v) / (rho * scale * a * (a - 1.0))

            lo_i, hi_i = max(int(i) - 1, 0), min(int(i) + 1, logs.size - 1)
            s = _golden_max(r, float(logs[lo_i]), float(logs[hi_i]), 40)
            if r(s) > 1.0:
                out.append(1.0 + math.exp(s))
    return np.asarray(out, dtype=np.float64)


def zcdp_rows(rho: float, orders: FloatArray) -> Rows:
    """The rows of ρ-zCDP at ``orders``: C_α = (α − 1)αρ rounded up, KL ≤ ρ."""
    caps = (orders - 1.0) * (orders * rho)
    return Rows(orders, np.asarray(next_up(next_up(caps + caps * FEW_ULPS)), dtype=np.float64), rho)


def first_zcdp_orders(order_hint: float) -> FloatArray:
    """The zCDP search's first orders (α − 1 geometric up to 8× the closed form's α − 1)."""
    top = max(8.0 * (order_hint - 1.0), 16.0) if math.isfinite(order_hint) else 64.0
    return 1.0 + np.geomspace(1e-4, top, _FIRST_ORDERS)


def find_pair(rows: Rows, objective: Callable[[float, float], float], *, rho: float | None, eta: float,
              warm: float | None = None) -> tuple[float, float, Rows]:
    """(log p, log q, rows used) of the best pair under ``rows`` tightened by η; zCDP (``rho``): orders
    exchanged until the pair meets ρα(α − 1)(1 − η·``_EXCHANGE_SLACK``) at every order scanned."""
    lp, lq = _search(rows.tightened(eta), objective, warm)
    if rho is None:
        return lp, lq, rows
    for _ in range(_EXCHANGE_ROUNDS):
        new = np.setdiff1d(_worst_orders(lp, lq, rho, 1.0 - eta * _EXCHANGE_SLACK), rows.orders)
        if new.size == 0:
            break
        merged = zcdp_rows(rho, np.sort(np.concatenate([rows.orders, new])))
        rows = merged
        lp, lq = _search(rows.tightened(eta), objective, lq)
    return lp, lq, rows


def witness_pair(lp: float, lq: float) -> WitnessLaw | None:
    """The two-atom law of a pair (P = (p, 1 − p), Q = (q, 1 − q), normalised exactly), or ``None``."""
    p, q = math.exp(lp), math.exp(lq)
    if not (0.0 < p < 1.0 and 0.0 < q < 1.0):
        return None
    return WitnessLaw((p, -math.expm1(lp)), (q, -math.expm1(lq)))


# -- the certificate ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BinaryCertificate:
    """A Lagrangian certificate of δ(ε) ≤ ``bound`` for every law with the curve (module docstring).

    ``rows`` lists the rows with a multiplier: ``(kind, order, cap, multiplier)`` with kind ``"fwd"``
    (g(p, q; α)e^{−cap} ≤ 1), ``"rev"`` (g(q, p; α)e^{−cap} ≤ 1), ``"kl_fwd"``/``"kl_rev"`` (kl(p‖q)/cap ≤ 1,
    kl(q‖p)/cap ≤ 1; order ``nan``); multipliers and the point x₀ = (``p0``, ``q0``) are exact binary
    numbers written as decimal strings (80 digits, enough to re-read them exactly). With
    L(p, q) = p − e^ε q − Σ multiplier·(row − 1): ``bound`` ≥ L(x₀) + Σ_j max(−∂_jL(x₀)·x₀_j,
    ∂_jL(x₀)·(1 − x₀_j)) ≥ max over [0, 1]² of L ≥ δ(ε), computed in interval arithmetic.
    """

    epsilon: float
    rows: tuple[tuple[str, float, float, str], ...]
    p0: str
    q0: str
    bound: float


_Row = tuple[str, float, float]  # (kind, order, cap)


def _row_terms(ctx: Any, kind: str, a: Any, cap: Any, p: Any, q: Any, second: bool) -> tuple[Any, ...]:
    """(h, h_p, h_q[, h_pp, h_qq, h_pq]) of one normalised row h at (p, q) in ``ctx`` (mp or iv)."""
    mp = ctx
    forward = kind in ("fwd", "kl_fwd")
    x, y = (p, q) if forward else (q, p)
    x1, y1 = 1 - x, 1 - y
    lx, ly, l1x, l1y = mp.log(x), mp.log(y), mp.log(x1), mp.log(y1)
    if kind in ("fwd", "rev"):
        scale = mp.exp(-cap)
        big_a = mp.exp(a * lx + (1 - a) * ly) * scale
        big_b = mp.exp(a * l1x + (1 - a) * l1y) * scale
        h = big_a + big_b
        hx = a * big_a / x - a * big_b / x1
        hy = (1 - a) * big_a / y - (1 - a) * big_b / y1
        if second:
            k = a * (a - 1)
            hxx = k * (big_a / x**2 + big_b / x1**2)
            hyy = k * (big_a / y**2 + big_b / y1**2)
            hxy = -k * (big_a / (x * y) + big_b / (x1 * y1))
    else:
        h = (x * (lx - ly) + x1 * (l1x - l1y)) / cap
        hx = ((lx - ly) - (l1x - l1y)) / cap
        hy = (-x / y + x1 / y1) / cap
        if second:
            hxx = (1 / x + 1 / x1) / cap
            hyy = (x / y**2 + x1 / y1**2) / cap
            hxy = (-1 / y - 1 / y1) / cap
    if forward:
        return (h, hx, hy, hxx, hyy, hxy) if second else (h, hx, hy)
    return (h, hy, hx, hyy, hxx, hxy) if second else (h, hy, hx)


def _active_rows(rows: Rows, lp: float, lq: float, gamma: float) -> list[list[tuple[_Row, float]]]:
    """Candidate active sets at the pair, each with float multipliers fitting the KKT conditions
    ∇(p − γq) = Σλ∇h (least squares, log coordinates): every nearly active or violated row alone, and
    the rows non-negative least squares keeps together (at most 2: the problem is two-dimensional)."""
    p, q = math.exp(lp), math.exp(lq)
    l1p, l1q = math.log1p(-p), math.log1p(-q)
    cand: list[_Row] = []
    with np.errstate(over="ignore", invalid="ignore"):
        fwd = _log_moments(np.array([lp]), np.array([l1p]), lq, l1q, rows.orders)[:, 0]
        rev = _log_moments(np.array([lq]), np.array([l1q]), lp, l1p, rows.orders)[:, 0]
    for kind, vals in (("fwd", fwd), ("rev", rev)):
        rel = (rows.caps - vals) / np.maximum(rows.caps, TINY_PAD)
        for i in np.argsort(rel)[:_ACTIVE_MAX]:
            if math.isfinite(rel[i]) and rel[i] <= _ACTIVE_SLACK:
                cand.append((kind, float(rows.orders[i]), float(rows.caps[i])))
    if rows.kl is not None and rows.kl > 0.0:
        kl_pq = p * (lp - lq) + (1.0 - p) * (l1p - l1q)
        kl_qp = q * (lq - lp) + (1.0 - q) * (l1q - l1p)
        for kind, val in (("kl_fwd", kl_pq), ("kl_rev", kl_qp)):
            if (rows.kl - val) / rows.kl <= _ACTIVE_SLACK:
                cand.append((kind, math.nan, rows.kl))
    cols = []
    for kind, a, c in cand:
        _, hp, hq = _row_terms(np, kind, a, c, p, q, False)
        cols.append((float(hp) * p, float(hq) * q))
    matrix = np.array(cols, dtype=np.float64).T.reshape(2, len(cand))
    target = np.array([p, -gamma * q])
    keep = np.all(np.isfinite(matrix), axis=0)
    weights = np.maximum(np.abs(target), TINY_PAD)
    out: list[list[tuple[_Row, float]]] = []
    for j in np.flatnonzero(keep):
        with np.errstate(over="ignore", invalid="ignore"):  # a huge row: no fit (lam not finite, skipped)
            col = matrix[:, j] / weights
            norm = float(col @ col)
            lam = float(col @ (target / weights)) / norm if 0.0 < norm < math.inf else 0.0
        if math.isfinite(lam) and lam > 0.0:
            out.append([(cand[j], lam)])
    if np.count_nonzero(keep) >= 2:
        sub = matrix[:, keep]
        norm = np.maximum(np.abs(sub).max(axis=0), TINY_PAD)
        sol, _ = nnls(sub / norm / weights[:, None], target / weights)
        sol = sol / norm
        idx = np.flatnonzero(keep)
        pos = [(cand[idx[i]], float(sol[i])) for i in np.argsort(-sol)[:2] if sol[i] > 0.0]
        if len(pos) == 2:
            out.append(pos)
    return out


def _kkt_solve(active: list[tuple[_Row, float]], gamma: mpmath.mpf, lp: float,
               lq: float) -> tuple[mpmath.mpf, mpmath.mpf, list[mpmath.mpf]] | None:
    """(p, q, multipliers) solving ∇L = 0 and row = 1 for every active row, by Newton's method at the
    working precision from the float pair (affine invariant: the scales of p, q, λ do not matter)."""
    mp = mpmath.mp
    n = len(active)
    z = [mp.exp(mp.mpf(lp)), mp.exp(mp.mpf(lq))] + [mp.mpf(v) for _, v in active]
    rows = [(kind, mp.mpf(a) if kind in ("fwd", "rev") else mp.mpf(0), mp.mpf(c)) for (kind, a, c), _ in active]

    def system(z: list[mpmath.mpf]) -> tuple[list[mpmath.mpf], mpmath.matrix]:
        p, q, lams = z[0], z[1], z[2:]
        f = [mp.mpf(1), -gamma] + [mp.mpf(0)] * n
        jac = mp.zeros(2 + n, 2 + n)
        for j, ((kind, a, c), lam) in enumerate(zip(rows, lams, strict=True)):
            h, hp, hq, hpp, hqq, hpq = _row_terms(mp, kind, a, c, p, q, True)
            f[0] -= lam * hp
            f[1] -= lam * hq
            f[2 + j] = h - 1
            jac[0, 0] -= lam * hpp
            jac[1, 1] -= lam * hqq
            jac[0, 1] -= lam * hpq
            jac[1, 0] -= lam * hpq
            jac[0, 2 + j] = -hp
            jac[1, 2 + j] = -hq
            jac[2 + j, 0] = hp
            jac[2 + j, 1] = hq
        return f, jac

    for _ in range(_NEWTON_STEPS):
        f, jac = system(z)
        try:
            step = mp.lu_solve(jac, mp.matrix(f))
        except ZeroDivisionError:
            return None
        t = mp.mpf(1)
        for _ in range(100):
            cand = [z[i] - t * step[i] for i in range(2 + n)]
            if 0 < cand[0] < 1 and 0 < cand[1] < 1:
                break
            t /= 2
        else:
            return None
        small = all(abs(t * step[i]) <= _NEWTON_TOL * abs(z[i]) for i in range(2 + n))
        z = cand
        if small:
            return z[0], z[1], z[2:]
    return None


def certify(rows: Rows, epsilon: float, lp: float, lq: float) -> BinaryCertificate | None:
    """A certified upper bound on δ(ε) for every law meeting ``rows`` (module docstring), from the pair
    (log p, log q) found by the search: one certificate per candidate active set (:func:`_active_rows`)
    whose exact KKT solution has non-negative multipliers, the smallest bound kept; ``None`` where none
    came out (the caller falls back)."""
    if epsilon >= 700.0:
        return None
    best: BinaryCertificate | None = None
    for active in _active_rows(rows, lp, lq, math.exp(epsilon)):
        with mpmath.workprec(_PRECISION):
            solved = _kkt_solve(active, mpmath.exp(mpmath.mpf(epsilon)), lp, lq)
        if solved is None or any(lam < 0 for lam in solved[2]):
            continue
        cert = _enclose(active, epsilon, *solved)
        if cert is not None and (best is None or cert.bound < best.bound):
            best = cert
    return best


def _enclose(active: list[tuple[_Row, float]], epsilon: float, p0: mpmath.mpf, q0: mpmath.mpf,
             lams: list[mpmath.mpf]) -> BinaryCertificate | None:
    """The certified bound of one (rows, multipliers, x₀): L(x₀) plus the tangent plane's largest rise
    over [0, 1]², in interval arithmetic with x₀ and the multipliers held exactly."""
    saved = iv.prec
    iv.prec = _PRECISION
    try:
        pi, qi = iv.mpf(p0), iv.mpf(q0)
        lam_iv = [iv.mpf(lam) for lam in lams]
        if not (pi.a == pi.b and qi.a == qi.b and all(x.a == x.b for x in lam_iv)):
            return None  # x₀ and the multipliers must be held exactly
        gamma = iv.exp(iv.mpf(epsilon))
        val, dp, dq = pi - gamma * qi, iv.mpf(1), -gamma
        for ((kind, a, c), _), lam in zip(active, lam_iv, strict=True):
            h, hp, hq = _row_terms(iv, kind, iv.mpf(a) if kind in ("fwd", "rev") else iv.mpf(0), iv.mpf(c), pi, qi, False)
            val = val - lam * (h - 1)
            dp = dp - lam * hp
            dq = dq - lam * hq
        rises = []
        for d, x in ((dp, pi), (dq, qi)):
            down, up = -iv.mpf(d.a) * x, iv.mpf(d.b) * (1 - x)
            rises.append(iv.mpf(max(mpmath.mpf(down.b), mpmath.mpf(up.b))))
        total = iv.mpf(val.b) + rises[0] + rises[1]
        hi = mpmath.mpf(total.b)
    finally:
        iv.prec = saved
    if not mpmath.isfinite(hi):
        return None
    bound = float(hi)
    if mpmath.mpf(bound) < hi:
        bound = next_up(bound)
    bound = min(1.0, max(bound, 0.0))
    shown = tuple((kind, a, c, mpmath.nstr(lam, 80)) for ((kind, a, c), _), lam in zip(active, lams, strict=True))
    return BinaryCertificate(epsilon, shown, mpmath.nstr(p0, 80), mpmath.nstr(q0, 80), bound)


def certify_curve(rows: Rows, epsilon: float, lp: float, lq: float, *, rho: float | None) -> BinaryCertificate | None:
    """:func:`certify`, and for zCDP curves (``rho``) an exchange on the certificate's own relaxation: the
    orders where the Lagrangian's maximiser x₀ exceeds ρα(α − 1) are added and the certificate solved
    again (each round's bound is valid; the smallest is kept)."""
    best = certify(rows, epsilon, lp, lq)
    if rho is None or best is None:
        return best
    cert = best
    for _ in range(_EXCHANGE_ROUNDS):
        lp0, lq0 = math.log(float(cert.p0)), math.log(float(cert.q0))
        new = np.setdiff1d(_worst_orders(lp0, lq0, rho, 1.0 + _CERT_EXCESS), rows.orders)
        if new.size == 0:
            break
        rows = zcdp_rows(rho, np.sort(np.concatenate([rows.orders, new])))
        found = certify(rows, epsilon, lp0, lq0)
        if found is None:
            break
        cert = found
        if cert.bound < best.bound:
            best = cert
    return best

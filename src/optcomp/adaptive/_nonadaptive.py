"""The optimal *non-adaptive* composition of k ε₀-BR steps (Dong–Durfee–Rogers, ICML 2020, Thm 3).

When every step's pair is fixed in advance (no analyst adapts t to earlier outputs), the worst case is k copies
of one member (P_t, Q_t) of the family, and

    δ(ε) = max_{ℓ = 0..k} Σ_{i=0}^{k} C(k, i)·q_t^{k−i}(1 − q_t)^i·[e^{kt − iε₀} − e^{ε}]_+,
    t = t_ℓ = clip((ε + (ℓ + 1)ε₀)/(k + 1), 0, ε₀),

the maximum over t being attained at one of these k + 1 points (DDR20 Thm 3; checked against a fine scan of t
in 30-digit arithmetic in ``tests/test_adaptive_br.py``). It is a **lower** bound on what an adaptive analyst
reaches (DDR20 show the adaptive optimum is strictly larger), so it is a separate, labelled query: a statement
made from it holds only for steps fixed in advance.

Certified evaluation: each candidate's sum is computed in logs (terms ln C(k, i) + (k − i) ln q + i ln(1 − q)
+ ln(e^{kt−iε₀} − e^ε), each charged ``SPECIAL_FUNCTION_LOG_ERROR`` relative to its magnitudes, summed with
:func:`~optcomp._rounding.log_sum_exp_up` / ``_down``). The upper end covers the rounding of t_ℓ itself: every
factor is taken at the end of [t̂ − τ, t̂ + τ] that maximises it. Candidates far from the optimum are dismissed
by the Chernoff bound δ_t(ε) ≤ P_t(L > ε) ≤ exp(−k·KL(i*/k ‖ 1 − p_t)) (evaluated with slack) when it lies below
the best certified lower value; the others are evaluated.
"""

from __future__ import annotations

import math

import numpy as np

from optcomp._inverse import solve
from optcomp._numerics import (
    EPSILON_XTOL,
    SPECIAL_FUNCTION_LOG_ERROR,
    Bound,
    FloatArray,
    check_int,
    check_nonnegative,
    check_probability,
)
from optcomp._rounding import log_binomial, rounding_error
from optcomp.mechanisms.bounded_range import BR_EPSILON

#: Candidates evaluated exactly around the best one before the Chernoff bound is asked to dismiss the rest.
_NEIGHBOURS = 4
#: Binomial standard deviations of terms summed around the mean of Bin(k, 1 − q) (beyond: certified tails).
_SIGMAS = 14
#: Evaluations of each end's search (the secant in (ln ε, ln δ) needs about ten).
_BUDGET = 80
#: Candidates evaluated together (rows of one array of terms).
_CHUNK = 256
#: The λ grid of the dismissal bound (its ends and size; any λ > 0 gives a valid bound).
_LAMBDA_RANGE = (1e-3, 1e3)
_LAMBDA_POINTS = 96
#: Added to the dismissal bound's logarithm (a margin only: a candidate it does not dismiss is evaluated).
_DISMISS_MARGIN = 1e-6


def _log_factors(e0: float, t_q: FloatArray, t_1q: FloatArray) -> tuple[FloatArray, FloatArray]:
    """(ln q, ln(1 − q)) with q taken at t_q and 1 − q at t_1q (q_t decreases in t), elementwise."""
    den = math.log(-math.expm1(-e0))
    with np.errstate(divide="ignore", invalid="ignore"):
        log_q = np.where(t_q < e0, -t_q + np.log(-np.expm1(t_q - e0)) - den, -np.inf)
        log_1q = np.where(t_1q > 0, np.log(-np.expm1(-t_1q)) - den, -np.inf)
    return log_q, log_1q


def _terms(k: int, e0: float, eps: float, log_q: FloatArray, log_1q: FloatArray, t_e: FloatArray,
           i: FloatArray) -> FloatArray:
    """ln of the terms at indices ``i`` (rows: candidates; −inf where the hinge is off or i is outside [0, k])."""
    gap = k * t_e - i * e0 - eps  # e^{kt−iε₀} − e^ε = e^ε·expm1(gap)
    ok = (gap > 0) & (i >= 0) & (i <= k)
    ii = np.clip(i, 0, k)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = (log_binomial(k, ii) + np.where(k - ii > 0, (k - ii) * log_q, 0.0) + np.where(ii > 0, ii * log_1q, 0.0)
               + eps + np.log(np.expm1(np.where(ok, gap, 1.0))))
    return np.asarray(np.where(ok & np.isfinite(out), out, -np.inf), dtype=np.float64)


def _row_lse(terms: FloatArray, up: bool) -> FloatArray:
    """Row-wise ln Σ e^{terms}, moved outwards by :func:`~optcomp._rounding.log_sum_exp_error`."""
    top = np.max(terms, axis=1)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        v = safe + np.log(np.sum(np.exp(terms - safe[:, None]), axis=1))
    v = np.where(np.isfinite(top), v, top)
    err = (4.0 * terms.shape[1] + 16.0) * rounding_error(1, 1.0 + np.abs(np.nan_to_num(v, neginf=0.0, posinf=0.0)))
    return np.asarray(v + err if up else v - err, dtype=np.float64)


def _log_sums(k: int, e0: float, eps: float, t: FloatArray, up: bool) -> FloatArray:
    """ln Σ_i of each candidate's terms (t its float t_ℓ), rounded up (every factor at the end of
    [t − τ, t + τ] that maximises it, tails bounded) or down (tails dropped).

    The terms are log-concave in i (ln C(k, i) is concave, ln(1 − e^{x}) is concave in x), so only a window of
    ``_SIGMAS`` binomial deviations around the mean of Bin(k, 1 − q) is summed; beyond it they fall at least
    geometrically with the ratio at the window's edge (once past the largest term), which bounds each tail. A
    window whose largest term sits at an edge is widened to all i (rare). Each term is charged
    ``SPECIAL_FUNCTION_LOG_ERROR`` relative to its magnitudes."""
    tau = rounding_error(8, t + eps + e0)
    t_q, t_1q = (np.maximum(t - tau, 0.0), np.minimum(t + tau, e0)) if up else (t, t)
    log_q, log_1q = _log_factors(e0, t_q, t_1q)
    b = np.exp(log_1q)
    half = math.ceil(_SIGMAS * math.sqrt(k * 0.25 + 1.0)) + _SIGMAS
    centre = np.round(k * b)
    i = centre[:, None] + np.arange(-half, half + 1, dtype=np.float64)[None, :]
    te = t_1q[:, None]
    terms = _terms(k, e0, eps, log_q[:, None], log_1q[:, None], te, i)
    err = 4.0 * SPECIAL_FUNCTION_LOG_ERROR * (np.max(np.abs(np.where(np.isfinite(terms), terms, 0.0)), axis=1)
                                              + k * (e0 + 2.0) + eps + math.lgamma(k + 1.0) + 1.0)
    out = _row_lse(terms, up) + (err if up else -err)
    if up:
        out = np.logaddexp(out, _tails(k, e0, eps, log_q, log_1q, t_1q, i, terms, err))
    return np.asarray(out, dtype=np.float64)


def _tails(k: int, e0: float, eps: float, log_q: FloatArray, log_1q: FloatArray, t_e: FloatArray, i: FloatArray,
           terms: FloatArray, err: FloatArray) -> FloatArray:
    """ln of upper bounds on the terms outside each window (geometric, module docstring; +inf where the window
    does not hold the largest term on that side, which never happens for the windows of :func:`_log_sums`)."""
    out = np.full(terms.shape[0], -np.inf)
    for edge, step in ((0, -1.0), (-1, 1.0)):
        at = terms[:, edge]
        nxt = _terms(k, e0, eps, log_q, log_1q, t_e, i[:, edge] + step)
        live = np.isfinite(nxt)  # a live term beyond the edge (else the tail is empty)
        with np.errstate(invalid="ignore", divide="ignore"):
            r = nxt - at + err
            tail = np.where(r < 0, at + r - np.log(-np.expm1(np.minimum(r, 0.0))), np.inf)
        out = np.logaddexp(out, np.where(live, tail, -np.inf))
    return out


def _candidates(k: int, e0: float, eps: float, ells: np.ndarray) -> tuple[FloatArray, FloatArray]:
    """Certified (lower, upper) of the candidates ``ells`` (module docstring), in chunks."""
    t = np.clip((eps + (ells.astype(np.float64) + 1) * e0) / (k + 1), 0.0, e0)
    chunks = [t[s : s + _CHUNK] for s in range(0, t.size, _CHUNK)]
    with np.errstate(over="ignore"):
        lows = np.concatenate([np.exp(_log_sums(k, e0, eps, c, up=False)) for c in chunks])
        highs = np.minimum(np.concatenate([np.exp(_log_sums(k, e0, eps, c, up=True)) for c in chunks]), 1.0)
    return np.minimum(lows, highs), highs


def _chernoff(k: int, e0: float, eps: float) -> FloatArray:
    """ln of an upper bound on every candidate's value: (1 − e^{ε−L})_+ ≤ e^{λ(L−ε)}·λ^λ/(1+λ)^{1+λ} for λ > 0, so
    δ_t(ε) ≤ min_λ exp(k·ln E_{P_t}[e^{λL}] − λε)·λ^λ/(1+λ)^{1+λ} over a grid of λ, widened by its rounding (a
    dismissal test only: a candidate it does not dismiss is evaluated)."""
    ell = np.arange(k + 1, dtype=np.float64)
    t = np.clip((eps + (ell + 1) * e0) / (k + 1), 0.0, e0)[:, None]
    lam = np.geomspace(_LAMBDA_RANGE[0], _LAMBDA_RANGE[1], _LAMBDA_POINTS)[None, :]
    p = -np.expm1(t - e0) / -math.expm1(-e0)
    with np.errstate(divide="ignore", invalid="ignore"):
        mgf = np.logaddexp(np.log(p) + lam * t, np.log1p(-p) + lam * (t - e0))
        val = k * mgf - lam * eps + lam * np.log(lam) - (1 + lam) * np.log1p(lam)
    val = np.nan_to_num(val, nan=0.0, posinf=0.0)
    best = np.min(val, axis=1)
    return np.asarray(np.minimum(best + rounding_error(64, k * (1.0 + e0) * 40.0 + abs(eps) + 1.0) + _DISMISS_MARGIN, 0.0))


def nonadaptive_delta(epsilon0: float, count: int, epsilon: float) -> Bound:
    """Certified bracket of the optimal δ(ε) of ``count`` ε₀-BR steps whose pairs are fixed in advance
    (Dong–Durfee–Rogers 2020, Thm 3; module docstring). **Non-adaptive**: a lower bound on the adaptive δ.

    Args:
        epsilon0: ε₀ of each step, in (0, 500].
        count: the number of steps k ≥ 1.
        epsilon: ε ≥ 0.
    """
    e0 = BR_EPSILON.validate("epsilon0", epsilon0)
    k = check_int("count", count, minimum=1)
    eps = check_nonnegative("epsilon", epsilon)
    if eps >= k * e0:
        return Bound(0.0, 0.0)
    bound = _chernoff(k, e0, eps)
    centre = int(np.argmax(bound))
    first = np.arange(max(0, centre - _NEIGHBOURS), min(k, centre + _NEIGHBOURS) + 1)
    lo, hi = _candidates(k, e0, eps, first)
    best = float(np.max(lo))
    floor = math.log(best) if best > 0 else -math.inf
    rest = np.setdiff1d(np.flatnonzero(bound > floor), first)
    if rest.size:
        lo2, hi2 = _candidates(k, e0, eps, rest)
        lo, hi = np.concatenate([lo, lo2]), np.concatenate([hi, hi2])
    return Bound(float(np.max(lo)), float(np.max(hi)))


def nonadaptive_epsilon(epsilon0: float, count: int, delta: float) -> Bound:
    """Certified bracket of the optimal ε(δ) of ``count`` ε₀-BR steps fixed in advance (the inverse of
    :func:`nonadaptive_delta` by :func:`optcomp._inverse.solve` on each end, to relative ``EPSILON_XTOL``: the
    upper end's certified δ is ≤ δ, the lower end's certified lower δ exceeds it). **Non-adaptive** (module
    docstring).

    Args:
        epsilon0: ε₀ of each step, in (0, 500].
        count: the number of steps k ≥ 1.
        delta: δ in [0, 1].
    """
    e0 = BR_EPSILON.validate("epsilon0", epsilon0)
    k = check_int("count", count, minimum=1)
    d = check_probability("delta", delta)
    top = k * e0
    if d >= 1.0:
        return Bound(0.0, 0.0)
    if d == 0.0:
        return Bound(top, top)
    cache: dict[float, Bound] = {}

    def at(e: float) -> Bound:
        if e not in cache:
            cache[e] = nonadaptive_delta(e0, k, e)
        return cache[e]

    if at(0.0).upper <= d:
        return Bound(0.0, 0.0)
    guess = min(top / 2.0, e0 * math.sqrt(k * math.log(1.0 / d) / 2.0) + k * e0 * e0 / 8.0)
    up = solve(at, d, name="epsilon", guess=guess, rtol=EPSILON_XTOL, side="upper", limit=top, lowest=0.0,
               budget=_BUDGET)
    upper = top if up.passing is None else up.passing
    if at(0.0).lower <= d:
        return Bound(0.0, upper)
    low = solve(at, d, name="epsilon", guess=upper, rtol=EPSILON_XTOL, side="lower", passing=upper, lowest=0.0,
                budget=_BUDGET)
    return Bound(0.0 if low.fail is None else low.fail, upper)


__all__ = ["nonadaptive_delta", "nonadaptive_epsilon"]

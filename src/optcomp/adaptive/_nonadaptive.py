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
by a Chernoff bound (evaluated with slack) when it lies below the best certified lower value; the others are
evaluated, first over narrow windows of i around each candidate's largest term with certified geometric tails
(log-concavity), then wider ones for those still not dismissed (:func:`_log_bracket`). The upper end is always an
evaluated one, never the Chernoff bound. ε(δ) starts its certified search at an uncertified float estimate of
the root (binomial distribution functions), so each end takes a few evaluations (k = 10⁴: about 0.6 s CPU,
against 25 s for the search from a closed-form guess).
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from optcomp._inverse import float_boundary, solve
from optcomp._numerics import (
    EPSILON_XTOL,
    SPECIAL_FUNCTION_LOG_ERROR,
    Bound,
    FloatArray,
    check_int,
    check_nonnegative,
    check_probability,
)
from optcomp._rounding import log_binomial, next_up, rounding_error
from optcomp.mechanisms.bounded_range import BR_EPSILON

#: Candidates evaluated exactly around the Chernoff bound's best one (a first certified lower value).
_NEIGHBOURS = 4
#: Half-widths of the windows of terms summed, in binomial standard deviations √(k·p(1 − p)) (plus
#: ``_WINDOW_PAD`` terms), level by level: each level re-bounds only the candidates that the levels before
#: could not dismiss against the best certified lower value, and the last is the evaluation proper (beyond
#: 7σ of the largest term the tails are below e^{−24} of the sum); a candidate whose window misses its largest
#: term gets all i ≤ m.
_LEVELS = (0.5, 2.0, 7.0)
_WINDOW_PAD = 8
#: Roundings charged to the hinge's gap kt − iε₀ − ε (two products, two differences, with margin).
_GAP_ROUNDINGS = 8
#: Terms per array (candidates × window) evaluated at once.
_CELLS = 1 << 20
#: Evaluations of each end's search (a secant in (ln ε, ln δ) from a close start needs three or four).
_BUDGET = 80
#: The λ grid of the dismissal bound (its ends and size; any λ > 0 gives a valid bound).
_LAMBDA_RANGE = (1e-3, 1e3)
_LAMBDA_POINTS = 32
#: Added to the dismissal bound's logarithm (a margin only: a candidate it does not dismiss is evaluated).
_DISMISS_MARGIN = 1e-6
#: Largest k whose table of ln C(k, i) is kept between calls (8 bytes per entry).
_TABLE_LIMIT = 1 << 20
#: The uncertified start of ε(δ)'s search: candidates on a coarse grid of ℓ, refined around the best one;
#: the relative width of its bisection in ε.
_GUESS_GRID = 256
_GUESS_XTOL = EPSILON_XTOL / 100.0
#: Relative offset of the first certified evaluations from the estimated root (the estimate is good to
#: ~10⁻¹⁰ where the distribution functions are; this many times over it, one side is pinned at once).
_START_OFFSET = 1e-9


@lru_cache(maxsize=4)
def _log_choose(k: int) -> FloatArray:
    """ln C(k, i) for i = 0..k (:func:`~optcomp._rounding.log_binomial`; read-only, kept between calls)."""
    table = log_binomial(k, np.arange(k + 1, dtype=np.float64))
    table.setflags(write=False)
    return table


def _choose(k: int, i: FloatArray) -> FloatArray:
    """ln C(k, i) at integer-valued ``i`` in [0, k]: the same values as :func:`log_binomial`, from a table."""
    if k <= _TABLE_LIMIT:
        return np.asarray(_log_choose(k)[i.astype(np.int64)], dtype=np.float64)
    return log_binomial(k, i)


def _p_of(e0: float, t: FloatArray) -> FloatArray:
    """p_t = (1 − e^{t−ε₀})/(1 − e^{−ε₀}) (floats: it only places windows)."""
    return np.asarray(-np.expm1(t - e0) / -math.expm1(-e0), dtype=np.float64)


def _log_factors(e0: float, t_q: FloatArray, t_1q: FloatArray) -> tuple[FloatArray, FloatArray]:
    """(ln q, ln(1 − q)) with q taken at t_q and 1 − q at t_1q (q_t decreases in t), elementwise."""
    den = math.log(-math.expm1(-e0))
    with np.errstate(divide="ignore", invalid="ignore"):
        log_q = np.where(t_q < e0, -t_q + np.log(-np.expm1(t_q - e0)) - den, -np.inf)
        log_1q = np.where(t_1q > 0, np.log(-np.expm1(-t_1q)) - den, -np.inf)
    return log_q, log_1q


def _terms(k: int, e0: float, eps: float, log_q: FloatArray, log_1q: FloatArray, t_e: FloatArray,
           i: FloatArray, up: bool) -> FloatArray:
    """ln of the terms at indices ``i`` (rows: candidates; −inf where the hinge is off or i is outside [0, k]);
    the gap kt − iε₀ − ε is moved by its own rounding (``_GAP_ROUNDINGS`` of its magnitude) up or down, so a
    hinge that is on by less than an ulp is on in the upper end."""
    slack = rounding_error(_GAP_ROUNDINGS, k * t_e + np.abs(i) * e0 + eps)
    gap = k * t_e - i * e0 - eps + (slack if up else -slack)  # e^{kt−iε₀} − e^ε = e^ε·expm1(gap)
    ok = (gap > 0) & (i >= 0) & (i <= k)
    ii = np.clip(i, 0, k)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = (_choose(k, ii) + np.where(k - ii > 0, (k - ii) * log_q, 0.0) + np.where(ii > 0, ii * log_1q, 0.0)
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


def _term_error(k: int, e0: float, eps: float, terms: FloatArray) -> FloatArray:
    """Absolute error of each row's log terms: ``SPECIAL_FUNCTION_LOG_ERROR`` (×4) relative to their magnitudes."""
    big = np.max(np.abs(np.where(np.isfinite(terms), terms, 0.0)), axis=1)
    return np.asarray(4.0 * SPECIAL_FUNCTION_LOG_ERROR * (big + k * (e0 + 2.0) + eps + math.lgamma(k + 1.0) + 1.0),
                      dtype=np.float64)


def _window(k: int, e0: float, eps: float, t_hinge: FloatArray, t_mode: FloatArray, half: int | None) -> FloatArray:
    """The indices summed per candidate: all i (``half`` None) or i within ``half`` of min(m, k(1 − p_t)), m the
    last i whose hinge is on (the terms are P_t's binomial weights of the count of B outcomes times
    (1 − e^{ε − L}), so the largest is at or a little below that point)."""
    if half is None:
        return np.broadcast_to(np.arange(k + 1, dtype=np.float64), (t_hinge.size, k + 1))
    last = np.floor(np.clip((k * t_hinge - eps) / e0, -1.0, float(k)))
    centre = np.clip(np.minimum(last, np.floor(k * (1.0 - _p_of(e0, t_mode)))), 0.0, float(k))
    return np.asarray(centre[:, None] + np.arange(-half, half + 1, dtype=np.float64)[None, :], dtype=np.float64)


def _log_sums(k: int, e0: float, eps: float, t: FloatArray, half: int | None) -> tuple[FloatArray, FloatArray]:
    """(ln lower, ln upper) of each candidate's sum (t its float t_ℓ) over a window of half-width ``half`` around
    its largest term (``None``: every i).

    Lower: the terms at t itself (any t in [0, ε₀] is an adversary's choice, so its value is at most the
    maximum), the window's sum rounded down, the rest dropped. Upper: every factor taken at the end of
    [t − τ, t + τ] that maximises it (τ bounds the rounding of t_ℓ), the window's sum rounded up, plus a bound on
    each tail: the terms are log-concave in i (ln C(k, i) is concave, ln(e^{gap} − 1) is concave in the gap,
    which is linear in i), so beyond a window edge whose next term is smaller they fall at least geometrically
    with the ratio at that edge; where the next term is not smaller (the window misses the largest term) the
    tail bound is +∞. Each term is charged ``SPECIAL_FUNCTION_LOG_ERROR`` relative to its magnitudes."""
    tau = rounding_error(8, t + eps + e0)
    t_q, t_1q = np.maximum(t - tau, 0.0), np.minimum(t + tau, e0)
    log_q, log_1q = _log_factors(e0, t, t)
    i = _window(k, e0, eps, t, t, half)
    terms = _terms(k, e0, eps, log_q[:, None], log_1q[:, None], t[:, None], i, up=False)
    low = _row_lse(terms, up=False) - _term_error(k, e0, eps, terms)
    log_q, log_1q = _log_factors(e0, t_q, t_1q)
    i = _window(k, e0, eps, t_1q, t, half)
    terms = _terms(k, e0, eps, log_q[:, None], log_1q[:, None], t_1q[:, None], i, up=True)
    err = _term_error(k, e0, eps, terms)
    high = _row_lse(terms, up=True) + err
    if half is not None:
        high = np.logaddexp(high, _tails(k, e0, eps, log_q, log_1q, t_1q, i, terms, err))
    return np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)


def _tails(k: int, e0: float, eps: float, log_q: FloatArray, log_1q: FloatArray, t_e: FloatArray, i: FloatArray,
           terms: FloatArray, err: FloatArray) -> FloatArray:
    """ln of upper bounds on the terms outside each window (geometric, :func:`_log_sums`; +inf where the term
    beyond an edge is not smaller than the edge's)."""
    out = np.full(terms.shape[0], -np.inf)
    for edge, step in ((0, -1.0), (-1, 1.0)):
        at = terms[:, edge]
        nxt = _terms(k, e0, eps, log_q, log_1q, t_e, i[:, edge] + step, up=True)
        live = np.isfinite(nxt)  # a live term beyond the edge (else the tail is empty)
        with np.errstate(invalid="ignore", divide="ignore"):
            r = nxt - at + err
            tail = np.where(r < 0, at + r - np.log(-np.expm1(np.minimum(r, 0.0))), np.inf)
        out = np.logaddexp(out, np.where(live, tail, -np.inf))
    return out


def _candidates(k: int, e0: float, eps: float, ells: npt.NDArray[np.int64], half: int | None
                ) -> tuple[FloatArray, FloatArray]:
    """(ln lower, ln upper) of the candidates ``ells`` (:func:`_log_sums`), in chunks of ``_CELLS`` terms."""
    t = np.clip((eps + (ells.astype(np.float64) + 1) * e0) / (k + 1), 0.0, e0)
    rows = max(1, _CELLS // (k + 1 if half is None else 2 * half + 1))
    parts = [_log_sums(k, e0, eps, t[s : s + rows], half) for s in range(0, t.size, rows)]
    if not parts:
        return np.empty(0), np.empty(0)
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def _chernoff(k: int, e0: float, eps: float) -> FloatArray:
    """ln of an upper bound on every candidate's value: (1 − e^{ε−L})_+ ≤ e^{λ(L−ε)}·λ^λ/(1+λ)^{1+λ} for λ > 0, so
    δ_t(ε) ≤ min_λ exp(k·ln E_{P_t}[e^{λL}] − λε)·λ^λ/(1+λ)^{1+λ} over a grid of λ, widened by its rounding (a
    dismissal test only: a candidate it does not dismiss is evaluated)."""
    lam = np.geomspace(_LAMBDA_RANGE[0], _LAMBDA_RANGE[1], _LAMBDA_POINTS)[None, :]
    out = []
    rows = max(1, _CELLS // _LAMBDA_POINTS)
    for s in range(0, k + 1, rows):
        ell = np.arange(s, min(k + 1, s + rows), dtype=np.float64)
        t = np.clip((eps + (ell + 1) * e0) / (k + 1), 0.0, e0)[:, None]
        p = _p_of(e0, t)
        with np.errstate(divide="ignore", invalid="ignore"):
            mgf = np.logaddexp(np.log(p) + lam * t, np.log1p(-p) + lam * (t - e0))
            val = k * mgf - lam * eps + lam * np.log(lam) - (1 + lam) * np.log1p(lam)
        out.append(np.min(np.nan_to_num(val, nan=0.0, posinf=0.0), axis=1))
    best = np.concatenate(out)
    return np.asarray(np.minimum(best + rounding_error(64, k * (1.0 + e0) * 40.0 + abs(eps) + 1.0) + _DISMISS_MARGIN,
                                 0.0))


def _log_bracket(k: int, e0: float, eps: float) -> tuple[float, float]:
    """(ln lower, ln upper) of δ(ε) = max over the k + 1 candidates (:func:`nonadaptive_delta`): the Chernoff
    bound of every candidate, a first lower end from the best of them and its neighbours, then level by level
    (``_LEVELS``) new bounds for the candidates whose upper end is still above the best lower end."""
    sigma = math.sqrt(k * 0.25)
    ceiling = _chernoff(k, e0, eps)
    cert = np.full(k + 1, np.inf)  # the evaluated (certified) upper ends
    centre = int(np.argmax(ceiling))
    first = np.arange(max(0, centre - _NEIGHBOURS), min(k, centre + _NEIGHBOURS) + 1)
    below, above = _candidates(k, e0, eps, first, math.ceil(_LEVELS[-1] * sigma) + _WINDOW_PAD)
    best = float(np.max(below))
    cert[first] = np.minimum(cert[first], above)
    ceiling[first] = np.minimum(ceiling[first], above)
    for level, width in enumerate(_LEVELS):
        half: int | None = math.ceil(width * sigma) + _WINDOW_PAD
        todo = np.flatnonzero(ceiling > best)
        for attempt in range(2):
            if not todo.size:
                break
            below, above = _candidates(k, e0, eps, todo, half)
            best = max(best, float(np.max(below)))
            cert[todo] = np.minimum(cert[todo], above)
            ceiling[todo] = np.minimum(ceiling[todo], above)
            if level < len(_LEVELS) - 1 or attempt:
                break
            todo, half = todo[~np.isfinite(above)], None  # the last level's windows that missed the largest term
    # A candidate still above the best lower end answers with its evaluated upper end (the Chernoff bound only
    # dismisses: it never sets the upper end itself).
    return best, float(np.max(np.where(ceiling > best, cert, ceiling)))


def _top(k: int, e0: float) -> float:
    """kε₀ rounded up to a float (δ(ε) = 0 exactly for ε ≥ kε₀)."""
    top = k * e0
    return top if Fraction(top) >= k * Fraction(e0) else next_up(top)


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
    if Fraction(eps) >= k * Fraction(e0):  # exactly: the float k·ε₀ may round below it (δ > 0 there)
        return Bound(0.0, 0.0)
    low, high = _log_bracket(k, e0, eps)
    # δ below the smallest float (a finite logarithm whose exponential underflows) answers that float above.
    upper = 1.0 if high >= 0.0 else math.exp(high) or (math.ulp(0.0) if high > -math.inf else 0.0)
    return Bound(min(math.exp(min(low, 0.0)), upper), upper)


def _estimate_delta(k: int, e0: float, eps: float) -> float:
    """δ(ε) in floats, *uncertified* (the start of :func:`nonadaptive_epsilon`'s search only): each candidate's
    sum is P_t(L > ε) − e^ε·Q_t(L > ε), two binomial distribution functions (``scipy.special.bdtr``), maximised
    over a coarse grid of ℓ and then over every ℓ between the best point's neighbours."""
    from scipy.special import bdtr  # here: scipy.special costs 0.15 s to import

    def values(ells: FloatArray) -> FloatArray:
        t = np.clip((eps + (ells + 1.0) * e0) / (k + 1), 0.0, e0)
        p = _p_of(e0, t)
        last = np.ceil((k * t - eps) / e0) - 1.0  # the last i with k·t − i·ε₀ > ε
        with np.errstate(over="ignore", invalid="ignore"):
            v = bdtr(last, k, 1.0 - p) - math.exp(eps) * bdtr(last, k, 1.0 - np.exp(-t) * p)
        return np.asarray(np.where(last >= 0, np.nan_to_num(v, nan=0.0), 0.0), dtype=np.float64)

    grid = np.unique(np.round(np.linspace(0.0, float(k), _GUESS_GRID + 1)))
    j = int(np.argmax(values(grid)))
    near = np.arange(grid[max(j - 1, 0)], grid[min(j + 1, grid.size - 1)] + 1.0)
    return float(np.max(values(near)))


def _estimate_epsilon(k: int, e0: float, delta: float) -> float:
    """The ε at which :func:`_estimate_delta` crosses δ (bisection in ε over [0, kε₀] by
    :func:`~optcomp._inverse.float_boundary`, to relative ``_GUESS_XTOL``; uncertified: a start only)."""
    found = float_boundary(lambda e: _estimate_delta(k, e0, e) <= delta, name="epsilon", passing_above=True,
                           fail=0.0, passing=k * e0, xtol=_GUESS_XTOL)
    return 0.5 * ((found.fail or 0.0) + (found.passing or k * e0))


def nonadaptive_epsilon(epsilon0: float, count: int, delta: float) -> Bound:
    """Certified bracket of the optimal ε(δ) of ``count`` ε₀-BR steps fixed in advance (the inverse of
    :func:`nonadaptive_delta` by :func:`optcomp._inverse.solve` on each end, to relative ``EPSILON_XTOL``: the
    upper end's certified δ is ≤ δ, the lower end's certified lower δ exceeds it; each end is an evaluated
    point, so the bracket is as certified as :func:`nonadaptive_delta`). **Non-adaptive** (module docstring).

    The search starts at a float estimate of the root (:func:`_estimate_epsilon`, two binomial distribution
    functions per candidate; uncertified, it only places the first evaluations), so each end takes a few
    certified evaluations.

    Args:
        epsilon0: ε₀ of each step, in (0, 500].
        count: the number of steps k ≥ 1.
        delta: δ in [0, 1].
    """
    e0 = BR_EPSILON.validate("epsilon0", epsilon0)
    k = check_int("count", count, minimum=1)
    d = check_probability("delta", delta)
    top = _top(k, e0)
    if d >= 1.0:
        return Bound(0.0, 0.0)
    if d == 0.0:
        return Bound(top, top)
    cache: dict[float, Bound] = {}

    def at(e: float) -> Bound:
        if e not in cache:
            cache[e] = nonadaptive_delta(e0, k, e)
        return cache[e]

    guess = _estimate_epsilon(k, e0, d)
    near_zero = not guess > _START_OFFSET * top  # the root may be at 0: δ(0) is checked, certified
    if near_zero and at(0.0).upper <= d:
        return Bound(0.0, 0.0)
    start = min(max(guess * (1.0 + _START_OFFSET), top * _START_OFFSET), top)
    up = solve(at, d, name="epsilon", guess=start, rtol=EPSILON_XTOL, side="upper", limit=top, lowest=0.0,
               budget=_BUDGET)
    upper = top if up.passing is None else up.passing
    if near_zero and at(0.0).lower <= d:
        return Bound(0.0, upper)
    low = solve(at, d, name="epsilon", guess=max(guess * (1.0 - _START_OFFSET), upper * _START_OFFSET),
                rtol=EPSILON_XTOL, side="lower", passing=upper, lowest=0.0, budget=_BUDGET)
    return Bound(0.0 if low.fail is None else low.fail, upper)


__all__ = ["nonadaptive_delta", "nonadaptive_epsilon"]

"""The law of one balls-in-bins epoch by certified repeated convolution on a geometric grid.

One epoch of t steps with one allocated step per record is, by ``docs/samplers.md`` Lemma A, the pair
(P_t, Q_t) with likelihood ratio S/t, S = Σᵢ Xᵢ a sum of t i.i.d. lognormal factors Xᵢ = e^{ℓᵢ},
ℓᵢ ~ N(−μ²/2, μ²) under Q (μ = 1/σ). This module builds the Q-law of S on the grid xⱼ = t·e^{jh}
(h dyadic), so that an atom at xⱼ has privacy loss exactly jh, in two ways:

* **upper** (Lemma C, ``docs/samplers.md``): every factor, and every sum of two partial sums, is split
  onto the two grid points around it *preserving the mean*. Then E[S′ | output] = S and the pair
  ((s/t)·Q′, Q′) dominates (P_t, Q_t) in both directions. Only upper envelopes of the Q-masses are
  carried (δ is increasing in every mass at a fixed loss). Tails: factors above ℓ_max are revealed
  (singular atoms, bounded by union bounds), atoms of a partial sum above the trimming threshold are
  revealed too (P-mass ≤ Σ q_k·(x_k + t − m)/t, m the factors in the partial), factors below ℓ_min
  and partial sums below the threshold are split onto {0, x_cut} (mean-preserving; S = 0 has loss −∞).
* **lower** (Lemma D): every factor is labelled by its cell, every sum by the cell of xᵢ + xⱼ of its
  two labels; the label J is a function of the output, so (P_J, Q_J) is dominated by the pair. Each
  label carries Q(J = k) and E_Q[S; J = k]/x_k as [lo, hi] intervals; dropped tails are ⊥.

**Rounding.** The split weights w(d) of a sum xⱼ + x_{j−d} are tabulated once per h (float, with
their error bound added outwards; the cell offset f(d) is decided in 40-digit mpmath where the float
value is near a tie). Every stage is a sum of non-negative terms (direct convolutions by
``numpy.convolve``, no FFT; the far field d ≥ D_far by prefix sums), so its float result is within
γ_M relative of the exact sum of the same inputs (Higham Lemma 3.1, M counted per stage), plus an
absolute underflow term; results are widened by that. The single subtraction of the far field's lower
weight 1 − w(d) ≥ 1/2 is bounded explicitly. Factor cells come from ``_rounding.cell_log_masses``
(assumption LAW_LOG_ERROR), widened for the float error of the cell edges ln t + jh.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import mpmath
import numpy as np
from scipy.special import log_ndtr, ndtri

from optcomp._numerics import (
    ALLOCATION_LOW_VARIANCE,
    ALLOCATION_TAIL,
    LAW_LOG_ERROR,
    SMALLEST_SUBNORMAL,
    FloatArray,
    GridTooLargeError,
)
from optcomp._rounding import cell_log_masses, next_up, rounding_error, widen_down, widen_up
from optcomp.mechanisms._law import PrivacyLossLaw

#: Decimal digits of the mpmath weight tables.
_DIGITS = 40
#: Largest span of the grid in nats (e^{rh} of a relative index r must not overflow).
_MAX_SPAN = 600.0
#: Largest (factor cells × band width) of one stage's convolution (about its multiply-adds; ~10 s).
_MAX_WORK = 4e9
#: Roundings charged per term beyond the counted ones (products with tabulated weights, exp tables).
_TERM_ROUNDINGS = 8


@dataclass(frozen=True)
class Weights:
    """Split tables of one grid step h (all rounded outwards from 40-digit values).

    Attributes:
        h: the grid step.
        groups: (f, d0, d1): the differences d in [d0, d1) whose sum xⱼ(1 + e^{−dh}) lies in
            [x_{j+f}, x_{j+f+1}); together they cover 0 ≤ d < far.
        w_hi, om_hi: upper ends of the weight w(d) to x_{j+f+1} and of 1 − w(d) to x_{j+f}.
        e_lo, e_hi: envelopes of e^{−dh}, d < far.
        ef_lo, ef_hi: envelopes of e^{−fh}, f ≤ groups[0].f.
        far: D_far, the first d with w(d) ≤ 1/2 and f(d) = 0 (all larger d too).
        expm1_lo: a lower end of e^h − 1.
    """

    h: float
    groups: tuple[tuple[int, int, int], ...]
    w_hi: FloatArray
    om_hi: FloatArray
    e_lo: FloatArray
    e_hi: FloatArray
    ef_lo: FloatArray
    ef_hi: FloatArray
    far: int
    expm1_lo: float


#: A computed f(d) = ln(1 + e^{−dh})/h this close to an integer is decided in mpmath instead.
_TIE_MARGIN = 1e-6


def _exact_f(d: int, h: float) -> int:
    """⌊ln(1 + e^{−dh})/h⌋ in 40-digit arithmetic (the float value was within _TIE_MARGIN of an integer)."""
    with mpmath.workdps(_DIGITS):
        hm = mpmath.mpf(h)
        return int(mpmath.floor(mpmath.log1p(mpmath.exp(-d * hm)) / hm))


@functools.lru_cache(maxsize=8)
def weights(h: float) -> Weights:
    """The split tables of grid step ``h`` (module docstring), cached per h.

    f(d) from the float value of ln(1 + e^{−dh})/h (error ≪ _TIE_MARGIN: exp and log1p within 1 ulp),
    in 40-digit mpmath where that value is within _TIE_MARGIN of an integer. The weights
    w = (e^{−dh} − expm1(fh))/(e^{fh}·expm1(h)) and 1 − w = (expm1((f+1)h) − e^{−dh})/(e^{fh}·expm1(h))
    carry an absolute error of at most 16u·(e^{−dh} + expm1((f+1)h))/(e^{fh}·expm1(h)) (numerator:
    two values within 1 ulp and one subtraction; denominator: three roundings), added outwards.
    """
    e1 = math.expm1(h)
    far = math.ceil(math.log(2.0 / e1) / h) + 1  # w(d) = e^{−dh}/expm1(h) ≤ 1/2 and f(d) = 0 for d ≥ far
    d = np.arange(far, dtype=np.float64)
    ed = np.exp(-d * h)
    g = np.log1p(ed) / h
    f = np.floor(g).astype(np.int64)
    for i in np.flatnonzero(np.abs(g - np.round(g)) < _TIE_MARGIN):
        f[i] = _exact_f(int(i), h)
    fh = f * h
    den = np.exp(fh) * e1
    err = rounding_error(16, (ed + np.expm1(fh + h)) / den)
    w_hi = np.minimum((ed - np.expm1(fh)) / den + err, 1.0)
    om_hi = np.minimum((np.expm1(fh + h) - ed) / den + err, 1.0)
    groups = []
    d0 = 0
    for i in np.flatnonzero(np.diff(f)) + 1:
        groups.append((int(f[d0]), d0, int(i)))
        d0 = int(i)
    groups.append((int(f[d0]), d0, far))
    ef = np.exp(-np.arange(int(f[0]) + 2) * h)
    return Weights(
        h, tuple(groups), w_hi, om_hi, widen_down(ed, 4), widen_up(ed, 4), widen_down(ef, 4), widen_up(ef, 4), far,
        widen_down(e1, 4),
    )


@dataclass(frozen=True)
class Upper:
    """Upper envelopes of a partial sum of m factors: Q-masses at x_{first+i}, at 0, and the P- and
    Q-masses its revealed parts contribute to the epoch's +∞ / −∞ atoms."""

    first: int
    q: FloatArray
    zero: float
    p_flag: float
    q_flag: float
    m: int


@dataclass(frozen=True)
class Lower:
    """Envelopes of Q(J = k) (``q_lo``, ``q_hi``) and of E_Q[S; J = k]/x_k (``r_lo``, ``r_hi``) for the
    labels k = first + i of a partial sum of m factors (Lemma D)."""

    first: int
    q_lo: FloatArray
    q_hi: FloatArray
    r_lo: FloatArray
    r_hi: FloatArray
    m: int


def _pad(units: int) -> float:
    """Absolute underflow slack of ``units`` roundings whose results may be subnormal."""
    return 4.0 * units * SMALLEST_SUBNORMAL


def _gauss_window(mu: float, t: int, h: float, tail: float = ALLOCATION_TAIL) -> tuple[int, int]:
    """Cell indices [j_lo, j_hi): ℓ_max = ln t + j_hi·h leaves P(F = 1) ≤ ``tail``; ℓ_min leaves a
    mean-preserving spread onto {0, x_min} of added variance x_min²·Q(ℓ < ℓ_min) ≤ ALLOCATION_LOW_VARIANCE·h²
    and a mass Q(ℓ < ℓ_min)^t at S = 0 of at most ``tail`` (the tail budget, ≤ ALLOCATION_TAIL)."""
    lt = math.log(t)
    z = float(-ndtri(tail / (2.0 * t)))
    top = mu * mu / 2 + (z + 1.0) * mu
    j_hi = math.ceil((top - lt) / h)
    lo = -mu * mu / 2
    for _ in range(400):
        cand = lo - mu / 4
        lq = float(log_ndtr((cand + mu * mu / 2) / mu))
        if 2 * cand + lq < math.log(ALLOCATION_LOW_VARIANCE * h * h) and t * lq < math.log(tail):
            break
        lo = cand
    j_lo = math.floor((lo - lt) / h)
    if (j_hi - j_lo) * h > _MAX_SPAN:
        raise ValueError(f"noise_multiplier={1 / mu!r} is too small for the balls-in-bins grid (span over {_MAX_SPAN} nats)")
    if (j_hi - j_lo) * weights(h).far > _MAX_WORK:
        raise GridTooLargeError(
            f"the balls-in-bins grid step {h:g} needs {(j_hi - j_lo)} factor cells and a band of "
            f"{weights(h).far}: too much work per convolution; ask for a coarser grid_step or relative_width"
        )
    return j_lo, j_hi


def _cells(mu: float, t: int, h: float, j_lo: int, j_hi: int) -> tuple[FloatArray, ...]:
    """Envelopes of the Q- and P-masses of factor cells [ln t + jh, ln t + (j+1)h) (linear scale), the
    P-mass divided by x_j, and the masses below ℓ_min, with the edges' float error charged."""
    from optcomp.mechanisms.gaussian import GaussianLoss

    law = GaussianLoss(mu)
    lt = math.log(t)
    edges = lt + (j_lo + np.arange(j_hi - j_lo + 1, dtype=np.float64)) * h
    eta = rounding_error(4, abs(lt) + np.abs(edges) + 1.0)  # ln t (≤ 2u), one sum: 4 roundings, generous
    _, q_lo, q_hi = cell_log_masses(law.q_logcdf(edges), law.q_logsf(edges))
    _, m_lo, m_hi = cell_log_masses(law.p_logcdf(edges), law.p_logsf(edges))
    with np.errstate(under="ignore", over="ignore"):
        zq = (edges + mu * mu / 2) / mu
        lphi = -0.5 * zq * zq - math.log(mu * math.sqrt(2 * math.pi)) + np.log(2 * eta)
        mq = np.exp(lphi + rounding_error(16, 1 + np.abs(lphi)))  # Q-mass an edge error may move
        mp = np.exp(lphi + edges + eta + rounding_error(16, 2 + np.abs(lphi) + np.abs(edges)))
    dq = widen_up(mq[:-1] + mq[1:], 4)
    dp = widen_up(mp[:-1] + mp[1:], 4)
    qh = widen_up(np.exp(q_hi), 4) + dq
    ql = np.maximum(widen_down(np.exp(q_lo), 4) - dq, 0.0)
    a = edges[:-1]
    with np.errstate(under="ignore", over="ignore"):
        rh = np.exp(m_hi - a + eta[:-1] + rounding_error(8, 1 + np.abs(m_hi) + np.abs(a))) + widen_up(dp * np.exp(-a + eta[:-1]), 8)
        rl = np.maximum(np.exp(m_lo - a - eta[:-1] - rounding_error(8, 1 + np.abs(m_lo) + np.abs(a))) - widen_up(dp * np.exp(-a + eta[:-1]), 8), 0.0)
    lq_below = float(law.q_logcdf(np.array([edges[0] + eta[0]]))[0])
    lp_below = float(law.p_logcdf(np.array([edges[0] + eta[0]]))[0])
    lq_low = float(law.q_logcdf(np.array([edges[0] - eta[0]]))[0])
    ends = np.array([lq_below, lp_below - edges[0] + eta[0], lp_below - edges[0] - 2 * eta[0], lq_low])
    slack = LAW_LOG_ERROR * np.maximum(1.0, np.abs(ends)) + rounding_error(8, 2 + np.abs(ends))
    below = np.exp(ends + slack * np.array([1.0, 1.0, -1.0, -1.0]))  # Q-mass hi, P-mass/x_min hi, lo, Q-mass lo
    return ql, qh, rl, rh, below, edges


def flag_masses(mu: float, t: int, top: float) -> tuple[float, float]:
    """Upper ends of P_t(F = 1) ≤ Φ̄(z) + (t−1)Φ̄(z + μ) and Q_t(F = 1) ≤ t·Φ̄(z + μ), F = {some ℓᵢ > top}
    (union bounds; ``top`` a computed edge, lowered by its float error)."""
    from optcomp.mechanisms.gaussian import GaussianLoss

    law = GaussianLoss(mu)
    x = np.array([top - rounding_error(8, abs(top) + abs(math.log(t)) + 1.0)])
    lp, lq = float(law.p_logsf(x)[0]), float(law.q_logsf(x)[0])
    up = [math.exp(v + LAW_LOG_ERROR * max(1.0, abs(v)) + rounding_error(4, 1 + abs(v))) for v in (lp, lq)]
    return min(1.0, widen_up(up[0] + (t - 1) * up[1], 8)), min(1.0, widen_up(t * up[1], 8))


def factor_upper(mu: float, t: int, h: float, tail: float = ALLOCATION_TAIL) -> Upper:
    """The factor law split onto the grid (Lemma C step 1: the CtD split, Q side), tail budget ``tail``."""
    w = weights(h)
    j_lo, j_hi = _gauss_window(mu, t, h, tail)
    ql, qh, rl, rh, below, _ = _cells(mu, t, h, j_lo, j_hi)
    e1 = w.expm1_lo
    eh = next_up(math.exp(h)) * (1 + 2 * rounding_error(2))  # ≥ e^h
    with np.errstate(under="ignore"):
        to_lo = np.maximum((qh * eh - rl) / e1, 0.0) + rounding_error(8, (qh * eh + rl) / e1)
        to_hi = np.maximum((rh - ql) / e1, 0.0) + rounding_error(8, (rh + ql) / e1)
    q = np.zeros(j_hi - j_lo + 1)
    q[:-1] += to_lo
    q[1:] += to_hi
    q[0] += below[1]  # mean-preserving spread of the factors below ℓ_min onto {0, x_min}
    q = widen_up(q, 6) + _pad(4)
    zero = max(0.0, below[0] - below[2]) + rounding_error(2, below[0])  # Q(ℓ < ℓ_min) − E[X; ℓ < ℓ_min]/x_min
    return Upper(j_lo, q, float(zero), 0.0, 0.0, 1)


def factor_lower(mu: float, t: int, h: float, tail: float = ALLOCATION_TAIL) -> Lower:
    """The factor law labelled by its cells (Lemma D); the part below ℓ_min joins the first cell."""
    j_lo, j_hi = _gauss_window(mu, t, h, tail)
    ql, qh, rl, rh, below, _ = _cells(mu, t, h, j_lo, j_hi)
    ql, qh, rl, rh = ql.copy(), qh.copy(), rl.copy(), rh.copy()
    qh[0] = widen_up(qh[0] + below[0], 4)
    rh[0] = widen_up(rh[0] + below[1], 4)
    ql[0] = widen_down(ql[0] + below[3], 4)
    rl[0] = widen_down(rl[0] + below[2], 4)
    return Lower(j_lo, ql, qh, rl, rh, 1)


def _overlap(fx: int, d0: int, clen: int, fy: int, ny: int) -> tuple[int, int]:
    """The anchors j (absolute) with a convolution value (j = fx + d0 + r, 0 ≤ r < clen) and a y entry."""
    return max(fy, fx + d0), min(fy + ny, fx + d0 + clen)


def _prefix(x: FloatArray, fx: int, h: float, fy: int, ny: int, far: int) -> tuple[FloatArray, FloatArray, int, int]:
    """For anchors j in y's range: C_j = Σ_{i ≤ j−far} xᵢ and U_j = Σ_{i ≤ j−far} xᵢ e^{−(j−i)h} (upper
    estimates within γ_{n+8}), and the anchor range [j0, j1) where they are non-empty."""
    nx = x.size
    j0, j1 = max(fy, fx + far), fy + ny
    if j0 >= j1:
        return np.zeros(0), np.zeros(0), j0, j0
    idx = np.minimum(np.arange(j0, j1) - far - fx, nx - 1)
    with np.errstate(under="ignore"):
        scaled = x * np.exp((np.arange(nx) - nx) * h)
        c = np.cumsum(x)[idx]
        u = np.cumsum(scaled)[idx] * np.exp(-(np.arange(j0, j1) - fx - nx) * h)
    return c, u, j0, j1


def _band_upper(out: FloatArray, base: int, x: Upper, y: Upper, w: Weights, d_start: int, d_stop: int) -> None:
    """Adds Σ over pairs (i of x, j of y, d = j − i in [d_start, d_stop)) of xᵢyⱼ split onto x_{j+f(d)}, x_{j+f(d)+1}."""
    for f, d0, d1 in w.groups:
        lo, hi = max(d0, d_start), min(d1, d_stop)
        if lo >= hi:
            continue
        c_om = np.convolve(x.q, w.om_hi[lo:hi])
        c_w = np.convolve(x.q, w.w_hi[lo:hi])
        j0, j1 = _overlap(x.first, lo, c_om.size, y.first, y.q.size)
        if j0 >= j1:
            continue
        yy = y.q[j0 - y.first : j1 - y.first]
        r = slice(j0 - x.first - lo, j1 - x.first - lo)
        out[j0 + f - base : j1 + f - base] += yy * c_om[r]
        out[j0 + f + 1 - base : j1 + f + 1 - base] += yy * c_w[r]
    if d_stop > w.far:
        c, u, j0, j1 = _prefix(x.q, x.first, w.h, y.first, y.q.size, max(w.far, d_start))
        if j0 < j1:
            yy = y.q[j0 - y.first : j1 - y.first]
            up = u / w.expm1_lo
            low = np.maximum(c - up, 0.0) + rounding_error(4 * (x.q.size + 16), c + up)
            out[j0 - base : j1 - base] += yy * low
            out[j0 + 1 - base : j1 + 1 - base] += yy * up


def _roundings(w: Weights, n: int) -> int:
    """Roundings charged to one output entry of a stage (module docstring): the longest convolution,
    four accumulations per group and ordering, the prefix sums, the zero atom and the products."""
    longest = max(d1 - d0 for _, d0, d1 in w.groups)
    return longest + 4 * (len(w.groups) + 2) + 8 * (n + 16) + _TERM_ROUNDINGS


def combine_upper(a: Upper, b: Upper, t: int, w: Weights, tail: float = ALLOCATION_TAIL) -> Upper:
    """The split law of the sum of two independent partial sums (Lemma C step 2), then trimmed."""
    top = w.groups[0][0] + 2
    base = min(a.first, b.first)
    out = np.zeros(max(a.first + a.q.size, b.first + b.q.size) + top - base)
    if a is b:
        _band_upper(out, base, a, a, w, 1, math.inf)  # type: ignore[arg-type]
        out *= 2.0
        _band_upper(out, base, a, a, w, 0, 1)
    else:
        _band_upper(out, base, a, b, w, 0, math.inf)  # type: ignore[arg-type]
        _band_upper(out, base, b, a, w, 1, math.inf)  # type: ignore[arg-type]
    out[b.first - base : b.first - base + b.q.size] += a.zero * b.q
    out[a.first - base : a.first - base + a.q.size] += b.zero * a.q
    m = _roundings(w, max(a.q.size, b.q.size))
    out = widen_up(out, m + 4) + _pad(m)
    merged = Upper(base, out, widen_up(a.zero * b.zero, 4) + _pad(2), a.p_flag + b.p_flag, a.q_flag + b.q_flag, a.m + b.m)
    return trim_upper(merged, t, w.h, tail)


def trim_upper(s: Upper, t: int, h: float, tail: float = ALLOCATION_TAIL) -> Upper:
    """Reveal the right tail (its P-mass ≤ Σ q_k(x_k + t − m)/t, Q-mass ≤ Σ q_k, that P-mass bound up to
    ``tail``) and spread the left tail onto {0, x_cut} (mean-preserving, Q-mass up to ``tail``)."""
    q = s.q
    n = q.size
    k = np.arange(n)
    with np.errstate(under="ignore", over="ignore"):
        xr = np.exp((s.first + k) * h)  # x_k / t
    pm = q * (xr + (t - s.m) / t)
    right = np.cumsum(pm[::-1])[::-1]
    hi = int(np.searchsorted(-right, -tail, side="left"))  # first index whose suffix ≤ tail
    hi = max(hi, 1)
    left = np.cumsum(q)
    lo = int(np.searchsorted(left, tail, side="right"))  # entries [0, lo) have prefix ≤ tail
    lo = min(lo, hi - 1)
    p_flag, q_flag, zero = s.p_flag, s.q_flag, s.zero
    if hi < n:
        p_flag = widen_up(math.fsum(pm[hi:].tolist()) * (1 + rounding_error(8)), 4)
        p_flag = widen_up(s.p_flag + p_flag, 4)
        q_flag = widen_up(s.q_flag + widen_up(math.fsum(q[hi:].tolist()), 4), 4)
    kept = q[lo:hi].copy()
    if lo > 0:
        with np.errstate(under="ignore"):
            moved = q[:lo] * np.exp((k[:lo] - lo) * h)
        kept[0] = widen_up(kept[0] + widen_up(math.fsum(moved.tolist()), 8), 4)
        zero = widen_up(zero + widen_up(math.fsum(q[:lo].tolist()), 4), 4)
    return Upper(s.first + lo, kept, zero, p_flag, q_flag, s.m)


def _power(t: int, factor: object, combine: object) -> object:
    """Binary powering: the t-fold sum from the factor law with ⌊log₂ t⌋ squarings and popcount(t) − 1
    products (each ``combine(x, y)`` an independent sum)."""
    result = None
    power = factor
    bits = t
    while bits:
        if bits & 1:
            result = power if result is None else combine(result, power)  # type: ignore[operator]
        bits >>= 1
        if bits:
            power = combine(power, power)  # type: ignore[operator]
    return result


@functools.lru_cache(maxsize=16)
def upper_law(sigma: float, t: int, h: float, tail: float = ALLOCATION_TAIL) -> PrivacyLossLaw:
    """The remove-direction law of the split pair (Lemma C): atoms at losses jh with upper envelopes of
    their masses, P(+∞) and Q(−∞) from the revealed tails and S = 0, each tail of mass up to ``tail``
    (``docs/samplers.md`` Lemma E). Cached per (σ, t, h, tail)."""
    mu = 1.0 / sigma
    w = weights(h)
    factor = factor_upper(mu, t, h, tail)
    s = _power(t, factor, lambda x, y: combine_upper(x, y, t, w, tail))
    assert isinstance(s, Upper)
    top = math.log(t) + (_gauss_window(mu, t, h, tail)[1]) * h
    pf, qf = flag_masses(mu, t, top)
    keep = s.q > 0
    k = (s.first + np.flatnonzero(keep)).astype(np.float64)
    q = s.q[keep]
    with np.errstate(under="ignore", over="ignore"):
        p = widen_up(q * np.exp(k * h), 8)
    return PrivacyLossLaw(
        atom_losses=k * h,
        atom_p=p,
        atom_q=q,
        p_inf=min(1.0, widen_up(pf + s.p_flag, 4)),
        q_neg_inf=min(1.0, widen_up(qf + s.q_flag + s.zero, 4)),
    )


@functools.lru_cache(maxsize=16)
def upper_laws(sigma: float, t: int, h: float, tail: float = ALLOCATION_TAIL) -> tuple[PrivacyLossLaw, PrivacyLossLaw]:
    """(remove, add) laws of the split pair: :func:`upper_law` and its swap (one pipeline, Lemma C)."""
    law = upper_law(sigma, t, h, tail)
    return law, law.swapped()

"""Distinct real ε_i by the split construction (design: second-order certified brackets, §3).

Every (ε_i, δ_i) black box is KOV's canonical mechanism; its δ_i enters only through Π(1 − δ_i)
(:mod:`._spec`), so what remains is the composition of randomized responses RR_{ε_i} (loss ±ε_i, P(+) =
p(ε_i) = e^{ε_i}/(1 + e^{ε_i})). On a grid of step Δ:

**Upper end — an exact dominating mixture.** With a = AΔ ≤ ε ≤ b = (A + 1)Δ, RR_ε is a post-processing
of "run RR_a with probability λ, else RR_b, and reveal which", where

    λ = p(ε)·expm1(b − ε) / (p(a)·expm1(Δ))        (so that λ p(a) + (1 − λ) p(b) = p(ε)).

Rounding λ *down* keeps the domination (RR_a is a post-processing of RR_b). The mixture's loss is
±AΔ or ±(A + 1)Δ, so the composed loss lives on Δ·ℤ exactly. Items of one cell (same A) are composed
in closed form: a Poisson-binomial over how many chose b, then two binomial walks (a ``bincount`` over
the triples (m, j_a, j_b)); cells are combined by the certified tree of :mod:`._tree`. The default
path (:func:`envelopes`) composes the same per-item laws in the frequency domain instead
(:mod:`._freq`: k·(#alive bins) work plus one inverse FFT, no leaves), and keeps the tree as fallback.

**Lower end — a dominated quantised pair.** The index C_i·sign of each outcome, C_i = round(ε_i/Δ), is
a deterministic function of the output, and so is J = Σ ±C_i: the pair (P_J, Q_J) is a post-processing
of the true composition, and Σ_j (P_J(j) − e^{ε_g} Q_J(j))_+ ≤ D(ε_g) for every ε_g. P_J and the tilted
Q̂_J(j) = Q_J(j)·e^{jΔ} are Poisson-binomials on stride 2C per cell, composed with the same tree (lower
envelope of P, upper envelope of Q̂, both cropped to the same windows).

Both ends are off the truth by O(kΔ²) only (no first-order term), and both are exact, up to float error,
when every ε_i lies on the grid (λ ∈ {0, 1}, C_i = ε_i/Δ). Rounding of the leaves' entries is carried as
a relative factor e^{±η}, η = Σ over leaves of 16u·(n + 8 + |θ|·max|index| + |log m|).

Mechanisms with ε_i > ``HUGE_EPS`` (p(ε_i) = 1 in float64) are split off by the caller: their loss is
+ε_i except with probability ≤ 2⁻¹⁰⁷⁴ (put on the +∞ atom above; dropped below, which rescales r).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import special

from optcomp._numerics import FloatArray
from optcomp._rounding import next_down, next_up, rounding_error, widen_down, widen_up
from optcomp.optimal import _freq, _tree
from optcomp.optimal._solve import Weights

#: Items per closed-form cell leaf (upper end: n³/6 triples; lower end: O(n²) Poisson-binomial).
_UPPER_BATCH = 32
_LOWER_BATCH = 64
#: Repeated values with more copies than this are composed by binary powering of one leaf.
_POWER_MIN = 8
_FLOAT_MAX = float(np.finfo(np.float64).max)


def _split(x: FloatArray) -> tuple[FloatArray, FloatArray]:
    c = 134217729.0 * x
    hi = c - (c - x)
    return hi, x - hi


def two_prod(a: FloatArray, b: float) -> tuple[FloatArray, FloatArray]:
    """Error-free product: a·b = p + e exactly (Dekker/Veltkamp), for |a·b| ≪ 2¹⁰²³."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(np.asarray(b, dtype=np.float64))
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


def cells(eps: FloatArray, step: float) -> tuple[np.ndarray, FloatArray]:
    """A_i = ⌊ε_i/Δ⌋ (checked exactly) and b_i − ε_i = (A_i + 1)Δ − ε_i (relative error ≤ u)."""
    a = np.floor(eps / step)
    for _ in range(2):
        p, e = two_prod(a, step)
        over = ((p - eps) + e) > 0  # AΔ > ε: one too many
        a = np.where(over, a - 1.0, a)
        p, e = two_prod(a + 1.0, step)
        under = ((p - eps) + e) < 0  # (A+1)Δ < ε: one too few
        a = np.where(under, a + 1.0, a)
    p, e = two_prod(a + 1.0, step)
    gap = (p - eps) + e
    return a.astype(np.int64), np.maximum(gap, 0.0)


def mixture_lambda(eps: FloatArray, a: np.ndarray, gap: FloatArray, step: float) -> FloatArray:
    """λ_i rounded down: p(ε)·expm1(b − ε)/(p(a)·expm1(Δ)), relative error ≤ 12u, clamped to [0, 1]."""
    log_pe = -np.logaddexp(0.0, -eps)
    log_pa = -np.logaddexp(0.0, -(a * step))
    lam = np.exp(log_pe - log_pa) * np.expm1(gap) / math.expm1(step)
    lam = widen_down(lam, 32)
    return np.asarray(np.clip(lam, 0.0, 1.0), dtype=np.float64)


def _poisson_binomial(p: FloatArray) -> FloatArray:
    """P(S = m), S = Σ Bernoulli(p_i), by the O(n²) recursion (positive terms: relative error ≤ 2nu)."""
    f = np.zeros(p.size + 1)
    f[0] = 1.0
    for i, pi in enumerate(p.tolist()):
        f[1 : i + 2] = f[1 : i + 2] * (1.0 - pi) + f[: i + 1] * pi
        f[0] *= 1.0 - pi
    return f


def _weighted_pb(wp: FloatArray, wm: FloatArray) -> FloatArray:
    """Σ over subsets of Π w⁺ (chosen) Π w⁻ (others), by count of chosen (positive terms)."""
    f = np.zeros(wp.size + 1)
    f[0] = 1.0
    for i, (a, b) in enumerate(zip(wp.tolist(), wm.tolist())):
        f[1 : i + 2] = f[1 : i + 2] * b + f[: i + 1] * a
        f[0] *= b
    return f


@lru_cache(maxsize=4)
def _log_choose_table(n: int) -> FloatArray:
    """log C(i, j) for 0 ≤ j ≤ i ≤ n (gammaln: a few ulps)."""
    i = np.arange(n + 1, dtype=np.float64)[:, None]
    j = np.arange(n + 1, dtype=np.float64)[None, :]
    with np.errstate(invalid="ignore"):
        out = special.gammaln(i + 1) - special.gammaln(j + 1) - special.gammaln(i - j + 1)
    return np.asarray(np.where(j <= i, out, -np.inf), dtype=np.float64)


@lru_cache(maxsize=128)
def _triples(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    m, ja, jb = [], [], []
    for mm in range(n + 1):
        g_a, g_b = np.meshgrid(np.arange(n - mm + 1), np.arange(mm + 1), indexing="ij")
        m.append(np.full(g_a.size, mm))
        ja.append(g_a.ravel())
        jb.append(g_b.ravel())
    return np.concatenate(m), np.concatenate(ja), np.concatenate(jb)


def _log_binom_pmf(n: np.ndarray, j: np.ndarray, log_p: float, log_q: float) -> FloatArray:
    nf, jf = n.astype(np.float64), j.astype(np.float64)
    out = _log_choose_table(_UPPER_BATCH)[n, j]
    with np.errstate(invalid="ignore"):
        out = out + np.where(jf > 0, jf * log_p, 0.0) + np.where(nf - jf > 0, (nf - jf) * log_q, 0.0)
    return np.asarray(out, dtype=np.float64)


def _moments(index: np.ndarray, logw: FloatArray) -> tuple[float, float]:
    """Untilted mean and variance of the index under the (normalised) weights."""
    w = np.exp(logw - float(np.max(logw)))
    w /= float(np.sum(w))
    mean = float(np.sum(index * w))
    return mean, float(np.sum((index - mean) ** 2 * w))


def _tilted_leaf(
    index: np.ndarray, logw: FloatArray, theta: float, span: tuple[int, int] | None = None
) -> tuple[int, FloatArray, float, float]:
    """(offset, tilted normalised vector, log normaliser, η) from log-weights at integer indices.

    ``span`` (lo, hi) fixes the vector's index range (it must contain every index of non-zero weight).
    """
    lt = logw + theta * index
    keep = lt > -math.inf
    index, lt = index[keep], lt[keep]
    mx = float(np.max(lt))
    log_m = mx + math.log(float(np.sum(np.exp(lt - mx))))
    lo, hi = (int(np.min(index)), int(np.max(index))) if span is None else span
    arr = np.bincount(index - lo, weights=np.exp(lt - log_m), minlength=hi - lo + 1)
    eta = rounding_error(
        16.0, index.size + 8.0 + abs(theta) * float(np.max(np.abs(index))) + abs(log_m) + mx - float(np.min(lt))
    )
    return lo, np.asarray(arr, dtype=np.float64), log_m, eta


def upper_leaf(big_a: int, lams: FloatArray, step: float, theta: float) -> tuple[_tree.Node, float]:
    """Closed form of n items of cell A: Poisson-binomial over the b-choices, binomial walks inside."""
    n = lams.size
    a, b = big_a * step, (big_a + 1) * step
    lpa, lqa = -math.log1p(math.exp(-a)), -float(np.logaddexp(0.0, a))
    lpb, lqb = -math.log1p(math.exp(-b)), -float(np.logaddexp(0.0, b))
    pb = _poisson_binomial(1.0 - lams)
    m, ja, jb = _triples(n)
    with np.errstate(divide="ignore"):
        lw = np.log(pb[m]) + _log_binom_pmf(n - m, ja, lpa, lqa) + _log_binom_pmf(m, jb, lpb, lqb)
    index = (2 * big_a * ja + (2 * big_a + 2) * jb - big_a * (n - m) - (big_a + 1) * m).astype(np.int64)
    off, arr, log_m, eta = _tilted_leaf(index, lw, theta)
    eta += rounding_error(8.0, n) * (math.log(n + 1.0) + abs(lpa) + abs(lqa) + abs(lpb) + abs(lqb) + 4.0)
    mean0, var0 = _moments(index, lw)
    node = _tree.leaf(off, [arr], [log_m], mean0, var0, n * float(2 * big_a + 2) ** 2)
    return node, eta


def lower_leaf(big_c: int, eps: FloatArray, step: float, theta: float) -> tuple[_tree.Node, float]:
    """n items quantised to ±C: P_J and tilted Q̂_J (Poisson-binomials on stride 2C)."""
    n = eps.size
    sp_pos = np.logaddexp(0.0, eps)  # softplus(ε)
    sp_neg = np.logaddexp(0.0, -eps)  # softplus(−ε)
    p = np.exp(-sp_neg)
    fp = _poisson_binomial(p)
    cd = big_c * step
    fq = _weighted_pb(np.exp(cd - sp_pos), np.exp(-sp_neg - cd))
    s = np.arange(n + 1)
    index = (big_c * (2 * s - n)).astype(np.int64)
    with np.errstate(divide="ignore"):
        lfp, lfq = np.log(fp), np.log(fq)
        # a common index range (an entry may underflow to 0 in one of the two vectors only)
        nz = (lfp > -math.inf) | (lfq > -math.inf)
        span = (int(np.min(index[nz])), int(np.max(index[nz])))
        o1, a1, m1, e1 = _tilted_leaf(index, lfp, theta, span)
        o2, a2, m2, e2 = _tilted_leaf(index, lfq, theta, span)
    assert o1 == o2 and a1.size == a2.size
    eta = max(e1, e2) + rounding_error(8.0, n) * (4.0 + abs(cd) + float(np.max(sp_pos)))
    with np.errstate(divide="ignore"):
        mean0, var0 = _moments(index, np.log(fp))
    return _tree.leaf(o1, [a1, a2], [m1, m2], mean0, var0, n * float(2 * big_c) ** 2), eta


def _batches(keys: np.ndarray, size: int) -> list[np.ndarray]:
    order = np.argsort(keys, kind="stable")
    ks = keys[order]
    out: list[np.ndarray] = []
    starts = np.flatnonzero(np.r_[True, ks[1:] != ks[:-1]])
    ends = np.r_[starts[1:], ks.size]
    for s0, s1 in zip(starts.tolist(), ends.tolist()):
        for b0 in range(s0, s1, size):
            out.append(order[b0 : min(b0 + size, s1)])
    return out


def upper_envelope(eps: FloatArray, counts: np.ndarray, step: float, theta: float) -> Weights:
    """Upper envelope (dominating mixture) of the loss law of Σ counts·RR_ε at grid step Δ."""
    a, gap = cells(eps, step)
    lam = mixture_lambda(eps, a, gap, step)
    few = counts <= _POWER_MIN
    idx = np.repeat(np.flatnonzero(few), counts[few])
    leaves: list[_tree.Node] = []
    eta = 0.0
    for batch in _batches(a[idx], _UPPER_BATCH):
        items = idx[batch]
        node, e = upper_leaf(int(a[items[0]]), lam[items], step, theta)
        leaves.append(node)
        eta += e
    for i in np.flatnonzero(~few).tolist():
        node, e = upper_leaf(int(a[i]), lam[i : i + 1], step, theta)
        leaves.append(_tree.power(node, int(counts[i]), theta, "upper"))
        eta += e * int(counts[i])
    root = _tree.combine(leaves, theta, "upper")
    arr, err, log_m = root.arrs[0], root.errs[0], root.log_m[0]
    j = root.offset + np.arange(arr.size, dtype=np.float64)
    t = j * step
    keep = t > 0
    j, t, av = j[keep], t[keep], arr[keep]
    eta += rounding_error(8.0, abs(log_m) + abs(theta) * float(np.max(np.abs(j), initial=0.0)) + 4.0)
    with np.errstate(divide="ignore"):
        logw = np.log(av + err) + log_m - theta * j + eta
    # A probability is ≤ 1 (far from the tilt the untilted error bars exceed it).
    logw = np.minimum(logw, 0.0)
    return Weights(next_up(t), logw, min(1.0, widen_up(root.inf_p, 64)))


def lower_envelope(eps: FloatArray, counts: np.ndarray, step: float, theta: float) -> Weights:
    """Lower envelope (dominated quantised pair) as weights P_J at losses s_j = ln P_J − ln Q_J."""
    c = np.rint(eps / step).astype(np.int64)
    few = counts <= _POWER_MIN
    idx = np.repeat(np.flatnonzero(few), counts[few])
    idx = idx[c[idx] > 0]
    leaves: list[_tree.Node] = []
    eta = 0.0
    for batch in _batches(c[idx], _LOWER_BATCH):
        items = idx[batch]
        node, e = lower_leaf(int(c[items[0]]), eps[items], step, theta)
        leaves.append(node)
        eta += e
    for i in np.flatnonzero(~few & (c > 0)).tolist():
        node, e = lower_leaf(int(c[i]), eps[i : i + 1], step, theta)
        leaves.append(_tree.power(node, int(counts[i]), theta, "lower"))
        eta += e * int(counts[i])
    if not leaves:
        return Weights(np.zeros(0), np.zeros(0), 0.0)
    root = _tree.combine(leaves, theta, "lower")
    (ap, aq), (ep, eq), (mp, mq) = root.arrs, root.errs, root.log_m
    j = root.offset + np.arange(ap.size, dtype=np.float64)
    pv = np.maximum(ap - ep, 0.0)
    qv = aq + eq
    keep = pv > 0
    j, pv, qv = j[keep], pv[keep], qv[keep]
    eta += rounding_error(8.0, abs(mp) + abs(mq) + abs(theta) * float(np.max(np.abs(j), initial=0.0)) + 4.0)
    logp = np.log(pv) + mp - theta * j - eta
    logq = np.log(qv) + mq - theta * j + eta - j * step
    s = logp - logq
    s = next_down(s - rounding_error(8.0, np.abs(logp) + np.abs(logq) + np.abs(j * step)))
    pos = s > 0
    order = np.argsort(s[pos], kind="stable")
    return Weights(s[pos][order], logp[pos][order], 0.0)


def tilt_lambda(eps: FloatArray, counts: np.ndarray, eps_target: float) -> float:
    """λ whose tilt e^{λL} centres the composed loss at ``eps_target`` (0 if the mean is above it)."""
    cf = counts.astype(np.float64)
    total = float(np.sum(cf * eps))

    def mean_l(lam: float) -> float:
        return float(np.sum(cf * eps * np.tanh(eps * (1.0 + 2.0 * lam) / 2.0)))

    target = min(eps_target, 0.999 * total)
    if mean_l(0.0) >= target:
        return 0.0
    lo, hi = 0.0, 1.0
    while mean_l(hi) < target and hi < 1e6:
        hi *= 2.0
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        if mean_l(mid) < target:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def eps_guess(eps: FloatArray, counts: np.ndarray, log_r: float) -> float:
    """A rough ε_g (normal approximation of L), used only to centre the tilt; never part of an answer."""
    cf = counts.astype(np.float64)
    mu = float(np.sum(cf * eps * np.tanh(eps / 2.0)))
    sigma = math.sqrt(float(np.sum(cf * eps * eps)))
    z = math.sqrt(2.0 * max(-log_r, 0.0)) if math.isfinite(log_r) else 40.0
    return min(mu + sigma * z, float(np.sum(cf * eps)))


def upper_law(eps: FloatArray, counts: np.ndarray, step: float, theta: float) -> _freq.Law:
    """The dominating mixture of every item as a four-point law (±A w.p. λ, ±(A+1) w.p. 1 − λ), tilted."""
    a, gap = cells(eps, step)
    lam = mixture_lambda(eps, a, gap, step)
    av = a.astype(np.float64) * step
    bv = (a + 1).astype(np.float64) * step
    lpa, lqa = -np.logaddexp(0.0, -av), -np.logaddexp(0.0, av)
    lpb, lqb = -np.logaddexp(0.0, -bv), -np.logaddexp(0.0, bv)
    with np.errstate(divide="ignore"):
        ll, l1 = np.log(lam), np.log1p(-lam)
    logp = np.stack([ll + lpa, ll + lqa, l1 + lpb, l1 + lqb], axis=1)
    fin_ll = np.where(np.isfinite(ll), np.abs(ll), 0.0)
    fin_l1 = np.where(np.isfinite(l1), np.abs(l1), 0.0)
    err = rounding_error(4.0, fin_ll + fin_l1 + np.abs(lpa) + np.abs(lqa) + np.abs(lpb) + np.abs(lqb) + av + bv + 4.0)
    return _freq.make_law(a, logp, err, counts.astype(np.float64), theta)


def lower_laws(
    eps: FloatArray, counts: np.ndarray, step: float, theta: float
) -> tuple[_freq.Law, _freq.Law] | None:
    """P and tilted Q̂ (Q̂(j) = Q(j)·e^{jΔ}) of every item quantised to ±C, C = round(ε/Δ) > 0, tilted."""
    c = np.rint(eps / step).astype(np.int64)
    keep = c > 0
    if not keep.any():
        return None
    c, e, cnt = c[keep], eps[keep], counts[keep].astype(np.float64)
    sp_pos, sp_neg = np.logaddexp(0.0, e), np.logaddexp(0.0, -e)
    cd = c.astype(np.float64) * step
    none = np.full(c.size, -math.inf)
    err = rounding_error(4.0, sp_pos + sp_neg + cd + 4.0)
    lp = _freq.make_law(c, np.stack([-sp_neg, -sp_pos, none, none], axis=1), err, cnt, theta)
    lq = _freq.make_law(c, np.stack([cd - sp_pos, -sp_neg - cd, none, none], axis=1), err, cnt, theta)
    return lp, lq


def envelopes(eps: FloatArray, counts: np.ndarray, step: float, eps_target: float) -> tuple[Weights, Weights]:
    """Both envelopes at grid step Δ = ``step``, tilted towards ``eps_target``.

    The frequency-domain path (:mod:`._freq`) is used where it applies, else the tree (:mod:`._tree`).
    """
    theta = tilt_lambda(eps, counts, eps_target) * step
    up = _freq.upper_weights(upper_law(eps, counts, step, theta), theta, step)
    if up is None:
        up = upper_envelope(eps, counts, step, theta)
    laws = lower_laws(eps, counts, step, theta)
    if laws is None:
        return up, Weights(np.zeros(0), np.zeros(0), 0.0)
    lo = _freq.lower_weights(laws[0], laws[1], theta, step)
    if lo is None:
        lo = lower_envelope(eps, counts, step, theta)
    return up, lo

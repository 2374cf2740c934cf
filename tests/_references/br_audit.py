"""Independent references for the adaptive bounded-range audit (``tests/test_adaptive_audit.py``), written from
the definitions without optcomp code.

**Achieved values (lower truths).** :func:`tree_value` is the exact δ(x) = Σ_leaves (P − e^x Q)_+ of one explicit
adaptive strategy over k ε_j-BR steps (a t for every history of the outcome tree; the pair (P_t, Q_t) of
Durfee–Rogers), in mpmath: an analyst who runs it *achieves* that δ, so the optimum is at least this.
:func:`best_strategy` finds a good strategy: the argmax of a fine lattice recursion, then coordinate ascent of
every node's t on the exact tree value.

**A first-order bracket by monotonicity only** (:func:`monotone_bracket`). On the lattice x_n = n·h, with
V_j the optimal adaptive δ of the last j steps (non-increasing in x, 1 − e^x ≤ V ≤ 1, V = 1 − e^x below the
smallest loss and 0 above the largest):

* BR upper (ε′ = ⌈ε/h⌉·h ≥ ε; an ε-BR pair is ε′-BR): on t ∈ [ih, (i+1)h], V(x_n − t) ≤ U_{n−i−1},
  V(x_n − t + ε′) ≤ U_{n−i−1+m}, p_t ≤ p_{ih}, and the value b + p(a − b) with a ≥ b grows with p, so
  δ(x_n) ≤ max_i p_{ih}U_{n−i−1} + (1 − p_{ih})U_{n−i−1+m};
* BR lower (ε″ = ⌊ε/h⌋·h ≤ ε; the ε″-BR family is ε-BR, an achievable analyst): t = ih, i = 0 … m″, exact on
  the lattice;
* a fixed pair with P-masses m_j = P(L ∈ [jh, (j+1)h)): E_P[V(x_n − L)] ≤ Σ m_j U_{n−j−1} + P(L above the
  cells) + P(L = ∞) and ≥ Σ m_j L_{n−j} + P(L = ∞).

No convexity, no chord, no closed-form cell maximum: an independent method, first order in h. Float64
arithmetic (each value a sum of a few hundred non-negative products: relative error far below the gaps the
tests compare).

**Fixed laws** (:func:`gaussian_law`, :func:`laplace_law`, :func:`rr_law`, :func:`subsampled_gaussian_law`): the
P-law of the privacy loss as atoms plus a continuous survival function, from the mechanisms' densities.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction

import mpmath
import numpy as np
from mpmath import mpf
from scipy import special, stats

# -- the BR pair ------------------------------------------------------------------------------------------------


def br_p(epsilon: float, t: np.ndarray | float) -> np.ndarray:
    """p_t = P_t(A) = (1 − e^{t−ε})/(1 − e^{−ε}) in float64."""
    return np.asarray(-np.expm1(np.asarray(t, dtype=np.float64) - epsilon) / -math.expm1(-epsilon))


def br_q(epsilon: float, t: np.ndarray | float) -> np.ndarray:
    """q_t = Q_t(A) = e^{−t}·p_t."""
    tt = np.asarray(t, dtype=np.float64)
    return np.asarray(np.exp(-tt) * br_p(epsilon, tt))


# -- exact value of an explicit strategy ---------------------------------------------------------------------


def _heap(k: int) -> list[list[int]]:
    """Node indices per depth: depth j holds 2^j nodes, node (j, b) at index 2^j − 1 + b."""
    return [[(1 << j) - 1 + b for b in range(1 << j)] for j in range(k)]


def tree_value(epsilons: list[float], x: float, ts: list[float], dps: int = 40) -> mpf:
    """δ(x) = Σ_leaves (P − e^x Q)_+ of the strategy ``ts`` (heap order: the node of history b₁…b_j at depth j is
    2^j − 1 + Σ b_i 2^{j−i}; outcome 0 is A, loss t), exactly in mpmath at ``dps`` digits."""
    k = len(epsilons)
    with mpmath.workdps(dps):
        ex = mpmath.exp(mpf(x))
        level: list[tuple[mpf, mpf]] = [(mpf(1), mpf(1))]
        for j in range(k):
            e = mpf(epsilons[j])
            den = -mpmath.expm1(-e)
            nxt = []
            for b, (p, q) in enumerate(level):
                t = mpf(ts[(1 << j) - 1 + b])
                pa = -mpmath.expm1(t - e) / den
                qa = mpmath.exp(-t) * pa
                nxt.append((p * pa, q * qa))
                nxt.append((p * (1 - pa), q * (1 - qa)))
            level = nxt
        return mpmath.fsum(max(p - ex * q, 0) for p, q in level)


def tree_value_float(epsilons: list[float], x: float, ts: np.ndarray) -> float:
    """:func:`tree_value` in float64 (for the search only)."""
    p = np.ones(1)
    q = np.ones(1)
    for j, e in enumerate(epsilons):
        t = ts[(1 << j) - 1 : (1 << (j + 1)) - 1]
        pa, qa = br_p(e, t), br_q(e, t)
        p = np.stack([p * pa, p * (1 - pa)], axis=1).ravel()
        q = np.stack([q * qa, q * (1 - qa)], axis=1).ravel()
    return float(np.sum(np.maximum(p - math.exp(x) * q, 0.0)))


def _lattice_strategy(epsilons: list[float], x: float, cells: int) -> np.ndarray:
    """A strategy read off a lattice recursion (h = min ε/cells, t on the lattice, each ε_j's family rounded down
    to the lattice): the argmax t at the node's x, followed down the tree."""
    h = min(epsilons) / cells
    ms = [max(1, math.floor(e / h + 1e-9)) for e in epsilons]
    total = sum(ms) + 2
    n0 = -total
    size = 2 * total + 1
    xs = (n0 + np.arange(size)) * h
    v = np.maximum(-np.expm1(xs), 0.0)
    argmax: list[np.ndarray] = []
    for j in range(len(epsilons) - 1, -1, -1):
        m, e2 = ms[j], ms[j] * h
        p = br_p(e2, np.arange(m + 1) * h)
        best = np.full(size, -1.0)
        arg = np.zeros(size, dtype=np.int64)
        for i in range(m + 1):
            a = np.concatenate([np.full(i, 1.0), v[: size - i]])  # V(x_{n−i}); below the range δ ≤ 1 (a seed)
            b_idx = np.arange(size) - i + m
            b = np.where(b_idx < size, v[np.minimum(b_idx, size - 1)], 0.0)
            val = p[i] * a + (1 - p[i]) * b
            better = val > best
            best = np.where(better, val, best)
            arg = np.where(better, i, arg)
        v = best
        argmax.append(arg)
    argmax.reverse()
    ts = np.zeros((1 << len(epsilons)) - 1)
    n_start = round(x / h) - n0

    def walk(j: int, b: int, n: int) -> None:
        if j == len(epsilons):
            return
        i = int(argmax[j][min(max(n, 0), size - 1)])
        t = min(i * h, epsilons[j])
        ts[(1 << j) - 1 + b] = t
        walk(j + 1, 2 * b, n - i)  # outcome A: loss t
        walk(j + 1, 2 * b + 1, n - i + ms[j])  # outcome B: loss t − ε

    walk(0, 0, n_start)
    return ts


def _golden(f: Callable[[float], float], lo: float, hi: float, x0: float, iters: int = 60) -> float:
    """A local maximiser of f on [lo, hi] near x0 (golden section on a bracket around x0, then the best seen)."""
    w = (hi - lo) / 16
    a, b = max(lo, x0 - w), min(hi, x0 + w)
    g = (math.sqrt(5) - 1) / 2
    best_x, best_v = x0, f(x0)
    for _ in range(iters):
        c, d = b - g * (b - a), a + g * (b - a)
        fc, fd = f(c), f(d)
        for xx, vv in ((c, fc), (d, fd)):
            if vv > best_v:
                best_x, best_v = xx, vv
        if fc < fd:
            a = c
        else:
            b = d
    return best_x


def best_strategy(epsilons: list[float], x: float, cells: int = 400, sweeps: int = 3) -> np.ndarray:
    """A near-optimal adaptive strategy: the lattice argmax, then coordinate ascent on the exact value."""
    ts = _lattice_strategy(epsilons, x, cells)
    k = len(epsilons)
    for _ in range(sweeps):
        for j in range(k - 1, -1, -1):
            for node in _heap(k)[j]:

                def f(t: float, node: int = node) -> float:
                    trial = ts.copy()
                    trial[node] = t
                    return tree_value_float(epsilons, x, trial)

                ts[node] = _golden(f, 0.0, epsilons[j], float(ts[node]))
    return ts


def adaptive_lower(epsilons: list[float], x: float, cells: int = 400) -> mpf:
    """An achieved adaptive δ(x): the exact value of :func:`best_strategy` (a lower bound on the optimum)."""
    return tree_value(epsilons, x, list(best_strategy(epsilons, x, cells)))


# -- fixed laws ----------------------------------------------------------------------------------------------


@dataclass
class LossLaw:
    """The P-law of a privacy loss: atoms (loss, P-mass), a continuous part by its survival function
    S(ℓ) = P(L_cont > ℓ) and CDF, on [lo, hi] (its support), and P(L = +∞)."""

    atoms: list[tuple[float, float]] = field(default_factory=list)
    sf: Callable[[np.ndarray], np.ndarray] | None = None
    cdf: Callable[[np.ndarray], np.ndarray] | None = None
    lo: float = -math.inf
    hi: float = math.inf
    p_inf: float = 0.0

    def cell_masses(self, h: float, j0: int, j1: int) -> tuple[np.ndarray, float, float]:
        """(P(L ∈ [jh, (j+1)h)) for j = j0 … j1, P(finite L < j0·h), P(finite L ≥ (j1+1)h))."""
        edges = np.arange(j0, j1 + 2) * h
        m = np.zeros(j1 - j0 + 1)
        below = above = 0.0
        for loss, mass in self.atoms:
            j = math.floor(loss / h)
            if j < j0:
                below += mass
            elif j > j1:
                above += mass
            else:
                m[j - j0] += mass
        if self.sf is not None and self.cdf is not None:
            s = self.sf(edges)
            c = self.cdf(edges)
            mid = 0.5 * (self.lo + self.hi) if math.isfinite(self.lo + self.hi) else 0.0
            use_sf = edges[:-1] >= mid
            m += np.where(use_sf, s[:-1] - s[1:], c[1:] - c[:-1])
            below += float(c[0])
            above += float(s[-1])
        return np.maximum(m, 0.0), below, above


def gaussian_law(mu: float) -> LossLaw:
    """Gaussian mechanism of sensitivity/σ = μ: L ~ N(μ²/2, μ²) under P (both directions)."""
    mean, sd = mu * mu / 2, mu
    return LossLaw(sf=lambda x: stats.norm.sf(x, mean, sd), cdf=lambda x: stats.norm.cdf(x, mean, sd))


def laplace_law(epsilon: float) -> LossLaw:
    """Laplace mechanism of ε (scale 1/ε, sensitivity 1), P = Lap(0), Q = Lap(1): for y ≤ 0 L = ε (P-mass ½),
    y ≥ 1 L = −ε (½e^{−ε}), y ∈ (0, 1) L = ε(1 − 2y), P-density ½ε e^{−εy}."""
    e = epsilon

    def cdf(ell: np.ndarray) -> np.ndarray:  # P(L_cont ≤ ℓ) = P(y ≥ (1 − ℓ/ε)/2, y < 1)
        y = np.clip((1 - np.asarray(ell) / e) / 2, 0.0, 1.0)
        return 0.5 * (np.exp(-e * y) - math.exp(-e))

    def sf(ell: np.ndarray) -> np.ndarray:  # P(y ∈ (0, (1 − ℓ/ε)/2))
        y = np.clip((1 - np.asarray(ell) / e) / 2, 0.0, 1.0)
        return -0.5 * np.expm1(-e * y)

    return LossLaw(atoms=[(e, 0.5), (-e, 0.5 * math.exp(-e))], sf=sf, cdf=cdf, lo=-e, hi=e)


def rr_law(epsilon: float) -> LossLaw:
    """Randomized response of ε: loss ε with P-mass e^ε/(1 + e^ε), −ε with 1/(1 + e^ε)."""
    a = 1.0 / (1.0 + math.exp(-epsilon))
    return LossLaw(atoms=[(epsilon, a), (-epsilon, 1.0 - a)])


def subsampled_gaussian_law(sigma: float, q: float, remove: bool) -> LossLaw:
    """Poisson-subsampled Gaussian (rate q, noise σ, sensitivity 1). remove: P = (1−q)N(0,σ²) + qN(1,σ²),
    Q = N(0,σ²), L(y) = ln(1 − q + q e^{(2y−1)/(2σ²)}) increasing in y; add: P = N(0,σ²), Q the mixture,
    L(y) = −that."""
    s2 = sigma * sigma

    def y_of(ell: np.ndarray) -> np.ndarray:
        """The output y with ±L(y) = ℓ (NaN outside the range)."""
        lv = np.asarray(ell, dtype=np.float64)
        v = lv if remove else -lv
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            z = (np.expm1(v) + q) / q  # e^{(2y−1)/(2σ²)}
            return np.where(z > 0, 0.5 + s2 * np.log(z), -np.inf)

    def p_cdf_y(y: np.ndarray) -> np.ndarray:
        base = stats.norm.cdf(y, 0, sigma)
        return (1 - q) * base + q * stats.norm.cdf(y, 1, sigma) if remove else base

    def p_sf_y(y: np.ndarray) -> np.ndarray:
        base = stats.norm.sf(y, 0, sigma)
        return (1 - q) * base + q * stats.norm.sf(y, 1, sigma) if remove else base

    floor = math.log1p(-q)  # the remove loss's infimum (y → −∞); the add loss's supremum is −floor

    def cdf(ell: np.ndarray) -> np.ndarray:
        lv = np.asarray(ell, dtype=np.float64)
        y = y_of(lv)
        if remove:  # L increasing in y: P(L ≤ ℓ) = P(y ≤ y(ℓ))
            return np.where(lv <= floor, 0.0, p_cdf_y(y))
        return np.where(lv >= -floor, 1.0, p_sf_y(y))  # L decreasing in y: P(L ≤ ℓ) = P(y ≥ y(ℓ))

    def sf(ell: np.ndarray) -> np.ndarray:
        lv = np.asarray(ell, dtype=np.float64)
        y = y_of(lv)
        if remove:
            return np.where(lv <= floor, 1.0, p_sf_y(y))
        return np.where(lv >= -floor, 0.0, p_cdf_y(y))

    return LossLaw(sf=sf, cdf=cdf, lo=floor if remove else -math.inf, hi=math.inf if remove else -floor)


# -- the monotone lattice bracket ------------------------------------------------------------------------------


@dataclass(frozen=True)
class BR:
    epsilon: float


@dataclass(frozen=True)
class Fixed:
    law: LossLaw
    j0: int  # cells j0 … j1 of the law at the bracket's h (the rest counted as tails)
    j1: int


Step = BR | Fixed


def fixed_cells(law: LossLaw, h: float, tail: float = 1e-45) -> Fixed:
    """The law's cells at step h, its support cut where the tails fall below ``tail`` (the cut mass is still
    counted: above at +∞ for the upper end, at the first cell for the lower's left tail, dropped below)."""
    lo, hi = law.lo, law.hi
    if not math.isfinite(lo):
        lo = -60.0
        while float(law.cdf(np.array([lo]))[0]) < tail and lo < 0:  # type: ignore[misc]
            lo /= 1.2
        lo *= 1.2
    if not math.isfinite(hi):
        hi = 60.0
        while float(law.sf(np.array([hi]))[0]) < tail and hi > 0.1:  # type: ignore[misc]
            hi /= 1.2
        hi *= 1.2
    for loss, _ in law.atoms:
        lo, hi = min(lo, loss), max(hi, loss)
    return Fixed(law, math.floor(lo / h) - 1, math.floor(hi / h) + 1)


def _exact_floor(e: float, h: float) -> int:
    m = math.floor(e / h)
    while Fraction(m + 1) * Fraction(h) <= Fraction(e):
        m += 1
    while m > 0 and Fraction(m) * Fraction(h) > Fraction(e):
        m -= 1
    return m


def _exact_ceil(e: float, h: float) -> int:
    m = math.ceil(e / h)
    while Fraction(m) * Fraction(h) < Fraction(e):
        m += 1
    while m > 1 and Fraction(m - 1) * Fraction(h) >= Fraction(e):
        m -= 1
    return m


def monotone_bracket(steps: list[Step], h: float, xs: list[float], n_lo: int, n_hi: int) -> list[tuple[float, float]]:
    """(lower, upper) of the optimal adaptive δ at each x in ``xs`` (lattice points) of ``steps`` run in order
    (module docstring), on lattice indices n_lo … n_hi (readings outside: upper 1 below / the last value above;
    lower 1 − e^x below / 0 above; the range should hold every x − (loss so far) that matters)."""
    size = n_hi - n_lo + 1
    grid_x = (n_lo + np.arange(size)) * h
    floor1 = np.maximum(-np.expm1(grid_x), 0.0)
    up = floor1.copy()
    low = floor1.copy()

    def read(arr: np.ndarray, idx: np.ndarray, upper: bool) -> np.ndarray:
        inside = (idx >= 0) & (idx < size)
        out = arr[np.clip(idx, 0, size - 1)]
        if upper:
            out = np.where(idx < 0, 1.0, out)
        else:
            below_x = (n_lo + idx) * h
            out = np.where(idx < 0, np.maximum(-np.expm1(np.minimum(below_x, 0.0)), arr[0]), out)
            out = np.where(idx >= size, 0.0, out)
        return np.where(inside, arr[np.clip(idx, 0, size - 1)], out)

    base = np.arange(size)
    for st in reversed(steps):
        if isinstance(st, BR):
            m_up = _exact_ceil(st.epsilon, h)
            e_up = m_up * h
            p_up = br_p(e_up, np.arange(m_up) * h)
            new_up = np.zeros(size)
            for i in range(m_up):
                a = read(up, base - i - 1, True)
                b = read(up, base - i - 1 + m_up, True)
                np.maximum(new_up, b + p_up[i] * (a - b), out=new_up)
            m_lo = _exact_floor(st.epsilon, h)
            new_low = low.copy()  # t = ε″: δ(x)
            if m_lo >= 1:
                e_lo = m_lo * h
                p_lo = br_p(e_lo, np.arange(m_lo) * h)
                for i in range(m_lo):
                    a = read(low, base - i, False)
                    b = read(low, base - i + m_lo, False)
                    np.maximum(new_low, b + p_lo[i] * (a - b), out=new_low)
            up, low = new_up, new_low
        else:
            masses, below, above = st.law.cell_masses(h, st.j0, st.j1)
            new_up = np.zeros(size)
            new_low = np.zeros(size)
            for jj, mj in enumerate(masses):
                if mj <= 0.0:
                    continue
                j = st.j0 + jj
                new_up += mj * read(up, base - j - 1, True)
                new_low += mj * read(low, base - j, False)
            new_up += below * read(up, base - st.j0, True) + above + st.law.p_inf
            new_low += st.law.p_inf
            up, low = new_up, new_low
        up = np.minimum(np.minimum.accumulate(up), 1.0)
        low = np.maximum(np.maximum.accumulate(low[::-1])[::-1], floor1)
    out = []
    for x in xs:
        n = round(x / h) - n_lo
        out.append((float(low[n]), float(up[n])))
    return out


# -- routes that bound the adaptive optimum from above -----------------------------------------------------------


def br_rdp(epsilon: float, alpha: float, points: int = 4000) -> float:
    """sup_t D_α(P_t‖Q_t) by a scan of t and a local refinement (float64; the sup's maximiser is interior or at
    an end; accuracy ~1e-12, compared with slack)."""
    t = np.linspace(0.0, epsilon, points + 1)
    p, q = br_p(epsilon, t), br_q(epsilon, t)
    with np.errstate(divide="ignore"):
        val = np.log(p**alpha * q ** (1 - alpha) + (1 - p) ** alpha * (1 - q) ** (1 - alpha))
    return float(np.max(val[np.isfinite(val)])) / (alpha - 1)


def kl_max(epsilon: float) -> float:
    """max_t KL(P_t‖Q_t) (Cesar–Rogers) in mpmath, as a float."""
    with mpmath.workdps(40):
        e = mpf(epsilon)
        return float(e / mpmath.expm1(e) - 1 + mpmath.log(mpmath.expm1(e) / e))


def zcdp_epsilon(rho: float, delta: float) -> float:
    """ε = ρ + 2√(ρ ln(1/δ)) (Bun–Steinke Prop 1.3): a valid conversion of ρ-zCDP."""
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


def rdp_epsilon(curve: Callable[[float], float], delta: float, alphas: np.ndarray) -> float:
    """min_α RDP(α) + ln(1/δ)/(α − 1) (Mironov Prop 3): a valid conversion."""
    return min(curve(float(a)) + math.log(1.0 / delta) / (a - 1.0) for a in alphas)


def nonadaptive_delta(epsilon0: float, k: int, x: float, dps: int = 40) -> mpf:
    """max over t of δ(x) of k copies of (P_t, Q_t) (steps fixed in advance), by a golden-section search over t
    started from the best of a 200-point scan, in mpmath (an achieved value: a lower bound on the
    non-adaptive optimum and on the adaptive one)."""
    with mpmath.workdps(dps):
        e0, xx = mpf(epsilon0), mpf(x)
        logc = [mpmath.loggamma(k + 1) - mpmath.loggamma(i + 1) - mpmath.loggamma(k - i + 1) for i in range(k + 1)]

        def value(t: mpf) -> mpf:
            den = -mpmath.expm1(-e0)
            p = -mpmath.expm1(t - e0) / den
            lp, l1p = mpmath.log(p), mpmath.log1p(-p)
            terms = []
            for i in range(k + 1):  # i outcomes B (loss t − ε₀), k − i outcomes A (loss t)
                loss = k * t - i * e0
                if loss > xx:
                    terms.append(mpmath.exp(logc[i] + (k - i) * lp + i * l1p) * -mpmath.expm1(xx - loss))
            return mpmath.fsum(terms)

        grid = [e0 * j / 200 for j in range(201)]
        vals = [value(t) for t in grid]
        j = max(range(201), key=lambda i: vals[i])
        lo, hi = grid[max(j - 1, 0)], grid[min(j + 1, 200)]
        g = (mpmath.sqrt(5) - 1) / 2
        best = vals[j]
        for _ in range(80):
            c, d = hi - g * (hi - lo), lo + g * (hi - lo)
            fc, fd = value(c), value(d)
            best = max(best, fc, fd)
            if fc < fd:
                lo = c
            else:
                hi = d
        return best


def log_binom_pmf(k: int, i: np.ndarray, p: float) -> np.ndarray:
    return special.gammaln(k + 1) - special.gammaln(i + 1) - special.gammaln(k - i + 1) + i * math.log(p) + (
        k - i) * math.log1p(-p)


__all__ = [
    "BR",
    "Fixed",
    "LossLaw",
    "adaptive_lower",
    "best_strategy",
    "br_p",
    "br_q",
    "br_rdp",
    "fixed_cells",
    "gaussian_law",
    "kl_max",
    "laplace_law",
    "monotone_bracket",
    "nonadaptive_delta",
    "rdp_epsilon",
    "rr_law",
    "subsampled_gaussian_law",
    "tree_value",
    "zcdp_epsilon",
]

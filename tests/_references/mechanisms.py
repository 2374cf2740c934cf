"""Privacy-loss truths of single mechanisms and their subsampled forms: hockey-stick divergences by closed
form, mpmath quadrature or exact enumeration."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import mpmath
import numpy as np

from tests._references.gdp import gdp_epsilon
from tests.tolerances import MPMATH_DPS


def subsampled_gaussian_delta(mu: float, sampling_rate: float, epsilon: float) -> mpmath.mpf:
    """δ(ε) of C_p(G_μ) (Dong–Roth–Su Thm 4.2), the max of the two hockey-stick divergences of the pair
    P = N(0, 1), Q = (1 − p)N(0, 1) + pN(μ, 1) (f_p = T(P, Q); the convex hull of min{f_p, f_p⁻¹} has the
    max of the two conjugates):

    H(Q‖P) = (1 − p)Φ(−x₁) + pΦ(μ − x₁) − e^ε Φ(−x₁), x₁ = (log((e^ε − 1 + p)/p) + μ²/2)/μ;
    H(P‖Q) = Φ(x₂) − e^ε[(1 − p)Φ(x₂) + pΦ(x₂ − μ)], x₂ = (log((e^{−ε} − 1 + p)/p) + μ²/2)/μ, when e^{−ε} > 1 − p.
    """
    with mpmath.workdps(MPMATH_DPS):
        m, p, e = mpmath.mpf(mu), mpmath.mpf(sampling_rate), mpmath.mpf(epsilon)
        x1 = (mpmath.log((mpmath.exp(e) - 1 + p) / p) + m * m / 2) / m
        d1 = (1 - p) * mpmath.ncdf(-x1) + p * mpmath.ncdf(m - x1) - mpmath.exp(e) * mpmath.ncdf(-x1)
        d2 = mpmath.mpf(0)
        if mpmath.exp(-e) > 1 - p:
            x2 = (mpmath.log((mpmath.exp(-e) - 1 + p) / p) + m * m / 2) / m
            d2 = mpmath.ncdf(x2) - mpmath.exp(e) * ((1 - p) * mpmath.ncdf(x2) + p * mpmath.ncdf(x2 - m))
        return max(d1, d2, mpmath.mpf(0))


def mixture_gaussian_delta(
    sigma: float, sensitivities: list[float], probabilities: list[float], epsilon: float, *, add: bool = False
) -> mpmath.mpf:
    """δ(ε) of the pair P = Σ pᵢ N(cᵢ, σ²), Q = N(0, σ²) (remove) or of (Q, P) (``add``), cᵢ ≥ 0.

    L(x) = ln Σ pᵢ exp((cᵢx − cᵢ²/2)/σ²) is increasing, so with x* the root of L(x*) = ±ε (mpmath's
    bisection at MPMATH_DPS digits): remove: H = P(X > x*) − e^ε Q(X > x*), L(x*) = ε; add:
    H = Q(X < x*) − e^ε P(X < x*), L(x*) = −ε (0 when −ε is below L's infimum ln p₀).
    """
    with mpmath.workdps(MPMATH_DPS):
        s = mpmath.mpf(sigma)
        cs = [mpmath.mpf(c) for c in sensitivities]
        ps = [mpmath.mpf(p) for p in probabilities]
        e = mpmath.mpf(epsilon)

        def loss(x: mpmath.mpf) -> mpmath.mpf:
            return mpmath.log(mpmath.fsum(p * mpmath.exp((c * x - c * c / 2) / s**2) for c, p in zip(cs, ps)))

        target = -e if add else e
        p0 = mpmath.fsum(p for c, p in zip(cs, ps) if c == 0)
        if add and p0 > 0 and target <= mpmath.log(p0):
            return mpmath.mpf(0)
        lo, hi = mpmath.mpf(-10), mpmath.mpf(10)
        while loss(lo) > target:
            lo *= 2
        while loss(hi) < target:
            hi *= 2
        for _ in range(4 * MPMATH_DPS):  # bisection: L is increasing; 4 bits per digit is ample
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if loss(mid) < target else (lo, mid)
        x = (lo + hi) / 2
        if add:  # lower tails read directly (1 − upper tail would cancel, and Σ pᵢ is 1 only up to float rounding)
            p_cdf = mpmath.fsum(p * mpmath.ncdf((x - c) / s) for c, p in zip(cs, ps))
            return max(mpmath.mpf(0), mpmath.ncdf(x / s) - mpmath.exp(e) * p_cdf)
        p_sf = mpmath.fsum(p * mpmath.ncdf((c - x) / s) for c, p in zip(cs, ps))
        return max(mpmath.mpf(0), p_sf - mpmath.exp(e) * mpmath.ncdf(-x / s))


def poisson_gaussian_two_step_delta(sigma: float, sampling_rate: float, epsilon: float) -> mpmath.mpf:
    """δ(ε) of two Poisson-subsampled Gaussian steps (add/remove neighbours), max over both directions,
    by one-dimensional mpmath quadrature over the first step's output (no optcomp code).

    Per step, with μ = 1/σ (unit noise), P = (1 − q)N(0, 1) + qN(μ, 1), Q = N(0, 1) and privacy loss
    ℓ(x) = log((1 − q) + q e^{μx − μ²/2}) (increasing in x). The one-step hockey-stick divergences at any
    real threshold t have closed forms (the likelihood ratio is monotone):
    H_PQ(t) = (1 − q)Φ̄(x*) + qΦ̄(x* − μ) − e^t Φ̄(x*), x* = (log((e^t − 1 + q)/q) + μ²/2)/μ (1 − e^t when
    e^t ≤ 1 − q); H_QP(t) = Φ(x') − e^t[(1 − q)Φ(x') + qΦ(x' − μ)], x' = (log((e^{−t} − 1 + q)/q) + μ²/2)/μ
    (0 when e^{−t} ≤ 1 − q). Two steps: δ_PQ(ε) = ∫ p(x) H_PQ(ε − ℓ(x)) dx, δ_QP(ε) = ∫ φ(x) H_QP(ε + ℓ(x)) dx
    (condition on the first output; the losses add).
    """
    with mpmath.workdps(30):
        mu, q, e = 1 / mpmath.mpf(sigma), mpmath.mpf(sampling_rate), mpmath.mpf(epsilon)
        keep = 1 - q

        def loss(x: mpmath.mpf) -> mpmath.mpf:
            return mpmath.log(keep + q * mpmath.exp(mu * x - mu * mu / 2))

        def h_pq(t: mpmath.mpf) -> mpmath.mpf:
            if mpmath.exp(t) <= keep:
                return 1 - mpmath.exp(t)
            xs = (mpmath.log((mpmath.exp(t) - keep) / q) + mu * mu / 2) / mu
            return keep * mpmath.ncdf(-xs) + q * mpmath.ncdf(mu - xs) - mpmath.exp(t) * mpmath.ncdf(-xs)

        def h_qp(t: mpmath.mpf) -> mpmath.mpf:
            if mpmath.exp(-t) <= keep:
                return mpmath.mpf(0)
            xs = (mpmath.log((mpmath.exp(-t) - keep) / q) + mu * mu / 2) / mu
            return mpmath.ncdf(xs) - mpmath.exp(t) * (keep * mpmath.ncdf(xs) + q * mpmath.ncdf(xs - mu))

        def p_pdf(x: mpmath.mpf) -> mpmath.mpf:
            return keep * mpmath.npdf(x) + q * mpmath.npdf(x - mu)

        def kink(level: mpmath.mpf) -> list[mpmath.mpf]:
            """x with ℓ(x) = level (where a one-step formula switches), if any."""
            v = mpmath.exp(level) - keep
            return [(mpmath.log(v / q) + mu * mu / 2) / mu] if v > 0 else []

        pts_pq = [-mpmath.inf, *kink(e - mpmath.log(keep)), mpmath.inf]
        pts_qp = [-mpmath.inf, *kink(-e - mpmath.log(keep)), mpmath.inf]
        d_pq = mpmath.quad(lambda x: p_pdf(x) * h_pq(e - loss(x)), pts_pq)
        d_qp = mpmath.quad(lambda x: mpmath.npdf(x) * h_qp(e + loss(x)), pts_qp)
        return max(d_pq, d_qp, mpmath.mpf(0))


def poisson_gaussian_delta(sigma: float, sampling_rate: float, epsilon: float, *, add: bool) -> mpmath.mpf:
    """Exact δ(ε) of one Poisson-subsampled Gaussian with unit sensitivity, one direction, at ``MPMATH_DPS``
    digits: P = qN(1, σ²) + (1 − q)N(0, σ²), Q = N(0, σ²); remove is H(P‖Q), add is H(Q‖P).

    The ratio P/Q = (1 − q) + q e^{(2x − 1)/(2σ²)} is increasing, equal to t at x(t) = σ² log((t − 1 + q)/q) + ½:
    remove: qΦ̄((x − 1)/σ) + (1 − q)Φ̄(x/σ) − e^ε Φ̄(x/σ) at x(e^ε) (1 − e^ε when e^ε ≤ 1 − q);
    add: Φ(x/σ) − e^ε[qΦ((x − 1)/σ) + (1 − q)Φ(x/σ)] at x(e^{−ε}) (0 when e^{−ε} ≤ 1 − q).
    Φ̄(z) is evaluated as Φ(−z) (not 1 − Φ(z), which cancels in the far tail).
    """
    with mpmath.workdps(MPMATH_DPS):
        e, qq, s = mpmath.mpf(epsilon), mpmath.mpf(sampling_rate), mpmath.mpf(sigma)

        def ratio_point(target: mpmath.mpf) -> mpmath.mpf:  # x with (1−q) + q e^{(2x−1)/(2σ²)} = target
            return s**2 * mpmath.log((target - (1 - qq)) / qq) + mpmath.mpf(1) / 2

        if not add:  # ∫ (P − e^ε Q)_+ over x > x*, P/Q = e^ε at x*
            if mpmath.exp(e) <= 1 - qq:
                return 1 - mpmath.exp(e)
            x = ratio_point(mpmath.exp(e))

            def sf(z: mpmath.mpf) -> mpmath.mpf:
                return mpmath.ncdf(-z)

            return qq * sf((x - 1) / s) + (1 - qq) * sf(x / s) - mpmath.exp(e) * sf(x / s)
        # add: ∫ (Q − e^ε P)_+ over x < x**, P/Q = e^{−ε} at x**
        t = mpmath.exp(-e)
        if t <= 1 - qq:
            return mpmath.mpf(0)
        x = ratio_point(t)
        return mpmath.ncdf(x / s) - mpmath.exp(e) * (qq * mpmath.ncdf((x - 1) / s) + (1 - qq) * mpmath.ncdf(x / s))


def poisson_gaussian_log_p_sf(sigma: str, sampling_rate: str, epsilon: float) -> mpmath.mpf:
    """log P(L > ε) of the Poisson-subsampled Gaussian's remove pair (as in ``poisson_gaussian_delta``), at
    ``MPMATH_DPS`` digits: the output threshold y = σ² log((e^ε − 1 + q)/q) + ½ and
    P(L > ε) = qΦ(−(y − 1)/σ) + (1 − q)Φ(−y/σ). σ and q are decimal strings (exact decimal values)."""
    with mpmath.workdps(MPMATH_DPS):
        s, qq = mpmath.mpf(sigma), mpmath.mpf(sampling_rate)
        y = s**2 * mpmath.log((mpmath.exp(epsilon) - 1 + qq) / qq) + mpmath.mpf(1) / 2  # output threshold
        return mpmath.log(qq * mpmath.ncdf(-(y - 1) / s) + (1 - qq) * mpmath.ncdf(-y / s))


def gaussian_loss_log_sf(mu: float, x: float) -> tuple[mpmath.mpf, mpmath.mpf]:
    """(log P(L > x), log Q(L > x)) of the Gaussian mechanism with μ = Δ/σ, at ``MPMATH_DPS`` digits: under P
    the loss is N(μ²/2, μ²), under Q N(−μ²/2, μ²), so P(L > x) = Φ(−(x − μ²/2)/μ), Q(L > x) = Φ(−(x + μ²/2)/μ)
    (Dong–Roth–Su §2.1; Balle–Wang 2018 Thm 8)."""
    with mpmath.workdps(MPMATH_DPS):
        m, t = mpmath.mpf(mu), mpmath.mpf(x)
        return mpmath.log(mpmath.ncdf(-(t - m**2 / 2) / m)), mpmath.log(mpmath.ncdf(-(t + m**2 / 2) / m))


def gaussian_delta_by_quadrature(sigma: float, sensitivity: float, epsilon: float) -> float:
    """δ(ε) = ∫ (p(x) − e^ε q(x))_+ dx of P = N(Δ, σ²), Q = N(0, σ²) by mpmath quadrature at 30 digits, from
    the crossing x* = εσ²/Δ + Δ/2 (where p = e^ε q) to +∞ (the hockey-stick divergence, by its definition)."""
    with mpmath.workdps(30):
        p = lambda x: mpmath.npdf(x, sensitivity, sigma)
        q = lambda x: mpmath.npdf(x, 0, sigma)
        f = lambda x: max(p(x) - mpmath.exp(epsilon) * q(x), 0)
        crossing = (epsilon * sigma**2 / sensitivity) + sensitivity / 2
        return float(mpmath.quad(f, [crossing, mpmath.inf]))


def without_replacement_laplace_log_q_sf(base_epsilon: float, sampling_rate: str, t: float) -> mpmath.mpf:
    """log Q(L > −t) of Laplace with ε₀ = Δ/b sampled without replacement at rate q (Balle–Barthe–Gaboardi
    Thm 9: the loss is y = log(1 + (e^{L₀} − 1)/q) of the base loss L₀), at ``MPMATH_DPS`` digits.

    With P(a < L₀ ≤ b) = e^{(a − ε₀)/2}(e^{(b − a)/2} − 1)/2 on the continuous part and y = log(1 + expm1(t)/q):
    Q(L > −t) = P(−ε₀ < L₀ ≤ 0) + q P(0 < L₀ ≤ y) + (1 − q) P(−y < L₀ ≤ 0). q is a decimal string."""
    with mpmath.workdps(MPMATH_DPS):
        eps, q = mpmath.mpf(base_epsilon), mpmath.mpf(sampling_rate)

        def base_p(a: mpmath.mpf, b: mpmath.mpf) -> mpmath.mpf:  # P(a < L₀ ≤ b), continuous part
            return mpmath.exp((a - eps) / 2) * mpmath.expm1((b - a) / 2) / 2

        y = mpmath.log(1 + mpmath.expm1(t) / q)
        return mpmath.log(base_p(-eps, 0) + q * base_p(0, y) + (1 - q) * base_p(-y, 0))


def truncated_laplace_delta(scale: float, bound: float, sens: float, epsilon: float) -> float:
    """∫ max(p(x) − e^ε q(x), 0) dx for P = Δ + noise, Q = noise, noise ∝ e^{−|x|/b} on [−A, A] (the
    hockey-stick divergence by its definition), by mpmath quadrature at 30 digits split at the kinks."""
    with mpmath.workdps(30):
        b, a, d = mpmath.mpf(scale), mpmath.mpf(bound), mpmath.mpf(sens)
        z = 1 if math.isinf(bound) else 1 - mpmath.exp(-a / b)

        def noise(x: mpmath.mpf) -> mpmath.mpf:
            return mpmath.exp(-abs(x) / b) / (2 * b * z) if abs(x) <= a else mpmath.mpf(0)

        def f(x: mpmath.mpf) -> mpmath.mpf:
            return max(noise(x - d) - mpmath.exp(epsilon) * noise(x), 0)

        lo, hi = (-a, d + a) if math.isfinite(bound) else (-mpmath.inf, mpmath.inf)
        crossing = (b * epsilon + d) / 2  # where p = e^ε q inside (0, Δ)
        points = sorted({float(v) for v in (lo, 0, d, d - a, a, hi, crossing) if lo <= v <= hi})
        return float(mpmath.quad(f, [mpmath.mpf(v) for v in points]))


def vuvuzela_pmfs(mean: float, scale: float, sens: int, top: int) -> tuple[np.ndarray, np.ndarray]:
    """pmfs of c + Δ + N and c + N on {c, …, c + top}, N = max(0, ⌈Laplace(mean, scale)⌉) (the Vuvuzela
    noise, van den Hooff et al. 2015 §6), enumerated from the Laplace cdf at 40 digits."""
    with mpmath.workdps(40):
        m, b = mpmath.mpf(mean), mpmath.mpf(scale)

        def cdf(y: int) -> mpmath.mpf:
            t = (y - m) / b
            return mpmath.exp(t) / 2 if t <= 0 else 1 - mpmath.exp(-t) / 2

        noise = [cdf(0)] + [cdf(k) - cdf(k - 1) for k in range(1, top + 1)]
        noise_f = np.array([float(v) for v in noise])
    p = np.zeros(top + 1 + sens)
    q = np.zeros(top + 1 + sens)
    p[sens:] = noise_f
    q[: top + 1] = noise_f
    return p, q


def poisson_laplace_delta(scale: float, q: float, epsilon: float, *, add: bool) -> float:
    """δ(ε) of the Poisson-subsampled Laplace pair (qLap(1, b) + (1−q)Lap(0, b), Lap(0, b)) (remove) or its swap
    (add): ∫ (upper − e^ε lower)_+ dx (the hockey-stick divergence by its definition), by mpmath quadrature at
    30 digits with the kinks 0, 1 and the crossing x = (b log((e^{±ε} − 1 + q)/q) + 1)/2 as breakpoints."""
    with mpmath.workdps(30):
        b, qq, e = mpmath.mpf(scale), mpmath.mpf(q), mpmath.exp(mpmath.mpf(epsilon))

        def lap(x: mpmath.mpf, loc: float) -> mpmath.mpf:
            return mpmath.exp(-abs(x - loc) / b) / (2 * b)

        def mix(x: mpmath.mpf) -> mpmath.mpf:
            return qq * lap(x, 1) + (1 - qq) * lap(x, 0)

        def f(x: mpmath.mpf) -> mpmath.mpf:
            upper, lower = (lap(x, 0), mix(x)) if add else (mix(x), lap(x, 0))
            return max(upper - e * lower, 0)

        points = [-mpmath.inf, mpmath.mpf(0), mpmath.mpf(1), mpmath.inf]
        arg = ((1 / e if add else e) - 1 + qq) / qq
        if arg > 0:
            crossing = (b * mpmath.log(arg) + 1) / 2
            if 0 < crossing < 1:
                points.insert(2, crossing)
        return float(mpmath.quad(f, points))


def discrete_kfold_delta(
    atom_losses: Sequence[float], atom_p: Sequence[float], p_inf: float, k: int, epsilon: float
) -> float:
    """δ_{P^k‖Q^k}(ε) = E_{P^k}[(1 − e^{ε − L})_+] of a finite discrete privacy-loss law (atoms ℓᵢ with
    P-masses pᵢ, plus a mass p_∞ at +∞), k-fold, by enumerating the atom multiplicities (c₁, …, cₙ) with
    their multinomial weights k!/Πcᵢ! Πpᵢ^{cᵢ}, at ``MPMATH_DPS`` digits; the ∞ mass contributes
    1 − (1 − p_∞)^k."""
    with mpmath.workdps(MPMATH_DPS):
        n = len(atom_losses)
        losses = [mpmath.mpf(float(v)) for v in atom_losses]
        masses = [mpmath.mpf(float(v)) for v in atom_p]
        total = 1 - (1 - mpmath.mpf(p_inf)) ** k
        for counts in itertools.product(range(k + 1), repeat=n - 1):
            last = k - sum(counts)
            if last < 0:
                continue
            cs = (*counts, last)
            loss = mpmath.fsum(c * v for c, v in zip(cs, losses, strict=True))
            if loss <= epsilon:
                continue
            coef = mpmath.factorial(k)
            for c, m in zip(cs, masses, strict=True):
                coef *= m**c / mpmath.factorial(c)
            total += coef * (1 - mpmath.exp(epsilon - loss))
        return float(total)


def kary_rr_delta(eps: float, k: int, n: int, eps_g: mpmath.mpf) -> mpmath.mpf:
    """Exact δ(ε_g) of n k-ary randomized-response steps (the k-RR of Kairouz–Oh–Viswanath 2016), by
    enumerating the trinomial counts: each step reports the true value w.p. e^ε/Z, the neighbour's w.p. 1/Z
    and one of the k − 2 others w.p. (k − 2)/Z (Z = e^ε + k − 1); the loss is L = ε(a − b), and
    δ(ε_g) = Σ_{L > ε_g} P(a, b, c)(1 − e^{ε_g − L}), at ``MPMATH_DPS`` digits."""
    with mpmath.workdps(MPMATH_DPS):
        e = mpmath.exp(mpmath.mpf(eps))
        z = e + k - 1
        p_hi, p_lo, p_zero = e / z, 1 / z, mpmath.mpf(k - 2) / z
        total = mpmath.mpf(0)
        for a in range(n + 1):
            for b in range(n - a + 1):
                loss = eps * (a - b)
                if loss <= eps_g:
                    continue
                c = n - a - b
                weight = mpmath.factorial(n) / (
                    mpmath.factorial(a) * mpmath.factorial(b) * mpmath.factorial(c)
                )
                prob = weight * p_hi**a * p_lo**b * p_zero**c
                total += prob * (1 - mpmath.exp(eps_g - loss))
        return total


def kary_rr_epsilon(eps: float, k: int, n: int, delta: float) -> float:
    """ε(δ) of n k-ary RR steps: 80 bisection steps on ``kary_rr_delta`` (decreasing in ε_g), upper end."""
    with mpmath.workdps(MPMATH_DPS):
        lo, hi = mpmath.mpf(0), mpmath.mpf(n * eps)
        for _ in range(80):
            mid = (lo + hi) / 2
            if kary_rr_delta(eps, k, n, mid) > delta:
                lo = mid
            else:
                hi = mid
        return float(hi)


def without_replacement_gaussian_epsilon(mu: float, sampling_rate: float, delta: float) -> float:
    """ε' = ln(1 + q(e^ε − 1)) at δ' = qδ of a μ-GDP Gaussian sampled without replacement at rate q, with
    ε = ε_μ(δ'/q) the Gaussian's ε (Balle–Barthe–Gaboardi 2018 Thm 9, tight), at ``MPMATH_DPS`` digits."""
    with mpmath.workdps(MPMATH_DPS):
        eps_base = mpmath.mpf(float(gdp_epsilon(mu, delta / sampling_rate)))
        return float(mpmath.log1p(sampling_rate * mpmath.expm1(eps_base)))


def two_point_pair_delta(p: float, q: float, k: int, eps: float) -> mpmath.mpf:
    """Exact δ(ε) of the k-fold pair P = (p, 1−p), Q = (q, 1−q), max over both orders, by enumerating
    the binomial count j of first outcomes (the loss is a function of it):
    Σ_j (C(k, j)a^j(1 − a)^{k−j} − e^ε C(k, j)b^j(1 − b)^{k−j})_+ for (a, b) = (p, q) and (q, p), at
    ``MPMATH_DPS`` digits."""
    with mpmath.workdps(MPMATH_DPS):
        pp, qq, e = mpmath.mpf(p), mpmath.mpf(q), mpmath.mpf(eps)
        out = []
        for a, b in ((pp, qq), (qq, pp)):
            s = mpmath.mpf(0)
            for j in range(k + 1):
                pa = mpmath.binomial(k, j) * a**j * (1 - a) ** (k - j)
                pb = mpmath.binomial(k, j) * b**j * (1 - b) ** (k - j)
                s += max(pa - mpmath.exp(e) * pb, 0)
            out.append(s)
        return max(out)




def laplace_epsilon(epsilon0: float, delta: float) -> float:
    """ε(δ) = ε₀ + 2 ln(1 − δ) of one Laplace step with ε₀ = Δ/b (δ(ε) = 1 − e^{(ε − ε₀)/2} for 0 ≤ ε ≤ ε₀,
    the hockey-stick divergence of Lap(Δ, b) vs Lap(0, b)), at ``MPMATH_DPS`` digits, as a float."""
    with mpmath.workdps(MPMATH_DPS):
        return float(epsilon0 + 2 * mpmath.log(1 - mpmath.mpf(delta)))


def pmf_pair_delta_exact(p: Sequence[float], q: Sequence[float], epsilon: float) -> mpmath.mpf:
    """max(Σ (pᵢ − e^ε qᵢ)_+, Σ (qᵢ − e^ε pᵢ)_+) of two float pmfs (the hockey-stick divergence both ways),
    summed from the floats' exact values at ``MPMATH_DPS`` digits."""
    with mpmath.workdps(MPMATH_DPS):
        e = mpmath.exp(mpmath.mpf(epsilon))
        return max(
            mpmath.fsum(max(mpmath.mpf(a) - e * mpmath.mpf(c), 0) for a, c in zip(p, q)),
            mpmath.fsum(max(mpmath.mpf(c) - e * mpmath.mpf(a), 0) for a, c in zip(p, q)),
        )


def canonical_pmfs(epsilon: float, delta: float) -> tuple[np.ndarray, np.ndarray]:
    """The pmfs of the canonical (ε, δ) pair on four outcomes, Kairouz–Oh–Viswanath eqs (9)–(10), straight from the
    paper: P = (δ, (1 − δ)e^ε/(1 + e^ε), (1 − δ)/(1 + e^ε), 0) and Q = P reversed (float64)."""
    e = math.exp(epsilon)
    p = np.array([delta, (1 - delta) * e / (1 + e), (1 - delta) / (1 + e), 0.0])
    return p, p[::-1].copy()


def discrete_delta(p: np.ndarray, q: np.ndarray, epsilon: float) -> float:
    """Σ max(P − e^ε Q, 0), the hockey-stick divergence of two pmfs (its definition), in float64 with
    ``math.fsum``."""
    return math.fsum(np.maximum(p - math.exp(epsilon) * q, 0.0))

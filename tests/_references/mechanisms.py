"""Privacy-loss truths of single mechanisms and their subsampled forms: hockey-stick divergences by closed
form, mpmath quadrature or exact enumeration."""

from __future__ import annotations

import mpmath

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
        p_sf = mpmath.fsum(p * mpmath.ncdf((c - x) / s) for c, p in zip(cs, ps))
        q_sf = mpmath.ncdf(-x / s)
        if add:
            return max(mpmath.mpf(0), (1 - q_sf) - mpmath.exp(e) * (1 - p_sf))
        return max(mpmath.mpf(0), p_sf - mpmath.exp(e) * q_sf)


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

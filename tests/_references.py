"""Independent reference values for the tests, computed from the papers' formulas with mpmath.

One home for every closed form the tests compare against (never a copy per test file). Each function
evaluates the formula as written in the paper, at ``MPMATH_DPS`` digits, without going through any
optcomp code, and returns an ``mpmath.mpf`` (callers convert with ``float`` where they need to).
"""

from __future__ import annotations

import mpmath

from tests.tolerances import MPMATH_DPS

__all__ = [
    "classic_closed_forms",
    "epsilon_delta_composition_delta",
    "gdp_delta",
    "gdp_epsilon",
    "group_epsilon_delta_tradeoff",
    "poisson_gaussian_two_step_delta",
    "subsampled_gaussian_delta",
]


def gdp_delta(mu: float, epsilon: float) -> mpmath.mpf:
    """δ(ε) of μ-GDP: Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (Dong–Roth–Su, "Gaussian Differential Privacy",
    Cor. 2.13 "GDP to DP"). Arguments in the order of the paper's δ_μ(ε): μ first, then ε."""
    with mpmath.workdps(MPMATH_DPS):
        m, e = mpmath.mpf(mu), mpmath.mpf(epsilon)
        if m == 0:
            return mpmath.mpf(0)
        return mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)


def gdp_epsilon(mu: float, delta: float) -> mpmath.mpf:
    """The ε with δ_μ(ε) = δ (δ_μ is strictly decreasing in ε), by bisection at ``MPMATH_DPS`` digits."""
    with mpmath.workdps(MPMATH_DPS):
        target = mpmath.mpf(delta)
        lo, hi = mpmath.mpf(0), mpmath.mpf(1)
        while gdp_delta(mu, float(hi)) > target:
            hi *= 2
        for _ in range(200):
            mid = (lo + hi) / 2
            m, e = mpmath.mpf(mu), mid
            val = mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)
            if val > target:
                lo = mid
            else:
                hi = mid
        return hi


def epsilon_delta_composition_delta(epsilon: float, delta: float, k: int, epsilon_g: float) -> mpmath.mpf:
    """Optimal δ at ε_g of the k-fold composition of (ε, δ)-DP (Kairouz–Oh–Viswanath, "The Composition
    Theorem for Differential Privacy", Thm III.3; Murtagh–Vadhan Thm 1.4):

    δ = 1 − (1 − δ)^k (1 − δ'),  δ' = (1 + e^ε)^{−k} Σ_{ℓ : (k−2ℓ)ε > ε_g} C(k, ℓ)(e^{(k−ℓ)ε} − e^{ε_g + ℓε}),

    evaluated as Δ + (1 − Δ)δ' with Δ = 1 − (1 − δ)^k so that a tiny δ' is not lost in 1 − (1 − δ').
    """
    with mpmath.workdps(MPMATH_DPS + 20):
        e, eg, d = mpmath.mpf(epsilon), mpmath.mpf(epsilon_g), mpmath.mpf(delta)
        pure = mpmath.fsum(
            mpmath.binomial(k, ell) * (mpmath.exp((k - ell) * e) - mpmath.exp(eg + ell * e))
            for ell in range(k + 1)
            if (k - 2 * ell) * e > eg
        ) / (1 + mpmath.exp(e)) ** k
        big = -mpmath.expm1(k * mpmath.log1p(-d))  # 1 − (1 − δ)^k without cancelling a tiny δ
        return big + (1 - big) * pure


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


#: dp_accounting 0.6.0, ``PLDAccountant`` (default discretisation 1e-4, pessimistic), run on
#: 2026-11-24: ε at δ = 1e-5 of ``MixtureOfGaussiansDpEvent(1.0, [0, 1], [0.5, 0.5])``.
DP_ACCOUNTING_MOG_EPSILON = 3.5339979859709816
#: ... and of ``SelfComposedDpEvent(TruncatedSubsampledGaussianDpEvent(60000, 256/60000, 300, 1.1), 3516)``.
DP_ACCOUNTING_TRUNCATED_EPSILON = 2.395486972345338
#: PLD_accounting 2.0 (Feldman–Shenfeld), ``gaussian_allocation_epsilon_range(delta=1e-6, sigma=3.0,
#: num_steps=100, num_selected=10, num_epochs=1)``, run on 2026-11-24: its (lower, upper) ε.
PLD_ACCOUNTING_ALLOCATION_EPSILON = (1.4575104425149317, 1.5257305409041644)
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


def group_epsilon_delta_tradeoff(epsilon: float, delta: float, g: int, alpha: float) -> mpmath.mpf:
    """1 − h^{∘g}(α), h(x) = 1 − f_{ε,δ}(x) = min{1, δ + e^ε x, 1 − e^{−ε}(1 − δ − x)}: the group-privacy
    curve of (ε, δ)-DP (Dong–Roth–Su Thm 2.14 with DRS eq. (5)), at ``MPMATH_DPS`` digits."""
    with mpmath.workdps(MPMATH_DPS):
        e, d, x = mpmath.mpf(epsilon), mpmath.mpf(delta), mpmath.mpf(alpha)
        for _ in range(g):
            x = min(mpmath.mpf(1), d + mpmath.exp(e) * x, 1 - mpmath.exp(-e) * (1 - d - x))
        return 1 - x


def classic_closed_forms(epsilon: float, delta: float, k: int, delta_slack: float) -> dict[str, mpmath.mpf]:
    """The classic composition theorems' closed forms at ``MPMATH_DPS`` digits (``optcomp.bounds``):
    DRV advanced ε = kε(e^ε − 1) + ε√(2k ln(1/δ̃)) (KOV Thm III.2), lecture-notes ε =
    kε tanh(ε/2) + ε√(2k ln(1/δ̃)) (Smith–Ullman Thm 1.1), KOV ε = min{kε, kε tanh(ε/2) +
    ε√(2k ln(e + √k ε/δ̃)), kε tanh(ε/2) + ε√(2k ln(1/δ̃))} and δ = 1 − (1 − δ)^k (1 − δ̃) (KOV Thm III.4),
    the TV bound δ + (1 − δ) tanh(ε/2) (KOV Remark A.1(b)) and KOV Cor V.1's ε₀ = ε/√(4k ln(e + ε/δ))."""
    with mpmath.workdps(MPMATH_DPS):
        e, d, s, kk = mpmath.mpf(epsilon), mpmath.mpf(delta), mpmath.mpf(delta_slack), mpmath.mpf(k)
        drift = kk * e * mpmath.tanh(e / 2)
        root = e * mpmath.sqrt(2 * kk * mpmath.log(1 / s))
        return {
            "drv": kk * e * mpmath.expm1(e) + root,
            "notes": drift + root,
            "kov": min(kk * e, drift + e * mpmath.sqrt(2 * kk * mpmath.log(mpmath.e + mpmath.sqrt(kk) * e / s)), drift + root),
            "kov_delta": -mpmath.expm1(kk * mpmath.log1p(-d) + mpmath.log1p(-s)),  # 1 − (1 − δ)^k (1 − δ̃)
            "tv": d + (1 - d) * mpmath.tanh(e / 2),
            "per_query": e / mpmath.sqrt(4 * kk * mpmath.log(mpmath.e + e / d)) if d > 0 else mpmath.mpf(0),
        }

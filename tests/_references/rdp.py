"""Rényi divergences by mpmath quadrature, with the densities they integrate (Mironov 2017, Def. 3)."""

from __future__ import annotations

from collections.abc import Callable

import mpmath

from tests.tolerances import MPMATH_DPS

Density = Callable[[mpmath.mpf], mpmath.mpf]


def renyi_divergence(p: Density, q: Density, alpha: float, lo: float, hi: float, points: list[float]) -> mpmath.mpf:
    """D_α(P‖Q) = log ∫ p^α q^{1−α} / (α − 1) (Mironov 2017, Def. 3) by mpmath quadrature on [lo, hi] split at
    ``points``, at ``MPMATH_DPS // 2`` digits (the densities are evaluated at that precision)."""
    with mpmath.workdps(MPMATH_DPS // 2):
        a = mpmath.mpf(alpha)
        integral = mpmath.quad(lambda x: p(x) ** a * q(x) ** (1 - a), [lo, *points, hi])
        return mpmath.log(integral) / (a - 1)


def normal_pdf(mean: float, sigma: float) -> Density:
    """The density of N(mean, σ²)."""
    return lambda x: mpmath.npdf(x, mean, sigma)


def laplace_pdf(loc: float, scale: float) -> Density:
    """The density e^{−|x − loc|/b}/(2b) of Laplace(loc, b)."""
    return lambda x: mpmath.exp(-abs(x - loc) / scale) / (2 * scale)


def gaussian_mixture_pdf(sigma: float, sampling_rate: float) -> Density:
    """The density of (1 − q)N(0, σ²) + qN(1, σ²), the Poisson-subsampled Gaussian's P (remove)."""
    q = sampling_rate
    return lambda x: (1 - q) * mpmath.npdf(x, 0, sigma) + q * mpmath.npdf(x, 1, sigma)


# -- the Rényi conversion (issue 35): closed forms at 50 digits, laws and certificates re-checked ----------


def zcdp_closed_form_epsilon(rho: float, delta: float) -> mpmath.mpf:
    """min over α > 1 of αρ + log(1 − 1/α) − log(δα)/(α − 1) (Canonne–Kamath–Steinke 2020, Prop. 12 with
    D_α ≤ αρ). The derivative is ρ + log(δα)/(α − 1)², so the minimiser solves ρ(α − 1)² = −log(δα)."""
    r, d = mpmath.mpf(rho), mpmath.mpf(delta)
    start = 1 + mpmath.sqrt(-mpmath.log(d) / r)
    alpha = mpmath.findroot(lambda a: r * (a - 1) ** 2 + mpmath.log(d * a), start)
    return alpha * r + mpmath.log(1 - 1 / alpha) - mpmath.log(d * alpha) / (alpha - 1)


def zcdp_closed_form_delta(rho: float, epsilon: float) -> mpmath.mpf:
    """min over α > 1 of exp((α − 1)(αρ − ε)) (1 − 1/α)^{α−1}/α (CKS Prop. 12). The derivative of the
    exponent is (2α − 1)ρ − ε + log(1 − 1/α), whose root is the minimiser."""
    r, e = mpmath.mpf(rho), mpmath.mpf(epsilon)
    start = (e + r) / (2 * r) + 1
    alpha = mpmath.findroot(lambda a: (2 * a - 1) * r - e + mpmath.log(1 - 1 / a), start)
    return mpmath.exp((alpha - 1) * (alpha * r - e) + (alpha - 1) * mpmath.log(1 - 1 / alpha) - mpmath.log(alpha))


def law_log_moments(p: list[object], q: list[object], alpha: float) -> tuple[mpmath.mpf, mpmath.mpf]:
    """(α − 1)·D_α(P‖Q) and (α − 1)·D_α(Q‖P) = log Σ pᵢ^α qᵢ^{1−α} and its reverse (Mironov 2017, Def. 3), for
    finite laws given as exact masses (Fractions or floats) normalised here, at ``MPMATH_DPS`` digits."""
    with mpmath.workdps(MPMATH_DPS):
        ps = [mpmath.mpf(x.numerator) / x.denominator if hasattr(x, "numerator") else mpmath.mpf(x) for x in p]
        qs = [mpmath.mpf(x.numerator) / x.denominator if hasattr(x, "numerator") else mpmath.mpf(x) for x in q]
        sp, sq = mpmath.fsum(ps), mpmath.fsum(qs)
        ps, qs = [x / sp for x in ps], [x / sq for x in qs]
        a = mpmath.mpf(alpha)
        fwd = mpmath.log(mpmath.fsum(x**a * y ** (1 - a) for x, y in zip(ps, qs, strict=True)))
        rev = mpmath.log(mpmath.fsum(y**a * x ** (1 - a) for x, y in zip(ps, qs, strict=True)))
        return fwd, rev


def law_kls(p: list[object], q: list[object]) -> tuple[mpmath.mpf, mpmath.mpf]:
    """KL(P‖Q) and KL(Q‖P) of finite laws (normalised here), at ``MPMATH_DPS`` digits."""
    with mpmath.workdps(MPMATH_DPS):
        ps = [mpmath.mpf(x) for x in p]
        qs = [mpmath.mpf(x) for x in q]
        sp, sq = mpmath.fsum(ps), mpmath.fsum(qs)
        ps, qs = [x / sp for x in ps], [x / sq for x in qs]
        return (mpmath.fsum(x * mpmath.log(x / y) for x, y in zip(ps, qs, strict=True)),
                mpmath.fsum(y * mpmath.log(y / x) for x, y in zip(ps, qs, strict=True)))


def finite_law_delta(p: list[object], q: list[object], epsilon: float) -> mpmath.mpf:
    """Σ (pᵢ − e^ε qᵢ)₊ of finite laws (normalised here), at ``MPMATH_DPS`` digits."""
    with mpmath.workdps(MPMATH_DPS):
        ps = [mpmath.mpf(x) for x in p]
        qs = [mpmath.mpf(x) for x in q]
        sp, sq = mpmath.fsum(ps), mpmath.fsum(qs)
        scale = mpmath.exp(epsilon)
        return mpmath.fsum(max(mpmath.mpf(0), x / sp - scale * y / sq) for x, y in zip(ps, qs, strict=True))


def dual_certificate_gap(cert: object, losses: list[float]) -> mpmath.mpf:
    """min over ``losses`` of the right side minus the left side of a dual certificate's inequality
    ν + μe^{−ℓ} + Σλᵢe^{(αᵢ−1)ℓ−c̃ᵢ} + Σκᵢe^{−αᵢℓ−c̃ᵢ} + λ₀ℓ − κ₀ℓe^{−ℓ} ≥ (1 − e^{ε−ℓ})₊ (docs/rdp.md §3),
    evaluated at ``MPMATH_DPS`` digits from the certificate's floats (``cert`` has the attributes of
    ``optcomp.rdp``'s ``DualCertificate``)."""
    c = cert
    with mpmath.workdps(MPMATH_DPS):
        terms = [(mpmath.mpf(float(w)), mpmath.mpf(float(a)) - 1, mpmath.mpf(float(t)))
                 for w, a, t in zip(c.lam, c.orders, c.tilted, strict=True) if w > 0]  # type: ignore[attr-defined]
        terms += [(mpmath.mpf(float(w)), -mpmath.mpf(float(a)), mpmath.mpf(float(t)))
                  for w, a, t in zip(c.kappa, c.orders, c.tilted, strict=True) if w > 0]  # type: ignore[attr-defined]
        eps = mpmath.mpf(c.epsilon)  # type: ignore[attr-defined]
        worst = mpmath.inf
        for x in losses:
            ell = mpmath.mpf(x)
            rhs = c.nu + c.mu * mpmath.exp(-ell) + c.lam_kl * ell - c.kappa_kl * ell * mpmath.exp(-ell)  # type: ignore[attr-defined]
            rhs += mpmath.fsum(w * mpmath.exp(r * ell - t) for w, r, t in terms)
            lhs = max(mpmath.mpf(0), 1 - mpmath.exp(eps - ell))
            worst = min(worst, rhs - lhs)
        return worst


def dual_certificate_value(cert: object) -> mpmath.mpf:
    """ν + μ + Σ(λᵢ + κᵢ)e^{cᵢ − c̃ᵢ} + (λ₀ + κ₀)K: the δ bound a dual certificate proves, at ``MPMATH_DPS`` digits."""
    c = cert
    with mpmath.workdps(MPMATH_DPS):
        total = mpmath.mpf(c.nu) + mpmath.mpf(c.mu) + (mpmath.mpf(c.lam_kl) + mpmath.mpf(c.kappa_kl)) * mpmath.mpf(c.kl)  # type: ignore[attr-defined]
        for lam, kap, cap, t in zip(c.lam, c.kappa, c.caps, c.tilted, strict=True):  # type: ignore[attr-defined]
            total += (mpmath.mpf(float(lam)) + mpmath.mpf(float(kap))) * mpmath.exp(mpmath.mpf(float(cap)) - mpmath.mpf(float(t)))
        return total

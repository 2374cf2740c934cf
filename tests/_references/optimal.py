"""Optimal composition of (ε, δ)-DP mechanisms, by enumeration: the canonical pairs' loss laws and the
Murtagh–Vadhan sums, term by term (Kairouz–Oh–Viswanath Thm III.3; Murtagh–Vadhan Thms 1.4, 1.5).

Notation: the canonical pair of (ε_i, 0)-DP puts P-mass p_i = e^{ε_i}/(1 + e^{ε_i}) on loss +ε_i and 1 − p_i on
−ε_i; D(ε_g) = E_P[(1 − e^{ε_g − L})_+] of the composed loss L; with δ_i > 0 the optimal δ_g at ε_g is
1 − Π(1 − δ_i)(1 − D(ε_g)) (MV Thm 1.5), so ε(δ_g) is the least ε_g with D(ε_g) ≤ r = 1 − (1 − δ_g)/Π(1 − δ_i).

These functions work at the ambient mpmath precision (``MPMATH_DPS``, set once by ``tests._references``;
a caller may narrow it with ``mpmath.workdps``), as the tests that first wrote them did.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

import mpmath
import numpy as np

Law = tuple[list[mpmath.mpf], list[mpmath.mpf]]

# --- Murtagh–Vadhan's sums ------------------------------------------------------------------------------


_HOM_CACHE: dict[tuple[float, int], tuple[list[mpmath.mpf], list[mpmath.mpf]]] = {}


def _mv_homogeneous_terms(eps: float, k: int) -> tuple[list[mpmath.mpf], list[mpmath.mpf]]:
    """C(k, ℓ)e^{ℓε}/(1+e^ε)^k and C(k, ℓ)e^{(k−ℓ)ε}/(1+e^ε)^k for all ℓ (cached per (ε, k))."""
    if (eps, k) not in _HOM_CACHE:
        e = mpmath.mpf(eps)
        norm = (1 + mpmath.exp(e)) ** k
        first = [mpmath.binomial(k, ell) * mpmath.exp(ell * e) / norm for ell in range(k + 1)]
        second = [mpmath.binomial(k, ell) * mpmath.exp((k - ell) * e) / norm for ell in range(k + 1)]
        _HOM_CACHE[(eps, k)] = (first, second)
    return _HOM_CACHE[(eps, k)]


def mv_homogeneous_sum(eps: float, k: int, eps_g: float | mpmath.mpf) -> mpmath.mpf:
    """D(ε_g) of k copies of (ε, 0): (1 + e^ε)^{−k} Σ_{ℓ: (2ℓ−k)ε > ε_g} C(k, ℓ)(e^{ℓε} − e^{ε_g} e^{(k−ℓ)ε})
    (MV Thm 1.4), summed from the top term down."""
    e, g = mpmath.mpf(eps), mpmath.mpf(eps_g)
    first, second = _mv_homogeneous_terms(eps, k)
    total = mpmath.mpf(0)
    for ell in range(k, -1, -1):
        if (2 * ell - k) * e <= g:
            break
        total += first[ell] - mpmath.exp(g) * second[ell]
    return total


def mv_heterogeneous_sum(eps: Sequence[float], eps_g: mpmath.mpf) -> mpmath.mpf:
    """D(ε_g) of (ε_i, 0), i = 1..k: Π(1 + e^{ε_i})^{−1} Σ_S max(e^{Σ_S ε} − e^{ε_g} e^{Σ_{S^c} ε}, 0) over all
    2^k subsets S (MV Thm 1.5, brute force)."""
    es = [mpmath.mpf(x) for x in eps]
    total = mpmath.mpf(0)
    for signs in itertools.product((0, 1), repeat=len(es)):
        ins = sum((e for e, s in zip(es, signs) if s), mpmath.mpf(0))
        out = sum((e for e, s in zip(es, signs) if not s), mpmath.mpf(0))
        total += max(mpmath.exp(ins) - mpmath.exp(eps_g) * mpmath.exp(out), 0)
    norm = mpmath.mpf(1)
    for e in es:
        norm *= 1 + mpmath.exp(e)
    return total / norm


def mv_lattice_sum(a: Sequence[int], unit: float, eps_g: mpmath.mpf) -> mpmath.mpf:
    """D(ε_g) of (a_i·unit, 0), i = 1..k (MV Thm 1.5), via the exact polynomial Π(q_i + p_i z^{a_i}): with y the
    count of + units, the loss is (2y − Σa_i)·unit and D = Σ_{t_y > ε_g} c_y (1 − e^{ε_g − t_y})."""
    u = mpmath.mpf(unit)
    poly = [mpmath.mpf(1)]
    for ai in a:
        p = mpmath.exp(ai * u) / (1 + mpmath.exp(ai * u))
        new = [mpmath.mpf(0)] * (len(poly) + ai)
        for y, c in enumerate(poly):
            new[y] += c * (1 - p)
            new[y + ai] += c * p
        poly = new
    n = sum(a)
    total = mpmath.mpf(0)
    for y, c in enumerate(poly):
        t = (2 * y - n) * u
        if t > eps_g:
            total += c * (1 - mpmath.exp(eps_g - t))
    return total


def mv_homogeneous_sum_large_k(eps: str, k: int, eps_g: float) -> mpmath.mpf:
    """D(ε_g) of k copies of (ε, 0) for huge k (MV Thm 1.4): the tail sum starts at ℓ₀ = ⌊(ε_g/ε + k)/2⌋ + 1
    with C(k, ℓ₀)(1 + e^ε)^{−k} from ``loggamma`` and continues by the ratio (k − ℓ)/(ℓ + 1) until the terms
    are 1e-30 of the sum (at least 200 terms). ε is a decimal string (its exact decimal value)."""
    e, g = mpmath.mpf(eps), mpmath.mpf(eps_g)
    ell = int(mpmath.floor((g / e + k) / 2)) + 1
    start = ell
    c = mpmath.exp(
        mpmath.loggamma(k + 1) - mpmath.loggamma(ell + 1) - mpmath.loggamma(k - ell + 1)
        - k * mpmath.log(1 + mpmath.exp(e))
    )
    total = mpmath.mpf(0)
    while True:
        term = c * (mpmath.exp(ell * e) - mpmath.exp(g + (k - ell) * e))
        total += term
        if ell > start + 200 and term < total * mpmath.mpf(10) ** -30:
            return total
        c = c * (k - ell) / (ell + 1)
        ell += 1


def optimal_delta_from_sum(
    sum_fn: Callable[[mpmath.mpf], mpmath.mpf], deltas: Sequence[float], eps_g: float
) -> mpmath.mpf:
    """δ_g = 1 − Π(1 − δ_i)(1 − D(ε_g)) (MV Thm 1.5) for D given by ``sum_fn``."""
    surv = mpmath.mpf(1)
    for d in deltas:
        surv *= 1 - mpmath.mpf(d)
    return 1 - surv * (1 - sum_fn(mpmath.mpf(eps_g)))


def optimal_epsilon_from_sum(
    sum_fn: Callable[[mpmath.mpf], mpmath.mpf], deltas: Sequence[float], delta_g: float, hi: float
) -> mpmath.mpf:
    """Least ε_g ≥ 0 with D(ε_g) ≤ 1 − (1 − δ_g)/Π(1 − δ_i) (MV Thm 1.5), by 120 bisection steps on [0, hi]
    (D is decreasing); inf below the floor, 0 if D(0) already meets it."""
    surv = mpmath.mpf(1)
    for d in deltas:
        surv *= 1 - mpmath.mpf(d)
    r = 1 - (1 - mpmath.mpf(delta_g)) / surv
    if r < 0:
        return mpmath.inf
    if sum_fn(mpmath.mpf(0)) <= r:
        return mpmath.mpf(0)
    lo, up = mpmath.mpf(0), mpmath.mpf(hi)
    for _ in range(120):
        mid = (lo + up) / 2
        if sum_fn(mid) <= r:
            up = mid
        else:
            lo = mid
    return up


def kov_theorem_iii3_deltas(eps: float, delta: float, k: int) -> list[mpmath.mpf]:
    """The δ of KOV Thm III.3's pairs ((k − 2i)ε, 1 − (1 − δ)^k (1 − δ_i)), i = 0..⌊k/2⌋, with eq. (6):
    δ_i = Σ_{ℓ<i} C(k, ℓ)(e^{(k−ℓ)ε} − e^{(k−2i+ℓ)ε}) / (1 + e^ε)^k."""
    e = mpmath.mpf(eps)
    out = []
    for i in range(k // 2 + 1):
        di = sum(
            mpmath.binomial(k, ell) * (mpmath.exp((k - ell) * e) - mpmath.exp((k - 2 * i + ell) * e)) for ell in range(i)
        ) / (1 + mpmath.exp(e)) ** k
        out.append(1 - (1 - mpmath.mpf(delta)) ** k * (1 - di))
    return out


# --- the composed loss law, enumerated --------------------------------------------------------------------


def canonical_outcomes(eps: Sequence[float]) -> Law:
    """(losses, P-probabilities) of the 2^k outcomes of the canonical pairs of (ε_i, 0): loss Σ ±ε_i with
    P-probability Π p_i or (1 − p_i), p_i = e^{ε_i}/(1 + e^{ε_i})."""
    es = [mpmath.mpf(e) for e in eps]
    ps = [mpmath.exp(e) / (1 + mpmath.exp(e)) for e in es]
    losses, probs = [], []
    for signs in itertools.product((1, -1), repeat=len(es)):
        loss = mpmath.mpf(0)
        prob = mpmath.mpf(1)
        for e, p, sg in zip(es, ps, signs):
            loss += sg * e
            prob *= p if sg > 0 else 1 - p
        losses.append(loss)
        probs.append(prob)
    return losses, probs


def canonical_lattice_law(a: Sequence[int], unit: float) -> Law:
    """The law of L = unit·Σ ±a_i (canonical pairs of (a_i·unit, 0)), convolved exactly on the lattice."""
    u = mpmath.mpf(unit)
    law = {0: mpmath.mpf(1)}
    for ai in a:
        p = mpmath.exp(ai * u) / (1 + mpmath.exp(ai * u))
        new: dict[int, mpmath.mpf] = {}
        for y, w in law.items():
            new[y + ai] = new.get(y + ai, 0) + w * p
            new[y - ai] = new.get(y - ai, 0) + w * (1 - p)
        law = new
    ys = sorted(law)
    return [y * u for y in ys], [law[y] for y in ys]


def canonical_homogeneous_law(eps: float, k: int) -> Law:
    """The law of k copies of the canonical (ε, 0) pair: loss (2ℓ − k)ε with P-probability C(k, ℓ)p^ℓ(1 − p)^{k−ℓ}."""
    e = mpmath.mpf(eps)
    p = mpmath.exp(e) / (1 + mpmath.exp(e))
    losses = [(2 * ell - k) * e for ell in range(k + 1)]
    probs = [mpmath.binomial(k, ell) * p**ell * (1 - p) ** (k - ell) for ell in range(k + 1)]
    return losses, probs


def law_hockey_stick(losses: Sequence[mpmath.mpf], probs: Sequence[mpmath.mpf], eps_g: mpmath.mpf) -> mpmath.mpf:
    """D(ε_g) = Σ_{t > ε_g} p_t (1 − e^{ε_g − t}) of a discrete loss law."""
    return mpmath.fsum(p * (1 - mpmath.exp(eps_g - t)) for t, p in zip(losses, probs) if t > eps_g)


def delta_target(deltas: Sequence[float], delta_g: float) -> mpmath.mpf:
    """r = 1 − (1 − δ_g)/Π(1 − δ_i) = (δ_g − floor)/Π(1 − δ_i), floor = 1 − Π(1 − δ_i) = −expm1(Σ log1p(−δ_i)).

    Written without 1 − δ_g: at 50 digits that form loses every digit of a δ_g below 1e-50 (a slow hunt
    found the reference 2e-14 relative off at δ_g = 1e-42)."""
    log_surv = mpmath.fsum(mpmath.log1p(-mpmath.mpf(d)) for d in deltas)
    floor = -mpmath.expm1(log_surv)
    return (mpmath.mpf(delta_g) - floor) * mpmath.exp(-log_surv)


def law_least_epsilon(losses: Sequence[mpmath.mpf], probs: Sequence[mpmath.mpf], r: mpmath.mpf) -> mpmath.mpf:
    """Least ε_g ≥ 0 with D(ε_g) ≤ r, by 90 bisection steps on [0, max L] (inf if r < 0)."""
    if r < 0:
        return mpmath.inf
    if law_hockey_stick(losses, probs, mpmath.mpf(0)) <= r:
        return mpmath.mpf(0)
    lo, hi = mpmath.mpf(0), max(losses)
    for _ in range(90):
        mid = (lo + hi) / 2
        if law_hockey_stick(losses, probs, mid) <= r:
            hi = mid
        else:
            lo = mid
    return hi


def law_delta_at(deltas: Sequence[float], losses: Sequence[mpmath.mpf], probs: Sequence[mpmath.mpf], eps_g: float) -> float:
    """δ_g = 1 − Π(1 − δ_i)(1 − D(ε_g)) of the enumerated law (MV Thm 1.5), as a float."""
    surv = mpmath.fprod(1 - mpmath.mpf(x) for x in deltas)
    return float(1 - surv * (1 - law_hockey_stick(losses, probs, mpmath.mpf(eps_g))))


def two_group_homogeneous_hockey_stick(
    big: tuple[float, int], small: tuple[str, int], dps: int
) -> Callable[[float], mpmath.mpf]:
    """D(ε_g) of k₁ copies of (ε₁, 0) composed with k₂ copies of (ε₂, 0), by the double binomial sum
    Σ_{m, s} P₁(m)P₂(s)(1 − e^{ε_g − L₁(m) − L₂(s)})_+ with L₁(m) = ε₁(k₁ − 2m), P₁(m) = C(k₁, m)(1 − p₁)^m p₁^{k₁−m}
    (MV Thm 1.4 for each group, convolved). ε₂ is a decimal string; the laws are built at ``dps`` digits
    and the returned D evaluates at ``dps`` digits."""
    (e1, k1), (e2s, k2) = big, small
    with mpmath.workdps(dps):
        p1 = mpmath.exp(e1) / (1 + mpmath.exp(e1))
        e2 = mpmath.mpf(e2s)
        p2 = mpmath.exp(e2) / (1 + mpmath.exp(e2))
        law1 = [(e1 * (k1 - 2 * m), mpmath.binomial(k1, m) * (1 - p1) ** m * p1 ** (k1 - m)) for m in range(k1 + 1)]
        law2 = [(e2 * (k2 - 2 * s), mpmath.binomial(k2, s) * (1 - p2) ** s * p2 ** (k2 - s)) for s in range(k2 + 1)]

    def big_d(eps_g: float) -> mpmath.mpf:
        with mpmath.workdps(dps):
            e = mpmath.mpf(eps_g)
            return mpmath.fsum(pa * pb * (1 - mpmath.exp(e - la - lb)) for la, pa in law1 for lb, pb in law2 if la + lb > e)

    return big_d


def lattice_hockey_stick_float(a: Sequence[int], unit: float) -> Callable[[float], float]:
    """D(ε_g) of (a_i·unit, 0), i = 1..k, in float64: the two-point laws (1 − p_i at 0, p_i at a_i) convolved one
    by one with ``numpy.convolve`` (non-negative terms only, relative error ~1e-13), the loss of y + units
    (2y − Σa_i)·unit, and D(ε_g) = Σ_y P(y)(1 − e^{ε_g − t_y})_+ summed with ``math.fsum`` (MV Thm 1.5)."""
    pmf = np.ones(1)
    for ai in a:
        p = 1.0 / (1.0 + math.exp(-ai * unit))
        factor = np.zeros(ai + 1)
        factor[0], factor[ai] = 1.0 - p, p
        pmf = np.convolve(pmf, factor)
    n = sum(a)
    losses = [(2 * y - n) * unit for y in range(n + 1)]

    def big_d(eps_g: float) -> float:
        return math.fsum(float(w) * -math.expm1(eps_g - t) for w, t in zip(pmf, losses) if t > eps_g)

    return big_d

"""The discrete Gaussian mechanism composed exactly on its lattice (Canonne–Kamath–Steinke 2020, Def 1).

N_ℤ(0, σ²)(x) = e^{−x²/(2σ²)}/Z(σ), Z(σ) = Σ_{x∈ℤ} e^{−x²/(2σ²)} (summed directly at 80 digits; the terms past
|x| = R are below e^{−R²/(2σ²)} and R is taken with e^{−R²/(2σ²)} < 10⁻⁷⁰). The privacy loss of shift Δ at
noise x is (Δ² + 2Δx)/(2σ²) (CKS; ``docs/dgauss.md``), so the k-fold loss of shifts Δ₁ … Δ_k is
(Σ Δᵢ² + 2·Σ Δᵢxᵢ)/(2σ²): its law is the law of the integer J = Σ Δᵢxᵢ.

That law is computed with **integer bookkeeping**, independently of optcomp: every mass is held as an
interval [floor(p·2^S), ceil(p·2^S)] of integers (S = 320 bits, p from mpmath at 100 digits), each
convolution with one more coordinate is an exact integer convolution (``numpy`` object arrays of Python
ints), rescaled by 2^S with floor on the lower and ceiling on the upper side. So the lower vector never
exceeds, and the upper vector (plus the truncated mass, k·2e^{−R²/(2σ²)}/Z, added to δ) never falls below,
the exact law — up to mpmath's 100-digit evaluation of exp, 10⁻⁷⁰ below anything compared.

δ(ε) = Σ_J P(J)(1 − e^{ε − L_J})₊ is then an interval, and ε(δ) is bracketed by bisection on it.
"""

from __future__ import annotations

import bisect
import functools
import math

import mpmath
import numpy as np

#: Fixed-point bits of every mass.
_BITS = 320
#: Decimal digits of the mpmath evaluation of the masses.
_DPS = 100
#: The per-coordinate truncation: mass beyond |x| = R below 10^-70.
_LOG10_TAIL = 70


def _radius(sigma: float) -> int:
    return math.ceil(sigma * math.sqrt(2 * _LOG10_TAIL * math.log(10))) + 1


@functools.lru_cache(maxsize=32)
def _masses(sigma: float) -> tuple[list[int], list[int], mpmath.mpf]:
    """(floor, ceil) of p(x)·2^S for |x| ≤ R, and a bound on the mass beyond, at 100 digits."""
    r = _radius(sigma)
    with mpmath.workdps(_DPS):
        s2 = 2 * mpmath.mpf(sigma) ** 2
        terms = [mpmath.exp(-mpmath.mpf(x * x) / s2) for x in range(-4 * r, 4 * r + 1)]
        z = mpmath.fsum(terms)  # |x| ≤ 4R: the rest is below e^{-16·R²/(2σ²)}
        scale = mpmath.mpf(2) ** _BITS
        lo, hi = [], []
        for x in range(-r, r + 1):
            v = mpmath.exp(-mpmath.mpf(x * x) / s2) / z * scale
            lo.append(int(mpmath.floor(v)))
            hi.append(int(mpmath.ceil(v)))
        tail = 2 * mpmath.exp(-mpmath.mpf(r * r) / s2) / z / (1 - mpmath.exp(-mpmath.mpf(r) / (s2 / 2)))
    return lo, hi, tail


def _stretch(v: list[int], delta: int) -> np.ndarray:
    out = np.zeros((len(v) - 1) * delta + 1, dtype=object)
    out[:] = 0
    out[::delta] = v
    return out


def _step(acc: np.ndarray, part: np.ndarray, up: bool) -> np.ndarray:
    """acc ∗ part, rescaled by 2^S (floor, or ceiling when ``up``): exact integer arithmetic."""
    full = np.convolve(acc, part)
    if up:
        return np.array([-((-int(c)) >> _BITS) for c in full], dtype=object)
    return np.array([int(c) >> _BITS for c in full], dtype=object)


@functools.lru_cache(maxsize=64)
def composed_law(sigma: float, shifts: tuple[int, ...]) -> tuple[int, np.ndarray, np.ndarray, mpmath.mpf]:
    """(J_min, lower, upper, truncated mass) of J = Σ Δᵢxᵢ for the given shifts (one coordinate each):
    lower/2^S ≤ P(J_min + n) ≤ upper/2^S + truncated mass (docstring). Shifts composed in the order given."""
    lo, hi, tail = _masses(sigma)
    r = _radius(sigma)
    acc_lo = np.array([1 << _BITS], dtype=object)
    acc_hi = np.array([1 << _BITS], dtype=object)
    j_min = 0
    for d in shifts:
        acc_lo = _step(acc_lo, _stretch(lo, d), up=False)
        acc_hi = _step(acc_hi, _stretch(hi, d), up=True)
        j_min -= d * r
    return j_min, acc_lo, acc_hi, tail * len(shifts)


@functools.lru_cache(maxsize=64)
def k_fold_law(sigma: float, delta: int, k: int) -> tuple[int, np.ndarray, np.ndarray, mpmath.mpf]:
    """:func:`composed_law` of k copies of shift Δ, by repeated squaring of the exact integer vectors."""
    if k == 1:
        return composed_law(sigma, (delta,))
    half = k_fold_law(sigma, delta, k // 2)
    out = _square(half, half)
    if k % 2:
        out = _square(out, composed_law(sigma, (delta,)))
    return out


def _square(a: tuple[int, np.ndarray, np.ndarray, mpmath.mpf], b: tuple[int, np.ndarray, np.ndarray, mpmath.mpf]
            ) -> tuple[int, np.ndarray, np.ndarray, mpmath.mpf]:
    return (a[0] + b[0], _step(a[1], b[1], up=False), _step(a[2], b[2], up=True), a[3] + b[3])


@functools.lru_cache(maxsize=64)
def _sums(sigma: float, shifts: tuple[int, ...], count: int) -> tuple[list[mpmath.mpf], list[mpmath.mpf], ...]:
    """(losses L_n increasing, suffix sums Σ_{m≥n} P_lo, Σ P_lo·e^{−L}, Σ P_hi, Σ P_hi·e^{−L}, truncated mass)."""
    j_min, lo, hi, tail = _law(sigma, shifts, count)
    norm2 = count * sum(d * d for d in shifts)
    with mpmath.workdps(_DPS):
        c = 1 / (2 * mpmath.mpf(sigma) ** 2)
        scale = mpmath.mpf(2) ** _BITS
        losses = [c * (norm2 + 2 * (j_min + n)) for n in range(len(lo))]
        sums: list[list[mpmath.mpf]] = [[mpmath.mpf(0)] for _ in range(4)]
        for n in range(len(lo) - 1, -1, -1):
            back = mpmath.exp(-losses[n])
            p_lo, p_hi = mpmath.mpf(int(lo[n])) / scale, mpmath.mpf(int(hi[n])) / scale
            for i, v in enumerate((p_lo, p_lo * back, p_hi, p_hi * back)):
                sums[i].append(sums[i][-1] + v)
        for col in sums:
            col.reverse()  # col[n] = Σ_{m ≥ n}
    return (losses, *sums, [tail])  # type: ignore[return-value]


def _delta_interval(sigma: float, shifts: tuple[int, ...], count: int, epsilon: mpmath.mpf) -> tuple[mpmath.mpf, mpmath.mpf]:
    """δ(ε) = Σ_{L_n > ε} P_n (1 − e^{ε − L_n}) with P_n in [P_lo, P_hi]: each weight is in [0, 1]."""
    losses, s_lo, t_lo, s_hi, t_hi, tail = _sums(sigma, shifts, count)
    with mpmath.workdps(_DPS):
        n = bisect.bisect_right(losses, epsilon)
        e = mpmath.exp(epsilon)
        return s_lo[n] - e * t_lo[n], s_hi[n] - e * t_hi[n] + tail[0]


def delta_bracket(sigma: float, shifts: tuple[int, ...], count: int, epsilon: float) -> tuple[mpmath.mpf, mpmath.mpf]:
    """An interval containing δ(ε) of ``count`` runs of the discrete Gaussian with the shift vector ``shifts``
    (coordinates), each coordinate N_ℤ(0, σ²) (module docstring)."""
    return _delta_interval(sigma, shifts, count, mpmath.mpf(epsilon))


def _law(sigma: float, shifts: tuple[int, ...], count: int) -> tuple[int, np.ndarray, np.ndarray, mpmath.mpf]:
    if len(shifts) == 1:
        return k_fold_law(sigma, shifts[0], count)
    return composed_law(sigma, tuple(sorted(shifts)) * count)


def epsilon_reference(sigma: float, shifts: tuple[int, ...], count: int, delta: float) -> tuple[mpmath.mpf, mpmath.mpf]:
    """(ε₋, ε₊): δ(ε₋) > δ is certain and δ(ε₊) ≤ δ is certain (so ε(δ) ∈ [ε₋, ε₊]), by bisection on the
    interval of :func:`delta_bracket` to 1e-14 relative (where the interval decides)."""
    target = mpmath.mpf(delta)

    def interval(e: mpmath.mpf) -> tuple[mpmath.mpf, mpmath.mpf]:
        return _delta_interval(sigma, shifts, count, e)

    with mpmath.workdps(_DPS):
        lo, hi = mpmath.mpf(0), mpmath.mpf(1)
        while interval(hi)[1] > target:
            hi *= 2
        if interval(lo)[0] <= target:
            return lo, lo if interval(lo)[1] <= target else hi
        for _ in range(200):
            if hi - lo <= hi * mpmath.mpf(10) ** -14:
                break
            mid = (lo + hi) / 2
            d_lo, d_hi = interval(mid)
            if d_lo > target:
                lo = mid
            elif d_hi <= target:
                hi = mid
            else:  # the interval straddles δ: both ends are as tight as this reference can make them
                break
        return lo, hi


def zcdp_conversion_epsilon(rho: float, delta: float) -> mpmath.mpf:
    """The ε of CKS 2020's conversion from ρ-zCDP (Prop 12 / Cor 13, as OpenDP's ``make_zCDP_to_approxDP``
    evaluates it): δ(ε) = inf_{α>1} e^{(α−1)(αρ − ε)}·(1 − 1/α)^α/(α − 1), the infimum at the root of
    (2α − 1)ρ − ε + ln(1 − 1/α) = 0; ε(δ) by bisection, at 40 digits."""
    with mpmath.workdps(40):
        r = mpmath.mpf(rho)

        def conv_delta(eps: mpmath.mpf) -> mpmath.mpf:
            a = mpmath.findroot(lambda a: (2 * a - 1) * r - eps + mpmath.log1p(-1 / a),
                                (mpmath.mpf("1.000001"), (eps + 1) / (2 * r) + 2), solver="bisect")
            return mpmath.exp((a - 1) * (a * r - eps) + a * mpmath.log1p(-1 / a)) / (a - 1)

        lo, hi = mpmath.mpf(0), mpmath.mpf(1)
        while conv_delta(hi) > delta:
            hi *= 2
        for _ in range(120):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if conv_delta(mid) > delta else (lo, mid)
        return hi

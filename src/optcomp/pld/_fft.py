"""Composition of non-negative vectors by FFT, with a certified error budget (``docs/pld.md`` §5).

``compose([(x_i, k_i)])`` returns the circular convolution Πᵢ x_i^{*k_i} on a window of the summed
index chosen by a Chernoff bound, together with

* ``fft_error``: a bound on the floating-point error of Σ_j w_j y_j for *any* weights w_j ∈ [0, 1]
  (forward transforms, powers, inverse transform; derivation in :func:`compose`);
* ``wrap``: a bound on the mass of the exact (linear) convolution outside the window — which the
  circular convolution folds back inside. For an upper bound it is added (mass outside that might
  count); for a lower bound it is subtracted (folded mass that might sit in the test set).

The result is entrywise ≥ the exact linear convolution inside the window up to ``fft_error`` (folded
mass is non-negative), which is all the upper end needs; monotonicity of convolution in each factor
(Lemma 4) lets envelopes go in and certified bounds come out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import scipy.fft

from optcomp._numerics import ERROR_BOUND_MARGIN, SMALLEST_SUBNORMAL, UNIT_ROUNDOFF, FloatArray
from optcomp._rounding import fft_error_bound, rounding_error, widen_up
from optcomp.pld._cells import GridTooLargeError

#: Frequencies whose Σ k_i ln M_i falls below this are set to zero (their error is charged:
#: √(2·nf)·(k + 1)·e^{this}, below 10⁻³³ for any window the 1 GiB memory cap allows and k < 10¹⁵, far under
#: every floor; −760 before, where e^{this} underflows, kept 2–3× more frequencies for nothing).
_LOG_NEGLIGIBLE = -120.0
#: Cap of the Chernoff tilt (per index) used to place the window (keeps θ·j finite).
_MAX_THETA = 1e3
#: Bytes of working memory per FFT point (long-double input and spectrum, five accumulators).
BYTES_PER_POINT = 96
#: Parts composed this many times or more are transformed in long double (x87 extended, u = 2⁻⁶⁴):
#: the forward-transform and power errors grow like k·u, which long double keeps far below δ.
LONG_DOUBLE_COUNT = 64
#: Unit roundoff of numpy's long double (2⁻⁶⁴ for x87 extended precision; 2⁻⁵³ where it is a double).
_U_LD = float(np.finfo(np.longdouble).eps) / 2
#: The smallest positive double (absolute error of a product that lands in the subnormal range).
_TINY = SMALLEST_SUBNORMAL
#: −x beyond which exp(x) is exactly 0.0 (it is below −745.14), with room for exp's own error.
_EXP_ZERO = 760.0
#: ln of an error factor beyond which it is taken as infinite (e^700 is near the top of the double range).
_LOG_HUGE = 700.0
#: Share of live (not underflowing) terms below which :func:`_exp_shifted` skips the exp of the others.
_LIVE_SHARE = 0.9


def _exp_or_inf(x: float) -> float:
    """e^x for a factor of an error bound: +inf past ``_LOG_HUGE`` (a capped factor would under-charge)."""
    return math.exp(x) if x <= _LOG_HUGE else math.inf


def _fft_bound(n: int, mass: float, u: float) -> float:
    """:func:`~optcomp._rounding.fft_error_bound` (Higham Thm 24.2) for unit roundoff ``u``."""
    return fft_error_bound(n, mass, 0) * (u / UNIT_ROUNDOFF)


@dataclass(frozen=True)
class Composed:
    """``values[j]`` approximates the mass of summed index ``first + j``; see module docstring."""

    values: FloatArray
    first: int
    fft_error: float
    wrap: float


class _Cumulant:
    """θ ↦ Σ_i k_i·log Σ_j x_ij e^{θ j} over all parts at once (one pass over their concatenation),
    each part's log-sum-exp rounded up by (4n_i + 8)u(1 + |value|): a sum of n non-negative terms has
    relative error ≤ (n − 1)u whatever the order of summation, and exp, log and the shift by the
    maximum add a few u each; the weighted total is rounded up by its own rounding."""

    def __init__(self, parts: list[tuple[FloatArray, int]]) -> None:
        sizes = np.array([x.size for x, _ in parts], dtype=np.int64)
        self.starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        with np.errstate(divide="ignore"):
            self.logx = np.log(np.concatenate([x for x, _ in parts]))
        self.j = np.arange(int(np.sum(sizes)), dtype=np.float64) - np.repeat(self.starts, sizes)
        self.sizes = sizes
        self.k = np.array([k for _, k in parts], dtype=np.float64)
        self.slack = rounding_error(1, (4 * sizes + 8).astype(np.float64))

    def __call__(self, theta: float) -> float:
        v = np.multiply(self.j, theta)  # logx + θj in one buffer (the same float operations)
        np.add(v, self.logx, out=v)
        top = np.maximum.reduceat(v, self.starts)
        np.subtract(v, top[0] if self.sizes.size == 1 else np.repeat(top, self.sizes), out=v)
        sums = np.add.reduceat(_exp_shifted(v), self.starts)
        val = top + np.log(sums)
        val = val + self.slack * (1 + np.abs(val))
        terms = (self.k * val).tolist()
        total = math.fsum(terms)
        # each product k·val within u of itself, the correctly rounded sum within u|total|: round up
        return total + rounding_error(1, abs(total)) + rounding_error(2, math.fsum(abs(t) for t in terms)) + _TINY


def _exp_shifted(v: FloatArray) -> FloatArray:
    """``np.exp(v)`` (``v`` overwritten): where over ``1 − _LIVE_SHARE`` of the entries are below
    −``_EXP_ZERO`` (exactly 0.0 after exp, which is slowest there), zeros are written for them instead;
    the vector, and any sum of it, are the same bit for bit (issue 27 item 7)."""
    live = ~(v < -_EXP_ZERO)  # NaN stays live (exp gives NaN, as before)
    if np.count_nonzero(live) >= _LIVE_SHARE * v.size:
        return np.asarray(np.exp(v, out=v), dtype=np.float64)
    out = np.zeros(v.size)
    np.exp(v, out=out, where=live)
    return out


def window(parts: list[tuple[FloatArray, int]], log_tau: float, max_len: int) -> tuple[int, int, float]:
    """Window [A, A + N) of the summed index (relative to Σ k_i·first_i) and a bound on the mass
    outside it. Chernoff: P(J ≥ b) ≤ exp(Σ k_i Λ_i(θ) − θ b), P(J ≤ a) ≤ exp(Σ k_i Λ_i(−θ) + θ a),
    Λ_i the exact log-MGF of part i's index (:class:`_Cumulant`), for a few θ > 0 around the Gaussian
    optimum; the bound is in units of the parts' masses (sub-probability vectors)."""
    mean = var = 0.0
    j_max = 0
    for x, k in parts:
        tot = float(np.sum(x))
        j = np.arange(x.size, dtype=np.float64)
        mu = float(np.dot(x, j)) / tot
        mean += k * mu
        var += k * float(np.dot(x, (j - mu) ** 2)) / tot
        j_max += k * (x.size - 1)
    cumulant = _Cumulant(parts)

    base = min(math.sqrt(2 * -log_tau / var), _MAX_THETA) if var > 0 else 1.0
    # any θ > 0 is valid; walk down from above the Gaussian optimum while the bound improves (a
    # heavy sparse tail, e.g. a per-step law kept down to 1e-305, wants a much smaller θ)
    # (the cumulant at the chosen θ is kept for the wrap below: the same value a second call would give)
    best_b, th_b, k_b = math.inf, base, math.nan
    best_a, th_a, k_a = -math.inf, base, math.nan
    for e in range(2, -40, -1):
        th = base * 2.0**e
        kb = cumulant(th)
        b = (kb - log_tau) / th
        if b < best_b:
            best_b, th_b, k_b = b, th, kb
        elif e < 0:
            break
    for e in range(2, -40, -1):
        th = base * 2.0**e
        ka = cumulant(-th)
        a = (log_tau - ka) / th
        if a > best_a:
            best_a, th_a, k_a = a, th, ka
        elif e < 0:
            break
    a_int = max(0, math.floor(best_a))
    b_int = min(j_max, math.ceil(best_b))
    if b_int < a_int:
        a_int, b_int = min(a_int, j_max), min(a_int, j_max)
    needed = b_int - a_int + 1
    if needed > max_len:
        raise GridTooLargeError(
            f"the composed privacy loss spans {needed} grid points (the memory cap allows {max_len}); "
            "ask for a larger Accuracy.relative_width or grid_step, raise Accuracy.memory_cap, "
            "or compose fewer mechanisms"
        )
    n = scipy.fft.next_fast_len(needed, real=True)
    b_int = a_int + n - 1
    wrap = 0.0
    if b_int < j_max:
        wrap += math.exp((cumulant(th_b) if math.isnan(k_b) else k_b) - th_b * (b_int + 1))
    if a_int > 0:
        wrap += math.exp((cumulant(-th_a) if math.isnan(k_a) else k_a) + th_a * (a_int - 1))
    return a_int, n, widen_up(wrap, 16)


#: Parts used once with at most this many non-zero entries are multiplied together by shifted adds.
_SPARSE_NNZ = 16
#: Other parts used once and at most this long are multiplied together by direct convolution ...
_SHORT_LEN = 512
#: ... in groups whose product is at most this long.
_GROUP_LEN = 4096


def _fold(x: FloatArray, n: int) -> tuple[FloatArray, int]:
    """x folded modulo n (entry j added to j mod n) and the most terms any entry sums."""
    if x.size <= n:
        return x, 1
    pad = (-x.size) % n
    return np.concatenate([x, np.zeros(pad)]).reshape(-1, n).sum(axis=0), (x.size + pad) // n


def premultiply(
    parts: list[tuple[FloatArray, int]], n: int
) -> tuple[list[tuple[FloatArray, int]], float, float]:
    """Parts used once (k = 1) that are sparse or short, multiplied together *before* the FFT.

    A heterogeneous composition of many distinct mechanisms would otherwise pay one length-N transform
    (and a dozen spectrum-sized operations) per part. Here parts with at most ``_SPARSE_NNZ`` non-zero
    entries (e.g. (ε, δ) black boxes: two atoms, split onto ≤ 4 grid points) are multiplied into one
    vector by shifted adds, and parts at most ``_SHORT_LEN`` long into groups at most ``_GROUP_LEN``
    long by direct convolution (``np.convolve``); products longer than N are folded modulo N, which
    leaves the circular convolution on the window unchanged (circular convolution of folded vectors is
    the fold of the linear one). The FFT then composes the products and the remaining parts.

    Error (returned as ``(parts, rel, absolute)``; :func:`compose` charges it): every vector here is
    non-negative, so an entry of a computed product or fold that sums m exact terms, each a product
    of two inputs rounded once, is within γ_{m+1} = (m + 1)u/(1 − (m + 1)u) of the exact value
    relative to it, whatever the summation order (no cancellation); an input that is itself within
    γ_a relative carries through, and (1 + γ_a)(1 + γ_b) ≤ 1 + γ_{a+b}. Hence each product vector is
    entrywise within γ_M of the exact product of its members, M the sum of the (m + 1) over all its
    steps, and ``rel`` = Σ γ_M over the products. Below the normal range a rounding is only accurate
    to 2⁻¹⁰⁷⁴ absolutely: ``absolute`` counts (2⁻¹⁰⁷⁴ each) every rounding performed. Telescoping over
    the products (replace one exact product by its computed one at a time; each computed product's
    mass is within (1 + rel) of the exact one's), any [0, 1]-weighted sum of the composed vector moves
    by at most (rel + absolute)·(1 + rel)^{#products}·Π_i max(1, mass_i)^{k_i}.
    """
    out: list[tuple[FloatArray, int]] = []
    sparse: FloatArray | None = None
    sparse_m = 0
    groups: list[tuple[FloatArray, int]] = []
    group: FloatArray | None = None
    group_m = 0
    ops = 0
    for x, k in parts:
        if k != 1:
            out.append((x, k))
            continue
        nz = np.flatnonzero(x)
        if 0 < nz.size <= _SPARSE_NNZ:
            if sparse is None:
                sparse, m = _fold(x.copy(), n)
                sparse_m = m
                ops += x.size
                continue
            acc = np.zeros(sparse.size + int(nz[-1]))
            size = sparse.size
            for j in nz.tolist():
                acc[j : j + size] += x[j] * sparse
            ops += 2 * nz.size * size
            acc, m = _fold(acc, n)
            ops += acc.size * m
            sparse = acc
            sparse_m += nz.size + 1 + m
            continue
        if x.size <= min(_SHORT_LEN, n):
            if group is not None and group.size + x.size - 1 <= min(_GROUP_LEN, n):
                ops += 2 * group.size * x.size
                group_m += min(group.size, x.size) + 1
                group = np.convolve(group, x)
                continue
            if group is not None:
                groups.append((group, group_m))
            group, group_m = x, 0
            continue
        out.append((x, k))
    if group is not None:
        groups.append((group, group_m))
    if sparse is not None:
        groups.append((sparse, sparse_m))
    rel = 0.0
    for g, m in groups:
        out.append((g, 1))
        rel += rounding_error(m) / (1 - rounding_error(m)) if m else 0.0
    return out, widen_up(rel, 4), ops * _TINY


def compose(
    parts: list[tuple[FloatArray, int]], win: tuple[int, int, float], wide_from: int = LONG_DOUBLE_COUNT
) -> Composed:
    """Compose ``parts`` [(vector, count)] by FFT on the window ``win`` = (A, N, wrap) from
    :func:`window` (indices relative to the parts' own first entries).

    Error budget (per weighted sum with weights in [0, 1]):

    * forward transforms: each computed φ̂_i(ω) is within e_i of the exact DFT, e_i the smaller of
      ``fft_error_bound(N, mass_i, 0)`` and ``fft_error_bound(N, √N‖x_i‖₂, 0)`` (Higham Thm 24.2);
    * powers: |Πφ_i^{k_i} − Πφ̂_i^{k_i}| ≤ (Σ_i k_i e_i / M_i)·Π_j M_j^{k_j}, M_i = min(mass_i,
      |φ̂_i| + e_i); evaluating Πφ̂_i^{k_i} as exp(Σ k_i log φ̂_i) has relative error
      ρ ≤ Σ_i k_i(2|ln|φ̂_i|| + 4π + 4)u + 16u;
    * the per-frequency error E_ω maps to bins through the inverse DFT: by Parseval and
      Cauchy–Schwarz any [0, 1]-weighted sum of bins changes by at most ‖E‖₂ (full spectrum);
    * inverse transform rounding: at most ``fft_error_bound(N, ‖Ψ̂‖₂, 0)`` on any weighted sum.

    Parts composed ``wide_from`` times or more are transformed in long double (default
    ``LONG_DOUBLE_COUNT``); every bound above is stated with the unit roundoff of the precision used, so
    any ``wide_from`` gives a certified result (only the size of the error bars depends on it).

    Accumulation is in one pass over the parts, so memory is O(N) whatever their number. The steps:
    :func:`_premultiply_parts` (small parts multiplied before the FFT, their error ``direct``),
    :func:`_accumulate` (forward transforms and log-powers), :func:`_product_spectrum` (the composed
    spectrum Ψ̂) and :func:`_spectral_error` (the two bounds above that come from the spectrum).
    """
    a_int, n, wrap = win
    masses = _masses(parts)
    if any(m <= 0.0 for m in masses):
        return Composed(np.zeros(1), a_int, 0.0, 0.0)
    total = sum(k for _, k in parts)
    parts, masses, direct = _premultiply_parts(parts, masses, n)
    if any(m <= 0.0 for m in masses):
        # a product underflowed to 0 entirely: the exact one is within ``direct`` of it on any
        # [0, 1]-weighted sum (premultiply's bound counts every subnormal rounding)
        return Composed(np.zeros(1), a_int, direct, wrap)
    excess = [k * max(0.0, math.log(m)) for m, (_, k) in zip(masses, parts, strict=True)]
    acc = _accumulate(parts, masses, excess, n, wide_from)
    psi = _product_spectrum(acc)
    err_prop, err_inv = _spectral_error(psi, acc, n, total, math.fsum(excess))
    del acc
    y = scipy.fft.irfft(psi, n)
    del psi
    y = np.roll(y, -(a_int % n))
    np.maximum(y, 0.0, out=y)
    return Composed(y, a_int, (err_prop + err_inv) * ERROR_BOUND_MARGIN + direct, wrap)


def _masses(parts: list[tuple[FloatArray, int]]) -> list[float]:
    """Each part's mass Σx, rounded up for its summation (4·log₂(n + 2) units, Higham §4.2 pairwise)."""
    return [widen_up(float(np.sum(x)), 4 * math.log2(x.size + 2)) for x, _ in parts]


def _premultiply_parts(
    parts: list[tuple[FloatArray, int]], masses: list[float], n: int
) -> tuple[list[tuple[FloatArray, int]], list[float], float]:
    """:func:`premultiply` and its error on any [0, 1]-weighted sum of the composition (its docstring):
    (rel + absolute)·(1 + rel)^{#parts}·Π max(1, mass_i)^{k_i}, 1 % over; the new parts' masses."""
    n_parts = len(parts)
    log_all = math.fsum(k * max(0.0, math.log(m)) for m, (_, k) in zip(masses, parts, strict=True))
    parts, rel, absolute = premultiply(parts, n)
    if rel == 0.0 and absolute == 0.0:  # nothing rounded (it may still have reordered: each part's own mass)
        return parts, _masses(parts), 0.0
    factor = _exp_or_inf(log_all * (1 + rounding_error(8)))
    direct = (rel + absolute) * (1 + rel) ** n_parts * factor * ERROR_BOUND_MARGIN if math.isfinite(factor) else math.inf
    return parts, _masses(parts), direct


@dataclass
class _Accumulated:
    """The spectra of the parts, accumulated over one pass (:func:`_accumulate`), per frequency ω:
    Σ k_i ln M_i, Σ k_i ln φ̂_i (long double), the relative error ρ of exp(Σ k_i ln φ̂_i), Σ k_i e_i/M_i,
    and the direct product of the spectra of parts used once (``prod``, ``n_prod`` factors)."""

    log_m_sum: FloatArray
    log_psi: npt.NDArray[np.clongdouble]
    rho: FloatArray
    ratio_sum: FloatArray
    prod: npt.NDArray[np.complex128] | None
    n_prod: int


def _accumulate(
    parts: list[tuple[FloatArray, int]], masses: list[float], excess: list[float], n: int, wide_from: int
) -> _Accumulated:
    """Forward transforms of the parts and their log-powers, with the error terms of :func:`compose`."""
    nf = n // 2 + 1
    remaining = widen_up(math.fsum(excess), 8)
    acc = _Accumulated(
        np.zeros(nf), np.zeros(nf, dtype=np.clongdouble), np.full(nf, rounding_error(16)), np.zeros(nf), None, 0
    )
    for (x, k), mass, exc in zip(parts, masses, excess, strict=True):
        remaining -= exc
        wide = k >= wide_from
        u = _U_LD if wide else UNIT_ROUNDOFF
        xf = _folded(x, n, np.longdouble if wide else np.float64)
        phi = scipy.fft.rfft(xf)
        e = _transform_error(x, xf, n, mass, u)
        del xf
        aphi = _abs_up(phi)
        big_m = np.minimum(mass, aphi + e)
        acc.log_m_sum += k * np.log(big_m)
        acc.ratio_sum += k * e / big_m
        if k == 1 and not wide:
            # a part used once (heterogeneous compositions): multiply spectra directly, which is far
            # cheaper than a complex log; each product adds ≤ 6u relative (and ≤ 2⁻¹⁰⁷⁴ absolute)
            if acc.prod is None:
                acc.prod = phi.astype(np.complex128)
            else:
                acc.prod *= phi
            acc.n_prod += 1
            del phi, aphi, big_m
            continue
        keep = acc.log_m_sum + max(remaining, 0.0) > _LOG_NEGLIGIBLE
        # a frequency skipped here stays dead (the final live test must agree with this one: two later
        # terms could round the running sum back above the threshold; audit2), and the dead charge
        # covers it: its true Σ k ln M is ≤ the threshold up to a few units, which the charge's spare
        # (k + 1) factor absorbs
        acc.log_m_sum[~keep] = -np.inf
        idx = np.flatnonzero(keep)
        with np.errstate(divide="ignore", invalid="ignore"):
            lphi = np.log(phi[idx])
            acc.log_psi[idx] += k * lphi
        lre = np.abs(np.maximum(lphi.real.astype(np.float64), -1e300))
        acc.rho[idx] += k * (2 * lre + 4 * math.pi + 4) * u + (k * _U_LD if not wide else 0.0)
        del phi, aphi, big_m, lphi, lre
    return acc


def _abs_up(phi: npt.NDArray[np.complexfloating]) -> FloatArray:
    """|φ̂| as doubles, rounded up: the moduli of φ̂ rounded to complex128 (a double ``hypot``, several times
    faster than long double's), widened by 6 units. Rounding the two parts to double and ``hypot`` (< 1 ulp)
    are at most 3 roundings of |φ̂| (a part below the normal range adds ≤ 2⁻¹⁰⁷⁴, far below the transform
    error e that is added to it), which ``widen_up(·, 6)`` covers: M = min(mass, |φ̂| + e) stays an upper
    bound on |φ̂| as :func:`compose`'s power-error bound needs (before, |φ̂| was rounded to nearest)."""
    return np.asarray(widen_up(np.abs(phi.astype(np.complex128)), 6), dtype=np.float64)


def _transform_error(x: FloatArray, xf: npt.NDArray[np.floating], n: int, mass: float, u: float) -> float:
    """A bound, at every frequency, on |computed φ̂ − DFT of x folded exactly modulo n|: Higham's transform
    bound on the vector actually transformed (its mass, or √n times its ℓ₂ norm), plus, for a part longer
    than the window, the rounding of the fold: each entry is a double sum of ⌈size/n⌉ terms ≥ 0, so the
    folded vector is within γ_{c−1}·Σx of the exact fold in ℓ₁, and a DFT moves no frequency by more than
    an ℓ₁ norm (charged at 2c units). Found by an audit (a 19-entry part folded onto one point missed its
    exact mass by 25× the error bar)."""
    if x.size <= n:
        return min(_fft_bound(n, mass, u), _fft_bound(n, math.sqrt(n) * float(np.linalg.norm(x)), u))
    rows = -(-x.size // n)
    norm = widen_up(float(np.linalg.norm(np.asarray(xf, dtype=np.float64))), 2 * math.log2(n + 2))
    fold = rounding_error(2 * rows, mass)
    return min(_fft_bound(n, mass, u), _fft_bound(n, math.sqrt(n) * norm, u)) + fold


def _folded(x: FloatArray, n: int, dtype: type) -> npt.NDArray[np.floating]:
    """x folded modulo n (entry j added to j mod n), as ``dtype``. A vector shorter than n is only
    zero-padded (written straight into a ``dtype`` buffer: the same values as padding, a one-row sum
    and the conversion, without those copies)."""
    if x.size < n:
        out: npt.NDArray[np.floating] = np.zeros(n, dtype=dtype)
        out[: x.size] = x
        out[: x.size] += 0.0  # −0.0 → +0.0, as the one-row sum (0 + x) gave
        return out
    pad = (-x.size) % n
    xf = np.concatenate([x, np.zeros(pad)]).reshape(-1, n).sum(axis=0) if pad or x.size > n else x
    return np.asarray(xf, dtype=dtype)


def _product_spectrum(acc: _Accumulated) -> npt.NDArray[np.complex128]:
    """Ψ̂ = exp(Σ k_i ln φ̂_i)·Π(parts used once) at the frequencies that are not negligible (else 0);
    adds the rounding of exp (long double) and of the products to ``acc.rho``. Frees the log-spectrum."""
    nf = acc.log_m_sum.size
    live = np.flatnonzero(acc.log_m_sum > _LOG_NEGLIGIBLE)
    idx = live[~np.isneginf(acc.log_psi.real[live])]  # the test on the live frequencies only
    psi = np.zeros(nf, dtype=np.complex128)
    with np.errstate(over="ignore", invalid="ignore"):
        lp = acc.log_psi[idx]
        psi[idx] = np.exp(lp).astype(np.complex128)
        # exp in long double (relative 4u_ld per unit of |argument|) and the rounding to complex128
        acc.rho[idx] += 4 * _U_LD * (np.abs(lp).astype(np.float64) + 1) + rounding_error(2)
        if acc.prod is not None:
            psi[idx] *= acc.prod[idx]
            acc.rho[idx] += rounding_error(6 * acc.n_prod + 6)
    acc.log_psi = np.zeros(0, dtype=np.clongdouble)
    acc.prod = None
    return psi


def _spectral_error(
    psi: npt.NDArray[np.complex128], acc: _Accumulated, n: int, total: int, log_excess: float
) -> tuple[float, float]:
    """(‖E‖₂ of the per-frequency errors, the inverse transform's rounding) of :func:`compose`: the
    transform and power errors per frequency, plus the frequencies dropped as negligible."""
    nf = psi.size
    live = np.flatnonzero(acc.log_m_sum > _LOG_NEGLIGIBLE)
    absval = np.abs(psi)
    e_omega = np.zeros(nf)  # computed on the live frequencies only: the same vector as before, bit for bit
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        a = absval[live]
        power_err = np.where(a > 0, a * np.expm1(ERROR_BOUND_MARGIN * acc.rho[live]), 0.0)
        e_omega[live] = (
            np.exp(np.log(acc.ratio_sum[live]) + acc.log_m_sum[live]) * ERROR_BOUND_MARGIN + power_err + 2 * (acc.n_prod + 1) * _TINY
        )
    w = np.full(nf, 2.0)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    dead = math.sqrt(2.0 * nf) * (total + 1) * _exp_or_inf(_LOG_NEGLIGIBLE + log_excess)
    with np.errstate(over="ignore"):  # a norm past the double range is inf: the error bound stays an upper end
        err_prop = math.sqrt(float(np.dot(w, e_omega**2))) + dead
        err_inv = fft_error_bound(n, math.sqrt(float(np.dot(w, absval**2))) + dead, 0)
    return err_prop, err_inv

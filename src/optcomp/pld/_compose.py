"""FFT composition of discretised laws with a certified error budget (``docs/pld.md`` §2).

The composition Σ_i k_i·(law i) is realised once: a Chernoff bound from each part's exact discrete
MGF picks one window [A, B] of the composed cell-index sum J and bounds the mass that falls outside
it (and hence wraps around the circular convolution); one real FFT of length N ≥ B − A + 1 per part,
spectra raised to their counts in polar form, one inverse transform. The floating-point error of the
result, summed with weights in [0, 1] over any set of bins, is at most ``fft_error`` (derivation in
:func:`compose`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import scipy.fft
from scipy.special import logsumexp

from optcomp._numerics import PLD_MAX_FFT_LENGTH, UNIT_ROUNDOFF, FloatArray, fft_error_bound
from optcomp.pld._discretise import DiscreteLaw, GridTooLargeError

#: Frequencies whose Σ k_i ln M_i falls below this are treated as zero (their error is charged).
_LOG_NEGLIGIBLE = -760.0
#: Cap of the Chernoff tilt (per grid cell) used to place the FFT window (keeps θ·j finite).
_MAX_THETA = 1e3


@dataclass(frozen=True)
class Composed:
    """The composed mid-placed sub-probability vector and its error budget.

    ``masses[j]`` is the mass of the composed cell-index sum C = ``first_index + j``, whose mid-placed
    loss is s_j = (C + k/2)·Δ (k = ``count`` steps, each mid-placed at (c + ½)Δ).
    """

    masses: FloatArray
    first_index: int
    count: int
    step: float
    fft_error: float
    wrap_mass: float


def _log_mgf(x: FloatArray, logx: FloatArray, theta: float) -> float:
    """log Σ_j x_j e^{θ j}, rounded up by the error of a length-n log-sum-exp."""
    j = np.arange(x.size, dtype=np.float64)
    val = float(logsumexp(logx + theta * j))
    return val + (4 * x.size + 8) * UNIT_ROUNDOFF * (1 + abs(val))


def _window(parts: list[tuple[DiscreteLaw, int]], log_tau: float) -> tuple[int, int, float]:
    """Window [A, B] of the composed index sum J with P(J ∉ [A, B]) ≤ 2τ, and a certified bound on it.

    Chernoff: P(J ≥ b) ≤ exp(Σ k_i Λ_i(θ) − θ b), P(J ≤ a) ≤ exp(Σ k_i Λ_i(−θ) + θ a) for θ > 0, with
    Λ_i the exact log-MGF of part i's index (``_log_mgf``).
    """
    logs = []
    mean = var = 0.0
    j_max = 0
    for law, k in parts:
        x = law.masses
        with np.errstate(divide="ignore"):
            lx = np.log(x)
        logs.append((x, lx, k))
        tot = float(np.sum(x))
        j = np.arange(x.size, dtype=np.float64)
        mu = float(np.dot(x, j)) / tot
        mean += k * mu
        var += k * float(np.dot(x, (j - mu) ** 2)) / tot
        j_max += k * (x.size - 1)

    def cumulant(theta: float) -> float:
        return sum(k * _log_mgf(x, lx, theta) for x, lx, k in logs)

    # Any θ > 0 is valid; a near-degenerate J (tiny variance, e.g. a tilted law) must not give θ = inf.
    base = min(math.sqrt(2 * -log_tau / var), _MAX_THETA) if var > 0 else 1.0
    thetas = [base * 2.0**e for e in range(-3, 4)]
    best_b, th_b = math.inf, thetas[0]
    best_a, th_a = -math.inf, thetas[0]
    for th in thetas:
        b = (cumulant(th) - log_tau) / th
        if b < best_b:
            best_b, th_b = b, th
        a = (log_tau - cumulant(-th)) / th
        if a > best_a:
            best_a, th_a = a, th
    a_int = max(0, math.floor(best_a))
    b_int = min(j_max, math.ceil(best_b))
    if b_int < a_int:
        a_int, b_int = min(a_int, j_max), min(a_int, j_max)
    needed = b_int - a_int + 1
    if needed > PLD_MAX_FFT_LENGTH:
        raise GridTooLargeError(
            f"the composed privacy loss spans {needed} grid cells (limit {PLD_MAX_FFT_LENGTH}); "
            "use a larger Accuracy.grid_step or fewer compositions"
        )
    n = scipy.fft.next_fast_len(needed, real=True)
    b_int = a_int + n - 1
    wrap = 0.0
    if b_int < j_max:
        wrap += math.exp(cumulant(th_b) - th_b * (b_int + 1))
    if a_int > 0:
        wrap += math.exp(cumulant(-th_a) + th_a * (a_int - 1))
    return a_int, n, wrap * (1 + 16 * UNIT_ROUNDOFF)


def compose(parts: list[tuple[DiscreteLaw, int]], tail_mass: float) -> Composed:
    """Compose ``parts`` [(discretised law, count)] by FFT (module docstring).

    Error budget (per query: a sum of bins with weights in [0, 1]):

    * forward transforms: each computed φ̂_i(ω) is within e_i of the exact DFT, where e_i is the
      smaller of the componentwise budget ``fft_error_bound(N, mass_i, 0)`` and the normwise one
      ``fft_error_bound(N, √N‖x_i‖₂, 0)`` (Higham Thm 24.2);
    * powers: |Πφ_i^{k_i} − Πφ̂_i^{k_i}| ≤ Σ_i k_i e_i M_i^{k_i−1} Π_{j≠i} M_j^{k_j}, M_i =
      min(mass_i, |φ̂_i| + e_i); evaluating Πφ̂_i^{k_i} as exp(Σ k_i log φ̂_i) has relative error
      ρ ≤ Σ_i k_i(2|ln|φ̂_i|| + 4π + 4)u + 16u (log, scaling by k_i, and exp of an argument whose
      imaginary part may be as large as k_i·π);
    * the per-frequency error E_ω maps to bins through the inverse DFT: by Parseval and
      Cauchy–Schwarz a weighted sum over any bins changes by at most ‖E‖₂ (full spectrum);
    * inverse transform rounding: at most ``fft_error_bound(N, ‖Ψ̂‖₂, 0)`` on any weighted sum.
    """
    if not parts:
        raise ValueError("parts must not be empty")
    step = parts[0][0].step
    count = sum(k for _, k in parts)
    first = sum(k * law.first_cell for law, k in parts)
    log_tau = math.log(tail_mass / 4)
    if any(not np.any(law.masses > 0) for law, _ in parts):  # some step is surely infinite (or dropped)
        return Composed(np.zeros(1), first, count, step, 0.0, 0.0)
    a_int, n, wrap = _window(parts, log_tau)
    nf = n // 2 + 1
    # Pass 1 (cheap, real): log M-sums on all frequencies; keep φ̂ only where the running sum says the
    # frequency can still matter (log Σ k_i log M_i > _LOG_NEGLIGIBLE); the others contribute at most
    # (K+1)·e^{_LOG_NEGLIGIBLE + Σ k_i ln⁺ mass_i} each, charged below.
    log_m_sum = np.zeros(nf)
    alive = np.ones(nf, dtype=bool)
    stored: list[tuple[int, float, FloatArray, npt.NDArray[np.complex128], npt.NDArray[np.intp]]] = []
    log_excess = 0.0
    for law, k in parts:
        x = law.masses
        mass = float(np.sum(x)) * (1 + 4 * math.log2(x.size + 2) * UNIT_ROUNDOFF)
        if mass <= 0.0:
            return Composed(np.zeros(1), first, count, step, 0.0, 0.0)
        log_excess += k * max(0.0, math.log(mass))
        pad = (-x.size) % n
        xf = np.concatenate([x, np.zeros(pad)]).reshape(-1, n).sum(axis=0) if x.size > n or pad else x
        if xf.size < n:
            xf = np.concatenate([xf, np.zeros(n - xf.size)])
        phi = scipy.fft.rfft(xf)
        del xf
        e = min(fft_error_bound(n, mass, 0), fft_error_bound(n, math.sqrt(n) * float(np.linalg.norm(x)), 0))
        big_m = np.minimum(mass, np.abs(phi) + e)
        log_m_sum += k * np.log(big_m)
        alive &= log_m_sum > _LOG_NEGLIGIBLE
        idx = np.flatnonzero(alive)
        stored.append((k, e, big_m[idx], phi[idx], idx))
        del phi, big_m
    final = np.flatnonzero(alive)
    log_psi = np.zeros(final.size, dtype=np.complex128)  # Σ k_i log φ̂_i (principal logs)
    rho = np.full(final.size, 16 * UNIT_ROUNDOFF)
    ratio_sum = np.zeros(final.size)
    for k, e, big_m_s, phi_s, idx in stored:
        sel = np.isin(idx, final, assume_unique=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            lphi = np.log(phi_s[sel])
            log_psi += k * lphi
        rho += k * (2 * np.abs(np.maximum(lphi.real, -1e300)) + 4 * math.pi + 4) * UNIT_ROUNDOFF
        ratio_sum += k * e / big_m_s[sel]
    del stored
    with np.errstate(over="ignore", invalid="ignore"):
        psi_f = np.exp(log_psi)
    psi_f = np.where(np.isneginf(log_psi.real), 0.0, psi_f)
    absval = np.abs(psi_f)
    with np.errstate(over="ignore", invalid="ignore"):
        power_err = np.where(absval > 0, absval * np.expm1(1.01 * rho), 0.0)
    e_omega = np.exp(np.log(ratio_sum) + log_m_sum[final]) * 1.01 + power_err
    psi = np.zeros(nf, dtype=np.complex128)
    psi[final] = psi_f
    w_all = np.full(nf, 2.0)
    w_all[0] = 1.0
    if n % 2 == 0:
        w_all[-1] = 1.0
    w = w_all[final]
    dead = math.sqrt(2.0 * nf) * (count + 1) * math.exp(_LOG_NEGLIGIBLE + log_excess)
    err_prop = math.sqrt(float(np.dot(w, e_omega**2))) + dead
    err_inv = fft_error_bound(n, math.sqrt(float(np.dot(w, absval**2))) + dead, 0)
    fft_error = (err_prop + err_inv) * 1.01
    del e_omega, power_err, absval, log_psi, rho, log_m_sum, ratio_sum, psi_f
    y = scipy.fft.irfft(psi, n)
    del psi
    y = np.roll(y, -(a_int % n))
    np.maximum(y, 0.0, out=y)
    return Composed(y, first + a_int, count, step, fft_error, wrap)

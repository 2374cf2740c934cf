"""One step of the backward recursion on the lattice: a bounded-range step, or a block of fixed pairs
(``docs/selection.md`` §2).

For the function δ_rest after a step, the step's function is

* ε-BR: δ(x) = sup_{t ∈ [0, ε]} [p_t·δ_rest(x − t) + (1 − p_t)·δ_rest(x − t + ε)] (the analyst picks t after
  seeing the earlier outputs; the family (P_t, Q_t) dominates every ε-BR pair);
* a fixed block: δ(x) = E_P[δ_rest(x − L)], L the block's privacy loss (a convolution).

**Upper end of a BR step** (:func:`br_upper`, on the lattice with ε′ = m·h ≥ ε: an ε-BR step is ε′-BR). Between
lattice points δ_rest is bounded by the chord in y = e^x through the upper ends (convexity). On a t-cell
[ih, (i+1)h] both arguments stay in single lattice cells, and with s = e^{−t} the objective is
f(s) = K + A·s + B/s, concave when A, B < 0 with its maximum at s* = √(B/A). The endpoints are lattice values:
f at t = ih is G_i(n) = p_i·U_{n−i} + (1 − p_i)·U_{n−i+m}. Writing A = −α², B = −β², the interior maximum
exceeds the endpoint value at s_lo = e^{−(i+1)h} by exactly (α·s_lo − β)²/s_lo. On the diagonal j = n − i − 1
(the cell [x_j, x_{j+1}] of the first argument) A = e^{(i+1)h}·a_j and B = b_j with

    a_j = (c₀ΔU_j − c₁ΔU_{j+m})/(e^h − 1),   b_j = c₁(U_{j+m} − U_j) − c₁(ΔU_{j+m} − ΔU_j)/(e^h − 1),

c₀ = 1/(1 − e^{−ε′}), c₁ = 1/(e^{ε′} − 1), ΔU_j = U_{j+1} − U_j; so the excess is (α̃_j − β̃_j·e^{(i+1)h/2})²
with α̃² = −a_j, β̃² = −b_j, and s* lies in cell i only when i ∈ [λ_j − 1, λ_j + 1], λ_j = ln(a_j/b_j)/h:
at most three cells per diagonal. So the step costs the (m + 1) lattice rows G_i plus O(1) per diagonal.
Certified: a_j, b_j carry an absolute error bound (32 roundings of the magnitudes that enter them), α̃, β̃ are
taken at the ends of their ranges that maximise the square, a cell is treated as interior whenever any value
in the ranges puts s* in it (treating a cell as interior only adds a valid, larger bound: f(s*) is the
maximum of the concave f on all s > 0). The cell's maximum is also at most max(f at the ends) +
|B|(s_hi − s_lo)²/(4 s_lo³) (a concave f exceeds its chord by at most sup|f''|·(s_hi − s_lo)²/8, and
sup|f''| = 2|B|/s_lo³ on the cell): the smaller of the two bounds is kept.

**Lower end of a BR step** (:func:`br_lower`, the true ε): t restricted to {0, h, …, (m−1)h, ε}, m = ⌈ε/h⌉;
x − ih stays on the lattice and x − ih + ε ≤ x_{n−i+m} (δ_rest non-increasing), and t = ε gives δ_rest(x): an
achievable adversary, exact on the lattice when ε = m·h. p is rounded down (the value b + p(a − b), a ≥ b,
grows with p), the arithmetic rounded down.

**Fixed blocks** (:func:`fixed_step`): Σ_j v_j·δ_rest(x_n − (f + j)h) ± error + p_inf with the block's lattice
kernels (:func:`optcomp.pld.lattice_kernels`), a convolution (:func:`_convolve`: direct with a relative error
bound, or by FFT with an absolute one).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.fft
from numpy.lib.stride_tricks import sliding_window_view

from optcomp._numerics import FloatArray
from optcomp._rounding import rounding_error, widen_down, widen_up
from optcomp.adaptive._curve import Curve, monotone, refined
from optcomp.adaptive._plan import cells_of
from optcomp.pld import LatticeKernel

#: Diagonals whose interior cells are uncertain over more than this many cells take the concave bound on
#: all of them at once (where U is nearly linear in y, a_j and b_j are rounding noise).
_NARROW_SPAN = 3
#: Convolutions of at most this many products (or kernels at most this long) are direct, others by FFT.
_DIRECT_PRODUCTS = 1 << 28
_DIRECT_KERNEL = 64
#: Roundings charged to a_j and b_j (differences of the upper ends, products with c₀, c₁, 1/(e^h − 1), each
#: of those constants within 8 ulps of its exact value): 32 units of the magnitudes that enter.
_COEFF_ROUNDINGS = 32


def _p_up(m: int, step: float) -> FloatArray:
    """Upper ends of p_{ih} = (1 − e^{(i−m)h})/(1 − e^{−mh}), i = 0 … m, for the ε′ = m·h family."""
    i = np.arange(m + 1, dtype=np.float64)
    d = (i - m) * step  # ≤ 0, one rounding
    num = -np.expm1(d - rounding_error(2, np.abs(d)))  # the larger |d|, the larger the numerator
    den = -math.expm1(-m * step + rounding_error(2, m * step))
    return np.asarray(np.minimum(widen_up(num / den, 16), 1.0), dtype=np.float64)


def _p_low(epsilon: float, m: int, step: float) -> FloatArray:
    """Lower ends of p_{ih} = (1 − e^{ih−ε})/(1 − e^{−ε}), i = 0 … m − 1 (ih < ε), for the true ε."""
    i = np.arange(m, dtype=np.float64)
    t = i * step
    d = t - epsilon  # < 0; t and the difference each rounded once
    d_hi = np.minimum(d + rounding_error(4, np.abs(t) + epsilon), 0.0)
    num = -np.expm1(d_hi)
    den = -math.expm1(-epsilon)
    return np.asarray(np.maximum(widen_down(num / den, 16), 0.0), dtype=np.float64)


def _shifted(padded: FloatArray, start: int, na: int, size: int, first: int, last: int) -> FloatArray:
    """Row r = 0 … last − first holds ``padded`` at lattice indices na − (first + r) + (0 … size − 1) (``padded``
    starts at index ``start``): a zero-copy view of a sliding window, rows in order of increasing shift."""
    base = na - start
    win = sliding_window_view(padded, size)
    return np.asarray(win[base - last : base - first + 1][::-1])


def br_upper(rest: Curve, m: int, na: int, nb: int) -> FloatArray:
    """Upper ends of δ at x_na … x_nb after one ε′-BR step, ε′ = m·h (module docstring)."""
    h, size = rest.step, nb - na + 1
    start, stop = na - m - 1, nb + m + 1
    up = rest.padded_upper(start, stop)
    p = _p_up(m, h)
    a_rows = _shifted(up, start, na, size, 0, m)  # U_{n−i}, i = 0 … m
    b_rows = _shifted(up, start, na, size, -m, 0)  # U_{n−i+m} ≤ U_{n−i} (U is non-increasing)
    grid = np.subtract(a_rows, b_rows)
    grid *= p[:, None]
    grid += b_rows  # b + p(a − b), each within 3 roundings: widened below, after the maximum
    best = grid.max(axis=0)
    _interior(up, start, na, nb, m, h, grid, best)
    return np.asarray(widen_up(best, 8), dtype=np.float64)


def _coefficients(up: FloatArray, start: int, j0: int, j1: int, m: int, h: float) -> tuple[FloatArray, ...]:
    """α̃ and β̃ ranges (lo, hi) on the diagonals j0 … j1 (module docstring) and |B|'s upper end."""
    u = up[j0 - start : j1 + m + 2 - start]
    du = np.diff(u)  # ΔU_j for j = j0 … j1 + m
    n = j1 - j0 + 1
    d0, dm = du[:n], du[m : m + n]
    u0, um = u[:n], u[m : m + n]
    em1 = math.expm1(h)
    c0 = 1.0 / -math.expm1(-m * h)
    c1 = 1.0 / math.expm1(m * h)
    a = (c0 * d0 - c1 * dm) / em1
    b = c1 * (um - u0) - (c1 / em1) * (dm - d0)
    da = rounding_error(_COEFF_ROUNDINGS, (c0 * np.abs(d0) + c1 * np.abs(dm)) / em1)
    db = rounding_error(_COEFF_ROUNDINGS, c1 * (np.abs(u0) + np.abs(um)) + (c1 / em1) * (np.abs(dm) + np.abs(d0)))
    alpha_hi = widen_up(np.sqrt(widen_up(np.maximum(-a + da, 0.0), 2)), 4)
    alpha_lo = widen_down(np.sqrt(widen_down(np.maximum(-a - da, 0.0), 2)), 4)
    beta_hi = widen_up(np.sqrt(widen_up(np.maximum(-b + db, 0.0), 2)), 4)
    beta_lo = widen_down(np.sqrt(widen_down(np.maximum(-b - db, 0.0), 2)), 4)
    return alpha_lo, alpha_hi, beta_lo, beta_hi


def _interior(up: FloatArray, start: int, na: int, nb: int, m: int, h: float, grid: FloatArray,
              best: FloatArray) -> None:
    """Raise ``best`` (in place) by the cells whose maximum may be interior (module docstring)."""
    j0, j1 = na - m, nb - 1
    alpha_lo, alpha_hi, beta_lo, beta_hi = _coefficients(up, start, j0, j1, m, h)
    live = (alpha_hi > 0.0) & (beta_hi > 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        lam_lo = 2.0 * (np.log(alpha_lo) - np.log(beta_hi)) / h
        lam_hi = 2.0 * (np.log(alpha_hi) - np.log(beta_lo)) / h
    pad = rounding_error(64, np.abs(np.nan_to_num(lam_lo, posinf=0.0, neginf=0.0)) + 1.0) + rounding_error(
        64, np.abs(np.nan_to_num(lam_hi, posinf=0.0, neginf=0.0)) + 1.0)
    i_lo = np.maximum(np.ceil(np.nan_to_num(lam_lo - 1.0 - pad, nan=0.0, neginf=-1e300, posinf=1e300)), 0)
    i_hi = np.minimum(np.floor(np.nan_to_num(lam_hi + 1.0 + pad, nan=-1.0, neginf=-1e300, posinf=1e300)), m - 1)
    j = np.arange(j0, j1 + 1)
    # cells i with n = j + i + 1 inside [na, nb]
    i_lo = np.maximum(i_lo, na - j - 1)
    i_hi = np.minimum(i_hi, nb - j - 1)
    live &= i_hi >= i_lo
    wide = live & (i_hi - i_lo >= _NARROW_SPAN)
    if np.any(wide):  # s* uncertain (U nearly linear in y there): the concave bound, on every cell reached
        c = widen_up(np.max(beta_hi[wide]) ** 2 * (-math.expm1(-h)) ** 2 * math.exp((m + 2) * h) / 4.0, 16)
        reach = slice(max(int(j[wide][0]) + 1 - na, 0), min(int(j[wide][-1]) + m - na, nb - na) + 1)
        best[reach] = widen_up(best[reach] + c, 4)
        live &= ~wide
    if not np.any(live):
        return
    span = (i_hi - i_lo + 1)[live].astype(np.int64)
    rows = np.repeat(np.flatnonzero(live), span)
    offset = np.arange(rows.size) - np.repeat(np.cumsum(span) - span, span)
    cell = i_lo[live].astype(np.int64).repeat(span) + offset
    w = np.asarray((cell + 1) * (h / 2.0), dtype=np.float64)
    w_lo, w_hi = widen_down(np.exp(w - rounding_error(2, w)), 4), widen_up(np.exp(w + rounding_error(2, w)), 4)
    first = np.maximum(alpha_hi[rows] - widen_down(beta_lo[rows] * w_lo, 2), 0.0)
    second = np.maximum(widen_up(beta_hi[rows] * w_hi, 2) - alpha_lo[rows], 0.0)
    excess = widen_up(np.maximum(first, second) ** 2, 8)  # f(s*) − f(s_lo), the concave maximum's excess
    sw = np.asarray((cell + 3) * h, dtype=np.float64)
    curvature = widen_up(beta_hi[rows] ** 2 * (-math.expm1(-h)) ** 2 * np.exp(sw + rounding_error(2, sw)) / 4.0, 16)
    n = j[rows] + cell + 1
    at_lo = widen_up(grid[cell + 1, n - na], 8)  # f(s_lo): the row value within 3 roundings
    ends = np.maximum(at_lo, widen_up(grid[cell, n - na], 8))
    value = np.minimum(at_lo + excess, ends + curvature)  # two bounds on the cell's maximum, the smaller
    np.maximum.at(best, n - na, widen_up(value, 4))


def br_lower(rest: Curve, epsilon: float, na: int, nb: int) -> FloatArray:
    """Lower ends of δ at x_na … x_nb after one ε-BR step (module docstring)."""
    h, size = rest.step, nb - na + 1
    m = cells_of(epsilon, h)
    start, stop = na - m, nb + m
    low = rest.padded_lower(start, stop)
    p = _p_low(epsilon, m, h)
    a_rows = _shifted(low, start, na, size, 0, m - 1)  # L_{n−i}, i = 0 … m − 1
    b_rows = _shifted(low, start, na, size, -m, -1)  # L_{n−i+m} ≤ δ_rest(x_n − ih + ε)
    vals = np.subtract(a_rows, b_rows)
    vals *= p[:, None]
    vals += b_rows
    best = np.maximum(vals.max(axis=0), low[na - start : na - start + size])  # t = ε: δ_rest(x)
    return np.asarray(widen_down(best, 8), dtype=np.float64)


def br_step(rest: Curve, epsilon: float, m_up: int, na: int, nb: int) -> Curve:
    """δ after one ε-BR step at x_na … x_nb, both ends (``m_up``·h ≥ ε)."""
    up, low = monotone(br_upper(rest, m_up, na, nb), br_lower(rest, epsilon, na, nb), na, rest.step)
    return Curve(rest.step, na, up, low)


def _convolve(values: FloatArray, kernel: FloatArray, up: bool) -> FloatArray:
    """``np.convolve(values, kernel, "valid")`` of non-negative vectors, rounded up or down.

    Short products are direct (a sum of non-negative products: relative error γ_{len+1}, widened by
    2·len + 8 units). Long ones go through the FFT, with an absolute error bound on every entry: the forward
    transforms are within η‖·‖₂ of exact in ℓ₂ (η = 5u·log₂ n, Higham Thm 24.2), so the product spectrum is off
    by at most η√n(‖a‖₂‖v‖₁ + √n‖a‖₂‖v‖₂) + its own rounding, and by Parseval and the inverse transform's
    own η every entry is off by at most 2η‖a‖₂(‖v‖₁ + √n‖v‖₂) + η‖y‖₂ (charged 4× over, plus one unit per
    entry of the result's size)."""
    out_len = values.size - kernel.size + 1
    if values.size * kernel.size <= _DIRECT_PRODUCTS or kernel.size <= _DIRECT_KERNEL:
        direct = np.asarray(np.convolve(values, kernel, mode="valid"), dtype=np.float64)
        units = 2 * min(kernel.size, values.size) + 8
        return widen_up(direct, units) if up else widen_down(direct, units)
    n = scipy.fft.next_fast_len(values.size + kernel.size - 1, real=True)
    spec = scipy.fft.rfft(values, n) * scipy.fft.rfft(kernel, n)
    full = scipy.fft.irfft(spec, n)
    y = full[kernel.size - 1 : kernel.size - 1 + out_len]
    a2, v1, v2 = float(np.linalg.norm(values)), float(np.sum(kernel)), float(np.linalg.norm(kernel))
    eta = 5.0 * rounding_error(1, math.log2(n) + 2.0)
    err = 4.0 * (2.0 * eta * a2 * (v1 + math.sqrt(n) * v2) + eta * float(np.linalg.norm(full)))
    err = widen_up(err + rounding_error(4, float(np.max(np.abs(full)))), 8)
    return np.asarray(np.maximum(y + err, 0.0) if up else np.maximum(y - err, 0.0), dtype=np.float64)


def fixed_step(rest: Curve, upper: LatticeKernel, lower: LatticeKernel, na: int, nb: int) -> Curve:
    """δ after a block of fixed pairs at x_na … x_nb: E_P[δ_rest(x − L)] bounded by the block's lattice kernels
    (module docstring; the kernels' own certificates are :func:`optcomp.pld.lattice_kernels`'). Kernels on a
    lattice r times finer (r = h/kernel step, a power of two) read δ_rest between lattice points by
    :func:`~optcomp.adaptive._curve.refined` and keep every r-th output."""
    r = round(rest.step / upper.step)
    if r == 1:
        up_pad = rest.padded_upper(na - upper.last, nb - upper.first)
        low_pad = rest.padded_lower(na - lower.last, nb - lower.first)
    else:
        up_pad, _ = refined(rest, r, r * na - upper.last, r * nb - upper.first)
        _, low_pad = refined(rest, r, r * na - lower.last, r * nb - lower.first)
    hi = _convolve(up_pad, upper.values, up=True)[::r]
    lo = _convolve(low_pad, lower.values, up=False)[::r]
    hi = widen_up(hi + upper.error + upper.p_inf, 4)
    lo = widen_down(np.maximum(lo - lower.error, 0.0) + lower.p_inf, 4)
    up, low = monotone(hi, lo, na, rest.step)
    return Curve(rest.step, na, up, low)


__all__ = ["br_lower", "br_step", "br_upper", "fixed_step"]

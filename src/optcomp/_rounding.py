"""Floating-point error analysis for the certified engines: the rounding vocabulary and log-space sums.

Every certified engine of optcomp states its rounding slack in the words of this module: outward
widening by a stated number of roundings (:func:`widen_up`, :func:`widen_down`, :func:`next_up`,
:func:`next_down`), the absolute error of a counted number of roundings (:func:`rounding_error`,
:func:`gamma`), the error of a sum or a dot product of n terms (:func:`sum_error_bound`,
:func:`dot_error_bound`), of an FFT convolution (:func:`fft_error_bound`), and one log-sum-exp family
with rounded-up and rounded-down variants (:func:`log_sum_exp_up`, :func:`log_sum_exp_down`,
:func:`suffix_log_sum_exp`), and the certified cell masses between edges of a law's log tail
functions (:func:`cell_log_masses`, shared by the PLD grid and the balls-in-bins factor). The values
they are applied to, the named tolerances and the validators live in :mod:`optcomp._numerics`, the
only module of ours this one imports.
"""

from __future__ import annotations

import math
from typing import TypeVar, overload

import numpy as np
import numpy.typing as npt

from optcomp._numerics import ERROR_BOUND_MARGIN, LAW_LOG_ERROR, UNIT_ROUNDOFF, FloatArray

_Real = TypeVar("_Real", float, FloatArray)

# -- the Rényi conversion's two-point route (rdp/_binary.py, rdp/_convert.py): its search and check margins ----
#: The top of the range of log q searched (q < 1 strictly).
RDP_LOG_Q_TOP: float = -1e-12
#: The certificate's exchange adds orders where its x₀ exceeds ρα(α − 1) by more than this fraction.
RDP_CERT_EXCESS: float = 1e-13
#: A finite curve's witness caps are tightened by this factor (room for rounding) before the exact check.
RDP_BINARY_ETA_FINITE: float = 1e-10
#: The smallest α − 1 the zCDP order scan starts from, and a first inverse step's size relative to its start.
RDP_SCAN_FIRST_GAP: float = 1e-9

def fft_error_bound(n: int, mass: float = 1.0, multiplications: int = 1) -> float:
    """A bound on the absolute error of each coefficient of an FFT-based convolution product.

    For a length-``n`` complex FFT computed with the Cooley–Tukey algorithm in floating point, the
    computed transform ŷ of x satisfies ‖ŷ − y‖₂ ≤ (log₂ n)·η·‖y‖₂ with η ≈ 5u (Higham, *Accuracy and
    Stability of Numerical Algorithms*, 2nd ed., Thm 24.2). A product of ``multiplications`` transforms of
    probability vectors of total mass ``mass`` followed by an inverse transform therefore has a per-bin
    error of at most (multiplications + 2)·log₂(n)·5u·mass, up to second-order terms, which the factor 2
    below absorbs. This is the budget every FFT result in optcomp is widened by.
    """
    if n < 2:
        return 0.0
    return 2.0 * (multiplications + 2) * math.log2(n) * 5.0 * UNIT_ROUNDOFF * mass


# ---------------------------------------------------------------------------------------------
# The rounding vocabulary: every certified engine states its slack in these words.
#
# Rounding model (all helpers below): IEEE-754 binary64, round to nearest, so every basic operation
# (+, −, ×, ÷, √) returns fl(a ∘ b) = (a ∘ b)(1 + θ) with |θ| ≤ u = 2⁻⁵³ (Higham, *Accuracy and Stability
# of Numerical Algorithms*, 2nd ed., §2.2, eq. (2.4)); numpy's and libm's exp, log, log1p, expm1 are
# within 1 ulp (relative ≤ 2u). A quantity computed by m such roundings carries a relative error of at
# most γ_m = m·u/(1 − m·u) (Higham Lemma 3.1). Subnormal results are not covered by relative bounds:
# engines that can underflow add an absolute term (a multiple of the smallest subnormal) themselves.
# ---------------------------------------------------------------------------------------------


def widen_up(x: _Real, units: float) -> _Real:
    """``x`` multiplied by ``1 + units·u``: a safe upper end for a non-negative computed value.

    With ``units`` an integer in [2, 2²⁶], 1 + units·u is computed with an error of at most u (exactly
    when ``units`` is even), and the product rounds to nearest, so for x̂ ≥ 0 the result is at least
    x̂·(1 + (units − 1)u)/(1 + u). If x̂ came from at most ``units − 2`` roundings of a non-negative exact
    value x (relative error ≤ γ_{units−2}), the result is ≥ x: (1 − γ_m)(1 + (m + 1)u) ≥ 1 + u for
    m ≤ 2²⁵ (Higham Lemma 3.1). So ``widen_up(x, 4)`` covers two roundings, ``widen_up(x, 64)`` 62.
    For x < 0 the result moves towards 0 (use :func:`widen_down` on −x). Works elementwise on arrays.

    Args:
        x: the computed value(s), ≥ 0.
        units: the relative widening in units of the unit roundoff u = 2⁻⁵³.
    """
    return x * (1.0 + units * UNIT_ROUNDOFF)


def widen_down(x: _Real, units: float) -> _Real:
    """``x`` multiplied by ``1 − units·u``: a safe lower end for a non-negative computed value.

    1 − units·u is exact for an integer ``units`` in [1, 2⁵²] (it lies in [½, 1), where the spacing is
    u); the product rounds to nearest. If x̂ ≥ 0 came from at most ``units − 1`` roundings of an exact
    x ≥ 0, x̂ ≤ x/(1 − (units − 1)u), and (1 − units·u)(1 + u) ≤ 1 − (units − 1)u, so the result is ≤ x
    (Higham Lemma 3.1). Works elementwise on arrays.

    Args:
        x: the computed value(s), ≥ 0.
        units: the relative narrowing in units of u = 2⁻⁵³.
    """
    return x * (1.0 - units * UNIT_ROUNDOFF)


def next_up(x: _Real) -> _Real:
    """The next float above ``x`` (elementwise): one ulp outwards, for a value already rounded correctly
    or with its error charged elsewhere (IEEE-754 ``nextUp``; ``inf`` stays ``inf``)."""
    if isinstance(x, np.ndarray):
        return np.nextafter(x, math.inf)
    return math.nextafter(x, math.inf)


def next_down(x: _Real) -> _Real:
    """The next float below ``x`` (elementwise): one ulp outwards (IEEE-754 ``nextDown``)."""
    if isinstance(x, np.ndarray):
        return np.nextafter(x, -math.inf)
    return math.nextafter(x, -math.inf)


@overload
def rounding_error(roundings: float, magnitude: float = 1.0) -> float: ...
@overload
def rounding_error(roundings: float, magnitude: FloatArray) -> FloatArray: ...
def rounding_error(roundings: float, magnitude: float | FloatArray = 1.0) -> float | FloatArray:
    """``roundings·u·magnitude``: the absolute error of that many roundings of values of size ≤ ``magnitude``.

    One rounding of a value y moves it by at most u·|y| (round to nearest); errors that add up without
    amplification (a log-space formula summing logs, each step's result bounded by ``magnitude``) total
    at most ``roundings·u·magnitude``. The caller states the count and the magnitudes (its docstring
    says which operations they are); the product is computed as (roundings·u)·magnitude, exact in its
    first factor, and callers add it with room to spare (their counts include a margin). Elementwise on
    arrays.

    Args:
        roundings: the number of roundings (or unit-roundoff multiples of a relative error) charged.
        magnitude: a bound on the size of the values rounded (≥ 0).
    """
    return roundings * UNIT_ROUNDOFF * magnitude


def gamma(n: int) -> float:
    """γ_n = n·u/(1 − n·u), rounded up: the relative error bound of n roundings (Higham Lemma 3.1).

    Args:
        n: the number of roundings, 0 ≤ n < 2⁵⁰.
    """
    if n <= 0:
        return 0.0
    nu = n * UNIT_ROUNDOFF  # exact (n < 2^53 times a power of two)
    return widen_up(nu / (1.0 - nu), 4)  # 1 − nu exact for n < 2^50; one division covered by 4u


def sum_error_bound(n: int, abs_sum: float) -> float:
    """A bound on |fl(Σxᵢ) − Σxᵢ| for n floats summed in any order (recursive, pairwise, blocked).

    Higham §4.2, eq. (4.4): |fl(Σxᵢ) − Σxᵢ| ≤ γ_{n−1}·Σ|xᵢ|. ``abs_sum`` is Σ|xᵢ| as *computed* (also a
    sum of n floats, so abs_sum ≥ (1 − γ_{n−1})·Σ|xᵢ|); the bound returned is γ_{n−1}·abs_sum/(1 − γ_{n−1}),
    evaluated with upward widening. It does not cover errors in the xᵢ themselves.

    Args:
        n: the number of terms (≥ 0).
        abs_sum: the computed Σ|xᵢ| (≥ 0; ``inf`` gives ``inf``).
    """
    if n <= 1 or abs_sum == 0.0:
        return 0.0
    g = gamma(n - 1)
    return widen_up(g * abs_sum / (1.0 - g), 4)  # two roundings after γ (1 − g rounds down ≤ u: in the 4u)


def dot_error_bound(n: int, abs_sum: float) -> float:
    """A bound on |fl(Σ aᵢbᵢ) − Σ aᵢbᵢ| for n products summed in any order (Higham §3.1, eq. (3.5)).

    |fl(xᵀy) − xᵀy| ≤ γ_n·Σ|xᵢyᵢ|: one rounding per product, n − 1 in the sum. ``abs_sum`` is Σ|fl(aᵢbᵢ)|
    as computed (≥ (1 − γ_n)·Σ|aᵢbᵢ|), so :func:`sum_error_bound` with n + 1 terms (γ_n·abs_sum/(1 − γ_n))
    covers it.

    Args:
        n: the number of products.
        abs_sum: the computed Σ|aᵢbᵢ| (≥ 0).
    """
    return sum_error_bound(n + 1, abs_sum)


# ---------------------------------------------------------------------------------------------
# Log-space helpers.
# ---------------------------------------------------------------------------------------------


def log1mexp(x: float) -> float:
    """log(1 − eˣ) for x ≤ 0, accurate everywhere (Mächler 2012); −inf at x = 0."""
    if x > 0:
        raise ValueError(f"log1mexp needs x <= 0, got {x!r}")
    if x == 0:
        return -math.inf
    if x > -math.log(2.0):
        return math.log(-math.expm1(x))
    return math.log1p(-math.exp(x))


def log1mexp_array(x: npt.ArrayLike) -> FloatArray:
    """log(1 − eˣ) elementwise for x ≤ 0 (Mächler 2012): −inf at 0, 0 at −inf (NaN for x > 0)."""
    return _log1mexp(np.asarray(x, dtype=np.float64))


#: Above this y, log(eʸ − 1) is computed as y + log1p(−e⁻ʸ) (np.expm1 would overflow at ~709).
_LOG_EXPM1_SWITCH = 30.0


def log_expm1(y: npt.ArrayLike) -> FloatArray:
    """log(eʸ − 1) for y ≥ 0, elementwise: −inf at 0, +inf at +inf, accurate for tiny and huge y."""
    y = np.asarray(y, dtype=np.float64)
    out = np.empty_like(y)
    big = y > _LOG_EXPM1_SWITCH
    with np.errstate(divide="ignore"):
        out[~big] = np.log(np.expm1(y[~big]))
        out[big] = y[big] + np.log1p(-np.exp(-y[big]))
    return out


def logsubexp(a: float, b: float) -> float:
    """log(eᵃ − eᵇ) for a ≥ b; −inf when a = b."""
    if b > a:
        raise ValueError(f"logsubexp needs a >= b, got a={a!r}, b={b!r}")
    if b == -math.inf:
        return a
    return a + log1mexp(b - a)


def log_binomial(n: int, k: FloatArray | int) -> FloatArray:
    """log C(n, k), vectorised over ``k`` (via ``scipy.special.gammaln``)."""
    from scipy.special import gammaln  # here: scipy.special costs 0.15 s to import (the CLI's cold start)

    kk = np.asarray(k, dtype=np.float64)
    return np.asarray(gammaln(n + 1.0) - gammaln(kk + 1.0) - gammaln(n - kk + 1.0), dtype=np.float64)


def log_sum_exp(values: npt.ArrayLike) -> float:
    """log Σ exp(vᵢ) = m + log Σ exp(vᵢ − m) with m = max vᵢ: −inf for an empty input or all −inf.

    Nearest-rounded, not certified: :func:`log_sum_exp_up` is the rounded-up variant and
    :func:`log_sum_exp_error` the error bound between them.
    """
    arr = np.asarray(values, dtype=np.float64)
    if arr.size == 0:
        return -math.inf
    m = float(np.max(arr))
    if m == -math.inf:
        return -math.inf
    if m == math.inf:
        return math.inf
    return m + math.log(float(np.sum(np.exp(arr - m))))


def log_sum_exp_error(n: int, value: float) -> float:
    """A bound on |:func:`log_sum_exp` − log Σ exp(vᵢ)| for n terms (finite or −inf) whose result is ``value``.

    With m = max vᵢ and S = Σ exp(vᵢ − m) ∈ [1, n]: vᵢ − m rounds once (absolute u·|vᵢ − m|, a relative
    factor e^{±u|vᵢ−m|} on its exponential) and exp adds 2u, so term i is off by at most
    e^{vᵢ−m}(u|vᵢ − m|·1.01 + 2.01u) ≤ (0.38 + 2.01·e^{vᵢ−m})u absolutely (x·e^{−x} ≤ 1/e; terms that
    underflow lose less than 2⁻¹⁰⁷⁴ each). Relative to S ≥ 1 that is (0.38n + 2.01)u, and the sum of n
    non-negative terms adds γ_{n−1} (Higham §4.2), so log S is off by at most (1.4n + 4)u for
    n < 2²⁰; log adds 2u·log n ≤ 2n·u and m + log S one rounding of the result (1.01u·|value|). In
    all ≤ (3.4n + 4)u + 1.01u·|value|, returned as ``(4n + 16)·u·(1 + |value|)`` rounded up.

    Args:
        n: the number of terms (n < 2²⁰).
        value: the computed log-sum-exp.
    """
    if n <= 0 or not math.isfinite(value):
        return 0.0
    return widen_up((4.0 * n + 16.0) * UNIT_ROUNDOFF * (1.0 + abs(value)), 8)


def log_sum_exp_up(values: npt.ArrayLike) -> float:
    """:func:`log_sum_exp` rounded up: never below the exact log Σ exp(vᵢ) of the given floats."""
    arr = np.asarray(values, dtype=np.float64)
    v = log_sum_exp(arr)
    return v + log_sum_exp_error(int(arr.size), v) if math.isfinite(v) else v


def log_sum_exp_down(values: npt.ArrayLike) -> float:
    """:func:`log_sum_exp` rounded down: never above the exact log Σ exp(vᵢ) of the given floats."""
    arr = np.asarray(values, dtype=np.float64)
    v = log_sum_exp(arr)
    return v - log_sum_exp_error(int(arr.size), v) if math.isfinite(v) else v


#: Block length of :func:`suffix_log_sum_exp` (its relative error is ≤ (block + #blocks + 8)·2u).
SUFFIX_BLOCK: int = 2048


def suffix_log_sum_exp(a: FloatArray) -> FloatArray:
    """out[j] = log Σ_{i ≥ j} exp(a[i]) for j = 0 … n, out[n] = −inf, in O(n).

    Blocks of :data:`SUFFIX_BLOCK` entries are summed with their own maximum as scale (never
    underflowing), and the running total of the later blocks is added in log space. For log weights
    (every a[i] ≤ 0, so |scale| ≤ |out[j]|) the log error of out[j] is at most
    :func:`suffix_log_sum_exp_error` (recursive summation of positive terms, Higham §4.2) plus the
    exp/log rounding, 8u·(1 + |out[j]|), which callers charge with the magnitudes of their results.
    """
    n = a.size
    out = np.full(n + 1, -math.inf)
    run = -math.inf
    with np.errstate(divide="ignore", invalid="ignore"):
        for start in range(((n - 1) // SUFFIX_BLOCK) * SUFFIX_BLOCK, -1, -SUFFIX_BLOCK):
            part = a[start : start + SUFFIX_BLOCK]
            local = _block_suffix(part)
            out[start : start + part.size] = np.logaddexp(local, run)
            run = float(out[start])
    return out


#: A block's suffix sums restart with a new scale once they drop this many nats below the current one.
_SUFFIX_RESCALE_NATS = 600.0


def _block_suffix(part: FloatArray) -> FloatArray:
    res = np.full(part.size, -math.inf)
    start = 0
    while start < part.size:
        sub = part[start:]
        m = float(np.max(sub))
        if m == -math.inf:
            break
        loc = np.log(np.cumsum(np.exp(sub - m)[::-1])[::-1]) + m
        res[start:] = loc
        far = np.flatnonzero(loc < m - _SUFFIX_RESCALE_NATS)
        if far.size == 0:
            break
        start += int(far[0])
    return res


def suffix_log_sum_exp_error(n: int) -> float:
    """Relative error bound of :func:`suffix_log_sum_exp` on n terms, as a log error (Higham §4.2)."""
    return (min(n, SUFFIX_BLOCK) + n / SUFFIX_BLOCK + 8.0) * UNIT_ROUNDOFF * 2.0


# ---------------------------------------------------------------------------------------------
# Cell masses from a law's log tail functions (the PLD grid's cells and the balls-in-bins factor cells).
# ---------------------------------------------------------------------------------------------


def log_theta(logv: FloatArray) -> FloatArray:
    """ln of the absolute error bound of exp(logv) when logv has error LAW_LOG_ERROR·max(1, |logv|)."""
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        err = LAW_LOG_ERROR * np.maximum(1.0, np.abs(logv))
        out = logv + np.log(np.expm1(err * ERROR_BOUND_MARGIN) * ERROR_BOUND_MARGIN)
    return np.where(np.isneginf(logv), -np.inf, out)


def _log1mexp(x: FloatArray) -> FloatArray:
    """ln(1 − eˣ) for x ≤ 0 (Mächler 2012); −inf at 0, nan above (NaN in, NaN out). Each branch is
    evaluated on its own entries only (the same values as evaluating both everywhere and choosing)."""
    near = x > -math.log(2.0)
    out = np.empty_like(x, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out[near] = np.log(-np.expm1(x[near]))
        far = ~near
        out[far] = np.log1p(-np.exp(x[far]))
    return out


def mag(x: FloatArray) -> FloatArray:
    """|x| where x is finite, 0 elsewhere (the magnitude a rounding slack of ln x scales with)."""
    return np.asarray(np.where(np.isfinite(x), np.abs(x), 0.0), dtype=np.float64)


def cell_log_masses(logcdf: FloatArray, logsf: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(ln m, ln m⁻, ln m⁺): the masses between consecutive edges and envelopes of them, in logs.

    A cell uses CDF differences when its upper edge lies below the median, SF differences otherwise,
    so every difference is of two numbers of the small side (relative accuracy in both tails); the
    envelope is m ± (θ_left + θ_right + 8u·m), θ the error of the tail value at an edge.
    """
    use_cdf = (logcdf <= logsf)[1:]
    # each cell's own side only: the larger edge value `own` (upper edge's CDF, lower edge's SF) and the
    # other edge's (the same float operations per cell as computing both sides and choosing)
    own = np.where(use_cdf, logcdf[1:], logsf[:-1])
    other = np.where(use_cdf, logcdf[:-1], logsf[1:])
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        lm = own + _log1mexp(np.minimum(other - own, 0.0))
    lm = np.where(np.isneginf(own) | np.isnan(lm), -np.inf, lm)
    with np.errstate(invalid="ignore"):
        lerr = np.logaddexp(log_theta(own), log_theta(other))  # logaddexp is symmetric bit for bit
        lerr = np.logaddexp(lerr, lm + math.log(rounding_error(8))) + rounding_error(8, 1 + mag(lerr))
        hi = np.logaddexp(lm, lerr) + rounding_error(4, 1 + mag(lm) + mag(lerr))
        lo = lm + _log1mexp(np.minimum(lerr - lm, 0.0)) - rounding_error(4, 1 + mag(lm))
    lo = np.where((lerr >= lm) | np.isnan(lo), -np.inf, lo)
    return lm, lo, np.where(np.isnan(hi), np.inf, hi)


__all__ = [
    "SUFFIX_BLOCK",
    "cell_log_masses",
    "dot_error_bound",
    "fft_error_bound",
    "gamma",
    "log1mexp",
    "log1mexp_array",
    "log_binomial",
    "log_expm1",
    "log_sum_exp",
    "log_sum_exp_down",
    "log_sum_exp_error",
    "log_sum_exp_up",
    "log_theta",
    "logsubexp",
    "mag",
    "next_down",
    "next_up",
    "rounding_error",
    "suffix_log_sum_exp",
    "suffix_log_sum_exp_error",
    "sum_error_bound",
    "widen_down",
    "widen_up",
]

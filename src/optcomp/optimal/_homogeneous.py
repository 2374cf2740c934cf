"""k copies of one (ε, δ) pair at any k: exact binomial tails in log space (KOV Thm III.3; MV Thm 1.4).

The loss of the k-fold canonical mechanism is t_ℓ = (2ℓ − k)ε with P-weight
w_ℓ = C(k, ℓ) p^ℓ (1 − p)^{k−ℓ}, p = e^ε/(1 + e^ε). Only the ℓ with t_ℓ > 0 enter D, and only a window
of them matters:

* the window is [μ − h, μ + h] ∩ (k/2, k] with μ = kp and h = √(k(|ln r| + 60)/2) (Hoeffding: the mass
  outside is < r·e⁻⁶⁰); below 2²¹ terms the whole range is used;
* the mass *outside* the window is bounded in closed form (the ratio w_{ℓ+1}/w_ℓ = (k − ℓ)e^ε/(ℓ + 1)
  decreases in ℓ, so each tail is below a geometric series from its edge term) and put on the +∞ atom
  of the upper envelope (dropped from the lower one);
* log w_ℓ is anchored at the mode ℓ* by mpmath (60 digits) and continued by a blocked cumulative sum of
  the exact log-ratios log1p((k − 2ℓ − 1)/(ℓ + 1)) + ε; its absolute error η (per-term rounding plus the
  summation bound (B + n/B + 2)·u·Σ|ratios|) widens the two envelopes as e^{±η}.

Cost O(√(k·ln(1/r))) — 4·10⁵ terms at k = 10⁹, δ = 1e-6 — independent of k otherwise; more than
``MAX_TERMS`` terms is refused with a ValueError (k ≳ 10¹¹ at δ ≈ 1e-6).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np

from optcomp._numerics import GENEROUS_RELATIVE_SLACK, SMALLEST_SUBNORMAL
from optcomp._rounding import next_down, next_up, rounding_error
from optcomp.optimal._solve import Weights

#: Below this many terms with t_ℓ > 0 the whole range is summed (no window).
FULL_RANGE_TERMS = 2**15
#: Largest window (number of binomial terms) built; beyond it the query is refused with a ValueError.
MAX_TERMS = 2**22
#: Extra depth (nats) of the window beyond |ln r|.
_DEPTH_MARGIN = 60.0
#: Depth used when no target r is known (δ queries): covers every r ≥ 2⁻¹⁰⁷⁴.
DEFAULT_DEPTH = 745.0 + _DEPTH_MARGIN
_BLOCK = 1024
_FLOAT_MAX = float(np.finfo(np.float64).max)
_TINY = SMALLEST_SUBNORMAL


def _blocked_cumsum(x: np.ndarray) -> np.ndarray:
    """Inclusive cumulative sum in blocks (error ≤ (B + n/B + 2)·u·Σ|x|)."""
    n = x.size
    if n == 0:
        return x.copy()
    pad = (-n) % _BLOCK
    xb = np.concatenate([x, np.zeros(pad)]).reshape(-1, _BLOCK)
    inner = np.cumsum(xb, axis=1)
    offs = np.concatenate([[0.0], np.cumsum(inner[:, -1])[:-1]])
    return np.asarray((inner + offs[:, None]).ravel()[:n], dtype=np.float64)


def homogeneous_weights(eps: float, k: int, depth: float = DEFAULT_DEPTH) -> tuple[Weights, Weights]:
    """Upper and lower envelopes of the loss law of k canonical (ε, 0) mechanisms (module docstring).

    ``depth`` ≈ |ln r| of the query: the window keeps every term whose removal could matter at that r.
    """
    lmin = k // 2 + 1
    if lmin > k:
        return Weights(np.zeros(0), np.zeros(0), 0.0), Weights(np.zeros(0), np.zeros(0), 0.0)
    log_p = -float(np.logaddexp(0.0, -eps))  # log p
    log_q = -float(np.logaddexp(0.0, eps))  # log(1 − p)
    p = math.exp(log_p)
    mu = k * p
    if k - lmin + 1 <= FULL_RANGE_TERMS:
        l0, l1 = lmin, k
    else:
        h = math.sqrt(k * (max(depth, 0.0) + _DEPTH_MARGIN) / 2.0) + 2.0
        l0 = max(lmin, math.floor(mu - h))
        l1 = min(k, math.ceil(mu + h))
    n = l1 - l0 + 1
    if n > MAX_TERMS:
        raise ValueError(
            f"k={k} copies of epsilon={eps!r} need a window of {n} binomial terms (more than {MAX_TERMS}); "
            "use a larger target delta or fewer copies"
        )
    mode = min(max(math.floor((k + 1) * p), l0), l1)
    with mpmath.workdps(60):
        anchor = float(
            mpmath.loggamma(k + 1)
            - mpmath.loggamma(mode + 1)
            - mpmath.loggamma(k - mode + 1)
            + mode * mpmath.mpf(log_p)
            + (k - mode) * mpmath.mpf(log_q)
        )
    # The floats log_p, log_q differ from the exact logs by ≤ 2u each (logaddexp): an error
    # ≤ 2u·(mode·|log p| + (k − mode)|log q|) in the anchor, plus its rounding to float64.
    eta = rounding_error(2.0, mode * abs(log_p) + (k - mode) * abs(log_q)) + rounding_error(2.0, abs(anchor))
    ells = np.arange(l0, l1, dtype=np.float64)  # ratio w_{ℓ+1}/w_ℓ for ℓ in [l0, l1)
    lr = np.log1p((k - 2.0 * ells - 1.0) / (ells + 1.0))
    rho = lr + eps
    eta += rounding_error(4.0, float(np.sum(np.abs(lr) + eps))) if rho.size else 0.0
    logw = np.empty(n)
    i = mode - l0
    logw[i] = anchor
    if i + 1 < n:
        up = rho[i:]
        logw[i + 1 :] = anchor + _blocked_cumsum(up)
        eta_up = rounding_error(_BLOCK + up.size / _BLOCK + 4.0, float(np.sum(np.abs(up))))
    else:
        eta_up = 0.0
    if i > 0:
        down = rho[:i][::-1]
        logw[:i] = (anchor - _blocked_cumsum(down))[::-1]
        eta_dn = rounding_error(_BLOCK + down.size / _BLOCK + 4.0, float(np.sum(np.abs(down))))
    else:
        eta_dn = 0.0
    eta += max(eta_up, eta_dn) + rounding_error(4.0, abs(anchor) + 1.0)
    ell = np.arange(l0, l1 + 1, dtype=np.float64)
    with np.errstate(over="ignore"):
        t = (2.0 * ell - k) * eps
    t_up = next_up(t)
    t_dn = next_down(np.minimum(t, _FLOAT_MAX))
    # Mass outside the window (upper envelope: moved to +∞), bounded by geometric series.
    outside = n * _TINY
    if l1 < k:
        q = math.exp(math.log((k - l1) / (l1 + 1.0)) + eps)
        outside += math.exp(float(logw[-1]) + eta) * q / (1.0 - q) * (1.0 + GENEROUS_RELATIVE_SLACK) if q < 1.0 else 1.0
    if l0 > lmin:
        q = math.exp(math.log(l0 / (k - l0 + 1.0)) - eps)
        outside += math.exp(float(logw[0]) + eta) * q / (1.0 - q) * (1.0 + GENEROUS_RELATIVE_SLACK) if q < 1.0 else 1.0
    upper = Weights(t_up, logw + eta, min(1.0, outside))
    lower = Weights(t_dn, logw - eta, 0.0)
    return upper, lower

"""One envelope of the privacy-loss law → δ(ε_g) and ε(δ_g) by exact piecewise inversion.

An envelope is a list of weights w_y ≥ 0 (as logs) at losses t_y > 0, ascending, plus a mass at +∞.
For every engine the *upper* envelope has weights ≥ the true ones at losses ≥ the true ones (or is the
law of a dominating pair), the *lower* one the reverse (or a dominated pair). D(ε_g) = inf_mass +
Σ_{t_y > ε_g} w_y (1 − e^{ε_g − t_y}) is increasing in every weight and every loss, so the two envelopes
give certified ends.

Between knots D(ε_g) = inf_mass + A_j − e^{ε_g} B_j (A_j = Σ_{y ≥ j} w_y, B_j = Σ_{y ≥ j} w_y e^{−t_y}),
so ε(r) = ln(inf_mass + A_j − r) − ln B_j on the piece where D crosses r (MV Thm 1.5; KOV Thm III.3).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from optcomp._numerics import Bound, FloatArray, round_down, round_up
from optcomp._rounding import log1mexp_array, rounding_error
from optcomp._rounding import log_sum_exp as logsumexp
from optcomp._rounding import suffix_log_sum_exp as suffix_logsumexp
from optcomp._rounding import suffix_log_sum_exp_error as suffix_error
from optcomp.optimal._spec import Target

_LN2 = math.log(2.0)
_FLOAT_MAX = float(np.finfo(np.float64).max)


class Weights(NamedTuple):
    """Weights w_y ≥ 0 (as logs) at losses t_y > 0 (ascending), plus mass at +∞ (always in the tail)."""

    loss: FloatArray
    logw: FloatArray
    inf_mass: float


EMPTY = Weights(np.zeros(0), np.zeros(0), 0.0)


def log1mexp_vec(x: FloatArray) -> FloatArray:
    """log(1 − eˣ) with x clipped to ≤ 0 (x > 0 only arises from rounding at equal sides)."""
    return log1mexp_array(np.minimum(x, 0.0))


def log1mexp_scalar(x: float) -> float:
    """log(1 − eˣ), −inf for x ≥ 0."""
    if not x < 0.0:
        return -math.inf
    return math.log(-math.expm1(x)) if x > -_LN2 else math.log1p(-math.exp(x))


def log_tail(w: Weights, eps_g: float) -> float:
    """log D(ε_g) = log(inf_mass + Σ_{t_y > ε_g} w_y (1 − e^{ε_g − t_y}))."""
    j = int(np.searchsorted(w.loss, eps_g, side="right"))
    with np.errstate(invalid="ignore"):
        terms = w.logw[j:] + log1mexp_vec(eps_g - w.loss[j:])
    terms = terms[~np.isnan(terms)]
    log_inf = math.log(w.inf_mass) if w.inf_mass > 0 else -math.inf
    return float(np.logaddexp(log_inf, logsumexp(terms)))


def root(w: Weights, log_r: float) -> tuple[float, float]:
    """Least ε_g ≥ 0 with D(ε_g) ≤ r (exact piecewise closed form) and an absolute error bound for it.

    The error bound covers the evaluation of the formula (cancellation in A_j − r, the logs, the suffix
    sums' relative error); the weights' own errors are the caller's envelopes.
    """
    log_inf = math.log(w.inf_mass) if w.inf_mass > 0 else -math.inf
    if (
        log_inf > log_r
        or log_r == -math.inf
        and (log_inf > -math.inf or w.loss.size and w.loss[-1] == math.inf)
    ):
        return (math.inf, 0.0)
    n = w.loss.size
    if n == 0:
        return (0.0, 0.0)
    if log_r == -math.inf:
        return (float(w.loss[-1]), 0.0)
    finite = np.isfinite(w.loss)
    if not finite.all():
        # losses at +∞ (overflowed) belong to inf_mass
        extra = logsumexp(w.logw[~finite])
        w = Weights(w.loss[finite], w.logw[finite], float(np.exp(np.logaddexp(log_inf, extra))))
        return root(w, log_r)
    log_a = np.logaddexp(log_inf, suffix_logsumexp(w.logw))
    log_b = suffix_logsumexp(w.logw - w.loss)
    d0 = float(log_a[0]) + log1mexp_scalar(float(log_b[0] - log_a[0])) if log_a[0] > -math.inf else -math.inf
    if d0 <= log_r:
        return (0.0, 0.0)
    knot_b = w.loss + log_b[1:]
    with np.errstate(invalid="ignore"):
        log_d = log_a[1:] + log1mexp_vec(np.minimum(knot_b - log_a[1:], 0.0))
    log_d = np.where(log_a[1:] == -math.inf, -math.inf, log_d)
    m = int(np.argmax(log_d <= log_r))  # log_d[n-1] = log inf_mass <= log_r, so m exists
    la, lb = float(log_a[m]), float(log_b[m])
    diff = la + log1mexp_scalar(log_r - la) if la > log_r else -math.inf
    lo = float(w.loss[m - 1]) if m > 0 else 0.0
    hi = float(w.loss[m])
    if diff == -math.inf:
        eps = hi
        cond = 1.0
    else:
        eps = min(max(diff - lb, lo), hi)
        cond = 1.0 / max(-math.expm1(log_r - la), rounding_error(1))
    err = rounding_error(8.0, abs(la) + abs(lb) + abs(eps) + 4.0) + 2.0 * cond * suffix_error(n)
    return (eps, err)


def epsilon_from_envelopes(upper: Weights, lower: Weights, target: Target) -> Bound:
    """Certified ε bracket from an upper and a lower envelope and the certified bracket of log r."""
    if target.kind == "below":
        return Bound(math.inf, math.inf)
    if target.kind == "ambiguous":
        hi = math.inf
    else:
        eps_hi, err_hi = root(upper, target.log_lo)
        hi = round_up(eps_hi + err_hi) if math.isfinite(eps_hi) else math.inf
        if eps_hi == 0.0:
            hi = 0.0
    eps_lo, err_lo = root(lower, target.log_hi)
    if math.isfinite(eps_lo):
        lo = max(0.0, round_down(eps_lo - err_lo)) if eps_lo > 0.0 else 0.0
        lo = min(lo, _FLOAT_MAX)
    else:
        lo = _FLOAT_MAX if lower.loss.size and lower.loss[-1] >= _FLOAT_MAX else math.inf
    return Bound(min(lo, hi), hi)


def delta_from_envelopes(
    upper: Weights, lower: Weights, eps_g: float, log_survive: tuple[float, float, float]
) -> Bound:
    """δ_g = 1 − S(1 − D(ε_g)), S = Π(1 − δ_i), with D and log S bracketed."""
    _, ls_lo, ls_hi = log_survive
    if ls_hi == -math.inf:
        return Bound(1.0, 1.0)

    def delta_of(log_d: float, ls: float) -> float:
        d = math.exp(log_d)
        if d >= 1.0:
            return 1.0
        return -math.expm1(ls + math.log1p(-d))

    slack_up = rounding_error(8.0, math.log2(upper.loss.size + 2.0) + 4.0) + rounding_error(8.0)
    slack_lo = rounding_error(8.0, math.log2(lower.loss.size + 2.0) + 4.0) + rounding_error(8.0)
    hi = min(1.0, round_up(delta_of(log_tail(upper, eps_g) + slack_up, ls_lo)))
    lo = max(0.0, round_down(delta_of(log_tail(lower, eps_g) - slack_lo, ls_hi)))
    return Bound(min(lo, hi), hi)

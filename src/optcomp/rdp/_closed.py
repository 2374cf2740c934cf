"""The closed-form conversion of a Rényi curve to (ε, δ), rounded outward: an upper bound only.

Canonne–Kamath–Steinke 2020 ("The discrete Gaussian for differential privacy"), Prop. 12, equal to
Balle et al. 2020 ("Hypothesis testing interpretations and Rényi differential privacy"), Thm 21: a law
with D_α(P‖Q) ≤ r is (ε, δ)-DP with

    δ = exp((α − 1)(r − ε)) · (1 − 1/α)^{α−1} / α,   equivalently   ε = r + log(1 − 1/α) − log(δα)/(α − 1),

for every α > 1; the conversion takes the best α. Any α gives a valid bound, so the minimisation only
decides tightness; the value at the chosen α is rounded up (each term's rounding counted).

* Finite curves: the minimum over the stated orders (:meth:`optcomp.rdp.RdpCurve.delta`/``epsilon``).
* zCDP (r = αρ at every α > 1): the minimum over *every* α > 1, found to within float precision of the
  argmin (bounded scalar minimisation of the smooth exponent in log(α − 1)), which the tests compare with
  a 50-digit mpmath minimisation (≤ 1e-9 relative).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from scipy.optimize import minimize_scalar

from optcomp._rounding import next_up, rounding_error, widen_up
from optcomp.rdp._curves import RdpCurve
from optcomp.rdp._stated import StatedCurve

#: log(α − 1) searched over [−this, +this] for the zCDP minimum (α from 1 + e^{−40} to 1 + e^{40}).
_LOG_ORDER_SPAN = 40.0
#: Absolute tolerance on log(α − 1) of that search: the value is quadratic in the error at the minimum.
_LOG_ORDER_XTOL = 1e-9
#: Roundings charged per term of the exponent (a product, a log1p or log, a division: ≤ 4, doubled).
_TERM_UNITS = 8


def _zcdp_log_delta(rho: float, epsilon: float, alpha: float) -> tuple[float, float]:
    """log δ(α) = (α − 1)(αρ − ε) + (α − 1)·log(1 − 1/α) − log α and a bound on its rounding error."""
    t1 = (alpha - 1.0) * (alpha * rho - epsilon)
    t2 = (alpha - 1.0) * math.log1p(-1.0 / alpha)
    t3 = math.log(alpha)
    err = rounding_error(_TERM_UNITS, abs(t1) + abs(t2) + abs(t3) + abs(alpha * rho) * abs(alpha - 1.0))
    return t1 + t2 - t3, err


def _zcdp_epsilon_at(rho: float, delta: float, alpha: float) -> tuple[float, float]:
    """ε(α) = αρ + log(1 − 1/α) − (log δ + log α)/(α − 1) and a bound on its rounding error."""
    t1 = alpha * rho
    t2 = math.log1p(-1.0 / alpha)
    t3 = (math.log(delta) + math.log(alpha)) / (alpha - 1.0)
    return t1 + t2 - t3, rounding_error(_TERM_UNITS, abs(t1) + abs(t2) + abs(t3))


def _best_alpha(objective: Callable[[float], float]) -> float:
    """The α > 1 minimising ``objective(α)`` (a smooth function of log(α − 1) with one minimum)."""
    res = minimize_scalar(lambda t: objective(1.0 + math.exp(t)), bounds=(-_LOG_ORDER_SPAN, _LOG_ORDER_SPAN),
                          method="bounded", options={"xatol": _LOG_ORDER_XTOL})
    return 1.0 + math.exp(float(res.x))


def closed_form_delta(curve: StatedCurve, epsilon: float) -> tuple[float, float]:
    """(δ upper bound, the order α it was read at) of the CKS/Balle conversion at ``epsilon`` ≥ 0."""
    if curve.rho is not None:
        rho = curve.rho
        if rho == 0.0:
            return 0.0, math.inf
        alpha = _best_alpha(lambda a: _zcdp_log_delta(rho, epsilon, a)[0])
        value, err = _zcdp_log_delta(rho, epsilon, alpha)
        up = min(value + err, 0.0)  # δ ≤ 1 always
        return min(1.0, max(widen_up(math.exp(up), 4), math.ulp(0.0))), alpha
    assert curve.orders is not None and curve.values is not None
    res = RdpCurve(curve.orders, curve.values).delta(epsilon, conversion="improved")
    return res.value, res.order


def closed_form_epsilon(curve: StatedCurve, delta: float) -> tuple[float, float]:
    """(ε upper bound, the order α it was read at) of the CKS/Balle conversion at ``delta`` in (0, 1)."""
    if curve.rho is not None:
        rho = curve.rho
        if rho == 0.0:
            return 0.0, math.inf
        alpha = _best_alpha(lambda a: _zcdp_epsilon_at(rho, delta, a)[0])
        value, err = _zcdp_epsilon_at(rho, delta, alpha)
        return max(0.0, next_up(value + err)), alpha
    assert curve.orders is not None and curve.values is not None
    res = RdpCurve(curve.orders, curve.values).epsilon(delta, conversion="improved")
    return res.value, res.order

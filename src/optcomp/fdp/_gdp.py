"""Gaussian differential privacy in closed form (Dong, Roth & Su, "Gaussian Differential Privacy").

μ-GDP means the trade-off function G_μ(α) = Φ(Φ⁻¹(1−α) − μ) = T(N(0,1), N(μ,1)) (DRS Def. 2.6,
§2.2). This module holds the exact scalar/vectorised formulas around it:

* :func:`gdp_delta` — the dual (ε, δ(ε)) curve, DRS Corollary "GDP to DP" (§2.4):
  δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2), computed in log space without cancellation and rounded
  up (never below the exact value; ``gdp_delta_bound`` is the one home of the directed bracket);
* :func:`gdp_epsilon` — its inverse in ε (a root, rounded to the safe, larger side);
* :func:`gdp_mu_for` — the largest μ whose δ(ε) meets a target (rounded to the safe, smaller side);
* :func:`gdp_compose` (DRS Cor. 3.3: μ = √Σμ_i²) and :func:`gdp_group` (DRS Thm 2.14: kμ).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import overload

import numpy as np
import numpy.typing as npt
from scipy.optimize import brentq
from scipy.special import erfcx, log_ndtr

from optcomp._inverse import float_boundary, solve
from optcomp._numerics import (
    EPSILON_XTOL,
    GDP_LOG_ERROR_PER_UNIT,
    SMALLEST_NORMAL,
    FloatArray,
    check_int,
    check_nonnegative,
    check_open_probability,
    round_up,
)
from optcomp._rounding import log1mexp_array, next_down, next_up

_SQRT2: float = math.sqrt(2.0)

#: |a| beyond which a² overflows (then δ_μ(ε) ≤ Φ(a) underflows every double).
_A_FAR: float = 1e150
#: The smallest positive double (the upper end of a δ that is positive but below every double).
_TINY: float = math.ulp(0.0)

#: Relative error of exp on a log value, and of the product by (1 ± it): a few ulps.
_EXP_SLACK: float = 4.0 * float(np.finfo(np.float64).eps)

#: :func:`gdp_mu_for` searches μ over [2⁻¹¹⁰⁰, 2¹¹⁰⁰] ∩ the positive doubles (every μ* a double can hold).
_MU_SPAN: int = 1100

#: Relative tolerance handed to ``brentq`` (the smallest it accepts, 4 machine epsilons).
_BRENT_RTOL: float = 4.0 * float(np.finfo(np.float64).eps)

__all__ = ["gdp_compose", "gdp_delta", "gdp_epsilon", "gdp_group", "gdp_log_delta", "gdp_mu_for"]


def _check_array(name: str, values: npt.ArrayLike, *, lower: float, upper: float) -> FloatArray:
    """``values`` as a float array with every entry in [lower, upper] (NaN rejected), else ValueError."""
    arr = np.asarray(values, dtype=np.float64)
    bad = np.isnan(arr) | (arr < lower) | (arr > upper)
    if np.any(bad):
        raise ValueError(f"{name} must be in [{lower}, {upper}], got {float(arr[bad].flat[0])!r}")
    return arr


def gdp_log_delta_estimate(mu: float, eps: FloatArray) -> FloatArray:
    """log δ_μ(ε) for μ > 0 and finite ε ≥ 0, **not certified** (no input checks, no error bar added:
    :func:`gdp_log_delta` is the certified one); for vectorised searches that certify their answer
    afterwards (the planner's μ search). See :func:`_log_delta_with_error`."""
    return _log_delta_with_error(mu, eps)[0]


def _log_delta_with_error(mu: float, eps: FloatArray) -> tuple[FloatArray, FloatArray]:
    """log δ_μ(ε) for μ > 0 and finite ε ≥ 0, and a bound on its absolute error.

    Two exact rewritings of δ = Φ(a) − e^ε Φ(b), a = −ε/μ + μ/2, b = a − μ, chosen per entry:

    * a ≥ 0: log(e^{la} − e^{lb}) with la = log Φ(a) ≥ log ½ and lb = ε + log Φ(b) (no large logs);
    * a < 0: since e^ε φ(b) = φ(a) (b² = a² + 2ε), δ = ½ e^{−a²/2} [erfcx(−a/√2) − erfcx(−b/√2)]; the
      difference of two scaled complementary error functions keeps full relative accuracy in the far
      tail where both Φ values underflow or their logs are large.

    Both subtract nearly equal numbers when μ is small: the error is amplified by the cancellation
    factor κ = (|x| + |y|)/|x − y| of the subtraction (κ ≈ |a|/μ in the tail, e.g. 3·10⁴ at μ = 10⁻³,
    ε = 0.04, where the relative error reaches 4·10⁻¹²). The returned bound is
    8u(κ + |a|² + |log δ| + 8), assuming ``log_ndtr``/``erfcx`` accurate to a few ulps.
    """
    a = -eps / mu + mu / 2.0
    b = a - mu
    out = np.empty_like(eps)
    kappa = np.ones_like(eps)
    pos = a >= 0.0
    if np.any(pos):
        la = log_ndtr(a[pos])
        lb = eps[pos] + log_ndtr(b[pos])
        # δ ≥ 0 always; guard the last ulp so that log1mexp sees a non-positive argument.
        d = np.minimum(lb - la, 0.0)
        out[pos] = la + log1mexp_array(d)
        with np.errstate(divide="ignore", invalid="ignore"):
            kappa[pos] = (np.abs(la) + np.abs(lb)) / np.abs(d)
    neg = ~pos
    if np.any(neg):
        an, bn = a[neg], b[neg]
        ea, eb = erfcx(-an / _SQRT2), erfcx(-bn / _SQRT2)
        diff = ea - eb
        with np.errstate(divide="ignore", invalid="ignore"):
            out[neg] = -0.5 * an * an - math.log(2.0) + np.log(np.maximum(diff, 0.0))
            kappa[neg] = (ea + eb) / diff
    kappa = np.where(np.isnan(kappa) | (kappa < 0), np.inf, kappa)
    err = GDP_LOG_ERROR_PER_UNIT * (kappa + a * a + np.abs(out) + 8.0)
    return out, err


def _far(mu: float, eps: FloatArray) -> npt.NDArray[np.bool_]:
    """Where a = −ε/μ + μ/2 < −_A_FAR: a² overflows, and δ ≤ Φ(a) < φ(a)/|a| is below every double."""
    return np.asarray(-eps / mu + mu / 2.0 < -_A_FAR, dtype=np.bool_)


def _log_delta_upper(mu: float, eps: FloatArray) -> FloatArray:
    """A certified upper bound on log δ_μ(ε) (the estimate plus its error bound), μ > 0, finite ε ≥ 0;
    −(largest double) where log δ < −a²/2 is below every double (still above the truth there)."""
    far = _far(mu, eps)
    out = np.full(eps.shape, -float(np.finfo(np.float64).max))
    if np.any(~far):
        log_d, err = _log_delta_with_error(mu, eps[~far])
        out[~far] = np.where(np.isfinite(err), log_d + err, 0.0)  # unknown error: the trivial log δ ≤ 0
    return np.asarray(np.minimum(out, 0.0), dtype=np.float64)


def _delta_bracket(mu: float, eps: FloatArray) -> tuple[FloatArray, FloatArray]:
    """(lower, upper) of δ_μ(ε) on validated arrays (μ ≥ 0, ε ∈ [0, ∞]): the one home of the directed
    closed form. Each end is exp of log δ ∓ its error bound, rounded to its safe side; the upper end is
    at least the smallest positive double wherever δ > 0 (δ_μ(ε) > 0 for every μ > 0 and finite ε), so
    it never falls below the truth by underflow."""
    lo = np.zeros(eps.shape)
    hi = np.zeros(eps.shape)
    if mu == 0.0:
        return lo, hi
    far = np.isfinite(eps) & _far(mu, eps)
    hi[far] = _TINY  # 0 < δ < φ(a)/|a| < the smallest double
    fin = np.isfinite(eps) & ~far
    if np.any(fin):
        log_d, err = _log_delta_with_error(mu, eps[fin])
        ok = np.isfinite(err)
        with np.errstate(under="ignore"):
            lo_v = np.where(ok, np.exp(log_d - np.where(ok, err, 0.0)), 0.0) * (1.0 - _EXP_SLACK)
            hi_v = np.exp(np.where(ok, np.minimum(log_d + np.where(ok, err, 0.0), 0.0), 0.0)) * (1.0 + _EXP_SLACK)
        lo[fin] = np.maximum(next_down(lo_v), 0.0)
        hi[fin] = np.minimum(next_up(hi_v), 1.0)
    return lo, hi


@overload
def gdp_log_delta(mu: float, epsilon: float) -> float: ...
@overload
def gdp_log_delta(mu: float, epsilon: npt.ArrayLike) -> float | FloatArray: ...
def gdp_log_delta(mu: float, epsilon: npt.ArrayLike) -> float | FloatArray:
    """log δ(ε) of μ-GDP, never below the exact value, accurate far below the underflow of δ itself.

    Computes log[Φ(a) − e^ε Φ(b)], a = −ε/μ + μ/2, b = −ε/μ − μ/2 (DRS Cor. "GDP to DP", §2.4):
    where a ≥ 0 as ``la + log1mexp(lb − la)`` with ``la = log_ndtr(a)``, ``lb = ε + log_ndtr(b)``; where
    a < 0 as −a²/2 − log 2 + log[erfcx(−a/√2) − erfcx(−b/√2)] (the same quantity, since e^ε φ(b) = φ(a);
    no Φ value underflows and no large logs cancel). The float evaluation error is bounded by
    8u(κ + a² + |log δ| + 8), κ the cancellation factor of the one subtraction (κ ≈ 1 for μ ≳ 1, ≈ |a|/μ
    in the tail of small μ: 3·10⁴ at μ = 10⁻³, ε = 0.04); the returned value is the estimate *plus* that
    bound, so it is a certified upper bound on log δ whose excess is at most twice the bound (≈ 10⁻¹⁴
    absolute for μ ≳ 0.1; tested against 50-digit mpmath on μ ∈ [10⁻³, 50], ε ∈ [0, 200]).

    Args:
        mu: the GDP parameter μ ≥ 0 (μ = 0 gives δ = 0, log δ = −inf for ε ≥ 0).
        epsilon: ε ≥ 0, scalar or array (``inf`` allowed: δ(∞) = 0).

    Returns:
        log δ(ε) rounded up, with the shape of ``epsilon`` (a float for a scalar).
    """
    m = check_nonnegative("mu", mu)
    eps = _check_array("epsilon", epsilon, lower=0.0, upper=math.inf)
    flat = np.atleast_1d(eps).astype(np.float64)
    out = np.full(flat.shape, -math.inf)
    if m > 0:
        fin = np.isfinite(flat)
        out[fin] = _log_delta_upper(m, flat[fin])
    if np.ndim(eps) == 0:
        return float(out[0])
    return out.reshape(eps.shape)


def gdp_delta_bound(mu: float, epsilon: float) -> tuple[float, float]:
    """(lower, upper) of δ_μ(ε), each end certified (see :func:`_delta_bracket`)."""
    m = check_nonnegative("mu", mu)
    e = check_nonnegative("epsilon", epsilon, allow_inf=True)
    lo, hi = _delta_bracket(m, np.array([e]))
    return (float(lo[0]), float(hi[0]))


@overload
def gdp_delta(mu: float, epsilon: float) -> float: ...
@overload
def gdp_delta(mu: float, epsilon: npt.ArrayLike) -> float | FloatArray: ...
def gdp_delta(mu: float, epsilon: npt.ArrayLike) -> float | FloatArray:
    """δ(ε) of μ-GDP rounded up: μ-GDP ⇔ (ε, δ(ε))-DP for all ε ≥ 0 (DRS Cor. "GDP to DP", §2.4).

    δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2), evaluated without cancellation (:func:`gdp_log_delta`)
    and returned *directed*: never below the exact value (so (ε, gdp_delta(μ, ε)) is always a valid
    guarantee), and above it by at most the stated error of :func:`gdp_log_delta` (a relative ≈ 10⁻¹⁴
    for μ ≳ 0.1, growing with the cancellation factor for small μ — 50-digit mpmath tests on
    μ ∈ [10⁻³, 50], ε ∈ [0, 200], including the cancelling corner). Where δ is below the smallest
    double the answer is that smallest double (5e-324), not 0: use :func:`gdp_log_delta` there.
    ``gdp_delta_bound`` (private) gives both ends.

    Args:
        mu: μ ≥ 0.
        epsilon: ε ≥ 0 (scalar or array; ``inf`` gives 0).

    Returns:
        the upper end of δ(ε), shaped like ``epsilon``.
    """
    m = check_nonnegative("mu", mu)
    eps = _check_array("epsilon", epsilon, lower=0.0, upper=math.inf)
    flat = np.atleast_1d(eps).astype(np.float64).ravel()
    hi = _delta_bracket(m, flat)[1]
    if np.ndim(eps) == 0:
        return float(hi[0])
    return hi.reshape(eps.shape)


def _epsilon_scalar(mu: float, delta: float) -> float:
    if delta >= 1.0 or mu == 0.0:
        return 0.0
    if delta == 0.0:
        return math.inf
    log_target = math.log(delta)
    if _log_delta_upper(mu, np.array([0.0]))[0] <= log_target:
        return 0.0

    def g(e: float) -> float:  # on the certified upper end: g(ε) ≤ 0 ⇒ δ_μ(ε) ≤ δ
        return float(_log_delta_upper(mu, np.array([e]))[0]) - log_target

    start = max(1.0, mu * mu)  # doubled until it passes (g(0) > 0 was checked above)
    found = float_boundary(lambda e: g(e) <= 0.0, name="epsilon", passing_above=True, fail=0.0, start=start,
                           first_gap=start, xtol=math.inf)
    hi = math.inf if found.passing is None else found.passing
    root = float(brentq(g, 0.0, hi, xtol=EPSILON_XTOL, rtol=_BRENT_RTOL))
    # brentq returns a point within xtol of the root; step to the safe side (δ(ε) ≤ target).
    up = round_up(root + EPSILON_XTOL)
    return up if g(up) <= 0.0 else round_up(root + 2.0 * EPSILON_XTOL + abs(root) * _BRENT_RTOL)


@overload
def gdp_epsilon(mu: float, delta: float) -> float: ...
@overload
def gdp_epsilon(mu: float, delta: npt.ArrayLike) -> float | FloatArray: ...
def gdp_epsilon(mu: float, delta: npt.ArrayLike) -> float | FloatArray:
    """The smallest ε with δ_μ(ε) ≤ δ, i.e. μ-GDP ⇒ (ε, δ)-DP (inverse of :func:`gdp_delta`).

    δ_μ(ε) is strictly decreasing in ε, so the root is unique; it is found by Brent's method on
    log δ_μ(ε) − log δ and then moved up by the solver tolerance ``EPSILON_XTOL`` so that the returned ε
    is on the safe side (δ_μ(returned ε) ≤ δ, checked). ε = 0 when δ ≥ δ_μ(0) = 2Φ(μ/2) − 1, and
    ε = inf when δ = 0.

    Args:
        mu: μ ≥ 0.
        delta: δ in [0, 1] (scalar or array).

    Returns:
        ε shaped like ``delta``; within ``EPSILON_XTOL`` of the exact root and never below it.
    """
    m = check_nonnegative("mu", mu)
    d = _check_array("delta", delta, lower=0.0, upper=1.0)
    flat = np.atleast_1d(d).astype(np.float64)
    out = np.array([_epsilon_scalar(m, float(x)) for x in flat.ravel()], dtype=np.float64)
    if np.ndim(d) == 0:
        return float(out[0])
    return out.reshape(d.shape)


def gdp_mu_for(epsilon: float, delta: float) -> float:
    """The largest μ such that μ-GDP implies (ε, δ)-DP (DRS Cor. "GDP to DP", §2.4).

    δ_μ(ε) is increasing in μ, so {μ : δ_μ(ε) ≤ δ} = [0, μ*]. μ* is found by the one inverse solver
    (:func:`optcomp._inverse.solve`, increasing direction, secant in (ln μ, ln δ)) on the certified
    upper end of δ_μ(ε) that :func:`gdp_delta` returns: the returned μ is an evaluated one with
    ``gdp_delta(μ, ε) ≤ δ`` (the safe side for calibration: any μ ≤ it meets the target), within a
    factor 1 + ``EPSILON_XTOL`` of an evaluated μ that fails. A μ* below ``EPSILON_XTOL`` is returned as 0.

    Args:
        epsilon: ε ≥ 0.
        delta: δ in (0, 1).

    Returns:
        μ* ≥ 0 (within ``EPSILON_XTOL`` relative to it, never above it).
    """
    eps = check_nonnegative("epsilon", epsilon)
    d = check_open_probability("delta", delta)

    def delta_upper(m: float) -> float:  # gdp_delta(m, ε): the certified upper end of δ_m(ε), > 0
        return float(_delta_bracket(m, np.array([eps]))[1][0])

    _, mu = solve(delta_upper, d, name="mu", guess=1.0, rtol=EPSILON_XTOL, increasing=True, span=_MU_SPAN)
    return 0.0 if mu is None or mu < EPSILON_XTOL else mu


def gdp_compose(mus: Sequence[float], counts: Sequence[int] | None = None) -> float:
    """μ of the composition of kᵢ runs of each μᵢ-GDP mechanism: √(Σ kᵢ μᵢ²) (DRS Cor. 3.3,
    G_{μ1} ⊗ G_{μ2} = G_{√(μ1²+μ2²)}); ``counts`` default to 1. The one home of this rule (the queries
    floor's :func:`optcomp._items.merged_mu` and :func:`optcomp.fdp.tensor` call it).

    Computed as ``sqrt(fsum(kᵢ·μᵢ²))`` while every μᵢ² and kᵢμᵢ² is a normal double: relative error ≤ 2.5u
    from the μᵢ given (μᵢ² and kᵢ· one rounding each, ``fsum`` correctly rounded over positive terms,
    ``sqrt`` halves the sum's error and adds one rounding). Where a term would overflow or fall below
    the normal range: m·√(fsum(kᵢ(μᵢ/m)²)), m = max μᵢ, within 4.5u (one division and one product
    more), plus terms that underflow (each < 2⁻¹⁰²² against a sum ≥ 1).
    """
    vals = [check_nonnegative(f"mus[{i}]", m) for i, m in enumerate(mus)]
    ks = [1] * len(vals) if counts is None else [check_int(f"counts[{i}]", k, minimum=0) for i, k in enumerate(counts)]
    if len(ks) != len(vals):
        raise ValueError(f"counts must have one entry per mu ({len(vals)}), got {len(ks)}")
    pairs = [(m, k) for m, k in zip(vals, ks, strict=True) if m > 0.0 and k > 0]
    if not pairs:
        return 0.0
    top = max(m for m, _ in pairs)
    if math.isinf(top):
        return math.inf
    try:
        squares = [m**2 for m, _ in pairs]
    except OverflowError:  # a float's ** raises where * would give inf: the rescaled path below
        squares = [math.inf]
    # μᵢ² itself must be normal (a subnormal square has lost relative accuracy before kᵢ· scales it back)
    if all(SMALLEST_NORMAL <= sq < math.inf for sq in squares):
        terms = [k * sq for sq, (_, k) in zip(squares, pairs, strict=True)]
        if all(t < math.inf for t in terms):
            return math.sqrt(math.fsum(terms))
    return top * math.sqrt(math.fsum(k * (m / top) ** 2 for m, k in pairs))


def gdp_group(mu: float, k: int) -> float:
    """μ-GDP ⇒ kμ-GDP for groups of size k (DRS Thm 2.14, group privacy)."""
    return check_int("k", k) * check_nonnegative("mu", mu)

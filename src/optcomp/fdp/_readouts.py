"""From (ε, δ) curves to trade-off brackets, and operational readouts of a trade-off function.

* :func:`from_delta_curve` / :func:`from_pld` — a certified :class:`TradeOffBracket` from bracketed
  δ(ε) values (DRS Prop. 2.8 for the lower curve; convex duality, DRS "Primal to Dual" §2.4, for the
  upper curve).
* :func:`attack_tpr`, :func:`advantage`, :func:`delta_at` — what the most powerful membership-inference
  attack achieves: TPR = 1 − f(FPR), advantage = max_α (1 − α − f(α)) (total variation), and the
  (ε, δ(ε)) pairs f implies — each as a :class:`~optcomp.Bound`.
"""

from __future__ import annotations

import math
from typing import Protocol

import numpy as np
import numpy.typing as npt

from optcomp._numerics import (
    CURVE_ABSOLUTE_SLACK,
    EPSILON_XTOL,
    UNIT_ROUNDOFF,
    Bound,
    FloatArray,
    check_nonnegative,
    check_positive,
    check_probability,
)
from optcomp.fdp._compose import EpsilonDeltaComposition
from optcomp.fdp._gdp import gdp_delta_bound
from optcomp.fdp._tradeoff import (
    GaussianTradeOff,
    PiecewiseLinearTradeOff,
    TradeOff,
    TradeOffBracket,
    alpha_grid,
    from_epsilon_delta_family,
    upper_envelope,
)

__all__ = ["advantage", "attack_tpr", "delta_at", "epsilon_at", "from_delta_curve", "from_pld"]

#: Grid of y = −e^{−t}, t ∈ [0, _SYM_T_MAX], on which the symmetric part of the upper curve is bounded.
_SYM_T_MAX: float = 40.0
_SYM_POINTS: int = 4001


class _DeltaCurve(Protocol):
    def delta_curve(self, epsilons: FloatArray) -> tuple[FloatArray, FloatArray]: ...

    def delta(self, epsilon: float) -> Bound: ...


# ---------------------------------------------------------------------------------------------
# δ curve → trade-off bracket.
# ---------------------------------------------------------------------------------------------


def _conjugate_upper(ys: FloatArray, gs: FloatArray) -> PiecewiseLinearTradeOff:
    """min{1 − α, max_j (y_j α − g_j) + CURVE_ABSOLUTE_SLACK} on [0, 1], clipped to [0, 1], as exact knots.

    The max of lines is their upper envelope (:func:`~optcomp.fdp._tradeoff.upper_envelope`, knots
    exact up to rounding, which the slack covers); the min with 1 − α adds the crossings. β is made
    non-increasing by a running max from the right (raising values only: the safe side of an upper
    curve). Not convex in general; a piecewise-linear upper bound, read exactly over its knots.
    """
    xs, vs = upper_envelope(-gs, ys)
    vs = vs + CURVE_ABSOLUTE_SLACK
    diag = 1.0 - xs
    d = vs - diag
    cross = np.flatnonzero(d[:-1] * d[1:] < 0.0)
    if cross.size:
        t = d[cross] / (d[cross] - d[cross + 1])
        cx = xs[cross] + t * (xs[cross + 1] - xs[cross])
        cv = np.interp(cx, xs, vs)
        xs, vs = np.concatenate([xs, cx]), np.concatenate([vs, cv])
        order = np.argsort(xs, kind="stable")
        xs, vs = xs[order], vs[order]
    beta = np.clip(np.minimum(vs, 1.0 - xs), 0.0, 1.0)
    good = np.r_[True, np.diff(xs) > 0.0]
    xs, beta = xs[good], beta[good]
    xs[0], xs[-1] = 0.0, 1.0
    beta = np.maximum.accumulate(beta[::-1])[::-1]
    return PiecewiseLinearTradeOff(xs, beta)


def from_delta_curve(epsilons: npt.ArrayLike, delta_lower: npt.ArrayLike, delta_upper: npt.ArrayLike) -> TradeOffBracket:
    """Certified bracket of a symmetric trade-off f from bracketed δ(ε) = 1 + f*(−e^ε) on an ε grid.

    * lower = sup_i f_{ε_i, δ_upper(ε_i)}: valid for any mechanism that is (ε_i, δ_upper(ε_i))-DP
      (DRS Prop. 2.8, dual → primal); exact piecewise linear.
    * upper: with y_i = −e^{ε_i} and c_i = δ_lower(ε_i) − 1 ≤ f*(y_i), and f* non-decreasing with slope
      in [0, 1] (its subgradients are the α's where the sup is attained), f* ≥ g where on [y_{i+1}, y_i]
      g(y) = max{c_{i+1}, c_i − (y_i − y)}, on [−1, 0] g(y) = max{c_0, y}, and left of the grid
      g(y) = max{−1, c_last − (y_last − y)}. Then f = f** ≤ g*, and g* is a max over the end points and
      kinks of these pieces. On (−1, 0], symmetry gives f*(y) = −y f*(1/y), so f* ≥ max{c_0, y, −y g(1/y)}
      there, and a fine grid of y with f* non-decreasing bounds the sup on each grid cell. Needs f symmetric (δ_lower must bound 1 + f*(−e^ε) from below) and ε_0 = 0.

    Args:
        epsilons: strictly increasing ε grid starting at 0.
        delta_lower, delta_upper: δ(ε_i) brackets, in [0, 1], lower ≤ upper.
    """
    eps = np.asarray(epsilons, dtype=np.float64).ravel()
    dlo = np.asarray(delta_lower, dtype=np.float64).ravel()
    dhi = np.asarray(delta_upper, dtype=np.float64).ravel()
    if not (eps.size == dlo.size == dhi.size) or eps.size == 0:
        raise ValueError(f"epsilons, delta_lower, delta_upper must have equal non-zero length, got "
                         f"{eps.size}, {dlo.size}, {dhi.size}")
    if eps[0] != 0.0 or np.any(np.diff(eps) <= 0.0) or not np.all(np.isfinite(eps)):
        raise ValueError(f"epsilons must be finite, strictly increasing and start at 0, got {eps.tolist()[:5]!r}")
    for name, arr in (("delta_lower", dlo), ("delta_upper", dhi)):
        for v in arr.tolist():
            check_probability(name, v)
    if np.any(dlo > dhi):
        raise ValueError("delta_lower must be <= delta_upper everywhere")
    lower = from_epsilon_delta_family(eps, dhi)
    y = -np.exp(eps)
    c = dlo - 1.0
    # y ≤ −1: exact maximisation of yα − g(y) over the end points and kinks of each piece of g.
    cand_y: list[float] = [-1.0]
    cand_g: list[float] = [float(c[0])]
    for i in range(eps.size):
        cand_y.append(float(y[i]))
        cand_g.append(float(c[i]))
        if i + 1 < eps.size:
            k = float(c[i + 1] - c[i] + y[i])
            if y[i + 1] <= k <= y[i]:
                cand_y.append(k)
                cand_g.append(float(c[i + 1]))
    k_tail = float(y[-1] - c[-1] - 1.0)
    if k_tail <= y[-1]:
        cand_y.append(k_tail)
        cand_g.append(-1.0)

    def g_left(z: FloatArray) -> FloatArray:
        """The lower bound g(z) ≤ f*(z) for z ≤ −1 described above."""
        i = np.clip(np.searchsorted(-y, -z, side="right") - 1, 0, eps.size - 1)
        nxt = np.minimum(i + 1, eps.size - 1)
        inner = np.maximum(c[nxt], c[i] - (y[i] - z))
        tail = np.maximum(-1.0, c[-1] - (y[-1] - z))
        return np.where(z < y[-1], tail, inner)

    # −1 < y ≤ 0: f* is non-decreasing, so on [y_j, y_{j+1}] yα − f*(y) ≤ y_{j+1}α − G(y_j) with
    # G = max{c_0, y, −y g(1/y)} ≤ f* (slope ≤ 1 from f*(0) = 0; symmetry f*(y) = −y f*(1/y)).
    t = np.linspace(0.0, _SYM_T_MAX, _SYM_POINTS)
    yy = np.concatenate([-np.exp(-t), [0.0]])
    gg = np.maximum.reduce([np.full(yy.size, c[0]), yy, -yy * g_left(np.minimum(1.0 / np.where(yy < 0, yy, -1.0), -1.0))])
    gg[-1] = 0.0
    ys = np.concatenate([np.array(cand_y), yy[1:], [0.0]])
    gs = np.concatenate([np.array(cand_g), gg[:-1], [0.0]])
    return TradeOffBracket(lower=lower, upper=_conjugate_upper(ys, gs))


def from_pld(pld: _DeltaCurve, epsilons: npt.ArrayLike | None = None) -> TradeOffBracket:
    """Trade-off bracket of a mechanism from its privacy loss distribution (via :func:`from_delta_curve`).

    A :class:`optcomp.pld.PrivacyLossDistribution` is read with its one-pass
    ``hockey_stick_curve`` (every point from one realisation of the composed vectors; without
    ``epsilons`` the points are placed where the curve bends, up to the ε where δ falls below
    ``optcomp.pld._curve.CURVE_DELTA_SCALE``; tilted deep-tail compositions only for points whose
    width is set by the FFT floor). Any other object is read with ``delta_curve(epsilons) -> (lower,
    upper)`` on ``epsilons`` (default 0 … 20 in 400 steps). The δ curve must be the two-sided δ(ε) of
    a symmetric trade-off function (the symmetrized mechanism); the lower curve is valid regardless.

    Args:
        pld: a PLD, or any object with ``delta_curve``.
        epsilons: ε grid starting at 0 (default: automatic for a PLD, else 0 … 20 in 400 steps).
    """
    curve = getattr(pld, "hockey_stick_curve", None)
    if curve is not None:
        c = curve(epsilons)
        return from_delta_curve(c.epsilons, np.clip(c.lower, 0.0, 1.0), np.clip(c.upper, 0.0, 1.0))
    eps = np.linspace(0.0, 20.0, 401) if epsilons is None else np.asarray(epsilons, dtype=np.float64)
    lo, hi = pld.delta_curve(eps)
    return from_delta_curve(eps, np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0))


# ---------------------------------------------------------------------------------------------
# Readouts.
# ---------------------------------------------------------------------------------------------


#: Largest ε whose e^ε is a finite float64 (beyond it the slope e^ε is carried as inf).
_LOG_FLOAT_MAX: float = math.log(float(np.finfo(np.float64).max))


def _piecewise_gap(curve: PiecewiseLinearTradeOff, epsilon: float, *, side: str) -> float:
    """max over the knots of both orientations of 1 − β_k − e^ε α_k, rounded outward.

    Exact in exact arithmetic (a convex piecewise-linear f attains the conjugate's sup at a knot). Each
    value is a sum of three terms, so its absolute error is at most 4u(1 + β_k + e^ε α_k); knots that are
    cumulative sums of the m masses of a discrete pair (:func:`from_distributions`, :func:`tensor`) carry
    up to m·u more; a curve with a ``knot_error`` E (β_k off by ≤ E, α_k by ≤ E·α_k) adds E(1 + e^ε α_k)
    (E(1 + e^ε) through the inverse). The bracket is widened by (CURVE_ABSOLUTE_SLACK + m·u)(1 + e^ε α_k) per knot — an
    absolute, not relative, error: δ below
    ~10⁻¹⁵ read off knots is only known to that absolute accuracy (a curve that knows its source, such as
    :class:`~optcomp.fdp.EpsilonDeltaComposition`, is read in log space instead).
    """
    slope = math.exp(epsilon) if epsilon < _LOG_FLOAT_MAX else math.inf
    best = -math.inf
    for side_i, c in enumerate((curve,) if curve.symmetric else (curve, curve.inverse())):
        with np.errstate(invalid="ignore", over="ignore"):
            sx = np.where(c.alpha == 0.0, 0.0, slope * c.alpha)
        fin = np.isfinite(sx)  # e^ε α = ∞: that knot contributes −∞
        vals = 1.0 - c.beta[fin] - sx[fin]
        err = (CURVE_ABSOLUTE_SLACK + c.alpha.size * UNIT_ROUNDOFF) * (1.0 + sx[fin])
        e_k = np.broadcast_to(np.asarray(c.knot_error, dtype=np.float64), c.alpha.shape)[fin]
        if np.any(e_k > 0.0):
            # |β_k error| ≤ E_k and |α_k error| ≤ E_k·α_k: the value is off by ≤ E_k(1 + e^ε α_k); read
            # through the inverse, α and β swap roles and the bound is E(1 + e^ε) (E at the knot α = 0)
            s_e = sx[fin] if side_i == 0 else np.where(c.alpha[fin] > 0.0, slope, 0.0)
            err = err + e_k * (1.0 + s_e)
        cand = vals + err if side == "upper" else vals - err
        best = max(best, float(np.max(cand)))  # the knot α = 0 is always finite
    return min(1.0, max(0.0, best))


def _line_gap(curve: TradeOff, epsilon: float, *, side: str) -> float:
    """sup_α (1 − e^ε α − curve(α)) bounded from ``side`` ('upper' or 'lower'), both orientations.

    The (ε, δ) composition: its log-space certified δ; piecewise linear: exact over knots, widened by
    the absolute rounding error; Gaussian: the closed form widened by its error bound. Otherwise, for a
    non-increasing curve on a grid x_0 < … < x_m: lower ≥ max_j (1 − s x_j − c(x_j)); upper ≤
    max_j (1 − s x_j − c(x_{j+1})), each widened by CURVE_ABSOLUTE_SLACK.
    """
    if isinstance(curve, EpsilonDeltaComposition):
        b = curve.delta_bound(epsilon)
        return b.upper if side == "upper" else b.lower
    if isinstance(curve, GaussianTradeOff):
        lo_v, hi_v = gdp_delta_bound(curve.mu, epsilon)  # widened by the closed form's rounding error
        return hi_v if side == "upper" else lo_v
    if isinstance(curve, PiecewiseLinearTradeOff):
        return _piecewise_gap(curve, epsilon, side=side)
    slope = math.exp(epsilon) if epsilon < _LOG_FLOAT_MAX else math.inf
    x = np.unique(np.concatenate([alpha_grid(), curve.breakpoints()]))
    vals: list[float] = []
    for side_i, c in enumerate((curve,) if curve.symmetric else (curve, curve.inverse())):
        fx = np.asarray(c(x), dtype=np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            sx = np.where(x == 0.0, 0.0, slope * x)  # slope may be inf (ε beyond e^ε's float range)
        if side == "upper":
            vals.append(float(np.max(1.0 - sx[:-1] - fx[1:])) + CURVE_ABSOLUTE_SLACK)
        else:
            vals.append(float(np.max(1.0 - sx - fx)) - CURVE_ABSOLUTE_SLACK)
    return min(1.0, max(0.0, max(vals)))


Readable = TradeOff | TradeOffBracket | _DeltaCurve


def _as_curve(f: Readable) -> TradeOff | TradeOffBracket:
    """A trade-off function or bracket as is; a PLD (anything with ``delta_curve``) via :func:`from_pld`."""
    if isinstance(f, (TradeOff, TradeOffBracket)):
        return f
    if hasattr(f, "delta_curve"):
        return from_pld(f)
    raise ValueError(f"expected a TradeOff, TradeOffBracket or PLD, got {type(f).__name__}")


def delta_at(f: Readable, epsilon: float) -> Bound:
    """δ(ε) implied by f: the least δ with f ≥ f_{ε,δ} (DRS "Primal to Dual", §2.4), as a Bound.

    Both ends are certified: the (ε, δ) composition is read in log space (relative accuracy down to
    tiny δ), G_μ from its closed form widened by its error bound, piecewise-linear curves exactly over
    their knots widened by the absolute rounding error (about 10⁻¹⁴), other curves on a grid with the
    one-sided cell bound. For a bracket, the upper end comes from ``lower`` (the guarantee) and the lower
    end from ``upper``. A PLD is queried directly (its certified ``delta``). ε = ∞ is allowed.
    """
    e = check_nonnegative("epsilon", epsilon, allow_inf=True)
    if not isinstance(f, (TradeOff, TradeOffBracket)) and hasattr(f, "delta"):
        result: Bound = f.delta(e)
        return result
    f = _as_curve(f)
    if isinstance(f, TradeOffBracket):
        return Bound(_line_gap(f.upper, e, side="lower"), _line_gap(f.lower, e, side="upper"))
    return Bound(_line_gap(f, e, side="lower"), _line_gap(f, e, side="upper"))


def epsilon_at(f: Readable, delta: float, *, epsilon_max: float = 50.0) -> Bound:
    """ε(δ) = inf{ε ≥ 0 : δ_f(ε) ≤ δ} implied by f, bracketed by bisection on :func:`delta_at`.

    ``upper``: an ε whose certified upper δ is ≤ ``delta`` (a valid (ε, δ) guarantee), ``inf`` when no
    ε ≤ ``epsilon_max`` qualifies. ``lower``: an ε at which even the certified lower δ exceeds ``delta``
    (so the true ε is above it, δ_f being non-increasing); when that holds at ``epsilon_max`` itself the
    true ε exceeds the search range and the answer is ``Bound(epsilon_max, inf)`` — never ``inf`` as a
    lower end. A PLD is queried directly (its certified ``epsilon``, not limited by ``epsilon_max``).
    """
    d = check_probability("delta", delta)
    emax = check_positive("epsilon_max", epsilon_max)
    if not isinstance(f, (TradeOff, TradeOffBracket)) and hasattr(f, "epsilon"):
        result: Bound = f.epsilon(d)  # a PLD answers ε(δ) itself (certified, no bisection here)
        return result

    def solve(side: str) -> float:
        def val(e: float) -> float:
            b = delta_at(f, e)
            return b.upper if side == "upper" else b.lower

        if val(0.0) <= d:
            return 0.0
        if val(emax) > d:
            return math.inf if side == "upper" else emax
        lo, hi = 0.0, emax
        while hi - lo > EPSILON_XTOL * max(1.0, hi):
            mid = 0.5 * (lo + hi)
            if val(mid) <= d:
                hi = mid
            else:
                lo = mid
        return hi if side == "upper" else lo

    return Bound(solve("lower"), solve("upper"))


def advantage(f: Readable) -> Bound:
    """max_α (1 − α − f(α)) = max(TPR − FPR) of the best membership attack = total variation = δ(0)."""
    return delta_at(f, 0.0)


def attack_tpr(f: Readable, fpr: float) -> Bound:
    """TPR = 1 − f(FPR) of the most powerful membership-inference attack at false-positive rate FPR.

    For f-DP mechanisms no attack does better than 1 − f(FPR) (DRS §2.1); the Neyman–Pearson test of the
    worst-case pair attains it. A bracket gives [1 − upper(FPR), 1 − lower(FPR)]; both ends are widened
    by the absolute evaluation error of the curve (CURVE_ABSOLUTE_SLACK).
    """
    a = check_probability("fpr", fpr)
    f = _as_curve(f)
    if isinstance(f, TradeOffBracket):
        lo_f, hi_f = (float(np.asarray(v)) for v in f(a))
        return Bound(max(0.0, 1.0 - hi_f - CURVE_ABSOLUTE_SLACK), min(1.0, 1.0 - lo_f + CURVE_ABSOLUTE_SLACK))
    v = float(np.asarray(f(a)))
    return Bound(max(0.0, 1.0 - v - CURVE_ABSOLUTE_SLACK), min(1.0, 1.0 - v + CURVE_ABSOLUTE_SLACK))

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

from optcomp._inverse import float_boundary
from optcomp._numerics import (
    CURVE_ABSOLUTE_SLACK,
    EPSILON_XTOL,
    Bound,
    FloatArray,
    check_nonnegative,
    check_positive,
    check_probability,
)
from optcomp._rounding import rounding_error
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


def _support_lower(z: FloatArray, lo: FloatArray, hi: FloatArray) -> tuple[FloatArray, FloatArray]:
    """A piecewise-linear g ≤ f* on (−∞, −1] from lo_j ≤ f*(z_j) ≤ hi_j at z_0 < … < z_{n−1} = −1.

    f* is convex, non-decreasing, with slope ≤ 1 and f* ≥ −1 (DRS §2.4: f*(y) = sup_α (yα − f(α))). On
    [z_j, z_{j+1}], g is the max of the lines: lo_j (monotone); lo_{j+1} − (z_{j+1} − y) (slope ≤ 1); the
    secant through (z_{j−1}, hi_{j−1}) and (z_j, lo_j) extended to the right, and the one through
    (z_{j+1}, lo_{j+1}) and (z_{j+2}, hi_{j+2}) extended to the left (convexity: a secant's extension
    lies below a convex function, and raising the far end to hi, lowering the near end to lo, keeps it
    below). Left of z_0: −1, lo_0 − (z_0 − y), and the left secant through (z_0, lo_0), (z_1, hi_1).
    The secants make g second-order close to f* (the monotone/slope lines alone are first order).

    Returns the kinks and end points (y_c, g(y_c)) — the candidates of sup_y (yα − g(y)), which a PL g
    attains at one of them. Lines are taken in local coordinates t = y − z_{j+1}; each
    g value is lowered by 8u(2 + |g| + |t|(1 + max|slope|)), which covers the rounding of the kinks'
    positions and values (a kink missed by Δt changes yα − g by at most |Δt|(1 + max|slope|)).
    """
    n = z.size
    if n == 1:
        lines_v = np.array([[lo[0], lo[0], -1.0]])
        lines_s = np.array([[0.0, 1.0, 0.0]])
        anchors = np.array([z[0]])
        widths = np.array([np.inf])
    else:
        h = np.diff(z)
        m = n - 1  # intervals [z_j, z_{j+1}], plus the left tail (index m)
        v = np.full((m + 1, 4), -np.inf)
        sl = np.zeros((m + 1, 4))
        v[:m, 0] = lo[:-1]
        v[:m, 1], sl[:m, 1] = lo[1:], 1.0
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            right = (lo[1:-1] - hi[:-2]) / h[:-1]  # secant slopes into z_j, j = 1 … n − 2
            left = (hi[2:] - lo[1:-1]) / h[1:]  # secant slopes out of z_{j+1}, j = 0 … n − 3
        # right extension on interval j (j ≥ 1): lo_j + σ(y − z_j) = lo_j + σ(t + h_j)
        v[1:m, 2] = lo[1:-1] + right * h[1:]
        sl[1:m, 2] = right
        # left extension on interval j (j ≤ n − 3): lo_{j+1} + τ t
        v[: m - 1, 3] = lo[1:-1]
        sl[: m - 1, 3] = left
        # the left tail, anchored at z_0: −1, slope-1 line, left secant through (z_0, lo_0), (z_1, hi_1)
        v[m] = [-1.0, lo[0], lo[0] + 0.0, -np.inf]
        sl[m] = [0.0, 1.0, (hi[1] - lo[0]) / h[0], 0.0]
        bad = ~np.isfinite(v) | ~np.isfinite(sl)
        v[bad], sl[bad] = -np.inf, 0.0
        lines_v, lines_s = v, sl
        anchors = np.concatenate([z[1:], [z[0]]])
        widths = np.concatenate([h, [np.inf]])

    def g_local(j: np.ndarray, t: FloatArray) -> FloatArray:
        vals = lines_v[j] + lines_s[j] * t[:, None]
        g = np.max(vals, axis=1)
        smax = np.max(np.abs(lines_s[j]), axis=1)
        return np.asarray(g - rounding_error(8, 2.0 + np.abs(g) + np.abs(t) * (1.0 + smax)), dtype=np.float64)

    # candidates: both ends of every interval and every pairwise crossing inside it
    cy: list[FloatArray] = []
    cg: list[FloatArray] = []
    k = lines_v.shape[0]
    idx = np.arange(k)
    ends = [np.zeros(k), np.where(np.isfinite(widths), -widths, np.nan)]
    for a in range(lines_v.shape[1]):
        for b in range(a + 1, lines_v.shape[1]):
            with np.errstate(divide="ignore", invalid="ignore"):
                ends.append((lines_v[:, b] - lines_v[:, a]) / (lines_s[:, a] - lines_s[:, b]))
    for t in ends:
        ok = np.isfinite(t) & (t <= 0.0) & (t >= -widths)
        ok &= np.isfinite(lines_v[idx, 0]) | np.isfinite(lines_v[idx, 1])
        if np.any(ok):
            cy.append(anchors[ok] + t[ok])
            cg.append(g_local(idx[ok], t[ok]))
    cand_y = np.concatenate(cy)
    cand_g = np.concatenate(cg)

    return cand_y, cand_g


def from_delta_curve(epsilons: npt.ArrayLike, delta_lower: npt.ArrayLike, delta_upper: npt.ArrayLike) -> TradeOffBracket:
    """Certified bracket of a symmetric trade-off f from bracketed δ(ε) = 1 + f*(−e^ε) on an ε grid.

    * lower = sup_i f_{ε_i, δ_upper(ε_i)}: valid for any mechanism that is (ε_i, δ_upper(ε_i))-DP
      (DRS Prop. 2.8, dual → primal); exact piecewise linear.
    * upper: with y_i = −e^{ε_i} and δ_lower(ε_i) − 1 ≤ f*(y_i) ≤ δ_upper(ε_i) − 1, f* convex and
      non-decreasing with slope in [0, 1] (its subgradients are the α's where the sup is attained),
      f* ≥ g for the piecewise-linear g of :func:`_support_lower` (monotone, slope and convex-secant
      lines). Then f = f** ≤ g*, and g* is a max over the end points and kinks of g. On (−1, 0], symmetry
      gives f*(y) = −y f*(1/y), so f* ≥ max{c_0, −y g(1/y)} there, again piecewise linear with known kinks. Needs f symmetric (δ_lower must bound 1 + f*(−e^ε) from below) and ε_0 = 0.

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
    cand_y, cand_g = _support_lower(y[::-1].copy(), c[::-1].copy(), dhi[::-1] - 1.0)
    # −1 < y ≤ 0: symmetry gives f*(y) = −y f*(1/y) ≥ P(y) = −y g(1/y), the perspective of g — linear
    # between the images 1/y_c of g's kinks — and monotonicity f*(y) ≥ f*(−1) ≥ c_0. G = max{c_0, P} is
    # piecewise linear with kinks at the 1/y_c and where P crosses c_0: those are its candidates.
    inv_y = 1.0 / cand_y
    order = np.argsort(inv_y)
    py = inv_y[order]
    pg = -cand_g[order] / cand_y[order]
    pg = pg - rounding_error(8, 1.0 + np.abs(pg))
    cross_y: list[float] = []
    for i in np.flatnonzero((pg[:-1] - c[0]) * (pg[1:] - c[0]) < 0.0):
        frac = (c[0] - pg[i]) / (pg[i + 1] - pg[i])
        cross_y.append(float(py[i] + frac * (py[i + 1] - py[i])))
    inner = (py > -1.0) & (py < 0.0)
    ys = np.concatenate([cand_y, py[inner], np.array(cross_y), [-1.0, 0.0]])
    gs = np.concatenate(
        [cand_g, np.maximum(pg[inner], c[0]), np.full(len(cross_y), float(c[0])), [float(c[0]), 0.0]]
    )
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
        err = (CURVE_ABSOLUTE_SLACK + rounding_error(c.alpha.size)) * (1.0 + sx[fin])
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
    """ε(δ) = inf{ε ≥ 0 : δ_f(ε) ≤ δ} implied by f, bracketed by :func:`optcomp._inverse.float_boundary`
    (bisection to ``EPSILON_XTOL``) on the certified ends of :func:`delta_at`.

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

    def end(side: str) -> float:
        def val(e: float) -> float:
            b = delta_at(f, e)
            return b.upper if side == "upper" else b.lower

        if val(0.0) <= d:
            return 0.0
        if val(emax) > d:
            return math.inf if side == "upper" else emax
        found = float_boundary(lambda e: val(e) <= d, name="epsilon", passing_above=True, fail=0.0, passing=emax,
                               xtol=EPSILON_XTOL)
        out = found.passing if side == "upper" else found.fail
        return emax if out is None else out  # both ends were given: never None

    return Bound(end("lower"), end("upper"))


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

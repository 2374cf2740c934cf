"""Trade-off functions as values (Dong, Roth & Su, "Gaussian Differential Privacy", §2).

A trade-off function f = T(P, Q) maps a type I error α (of a test of H0: P against H1: Q) to the
smallest achievable type II error: T(P,Q)(α) = inf{β_φ : α_φ ≤ α} (DRS Def. 2.1). f is a trade-off
function iff it is convex, continuous, non-increasing and f(α) ≤ 1 − α on [0, 1] (DRS Prop. 2.2).
A mechanism is f-DP when T(M(S), M(S')) ≥ f for all neighbours S, S'.

Values here are immutable. Every :class:`TradeOff` evaluates vectorised in α (``f(alpha)``) and offers
its left-continuous inverse, symmetrization, lower convex envelope and comparison. Concrete kinds:

* :class:`GaussianTradeOff` — G_μ(α) = Φ(Φ⁻¹(1−α) − μ) (closed form);
* :class:`PiecewiseLinearTradeOff` — knots (α_k, β_k): f_{ε,δ}, Neyman–Pearson curves of discrete
  pairs, and sup_i f_{ε_i,δ_i} are all exactly of this kind;
* :class:`TradeOffBracket` — a certified pair ``lower ≤ truth ≤ upper`` of curves.

Privacy regions (Kairouz–Oh–Viswanath §II) are the same objects seen from the other side: the region
{(α, 1 − β)} lies above the curve β = f(α) in the (type I, type II) plane.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from scipy.special import ndtr, ndtri

from optcomp._numerics import (
    ALPHA_GRID_MIN,
    Bound,
    FloatArray,
    check_int,
    check_nonnegative,
    check_probability,
    check_probability_vector,
)
from optcomp.fdp._gdp import gdp_delta

__all__ = [
    "DEFAULT_GRID_SIZE",
    "GaussianTradeOff",
    "PiecewiseLinearTradeOff",
    "TradeOff",
    "TradeOffBracket",
    "alpha_grid",
    "epsilon_delta_tradeoff",
    "from_distributions",
    "from_epsilon_delta_family",
    "gaussian_tradeoff",
    "upper_envelope",
]

#: Number of uniform points in the default α grid used by comparisons and numerical operators.
DEFAULT_GRID_SIZE: int = 2001
#: Halvings of [0, 1] in :class:`_BisectionInverse` (to 2⁻⁶⁴ in α: below the spacing of floats near 1).
_BISECTION_STEPS: int = 64


def alpha_grid(n: int = DEFAULT_GRID_SIZE) -> FloatArray:
    """A grid on [0, 1]: ``n`` uniform points plus geometric points near both ends (2^-40 … 0.5)."""
    n = check_int("n", n, minimum=2)
    uniform = np.linspace(0.0, 1.0, n)
    geo = np.geomspace(ALPHA_GRID_MIN, 0.5, max(n // 4, 2))
    return np.unique(np.concatenate([uniform, geo, 1.0 - geo]))


def _as_alpha(alpha: npt.ArrayLike, name: str = "alpha") -> FloatArray:
    arr = np.asarray(alpha, dtype=np.float64)
    bad = np.isnan(arr) | (arr < 0.0) | (arr > 1.0)
    if np.any(bad):
        raise ValueError(f"{name} must be in [0, 1], got {float(arr[bad].flat[0])!r}")
    return arr


def _shape_like(alpha: npt.ArrayLike, out: FloatArray) -> float | FloatArray:
    if np.ndim(alpha) == 0:
        return float(out.reshape(-1)[0])
    return out


class TradeOff(ABC):
    """A trade-off function f : [0, 1] → [0, 1] (DRS Def. 2.1), evaluated vectorised in α."""

    @abstractmethod
    def _evaluate(self, alpha: FloatArray) -> FloatArray:
        """f at validated α values (1-d array)."""

    def __call__(self, alpha: npt.ArrayLike) -> float | FloatArray:
        """f(α) for α in [0, 1] (scalar → float, array → array). ValueError naming ``alpha`` otherwise."""
        a = _as_alpha(alpha)
        out = self._evaluate(np.atleast_1d(a).ravel()).reshape(np.shape(a))
        return _shape_like(alpha, np.asarray(out, dtype=np.float64))

    @property
    def symmetric(self) -> bool:
        """Whether f = f⁻¹ is known structurally (``False`` means *not known*, not *asymmetric*)."""
        return False

    def breakpoints(self) -> FloatArray:
        """α values where f has kinks (empty for smooth f); comparisons check these besides a grid."""
        return np.empty(0)

    def inverse(self) -> TradeOff:
        """The left-continuous inverse f⁻¹(β) = inf{α ∈ [0,1] : f(α) ≤ β} (DRS eq. (4)).

        f⁻¹ = T(Q, P) when f = T(P, Q). Exact for the concrete kinds; the generic fallback evaluates the
        infimum by bisection to full double precision.
        """
        if self.symmetric:
            return self
        return _BisectionInverse(self)

    def symmetrized(self) -> TradeOff:
        """max{f, f⁻¹}: an f-DP mechanism is also max{f, f⁻¹}-DP (DRS Prop. 2.1), a tighter guarantee."""
        if self.symmetric:
            return self
        return _MaxTradeOff((self, self.inverse()))

    def to_piecewise_linear(self, grid: FloatArray | None = None) -> PiecewiseLinearTradeOff:
        """The chord interpolant of f on ``grid`` ∪ breakpoints: an UPPER approximation (f is convex).

        Chords of a convex function lie above it, so the result is ≥ f everywhere and equal on the grid;
        it is not a certified lower bound on f.
        """
        g = alpha_grid() if grid is None else _as_alpha(grid, "grid")
        pts = np.unique(np.concatenate([g, self.breakpoints(), [0.0, 1.0]]))
        return PiecewiseLinearTradeOff(pts, np.asarray(self(pts), dtype=np.float64))

    def convex_envelope(self, grid: FloatArray | None = None) -> PiecewiseLinearTradeOff:
        """The lower convex envelope f** of f sampled on ``grid`` ∪ breakpoints (lower hull of the samples).

        For a convex f this is its chord interpolant (≥ f, equal on the grid); for a non-convex input it is
        the convexification used by DRS Thm 4.2 (error direction as in :meth:`to_piecewise_linear`).
        """
        pl = self.to_piecewise_linear(grid)
        return pl.convex_envelope()

    def dominates(self, other: TradeOff, *, grid: FloatArray | None = None, atol: float = 0.0) -> bool:
        """Whether f(α) ≥ g(α) − atol on ``grid`` plus both functions' breakpoints.

        f ≥ g means f-DP is the stronger guarantee. Both are convex, so checking a fine grid and every
        kink of a piecewise-linear operand is exact for piecewise-linear pairs.
        """
        tol = check_nonnegative("atol", atol)
        g = alpha_grid() if grid is None else _as_alpha(grid, "grid")
        pts = np.unique(np.concatenate([g, self.breakpoints(), other.breakpoints()]))
        return bool(np.all(np.asarray(self(pts)) >= np.asarray(other(pts)) - tol))


@dataclass(frozen=True)
class _BisectionInverse(TradeOff):
    """f⁻¹ by bisection on inf{α : f(α) ≤ β} (f non-increasing), to 2^-64 in α."""

    base: TradeOff

    def _evaluate(self, alpha: FloatArray) -> FloatArray:
        beta = alpha
        lo = np.zeros_like(beta)
        hi = np.ones_like(beta)
        done = np.asarray(self.base(np.zeros_like(beta)), dtype=np.float64) <= beta
        for _ in range(_BISECTION_STEPS):
            mid = 0.5 * (lo + hi)
            ok = np.asarray(self.base(mid), dtype=np.float64) <= beta
            hi = np.where(ok, mid, hi)
            lo = np.where(ok, lo, mid)
        return np.where(done, 0.0, hi)

    def inverse(self) -> TradeOff:
        return self.base


@dataclass(frozen=True)
class _MaxTradeOff(TradeOff):
    """Pointwise max of trade-off functions (again a trade-off function: epigraphs intersect)."""

    parts: tuple[TradeOff, ...]

    def _evaluate(self, alpha: FloatArray) -> FloatArray:
        vals = [np.asarray(p(alpha), dtype=np.float64) for p in self.parts]
        return np.asarray(np.maximum.reduce(vals), dtype=np.float64)

    def breakpoints(self) -> FloatArray:
        return np.unique(np.concatenate([p.breakpoints() for p in self.parts]))

    def inverse(self) -> TradeOff:
        return _MaxTradeOff(tuple(p.inverse() for p in self.parts))


# ---------------------------------------------------------------------------------------------
# Gaussian.
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GaussianTradeOff(TradeOff):
    """G_μ(α) = Φ(Φ⁻¹(1 − α) − μ) = T(N(0,1), N(μ,1)) (DRS eq. (6)); μ-GDP. Symmetric.

    Evaluated as Φ(−Φ⁻¹(α) − μ), which keeps relative accuracy for small α.
    """

    mu: float

    def __post_init__(self) -> None:
        check_nonnegative("mu", self.mu)

    def _evaluate(self, alpha: FloatArray) -> FloatArray:
        with np.errstate(invalid="ignore"):
            out = ndtr(-ndtri(alpha) - self.mu)
        return np.asarray(out, dtype=np.float64)

    @property
    def symmetric(self) -> bool:
        return True

    def delta(self, epsilon: npt.ArrayLike) -> float | FloatArray:
        """δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (DRS Cor. "GDP to DP"; :func:`gdp_delta`)."""
        return gdp_delta(self.mu, epsilon)


def gaussian_tradeoff(mu: float) -> GaussianTradeOff:
    """G_μ, the trade-off function of μ-GDP (DRS Def. 2.6): G_μ(α) = Φ(Φ⁻¹(1 − α) − μ), μ ≥ 0."""
    return GaussianTradeOff(check_nonnegative("mu", mu))


# ---------------------------------------------------------------------------------------------
# Piecewise linear.
# ---------------------------------------------------------------------------------------------


def _lower_hull(x: FloatArray, y: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Vertices of the lower convex hull of points sorted by x (Andrew's monotone chain)."""
    hx: list[float] = []
    hy: list[float] = []
    for xi, yi in zip(x.tolist(), y.tolist()):
        if hx and xi == hx[-1]:
            if yi >= hy[-1]:
                continue
            hx.pop()
            hy.pop()
        while len(hx) >= 2:
            cross = (hx[-1] - hx[-2]) * (yi - hy[-2]) - (hy[-1] - hy[-2]) * (xi - hx[-2])
            if cross <= 0.0:
                hx.pop()
                hy.pop()
            else:
                break
        hx.append(xi)
        hy.append(yi)
    return np.array(hx), np.array(hy)


@dataclass(frozen=True, eq=False)
class PiecewiseLinearTradeOff(TradeOff):
    """f linear between knots (α_k, β_k), α_0 = 0 < α_1 < … < α_m = 1, β non-increasing in [0, 1].

    Exact for f_{ε,δ}, for Neyman–Pearson curves of discrete pairs and for sup_i f_{ε_i,δ_i}. Its
    conjugate, inverse and (ε, δ) curve are computed exactly from the knots. Convexity is the caller's
    promise (the constructors here guarantee it); :meth:`convex_envelope` enforces it.
    """

    alpha: FloatArray
    beta: FloatArray
    is_symmetric: bool = field(default=False)
    #: A bound E on the knots' error against the curve they represent, beyond plain rounding (a float,
    #: or one per knot): β_k is off by at most E_k and α_k by at most E_k·α_k, e.g. after a composition of
    #: maps (:func:`optcomp.fdp.group_privacy`); readouts widen by it. 0 for curves exact up to rounding.
    #: Operations that reorder or merge knots carry the largest E on.
    knot_error: float | FloatArray = field(default=0.0)

    def __post_init__(self) -> None:
        a = np.asarray(self.alpha, dtype=np.float64).ravel()
        b = np.asarray(self.beta, dtype=np.float64).ravel()
        if a.size != b.size or a.size < 2:
            raise ValueError(f"alpha and beta must have the same length >= 2, got {a.size} and {b.size}")
        _as_alpha(a, "alpha")
        _as_alpha(b, "beta")
        if a[0] != 0.0 or a[-1] != 1.0 or np.any(np.diff(a) <= 0.0):
            raise ValueError("alpha knots must increase strictly from 0 to 1")
        if np.any(np.diff(b) > 0.0):
            raise ValueError("beta knots must be non-increasing")
        object.__setattr__(self, "alpha", a)
        object.__setattr__(self, "beta", b)
        e = np.asarray(self.knot_error, dtype=np.float64)
        if e.ndim not in (0, 1) or (e.ndim == 1 and e.size != a.size) or np.any(~(e >= 0.0)):
            raise ValueError(f"knot_error must be a float >= 0 or one per knot, got shape {e.shape}")
        object.__setattr__(self, "knot_error", float(e) if e.ndim == 0 else e)

    def _evaluate(self, alpha: FloatArray) -> FloatArray:
        return np.asarray(np.interp(alpha, self.alpha, self.beta), dtype=np.float64)

    @property
    def symmetric(self) -> bool:
        return self.is_symmetric

    def breakpoints(self) -> FloatArray:
        return self.alpha

    def inverse(self) -> PiecewiseLinearTradeOff:
        """Exact left-continuous inverse: knots reflected in the diagonal (DRS eq. (4))."""
        if self.is_symmetric:
            return self
        # Graph points (β_k, α_k) with β increasing; on a flat piece (equal β) the inverse takes the
        # smallest α (the infimum); a jump f(0) < 1 becomes f⁻¹ = 0 on [f(0), 1].
        bx = self.beta[::-1]
        ay = self.alpha[::-1]
        uniq, idx = np.unique(bx, return_inverse=True)
        amin = np.full(uniq.size, np.inf)
        np.minimum.at(amin, idx, ay)
        xs, ys = uniq, amin
        if xs[0] > 0.0:  # f > 0 on [0, 1): f(1) = 0 always, so this only happens via rounding
            xs = np.concatenate([[0.0], xs])
            ys = np.concatenate([[1.0], ys])
        if xs[-1] < 1.0:
            xs = np.concatenate([xs, [1.0]])
            ys = np.concatenate([ys, [0.0]])
        return PiecewiseLinearTradeOff(xs, ys, knot_error=float(np.max(self.knot_error)))

    def symmetrized(self) -> PiecewiseLinearTradeOff:
        """max{f, f⁻¹} as an exact piecewise-linear function (DRS Prop. 2.1)."""
        if self.is_symmetric:
            return self
        out = _pl_max([self, self.inverse()])
        return PiecewiseLinearTradeOff(out.alpha, out.beta, is_symmetric=True, knot_error=out.knot_error)

    def convex_envelope(self, grid: FloatArray | None = None) -> PiecewiseLinearTradeOff:
        """The lower convex hull of the knots (exact f** for a piecewise-linear f; ``grid`` is unused)."""
        hx, hy = _lower_hull(self.alpha, self.beta)
        return PiecewiseLinearTradeOff(
            hx, hy, is_symmetric=self.is_symmetric, knot_error=float(np.max(self.knot_error))
        )

    def conjugate_delta(self, epsilon: npt.ArrayLike) -> float | FloatArray:
        """1 + f*(−e^ε) = max_k (1 − β_k − e^ε α_k): the δ of the one-sided line bound (DRS §2.4)."""
        eps = np.asarray(epsilon, dtype=np.float64)
        if np.any(np.isnan(eps)):
            raise ValueError("epsilon must be in [-inf, inf], got nan")
        flat = np.atleast_1d(eps).ravel()
        # e^ε·α_k with the knot α_k = 0 contributing 0 even at ε = ∞ (so δ(∞) = 1 − f(0), not nan).
        with np.errstate(invalid="ignore"):
            slope = np.exp(flat)[:, None] * self.alpha[None, :]
        slope[:, self.alpha == 0.0] = 0.0
        vals = 1.0 - self.beta[None, :] - slope
        out = np.maximum(np.max(vals, axis=1), 0.0).reshape(np.shape(eps))
        return _shape_like(eps, out)

    def delta(self, epsilon: npt.ArrayLike) -> float | FloatArray:
        """The least δ with f ≥ f_{ε,δ}: max{1 + f*(−e^ε), 1 + (f⁻¹)*(−e^ε)} (DRS Prop. "Primal to Dual").

        For symmetric f both terms agree and this is DRS's δ(ε) = 1 + f*(−e^ε). The maximum over knots is
        exact because a convex piecewise-linear f attains its conjugate's supremum at a knot.
        """
        eps = np.asarray(epsilon, dtype=np.float64)
        bad = np.isnan(eps) | (eps < 0.0)
        if np.any(bad):
            raise ValueError(f"epsilon must be in [0, inf], got {float(eps[bad].flat[0])!r}")
        d1 = np.asarray(self.conjugate_delta(eps), dtype=np.float64)
        if self.is_symmetric:
            return _shape_like(eps, d1)
        d2 = np.asarray(self.inverse().conjugate_delta(eps), dtype=np.float64)
        return _shape_like(eps, np.maximum(d1, d2))

    def to_distributions(self) -> tuple[FloatArray, FloatArray]:
        """A discrete pair (P, Q) with T(P, Q) = f (f convex): one atom per linear piece.

        Piece k carries P-mass α_k − α_{k−1} and Q-mass β_{k−1} − β_k; a drop 1 − f(0) becomes an atom
        with P-mass 0 (test rejects for free), and the flat tail f = 0 one with Q-mass 0.
        """
        p = np.diff(self.alpha)
        q = -np.diff(self.beta)
        p = np.concatenate([[0.0], p])
        q = np.concatenate([[1.0 - self.beta[0]], q])
        return p, q


def _pl_max(parts: Sequence[PiecewiseLinearTradeOff]) -> PiecewiseLinearTradeOff:
    """Exact pointwise max of piecewise-linear functions: union of knots plus pairwise crossings."""
    xs = np.unique(np.concatenate([p.alpha for p in parts]))
    vals = np.array([np.interp(xs, p.alpha, p.beta) for p in parts])
    extra: list[float] = []
    for i in range(len(parts)):
        for j in range(i + 1, len(parts)):
            d = vals[i] - vals[j]
            s = np.nonzero(d[:-1] * d[1:] < 0.0)[0]
            for k in s.tolist():
                t = d[k] / (d[k] - d[k + 1])
                extra.append(float(xs[k] + t * (xs[k + 1] - xs[k])))
    if extra:
        xs = np.unique(np.concatenate([xs, np.clip(extra, 0.0, 1.0)]))
        vals = np.array([np.interp(xs, p.alpha, p.beta) for p in parts])
    # np.interp can be non-monotone by an ulp between nearly equal knots; the running minimum removes
    # that rounding (it only lowers values, by at most an ulp, the safe side for a guarantee).
    err = max(float(np.max(p.knot_error)) for p in parts)
    return PiecewiseLinearTradeOff(xs, np.minimum.accumulate(np.max(vals, axis=0)), knot_error=err)


def epsilon_delta_tradeoff(epsilon: float, delta: float) -> PiecewiseLinearTradeOff:
    """f_{ε,δ}(α) = max{0, 1 − δ − e^ε α, e^{−ε}(1 − δ − α)} (DRS eq. (5)); (ε,δ)-DP ⇔ f_{ε,δ}-DP.

    Exact knots: (0, 1−δ), ((1−δ)/(1+e^ε), (1−δ)/(1+e^ε)), (1−δ, 0), (1, 0). Symmetric.
    """
    eps = check_nonnegative("epsilon", epsilon, allow_inf=True)
    d = check_probability("delta", delta)
    if d == 1.0 or math.isinf(eps):  # no privacy: f = 0 (ε = ∞ admits the test with α = β = 0)
        return PiecewiseLinearTradeOff(np.array([0.0, 1.0]), np.array([0.0, 0.0]), is_symmetric=True)
    mid = (1.0 - d) / (1.0 + math.exp(eps))
    xs = np.array([0.0, mid, 1.0 - d, 1.0])
    ys = np.array([1.0 - d, mid, 0.0, 0.0])
    keep = np.r_[True, np.diff(xs) > 0.0]  # drop repeated α (ε = ∞ or δ = 0); β agrees there
    return PiecewiseLinearTradeOff(xs[keep], ys[keep], is_symmetric=True)


def from_distributions(p: npt.ArrayLike, q: npt.ArrayLike) -> PiecewiseLinearTradeOff:
    """T(P, Q) of two discrete distributions, exactly, by the Neyman–Pearson lemma (DRS §2.1).

    Outcomes are sorted by likelihood ratio q/p (largest first; p = 0 first of all); rejecting the
    first outcomes gives the knots (α_k, β_k) = (Σ_{j≤k} p_j, 1 − Σ_{j≤k} q_j). Randomised tests fill in
    the chords, so T(P, Q) is exactly the resulting piecewise-linear function.

    Args:
        p: probabilities of P (type I errors are measured under P), non-negative, summing to 1.
        q: probabilities of Q on the same outcomes.

    Returns:
        The exact trade-off function (not marked symmetric; see :meth:`TradeOff.symmetrized`).
    """
    pa = check_probability_vector("p", np.asarray(p, dtype=np.float64).ravel())
    qa = check_probability_vector("q", np.asarray(q, dtype=np.float64).ravel())
    if pa.size != qa.size:
        raise ValueError(f"p and q must be of equal length, got {pa.size} and {qa.size}")
    keep = (pa > 0.0) | (qa > 0.0)
    pa, qa = pa[keep], qa[keep]
    with np.errstate(divide="ignore"):
        log_ratio = np.where(pa > 0.0, np.log(qa) - np.log(pa), np.inf)
    order = np.argsort(-log_ratio, kind="stable")
    ps, qs = pa[order], qa[order]
    zero_p = ps == 0.0
    ps, qs = ps[~zero_p], qs[~zero_p]
    alpha = np.concatenate([[0.0], np.cumsum(ps)])
    # β_k = Q(the outcomes after the first k) as a tail sum (not 1 − a prefix sum): each knot then carries a
    # relative error ≤ m·u, which the readouts' error model assumes when the curve is read through its inverse
    # (α and β swap; 1 − prefix had an absolute m·u, which e^ε multiplies: δ's lower end above the truth)
    beta = np.concatenate([np.cumsum(qs[::-1])[::-1], [0.0]])
    alpha[-1] = 1.0
    beta[-1] = 0.0
    beta = np.minimum.accumulate(np.clip(beta, 0.0, 1.0))
    alpha = np.minimum(alpha, 1.0)
    # Equal α knots arise only from rounding of tiny masses: keep the lowest β of each α.
    ua, first = np.unique(alpha, return_index=True)
    last = np.r_[first[1:] - 1, alpha.size - 1]
    return PiecewiseLinearTradeOff(ua, beta[last])


def upper_envelope(intercepts: FloatArray, slopes: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Knots (x, y) on [0, 1] of max_i (a_i + b_i x), the upper envelope of lines (convex hull trick).

    Lines sorted by slope (ties: largest intercept); a middle line is dropped when its neighbours cross
    left of where it would take over. The knots are 0, the crossings of consecutive hull lines inside
    (0, 1), and 1; each y is the max of the lines meeting there. O(n log n).
    """
    order = np.lexsort((-intercepts, slopes))
    a_s, b_s = intercepts[order], slopes[order]
    hull: list[int] = []
    for i in range(a_s.size):
        if hull and b_s[hull[-1]] == b_s[i]:
            continue  # same slope, smaller intercept (sorted): never above
        while len(hull) >= 2:
            i1, i2 = hull[-2], hull[-1]
            # line i2 is useless if the crossing of (i2, i) is left of or at the crossing of (i1, i2)
            if (a_s[i2] - a_s[i]) * (b_s[i2] - b_s[i1]) <= (a_s[i1] - a_s[i2]) * (b_s[i] - b_s[i2]):
                hull.pop()
            else:
                break
        hull.append(i)
    ha, hb = a_s[hull], b_s[hull]
    with np.errstate(divide="ignore", invalid="ignore"):
        cross = (ha[:-1] - ha[1:]) / (hb[1:] - hb[:-1])
    inside = (cross > 0.0) & (cross < 1.0)
    cx = cross[inside]
    cy = np.maximum(ha[:-1][inside] + hb[:-1][inside] * cx, ha[1:][inside] + hb[1:][inside] * cx)
    xs = np.concatenate([[0.0], cx, [1.0]])
    ys = np.concatenate([[float(np.max(intercepts))], cy, [float(np.max(intercepts + slopes))]])
    return xs, ys


def from_epsilon_delta_family(epsilons: npt.ArrayLike, deltas: npt.ArrayLike) -> PiecewiseLinearTradeOff:
    """sup_i f_{ε_i, δ_i}: (ε_i, δ_i)-DP for all i ⇔ f-DP with this f (DRS Prop. 2.8, dual → primal).

    Each f_{ε,δ} is the max of the lines 0, 1 − δ − e^ε α and e^{−ε}(1 − δ − α); the sup is the upper
    envelope of these 2n + 1 lines, a convex piecewise-linear function whose knots (the crossings of
    consecutive envelope lines) are computed exactly, in O(n log n). This is also the lower boundary of
    the privacy region ∩_i R(ε_i, δ_i) (:meth:`optcomp.region.PrivacyRegion.to_tradeoff`).
    """
    eps = np.asarray(epsilons, dtype=np.float64).ravel()
    dl = np.asarray(deltas, dtype=np.float64).ravel()
    if eps.size != dl.size or eps.size == 0:
        raise ValueError(f"epsilons and deltas must be non-empty and of equal length, got {eps.size}, {dl.size}")
    for i, (e, d) in enumerate(zip(eps.tolist(), dl.tolist())):
        check_nonnegative(f"epsilons[{i}]", e, allow_inf=True)
        check_probability(f"deltas[{i}]", d)
    fin = np.isfinite(eps)  # (∞, δ)-DP promises nothing: f_{∞,δ} = 0, the line 0 already present
    e_f, keep = eps[fin], 1.0 - dl[fin]
    grow, shrink = np.exp(e_f), np.exp(-e_f)
    intercepts = np.concatenate([[0.0], keep, shrink * keep])
    slopes = np.concatenate([[0.0], -grow, -shrink])
    xs, ys = upper_envelope(intercepts, slopes)
    ys = np.minimum.accumulate(np.clip(ys, 0.0, 1.0))
    good = np.r_[True, np.diff(xs) > 0.0]
    return PiecewiseLinearTradeOff(xs[good], ys[good], is_symmetric=True)


# ---------------------------------------------------------------------------------------------
# Brackets.
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TradeOffBracket:
    """Certified curves ``lower(α) ≤ f(α) ≤ upper(α)`` for an unknown trade-off function f.

    ``lower`` is the safe side (a valid f-DP guarantee); ``upper`` says how much better the truth can be.
    """

    lower: TradeOff
    upper: TradeOff

    def __call__(self, alpha: npt.ArrayLike) -> tuple[float | FloatArray, float | FloatArray]:
        """(lower(α), upper(α))."""
        return self.lower(alpha), self.upper(alpha)

    def at(self, alpha: float) -> Bound:
        """The bracket at one α as a :class:`~optcomp.Bound`."""
        lo = self.lower(alpha)
        hi = self.upper(alpha)
        return Bound(float(np.asarray(lo)), float(np.asarray(hi)))

"""Privacy amplification by subsampling in f-DP, and noisy SGD (Dong, Roth & Su §4–§5).

* :func:`subsample` — the operator C_p of DRS Thm 4.2 (subsampling WITHOUT replacement, m of n records,
  p = m/n): f_p = p f + (1 − p) Id, Id(α) = 1 − α, C_p(f) = min{f_p, f_p⁻¹}** (lower convex envelope).
  It is computed on an α grid and returned as a certified :class:`TradeOffBracket`.
* :func:`noisy_sgd_mu_estimate` — CLT values of μ for noisy SGD (approximations): Poisson sampling
  μ = p√(T(e^{1/σ²} − 1)), and DRS §5's formula for sampling without replacement.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from scipy.special import ndtr

from optcomp._numerics import (
    CURVE_ABSOLUTE_SLACK,
    FloatArray,
    check_int,
    check_positive,
    check_sampling_rate,
)
from optcomp.fdp._tradeoff import (
    PiecewiseLinearTradeOff,
    TradeOff,
    TradeOffBracket,
    _as_alpha,
    _lower_hull,
    alpha_grid,
)

__all__ = ["SUBSAMPLE_GRID_SIZE", "noisy_sgd_mu_estimate", "subsample"]

#: Uniform points of the default α grid for :func:`subsample` (plus geometric points at both ends).
SUBSAMPLE_GRID_SIZE: int = 4001


def _lower_vertices(x: FloatArray, y: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Vertices of a piecewise-linear u ≤ g for a convex, non-increasing g sampled at (x, y).

    On a cell [a, b], convexity gives g(t) ≥ g(a) + s_prev (t − a) and g(t) ≥ g(b) + s_next (t − b) with
    s_prev, s_next the secant slopes of the neighbouring cells; u is the max of these two lines (their
    intersection is the new vertex), then max(u, 0) with its zero crossings (g ≥ 0), and min(u, 1) (g ≤ 1).
    """
    s = np.diff(y) / np.diff(x)
    vx: list[float] = []
    vy: list[float] = []
    n = x.size
    # First cell: only the line from the right.
    if n >= 3:
        vx.append(0.0)
        vy.append(float(y[1] + s[1] * (x[0] - x[1])))
    else:
        vx.append(float(x[0]))
        vy.append(float(y[0]))
    for i in range(1, n - 1):
        vx.append(float(x[i]))
        vy.append(float(y[i]))
        if i + 1 < n - 1:
            sp, sn = s[i - 1], s[i + 1]
            if sn > sp:
                t = (y[i + 1] - y[i] + sp * x[i] - sn * x[i + 1]) / (sp - sn)
                t = min(max(t, x[i]), x[i + 1])
                left = y[i] + sp * (t - x[i])
                right = y[i + 1] + sn * (t - x[i + 1])
                vx.append(float(t))
                vy.append(float(min(left, right)))
    # Last cell: only the line from the left.
    if n >= 3:
        vx.append(1.0)
        vy.append(float(y[n - 2] + s[n - 3] * (x[n - 1] - x[n - 2])))
    else:
        vx.append(float(x[-1]))
        vy.append(float(y[-1]))
    ax = np.array(vx)
    ay = np.array(vy) - CURVE_ABSOLUTE_SLACK
    order = np.argsort(ax, kind="stable")
    ax, ay = ax[order], ay[order]
    # max(u, 0): insert zero crossings, then clip.
    cx: list[float] = [float(ax[0])]
    cy: list[float] = [float(ay[0])]
    for j in range(1, ax.size):
        y0, y1 = ay[j - 1], ay[j]
        if (y0 > 0.0 > y1) or (y0 < 0.0 < y1):
            cx.append(float(ax[j - 1] + (ax[j] - ax[j - 1]) * y0 / (y0 - y1)))
            cy.append(0.0)
        cx.append(float(ax[j]))
        cy.append(float(ay[j]))
    # g ≤ 1 as well, so u may be clipped at 1 (rounding in the extrapolated end lines can exceed it).
    return np.array(cx), np.clip(np.array(cy), 0.0, 1.0)


def _hull_pl(x: FloatArray, y: FloatArray) -> PiecewiseLinearTradeOff:
    # (1, 0) is on the graph of every trade-off function; with it the hull ends at its minimum, so the
    # convex hull is non-increasing (all points have y >= 0).
    x = np.concatenate([x, [1.0]])
    y = np.concatenate([y, [0.0]])
    order = np.lexsort((y, x))
    hx, hy = _lower_hull(x[order], y[order])
    return PiecewiseLinearTradeOff(hx, hy, is_symmetric=True)


def subsample(f: TradeOff, sampling_rate: float, *, grid: FloatArray | None = None) -> TradeOffBracket:
    """C_p(f) of DRS Thm 4.2: an f-DP mechanism run on a uniformly random subset of m = pn of the n
    records (sampling WITHOUT replacement) is C_p(f)-DP, C_p(f) = min{f_p, f_p⁻¹}**, f_p = p f + (1−p) Id.

    Computed on ``grid`` (default :func:`alpha_grid` with ``SUBSAMPLE_GRID_SIZE`` points) as a bracket:

    * ``upper``: lower convex hull of the sampled graph points of f_p and f_p⁻¹, each moved up (and its
      reflection right) by the evaluation slack CURVE_ABSOLUTE_SLACK — every such point lies on or above a
      graph whose epigraph is in the hull, so this is ≥ C_p(f) (an optimistic approximation);
    * ``lower``: lower convex hull of the vertices of piecewise-linear minorants of f_p (tangent-line
      valleys between grid points, see the convexity argument in ``_lower_vertices``) and of their
      reflections (minorants of f_p⁻¹), shifted down by a rounding slack — ≤ C_p(f): a CERTIFIED guarantee.

    The bracket width shrinks quadratically with the grid spacing; use ``lower`` for guarantees.

    Args:
        f: the trade-off function of the mechanism before subsampling.
        sampling_rate: p in (0, 1].
        grid: α points in [0, 1] (0 and 1 are added).
    """
    p = check_sampling_rate("sampling_rate", sampling_rate)
    g = alpha_grid(SUBSAMPLE_GRID_SIZE) if grid is None else _as_alpha(grid, "grid")
    xs = np.unique(np.concatenate([g, f.breakpoints(), [0.0, 1.0]]))
    fp = p * np.asarray(f(xs), dtype=np.float64) + (1.0 - p) * (1.0 - xs)
    fp = np.minimum.accumulate(np.clip(fp, 0.0, 1.0))
    fp_up = np.minimum(fp + CURVE_ABSOLUTE_SLACK, 1.0)  # computed fp may be below the truth by rounding
    upper = _hull_pl(np.concatenate([xs, fp_up]), np.concatenate([fp_up, xs]))
    vx, vy = _lower_vertices(xs, fp)
    lower = _hull_pl(np.concatenate([vx, vy]), np.concatenate([vy, vx]))
    return TradeOffBracket(lower=lower, upper=upper)


def noisy_sgd_mu_estimate(
    sampling_rate: float,
    noise_multiplier: float,
    steps: int,
    *,
    sampling: Literal["poisson", "without_replacement"] = "poisson",
) -> float:
    """CLT value of μ for T steps of noisy SGD with p√T → c (an APPROXIMATION, never a bound).

    * ``sampling="poisson"`` (Poisson subsampling, add/remove neighbours): μ = p√(T(e^{1/σ²} − 1)). This
      is the formula of ``shared/MATH.md`` and of Bu, Dong, Long & Su (2020, "Deep learning with Gaussian
      differential privacy"); our certified PLD ε for Poisson-subsampled Gaussians converges to the ε of
      this μ as T grows with p√T fixed (see the tests).
    * ``sampling="without_replacement"`` (DRS §5, built on Thm 4.2, substitution neighbours):
      μ = √2 · p√T · √(e^{1/σ²} Φ(1.5/σ) + 3Φ(−0.5/σ) − 2), the CLT limit of C_p(G_{1/σ})^{⊗T}.
      NOTE: ``shared/MATH.md`` attributes the Poisson formula to DRS §5; the numbers disagree (for
      c = 0.5, σ = 1, δ = 1e-5: ε = 2.70 vs 3.65); the certified PLD ε of sampling without
      replacement (optcomp.mechanisms.SubsampledWithoutReplacement) is 3.61–3.63 at T = 6400, while the
      Poisson PLD ε tends to 2.70, so this is the formula for DRS's setting.

    No error bound is attached: for finite T the true μ may be larger (the CLT is optimistic here).
    """
    p = check_sampling_rate("sampling_rate", sampling_rate)
    sigma = check_positive("noise_multiplier", noise_multiplier)
    t = check_int("steps", steps)
    inv = 1.0 / (sigma * sigma)
    if sampling == "poisson":
        return p * math.sqrt(t * math.expm1(inv))
    if sampling == "without_replacement":
        core = math.exp(inv) * float(ndtr(1.5 / sigma)) + 3.0 * float(ndtr(-0.5 / sigma)) - 2.0
        return math.sqrt(2.0) * p * math.sqrt(t * core)
    raise ValueError(f"sampling must be 'poisson' or 'without_replacement', got {sampling!r}")

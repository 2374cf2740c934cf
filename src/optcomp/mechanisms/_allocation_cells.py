"""The factor cells of one balls-in-bins epoch: Gaussian integrals over narrow cells, relative accuracy.

One factor of the epoch's likelihood ratio S/t (``docs/samplers.md`` §5) is X = e^ℓ, ℓ ~ N(−μ²/2, μ²)
under Q. In the shifted coordinate λ = ℓ − ln t the geometric grid x_j = t·e^{jh} has the *exact*
cell edges jh (h dyadic), and λ ~ N(m̃, μ²) with m̃ = −μ²/2 − ln t. For each cell [jh, (j+1)h) this
module computes, with a certified relative error per cell,

* the Q-mass q_j = ∫ φ,  the first moment r_j = E_Q[X; cell]/x_j = ∫ e^{λ − jh} φ  (the labelled law,
  Lemma D), and
* the two halves of the mean-preserving split (Lemma C step 1): the Q-mass sent to x_{j+1},
  ∫ κ(λ − jh) φ with κ(v) = (e^v − 1)/(e^h − 1), and the Q-mass sent to x_j, ∫ κ̄(λ − jh) φ with
  κ̄(v) = e^v (e^{h−v} − 1)/(e^h − 1) = 1 − κ(v).

**Why not differences of CDFs.** A cell of width h carries mass ≈ φ·h, while Φ at its edges is O(1):
the difference loses a factor ≈ 1/h of relative accuracy, and the split (q·e^h − m)/(e^h − 1) loses
another 1/h. At h = 2⁻¹¹ that is ≈ 5.7·10⁻⁷ of relative mass per factor, and the t-fold sum of the
epoch multiplies it by t (5.7·10⁻⁴ of excess mass at t = 1,000, which moved ε by 1e-4 relative).
Here every integrand is positive on the cell and no difference of large numbers is formed.

**The certificate, per cell.** With z = (jh − m̃)/μ and w = h/μ (the cell in standard units), each
integral is φ(z)·w·∫₀¹ g(hξ)·exp(−ξw(z + ξw/2)) dξ, evaluated by the K-point Gauss–Legendre rule.
Its truncation error is bounded by Trefethen's theorem for integrands analytic in the Bernstein
ellipse E_ρ of [0, w] (SIAM Review 50 (2008), Thm 4.5): |error| ≤ (w/2)·(64/15)·M·ρ^{−2K}/(ρ² − 1),
M = max |integrand| on E_ρ, which lies in the disc of radius R = (w/2)(ρ + 1/ρ)/2 about w/2. There
|exp(−zζ − ζ²/2)| is at most exp(|z + w/2|·(R + w/2) + R²/2 + w²/8) times its minimum on [0, w], and
|g| is at most g's bound on the disc (stated per g below), while the integral is at least that
minimum times w·∫₀¹ g(hξ) dξ; the smallest bound over ρ ∈ _RHOS is charged. Float evaluation adds
the rounding of the exponents (≤ 3u·(1 + z² + |z|w + w²) absolute), of exp/expm1 (2u each), of the
K-term positive sums (γ_{2K+4}) and of the nodes and weights (a few ulps, inside the same count).
The mean m̃ carries the rounding of ln t and μ²/2 (Δm): shifting a Gaussian by Δm moves a cell
integral by at most a relative exp(Δm(|z| + w + 1)/μ) − 1, also charged. Masses below the window
and the flag masses above it come from ``log_ndtr`` (assumption LAW_LOG_ERROR, as every law).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from scipy.special import log_ndtr, ndtri

from optcomp._numerics import ALLOCATION_LOW_VARIANCE, LAW_LOG_ERROR, FloatArray
from optcomp._rounding import gamma, rounding_error, widen_up

#: Gauss–Legendre nodes per cell.
_NODES = 8
#: Bernstein-ellipse parameters tried for the quadrature bound (the smallest bound is charged).
_RHOS = (4.0, 8.0, 16.0, 32.0, 64.0)
#: Largest span of the factor window in nats (e^{λ} of an edge must not overflow).
MAX_SPAN = 600.0


@dataclass(frozen=True)
class FactorCells:
    """One factor's cells j_lo ≤ j < j_hi of the grid step ``h`` (shifted coordinate λ = ℓ − ln t).

    Attributes:
        first: j_lo.
        q, r: the Q-mass and the first moment E_Q[X; cell]/x_j of each cell (values).
        up, down: the Q-masses each cell's split sends to x_{j+1} and to x_j (values).
        rel: a relative error bound of each value of the cell (all four share it).
        below: (upper Q-mass, upper E_Q[X]/x_{j_lo}, lower E_Q[X]/x_{j_lo}, lower Q-mass) of λ < j_lo·h.
    """

    first: int
    q: FloatArray
    r: FloatArray
    up: FloatArray
    down: FloatArray
    rel: FloatArray
    below: tuple[float, float, float, float]


def shift(mu: float, t: int) -> tuple[float, float]:
    """(m̃, Δm): the Q-mean −μ²/2 − ln t of λ and a bound on its rounding error (ln t within 1 ulp, μ² and
    the halving exact up to one rounding each, one sum)."""
    lt = math.log(t)
    m = -mu * mu / 2 - lt
    return m, rounding_error(8, mu * mu / 2 + lt + abs(m))


def window(mu: float, t: int, h: float, tail: float) -> tuple[int, int]:
    """Cell indices [j_lo, j_hi): λ_max = j_hi·h leaves P_t(some factor above) ≤ ``tail`` (z = Φ̄⁻¹(τ/2t),
    one μ of margin); λ_min = j_lo·h leaves a mean-preserving spread onto {0, x_min} of added variance
    x_min²·Q(ℓ < ℓ_min) ≤ ALLOCATION_LOW_VARIANCE·h² and a mass Q(ℓ < ℓ_min)^t at S = 0 of at most ``tail``."""
    lt = math.log(t)
    z = float(-ndtri(tail / (2.0 * t)))
    top = mu * mu / 2 + (z + 1.0) * mu
    j_hi = math.ceil((top - lt) / h)
    lo = -mu * mu / 2
    for _ in range(400):
        cand = lo - mu / 4
        lq = float(log_ndtr((cand + mu * mu / 2) / mu))
        if 2 * cand + lq < math.log(ALLOCATION_LOW_VARIANCE * h * h) and t * lq < math.log(tail):
            break
        lo = cand
    j_lo = math.floor((lo - lt) / h)
    if (j_hi - j_lo) * h > MAX_SPAN:
        raise ValueError(f"noise_multiplier={1 / mu!r} is too small for the balls-in-bins grid (span over {MAX_SPAN} nats)")
    return j_lo, j_hi


@functools.lru_cache(maxsize=1)
def _gauss_legendre() -> tuple[FloatArray, FloatArray]:
    """Nodes ξ_k in (0, 1) and weights ω_k (summing to 1) of the _NODES-point Gauss–Legendre rule."""
    x, w = np.polynomial.legendre.leggauss(_NODES)
    return (x + 1.0) / 2.0, w / 2.0


def _quadrature_bound(z: FloatArray, w: float, h: float, mu: float) -> FloatArray:
    """The relative truncation bound of the rule on every cell and every integrand g (module docstring):
    the smallest over ρ ∈ _RHOS of (32/15)·ρ^{−2K}/(ρ² − 1)·(max|g| on the disc / ∫₀¹g)·(exp ratio)."""
    e1 = math.expm1(h)
    mean_kappa = (e1 - h) / (h * e1)  # ∫₀¹ κ(hξ) dξ; ∫₀¹ κ̄ = 1 − it, ∫₀¹ e^{hξ} = e1/h ≥ 1, ∫₀¹ 1 = 1
    small = min(mean_kappa, 1.0 - mean_kappa)
    best = np.full(z.shape, np.inf)
    c = w / 2
    for rho in _RHOS:
        radius = c * (rho + 1.0 / rho) / 2.0
        reach = h / 2 + mu * radius  # |v| on the disc, v = μ·ζ
        g_max = max(math.exp(reach) * math.expm1(reach) / e1, math.exp(reach))  # κ, κ̄ (≤ this), 1, e^v
        ratio = np.abs(z + c) * (radius + c) + radius * radius / 2 + w * w / 8
        with np.errstate(over="ignore"):
            bound = (32.0 / 15.0) * rho ** (-2 * _NODES) / (rho * rho - 1.0) * (g_max / small) * np.exp(ratio)
        best = np.minimum(best, bound)
    return widen_up(best, 16)


def factor_cells(mu: float, t: int, h: float, j_lo: int, j_hi: int) -> FactorCells:
    """The cells j_lo ≤ j < j_hi of one factor on the grid step ``h`` (module docstring)."""
    m, dm = shift(mu, t)
    j = np.arange(j_lo, j_hi, dtype=np.float64)
    z = (j * h - m) / mu  # jh exact (h dyadic, |j| < 2^40)
    w = h / mu
    xi, om = _gauss_legendre()
    v = h * xi  # exact: h is a power of two
    u = xi * w
    with np.errstate(under="ignore"):
        gauss = np.exp(-u[None, :] * (z[:, None] + u[None, :] / 2))  # (cells, nodes)
        phi = np.exp(-z * z / 2) * (w / math.sqrt(2 * math.pi))
        e1 = math.expm1(h)
        kappa = np.expm1(v) / e1
        kappa_bar = np.exp(v) * np.expm1(h - v) / e1
        q = phi * (gauss @ om)
        r = phi * (gauss @ (om * np.exp(v)))
        up = phi * (gauss @ (om * kappa))
        down = phi * (gauss @ (om * kappa_bar))
    rounding = rounding_error(12, 1.0 + z * z + np.abs(z) * w + w * w) + gamma(2 * _NODES + 24)
    moved = np.expm1(dm * (np.abs(z) + w + 1.0) / mu)  # the Gaussian shifted by the error of m̃
    rel = widen_up(_quadrature_bound(z, w, h, mu) + rounding + moved, 8)
    return FactorCells(j_lo, q, r, up, down, rel, _below(mu, t, h, j_lo, m, dm))


def _below(mu: float, t: int, h: float, j_lo: int, m: float, dm: float) -> tuple[float, float, float, float]:
    """Envelopes of the Q-mass and of E_Q[X; ·]/x_min of λ < a = j_lo·h (x_min = t·e^a), from log_ndtr
    (LAW_LOG_ERROR); m̃ ± Δm moves the edge outward for each end. E_Q[e^ℓ; A] is the P-mass of A (under
    P, λ ~ N(m̃ + μ², μ²)), so E_Q[X; A]/x_min = P(A)·e^{−a}/t."""
    a = j_lo * h
    lt = math.log(t)
    lq_hi = float(log_ndtr((a - m + dm) / mu))
    lq_lo = float(log_ndtr((a - m - dm) / mu))
    lp_hi = float(log_ndtr((a - m - mu * mu + dm) / mu)) - a - lt  # E_Q[X; A]/x_min = P(A)·e^{−a}/t
    lp_lo = float(log_ndtr((a - m - mu * mu - dm) / mu)) - a - lt
    ends = np.array([lq_hi, lp_hi, lp_lo, lq_lo])
    slack = LAW_LOG_ERROR * np.maximum(1.0, np.abs(ends)) + rounding_error(16, 2 + np.abs(ends) + abs(a) + lt + abs(m) / mu)
    with np.errstate(under="ignore"):
        out = np.exp(ends + slack * np.array([1.0, 1.0, -1.0, -1.0]))
    return float(out[0]), float(out[1]), float(out[2]), float(out[3])


def flag_masses(mu: float, t: int, j_hi: int, h: float) -> tuple[float, float]:
    """Upper ends of P_t(F = 1) ≤ Φ̄(z) + (t−1)Φ̄(z + μ) and Q_t(F = 1) ≤ t·Φ̄(z + μ), F = {some λᵢ ≥ j_hi·h}
    (union bounds): under P one factor's λ ~ N(m̃ + μ², μ²), the others' N(m̃, μ²)."""
    m, dm = shift(mu, t)
    a = j_hi * h
    lp = float(log_ndtr(-(a - m - mu * mu - dm) / mu))
    lq = float(log_ndtr(-(a - m - dm) / mu))
    up = [math.exp(x + LAW_LOG_ERROR * max(1.0, abs(x)) + rounding_error(16, 2 + abs(x) + abs(a) + abs(m) / mu)) for x in (lp, lq)]
    return min(1.0, widen_up(up[0] + (t - 1) * up[1], 8)), min(1.0, widen_up(t * up[1], 8))

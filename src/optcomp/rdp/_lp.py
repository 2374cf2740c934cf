"""The linear program of the optimal conversion, solved by exchange (``docs/rdp.md`` §3).

Over laws of the privacy loss L = log(dP/dQ) on a grid of values ℓⱼ (P-mass pⱼ at ℓⱼ, Q-mass pⱼe^{−ℓⱼ}):

    maximise   Σ pⱼ (1 − e^{ε−ℓⱼ})₊                            (δ(ε) of the law)
    subject to Σ pⱼ = 1,  Σ pⱼ e^{−ℓⱼ} = 1                       (P and Q are probability laws)
               Σ pⱼ e^{(α−1)ℓⱼ − C̃_α} ≤ 1                        (D_α(P‖Q) ≤ r(α), C_α = (α − 1) r(α))
               Σ pⱼ e^{−αℓⱼ − C̃_α} ≤ 1                           (D_α(Q‖P) ≤ r(α): the reverse direction)
               Σ pⱼ ℓⱼ ≤ K̃,  Σ pⱼ (−ℓⱼ e^{−ℓⱼ}) ≤ K̃             (both KLs ≤ ρ: zCDP curves only, the α → 1 end)
               pⱼ ≥ 0,

with the caps tightened, C̃ = (1 − η)C and K̃ = (1 − η)K, when a witness with slack is wanted. Rows are
scaled so that every right-hand side is 1 and columns so that every column's largest entry is 1
(HiGHS's tolerances then mean what they say); the objective is divided by ``scale`` (an estimate of the
value) so that the duals are of order 1 at any δ. The **exchange** method adds the loss values where
the dual function g(ℓ) = ν + μe^{−ℓ} + Σλ_α e^{(α−1)ℓ−C̃_α} + Σκ_α e^{−αℓ−C̃_α} + λ₀ℓ − κ₀ℓe^{−ℓ} −
(1 − e^{ε−ℓ})₊ is most negative (an uncertified float scan; the certificate, :mod:`._dual`, proves
g ≥ −m everywhere afterwards) and, for zCDP curves, the orders where the current law exceeds the curve
most (``_violated_orders``; the witness check, :mod:`._witness`, proves feasibility at every order
afterwards). Nothing here is certified: this module only finds good candidates.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.optimize import linprog
from scipy.special import logsumexp

from optcomp._numerics import FloatArray
from optcomp._rounding import next_up, rounding_error, widen_up

#: Columns whose rows reach e^{this} are left out (their mass would be below e^{−this}; overflow guard).
_LOG_COLUMN_CAP = 600.0
#: The loss window reaches the values where a mass of e^{−this}·scale is still allowed by every order.
_LOG_WINDOW = 40.0
#: Initial loss grid points across the window.
_INITIAL_POINTS = 192
#: Points of the dual function's scan across the (padded) window, and of its local refinement.
_SCAN_POINTS = 6144
_REFINE_POINTS = 48
#: Relative step of the finite differences that place the Newton step beside a support point.
_NEWTON_STEP = 1e-5
#: A dip is a violation only below −(this many ulps of Σ|terms|): shallower ones are rounding noise.
_NOISE_UNITS = 64
#: HiGHS's primal and dual feasibility tolerances on the scaled problem.
_HIGHS_TOLERANCE = 1e-9
#: A dual violation smaller than this times the LP's value is not worth a new column.
_SCAN_TOLERANCE = 1e-9
#: Extra width scanned on each side of the window.
_SCAN_PAD = 8.0
#: Order scan of the zCDP exchange: α − 1 from this up to the largest useful order, geometric.
_ORDER_SCAN_MIN = 1e-7
_ORDER_SCAN_POINTS = 4096
#: Exchange rounds before the search stops with what it has.
_MAX_ROUNDS = 60


@dataclass(frozen=True, slots=True)
class Problem:
    """The constraint data of one conversion.

    Attributes:
        orders: the orders α > 1 of the rows.
        caps: C_α = (α − 1)·r(α), rounded up (the curve's values).
        kl: the bound K on both KLs (zCDP curves: ρ), or ``None``.
        rho: the zCDP ρ when the curve is stated at every order (the exchange may add orders), else ``None``.
    """

    orders: FloatArray
    caps: FloatArray
    kl: float | None
    rho: float | None


@dataclass(frozen=True, slots=True)
class Solution:
    """One LP solution: the law on the grid and the dual multipliers (uncertified floats).

    Attributes:
        losses, masses: the grid ℓⱼ kept and the P-masses pⱼ (≥ 0).
        value: the LP's optimal value (≈ δ).
        orders, tilted: the orders of the rows and their tightened caps C̃_α.
        nu, mu: multipliers of Σp = 1 and Σpe^{−ℓ} = 1 (any sign).
        lam, kappa: multipliers of the forward and reverse rows (≥ 0 after clipping).
        lam_kl, kappa_kl: multipliers of the forward and reverse KL rows (0 without them).
        kl_tilted: K̃ (0 without KL rows).
    """

    losses: FloatArray
    masses: FloatArray
    value: float
    orders: FloatArray
    tilted: FloatArray
    nu: float
    mu: float
    lam: FloatArray
    kappa: FloatArray
    lam_kl: float
    kappa_kl: float
    kl_tilted: float


def loss_window(problem: Problem, epsilon: float, scale: float) -> tuple[float, float]:
    """The loss values where a mass of e^{−_LOG_WINDOW}·scale is allowed by every order (and ε + 1)."""
    reach = _LOG_WINDOW + max(0.0, -math.log(max(scale, math.ulp(0.0))))
    a, c = problem.orders, problem.caps
    high = float(np.min((c + reach) / (a - 1.0)))
    low = -float(np.min((c + reach) / a))
    return min(low, -1.0), max(high, epsilon + 1.0)


def initial_grid(problem: Problem, epsilon: float, scale: float) -> FloatArray:
    """An even grid across :func:`loss_window`, with 0 and ε added."""
    low, high = loss_window(problem, epsilon, scale)
    return np.unique(np.concatenate([np.linspace(low, high, _INITIAL_POINTS), [0.0, epsilon]]))


def _rows(losses: FloatArray, orders: FloatArray, tilted: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Exponents of the forward and reverse rows (orders × losses)."""
    fwd = (orders[:, None] - 1.0) * losses[None, :] - tilted[:, None]
    rev = -orders[:, None] * losses[None, :] - tilted[:, None]
    return fwd, rev


def solve(problem: Problem, losses: FloatArray, epsilon: float, *, eta: float, scale: float,
          polish: bool = False) -> Solution:
    """The LP on the grid ``losses`` with caps tightened by ``eta`` (module docstring); with ``polish``, the
    duals refined on the support (:func:`_polish`).

    Raises:
        ArithmeticError: HiGHS did not report an optimum (the caller falls back to the closed form).
    """
    tilted = (1.0 - eta) * problem.caps
    fwd, rev = _rows(losses, problem.orders, tilted)
    keep = (np.max(np.maximum(fwd, rev), axis=0) <= _LOG_COLUMN_CAP) & (-losses <= _LOG_COLUMN_CAP)
    ell, fwd, rev = losses[keep], fwd[:, keep], rev[:, keep]
    with np.errstate(under="ignore"):
        blocks = [np.exp(fwd), np.exp(rev)]
    rhs = [np.ones(problem.orders.size), np.ones(problem.orders.size)]
    kl_tilted = 0.0
    if problem.kl is not None:
        kl_tilted = (1.0 - eta) * problem.kl
        blocks.insert(0, np.stack([ell, -ell * np.exp(-ell)]))
        rhs.insert(0, np.array([kl_tilted, kl_tilted]))
    a_ub, b_ub = np.concatenate(blocks), np.concatenate(rhs)
    a_eq = np.stack([np.ones_like(ell), np.exp(-ell)])
    gain = -np.expm1(np.minimum(epsilon - ell, 0.0))  # (1 − e^{ε−ℓ})₊
    col = 1.0 / np.maximum(np.max(np.abs(a_ub), axis=0), np.max(a_eq, axis=0))
    res = linprog(-gain * col / scale, A_ub=a_ub * col, b_ub=b_ub, A_eq=a_eq * col, b_eq=[1.0, 1.0],
                  bounds=(0.0, None), method="highs",
                  options={"primal_feasibility_tolerance": _HIGHS_TOLERANCE,
                           "dual_feasibility_tolerance": _HIGHS_TOLERANCE})
    if res.status != 0 or res.x is None:
        raise ArithmeticError(f"the conversion LP did not solve: {res.message}")
    masses = np.maximum(np.asarray(res.x) * col, 0.0)
    y = np.concatenate([-np.asarray(res.eqlin.marginals), np.maximum(-np.asarray(res.ineqlin.marginals), 0.0)]) * scale
    if polish:
        y = _polish(np.concatenate([a_eq, a_ub]), gain, masses > 0.0, y)
    nu, mu = float(y[0]), float(y[1])
    duals = y[2:]
    n = problem.orders.size
    lam_kl, kappa_kl = (float(duals[0]), float(duals[1])) if problem.kl is not None else (0.0, 0.0)
    off = 2 if problem.kl is not None else 0
    return Solution(ell, masses, float(-res.fun * scale), problem.orders, tilted, float(nu), float(mu),
                    duals[off:off + n], duals[off + n:off + 2 * n], lam_kl, kappa_kl, kl_tilted)


def _polish(matrix: FloatArray, gain: FloatArray, support: npt.NDArray[np.bool_], y: FloatArray) -> FloatArray:
    """HiGHS's duals refined so that g = 0 exactly (in float) at the support columns: the equalities and the
    rows with a positive dual solved by least squares on the support (complementary slackness). Its
    tolerances act on the scaled problem, where a column of tiny scale (an atom of mass ~δ) leaves g off by
    far more than δ·1e-9 there; the refined duals are kept only if they stay ≥ 0 on the inequality rows.
    Either way nothing here is certified (:mod:`._dual` proves whatever is returned)."""
    rows = np.concatenate([[True, True], y[2:] > 0.0])
    if not np.any(support) or not np.any(rows):
        return y
    a = matrix[rows][:, support].T
    solved, *_ = np.linalg.lstsq(a, gain[support], rcond=None)
    if not np.all(np.isfinite(solved)) or np.any(solved[2:] < 0.0):
        return y
    out = np.zeros_like(y)
    out[rows] = solved
    return out


def dual_function(sol: Solution, epsilon: float, losses: FloatArray, *, noise: bool = False) -> FloatArray:
    """g(ℓ) of the module docstring at ``losses`` (float, uncertified; ``inf`` where a term overflows).
    With ``noise``, g minus a bound on its rounding noise (a few units of Σ|terms|): a dip shallower than
    that is float noise, not a violation worth a column."""
    ell = np.asarray(losses, dtype=np.float64)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        parts = [sol.nu + 0.0 * ell, sol.mu * np.exp(-ell), sol.lam_kl * ell, -sol.kappa_kl * ell * np.exp(-ell)]
        parts += [weight * np.exp(rate * ell - shift) for weight, rate, shift in _exp_terms(sol)]
        parts.append(np.expm1(np.minimum(epsilon - ell, 0.0)))
        g = np.sum(parts, axis=0)
        if noise:
            g = g + rounding_error(_NOISE_UNITS, np.sum(np.abs(parts), axis=0))
    return np.where(np.isnan(g), np.inf, g)


def _exp_terms(sol: Solution) -> list[tuple[float, float, float]]:
    """(weight, rate, shift) of the forward and reverse terms with a positive multiplier."""
    out = [(float(w), float(a - 1.0), float(c)) for w, a, c in zip(sol.lam, sol.orders, sol.tilted, strict=True) if w > 0]
    out += [(float(w), float(-a), float(c)) for w, a, c in zip(sol.kappa, sol.orders, sol.tilted, strict=True) if w > 0]
    return out


def _local_minima(values: FloatArray) -> list[int]:
    """Indices of the local minima of a sampled function (plateaus give their first point)."""
    left = np.concatenate([[True], values[1:] < values[:-1]])
    right = np.concatenate([values[:-1] <= values[1:], [True]])
    return [int(i) for i in np.flatnonzero(left & right)]


def violated_losses(sol: Solution, epsilon: float, window: tuple[float, float]) -> FloatArray:
    """Loss values where g is most negative: local minima below −tolerance·value of an even scan of the
    padded window plus a fine scan between the neighbours of every support point (where g touches 0 and
    dips hide between grid columns), each refined once."""
    low, high = window[0] - _SCAN_PAD, window[1] + _SCAN_PAD
    support = sol.losses[sol.masses > 0.0]
    pos = np.searchsorted(sol.losses, support)
    left = sol.losses[np.maximum(pos - 1, 0)]
    right = sol.losses[np.minimum(pos + 1, sol.losses.size - 1)]
    near = (left[:, None] + (right - left)[:, None] * np.linspace(0.0, 1.0, _REFINE_POINTS)[None, :]).ravel()
    scan = np.unique(np.concatenate([np.linspace(low, high, _SCAN_POINTS), [epsilon], near]))
    g = dual_function(sol, epsilon, scan, noise=True)
    allow = -_SCAN_TOLERANCE * max(sol.value, math.ulp(0.0))
    found = []
    for i in _local_minima(g):
        if g[i] >= allow:
            continue
        fine = np.append(np.linspace(scan[max(i - 1, 0)], scan[min(i + 1, scan.size - 1)], _REFINE_POINTS), scan[i])
        found.append(float(fine[int(np.argmin(dual_function(sol, epsilon, fine)))]))
    # g = 0 at a support point with g' ≠ 0 dips just beside it (depth g'²/2g''): one Newton step finds it
    step = _NEWTON_STEP * np.maximum(1.0, np.abs(support))
    g0, gp, gm = (dual_function(sol, epsilon, support + k * step) for k in (0.0, 1.0, -1.0))
    slope, bend = (gp - gm) / (2.0 * step), (gp - 2.0 * g0 + gm) / (step * step)
    with np.errstate(divide="ignore", invalid="ignore"):
        moved = np.where(bend > 0.0, support - slope / bend, support)
    dips = moved[(moved != support) & (dual_function(sol, epsilon, moved, noise=True) < allow)]
    return np.asarray(found + dips.tolist(), dtype=np.float64)


def violated_orders(sol: Solution, rho: float, eta: float) -> FloatArray:
    """zCDP curves: the orders where the grid law's D_α (either direction) exceeds (1 − η/2)αρ most."""
    support = sol.masses > 0.0
    ell, logp = sol.losses[support], np.log(sol.masses[support])
    top = max(float(np.max(np.abs(ell))) / max(rho, math.ulp(0.0)), 2.0)
    alphas = 1.0 + np.geomspace(_ORDER_SCAN_MIN, top, _ORDER_SCAN_POINTS)
    cap = (1.0 - eta / 2.0) * rho * alphas * (alphas - 1.0)
    out = []
    for exponent in ((alphas[:, None] - 1.0) * ell[None, :], -alphas[:, None] * ell[None, :]):
        excess = np.asarray(logsumexp(logp[None, :] + exponent, axis=1), dtype=np.float64) - cap
        out += [float(alphas[i]) for i in _local_minima(-excess) if excess[i] > 0.0]
    return np.asarray(out, dtype=np.float64)


def exchange(problem: Problem, epsilon: float, *, eta: float, scale: float,
             losses: FloatArray | None = None) -> tuple[Solution, Problem, FloatArray]:
    """The LP solved by exchange: columns (and, for zCDP curves, orders) added until none is violated.

    Returns:
        The last solution, the problem with the orders it used, and its grid (to warm-start the next LP).
    """
    grid = initial_grid(problem, epsilon, scale) if losses is None else losses
    window = (float(grid[0]), float(grid[-1]))
    sol = solve(problem, grid, epsilon, eta=eta, scale=scale)
    for _ in range(_MAX_ROUNDS):
        new_losses = violated_losses(sol, epsilon, window)
        new_orders = violated_orders(sol, problem.rho, eta) if problem.rho is not None else np.empty(0)
        new_orders = np.setdiff1d(new_orders, problem.orders)
        new_losses = np.setdiff1d(new_losses, grid)  # a column already there: HiGHS's tolerance, not a cut
        if new_losses.size == 0 and new_orders.size == 0:
            break
        if new_orders.size and problem.rho is not None:  # orders are added only to a stated zCDP curve
            orders = np.concatenate([problem.orders, new_orders])
            order = np.argsort(orders)
            caps = np.concatenate([problem.caps, zcdp_caps(problem.rho, new_orders)])
            problem = Problem(orders[order], caps[order], problem.kl, problem.rho)
        grid = np.unique(np.concatenate([grid, new_losses]))
        sol = solve(problem, grid, epsilon, eta=eta, scale=scale)
    return sol, problem, grid


def zcdp_caps(rho: float, orders: FloatArray) -> FloatArray:
    """C_α = (α − 1)αρ, rounded up (three roundings: two products and the order's α − 1)."""
    caps = (orders - 1.0) * (orders * rho)
    return np.asarray(next_up(widen_up(caps, 8)), dtype=np.float64)

"""Discretisation of one privacy-loss law on a uniform grid, with certified error bookkeeping.

One mass vector serves every bound (privacy buckets, Meiser–Mohammadi §3; ``docs/pld.md`` §1):
cell ``c`` is the loss interval [cΔ, (c+1)Δ) and carries y_c = P(L ∈ cell) (atoms added exactly).
Placed at cΔ it is the optimistic (round-down) law, at (c+1)Δ the pessimistic (round-up) law, and at
the midpoint (c+½)Δ the *mid-placed* law L̃ with rounding error R = L̃ − L ∈ [−Δ/2, Δ/2]. Besides the
vector, :func:`discretise` certifies

* ``dropped``: the finite P-mass outside the grid window (its tails);
* ``mass_error``: ν, a bound on how much the floating-point error of the computed masses can move
  any [0, 1]-valued, 1-Lipschitz statistic of a sum: the total variation of the rounding in the mass
  formula plus Δ·Σ_e θ_e for the error θ_e of the law's CDF at each edge (``_cell_masses``); the
  law's log tail functions are assumed accurate to :data:`~optcomp._numerics.LAW_LOG_ERROR`;
* ``mean_error``: a bracket of E[R | kept] from each cell's P- and Q-masses: with z = ln(m/q) − u
  (u the cell's lower edge, w its width), Jensen gives E[L | cell] ≥ u + z and the chord of e^{−L}
  gives E[L | cell] ≤ u + w(1 − e^{−z})/(1 − e^{−w}) — a bracket of width O(w²), no subdivision;
* ``error_range``: [r_min, r_max] ∋ R surely (Hoeffding's range);
* ``second_moment``: an upper bound on E[R² | kept] (Bernstein's variance), from sub-cell masses of
  the heaviest cells (``_second_moment``);
* the data of a Chernoff bound on E[e^{λL}] (per-cell chord bound, plus coarse cells in the far tail).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from optcomp._numerics import LAW_LOG_ERROR, UNIT_ROUNDOFF, FloatArray
from optcomp.mechanisms._law import ContinuousLoss, PrivacyLossLaw

#: Number of coarse cells covering the far upper tail (used by the Chernoff bound only).
_FAR_CELLS = 2048
#: log of the per-step tail mass beyond which the Chernoff data stop (mass there counts as +∞).
_LOG_FAR_TAIL = math.log(1e-300) - 50.0
#: Fine cells merged per Chernoff row (the chord bound loses a factor e^{λ²W²/8} per step, W the row width).
_CHERNOFF_BLOCK = 8
#: Cells (the heaviest) and sub-cells per cell used to bound the second moment of the rounding error.
#: Only as many of the heaviest cells as carry all but ``_VARIANCE_LIGHT`` of the mass are split.
_VARIANCE_CELLS = 32768
_VARIANCE_SPLIT = 16
_VARIANCE_LIGHT = 1e-5


class GridTooLargeError(ValueError):
    """The requested accuracy needs a grid or FFT longer than the engine's memory cap allows.

    Raised instead of silently coarsening the grid; use a larger ``Accuracy.grid_step``.
    """


@dataclass(frozen=True)
class ChernoffData:
    """Cells for a certified upper bound on log E[e^{λL}; L finite, L ≤ far edge] (λ > 0).

    Each row is a cell [lower, lower + width] with an upper bound on its P-mass (``log_mass``) and
    ``frac`` ≥ (E[L | cell] − lower)/width; by convexity E[e^{λL}; cell] ≤
    mass·((1 − frac)e^{λ·lower} + frac·e^{λ(lower + width)}). Atoms are rows of width 0.
    """

    log_mass: FloatArray
    lower: FloatArray
    width: FloatArray
    frac: FloatArray
    far_mass: float  # P(L finite and beyond the last cell), counted as +∞ by the bound


@dataclass(frozen=True)
class DiscreteLaw:
    """One law on the grid: ``masses[j]`` is the P-mass of cell ``first_cell + j`` (see module doc)."""

    step: float
    first_cell: int
    masses: FloatArray
    p_inf: float
    dropped: float
    mass_error: float
    mean_error: tuple[float, float]
    second_moment: float
    error_range: tuple[float, float]
    chernoff: ChernoffData

    @property
    def kept(self) -> float:
        """Σ masses (the sub-probability that stays on the grid), rounded up."""
        return float(np.sum(self.masses)) * (1 + 4 * math.log2(self.masses.size + 2) * UNIT_ROUNDOFF)


def _theta(logv: FloatArray) -> FloatArray:
    """Absolute error bound of exp(logv) when logv has error LAW_LOG_ERROR·max(1, |logv|)."""
    with np.errstate(invalid="ignore", over="ignore"):
        err = LAW_LOG_ERROR * np.maximum(1.0, np.abs(logv))
        out = np.exp(logv) * np.expm1(err * 1.01) * 1.01
    return np.where(np.isneginf(logv), 0.0, out)


def _cell_masses(logcdf: FloatArray, logsf: FloatArray) -> tuple[FloatArray, FloatArray, float, float]:
    """Masses of the cells between consecutive edges, with their error budget.

    A cell uses CDF differences when its upper edge lies below the median, SF differences otherwise,
    so every difference is of two numbers of the small side (relative accuracy in both tails).

    Returns:
        ``(masses, cell_err, tv, transport)``: ``cell_err[c]`` ≥ |m̂_c − m_c|; the computed vector is
        the exact discretisation of a law whose CDF at each edge e is off by at most θ_e (the error of
        the tail function there), up to a total-variation error ``tv``; ``transport`` = Σ_e θ_e.
        Moving mass θ_e across one edge changes any 1-Lipschitz [0, 1]-valued statistic of a sum by at
        most θ_e·Δ (summation by parts), which is how :class:`_Direction` charges it.
    """
    use_cdf = (logcdf <= logsf)[..., 1:]
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        m_cdf = np.exp(logcdf[..., 1:]) * -np.expm1(logcdf[..., :-1] - logcdf[..., 1:])
        m_sf = np.exp(logsf[..., :-1]) * -np.expm1(logsf[..., 1:] - logsf[..., :-1])
    m_cdf = np.where(np.isneginf(logcdf[..., 1:]), 0.0, m_cdf)
    m_sf = np.where(np.isneginf(logsf[..., :-1]), 0.0, m_sf)
    masses = np.maximum(np.where(use_cdf, m_cdf, m_sf), 0.0)
    tc, ts = _theta(logcdf), _theta(logsf)
    err = (
        np.where(use_cdf, tc[..., 1:] + tc[..., :-1], ts[..., 1:] + ts[..., :-1]) + 8 * UNIT_ROUNDOFF * masses
    )
    edge_theta = np.where(logcdf <= logsf, tc, ts)
    # rounding of the mass formula, the cdf/sf switch at the median, and the two boundary edges
    # (summation by parts leaves g_first·G(first) and g_last·G(last), charged at full weight)
    tv = (
        8 * UNIT_ROUNDOFF * float(np.sum(masses))
        + float(np.max(tc + ts))
        + float(np.sum(edge_theta[..., 0]) + np.sum(edge_theta[..., -1]))
    )
    return masses, err, tv, float(np.sum(edge_theta)) * (1 + 4 * edge_theta.size * UNIT_ROUNDOFF)


def _tail_point(
    fn: Callable[[FloatArray], FloatArray], target: float, sign: float, lo: float, hi: float
) -> float:
    """A loss x (within [lo, hi]) with fn(x) ≤ target, fn monotone; sign=+1: search upwards.

    Doubling steps from 0 (or the finite support end) until fn ≤ target, then 60 bisection steps;
    the point returned always satisfies fn(x) ≤ target (or is the support end).
    """

    def val(x: float) -> float:
        return float(fn(np.array([x]))[0])

    start = 0.0 if lo <= 0.0 <= hi else (lo if math.isfinite(lo) else hi)
    step = 1.0
    x = start
    for _ in range(80):
        cand = x + sign * step
        bound = hi if sign > 0 else lo
        if ((sign > 0 and cand >= bound) or (sign < 0 and cand <= bound)) and math.isfinite(bound):
            return bound
        if val(cand) <= target:
            a, b = x, cand
            for _ in range(60):
                mid = 0.5 * (a + b)
                if val(mid) <= target:
                    b = mid
                else:
                    a = mid
            return b
        x = cand
        step *= 2.0
    raise GridTooLargeError(f"could not find the tail of the privacy-loss law below mass exp({target})")


def _mean_offsets(
    edges: FloatArray, m: FloatArray, m_err: FloatArray, q: FloatArray, q_err: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Bracket [lo, hi] of E[L | cell] − lower edge, from P-mass m and Q-mass q of each cell.

    Jensen: q/m = E[e^{−L} | cell] ≥ e^{−E[L|cell]}; chord of the convex e^{−L} on [u, u+w]:
    q/m ≤ e^{−u} + (E[L|cell] − u)(e^{−u−w} − e^{−u})/w. With z = ln(m/q) − u ∈ [0, w]:
    z ≤ E[L|cell] − u ≤ w(1 − e^{−z})/(1 − e^{−w}). Errors of m, q widen z; inconsistent or empty
    cells get the trivial bracket [0, w].
    """
    u = edges[:-1]
    w = np.diff(edges)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        z = np.log(m) - np.log(q) - u
        rel = m_err / m + q_err / q
        dz = -np.log1p(-np.minimum(rel, 0.5)) * 1.01 + 8 * UNIT_ROUNDOFF * (np.abs(z) + np.abs(u) + 1)
        z_lo = z - dz
        z_hi = z + dz
        ok = np.isfinite(z) & (rel < 0.5) & (z_hi >= 0) & (z_lo <= w)
        z_lo = np.clip(np.where(ok, z_lo, 0.0), 0.0, w)
        z_hi = np.clip(np.where(ok, z_hi, w), 0.0, w)
        off_hi = w * (-np.expm1(-z_hi)) / (-np.expm1(-w))
    off_hi = np.minimum(np.where(np.isfinite(off_hi), off_hi * (1 + 8 * UNIT_ROUNDOFF), w), w)
    off_lo = np.maximum(z_lo * (1 - 8 * UNIT_ROUNDOFF), 0.0)
    off_hi = np.maximum(off_hi, off_lo)
    return off_lo, off_hi


def _clip_edges(edges: FloatArray, cont: ContinuousLoss) -> FloatArray:
    return np.clip(edges, cont.lower, cont.upper)


def _continuous_cells(
    cont: ContinuousLoss, edges: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, float, float]:
    """P-masses, their errors, the bracket of conditional-mean offsets, and (tv, transport) budgets."""
    x = _clip_edges(edges, cont)
    m, m_err, tv, transport = _cell_masses(cont.p_logcdf(x), cont.p_logsf(x))
    q, q_err, _, _ = _cell_masses(cont.q_logcdf(x), cont.q_logsf(x))
    off_lo, off_hi = _mean_offsets(edges, m, m_err, q, q_err)
    return m, m_err, off_lo, off_hi, tv, transport


def _second_moment(
    cont: ContinuousLoss, edges: FloatArray, masses: FloatArray, mid_off: FloatArray, h: float
) -> float:
    """Upper bound on Σ_c E[R²; L ∈ cell c] over the continuous part (R = (c+½)Δ − L).

    The heaviest cells (at most ``_VARIANCE_CELLS``, enough to carry all but ``_VARIANCE_LIGHT`` of
    the mass) are split into ``_VARIANCE_SPLIT`` sub-cells: on a sub-cell
    [a, b] of a cell with lower edge u, R ∈ [u + mid_off − b, u + mid_off − a], so R² is at most the
    larger square of the two ends; the remaining cells use R² ≤ h². Sub-cell mass errors are charged
    at h².
    """
    n = masses.size
    top = (
        np.argpartition(masses, n - _VARIANCE_CELLS)[n - _VARIANCE_CELLS :]
        if n > _VARIANCE_CELLS
        else np.arange(n)
    )
    top = top[np.argsort(masses[top])[::-1]]
    covered = np.cumsum(masses[top])
    enough = int(np.searchsorted(covered, (1 - _VARIANCE_LIGHT) * float(np.sum(masses)))) + 1
    heavy = top[: min(enough, top.size)]
    u = edges[:-1][heavy]
    w = np.diff(edges)[heavy]
    frac = np.linspace(0.0, 1.0, _VARIANCE_SPLIT + 1)
    sub = u[:, None] + w[:, None] * frac[None, :]
    sub[:, -1] = edges[1:][heavy]
    x = _clip_edges(sub, cont)
    sm, sm_err, _, _ = _cell_masses(
        cont.p_logcdf(x.ravel()).reshape(x.shape), cont.p_logsf(x.ravel()).reshape(x.shape)
    )
    mid = (u + mid_off[heavy])[:, None]
    r_sq = np.maximum((mid - sub[:, 1:]) ** 2, (mid - sub[:, :-1]) ** 2)
    r_sq = np.minimum(r_sq, h * h)
    light = float(np.sum(masses)) - float(np.sum(masses[heavy]))
    total = float(np.sum(sm * r_sq)) + h * h * (float(np.sum(sm_err)) + max(light, 0.0))
    return total * (1 + 8 * _VARIANCE_SPLIT * UNIT_ROUNDOFF) + 16 * UNIT_ROUNDOFF * h * h


def _blocks(
    m: FloatArray, m_err: FloatArray, lower: FloatArray, width: FloatArray, off_hi: FloatArray, size: int
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """Merge consecutive cells into blocks for the Chernoff rows: (log mass, lower, width, frac)."""
    n = m.size
    pad = (-n) % size
    mm = np.concatenate([m + m_err, np.zeros(pad)]).reshape(-1, size)
    lo = np.concatenate([lower, np.full(pad, lower[-1])]).reshape(-1, size)
    hi = np.concatenate([lower + width, np.full(pad, lower[-1] + width[-1])]).reshape(-1, size)
    mean_hi = np.concatenate([(lower + off_hi), np.zeros(pad)]).reshape(-1, size)
    bm = mm.sum(axis=1)
    b_lo = lo[:, 0]
    b_w = hi.max(axis=1) - b_lo
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = ((mm * (mean_hi - b_lo[:, None])).sum(axis=1) / bm) / b_w
        lbm = np.log(bm)
    frac = np.where(
        np.isfinite(frac), np.clip(frac * (1 + 16 * UNIT_ROUNDOFF) + 16 * UNIT_ROUNDOFF, 0, 1), 1.0
    )
    return lbm, b_lo, b_w, frac


def discretise(law: PrivacyLossLaw, step: float, log_tail: float, max_cells: int) -> DiscreteLaw:
    """Discretise ``law`` (its P side) on the grid of step ``step`` (module docstring).

    Args:
        law: the exact privacy-loss law.
        step: grid step Δ.
        log_tail: log of the P-mass each continuous tail may leave outside the window (and log of
            the smallest atom mass kept inside the window).
        max_cells: the largest window allowed.

    Raises:
        GridTooLargeError: if the window would exceed ``max_cells``.
    """
    cont = law.continuous
    atoms, atom_p = law.atom_losses, law.atom_p
    keep = atom_p > math.exp(log_tail) / max(1, atoms.size)
    lo_pts: list[float] = []
    hi_pts: list[float] = []
    if np.any(keep):
        lo_pts.append(float(atoms[keep][0]))
        hi_pts.append(float(atoms[keep][-1]))
    if cont is not None:
        lo_pts.append(_tail_point(cont.p_logcdf, log_tail, -1.0, cont.lower, cont.upper))
        hi_pts.append(_tail_point(cont.p_logsf, log_tail, 1.0, cont.lower, cont.upper))
    if not lo_pts:  # all mass at ±∞ (or dropped atoms): one empty cell
        lo_pts, hi_pts = [0.0], [0.0]
    a, b = min(lo_pts), max(hi_pts)
    c_lo = math.floor(a / step) - 1
    c_hi = math.floor(b / step) + 1
    n = c_hi - c_lo + 1
    if n > max_cells:
        raise GridTooLargeError(
            f"one privacy-loss law spans [{a:.6g}, {b:.6g}], which needs {n} grid cells of step {step:g} "
            f"(limit {max_cells}); use a larger Accuracy.grid_step"
        )
    cells = c_lo + np.arange(n, dtype=np.float64)
    edges = np.append(cells, c_hi + 1.0) * step
    max_abs_edge = float(max(abs(edges[0]), abs(edges[-1])))
    # Exact cell index of each loss is floor(x/Δ); floating point may misplace a value by an ulp,
    # which the half-range h below absorbs.
    h = 0.5 * step + 8 * UNIT_ROUNDOFF * (max_abs_edge + step)
    masses = np.zeros(n, dtype=np.float64)
    r_lo_sum: list[float] = []
    r_hi_sum: list[float] = []
    r_min, r_max = math.inf, -math.inf
    mass_error = 0.0
    mean_mass_error = 0.0
    second = 0.0
    transport = 0.0
    dropped = 0.0
    ch_rows: list[tuple[FloatArray, FloatArray, FloatArray, FloatArray]] = []
    far_mass = 0.0
    if cont is not None:
        m, m_err, off_lo, off_hi, tv, transport = _continuous_cells(cont, edges)
        masses += m
        mass_error += tv
        mean_mass_error = float(np.sum(m_err)) * (1 + 4 * n * UNIT_ROUNDOFF)
        mid_off = 0.5 * step + (cells * step - edges[:-1])  # (c+½)Δ − fl(cΔ)
        r_lo_sum.append(float(np.dot(m, mid_off - off_hi)))
        r_hi_sum.append(float(np.dot(m, mid_off - off_lo)))
        r_min, r_max = -h, h
        second += _second_moment(cont, edges, m, mid_off, h)
        x0 = _clip_edges(edges[:1], cont)
        x1 = _clip_edges(edges[-1:], cont)
        lcdf0 = float(cont.p_logcdf(x0)[0])
        lsf1 = float(cont.p_logsf(x1)[0])
        tail_lo = math.exp(lcdf0) + float(_theta(np.array([lcdf0]))[0])
        tail_hi = math.exp(lsf1) + float(_theta(np.array([lsf1]))[0])
        dropped += tail_lo + tail_hi
        # Chernoff rows: fine cells, lower tail placed at the first edge, coarse far-tail cells.
        with np.errstate(divide="ignore"):
            ch_rows.append(_blocks(m, m_err, edges[:-1], np.diff(edges), off_hi, _CHERNOFF_BLOCK))
            ch_rows.append(
                (
                    np.array([math.log(tail_lo) if tail_lo > 0 else -math.inf]),
                    edges[:1],
                    np.zeros(1),
                    np.zeros(1),
                )
            )
        far_mass = tail_hi
        if tail_hi > 0 and math.isfinite(b) and b < cont.upper:
            far = _tail_point(cont.p_logsf, _LOG_FAR_TAIL, 1.0, float(edges[-1]), cont.upper)
            far_edges = np.linspace(float(edges[-1]), max(far, float(edges[-1]) + step), _FAR_CELLS + 1)
            fm, fm_err, _, f_hi, _, _ = _continuous_cells(cont, far_edges)
            with np.errstate(divide="ignore"):
                ch_rows.append(
                    (np.log(fm + fm_err), far_edges[:-1], np.diff(far_edges), f_hi / np.diff(far_edges))
                )
            lsf_far = float(cont.p_logsf(_clip_edges(far_edges[-1:], cont))[0])
            far_mass = math.exp(lsf_far) + float(_theta(np.array([lsf_far]))[0])
    if atoms.size:
        inside = (atoms >= edges[0]) & (atoms < edges[-1])
        idx = np.floor(atoms[inside] / step).astype(np.int64) - c_lo
        idx = np.clip(idx, 0, n - 1)
        np.add.at(masses, idx, atom_p[inside])
        r = (idx + c_lo + 0.5) * step - atoms[inside]
        slack = 8 * UNIT_ROUNDOFF * (np.abs(atoms[inside]) + np.abs(r) + step)
        if r.size:
            r_lo_sum.append(float(np.dot(atom_p[inside], r - slack)))
            r_hi_sum.append(float(np.dot(atom_p[inside], r + slack)))
            second += float(np.dot(atom_p[inside], (np.abs(r) + slack) ** 2))
            r_min = min(r_min, float(np.min(r - slack)))
            r_max = max(r_max, float(np.max(r + slack)))
        dropped += math.fsum(atom_p[~inside]) * (1 + 4 * UNIT_ROUNDOFF * atoms.size)
        with np.errstate(divide="ignore"):
            ch_rows.append((np.log(atom_p), atoms, np.zeros(atoms.size), np.zeros(atoms.size)))
    kept = float(np.sum(masses))
    if kept > 0 and math.isfinite(r_min):
        lo_mean = math.fsum(r_lo_sum) / kept
        hi_mean = math.fsum(r_hi_sum) / kept
        rng = max(abs(r_min), abs(r_max))
        widen = (
            2 * rng * mean_mass_error / max(kept - mean_mass_error, kept * 0.5)
            + 16 * UNIT_ROUNDOFF * (rng + n * rng)
            + 4 * UNIT_ROUNDOFF * max_abs_edge
        )
        mean_error = (max(lo_mean - widen, r_min), min(hi_mean + widen, r_max))
        # E[R² | kept] ≤ second/kept_true, kept_true ≥ kept − mass error
        second_moment = min(second / max(kept - mean_mass_error, kept * 0.5), rng * rng) * (
            1 + 16 * UNIT_ROUNDOFF
        )
    else:
        second_moment = 0.0
        r_min = r_max = 0.0
        mean_error = (0.0, 0.0)
    ch = ChernoffData(
        log_mass=np.concatenate([r[0] for r in ch_rows]) if ch_rows else np.zeros(0),
        lower=np.concatenate([r[1] for r in ch_rows]) if ch_rows else np.zeros(0),
        width=np.concatenate([r[2] for r in ch_rows]) if ch_rows else np.zeros(0),
        frac=np.clip(np.concatenate([r[3] for r in ch_rows]), 0.0, 1.0) if ch_rows else np.zeros(0),
        far_mass=far_mass,
    )
    return DiscreteLaw(
        step=step,
        first_cell=c_lo,
        masses=masses,
        p_inf=float(law.p_inf),
        dropped=dropped * (1 + 8 * UNIT_ROUNDOFF),
        mass_error=mass_error + transport * step,
        mean_error=mean_error,
        second_moment=second_moment,
        error_range=(r_min, r_max),
        chernoff=ch,
    )

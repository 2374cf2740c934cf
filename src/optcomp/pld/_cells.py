"""One privacy-loss law → certified cell masses on the grid (``docs/pld.md`` §1).

Cell c is the loss interval [cΔ, (c+1)Δ). For one ordered pair (P, Q) with loss ℓ = ln dP/dQ,
m_c = P(ℓ ∈ cell c) and q_c = Q(ℓ ∈ cell c). :func:`cells` returns both with *envelopes*
(m⁻ ≤ m ≤ m⁺, q⁻ ≤ q ≤ q⁺) derived from the law's tail functions, which are assumed accurate to
:data:`~optcomp._numerics.LAW_LOG_ERROR` (absolute, relative to ``max(1, |log value|)``), and the
masses the window leaves out: the P-mass below it, the P-mass above it, and P(ℓ = +∞).

The window is set by the *continuous* tails only (down to a per-step P-mass ``exp(log_tail)``) and
by atoms heavy enough to matter; a light atom far outside (a truncated Laplace edge, a tiny δ-part)
does not widen it: it is counted with the tails instead. The two ends treat the tails differently
(upper: right tail to +∞, left tail onto the first grid point; lower: dropped), see
:mod:`optcomp.pld._dominating` and :mod:`optcomp.pld._dominated`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

# GridTooLargeError lives below the engines (a mechanism's LossScaleError is one); re-exported here
from optcomp._numerics import PLD_TAIL_XTOL, FloatArray, GridTooLargeError
from optcomp._rounding import cell_log_masses, log_theta, mag, rounding_error, widen_down, widen_up
from optcomp.mechanisms import ContinuousLoss, PrivacyLossLaw, log_tails

__all__ = [
    "BYTES_KEPT_PER_CELL",
    "BYTES_PER_CELL",
    "Cells",
    "GridTooLargeError",
    "cells",
    "window",
]

#: Relative accuracy assumed of a law's stored atom masses.
_ATOM_UNITS = 64
_ATOM_REL = rounding_error(_ATOM_UNITS)
#: The smallest normal double.
_NORMAL = float(np.finfo(np.float64).tiny)
#: Bytes of transient working memory per grid cell while one law is discretised (edges, four tail
#: functions, masses, envelopes).
BYTES_PER_CELL = 160
#: Bytes kept per grid cell of every law once discretised (split, P and tilted-Q log vectors).
BYTES_KEPT_PER_CELL = 32


@dataclass(frozen=True)
class Cells:
    """Cell masses of one law on the grid of step ``step``: cells ``first .. first + n − 1``.

    Attributes:
        lm_lo, lm_hi: envelopes of ln m_c (natural logs, so that deep-tail cells below the smallest
            double keep their relative accuracy; −inf for an empty cell).
        lq_lo, lq_hi: envelopes of ln q_c.
        below_hi: upper bound on the P-mass with finite loss below the window.
        above_hi: upper bound on the P-mass with finite loss at or above the window's end.
        p_inf_lo, p_inf_hi: envelopes of P(ℓ = +∞).
    """

    step: float
    first: int
    lm_lo: FloatArray
    lm_hi: FloatArray
    lq_lo: FloatArray
    lq_hi: FloatArray
    below_hi: float
    above_hi: float
    p_inf_lo: float
    p_inf_hi: float


#: Doubling points an unrefined tail search reads (losses up to about 2⁴⁰), the first of them in one call ...
_QUICK_DOUBLINGS = 40
#: ... (losses up to about 2¹², where the tails of every law in the tree end), the rest in a second.
_QUICK_HEAD = 12
#: Points per round of the vectorised tail search (each round shrinks the bracket by this factor + 1).
_TAIL_POINTS = 63


def _tail_point(
    fn: Callable[[FloatArray], FloatArray], target: float, sign: float, lo: float, hi: float, refine: bool = True
) -> float:
    """A loss x in [lo, hi] with fn(x) ≤ target (fn monotone; sign=+1: search upwards).

    Doubling steps from 0 (or the finite support end) until fn ≤ target, then a vectorised search:
    each round evaluates fn at ``_TAIL_POINTS`` points of the bracket at once and keeps the first that
    meets the target. The point returned always satisfies fn(x) ≤ target or is the support end. (It
    only places the window; the masses outside it are bounded separately, so its precision matters
    for the grid's size, never for soundness.) With ``refine`` false the first doubling point that meets
    the target is returned: the refined point lies between it and the start.
    """

    def val(x: float) -> float:
        return float(fn(np.array([x]))[0])

    start = 0.0 if lo <= 0.0 <= hi else (lo if math.isfinite(lo) else hi)
    step = 1.0
    x = start
    bound = hi if sign > 0 else lo
    frac = np.arange(1, _TAIL_POINTS + 1, dtype=np.float64) / (_TAIL_POINTS + 1)
    if not refine:
        quick = _first_doubling(fn, target, sign, start, bound)
        if quick is not None:
            return quick
    for _ in range(1100):
        cand = x + sign * step
        if ((sign > 0 and cand >= bound) or (sign < 0 and cand <= bound)) and math.isfinite(bound):
            return bound
        if val(cand) <= target:
            bad, good = x, cand  # fn(good) ≤ target; fn(bad) > target or unknown
            for _ in range(40):
                if abs(good - bad) <= PLD_TAIL_XTOL * (1.0 + abs(good)):
                    break
                pts = bad + (good - bad) * frac
                hit = np.flatnonzero(np.asarray(fn(pts)) <= target)
                if hit.size:
                    i = int(hit[0])
                    bad, good = (bad if i == 0 else float(pts[i - 1])), float(pts[i])
                else:
                    bad = float(pts[-1])
            return good
        x = cand
        step *= 2.0
    raise GridTooLargeError(f"could not find the tail of the privacy-loss law below mass exp({target})")


def _first_doubling(
    fn: Callable[[FloatArray], FloatArray], target: float, sign: float, start: float, bound: float
) -> float | None:
    """:func:`_tail_point`'s doubling points (the same float sums) among the first ``_QUICK_DOUBLINGS``,
    read in two vectorised calls (the first ``_QUICK_HEAD`` points, then the rest if none meets the
    target): the first that meets the target, or the support end if that comes first; ``None`` if
    neither does, or if the law's tail function fails on a far point (the caller then runs the search
    itself, which reads no point beyond the first that meets the target)."""
    steps = np.concatenate([[start], sign * 2.0 ** np.arange(_QUICK_DOUBLINGS, dtype=np.float64)])
    cands = np.add.accumulate(steps)[1:]
    crossed = np.flatnonzero(cands >= bound if sign > 0 else cands <= bound) if math.isfinite(bound) else np.zeros(0)
    head = cands[: int(crossed[0])] if crossed.size else cands
    for part in (head[:_QUICK_HEAD], head[_QUICK_HEAD:]):
        if not part.size:
            continue
        try:
            with np.errstate(all="ignore"):
                hit = np.flatnonzero(np.asarray(fn(part)) <= target)
        except (ArithmeticError, ValueError):
            return None
        if hit.size:
            return float(part[int(hit[0])])
    return bound if crossed.size else None


def window(law: PrivacyLossLaw, log_tail: float, refine: bool = True) -> tuple[float, float]:
    """The loss interval [a, b] the grid must cover: continuous tails beyond it carry at most
    exp(log_tail) each; atoms lighter than exp(log_tail) do not widen it. With ``refine`` false, a
    cheaper interval that contains it (the tail searches' first doubling points, :func:`_tail_point`):
    enough for a size check that only needs an upper bound on the span."""
    cont = law.continuous
    lo_pts: list[float] = []
    hi_pts: list[float] = []
    keep = law.atom_p > math.exp(log_tail)
    if np.any(keep):
        lo_pts.append(float(law.atom_losses[keep][0]))
        hi_pts.append(float(law.atom_losses[keep][-1]))
    if cont is not None:
        lo_pts.append(_tail_point(cont.p_logcdf, log_tail, -1.0, cont.lower, cont.upper, refine))
        hi_pts.append(_tail_point(cont.p_logsf, log_tail, 1.0, cont.lower, cont.upper, refine))
    if not lo_pts:
        return 0.0, 0.0
    return min(lo_pts), max(hi_pts)


def _continuous(cont: ContinuousLoss, edges: FloatArray) -> tuple[FloatArray, ...]:
    x = np.clip(edges, cont.lower, cont.upper)
    p_cdf, p_sf, q_cdf, q_sf = log_tails(cont, x)  # one pass where the law shares work between its tails
    _, m_lo, m_hi = cell_log_masses(p_cdf, p_sf)
    _, q_lo, q_hi = cell_log_masses(q_cdf, q_sf)
    lc0, ls1 = p_cdf[:1], p_sf[-1:]  # the tails at the first and last edge
    below = float(np.exp(np.logaddexp(lc0, log_theta(lc0)))[0])
    above = float(np.exp(np.logaddexp(ls1, log_theta(ls1)))[0])
    return m_lo, m_hi, q_lo, q_hi, np.array([below, above])


#: Largest |loss|/step admitted: cell indices stay exact in float64 and far inside int64.
_MAX_INDEX = 2.0**52


def cells(law: PrivacyLossLaw, step: float, span: tuple[float, float], max_cells: int) -> Cells:
    """Certified cell masses of ``law`` on the cells covering ``span`` (module docstring).

    Raises:
        GridTooLargeError: if more than ``max_cells`` cells would be needed.
    """
    a, b = span
    extent = max(abs(a), abs(b), float(np.max(np.abs(law.atom_losses), initial=0.0))) / step
    if not extent < _MAX_INDEX:  # a step so fine that a loss's cell index leaves int64 (or is not finite)
        raise GridTooLargeError(
            f"grid step {step:g} is too fine for losses of magnitude {extent * step:.6g}: a cell index would "
            "exceed 2^52; ask for a larger Accuracy.relative_width or grid_step"
        )
    c_lo = math.floor(a / step) - 1
    c_hi = math.floor(b / step) + 1
    n = c_hi - c_lo + 1
    if n > max_cells:
        raise GridTooLargeError(
            f"one privacy-loss law spans [{a:.6g}, {b:.6g}], which needs {n} grid cells of step {step:g} "
            f"(the memory cap allows {max_cells}); ask for a larger Accuracy.relative_width or "
            "grid_step, or raise Accuracy.memory_cap"
        )
    edges = (c_lo + np.arange(n + 1, dtype=np.float64)) * step
    m_lo = np.full(n, -np.inf)
    m_hi = np.full(n, -np.inf)
    q_lo = np.full(n, -np.inf)
    q_hi = np.full(n, -np.inf)
    below = above = 0.0
    cont = law.continuous
    if cont is not None:
        m_lo, m_hi, q_lo, q_hi, tails = _continuous(cont, edges)
        below, above = float(tails[0]), float(tails[1])
    atoms = law.atom_losses
    if atoms.size:
        # the exact cell of an atom is floor(ℓ/Δ); a computed index off by one is corrected against
        # the computed edges, so that edges[c] ≤ ℓ < edges[c+1] holds for the floats used below
        idx = np.floor(atoms / step).astype(np.int64) - c_lo
        inside = (idx >= 0) & (idx < n)
        ii = np.clip(idx, 0, n - 1)
        ii = np.where(inside & (atoms < edges[ii]), ii - 1, ii)
        ii = np.where(inside & (atoms >= edges[np.minimum(ii + 1, n)]), ii + 1, ii)
        inside &= (ii >= 0) & (ii < n)
        ap, aq, al = law.atom_p[inside], law.atom_q[inside], atoms[inside]
        with np.errstate(divide="ignore"):
            lp, lq = np.log(ap), np.log(aq)
        # a mass below the smallest normal double has lost its relative accuracy (e.g. the Q-mass
        # 0.5·e^{−1000} of Laplace(0.001)'s atom underflows to 0): use dQ = e^{−ℓ} dP instead
        lq = np.where((aq < _NORMAL) & (ap >= _NORMAL), lp - al, lq)
        lp = np.where((ap < _NORMAL) & (aq >= _NORMAL), lq + al, lp)
        # the atoms' masses are trusted to relative _ATOM_REL: add them to the envelopes accordingly
        np.logaddexp.at(m_lo, ii[inside], lp + math.log1p(-_ATOM_REL))
        np.logaddexp.at(m_hi, ii[inside], lp + math.log1p(_ATOM_REL))
        np.logaddexp.at(q_lo, ii[inside], lq + math.log1p(-_ATOM_REL))
        np.logaddexp.at(q_hi, ii[inside], lq + math.log1p(_ATOM_REL))
        m_lo = m_lo - rounding_error(4, 1 + mag(m_lo))
        q_lo = q_lo - rounding_error(4, 1 + mag(q_lo))
        m_hi = m_hi + rounding_error(4, 1 + mag(m_hi))
        q_hi = q_hi + rounding_error(4, 1 + mag(q_hi))
        lo_side = ~inside & (atoms < edges[0])
        below += widen_up(math.fsum(law.atom_p[lo_side]), _ATOM_UNITS)
        above += widen_up(math.fsum(law.atom_p[~inside & ~lo_side]), _ATOM_UNITS)
    p_inf = float(law.p_inf)
    return Cells(
        step=step,
        first=c_lo,
        lm_lo=m_lo,
        lm_hi=m_hi,
        lq_lo=q_lo,
        lq_hi=q_hi,
        below_hi=widen_up(below, 8),
        above_hi=widen_up(above, 8),
        p_inf_lo=widen_down(p_inf, _ATOM_UNITS),
        p_inf_hi=min(1.0, widen_up(p_inf, _ATOM_UNITS)),
    )

"""The exact law of best-of-K on a concrete pair, and the lower ends it gives.

For outputs y₁ < … < y_n (a total order) with masses p (dataset D) and q (neighbour D'), the best of K
independent runs is y_i with probability P_sel(y_i) = φ(F_i) − φ(F_{i−1}), F_i = p₁ + … + p_i, φ the pgf
of K (and nothing, ⊥, with probability φ(0)): the maximum is ≤ y_i iff every run is. So the selection's
δ(ε) on that pair and that order is exact, and — since an analyst may score the candidates in any order —
it is a *lower* bound on the selection's worst case over orders (design note §3).

:func:`order_delta` evaluates it for one order; :func:`law_lower_delta` turns a mechanism's exact
privacy-loss law into a certified lower end: the outputs are coarsened to cells of the privacy loss (a
deterministic post-processing, so the coarsened pair is one an analyst's scores can produce: order the
outputs by their loss), ordered by increasing and by decreasing loss, and each term is bounded from
below with the convexity bracket φ'(F_{i−1})·p_i ≤ P_sel(y_i) ≤ φ'(F_i)·p_i (φ' increasing), the CDFs
carrying their summation error.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
from scipy.optimize import brentq

from optcomp._numerics import UNIT_ROUNDOFF, FloatArray
from optcomp._rounding import cell_log_masses, widen_down, widen_up
from optcomp.mechanisms import ContinuousLoss, Mechanism, PrivacyLossLaw, log_tails, privacy_loss_laws
from optcomp.selection._repetitions import Repetitions

#: Cells of the privacy-loss axis a continuous law is coarsened into for the lower end.
LOWER_END_CELLS = 4000
#: The loss axis spans the law's bulk out to these P-/Q-tail masses (beyond: one cell each side).
_TAIL = 2.0**-60
#: The search range of the tail quantiles of a law with an infinite support.
_SPAN = 1e6


def order_delta(p: npt.ArrayLike, q: npt.ArrayLike, law: Repetitions, epsilon: float) -> float:
    """The exact δ(ε) = max over both directions of Σ_i (P_sel(y_i) − e^ε Q_sel(y_i))₊ of best-of-K on
    outputs with masses ``p`` and ``q`` in the order given (floating point; no rounding bound: tests)."""
    pa, qa = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    fp = np.minimum(np.concatenate([[0.0], np.cumsum(pa)]), 1.0)
    fq = np.minimum(np.concatenate([[0.0], np.cumsum(qa)]), 1.0)
    sel_p, sel_q = np.diff(law.pgf(fp)), np.diff(law.pgf(fq))
    e = math.exp(epsilon)
    return float(max(np.maximum(sel_p - e * sel_q, 0.0).sum(), np.maximum(sel_q - e * sel_p, 0.0).sum()))


def _partial_sums(masses: FloatArray, *, up: bool) -> FloatArray:
    """F_0 = 0, F_i = m_1 + … + m_i bounded from below (``up`` False) or above, within [0, 1]: partial
    sums of n non-negative terms ≤ 1 carry an error ≤ (n + 2)u (Higham §4.2), charged here."""
    slack = 2.0 * (masses.size + 2) * UNIT_ROUNDOFF
    sums = np.concatenate([[0.0], np.cumsum(masses)])
    return np.clip(sums + slack if up else sums - slack, 0.0, 1.0)


def _lower_terms(p_lo: FloatArray, p_hi: FloatArray, q_lo: FloatArray, q_hi: FloatArray, law: Repetitions,
                 epsilon: float) -> float:
    """Certified lower bound of Σ_i (P_sel(y_i) − e^ε Q_sel(y_i))₊ given brackets of the P- and Q-masses, in
    the order given. Each P_sel(y_i) = φ(F_i) − φ(F_{i−1}) is bounded below by the larger of the convexity
    bound φ'(F_{i−1})·p_i and the difference φ(F_i⁻) − φ(F_{i−1}⁺) less twice the pgf's rounding error;
    each Q_sel(y_i) above by the smaller of φ'(F'_i)·q_i and φ(F'_i⁺) − φ(F'_{i−1}⁻) plus that error."""
    fp_lo, fp_hi = _partial_sums(p_lo, up=False), _partial_sums(p_hi, up=True)
    fq_lo, fq_hi = _partial_sums(q_lo, up=False), _partial_sums(q_hi, up=True)
    err = 2.0 * law.pgf_error
    dp_lo = widen_down(np.exp(law.log_dpgf(fp_lo[:-1]) - law.log_dpgf_error(fp_lo[:-1])), 4.0)
    dq_hi = widen_up(np.exp(law.log_dpgf(fq_hi[1:]) + law.log_dpgf_error(fq_hi[1:])), 4.0)
    sel_p = np.maximum(widen_down(dp_lo * p_lo, 4.0), law.pgf(fp_lo[1:]) - law.pgf(fp_hi[:-1]) - err)
    sel_q = np.minimum(widen_up(dq_hi * q_hi, 4.0), law.pgf(fq_hi[1:]) - law.pgf(fq_lo[:-1]) + err)
    sel_q = widen_up(widen_up(np.maximum(sel_q, 0.0), 4.0) * widen_up(math.exp(epsilon), 4.0), 4.0)
    terms = np.maximum(sel_p - sel_q, 0.0)
    return max(0.0, float(widen_down(float(terms.sum()), 2.0 * p_lo.size + 4.0)))


def _cells(law: PrivacyLossLaw) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """(P-mass lower, P-mass upper, Q-mass lower, Q-mass upper) of the loss cells of ``law``, sorted by
    loss: the atoms, the continuous part cut into ``LOWER_END_CELLS`` cells between its tail quantiles plus
    the two tails beyond (certified by :func:`optcomp._rounding.cell_log_masses`), L = −∞ and L = +∞."""
    losses = [np.array([-math.inf]), law.atom_losses, np.array([math.inf])]
    p_lo = [np.zeros(1), widen_down(law.atom_p, 4.0), np.array([law.p_inf])]
    p_hi = [np.zeros(1), widen_up(law.atom_p, 4.0), np.array([law.p_inf])]
    q_lo = [np.array([law.q_neg_inf]), widen_down(law.atom_q, 4.0), np.zeros(1)]
    q_hi = [np.array([law.q_neg_inf]), widen_up(law.atom_q, 4.0), np.zeros(1)]
    cont = law.continuous
    if cont is not None:
        left = max(cont.lower, _quantile_edge(cont, low=True))
        right = min(cont.upper, _quantile_edge(cont, low=False))
        edges = np.linspace(left, right, LOWER_END_CELLS + 1) if right > left else np.array([left])
        pc, ps, qc, qs = log_tails(cont, edges)
        ends_c, ends_s = np.array([-math.inf]), np.array([0.0])
        for cdf, sf, lows, highs in ((pc, ps, p_lo, p_hi), (qc, qs, q_lo, q_hi)):
            lc = np.concatenate([ends_c, cdf, ends_s])
            ls = np.concatenate([ends_s, sf, ends_c])
            _, log_lo, log_hi = cell_log_masses(lc, ls)
            lows.append(np.exp(log_lo))
            highs.append(np.minimum(np.exp(log_hi), 1.0))
        mids = 0.5 * (edges[:-1] + edges[1:])
        losses.append(np.concatenate([[left - 1.0], mids, [right + 1.0]]))
    order = np.argsort(np.concatenate(losses), kind="stable")
    a, b, c, d = (np.concatenate(part)[order] for part in (p_lo, p_hi, q_lo, q_hi))
    return a, b, c, d


def _quantile_edge(cont: ContinuousLoss, *, low: bool) -> float:
    """A loss value beyond which the continuous part has P- and Q-mass ≤ ``_TAIL`` on that side (a
    placement only: the tail beyond is its own cell)."""
    lower = cont.lower if math.isfinite(cont.lower) else -_SPAN
    upper = cont.upper if math.isfinite(cont.upper) else _SPAN

    def excess(x: float) -> float:
        at = np.array([x])
        if low:
            return float(np.logaddexp(cont.p_logcdf(at)[0], cont.q_logcdf(at)[0])) - math.log(_TAIL)
        return math.log(_TAIL) - float(np.logaddexp(cont.p_logsf(at)[0], cont.q_logsf(at)[0]))

    a, b = excess(lower), excess(upper)
    if (a > 0.0) == (b > 0.0):
        return lower if low else upper
    return float(brentq(excess, lower, upper))


def law_lower_delta(mechanism: Mechanism, law: Repetitions, epsilon: float) -> float:
    """A certified lower bound of the selection's δ(ε) for a base that runs ``mechanism`` once: the best
    of the increasing- and decreasing-loss orders of its coarsened law, both directions (module docstring).
    0 where the law has mass at +∞ (no finite coarsening keeps it: the bound is still valid, only looser)."""
    best = 0.0
    for pair in privacy_loss_laws(mechanism):
        p_lo, p_hi, q_lo, q_hi = _cells(pair)
        for order in (slice(None), slice(None, None, -1)):  # increasing, then decreasing loss
            p = (p_lo[order], p_hi[order])
            q = (q_lo[order], q_hi[order])
            best = max(best, _lower_terms(*p, *q, law, epsilon), _lower_terms(*q, *p, law, epsilon))
    return best


__all__ = ["LOWER_END_CELLS", "law_lower_delta", "order_delta"]

"""Cells → the connect-the-dots split: a pair that dominates the true one (the upper end).

Lemma 1 (split kernel, ``docs/pld.md`` §2). Split cell c = [a, b) (a = cΔ, b = a + Δ) onto its end
points: P-mass α_c at loss a and m_c − α_c at loss b, where

    α_c = (q_c·e^{b} − m_c) / expm1(Δ)        (0 ≤ α_c ≤ m_c because m_c e^{−b} ≤ q_c ≤ m_c e^{−a}).

An outcome of loss ℓ ∈ [a, b] has mass vector P(x)·(1, e^{−ℓ}), a convex combination of (1, e^{−a})
and (1, e^{−b}); a Markov kernel from {a, b} back into the cell rebuilds (P, Q) exactly, so the true
pair is a post-processing of the split pair, which therefore has the larger hockey-stick curve, also
after composition (Doroshenko, Ghazi, Kamath, Kumar, Manurangsi, "Connect the Dots: Tighter Discrete
Approximations of Privacy Loss Distributions", PETS 2022).

Float certificate (Lemma 3): α is computed *rounded down* (from m⁺, q⁻ and an upper envelope of
expm1(Δ)) and clamped at 0. Lowering α moves P-mass w from a to b; the atom (w, w e^{−b}) together
with a Q-only outcome of mass w(e^{−a} − e^{−b}) merges back into (w, w e^{−a}), so the moved pair
still dominates. Raising any P-mass (m⁺ for m) only raises δ after composition (monotone in every
entry). Tails: the P-mass below the window goes onto the first grid point (moving loss up is again a
merge with a Q-only outcome), the P-mass above it goes to ℓ = +∞ (an outcome with Q-mass removed:
same argument).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from optcomp._numerics import FloatArray
from optcomp._rounding import log1mexp_array, log_expm1, mag, rounding_error, widen_up
from optcomp.pld._cells import Cells


@dataclass(frozen=True)
class Split:
    """ln of the P-masses at loss (``first`` + i)·Δ (an entrywise upper envelope, −inf for none), and
    an upper bound ``p_inf`` on the P-mass at +∞ of one step of the dominating pair."""

    step: float
    first: int
    log_masses: FloatArray
    p_inf: float


def _up(x: FloatArray) -> FloatArray:
    """A computed logarithm moved up by its rounding (a few ulps of its magnitude)."""
    with np.errstate(over="ignore"):  # a log near the largest double moves up to inf: still an upper end
        return np.asarray(x + rounding_error(4, 1 + mag(x)), dtype=np.float64)


def split(c: Cells) -> Split:
    """The dominating split of one law's cells, float-certified as in the module docstring.

    In logs: ln α = ln(q⁻e^{b} − m⁺) − ln expm1(Δ), rounded down; ln(m⁺ − α) rounded up.
    """
    step = c.step
    n = c.lm_hi.size
    b = (c.first + 1 + np.arange(n, dtype=np.float64)) * step
    lm = _up(c.lm_hi)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        lqb = c.lq_lo + b
        lqb = lqb - rounding_error(4, 3 + np.abs(b) + mag(c.lq_lo))
        gap = np.minimum(lm - lqb, 0.0)
        l1m = log1mexp_array(gap)
        # ln expm1(Δ) without overflow for a huge step (Δ > 709: a loss scale of 1e9, or a count of 1e12)
        la = lqb + l1m - float(log_expm1(step)) - rounding_error(4, 8 + mag(lqb) + mag(l1m) + step)
    la = np.where((lqb > lm) & np.isfinite(la), np.minimum(la, lm), -np.inf)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        gap2 = np.minimum(la - lm, 0.0)
        rest = lm + log1mexp_array(gap2)
    rest = np.where(np.isneginf(la), lm, np.where(la >= lm, -np.inf, _up(np.nan_to_num(rest, nan=-np.inf))))
    out = np.full(n + 1, -np.inf)
    out[:-1] = la
    out[1:] = np.logaddexp(out[1:], rest)
    if c.below_hi > 0:
        out[0] = np.logaddexp(out[0], math.log(c.below_hi))
    p_inf = min(1.0, widen_up(c.p_inf_hi + c.above_hi, 4))
    return Split(step=step, first=c.first, log_masses=_up(out), p_inf=p_inf)

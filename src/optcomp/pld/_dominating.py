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

from optcomp._numerics import UNIT_ROUNDOFF, FloatArray
from optcomp.pld._cells import Cells

_U = UNIT_ROUNDOFF


@dataclass(frozen=True)
class Split:
    """P-masses ``masses[i]`` at loss (``first`` + i)·Δ (an entrywise upper envelope), and an upper
    bound ``p_inf`` on the P-mass at +∞ of one step of the dominating pair."""

    step: float
    first: int
    masses: FloatArray
    p_inf: float


def split(c: Cells) -> Split:
    """The dominating split of one law's cells, float-certified as in the module docstring."""
    step = c.step
    n = c.m_hi.size
    b = (c.first + 1 + np.arange(n, dtype=np.float64)) * step
    # q⁻·e^{b} = exp(ln q⁻ + b): ln and exp are faithful (≤ 2u), b = fl((c+1)·Δ) is off by ≤ u|b|
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        lq = np.log(c.q_lo)
        slack = 4 * _U * (3 + np.abs(b) + np.abs(np.nan_to_num(lq, neginf=0.0)))
        qe = np.where(np.isneginf(lq), 0.0, np.exp(lq + b) * (1 - slack))
        num = qe - c.m_hi
    den = math.expm1(step) * (1 + 4 * _U)
    alpha = np.where(np.isfinite(num), num / den, 0.0) * (1 - 4 * _U)
    alpha = np.clip(alpha, 0.0, c.m_hi)
    out = np.zeros(n + 1)
    out[:-1] += alpha
    out[1:] += c.m_hi - alpha
    out[0] += c.below_hi
    out = out * (1 + 4 * _U)
    p_inf = min(1.0, (c.p_inf_hi + c.above_hi) * (1 + 4 * _U))
    return Split(step=step, first=c.first, masses=out, p_inf=p_inf)

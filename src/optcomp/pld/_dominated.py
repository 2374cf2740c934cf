"""Cells → the quantised-outcome pair: a pair dominated by the true one (the lower end).

Lemma 2 (post-processing with an arbitrary test set, ``docs/pld.md`` §3). The cell index
c(x) = ⌊ℓ(x)/Δ⌋ is a deterministic function of the output, and so is the sum J = Σᵢ cᵢ over the
steps of a composition (with a symbol ⊥ for any step whose loss falls outside the window or is −∞).
Hence P_J = m^{*k} and Q_J = q^{*k} (P- and Q-masses convolved *separately*) form a pair that the
true composition dominates, and for *any* set T of J-values

    P_J(T) − e^ε Q_J(T) ≤ δ(ε).

Q_J is never formed: each step's Q-masses are tilted to the scale of its P-masses,
q̂_c = q_c·e^{(c+½)Δ}, composed, and Q_J(j) = Â_j e^{−s_j} with s_j = Σ(cᵢ + ½)Δ. By monotonicity
(Lemma 4) a lower envelope of m and an upper envelope of q̂ give a lower bound. Outcomes at +∞ are a
further symbol with P-mass only, always in T.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from optcomp._numerics import FloatArray
from optcomp._rounding import mag, rounding_error
from optcomp.pld._cells import Cells


@dataclass(frozen=True)
class Quantised:
    """ln of a lower envelope of the P-masses and of an upper envelope of the tilted Q-masses of cells
    ``first`` … (loss (c + ½)Δ), and a lower bound ``p_inf`` on P(ℓ = +∞), of one step."""

    step: float
    first: int
    log_p: FloatArray
    log_q_hat: FloatArray
    p_inf: float


def quantise(c: Cells) -> Quantised:
    """The quantised-outcome vectors of one law's cells (module docstring), in logs."""
    mid = (c.first + 0.5 + np.arange(c.lm_lo.size, dtype=np.float64)) * c.step
    with np.errstate(invalid="ignore"):
        lq = c.lq_hi + mid + rounding_error(4, 3 + np.abs(mid) + mag(c.lq_hi))
    lq = np.where(np.isneginf(c.lq_hi), -np.inf, lq)
    return Quantised(step=c.step, first=c.first, log_p=c.lm_lo, log_q_hat=lq, p_inf=c.p_inf_lo)

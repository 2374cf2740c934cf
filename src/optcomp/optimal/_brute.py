"""Few mechanisms: all 2^n outcomes of the canonical mechanisms (MV Thm 1.5 summed by brute force)."""

from __future__ import annotations

import numpy as np

from optcomp._numerics import FloatArray
from optcomp._rounding import rounding_error
from optcomp.optimal._solve import Weights

#: Largest number of non-zero ε_i (with multiplicity) handled by enumeration of all subsets.
BRUTE_FORCE_MAX_K = 16


def brute_weights(eps: FloatArray) -> tuple[Weights, Weights]:
    """Envelopes from all 2^n outcomes: losses ±Σ, log-probabilities Σ log p / log(1 − p).

    Each outcome's loss is a sum of n floats (error ≤ (n + 2)·u·Σε_i, moved outwards) and its log
    probability a sum of n logs (error ≤ 4(n + 2)u·(Σε_i + Σ softplus + 1)).
    """
    loss = np.zeros(1)
    logp = np.zeros(1)
    sp = np.logaddexp(0.0, eps)
    for e, s in zip(eps.tolist(), sp.tolist()):
        loss = np.concatenate([loss + e, loss - e])
        logp = np.concatenate([logp + (e - s), logp - s])
    k = eps.size
    scale = float(np.sum(eps) + np.sum(sp))
    eta = rounding_error(4.0, k + 2) * (scale + 1.0)
    t_err = rounding_error(4.0, k + 2) * float(np.sum(eps))
    order = np.argsort(loss, kind="stable")
    loss, logp = loss[order], logp[order]
    up = loss + t_err > 0
    lo = loss - t_err > 0
    return (
        Weights(loss[up] + t_err, logp[up] + eta, 0.0),
        Weights(loss[lo] - t_err, logp[lo] - eta, 0.0),
    )

"""Tensor products of general trade-off functions through the queries floor (certified brackets).

f1 ⊗ … ⊗ fn = T(P1×…×Pn, Q1×…×Qn) (DRS Thm 3.2). Privacy losses of product pairs add, so the
composition of the pairs as mechanisms (:func:`optcomp.compose`: G_μ as ``Gaussian(1/μ)``, a
piecewise-linear f as the ``DiscretePair`` of its distributions) has the product's δ(ε) curve, certified
by whichever engine the floor routes it to, and :func:`~optcomp.fdp.from_delta_curve` turns that curve
into a certified trade-off bracket. (The f-DP floor sits below the queries floor; this one readout of a
composition imports ``optcomp.composition`` inside its function, a listed exception of the layering.)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from optcomp._numerics import DEFAULT_ACCURACY, Accuracy, check_int
from optcomp.fdp._readouts import from_pld
from optcomp.fdp._tradeoff import GaussianTradeOff, PiecewiseLinearTradeOff, TradeOff, TradeOffBracket

__all__ = ["tensor_bracket"]


def _mechanism_of(f: TradeOff) -> Any:
    """The mechanism whose pair is f's: G_μ → ``Gaussian(1/μ)`` (DRS Def 2.7); T(P, Q) → ``DiscretePair``."""
    from optcomp.mechanisms import DiscretePair, Gaussian

    if isinstance(f, GaussianTradeOff):
        if f.mu == 0.0:
            raise ValueError("tensor_bracket: G_0 (no privacy loss) needs no composition; drop it")
        return Gaussian(sigma=1.0 / f.mu)
    if isinstance(f, PiecewiseLinearTradeOff):
        p, q = f.to_distributions()
        return DiscretePair(tuple(p.tolist()), tuple(q.tolist()))
    raise ValueError(
        f"tensor_bracket supports GaussianTradeOff and PiecewiseLinearTradeOff, got {type(f).__name__}"
    )


def tensor_bracket(
    *items: TradeOff | tuple[TradeOff, int],
    accuracy: Accuracy = DEFAULT_ACCURACY,
    epsilons: npt.ArrayLike | None = None,
) -> TradeOffBracket:
    """Certified bracket of f1 ⊗ … ⊗ fn (each with a count) via the PLD engine (DRS Thm 3.2).

    Each piecewise-linear f = T(P, Q) enters as the discrete pair of
    :meth:`PiecewiseLinearTradeOff.to_distributions` (both orders), each G_μ as the Gaussian mechanism
    with σ = 1/μ, composed by :func:`optcomp.compose` (Gaussians only: the GDP closed form at the grid's
    curve points). The engine's δ(ε) bracket is two-sided (max over both orders),
    so the result brackets the *symmetrized* composed curve — the guarantee of a mechanism that is
    f_i-DP for all ordered neighbouring pairs. See :func:`~optcomp.fdp.from_delta_curve` for the
    direction of each side.

    Args:
        *items: trade-off functions or ``(f, count)`` pairs.
        accuracy: the accuracy of the composition's curve.
        epsilons: ε grid for the δ curve (starting at 0; default 0 … 20 in 400 steps).
    """
    if not items:
        raise ValueError("tensor_bracket needs at least one trade-off function, got none")
    from optcomp.composition import compose  # the queries floor (listed exception, module docstring)

    pairs = []
    for i, item in enumerate(items):
        f, count = item if isinstance(item, tuple) else (item, 1)
        pairs.append((_mechanism_of(f), check_int(f"items[{i}] count", count)))
    eps = None if epsilons is None else np.asarray(epsilons, dtype=np.float64)
    return from_pld(compose(*pairs, accuracy=accuracy), eps)

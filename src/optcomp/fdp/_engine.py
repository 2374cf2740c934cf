"""Tensor products of general trade-off functions through the PLD engine (certified brackets).

f1 ⊗ … ⊗ fn = T(P1×…×Pn, Q1×…×Qn) (DRS Thm 3.2). Privacy losses of product pairs add, so the engine
(:class:`optcomp.pld.PrivacyLossDistribution`) composes them by convolution with certified δ(ε)
brackets, and :func:`~optcomp.fdp.from_delta_curve` turns those into a certified trade-off bracket.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from optcomp._numerics import DEFAULT_ACCURACY, Accuracy, check_int
from optcomp.fdp._readouts import from_pld
from optcomp.fdp._tradeoff import GaussianTradeOff, PiecewiseLinearTradeOff, TradeOff, TradeOffBracket

__all__ = ["tensor_bracket"]


def _pld_of(f: TradeOff, accuracy: Accuracy) -> object:
    from optcomp.mechanisms import Gaussian, PrivacyLossLaw, privacy_loss_laws
    from optcomp.pld import PrivacyLossDistribution

    if isinstance(f, GaussianTradeOff):
        if f.mu == 0.0:
            raise ValueError("tensor_bracket: G_0 (no privacy loss) needs no composition; drop it")
        remove, add = privacy_loss_laws(Gaussian(sigma=1.0 / f.mu))
        return PrivacyLossDistribution.from_laws(remove, add, accuracy=accuracy)
    if isinstance(f, PiecewiseLinearTradeOff):
        p, q = f.to_distributions()
        law = PrivacyLossLaw.from_discrete(p, q)
        reverse = None if f.symmetric else PrivacyLossLaw.from_discrete(q, p)
        return PrivacyLossDistribution.from_laws(law, reverse, accuracy=accuracy)
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
    :meth:`PiecewiseLinearTradeOff.to_distributions` (both orders when f is not symmetric), each G_μ as
    the Gaussian mechanism with σ = 1/μ. The engine's δ(ε) bracket is two-sided (max over both orders),
    so the result brackets the *symmetrized* composed curve — the guarantee of a mechanism that is
    f_i-DP for all ordered neighbouring pairs. See :func:`~optcomp.fdp.from_delta_curve` for the
    direction of each side.

    Args:
        *items: trade-off functions or ``(f, count)`` pairs.
        accuracy: the PLD engine's accuracy knob.
        epsilons: ε grid for the δ curve (starting at 0; default 0 … 20 in 400 steps).
    """
    if not items:
        raise ValueError("tensor_bracket needs at least one trade-off function, got none")
    plds: list[object] = []
    for i, item in enumerate(items):
        f, count = item if isinstance(item, tuple) else (item, 1)
        k = check_int(f"items[{i}] count", count)
        pld = _pld_of(f, accuracy)
        plds.append(pld.self_compose(k) if k > 1 else pld)  # type: ignore[attr-defined]
    total = plds[0]
    for other in plds[1:]:
        total = total.compose(other)  # type: ignore[attr-defined]
    eps = None if epsilons is None else np.asarray(epsilons, dtype=np.float64)
    return from_pld(total, eps)  # type: ignore[arg-type]



"""Tensor products of general trade-off functions as mechanisms: f1 ⊗ … ⊗ fn = T(P1×…×Pn, Q1×…×Qn)
(DRS Thm 3.2). Privacy losses of product pairs add, so the composition of the pairs as mechanisms (G_μ as
``Gaussian(1/μ)``, a piecewise-linear f as the ``DiscretePair`` of its distributions) has the product's
δ(ε) curve; :func:`tensor_items` names those mechanisms, and :func:`optcomp.tensor_bracket` (the queries
floor, :mod:`optcomp.composition`) composes them and reads the certified curve back with
:func:`~optcomp.fdp.from_pld`. (The f-DP floor sits below the queries floor: it imports nothing above it.)
"""

from __future__ import annotations

from optcomp._numerics import check_int
from optcomp.fdp._tradeoff import GaussianTradeOff, PiecewiseLinearTradeOff, TradeOff
from optcomp.mechanisms import DiscretePair, Gaussian, Mechanism

__all__ = ["tensor_items"]


def _mechanism_of(f: TradeOff) -> Mechanism:
    """The mechanism whose pair is f's: G_μ → ``Gaussian(1/μ)`` (DRS Def 2.7); T(P, Q) → ``DiscretePair``."""
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


def tensor_items(*items: TradeOff | tuple[TradeOff, int]) -> list[tuple[Mechanism, int]]:
    """``(mechanism, count)`` items whose composition is f1 ⊗ … ⊗ fn (each with a count; DRS Thm 3.2): each
    piecewise-linear f = T(P, Q) as the discrete pair of :meth:`PiecewiseLinearTradeOff.to_distributions`
    (both orders), each G_μ as the Gaussian mechanism with σ = 1/μ.

    Args:
        *items: trade-off functions or ``(f, count)`` pairs.
    """
    if not items:
        raise ValueError("tensor_bracket needs at least one trade-off function, got none")
    pairs = []
    for i, item in enumerate(items):
        f, count = item if isinstance(item, tuple) else (item, 1)
        pairs.append((_mechanism_of(f), check_int(f"items[{i}] count", count)))
    return pairs

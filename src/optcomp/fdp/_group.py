"""Group privacy on every trade-off object the library returns (Dong, Roth & Su Thm 2.14).

If a mechanism is f-DP, it is [1 − (1 − f)^{∘k}]-DP for datasets that differ in k records (DRS
Thm 2.14; tight in general, DRS §2.5). :func:`group_privacy` dispatches on the kind of f (a registry,
``functools.singledispatch``):

* G_μ ↦ G_{kμ} (closed form, DRS Thm 2.14 / Cor. 2.15);
* a piecewise-linear f (f_{ε,δ}, Neyman–Pearson curves, sup_i f_{ε_i,δ_i}, the exact k-fold (ε, δ)
  composition, both curves of :func:`~optcomp.fdp.from_pld`) ↦ the exact piecewise-linear
  1 − h^{∘k}, h = 1 − f: h is non-decreasing and piecewise linear, so h ∘ H is piecewise linear with
  knots at the knots of H and at the preimages under H of the knots of h. For f = f_{ε,δ} the result
  has δ(kε) = δ(1 + e^ε + … + e^{(k−1)ε}) exactly (the group (ε, δ) statement; the curve itself is
  tighter than f_{kε, δ(1+…+e^{(k−1)ε})} away from that ε) — the readouts are exact over its knots;
* a :class:`~optcomp.fdp.TradeOffBracket` ↦ the bracket of the two images: f ↦ 1 − (1 − f)^{∘k} is
  monotone (f ≤ g ⇒ 1 − f ≥ 1 − g and both are non-decreasing, so (1 − f)^{∘k} ≥ (1 − g)^{∘k}), so the
  images of ``lower`` and ``upper`` bracket the image of the unknown f, and the lower one stays the
  guarantee;
* any other trade-off function ↦ 1 − (1 − f)^{∘k} evaluated pointwise (exact up to rounding).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import singledispatch
from typing import overload

import numpy as np

from optcomp._numerics import FloatArray, check_int
from optcomp.fdp._compose import MAX_PRODUCT_ATOMS
from optcomp.fdp._tradeoff import GaussianTradeOff, PiecewiseLinearTradeOff, TradeOff, TradeOffBracket

__all__ = ["group_privacy"]


@dataclass(frozen=True)
class _GroupTradeOff(TradeOff):
    """1 − (1 − f)^{∘k}, evaluated pointwise (exact up to rounding; each step 1 − f(α) ∈ [α, 1])."""

    base: TradeOff
    k: int

    def _evaluate(self, alpha: FloatArray) -> FloatArray:
        x = alpha
        for _ in range(self.k):
            x = np.clip(1.0 - np.asarray(self.base(x), dtype=np.float64), 0.0, 1.0)
        return np.asarray(1.0 - x, dtype=np.float64)


def _preimages(xs: FloatArray, ys: FloatArray, values: FloatArray) -> FloatArray:
    """Both ends of {x : H(x) = v} for each v strictly inside (H(0), H(1)), H non-decreasing with knots
    (xs, ys): the points where h ∘ H may have a kink."""
    v = values[(values > ys[0]) & (values < ys[-1])]
    if v.size == 0:
        return np.empty(0)
    out = []
    for i in (np.searchsorted(ys, v, side="left"), np.searchsorted(ys, v, side="right")):
        i = np.clip(i, 1, ys.size - 1)
        y0, y1 = ys[i - 1], ys[i]
        with np.errstate(invalid="ignore", divide="ignore"):
            t = np.where(y1 > y0, (v - y0) / (y1 - y0), 0.0)
        out.append(xs[i - 1] + np.clip(t, 0.0, 1.0) * (xs[i] - xs[i - 1]))
    return np.concatenate(out)


def _group_pl(f: PiecewiseLinearTradeOff, k: int) -> PiecewiseLinearTradeOff:
    """The exact knots of 1 − h^{∘k}, h = 1 − f (see the module docstring); up to rounding of the knots."""
    hx, hy = f.alpha, 1.0 - f.beta  # h non-decreasing, knots strictly increasing in x
    xs, ys = hx, hy
    for _ in range(k - 1):
        new = np.unique(np.concatenate([xs, _preimages(xs, ys, hx)]))
        inner = np.interp(new, xs, ys)
        xs, ys = new, np.interp(inner, hx, hy)
        ys = np.maximum.accumulate(np.clip(ys, 0.0, 1.0))
    beta = np.minimum.accumulate(1.0 - ys)
    return PiecewiseLinearTradeOff(xs, np.clip(beta, 0.0, 1.0))


@singledispatch
def _group(f: object, k: int) -> TradeOff | TradeOffBracket:
    if isinstance(f, TradeOff):
        return _GroupTradeOff(f, k)
    raise TypeError(f"group_privacy needs a TradeOff or TradeOffBracket, got {type(f).__name__}")


@_group.register
def _(f: GaussianTradeOff, k: int) -> TradeOff:
    return GaussianTradeOff(k * f.mu)


@_group.register
def _(f: PiecewiseLinearTradeOff, k: int) -> TradeOff:
    if f.alpha.size * k > MAX_PRODUCT_ATOMS:  # the exact curve would be too long: evaluate pointwise
        return _GroupTradeOff(f, k)
    return _group_pl(f, k)


@_group.register
def _(f: TradeOffBracket, k: int) -> TradeOffBracket:
    lower, upper = _group(f.lower, k), _group(f.upper, k)
    assert isinstance(lower, TradeOff) and isinstance(upper, TradeOff)
    return TradeOffBracket(lower=lower, upper=upper)


@overload
def group_privacy(f: TradeOff, k: int) -> TradeOff: ...
@overload
def group_privacy(f: TradeOffBracket, k: int) -> TradeOffBracket: ...
def group_privacy(f: TradeOff | TradeOffBracket, k: int) -> TradeOff | TradeOffBracket:
    """f-DP ⇒ [1 − (1 − f)^{∘k}]-DP for groups of size k (DRS Thm 2.14), for every trade-off object.

    G_μ ↦ G_{kμ}; piecewise-linear f ↦ the exact piecewise-linear curve (so ``delta_at`` reads it
    exactly: for f_{ε,δ}, δ(kε) = δ(1 + e^ε + … + e^{(k−1)ε})); a :class:`TradeOffBracket` ↦ the
    bracket of the images of its two curves (the map is monotone, so it stays certified, and its lower
    curve is the guarantee); other curves pointwise. See the module docstring.

    Args:
        f: a trade-off function or a certified bracket of one.
        k: the group size, an integer ≥ 1.

    Raises:
        ValueError: ``k`` not an integer ≥ 1. TypeError: ``f`` not a trade-off object.
    """
    kk = check_int("k", k)
    if kk == 1:
        return f
    return _group(f, kk)

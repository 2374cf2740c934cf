"""Group privacy on every trade-off object the library returns (Dong, Roth & Su Thm 2.14).

If a mechanism is f-DP, it is [1 − (1 − f)^{∘k}]-DP for datasets that differ in k records (DRS
Thm 2.14; tight in general, DRS §2.5). :func:`group_privacy` dispatches on the kind of f (a registry,
``functools.singledispatch``):

* G_μ ↦ G_{kμ} (closed form, DRS Thm 2.14 / Cor. 2.15);
* a piecewise-linear f (f_{ε,δ}, Neyman–Pearson curves, sup_i f_{ε_i,δ_i}, the exact k-fold (ε, δ)
  composition, both curves of :func:`~optcomp.fdp.from_pld`) ↦ the exact piecewise-linear
  1 − h^{∘k}, h = 1 − f: h is non-decreasing and piecewise linear, so h ∘ H is piecewise linear with
  knots at the knots of H and at the preimages under H of the knots of h. Errors grow by h's local
  slope per application; each knot carries its bound in ``knot_error`` and the readouts widen by it. For f = f_{ε,δ} the result
  has δ(kε) = δ(1 + e^ε + … + e^{(k−1)ε}) exactly (the group (ε, δ) statement; the curve itself is
  tighter than f_{kε, δ(1+…+e^{(k−1)ε})} away from that ε) — the readouts are exact over its knots;
* a :class:`~optcomp.fdp.TradeOffBracket` of a mechanism's curve f ↦ a bracket of the *group's* curve
  f_k: ``lower`` ↦ its image (f ↦ 1 − (1 − f)^{∘k} is monotone — f ≤ g ⇒ 1 − f ≥ 1 − g, both
  non-decreasing, so (1 − f)^{∘k} ≥ (1 − g)^{∘k} — hence the image of ``lower`` is below Thm 2.14's
  curve, which is below f_k: the guarantee), ``upper`` kept as it is (a group of at most k records
  includes a single record, so f_k ≤ f ≤ ``upper``). The image of ``upper`` is **not** an upper end of
  f_k: Thm 2.14 is a bound, and a mechanism's group curve can lie far above it (DP-SGD σ = 1, q = 0.1,
  10 steps, k = 4: the exact group pair's attack TPR at FPR 1 % is ≤ 0.23286, the image of ``upper``
  would have claimed ≥ 0.29626; issue 27 item C's audit). The exact group pair, where a mechanism has
  one, is :meth:`optcomp.Composition.group`;
* any other trade-off function ↦ 1 − (1 − f)^{∘k} evaluated pointwise (exact up to rounding).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import singledispatch
from typing import overload

import numpy as np

from optcomp._numerics import CURVE_ABSOLUTE_SLACK, FloatArray, check_int
from optcomp._rounding import rounding_error
from optcomp.fdp._compose import MAX_PRODUCT_ATOMS
from optcomp.fdp._tradeoff import GaussianTradeOff, PiecewiseLinearTradeOff, TradeOff, TradeOffBracket

__all__ = ["group_privacy"]


@dataclass(frozen=True)
class _GroupTradeOff(TradeOff):
    """1 − (1 − f)^{∘k}, evaluated pointwise (exact up to rounding; each step 1 − f(α) ∈ [α, 1])."""

    base: TradeOff
    k: int

    def _evaluate(self, alpha: FloatArray) -> FloatArray:
        x = np.asarray(alpha, dtype=np.float64)
        for _ in range(self.k):
            nxt = np.clip(1.0 - np.asarray(self.base(x), dtype=np.float64), 0.0, 1.0)
            if np.array_equal(nxt, x):  # a fixed point of the (deterministic) map: every later step repeats it
                break
            x = nxt
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


def _group_pl(f: PiecewiseLinearTradeOff, k: int) -> PiecewiseLinearTradeOff | None:
    """The knots of 1 − h^{∘k}, h = 1 − f (see the module docstring), with a per-knot error bound.

    The error of each knot value is tracked through the iteration: h's knot values carry an absolute
    error e_h = CURVE_ABSOLUTE_SLACK + f's ``knot_error`` (f's knots represent the intended curve up to
    that); evaluating h at a value v known to ±e costs L(v ± e)·e + e_h + 4u·h(v), L the steepest slope of h
    on [v − e, v + e] (h is only steep near 0, where its values are small, so errors stay small where
    the curve is read). A kink of the exact curve missed by the knot position error moves the chord by
    at most as much again: the final bound is doubled. ``None`` when the bound is not finite.
    """
    hx, hy = f.alpha, 1.0 - f.beta  # h non-decreasing, knots strictly increasing in x
    with np.errstate(divide="ignore", invalid="ignore"):
        slopes = np.maximum(np.diff(hy) / np.diff(hx), 0.0)
    e_h = CURVE_ABSOLUTE_SLACK + float(np.max(f.knot_error))
    xs, ys = hx, hy
    es = np.full(xs.size, e_h)
    last = slopes.size - 1
    for _ in range(k - 1):
        new = np.unique(np.concatenate([xs, _preimages(xs, ys, hx)]))
        inner = np.interp(new, xs, ys)
        inner_err = np.interp(new, xs, es) + rounding_error(4, inner)
        j_lo = np.clip(np.searchsorted(hx, inner - inner_err, side="right") - 1, 0, last)
        j_hi = np.clip(np.searchsorted(hx, inner + inner_err, side="right") - 1, 0, last)
        lip = np.maximum(slopes[j_lo], slopes[j_hi])
        for i in np.flatnonzero(j_hi > j_lo + 1):  # rare: the error interval spans several pieces
            lip[i] = max(lip[i], float(np.max(slopes[j_lo[i] : j_hi[i] + 1])))
        xs, ys = new, np.interp(inner, hx, hy)
        es = lip * inner_err + e_h + rounding_error(4, ys)
        ys = np.maximum.accumulate(np.clip(ys, 0.0, 1.0))
    es = 2.0 * es
    if not np.all(np.isfinite(es)):
        return None
    beta = np.minimum.accumulate(1.0 - ys)
    # f symmetric (h ∘ (1 − ·) ∘ h = 1 − ·) ⇒ h^k ∘ (1 − ·) ∘ h^k = 1 − ·: the group curve is symmetric too
    return PiecewiseLinearTradeOff(xs, np.clip(beta, 0.0, 1.0), is_symmetric=f.symmetric, knot_error=es)


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
    out = None if f.alpha.size * k > MAX_PRODUCT_ATOMS else _group_pl(f, k)
    return _GroupTradeOff(f, k) if out is None else out  # too many knots or an unbounded error: pointwise
    return _group_pl(f, k)


@_group.register
def _(f: TradeOffBracket, k: int) -> TradeOffBracket:
    lower = _group(f.lower, k)
    assert isinstance(lower, TradeOff)
    # the upper curve stays the one-record one: Thm 2.14's image of it is not above the group's curve
    return TradeOffBracket(lower=lower, upper=f.upper)


@overload
def group_privacy(f: TradeOff, k: int) -> TradeOff: ...
@overload
def group_privacy(f: TradeOffBracket, k: int) -> TradeOffBracket: ...
def group_privacy(f: TradeOff | TradeOffBracket, k: int) -> TradeOff | TradeOffBracket:
    """f-DP ⇒ [1 − (1 − f)^{∘k}]-DP for groups of size k (DRS Thm 2.14), for every trade-off object.

    G_μ ↦ G_{kμ}; piecewise-linear f ↦ the exact piecewise-linear curve (so ``delta_at`` reads it
    exactly: for f_{ε,δ}, δ(kε) = δ(1 + e^ε + … + e^{(k−1)ε})); a :class:`TradeOffBracket` of a
    mechanism's curve ↦ a certified bracket of its group's curve: the image of ``lower`` (the guarantee)
    and ``upper`` unchanged (a group of at most k includes one record; Thm 2.14's image of ``upper`` is
    not above the group's curve); other curves pointwise. See the module docstring.

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

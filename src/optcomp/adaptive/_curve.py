"""A hockey-stick curve on the lattice x_n = n·h, bracketed: the value the backward recursion carries.

:class:`Curve` holds, for lattice indices ``first`` … ``first + size − 1``, an upper and a lower end of
δ_rest(x_n), the hockey-stick curve H_{e^x}(P‖Q) of whatever runs after the current step (``docs/selection.md``
§2). Every δ_rest is non-increasing in x, lies in [max(0, 1 − e^x), 1], and is *convex in y = e^x* (a supremum
over tests S and strategies of P(S) − y·Q(S)). The certified readings below use only these facts:

* **outside the stored range** (:meth:`Curve.padded`): left of it (x < a), the chord in y from (0, 1) to
  (e^a, U(a)) bounds δ above — δ(0) = 1 and δ is convex in y — and max(1 − e^x, L(a)) below (δ ≥ 1 − e^x,
  δ non-increasing); right of it (x > b), U(b) above (non-increasing) and 0 below. For δ₀(x) = (1 − e^x)_+
  stored at the single point x = 0 these readings are exact everywhere.
* **between lattice points** (:meth:`Curve.upper_at`, :meth:`Curve.lower_at`): the chord in y through the
  upper ends bounds δ above (convexity); below, δ(x_{n+1}) (monotonicity) and the two secant extensions of
  convexity — δ(y) ≥ δ(y_n) + (δ(y_n) − δ(y_{n−1}))·(y − y_n)/(y_n − y_{n−1}) for y ≥ y_n, and
  δ(y) ≥ δ(y_{n+1}) + (δ(y_{n+1}) − δ(y_{n+2}))·(y_{n+1} − y)/(y_{n+2} − y_{n+1}) for y ≤ y_{n+1}, each
  bounded below by the lower end at the point of positive weight and the upper end at the point of negative
  weight.

Floating point: the lattice values x_n = n·h are exact reals (h a float); every exp/expm1 of a computed
n·h is charged by :func:`~optcomp._rounding.rounding_error` on its argument and 2 ulps on its result, and
the results are moved outwards with :func:`~optcomp._rounding.widen_up` / ``widen_down``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from optcomp._numerics import FloatArray
from optcomp._rounding import next_down, next_up, rounding_error, widen_down, widen_up


def exp_bounds(x: FloatArray) -> tuple[FloatArray, FloatArray]:
    """(lower, upper) ends of e^x for arguments x computed with one rounding (|error| ≤ u|x|) and exp within
    2 ulps: e^{x ∓ u|x|} widened by 4 units."""
    slack = rounding_error(2, np.abs(x))
    with np.errstate(over="ignore"):
        return widen_down(np.exp(x - slack), 4), widen_up(np.exp(x + slack), 4)


def one_minus_exp_lower(x: FloatArray) -> FloatArray:
    """A lower end of max(0, 1 − e^x) for x = n·h computed with one rounding (the trivial lower end of any δ)."""
    slack = rounding_error(2, np.abs(x))
    with np.errstate(over="ignore"):
        v = -np.expm1(x + slack)
    return np.asarray(np.maximum(widen_down(np.maximum(v, 0.0), 4), 0.0), dtype=np.float64)


@dataclass(frozen=True)
class Curve:
    """Upper and lower ends of δ_rest at lattice indices ``first`` … (module docstring). Both arrays are
    non-increasing (:func:`monotone` makes them so)."""

    step: float
    first: int
    upper: FloatArray
    lower: FloatArray

    @property
    def last(self) -> int:
        return self.first + self.upper.size - 1

    @classmethod
    def final(cls, step: float) -> Curve:
        """δ₀(x) = (1 − e^x)_+ stored at x = 0 only (its readings are exact everywhere)."""
        return cls(step, 0, np.zeros(1), np.zeros(1))

    def padded_upper(self, start: int, stop: int) -> FloatArray:
        """The upper ends at indices ``start`` … ``stop`` (inclusive), read outside the stored range by the module
        docstring's rules."""
        out = np.empty(stop - start + 1)
        lo, hi = max(start, self.first), min(stop, self.last)
        if lo <= hi:
            out[lo - start : hi - start + 1] = self.upper[lo - self.first : hi - self.first + 1]
        n_left = min(self.first, stop + 1) - start
        if n_left > 0:
            d = np.asarray((np.arange(start, start + n_left) - self.first) * self.step, dtype=np.float64)  # x − a < 0
            e_lo, _ = exp_bounds(d)
            chord = widen_down(e_lo * widen_down(1.0 - float(self.upper[0]), 2), 4)  # e^{x−a}(1 − U(a)), down
            out[:n_left] = np.minimum(1.0, next_up(1.0 - chord))
        n_right = stop - max(self.last, start - 1)
        if n_right > 0:
            out[out.size - n_right :] = self.upper[-1]
        return out

    def padded_lower(self, start: int, stop: int) -> FloatArray:
        """The lower ends at indices ``start`` … ``stop`` (inclusive), read outside the stored range by the module
        docstring's rules."""
        out = np.empty(stop - start + 1)
        lo, hi = max(start, self.first), min(stop, self.last)
        if lo <= hi:
            out[lo - start : hi - start + 1] = self.lower[lo - self.first : hi - self.first + 1]
        n_left = min(self.first, stop + 1) - start
        if n_left > 0:
            x = np.asarray(np.arange(start, start + n_left) * self.step, dtype=np.float64)
            out[:n_left] = np.maximum(one_minus_exp_lower(x), float(self.lower[0]))
        n_right = stop - max(self.last, start - 1)
        if n_right > 0:
            out[out.size - n_right :] = 0.0
        return out

    def padded(self, start: int, stop: int) -> tuple[FloatArray, FloatArray]:
        """(upper, lower) at indices ``start`` … ``stop``: :meth:`padded_upper` and :meth:`padded_lower`."""
        return self.padded_upper(start, stop), self.padded_lower(start, stop)

    # -- readings between lattice points (final queries) -------------------------------------------------
    def _cell(self, x: float) -> tuple[int, float, float]:
        """The index n with x_n ≤ x < x_{n+1} (exact comparisons of reals) and (lower, upper) ends of
        r = x − x_n ∈ [0, h)."""
        n = math.floor(x / self.step)
        while n * self.step > x:  # the float quotient may be one off: fix against the exact products
            n -= 1
        while (n + 1) * self.step <= x:
            n += 1
        r = x - n * self.step
        err = rounding_error(2, abs(x) + abs(n * self.step))
        return n, max(0.0, r - err), min(self.step, r + err)

    def upper_at(self, x: float) -> float:
        """A certified upper end of δ_rest(x): the chord in y through the upper ends at x_n ≤ x < x_{n+1}."""
        n, r_lo, _ = self._cell(x)
        if r_lo <= 0.0:
            return float(self.padded(n, n)[0][0])
        up, _ = self.padded(n, n + 1)
        u0, u1 = float(up[0]), float(up[1])
        # weight w = (e^r − 1)/(e^h − 1) of the lower value u1: the smaller w gives the larger chord
        w = widen_down(math.expm1(r_lo), 4) / widen_up(math.expm1(self.step), 4)
        return min(u0, widen_up(u0 - widen_down(min(1.0, w) * widen_down(u0 - u1, 2), 4), 4))

    def lower_at(self, x: float) -> float:
        """A certified lower end of δ_rest(x): the largest of the monotone reading and the two secant
        extensions of the module docstring."""
        n, r_lo, r_hi = self._cell(x)
        up, low = self.padded(n - 1, n + 2)
        best = float(low[2]) if r_lo > 0.0 else float(low[1])
        h = self.step
        # left secant through x_{n−1}, x_n: weight (y − y_n)/(y_n − y_{n−1}) = expm1(r)/(1 − e^{−h})
        slope = float(low[1]) - float(up[0])  # ≤ δ(y_n) − δ(y_{n−1}) ≤ 0 (or positive: then monotone wins)
        if slope < 0.0:
            w = widen_up(math.expm1(r_hi), 4) / widen_down(-math.expm1(-h), 4)
            best = max(best, widen_down(float(low[1]) - widen_up(w * -slope, 4), 4))
        # right secant through x_{n+1}, x_{n+2}: weight (y_{n+1} − y)/(y_{n+2} − y_{n+1}) = −expm1(r − h)/expm1(h)
        if r_lo > 0.0:
            gain = float(low[2]) - float(up[3])
            if gain > 0.0:
                v = widen_down(-math.expm1(r_hi - h), 4) / widen_up(math.expm1(h), 4)
                best = max(best, widen_down(float(low[2]) + widen_down(max(v, 0.0) * gain, 4), 4))
        return max(0.0, best)


def refined(curve: Curve, r: int, start: int, stop: int) -> tuple[FloatArray, FloatArray]:
    """(upper, lower) of δ_rest at the points f·h/r, f = ``start`` … ``stop``, of the lattice refined r times
    (r a power of two, so h/r is exact): at the lattice's own points its ends, between them the readings of
    :meth:`Curve.upper_at` and :meth:`Curve.lower_at` (chord in y above; monotone and secant extensions below),
    vectorised."""
    c0 = start // r - 2
    c1 = -(-stop // r) + 2
    up, low = curve.padded(c0, c1)
    f = np.arange(start, stop + 1)
    c = f // r
    s = (f - c * r).astype(np.float64)
    i = c - c0  # index of the lattice point at or below f in the padded arrays
    h, hf = curve.step, curve.step / r
    rs = s * hf  # offsets in [0, h): s·h/r, one rounding
    r_lo = np.maximum(rs - rounding_error(2, rs), 0.0)
    r_hi = rs + rounding_error(2, rs)
    u0, u1 = up[i], up[i + 1]
    w_lo = widen_down(np.expm1(r_lo), 4) / widen_up(math.expm1(h), 4)
    chord = widen_up(u0 - widen_down(np.minimum(w_lo, 1.0) * widen_down(u0 - u1, 2), 4), 4)
    upper = np.where(s == 0, u0, np.minimum(u0, chord))
    l0, l1 = low[i], low[i + 1]
    best = np.where(s == 0, l0, l1)
    slope = l0 - up[i - 1]
    w_hi = widen_up(np.expm1(r_hi), 4) / widen_down(-math.expm1(-h), 4)
    left = widen_down(l0 - widen_up(w_hi * np.maximum(-slope, 0.0), 4), 4)
    best = np.where((s > 0) & (slope < 0), np.maximum(best, left), best)
    gain = l1 - up[i + 2]
    v_lo = widen_down(-np.expm1(r_hi - h), 4) / widen_up(math.expm1(h), 4)
    right = widen_down(l1 + widen_down(np.maximum(v_lo, 0.0) * np.maximum(gain, 0.0), 4), 4)
    best = np.where((s > 0) & (gain > 0), np.maximum(best, right), best)
    return np.asarray(upper, dtype=np.float64), np.asarray(np.maximum(best, 0.0), dtype=np.float64)


def monotone(upper: FloatArray, lower: FloatArray, first: int, step: float) -> tuple[FloatArray, FloatArray]:
    """The ends made non-increasing in x and clipped to [max(0, 1 − e^x), 1]: an upper end at x_n also bounds
    every x_{n'} > n' (running minimum from the left), a lower end every x_{n'} < n (running maximum from the
    right), and δ ≥ 1 − e^x always."""
    up = np.minimum(np.minimum.accumulate(upper), 1.0)
    floor = one_minus_exp_lower(np.asarray((first + np.arange(lower.size)) * step, dtype=np.float64))
    low = np.maximum(np.maximum.accumulate(lower[::-1])[::-1], floor)
    low = np.minimum(low, up)  # both certified: the lower never needs to exceed the upper
    return up, np.maximum(low, 0.0)


__all__ = ["Curve", "exp_bounds", "monotone", "next_down", "one_minus_exp_lower", "refined"]

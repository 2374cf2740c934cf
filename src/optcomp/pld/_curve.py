"""The whole hockey-stick curve ε ↦ δ(ε) of a PLD from one set of composed vectors (``docs/fdp.md``).

A trade-off curve needs δ(ε) at many ε (:func:`optcomp.fdp.from_pld`), and mostly to an *absolute*
accuracy: a δ far below the curve's resolution moves it by less than that δ. This module reads every
point of the curve off one realisation of the PLD, per direction of the neighbouring relation:

* the untilted upper end (:class:`~optcomp.pld._query.UpperEnd`) is vectorised over ε (two running
  sums, one pass over the composed vector), and the untilted lower end reads each ε in one pass too;
* exponentially tilted (deep-tail) compositions are built only for the points that need one, i.e.
  whose bracket is wider than requested *because of* the untilted FFT floor (``docs/pld.md`` §6);
* without an explicit ε grid the points are placed where the curve bends: with s = e^ε, δ is convex
  in s with slope −α(s) (α the type I error of the supporting test), and the lower trade-off curve
  sup_i f_{ε_i, δ_i} misses f by at most (s_{i+1} − s_i)(α(s_i) − α(s_{i+1}))/4 between two points
  (the height of the triangle between two tangents of a convex function). Points are chosen from a
  dense probe of the (cheap, vectorised) upper curve so that this is ≤ ``CURVE_PLACEMENT_RTOL`` times
  the attack's TPR 1 − f(α) = δ + e^ε α there,
  up to the ε where the upper δ reaches its floor (so group privacy and low-FPR readouts, which read
  the curve at small δ, find their points).

The grid step is refined (as for every query, :meth:`PrivacyLossDistribution._refine`) until every
point's width (upper − lower)/max(upper, ``CURVE_DELTA_SCALE``) meets ``accuracy.relative_width``.
The placement only decides how tight the resulting trade-off bracket is; each point's (lower, upper)
is certified exactly as for :meth:`PrivacyLossDistribution.delta`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import numpy.typing as npt

from optcomp._numerics import Accuracy, Bound, FloatArray, check_epsilons
from optcomp.pld._realise import upper_ends

if TYPE_CHECKING:
    from optcomp.pld._realise import Direction


class _Refining(Protocol):
    """What the curve reads of a :class:`~optcomp.pld.PrivacyLossDistribution` (which imports this module):
    its accuracy, and its refinement of a measure towards that accuracy's width."""

    @property
    def accuracy(self) -> Accuracy: ...

    def _refine(self, measure: Any, strict: bool) -> Bound: ...

__all__ = ["CURVE_DELTA_SCALE", "CURVE_PLACEMENT_RTOL", "HockeyStickCurve", "hockey_stick_curve"]

#: δ level below which curve points are asked for in absolute terms (width ≤ relative_width × this):
#: the trade-off curve is read to absolute accuracy; deeper points keep their certified brackets.
CURVE_DELTA_SCALE: float = 1e-6
#: Relative (to α) bound on the gap between the lower trade-off curve and the truth that the
#: placement of the ε points aims at (see the module docstring).
CURVE_PLACEMENT_RTOL: float = 2e-4
#: A point too wide for the request is read through a tilted composition when the untilted floor is
#: at least this share of its width (otherwise the grid refinement narrows it).
_FLOOR_SHARE: float = 0.25
#: Smallest α the placement resolves relatively (below it, absolutely).
_ALPHA_FLOOR: float = CURVE_DELTA_SCALE
#: The untilted lower end is read only where the upper δ exceeds this multiple of the floor.
_FLOOR_READ: float = 4.0
#: Points of the dense probe of the upper curve used to place the ε points.
_PROBE_POINTS: int = 8193
#: Largest ε placed automatically: e^ε must stay a finite double (slopes −e^ε of the trade-off lines).
_EPS_CAP: float = 700.0


@dataclass(frozen=True)
class HockeyStickCurve:
    """Certified δ(ε) brackets on an increasing ε grid starting at 0 (``lower ≤ δ(ε_i) ≤ upper``)."""

    epsilons: FloatArray
    lower: FloatArray
    upper: FloatArray


def _upper0(d: Direction, eps: FloatArray) -> FloatArray:
    base = d.upper(0)
    if base is None:
        return np.full(eps.size, max(d.p_inf_hi, 0.0) if d._all_infinite() else 1.0)
    return base.delta(eps)


def _lower0(d: Direction, eps: FloatArray) -> FloatArray:
    base = d.lower(0)
    if base is None:
        return np.full(eps.size, d.p_inf_lo)
    return base.delta_suffix(eps)


def place(eps: FloatArray, delta: FloatArray, scale: float, rtol: float) -> FloatArray:
    """A subset of the probe points ``eps`` (δ estimates ``delta``) where the curve bends.

    Greedy: from the current point a, the next point is the farthest probe point b with
    (s_b − s_a)(α_a − α_b) ≤ 4·rtol·max(δ_b + s_b α_b, scale), i.e. the gap relative to the attack's
    TPR 1 − β = δ + e^ε α at the tangent point, α estimated by chord slopes of δ in s = e^ε
    (non-increasing, clipped at 0); the last point is the first probe point where δ has come down to
    within 2× of its smallest probed value (the FFT floor of the untilted upper end, or 0).
    """
    low = delta <= 2.0 * float(np.min(delta))
    end = int(np.argmax(low))
    e = eps[: end + 1]
    if e.size <= 2:
        return np.asarray(e, dtype=np.float64)
    s = np.exp(e)
    d = delta[: end + 1]
    chord = np.maximum(-(np.diff(d)) / np.diff(s), 0.0)
    alpha = np.minimum.accumulate(chord)  # α(s) is non-increasing: remove probe noise
    keep = [0]
    a = 0
    m = chord.size
    while a < e.size - 1:
        left = alpha[max(a - 1, 0)]
        b = a + 1
        while b + 1 < e.size:
            right = alpha[min(b, m - 1)]
            if (s[b + 1] - s[a]) * (left - right) > 4.0 * rtol * max(d[b + 1] + s[b + 1] * right, scale):
                break
            b += 1
        keep.append(b)
        a = b
    return np.asarray(e[keep], dtype=np.float64)


def _floor(d: Direction) -> float:
    """The absolute error the untilted ends of ``d`` carry whatever the grid (FFT floor, cut tails)."""
    out = d.cut
    up = d.upper(0)
    if up is not None:
        out += up.floor * math.exp(up.log_slack)
    lo = d.lower(0)
    if lo is not None:
        out += lo.err_p + math.e * lo.err_a
    return out


class _CurveMeasure:
    """The curve on one realisation (see the module docstring); ``last`` keeps (ε, lower, upper)."""

    def __init__(self, epsilons: FloatArray | None, relative_width: float) -> None:
        self.fixed = epsilons
        self.rw = relative_width
        self.last: HockeyStickCurve | None = None

    def _grid(self, dirs: Sequence[Direction]) -> FloatArray:
        if self.fixed is not None:
            return self.fixed
        top = 1.0
        for d in dirs:
            base = d.upper(0)
            if base is not None:
                top = max(top, base.s_max())
        probe = np.linspace(0.0, min(top, _EPS_CAP), _PROBE_POINTS)
        hi = np.max([_upper0(d, probe) for d in dirs], axis=0)
        return place(probe, hi, _ALPHA_FLOOR, CURVE_PLACEMENT_RTOL)

    def _bad(self, lo: FloatArray, hi: FloatArray) -> npt.NDArray[np.bool_]:
        return np.asarray(hi - lo > self.rw * np.maximum(hi, CURVE_DELTA_SCALE), dtype=np.bool_)

    def run(self, dirs: Sequence[Direction]) -> Bound:
        eps = self._grid(dirs)
        ups = [_upper0(d, eps) for d in dirs]
        hi = np.max(ups, axis=0)
        lo = np.zeros(eps.size)
        for d, up in zip(dirs, ups, strict=True):
            # the untilted lower end cannot certify much below its own floor: 0 is its answer there
            read = up > _FLOOR_READ * _floor(d)
            if np.any(read & (up > lo)):
                lo[read] = np.maximum(lo[read], _lower0(d, eps[read]))
        # tilted (deep-tail) compositions only where the untilted FFT floor is what keeps a point wide
        # (elsewhere a finer grid is the remedy, which the refinement provides)
        floor = max(_floor(d) for d in dirs)
        bad = np.flatnonzero(self._bad(lo, hi) & (floor > _FLOOR_SHARE * (hi - lo)))
        if bad.size:
            sub = eps[bad]
            ups = [np.minimum(up[bad], u) for up, u in zip(ups, upper_ends(dirs, sub), strict=True)]
            hi[bad] = np.max(ups, axis=0)
            lo_b = lo[bad]
            for d, up in zip(dirs, ups, strict=True):
                if np.any(up > lo_b):
                    lo_b = np.maximum(lo_b, d.delta_lower(sub, up, lo_b))
            lo[bad] = lo_b
        lo = np.minimum(lo, hi)
        self.last = HockeyStickCurve(eps, lo, hi)
        i = int(np.argmax(self._widths(lo, hi)))
        return Bound(float(lo[i]), float(hi[i]))

    @staticmethod
    def _widths(lo: FloatArray, hi: FloatArray) -> FloatArray:
        return np.asarray((hi - lo) / np.maximum(hi, CURVE_DELTA_SCALE), dtype=np.float64)

    def width(self, b: Bound) -> float:
        assert self.last is not None
        return float(np.max(self._widths(self.last.lower, self.last.upper)))

    def refinable(self, b: Bound) -> bool:
        return True


def hockey_stick_curve(pld: _Refining, epsilons: npt.ArrayLike | None = None) -> HockeyStickCurve:
    """Certified δ(ε) brackets of ``pld`` on ``epsilons`` (or on points placed where the curve bends).

    See the module docstring. Each point's bracket is certified as :meth:`PrivacyLossDistribution.delta`
    certifies it (upper: the split pair with FFT error, wrap-around and truncated tails added; lower:
    the quantised-outcome pair); the grid is refined until every point's width (upper − lower) is
    ≤ ``relative_width``·max(upper, ``CURVE_DELTA_SCALE``), or the memory cap stops the refinement
    (then the narrowest certified brackets reached are returned).

    Args:
        pld: the privacy loss distribution.
        epsilons: an explicit ε grid (finite, ≥ 0), or ``None`` for the automatic placement.
    """
    m = _CurveMeasure(None if epsilons is None else check_epsilons(epsilons), pld.accuracy.relative_width)
    pld._refine(m, strict=False)
    assert m.last is not None
    if not math.isfinite(float(np.max(m.last.upper, initial=0.0))):
        raise ValueError("the δ curve is not finite")  # pragma: no cover - δ ≤ 1 always
    return m.last

"""The exact lattice engine: compositions whose privacy loss lives on one lattice (``docs/dgauss.md``).

When every item has a :class:`~optcomp.mechanisms.LatticeLaw` with one unit c (discrete Gaussians of one
σ), the composed loss is L = c·(O + g·J) for an integer J = Σ_i (stride_i/g)·j_i, O the summed offsets and
g the gcd of the strides. Its law is the convolution of the factors' P-mass vectors over the integer index
— no discretisation of the loss at all. The hockey-stick divergence is then a finite sum,

    δ(ε) = Σ_J P(J)·(1 − e^{ε − L_J})₊   (the pair is symmetric: one direction),

and the only errors are (a) the factors' truncation (P-mass left out, charged at full weight to the upper
end), (b) the masses' own relative error and the tilt's rounding (a factor (1 + e)^K on every composed mass,
K the number of factors composed: convolution of non-negative vectors is monotone in each), (c) the FFT's
floating-point error and the mass of the circular window's wrap (:func:`optcomp.pld._fft.compose`, a bound
on any [0, 1]-weighted sum, added to the upper end and subtracted from the lower end), (d) the rounding of
the loss positions (a shift η of ε, outward). Small δ are read through an exponentially tilted composition
(the factors' masses times e^{θL}, the weights e^{−θ(L − ε)}(1 − e^{ε−L}) ≤ 1), exactly as the grid's deep
tails (``docs/pld.md`` §6): the FFT floor is then relative to e^{K(θ) − θε} ≈ δ. Both ends of every query
are certified; they typically agree to ten digits (relative), far inside the issue's 10⁻⁶.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import logsumexp

from optcomp._inverse import float_boundary
from optcomp._numerics import SMALLEST_SUBNORMAL, Accuracy, Bound, FloatArray
from optcomp._rounding import rounding_error, widen_down, widen_up
from optcomp.mechanisms import LatticeFactor, LatticeLaw
from optcomp.pld._fft import BYTES_PER_POINT, Composed, compose
from optcomp.pld._fft import window as fft_window
from optcomp.pld._query import UpperEnd

__all__ = ["LATTICE_RELATIVE_WIDTH", "LatticeDistribution", "fits", "lattice_points"]

#: An ε bracket this narrow (relative) stops the tilting (float noise; every bracket is certified).
LATTICE_RELATIVE_WIDTH = 1e-9
#: Tilted compositions an ε query may build after the untilted one.
_MAX_TILTS = 3
#: ln of the tilted mass the FFT window may leave outside (added to the upper end, subtracted from the lower).
_LOG_WRAP = -70.0
#: Largest tilt θ (per unit of loss) the placement considers.
_MAX_THETA = 1e4
#: Tilts are rounded to this many steps per doubling (so a curve shares its compositions).
_THETA_STEPS = 4
#: Tilts below this are read as 0 (untilted).
_MIN_THETA = 1e-6
#: Largest ε searched (beyond every loss a double can hold usefully).
_MAX_EPSILON = 1e6


@dataclass(frozen=True)
class _Part:
    factor: LatticeFactor
    count: int


def _pool(laws: Sequence[tuple[LatticeLaw, int]]) -> list[_Part]:
    """The laws' factors, equal ones (same offset, stride, range) pooled."""
    pooled: dict[tuple[int, int, int, int], _Part] = {}
    for law, k in laws:
        for factor, c in law.factors:
            key = (factor.offset, factor.stride, factor.first, factor.size)
            old = pooled.get(key)
            pooled[key] = _Part(factor, c * k + (old.count if old else 0))
    return list(pooled.values())


@dataclass
class _End:
    """The composition at one tilt θ: its certified upper and lower δ(ε)."""

    upper_end: UpperEnd
    offset: float
    shift: float
    log_slack: float
    tail: float

    def _eps(self, eps: FloatArray, side: float) -> FloatArray:
        """ε in the composed vector's frame (loss minus the offset), moved outward by the loss rounding."""
        e = np.asarray(eps, dtype=np.float64) - self.offset
        eta = self.shift + rounding_error(2, np.abs(e))
        return np.asarray(e - side * eta, dtype=np.float64)

    def upper(self, eps: FloatArray) -> FloatArray:
        """Certified upper δ(ε): the tilted sum plus its floor, times (1 + e)^K, plus the truncated mass."""
        d = self.upper_end.delta(self._eps(eps, 1.0))
        return np.asarray(np.minimum(1.0, widen_up(d + self.tail, 4) + SMALLEST_SUBNORMAL), dtype=np.float64)

    def lower(self, eps: FloatArray) -> FloatArray:
        """Certified lower δ(ε): the same sum less its floor and rounding, divided by (1 + e)^K."""
        end = self.upper_end
        e = np.minimum(self._eps(eps, -1.0), end.s_max())
        j = end.index(e)
        valid = j < end.n
        jj = np.minimum(j, end.n - 1)
        sj, cj, dj = end.s(jj), end.c_sum[jj], end.d_sum[jj]
        gap = np.maximum(sj - e, 0.0)
        th = end.theta
        inner = np.where(valid, np.exp(-th * gap) * (cj - np.exp(-gap) * dj), 0.0)
        rounding = np.where(
            valid, rounding_error(3.03 * end.n, cj + dj) + rounding_error(8, np.abs(e) + np.abs(sj) + 1) * (1 + th) * cj, 0.0
        )
        total = widen_down(np.maximum(inner - rounding - end.floor, 0.0), 8)
        log_pref = end.log_scale - th * e
        log_pref = log_pref - rounding_error(8, np.abs(log_pref) + th * np.abs(e) + 1) - self.log_slack
        with np.errstate(divide="ignore", under="ignore"):
            out = np.where(total > 0, np.exp(log_pref + np.log(np.where(total > 0, total, 1.0))), 0.0)
        return np.asarray(np.minimum(widen_down(out, 4), 1.0), dtype=np.float64)


class LatticeDistribution:
    """The exact law of a composition of lattice laws of one unit, with certified δ(ε) and ε(δ).

    Args:
        laws: ``(LatticeLaw, count)`` pairs, all of one ``unit`` (:func:`optcomp.mechanisms.common_lattice`).
        accuracy: its ``memory_cap`` bounds the FFT window (``GridTooLargeError`` beyond it).
    """

    def __init__(self, laws: Sequence[tuple[LatticeLaw, int]], accuracy: Accuracy) -> None:
        if not laws or any(law.unit != laws[0][0].unit for law, _ in laws):
            raise ValueError("laws must be a non-empty list of lattice laws of one unit")
        self._unit: Fraction = laws[0][0].unit
        self._parts = _pool(laws)
        self._accuracy = accuracy
        self._g = math.gcd(*(p.factor.stride for p in self._parts))
        offset = sum(p.count * p.factor.offset for p in self._parts)
        self._c_offset = float(self._unit * offset)
        self._j0 = sum(p.count * (p.factor.stride // self._g) * p.factor.first for p in self._parts)
        # the loss of composed index r (relative to J0) is A + (c·g)·r, A = c·(O + g·J0): both rounded once
        self._offset = float(self._unit * (offset + self._g * self._j0))
        self._step = float(self._unit * self._g)
        self._count = sum(p.count for p in self._parts)
        tails = [math.log(p.count) + p.factor.log_tail for p in self._parts]
        self._tail = widen_up(math.exp(float(logsumexp(tails))), 8)
        self._ends: dict[float, _End] = {}
        self._base: list[FloatArray] = [p.factor.masses(0.0)[0] for p in self._parts]

    @property
    def count(self) -> int:
        """The number of factors composed."""
        return self._count

    def points(self) -> int:
        """:func:`lattice_points` of this composition."""
        return _points(self._parts)

    def mean_loss(self) -> float:
        """E_P[L] (uncertified: it only starts a search)."""
        total = self._c_offset
        for part, logs in zip(self._parts, self._base, strict=True):
            f = part.factor
            w = np.exp(logs - float(logsumexp(logs)))
            total += part.count * float(self._unit) * f.stride * float(np.dot(w, f.first + np.arange(logs.size)))
        return total

    # -- tilts ----------------------------------------------------------------------------------------
    def _cumulant(self, theta: float) -> float:
        """K(θ) = ln E_P[e^{θL}] (uncertified: it only places a tilt)."""
        total = theta * self._c_offset
        for part, logs in zip(self._parts, self._base, strict=True):
            f = part.factor
            t = theta * float(self._unit) * f.stride
            total += part.count * float(logsumexp(logs + t * (f.first + np.arange(logs.size))))
        return total

    def theta_for(self, eps: float) -> float:
        """The tilt that centres the tilted law at ε (the saddle point of K(θ) − θε, rounded to a grid of
        ``_THETA_STEPS`` per doubling; 0 where ε is below the mean loss). Any tilt is certified."""
        res = minimize_scalar(lambda th: self._cumulant(th) - th * eps,
                              bounds=(0.0, _MAX_THETA), method="bounded")
        theta = float(res.x)
        if not theta > _MIN_THETA:
            return 0.0
        return float(2.0 ** (round(math.log2(theta) * _THETA_STEPS) / _THETA_STEPS))

    def _end(self, theta: float) -> _End:
        """The composition at tilt θ (cached per θ)."""
        end = self._ends.get(theta)
        if end is None:
            end = self._ends[theta] = self._build(theta)
        return end

    def _build(self, theta: float) -> _End:
        """The composition at tilt θ. Each factor's masses are tilted by t = θ·c·stride per index (relative to its
        first index) and normalised by M (``ln M`` kept in L = Σ k ln M, so y = z·e^{L − θs} exactly with the
        values used); the slack (a log, added above and subtracted below) covers each entry's relative error
        (its log's, the normalisation's and exp's), the rounding of t and of the step s (the tilt put in and the
        one taken out differ by at most 2u|t|·(size − 1) per factor and 4u·θ·max|s|), and the sum L itself;
        entries that underflow to 0 are charged as the smallest double each (added to the FFT error)."""
        parts: list[tuple[FloatArray, int]] = []
        log_scale = log_slack = scale_abs = 0.0
        lost = 0.0
        for part in self._parts:
            f = part.factor
            t = theta * float(self._unit) * f.stride
            logs, err = f.masses(t)
            log_m = float(logsumexp(logs))
            arg = logs - log_m
            with np.errstate(under="ignore"):
                x = np.exp(arg)
            rho = err + rounding_error(4, float(np.max(np.abs(arg))) + abs(log_m) + 1.0)
            rho += rounding_error(2, abs(t) * (f.size - 1))
            stride = f.stride // self._g
            vec = np.zeros((x.size - 1) * stride + 1)
            vec[::stride] = x
            parts.append((vec, part.count))
            log_scale += part.count * log_m
            scale_abs += abs(part.count * log_m)
            log_slack += part.count * math.log1p(math.expm1(rho) + rounding_error(4))
            lost += part.count * int(np.count_nonzero(x == 0.0)) * SMALLEST_SUBNORMAL
        max_len = self._accuracy.memory_cap // BYTES_PER_POINT
        composed = compose(parts, fft_window(parts, _LOG_WRAP, max_len))
        composed = Composed(composed.values, composed.first, widen_up(composed.fft_error + lost, 4), composed.wrap)
        reach = self._step * max(abs(composed.first), abs(composed.first + composed.values.size - 1))
        log_slack = (widen_up(log_slack, 8) + rounding_error(2 * len(parts) + 2, scale_abs)
                     + rounding_error(4, theta * widen_up(reach, 4)))
        upper_end = UpperEnd(composed, self._step, theta, log_scale, log_slack, 0.0)
        shift = rounding_error(4, abs(self._offset) + widen_up(reach, 4))
        return _End(upper_end, self._offset, shift, log_slack, self._tail)

    # -- queries -----------------------------------------------------------------------------------------
    def delta(self, epsilon: float) -> Bound:
        """Certified bracket of δ(ε), read through the tilt centred at ε."""
        end = self._end(self.theta_for(epsilon))
        arr = np.array([epsilon])
        return Bound(min(float(end.lower(arr)[0]), float(end.upper(arr)[0])), float(end.upper(arr)[0]))

    def delta_curve(self, epsilons: FloatArray) -> tuple[FloatArray, FloatArray]:
        """(lower, upper) of δ(ε) at each ε, one composition per tilt the points need."""
        eps = np.asarray(epsilons, dtype=np.float64)
        lower, upper = np.zeros(eps.size), np.ones(eps.size)
        thetas = np.array([self.theta_for(float(e)) for e in eps])
        for theta in np.unique(thetas):
            sel = thetas == theta
            end = self._end(float(theta))
            upper[sel] = end.upper(eps[sel])
            lower[sel] = np.minimum(end.lower(eps[sel]), upper[sel])
        return lower, upper

    def epsilon(self, delta: float) -> Bound:
        """Certified bracket of ε(δ) = inf{ε ≥ 0 : δ(ε) ≤ δ}: the float boundaries of the certified upper
        and lower δ of the untilted composition, then of up to ``_MAX_TILTS`` compositions tilted at the
        bracket's upper end, each search starting from the ends already certified."""
        passing: float | None = None
        fail: float | None = None
        theta = 0.0
        for _ in range(_MAX_TILTS + 1):
            passing, fail = self._boundaries(self._end(theta), delta, passing, fail)
            if passing is not None and (
                not math.isfinite(passing)
                or Bound(fail or 0.0, passing).relative_width_above(1.0) <= LATTICE_RELATIVE_WIDTH
            ):
                break
            if passing is not None:
                nxt = self.theta_for(passing)
            else:  # no ε passes at this tilt (a δ below its floor): tilt towards a central-limit guess
                nxt = self.theta_for(self._guess(delta)) if theta == 0.0 else 2.0 * theta
            if nxt == theta:
                break
            theta = nxt
        if passing is None:
            return Bound(fail or 0.0, math.inf)
        return Bound(min(fail or 0.0, passing), passing)

    def _guess(self, delta: float) -> float:
        """ε ≈ E[L] + √(2·Var[L]·ln(1/δ)) (uncertified: it only places the first tilt of a deep δ)."""
        var = 0.0
        for part, logs in zip(self._parts, self._base, strict=True):
            w = np.exp(logs - float(logsumexp(logs)))
            j = np.arange(logs.size, dtype=np.float64)
            step = float(self._unit) * part.factor.stride
            var += part.count * step * step * float(np.dot(w, (j - np.dot(w, j)) ** 2))
        return self.mean_loss() + math.sqrt(2.0 * var * max(-math.log(max(delta, SMALLEST_SUBNORMAL)), 0.0))

    def _boundaries(
        self, end: _End, delta: float, passing: float | None, fail: float | None
    ) -> tuple[float | None, float | None]:
        """(least ε with certified upper δ ≤ δ, largest ε with certified lower δ > δ) on ``end``, from the
        ends already known (themselves certified by an earlier composition)."""
        def up(e: float) -> bool:
            return bool(end.upper(np.array([e]))[0] <= delta)

        def low(e: float) -> bool:
            return bool(end.lower(np.array([e]))[0] <= delta)

        start = passing if passing is not None else max(self.mean_loss(), 1.0)
        found = float_boundary(up, name="epsilon", passing_above=True, passing=passing,
                               fail=fail, start=start, first_gap=max(abs(start), 1.0),
                               highest=_MAX_EPSILON)
        new_pass = found.passing
        if new_pass is None:
            return None, fail
        # downwards from the passing end (a tilted end's lower δ is only informative near its tilt's ε)
        below = float_boundary(low, name="epsilon", passing_above=True, passing=new_pass, fail=fail,
                               start=new_pass)
        return new_pass, below.fail


def _points(parts: Sequence[_Part]) -> int:
    g = math.gcd(*(p.factor.stride for p in parts))
    var = sum(p.count * (p.factor.stride // g) ** 2 * p.factor.variance for p in parts)
    longest = max((p.factor.stride // g) * (p.factor.size - 1) + 1 for p in parts)
    return int(2.0 * math.sqrt(2.0 * -_LOG_WRAP * var) + longest + 1)


def lattice_points(laws: Sequence[tuple[LatticeLaw, int]]) -> int:
    """An estimate of the points one composition of ``laws`` holds: its FFT window (the Chernoff width at
    the window's wrap, from the factors' variances) plus its longest factor vector. The router compares it
    with the memory cap; it is not a bound (the composition itself raises ``GridTooLargeError`` past the cap)."""
    return _points(_pool(laws))


def fits(laws: Sequence[tuple[LatticeLaw, int]], accuracy: Accuracy) -> bool:
    """Whether :func:`lattice_points` leaves half the memory cap free (the router's test)."""
    return 2 * lattice_points(laws) * BYTES_PER_POINT <= accuracy.memory_cap


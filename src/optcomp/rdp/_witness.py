"""The lower end of the optimal conversion: a finite law that meets the curve, re-verified exactly.

The LP's solution on its grid becomes a pair of finite laws P, Q with **rational** masses (the LP's floats,
each normalised to sum exactly 1 in :class:`fractions.Fraction` arithmetic), so that P and Q are probability
laws by construction and L = log(P/Q) is defined atom by atom. Every claim about it is then checked in
mpmath interval arithmetic (``mpmath.iv``, ``_PRECISION`` bits), whose enclosures are rigorous:

* finite curves: Σᵢ Pᵢ^α Qᵢ^{1−α} ≤ e^{(α−1)r(α)} and Σᵢ Qᵢ^α Pᵢ^{1−α} ≤ e^{(α−1)r(α)} at every stated order;
* zCDP curves (r(α) = αρ at **every** α > 1), proved on a partition 1 = a₀ < a₁ < … < a_N = A: the
  functions F(α) = log Σ Pᵢ^α Qᵢ^{1−α} (and its reverse) are convex with F(1) = 0, so on [a, b] each lies
  below the chord through its (upper-enclosed) end values, and the chord stays below ρα(α − 1) exactly
  when the quadratic ρα² − ρα − chord(α) is ≥ 0 on [a, b] (its minimum is explicit). Beyond A,
  D_α ≤ D_∞ = maxᵢ log(Pᵢ/Qᵢ) ≤ ρA ≤ ρα. The partition is found in float64 (cut where the check fails)
  and then proved in interval arithmetic; ``docs/rdp.md`` §6;
* δ(ε) = Σᵢ (Pᵢ − e^ε Qᵢ)₊ of the law, enclosed and reported rounded down.

A law that passes is a valid pair (P, Q) = (M(D), M(D')) of a mechanism on two neighbouring datasets whose
Rényi curve meets the stated one in both directions, so its δ(ε) is a lower bound for *any* conversion
that knows only the curve.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import mpmath
import numpy as np
from mpmath import iv

from optcomp._numerics import FloatArray
from optcomp._rounding import next_down
from optcomp.rdp._stated import StatedCurve

#: Bits of the interval arithmetic.
_PRECISION = 160
#: Float partition of the zCDP check: first points (α − 1 geometric from ``_FIRST_GAP``), halvings allowed.
_FIRST_POINTS = 96
_FIRST_GAP = 1e-9
_MAX_HALVINGS = 40
#: Most partition points tried (the check gives up beyond: the law is then not used).
_MAX_POINTS = 20000
#: The float pre-check asks each interval's quadratic to clear this times ρα(α − 1) (room for the
#: interval arithmetic, which then proves the same partition).
_FLOAT_MARGIN = 1e-9


def _iv_exact(x: Fraction | float) -> mpmath.ctx_iv.ivmpf:
    f = Fraction(x)
    return iv.mpf(f.numerator) / f.denominator


def _lower(x: mpmath.ctx_iv.ivmpf) -> float:
    """The largest float ≤ the interval's lower end."""
    lo = mpmath.mpf(x._mpi_[0])
    f = float(lo)
    return f if mpmath.mpf(f) <= lo else float(next_down(f))


def _upper(x: mpmath.ctx_iv.ivmpf) -> float:
    hi = mpmath.mpf(x._mpi_[1])
    f = float(hi)
    return f if mpmath.mpf(f) >= hi else -float(next_down(-f))


@dataclass(frozen=True)
class WitnessLaw:
    """A finite pair of laws (P, Q) meeting a Rényi curve in both directions (verified: module docstring).

    Attributes:
        p_raw, q_raw: positive floats; the law is P = p_raw/Σp_raw, Q = q_raw/Σq_raw **exactly** (rationals).
        losses: log(Pᵢ/Qᵢ) in float (for display; the checks use the exact masses).
    """

    p_raw: tuple[float, ...]
    q_raw: tuple[float, ...]
    losses: tuple[float, ...] = field(init=False)
    _p: tuple[Fraction, ...] = field(init=False, repr=False, compare=False)
    _q: tuple[Fraction, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        ps, qs = [Fraction(x) for x in self.p_raw], [Fraction(x) for x in self.q_raw]
        sp, sq = sum(ps, Fraction(0)), sum(qs, Fraction(0))
        object.__setattr__(self, "_p", tuple(x / sp for x in ps))
        object.__setattr__(self, "_q", tuple(x / sq for x in qs))
        object.__setattr__(self, "losses", tuple(math.log(float(a) / float(b)) if float(b) > 0 else math.inf
                                                 for a, b in zip(self._p, self._q, strict=True)))

    @property
    def p(self) -> tuple[float, ...]:
        """P's masses as floats (nearest)."""
        return tuple(float(x) for x in self._p)

    @property
    def q(self) -> tuple[float, ...]:
        """Q's masses as floats (nearest)."""
        return tuple(float(x) for x in self._q)

    def _logs(self) -> tuple[list[mpmath.ctx_iv.ivmpf], list[mpmath.ctx_iv.ivmpf]]:
        return [iv.log(_iv_exact(x)) for x in self._p], [iv.log(_iv_exact(x)) for x in self._q]

    def delta_bounds(self, epsilon: float) -> tuple[float, float]:
        """Certified (lower, upper) of this law's δ(ε) = Σ (Pᵢ − e^ε Qᵢ)₊."""
        with _precision():
            scale = iv.exp(iv.mpf(epsilon))
            below, above = iv.mpf(0), iv.mpf(0)  # enclosures of the sum's lower and upper ends
            for p, q in zip(self._p, self._q, strict=True):
                d = _iv_exact(p) - scale * _iv_exact(q)
                if d.a > 0:
                    below, above = below + d, above + d
                elif d.b > 0:
                    above = above + iv.mpf(d.b)
            return max(0.0, _lower(below)), min(1.0, _upper(above))

    def max_log_ratio(self) -> float:
        """D_∞ in both directions, max |log(Pᵢ/Qᵢ)|, rounded up."""
        with _precision():
            lp, lq = self._logs()
            return max(max(_upper(a - b), _upper(b - a)) for a, b in zip(lp, lq, strict=True))

    def meets(self, curve: StatedCurve) -> bool:
        """Whether the law is proved to meet ``curve`` (both directions; every order for zCDP curves)."""
        if any(p == 0 or q == 0 for p, q in zip(self._p, self._q, strict=True)):
            return False  # an atom of one law only: D_α is infinite in one direction
        if curve.rho is not None:
            return _meets_zcdp(self, curve.rho)
        assert curve.orders is not None and curve.values is not None
        with _precision():
            lp, lq = self._logs()
            for alpha, value in zip(curve.orders.tolist(), curve.values.tolist(), strict=True):
                cap = (iv.mpf(alpha) - 1) * iv.mpf(value)
                for x, y in ((lp, lq), (lq, lp)):
                    if not _log_moment(x, y, alpha).b <= cap.a:
                        return False
        return True


class _precision:
    """``mpmath.iv`` at ``_PRECISION`` bits for the block (restored after)."""

    def __enter__(self) -> None:
        self.saved = iv.prec
        iv.prec = _PRECISION

    def __exit__(self, *exc: object) -> None:
        iv.prec = self.saved


def _log_moment(lx: list[mpmath.ctx_iv.ivmpf], ly: list[mpmath.ctx_iv.ivmpf], alpha: float) -> mpmath.ctx_iv.ivmpf:
    """log Σ xᵢ^α yᵢ^{1−α}, enclosed, from the enclosed logs of the masses."""
    a = iv.mpf(alpha)
    total = iv.mpf(0)
    for u, v in zip(lx, ly, strict=True):
        total += iv.exp(a * u + (1 - a) * v)
    return iv.log(total)


def _float_moments(p: FloatArray, q: FloatArray, alphas: FloatArray) -> tuple[FloatArray, FloatArray]:
    """F(α) forward and reverse in float64 (the pre-check only)."""
    from scipy.special import logsumexp

    lp, lq = np.log(p), np.log(q)
    fwd = logsumexp(alphas[:, None] * lp[None, :] + (1.0 - alphas[:, None]) * lq[None, :], axis=1)
    rev = logsumexp(alphas[:, None] * lq[None, :] + (1.0 - alphas[:, None]) * lp[None, :], axis=1)
    return np.asarray(fwd, dtype=np.float64), np.asarray(rev, dtype=np.float64)


def _quadratic_clear(fa: FloatArray, fb: FloatArray, a: FloatArray, b: FloatArray, rho: float) -> FloatArray:
    """Float: min over [a, b] of ρα(α − 1) − chord(α) (chord through (a, fa), (b, fb))."""
    s = (fb - fa) / (b - a)
    vertex = np.clip((rho + s) / (2.0 * rho), a, b)
    return rho * vertex * (vertex - 1.0) - (fa + s * (vertex - a))


def _float_partition(p: FloatArray, q: FloatArray, rho: float, top: float) -> FloatArray | None:
    """Points 1 = a₀ < … < a_N = top whose float check passes with margin, or ``None``.

    On the first interval [1, b] the chord from F(1) = 0 stays below ρα(α − 1) iff D_b = F(b)/(b − 1) ≤ ρ
    (asked with margin); on the others the quadratic's minimum must clear the margin times ρa(a − 1)."""
    points = np.concatenate([[1.0], 1.0 + np.geomspace(_FIRST_GAP, top - 1.0, _FIRST_POINTS)])
    for _ in range(_MAX_HALVINGS):
        if points.size > _MAX_POINTS:
            return None
        fwd, rev = _float_moments(p, q, points)
        fwd[0] = rev[0] = 0.0
        a, b = points[:-1], points[1:]
        need = _FLOAT_MARGIN * rho * a * (a - 1.0)
        ok = (_quadratic_clear(fwd[:-1], fwd[1:], a, b, rho) >= need) & (_quadratic_clear(rev[:-1], rev[1:], a, b, rho) >= need)
        ok[0] = max(fwd[1], rev[1]) / (b[0] - 1.0) <= rho * (1.0 - _FLOAT_MARGIN)
        if np.all(ok):
            return points
        wide = (b - 1.0) > 2.0 * (a - 1.0)
        mids = np.where(wide, 1.0 + np.sqrt(np.maximum(a - 1.0, _FIRST_GAP * _FIRST_GAP) * (b - 1.0)), 0.5 * (a + b))
        new = mids[~ok]
        if np.any(new <= a[~ok]) or np.any(new >= b[~ok]):
            return None  # adjacent floats: nothing left to cut
        points = np.sort(np.concatenate([points, new]))
    return None


def _meets_zcdp(law: WitnessLaw, rho: float) -> bool:
    """The every-order check of the module docstring."""
    if rho <= 0.0:
        return False
    top = max(law.max_log_ratio() / rho, 1.0) * 2.0 + 1.0  # ρ·top ≥ D_∞ with room
    points = _float_partition(np.array(law.p), np.array(law.q), rho, top)
    if points is None:
        return False
    with _precision():
        lp, lq = law._logs()
        r = iv.mpf(rho)
        if not law.max_log_ratio() <= _lower(r * iv.mpf(float(points[-1]))):
            return False
        for x, y in ((lp, lq), (lq, lp)):
            values = [iv.mpf(0)] + [_log_moment(x, y, float(a)) for a in points[1:].tolist()]
            for i in range(len(points) - 1):
                a, b = iv.mpf(float(points[i])), iv.mpf(float(points[i + 1]))
                fa, fb = iv.mpf(values[i].b), iv.mpf(values[i + 1].b)
                if not _interval_clear(fa, fb, a, b, r):
                    return False
    return True


def _interval_clear(fa: mpmath.ctx_iv.ivmpf, fb: mpmath.ctx_iv.ivmpf, a: mpmath.ctx_iv.ivmpf,
                    b: mpmath.ctx_iv.ivmpf, r: mpmath.ctx_iv.ivmpf) -> bool:
    """Interval proof that ρα(α − 1) ≥ the chord through (a, fa), (b, fb) on [a, b]."""
    s = (fb - fa) / (b - a)

    def phi(x: mpmath.ctx_iv.ivmpf) -> mpmath.ctx_iv.ivmpf:
        return r * x * (x - 1) - (fa + s * (x - a))

    if not (phi(a).a >= 0 and phi(b).a >= 0):
        return False
    vertex = (r + s) / (2 * r)
    if vertex.b < a.a or vertex.a > b.b:
        return True  # the minimum over [a, b] is at an end
    # the minimum over the whole line, a lower bound of the minimum over [a, b]
    return bool(((s * a - fa) - (r + s) ** 2 / (4 * r)).a >= 0)


def witness_from(losses: FloatArray, masses: FloatArray) -> WitnessLaw | None:
    """The rational law of an LP solution (atoms with both masses positive in float), or ``None``."""
    q = masses * np.exp(-losses)
    keep = (masses > 0.0) & (q > 0.0) & np.isfinite(q)
    if not np.any(keep):
        return None
    return WitnessLaw(tuple(masses[keep].tolist()), tuple(q[keep].tolist()))

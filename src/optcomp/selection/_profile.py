"""The profile route: a certified δ(ε) of best-of-K selection from the base's certified privacy profile.

**The bound** (proved in ``docs/private-selection.md`` §4; our derivation, in the spirit of
Koskela–Redberg–Wang, ICML 2024, who bound selection's privacy *profile* from the base's). Let the base
Q have privacy profile δ_Q(ε) (max over both directions) and let K have pgf φ. For every ε̃ ≥ 0,

    δ_A(ε) ≤ [1 − φ(1 − δ_Q(ε̃))]  +  ∫₀¹ ( e^{ε̃} φ'(B(v)) − e^{ε} φ'(v) )₊ dv,                (T1 + T2)

where B(v) = min(1, min_j e^{ε_j} v + δ_Q(ε_j), min_j 1 − e^{−ε_j}(1 − v − δ_Q(ε_j))) is the upper envelope
of every lower set's P-mass given its P'-mass v (any finite set of ε_j ≥ 0 gives a valid B). Sketch: ties
are broken by an independent uniform label (a post-processing away from the released output), so the
run's output is atomless along the order and the released maximum has density φ'(F) against P (F, F'
the CDFs under the two datasets). Split P = P₁ + P₂ with P₁ = min(P, e^{ε̃}P'), ‖P₂‖ ≤ δ_Q(ε̃): the P₂
part weighs at most ∫_{1−δ}^{1} φ' = 1 − φ(1 − δ) (φ' increasing; F is uniform under P); the P₁ part is
at most e^{ε̃}φ'(F)dP' with F ≤ B(F') on every lower set and F' uniform under P'.

**Certification** (this module). B is replaced cell by cell by one tangent line ℓ(v) = a + s·v (any
line of the envelope is itself a valid bound on F; the one lowest at the cell's midpoint is kept) with
a and s rounded up; on each cell the integrand e^{ε̃}φ'(ℓ(v)) − e^{ε}φ'(v) changes sign at most once
(the ratio φ'(ℓ(v))/φ'(v) is monotone: log-linear for Poisson, a Möbius power for the others). A cell
whose certified log-ratio is negative at both ends adds 0; positive at both ends, the exact integral
e^{ε̃}[φ(ℓ)]/s − e^{ε}[φ] with its rounding error added (or the monotone bound Δv·f(v₁) − Δv·g(v₀),
whichever is smaller); a cell where the sign changes is split in 32 (four times), the last crossing
piece bounded by Δv·(f(v₁) − g(v₀))₊ (f, g increasing). Every exp, log and pgf value carries the error
its law states (``_repetitions``), widened with ``optcomp._rounding``'s vocabulary.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from optcomp._numerics import UNIT_ROUNDOFF, FloatArray
from optcomp._rounding import next_up, sum_error_bound, widen_down, widen_up
from optcomp.selection._repetitions import Repetitions

#: Uniform cells of the v-grid in [0, 1]; the ends are refined geometrically down to 2⁻⁶⁰ from 0 and
#: 2⁻⁵³ from 1 (where B and φ' bend most).
UNIFORM_CELLS = 2048
#: A crossing cell is split into this many pieces, at most ``SPLIT_LEVELS`` times.
SPLIT_PIECES = 32
SPLIT_LEVELS = 4
#: More crossing pieces than this at one level (log-ratios within rounding of 0 over a whole cell) end
#: the splitting: the pieces keep their coarse bounds.
MAX_SPLIT_PIECES = 4096
#: Units of u charged on a log-ratio's sum of terms before its sign is trusted, and on exp().
_SUM_UNITS = 16.0
_EXP_UNITS = 4.0


@dataclass(frozen=True)
class Envelope:
    """The cells of the v-grid with one tangent line each: B(v) ≤ a + s·v on [x0, x1] (a, s rounded up);
    ``s == 0`` is the cap B ≤ 1 (a = 1)."""

    x0: FloatArray
    x1: FloatArray
    a: FloatArray
    s: FloatArray


def _grid() -> FloatArray:
    uniform = np.linspace(0.0, 1.0, UNIFORM_CELLS + 1)
    near0 = np.ldexp(1.0, -np.arange(12, 61))
    near1 = 1.0 - np.ldexp(1.0, -np.arange(12, 54))
    return np.unique(np.concatenate([uniform, near0, near1]))


def _lines(epsilons: FloatArray, deltas: FloatArray) -> tuple[FloatArray, FloatArray]:
    """(a, s) of every valid line, rounded up: e^{ε}v + δ, and 1 − e^{−ε}(1 − δ) + e^{−ε}v; plus the cap."""
    fwd_s = widen_up(np.exp(epsilons), _EXP_UNITS)
    rev_s = widen_up(np.exp(-epsilons), _EXP_UNITS)
    keep = deltas < 1.0
    t = widen_down(widen_down(np.exp(-epsilons[keep]), _EXP_UNITS) * (1.0 - deltas[keep]), _EXP_UNITS)
    rev_a = next_up(1.0 - t)  # 1 − t exact for t ≥ ½ (Sterbenz), else one rounding
    a = np.concatenate([deltas, rev_a, [1.0]])
    s = np.concatenate([fwd_s, rev_s[keep], [0.0]])
    return a, s


def envelope(epsilons: FloatArray, deltas: FloatArray) -> Envelope:
    """The certified envelope of a profile: ``deltas[j]`` ≥ δ_Q(``epsilons[j]``), every ε ≥ 0."""
    a_all, s_all = _lines(np.asarray(epsilons, dtype=np.float64), np.asarray(deltas, dtype=np.float64))
    edges = _grid()
    x0, x1 = edges[:-1], edges[1:]
    mid = 0.5 * (x0 + x1)
    best = np.argmin(a_all[None, :] + s_all[None, :] * mid[:, None], axis=1)
    a, s = a_all[best], s_all[best]
    # a line that passes 1 inside its cell: split there (line below, cap above; both are valid bounds)
    with np.errstate(divide="ignore", invalid="ignore"):
        cut = np.where(s > 0.0, (1.0 - a) / s, np.inf)
    split = (s > 0.0) & (cut > x0) & (cut < x1)
    above = (s > 0.0) & (cut <= x0)  # the line is ≥ 1 on the whole cell: the cap is lower
    a = np.where(above, 1.0, a)
    s = np.where(above, 0.0, s)
    xs0 = np.concatenate([x0, cut[split]])
    xs1 = np.concatenate([np.where(split, cut, x1), x1[split]])
    aa = np.concatenate([a, np.ones(int(split.sum()))])
    ss = np.concatenate([s, np.zeros(int(split.sum()))])
    return Envelope(xs0, xs1, aa, ss)


def _b_up(a: FloatArray, s: FloatArray, x: FloatArray) -> FloatArray:
    """An upper bound of the line a + s·x (two roundings of non-negative terms)."""
    return np.asarray(widen_up(a + s * x, _EXP_UNITS), dtype=np.float64)


def _b_down(a: FloatArray, s: FloatArray, x: FloatArray) -> FloatArray:
    return np.asarray(widen_down(a + s * x, _EXP_UNITS), dtype=np.float64)


def _log_ratio_bounds(
    law: Repetitions, a: FloatArray, s: FloatArray, x: FloatArray, shift: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Certified (lower, upper) of R(x) = shift + log φ'(a + s x) − log φ'(x), shift = ε̃ − ε."""
    hi_b, lo_b = _b_up(a, s, x), _b_down(a, s, x)
    top, bottom = law.log_dpgf(hi_b), law.log_dpgf(lo_b)
    base = law.log_dpgf(x)
    err = law.log_dpgf_error(hi_b) + law.log_dpgf_error(x)
    with np.errstate(invalid="ignore"):
        mag = np.abs(shift) + np.abs(top) + np.abs(bottom) + np.abs(base)
        err = err + _SUM_UNITS * UNIT_ROUNDOFF * mag
        low, up = shift + bottom - base - err, shift + top - base + err
    # φ'(0) = 0 (a fixed K ≥ 2) makes −inf − (−inf): no sign is known there, the cell counts as crossing
    return np.where(np.isnan(low), -np.inf, low), np.where(np.isnan(up), np.inf, up)


def _f_up(law: Repetitions, a: FloatArray, s: FloatArray, x: FloatArray, eps_t: FloatArray) -> FloatArray:
    """Upper bound of e^{ε̃}φ'(a + s x)."""
    b = _b_up(a, s, x)
    y = eps_t + law.log_dpgf(b)
    y = y + law.log_dpgf_error(b) + _SUM_UNITS * UNIT_ROUNDOFF * np.abs(y)
    return np.asarray(widen_up(np.exp(y), _EXP_UNITS), dtype=np.float64)


def _g_down(law: Repetitions, x: FloatArray, eps: float) -> FloatArray:
    """Lower bound of e^{ε}φ'(x)."""
    y = eps + law.log_dpgf(x)
    y = y - law.log_dpgf_error(x) - _SUM_UNITS * UNIT_ROUNDOFF * np.abs(y)
    return np.asarray(widen_down(np.exp(y), _EXP_UNITS), dtype=np.float64)


def _positive_integral(
    law: Repetitions, a: FloatArray, s: FloatArray, x0: FloatArray, x1: FloatArray, eps_t: FloatArray, eps: float
) -> FloatArray:
    """Upper bound of ∫_{x0}^{x1} e^{ε̃}φ'(a + s v) − e^{ε}φ'(v) dv (cells where the integrand is ≥ 0)."""
    width = x1 - x0
    f1 = _f_up(law, a, s, x1, eps_t)
    g0 = _g_down(law, x0, eps)
    # exact forms, with their rounding error: the pgf's own error, the argument's rounding (φ' ≤ f1·e^{−ε̃})
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        l0, l1 = a + s * x0, a + s * x1
        slope_err = f1 * np.exp(-eps_t) * 4.0 * UNIT_ROUNDOFF * (a + 2.0 * s * x1)
        diff = law.pgf(l1) - law.pgf(l0) + 2.0 * law.pgf_error + 2.0 * slope_err
        exact_f = np.where(s > 0.0, widen_up(np.exp(eps_t) * diff / s, 2 * _EXP_UNITS), np.inf)
    upper_f = np.minimum(exact_f, widen_up(width * f1, _EXP_UNITS))
    exact_g = widen_down(math.exp(eps) * (law.pgf(x1) - law.pgf(x0) - 2.0 * law.pgf_error), 2 * _EXP_UNITS)
    lower_g = np.maximum(exact_g, widen_down(width * g0, _EXP_UNITS))
    return np.asarray(np.maximum(upper_f - lower_g, 0.0), dtype=np.float64)


def _coarse(
    law: Repetitions, a: FloatArray, s: FloatArray, x0: FloatArray, x1: FloatArray, eps_t: FloatArray, eps: float
) -> FloatArray:
    """Δv·(f(x1) − g(x0))₊ ≥ ∫(f − g)₊ on the cell (f, g increasing)."""
    gap = _f_up(law, a, s, x1, eps_t) - _g_down(law, x0, eps)
    return np.asarray(widen_up((x1 - x0) * np.maximum(gap, 0.0), _EXP_UNITS), dtype=np.float64)


@dataclass(frozen=True)
class CellTerms:
    """Everything of T2's top-level cells that depends on neither ε nor ε̃ (computed once per law and
    envelope): the certified bounds of log φ'(ℓ(x)) − log φ'(x) at both ends, log φ'(ℓ(x1)) up, log φ'(x0)
    down, and the pgf increments [φ(ℓ)] (up) and [φ] (down) of the exact integrals."""

    env: Envelope
    r0: tuple[FloatArray, FloatArray]
    r1: tuple[FloatArray, FloatArray]
    lf1: FloatArray
    lg0: FloatArray
    dphi_b: FloatArray
    dphi: FloatArray

    @classmethod
    def of(cls, env: Envelope, law: Repetitions) -> CellTerms:
        zero = np.zeros_like(env.x0)
        r0 = _log_ratio_bounds(law, env.a, env.s, env.x0, zero)
        r1 = _log_ratio_bounds(law, env.a, env.s, env.x1, zero)
        b1 = _b_up(env.a, env.s, env.x1)
        lf1 = law.log_dpgf(b1) + law.log_dpgf_error(b1)
        lg0 = law.log_dpgf(env.x0) - law.log_dpgf_error(env.x0)
        l0, l1 = env.a + env.s * env.x0, env.a + env.s * env.x1
        slope_err = widen_up(np.exp(lf1), _EXP_UNITS) * 4.0 * UNIT_ROUNDOFF * (env.a + 2.0 * env.s * env.x1)
        dphi_b = law.pgf(l1) - law.pgf(l0) + 2.0 * law.pgf_error + 2.0 * slope_err
        dphi = law.pgf(env.x1) - law.pgf(env.x0) - 2.0 * law.pgf_error
        return cls(env, r0, r1, lf1, lg0, np.asarray(dphi_b, dtype=np.float64), np.asarray(dphi, dtype=np.float64))


def _exp_up(y: FloatArray) -> FloatArray:
    y = y + _SUM_UNITS * UNIT_ROUNDOFF * np.abs(y)
    return np.asarray(widen_up(np.exp(y), _EXP_UNITS), dtype=np.float64)


def _exp_down(y: FloatArray) -> FloatArray:
    y = y - _SUM_UNITS * UNIT_ROUNDOFF * np.abs(y)
    return np.asarray(widen_down(np.exp(y), _EXP_UNITS), dtype=np.float64)


def _top_level(terms: CellTerms, eps: float, eps_t: float) -> tuple[float, int, npt.NDArray[np.bool_]]:
    """(sum over the surely positive top-level cells, their count, mask of the crossing cells)."""
    env, shift = terms.env, eps_t - eps
    margin = _SUM_UNITS * UNIT_ROUNDOFF * abs(shift)
    low0, up0 = terms.r0[0] + shift - margin, terms.r0[1] + shift + margin
    low1, up1 = terms.r1[0] + shift - margin, terms.r1[1] + shift + margin
    positive = (low0 >= 0.0) & (low1 >= 0.0)
    crossing = ~positive & ~((up0 < 0.0) & (up1 < 0.0))
    if not positive.any():
        return 0.0, 0, crossing
    p = positive
    width = env.x1[p] - env.x0[p]
    f1 = _exp_up(eps_t + terms.lf1[p])
    g0 = _exp_down(eps + terms.lg0[p])
    with np.errstate(divide="ignore", invalid="ignore"):
        exact_f = np.where(env.s[p] > 0.0, widen_up(math.exp(eps_t) * terms.dphi_b[p] / env.s[p], 2 * _EXP_UNITS), np.inf)
    upper_f = np.minimum(exact_f, widen_up(width * f1, _EXP_UNITS))
    exact_g = widen_down(math.exp(eps) * terms.dphi[p], 2 * _EXP_UNITS)
    lower_g = np.maximum(exact_g, widen_down(width * g0, _EXP_UNITS))
    part = np.maximum(upper_f - lower_g, 0.0)
    return float(part.sum()), int(p.sum()), crossing


def _split_crossings(
    law: Repetitions, a: FloatArray, s: FloatArray, x0: FloatArray, x1: FloatArray, eps: float, eps_t: float
) -> tuple[float, int]:
    """(upper bound of ∫(f − g)₊ over the crossing cells given, number of terms summed): split in
    ``SPLIT_PIECES`` up to ``SPLIT_LEVELS`` times, the last crossing pieces bounded coarsely."""
    total, count = 0.0, 0
    frac = np.linspace(0.0, 1.0, SPLIT_PIECES + 1)
    for level in range(SPLIT_LEVELS + 1):
        if level:
            w = (x1 - x0)[:, None]
            edges = x0[:, None] + w * frac[None, :]
            edges[:, -1] = x1
            x0, x1 = edges[:, :-1].ravel(), edges[:, 1:].ravel()
            a, s = np.repeat(a, SPLIT_PIECES), np.repeat(s, SPLIT_PIECES)
        et = np.full_like(x0, eps_t)
        shift = et - eps
        low0, up0 = _log_ratio_bounds(law, a, s, x0, shift)
        low1, up1 = _log_ratio_bounds(law, a, s, x1, shift)
        positive = (low0 >= 0.0) & (low1 >= 0.0)
        crossing = ~positive & ~((up0 < 0.0) & (up1 < 0.0))
        if positive.any():
            p = positive
            total += float(_positive_integral(law, a[p], s[p], x0[p], x1[p], et[p], eps).sum())
            count += int(p.sum())
        if not crossing.any():
            break
        c = crossing
        if level == SPLIT_LEVELS or int(c.sum()) > MAX_SPLIT_PIECES:
            total += float(_coarse(law, a[c], s[c], x0[c], x1[c], et[c], eps).sum())
            count += int(c.sum())
            break
        a, s, x0, x1 = a[c], s[c], x0[c], x1[c]
    return total, count


#: A crossing cell whose coarse bound Δv·(f(v₁) − g(v₀))₊ is at most this share of the candidate's T1
#: (shared among the crossing cells) keeps that bound; larger ones are split (tightness only: every
#: bound here is valid).
REFINE_SHARE = 2.0**-12


def t2_upper(
    terms: CellTerms, law: Repetitions, eps: float, eps_tilde: float, *, scale: float = 0.0, give_up: float = math.inf
) -> float:
    """Certified upper bound of T2(ε, ε̃) = ∫₀¹ (e^{ε̃}φ'(B(v)) − e^{ε}φ'(v))₊ dv; ``scale`` (the candidate's
    T1) sets how small a crossing cell's coarse bound may stay unsplit (``REFINE_SHARE``); once the sum
    passes ``give_up`` the answer is ``inf`` (a candidate already worse than one the caller has)."""
    total, count, crossing = _top_level(terms, eps, eps_tilde)
    if total > give_up:
        return math.inf
    if crossing.any():
        env, c = terms.env, crossing
        et = np.full(int(c.sum()), eps_tilde)
        coarse = _coarse(law, env.a[c], env.s[c], env.x0[c], env.x1[c], et, eps)
        keep = coarse <= REFINE_SHARE * scale / coarse.size
        total, count = total + float(coarse[keep].sum()), count + int(keep.sum())
        idx = np.flatnonzero(c)[~keep]
        if idx.size:
            more, extra = _split_crossings(law, env.a[idx], env.s[idx], env.x0[idx], env.x1[idx], eps, eps_tilde)
            total, count = total + more, count + extra
    return total + sum_error_bound(count + 1, total)


def t1_upper(law: Repetitions, deltas: FloatArray) -> FloatArray:
    """Certified 1 − φ(1 − δ) for each δ (≤ E[K]·δ by convexity, and ≤ 1)."""
    d = np.asarray(deltas, dtype=np.float64)
    tail = widen_up(law.pgf_tail(d), 2 * _EXP_UNITS) + law.pgf_error
    return np.asarray(np.minimum(np.minimum(tail, widen_up(law.mean * d, _EXP_UNITS)), 1.0), dtype=np.float64)


#: The profile route tries every ``COARSE_STRIDE``-th ε̃ of the profile grid first, then every ε̃ within
#: one stride of the best coarse one (any ε̃ gives a valid bound: this only decides how tight).
COARSE_STRIDE = 8


@dataclass(frozen=True)
class ProfileRoute:
    """The profile route over one base profile: :meth:`delta` is min over ε̃ of T1 + T2 (module docstring)."""

    law: Repetitions
    epsilons: FloatArray  # the profile grid (ascending, ≥ 0)
    deltas: FloatArray  # certified upper ends of δ_Q there, made non-increasing
    t1: FloatArray  # T1 at each grid point
    terms: CellTerms

    @classmethod
    def build(cls, law: Repetitions, epsilons: FloatArray, deltas: FloatArray) -> ProfileRoute:
        eps = np.asarray(epsilons, dtype=np.float64)
        order = np.argsort(eps)
        eps = eps[order]
        # δ_Q is non-increasing in ε: an upper end at a smaller ε also bounds every larger ε's δ
        dl = np.minimum.accumulate(np.minimum(np.asarray(deltas, dtype=np.float64)[order], 1.0))
        return cls(law, eps, dl, t1_upper(law, dl), CellTerms.of(envelope(eps, dl), law))

    def _total(self, epsilon: float, j: int, best: float) -> float:
        t1 = float(self.t1[j])
        return t1 + t2_upper(self.terms, self.law, epsilon, float(self.epsilons[j]), scale=t1, give_up=best - t1)

    def delta(self, epsilon: float, *, below: float = 1.0) -> tuple[float, float]:
        """(certified upper bound of the selection's δ(ε), the ε̃ that gives it); ε̃ with T1 ≥ ``below``
        are skipped (a caller that only asks whether δ(ε) < ``below``)."""
        useful = np.flatnonzero((self.epsilons <= epsilon) & (self.t1 < min(below, 1.0)))
        if useful.size == 0:
            return 1.0, 0.0
        coarse = useful[::-COARSE_STRIDE][::-1]  # always includes the largest useful ε̃
        totals: dict[int, float] = {}
        for j in (int(i) for i in coarse[::-1]):  # from the largest ε̃ (smallest T1) down
            totals[j] = self._total(epsilon, j, min(totals.values(), default=1.0))
        best = min(totals, key=totals.__getitem__)
        first, last = max(int(useful[0]), best - COARSE_STRIDE), min(int(useful[-1]), best + COARSE_STRIDE)
        for j in range(first, last + 1):
            if j not in totals and self.t1[j] < below:
                totals[j] = self._total(epsilon, j, totals[best])
        best = min(totals, key=totals.__getitem__)
        return float(min(1.0, next_up(totals[best]))), float(self.epsilons[best])


__all__ = ["CellTerms", "Envelope", "ProfileRoute", "envelope", "t1_upper", "t2_upper"]

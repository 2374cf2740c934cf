"""The public :class:`PrivacyLossDistribution`: lazy composition and certified δ(ε) / ε(δ) queries."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np
import numpy.typing as npt
from scipy.signal import lfilter
from scipy.special import logsumexp

from optcomp._numerics import (
    DEFAULT_ACCURACY,
    EPSILON_XTOL,
    PLD_MAX_FFT_LENGTH,
    UNIT_ROUNDOFF,
    Accuracy,
    Bound,
    FloatArray,
    check_int,
    check_nonnegative,
    check_probability,
)
from optcomp.mechanisms._law import PrivacyLossLaw
from optcomp.mechanisms._spec import Neighbouring, check_neighbouring, combined_relation
from optcomp.pld._compose import Composed, compose
from optcomp.pld._discretise import DiscreteLaw, discretise

_U = UNIT_ROUNDOFF
#: ln(1/η) values of the Hoeffding candidates t = sqrt(D·ln(1/η)/2).
_HOEFFDING_LOGS = np.geomspace(1e-2, 800.0, 72)
#: λ values of the Chernoff (moment) bound.
_LAMBDAS = np.geomspace(1e-3, 1e4, 160)
#: Rows of a Chernoff sum more than e^{-_PRUNE} below the largest are bounded crudely.
_PRUNE = 60.0
#: The FFT bound is trusted alone while it exceeds this multiple of its additive error floor.
_FLOOR_FACTOR = 100.0


def _chernoff_log_mgf(law: DiscreteLaw) -> FloatArray:
    """Certified upper bound on log E[e^{λL}; L finite, L ≤ far edge] on the grid ``_LAMBDAS``.

    Rows whose crude bound log m + λ·(lower + width) lies more than ``_PRUNE`` below the largest one
    are not summed exactly; their total is bounded by count·e^{max − _PRUNE} and added.
    """
    ch = law.chernoff
    rows = ch.log_mass > -np.inf
    lm, lo, wd, fr = ch.log_mass[rows], ch.lower[rows], ch.width[rows], ch.frac[rows]
    if lm.size == 0:
        return np.full(_LAMBDAS.size, -np.inf)
    hi_edge = lo + wd
    with np.errstate(divide="ignore"):
        l1, l2 = np.log1p(-fr), np.log(fr)
    out = np.empty(_LAMBDAS.size)
    for i, lam in enumerate(_LAMBDAS):
        crude = lm + lam * hi_edge
        top = float(np.max(crude))
        sel = crude > top - _PRUNE
        terms = lm[sel] + np.logaddexp(lam * lo[sel] + l1[sel], lam * hi_edge[sel] + l2[sel])
        rest = int(lm.size - np.count_nonzero(sel))
        val = float(logsumexp(terms))
        if rest:
            val = float(np.logaddexp(val, math.log(rest) + top - _PRUNE))
        out[i] = val
    scale = float(np.max(np.abs(lo) + wd))
    slack = (4 * lm.size + 16) * _U * (1 + np.abs(out)) + 8 * _U * (_LAMBDAS * scale + 1)
    return np.asarray(np.where(np.isfinite(out), out + slack, out), dtype=np.float64)


class _TiltedStick:
    """δ̃ evaluated through an exponentially tilted composition (relative accuracy in the tail).

    Each part's vector is tilted, x̃_ij = x_ij e^{θ s_ij − ln M_i} (s_ij its mid-placed loss), and the
    tilted parts are composed by FFT (:func:`~optcomp.pld._compose.compose`, with its own window and
    error budget F_θ). With L_c = Σ k_i ln M_i, the composed mid-placed sub-measure is
    y_J = z_J e^{L_c − θ s_J}, so δ̃(x) = e^{L_c − θx} Σ_{s_J > x} z_J e^{−θ(s_J − x)}(1 − e^{x − s_J}):
    a sum of z with weights in [0, 1], whose error is F_θ + wrap_θ + rounding, scaled by e^{L_c − θx}.
    Entry-wise tilt rounding (relative ρ per step) multiplies the result by at most (1 + ρ)^k.
    """

    def __init__(self, laws: list[tuple[DiscreteLaw, int]], theta: float, tail_mass: float) -> None:
        tilted = []
        log_const = 0.0
        rel = 0.0
        for law, k in laws:
            x = law.masses
            mid = (law.first_cell + np.arange(x.size) + 0.5) * law.step
            with np.errstate(divide="ignore"):
                lw = np.log(x) + theta * mid
            log_m = float(logsumexp(lw))
            xt = np.exp(lw - log_m)
            finite = np.isfinite(lw)
            big = float(np.max(np.abs(lw[finite]))) if np.any(finite) else 0.0
            rel += k * 8 * _U * (big + abs(log_m) + float(np.max(np.abs(mid))) * theta + 2)
            log_const += k * log_m
            tilted.append((replace(law, masses=xt), k))
        self.theta = theta
        self.log_const = log_const
        self.rel_up = math.expm1(rel * 1.01 + 8 * _U * (abs(log_const) + 1))
        c = compose(tilted, tail_mass)
        self.n = c.masses.size
        self._first, self._count, self._step = c.first_index, c.count, c.step
        z = c.masses
        self.c_sum = lfilter([1.0], [1.0, -math.exp(-theta * c.step)], z[::-1])[::-1]
        self.d_sum = lfilter([1.0], [1.0, -math.exp(-(theta + 1.0) * c.step)], z[::-1])[::-1]
        self.floor = (c.fft_error + c.wrap_mass) * (1 + 16 * _U)

    def _s(self, j: npt.NDArray[np.int64]) -> FloatArray:
        return np.asarray((2.0 * (self._first + j) + self._count) * (0.5 * self._step), dtype=np.float64)

    def upper(self, x: FloatArray) -> FloatArray:
        """Certified upper bound on δ̃(x) (the mid-placed hockey stick) for each x."""
        return self._bound(x, 1.0)

    def lower(self, x: FloatArray) -> FloatArray:
        """Certified lower bound on δ̃(x) for each x."""
        return self._bound(x, -1.0)

    def _bound(self, x: FloatArray, side: float) -> FloatArray:
        s0 = float(self._s(np.zeros(1, dtype=np.int64))[0])
        j = np.clip(np.floor((x - s0) / self._step) + 1.0, 0, self.n).astype(np.int64)
        while True:
            up = (j < self.n) & (self._s(np.minimum(j, self.n - 1)) <= x)
            down = (j > 0) & (self._s(np.maximum(j - 1, 0)) > x)
            if not (np.any(up) or np.any(down)):
                break
            j = j + up.astype(np.int64) - down.astype(np.int64)
        valid = j < self.n
        jj = np.minimum(j, self.n - 1)
        sj = self._s(jj)
        cj, dj = self.c_sum[jj], self.d_sum[jj]
        gap = np.maximum(sj - x, 0.0)
        inner = np.where(valid, np.exp(-self.theta * gap) * (cj - np.exp(-gap) * dj), 0.0)
        rounding = np.where(
            valid,
            3.03 * self.n * _U * (cj + dj) + 8 * _U * (np.abs(x) + np.abs(sj) + 1) * (1 + self.theta) * cj,
            0.0,
        )
        log_pref = self.log_const - self.theta * x
        log_pref = log_pref + side * 8 * _U * (np.abs(log_pref) + 1)
        with np.errstate(over="ignore"):
            if side > 0:
                total = (np.maximum(inner, 0.0) + rounding + self.floor) * (1 + self.rel_up) * (1 + 8 * _U)
            else:
                total = np.maximum(inner - rounding - self.floor, 0.0) * (1 - self.rel_up) * (1 - 8 * _U)
            pref = np.exp(log_pref)
        # e^{L_c − θx} can overflow (θ up to 1e4) where total is 0 (inf·0 = nan) or tiny: go through logs.
        with np.errstate(invalid="ignore"):
            out = np.where(total > 0, pref * total, 0.0)
        big = ~np.isfinite(pref) & (total > 0)
        if np.any(big):
            log_out = log_pref[big] + np.log(total[big])
            with np.errstate(over="ignore"):
                out[big] = np.exp(log_out + side * 8 * _U * (np.abs(log_out) + 1))
        return np.asarray(out, dtype=np.float64)


@dataclass
class _Direction:
    """One direction (remove or add) of a composition, realised: the composed vector and its budget."""

    laws: list[tuple[DiscreteLaw, int]]
    composed: Composed
    tail_mass: float

    def __post_init__(self) -> None:
        c, laws = self.composed, self.laws
        k = c.count
        n = c.masses.size
        y = c.masses
        self._first, self._count, self._step = c.first_index, k, c.step
        self.suffix = np.cumsum(y[::-1])[::-1]
        self.suffix_exp = lfilter([1.0], [1.0, -math.exp(-c.step)], y[::-1])[::-1]
        self.n = n
        self.b_lo = math.fsum(kk * law.mean_error[0] for law, kk in laws)
        self.b_hi = math.fsum(kk * law.mean_error[1] for law, kk in laws)
        self.r_min = math.fsum(kk * law.error_range[0] for law, kk in laws)
        self.r_max = math.fsum(kk * law.error_range[1] for law, kk in laws)
        self.spread = math.fsum(kk * (law.error_range[1] - law.error_range[0]) ** 2 for law, kk in laws)
        self.variance = math.fsum(kk * law.second_moment for law, kk in laws)
        self.jump = max(law.error_range[1] - law.error_range[0] for law, _ in laws)
        growth = math.exp(sum(kk * max(0.0, law.kept - 1.0) for law, kk in laws))
        nu = math.fsum(kk * law.mass_error for law, kk in laws) * growth
        dropped = math.fsum(kk * law.dropped for law, kk in laws)
        floor = nu + c.wrap_mass + c.fft_error
        self.err_lower = floor * (1 + 16 * _U)
        self.err_upper = (floor + dropped) * (1 + 16 * _U)
        log_fin = math.fsum(kk * math.log1p(-law.p_inf) if law.p_inf < 1 else -math.inf for law, kk in laws)
        self.p_inf_upper = min(1.0, -math.expm1(log_fin) * (1 + 16 * _U))
        self.p_inf_lower = max(0.0, -math.expm1(log_fin) * (1 - 16 * _U))
        self.s_max = float(self._s(np.array([n - 1]))[0]) if n else 0.0
        # the composed vector itself is no longer needed: keep only the suffix sums
        self.composed = replace(c, masses=np.zeros(0))
        self._chernoff: tuple[FloatArray, float] | None = None
        self._tilted: dict[int, _TiltedStick] = {}
        self._floor_const = (nu + dropped) * (1 + 16 * _U)
        self._nu = nu * (1 + 16 * _U)

    # -- the mid-placed hockey stick --------------------------------------------------------------
    def _s(self, j: npt.NDArray[np.int64]) -> FloatArray:
        """Mid-placed composed loss of bin j: s_j = (C_j + k/2)·Δ, C_j = first index + j."""
        return np.asarray((2.0 * (self._first + j) + self._count) * (0.5 * self._step), dtype=np.float64)

    def _index(self, x: FloatArray) -> npt.NDArray[np.int64]:
        """The first bin j with s_j > x (n if none), exactly as computed s_j compare."""
        s0 = float(self._s(np.zeros(1, dtype=np.int64))[0])
        with np.errstate(invalid="ignore"):
            guess = np.floor((x - s0) / self._step) + 1.0
        j = np.clip(np.nan_to_num(guess, nan=0.0), 0, self.n).astype(np.int64)
        while True:
            up = (j < self.n) & (self._s(np.minimum(j, self.n - 1)) <= x)
            down = (j > 0) & (self._s(np.maximum(j - 1, 0)) > x)
            if not (np.any(up) or np.any(down)):
                return j
            j = j + up.astype(np.int64) - down.astype(np.int64)

    def _tilde(self, x: FloatArray) -> tuple[FloatArray, FloatArray]:
        """δ̃(x) = Σ_{s_j > x} y_j (1 − e^{x − s_j}) from suffix sums, and its rounding error bound."""
        j = self._index(x)
        valid = j < self.n
        jj = np.minimum(j, self.n - 1)
        a, b, sj = self.suffix[jj], self.suffix_exp[jj], self._s(jj)
        with np.errstate(over="ignore", invalid="ignore"):
            val = np.where(valid, a - np.exp(np.minimum(x - sj, 0.0)) * b, 0.0)
            err = np.where(
                valid, 3.03 * self.n * _U * (a + b) + (8 * _U * (np.abs(x) + np.abs(sj)) + 8 * _U) * a, 0.0
            )
        return val, err

    def _hoeffding(self) -> tuple[FloatArray, FloatArray]:
        """Deviations t and tail bounds η(t) ≥ P(ΣR − EΣR ≤ −t) (and ≥ P(ΣR − EΣR ≥ t)).

        η = min(Hoeffding e^{−2t²/D}, Bernstein e^{−t²/(2(V + bt/3))}) with D = Σk_i(range_i)²,
        V = Σk_i E[R_i²] ≥ Σ Var R_i and b = max range ≥ |R_i − ER_i|.
        """
        if self.spread <= 0.0:
            return np.zeros(0), np.zeros(0)
        g = _HOEFFDING_LOGS
        t_h = np.sqrt(self.spread * g / 2.0)
        bg3 = self.jump * g / 3.0
        t_b = bg3 + np.sqrt(bg3 * bg3 + 2.0 * self.variance * g)
        t = np.concatenate([t_h, t_b])
        with np.errstate(divide="ignore"):
            log_h = -2.0 * t * t / self.spread
            log_b = -t * t / (2.0 * (self.variance + self.jump * t / 3.0))
        eta = np.exp(np.minimum(log_h, log_b)) * (1 + 16 * _U)
        return t, eta

    def finite_upper(self, eps: FloatArray) -> FloatArray:
        """Certified upper bound on E[(1 − e^{ε−S})_+; S finite] (``docs/pld.md`` §3)."""
        t, eta = self._hoeffding()
        shifts = np.concatenate([[self.r_min], self.b_lo - t])
        etas = np.concatenate([[0.0], eta])
        x = eps[:, None] + shifts[None, :]
        x = x - 4 * _U * (np.abs(eps[:, None]) + np.abs(shifts[None, :]) + 1)
        val, err = self._tilde(x)
        best = np.min(val + err + etas[None, :], axis=1)
        return np.asarray(np.maximum(best, 0.0) + self.err_upper, dtype=np.float64)

    def finite_lower(self, eps: FloatArray) -> FloatArray:
        """Certified lower bound on E[(1 − e^{ε−S})_+; S finite]."""
        t, eta = self._hoeffding()
        shifts = np.concatenate([[self.r_max], self.b_hi + t])
        etas = np.concatenate([[0.0], eta])
        x = eps[:, None] + shifts[None, :]
        x = x + 4 * _U * (np.abs(eps[:, None]) + np.abs(shifts[None, :]) + 1)
        val, err = self._tilde(x)
        best = np.max(val - err - etas[None, :], axis=1)
        return np.asarray(np.maximum(best - self.err_lower, 0.0), dtype=np.float64)

    # -- Chernoff / moment bound for the tails ------------------------------------------------------
    def chernoff(self) -> tuple[FloatArray, float]:
        """(log c_λ + Σ_i k_i log M_i(λ) on ``_LAMBDAS``, P(some loss = +∞ or beyond the far edge))."""
        if self._chernoff is None:
            total = np.zeros(_LAMBDAS.size)
            log_fin = 0.0
            for law, k in self.laws:
                total += k * _chernoff_log_mgf(law)
                pi = law.p_inf + law.chernoff.far_mass
                log_fin += k * math.log1p(-pi) if pi < 1 else -math.inf
            lam = _LAMBDAS
            log_c = -np.log1p(lam) + lam * (np.log(lam) - np.log1p(lam))
            total = total + log_c
            with np.errstate(invalid="ignore"):
                total = np.where(np.isfinite(total), total + 8 * _U * (np.abs(total) + 1), total)
            p_far = min(1.0, -math.expm1(log_fin) * (1 + 16 * _U))
            self._chernoff = (total, p_far)
        return self._chernoff

    def chernoff_upper(self, eps: FloatArray) -> FloatArray:
        """δ(ε) ≤ P(+∞) + inf_λ c_λ E[e^{λ(S−ε)}; S finite], c_λ = (λ/(1+λ))^λ/(1+λ) (``docs/pld.md`` §4)."""
        total, p_far = self.chernoff()
        expo = total[None, :] - _LAMBDAS[None, :] * eps[:, None]
        expo = expo + 8 * _U * (np.abs(_LAMBDAS[None, :] * eps[:, None]) + 1)
        with np.errstate(over="ignore"):
            return np.asarray(
                np.minimum(1.0, p_far + np.exp(np.min(expo, axis=1)) * (1 + 16 * _U)), dtype=np.float64
            )

    def chernoff_epsilon(self, delta: float) -> float:
        """The least ε the Chernoff bound certifies for ``delta`` (inf if none)."""
        total, p_far = self.chernoff()
        room = delta - p_far
        if room <= 0:
            return math.inf
        eps = (total - math.log(room)) / _LAMBDAS
        return max(0.0, float(np.min(eps)) * (1 + 64 * _U) + 64 * _U)

    def _stick(self, idx: int) -> _TiltedStick:
        if idx not in self._tilted:
            self._tilted[idx] = _TiltedStick(self.laws, float(_LAMBDAS[idx]), self.tail_mass)
        return self._tilted[idx]

    def tilted(self, eps: FloatArray, side: float) -> FloatArray:
        """``finite_upper`` (side=+1) / ``finite_lower`` (side=−1) with δ̃ from a tilted FFT.

        The tilt θ for each ε is the grid λ that minimises the Chernoff bound there (``_TiltedStick``);
        tilted compositions are cached per grid index. Additive terms that tilting does not scale
        (mass errors ν, and for the upper the dropped tails) are applied as in the untilted bounds.
        """
        if not all(np.any(law.masses > 0) for law, _ in self.laws):
            return np.full(eps.size, np.inf if side > 0 else 0.0)
        total, _ = self.chernoff()
        best = np.argmin(total[None, :] - _LAMBDAS[None, :] * eps[:, None], axis=1)
        t, eta = self._hoeffding()
        if side > 0:
            shifts = np.concatenate([[self.r_min], self.b_lo - t])
        else:
            shifts = np.concatenate([[self.r_max], self.b_hi + t])
        etas = np.concatenate([[0.0], eta])
        out = np.zeros(eps.size)
        for idx in np.unique(best):
            rows = best == idx
            stick = self._stick(int(idx))
            e = eps[rows]
            x = e[:, None] + shifts[None, :]
            x = x - side * 4 * _U * (np.abs(e[:, None]) + np.abs(shifts[None, :]) + 1)
            if side > 0:
                out[rows] = np.min(stick.upper(x.ravel()).reshape(x.shape) + etas[None, :], axis=1)
            else:
                out[rows] = np.max(stick.lower(x.ravel()).reshape(x.shape) - etas[None, :], axis=1)
        if side > 0:
            return np.asarray(out + self._floor_const, dtype=np.float64)
        return np.asarray(np.maximum(out - self._nu, 0.0), dtype=np.float64)

    def upper(self, eps: FloatArray, target: float = -1.0) -> FloatArray:
        """Certified upper δ(ε); where the FFT bound is near its additive error floor, the Chernoff
        bound and the tilted-FFT bound are consulted too, unless the FFT bound is already ≤ ``target``
        (a cheap answer to "is δ(ε) ≤ target?")."""
        up = np.minimum(1.0, self.p_inf_upper + self.finite_upper(eps))
        need = (up < _FLOOR_FACTOR * (self.err_upper + self.p_inf_upper)) & (up > target)
        if np.any(need):
            cand = np.fmin(self.chernoff_upper(eps[need]), self.p_inf_upper + self.tilted(eps[need], 1.0))
            up[need] = np.fmin(up[need], cand)
        return np.asarray(up, dtype=np.float64)

    def lower(self, eps: FloatArray, target: float | None = None) -> FloatArray:
        """Certified lower δ(ε); near the FFT floor the tilted-FFT lower bound is consulted too, unless
        ``target`` (the question "is δ(ε) > target?") lies above that region, where it cannot help."""
        fin = self.finite_lower(eps)
        floor = _FLOOR_FACTOR * self.err_lower
        need = (fin < floor) & (self.p_inf_lower < 1.0)
        if target is not None:
            need &= (target < floor) & (self.p_inf_lower + fin <= target)
        if np.any(need):
            fin[need] = np.maximum(fin[need], self.tilted(eps[need], -1.0))
        return np.asarray(np.minimum(1.0, self.p_inf_lower + fin), dtype=np.float64)


def _merge(parts: list[tuple[PrivacyLossLaw, int]]) -> list[tuple[PrivacyLossLaw, int]]:
    out: list[tuple[PrivacyLossLaw, int]] = []
    for law, k in parts:
        for i, (other, kk) in enumerate(out):
            if other is law:
                out[i] = (law, kk + k)
                break
        else:
            out.append((law, k))
    return out


class PrivacyLossDistribution:
    """Privacy loss distribution of a (heterogeneous) composition, with certified δ(ε) brackets.

    A PLD is a list of parts (remove law, add law, count); compositions only extend the list. On the
    first query each direction is realised once: every law is discretised on the grid of step
    Δ = ``accuracy.grid_step`` (:mod:`optcomp.pld._discretise`), the parts are composed by one FFT
    (:mod:`optcomp.pld._compose`), and queries read suffix sums of the composed vector.

    Every ``delta``/``epsilon`` answer is a :class:`~optcomp.Bound` whose ``upper`` is certified; it
    covers: the rounding of losses to the grid (deterministic drift Σ k_i·r_min, or Hoeffding/Bernstein
    bounds on the mid-placed rounding error), the truncated tails (added), the mass that wraps around
    the FFT window (Chernoff), the floating-point error of the masses and of the FFT, and, for small
    δ, an exponentially tilted FFT (relative error in the tail) and a Chernoff (moment) bound from
    the law's exact cell masses, all intersected. ``lower`` subtracts the same errors.
    ``docs/pld.md`` gives the proofs.

    δ(ε) is the maximum over the remove and add directions; ε(δ) inverts both ends by bisection.
    """

    def __init__(
        self,
        parts: tuple[tuple[PrivacyLossLaw, PrivacyLossLaw | None, int], ...],
        accuracy: Accuracy,
        neighbouring: Neighbouring | None = None,
    ) -> None:
        self._parts = parts
        self._accuracy = accuracy
        self._neighbouring = check_neighbouring("neighbouring", neighbouring)

    # -- construction -----------------------------------------------------------------------------
    @classmethod
    def from_laws(
        cls,
        remove: PrivacyLossLaw,
        add: PrivacyLossLaw | None = None,
        *,
        accuracy: Accuracy = DEFAULT_ACCURACY,
        neighbouring: Neighbouring | None = None,
    ) -> PrivacyLossDistribution:
        """The PLD of one mechanism from its exact laws.

        Args:
            remove: law of L = ln(dP/dQ) for the remove-direction pair (P, Q).
            add: law for the reversed pair; ``None`` (or ``remove`` itself) means symmetric.
            accuracy: the grid step and tail budget (:class:`~optcomp.Accuracy`).
            neighbouring: the relation the laws are stated for, or ``None`` (relation-agnostic).
        """
        if not isinstance(remove, PrivacyLossLaw):
            raise TypeError(f"remove must be a PrivacyLossLaw, got {remove!r}")
        if add is not None and not isinstance(add, PrivacyLossLaw):
            raise TypeError(f"add must be a PrivacyLossLaw or None, got {add!r}")
        if not isinstance(accuracy, Accuracy):
            raise TypeError(f"accuracy must be an Accuracy, got {accuracy!r}")
        return cls(((remove, None if add is remove else add, 1),), accuracy, neighbouring)

    @property
    def accuracy(self) -> Accuracy:
        """The accuracy this PLD is realised with."""
        return self._accuracy

    @property
    def neighbouring(self) -> Neighbouring | None:
        """The neighbouring relation this PLD is stated for (``None``: relation-agnostic, i.e. valid for
        whichever relation the mechanisms' sensitivities were stated under)."""
        return self._neighbouring

    @property
    def count(self) -> int:
        """The number of mechanisms composed."""
        return sum(k for _, _, k in self._parts)

    @property
    def symmetric(self) -> bool:
        """Whether every part is symmetric (then only one direction is computed)."""
        return all(add is None for _, add, _ in self._parts)

    def compose(self, other: PrivacyLossDistribution) -> PrivacyLossDistribution:
        """The PLD of running both compositions (heterogeneous; realised lazily)."""
        if not isinstance(other, PrivacyLossDistribution):
            raise TypeError(f"other must be a PrivacyLossDistribution, got {other!r}")
        if other._accuracy != self._accuracy:
            raise ValueError(
                f"cannot compose PLDs of different accuracy: {self._accuracy} and {other._accuracy}"
            )
        relation = combined_relation(self._neighbouring, other._neighbouring, what="the two PLDs")
        return PrivacyLossDistribution(self._parts + other._parts, self._accuracy, relation)

    def self_compose(self, k: int) -> PrivacyLossDistribution:
        """The k-fold composition; its cost does not grow with k beyond the width of the grid."""
        k = check_int("k", k, minimum=1)
        return PrivacyLossDistribution(
            tuple((r, a, c * k) for r, a, c in self._parts), self._accuracy, self._neighbouring
        )

    # -- realisation ------------------------------------------------------------------------------
    def _realise(self, laws: list[tuple[PrivacyLossLaw, int]]) -> _Direction:
        merged = _merge(laws)
        total = sum(k for _, k in merged)
        acc = self._accuracy
        log_tail = math.log(acc.tail_mass) - math.log(4.0 * total)
        disc = [(discretise(law, acc.grid_step, log_tail, PLD_MAX_FFT_LENGTH), k) for law, k in merged]
        return _Direction(disc, compose(disc, acc.tail_mass), acc.tail_mass)

    @cached_property
    def _directions(self) -> tuple[_Direction, ...]:
        remove = self._realise([(r, k) for r, _, k in self._parts])
        if self.symmetric:
            return (remove,)
        add = self._realise([(r if a is None else a, k) for r, a, k in self._parts])
        return (remove, add)

    # -- queries ----------------------------------------------------------------------------------
    def _bounds(self, eps: FloatArray) -> tuple[FloatArray, FloatArray]:
        dirs = self._directions
        lo = np.max([d.lower(eps) for d in dirs], axis=0)
        hi = np.max([d.upper(eps) for d in dirs], axis=0)
        return np.minimum(lo, hi), hi

    def delta(self, epsilon: float) -> Bound:
        """Certified bracket of δ(ε) = max(δ_remove(ε), δ_add(ε)), δ_{P‖Q}(ε) = E_P[(1 − e^{ε−L})_+].

        Args:
            epsilon: ε ≥ 0.
        """
        eps = check_nonnegative("epsilon", epsilon)
        lo, hi = self._bounds(np.array([eps]))
        return Bound(float(lo[0]), float(hi[0]))

    def delta_curve(self, epsilons: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
        """Vectorised :meth:`delta`: arrays (lower, upper) of δ(ε) for each ε ≥ 0 in ``epsilons``."""
        eps = np.asarray(epsilons, dtype=np.float64).ravel()
        if eps.size and (not np.all(np.isfinite(eps)) or np.any(eps < 0)):
            bad = eps[~(np.isfinite(eps) & (eps >= 0))][0]
            raise ValueError(f"epsilons must be in [0, inf), got {bad!r}")
        lo, hi = self._bounds(eps)
        return lo, hi

    def _upper_at(self, eps: float, target: float = -1.0) -> float:
        return float(np.max([d.upper(np.array([eps]), target)[0] for d in self._directions]))

    def _lower_at(self, eps: float, target: float | None = None) -> float:
        return float(np.max([d.lower(np.array([eps]), target)[0] for d in self._directions]))

    def epsilon(self, delta: float) -> Bound:
        """Certified bracket of ε(δ) = inf{ε ≥ 0 : δ(ε) ≤ δ}.

        ``upper`` is an ε whose certified upper δ is ≤ ``delta``; ``lower`` is an ε whose certified
        lower δ exceeds ``delta`` (or 0). Both ends are found by bisection to ``EPSILON_XTOL``; either
        may be ``inf`` (e.g. when the mass at +∞ exceeds ``delta``).

        Args:
            delta: δ in [0, 1].
        """
        delta = check_probability("delta", delta)
        dirs = self._directions
        upper = self._epsilon_upper(delta, dirs)
        return Bound(min(self._epsilon_lower(delta, dirs, upper), upper), upper)

    def _epsilon_upper(self, delta: float, dirs: tuple[_Direction, ...]) -> float:
        if self._upper_at(0.0, delta) <= delta:
            return 0.0
        cands = []
        for d in dirs:
            top = d.s_max - min(d.r_min, d.b_lo) + 1.0
            if d.p_inf_upper + d.err_upper + math.exp(-_HOEFFDING_LOGS[-1]) >= delta / _FLOOR_FACTOR:
                top = min(top, d.chernoff_epsilon(delta))
            cands.append(top if d.p_inf_upper < delta else math.inf)
        hi = max(0.0, max(cands))
        if not math.isfinite(hi) or self._upper_at(hi, delta) > delta:
            hi = max(1.0, max(d.s_max - min(d.r_min, d.b_lo) + 1.0 for d in dirs))
            for _ in range(12):
                if self._upper_at(hi, delta) <= delta:
                    break
                hi = 2 * hi + 1.0
            else:
                return math.inf
        return self._bisect(0.0, hi, lambda e: self._upper_at(e, delta) <= delta, keep="hi")

    def _epsilon_lower(self, delta: float, dirs: tuple[_Direction, ...], upper: float) -> float:
        """Largest ε found with a certified lower δ(ε) > ``delta`` (every such ε is a valid lower end)."""
        if self._lower_at(0.0, delta) <= delta:
            return 0.0
        if max(d.p_inf_lower for d in dirs) > delta:
            return math.inf

        def ok(e: float) -> bool:
            return self._lower_at(e, delta) <= delta

        lo = 0.0
        hi = max(1.0, max(d.s_max - min(d.r_max, d.b_hi) + 1.0 for d in dirs))
        # s_max is the end of the FFT window, not the largest loss: the (tilted) lower bound can still
        # exceed delta beyond it, so search on, up to the certified upper end.
        for _ in range(12):
            if ok(hi):
                break
            lo = hi
            hi = upper if math.isfinite(upper) and upper > hi else 2 * hi + 1.0
        else:
            return lo
        return self._bisect(lo, hi, ok, keep="lo")

    @staticmethod
    def _bisect(lo: float, hi: float, ok: Callable[[float], bool], keep: str) -> float:
        """Bisection with ok(hi) true and ok(lo) false; returns hi (keep='hi') or lo."""
        for _ in range(200):
            if hi - lo <= EPSILON_XTOL * max(1.0, hi):
                break
            mid = 0.5 * (lo + hi)
            if ok(mid):
                hi = mid
            else:
                lo = mid
        return hi if keep == "hi" else lo

    def __repr__(self) -> str:
        return f"PrivacyLossDistribution(count={self.count}, parts={len(self._parts)}, accuracy={self._accuracy})"

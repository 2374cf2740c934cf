"""One end's composed vectors → certified δ(ε), and ε(δ) by bisection on the certified values.

Both ends read composed vectors that may be exponentially tilted (``docs/pld.md`` §6): an input
vector x over cell indices c is replaced by x̃_c = x_c e^{θΔc − ln M} (M its tilted mass), so the
composed vector y over summed indices J is y_J = z_J e^{L − θΔJ} with L = Σ k_i ln M_i and z the
composition of the x̃. Writing the hockey-stick sum with weights e^{−θ(s_J − ε)} ≤ 1 turns an
absolute error of z into an error *relative* to e^{L − θε}: the deep tail (δ down to 1e-300) is read
with the same FFT error bars as the bulk. θ = 0 is the untilted case.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.signal import lfilter

from optcomp._numerics import EPSILON_XTOL, SMALLEST_SUBNORMAL, Bound, FloatArray, GridTooLargeError
from optcomp._rounding import rounding_error, widen_down, widen_up
from optcomp.pld._fft import Composed

#: The smallest positive double: added to every entry of an upper envelope computed by exp (which is
#: only accurate to this absolute amount in the subnormal range).
_TINY = SMALLEST_SUBNORMAL
#: −ln of a weight e^{−θ(s − m)} beyond which exp returns exactly 0.0 (it does below −745.14), with room
#: for the rounding of θ(s − m): the test set's terms past it are zeros.
_UNDERFLOW = 760.0
#: Largest lift m − s_0 of the one-pass lower end (e^{lift} must stay far inside the float range).
_LIFT_MAX = 600.0


def tilt(
    logx: FloatArray, first: int, step: float, theta: float, side: float, normalise: bool = False
) -> tuple[FloatArray, float]:
    """(x̃, ln M) from ln x: x̃ = x e^{θΔc − ln M}, ln M = ln Σ x e^{θΔc} when θ > 0 or ``normalise``
    (else ln M = 0), rounded outwards by its relative error bound (``side`` = +1 for an upper
    envelope, which also gets the smallest double added to each non-empty entry, −1 for a lower one)."""
    c = (first + np.arange(logx.size, dtype=np.float64)) * step
    finite = np.isfinite(logx)
    if not np.any(finite):
        return np.zeros(logx.size), 0.0
    lw = logx + theta * c if theta != 0.0 else logx
    log_m = 0.0
    if theta != 0.0 or normalise:
        top = float(np.max(lw[finite]))
        log_m = top + math.log(float(np.sum(np.exp(lw[finite] - top))))
    arg = np.where(finite, lw - log_m, -np.inf)
    rho = rounding_error(8, 3 + abs(log_m) + float(np.max(np.abs(lw[finite]))) + theta * float(np.max(np.abs(c))))
    out = np.exp(arg) * (1 + side * rho)
    if side > 0:
        out = np.where(finite, out + _TINY, 0.0)
    return out, log_m


@dataclass
class UpperEnd:
    """Upper δ(ε) of the composed split vector z (loss s_j = (first + j)Δ, tilt θ, log scale L)."""

    composed: Composed
    step: float
    theta: float
    log_scale: float
    log_slack: float
    p_inf: float

    def __post_init__(self) -> None:
        z = self.composed.values
        self.n = z.size
        th, d = self.theta, self.step
        self.c_sum = lfilter([1.0], [1.0, -math.exp(-th * d)], z[::-1])[::-1]
        self.d_sum = lfilter([1.0], [1.0, -math.exp(-(th + 1.0) * d)], z[::-1])[::-1]
        # subnormal arithmetic has an absolute (not relative) error of up to _TINY per operation
        underflow = 8 * (self.n + 2) * _TINY
        self.floor = widen_up(self.composed.fft_error + self.composed.wrap + underflow, 16)
        self._s_max = float(self.s(np.array([self.n - 1]))[0])  # the last grid loss, read by every query

    def s(self, j: np.ndarray) -> FloatArray:
        return np.asarray((self.composed.first + j) * self.step, dtype=np.float64)

    def index(self, x: FloatArray) -> np.ndarray:
        """The first j with computed s_j > x (n if none)."""
        with np.errstate(invalid="ignore", over="ignore"):
            guess = np.floor(x / self.step - self.composed.first) + 1.0
        # as nan_to_num(nan=0) and then the clip (which sends ±inf to n and 0), without its overhead
        j = np.clip(np.where(np.isnan(guess), 0.0, guess), 0, self.n).astype(np.int64)
        while True:
            up = (j < self.n) & (self.s(np.minimum(j, self.n - 1)) <= x)
            down = (j > 0) & (self.s(np.maximum(j - 1, 0)) > x)
            if not (np.any(up) or np.any(down)):
                return j
            j = j + up.astype(np.int64) - down.astype(np.int64)

    def finite(self, eps: FloatArray) -> FloatArray:
        """Certified upper bound on the finite part Σ_{s_j > ε} y_j (1 − e^{ε − s_j}).

        ε beyond the last grid loss s_max is read at s_max: δ is non-increasing in ε, so that value
        bounds δ(ε) too, and θε stays finite (ε up to the largest double, e.g. 1e308)."""
        eps = np.minimum(np.asarray(eps, dtype=np.float64), self.s_max())
        j = self.index(eps)
        valid = j < self.n
        jj = np.minimum(j, self.n - 1)
        sj = self.s(jj)
        cj, dj = self.c_sum[jj], self.d_sum[jj]
        gap = np.maximum(sj - eps, 0.0)
        th = self.theta
        inner = np.where(valid, np.exp(-th * gap) * (cj - np.exp(-gap) * dj), 0.0)
        rounding = np.where(
            valid,
            rounding_error(3.03 * self.n, cj + dj) + rounding_error(8, np.abs(eps) + np.abs(sj) + 1) * (1 + th) * cj,
            0.0,
        )
        total = widen_up(np.maximum(inner, 0.0) + rounding + self.floor, 8)
        log_pref = self.log_scale - th * eps
        log_pref = log_pref + rounding_error(8, np.abs(log_pref) + th * np.abs(eps) + 1) + self.log_slack
        with np.errstate(divide="ignore", over="ignore"):
            out = np.exp(log_pref + np.log(total))
        # a NaN total (an overflowed composition) certifies nothing: +inf (δ = 1), never 0
        return np.asarray(np.where(total > 0, out, np.where(total == 0, 0.0, np.inf)), dtype=np.float64)

    @property
    def unit_floor(self) -> float:
        """The FFT floor in units of the end's scale e^{L − θε} (with its slack)."""
        return self.floor * math.exp(self.log_slack)

    def floor_at(self, eps: float) -> float:
        """The absolute error the FFT floor adds to :meth:`delta` at ε (e^{L − θε}·floor, as in
        :meth:`finite`): where it is a small share of the value, this end resolves ε."""
        e = min(eps, self.s_max())
        with np.errstate(over="ignore"):
            return float(self.floor * np.exp(self.log_scale - self.theta * e + self.log_slack))

    def delta(self, eps: FloatArray) -> FloatArray:
        """Certified upper bound on δ(ε) of the dominating pair (hence of the true pair)."""
        return np.asarray(np.minimum(1.0, self.p_inf + widen_up(self.finite(eps), 4)), dtype=np.float64)

    def s_max(self) -> float:
        return self._s_max


@dataclass
class LowerEnd:
    """Lower δ(ε) of the quantised-outcome pair: composed P-masses ``p`` and tilted Q-masses ``a``
    on one window, loss s_j = (first + j + k/2)Δ, with ln-scales ``log_p``, ``log_a`` (tilt θ); k may be a
    dyadic fraction (a two-level end's summed representative offsets, ``_blocks.representative``)."""

    p: Composed
    a: Composed
    count: float
    step: float
    theta: float
    log_p: float
    log_a: float
    log_slack: float
    p_inf: float

    def __post_init__(self) -> None:
        self.n = self.p.values.size
        underflow = 8 * (self.n + 2) * _TINY  # subnormal arithmetic: absolute error per operation
        self.err_p = widen_up(self.p.fft_error + self.p.wrap + underflow, 16)
        self.err_a = widen_up(self.a.fft_error + underflow, 16)
        self.s0 = (self.p.first + 0.5 * self.count) * self.step
        self._losses: FloatArray | None = None
        self._drift = 0.0
        self._thresholds: FloatArray | None = None

    @property
    def unit_floor(self) -> float:
        """The FFT floors of the P and tilted-Q sides in units of the end's scale, err_p + e·err_a (as
        the untilted end's settledness counts them)."""
        return self.err_p + math.e * self.err_a

    def _tables(self) -> tuple[FloatArray, FloatArray]:
        """(s_J, t_J) for every J, computed once: J is in the test set at ε iff t_J > ε (and s_J ≥ ε − τ),
        t_J = ln P_J − ln A_J + s_J − (log_a − log_p) (+inf where A_J = 0 < P_J, −inf where P_J = 0).

        This is P_J − e^{ε}Q_J > 0 in logs: shared by every ε a query reads (issue 27 item 7). Any test
        set gives a certified bound (Lemma 2), so the rounding of this rewriting costs nothing."""
        if self._losses is None or self._thresholds is None:
            s = self.s(np.arange(self.n))
            p, a = self.p.values, self.a.values
            with np.errstate(divide="ignore", invalid="ignore"):
                t = np.log(p) - np.log(a) + s - (self.log_a - self.log_p)
            t = np.where(p > 0, np.where(a > 0, t, np.inf), -np.inf)
            self._losses, self._thresholds = s, np.asarray(t, dtype=np.float64)
            gap = t - s
            gap = gap[np.isfinite(gap)]
            self._drift = max(0.0, float(np.median(gap))) if gap.size else 0.0
        return self._losses, self._thresholds

    @property
    def drift(self) -> float:
        """How far the computed losses t_J lie above the representatives s_J (the median of t_J − s_J,
        clipped at 0): a bin's loss ln(P_J/Q_J) is not s_J but s_J plus the summed offsets of the
        steps' losses inside their cells, which add up over many compositions (measured 2.9 at k = 10⁵,
        ``docs/pld.md`` §3). Only the choice of the test set reads it."""
        self._tables()
        return self._drift

    def s(self, j: np.ndarray) -> FloatArray:
        return np.asarray((self.p.first + j + 0.5 * self.count) * self.step, dtype=np.float64)

    def test_set(self, eps: float) -> tuple[float, ...] | None:
        """Sums over the test set T = {J : computed P_J − e^ε Q_J > 0, s_J ≥ ε − τ}, τ = 1/(1 + θ), or, for a
        tilted end (θ > 0), over T' = {… , s_J ≥ ε − τ − :attr:`drift`} where that gives the larger
        :meth:`bound` at ε (either is one test set of Lemma 2, so the larger of the two certified bounds is
        one; T' keeps the bins whose computed loss exceeds ε although their representative s_J lies more
        than τ below it, ``docs/pld.md`` §3). Untilted ends keep T: the ε(δ) refinement's step schedule is
        tuned on their brackets (a wider-reaching T there stops it one pass coarser, which moves e.g.
        ``dpsgd.noise_multiplier(3, 256/60000, 3516, 1e-5)`` from 0.7282298 to 0.7282403).

        Returns (m, SP, SA, rounding_P, rounding_A) with m = min_T s_J, SP = Σ_T e^{−θ(s_J − m)} zP_J and
        SA = Σ_T e^{−(θ+1)(s_J − m)} zA_J (weights ≤ 1), or ``None`` if T is empty.
        """
        tau = 1.0 / (1.0 + self.theta)
        near = self._test_set(eps, eps - tau)
        if self.theta == 0.0 or self.drift <= 0.0:
            return near
        far = self._test_set(eps, eps - tau - self.drift)
        if far is None or far == near:
            return near
        if near is None:
            return far
        return far if self.bound(eps, far) > self.bound(eps, near) else near

    def _test_set(self, eps: float, lo_s: float) -> tuple[float, ...] | None:
        """:meth:`test_set` over {J : computed P_J − e^ε Q_J > 0, s_J ≥ ``lo_s``}."""
        th = self.theta
        first = (lo_s - self.s0) / self.step
        if not first < self.n + 1:  # every grid loss is below ε − τ (also ε = 1e308): T is empty
            return None
        j0 = max(0, math.floor(first) - 1)
        if j0 >= self.n:
            return None
        losses, thresholds = self._tables()
        # s_J = (first + J + k/2)Δ is non-decreasing in J (a product by Δ > 0 rounds monotonically), so
        # {J ≥ j0 : s_J ≥ lo_s} is the suffix from j1: one search instead of a comparison per bin
        j1 = max(j0, int(np.searchsorted(losses, lo_s, side="left")))
        pos = thresholds[j1:] > eps
        count = int(np.count_nonzero(pos))
        if count == 0:
            return None
        i0 = int(np.argmax(pos))
        m = float(losses[j1 + i0])
        last = pos.size - 1 if pos[-1] else pos.size - 1 - int(np.argmax(pos[::-1]))
        top = float(losses[j1 + last])  # s_J increases with J
        end = pos.size
        if th > 0.0:  # past m + _UNDERFLOW/θ both weights are exactly 0.0: their products need no work
            end = int(np.searchsorted(losses, m + _UNDERFLOW / th, side="right")) - j1
        sp, sa = self._sums(losses, m, pos[i0:end], j1 + i0, count)
        # each weight and product is within γ relatively; the sums within (n + 4)u
        gamma = rounding_error(8, 3 + (th + 1) * (max(abs(m), abs(top)) + abs(m) + 1)) + rounding_error(count + 4)
        return m, sp, sa, gamma * sp, gamma * sa

    def _sums(self, losses: FloatArray, m: float, pos: npt.NDArray[np.bool_], lo: int, count: int) -> tuple[float, float]:
        """(SP, SA) of :meth:`test_set` over the members J = lo + i (``pos[i]``), zero-padded to ``count``
        terms. Where every bin from lo on is a member (the usual case in a tilted end), the bins are
        read as slices, not gathered: the same values in the same order."""
        full = np.zeros(count)  # shared by the two sums (its tail stays zero)
        if int(np.count_nonzero(pos)) == pos.size:
            idx: slice | npt.NDArray[np.intp] = slice(lo, lo + pos.size)
        else:
            idx = lo + np.flatnonzero(pos)
        p, a = self.p.values[idx], self.a.values[idx]
        d = losses[idx] - m
        th = self.theta
        return _weighted_sum(d, -th, p, full), _weighted_sum(d, -(th + 1.0), a, full)

    def bound(self, eps: float, t: tuple[float, ...]) -> float:
        """G_T(ε) = e^{log_p − θm}(SP − errP) − e^{log_a + ε − (θ+1)m}(SA + errA): a certified lower bound
        on P_J(T) − e^ε Q_J(T) (Lemma 2) for the fixed test set T summarised by ``t``."""
        m, sp, sa, rp, ra = t
        th = self.theta
        p_part = sp - rp - self.err_p
        if not p_part > 0:
            return 0.0
        lp = self.log_p - th * m
        la = self.log_a + eps - (th + 1.0) * m
        slack = rounding_error(8, abs(lp) + abs(la) + abs(eps) + th * abs(m) + 1) + self.log_slack
        a_part = sa + ra + self.err_a
        if not a_part >= 0:  # NaN (an overflowed composition): no certificate
            return 0.0
        with np.errstate(over="ignore"):
            lv = math.log(p_part) + lp - slack
            la_v = math.log(a_part) + la + slack if a_part > 0 else -math.inf
        if la_v >= lv:
            return 0.0
        # e^{lv} − e^{la_v} = e^{lv}(1 − e^{la_v − lv}), computed safely downwards
        return widen_down(math.exp(lv) * -math.expm1(la_v - lv), 8)

    def finite_one(self, eps: float) -> float:
        """Certified lower bound on P_J(T) − e^ε Q_J(T) over the test set chosen at ε (Lemma 2)."""
        t = self.test_set(eps)
        return 0.0 if t is None else self.bound(eps, t)

    def root(self, eps: float, target: float) -> float:
        """Largest ε' found by iterating T ← T(ε'), ε' ← the root of G_T(ε') = target, from an ε with
        G_{T(ε)}(ε) > target. G_T decreases in ε; each candidate root is solved with the slack that
        :meth:`bound` charges and then *checked* with :meth:`bound` (backing off towards the current
        point until G_T > target), and an iterate is kept only if the test set chosen at it, T(ε'),
        also certifies G > target, so that :meth:`delta` at the returned ε agrees (a lower end that
        re-queries above ``target``)."""
        best = eps
        cur = eps
        th = self.theta
        for _ in range(40):
            t = self.test_set(cur)
            if t is None:
                break
            m, sp, sa, rp, ra = t
            p_part = sp - rp - self.err_p
            a_part = sa + ra + self.err_a
            if not p_part > 0 or a_part <= 0:
                break
            lp = self.log_p - th * m
            # bound()'s slack at |ε| ≤ |cur| + 2 (larger ε are rejected by the check below anyway)
            slack = (
                rounding_error(8, abs(lp) + abs(self.log_a) + 2 * (abs(cur) + 2) + (2 * th + 1) * abs(m) + 1)
                + self.log_slack
            )
            if lp - slack >= 700:
                break
            room = widen_down(math.exp(lp - slack) * p_part, 16) - widen_up(target, 16)
            if not room > 0:
                break
            root = math.log(room) - math.log(a_part) - self.log_a + (th + 1.0) * m - slack
            back = rounding_error(16, abs(root) + abs(lp) + abs(self.log_a) + (th + 1.0) * abs(m) + 1)
            cand = root - back
            while cand > cur and self.bound(cand, t) <= target and back < 1e-3 * (cand - cur + back):
                back *= 8.0
                cand = root - back
            if not cand > cur or self.bound(cand, t) <= target:
                break
            moved = cand - cur
            cur = cand
            if self.finite_one(cand) > target:
                best = cand
            if moved <= EPSILON_XTOL * max(1.0, abs(cand)):
                break
        return best

    def delta_suffix(self, eps: FloatArray) -> FloatArray:
        """Certified lower bound on δ(ε) at many ε in one pass, with the suffix test sets
        T(ε) = {J : s_J > ε} (any test set is valid for Lemma 2; this one differs from the computed-sign
        set of :meth:`test_set` only in bins near the boundary, where P_J − e^ε Q_J is O(Δ) of P_J).

        Untilted ends only (θ = 0; tilted ends fall back to :meth:`delta`). With suffix sums
        SP_j = Σ_{J≥j} zP_J and W_j = Σ_{J≥j} e^{−(s_J − s_0)} zA_J (weights ≤ 1; each sum within (n + 4)u,
        each weight within 8u(3 + |s_J| + |s_0|) relatively, and a weight product that underflows off by
        at most the smallest double, amplified by e^{m − s_0}), SA = e^{m − s_0} W_j, m = s_j; then
        :meth:`bound` as for one ε.
        """
        if self.theta != 0.0:
            return self.delta(eps)
        if not hasattr(self, "_suffix"):
            s_all = self.s(np.arange(self.n))
            w = np.exp(-(s_all - s_all[0])) * self.a.values
            sp = np.cumsum(self.p.values[::-1])[::-1]
            sw = np.cumsum(w[::-1])[::-1]
            self._suffix = (s_all, sp, sw)
        s_all, sp, sw = self._suffix
        j = np.searchsorted(s_all, eps, side="right")
        s_abs = float(np.max(np.abs(s_all)))
        out = np.zeros(eps.size)
        for i in range(eps.size):
            ji = int(j[i])
            if ji >= self.n:
                continue
            m = float(s_all[ji])
            lift = m - float(s_all[0])
            if lift > _LIFT_MAX:
                out[i] = self.finite_one(float(eps[i]))
                continue
            scale = math.exp(lift)
            gamma = rounding_error(8, 3 + 2 * (s_abs + abs(m) + 1)) + rounding_error(self.n - ji + 4)
            sa = scale * float(sw[ji])
            under = (self.n - ji + 2) * _TINY * scale
            t = (m, float(sp[ji]), sa, gamma * float(sp[ji]), gamma * sa + under)
            out[i] = self.bound(float(eps[i]), t)
        return np.asarray(np.minimum(1.0, widen_down(self.p_inf + out, 4)), dtype=np.float64)

    def delta(self, eps: FloatArray) -> FloatArray:
        """Certified lower bound on δ(ε) (p_inf is P(some step at +∞), always in T)."""
        fin = np.array([self.finite_one(float(e)) for e in eps])
        return np.asarray(np.minimum(1.0, widen_down(self.p_inf + fin, 4)), dtype=np.float64)

    def s_max(self) -> float:
        return float(self.s(np.array([self.n - 1]))[0])


def _weighted_sum(d: FloatArray, rate: float, values: FloatArray, full: FloatArray) -> float:
    """``np.sum`` of e^{rate·d}·values followed by ``full.size − d.size`` zeros, summed as that vector
    (so bit for bit the sum over a test set whose remaining terms underflowed to 0.0). The products are
    formed in place in the head of ``full`` (the same float operations as ``np.exp(rate * d) * values``);
    its tail must be zeros, and stays so."""
    head = full[: d.size]
    np.multiply(d, rate, out=head)
    # d is non-decreasing and rate ≤ 0: from the first argument below −_UNDERFLOW on, exp gives exactly
    # 0.0 (and is slowest there), so zeros are written instead
    live = bisect.bisect_left(head, True, key=lambda v: bool(v < -_UNDERFLOW))
    np.exp(head[:live], out=head[:live])
    head[live:] = 0.0
    np.multiply(head, values, out=head)
    return float(np.sum(full))


def informative_delta(b: Bound, epsilon: float) -> Bound:
    """``b``, the narrowest δ(ε) bracket the refinement reached, unless it is the trivial [0, 1].

    [0, 1] holds for every pair, so it certifies nothing: every pass's upper end was ≥ 1 (the composed
    error bound, e.g. the FFT floor times e^{L − θε} of §3/§6 in ``docs/pld.md``, overflows 1 or the
    floating-point range: too many compositions for any grid that fits the memory cap) and no lower end
    was positive. An ε(δ) query refuses the same case (the bracket [0, ∞]) with :class:`GridTooLargeError`;
    so does this one, naming why, instead of returning a bracket that only looks like an answer.

    Raises:
        GridTooLargeError: ``b`` is [0, 1].
    """
    if b.lower == 0.0 and b.upper >= 1.0:
        raise GridTooLargeError(
            f"no informative certified bracket for delta at epsilon = {epsilon:g}: the composed error bound "
            "reaches 1 at every grid step tried within the memory cap (or at the Accuracy.grid_step given); "
            "compose fewer mechanisms, or raise Accuracy.memory_cap"
        )
    return b

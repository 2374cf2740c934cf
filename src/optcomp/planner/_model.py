"""An *uncertified* guide for the ``mechanism_aware`` scale search (:mod:`optcomp.planner._search`).

The plan's ε at scale s as if the whole composition were μ-GDP (central limit): it only places the scales
that the PLD engine then certifies; nothing returned depends on it being right.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
from scipy.special import log_ndtr

from optcomp.planner._noise import APPROXIMATE, BOUNDED_RANGE, _gaussian_mu, gaussian_mus

if TYPE_CHECKING:
    from optcomp.planner._prepare import _Prepared


class _Model:
    """An *uncertified* guide for the ``mechanism_aware`` search: the plan's ε at scale s as if the whole
    composition were μ-GDP (central limit), with μ² = Σ_Gaussian μ_c² + Σ_Laplace-family copies·2·KL(ε_c)
    (KL(e) = e + e^{−e} − 1, the Laplace pair's KL divergence per copy of loss bound e). Only used to place
    the scales the engine certifies; the search corrects its level (and slope) by the certified values.

    Gaussian μ_c(ε_c) (all share δ_c) is a local power law fitted by two calibrations around the median
    free Gaussian ε_c (:meth:`refit`), exact near the scales the search visits.
    """

    def __init__(self, p: _Prepared) -> None:
        self.delta = p.plan.delta
        self.gdelta = p.gaussian_delta
        #: δ = 0 (pure ε-DP components only): no GDP picture; the search goes by the values alone
        self.usable = p.plan.delta > 0.0
        lap_e: list[float] = []  # per-copy loss bound at s = 1 (free) or fixed (locked)
        lap_n: list[float] = []
        lap_locked = 0.0
        gauss_e: list[float] = []  # ε_c at s = 1 of free Gaussians
        br_e: list[float] = []  # ε_c at s = 1 of free bounded-range steps
        self.gauss_locked = 0.0
        for st, cs, lk in zip(p.plan.statistics, p.comps, p.locked):
            for c in cs:
                if c.mechanism in BOUNDED_RANGE:  # an ε-BR step: 2·KL_max(ε) ≈ ε²/4 (uncertified guide)
                    if lk is None:
                        br_e.append(c.share * st.weight)
                    else:
                        lap_locked += _br2(c.share * lk)
                elif c.mechanism in APPROXIMATE:  # a discrete Gaussian is guided as the Gaussian (uncertified)
                    if lk is None:
                        gauss_e.append(c.share * st.weight)
                    else:
                        self.gauss_locked += _gaussian_mu(c.share * lk, self.gdelta) ** 2
                elif lk is None:
                    lap_e.append(c.share * st.weight / c.copies)
                    lap_n.append(float(c.copies))
                else:
                    lap_locked += c.copies * _kl2(c.share * lk / c.copies)
        self.lap_e = np.asarray(lap_e, dtype=np.float64)
        self.lap_n = np.asarray(lap_n, dtype=np.float64)
        self.lap_locked = lap_locked
        self.br_e = np.asarray(br_e, dtype=np.float64)
        self.gauss_e = np.asarray(gauss_e, dtype=np.float64)
        self.g_ref = float(np.median(self.gauss_e)) if self.gauss_e.size else 0.0
        self.g_s: float | None = None  # scale of the last fit
        self.g_mu = 0.0
        self.g_pow = 1.0

    def refit(self, s: float) -> None:
        """Fit μ(ε) = μ(ε_ref)·(ε/ε_ref)^γ around the median free Gaussian ε_c at scale s."""
        if not self.gauss_e.size or (self.g_s is not None and abs(math.log(s / self.g_s)) < 0.05):
            return
        e = self.g_ref * s
        m0, m1 = gaussian_mus([e * 0.9, e * 1.1], self.gdelta)
        if m0 > 0.0 and m1 > 0.0:
            self.g_s, self.g_mu = s, math.sqrt(m0 * m1)
            self.g_pow = math.log(m1 / m0) / math.log(1.1 / 0.9)

    def mu(self, s: float) -> float:
        e = self.lap_e * s
        total = self.lap_locked + self.gauss_locked + float(np.dot(self.lap_n, _kl2_array(e)))
        total += float(np.sum(_br2_array(self.br_e * s)))
        if self.gauss_e.size and self.g_s is not None:
            ratio = self.gauss_e * (s / (self.g_ref * self.g_s))
            total += self.g_mu**2 * float(np.sum(ratio ** (2.0 * self.g_pow)))
        return math.sqrt(total)

    def epsilon(self, s: float) -> float:
        """The model's ε at scale s (0 when μ-GDP needs none at δ; inf when it cannot reach δ)."""
        return _central_limit_epsilon(self.mu(s), self.delta)

    def solve(self, target: float, log_ratio: Callable[[float], float], start: float) -> float:
        """s with model ε(s)·exp(log_ratio(ln s)) = target, searched from ``start`` (nan if the model
        cannot say)."""

        def f(x: float) -> float:
            v = self.epsilon(math.exp(x))
            if not 0.0 < v < math.inf:
                return -math.inf if v == 0.0 else math.inf
            return math.log(v) + log_ratio(x) - math.log(target)

        x0 = math.log(start)
        lo_x, hi_x = x0, x0
        f_lo = f_hi = f(x0)
        for _ in range(60):
            if f_lo < 0.0 <= f_hi:
                break
            if f_lo >= 0.0:
                lo_x -= 0.5
                f_lo = f(lo_x)
            if f_hi < 0.0:
                hi_x += 0.5
                f_hi = f(hi_x)
            if math.isnan(f_lo) or math.isnan(f_hi):
                return math.nan
        else:
            return math.nan
        if not (math.isfinite(f_lo) or math.isfinite(f_hi)):
            return math.nan
        for _ in range(60):  # bisection with false-position steps; only a guess is needed
            if hi_x - lo_x < 1e-5:
                break
            if math.isfinite(f_lo) and math.isfinite(f_hi) and f_hi > f_lo:
                mid = lo_x - f_lo * (hi_x - lo_x) / (f_hi - f_lo)
                mid = min(hi_x - 0.1 * (hi_x - lo_x), max(lo_x + 0.1 * (hi_x - lo_x), mid))
            else:
                mid = 0.5 * (lo_x + hi_x)
            fm = f(mid)
            if fm < 0.0:
                lo_x, f_lo = mid, fm
            else:
                hi_x, f_hi = mid, fm
        return math.exp(0.5 * (lo_x + hi_x))


def _kl2(e: float) -> float:
    """2·KL of the ε-Laplace pair per unit: 2(e + e^{−e} − 1) (≈ e² for small e)."""
    return 2.0 * (e + math.expm1(-e))


def _br2(e: float) -> float:
    """2·KL_max of one ε-BR step, ≈ ε²/4 (the guide's value: min of the closed form and ε²/4)."""
    return float(_br2_array(np.asarray([e], dtype=np.float64))[0])


def _br2_array(e: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        em = np.expm1(e)
        kl = e / em - 1.0 + np.log(em / e)
    return np.asarray(2.0 * np.where(np.isfinite(kl) & (e > 1e-3), kl, e * e / 8.0), dtype=np.float64)


def _kl2_array(e: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    return np.asarray(2.0 * (e + np.expm1(-e)), dtype=np.float64)


def _central_limit_epsilon(mu: float, delta: float) -> float:
    """ε with δ_μ(ε) = δ (DRS Cor 2.13), uncertified: the model's guide (certified values come from the floor)."""
    if mu <= 0.0 or delta >= 1.0:
        return 0.0
    if delta <= 0.0 or not math.isfinite(mu):
        return math.inf

    def log_delta(eps: float) -> float:
        a = -eps / mu + mu / 2.0
        la, lb = float(log_ndtr(a)), float(log_ndtr(a - mu))
        t = eps + lb - la
        return la + math.log(-math.expm1(t)) if t < 0.0 else -math.inf

    target = math.log(delta)
    if log_delta(0.0) <= target:
        return 0.0
    lo, hi = 0.0, max(1.0, mu * mu)
    while log_delta(hi) > target:
        lo, hi = hi, 2.0 * hi
        if hi > 1e6:
            return math.inf
    for _ in range(200):
        if hi - lo <= 1e-9 * hi:
            break
        mid = 0.5 * (lo + hi)
        if log_delta(mid) > target:
            lo = mid
        else:
            hi = mid
    return hi

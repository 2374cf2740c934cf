"""The upper end of the optimal conversion: a dual certificate checked at every real loss value.

Multipliers ν, μ (any sign), λ_α, κ_α, λ₀, κ₀ ≥ 0 such that for **every** real ℓ

    (1 − e^{ε−ℓ})₊ ≤ ν + m + μe^{−ℓ} + Σλ_α e^{(α−1)ℓ − C̃_α} + Σκ_α e^{−αℓ − C̃_α} + λ₀ℓ − κ₀ℓe^{−ℓ}     (★)

prove δ(ε) ≤ ν + m + μ + Σ(λ_α + κ_α)e^{C_α − C̃_α} + (λ₀ + κ₀)K for every law with D_α ≤ C_α/(α − 1)
in both directions (and both KLs ≤ K): take E_P of (★) at L = log(dP/dQ); E_P[(1 − e^{ε−L})₊] = δ(ε),
E_P[e^{−L}] = Q(P > 0) = 1 (Q ≪ P: D_α(Q‖P) is finite), E_P[e^{(α−1)L}] ≤ e^{C_α},
E_P[e^{−αL}] = E_Q[(dQ/dP)^{α−1}] ≤ e^{C_α}, E_P[L] = KL(P‖Q) ≤ K, E_P[−Le^{−L}] = KL(Q‖P) ≤ K
(``docs/rdp.md`` §3). The LP's duals satisfy (★) on its grid with m = 0; :func:`certify` finds an m ≥ 0
for which (★) holds on all of ℝ, proved piece by piece:

* a window [W₀, W₁] around the grid, split at ε (the kink), 1 and 2 (where −ℓe^{−ℓ} turns and bends),
  cut into intervals; on each [u, v] the lower bound of g = right side − left side is the larger of
  (a) the sum over terms of each term's smaller end value (every term is monotone on the piece), and
  (b) min(g(u), g(v)) − M(v − u)²/8 with M ≥ sup g'' on [u, v] (a function whose curvature is at most M
  dips at most M(v − u)²/8 below its chord); intervals whose bound is below −allowance are cut again;
* the right tail [W₁, ∞): every increasing term at its value at W₁, every decreasing one at its limit,
  (1 − e^{ε−ℓ})₊ ≤ 1;
* the left tail (−∞, W₀] (W₀ ≤ min(0, ε): the left side is 0): g ≥ ν + λ₀ℓ + B·e^{−ℓ} with
  B = μ − κ₀W₀ + Σκ_α e^{−(α−1)W₀ − C̃_α} (each κ term is at least its value at W₀ after factoring e^{−ℓ}),
  whose minimum over (−∞, W₀] is explicit (convex in ℓ); B < 0 fails the certificate.

Every float evaluation carries an error bound (each term: a few roundings plus the argument's rounding
amplified by exp; the sum: γₙ), subtracted before comparing. If no finite m is found the certificate
fails and the caller reports the closed form's upper end instead.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from optcomp._numerics import FloatArray
from optcomp._rounding import gamma, next_up, rounding_error, widen_up
from optcomp.rdp._lp import Solution

#: Padding of the certified window around the grid (and ε): beyond it the tails are bounded analytically.
_WINDOW_PAD = 8.0
#: Intervals per piece of the first partition, the split factor of an interval that fails, and how often.
_FIRST_INTERVALS = 4096
_SPLIT = 16
_MAX_SPLITS = 8
#: Most intervals a piece may be cut into (the bound of the intervals still failing is used beyond).
_MAX_INTERVALS = 200_000
#: The allowance below which an interval is cut again: this times the LP value.
_ALLOWANCE = 1e-7
#: Roundings charged per exponential term, besides its argument's (exp, the product, the weight).
_TERM_UNITS = 8


class _Terms:
    """The right side of (★) minus the left, as arrays of exponential terms plus the two KL terms."""

    def __init__(self, sol: Solution, epsilon: float) -> None:
        weights = [sol.nu, sol.mu]
        rates = [0.0, -1.0]
        shifts = [0.0, 0.0]
        for lam, kap, a, c in zip(sol.lam, sol.kappa, sol.orders, sol.tilted, strict=True):
            if lam > 0:
                weights.append(float(lam)); rates.append(float(a - 1.0)); shifts.append(float(c))
            if kap > 0:
                weights.append(float(kap)); rates.append(float(-a)); shifts.append(float(c))
        self.w, self.a, self.b = np.array(weights), np.array(rates), np.array(shifts)
        self.lam_kl, self.kappa_kl, self.epsilon = sol.lam_kl, sol.kappa_kl, epsilon
        self.n = self.w.size + 4  # terms summed (with the two KL terms and the two of the kink's right)

    def values(self, ell: FloatArray, right: bool) -> tuple[FloatArray, FloatArray, FloatArray]:
        """(per-interval-point sum g, its error bound, Σ|terms|) at ``ell`` (on ε's ``right`` side or not)."""
        arg = self.a[:, None] * ell[None, :] - self.b[:, None]
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            t = self.w[:, None] * np.exp(arg)
            kl = np.stack([self.lam_kl * ell, -self.kappa_kl * ell * np.exp(-ell)])
            parts = [t, kl]
            if right:
                parts.append(np.stack([-np.ones_like(ell), np.exp(self.epsilon - ell)]))
            allt = np.concatenate(parts)
            units = np.concatenate([_TERM_UNITS + 3.0 * np.abs(arg), np.stack([np.full_like(ell, 2.0),
                                    _TERM_UNITS + 3.0 * np.abs(ell)])]
                                   + ([np.stack([np.zeros_like(ell), _TERM_UNITS + 3.0 * np.abs(self.epsilon - ell)])]
                                      if right else []))
            total = np.sum(allt, axis=0)
            mag = np.sum(np.abs(allt), axis=0)
            err = rounding_error(1.0, np.sum(np.abs(allt) * units, axis=0)) + gamma(self.n) * mag
        bad = ~np.isfinite(total) | ~np.isfinite(err)
        return np.where(bad, np.nan, total), np.where(bad, np.inf, err), mag

    def interval_bound(self, u: FloatArray, v: FloatArray, right: bool) -> FloatArray:
        """Certified lower bounds of g on each [u, v] (inside one piece): the larger of (a) and (b)."""
        gu, eu, _ = self.values(u, right)
        gv, ev, _ = self.values(v, right)
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            # (a) each monotone term at its smaller end
            tu = self.w[:, None] * np.exp(self.a[:, None] * u[None, :] - self.b[:, None])
            tv = self.w[:, None] * np.exp(self.a[:, None] * v[None, :] - self.b[:, None])
            first = np.sum(np.minimum(tu, tv), axis=0)
            first += np.minimum(self.lam_kl * u, self.lam_kl * v)
            first += np.minimum(-self.kappa_kl * u * np.exp(-u), -self.kappa_kl * v * np.exp(-v))
            if right:
                first += -1.0 + np.exp(self.epsilon - v)
            first -= 2.0 * (eu + ev)  # every term's rounding, as at the two ends
            # (b) the chord minus the largest upward curvature
            curv = self.w[:, None] * self.a[:, None] ** 2 * np.maximum(np.exp(self.a[:, None] * u[None, :] - self.b[:, None]),
                                                                       np.exp(self.a[:, None] * v[None, :] - self.b[:, None]))
            bend = np.sum(np.where(self.w[:, None] > 0, curv, 0.0), axis=0)
            bend += np.where(u < 2.0, self.kappa_kl * (2.0 - u) * np.exp(-u), 0.0)
            if right:
                bend += np.exp(self.epsilon - u)
            bend = widen_up(bend, 16) + rounding_error(16.0, bend)
            second = np.minimum(gu - eu, gv - ev) - widen_up(bend * (v - u) ** 2 / 8.0, 8)
            best = np.fmax(first, second)
            # a term with a positive weight that overflows on the whole interval makes g = +inf there, when
            # no negative term overflows (the KL terms and the kink are finite on a finite interval; the
            # −ℓe^{−ℓ} term is positive where it could overflow)
            huge = np.any((self.w[:, None] > 0) & np.isposinf(np.minimum(tu, tv)), axis=0)
            huge &= ~np.any((self.w[:, None] < 0) & np.isinf(np.minimum(tu, tv) + np.maximum(tu, tv)), axis=0)
        return np.where(huge, np.inf, np.where(np.isnan(best), -np.inf, best))

    def right_tail(self, start: float) -> float:
        """A lower bound of g on [start, ∞) (start ≥ max(ε, 1)), or −inf: increasing terms at their value
        at ``start``, decreasing ones at min(value, 0), −ℓe^{−ℓ} (increasing for ℓ ≥ 1) at ``start``, and
        −(1 − e^{ε−ℓ})₊ ≥ −1."""
        w, a, b = self.w, self.a, self.b
        arg = a * start - b
        with np.errstate(over="ignore", under="ignore"):
            ends = w * np.exp(arg)
        if np.any((a > 0) & (w < 0)):
            return -math.inf
        lows = np.where(a > 0, ends, np.where(a < 0, np.minimum(ends, 0.0), w))
        parts = np.concatenate([lows, [self.lam_kl * start, -self.kappa_kl * start * math.exp(-start), -1.0]])
        units = np.concatenate([_TERM_UNITS + 3.0 * np.abs(arg), [2.0, _TERM_UNITS + 3.0 * start, 0.0]])
        if not np.all(np.isfinite(parts)):
            return math.inf if np.all(parts > -math.inf) else -math.inf
        err = rounding_error(1.0, float(np.sum(np.abs(parts) * units))) + gamma(parts.size) * float(np.sum(np.abs(parts)))
        return float(np.sum(parts)) - err

    def left_tail(self, end: float) -> float:
        """A lower bound of g on (−∞, end] (end ≤ min(0, ε), where (1 − e^{ε−ℓ})₊ = 0), or −inf.

        Every term with rate ≤ −1 is e^{−ℓ} times a coefficient at least its value at ``end`` (its rate
        plus 1 is ≤ 0), and −κ₀ℓe^{−ℓ} = e^{−ℓ}·κ₀(−ℓ) with −ℓ ≥ −end; terms with a positive rate are ≥ 0.
        So g ≥ ν + λ₀ℓ + B·e^{−ℓ} with B the sum of those coefficients (rounded down), convex in ℓ with
        its minimum over (−∞, end] at ``end`` when B·e^{−end} ≥ λ₀, else at e^{−ℓ} = λ₀/B."""
        w, a, b = self.w, self.a, self.b
        if np.any((a > 0) & (w < 0)) or np.any((a < -1.0) & (w < 0)):
            return -math.inf
        nu = float(np.sum(w[a == 0.0]))
        tilt = a <= -1.0
        arg = np.minimum((a[tilt] + 1.0) * end - b[tilt], 700.0)  # capped: a smaller coefficient is safe
        coef_terms = np.concatenate([w[tilt] * np.exp(arg), [self.kappa_kl * (-end)]])
        units = np.concatenate([_TERM_UNITS + 3.0 * np.abs(arg), [2.0]])
        mags = np.abs(coef_terms)
        coef = float(np.sum(coef_terms)) - (rounding_error(1.0, float(np.sum(mags * units)))
                                            + gamma(coef_terms.size) * float(np.sum(mags)))
        if coef < 0.0:
            return -math.inf
        lam = self.lam_kl
        lift = coef * math.exp(-end) if -end < 700.0 else math.inf
        if lam == 0.0 or lift >= lam:
            parts = [nu, lam * end, lift]
            units_v = [2.0, 2.0, _TERM_UNITS + 3.0 * abs(end)]
        elif coef == 0.0:
            return -math.inf
        else:
            log_ratio = math.log(coef / lam)
            parts, units_v = [nu, lam, lam * log_ratio], [2.0, 2.0, _TERM_UNITS + 3.0 * abs(log_ratio)]
        if not all(math.isfinite(x) for x in parts):
            return math.inf if all(x > -math.inf for x in parts) else -math.inf
        err = rounding_error(1.0, sum(abs(x) * u for x, u in zip(parts, units_v, strict=True))) + gamma(4) * sum(map(abs, parts))
        return math.fsum(parts) - err


def _pieces(low: float, high: float, epsilon: float) -> list[tuple[float, float, bool]]:
    """[low, high] split at ε, 1 and 2: (start, end, right of ε)."""
    cuts = sorted({low, high, *[x for x in (epsilon, 1.0, 2.0) if low < x < high]})
    return [(s, e, s >= epsilon) for s, e in itertools.pairwise(cuts)]


def _piece_minimum(terms: _Terms, start: float, end: float, right: bool, allowance: float) -> float:
    """A certified lower bound of g on [start, end], cutting failing intervals (at most ``_MAX_SPLITS`` times)."""
    edges = np.linspace(start, end, _FIRST_INTERVALS + 1)
    starts, ends = edges[:-1], edges[1:]
    best = math.inf
    for _ in range(_MAX_SPLITS + 1):
        bounds = terms.interval_bound(starts, ends, right)
        ok = bounds >= -allowance
        if np.any(ok):
            best = min(best, float(np.min(bounds[ok])))
        if np.all(ok):
            return best
        starts, ends = starts[~ok], ends[~ok]
        if starts.size * _SPLIT > _MAX_INTERVALS:
            break
        fine = np.linspace(0.0, 1.0, _SPLIT + 1)
        cuts = starts[:, None] + (ends - starts)[:, None] * fine[None, :]
        starts, ends = cuts[:, :-1].ravel(), cuts[:, 1:].ravel()
    return min(best, float(np.min(terms.interval_bound(starts, ends, right))))


@dataclass(frozen=True)
class DualCertificate:
    """The multipliers of (★), with the slack m already added to ν, and the bound they prove.

    For every real ℓ: (1 − e^{ε−ℓ})₊ ≤ nu + mu·e^{−ℓ} + Σ lam[i]·e^{(orders[i]−1)ℓ − tilted[i]}
    + Σ kappa[i]·e^{−orders[i]ℓ − tilted[i]} + lam_kl·ℓ − kappa_kl·ℓe^{−ℓ}; hence for every law with
    D_α ≤ caps[i]/(orders[i] − 1) at the orders (both directions) and both KLs ≤ ``kl``,
    δ(ε) ≤ nu + mu + Σ(lam[i] + kappa[i])e^{caps[i] − tilted[i]} + (lam_kl + kappa_kl)·kl ≤ ``bound``.
    """

    epsilon: float
    nu: float
    mu: float
    orders: FloatArray
    tilted: FloatArray
    caps: FloatArray
    lam: FloatArray
    kappa: FloatArray
    lam_kl: float
    kappa_kl: float
    kl: float
    bound: float


def certify(sol: Solution, epsilon: float, caps: FloatArray, kl: float | None,
            window: tuple[float, float]) -> DualCertificate | None:
    """A certified upper bound on δ(ε) from the LP's multipliers (module docstring), or ``None``.

    Args:
        sol: the LP solution (its multipliers and tightened caps C̃).
        epsilon: ε ≥ 0.
        caps: the curve's caps C_α at ``sol.orders`` (rounded up), against which the bound is stated.
        kl: the curve's bound K on both KLs (with KL rows), else ``None``.
        window: the loss range the LP's grid spans.
    """
    terms = _Terms(sol, epsilon)
    low = min(window[0], 0.0, epsilon) - _WINDOW_PAD
    high = max(window[1], epsilon, 2.0) + _WINDOW_PAD
    allowance = _ALLOWANCE * max(sol.value, 0.0)
    lows = [terms.left_tail(low), terms.right_tail(high)]
    for start, end, right in _pieces(low, high, epsilon):
        lows.append(_piece_minimum(terms, start, end, right, allowance))
    worst = min(lows)
    if not math.isfinite(worst):
        return None
    slack = max(0.0, -worst)
    with np.errstate(over="ignore"):
        factors = np.exp(caps - sol.tilted)
    bound_terms = np.concatenate([[sol.nu + slack, sol.mu], sol.lam * factors, sol.kappa * factors,
                                  [(sol.lam_kl + sol.kappa_kl) * (kl if kl is not None else 0.0)]])
    units = np.concatenate([[2.0, 1.0], _TERM_UNITS + 3.0 * np.abs(caps), _TERM_UNITS + 3.0 * np.abs(caps), [4.0]])
    total = float(np.sum(bound_terms))
    err = rounding_error(1.0, float(np.sum(np.abs(bound_terms) * units))) + gamma(bound_terms.size) * float(np.sum(np.abs(bound_terms)))
    if not math.isfinite(total + err):
        return None
    bound = min(1.0, next_up(max(total + err, 0.0)))
    return DualCertificate(epsilon, sol.nu + slack, sol.mu, sol.orders, sol.tilted, caps, sol.lam, sol.kappa,
                           sol.lam_kl, sol.kappa_kl, kl if kl is not None else 0.0, bound)

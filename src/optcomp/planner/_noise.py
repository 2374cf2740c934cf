"""Statistics as noisy releases: sensitivity from declared bounds, noise from a budget, accuracy from noise.

Every statistic is released by one or two *components* (a mean whose dataset size is not public is a
noisy sum and a noisy count). A component receives a nominal budget ε_c (a share of its statistic's
ε_i) and the noise that makes it ε_c-DP (Laplace, discrete Laplace) or (ε_c, δ_c)-DP (Gaussian, with
δ_c from the plan's Gaussian δ rule), alone:

* Laplace, ℓ₁-sensitivity Δ (``copies`` independent coordinates that change together): b = copies·Δ/ε_c
  (Dwork–Roth Thm 3.6).
* Discrete Laplace, integer Δ: the same b, P(K = j) ∝ e^{−|j|/b} (Ghosh–Roughgarden–Sundararajan; ε = Δ/b).
* Gaussian, ℓ₂-sensitivity Δ: σ = Δ/μ with μ the largest value for which μ-GDP implies (ε_c, δ_c)-DP
  (Dong–Roth–Su Cor 2.13, as :func:`optcomp.fdp.gdp_mu_for` computes it, rounded to the safe side;
  vectorised and memoised here: :func:`gaussian_mus`).
* Discrete Gaussian, integer Δ (``copies`` coordinates of Δ each): the least σ whose exact lattice law is
  certified (ε_c, δ_c)-DP (:func:`optcomp.planner._dgauss.dgauss_sigma`).
* Exponential mechanism (a quantile), utility sensitivity Δ: weights exp(u/b) with b = 2Δ/ε_c (McSherry–Talwar;
  b is also the scale of the Gumbel noise of the equivalent report-noisy-max), which is ε_c-bounded-range
  (Durfee–Rogers 2019): the accountings compose it as the BR step it is (:mod:`optcomp.planner._accounting`).

Accuracy is the half-width α of the (1 − β) interval ``release ± α`` of the noise (exact formulas):

* Laplace(b): P(|X| > t) = e^{−t/b}, so α = b·ln(1/β).
* Gaussian(σ): α = σ·Φ⁻¹(1 − β/2).
* Discrete Laplace(b): P(|K| ≥ m + 1) = 2e^{−(m+1)/b}/(1 + e^{−1/b}); α is the least integer m ≥ 0
  with that probability ≤ β.
* Discrete Gaussian(σ): the least integer m ≥ 0 with P(|X| ≥ m + 1) ≤ β, from the law's masses
  (:func:`optcomp.planner._dgauss.dgauss_half_width`).
* Histogram with h bins (independent noise per bin): per bin as above; simultaneously over all bins
  with β' = 1 − (1 − β)^{1/h} (exact, by independence).
* Mean, public n: α_sum/n (post-processing of the noisy sum).
* Quantile by the exponential mechanism: the rank error at 1 − β (:func:`rank_error`, exact worst case over
  datasets).
* Mean, n not public: S̃/Ñ with S̃ the noisy sum of x − c (c the midpoint of [lower, upper], so
  |x − c| ≤ M = (upper − lower)/2) and Ñ the noisy count. If |S̃ − S| ≤ a_s and |Ñ − N| ≤ a_c (each with
  probability ≥ 1 − β/2, a union bound), then |S̃/Ñ − S/N| = |X − mY|/(N + Y) ≤ (a_s + M·a_c)/(n − a_c) at
  the planning size N = n, for n > a_c (else α = ∞). This α covers at least 1 − β (not exact).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.special import ndtri

from optcomp._inverse import float_boundaries
from optcomp._numerics import EPSILON_XTOL
from optcomp.fdp import gdp_log_delta_estimate
from optcomp.mechanisms import BoundedRange, DiscreteGaussian, DiscreteLaplace, Gaussian, Laplace, Mechanism
from optcomp.planner._dgauss import dgauss_half_width, dgauss_sigma
from optcomp.planner._schema import Plan, PlanError, Statistic, show

#: The mechanisms that are (ε, δ)-DP rather than ε-DP: each component gets δ_c of the plan's Gaussian δ
#: rule (black-box modes) and needs δ > 0.
APPROXIMATE: tuple[str, ...] = ("gaussian", "dgauss")
#: The mechanisms with integer noise (an integer sensitivity ≥ 1).
INTEGER: tuple[str, ...] = ("discrete_laplace", "dgauss")
#: The bounded-range mechanisms (ε-BR, hence ε-DP): composed as BR steps, not as ε-DP boxes.
BOUNDED_RANGE: tuple[str, ...] = ("exponential",)


@dataclass(frozen=True, slots=True)
class Component:
    """One noisy release inside a statistic.

    Attributes:
        role: ``value`` (the statistic itself), ``sum`` or ``count`` (the parts of a ratio mean).
        mechanism: ``laplace``, ``gaussian``, ``discrete_laplace`` or ``dgauss``.
        sensitivity: ℓ₁ (Laplace family) or ℓ₂ (Gaussian) sensitivity of one copy (the discrete
            Gaussian's per coordinate: an integer).
        copies: coordinates that change together with that sensitivity each (2 for a histogram under
            substitution with the Laplace family or the discrete Gaussian; the component's ε is their total).
        share: this component's share of its statistic's ε.
    """

    role: str
    mechanism: str
    sensitivity: float
    copies: int
    share: float


def components(plan: Plan, stat: Statistic, index: int | None = None) -> tuple[Component, ...]:
    """The components of ``stat`` with sensitivities derived from its declared bounds and the relation.

    Sensitivities (add/remove changes one record's presence; substitution replaces one record):

    * count: 1 (add/remove).
    * sum of values in [L, U]: max(|L|, |U|) (add/remove), U − L (substitution).
    * mean, n public: the sum's sensitivity (released as noisy sum / n).
    * mean, n not public: sum of x − (L + U)/2 with sensitivity (U − L)/2, and a count with 1.
    * histogram: one bin changes by 1 (add/remove); two bins by 1 each (substitution: ℓ₁ 2, ℓ₂ √2).
    * quantile q (exponential mechanism, utility u(y) = −|c(y) − q·n| with c(y) the number of records
      below the candidate y): substitution moves c(y) by at most 1 and keeps n, so Δ = 1; add/remove moves
      c(y) − q·n by 1 − q or by −q, so Δ = max(q, 1 − q) (1/2 for the median).
    """
    mech = stat.mechanism
    sub = plan.neighbouring == "substitution"
    comps: tuple[Component, ...]
    if stat.kind == "count":
        comps = (Component("value", mech, 1.0, 1, 1.0),)
    elif stat.kind == "quantile":
        assert stat.quantile is not None  # guaranteed by the schema
        comps = (Component("value", mech, 1.0 if sub else max(stat.quantile, 1.0 - stat.quantile), 1, 1.0),)
    elif stat.kind == "histogram":
        if not sub:
            comps = (Component("value", mech, 1.0, 1, 1.0),)
        elif mech == "gaussian":
            comps = (Component("value", mech, math.sqrt(2.0), 1, 1.0),)
        else:
            comps = (Component("value", mech, 1.0, 2, 1.0),)
    else:
        assert stat.lower is not None and stat.upper is not None  # guaranteed by the schema
        lo, hi = stat.lower, stat.upper
        if stat.kind == "mean" and not plan.dataset_size_public:
            comps = (
                Component("sum", mech, (hi - lo) / 2.0, 1, 1.0 - stat.count_share),
                Component("count", mech, 1.0, 1, stat.count_share),
            )
        else:
            comps = (Component("value", mech, (hi - lo) if sub else max(abs(lo), abs(hi)), 1, 1.0),)
    if mech in INTEGER:
        for c in comps:
            if c.sensitivity != math.floor(c.sensitivity) or c.sensitivity < 1.0:
                where = f"statistic {show(stat.name)}" + ("" if index is None else f" (#{index + 1})")
                raise PlanError(
                    f"{where}: field 'mechanism' {mech} needs an integer "
                    f"sensitivity >= 1, got {c.sensitivity!r} from the declared bounds",
                    field="mechanism", index=index,
                )
    return comps


#: Largest m for which consecutive integers m − 1, m, m + 1 are distinct float64 values.
_EXACT_INTEGER_LIMIT = 2**52


#: μ of every (ε_c, δ_c) calibrated so far: one value per pair for the whole process, so a statistic's
#: noise is the same wherever it is computed (search, locks, report). Cleared when it grows past this.
_MU_MEMO: dict[tuple[float, float], float] = {}
_MU_MEMO_LIMIT = 1 << 17


def _log_delta_gap(mu: npt.NDArray[np.float64], eps: npt.NDArray[np.float64], log_delta: float) -> npt.NDArray[np.float64]:
    """log δ_μ(ε) − log δ, elementwise (DRS Cor. 2.13 in log space, :mod:`optcomp.fdp._gdp`)."""
    return np.asarray(gdp_log_delta_estimate(mu, eps), dtype=np.float64) - log_delta  # type: ignore[arg-type]


def gaussian_mus(epsilons: Sequence[float], delta: float) -> list[float]:
    """For each ε > 0, the largest μ (to ~10⁻¹² relative, on the safe side) with δ_μ(ε) ≤ δ.

    Vectorised :func:`optcomp.fdp.gdp_mu_for` (the same log δ_μ(ε) closed form; the boundary to adjacent
    floats by :func:`optcomp._inverse.float_boundaries`; the same safe rounding: μ is moved down by
    ``EPSILON_XTOL`` relative and checked, so δ_μ(ε) ≤ δ as computed). Values are memoised per (ε, δ): every caller gets the same μ for a pair.
    """
    todo = sorted({e for e in epsilons if (e, delta) not in _MU_MEMO})
    if todo:
        if len(_MU_MEMO) + len(todo) > _MU_MEMO_LIMIT:
            _MU_MEMO.clear()
        eps = np.asarray(todo, dtype=np.float64)
        ld = math.log(delta)
        # μ from 1 doubling/halving to a bracket [m, 2m], then bisected to adjacent floats (the safe side
        # is float_boundaries'); the pass test is δ_μ(ε) ≤ δ as computed
        _, lo = float_boundaries(lambda mu: _log_delta_gap(mu, eps, ld) <= 0.0, np.ones_like(eps),
                                 passing_above=False)
        safe = np.maximum(lo - EPSILON_XTOL * lo, 0.0)  # lo ≥ m: the bracket width m is below lo
        for _ in range(64):
            bad = (safe > 0.0) & (_log_delta_gap(np.where(safe > 0.0, safe, 1.0), eps, ld) > 0.0)
            if not np.any(bad):
                break
            safe = np.where(bad, np.maximum(safe - EPSILON_XTOL * lo, 0.0), safe)
        for e, m in zip(todo, safe.tolist()):
            _MU_MEMO[(e, delta)] = m if m >= EPSILON_XTOL else 0.0  # as gdp_mu_for: negligible μ is 0
    return [_MU_MEMO[(e, delta)] for e in epsilons]


def _gaussian_mu(epsilon: float, delta: float) -> float:
    return gaussian_mus([epsilon], delta)[0]


def noise_scale(c: Component, epsilon: float, gaussian_delta: float) -> float:
    """The noise (Laplace/discrete scale b, Gaussian σ, or the exponential mechanism's temperature b = 2Δ/ε)
    that makes ``c`` ε-DP (ε-BR for the exponential mechanism) or (ε, δ_c)-DP alone."""
    if epsilon <= 0.0:
        return math.inf
    if c.mechanism in BOUNDED_RANGE:
        return 2.0 * c.sensitivity / epsilon
    if c.mechanism == "gaussian":
        mu = _gaussian_mu(epsilon, gaussian_delta)
        return math.inf if mu <= 0.0 else c.sensitivity / mu
    if c.mechanism == "dgauss":
        mu = _gaussian_mu(epsilon, gaussian_delta)  # 0: ε_c negligible at δ_c (as for the Gaussian: no release)
        if mu <= 0.0:
            return math.inf
        return dgauss_sigma(int(c.sensitivity), c.copies, epsilon, gaussian_delta, math.sqrt(c.copies) * c.sensitivity / mu)
    return c.copies * c.sensitivity / epsilon


def half_width(mechanism: str, scale: float, beta: float) -> float:
    """α with P(|noise| > α) ≤ β, exact (the least such α; an integer for the discrete Laplace)."""
    if math.isinf(scale):
        return math.inf
    if mechanism == "laplace":
        return scale * -math.log(beta)
    if mechanism == "gaussian":
        return scale * float(-ndtri(beta / 2.0))
    if mechanism == "dgauss":
        return dgauss_half_width(scale, beta)
    # Discrete Laplace: least integer m ≥ 0 with 2e^{-(m+1)/b}/(1 + e^{-1/b}) ≤ β.
    t = 1.0 / scale
    closed = scale * (math.log(2.0 / beta) - math.log1p(math.exp(-t)))
    if not math.isfinite(closed):  # m beyond the float range: α is +inf in float64
        return math.inf
    m = max(0, math.ceil(closed) - 1)
    if m > _EXACT_INTEGER_LIMIT:  # beyond float64's integers: the closed form is as exact as it gets
        return float(m)
    # The closed form can be off by one in floating point: settle m against the tail itself.
    while m > 0 and _discrete_tail(m - 1, t) <= beta:
        m -= 1
    while _discrete_tail(m, t) > beta:
        m += 1
    return float(m)


def _discrete_tail(m: int, t: float) -> float:
    """P(|K| ≥ m + 1) for the discrete Laplace with P(K = j) ∝ e^{−t|j|}."""
    return 2.0 * math.exp(-t * (m + 1)) / (1.0 + math.exp(-t))


def rank_error(temperature: float, candidates: int, beta: float) -> float:
    """The least r ≥ 0 such that, on *every* dataset, the exponential mechanism with weights exp(u/b)
    (b = ``temperature``) over G = ``candidates`` public values picks, with probability ≥ 1 − β, a value whose
    rank error exceeds the best candidate's by at most r: r = max(0, b·ln((G − 1)(1 − β)/β)).

    Rank error of a candidate y: |c(y) − q·n| (records between y and the exact quantile's rank); u = −that.
    Why this is the exact worst case (not a tail bound): let y* be the best candidate. Every candidate whose
    error exceeds the best's by more than r has weight below e^{−r/b}·w(y*), and there are at most G − 1 of
    them, so P[excess > r] = W_bad/(w(y*) + W_good + W_bad) < (G − 1)e^{−r/b}/(1 + (G − 1)e^{−r/b})
    (x/(c + x) grows with x); the sup over score vectors is that value (all G − 1 others at excess just
    above r), so with ranks treated as reals it is attained in the limit. Setting it to β gives r above.
    It is below the textbook utility bound of the exponential mechanism, P[u ≤ OPT − b(ln G + t)] ≤ e^{−t}
    (McSherry–Talwar; Dwork–Roth Thm 3.11, with b = 2Δ/ε), whose r = b·ln(G/β) ≥ ours. Conservative for real
    data: ranks are integers (the attainable excesses are a lattice, so the true tail at r can be smaller),
    and data rarely puts every candidate at the worst excess. The error is measured against the best
    candidate: a coarse grid (or many tied records) adds its own error, which no amount of ε removes.
    """
    if math.isinf(temperature):
        return math.inf
    odds = math.log(candidates - 1) + math.log1p(-beta) - math.log(beta)
    return max(0.0, temperature * odds)


def simultaneous_beta(beta: float, bins: int) -> float:
    """β' = 1 − (1 − β)^{1/h}: per-bin failure probability for all h independent bins to hold at 1 − β."""
    return -math.expm1(math.log1p(-beta) / bins)


def accuracy(plan: Plan, stat: Statistic, comps: tuple[Component, ...], scales: tuple[float, ...]) -> tuple[float, float]:
    """(α, simultaneous α) of ``stat`` given its components' noise ``scales`` (see the module docstring).

    The simultaneous α differs from α for histograms only.
    """
    beta = plan.beta
    mech = stat.mechanism
    if stat.kind == "quantile":
        assert stat.candidates is not None
        a = rank_error(scales[0], stat.candidates, beta)
        return a, a
    if stat.kind == "histogram":
        assert stat.bins is not None
        a = half_width(mech, scales[0], beta)
        return a, half_width(mech, scales[0], simultaneous_beta(beta, stat.bins))
    if stat.kind == "mean":
        n = plan.dataset_size
        assert n is not None and stat.lower is not None and stat.upper is not None
        if len(comps) == 1:
            a = half_width(mech, scales[0], beta) / n
            return a, a
        a_s = half_width(mech, scales[0], beta / 2.0)
        a_c = half_width(mech, scales[1], beta / 2.0)
        if not a_c < n:
            return math.inf, math.inf
        a = (a_s + 0.5 * (stat.upper - stat.lower) * a_c) / (n - a_c)
        return a, a
    a = half_width(mech, scales[0], beta)
    return a, a


def mechanism_spec(c: Component, scale: float) -> tuple[Mechanism, int]:
    """The optcomp mechanism specification of ``c`` at noise ``scale`` and how many times it runs."""
    if c.mechanism == "gaussian":
        return Gaussian(sigma=scale, sensitivity=c.sensitivity), c.copies
    if c.mechanism == "laplace":
        return Laplace(scale=scale, sensitivity=c.sensitivity), c.copies
    if c.mechanism == "dgauss":
        return DiscreteGaussian(scale, sensitivity=c.sensitivity), c.copies
    if c.mechanism in BOUNDED_RANGE:  # the ε the temperature b = 2Δ/ε gives back, rounded up
        return BoundedRange(math.nextafter(2.0 * c.sensitivity / scale, math.inf)), c.copies
    return DiscreteLaplace(scale=scale, sensitivity=int(c.sensitivity)), c.copies

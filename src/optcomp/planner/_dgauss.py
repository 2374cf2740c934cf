"""Discrete Gaussian noise for the planner: its σ from a budget (certified), its accuracy from σ (exact).

A ``dgauss`` component of integer sensitivity Δ in ``copies`` coordinates (a histogram under
substitution moves two bins by 1) adds N_ℤ(0, σ²) to each coordinate (Canonne–Kamath–Steinke 2020). Its
shift is v = (Δ, …, Δ) (``copies`` entries), the worst the statistic allows.

* **Noise** (:func:`dgauss_sigma`): the least σ (to a relative ``_SIGMA_RTOL``, on the safe side) at which the
  release alone is (ε_c, δ_c)-DP, read off the *certified upper end* of the exact lattice engine
  (``optcomp.compose((DiscreteGaussian(σ, sensitivity=Δ), copies)).epsilon(δ_c)``, ``docs/dgauss.md`` §2),
  searched by :func:`optcomp._inverse.solve` from the continuous Gaussian's σ. The search starts from a σ
  already known to pass: the one at which the release's zCDP ρ = copies·Δ²/(2σ²) (CKS Prop 5) converts to
  ε_c at δ_c by the closed form (CKS Prop 12, :func:`optcomp.rdp.closed_form_epsilon`) — certified, looser
  (σ = 1 at δ = 1e−6: 5.22 against the lattice's 4.50), and the answer wherever the lattice holds no law
  (σ beyond about 10⁵). Every σ returned was evaluated and passed; the Gaussian's σ is *not* used as an
  answer (the discrete Gaussian is no proxy for it: ``docs/dgauss.md`` §4). **ε is not monotone in σ** on
  the lattice (Δ = 1, δ = 1e−9: ε = 5.97 at σ = 0.96, 6.37 at σ = 0.99), so the secant's σ is only *a*
  boundary: :func:`optcomp.mechanisms.discrete_gaussian.least_sigma` (the one home of a discrete Gaussian's σ
  search) then scans upward from σ/4 by factors 1.005, skipping every span proved to fail, and refines the
  first passing point's cell. The σ returned is the least passing one on that scan (to ``_SIGMA_RTOL``), and
  its own certified upper ε ≤ ε_c (target 6.2: σ = 0.9417 instead of the secant's 1.0158).
* **Accuracy** (:func:`dgauss_half_width`): the least integer m ≥ 0 with P(|X| ≥ m + 1) ≤ β,
  X ~ N_ℤ(0, σ²): the masses of :func:`optcomp.mechanisms.discrete_gaussian.pmf` (each within 8 units of
  roundoff) summed over the tail, the crossing settled with correctly rounded sums. Beyond
  ``_EXACT_TAIL_SIGMA`` the tail is bounded instead, P(X ≥ n) ≤ Φ̄(n/σ) + e^{−n²/(2σ²)}/(σ√(2π)) (the sum
  over x ≥ n is at most its first term plus the integral from n, and Z ≥ σ√(2π) by Poisson summation), so
  the m given still covers 1 − β (it may exceed the least one by a unit).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy.special import ndtr, ndtri

from optcomp._inverse import NotMonotoneError, SearchBudgetExceeded, solve
from optcomp._numerics import Bound, GridTooLargeError, LossScaleError
from optcomp.composition import compose
from optcomp.mechanisms import DiscreteGaussian
from optcomp.mechanisms.discrete_gaussian import half_width as lattice_half_width
from optcomp.mechanisms.discrete_gaussian import least_sigma, pmf
from optcomp.queries import Composition
from optcomp.rdp import StatedCurve, closed_form_epsilon

#: Relative precision of a calibrated σ (the Gaussians' μ is pinned to about 10⁻¹²; a lattice evaluation
#: costs milliseconds, so the discrete Gaussian's σ is pinned to 10⁻⁶).
_SIGMA_RTOL = 1e-6
#: Most lattice evaluations one calibration makes (the secant from the Gaussian's σ needs 3–8).
_SIGMA_BUDGET = 40
#: Above this σ the tail is bounded rather than summed (2·T(σ) + 1 masses, T ≈ 40σ).
_EXACT_TAIL_SIGMA = 1e5
#: σ of every (Δ, copies, ε_c, δ_c) calibrated so far (one σ per component wherever it is computed).
_SIGMA_MEMO: dict[tuple[int, int, float, float], float] = {}
_SIGMA_MEMO_LIMIT = 1 << 14


def _zcdp_epsilon(sigma: float, sensitivity: int, copies: int, delta: float) -> float:
    """Certified upper ε at δ of the release's zCDP ρ = copies·Δ²/(2σ²) by the closed-form conversion."""
    rho = copies * sensitivity * sensitivity / (2.0 * sigma * sigma)
    rho = math.nextafter(rho, math.inf)  # the division's rounding, on the safe side
    return closed_form_epsilon(StatedCurve(rho=rho), delta)[0]


class _Release:
    """The lattice composition of the release at one σ, its ε(δ) and δ(ε) brackets kept (the scan reads both)."""

    def __init__(self, composition: Composition) -> None:
        self._composition = composition
        self._epsilons: dict[float, Bound] = {}

    def epsilon(self, delta: float) -> Bound:
        if delta not in self._epsilons:
            self._epsilons[delta] = self._composition.epsilon(delta)
        return self._epsilons[delta]

    def delta(self, epsilon: float) -> Bound:
        return self._composition.delta(epsilon)


def _releases(sensitivity: int, copies: int) -> Callable[[float], _Release | None]:
    """σ ↦ the release's lattice composition (memoised), or None where the lattice holds no law."""
    laws: dict[float, _Release | None] = {}

    def law(sigma: float) -> _Release | None:
        if sigma not in laws:
            try:
                laws[sigma] = _Release(compose((DiscreteGaussian(sigma, sensitivity=float(sensitivity)), copies)))
            except (GridTooLargeError, LossScaleError):
                laws[sigma] = None
        return laws[sigma]

    return law


def dgauss_sigma(sensitivity: int, copies: int, epsilon: float, delta: float, gaussian_sigma: float) -> float:
    """The least σ (safe side, on the scan's grid; module docstring) at which N_ℤ(0, σ²) on ``copies``
    coordinates of integer sensitivity Δ is (ε, δ)-DP, certified; ``gaussian_sigma`` (the continuous
    Gaussian's) starts the search."""
    key = (sensitivity, copies, epsilon, delta)
    if key in _SIGMA_MEMO:
        return _SIGMA_MEMO[key]
    start = gaussian_sigma if math.isfinite(gaussian_sigma) and gaussian_sigma > 0.0 else 1.0
    closed = solve(lambda s: _zcdp_epsilon(s, sensitivity, copies, delta), epsilon, name="sigma", guess=start,
                   rtol=_SIGMA_RTOL).passing
    if closed is None:
        raise ValueError(f"sigma: no discrete Gaussian noise makes the release ({epsilon:g}, {delta:g})-DP")
    law = _releases(sensitivity, copies)

    def upper(s: float) -> Bound | None:
        release = law(s)
        try:
            return None if release is None else release.epsilon(delta)
        except (GridTooLargeError, LossScaleError):
            return None

    sigma, fail = closed, None
    try:
        found = solve(upper, epsilon, name="sigma", guess=min(start, closed), rtol=_SIGMA_RTOL, passing=closed,
                      budget=_SIGMA_BUDGET)
    except (NotMonotoneError, SearchBudgetExceeded):
        pass  # the closed form's σ is certified: the scan starts below it
    else:
        if found.passing is not None and found.passing < sigma:
            sigma, fail = found.passing, found.fail
    worst = DiscreteGaussian(sigma, sensitivity=float(sensitivity)).worst
    sigma, _ = least_sigma(upper, law, epsilon, delta, worst, copies, passing=sigma, known_fail=fail, rtol=_SIGMA_RTOL)
    if len(_SIGMA_MEMO) >= _SIGMA_MEMO_LIMIT:
        _SIGMA_MEMO.clear()
    _SIGMA_MEMO[key] = sigma
    return sigma


def _tail_bound(n: float, sigma: float) -> float:
    """P(X ≥ n) ≤ Φ̄(n/σ) + e^{−n²/(2σ²)}/(σ√(2π)) (module docstring)."""
    return float(ndtr(-n / sigma)) + math.exp(-n * n / (2.0 * sigma * sigma)) / (sigma * math.sqrt(2.0 * math.pi))


def dgauss_half_width(sigma: float, beta: float) -> float:
    """α = the least integer m ≥ 0 with P(|X| ≥ m + 1) ≤ β, X ~ N_ℤ(0, σ²) (module docstring)."""
    if math.isinf(sigma):
        return math.inf
    if sigma > _EXACT_TAIL_SIGMA:
        m = max(0, math.floor(sigma * float(-ndtri(beta / 2.0))) - 2)  # the bound is above the Gaussian tail
        while 2.0 * _tail_bound(m + 1, sigma) > beta:
            m += 1
        return float(m)
    t = lattice_half_width(sigma)
    masses = pmf(sigma, np.arange(0, t + 1, dtype=np.int64))
    tails = np.cumsum(masses[::-1])[::-1]  # tails[n] ≈ P(X ≥ n)

    def over(m: int) -> bool:  # P(|X| ≥ m + 1) > β, summed exactly (rounded once)
        return m + 1 <= t and 2.0 * math.fsum(masses[m + 1:].tolist()) > beta

    m = int(np.searchsorted(-tails[1:], -beta / 2.0, side="left"))  # first n ≥ 1 with 2·tail ≤ β, less one
    while m > 0 and not over(m - 1):
        m -= 1
    while over(m):
        m += 1
    return float(m)

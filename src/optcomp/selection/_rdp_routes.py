"""The Rényi-DP routes of private selection (Papernot–Steinke, ICLR 2022), fed with certified inputs.

* **Theorem 2** (K ~ D_{η,γ}, truncated negative binomial; geometric η = 1, logarithmic η = 0): if the
  base Q is (λ, ε)-RDP and (λ̂, ε̂)-RDP, best-of-K is (λ, ε')-RDP with

      ε' = ε + (1 + η)(1 − 1/λ̂)ε̂ + (1 + η)·log(1/γ)/λ̂ + log(E[K])/(λ − 1).

  The term in λ̂ is minimised over the order grid (any λ̂ > 1 of it is valid). Applied here for η ≥ 0,
  the range dp_accounting and OpenDP implement (the statement for −1 < η < 0 was not checked against
  the paper's text here; the profile route covers those laws).
* **Theorem 6** (K ~ Poisson(μ)): if Q is (λ, ε)-RDP and (ε̂, δ̂)-DP with e^{ε̂} ≤ 1 + 1/(λ − 1), best-of-K
  is (λ, ε + μδ̂ + log(μ)/(λ − 1))-RDP — for μ ≥ 1 only (the range dp_accounting accepts): below 1 the
  term log(μ)/(λ − 1) is negative and the formula is not an RDP bound (randomized response ε₀ = 2, μ = 0.1,
  λ = 2: the selection's D_2 is 0.436, the formula −0.363; ``tests/test_selection_audit.py``). ε̂ = log(1 + 1/(λ − 1)) rounded *down* (δ̂ only grows as ε̂
  shrinks), δ̂ the upper end of the base's certified δ(ε) curve at the largest curve point ≤ ε̂ (δ(ε)
  is non-increasing) — the PLD engine's certificate, not an RDP conversion.

The inputs: the base's RDP curve ρ(λ) from :func:`optcomp.rdp.compose` (exact closed forms at every
order, a certified chord bound at fractional orders of the subsampled Gaussian, each rounded up).
Every sum here is rounded up (``round_up``), then RDP's monotonicity in the order is applied
(ε'(λᵢ) ≤ ε'(λⱼ) for λᵢ ≤ λⱼ: D_λ is non-decreasing in λ), and the curve is converted to (ε, δ) by
:meth:`optcomp.rdp.RdpCurve.epsilon` / ``delta`` (Canonne–Kamath–Steinke Prop. 12, certified upward).
"""

from __future__ import annotations

import math

import numpy as np

from optcomp._numerics import FloatArray, round_down, round_up
from optcomp.rdp import RdpCurve
from optcomp.selection._repetitions import Poisson, TruncatedNegativeBinomial


def _up(values: FloatArray) -> FloatArray:
    return np.array([round_up(float(v)) for v in values], dtype=np.float64)


def _monotone(values: FloatArray) -> FloatArray:
    """ε'(λᵢ) ← min over λⱼ ≥ λᵢ of ε'(λⱼ) (orders ascending): RDP is non-decreasing in the order."""
    return np.minimum.accumulate(values[::-1])[::-1]


def theorem2(curve: RdpCurve, law: TruncatedNegativeBinomial) -> RdpCurve:
    """Papernot–Steinke Thm 2 on the base's curve (module docstring); orders ascending."""
    if law.eta < 0.0:
        raise ValueError(f"Papernot-Steinke Thm 2 is applied here for eta >= 0, got eta={law.eta!r}")
    orders, rho = curve.orders, curve.rdp
    log_inv_gamma = round_up(-math.log(law.gamma))
    hat = _up((1.0 - 1.0 / orders) * rho + log_inv_gamma / orders)  # each term ≥ 0, rounded up
    constant = round_up((1.0 + law.eta) * float(np.min(hat)))
    log_mean = round_up(math.log(law.mean))
    total = _up(rho + constant + _up(log_mean / (orders - 1.0)))
    return RdpCurve(orders, _monotone(np.maximum(total, 0.0)))


def epsilon_hats(orders: FloatArray) -> FloatArray:
    """ε̂(λ) = log(1 + 1/(λ − 1)) rounded down, so that e^{ε̂} ≤ 1 + 1/(λ − 1) (Thm 6's condition)."""
    return np.array([max(0.0, round_down(math.log1p(1.0 / (a - 1.0)))) for a in orders], dtype=np.float64)


def theorem6(curve: RdpCurve, law: Poisson, delta_hat: FloatArray) -> RdpCurve:
    """Papernot–Steinke Thm 6 on the base's curve, ``delta_hat[i]`` a certified upper end of the base's
    δ at :func:`epsilon_hats` ``(orders)[i]`` (module docstring)."""
    if law.mean < 1.0:
        raise ValueError(f"Papernot-Steinke Thm 6 is applied for a mean >= 1 only, got mean={law.mean!r}")
    orders, rho = curve.orders, curve.rdp
    mu = law.mean
    log_mu = math.log(mu)
    term = _up(mu * np.asarray(delta_hat, dtype=np.float64))
    tail = np.array([round_up(log_mu / (a - 1.0)) for a in orders], dtype=np.float64)
    total = _up(rho + term + tail)
    return RdpCurve(orders, _monotone(np.maximum(total, 0.0)))


__all__ = ["epsilon_hats", "theorem2", "theorem6"]

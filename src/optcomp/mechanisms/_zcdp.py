"""The tight zero-concentrated DP (zCDP) parameter of one run of a mechanism.

M is ρ-zCDP when D_α(M(x)‖M(x′)) ≤ ρα for every order α > 1 and neighbours (Bun–Steinke 2016, Def. 1.1); the
tight ρ is sup_α sup_{x,x′} D_α/α. :func:`tight_zcdp` gives it, rounded up, where it is known in closed form:

* ``Gaussian``: ρ = μ²/2 (D_α/α is constant in α);
* ``Laplace`` (ε = Δ/b): ρ = ε + e^{−ε} − 1, the Laplace law's KL divergence (Harrison–Manurangsi 2026);
* ε-DP black boxes without δ (``RandomizedResponse``, ``EpsilonDelta(ε, delta=0)``, ``PermuteAndFlip``,
  ``LaplaceNoisyMax``): ρ = ε·tanh(ε/2), the KL divergence of randomized response, which dominates every ε-DP
  pair (KOV Thm II.5), so no ε-DP mechanism exceeds it and randomized response attains it;
* ``BoundedRange`` (ε-BR): ρ = max_t KL(P_t‖Q_t) = ε/(e^ε − 1) − 1 + ln((e^ε − 1)/ε) ≤ ε²/8
  (Cesar–Rogers 2021; :func:`~optcomp.mechanisms.bounded_range.kl_max`).

For the last three the supremum of D_α/α over α is approached as α → 1 (where D_α/α → KL): checked on a grid of
orders α ∈ (1, 1000] in 40-digit arithmetic (``tests/test_bounded_range.py``). Every value is computed in mpmath
and rounded up by one ulp. Other mechanisms raise ``NotImplementedError`` (their RDP curve is in
:mod:`optcomp.rdp`).
"""

from __future__ import annotations

import math
from functools import singledispatch

import mpmath

from optcomp._rounding import next_up
from optcomp.mechanisms._spec import Mechanism
from optcomp.mechanisms.bounded_range import BoundedRange, LaplaceNoisyMax, PermuteAndFlip, kl_max
from optcomp.mechanisms.discrete import EpsilonDelta, RandomizedResponse
from optcomp.mechanisms.gaussian import Gaussian
from optcomp.mechanisms.laplace import Laplace

#: Decimal digits of the mpmath evaluations (more are added for small ε, where the closed forms cancel).
_DIGITS = 40


def _digits(epsilon: float) -> int:
    return _DIGITS + 2 * max(0, math.ceil(-math.log10(epsilon))) if epsilon > 0 else _DIGITS


def _up(value: mpmath.mpf) -> float:
    return float(next_up(float(value)))


@singledispatch
def tight_zcdp(mechanism: Mechanism) -> float:
    """The tight zCDP parameter ρ of one run of ``mechanism``, rounded up (module docstring).

    Raises:
        NotImplementedError: no closed form here for this mechanism.
    """
    raise NotImplementedError(f"no tight zCDP closed form for {mechanism!r}")


@tight_zcdp.register
def _(mechanism: Gaussian) -> float:
    mu = mechanism.mu
    with mpmath.workdps(_DIGITS):
        return _up(mpmath.mpf(mu) ** 2 / 2)


@tight_zcdp.register
def _(mechanism: Laplace) -> float:
    eps = mechanism.sensitivity / mechanism.scale
    with mpmath.workdps(_digits(eps)):
        e = mpmath.mpf(eps)
        return _up(e + mpmath.expm1(-e))


def _pure(epsilon: float) -> float:
    with mpmath.workdps(_digits(epsilon)):
        e = mpmath.mpf(epsilon)
        return _up(e * mpmath.tanh(e / 2))


@tight_zcdp.register
def _(mechanism: RandomizedResponse | PermuteAndFlip | LaplaceNoisyMax) -> float:
    return _pure(mechanism.epsilon)  # each is ε-DP with the ε-DP pair as its worst pair


@tight_zcdp.register
def _(mechanism: EpsilonDelta) -> float:
    if mechanism.delta > 0.0:
        raise NotImplementedError(f"{mechanism!r} has δ > 0: its Rényi divergences are infinite (no zCDP)")
    return _pure(mechanism.epsilon)


@tight_zcdp.register
def _(mechanism: BoundedRange) -> float:
    return kl_max(mechanism.epsilon)


__all__ = ["tight_zcdp"]

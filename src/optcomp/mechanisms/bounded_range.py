"""Bounded-range (BR) selection steps — the exponential mechanism and its relatives — and the two ε-DP
selection mechanisms that are *not* bounded-range.

**Bounded range** (Durfee–Rogers, NeurIPS 2019, Def. 3.1). M is ε-BR when for all neighbours x, x′ and outputs
y, y′: P[M(x)=y]/P[M(x′)=y] ≤ e^ε · P[M(x)=y′]/P[M(x′)=y′], i.e. its privacy loss L(y) = ln P(y)/Q(y) takes
values in an interval [t − ε, t] of width ε. Since E_P[e^{−L}] = 1, 0 ∈ [t − ε, t], so t ∈ [0, ε], and ε-BR
implies ε-DP.

**The worst-case family** (``docs/selection.md`` §1). For t ∈ [0, ε], the two-outcome pair (P_t, Q_t) with
L(A) = t, L(B) = t − ε has

    p_t = P_t(A) = (1 − e^{t−ε})/(1 − e^{−ε}),     q_t = Q_t(A) = (e^{−t} − e^{−ε})/(1 − e^{−ε}).

Every ε-BR pair is dominated (hockey-stick divergence at every ε′) by some member: with u = e^{−L},
E_P[u] = 1 and H_{e^x}(P‖Q) = E_P[(1 − e^x u)_+] is convex in u, so among laws of u on [e^{−t}, e^{ε−t}]
with mean 1 the two-point law at the ends is the largest. The family is closed under swapping P and Q
(t ↦ ε − t), so one statement covers both directions of either neighbouring relation. **No single pair
dominates the whole family** usefully: composing one pair of the profile is loose (worse than zCDP at 100
steps). So :func:`~optcomp.mechanisms.privacy_loss_laws` gives a :class:`BoundedRange` step only its ε-DP
pair (randomized response, valid but loose), and :func:`optcomp.compose` sends compositions with BR steps to
the adaptive engine (:mod:`optcomp.adaptive`), which takes the supremum over t at every step.

**Which mechanisms are BR** (Durfee–Rogers 2019, §3):

* the exponential mechanism with weights exp(ε·u(x, y)/(2Δ)), Δ the sensitivity of the utility, is ε-BR (and
  ε-DP, McSherry–Talwar); with a utility that moves in one direction for all y when a record is added
  (monotone), weights exp(ε·u/Δ) are ε-BR: :func:`ExponentialMechanism`;
* report-noisy-max with Gumbel noise of scale 2Δ/ε *is* that exponential mechanism: :func:`GumbelNoisyMax`;
* one-shot top-k with Gumbel noise of scale 2Δ/ε equals k peeling exponential mechanisms, k BR steps:
  :func:`GumbelTopK` returns ``(BoundedRange(ε), k)``, a composition item.

**Which are not.** Report-noisy-max with exponential noise (= permute-and-flip, McKenna–Sheldon 2020) and
with Laplace noise are ε-DP but **not** ε-BR (their loss over outputs can span up to 2ε). They get the ε-DP
pair, never a BR statement: :class:`PermuteAndFlip`, :class:`LaplaceNoisyMax` (a peer shipped the BR zCDP
bound ε²/8 for permute-and-flip: opendp/opendp#2911).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

import mpmath
import numpy as np
import numpy.typing as npt

from optcomp._numerics import NONNEGATIVE, Domain, FloatArray
from optcomp._rounding import next_up
from optcomp.mechanisms._dispatch import LawPair, privacy_loss_laws
from optcomp.mechanisms._group import group_mechanism, group_sensitivity
from optcomp.mechanisms._spec import Neighbouring, validate_parameters
from optcomp.mechanisms.discrete import EpsilonDelta

#: Largest ε of a bounded-range step (e^ε stays far inside the float range in every engine formula).
MAX_BR_EPSILON: float = 500.0

#: ε of a bounded-range step: (0, ``MAX_BR_EPSILON``] (ε = 0 is no release at all: leave the step out).
BR_EPSILON = Domain(0.0, MAX_BR_EPSILON, lower_closed=False, upper_closed=True)

#: Decimal digits of the mpmath evaluations of the closed forms below (more are added for small ε, where
#: the closed forms cancel to O(ε²)).
_DIGITS = 40


@dataclass(frozen=True, slots=True)
class BoundedRange:
    """One ε-bounded-range release (Durfee–Rogers 2019): an exponential-mechanism step, a Gumbel noisy max, one
    round of top-k peeling (module docstring).

    ``BoundedRange(epsilon)``. Its worst case is the family (P_t, Q_t), t ∈ [0, ε] (:func:`family_masses`), not
    one pair: compositions go to the adaptive engine (:mod:`optcomp.adaptive`), which composes the steps in
    the order given against an analyst who picks each t after seeing the earlier outputs. Relation-agnostic
    (the family is closed under swapping P and Q).

    Attributes:
        epsilon: ε in (0, 500].
    """

    epsilon: float
    neighbouring: ClassVar[Neighbouring | None] = None
    domains: ClassVar[Mapping[str, Domain]] = {"epsilon": BR_EPSILON}

    def __post_init__(self) -> None:
        validate_parameters(self)


def ExponentialMechanism(epsilon: float) -> BoundedRange:
    """The exponential mechanism calibrated to ε: weights exp(ε·u(x, y)/(2Δ)), Δ the sensitivity of the utility
    (or exp(ε·u/Δ) for a monotone utility). It is ε-BR (Durfee–Rogers 2019) — and ε-DP
    (McSherry–Talwar 2007) — so it is :class:`BoundedRange` ``(epsilon)``.

    Args:
        epsilon: the ε of the weights, in (0, 500].
    """
    return BoundedRange(epsilon)


def GumbelNoisyMax(epsilon: float) -> BoundedRange:
    """Report-noisy-max with Gumbel noise of scale 2Δ/ε: the same output law as the exponential mechanism with
    weights exp(ε·u/(2Δ)) (the Gumbel-max trick), hence :class:`BoundedRange` ``(epsilon)``.

    Args:
        epsilon: ε in (0, 500].
    """
    return BoundedRange(epsilon)


def GumbelTopK(epsilon: float, k: int) -> tuple[BoundedRange, int]:
    """One-shot top-k with Gumbel noise of scale 2Δ/ε: the same output law as k peeling exponential mechanisms
    (Durfee–Rogers 2019), so the composition item ``(BoundedRange(epsilon), k)``.

    Args:
        epsilon: ε of each peeling step, in (0, 500].
        k: how many items are released, an integer ≥ 1.
    """
    from optcomp._numerics import check_int

    return BoundedRange(epsilon), check_int("k", k, minimum=1)


@dataclass(frozen=True, slots=True)
class PermuteAndFlip:
    """Permute-and-flip (McKenna–Sheldon, NeurIPS 2020) = report-noisy-max with exponential noise: ε-DP.

    **Not bounded-range**: for neighbouring inputs its privacy loss over outputs can span an interval of width
    up to 2ε (the flip probabilities move in opposite directions for the winner and the others), so the BR
    composition and the BR zCDP bound ε²/8 do not apply to it (a peer shipped that bound: opendp/opendp#2911).
    Its pair is the ε-DP canonical pair (randomized response, KOV Thm II.5: every ε-DP pair is a
    post-processing of it), valid and tight among ε-DP statements. ``PermuteAndFlip(epsilon)``;
    relation-agnostic.

    Attributes:
        epsilon: ε ≥ 0 (finite).
    """

    epsilon: float
    neighbouring: ClassVar[Neighbouring | None] = None
    domains: ClassVar[Mapping[str, Domain]] = {"epsilon": NONNEGATIVE}

    def __post_init__(self) -> None:
        validate_parameters(self)


@dataclass(frozen=True, slots=True)
class LaplaceNoisyMax:
    """Report-noisy-max with Laplace noise of scale 2Δ/ε (Dwork–Roth, Claim 3.9): ε-DP.

    **Not bounded-range**: adding a record can raise one candidate's noisy count and lower another's, so the
    loss over outputs spans up to 2ε; only the ε-DP pair (randomized response) is claimed, as for
    :class:`PermuteAndFlip`. ``LaplaceNoisyMax(epsilon)``; relation-agnostic.

    Attributes:
        epsilon: ε ≥ 0 (finite).
    """

    epsilon: float
    neighbouring: ClassVar[Neighbouring | None] = None
    domains: ClassVar[Mapping[str, Domain]] = {"epsilon": NONNEGATIVE}

    def __post_init__(self) -> None:
        validate_parameters(self)


def _pure_pair(epsilon: float) -> LawPair:
    return privacy_loss_laws(EpsilonDelta(epsilon, delta=0.0))


@privacy_loss_laws.register
def _pure_selection_laws(mechanism: BoundedRange | PermuteAndFlip | LaplaceNoisyMax) -> LawPair:
    """The ε-DP pair of one step: for BR valid for one step, loose in composition (module docstring)."""
    return _pure_pair(mechanism.epsilon)


def _group_epsilon(g: int, epsilon: float) -> float:
    """g·ε rounded up (a larger ε dominates: the ε-BR and ε-DP classes grow with ε)."""
    return group_sensitivity(g, epsilon)


@group_mechanism.register
def _bounded_range_group(mechanism: BoundedRange, g: int) -> BoundedRange:
    """Along a path of g neighbouring steps each loss ranges over an interval of width ε, so the group's loss
    ranges over one of width gε: the group step is gε-BR (exact for the exponential mechanism, whose
    utility moves by at most gΔ)."""
    return BoundedRange(_group_epsilon(g, mechanism.epsilon))


@group_mechanism.register
def _permute_and_flip_group(mechanism: PermuteAndFlip, g: int) -> PermuteAndFlip:
    """gε-DP for a group of g (group privacy of pure DP)."""
    return PermuteAndFlip(_group_epsilon(g, mechanism.epsilon))


@group_mechanism.register
def _laplace_noisy_max_group(mechanism: LaplaceNoisyMax, g: int) -> LaplaceNoisyMax:
    """gε-DP for a group of g (group privacy of pure DP)."""
    return LaplaceNoisyMax(_group_epsilon(g, mechanism.epsilon))


# -- closed forms of the family ------------------------------------------------------------------------------


def family_masses(epsilon: float, t: float) -> tuple[float, float]:
    """(p_t, q_t) = (P_t(A), Q_t(A)) of the worst-case pair at t ∈ [0, ε] (module docstring), in floats
    (for display and tests; the engines bound their own rounding)."""
    e, tt = float(epsilon), float(t)
    if not 0.0 <= tt <= e:
        raise ValueError(f"t must be in [0, epsilon] = [0, {e!r}], got {t!r}")
    den = -math.expm1(-e)
    return -math.expm1(tt - e) / den, math.exp(-tt) * -math.expm1(tt - e) / den


def _digits(epsilon: float) -> int:
    """mpmath digits for a closed form that cancels to O(ε²): 40 plus twice the decades below 1."""
    return _DIGITS + 2 * max(0, math.ceil(-math.log10(epsilon)))


def _up(value: mpmath.mpf) -> float:
    """A float at least ``value`` (an mpmath number far more precise than a double): nearest, plus one ulp."""
    return float(next_up(float(value)))


def kl_max(epsilon: float) -> float:
    """max_t KL(P_t‖Q_t) = ε/(e^ε − 1) − 1 + ln((e^ε − 1)/ε), rounded up: the tight zCDP ρ of one ε-BR step
    (Cesar–Rogers 2021: ε-BR is ρ-zCDP with ρ = this ≤ ε²/8; sup_α D_α/α of the family is approached as
    α → 1, checked on a grid of orders in ``tests/test_bounded_range.py``).

    Args:
        epsilon: ε in (0, 500].
    """
    eps = BR_EPSILON.validate("epsilon", epsilon)
    with mpmath.workdps(_digits(eps)):
        e = mpmath.mpf(eps)
        value = e / mpmath.expm1(e) - 1 + mpmath.log(mpmath.expm1(e) / e)
        return _up(value)


def family_rdp(epsilon: float, orders: npt.ArrayLike) -> FloatArray:
    """The exact RDP curve of one ε-BR step, sup_t D_α(P_t‖Q_t), rounded up at each order α > 1.

    With u = e^t ∈ [1, e^ε], E_α(t) = E_{Q_t}[(P_t/Q_t)^α] = u^{α−1}(a − b·u), a = c + d, b = c·e^{−ε},
    c = (1 − e^{−(α−1)ε})/(1 − e^{−ε}), d = e^{−(α−1)ε} (``docs/selection.md`` §1); its maximum over u is at
    u* = (α − 1)a/(α·b) clipped to [1, e^ε] (the derivative changes sign once), and
    D_α = ln E_α(u*)/(α − 1). Evaluated in mpmath (40+ digits), each value rounded up by one ulp.

    Args:
        epsilon: ε in (0, 500].
        orders: orders α > 1 (finite).
    """
    eps = BR_EPSILON.validate("epsilon", epsilon)
    alphas = np.atleast_1d(np.asarray(orders, dtype=np.float64))
    if alphas.ndim != 1 or not np.all(np.isfinite(alphas) & (alphas > 1.0)):
        raise ValueError(f"orders must be finite numbers > 1, got {orders!r}")
    out = np.empty(alphas.size)
    with mpmath.workdps(_digits(eps)):
        e = mpmath.mpf(eps)
        for i, alpha in enumerate(alphas.tolist()):
            a1 = mpmath.mpf(alpha) - 1
            d = mpmath.exp(-a1 * e)
            c = -mpmath.expm1(-a1 * e) / -mpmath.expm1(-e)
            a, b = c + d, c * mpmath.exp(-e)
            u = min(max(a1 * a / ((a1 + 1) * b), mpmath.mpf(1)), mpmath.exp(e))
            out[i] = _up(max(mpmath.log(u ** a1 * (a - b * u)) / a1, mpmath.mpf(0)))
    return out


__all__ = [
    "BR_EPSILON",
    "MAX_BR_EPSILON",
    "BoundedRange",
    "ExponentialMechanism",
    "GumbelNoisyMax",
    "GumbelTopK",
    "LaplaceNoisyMax",
    "PermuteAndFlip",
    "family_masses",
    "family_rdp",
    "kl_max",
]

"""Mechanisms with finitely many outputs: the canonical (ε, δ) mechanism, randomized response,
k-ary randomized response, arbitrary discrete pairs, and the discrete Laplace (geometric) mechanism."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass
from typing import ClassVar

import numpy as np
import numpy.typing as npt
from scipy.special import expit

from optcomp._numerics import (
    NONNEGATIVE,
    POSITIVE,
    PROBABILITY,
    Domain,
    check_probability_vector,
    integers,
)
from optcomp.mechanisms._dispatch import LawPair, privacy_loss_laws
from optcomp.mechanisms._group import group_mechanism
from optcomp.mechanisms._law import PrivacyLossLaw
from optcomp.mechanisms._spec import Neighbouring, check_loss_scale, validate_parameters


def merged_law(
    losses: npt.ArrayLike,
    p: npt.ArrayLike,
    q: npt.ArrayLike,
    *,
    p_inf: float = 0.0,
    q_neg_inf: float = 0.0,
) -> PrivacyLossLaw:
    """A discrete law with equal losses merged (masses summed) and zero-mass atoms dropped."""
    losses_a = np.asarray(losses, dtype=np.float64)
    p_a = np.asarray(p, dtype=np.float64)
    q_a = np.asarray(q, dtype=np.float64)
    keep = (p_a > 0) | (q_a > 0)
    losses_a, p_a, q_a = losses_a[keep], p_a[keep], q_a[keep]
    unique, inverse = np.unique(losses_a, return_inverse=True)
    p_m = np.zeros(unique.shape, dtype=np.float64)
    q_m = np.zeros(unique.shape, dtype=np.float64)
    np.add.at(p_m, inverse, p_a)
    np.add.at(q_m, inverse, q_a)
    return PrivacyLossLaw(atom_losses=unique, atom_p=p_m, atom_q=q_m, p_inf=p_inf, q_neg_inf=q_neg_inf)


@dataclass(frozen=True, slots=True)
class EpsilonDelta:
    """An (ε, δ)-DP black box, represented by its canonical mechanism (KOV Section IV, eqs (9)–(10)).

    Outcomes {0, 1, 2, 3} with P = [δ, (1−δ)e^ε/(1+e^ε), (1−δ)/(1+e^ε), 0] and
    Q = [0, (1−δ)/(1+e^ε), (1−δ)e^ε/(1+e^ε), δ]. Every (ε, δ)-DP mechanism is a post-processing of it
    (KOV Thm II.5), so its PLD gives the optimal mechanism-oblivious composition. Its privacy loss is
    +∞ w.p. δ, +ε w.p. (1−δ)e^ε/(1+e^ε), −ε w.p. (1−δ)/(1+e^ε); the pair is symmetric.
    ``EpsilonDelta(epsilon, *, delta)`` (δ required: the pure case is :class:`RandomizedResponse`);
    relation-agnostic.

    Attributes:
        epsilon: ε ≥ 0 (finite).
        delta: δ in [0, 1].
    """

    epsilon: float
    _: KW_ONLY
    delta: float
    neighbouring: ClassVar[Neighbouring | None] = None
    domains: ClassVar[Mapping[str, Domain]] = {"epsilon": NONNEGATIVE, "delta": PROBABILITY}

    def __post_init__(self) -> None:
        validate_parameters(self)


@privacy_loss_laws.register
def _epsilon_delta_laws(mechanism: EpsilonDelta) -> LawPair:
    eps, delta = mechanism.epsilon, mechanism.delta
    high = (1.0 - delta) * float(expit(eps))  # (1−δ) e^ε/(1+e^ε)
    low = (1.0 - delta) * float(expit(-eps))  # (1−δ)/(1+e^ε)
    law = merged_law([eps, -eps], [high, low], [low, high], p_inf=delta, q_neg_inf=delta)
    return (law, law)


@dataclass(frozen=True, slots=True)
class RandomizedResponse:
    """Binary randomized response: report the true bit w.p. e^ε/(1+e^ε), else its flip; ε-DP (tight).

    Pair P = [e^ε, 1]/(1+e^ε), Q = [1, e^ε]/(1+e^ε) (symmetric); loss ±ε with P-masses
    e^ε/(1+e^ε) and 1/(1+e^ε) — the canonical mechanism with δ = 0 (KOV eq. (9)).
    ``RandomizedResponse(epsilon)``. Relation-agnostic: the pair is the same for any two inputs that
    differ, so it holds under add/remove and substitution alike (a removed record's bit is simply
    another input value).

    Attributes:
        epsilon: ε ≥ 0 (finite).
    """

    epsilon: float
    neighbouring: ClassVar[Neighbouring | None] = None
    domains: ClassVar[Mapping[str, Domain]] = {"epsilon": NONNEGATIVE}

    def __post_init__(self) -> None:
        validate_parameters(self)


@privacy_loss_laws.register
def _randomized_response_laws(mechanism: RandomizedResponse) -> LawPair:
    return _epsilon_delta_laws(EpsilonDelta(mechanism.epsilon, delta=0.0))


@dataclass(frozen=True, slots=True)
class KaryRandomizedResponse:
    """k-ary randomized response: report the true value w.p. e^ε/(e^ε + k − 1), each other value w.p.
    1/(e^ε + k − 1); ε-DP (tight).

    Pair for inputs a ≠ a': P = [e^ε, 1, 1, …]/Z, Q = [1, e^ε, 1, …]/Z, Z = e^ε + k − 1 (symmetric).
    Loss +ε w.p. e^ε/Z, −ε w.p. 1/Z, 0 w.p. (k − 2)/Z under P. ``KaryRandomizedResponse(epsilon, *, k)``;
    relation-agnostic (as :class:`RandomizedResponse`).

    Attributes:
        epsilon: ε ≥ 0 (finite).
        k: alphabet size, an integer ≥ 2.
    """

    epsilon: float
    _: KW_ONLY
    k: int
    neighbouring: ClassVar[Neighbouring | None] = None
    domains: ClassVar[Mapping[str, Domain]] = {"epsilon": NONNEGATIVE, "k": integers(2)}

    def __post_init__(self) -> None:
        validate_parameters(self)


@privacy_loss_laws.register
def _kary_laws(mechanism: KaryRandomizedResponse) -> LawPair:
    eps, k = mechanism.epsilon, mechanism.k
    small = math.exp(-eps) / (1.0 + (k - 1) * math.exp(-eps))  # 1/Z, no overflow
    high = 1.0 / (1.0 + (k - 1) * math.exp(-eps))  # e^ε/Z
    law = merged_law([eps, 0.0, -eps], [high, (k - 2) * small, small], [small, (k - 2) * small, high])
    return (law, law)


@dataclass(frozen=True, slots=True)
class DiscretePair:
    """Any pair of distributions on a common finite set, given as probability vectors.

    ``DiscretePair(p, q)``: the pair itself is the defining parameter, so both stay positional, in the
    order (P, Q) of the papers. ``p`` = M(D) and ``q`` = M(D') for the remove direction; the add
    direction is the swap. Stored as tuples (so the spec is hashable); each must be a probability
    vector (:func:`optcomp._numerics.check_probability_vector`). Relation-agnostic: the caller chooses
    which neighbouring datasets the pair describes.

    Attributes:
        p: probabilities of the outcomes under D.
        q: probabilities of the same outcomes under D'.
    """

    p: tuple[float, ...]
    q: tuple[float, ...]
    neighbouring: ClassVar[Neighbouring | None] = None
    domains: ClassVar[Mapping[str, Domain]] = {}

    def __post_init__(self) -> None:
        p = check_probability_vector("p", self.p)
        q = check_probability_vector("q", self.q)
        if p.size != q.size:
            raise ValueError(f"p and q must have the same length, got {p.size} and {q.size}")
        object.__setattr__(self, "p", tuple(p.tolist()))
        object.__setattr__(self, "q", tuple(q.tolist()))


@privacy_loss_laws.register
def _discrete_pair_laws(mechanism: DiscretePair) -> LawPair:
    p = np.array(mechanism.p)
    q = np.array(mechanism.q)
    both = (p > 0) & (q > 0)
    # p and q sum to 1 within n·4u (validated); min(·, 1) only removes that rounding excess.
    remove = merged_law(
        np.log(p[both]) - np.log(q[both]),
        p[both],
        q[both],
        p_inf=min(1.0, math.fsum(p[(p > 0) & (q == 0)].tolist())),
        q_neg_inf=min(1.0, math.fsum(q[(q > 0) & (p == 0)].tolist())),
    )
    return (remove, remove.swapped())


@dataclass(frozen=True, slots=True)
class DiscreteLaplace:
    """Discrete Laplace (two-sided geometric) mechanism: f(D) + K, P(K = j) ∝ e^{−|j|/b}, j ∈ ℤ, on an
    integer query of sensitivity Δ; ε-DP with ε = Δ/b.

    Pair P = Δ + K, Q = K (symmetric). With t = 1/b and P(K = j) = tanh(t/2)·e^{−t|j|}, the loss at
    output x is t(|x| − |x − Δ|): −tΔ for x ≤ 0 (P-mass e^{−tΔ}/(1 + e^{−t})), +tΔ for x ≥ Δ
    (P-mass 1/(1 + e^{−t})), and t(2x − Δ) for 0 < x < Δ (P-mass tanh(t/2)e^{−t(Δ−x)}); Q-masses are
    the mirror images. Exact closed-form atoms, no truncation. ``DiscreteLaplace(scale, *,
    sensitivity=1)``; relation-agnostic.

    Attributes:
        scale: b > 0.
        sensitivity: Δ, an integer ≥ 1.
    """

    scale: float
    _: KW_ONLY
    sensitivity: int = 1
    neighbouring: ClassVar[Neighbouring | None] = None
    domains: ClassVar[Mapping[str, Domain]] = {"scale": POSITIVE, "sensitivity": integers(1)}

    def __post_init__(self) -> None:
        validate_parameters(self)
        check_loss_scale(self, scale="scale")


@privacy_loss_laws.register
def _discrete_laplace_laws(mechanism: DiscreteLaplace) -> LawPair:
    t, d = 1.0 / mechanism.scale, mechanism.sensitivity
    x = np.arange(0, d + 1, dtype=np.float64)
    losses = t * (2.0 * x - d)
    head = float(expit(t))  # 1/(1 + e^{−t})
    p_mass = math.tanh(0.5 * t) * np.exp(-t * (d - x))
    q_mass = math.tanh(0.5 * t) * np.exp(-t * x)
    p_mass[0], q_mass[0] = math.exp(-t * d) * head, head
    p_mass[-1], q_mass[-1] = head, math.exp(-t * d) * head
    law = merged_law(losses, p_mass, q_mass)
    return (law, law)


@group_mechanism.register
def _discrete_laplace_group(mechanism: DiscreteLaplace, g: int) -> DiscreteLaplace:
    """Integer sensitivity gΔ (exact; :mod:`optcomp.mechanisms._group`)."""
    return DiscreteLaplace(mechanism.scale, sensitivity=g * mechanism.sensitivity)

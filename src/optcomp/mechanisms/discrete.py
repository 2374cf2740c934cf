"""Mechanisms with finitely many outputs: the canonical (ε, δ) mechanism, randomized response,
k-ary randomized response, arbitrary discrete pairs, and the discrete Laplace (geometric) mechanism."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import numpy.typing as npt
from scipy.special import expit

from optcomp._numerics import check_epsilon_delta
from optcomp.mechanisms._dispatch import LawPair, privacy_loss_laws
from optcomp.mechanisms._law import PrivacyLossLaw


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

    Attributes:
        epsilon: ε ≥ 0.
        delta: δ in [0, 1].
    """

    epsilon: float
    delta: float
    neighbouring: ClassVar[str] = "add_remove"

    def __post_init__(self) -> None:
        epsilon, delta = check_epsilon_delta(self.epsilon, self.delta)
        object.__setattr__(self, "epsilon", epsilon)
        object.__setattr__(self, "delta", delta)


@privacy_loss_laws.register
def _epsilon_delta_laws(mechanism: EpsilonDelta) -> LawPair:
    eps, delta = mechanism.epsilon, mechanism.delta
    high = (1.0 - delta) * float(expit(eps))  # (1−δ) e^ε/(1+e^ε)
    low = (1.0 - delta) * float(expit(-eps))  # (1−δ)/(1+e^ε)
    law = merged_law([eps, -eps], [high, low], [low, high], p_inf=delta, q_neg_inf=delta)
    return (law, law)

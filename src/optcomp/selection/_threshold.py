"""Liu–Talwar's known-threshold selection (STOC 2019, Algorithm 1 / Thm 3.1), for pure ε₀-DP bases.

Repeat: run the base; if the candidate's score reaches the threshold τ (fixed in advance), release it and
stop; otherwise stop with probability γ (releasing ⊥, nothing) and else run again. With F = P(score < τ)
on one dataset (F' on its neighbour) and c = 1 − γ, the released candidate y (score ≥ τ) has probability
P(y)/(1 − cF), and ⊥ has γF/(1 − cF). For a pure ε₀-DP base (|privacy loss| ≤ ε₀):

* 1 − cF = γ + c(1 − F) ≥ e^{−ε₀}(γ + c(1 − F')) = e^{−ε₀}(1 − cF'), so each output's likelihood ratio is at
  most e^{ε₀}·e^{ε₀} — Liu–Talwar's 2ε₀ (Thm 3.1; the ⊥ atom likewise: F ≤ e^{ε₀}F');
* 1 − cF ≥ γ and 1 − cF' ≤ 1, so the ratio is also at most e^{ε₀}/γ.

So the release is (ε₀ + min(ε₀, log(1/γ)), 0)-DP (γ = 1 is one run: ε₀). Approximate-DP bases are refused by
name: the (ε, δ) form of Liu–Talwar's threshold theorem could not be checked against the paper here
(``docs/private-selection.md`` §2); best-of-K (:func:`~optcomp.selection.select`) handles them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from optcomp._numerics import Accuracy, Bound, check_nonnegative, check_probability, round_up
from optcomp.queries import Composition
from optcomp.selection._select import (
    PROFILE_ACCURACY,
    Base,
    RouteAnswer,
    SelectionBound,
    _as_composition,
    pure_epsilon,
)

#: The one route of the threshold variant.
ROUTE = "liu-talwar"
_NOTE = "Liu-Talwar Thm 3.1: eps0 + min(eps0, log(1/gamma)) for a pure eps0-DP base (delta = 0)"


@dataclass(frozen=True)
class ThresholdSelection:
    """Liu–Talwar's known-threshold selection of a pure ε₀-DP base (module docstring).

    Attributes:
        base: the base's composition.
        stop_probability: γ in (0, 1], the probability of stopping after a candidate below the threshold.
        epsilon0: the base's pure ε₀ (rounded up).
    """

    base: Composition
    stop_probability: float
    epsilon0: float

    @property
    def value(self) -> float:
        """The certified ε of the release (δ = 0)."""
        extra = min(self.epsilon0, round_up(-math.log(self.stop_probability)))
        return round_up(self.epsilon0 + extra)

    def _answer(self, quantity: Literal["epsilon", "delta"], at: float, upper: float) -> SelectionBound:
        law = f"threshold, stop probability gamma={self.stop_probability:g}"
        return SelectionBound(quantity, at, Bound(0.0, upper), ROUTE,
                              (RouteAnswer(ROUTE, upper, _NOTE),), "none", law)

    def epsilon(self, delta: float) -> SelectionBound:
        """ε(δ) ≤ :attr:`value` for every δ ∈ [0, 1] (a pure guarantee); lower end 0 ("none")."""
        d = check_probability("delta", delta)
        return self._answer("epsilon", d, self.value)

    def delta(self, epsilon: float) -> SelectionBound:
        """δ(ε) = 0 from ε ≥ :attr:`value`; below it this route certifies only δ ≤ 1."""
        e = check_nonnegative("epsilon", epsilon)
        return self._answer("delta", e, 0.0 if e >= self.value else 1.0)

    def statement(self, delta: float) -> str:
        check_probability("delta", delta)
        return (
            f"Releasing the first candidate whose score reaches a threshold fixed in advance (stopping with "
            f"probability {self.stop_probability:g} after each one below it) of a {self.epsilon0:.4g}-DP base is "
            f"{self.value:.4g}-DP ({_NOTE}). The threshold must not depend on the data."
        )


def threshold(base: Base, stop_probability: float, *, accuracy: Accuracy = PROFILE_ACCURACY) -> ThresholdSelection:
    """Liu–Talwar's known-threshold selection of ``base`` (module docstring).

    Args:
        base: as for :func:`~optcomp.selection.select`; it must be pure DP (bounded privacy loss).
        stop_probability: γ in (0, 1].
        accuracy: as for :func:`~optcomp.selection.select` (unused by the pure route).

    Raises:
        ValueError: γ outside (0, 1].
        NotImplementedError: a base that is not pure DP (module docstring).
    """
    gamma = check_probability("stop_probability", stop_probability)
    if gamma == 0.0:
        raise ValueError(f"stop_probability must be in (0, 1], got {stop_probability!r}")
    comp = _as_composition(base, accuracy)
    eps0 = pure_epsilon(comp.items)
    if eps0 is None:
        raise NotImplementedError(
            "the known-threshold variant is implemented for pure eps-DP bases only (Liu-Talwar Thm 3.1); this "
            "base has an unbounded privacy loss: use best-of-K selection (optcomp.selection.select / --law)"
        )
    return ThresholdSelection(comp, gamma, eps0)


__all__ = ["ROUTE", "ThresholdSelection", "threshold"]

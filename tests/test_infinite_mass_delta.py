"""ε(δ) at a δ equal to the composition's mass at +∞: the truth is finite (the mass ≤ δ), but the laws'
masses (trusted to 64 units of roundoff) cannot decide it, so the query refuses *by that reason*
(:class:`optcomp.pld.InfiniteMassError`), not with a misleading overflow; just off it the answer is certified.
Truth: δ(ε) = max over both directions of Σ_y max(0, P(y) − e^ε Q(y)), enumerated exactly over the composed outcomes
(``tests/_references/discrete_pairs.py``).
"""

from __future__ import annotations

import pytest

from optcomp import compose
from optcomp.mechanisms import DiscretePair
from optcomp.pld import GridTooLargeError, InfiniteMassError
from tests._references.discrete_pairs import hockey_stick as _true_delta


@pytest.mark.parametrize(("p", "q", "k", "mass"), [((1.0, 0.0), (0.5, 0.5), 1, 0.5),
                                                  ((0.5, 0.5, 0.0), (0.25, 0.25, 0.5), 2, 0.75)])
def test_delta_at_the_infinite_mass_is_refused_by_its_reason(p: tuple[float, ...], q: tuple[float, ...], k: int,
                                                             mass: float) -> None:
    assert _true_delta(p, q, k, 0.0) >= mass  # the +∞ mass is in δ(ε) at every ε
    composition = compose((DiscretePair(p, q), k))
    with pytest.raises(InfiniteMassError, match="infinite privacy loss") as err:
        composition.epsilon(mass)
    assert not isinstance(err.value, GridTooLargeError)
    assert "overflow" not in str(err.value)


def test_just_off_the_infinite_mass_the_answer_is_certified() -> None:
    """DiscretePair((1, 0), (0.5, 0.5)): δ(ε) = 0.5 at every ε ≥ 0 (exact), so ε(δ) = 0 for δ ≥ 0.5 (0.5
    itself included: the true answer the refusal cannot certify) and ∞ below."""
    p, q = (1.0, 0.0), (0.5, 0.5)
    for eps in (0.0, 0.5, 3.0):
        assert _true_delta(p, q, 1, eps) == 0.5
    composition = compose((DiscretePair(p, q), 1))
    assert tuple(composition.epsilon(0.5 + 1e-9)) == (0.0, 0.0)
    assert tuple(composition.epsilon(0.5 - 1e-9)) == (float("inf"), float("inf"))


def test_two_fold_bracket_holds_the_truth_above_the_mass() -> None:
    p, q = (0.5, 0.5, 0.0), (0.25, 0.25, 0.5)
    b = compose((DiscretePair(p, q), 2)).epsilon(0.76)
    assert _true_delta(p, q, 2, b.upper) <= 0.76
    assert b.lower == 0.0 or _true_delta(p, q, 2, b.lower) > 0.76

"""Tilted lower ends read the drifted test set (``docs/pld.md`` §3, "Drift of the computed losses").

Truths: two certified brackets of one quantity on different grids must overlap; the lower ε end must
carry a certified lower δ above δ (the definition of a lower ε end); the certified upper δ at the lower
ε end must exceed δ too; the test set chosen gives the larger of the two certified bounds.
"""

from __future__ import annotations

import numpy as np
import pytest

from optcomp import Accuracy, dpsgd
from optcomp.pld import _joint, _query, _realise, _roots

POINT = (0.5, 0.0062996, 100_000, 1e-6)  # ε ≈ 125: every lower end stalled ~1 % low before (GridTooLargeError)


@pytest.fixture
def lower_ends(monkeypatch: pytest.MonkeyPatch) -> list[tuple[list[_query.LowerEnd], float, float]]:
    """Records (ends, δ, lower ε) of every lower ε end found."""
    seen: list[tuple[list[_query.LowerEnd], float, float]] = []
    original = _roots.lower_root

    def record(ends: list[_query.LowerEnd], delta: float, upper: float, p_inf_lo: float, width: float) -> float:
        out = original(ends, delta, upper, p_inf_lo, width)
        seen.append((ends, delta, out))
        return out

    monkeypatch.setattr(_realise, "lower_root", record)
    monkeypatch.setattr(_joint, "lower_root", record)
    return seen


def test_large_epsilon_point_meets_the_width(lower_ends: list[tuple[list[_query.LowerEnd], float, float]]) -> None:
    b = dpsgd.epsilon(*POINT)
    assert b.upper - b.lower <= 1e-4 * b.upper, b
    finer = dpsgd.epsilon(*POINT, accuracy=Accuracy(relative_width=1e-5))
    assert max(b.lower, finer.lower) <= min(b.upper, finer.upper), (b, finer)
    assert dpsgd.delta(POINT[0], POINT[1], POINT[2], b.lower).upper > POINT[3]
    drifted = False
    for ends, delta, eps in lower_ends:
        if eps > 0.0:
            assert max(float(end.delta(np.array([eps]))[0]) for end in ends) > delta, (eps, delta)
        drifted |= any(end.theta > 0.0 and end.drift > 1.0 for end in ends)
    assert drifted  # the drifted test set was exercised


def test_chosen_test_set_gives_the_larger_bound(lower_ends: list[tuple[list[_query.LowerEnd], float, float]]) -> None:
    dpsgd.epsilon(*POINT)
    for ends, _, eps in lower_ends:
        for end in ends:
            if end.theta == 0.0:
                continue
            tau = 1.0 / (1.0 + end.theta)
            for e in eps + np.linspace(-1.0, 1.0, 5):
                near = end._test_set(e, e - tau)
                far = end._test_set(e, e - tau - end.drift)
                values = [end.bound(e, t) for t in (near, far) if t is not None]
                assert end.finite_one(e) == max(values, default=0.0)

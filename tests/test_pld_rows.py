"""The ε(δ) refinement's speed-ups keep every bracket certified and the width target met (issue 26 item 5).

* passes intersect: a direction whose earlier certified upper end is below the other's is not recomposed,
  and the bracket kept is never wider than the last pass's own;
* the bracket still meets the requested width and overlaps a fixed-grid bracket of another step (both
  are certified, so they must intersect).
"""

from __future__ import annotations

import pytest

from optcomp import DEFAULT_ACCURACY, Accuracy, compose
from optcomp.mechanisms import Gaussian, PoissonSubsampled
from optcomp.pld import _pld

DELTA = 1e-5


def _sgd(sigma: float, q: float, steps: int, accuracy: Accuracy = DEFAULT_ACCURACY):  # type: ignore[no-untyped-def]
    return compose((PoissonSubsampled(Gaussian(sigma), sampling_rate=q), steps), accuracy=accuracy).pld()


@pytest.mark.parametrize(("sigma", "q", "steps", "grid"), [(2.0, 0.001, 1000, 4e-6), (0.8, 0.001, 1000, 3e-5), (2.0, 0.01, 1000, 5e-5)])
def test_default_bracket_meets_width_and_overlaps_a_fine_grid(sigma: float, q: float, steps: int, grid: float) -> None:
    b = _sgd(sigma, q, steps).epsilon(DELTA)
    assert 0.0 < b.lower <= b.upper
    assert (b.upper - b.lower) / b.upper <= DEFAULT_ACCURACY.relative_width
    fine = _sgd(sigma, q, steps, Accuracy(grid_step=grid)).epsilon(DELTA)
    assert max(b.lower, fine.lower) <= min(b.upper, fine.upper)


def test_passes_intersect_and_skip_a_dominated_direction() -> None:
    pld = _sgd(2.0, 0.001, 1000)
    coarse, fine = pld._directions(2e-4), pld._directions(2e-5)
    fresh = _pld._EpsilonMeasure(DELTA)
    alone = fresh.run(fine)
    chained = _pld._EpsilonMeasure(DELTA)
    chained.run(coarse)
    both = chained.run(fine)
    assert alone.lower <= both.lower <= both.upper <= alone.upper
    # the add direction's coarse upper end is below the remove direction's fine one: kept, not recomposed
    assert both.upper == alone.upper
    assert min(chained.uppers.values()) < both.lower


def test_a_dominated_direction_is_probed_at_a_coarser_step() -> None:
    """σ = 2, q = 0.01: the add direction's coarse bracket says a step between the passes brings its
    upper end below the remove direction's; it is read there, and the bracket is the fine pass's own."""
    pld = _sgd(2.0, 0.01, 100_000)
    coarse, fine = pld._directions(2e-3), pld._directions(1.2e-4)
    alone = _pld._EpsilonMeasure(DELTA).run(fine)
    probed = _pld._EpsilonMeasure(DELTA, DEFAULT_ACCURACY.relative_width, pld._direction)
    probed.run(coarse)
    both = probed.run(fine)
    assert both == alone
    steps = sorted(step for step, _, _ in probed.last.values())
    assert steps[0] == 1.2e-4 and 2 * 1.2e-4 < steps[1] < 2e-3

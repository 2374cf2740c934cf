"""optcomp.optimal speaks the library's accuracy dialect (issue 16, item 3): ``Accuracy`` in, relative width
measured by ``Bound.relative_width_above``; ``tolerance`` stays the expert override."""

from __future__ import annotations

import numpy as np
import pytest

from optcomp import Accuracy, optimal
from optcomp._numerics import EPSILON_WIDTH_FLOOR, Bound

#: Real (off-lattice) ε_i: the split engine answers, so the requested width drives its grid.
MECHS = [(float(e), 0.0) for e in np.random.default_rng(1).uniform(0.001, 0.1, 300)]
DELTA_G = 1e-6


def _overlap(a: Bound, b: Bound) -> bool:
    """Two certified brackets of the same truth must intersect."""
    return max(a.lower, b.lower) <= min(a.upper, b.upper)


@pytest.mark.parametrize("width", [1e-3, 1e-4])
def test_epsilon_meets_a_requested_relative_width(width: float) -> None:
    b = optimal.epsilon(MECHS, DELTA_G, accuracy=Accuracy(relative_width=width))
    assert b.relative_width_above(EPSILON_WIDTH_FLOOR) <= width
    assert _overlap(b, optimal.epsilon(MECHS, DELTA_G))


@pytest.mark.parametrize("width", [1e-2, 1e-3])
def test_delta_meets_a_requested_relative_width(width: float) -> None:
    b = optimal.delta(MECHS, 3.0, accuracy=Accuracy(relative_width=width))
    assert b.relative_width <= width
    assert _overlap(b, optimal.delta(MECHS, 3.0))


def test_grid_step_is_an_expert_fixed_step() -> None:
    coarse = optimal.epsilon(MECHS, DELTA_G, accuracy=Accuracy(grid_step=4e-3))
    fine = optimal.epsilon(MECHS, DELTA_G, accuracy=Accuracy(grid_step=1e-3))
    assert fine.width < coarse.width and _overlap(fine, coarse)
    d = optimal.delta(MECHS, 3.0, accuracy=Accuracy(grid_step=1e-3))
    assert _overlap(d, optimal.delta(MECHS, 3.0))


def test_default_is_the_default_tolerance() -> None:
    assert optimal.epsilon(MECHS, DELTA_G) == optimal.epsilon(MECHS, DELTA_G, tolerance=optimal.DEFAULT_TOLERANCE)
    assert optimal.delta(MECHS, 3.0) == optimal.delta(MECHS, 3.0, tolerance=optimal.DEFAULT_TOLERANCE)


def test_exact_engines_ignore_the_width() -> None:
    """Homogeneous and lattice inputs are answered exactly whatever width is asked for."""
    hom = optimal.homogeneous(0.01, 0.0, 10**4)
    assert optimal.epsilon(hom, DELTA_G, accuracy=Accuracy(relative_width=0.5)) == optimal.epsilon(hom, DELTA_G)


def test_accuracy_and_tolerance_are_exclusive() -> None:
    with pytest.raises(ValueError, match="accuracy or tolerance"):
        optimal.epsilon(MECHS, DELTA_G, accuracy=Accuracy(), tolerance=1e-3)
    with pytest.raises(ValueError, match="accuracy or tolerance"):
        optimal.delta(MECHS, 1.0, accuracy=Accuracy(), tolerance=1e-3)
    with pytest.raises(ValueError, match="accuracy must be"):
        optimal.epsilon(MECHS, DELTA_G, accuracy=1e-3)  # type: ignore[arg-type]


def test_mv_takes_its_eta_from_the_accuracy() -> None:
    few = MECHS[:40]
    b = optimal.epsilon(few, DELTA_G, method="mv", accuracy=Accuracy(relative_width=0.02))
    assert _overlap(b, optimal.epsilon(few, DELTA_G))


def test_huge_items_with_an_accuracy() -> None:
    mechs = [(800.0, 0.0)] * 2 + MECHS[:50]
    b = optimal.epsilon(mechs, DELTA_G, accuracy=Accuracy(relative_width=1e-6))
    assert b.lower >= 1600.0 and _overlap(b, optimal.epsilon(mechs, DELTA_G))

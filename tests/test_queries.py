"""The queries floor (:mod:`optcomp.queries`): routing, agreement between engines, immutability."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import optcomp
from optcomp import (
    Accuracy,
    Composition,
    EpsilonDelta,
    Gaussian,
    Laplace,
    PoissonSubsampled,
    RandomizedResponse,
    compose,
)
from optcomp._items import merged_mu
from optcomp.mechanisms import Renyi, ZeroConcentrated
from optcomp.optimal import HUGE_EPS
from tests._references import gdp_composed_mu, gdp_delta, gdp_epsilon, reciprocal
from tests.tolerances import COARSE_GRID_STEP, PLD_TEST_STEP


def _true_mu(items: list[tuple[Gaussian, int]]) -> object:
    """√(Σ kᵢ (Δᵢ/σᵢ)²) at ``MPMATH_DPS`` digits (Dong–Roth–Su Cor 3.3)."""
    return gdp_composed_mu((g.sensitivity, g.sigma, k) for g, k in items)


# -- routing ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("items", "accuracy", "engine"),
    [
        ([(Gaussian(1.0), 10), Gaussian(2.0, sensitivity=3.0)], None, "gdp"),
        ([(Gaussian(1.0), 10)], Accuracy(grid_step=COARSE_GRID_STEP), "grid"),
        ([(EpsilonDelta(0.5, delta=1e-6), 10), RandomizedResponse(0.3)], None, "optimal"),
        ([(EpsilonDelta(0.5, delta=1e-6), 10)], Accuracy(grid_step=COARSE_GRID_STEP), "grid"),
        ([EpsilonDelta(HUGE_EPS * 2, delta=0.0), EpsilonDelta(0.1, delta=0.0)], None, "grid"),
        ([Gaussian(1.0), Laplace(1.0)], None, "grid"),
        ([Gaussian(1.0), EpsilonDelta(0.1, delta=1e-6)], None, "grid"),
        ([(PoissonSubsampled(Gaussian(1.0), sampling_rate=0.01), 100)], None, "grid"),
        ([ZeroConcentrated(0.5)], None, "renyi"),
        ([ZeroConcentrated(0.5), Gaussian(1.0)], Accuracy(grid_step=COARSE_GRID_STEP), "renyi"),
        ([Renyi([2.0, 4.0], [0.1, 0.2]), Laplace(1.0)], None, "renyi"),
    ],
)
def test_each_engine_is_chosen_for_its_inputs(items: list[object], accuracy: Accuracy | None, engine: str) -> None:
    comp = compose(*items)  # type: ignore[arg-type]
    assert comp.engine(accuracy) == engine
    if accuracy is not None:  # the accuracy given to compose() is the default of engine()
        assert compose(*items, accuracy=accuracy).engine() == engine  # type: ignore[arg-type]


@settings(max_examples=10, deadline=None)
@given(
    sigmas=st.lists(st.floats(1.0, 20.0), min_size=1, max_size=3),  # μ ≤ 30: the test grid fits
    counts=st.lists(st.integers(1, 300), min_size=3, max_size=3),
    delta=st.sampled_from([1e-3, 1e-5, 1e-10]),
)
def test_gdp_route_contains_the_truth_and_overlaps_the_grid(
    sigmas: list[float], counts: list[int], delta: float
) -> None:
    items = [(Gaussian(s), k) for s, k in zip(sigmas, counts, strict=False)]
    comp = compose(*items)
    assert comp.engine() == "gdp"
    gdp = comp.epsilon(delta)
    truth = gdp_epsilon(_true_mu(items), delta)  # type: ignore[arg-type]
    assert gdp.lower <= truth <= gdp.upper
    grid = comp.pld(Accuracy(grid_step=PLD_TEST_STEP)).epsilon(delta)
    assert grid.lower <= gdp.upper and gdp.lower <= grid.upper
    assert gdp.upper - gdp.lower <= grid.upper - grid.lower  # the closed form is never wider


@settings(max_examples=10, deadline=None)
@given(sigma=st.floats(1.0, 50.0), k=st.integers(1, 300), epsilon=st.floats(0.0, 5.0))  # μ ≤ 17.4
def test_gdp_route_delta_contains_the_truth_and_overlaps_the_grid(sigma: float, k: int, epsilon: float) -> None:
    comp = compose((Gaussian(sigma), k))
    b = comp.delta(epsilon)
    assert b.lower <= gdp_delta(_true_mu([(Gaussian(sigma), k)]), epsilon) <= b.upper  # type: ignore[arg-type]
    grid = comp.delta(epsilon, accuracy=Accuracy(grid_step=PLD_TEST_STEP))
    assert grid.lower <= b.upper and b.lower <= grid.upper


@pytest.mark.parametrize("delta", [1e-300, 1e-100, 0.5])
def test_gdp_route_is_certified_in_the_deep_tail_and_the_bulk(delta: float) -> None:
    items = [(Gaussian(1.0), 10)]
    b = compose(*items).epsilon(delta)
    assert b.lower <= gdp_epsilon(_true_mu(items), delta) <= b.upper  # type: ignore[arg-type]


def test_gdp_route_endpoints() -> None:
    comp = compose((Gaussian(2.0), 3))
    assert comp.epsilon(0.0) == optcomp.Bound(math.inf, math.inf)
    assert comp.epsilon(1.0) == optcomp.Bound(0.0, 0.0)
    lo, hi = comp.delta_curve([0.0, 1.0, 2.0])
    for e, lo_e, hi_e in zip([0.0, 1.0, 2.0], lo, hi, strict=True):
        assert (lo_e, hi_e) == tuple(comp.delta(e))
    with pytest.raises(ValueError, match="epsilons"):
        comp.delta_curve([1.0, -1.0])
    with pytest.raises(ValueError, match="delta"):
        comp.epsilon(float("nan"))
    assert comp.epsilon_estimate(1e-5) == pytest.approx(float(gdp_epsilon(merged_mu([(Gaussian(2.0), 3)]), 1e-5)))


def test_black_boxes_by_optimal_agree_with_a_small_grid() -> None:
    comp = compose((EpsilonDelta(0.5, delta=1e-6), 10), (RandomizedResponse(0.3), 5))
    assert comp.engine() == "optimal"
    fine = comp.epsilon(1e-5)
    grid = comp.epsilon(1e-5, accuracy=Accuracy(grid_step=COARSE_GRID_STEP))
    assert grid == comp.pld(Accuracy(grid_step=COARSE_GRID_STEP)).epsilon(1e-5)  # routed to the grid
    assert grid.lower <= fine.upper and fine.lower <= grid.upper
    assert fine.upper - fine.lower <= grid.upper - grid.lower
    d_opt, d_grid = comp.delta(1.0), comp.pld(Accuracy(grid_step=COARSE_GRID_STEP)).delta(1.0)
    assert d_grid.lower <= d_opt.upper and d_opt.lower <= d_grid.upper
    assert d_opt.width <= d_grid.width


def test_the_grid_route_is_the_pld() -> None:
    comp = compose((Laplace(2.0), 20), (Gaussian(3.0), 4))
    assert comp.engine() == "grid"
    assert comp.epsilon(1e-6) == comp.pld().epsilon(1e-6)
    assert comp.delta(1.0) == comp.pld().delta(1.0)


# -- the value --------------------------------------------------------------------------------------
def test_composition_is_an_immutable_value() -> None:
    comp = compose((Gaussian(1.0), 3), Laplace(1.0), Gaussian(1.0))
    assert comp.items == ((Gaussian(1.0), 4), (Laplace(1.0), 1))
    assert comp == compose((Gaussian(1.0), 4), Laplace(1.0))
    assert hash(comp) == hash(compose((Gaussian(1.0), 4), Laplace(1.0)))
    with pytest.raises(dataclasses.FrozenInstanceError):
        comp.items = ()  # type: ignore[misc]
    twice = comp.self_compose(2)
    assert twice.items == ((Gaussian(1.0), 8), (Laplace(1.0), 2))
    assert comp.items == ((Gaussian(1.0), 4), (Laplace(1.0), 1))  # unchanged
    both = comp.compose(compose(Laplace(1.0), Gaussian(2.0)))
    assert isinstance(both, Composition)
    assert both.items == ((Gaussian(1.0), 4), (Laplace(1.0), 2), (Gaussian(2.0), 1))
    # accuracy belongs to the query: compositions of different default accuracies compose (the finer)
    mixed = comp.compose(compose(Laplace(1.0), accuracy=Accuracy(relative_width=1e-2, grid_step=1e-3)))
    assert mixed.accuracy == Accuracy()
    assert mixed.items == ((Gaussian(1.0), 4), (Laplace(1.0), 2))
    coarse = compose(Laplace(1.0), accuracy=Accuracy(relative_width=1e-2))
    assert coarse.compose(compose(Laplace(1.0), accuracy=Accuracy(relative_width=1e-3))).accuracy == Accuracy(
        relative_width=1e-3
    )
    with pytest.raises(ValueError, match="k"):
        comp.self_compose(0)


def test_pld_is_the_grid_at_the_requested_accuracy_and_cached() -> None:
    acc = Accuracy(grid_step=COARSE_GRID_STEP)
    comp = compose((Laplace(1.0), 3), neighbouring="add_remove")
    pld = comp.pld(acc)
    assert isinstance(pld, optcomp.pld.PrivacyLossDistribution)
    assert pld.accuracy == acc and pld.neighbouring == "add_remove" and pld.count == 3
    assert comp.pld(acc) is pld
    assert comp.pld().accuracy == comp.accuracy
    with pytest.raises(ValueError, match="accuracy"):
        comp.pld(1e-3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="accuracy"):
        comp.epsilon(1e-5, accuracy="fine")  # type: ignore[arg-type]


def test_merged_mu_adds_in_quadrature() -> None:
    assert merged_mu([(Gaussian(1.0, sensitivity=3.0), 1), (Gaussian(1.0, sensitivity=4.0), 1)]) == 5.0
    assert merged_mu([(Gaussian(0.5), 4)]) == 4.0
    assert np.isclose(merged_mu([(Gaussian(2.0), 3), (Gaussian(1.0), 2)]), math.sqrt(3 / 4 + 2))


@pytest.mark.parametrize("mu", [1.01e-8, 1e-3, 1e3, 0.99e6])
def test_gdp_route_over_its_mu_range(mu: float) -> None:
    comp = compose(Gaussian(1.0 / mu))
    assert comp.engine() == "gdp"
    true_mu = _true_mu([(Gaussian(1.0 / mu), 1)])
    for delta in (1e-5, 1e-300):
        b = comp.epsilon(delta)  # the truth's δ at the ends: ≤ δ at upper, > δ at lower (or lower = 0)
        assert gdp_delta(true_mu, b.upper) <= delta  # type: ignore[arg-type]
        assert b.lower == 0.0 or gdp_delta(true_mu, b.lower) > delta  # type: ignore[arg-type]
    for epsilon in (0.0, 1.0):
        d = comp.delta(epsilon)
        assert d.lower <= gdp_delta(true_mu, epsilon) <= d.upper  # type: ignore[arg-type]
    for epsilon in (1e300, 1.7976931348623157e308):  # far tail: δ has underflowed, and says so
        assert comp.delta(epsilon) == optcomp.Bound(0.0, math.ulp(0.0))


@pytest.mark.parametrize("sigma", [1e9, 1e-7])
def test_gaussians_outside_the_gdp_range_stay_on_the_grid(sigma: float) -> None:
    assert compose(Gaussian(sigma)).engine() == "grid"


def test_merged_gaussian_dominates_the_exact_merge() -> None:
    """The grid's merged Gaussian has μ = Δ/σ at least the exact √(Σ kᵢ μᵢ²) (50 digits), so upper ends
    computed on it stay upper ends of the true composition."""
    from optcomp._items import merge_gaussians
    from optcomp.mechanisms import Gaussian, Laplace

    for sigmas in ([4.0, 3.0], [0.7, 1.3, 2.9], [1e-3, 7.0]):
        counts = {Gaussian(s): k for k, s in enumerate(sigmas, start=3)}
        counts[Laplace(1.0)] = 2
        merged = next(m for m in merge_gaussians(counts) if isinstance(m, Gaussian))
        exact = gdp_composed_mu((1.0, s, k) for k, s in enumerate(sigmas, start=3))
        assert reciprocal(merged.sigma) >= exact


def test_the_router_hands_back_an_engine_cached_per_accuracy_and_every_query_follows_it() -> None:
    """Issue 25: one routing rule returns an engine object (cached per accuracy); hockey_stick_curve no
    longer overrides it (the GDP engine's curve lies inside the grid's at the grid's own points)."""
    comp = compose((Gaussian(2.0), 10))
    engine = comp.route()
    assert engine is comp.route() and engine.name == "gdp" == comp.engine()
    assert comp.route(Accuracy(grid_step=COARSE_GRID_STEP)).name == "grid"
    curve, grid = comp.hockey_stick_curve(), comp.pld().hockey_stick_curve()
    assert (curve.epsilons == grid.epsilons).all()
    assert (curve.lower >= grid.lower).all() and (curve.upper <= grid.upper).all()
    import pickle

    assert pickle.loads(pickle.dumps(comp)) == comp  # a value: the cached engines stay behind
    boxes = compose((EpsilonDelta(0.1, delta=1e-7), 50))
    assert boxes.route().name == "optimal"
    assert boxes.epsilon(1e-5) == boxes.route().epsilon(1e-5, strict=True)

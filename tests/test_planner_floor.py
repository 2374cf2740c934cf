"""The planner asks the queries floor and the one inverse solver: no engine decision of its own."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from optcomp import compose
from optcomp.mechanisms import EpsilonDelta, Gaussian
from optcomp.planner import PlanError, allocate, certified_epsilon, half_width, plan_from_dict
from optcomp.planner._accounting import OPTIMAL_FINAL_TOLERANCE, OPTIMAL_SEARCH_TOLERANCE, black_box_accuracy

PLANNER = Path(__file__).resolve().parents[1] / "src" / "optcomp" / "planner"
#: The lock search's relative precision (``_prepare._LOCK_RTOL``), with room for the last rounding.
LOCK_PRECISION = 2e-6


def test_gaussian_plan_certified_epsilon_is_the_floors_gdp_answer() -> None:
    stats = [{"name": f"g{i}", "kind": "count", "mechanism": "gaussian", "weight": 1.0 + i} for i in range(10)]
    plan = plan_from_dict({"epsilon": 1.0, "delta": 1e-5, "statistics": stats})
    r = allocate(plan, "mechanism_aware")
    composition = compose(*(Gaussian(sigma=s.noise[0]) for s in r.statistics))
    assert composition.engine() == "gdp"
    assert r.epsilon_certified == composition.epsilon(1e-5).upper <= r.epsilon_budget
    assert certified_epsilon(plan, "mechanism_aware", [s.epsilon for s in r.statistics]) <= r.epsilon_certified


def test_optimal_mode_certified_epsilon_is_the_floors_black_box_answer() -> None:
    stats = [{"name": f"c{i}", "kind": "count", "weight": 1.0 + 0.1 * i} for i in range(30)]
    plan = plan_from_dict({"epsilon": 1.0, "delta": 1e-6, "statistics": stats})
    r = allocate(plan, "optimal")
    eps = [s.epsilon for s in r.statistics]
    composition = compose(*(EpsilonDelta(epsilon=e, delta=0.0) for e in eps))
    assert composition.engine() == "optimal"
    uppers = [composition.epsilon(1e-6, accuracy=black_box_accuracy(1.0, w)).upper
              for w in (OPTIMAL_SEARCH_TOLERANCE, OPTIMAL_FINAL_TOLERANCE)]
    assert r.epsilon_certified == min(uppers) == certified_epsilon(plan, "optimal", eps) <= 1.0


def test_black_box_widths_are_the_floors_relative_width_at_the_budget() -> None:
    assert black_box_accuracy(1.0, 2e-3).relative_width == 2e-3
    # below the floor's 0.01, a width in ε of 2e-3·budget is a smaller relative width
    assert math.isclose(black_box_accuracy(1e-4, 2e-3).relative_width, 2e-3 * 1e-4 / 0.01)


def _one_lock(mechanism: str, target: float, epsilon: float = 1.0) -> tuple[float, float]:
    plan = plan_from_dict({"epsilon": epsilon, "delta": 1e-6, "beta": 0.05, "statistics": [
        {"name": "locked", "kind": "count", "mechanism": mechanism, "lock_accuracy": target},
        {"name": "free", "kind": "count"}]})
    r = allocate(plan, "basic")
    assert r.statistics[0].locked == "accuracy" and r.statistics[0].accuracy <= target
    return r.statistics[0].epsilon, r.statistics[0].accuracy


def test_laplace_accuracy_lock_is_the_least_epsilon() -> None:
    # α = b·ln(1/β) with b = 1/ε_i: the least ε_i is ln(1/β)/target
    lock, _ = _one_lock("laplace", 40.0)
    root = math.log(1.0 / 0.05) / 40.0
    assert root * (1.0 - LOCK_PRECISION) <= lock <= root * (1.0 + LOCK_PRECISION)


def test_discrete_laplace_lock_finds_the_step_of_an_integer_accuracy() -> None:
    # α is an integer, flat over ranges of ε_i: the lock sits just above the step down to the target
    lock, alpha = _one_lock("discrete_laplace", 60.0)
    assert alpha <= 60.0 < half_width("discrete_laplace", (1.0 + LOCK_PRECISION) / lock, 0.05)


def test_gaussian_lock_met_at_negligible_epsilon_stops_at_the_floor() -> None:
    # a Gaussian with δ_c > 0 has finite noise as ε_c → 0: a loose target is met at every ε_i
    lock, _ = _one_lock("gaussian", 1e6)
    assert 1e-6 <= lock <= 1e-6 * (1.0 + LOCK_PRECISION)


def test_unreachable_lock_is_refused_naming_field_and_index() -> None:
    with pytest.raises(PlanError, match=r"'locked' \(#1\): field 'lock_accuracy' 1e-300 is unreachable") as info:
        _one_lock("laplace", 1e-300)
    assert (info.value.field, info.value.index) == ("lock_accuracy", 0)


def test_planner_has_no_engine_of_its_own() -> None:
    """Routing, the Gaussian merge and the black-box engine are the queries floor's."""
    text = "\n".join(p.read_text(encoding="utf-8") for p in PLANNER.glob("*.py"))
    for spelling in ("gdp_epsilon", "gdp_delta_bound", "sqrt(math.fsum", "optimal.epsilon(", "from optcomp import optimal"):
        assert spelling not in text, spelling

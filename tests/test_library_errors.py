"""Bad library calls are refused at once with a short one-line ValueError/TypeError naming the parameter.

A fuzz over the public inverses, bounds, regions and the planner (issue 19: wrong exception types,
messages naming internals, 309-digit numbers, refusals that took minutes); each family lists values
outside the parameter's declared domain. Each call runs to its error without any engine work worth
mentioning: a hang or an engine failure would surface as a different exception or a slow suite.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest

from optcomp import bounds, calibrate, dpsgd, optimal, region
from optcomp._inverse import SearchBudgetExceeded, solve
from optcomp.mechanisms import Gaussian, RandomizedResponse
from optcomp.planner import PlanError, allocate, plan_from_dict

#: A message is one line of at most this many characters.
MAX_MESSAGE = 400
NAN, INF = math.nan, math.inf
HUGE_INT = 10**400
REAL_BAD = [NAN, -1.0, INF, "1", None, True, [1.0]]
PROB_BAD = [NAN, -0.1, 1.5, INF, "0.1", None]
OPEN_PROB_BAD = [*PROB_BAD, 0.0, 1.0]
INT_BAD = [0, -3, 2.5, True, "3", None, HUGE_INT, -HUGE_INT, 3.0]
DPSGD = {"noise_multiplier": 1.0, "sampling_rate": 0.01, "steps": 100, "delta": 1e-5}


def _dpsgd_cases() -> list[tuple[str, Callable[[], object]]]:
    out: list[tuple[str, Callable[[], object]]] = []
    bad = {"noise_multiplier": REAL_BAD + [0.0], "sampling_rate": [*PROB_BAD, 0.0], "steps": INT_BAD,
           "delta": OPEN_PROB_BAD}
    for key, values in bad.items():
        for v in values:
            args = {**DPSGD, key: v}
            out.append((key, lambda a=args: dpsgd.epsilon(a["noise_multiplier"], a["sampling_rate"], a["steps"],
                                                          a["delta"])))
    for v in [*REAL_BAD, 0.0, 1e308, 101.0]:
        out.append(("target_epsilon", lambda v=v: dpsgd.noise_multiplier(v, 0.01, 100, 1e-5)))
        out.append(("target_epsilon", lambda v=v: dpsgd.steps(v, 1.0, 0.01, 1e-5)))
    for v in [0.0, 1.0, NAN, -0.5]:
        out.append(("rtol", lambda v=v: dpsgd.noise_multiplier(1.0, 0.01, 100, 1e-5, rtol=v)))
    out.append(("max_steps", lambda: dpsgd.steps(1.0, 1.0, 0.01, 1e-5, max_steps=HUGE_INT)))
    # issue 19: an OverflowError after 19 s; now refused before any engine work, naming steps
    out.append(("steps", lambda: dpsgd.epsilon(1, 0.01, 10**13, 1e-5)))
    out.append(("steps", lambda: dpsgd.delta(1, 0.01, 10**13, 1.0)))
    out.append(("steps", lambda: dpsgd.epsilon(0.01, 1.0, 10**9, 1e-5)))
    return out


def _calibrate_cases() -> list[tuple[str, Callable[[], object]]]:
    out: list[tuple[str, Callable[[], object]]] = []
    for v in [*REAL_BAD, 0.0]:
        out.append(("target_epsilon", lambda v=v: calibrate.noise_for_target(Gaussian, v, 1e-5, 10)))
    for v in OPEN_PROB_BAD:
        out.append(("target_delta", lambda v=v: calibrate.noise_for_target(Gaussian, 1.0, v, 10)))
    for v in INT_BAD:
        out.append(("k", lambda v=v: calibrate.noise_for_target(Gaussian, 1.0, 1e-5, v)))
    out.append(("noise_field", lambda: calibrate.noise_for_target(Gaussian, 1.0, 1e-5, 10, noise_field="mu")))
    out.append(("family", lambda: calibrate.noise_for_target(42, 1.0, 1e-5, 10)))
    # issue 19: an OverflowError deep in the engine; RandomizedResponse's parameter is no noise scale
    out.append(("family", lambda: calibrate.noise_for_target(RandomizedResponse, 1.0, 1e-5, 10)))
    for v in [*REAL_BAD, 0.0]:
        out.append(("target_epsilon", lambda v=v: optimal.calibrate(v, 1e-5, 10)))
    for v in INT_BAD:
        out.append(("k", lambda v=v: optimal.calibrate(1.0, 1e-5, v)))
    for v in [*PROB_BAD]:
        out.append(("delta0", lambda v=v: optimal.calibrate(1.0, 1e-5, 10, delta0=v)))
    return out


def _bounds_region_cases() -> list[tuple[str, Callable[[], object]]]:
    out: list[tuple[str, Callable[[], object]]] = []
    for v in INT_BAD:
        out.append(("k", lambda v=v: bounds.basic(0.1, 0.0, v)))
        out.append(("k", lambda v=v: region.composed(0.1, 0.0, v)))
    for v in REAL_BAD:
        out.append(("epsilon", lambda v=v: bounds.basic(v, 0.0, 3)))
        out.append(("epsilon", lambda v=v: region.composed(v, 0.0, 3)))
    for v in PROB_BAD:
        out.append(("delta", lambda v=v: bounds.basic(0.1, v, 3)))
    # issue 19: ran past 60 s without refusing; the cost is estimated first
    out.append(("k", lambda: region.composed(0.1, 0, 10**7)))
    return out


PLAN: dict[str, Any] = {"epsilon": 1.0, "delta": 1e-6, "statistics": [{"name": "n", "kind": "count"}]}


def _planner_cases() -> list[tuple[str, Callable[[], object]]]:
    out: list[tuple[str, Callable[[], object]]] = []
    for v in [1e-320, 5e-324, 1e-315, 1e308, NAN, INF, 0.0, -1.0, "1", HUGE_INT]:
        out.append(("epsilon", lambda v=v: plan_from_dict({**PLAN, "epsilon": v})))
    for v in [HUGE_INT, 0, -1, 2.5]:
        stat = {"name": "h", "kind": "histogram", "bins": v}
        out.append(("bins", lambda s=stat: plan_from_dict({**PLAN, "statistics": [s]})))
    unreachable = {**PLAN, "statistics": [{"name": "veterans", "kind": "count", "lock_accuracy": 1e-300}]}
    out.append(("veterans", lambda: allocate(plan_from_dict(unreachable), "basic")))
    too_much = {**PLAN, "epsilon": 0.01, "statistics": [{"name": "n", "kind": "count", "lock_epsilon": 1.0},
                                                        {"name": "m", "kind": "count"}]}
    for mode in ("basic", "optimal", "mechanism_aware"):
        out.append(("'n' (#1)", lambda m=mode: allocate(plan_from_dict(too_much), m)))
    out.append(("mode", lambda: allocate(plan_from_dict(PLAN), "best")))
    return out


def _solver_cases() -> list[tuple[str, Callable[[], object]]]:
    def never(x: float) -> bool:
        return x < 0.0  # nothing passes: but the point is the budget below

    return [
        ("sigma", lambda: solve(lambda x: 1.0 / x, 1.0, name="sigma", guess=0.0, rtol=1e-3)),
        ("sigma", lambda: solve(lambda x: 1.0 / x, 1.0, name="sigma", guess=NAN, rtol=1e-3)),
        ("sigma", lambda: solve(lambda x: 1.0 / x, 1.0, name="sigma", guess=1e-9, rtol=1e-3, budget=3)),
    ]


CASES = _dpsgd_cases() + _calibrate_cases() + _bounds_region_cases() + _planner_cases() + _solver_cases()


def test_the_fuzz_is_large() -> None:
    assert len(CASES) >= 100


@pytest.mark.parametrize(("name", "call"), CASES, ids=[f"{i}-{n}" for i, (n, _) in enumerate(CASES)])
def test_bad_call_is_one_short_line_naming_the_parameter(name: str, call: Callable[[], object]) -> None:
    with pytest.raises((ValueError, TypeError)) as info:
        call()
    message = str(info.value)
    assert name in message, message
    assert "\n" not in message and len(message) <= MAX_MESSAGE, message
    if isinstance(info.value, PlanError):
        assert info.value.field is not None or info.value.index is not None or name == "mode"


def test_budget_exhaustion_is_named() -> None:
    with pytest.raises(SearchBudgetExceeded, match="sigma"):
        solve(lambda x: 1.0 / x, 1.0, name="sigma", guess=1e-9, rtol=1e-3, budget=3)

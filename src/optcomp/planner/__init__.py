"""The budget planner: split one (ε, δ) budget across many statistics (Murtagh–Vadhan §1).

A :class:`Plan` lists statistics (count, bounded sum, bounded mean, histogram) with a mechanism, a
weight and optional locks; :func:`plan_all` finds, under each accounting mode (basic, advanced, KOV,
optimal black-box, mechanism-aware), the largest common scale of the weighted budgets whose composition
is *certified* to fit the budget, and reports each statistic's accuracy (half-width α of a (1 − β)
interval) and its gain over basic composition. Plans are TOML/JSON documents (schema in
``docs/planner.md``).
"""

from __future__ import annotations

from optcomp.planner._allocate import (
    MECHANISM_AWARE_RTOL,
    MODES,
    PLANNER_PLD_RELATIVE_WIDTH,
    SCALE_RTOL,
    ModeResult,
    StatisticResult,
    allocate,
    certified_epsilon,
    plan_all,
    pld_accuracy,
    prepare,
)
from optcomp.planner._noise import half_width, simultaneous_beta
from optcomp.planner._report import result_to_dict
from optcomp.planner._schema import (
    SCHEMA_VERSION,
    Plan,
    PlanError,
    Statistic,
    load_plan,
    plan_from_dict,
    plan_from_text,
    plan_to_dict,
    plan_to_toml,
    show,
)

__all__ = [
    "MECHANISM_AWARE_RTOL",
    "MODES",
    "PLANNER_PLD_RELATIVE_WIDTH",
    "SCALE_RTOL",
    "SCHEMA_VERSION",
    "ModeResult",
    "Plan",
    "PlanError",
    "Statistic",
    "StatisticResult",
    "allocate",
    "certified_epsilon",
    "half_width",
    "load_plan",
    "plan_all",
    "plan_from_dict",
    "plan_from_text",
    "plan_to_dict",
    "plan_to_toml",
    "pld_accuracy",
    "prepare",
    "result_to_dict",
    "show",
    "simultaneous_beta",
]

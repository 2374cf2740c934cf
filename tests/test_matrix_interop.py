"""Interop for matrix mechanisms: dp_accounting's tree event under zero-out, and jax_privacy configurations."""

from __future__ import annotations

import dp_accounting as dpa
import pytest

from optcomp import interop, matrix
from tests._references.matrix import TREE_EVENT_GDP_EPSILON, TREE_EVENT_RDP_EPSILON


def test_tree_event_through_interop_brackets_the_gdp_value() -> None:
    event = dpa.SingleEpochTreeAggregationDpEvent(7.0, 2000)
    c = interop.from_dp_event(event, neighbouring=dpa.NeighboringRelation.REPLACE_SPECIAL)
    assert c.neighbouring == "zero_out" and c.engine == "gdp"
    eps = c.epsilon(1e-10)
    assert round(eps.lower, 6) <= TREE_EVENT_GDP_EPSILON <= round(eps.upper, 6)
    assert eps.upper < TREE_EVENT_RDP_EPSILON
    direct = matrix.epsilon(matrix.tree(2000), matrix.single(), noise_multiplier=7.0, delta=1e-10)
    assert eps.lower <= direct.upper and direct.lower <= eps.upper


def test_tree_event_json_list_of_trees_takes_the_deepest() -> None:
    node = {"class_name": "SingleEpochTreeAggregationDpEvent", "noise_multiplier": 7.0, "step_counts": [2000, 15]}
    one = interop.from_dp_event(node, neighbouring="zero_out").epsilon(1e-10)
    assert one.contains(interop.from_dp_event(
        {"class_name": "SingleEpochTreeAggregationDpEvent", "noise_multiplier": 7.0, "step_counts": 2000},
        neighbouring="zero_out").epsilon(1e-10).upper)


@pytest.mark.parametrize("relation", ["add_remove", "substitution"])
def test_tree_event_is_refused_outside_zero_out(relation: str) -> None:
    with pytest.raises(ValueError, match="zero_out"):
        interop.from_dp_event(dpa.SingleEpochTreeAggregationDpEvent(7.0, 2000), neighbouring=relation)


def test_zero_out_reads_poisson_gaussians_as_add_remove() -> None:
    event = dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.1, dpa.GaussianDpEvent(1.0)), 10)
    a = interop.from_dp_event(event, neighbouring="zero_out").epsilon(1e-5)
    b = interop.from_dp_event(event, neighbouring="add_remove").epsilon(1e-5)
    assert a == b

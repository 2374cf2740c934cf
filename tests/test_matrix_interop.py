"""Interop for matrix mechanisms: dp_accounting's tree event under zero-out, and jax_privacy configurations."""

from __future__ import annotations

import json
from pathlib import Path

import dp_accounting as dpa
import pytest

from optcomp import interop, matrix
from optcomp.cli import main
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


# --- jax_privacy's BandMFExecutionPlanConfig, read as data --------------------------------------------------


def _bsr_config(**extra: object) -> dict[str, object]:
    coefs = [float(c) for c in matrix.bsr(64, 64).coefs]
    return {"strategy": coefs, "iterations": 2000, "noise_multiplier": 6.0, "sampling_prob": 500 / 781, **extra}


def test_jax_privacy_config_reads_partition_and_relation() -> None:
    independent = matrix.from_jax_privacy_config(_bsr_config())
    assert independent.partition == "independent" and independent.relation == "add_remove"
    assert not independent.partition_public and independent.cycle_length == 64
    equal = matrix.from_jax_privacy_config(_bsr_config(num_examples=50_000))
    assert equal.partition == "equal_split" and equal.relation == "zero_out"
    with pytest.raises(ValueError, match="truncated_batch_size"):  # zero-out truncation: no law, refused
        matrix.from_jax_privacy_config(_bsr_config(num_examples=50_000, truncated_batch_size=600))
    normalized = matrix.from_jax_privacy_config(_bsr_config(column_normalize=True))
    assert not normalized.per_column


def test_jax_privacy_config_epsilon_matches_the_direct_run() -> None:
    from_config = matrix.from_jax_privacy_config(_bsr_config(), per_column=False).epsilon(1e-5)
    assert from_config.contains(2.518605)


@pytest.mark.parametrize(
    ("config", "name"),
    [
        ({"iterations": 10, "noise_multiplier": 1.0}, "strategy"),
        ({"strategy": [1.0], "iterations": 10}, "noise_multiplier"),
        ({"strategy": [1.0], "iterations": 0, "noise_multiplier": 1.0}, "iterations"),
        ({"strategy": [1.0], "iterations": 10, "noise_multiplier": 1.0, "truncated_batch_size": 5}, "truncated"),
        ({"strategy": [1.0], "iterations": 10, "noise_multiplier": 1.0, "bands": 3}, "unknown field"),
        ({"strategy": [1.0], "iterations": 10, "noise_multiplier": 1.0, "sampling_prob": 2.0}, "sampling_rate"),
    ],
)
def test_bad_jax_privacy_config(config: dict[str, object], name: str) -> None:
    with pytest.raises(ValueError, match=name):
        matrix.from_jax_privacy_config(config)


# --- the CLI ------------------------------------------------------------------------------------------------


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_sensitivity_epsilon_bandmf(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = _run(capsys, "matrix", "sensitivity", "--strategy", "tree:n=2000", "--pattern",
                        "min_separation:s=313,k=6", "--json")
    assert code == 0 and json.loads(out)["squared_rational"] == ["79", "79"]
    code, out, _ = _run(capsys, "matrix", "epsilon", "--strategy", "tree:n=2000", "--pattern", "single",
                        "--sigma", "7", "--delta", "1e-10", "--json", "--statement")
    payload = json.loads(out)
    assert code == 0 and payload["relation"] == "zero_out" and "zero-out" in payload["statement"]
    config = tmp_path / "config.json"
    config.write_text(json.dumps(_bsr_config(num_examples=50_000)))
    code, out, _ = _run(capsys, "matrix", "bandmf", "--jax-config", str(config), "--delta", "1e-5", "--json",
                        "--statement")
    payload = json.loads(out)
    assert code == 0 and payload["relation"] == "zero_out" and "hidden" in payload["statement"]


@pytest.mark.parametrize(
    ("argv", "word"),
    [
        (("matrix", "sensitivity", "--strategy", "bsr:n=10,bands=2", "--pattern", "min_sep:b=0"), "min_sep"),
        (("matrix", "sensitivity", "--strategy", "bsr:n=10,bands=2", "--pattern", "fixed_epoch:k=3"), "epochs"),
        (("matrix", "sensitivity", "--strategy", "wavelet:n=3", "--pattern", "single"), "strategy"),
        (("matrix", "epsilon", "--strategy", "bsr:n=10,bands=2", "--pattern", "single", "--sigma", "0",
          "--delta", "1e-5"), "noise_multiplier"),
        (("matrix", "bandmf", "--strategy", "tree:n=10", "--cycle-length", "2", "--sampling-rate", "0.5",
          "--sigma", "1", "--delta", "1e-5"), "strategy"),
        (("matrix", "bandmf", "--strategy", "bsr:n=10,bands=2", "--delta", "1e-5"), "--cycle-length"),
    ],
)
def test_cli_bad_input_is_one_line_exit_2(capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], word: str) -> None:
    code, out, err = _run(capsys, *argv)
    assert code == 2 and out == "" and err.count("\n") == 1 and word in err

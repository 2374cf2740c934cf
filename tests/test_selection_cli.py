"""``optcomp select`` and ``optcomp.interop.from_repeat_and_select`` (issue 34, items 3 and 5)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from optcomp import selection
from optcomp.cli import main
from optcomp.interop import from_repeat_and_select, repetitions_of
from optcomp.mechanisms import Gaussian

TUNING = {
    "class_name": "RepeatAndSelectDpEvent",
    "event": {
        "class_name": "SelfComposedDpEvent",
        "count": 200,
        "event": {
            "class_name": "PoissonSampledDpEvent",
            "sampling_probability": 0.02,
            "event": {"class_name": "GaussianDpEvent", "noise_multiplier": 1.0},
        },
    },
    "mean": 10,
    "shape": "inf",
}


#: ``optcomp`` as a process (the console script's entry point, without relying on its install path).
OPTCOMP = [sys.executable, "-c", "import sys; from optcomp.cli import main; sys.exit(main())"]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path: Path, data: Any) -> str:
    path = tmp_path / "event.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


# -- the command a user types, in its own process ----------------------------------------------------------
def test_select_runs_as_a_process(tmp_path: Path) -> None:
    out = subprocess.run(
        [*OPTCOMP, "select", "--mech", "gaussian:sigma=4", "--law", "geometric",
         "--mean", "10", "--delta", "1e-6", "--json"],
        capture_output=True, text=True, check=False, timeout=600,
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    (row,) = data["results"]
    expected = selection.select(Gaussian(sigma=4.0), selection.Geometric(mean=10.0)).epsilon(1e-6)
    assert (row["lower"], row["upper"], row["route"]) == (expected.lower, expected.upper, expected.route)
    bad = subprocess.run([*OPTCOMP, "select", "--mech", "gaussian:sigma=4", "--law",
                          "poisson", "--mean", "-3", "--delta", "1e-6"], capture_output=True, text=True, check=False,
                         timeout=600)
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.count("\n") == 1 and "mean must be in (0" in bad.stderr


# -- in-process: tables, JSON, statement, references ------------------------------------------------------
def test_table_names_the_route_and_every_route(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "select", "--sigma", "1.0", "--q", "0.02", "--steps", "200", "--law", "poisson",
                         "--mean", "10", "--delta", "1e-6", "--epsilon", "4", "--statement", "--no-reference")
    assert code == 0, err
    for word in ("route", "rdp-thm6", "profile", "pure", "composition", "lower end: none", "Releasing only the best"):
        assert word in out


def test_json_matches_the_library(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "select", "--mech", "laplace:scale=2", "--law", "negative-binomial", "--eta", "0.5",
                         "--mean", "10", "--delta", "1e-6", "--json")
    assert code == 0, err
    data = json.loads(out)
    (row,) = data["results"]
    law = selection.TruncatedNegativeBinomial.from_mean(0.5, 10.0)
    from optcomp.mechanisms import Laplace

    expected = selection.select(Laplace(scale=2.0), law).epsilon(1e-6)
    assert row["upper"] == expected.upper and row["lower"] == expected.lower
    assert {r["route"] for r in row["routes"]} == set(selection.ROUTES)
    assert row["lower"] <= row["upper"]
    assert "not run" in data["reference"]


def test_dp_event_root_and_dp_accountings_answer_beside_ours(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("dp_accounting")
    path = write(tmp_path, TUNING)
    code, out, err = run(capsys, "select", "--dp-event", path, "--delta", "1e-6", "--json", "--reference")
    assert code == 0, err
    data = json.loads(out)
    (row,) = data["results"]
    ours = from_repeat_and_select(TUNING).epsilon(1e-6)
    assert row["upper"] == ours.upper
    assert "RdpAccountant" in data["reference"]
    (theirs,) = data["reference_values"]
    assert theirs >= row["upper"]  # dp_accounting's Thm 6 takes δ̂ from an RDP conversion: never below ours here


def test_dp_event_tree_with_a_law(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, TUNING["event"])
    code, out, err = run(capsys, "select", "--dp-event", path, "--law", "fixed", "--n", "3", "--delta", "1e-6",
                         "--json", "--no-reference")
    assert code == 0, err
    (row,) = json.loads(out)["results"]
    assert row["route"] in ("composition", "profile")


def test_threshold_variant(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "select", "--mech", "laplace:scale=2", "--threshold", "--gamma", "0.1",
                         "--delta", "1e-6", "--json")
    assert code == 0, err
    (row,) = json.loads(out)["results"]
    assert row["upper"] == pytest.approx(1.0, rel=1e-10) and row["route"] == "liu-talwar"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--mech", "gaussian:sigma=4", "--law", "poisson", "--delta", "1e-6"], "--law poisson needs --mean"),
        (["--mech", "gaussian:sigma=4", "--law", "geometric", "--mean", "10", "--gamma", "0.1", "--delta", "1e-6"],
         "exactly one of --mean and --gamma"),
        (["--mech", "gaussian:sigma=4", "--law", "poisson", "--mean", "10", "--eta", "1", "--delta", "1e-6"], "not --eta"),
        (["--mech", "gaussian:sigma=4", "--law", "poisson", "--mean", "10"], "give --delta"),
        (["--mech", "gaussian:sigma=4", "--law", "poisson", "--mean", "10", "--delta", "-1"], "--delta must be in"),
        (["--mech", "gaussian:sigma=4", "--law", "poisson", "--mean", "10", "--epsilon", "nan"], "--epsilon must be"),
        (["--mech", "gaussian:sigma=4", "--law", "geometric", "--mean", "1", "--delta", "1e-6"], "mean must be in"),
        (["--mech", "gaussian:sigma=4", "--law", "binomial", "--n", "3", "--p", "2", "--delta", "1e-6"], "p must be in"),
        (["--mech", "gaussian:sigma=4", "--law", "fixed", "--n", "0", "--delta", "1e-6"], "n must be an integer"),
        (["--mech", "gaussian:sigma=4", "--threshold", "--gamma", "0.1", "--delta", "1e-6"], "not supported"),
        (["--law", "poisson", "--mean", "2", "--delta", "1e-6"], "give the base"),
        (["--mech", "gaussian:sigma=4", "--sigma", "1", "--law", "poisson", "--mean", "2", "--delta", "1e-6"], "not both"),
        (["--sigma", "1", "--q", "1.5", "--steps", "10", "--law", "poisson", "--mean", "2", "--delta", "1e-6"],
         "must be in"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "select", *argv)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and message in err, err


def test_dp_event_refusals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    nested = {"class_name": "ComposedDpEvent", "events": [TUNING, TUNING["event"]]}
    code, _, err = run(capsys, "select", "--dp-event", write(tmp_path, nested), "--law", "poisson", "--mean", "3",
                       "--delta", "1e-6")
    assert code == 2 and "RepeatAndSelectDpEvent" in err and err.count("\n") == 1
    code, _, err = run(capsys, "select", "--dp-event", write(tmp_path, TUNING), "--law", "poisson", "--mean", "3",
                       "--delta", "1e-6")
    assert code == 2 and "carries its own law" in err


# -- interop ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("mean", "shape", "name", "expected_mean"),
    [(10, "inf", "poisson", 10.0), (10, math.inf, "poisson", 10.0), (10, 1, "geometric", 10.0),
     (10, 0, "logarithmic", 10.0), (10, 0.5, "truncated_negative_binomial", 10.0), (1, 2.0, "fixed", 1.0),
     (0.5, "Infinity", "poisson", 0.5)],
)
def test_repetitions_of_dp_accountings_mean_and_shape(mean: float, shape: object, name: str, expected_mean: float) -> None:
    law = repetitions_of(mean, shape)
    assert law.name == name
    assert law.mean == pytest.approx(expected_mean, rel=1e-13)


@pytest.mark.parametrize(
    ("event", "match"),
    [
        ({**TUNING, "mean": 0.5, "shape": 1}, r"root\.mean must be in \[1"),
        ({**TUNING, "mean": 10, "shape": -1}, r"root\.shape must be in \[0"),
        ({**TUNING, "mean": float("nan")}, r"root\.mean"),
        ({**TUNING, "extra": 1}, "fields"),
        (TUNING["event"], "root must be a RepeatAndSelectDpEvent"),
        ({**TUNING, "event": {"class_name": "NonPrivateDpEvent"}}, "not private"),
        ({**TUNING, "event": {"class_name": "NoOpDpEvent"}}, "no mechanism"),
    ],
)
def test_from_repeat_and_select_refuses_bad_events(event: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        from_repeat_and_select(event)


def test_from_repeat_and_select_reads_dp_accounting_objects() -> None:
    dp_event = pytest.importorskip("dp_accounting.dp_event")
    event = dp_event.RepeatAndSelectDpEvent(dp_event.GaussianDpEvent(3.0), 10.0, 1.0)
    s = from_repeat_and_select(event)
    assert s.repetitions.name == "geometric" and s.repetitions.mean == pytest.approx(10.0)
    assert s.epsilon(1e-6).upper == selection.select(Gaussian(sigma=3.0), selection.Geometric(mean=10.0)).epsilon(1e-6).upper

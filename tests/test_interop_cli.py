"""``optcomp account --dp-event/--opacus-history`` and ``optcomp dpsgd --statement``."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from optcomp import Accuracy, dpsgd
from optcomp.cli import _interop, main
from optcomp.interop import from_dp_event, from_opacus_history
from optcomp.interop._statement import STATEMENT_DIGITS
from tests.tolerances import COARSE_GRID_STEP

EVENT = {
    "class_name": "ComposedDpEvent",
    "events": [
        {
            "class_name": "SelfComposedDpEvent",
            "count": 5,
            "event": {
                "class_name": "PoissonSampledDpEvent",
                "sampling_probability": 0.05,
                "event": {"class_name": "GaussianDpEvent", "noise_multiplier": 2.0},
            },
        },
        {"class_name": "LaplaceDpEvent", "noise_multiplier": 10.0},
    ],
}
ACCURACY = f"grid_step={COARSE_GRID_STEP}"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path: Path, data: Any, name: str = "event.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def test_dp_event_json_matches_library(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, EVENT)
    code, out, err = run(
        capsys, "account", "--dp-event", path, "--delta", "1e-5", "--accuracy", ACCURACY, "--json", "--reference"
    )
    assert code == 0, err
    data = json.loads(out)
    assert data["source"] == "dp_event" and data["neighbouring"] == "add_remove" and data["private"] is True
    (row,) = data["results"]
    bound = from_dp_event(EVENT).epsilon(1e-5, accuracy=Accuracy(grid_step=COARSE_GRID_STEP))
    assert (row["lower"], row["upper"]) == (bound.lower, bound.upper)
    if data["reference"].startswith("dp_accounting "):
        assert row["position"] == "inside our certified bracket"


def test_dp_event_table_states_the_position(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("dp_accounting")
    path = write(tmp_path, EVENT)
    code, out, err = run(capsys, "account", "--dp-event", path, "--delta", "1e-5", "--epsilon", "1")
    assert code == 0, err
    # dp_accounting's PLD estimate is pessimistic: inside or above the certified bracket, never below.
    assert "dp_accounting" in out and out.count("our certified bracket") == 2
    assert "below our certified" not in out


def test_dp_accounting_below_the_bracket_is_said(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """dp_accounting 0.6 composes a self-composed randomized response once (tests/test_interop_dp_event.py)."""
    pytest.importorskip("dp_accounting")
    event = {
        "class_name": "SelfComposedDpEvent",
        "count": 6,
        "event": {"class_name": "RandomizedResponseDpEvent", "noise_parameter": 0.3, "num_buckets": 5},
    }
    path = write(tmp_path, event)
    code, out, err = run(
        capsys, "account", "--dp-event", path, "--neighbouring", "substitution", "--delta", "1e-5", "--json",
        "--reference",
    )
    assert code == 0, err
    assert json.loads(out)["results"][0]["position"] == "below our certified bracket"


def test_without_dp_accounting_the_bracket_stands_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_interop, "_reference_module", lambda: None)
    path = write(tmp_path, EVENT)
    code, out, err = run(
        capsys, "account", "--dp-event", path, "--delta", "1e-5", "--accuracy", ACCURACY, "--json", "--reference"
    )
    assert code == 0, err
    data = json.loads(out)
    assert data["reference"] == "dp_accounting not installed"
    assert data["results"][0]["reference"] is None and data["results"][0]["position"] is None


def test_json_runs_the_reference_only_when_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A --json document (for scripts) is printed once our certified answer is ready: the reference is not
    run unless --reference is given, and the document says so."""
    calls: list[bool | None] = []

    def reference(*args: Any) -> tuple[str, None]:
        calls.append(args[-1])
        return "planted reference label", None

    monkeypatch.setattr(_interop, "_reference", reference)
    path = write(tmp_path, EVENT)
    argv = ("account", "--dp-event", path, "--delta", "1e-5", "--accuracy", ACCURACY, "--json")
    code, out, err = run(capsys, *argv)
    assert code == 0 and calls == [], err
    data = json.loads(out)
    assert data["reference"] == _interop.JSON_REFERENCE_NOT_RUN and data["results"][0]["reference"] is None
    assert data["results"][0]["upper"] > 0
    code, out, err = run(capsys, *argv, "--reference")
    assert code == 0 and calls == [True] and json.loads(out)["reference"] == "planted reference label", err
    code, out, err = run(capsys, *argv[:-1])  # the table: the cost-gated default still runs it
    assert code == 0 and calls == [True, None] and "reference: planted reference label" in out, err


def test_opacus_history_state_dict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = {"history": [[1.1, 0.01, 40]], "mechanism": "rdp"}
    path = write(tmp_path, state, "opacus.json")
    code, out, err = run(
        capsys, "account", "--opacus-history", path, "--delta", "1e-5", "--accuracy", ACCURACY, "--json", "--reference"
    )
    assert code == 0, err
    row = json.loads(out)["results"][0]
    expected = dpsgd.epsilon(1.1, 0.01, 40, 1e-5, accuracy=Accuracy(grid_step=COARSE_GRID_STEP))
    assert (row["lower"], row["upper"]) == (expected.lower, expected.upper)
    assert from_opacus_history(state).epsilon(1e-5, accuracy=Accuracy(grid_step=COARSE_GRID_STEP)) == expected


def test_non_private_event_is_flagged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    event = {"class_name": "ComposedDpEvent", "events": [{"class_name": "NonPrivateDpEvent"}]}
    path = write(tmp_path, event)
    code, out, err = run(capsys, "account", "--dp-event", path, "--delta", "1e-5")
    assert code == 0, err
    assert "NOT PRIVATE: root.events[0]" in out and "inf" in out


@pytest.mark.parametrize(
    ("content", "extra", "message"),
    [
        (
            {
                "class_name": "ComposedDpEvent",
                "events": [
                    {
                        "class_name": "SampledWithReplacementDpEvent",
                        "source_dataset_size": 10,
                        "sample_size": 2,
                        "event": {"class_name": "NoOpDpEvent"},
                    }
                ],
            },
            (),
            r"SampledWithReplacementDpEvent at root.events[0]",
        ),
        (
            {"class_name": "GaussianDpEvent", "noise_multiplier": -1},
            (),
            "root.noise_multiplier must be in [0, inf), got -1.0",
        ),
        ("{not json", (), "is not valid JSON"),
        (
            {
                "class_name": "PoissonSampledDpEvent",
                "sampling_probability": 0.1,
                "event": {"class_name": "GaussianDpEvent", "noise_multiplier": 1},
            },
            ("--neighbouring", "substitution"),
            "not supported under substitution",
        ),
    ],
)
def test_bad_files_are_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: Any, extra: tuple[str, ...], message: str
) -> None:
    path = tmp_path / "event.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    code, _, err = run(capsys, "account", "--dp-event", str(path), "--delta", "1e-5", *extra)
    assert code == 2
    assert err.count("\n") == 1 and message in err


def test_bad_combinations_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, EVENT)
    code, _, err = run(capsys, "account", "--dp-event", path, "--mech", "gaussian:sigma=1", "--delta", "1e-5")
    assert code == 2 and "cannot be combined" in err
    code, _, err = run(capsys, "account", "--dp-event", path)
    assert code == 2 and "--delta" in err
    code, _, err = run(capsys, "account", "--opacus-history", path, "--delta", "1e-5")
    assert code == 2 and "history" in err
    code, _, err = run(capsys, "account", "--dp-event", str(tmp_path / "missing.json"), "--delta", "1e-5")
    assert code == 2 and "cannot be read" in err


def test_dpsgd_statement(capsys: pytest.CaptureFixture[str]) -> None:
    args = (
        "dpsgd",
        "--sigma",
        "1.0",
        "--q",
        "0.01",
        "--steps",
        "20",
        "--delta",
        "1e-5",
        "--accuracy",
        ACCURACY,
    )
    code, out, err = run(capsys, *args, "--statement")
    assert code == 0, err
    bound = dpsgd.epsilon(1.0, 0.01, 20, 1e-5, accuracy=Accuracy(grid_step=COARSE_GRID_STEP))
    text = " ".join(out.split())
    quoted = re.search(r"with ε = ([0-9.]+) at δ = 1e-05", text)
    assert quoted is not None
    assert (
        bound.upper <= float(quoted.group(1)) <= bound.upper * (1 + 10.0 ** (1 - STATEMENT_DIGITS))
    )  # rounded up
    assert "add/remove-one-record" in text and "Poisson-sampled" in text
    assert "not Poisson sampling" in text and "no amplification" in text
    code, out, err = run(capsys, *args, "--statement", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert "certified upper bound" in data["statement"] and data["epsilon"]["upper"] == bound.upper
    code, out, _ = run(capsys, *args, "--json")
    assert "statement" not in json.loads(out)


def test_full_batch_statement_claims_no_sampling(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        capsys, "dpsgd", "--sigma", "5", "--q", "1", "--steps", "4", "--delta", "1e-5", "--statement"
    )
    assert code == 0, err
    text = " ".join(out.split())
    assert "whole dataset" in text and "Not covered: shuffling" not in text
    assert math.isfinite(dpsgd.epsilon(5.0, 1.0, 4, 1e-5).upper)


def test_a_failing_reference_does_not_hide_our_answer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("dp_accounting")

    class Failing:
        def __init__(self, relation: object) -> None:
            del relation

        def supports(self, event: object) -> bool:
            raise ValueError("boom")

    names = (
        "ComposedDpEvent",
        "SelfComposedDpEvent",
        "PoissonSampledDpEvent",
        "GaussianDpEvent",
        "LaplaceDpEvent",
    )
    events = SimpleNamespace(**{name: dict for name in names})
    monkeypatch.setattr(
        _interop, "_reference_module", lambda: (events, SimpleNamespace(PLDAccountant=Failing), "x")
    )
    path = write(tmp_path, EVENT)
    code, out, err = run(
        capsys, "account", "--dp-event", path, "--delta", "1e-5", "--accuracy", ACCURACY, "--json", "--reference"
    )
    assert code == 0, err
    data = json.loads(out)
    assert "failed (ValueError: boom)" in data["reference"] and data["results"][0]["upper"] > 0


#: Fixed-size DP-SGD under replace-one (README's samplers table: m = 256 of n = 60,000, σ = 1, T = 3,516):
#: dp_accounting's PLDAccountant refuses sampling without replacement, and its RdpAccountant under-reports
#: (google/differential-privacy PR #464): 2.7037 at δ = 1e-5 against optcomp's certified [12.4815, 12.4824].
FIXED_SIZE = {
    "class_name": "SelfComposedDpEvent",
    "count": 3516,
    "event": {
        "class_name": "SampledWithoutReplacementDpEvent",
        "source_dataset_size": 60000,
        "sample_size": 256,
        "event": {"class_name": "GaussianDpEvent", "noise_multiplier": 1.0},
    },
}


def test_rdp_reference_where_the_pld_accountant_refuses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("dp_accounting")
    path = write(tmp_path, FIXED_SIZE)
    argv = ("account", "--dp-event", path, "--neighbouring", "substitution", "--delta", "1e-5")
    code, out, err = run(capsys, *argv, "--json", "--reference")
    assert code == 0, err
    data = json.loads(out)
    assert "RdpAccountant" in data["reference"] and "PLDAccountant does not support" in data["reference"]
    (row,) = data["results"]
    assert row["reference"] < row["lower"] and row["position"] == "below our certified bracket"
    assert "UNDER-REPORTS epsilon" in row["verdict"] and "not a valid privacy guarantee" in row["verdict"]
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    # Our table comes first; the reference (and the accountant it came from) after it, in words.
    assert out.index("upper (certified)") < out.index("reference: dp_accounting") < out.index("UNDER-REPORTS")
    assert "RdpAccountant" in out and "the true epsilon is at least 11.04" in out

"""Issue 27 item 14: what users do most, from the command line — ``dpsgd --target-epsilon`` (σ or steps)
and the trade-off curve (attack TPR at given FPRs) of a DP-SGD run, of ``--mech`` specs and of a
``--dp-event`` tree, each the library's answer (parse → one call → format)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scipy import stats

from optcomp import Accuracy, compose, dpsgd, fdp
from optcomp.cli import main
from optcomp.mechanisms import Laplace
from tests.tolerances import COARSE_GRID_STEP

ACC = Accuracy(grid_step=COARSE_GRID_STEP)
ACC_OPTION = ("--accuracy", f"grid_step={COARSE_GRID_STEP}")


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    rc, out, err = _run(capsys, *argv, "--json")
    assert rc == 0 and err == "", err
    data = json.loads(out)
    assert isinstance(data, dict)
    return data


# --- dpsgd --target-epsilon ---------------------------------------------------------------------------


def test_target_epsilon_solves_sigma_as_the_library(capsys: pytest.CaptureFixture[str]) -> None:
    data = _json(capsys, "dpsgd", "--target-epsilon", "2", "--q", "0.01", "--steps", "200", "--delta", "1e-5",
                 *ACC_OPTION)
    sigma = dpsgd.noise_multiplier(2.0, 0.01, 200, 1e-5, accuracy=ACC)
    assert data["sigma"] == sigma and data["solved_for"] == "sigma" and data["target_epsilon"] == 2.0
    bound = data["epsilon"]
    assert isinstance(bound, dict) and bound["upper"] <= 2.0  # the solved run meets the target, certified
    assert (bound["lower"], bound["upper"]) == tuple(dpsgd.epsilon(sigma, 0.01, 200, 1e-5, accuracy=ACC))


def test_target_epsilon_solves_steps_as_the_library(capsys: pytest.CaptureFixture[str]) -> None:
    data = _json(capsys, "dpsgd", "--target-epsilon", "1", "--sigma", "1.5", "--q", "0.01", "--delta", "1e-5",
                 "--solve", "steps", *ACC_OPTION)
    steps = dpsgd.steps(1.0, 1.5, 0.01, 1e-5, accuracy=ACC)
    assert data["steps"] == steps and data["solved_for"] == "steps"
    bound = data["epsilon"]
    assert isinstance(bound, dict) and bound["upper"] <= 1.0


def test_target_epsilon_table_shows_the_solved_sigma_rounded_up(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = _run(capsys, "dpsgd", "--target-epsilon", "2", "--q", "0.01", "--steps", "200", "--delta",
                        "1e-5", *ACC_OPTION)
    assert rc == 0, err
    sigma = dpsgd.noise_multiplier(2.0, 0.01, 200, 1e-5, accuracy=ACC)
    shown = float(out.split("sigma=", 1)[1].split(",", 1)[0])
    assert sigma <= shown <= sigma * (1 + 1e-5) and "solved_for=sigma" in " ".join(out.split())


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (("--target-epsilon", "2", "--sigma", "1", "--steps", "10"), "--sigma is what --target-epsilon solves for"),
        (("--target-epsilon", "2", "--q", "0.01"), "needs --steps"),
        (("--target-epsilon", "2", "--steps", "10", "--solve", "steps"), "--steps is what"),
        (("--target-epsilon", "2", "--steps", "10", "--max-steps", "5"), "--max-steps goes with --solve steps"),
        (("--sigma", "1"), "give --sigma and --steps"),
        (("--target-epsilon", "0", "--steps", "10"), "target_epsilon"),
    ],
)
def test_target_epsilon_misuse_is_one_line(
    argv: tuple[str, ...], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    full = ("dpsgd", *argv) if "--q" in argv else ("dpsgd", "--q", "0.01", *argv)
    rc, out, err = _run(capsys, *full, "--delta", "1e-5")
    assert rc == 2 and out == "" and err.count("\n") == 1 and needle in err, err


# --- tradeoff of what was run ----------------------------------------------------------------------


def test_tradeoff_of_a_full_batch_run_holds_the_gdp_closed_form(capsys: pytest.CaptureFixture[str]) -> None:
    """q = 1: T Gaussian steps of noise σ are exactly μ-GDP with μ = √T/σ (Dong–Roth–Su Cor. 3.3), whose
    attack TPR at FPR α is Φ(Φ⁻¹(α) + μ) — a closed form the run's certified bracket must hold."""
    data = _json(capsys, "tradeoff", "--sigma", "4", "--q", "1", "--steps", "16", "--fpr", "0.01", "--fpr", "0.1",
                 "--points", "3", *ACC_OPTION)
    assert data["certified"] == "bracket"
    attacks = data["attacks"]
    assert isinstance(attacks, list) and [a["fpr"] for a in attacks] == [0.01, 0.1]
    for attack in attacks:
        truth = float(stats.norm.cdf(stats.norm.ppf(attack["fpr"]) + 1.0))  # μ = √16/4 = 1
        assert attack["attack_tpr"]["lower"] <= truth <= attack["attack_tpr"]["upper"]
    assert data["attack_tpr"] == attacks[0]["attack_tpr"]


def test_tradeoff_of_a_poisson_run_is_the_library_call(capsys: pytest.CaptureFixture[str]) -> None:
    data = _json(capsys, "tradeoff", "--sigma", "1.1", "--q", "0.01", "--steps", "100", "--fpr", "0.001",
                 "--points", "3", *ACC_OPTION)
    bound = fdp.attack_tpr(dpsgd.tradeoff(1.1, 0.01, 100, accuracy=ACC), 0.001)
    assert data["attack_tpr"] == {"lower": bound.lower, "upper": bound.upper}
    assert 0.001 <= bound.lower <= bound.upper < 1.0


def test_tradeoff_of_mech_specs_is_the_composition(capsys: pytest.CaptureFixture[str]) -> None:
    data = _json(capsys, "tradeoff", "--mech", "laplace:scale=10,count=50", "--points", "3", *ACC_OPTION)
    bound = fdp.attack_tpr(fdp.from_pld(compose((Laplace(10.0), 50), accuracy=ACC)), 0.01)
    assert data["attack_tpr"] == {"lower": bound.lower, "upper": bound.upper}


def test_tradeoff_of_a_dp_event_is_the_same_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Fixed-size DP-SGD as a DpEvent under replace-one and as --sampling fixed_size: one pair, one curve."""
    event = {"class_name": "SelfComposedDpEvent", "count": 100,
             "event": {"class_name": "SampledWithoutReplacementDpEvent", "source_dataset_size": 60000,
                       "sample_size": 256, "event": {"class_name": "GaussianDpEvent", "noise_multiplier": 1.0}}}
    path = tmp_path / "event.json"
    path.write_text(json.dumps(event), encoding="utf-8")
    from_event = _json(capsys, "tradeoff", "--dp-event", str(path), "--neighbouring", "substitution",
                       "--points", "3", *ACC_OPTION)
    from_run = _json(capsys, "tradeoff", "--sigma", "1", "--q", repr(256 / 60000), "--steps", "100",
                     "--sampling", "fixed_size", "--points", "3", *ACC_OPTION)
    assert from_event["attack_tpr"] == from_run["attack_tpr"] and from_event["points"] == from_run["points"]


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (("--sigma", "1", "--q", "0.01"), "needs all of --sigma, --q and --steps"),
        (("--sigma", "1", "--q", "0.01", "--steps", "10", "--mech", "laplace:scale=1"), "cannot be combined"),
        (("--mech", "laplace:scale=1", "--gdp", "1"), "describe another curve"),
        (("--mech", "laplace:scale=1", "-k", "3"), "describe another curve"),
        (("--gdp", "1", "--accuracy", "grid_step=0.01"), "--accuracy goes with"),
        (("--gdp", "1", "--sampling", "fixed_size"), "--sampling goes with"),
        (("--sigma", "1", "--q", "0.01", "--steps", "10", "--sampling", "shuffle"), "'shuffle'"),
        (("--gdp", "1", "--fpr", "1.5"), "--fpr"),
    ],
)
def test_tradeoff_source_misuse_is_one_line(
    argv: tuple[str, ...], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, out, err = _run(capsys, "tradeoff", *argv)
    assert rc == 2 and out == "" and err.count("\n") == 1 and needle in err, err


def test_plot_tradeoff_draws_a_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("matplotlib")
    output = tmp_path / "run.png"
    rc, out, err = _run(capsys, "plot", "tradeoff", "--sigma", "1.1", "--q", "0.01", "--steps", "100", "--gdp",
                        "0.5", *ACC_OPTION, "--output", str(output))
    assert rc == 0 and err == "" and str(output) in out, err
    assert output.stat().st_size > 0

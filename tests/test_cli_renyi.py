"""``optcomp account`` with zCDP and Rényi-curve entries (issue 35, item 1): the route and the witness law in
``--json``, lists ``A;B;C`` and curve files, and bad input as one stderr line with exit status 2 (also as a
real process)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from optcomp.cli import main
from tests._references import finite_law_delta, gdp_epsilon, law_log_moments, zcdp_closed_form_epsilon
from tests.tolerances import EXACT_RTOL


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_zcdp_json_has_route_witness_and_scope(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "account", "--mech", "zcdp:rho=0.5", "--delta", "1e-5", "--json")
    assert code == 0, err
    (row,) = json.loads(out)["results"]
    assert row["route"] in ("optimal", "closed_form")
    assert gdp_epsilon(1.0, 1e-5) < row["lower"] <= row["upper"] <= zcdp_closed_form_epsilon(0.5, 1e-5) * (1 + EXACT_RTOL)
    assert "any mechanism" in row["holds_for"]
    w = row["witness"]
    assert len(w["p"]) == len(w["q"]) == len(w["losses"]) >= 2
    # the printed law is the lower end's: its δ at the lower ε exceeds the query's δ
    assert finite_law_delta(w["p_raw"], w["q_raw"], row["lower"]) > 1e-5
    fwd, rev = law_log_moments(w["p_raw"], w["q_raw"], 4.0)
    assert fwd <= 0.5 * 4 * 3 and rev <= 0.5 * 4 * 3
    assert json.loads(out)["rdp_comparison"]["skipped"]


def test_renyi_lists_and_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "account", "--mech", "renyi:orders=2;4;8;16;32,epsilons=1;2;4;8;16",
                         "--mech", "zero_concentrated:rho=0.1", "--delta", "1e-5")
    assert code == 0, err
    assert "route optimal" in out and "5 orders" in out
    # two items: the lower end is a run's (Gaussians meeting the curves), not the summed curve's worst law
    assert "verified law" not in out and "a run of these items" in out
    code, out, err = run(capsys, "account", "--mech", "renyi:orders=2;4;8;16;32,epsilons=1;2;4;8;16", "--delta", "1e-5")
    assert code == 0, err
    assert "route optimal" in out and "verified law" in out


def test_renyi_curve_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "curve.json"
    path.write_text(json.dumps({"orders": [2, 4, 8], "epsilons": [0.5, 1.0, 2.0]}))
    code, out, err = run(capsys, "account", "--mech", f"renyi:file={path},count=2", "--epsilon", "3", "--json")
    assert code == 0, err
    (row,) = json.loads(out)["results"]
    assert 0.0 < row["lower"] <= row["upper"] <= row["closed_form_upper"]
    code, _, err = run(capsys, "account", "--mech", f"rdp:file={path},orders=2", "--epsilon", "3")
    assert code == 2 and "not both" in err


def test_config_file_lists(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "job.json"
    path.write_text(json.dumps({"delta": 1e-6, "mechanisms": [
        {"kind": "renyi", "orders": [2, 8], "epsilons": [0.3, 1.5]}, {"kind": "zcdp", "rho": 0.05, "count": 4}]}))
    code, out, err = run(capsys, "account", "--config", str(path), "--json")
    assert code == 0, err
    assert math.isfinite(json.loads(out)["results"][0]["upper"])


@pytest.mark.parametrize(("mech", "message"), [
    ("zcdp:rho=-1", "rho must be in [0, inf), got -1.0"),
    ("zcdp:rho=nan", "rho must be in [0, inf), got nan"),
    ("renyi:orders=1;2,epsilons=0.1;0.2", "orders must be finite numbers > 1, got 1.0"),
    ("renyi:orders=4;2,epsilons=0.1;0.2", "orders must be strictly increasing (unsorted"),
    ("renyi:orders=2;2,epsilons=0.1;0.2", "orders must be strictly increasing (duplicate"),
    ("renyi:orders=2;4,epsilons=0.1", "epsilons must hold one value per order"),
    ("renyi:orders=2,epsilons=-1", "epsilons must be in [0, inf], got -1.0"),
])
def test_bad_entries_exit_2_with_one_line(capsys: pytest.CaptureFixture[str], mech: str, message: str) -> None:
    code, out, err = run(capsys, "account", "--mech", mech, "--delta", "1e-5")
    assert code == 2 and out == ""
    assert message in err and err.count("\n") == 1


def test_a_real_process_refuses_a_delta_box_beside_zcdp() -> None:
    script = "import sys; from optcomp.cli import main; sys.exit(main(sys.argv[1:]))"
    proc = subprocess.run([sys.executable, "-c", script, "account", "--mech", "zcdp:rho=0.5",
                           "--mech", "epsdelta:eps=1,delta=1e-6", "--delta", "1e-5"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "cannot be composed with Renyi or zCDP items" in proc.stderr and "Traceback" not in proc.stderr


def test_a_width_the_conversion_cannot_reach_is_one_line_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    """rho = 1e6 (optimal epsilon about 1e6: no two-point law in the float range): the closed form over the
    Gaussian is wider than the default width; the CLI says so in one line, with the width to ask for."""
    code, out, err = run(capsys, "account", "--mech", "zcdp:rho=1e6", "--delta", "1e-5")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "not reached by the Renyi conversion" in err and "--accuracy relative_width=" in err
    assert "memory_cap" not in err and "math domain error" not in err
    code, out, err = run(capsys, "account", "--mech", "zcdp:rho=1e6", "--delta", "1e-5", "--accuracy", "relative_width=0.01")
    assert code == 0, err

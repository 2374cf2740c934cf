"""``optcomp account`` / ``optcomp dpsgd``: output shape, JSON, config files, bad input → exit 2."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

from optcomp import compose
from optcomp.cli import main
from optcomp.mechanisms import Gaussian
from tests._references import gdp_epsilon


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_account_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "account", "--mech", "gaussian:sigma=2,count=4", "--delta", "1e-5")
    assert code == 0, err
    assert "epsilon" in out and "delta=1e-05" in out
    assert "gaussian" in out


def test_account_json_matches_library(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        capsys, "account", "--mech", "gaussian:sigma=2,count=4", "--delta", "1e-5", "--epsilon", "1", "--json"
    )
    assert code == 0, err
    data = json.loads(out)
    eps_row, delta_row = data["results"]
    assert eps_row["query"] == "epsilon" and eps_row["delta"] == 1e-5
    assert delta_row["query"] == "delta" and delta_row["epsilon"] == 1.0
    truth = float(gdp_epsilon(math.sqrt(4) / 2.0, 1e-5))
    assert eps_row["lower"] <= truth <= eps_row["upper"]
    lib = compose((Gaussian(sigma=2.0), 4)).epsilon(1e-5)
    assert (eps_row["lower"], eps_row["upper"]) == (lib.lower, lib.upper)
    assert data["composition"] == [{"kind": "gaussian", "sigma": 2, "count": 4}]


def test_account_mixed_composition(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        capsys,
        "account",
        "--mech",
        "gaussian:sigma=3,q=0.1,count=10",
        "--mech",
        "epsdelta:eps=0.1,delta=1e-7,count=5",
        "--delta",
        "1e-5",
        "--json",
    )
    assert code == 0, err
    row = json.loads(out)["results"][0]
    assert 0 < row["lower"] <= row["upper"]


def test_account_json_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "acc.json"
    cfg.write_text(json.dumps({"delta": 1e-5, "mechanisms": [{"kind": "gaussian", "sigma": 2, "count": 4}]}))
    code, out, err = run(capsys, "account", "--config", str(cfg), "--json")
    assert code == 0, err
    direct = run(capsys, "account", "--mech", "gaussian:sigma=2,count=4", "--delta", "1e-5", "--json")[1]
    assert json.loads(out)["results"] == json.loads(direct)["results"]


def test_account_config_accuracy_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "acc.json"
    mechs = [{"kind": "laplace", "scale": 10, "count": 5}]
    cfg.write_text(json.dumps({"delta": 1e-5, "accuracy": {"grid_step": 0.03}, "mechanisms": mechs}))
    code, out, err = run(capsys, "account", "--config", str(cfg), "--json")
    assert code == 0, err
    coarse = json.loads(out)["results"][0]
    fine = json.loads(
        run(capsys, "account", "--mech", "laplace:scale=10,count=5", "--delta", "1e-5", "--json")[1]
    )
    assert coarse["upper"] - coarse["lower"] > fine["results"][0]["upper"] - fine["results"][0]["lower"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"delta": 1e-5, "accuracy": {"speed": 1}, "mechanisms": mechs}))
    code, out, err = run(capsys, "account", "--config", str(bad))
    assert code == 2 and len(err.strip().splitlines()) == 1


@pytest.mark.skipif(sys.version_info < (3, 11), reason="TOML needs tomllib")
def test_account_toml_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "acc.toml"
    cfg.write_text('epsilon = 1.0\n[[mechanisms]]\nkind = "gaussian"\nsigma = 2.0\ncount = 4\n')
    code, out, err = run(capsys, "account", "--config", str(cfg), "--json")
    assert code == 0, err
    assert json.loads(out)["results"][0]["query"] == "delta"


def test_dpsgd_command(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        capsys, "dpsgd", "--sigma", "1", "--q", "1", "--steps", "4", "--delta", "1e-5", "--json"
    )
    assert code == 0, err
    data = json.loads(out)
    assert data["epsilon"]["lower"] <= float(gdp_epsilon(2.0, 1e-5)) <= data["epsilon"]["upper"]


@pytest.mark.parametrize(
    "argv",
    [
        ["account", "--mech", "gaussian:sigma=-1", "--delta", "1e-5"],
        ["account", "--mech", "gaussian:sigma=nan", "--delta", "1e-5"],
        ["account", "--mech", "bogus:x=1", "--delta", "1e-5"],
        ["account", "--mech", "gaussian:sigma=1,colour=red", "--delta", "1e-5"],
        ["account", "--mech", "gaussian:sigma", "--delta", "1e-5"],
        ["account", "--mech", "gaussian:sigma=1,count=0", "--delta", "1e-5"],
        ["account", "--mech", "gaussian:sigma=1,q=2", "--delta", "1e-5"],
        ["account", "--mech", "gaussian:sigma=1"],
        ["account", "--delta", "1e-5"],
        ["account", "--mech", "gaussian:sigma=1", "--delta", "2"],
        ["account", "--mech", "gaussian:sigma=1", "--delta", "abc"],
        ["account", "--mech", "gaussian:sigma=1", "--delta", "1e-5", "--accuracy", "nonsense=1"],
        ["account", "--config", "/nonexistent/x.json"],
        ["dpsgd", "--sigma", "0", "--q", "0.1", "--steps", "10", "--delta", "1e-5"],
        ["dpsgd", "--sigma", "1", "--q", "0.1", "--steps", "0", "--delta", "1e-5"],
        ["dpsgd", "--sigma", "1"],
    ],
)
def test_bad_input_exits_2_with_one_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert err.startswith("optcomp: error:")

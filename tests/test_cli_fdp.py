"""``optcomp tradeoff`` through optcomp.cli.main (exit codes, formats, one-line errors)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from optcomp.cli import main
from optcomp.fdp import gaussian_tradeoff
from tests.tolerances import EXACT_RTOL


def test_tradeoff_gdp_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tradeoff", "--gdp", "1.0", "--points", "5"]) == 0
    out = capsys.readouterr().out
    assert "G_1" in out and "advantage" in out


def test_tradeoff_gdp_composition_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tradeoff", "--gdp", "0.5", "-k", "16", "--json", "--points", "3"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["curve"].startswith("G_2")
    mid = payload["points"][1]
    assert mid["beta"] == pytest.approx(gaussian_tradeoff(2.0)(0.5), rel=EXACT_RTOL)


def test_tradeoff_eps_delta_csv_to_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "curve.csv"
    assert main(["tradeoff", "--eps", "0.1", "--delta", "1e-6", "-k", "50", "--output", str(out)]) == 0
    assert "wrote" in capsys.readouterr().out
    rows = list(csv.DictReader(out.open()))
    assert float(rows[0]["alpha"]) == 0.0 and float(rows[-1]["beta"]) == 0.0
    betas = [float(r["beta"]) for r in rows]
    assert betas == sorted(betas, reverse=True)


def test_tradeoff_subsample_bracket_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tradeoff", "--gdp", "1", "--subsample", "0.1", "--format", "json", "--points", "3"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["certified"] == "bracket"
    for p in payload["points"]:
        assert p["beta_lower"] <= p["beta_upper"]


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["tradeoff", "--gdp", "-1"], "--gdp"),
        (["tradeoff", "--gdp", "1", "--eps", "1"], "exactly one"),
        (["tradeoff"], "exactly one"),
        (["tradeoff", "--eps", "1", "--delta", "2"], "delta"),
        (["tradeoff", "--gdp", "1", "--subsample", "0"], "--subsample"),
        (["tradeoff", "--gdp", "1", "--fpr", "1.5"], "fpr"),
        (["tradeoff", "--gdp", "1", "-k", "0"], "0"),
    ],
)
def test_tradeoff_bad_args_exit_2_one_line(argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and needle in err

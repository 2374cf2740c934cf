"""``optcomp compose`` and ``optcomp region`` through ``optcomp.cli.main``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from optcomp import bounds, optimal
from optcomp.cli import main
from optcomp.region import composed


def run_json(capsys: pytest.CaptureFixture[str], args: list[str]) -> dict:  # type: ignore[type-arg]
    assert main(args) == 0
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def test_compose_homogeneous_json(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_json(capsys, ["compose", "--eps", "0.1", "--delta", "0.001", "-k", "30", "--target-delta", "0.05", "--json"])
    mechs = optimal.homogeneous(0.1, 0.001, 30)
    assert out["k"] == 30
    assert out["epsilon"]["kov"] == bounds.compare_epsilon(mechs, 0.05)["kov"]
    opt = optimal.epsilon(mechs, 0.05)
    assert out["epsilon"]["optimal"] == {"lower": opt.lower, "upper": opt.upper}


def test_compose_mech_and_file_agree(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    args = ["--mech", "0.1,0", "--mech", "0.3,1e-6", "--mech", "0.05,0"]
    a = run_json(capsys, ["compose", *args, "--target-eps", "0.3", "--json"])
    text_file = tmp_path / "mechs.txt"
    text_file.write_text("# eps,delta\n0.1,0\n0.3,1e-6\n\n0.05,0\n")
    b = run_json(capsys, ["compose", "--file", str(text_file), "--target-eps", "0.3", "--json"])
    json_file = tmp_path / "mechs.json"
    json_file.write_text("[[0.1, 0], [0.3, 1e-6], [0.05, 0]]")
    c = run_json(capsys, ["compose", "--file", str(json_file), "--target-eps", "0.3", "--json"])
    assert a == b == c
    assert a["delta"]["optimal"]["upper"] <= a["delta"]["kov"]


def test_compose_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compose", "--eps", "0.1", "--delta", "0", "-k", "1000", "--target-delta", "1e-6"]) == 0
    out = capsys.readouterr().out
    for word in ("basic", "DRV", "lecture notes", "KOV", "optimal"):
        assert word in out


def test_region_csv_and_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["region", "--eps", "0.1", "--delta", "0.001", "-k", "30", "--points", "11"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == "alpha,beta"
    reg = composed(0.1, 0.001, 30)
    for line in lines[1:]:
        a, b = (float(x) for x in line.split(","))
        assert b == reg.beta(a)
    target = tmp_path / "r.json"
    assert main(["region", "--mech", "0.1,0", "--mech", "0.2,0", "--format", "json", "--output", str(target)]) == 0
    data = json.loads(target.read_text())
    assert len(data["alpha"]) == len(data["beta"]) and 0.0 <= data["tv_bound"] <= 1.0


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (["compose", "--eps", "0.1", "--target-delta", "0.1"], "together"),
        (["compose", "--eps", "0.1", "--delta", "0", "-k", "3"], "target"),
        (["compose", "--eps", "0.1", "--delta", "0", "-k", "3", "--target-delta", "0.1", "--target-eps", "1"], "target"),
        (["compose", "--eps", "-0.1", "--delta", "0", "-k", "3", "--target-delta", "0.1"], "epsilon"),
        (["compose", "--eps", "0.1", "--delta", "1.5", "-k", "3", "--target-delta", "0.1"], "delta"),
        (["compose", "--eps", "0.1", "--delta", "0", "-k", "0", "--target-delta", "0.1"], "k"),
        (["compose", "--eps", "0.1", "--delta", "0", "-k", "2.5", "--target-delta", "0.1"], "k"),
        (["compose", "--eps", "nan", "--delta", "0", "-k", "3", "--target-delta", "0.1"], "epsilon"),
        (["compose", "--mech", "0.1", "--target-delta", "0.1"], "EPS,DELTA"),
        (["compose", "--mech", "a,b", "--target-delta", "0.1"], "EPS,DELTA"),
        (["compose", "--mech", "0.1,0", "--target-delta", "2"], "target_delta"),
        (["compose", "--mech", "0.1,0", "--eps", "0.1", "--target-delta", "0.1"], "exactly one"),
        (["compose", "--file", "/nonexistent/x.txt", "--target-delta", "0.1"], "file"),
        (["compose", "--mech", "0.1,0", "--target-delta", "0.1", "--method", "fast"], "method"),
        (["region", "--eps", "0.1", "--delta", "0", "-k", "3", "--points", "1"], "n"),
        (["region", "--eps", "0.1", "--delta", "0", "-k", "3", "--format", "xml"], "format"),
    ],
)
def test_bad_arguments_one_line_exit_2(capsys: pytest.CaptureFixture[str], args: list[str], match: str) -> None:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("optcomp: error:") and err.count("\n") == 1
    assert match in err


def test_region_heterogeneous_options(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["region", "--mech", "0.1,0", "--mech", "0.2,1e-6", "--mech", "0.05,0", "--eps-points", "5", "--format", "json"]
    data = run_json(capsys, args)
    assert len(data["constraints"]) == 5
    assert main(["region", "--mech", "0.1,0", "--eps-points", "0"]) == 2
    assert "--eps-points" in capsys.readouterr().err

"""``optcomp ledger …`` and ``optcomp plan … --ledger``: thin wrappers, one-line errors with exit 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from optcomp.cli import main
from optcomp.ledger import Ledger, PureDP

ROOT = Path(__file__).resolve().parents[1]


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_ledger_cli_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = str(tmp_path / "c.ledger")
    code, out, _ = run(capsys, "ledger", "init", p, "--dataset", "d", "--relation", "add_remove",
                       "--epsilon", "1", "--delta", "1e-6", "--currency", "zcdp", "--json")
    assert code == 0 and json.loads(out)["currency"] == "zcdp"
    code, out, _ = run(capsys, "ledger", "charge", p, "q1", "pure:epsilon=0.01", "--json")
    assert code == 0 and json.loads(out)["charge"] == ["1/20000"]
    code, out, _ = run(capsys, "ledger", "charge", p, "q1", "pure:epsilon=0.01", "--json")
    assert json.loads(out)["replay"] is True
    code, out, _ = run(capsys, "ledger", "charge", p, "g", "gaussian:sigma=20", "--json")
    assert code == 0
    assert run(capsys, "ledger", "released", p, "q1", "--digest", "abc")[0] == 0
    assert run(capsys, "ledger", "void", p, "g", "--reason", "never ran")[0] == 0
    code, out, _ = run(capsys, "ledger", "report", p, "--fits", "pure:epsilon=0.01", "--json")
    rep = json.loads(out)
    assert code == 0 and rep["fits"]["count"] == 486 and rep["releases"] == {"charged": 0, "released": 1, "voided": 1}
    code, out, _ = run(capsys, "ledger", "verify", p, "--json")
    assert code == 0 and json.loads(out)["ok"] is True
    code, out, _ = run(capsys, "ledger", "export", p)
    assert [e["kind"] for e in json.loads(out)["events"]] == ["charge", "charge", "released", "void"]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("charge", "{p}", "q2", "pure:epsilon=5"), "refused"),
        (("charge", "{p}", "q1", "pure:epsilon=0.02"), "release_id"),
        (("charge", "{p}", "q3", "staircase:epsilon=1"), "release kind"),
        (("charge", "{p}", "q3", "pure:eps=1"), "epsilon"),
        (("charge", "{p}", "q3", "pure:epsilon=nan"), "epsilon"),
        (("report", "{missing}"), "existing ledger"),
        (("init", "{p}", "--dataset", "d", "--relation", "add_remove", "--epsilon", "1", "--delta", "1e-6"), "exists"),
        (("init", "{new}", "--dataset", "d", "--relation", "add_remove", "--epsilon", "-1", "--delta", "0"), "epsilon"),
    ],
)
def test_ledger_cli_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        args: tuple[str, ...], needle: str) -> None:
    p = str(tmp_path / "c.ledger")
    led = Ledger.create(p, dataset="d", relation="add_remove", epsilon=1, delta="1e-6", currency="zcdp")
    led.charge("q1", PureDP("0.01"))
    led.close()
    fill: dict[str, Any] = {"p": p, "missing": str(tmp_path / "none"), "new": str(tmp_path / "n.ledger")}
    code, _, err = run(capsys, "ledger", *(a.format(**fill) for a in args))
    assert code == 2 and len(err.strip().splitlines()) == 1 and needle in err and "Traceback" not in err


def test_plan_ledger_from_the_planner(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = str(tmp_path / "census.ledger")
    code, _, err = run(capsys, "plan", str(ROOT / "examples" / "census_plan.toml"), "--mode", "optimal",
                       "--ledger", p, "--json")
    assert code == 0 and "21 slots" in err
    led = Ledger.open(p)
    rep = led.report()
    assert rep["mode"] == "plan" and rep["slots"] == 21 and float.fromhex(rep["certificate"]["upper"]) <= 1.0
    led.close()

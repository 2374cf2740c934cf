"""``optcomp sweep GRID``: bad input is one stderr line and exit 2 before any work; a sweep writes its
store and exports; a second run resumes (nothing recomputed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from optcomp.cli import main
from tests.tolerances import SWEEP_RELATIVE_WIDTH

GRID = f"""
query = "epsilon"
[accuracy]
relative_width = {SWEEP_RELATIVE_WIDTH}
[axes]
noise_multiplier = [1.0, 2.0]
sampling_rate = 0.02
steps = [10, 100]
delta = 1e-5
"""


@pytest.mark.parametrize(
    ("text", "match"),
    [
        (GRID.replace("[1.0, 2.0]", "[1.0, -2.0]"), "grid row 2 .*noise_multiplier"),
        (GRID + "bogus = 1\n", "unknown parameter 'bogus'"),
        (GRID + "dataset_size = 100\n", "grid row 0 .*dataset_size"),
        ("query = ", "not valid TOML"),
    ],
)
def test_bad_grids_are_one_line_exit_2(text: str, match: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    grid = tmp_path / "g.toml"
    grid.write_text(text)
    assert main(["sweep", str(grid), "--workers", "1"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert __import__("re").search(match, err)
    assert not (tmp_path / "g.sqlite").exists()  # refused before any work


def test_sweep_writes_exports_and_resumes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    grid = tmp_path / "g.toml"
    grid.write_text(GRID)
    csv, plot = tmp_path / "rows.csv", tmp_path / "plot.png"
    assert main(["sweep", str(grid), "--workers", "1", "--csv", str(csv), "--plot", str(plot), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 4 and all(r["error"] is None and r["lower"] <= r["upper"] for r in rows)
    assert csv.read_text().count("\n") == 5 and plot.stat().st_size > 0
    assert main(["sweep", str(grid), "--workers", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == rows
    assert main(["sweep", str(grid), "--workers", "0"]) == 2


def test_workers_lost_beyond_the_retries_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from optcomp import sweep

    def lost(*args: object, **kwargs: object) -> None:
        raise sweep.WorkersLost("a worker process of the local pool died 3 times")

    grid = tmp_path / "g.toml"
    grid.write_text(GRID)
    monkeypatch.setattr(sweep, "run", lost)
    assert main(["sweep", str(grid), "--workers", "2"]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == ["optcomp: error: a worker process of the local pool died 3 times"]

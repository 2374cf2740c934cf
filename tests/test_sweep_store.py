"""The sweep store's ``--db`` (issue 32, item 5): a path that is not a sweep store — a 1-byte text file,
a text file, another application's SQLite database, an optcomp ledger, a store of a later schema — is
refused with one stderr line and exit status 2, byte for byte untouched (no ``rows`` table grows in a
ledger); a directory that does not exist is one line too. A new store carries the SQLite mark
(``application_id``, ``user_version``); a store written before the mark is still read and resumed."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from optcomp import sweep
from optcomp.cli import main
from optcomp.ledger import Ledger, PureDP
from optcomp.sweep import _store
from tests.tolerances import SWEEP_RELATIVE_WIDTH

GRID = f"""
query = "epsilon"
[accuracy]
relative_width = {SWEEP_RELATIVE_WIDTH}
[axes]
noise_multiplier = [1.0, 2.0]
sampling_rate = 0.02
steps = 10
delta = 1e-5
"""

#: The ``rows`` table as optcomp wrote it before stores carried the mark (no application_id, no version).
_OLD_SCHEMA = ("CREATE TABLE rows (key TEXT PRIMARY KEY, idx INTEGER NOT NULL, lower REAL, upper REAL, "
               "value REAL, relation TEXT NOT NULL, error TEXT, width REAL)")


def _sqlite(path: Path, *sql: str) -> None:
    db = sqlite3.connect(path)
    for statement in sql:
        db.execute(statement)
    db.commit()
    db.close()


def _ledger(path: Path) -> None:
    with Ledger.create(str(path), dataset="d", relation="add_remove", epsilon=1, delta=0, currency="basic") as led:
        led.charge("q1", PureDP("0.5"))


def _later(path: Path) -> None:
    _sqlite(path, _OLD_SCHEMA, f"PRAGMA application_id = {_store.APPLICATION_ID}",
            f"PRAGMA user_version = {_store.SCHEMA_VERSION + 1}")


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda p: p.write_bytes(b"x"), r"'[^']*db' is not a sweep store \(not an SQLite database\)"),
        (lambda p: p.write_text("".join(f"{i}\n" for i in range(1000))), "not an SQLite database"),
        (lambda p: _sqlite(p, "CREATE TABLE t (a)", "INSERT INTO t VALUES (1)"),
         r"an SQLite database that is not a sweep store \(tables t\)"),
        (lambda p: _sqlite(p, "PRAGMA application_id = 7", "CREATE TABLE rows (a)"), r"application_id 0x7"),
        (_ledger, "is an optcomp ledger, not a sweep store"),
        (_later, "written by a later optcomp"),
    ],
    ids=["one-byte-text", "text", "foreign-sqlite", "foreign-application", "ledger", "later-schema"],
)
def test_a_db_that_is_not_a_sweep_store_is_refused_untouched(make: object, match: str, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    grid = tmp_path / "g.toml"
    grid.write_text(GRID)
    db = tmp_path / "other.db"
    make(db)  # type: ignore[operator]
    before = _snapshot(tmp_path)
    assert main(["sweep", str(grid), "--db", str(db), "--workers", "1"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert re.search(match, err), err
    assert _snapshot(tmp_path) == before  # every byte, and no -wal/-shm/.sqlite left beside it
    with pytest.raises(sweep.StoreError, match=match):
        sweep.Store(db)
    assert _snapshot(tmp_path) == before


def test_the_ledger_keeps_its_tables_and_still_verifies(tmp_path: Path) -> None:
    path = tmp_path / "v.ledger"
    _ledger(path)
    with pytest.raises(sweep.StoreError, match="optcomp ledger"):
        sweep.run(sweep.grid_points({"query": "epsilon", "axes": {"noise_multiplier": 1.0, "sampling_rate": 0.02,
                                                                  "steps": 10, "delta": 1e-5}}), path)
    db = sqlite3.connect(path)
    assert {n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")} == {
        "meta", "events", "releases", "state", "refusals"}
    db.close()
    with Ledger.open(str(path)) as led:
        assert led.verify().ok


def test_a_db_in_a_directory_that_does_not_exist_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    grid = tmp_path / "g.toml"
    grid.write_text(GRID)
    db = tmp_path / "no" / "such" / "rows.sqlite"
    assert main(["sweep", str(grid), "--db", str(db), "--workers", "1"]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [f"optcomp: error: the directory of the sweep store does not exist: {db}"]
    assert not (tmp_path / "no").exists()
    assert main(["sweep", str(grid), "--db", str(tmp_path), "--workers", "1"]) == 2  # a directory
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    with pytest.raises(sweep.StoreError, match="is a directory"):
        sweep.Store(tmp_path)


@pytest.mark.parametrize("make", [lambda p: p.write_bytes(b""), lambda p: _sqlite(p, "PRAGMA user_version = 0")],
                         ids=["empty-file", "sqlite-without-tables"])
def test_an_empty_file_or_database_becomes_a_store(make: object, tmp_path: Path) -> None:
    db = tmp_path / "rows.sqlite"
    make(db)  # type: ignore[operator]
    with sweep.Store(db) as store:
        assert store.count() == 0
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA application_id").fetchone()[0] == _store.APPLICATION_ID
    assert conn.execute("PRAGMA user_version").fetchone()[0] == _store.SCHEMA_VERSION
    conn.close()


def test_a_store_written_before_the_mark_is_read_resumed_and_marked(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    grid = tmp_path / "g.toml"
    grid.write_text(GRID)
    new, old = tmp_path / "new.sqlite", tmp_path / "old.sqlite"
    assert main(["sweep", str(grid), "--db", str(new), "--workers", "1", "--json"]) == 0
    rows = capsys.readouterr().out
    conn = sqlite3.connect(new)  # the same rows in a file laid out as before the mark
    kept = conn.execute("SELECT key, idx, lower, upper, value, relation, error, width FROM rows ORDER BY idx").fetchall()
    conn.close()
    _sqlite(old, "PRAGMA journal_mode=WAL", _OLD_SCHEMA)
    conn = sqlite3.connect(old)
    conn.execute("INSERT INTO rows VALUES (?, ?, ?, ?, ?, ?, ?, ?)", kept[0])
    conn.commit()
    conn.close()
    assert main(["sweep", str(grid), "--db", str(old), "--workers", "1", "--json"]) == 0
    assert capsys.readouterr().out == rows  # the old row read back, the other one computed (same digits)
    with sweep.Store(old) as store:
        assert store.count() == 2
    conn = sqlite3.connect(old)
    assert conn.execute("PRAGMA application_id").fetchone()[0] == _store.APPLICATION_ID
    conn.close()


def test_a_store_path_may_be_any_pathlike(tmp_path: Path) -> None:
    """sweep.Store takes a str, a pathlib.Path or any os.PathLike of str, as Ledger does."""

    class TextPath:
        def __fspath__(self) -> str:
            return str(tmp_path / "grid.sqlite")

    with sweep.Store(TextPath()) as store:
        assert store.count() == 0 and store.path == tmp_path / "grid.sqlite"

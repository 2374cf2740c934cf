"""optcomp.ledger on files it must not trust (issue 27: A, B, 8, 9, 10, 13).

* A copy of an open ledger's file made with ``shutil.copy`` holds every charge that returned (a
  ``wal_checkpoint(TRUNCATE)`` after each write), so it cannot hand budget back; ``backup`` is the
  consistent way to copy one.
* Admission rests on the hash chain replayed by the process, never on the cached ``state`` row: a cache
  edited in the file (bytes or SQL) is refused, and ``report`` flags it.
* A foreign SQLite file, an empty file and a corrupted ledger are one line on stderr, exit 2, and stay
  byte-for-byte unchanged; ``verify`` names the corruption.
* ``report``, ``verify`` and ``export`` open read-only.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import stat
import subprocess
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from optcomp.cli import main
from optcomp.ledger import BudgetExceeded, Ledger, PureDP, StoreError

Site = Any
READ_COMMANDS = ("report", "verify", "export")
ALL_COMMANDS = (("charge", "x9", "pure:epsilon=0.01"), ("report",), ("verify",), ("export",),
                ("released", "q0"), ("void", "q0", "--reason", "never ran"))


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(code: int, err: str) -> bool:
    return code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def small_ledger(path: Path, epsilon: object = 1, charges: int = 3) -> None:
    with Ledger.create(str(path), dataset="d", relation="add_remove", epsilon=epsilon, delta=0,
                       currency="basic") as led:
        for i in range(charges):
            led.charge(f"q{i}", PureDP("0.01"))


def admitted(led: Ledger, prefix: str, n: int, epsilon: str = "0.01") -> int:
    count = 0
    for i in range(n):
        try:
            led.charge(f"{prefix}{i}", PureDP(epsilon))
            count += 1
        except BudgetExceeded:
            pass
    return count


# --- A: a file copy of an open ledger ---------------------------------------------------------------

HOLDER = """
import sys
from optcomp.ledger import Ledger, PureDP
led = Ledger.open(sys.argv[1])
for i in range(50):
    led.charge(f"held-{i}", PureDP("0.01"))
print("charged", flush=True)
sys.stdin.read()          # hold the ledger open until the parent closes our stdin
led.close()
"""


def test_file_copy_of_an_open_ledger_hands_no_budget_back(tmp_path: Path) -> None:
    """Issue 27 A, exactly: a long-running process holds Ledger.open and charges 50 × 0.01 (ε = 1);
    shutil.copy of the ledger file then; the copy must not admit more than the 50 left."""
    path, copy = tmp_path / "l.ledger", tmp_path / "copy.ledger"
    small_ledger(path, charges=0)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "charged"
        shutil.copy(path, copy)  # the holder still has the ledger open
        with Ledger.open(str(copy)) as led:
            assert led.verify().ok and led.spent()[0] == Fraction(1, 2)
            assert admitted(led, "copy-", 60) == 50
            assert led.spent()[0] == 1
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=60)
    assert holder.returncode == 0


class _CheckpointBusy:
    """A connection whose ``wal_checkpoint`` reports "busy" the first ``times`` calls, as SQLite does at
    once (without its busy handler) while another connection is checkpointing."""

    def __init__(self, conn: sqlite3.Connection, times: float) -> None:
        self.conn, self.times, self.calls = conn, times, 0

    def execute(self, sql: str, *args: Any) -> Any:
        if sql.startswith("PRAGMA wal_checkpoint"):
            self.calls += 1
            if self.calls <= self.times:
                return self.conn.execute("SELECT 1, -1, -1")
        return self.conn.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.conn, name)


def test_a_busy_checkpoint_is_retried_not_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """CI found 32 writers failing with "the main file could not be brought up to date": the checkpoint
    after a commit is now retried; only one that stays busy for the whole busy timeout is an error, and
    then the charge is committed and a retry returns its ticket."""
    path = tmp_path / "l.ledger"
    small_ledger(path, charges=0)
    with Ledger.open(str(path)) as led:
        store = led._store
        store._conn = busy = _CheckpointBusy(store._conn, times=3)
        assert led.charge("a", PureDP("0.01")).replay is False
        assert busy.calls == 4 and not os.path.getsize(str(path) + "-wal")
        monkeypatch.setattr("optcomp.ledger._store.BUSY_TIMEOUT_S", 0.05)
        busy.times = float("inf")
        with pytest.raises(StoreError, match="the write committed.*retry"):
            led.charge("b", PureDP("0.01"))
        busy.times = 0
        assert led.charge("b", PureDP("0.01")).replay is True
        assert led.spent()[0] == Fraction(2, 100)


def test_backup_is_a_consistent_snapshot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "l.ledger"
    small_ledger(path, charges=0)
    with Ledger.open(str(path)) as led:
        assert admitted(led, "a", 50) == 50
        events, head = led.backup(str(tmp_path / "b.ledger"))
        assert events == 50 and head == led.export()["events"][-1]["row_hash"]
        with pytest.raises(StoreError, match="already exists"):
            led.backup(str(tmp_path / "b.ledger"))
    with Ledger.open(str(tmp_path / "b.ledger")) as b:
        assert b.verify().ok and b.spent()[0] == Fraction(1, 2)
    code, out, _ = run(capsys, "ledger", "backup", str(path), str(tmp_path / "c.ledger"), "--json")
    assert code == 0 and json.loads(out)["events"] == 50
    code, _, err = run(capsys, "ledger", "backup", str(path), str(tmp_path / "c.ledger"))
    assert one_line_error(code, err) and "already exists" in err


# --- B: admission never trusts the cached state -----------------------------------------------------


def test_a_byte_edited_cache_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 27 B, exactly: ε = 0.05, five charges of 0.01 spend it; the cached spent vector edited in the
    file (to 0) let charge admit 8 × 0.01. Now every charge is refused, report flags the edit (exit 2)
    with the spent replayed from the chain, verify names it, and the refused charges change nothing."""
    path = tmp_path / "l.ledger"
    small_ledger(path, epsilon="0.05", charges=5)
    raw = path.read_bytes()
    cached = rb'(?<!"thresholds":)\["1/20","0x0\.0p\+0"\]'  # the state row's spent, not the budget's copy
    edited_raw, n = re.subn(cached, b'["0/20","0x0.0p+0"]', raw)
    assert n >= 1
    path.write_bytes(edited_raw)
    edited = path.read_bytes()
    with Ledger.open(str(path)) as led:
        for i in range(8):
            with pytest.raises(StoreError, match="cached state"):
                led.charge(f"more-{i}", PureDP("0.01"))
        rep = led.report()
        assert rep["spent"][0] == "1/20" and any("cached state" in p for p in rep["problems"])
        assert any("cached state" in p for p in led.verify().problems)
    assert path.read_bytes() == edited
    code, out, err = run(capsys, "ledger", "charge", str(path), "more", "pure:epsilon=0.01")
    assert one_line_error(code, err) and "cached state" in err
    assert "(spent [0, 0], next seq 6)" in err and "(spent [0.05, 0], next seq 6)" in err  # decimals, never float.hex
    code, out, err = run(capsys, "ledger", "report", str(path))
    assert one_line_error(code, err) and "PROBLEM" in out and "0.05" in out
    code, _, err = run(capsys, "ledger", "verify", str(path))
    assert one_line_error(code, err) and "cached state" in err
    assert path.read_bytes() == edited


def test_a_cache_edited_by_sql_is_refused_on_both_stores(ledger_site: Site) -> None:
    """The state row has no trigger (it changes on every charge): an UPDATE by anyone with access is
    refused at the next charge — also by a process that had walked the chain before the edit."""
    led = ledger_site.create(dataset="d", relation="add_remove", epsilon="0.05", delta=0, currency="basic")
    assert admitted(led, "q", 5) == 5
    zero = '["0x0.0p+0","0x0.0p+0"]'
    if ledger_site.kind == "sqlite":
        conn = sqlite3.connect(ledger_site.location)
        conn.execute("UPDATE state SET spent = ?", (zero,))
        conn.commit()
        conn.close()
    else:
        import psycopg

        with psycopg.connect(ledger_site.location, autocommit=True) as conn:
            conn.execute(f"SET search_path TO {ledger_site.schema}")
            conn.execute("UPDATE state SET spent = %s", (zero,))
    for holder in (led, ledger_site.open()):
        with pytest.raises(StoreError, match="cached state"):
            holder.charge("more", PureDP("0.01"))
        assert holder.report()["problems"] and holder.spent()[0] == Fraction(1, 20)
        holder.close()


# --- 8: files that are not ledgers ----------------------------------------------------------------


def _foreign(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE people (name TEXT)")
    conn.execute("INSERT INTO people VALUES ('ada')")
    conn.commit()
    conn.close()


@pytest.mark.parametrize("kind", ["foreign", "empty"])
def test_foreign_and_empty_files_are_refused_unchanged(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       kind: str) -> None:
    path = tmp_path / "x.db"
    _foreign(path) if kind == "foreign" else path.touch()
    before = path.read_bytes()
    for args in ALL_COMMANDS:
        code, _, err = run(capsys, "ledger", args[0], str(path), *args[1:])
        assert one_line_error(code, err) and "not an optcomp ledger" in err, (args, err)
    code, _, err = run(capsys, "ledger", "init", str(path), "--dataset", "d", "--relation", "add_remove",
                       "--epsilon", "1", "--delta", "0", "--currency", "basic")
    assert one_line_error(code, err) and "already exists" in err
    assert path.read_bytes() == before and not os.path.exists(str(path) + "-wal")


def _flip(src: Path, dst: Path, offset: int) -> bytes:
    raw = bytearray(src.read_bytes())
    raw[offset] ^= 0x01
    dst.write_bytes(bytes(raw))
    return bytes(raw)


def test_a_flipped_byte_is_reported_and_never_modified(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Flips in the page structure (malformed) and in an event's text (a broken chain): every command is
    one line and exit 2, verify names the corruption, and the file is unchanged afterwards."""
    good = tmp_path / "good.ledger"
    small_ledger(good, charges=3)
    raw = good.read_bytes()
    at_body = raw.index(b'"charge":["1/100"') + len(b'"charge":["')  # the '1' of the first charge stored
    page_type = 2 * 4096  # first byte of page 3: the b-tree page type
    for offset, needle in ((at_body, "hash chain"), (page_type, "")):
        bad = tmp_path / f"bad{offset}.ledger"
        flipped = _flip(good, bad, offset)
        for args in ALL_COMMANDS:
            code, _, err = run(capsys, "ledger", args[0], str(bad), *args[1:])
            assert one_line_error(code, err), (offset, args, err)
        code, _, err = run(capsys, "ledger", "verify", str(bad))
        assert one_line_error(code, err) and "verification failed" in err and needle in err
        assert bad.read_bytes() == flipped


def test_no_flipped_byte_ends_in_a_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A sweep of single-bit flips over a small ledger: each of charge, report, verify and export either
    works (the flip hit unused space) or refuses in one line, and a refusal leaves the file unchanged."""
    good = tmp_path / "good.ledger"
    small_ledger(good, charges=3)
    size = good.stat().st_size
    for offset in range(0, size, 331):
        bad = tmp_path / "bad.ledger"
        for args in ALL_COMMANDS[:4]:
            flipped = _flip(good, bad, offset)
            code, _, err = run(capsys, "ledger", args[0], str(bad), *args[1:])
            assert code == 0 or one_line_error(code, err), (offset, args, err)
            if code != 0 or args[0] != "charge":
                assert bad.read_bytes() == flipped, (offset, args)


# --- 9: read-only ledgers -------------------------------------------------------------------------


def test_read_commands_open_read_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An auditor without write permission (file 0444 in a directory 0555) reads report, verify and
    export; write commands are one line. (As root, permissions are not enforced: the read-only opening
    is then checked through the API.)"""
    d = tmp_path / "ro"
    d.mkdir()
    path = d / "l.ledger"
    small_ledger(path, charges=3)
    before = path.read_bytes()
    with Ledger.open(str(path), read_only=True) as led:
        assert led.read_only and led.report()["spent"][0] == "3/100" and led.verify().ok
        with pytest.raises(StoreError, match="read-only"):
            led.charge("x", PureDP("0.01"))
    path.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    d.chmod(stat.S_IRUSR | stat.S_IXUSR | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
    try:
        for command in READ_COMMANDS:
            code, _, err = run(capsys, "ledger", command, str(path), "--json")
            assert code == 0, err
        if os.geteuid() != 0:
            code, _, err = run(capsys, "ledger", "charge", str(path), "x", "pure:epsilon=0.01")
            assert one_line_error(code, err) and "read-only" in err
    finally:
        d.chmod(stat.S_IRWXU)
        path.chmod(stat.S_IRUSR | stat.S_IWUSR)
    assert path.read_bytes() == before


# --- 10 and 13: ambiguous input, readable output ---------------------------------------------------


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("charge", "{p}", "dup", "pure:epsilon=0.1,epsilon=0.2"), "epsilon is given twice"),
        (("init", "{new}", "--dataset", "d", "--relation", "nonsense", "--epsilon", "1", "--delta", "0"),
         "relation"),
        (("init", "{new}", "--dataset", "d", "--relation", "add_remove", "--epsilon", "1", "--delta", "0",
          "--schema", "ledgers"), "schema"),
        (("report", "{p}", "--schema", "ledgers"), "schema"),
        (("init", "{new}", "--dataset", "d", "--relation", "add_remove", "--epsilon", "1", "--delta", "1e-6",
          "--currency", "rdp"), "orders"),
        (("init", "{new}", "--dataset", "d", "--relation", "add_remove", "--epsilon", "1", "--delta", "1e-6",
          "--currency", "zcdp", "--order", "8"), "orders"),
    ],
)
def test_ambiguous_input_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...],
                                     needle: str) -> None:
    p = tmp_path / "c.ledger"
    small_ledger(p, charges=1)
    before = p.read_bytes()
    fill = {"p": str(p), "new": str(tmp_path / "n.ledger")}
    code, _, err = run(capsys, "ledger", *(a.format(**fill) for a in args))
    assert one_line_error(code, err) and needle in err, err
    assert p.read_bytes() == before and not (tmp_path / "n.ledger").exists()


def test_human_output_is_tables_not_python_reprs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = str(tmp_path / "c.ledger")
    code, out, _ = run(capsys, "ledger", "init", p, "--dataset", "d", "--relation", "add_remove", "--epsilon",
                       "1/3", "--delta", "1e-6", "--currency", "approx-zcdp", "--delta-steps", "1e-7")
    assert code == 0
    outs = [out]
    for args in (("charge", p, "q", "pure:epsilon=0.01"), ("report", p, "--fits", "pure:epsilon=0.01"),
                 ("verify", p), ("released", p, "q")):
        code, out, _ = run(capsys, "ledger", *args)
        assert code == 0
        outs.append(out)
    text = "\n".join(outs)
    for python_repr in ("{'", "['", "'}", "']", "Fraction("):
        assert python_repr not in text
    assert "ε = 1/3, δ = 1e-6" in text and "┃ component" in text and "remaining" in text


def test_read_only_and_missing_ledgers_on_both_stores(ledger_site: Site, tmp_path: Path) -> None:
    """A read-only opening reads and refuses writes on SQLite and PostgreSQL alike; a missing ledger
    (a schema never created, a path that is no file) is one StoreError/ValueError sentence."""
    ledger_site.create(dataset="d", relation="add_remove", epsilon=1, delta=0, currency="basic").close()
    with Ledger.open(ledger_site.location, schema=ledger_site.schema, read_only=True) as led:
        assert led.report()["problems"] == [] and led.verify().ok
        with pytest.raises(StoreError, match="read-only"):
            led.charge("x", PureDP("0.01"))
    if ledger_site.kind == "postgres":
        with pytest.raises(StoreError, match="meta"):
            Ledger.open(ledger_site.location, schema=ledger_site.schema + "_none")
    else:
        with pytest.raises(ValueError, match="existing ledger file"):
            Ledger.open(str(tmp_path / "none.ledger"))


class _TextPath:
    """An os.PathLike that is not a pathlib.Path (what a user's own path class looks like)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __fspath__(self) -> str:
        return self.text


def test_paths_may_be_pathlike(tmp_path: Path) -> None:
    """Ledger.create / open / backup take a pathlib.Path or any os.PathLike of str (create once raised
    AttributeError: 'PosixPath' object has no attribute 'startswith'); bytes and other objects are a
    TypeError naming the parameter."""
    with Ledger.create(tmp_path / "a.ledger", dataset="d", relation="add_remove", epsilon=1, delta=1e-6) as led:
        led.charge("q1", PureDP(0.1))
        assert led.backup(tmp_path / "copy.ledger")[0] == 1
    with Ledger.open(_TextPath(str(tmp_path / "a.ledger")), read_only=True) as led:
        assert led.read_only and [r["release_id"] for r in led.history()] == ["q1"]
    with Ledger.open(tmp_path / "copy.ledger") as led:
        assert [r["release_id"] for r in led.history()] == ["q1"]
    with pytest.raises(TypeError, match="location must be a str or an os.PathLike of str"):
        Ledger.open(b"a.ledger")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="location must be a str or an os.PathLike of str"):
        Ledger.create(3, dataset="d", relation="add_remove", epsilon=1, delta=1e-6)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="schema is a PostgreSQL option"):
        Ledger.create(tmp_path / "b.ledger", dataset="d", relation="add_remove", epsilon=1, delta=1e-6, schema="s")


def test_a_postgres_conninfo_string_still_opens(ledger_site: Site) -> None:
    """The os.PathLike change leaves a postgresql:// string (and a str SQLite path) as they were."""
    with ledger_site.create(dataset="d", relation="add_remove", epsilon=1, delta=1e-6) as led:
        led.charge("q1", PureDP(0.1))
    with ledger_site.open() as led:
        assert [r["release_id"] for r in led.history()] == ["q1"]

"""The results store: a SQLite file of rows keyed by their point, written as they finish, and its exports.

Each finished batch of rows is one transaction (``INSERT OR IGNORE`` on the point's key, WAL journal):
a row is either whole in the file or absent, a row already there is never written again, and a process
killed at any moment (``kill -9``) loses at most the rows of the batches still in flight. Re-running the
same grid against the same file skips every point whose key is present.

Floats are SQLite REALs (IEEE doubles: every value round-trips exactly; ``inf`` included).

**Which files are sweep stores.** A store carries SQLite's ``application_id`` :data:`APPLICATION_ID`
and its schema version in ``user_version`` (:data:`SCHEMA_VERSION`). A path is opened only if it does
not exist (its directory must), is an empty file, is an SQLite database without any table, or carries
that mark; a store written before the mark (``application_id`` 0 and exactly the ``rows`` table of
:data:`_SCHEMA`) is recognised by its schema and marked. Anything else — a text file, another
application's database, an optcomp ledger — is refused with :class:`StoreError` naming what it is, and
the file is not written: its header is read as bytes, and its tables by queries that write nothing,
before the store is set up.
"""

from __future__ import annotations

import csv
import errno
import json
import math
import os
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Self

from optcomp.sweep._evaluate import Row
from optcomp.sweep._spec import Point, columns

_SCHEMA = """
CREATE TABLE IF NOT EXISTS rows (
    key TEXT PRIMARY KEY,
    idx INTEGER NOT NULL,
    lower REAL,
    upper REAL,
    value REAL,
    relation TEXT NOT NULL,
    error TEXT,
    width REAL
)
"""
#: SQLite ``application_id`` of a sweep store (the bytes "OCSW": OptComp SWeep).
APPLICATION_ID = 0x4F435357
#: ``user_version`` of the schema this version writes; a store of a later version is refused by name.
SCHEMA_VERSION = 1
#: The columns of the ``rows`` table, in order (a store written before the mark is recognised by them).
_COLUMNS = ("key", "idx", "lower", "upper", "value", "relation", "error", "width")
#: The tables of an optcomp ledger (``optcomp.ledger._store``), named in the refusal.
_LEDGER_TABLES = {"meta", "events", "releases", "state"}
#: The first 16 bytes of every SQLite 3 database file.
_SQLITE_HEADER = b"SQLite format 3\x00"
#: Seconds a writer waits for another connection's lock before failing.
_BUSY_TIMEOUT_S = 60.0
#: The result columns of an exported row, after the point's parameters.
RESULT_COLUMNS = ("lower", "upper", "value", "width", "relation", "error")


class StoreError(ValueError):
    """A path that cannot be a sweep store (another file, another application's database, a ledger);
    the file was not changed."""


def _tables(path: Path) -> tuple[int, int, dict[str, list[str]]]:
    """``(application_id, user_version, {table: columns})`` of the SQLite database at ``path``, read
    without writing: no statement writes, and the connection never creates the file. (Not ``mode=ro``:
    a read-only connection to a WAL database cannot remove the ``-wal``/``-shm`` files it creates.)"""
    db = sqlite3.connect(path.resolve().as_uri() + "?mode=rw", uri=True, timeout=_BUSY_TIMEOUT_S,
                         isolation_level=None)
    try:
        app = int(db.execute("PRAGMA application_id").fetchone()[0])
        version = int(db.execute("PRAGMA user_version").fetchone()[0])
        names = [str(n) for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return app, version, {n: [str(c[1]) for c in db.execute(f'PRAGMA table_info("{n}")')] for n in names}
    finally:
        db.close()


def _check(path: Path) -> bool:
    """Refuse ``path`` unless it may be opened as a sweep store (the module docstring); whether it needs
    the mark written (a new or empty file, a store written before the mark)."""
    if path.is_dir():
        raise StoreError(f"sweep store {str(path)!r} is a directory; name a file")
    if not path.exists():
        if not path.parent.is_dir():
            raise FileNotFoundError(errno.ENOENT, "the directory of the sweep store does not exist", str(path))
        return True
    with path.open("rb") as fh:
        head = fh.read(len(_SQLITE_HEADER))
    if not head:
        return True  # an empty file: SQLite's empty database
    if head != _SQLITE_HEADER:
        raise StoreError(f"{str(path)!r} is not a sweep store (not an SQLite database); nothing was changed")
    try:
        app, version, tables = _tables(path)
    except sqlite3.Error as exc:
        raise StoreError(f"{str(path)!r} cannot be read as a sweep store ({exc}); nothing was changed") from None
    if app == APPLICATION_ID:
        if version > SCHEMA_VERSION:
            raise StoreError(f"sweep store {str(path)!r} was written by a later optcomp (schema {version}, this "
                             f"one reads {SCHEMA_VERSION}): upgrade optcomp")
        return False
    if app == 0 and not tables:
        return True  # an SQLite database without any table
    if app == 0 and tables == {"rows": list(_COLUMNS)}:
        return True  # a store written before the mark
    if app == 0 and _LEDGER_TABLES <= set(tables):
        raise StoreError(f"{str(path)!r} is an optcomp ledger, not a sweep store; name another file; "
                         "nothing was changed")
    what = f"application_id {app:#x}" if app else "tables " + ", ".join(sorted(tables))
    raise StoreError(f"{str(path)!r} is an SQLite database that is not a sweep store ({what}); "
                     "nothing was changed")


class Store:
    """A sweep's SQLite results file (created on first use; a file that is not a store is refused with
    :class:`StoreError` and left untouched — the module docstring)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        mark = _check(self.path)
        try:
            self._db = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_S, isolation_level=None)
        except sqlite3.Error as exc:
            raise StoreError(f"sweep store {str(self.path)!r} cannot be opened ({exc})") from None
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")  # WAL: durable against a killed process
            if mark:
                self._db.execute("BEGIN IMMEDIATE")
                self._db.execute(_SCHEMA)
                self._db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                self._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            self._db.close()
            raise StoreError(f"sweep store {str(self.path)!r} cannot be written ({exc})") from None

    def close(self) -> None:
        """Close the connection."""
        self._db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def done(self, keys: Iterable[str]) -> set[str]:
        """The keys among ``keys`` that have a row."""
        wanted = list(keys)
        found: set[str] = set()
        for i in range(0, len(wanted), 500):
            chunk = wanted[i : i + 500]
            sql = f"SELECT key FROM rows WHERE key IN ({','.join('?' * len(chunk))})"
            found.update(k for (k,) in self._db.execute(sql, chunk))
        return found

    def write(self, rows: Sequence[Row]) -> int:
        """Insert ``rows`` in one transaction (rows whose key is present are skipped); the number written."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            before = self._db.total_changes
            self._db.executemany(
                "INSERT OR IGNORE INTO rows (key, idx, lower, upper, value, relation, error, width) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(r.key, r.index, r.lower, r.upper, r.value, r.relation, r.error, r.width) for r in rows],
            )
            written = self._db.total_changes - before
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")
        return written

    def rows(self, points: Sequence[Point]) -> list[Row]:
        """The stored rows of ``points``, in the points' order (points without a row are left out)."""
        out = []
        for p in points:
            got = self._db.execute(
                "SELECT lower, upper, value, relation, error, width FROM rows WHERE key = ?", (p.key,)
            ).fetchone()
            if got is not None:
                out.append(Row(p.key, p.index, got[0], got[1], got[2], got[3], got[4], got[5]))
        return out

    def count(self) -> int:
        """Rows in the file."""
        return int(self._db.execute("SELECT COUNT(*) FROM rows").fetchone()[0])


def records(points: Sequence[Point], rows: Sequence[Row]) -> list[dict[str, Any]]:
    """One flat dict per row: index, query, the grid's parameter columns, then :data:`RESULT_COLUMNS`."""
    by_key = {r.key: r for r in rows}
    names = columns(points)
    out = []
    for p in points:
        r = by_key.get(p.key)
        if r is None:
            continue
        params = dict(p.params)
        rec: dict[str, Any] = {"index": p.index, "query": p.query}
        rec.update({n: params.get(n) for n in names})
        rec.update({c: getattr(r, c) for c in RESULT_COLUMNS})
        out.append(rec)
    return out


def write_csv(recs: Sequence[dict[str, Any]], path: str | os.PathLike[str]) -> None:
    """CSV with a header; floats written with ``repr`` (round-trip exact), missing values empty."""
    if not recs:
        Path(path).write_text("", encoding="utf-8")
        return
    with Path(path).open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(recs[0]))
        w.writeheader()
        for rec in recs:
            w.writerow({k: "" if v is None else (repr(v) if isinstance(v, float) else v) for k, v in rec.items()})


def write_parquet(recs: Sequence[dict[str, Any]], path: str | os.PathLike[str]) -> None:
    """Parquet through pyarrow (the ``parquet`` extra)."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError("Parquet export needs pyarrow: pip install 'optcomp[parquet]'") from exc
    pq.write_table(pa.Table.from_pylist(list(recs)), str(path))


def to_json(recs: Sequence[dict[str, Any]]) -> str:
    """JSON text; infinite ends as the strings ``"inf"``/``"-inf"`` (JSON has no infinity)."""

    def clean(v: Any) -> Any:
        return ("inf" if v > 0 else "-inf") if isinstance(v, float) and math.isinf(v) else v

    return json.dumps([{k: clean(v) for k, v in rec.items()} for rec in recs], indent=1, allow_nan=False)

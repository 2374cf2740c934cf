"""The results store: a SQLite file of rows keyed by their point, written as they finish, and its exports.

Each finished batch of rows is one transaction (``INSERT OR IGNORE`` on the point's key, WAL journal):
a row is either whole in the file or absent, a row already there is never written again, and a process
killed at any moment (``kill -9``) loses at most the rows of the batches still in flight. Re-running the
same grid against the same file skips every point whose key is present.

Floats are SQLite REALs (IEEE doubles: every value round-trips exactly; ``inf`` included).
"""

from __future__ import annotations

import csv
import json
import math
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
#: Seconds a writer waits for another connection's lock before failing.
_BUSY_TIMEOUT_S = 60.0
#: The result columns of an exported row, after the point's parameters.
RESULT_COLUMNS = ("lower", "upper", "value", "width", "relation", "error")


class Store:
    """A sweep's SQLite results file (created on first use)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._db = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_S, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")  # WAL: durable against a killed process
        self._db.execute(_SCHEMA)

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


def write_csv(recs: Sequence[dict[str, Any]], path: str | Path) -> None:
    """CSV with a header; floats written with ``repr`` (round-trip exact), missing values empty."""
    if not recs:
        Path(path).write_text("", encoding="utf-8")
        return
    with Path(path).open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(recs[0]))
        w.writeheader()
        for rec in recs:
            w.writerow({k: "" if v is None else (repr(v) if isinstance(v, float) else v) for k, v in rec.items()})


def write_parquet(recs: Sequence[dict[str, Any]], path: str | Path) -> None:
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

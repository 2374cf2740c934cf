"""Storage behind one interface: SQLite (default, one embedded file) and PostgreSQL (psycopg 3).

Both hold the same four tables; the ledger's protocol (:mod:`._ledger`) sees only :class:`Tx`:

* ``meta``: the ledger's configuration, written once (UPDATE and DELETE refused by triggers);
* ``events``: the append-only log, one row per charge / released / void, each carrying
  ``row_hash = sha256(prev_hash ‖ canonical row)`` (UPDATE and DELETE refused by triggers);
* ``releases``: one row per release id (UNIQUE) — an index over ``events`` whose only mutable column is
  the status, and only along charged → released and charged → voided (enforced by a trigger);
* ``state``: the cached sums and the chain head, updated in the same transaction as the event;
  admission checks it against a replay of ``events`` and :meth:`optcomp.ledger.Ledger.verify`
  recomputes it (it has no trigger: it is a cache, never trusted);
* ``refusals``: refused attempts (release id, release, reason, time, the chain position it was refused
  at), append-only by trigger but **outside the hash chain** and never verified: a record for the data
  owner, which nothing in the accounting reads (``docs/ledger.md`` §4, Refused attempts). Created with a
  new ledger, and in an older one by the first refusal written to it.

Every SQLite or psycopg error is raised as one :class:`StoreError` sentence; a file that is not a
ledger is refused before anything is written to it.

Write transactions serialise on the ledger: SQLite ``BEGIN IMMEDIATE`` on a WAL database with
``synchronous=FULL``, a ``wal_checkpoint(TRUNCATE)`` after each COMMIT, retried while another connection checkpoints (the main file alone then holds
every commit, so a plain copy of it misses none that returned), and a busy timeout (a deferred read-then-write transaction could fail with
``SQLITE_BUSY_SNAPSHOT``, which the timeout does not retry); PostgreSQL ``SELECT … FOR UPDATE`` on the
``state`` row at READ COMMITTED (every later statement sees every earlier commit). COMMIT is the
linearisation point of a charge.
"""

from __future__ import annotations

import os
import random
import re
import sqlite3
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

#: The PostgreSQL schema of a ledger when none is named.
DEFAULT_SCHEMA = "optcomp_ledger"
#: SQLite busy timeout (seconds): how long a writer waits for another writer's transaction.
BUSY_TIMEOUT_S: float = 60.0
#: Longest pause (seconds) between two tries of the checkpoint after a write (:meth:`SQLiteStore._checkpoint`).
CHECKPOINT_BACKOFF_S: float = 0.05

_TABLES = """
CREATE TABLE meta (id INTEGER PRIMARY KEY CHECK (id = 1), config TEXT NOT NULL, genesis TEXT NOT NULL,
                   created_at TEXT NOT NULL);
CREATE TABLE events (seq BIGINT PRIMARY KEY, kind TEXT NOT NULL CHECK (kind IN ('charge', 'released', 'void')),
                     release_id TEXT NOT NULL, body TEXT NOT NULL, created_at TEXT NOT NULL,
                     prev_hash TEXT NOT NULL, row_hash TEXT NOT NULL UNIQUE);
CREATE TABLE releases (release_id TEXT PRIMARY KEY, charge_seq BIGINT NOT NULL REFERENCES events(seq),
                       spec TEXT NOT NULL, charge TEXT NOT NULL, slot BIGINT,
                       status TEXT NOT NULL CHECK (status IN ('charged', 'released', 'voided')));
CREATE TABLE state (id INTEGER PRIMARY KEY CHECK (id = 1), spent TEXT NOT NULL, next_seq BIGINT NOT NULL,
                    head TEXT NOT NULL, next_slot BIGINT NOT NULL);
"""

_REFUSALS = """
CREATE TABLE IF NOT EXISTS refusals (id BIGINT PRIMARY KEY, release_id TEXT NOT NULL, spec TEXT NOT NULL,
                                     reason TEXT NOT NULL, created_at TEXT NOT NULL, chain_seq BIGINT NOT NULL)
"""
_SQLITE_REFUSAL_TRIGGERS = tuple(
    f"CREATE TRIGGER IF NOT EXISTS refusals_no_{op.lower()} BEFORE {op} ON refusals "
    "BEGIN SELECT RAISE(ABORT, 'append-only: refusals'); END" for op in ("UPDATE", "DELETE"))
_PG_REFUSAL_TRIGGER = ("CREATE TRIGGER refusals_frozen BEFORE UPDATE OR DELETE ON refusals FOR EACH ROW "
                       "EXECUTE FUNCTION forbid()")
#: A refusal row: (release_id, spec, reason, created_at, chain_seq).
Refusal = tuple[str, str, str, str, int]

_SQLITE_TRIGGERS = """
CREATE TRIGGER meta_no_update BEFORE UPDATE ON meta BEGIN SELECT RAISE(ABORT, 'append-only: meta is immutable'); END;
CREATE TRIGGER meta_no_delete BEFORE DELETE ON meta BEGIN SELECT RAISE(ABORT, 'append-only: meta is immutable'); END;
CREATE TRIGGER events_no_update BEFORE UPDATE ON events BEGIN SELECT RAISE(ABORT, 'append-only: events'); END;
CREATE TRIGGER events_no_delete BEFORE DELETE ON events BEGIN SELECT RAISE(ABORT, 'append-only: events'); END;
CREATE TRIGGER releases_no_delete BEFORE DELETE ON releases BEGIN SELECT RAISE(ABORT, 'append-only: releases'); END;
CREATE TRIGGER state_no_delete BEFORE DELETE ON state BEGIN SELECT RAISE(ABORT, 'append-only: state'); END;
CREATE TRIGGER releases_status_only BEFORE UPDATE ON releases
WHEN NOT (OLD.status = 'charged' AND NEW.status IN ('released', 'voided')
          AND NEW.release_id = OLD.release_id AND NEW.charge_seq = OLD.charge_seq AND NEW.spec = OLD.spec
          AND NEW.charge = OLD.charge AND NEW.slot IS OLD.slot)
BEGIN SELECT RAISE(ABORT, 'append-only: releases allow only charged -> released/voided'); END;
"""

_PG_TRIGGERS = """
CREATE FUNCTION forbid() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'append-only: % on % refused', TG_OP, TG_TABLE_NAME; END $$;
CREATE FUNCTION status_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT (OLD.status = 'charged' AND NEW.status IN ('released', 'voided')
          AND NEW.release_id = OLD.release_id AND NEW.charge_seq = OLD.charge_seq AND NEW.spec = OLD.spec
          AND NEW.charge = OLD.charge AND NEW.slot IS NOT DISTINCT FROM OLD.slot) THEN
    RAISE EXCEPTION 'append-only: releases allow only charged -> released/voided';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER meta_frozen BEFORE UPDATE OR DELETE ON meta FOR EACH ROW EXECUTE FUNCTION forbid();
CREATE TRIGGER events_frozen BEFORE UPDATE OR DELETE ON events FOR EACH ROW EXECUTE FUNCTION forbid();
CREATE TRIGGER releases_no_delete BEFORE DELETE ON releases FOR EACH ROW EXECUTE FUNCTION forbid();
CREATE TRIGGER state_no_delete BEFORE DELETE ON state FOR EACH ROW EXECUTE FUNCTION forbid();
CREATE TRIGGER releases_status_only BEFORE UPDATE ON releases FOR EACH ROW EXECUTE FUNCTION status_only();
"""


class StoreError(RuntimeError):
    """The storage refused or failed (not a ledger, not WAL, integrity check failed)."""


class Tx:
    """One transaction's view of a ledger's tables (``?`` placeholders, translated per back end)."""

    def __init__(self, cur: Any, placeholder: str) -> None:
        self._cur = cur
        self._ph = placeholder

    def _x(self, sql: str, params: tuple[Any, ...] = ()) -> Any:
        return self._cur.execute(sql.replace("?", self._ph), params)

    def meta(self) -> tuple[str, str, str]:
        row = self._x("SELECT config, genesis, created_at FROM meta WHERE id = 1").fetchone()
        if row is None:
            raise StoreError("not an optcomp ledger (no meta row)")
        return str(row[0]), str(row[1]), str(row[2])

    def state(self, *, lock: bool = False) -> tuple[str, int, str, int]:
        sql = "SELECT spent, next_seq, head, next_slot FROM state WHERE id = 1"
        row = self._x(sql + (" FOR UPDATE" if lock else "")).fetchone()
        if row is None:
            raise StoreError("not an optcomp ledger (no state row)")
        return str(row[0]), int(row[1]), str(row[2]), int(row[3])

    def release(self, release_id: str) -> tuple[str, str, int | None, str, int] | None:
        row = self._x("SELECT spec, charge, slot, status, charge_seq FROM releases WHERE release_id = ?",
                      (release_id,)).fetchone()
        if row is None:
            return None
        return str(row[0]), str(row[1]), None if row[2] is None else int(row[2]), str(row[3]), int(row[4])

    def releases(self) -> list[tuple[str, str, str, int | None, str, int]]:
        rows = self._x("SELECT release_id, spec, charge, slot, status, charge_seq FROM releases "
                       "ORDER BY charge_seq").fetchall()
        return [(str(r[0]), str(r[1]), str(r[2]), None if r[3] is None else int(r[3]), str(r[4]), int(r[5]))
                for r in rows]

    def events(self, since: int = 1) -> list[tuple[int, str, str, str, str, str, str]]:
        rows = self._x("SELECT seq, kind, release_id, body, created_at, prev_hash, row_hash FROM events "
                       "WHERE seq >= ? ORDER BY seq", (since,)).fetchall()
        return [(int(r[0]), str(r[1]), str(r[2]), str(r[3]), str(r[4]), str(r[5]), str(r[6])) for r in rows]

    def append(self, seq: int, kind: str, release_id: str, body: str, created_at: str, prev: str, h: str) -> None:
        self._x("INSERT INTO events (seq, kind, release_id, body, created_at, prev_hash, row_hash) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)", (seq, kind, release_id, body, created_at, prev, h))

    def insert_release(self, release_id: str, seq: int, spec: str, charge: str, slot: int | None) -> None:
        self._x("INSERT INTO releases (release_id, charge_seq, spec, charge, slot, status) "
                "VALUES (?, ?, ?, ?, ?, 'charged')", (release_id, seq, spec, charge, slot))

    def set_status(self, release_id: str, status: str) -> None:
        self._x("UPDATE releases SET status = ? WHERE release_id = ?", (status, release_id))

    def save_state(self, spent: str, next_seq: int, head: str, next_slot: int) -> None:
        self._x("UPDATE state SET spent = ?, next_seq = ?, head = ?, next_slot = ? WHERE id = 1",
                (spent, next_seq, head, next_slot))

    # --- refused attempts: outside the hash chain (module docstring) ---------------------------------

    @property
    def _postgres(self) -> bool:
        return self._ph == "%s"

    def has_refusals(self) -> bool:
        """Whether this ledger has the ``refusals`` table (a ledger made before it has none until its
        first refusal)."""
        if self._postgres:
            return self._x("SELECT to_regclass('refusals') IS NOT NULL").fetchone()[0] is True
        return self._x("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'refusals'").fetchone() is not None

    def ensure_refusals(self) -> None:
        """Create the ``refusals`` table and its append-only triggers if missing (inside a write)."""
        if self.has_refusals():
            return
        self._x(_REFUSALS)
        for trigger in (_PG_REFUSAL_TRIGGER,) if self._postgres else _SQLITE_REFUSAL_TRIGGERS:
            self._x(trigger)

    def add_refusal(self, release_id: str, spec: str, reason: str, created_at: str, chain_seq: int) -> None:
        self.ensure_refusals()
        self._x("INSERT INTO refusals (id, release_id, spec, reason, created_at, chain_seq) "
                "VALUES ((SELECT COALESCE(MAX(id), 0) + 1 FROM refusals), ?, ?, ?, ?, ?)",
                (release_id, spec, reason, created_at, chain_seq))

    def refusals(self, last: int | None = None) -> tuple[int, list[Refusal]]:
        """(how many refusals are recorded, the ``last`` of them — all when None — oldest first)."""
        if not self.has_refusals():
            return 0, []
        count = int(self._x("SELECT COUNT(*) FROM refusals").fetchone()[0])
        sql = "SELECT release_id, spec, reason, created_at, chain_seq FROM refusals ORDER BY id DESC"
        rows = self._x(sql + ("" if last is None else f" LIMIT {int(last)}")).fetchall()
        return count, [(str(r[0]), str(r[1]), str(r[2]), str(r[3]), int(r[4])) for r in reversed(rows)]

    def init(self, config: str, genesis: str, created_at: str, spent: str) -> None:
        self._x("INSERT INTO meta (id, config, genesis, created_at) VALUES (1, ?, ?, ?)",
                (config, genesis, created_at))
        self._x("INSERT INTO state (id, spent, next_seq, head, next_slot) VALUES (1, ?, 1, ?, 0)", (spent, genesis))


class Store:
    """A ledger's storage: ``create`` once, then ``write()`` / ``read()`` transactions."""

    kind: str = ""
    #: Opened for reading only: :meth:`write` refuses.
    read_only: bool = False

    def create(self, config: str, genesis: str, created_at: str, spent: str) -> None:
        raise NotImplementedError

    def write(self) -> AbstractContextManager[Tx]:
        """Context manager yielding a :class:`Tx` that holds the ledger's write lock; commits on exit."""
        raise NotImplementedError

    def read(self) -> AbstractContextManager[Tx]:
        """Context manager yielding a :class:`Tx` on one consistent snapshot."""
        raise NotImplementedError

    def integrity(self) -> str:
        """The back end's own integrity check ("ok" when fine)."""
        return "ok"

    def backup(self, destination: str) -> None:
        """A consistent snapshot of the ledger into ``destination`` (SQLite only)."""
        raise StoreError("backup is for SQLite ledgers; back a PostgreSQL ledger up with pg_dump --schema")

    def close(self) -> None:
        raise NotImplementedError


#: What a SQLite ledger must hold: each table with the columns :data:`_TABLES` gives it.
_LEDGER_COLUMNS: dict[str, tuple[str, ...]] = {
    "meta": ("id", "config", "genesis", "created_at"),
    "events": ("seq", "kind", "release_id", "body", "created_at", "prev_hash", "row_hash"),
    "releases": ("release_id", "charge_seq", "spec", "charge", "slot", "status"),
    "state": ("id", "spent", "next_seq", "head", "next_slot"),
}


def _sqlite_failure(path: str, exc: sqlite3.Error) -> StoreError:
    """One sentence for a SQLite error on a ledger file (corruption, a read-only file, a foreign file)."""
    text = " ".join(str(exc).split())
    if isinstance(exc, sqlite3.DatabaseError) and any(
            w in text for w in ("malformed", "not a database", "disk image", "decode", "no such")):
        return StoreError(f"ledger {path!r} is corrupted or not an optcomp ledger ({text}); "
                          "nothing was changed")
    if "readonly" in text or "read-only" in text:
        return StoreError(f"ledger {path!r} is read-only for this user ({text}); nothing was changed")
    return StoreError(f"ledger {path!r}: {text}")


class SQLiteStore(Store):
    """One SQLite file: WAL, ``synchronous=FULL``, ``foreign_keys=ON``, busy timeout, autocommit
    connection with explicit ``BEGIN IMMEDIATE`` for writes, and a ``wal_checkpoint(TRUNCATE)`` after
    every committed write, so that the main file alone holds every charge a caller has been told about
    (a copy of the file is never missing a charge that returned; ``docs/ledger.md`` §4, Backups).

    ``mode``: ``"create"`` (a new ledger), ``"write"`` (an existing ledger; the file is checked to be one
    before anything is written: a foreign file is refused unchanged) or ``"read"`` (``mode=ro``: for a
    reader without write access, never writes; falls back to ``immutable=1`` when the shared-memory file
    cannot be created and the write-ahead log is empty). Refuses a file whose journal mode does not come
    back as ``wal`` (network file systems); local file systems only."""

    kind = "sqlite"

    def __init__(self, path: str, mode: str = "write") -> None:
        self.path = path
        self.read_only = mode == "read"
        try:
            self._conn = self._connect(mode)
        except sqlite3.Error as exc:  # not a database file, a directory, no permission, corrupted
            raise _sqlite_failure(path, exc) from None

    def _connect(self, mode: str) -> sqlite3.Connection:
        if mode == "read":
            return self._connect_read_only()
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            if mode != "create":
                self._check_tables(conn)  # before the journal-mode switch, which would write a foreign file
            journal = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(journal).lower() != "wal":
                raise StoreError(f"ledger {self.path!r}: journal_mode came back as {journal!r}, not 'wal' "
                                 "(use a local file system)")
            conn.execute("PRAGMA synchronous = FULL")
            conn.execute("PRAGMA foreign_keys = ON")
        except BaseException:
            conn.close()
            raise
        return conn

    def _connect_read_only(self) -> sqlite3.Connection:
        uri = "file:" + urllib.parse.quote(os.path.abspath(self.path)) + "?mode=ro"
        conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
        try:
            conn.execute("PRAGMA query_only = ON")
            self._check_tables(conn)
            return conn
        except BaseException as exc:
            conn.close()
            if not isinstance(exc, sqlite3.OperationalError):
                raise
            wal = self.path + "-wal"
            if "readonly" not in str(exc) and "unable to open" not in str(exc):
                raise
            if os.path.exists(wal) and os.path.getsize(wal) > 0:
                raise StoreError(f"ledger {self.path!r} has a write-ahead log that this user cannot read "
                                 "without write access to its directory; a write command by its owner "
                                 "empties it") from None
        conn = sqlite3.connect(uri + "&immutable=1", uri=True, isolation_level=None, check_same_thread=False)
        try:
            conn.execute("PRAGMA query_only = ON")
            self._check_tables(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    def _check_tables(self, conn: sqlite3.Connection) -> None:
        """Refuse a file that is not an optcomp ledger (a foreign database, an empty file) by name."""
        found: dict[str, tuple[str, ...]] = {}
        for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
            if name in _LEDGER_COLUMNS:
                found[name] = tuple(r[1] for r in conn.execute(f"PRAGMA table_info({name})").fetchall())
        if found != _LEDGER_COLUMNS:
            missing = sorted(set(_LEDGER_COLUMNS) - set(found))
            what = f"no table {', '.join(missing)}" if missing else "its tables have other columns"
            raise StoreError(f"{self.path!r} is not an optcomp ledger ({what}); nothing was changed")

    def create(self, config: str, genesis: str, created_at: str, spent: str) -> None:
        c = self._conn
        c.execute("BEGIN IMMEDIATE")
        try:
            if c.execute("SELECT 1 FROM sqlite_master").fetchone():
                raise StoreError(f"ledger {self.path!r} already exists (a non-empty database)")
            for stmt in re.split(r";\s*\n(?=CREATE)", _TABLES + _SQLITE_TRIGGERS):
                if stmt.strip():
                    c.execute(stmt)
            tx = Tx(c, "?")
            tx.init(config, genesis, created_at, spent)
            tx.ensure_refusals()
            c.execute("COMMIT")
        except BaseException:
            c.execute("ROLLBACK")
            raise
        self._checkpoint()

    def _checkpoint(self) -> None:
        """Copy the write-ahead log into the main file and empty it; raises if it could not complete.

        ``wal_checkpoint(TRUNCATE)`` waits for readers and for the write lock through the busy handler,
        but returns "busy" at once when another connection is checkpointing (SQLite takes the checkpoint
        lock without the busy handler): with many writers that is the common case, so the call is
        repeated (randomised back-off up to :data:`CHECKPOINT_BACKOFF_S`) until it completes or
        :data:`BUSY_TIMEOUT_S` has passed.
        """
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        pause = CHECKPOINT_BACKOFF_S / 64
        while self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]:
            if time.monotonic() >= deadline:
                raise StoreError(f"ledger {self.path!r}: the write committed, but the main file could not be "
                                 f"brought up to date in {BUSY_TIMEOUT_S:g} s (other connections held the log); "
                                 "retry: a retry of a charge returns the same ticket and completes this step")
            time.sleep(pause * (0.5 + random.random()))
            pause = min(2 * pause, CHECKPOINT_BACKOFF_S)

    @contextmanager
    def write(self) -> Iterator[Tx]:
        if self.read_only:
            raise StoreError(f"ledger {self.path!r} was opened read-only; this command needs write access")
        c = self._conn
        try:
            c.execute("BEGIN IMMEDIATE")
            try:
                yield Tx(c, "?")
            except BaseException:
                c.execute("ROLLBACK")
                raise
            c.execute("COMMIT")
            self._checkpoint()
        except sqlite3.Error as exc:
            raise _sqlite_failure(self.path, exc) from None

    @contextmanager
    def read(self) -> Iterator[Tx]:
        c = self._conn
        try:
            c.execute("BEGIN")
            try:
                yield Tx(c, "?")
            finally:
                c.execute("COMMIT")
        except sqlite3.Error as exc:
            raise _sqlite_failure(self.path, exc) from None

    def integrity(self) -> str:
        try:
            rows = self._conn.execute("PRAGMA integrity_check").fetchall()
        except sqlite3.Error as exc:
            return " ".join(str(exc).split())
        return "; ".join(str(r[0]) for r in rows)

    def backup(self, destination: str) -> None:
        """A consistent snapshot into the new file ``destination`` (SQLite's online backup API: pages
        copied under a read transaction, the write-ahead log's commits included)."""
        if os.path.exists(destination):
            raise StoreError(f"backup destination {destination!r} already exists (a backup never overwrites)")
        try:
            dst = sqlite3.connect(destination, isolation_level=None)
            try:
                self._conn.backup(dst)
                dst.execute("PRAGMA journal_mode = WAL")
                dst.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            finally:
                dst.close()
        except sqlite3.Error as exc:
            raise StoreError(f"backup to {destination!r} failed: {' '.join(str(exc).split())}") from None

    def close(self) -> None:
        self._conn.close()


class PostgresStore(Store):
    """A PostgreSQL schema (default ``optcomp_ledger``) reached with psycopg 3; the same tables, with
    PL/pgSQL triggers, and writes serialised by ``SELECT … FOR UPDATE`` on the state row."""

    kind = "postgres"

    def __init__(self, conninfo: str, schema: str = "optcomp_ledger", *, read_only: bool = False) -> None:
        try:
            import psycopg
        except ImportError:  # pragma: no cover - depends on the install
            raise StoreError("PostgreSQL ledgers need psycopg 3: pip install 'optcomp[postgres]'") from None
        if not schema.replace("_", "").isalnum() or not schema[0].isalpha():
            raise ValueError(f"schema must be an identifier (letters, digits, _), got {schema!r}")
        self.schema = schema
        self.read_only = read_only
        self._errors: type[Exception] = psycopg.Error
        try:
            self._conn = psycopg.connect(conninfo, autocommit=False)
        except psycopg.Error as e:
            raise StoreError(f"cannot connect to PostgreSQL: {' '.join(str(e).split())}") from None
        self._conn.execute(f"SET search_path TO {schema}")
        self._conn.commit()

    def _failure(self, exc: Exception) -> StoreError:
        return StoreError(f"PostgreSQL ledger {self.schema!r}: {' '.join(str(exc).split())}")

    def create(self, config: str, genesis: str, created_at: str, spent: str) -> None:
        c = self._conn
        try:
            c.execute(f"CREATE SCHEMA {self.schema}")
            c.execute(f"SET LOCAL search_path TO {self.schema}")
            for stmt in _TABLES.split(";"):
                if stmt.strip():
                    c.execute(stmt)
            c.execute(_PG_TRIGGERS)
            tx = Tx(c.cursor(), "%s")
            tx.init(config, genesis, created_at, spent)
            tx.ensure_refusals()
            c.commit()
        except Exception as e:
            c.rollback()
            if "already exists" in str(e):
                raise StoreError(f"ledger schema {self.schema!r} already exists") from None
            raise
        c.execute(f"SET search_path TO {self.schema}")
        c.commit()

    @contextmanager
    def write(self) -> Iterator[Tx]:
        if self.read_only:
            raise StoreError(f"ledger {self.schema!r} was opened read-only; this command needs write access")
        c = self._conn
        try:
            try:
                cur = c.cursor()
                tx = Tx(cur, "%s")
                tx.state(lock=True)
                yield tx
            except BaseException:
                c.rollback()
                raise
            c.commit()
        except self._errors as exc:
            raise self._failure(exc) from None

    @contextmanager
    def read(self) -> Iterator[Tx]:
        c = self._conn
        try:
            c.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            try:
                yield Tx(c.cursor(), "%s")
            finally:
                c.rollback()
        except self._errors as exc:
            raise self._failure(exc) from None

    def close(self) -> None:
        self._conn.close()


#: What names a ledger: a SQLite file path (``str`` or any ``os.PathLike[str]``, e.g. ``pathlib.Path``) or a
#: ``postgresql://`` conninfo string.
Location = str | os.PathLike[str]


def location_text(location: Location, name: str = "location") -> str:
    """``location`` as the string the stores take (``os.fspath``); ``TypeError`` naming ``name`` for anything
    that is neither a string nor a text path (bytes paths included)."""
    text = os.fspath(location) if isinstance(location, os.PathLike) else location
    if not isinstance(text, str):
        raise TypeError(f"{name} must be a str or an os.PathLike of str (a SQLite file path or a postgresql:// "
                        f"conninfo), got {type(location).__name__}")
    return text


def open_store(location: Location, *, schema: str | None = None, mode: str = "write") -> Store:
    """A :class:`PostgresStore` for ``postgresql://`` / ``postgres://`` locations (``schema`` names the
    ledger inside the database, default ``optcomp_ledger``), else a :class:`SQLiteStore` on the file
    ``location`` (``schema`` refused: it is a PostgreSQL option). ``mode``: ``create``, ``write`` or
    ``read`` (read-only)."""
    location = location_text(location)
    if is_postgres(location):
        return PostgresStore(location, schema or DEFAULT_SCHEMA, read_only=mode == "read")
    if schema is not None:
        raise ValueError(f"schema is a PostgreSQL option; a SQLite ledger ({location!r}) takes none, got {schema!r}")
    return SQLiteStore(location, mode)


def is_postgres(location: Location) -> bool:
    """Whether ``location`` names a PostgreSQL ledger (a ``postgresql://`` or ``postgres://`` conninfo)."""
    return location_text(location).startswith(("postgresql://", "postgres://"))

"""Benchmark of :mod:`optcomp.ledger`: charges through one zCDP filter, durable, on SQLite (and PostgreSQL).

Rows (each on a fresh ledger, budget (ε, δ) = (1, 1e-6), every release PureDP("0.0001")):

* ``charge`` — one transaction per charge (``BEGIN IMMEDIATE`` … ``COMMIT`` with ``synchronous=FULL``,
  then on SQLite a ``wal_checkpoint(TRUNCATE)`` that puts the charge into the main file: the durable
  protocol a caller uses when each release runs right after its charge);
* ``charge, no checkpoint`` (SQLite, for comparison only: not the shipped protocol) — the same with the
  checkpoint switched off, i.e. the protocol before issue 27 A, so that the checkpoint's cost is a
  ratio within one run;
* ``charge_many(1000)`` — the same charges committed 1000 per transaction (releases declared up front);
* ``verify`` — re-walking the whole chain afterwards.

Counts 10³ and 10⁴, so that the per-charge cost shows whether the cost is linear in the count (the
cached state makes each charge O(1)). ``--postgres CONNINFO`` adds the same rows on PostgreSQL (each run
in a fresh schema, dropped afterwards). Every row is cold (``benchmarks/_cold.py``): it runs in a fresh interpreter
that imported optcomp and computed nothing else (the currency's caches empty). Writes
``benchmarks/RESULTS_ledger.md``.
Run: ``PYTHONPATH=src python benchmarks/bench_ledger.py [--postgres CONNINFO]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from optcomp.ledger import Ledger, PureDP

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _cold  # the cold-timing policy and tools (benchmarks/_cold.py)

RELEASE = PureDP("0.0001")
COUNTS = (1_000, 10_000)
BATCH = 1000


def _sqlite_site() -> tuple[Callable[[], Ledger], Callable[[], None]]:
    d = tempfile.mkdtemp(prefix="optcomp-bench-", dir=str(HERE))
    path = os.path.join(d, "bench.ledger")

    def make() -> Ledger:
        return Ledger.create(path, dataset="bench", relation="add_remove", epsilon=1, delta="1e-6", currency="zcdp")

    return make, lambda: shutil.rmtree(d, ignore_errors=True)


def _postgres_site(conninfo: str, n: int) -> tuple[Callable[[], Ledger], Callable[[], None]]:
    import psycopg

    schema = f"bench_{os.getpid()}_{n}_{int(time.time() * 1000) % 10**6}"

    def make() -> Ledger:
        return Ledger.create(conninfo, schema=schema, dataset="bench", relation="add_remove", epsilon=1,
                             delta="1e-6", currency="zcdp")

    def drop() -> None:
        with psycopg.connect(conninfo, autocommit=True) as c:
            c.execute(f"DROP SCHEMA {schema} CASCADE")

    return make, drop


def run(site: Callable[[int], tuple[Callable[[], Ledger], Callable[[], None]]], n: int, batched: bool,
        checkpoint: bool = True) -> tuple[float, float]:
    make, cleanup = site(n)
    led = make()
    if not checkpoint:
        led._store._checkpoint = lambda: None  # type: ignore[attr-defined]
    try:
        t0 = time.perf_counter()
        if batched:
            for start in range(0, n, BATCH):
                led.charge_many([(f"r{i}", RELEASE) for i in range(start, min(n, start + BATCH))])
        else:
            for i in range(n):
                led.charge(f"r{i}", RELEASE)
        charge_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        ok = led.verify().ok
        verify_s = time.perf_counter() - t0
        if not ok or led.spent()[0] != n * RELEASE.epsilon**2 / 2:
            raise RuntimeError("benchmark ledger failed verification")
    finally:
        led.close()
        cleanup()
    return charge_s, verify_s


def _row(store: str, conninfo: str | None, n: int, batched: bool, checkpoint: bool) -> list[float]:
    """One row in this (fresh) interpreter: (charge seconds, verify seconds)."""
    site = (lambda k: _sqlite_site()) if store == "SQLite" else (lambda k: _postgres_site(str(conninfo), k))
    return list(run(site, n, batched, checkpoint))


CELLS = {"row": _row}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--postgres", default=None, help="conninfo of a PostgreSQL server to include")
    args = ap.parse_args()
    sites = ["SQLite", *(["PostgreSQL"] if args.postgres else [])]
    rows = []
    plan = [(name, batched, True) for name in sites for batched in (False, True)]
    plan.insert(1, ("SQLite", False, False))
    for name, batched, checkpoint in plan:
        for n in COUNTS:
            out = _cold.cold(__file__, "row", name, args.postgres, n, batched, checkpoint, timeout=3600.0)
            if "error" in out:
                raise RuntimeError(f"{name} {n}: {out['error']}")
            charge_s, verify_s = out["value"]
            mode = f"charge_many({BATCH})" if batched else "charge" if checkpoint else "charge, no checkpoint"
            rows.append(f"| {name} | {mode} | {n} | {charge_s:.2f} | {1e3 * charge_s / n:.3f} | {verify_s:.2f} |")
            print(rows[-1], flush=True)
    text = [
        "# Privacy ledger: charges through one zCDP filter",
        "",
        (f"Machine: {platform.machine()}, Python {platform.python_version()}, {os.cpu_count()} cores (shared). "
        "Produced by `benchmarks/bench_ledger.py`; every row is cold (a fresh interpreter that computed nothing "
        "before it). Every charge is durable: SQLite in WAL mode with "
        "`synchronous=FULL` (an fsync of the log per COMMIT) and a `wal_checkpoint(TRUNCATE)` after it "
        "(the charge copied into the main file, so that a copy of the file holds it: docs/ledger.md §4), "
        "PostgreSQL with its default `fsync=on`, `synchronous_commit=on`. Admission replays the hash "
        "chain appended since the last charge and checks the cached state against it. "
        "Budget (1, 1e-6), zcdp currency, each release PureDP(0.0001)."),
        "",
        "| store | protocol | charges | seconds | ms / charge | verify() s |",
        "|---|---|---|---|---|---|",
        *rows,
        "",
        ("`charge`: one transaction per release (the caller runs each mechanism after its own commit), so "
        "its cost is the store's commit latency (on this machine's disk, mostly the fsync). "
        "`charge, no checkpoint`: the SQLite protocol before the checkpoint was added, for the ratio "
        "only (a copy of such a file can miss charges). "
        f"`charge_many({BATCH})`: {BATCH} releases declared up front and committed together. "
        "The per-charge cost at 10³ and 10⁴ shows whether the cost is linear in the count."),
    ]
    (HERE / "RESULTS_ledger.md").write_text("\n".join(text) + "\n", encoding="utf-8")


if __name__ == "__main__" and not _cold.cold_cells(CELLS, sys.argv[1:], peers=("optcomp.ledger",)):
    main()

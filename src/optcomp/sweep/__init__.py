"""Sweeps: thousands of certified DP-SGD configurations, with shared work, stored as they finish.

::

    from optcomp import sweep
    points = sweep.load_grid("grid.toml")            # validated up front (ValueError naming row + parameter)
    summary = sweep.run(points, "grid.sqlite")       # a local process pool; rows written as they finish
    rows = sweep.Store("grid.sqlite").rows(points)   # every row: a certified bracket and its relation

* the grid spec (TOML/JSON: lists, ranges, log-ranges; product or zip; queries ε at δ, δ at ε, σ or T for
  a target ε): :mod:`optcomp.sweep._spec`;
* the evaluation and its reuse of work (one realisation per composed PLD answers every query; one
  grid-step schedule along T), with its soundness argument: :mod:`optcomp.sweep._evaluate`;
* the SQLite store (resumable, ``kill -9``-safe) and the CSV/Parquet/JSON exports: :mod:`optcomp.sweep._store`;
* the executors (in-process, local process pool, Dask ``distributed``): :mod:`optcomp.sweep._executors`.

``docs/sweep.md`` has the format, the guarantees and the measurements.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from optcomp._numerics import Progress
from optcomp.sweep._evaluate import Row, chain_key, evaluate_task
from optcomp.sweep._executors import (
    DaskCluster,
    Executor,
    InProcess,
    ProcessPool,
    WorkersLost,
    default_workers,
)
from optcomp.sweep._spec import QUERIES, Point, grid_points, load_grid
from optcomp.sweep._store import Store, StoreError, records, to_json, write_csv, write_parquet

__all__ = [
    "QUERIES",
    "DaskCluster",
    "InProcess",
    "Point",
    "ProcessPool",
    "Row",
    "Store",
    "StoreError",
    "Summary",
    "WorkersLost",
    "grid_points",
    "load_grid",
    "plan_tasks",
    "records",
    "run",
    "to_json",
    "write_csv",
    "write_parquet",
]

#: Tasks per worker the chains are packed into (load balance against per-task overhead): chain costs differ
#: by 10× and more on one grid (tiny-q chains refine to the memory cap), so the last task to finish should
#: be short; a task still holds seconds of compute against milliseconds of dispatch (RESULTS_sweep.md).
TASKS_PER_WORKER = 32
#: Relative cost of one inverse point (a σ or T search: tens of evaluations) against one ε/δ point.
_INVERSE_COST = 20


@dataclass(frozen=True)
class Summary:
    """What a :func:`run` did.

    Attributes:
        points: points in the grid.
        skipped: points already in the store (not recomputed).
        written: rows written by this run.
        errors: rows of this run that store an error.
        tasks: tasks dispatched.
        workers: the executor's workers.
        seconds: wall-clock seconds of the run.
        compute_seconds: CPU seconds the workers spent inside the tasks (their sum).
    """

    points: int
    skipped: int
    written: int
    errors: int
    tasks: int
    workers: int
    seconds: float
    compute_seconds: float


def plan_tasks(points: Sequence[Point], workers: int) -> list[list[list[Point]]]:
    """The points grouped into chains (:func:`optcomp.sweep._evaluate.chain_key`, in order of first
    appearance) and the chains packed, in order, into about ``TASKS_PER_WORKER × workers`` tasks of
    similar estimated cost (a chain is never split: its rows depend on it whole)."""
    chains: dict[tuple[object, ...], list[Point]] = {}
    for p in points:
        chains.setdefault(chain_key(p), []).append(p)
    cost = [len(c) * (_INVERSE_COST if c[0].query not in ("epsilon", "delta") else 1) for c in chains.values()]
    target = max(1.0, sum(cost) / (TASKS_PER_WORKER * max(1, workers)))
    tasks: list[list[list[Point]]] = []
    load = math.inf
    for chain, c in zip(chains.values(), cost, strict=True):
        if load >= target:
            tasks.append([])
            load = 0.0
        tasks[-1].append(chain)
        load += c
    return tasks


def _local_workers(workers: int | None) -> int:
    n = default_workers() if workers is None else workers
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"workers must be an integer >= 1, got {n!r}")
    return n


def run(
    points: Sequence[Point],
    store: Store | str | os.PathLike[str],
    *,
    workers: int | None = None,
    scheduler: str | Any | None = None,
    progress: Progress | None = None,
) -> Summary:
    """Evaluate every point of ``points`` not yet in ``store``, writing rows as tasks finish.

    Args:
        points: validated points (:func:`load_grid` / :func:`grid_points`).
        store: a :class:`Store` or the path (``str`` or ``os.PathLike``) of its SQLite file (created if absent; a file that is not a
            sweep store — another database, an optcomp ledger, a text file — is refused with
            :class:`StoreError`, untouched).
        workers: local processes (default: the cores this process may use; 1: in this process). A grid
            of one task runs in this process.
        scheduler: a Dask scheduler address ``tcp://HOST:PORT`` (or a ``distributed.Client``); then
            ``workers`` is ignored.
        progress: called with (points finished, points in the grid) after each task.

    Returns:
        A :class:`Summary`.

    Raises:
        WorkersLost: workers died mid-sweep more often than their tasks are re-run (a local pool is
            replaced :data:`~optcomp.sweep._executors.POOL_RESTARTS` times; Dask reschedules a task
            ``allowed-failures`` times); the finished rows are stored.
        TimeoutError: a Dask scheduler without any worker for
            :data:`~optcomp.sweep._executors.DASK_WORKER_WAIT_S` seconds.
    """
    start = time.perf_counter()
    n = _local_workers(workers) if scheduler is None else 1
    db = store if isinstance(store, Store) else Store(store)
    try:
        done = db.done(p.key for p in points)
        todo = [p for p in points if p.key not in done]
        executor: Executor
        if not todo:
            executor, tasks = InProcess(), []
        elif scheduler is not None:  # chains packed for the cluster's workers, not this machine's cores
            executor = DaskCluster(scheduler)
            tasks = plan_tasks(todo, executor.workers)
        else:
            tasks = plan_tasks(todo, n)
            executor = InProcess() if n == 1 or len(tasks) <= 1 else ProcessPool(min(n, len(tasks)))
        finished = len(points) - len(todo)
        if progress is not None:
            progress(finished, len(points))
        written = errors = 0
        compute = 0.0
        try:
            for _, (rows, seconds) in executor.map_unordered(evaluate_task, tasks):
                written += db.write(rows)
                errors += sum(r.error is not None for r in rows)
                compute += seconds
                finished += len(rows)
                if progress is not None:
                    progress(finished, len(points))
        finally:
            executor.close()
        return Summary(len(points), len(points) - len(todo), written, errors, len(tasks), executor.workers,
                       time.perf_counter() - start, compute)
    finally:
        if db is not store:
            db.close()

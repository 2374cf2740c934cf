"""Executors: where a sweep's tasks run. One interface, three places (``docs/sweep.md``, "Executors").

* :class:`InProcess` — the calling process (small grids, ``workers=1``, debugging);
* :class:`ProcessPool` — a local pool of ``workers`` processes (the default; ``forkserver`` start, the
  sweep modules preloaded);
* :class:`DaskCluster` — a Dask ``distributed`` scheduler (``tcp://HOST:PORT``, the ``dask`` extra).
  A worker lost mid-task is the scheduler's to handle: it reschedules the task on another worker
  (``distributed.scheduler.allowed-failures`` times); the row is written once because only this
  process writes rows, on a task's result, keyed by the point.

Each yields ``(task number, result)`` as tasks finish, in any order. Workers run single-threaded BLAS
(threadpoolctl), so that ``workers`` processes use ``workers`` cores.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any, Protocol, TypeVar

T = TypeVar("T")
R = TypeVar("R")

#: Times Dask may re-run a task that *raised* (a lost worker is rescheduled by the scheduler itself).
DASK_RETRIES = 2


def single_threaded(fn: Callable[[T], R], arg: T) -> R:
    """``fn(arg)`` with BLAS/OpenMP pools limited to one thread (where threadpoolctl is installed)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl is a dependency; without it BLAS keeps its pool
        return fn(arg)
    with threadpool_limits(limits=1):
        return fn(arg)


class Executor(Protocol):
    """Runs ``fn`` on each task; yields ``(task number, result)`` as they finish."""

    workers: int

    def map_unordered(self, fn: Callable[[T], R], tasks: Sequence[T]) -> Iterator[tuple[int, R]]: ...

    def close(self) -> None: ...


class InProcess:
    """Tasks run one after the other in this process."""

    workers = 1

    def map_unordered(self, fn: Callable[[T], R], tasks: Sequence[T]) -> Iterator[tuple[int, R]]:
        for i, task in enumerate(tasks):
            yield i, fn(task)

    def close(self) -> None:
        """Nothing to release."""


class ProcessPool:
    """A local process pool of ``workers`` processes."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["optcomp.sweep._evaluate"])
        self._pool = ProcessPoolExecutor(max_workers=workers, mp_context=ctx)

    def map_unordered(self, fn: Callable[[T], R], tasks: Sequence[T]) -> Iterator[tuple[int, R]]:
        pending: dict[Future[R], int] = {self._pool.submit(single_threaded, fn, t): i for i, t in enumerate(tasks)}
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for f in finished:
                yield pending.pop(f), f.result()

    def close(self) -> None:
        """Shut the pool down (running tasks are cancelled where they have not started)."""
        self._pool.shutdown(wait=True, cancel_futures=True)


class DaskCluster:
    """Tasks submitted to a Dask ``distributed`` scheduler (an address, or a ``Client`` already made)."""

    def __init__(self, scheduler: str | Any) -> None:
        try:
            from distributed import Client
        except ImportError as exc:  # pragma: no cover - exercised only without the extra
            raise ImportError("a Dask scheduler needs distributed: pip install 'optcomp[dask]'") from exc
        if isinstance(scheduler, str):
            if not scheduler.startswith(("tcp://", "tls://", "inproc://", "ws://", "wss://")):
                raise ValueError(f"scheduler must be an address such as tcp://HOST:PORT, got {scheduler!r}")
            self._client = Client(scheduler, set_as_default=False)  # type: ignore[no-untyped-call]
            self._own = True
        else:
            self._client, self._own = scheduler, False
        workers = len(self._client.scheduler_info().get("workers", {}))
        self.workers = max(1, workers)

    def map_unordered(self, fn: Callable[[T], R], tasks: Sequence[T]) -> Iterator[tuple[int, R]]:
        from distributed import as_completed

        futures = {
            self._client.submit(single_threaded, fn, t, pure=False, retries=DASK_RETRIES): i
            for i, t in enumerate(tasks)
        }
        for f in as_completed(list(futures)):  # type: ignore[no-untyped-call]
            yield futures[f], f.result()

    def close(self) -> None:
        """Close the client if this executor made it."""
        if self._own:
            self._client.close()  # type: ignore[no-untyped-call]


def default_workers() -> int:
    """The number of cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - platforms without sched_getaffinity
        return os.cpu_count() or 1

"""Executors: where a sweep's tasks run. One interface, three places (``docs/sweep.md``, "Executors").

* :class:`InProcess` — the calling process (small grids, ``workers=1``, debugging);
* :class:`ProcessPool` — a local pool of ``workers`` processes (the default; ``forkserver`` start, the
  sweep modules preloaded). Its workers exit when this process dies, however it dies (``kill -9``
  included): each holds the read end of a *lifeline* pipe whose only write end this process holds, and a
  watchdog thread in the worker exits on its end-of-file. (A worker's parent is the forkserver, not this
  process, and the forkserver lives until its workers exit — they hold its "alive" descriptor — so neither
  ``PR_SET_PDEATHSIG`` nor polling ``os.getppid()`` would fire; with the workers gone, the forkserver and
  the resource tracker see end-of-file and exit too.) A worker that dies mid-sweep (killed, out of memory)
  breaks the pool: the tasks without a result are run again on a fresh pool, at most
  :data:`POOL_RESTARTS` times, then :class:`WorkersLost` is raised.
* :class:`DaskCluster` — a Dask ``distributed`` scheduler (``tcp://HOST:PORT``, or a ``Client``; the
  ``dask`` extra). Everything goes through the executor's own client (``Client.submit``,
  ``as_completed(loop=client.loop)``, ``Client.cancel``), never Dask's *default* client, so an address
  works without making its client the process's default. A worker lost mid-task is the scheduler's to
  handle: it reschedules the task on another worker (``distributed.scheduler.allowed-failures`` times,
  then :class:`WorkersLost`); the row is written once because only this process writes rows, on a task's
  result, keyed by the point.

Each yields ``(task number, result)`` as tasks finish, in any order. Workers run single-threaded BLAS
(threadpoolctl), so that ``workers`` processes use ``workers`` cores.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from multiprocessing.connection import Connection
from typing import Any, Protocol, TypeVar

from optcomp._threads import call_single_threaded

T = TypeVar("T")
R = TypeVar("R")

#: Times Dask may re-run a task that *raised* (a lost worker is rescheduled by the scheduler itself).
DASK_RETRIES = 2
#: Seconds to wait for a first worker to join a Dask scheduler that has none (then ``TimeoutError``).
DASK_WORKER_WAIT_S = 60.0
#: Times a local pool broken by a dead worker is replaced and its unfinished tasks re-run.
POOL_RESTARTS = 2
#: Exit status of a pool worker whose parent died (the lifeline's watchdog).
ORPHAN_EXIT_STATUS = 3


class WorkersLost(RuntimeError):
    """Workers died mid-sweep more often than the executor re-runs their tasks; the rows of the tasks
    that finished are stored (a re-run of the same grid resumes from them)."""


def exit_with_parent(lifeline: Connection) -> None:
    """A pool worker's initializer: a daemon thread that ends this process (``os._exit``) as soon as
    ``lifeline`` reads end-of-file — when the process holding its write end has died or closed it."""

    def watch() -> None:
        try:
            lifeline.recv_bytes()
        except (EOFError, OSError):
            pass
        os._exit(ORPHAN_EXIT_STATUS)

    threading.Thread(target=watch, name="optcomp-lifeline", daemon=True).start()


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
    """A local process pool of ``workers`` processes that exit with this one (the module docstring)."""

    def __init__(self, workers: int, *, restarts: int = POOL_RESTARTS) -> None:
        self.workers = workers
        self.restarts = restarts
        self._ctx = multiprocessing.get_context("forkserver")
        self._ctx.set_forkserver_preload(["optcomp.sweep._evaluate"])
        self._lifeline, self._lifeline_end = self._ctx.Pipe(duplex=False)  # (read end, write end)
        self._pool = self._new_pool()

    def _new_pool(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(max_workers=self.workers, mp_context=self._ctx,
                                   initializer=exit_with_parent, initargs=(self._lifeline,))

    def map_unordered(self, fn: Callable[[T], R], tasks: Sequence[T]) -> Iterator[tuple[int, R]]:
        todo = dict(enumerate(tasks))
        breaks = 0
        while todo:
            pending: dict[Future[R], int] = {}
            broken = False
            try:
                for i, t in todo.items():
                    pending[self._pool.submit(call_single_threaded, fn, t)] = i
            except BrokenProcessPool:  # a worker died while tasks were being submitted
                broken = True
            while pending and not broken:
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for f in finished:
                    if isinstance(f.exception(), BrokenProcessPool):
                        broken = True
                        continue
                    i = pending.pop(f)
                    result = f.result()  # a task's own exception propagates
                    del todo[i]
                    yield i, result
            if not broken:
                continue
            wait(pending)  # a broken pool fails every pending task at once; keep those that finished first
            for f, i in pending.items():
                if f.exception() is None:
                    del todo[i]
                    yield i, f.result()
            breaks += 1
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = self._new_pool()  # (processes start on the first submit)
            if breaks > self.restarts:
                raise WorkersLost(
                    f"a worker process of the local pool died {breaks} times (killed, or out of memory?); "
                    f"{len(todo)} of {len(tasks)} tasks unfinished; the finished rows are stored and the same "
                    "command resumes from them (--workers 1 runs in this process)")

    def close(self) -> None:
        """Shut the pool down (running tasks are cancelled where they have not started)."""
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._lifeline_end.close()
        self._lifeline.close()


class DaskCluster:
    """Tasks submitted to a Dask ``distributed`` scheduler (an address, or a ``Client`` already made)."""

    def __init__(self, scheduler: str | Any, *, worker_wait_s: float | None = None) -> None:
        try:
            from distributed import Client
        except ImportError as exc:  # pragma: no cover - exercised only without the extra
            raise ImportError("a Dask scheduler needs distributed: pip install 'optcomp[dask]'") from exc
        if isinstance(scheduler, str):
            if not scheduler.startswith(("tcp://", "tls://", "inproc://", "ws://", "wss://")):
                raise ValueError(f"scheduler must be an address such as tcp://HOST:PORT, got {scheduler!r}")
            # not the process's default client: everything below names this client
            make: Any = Client  # distributed is untyped: its client is held as Any
            self._client: Any = make(scheduler, set_as_default=False)
            self._own = True
        else:
            self._client, self._own = scheduler, False
        address = scheduler if isinstance(scheduler, str) else str(getattr(self._client.scheduler, "address", "?"))
        wait_s = DASK_WORKER_WAIT_S if worker_wait_s is None else worker_wait_s
        try:
            if not self._client.scheduler_info().get("workers"):
                try:
                    self._client.wait_for_workers(1, timeout=wait_s)
                except TimeoutError:
                    raise TimeoutError(f"no Dask worker joined the scheduler {address} within {wait_s:g} s "
                                       f"(start one: dask worker {address})") from None
            self.workers = max(1, len(self._client.scheduler_info().get("workers", {})))
        except BaseException:
            self.close()
            raise

    def map_unordered(self, fn: Callable[[T], R], tasks: Sequence[T]) -> Iterator[tuple[int, R]]:
        from distributed import as_completed as untyped_as_completed
        from distributed.scheduler import KilledWorker

        as_completed: Any = untyped_as_completed

        futures = {
            self._client.submit(call_single_threaded, fn, t, pure=False, retries=DASK_RETRIES): i
            for i, t in enumerate(tasks)
        }
        try:
            for f in as_completed(list(futures), loop=self._client.loop):
                try:
                    result = f.result()
                except KilledWorker as exc:
                    raise WorkersLost(f"Dask workers died running one task too often ({exc}); the finished rows "
                                      "are stored and the same command resumes from them") from None
                yield futures[f], result
        finally:  # stopped early (an error, a closed generator): the cluster stops working on this sweep
            left = [f for f in futures if not f.done()]
            if left:
                self._client.cancel(left)

    def close(self) -> None:
        """Close the client if this executor made it."""
        if self._own:
            self._client.close()


def default_workers() -> int:
    """The number of cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - platforms without sched_getaffinity
        return os.cpu_count() or 1

"""Planning off the event loop: one worker process per ``POST /api/plan``, killed at a time limit.

A thread cannot be stopped, a process can: each request's plan is computed by :func:`_plan_in_worker` in
a child process (started from a fork server that has already imported the planner, so a start costs
milliseconds; ``spawn`` where there is no fork server), awaited from a thread so that the event loop
keeps answering other requests. At most ``MAX_WORKERS`` run at once (others wait for a slot within the
same time limit). A worker that runs past the limit is killed and the request answered with a
:class:`RequestError` naming the limit. The event loop never blocks, so Ctrl-C and SIGTERM
are honoured: the server stops once the requests in flight end (within the time limit; uvicorn exits at
once on a second Ctrl-C), and the lifespan shutdown kills any worker still running. A worker the OS
refuses to start (``OSError`` from fork or the pipe) is logged on the ``optcomp.web`` logger and the
request answered 503 with that error; any other start failure propagates as itself.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import multiprocessing
import threading
from multiprocessing.connection import Connection
from multiprocessing.context import BaseContext
from multiprocessing.process import BaseProcess
from typing import Any

import anyio.to_thread

from optcomp.planner import Plan, PlanError, plan_all, plan_to_dict, result_to_dict


class RequestError(ValueError):
    """A request the API refuses: one line, an HTTP status (4xx), and the field/statistic it is about."""

    def __init__(self, message: str, *, status: int = 422, field: str | None = None, index: int | None = None):
        super().__init__(message)
        self.status = status
        self.field = field
        self.index = index


#: Seconds one plan may compute before its worker is killed.
PLAN_TIME_LIMIT = 30.0
#: Plans computed at once (each in its own process); further requests wait for a slot.
MAX_WORKERS = 2
#: Seconds a killed worker is given to exit before the next request proceeds regardless.
_JOIN_SECONDS = 2.0

_log = logging.getLogger("optcomp.web")


def _context() -> BaseContext:
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["optcomp.planner"])
        return ctx
    return multiprocessing.get_context("spawn")


def _finite(x: Any) -> Any:
    """JSON cannot carry NaN/inf: non-finite floats become strings (as :func:`result_to_dict` does)."""
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_finite(v) for v in x]
    return x


def _plan_in_worker(conn: Connection, plan: Plan, modes: list[str]) -> None:
    """Child process: plan, and send back ``("ok", json text)`` or ``("error", message, field, index)``."""
    try:
        results = plan_all(plan, modes)
        payload = {"ok": True, "plan": plan_to_dict(plan), "result": result_to_dict(results)}
        conn.send(("ok", json.dumps(_finite(payload), allow_nan=False)))
    except PlanError as exc:
        conn.send(("error", str(exc), exc.field, exc.index))
    except (ValueError, ArithmeticError, MemoryError, NotImplementedError) as exc:
        conn.send(("error", f"plan: {type(exc).__name__}: {exc}", None, None))
    finally:
        conn.close()


class PlanRunner:
    """Runs plans in worker processes with a per-request time limit (see the module docstring)."""

    def __init__(self, *, time_limit: float = PLAN_TIME_LIMIT, workers: int = MAX_WORKERS) -> None:
        self.time_limit = time_limit
        self.workers = workers
        self._slots: asyncio.Semaphore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._live: set[BaseProcess] = set()
        self._lock = threading.Lock()
        self._ctx: Any = None  # a forkserver or spawn context (BaseContext does not declare Process)

    async def run(self, plan: Plan, modes: list[str]) -> bytes:
        """The JSON answer for ``plan`` (``ValueError`` with ``field``/``index`` if it is refused)."""
        loop = asyncio.get_running_loop()
        if self._slots is None or self._loop is not loop:  # one semaphore per event loop (test clients)
            self._slots, self._loop = asyncio.Semaphore(self.workers), loop
        try:
            await asyncio.wait_for(self._slots.acquire(), timeout=self.time_limit)
        except TimeoutError as exc:
            raise RequestError(f"the planner is busy: no worker free within {self.time_limit:g} s; try again",
                               status=503) from exc
        try:
            answer = await anyio.to_thread.run_sync(self._run_blocking, plan, modes)
        finally:
            self._slots.release()
        if answer[0] == "ok":
            return str(answer[1]).encode()
        if answer[0] == "unstarted":
            raise RequestError(f"plan: the server could not start a planner worker ({answer[1]}); try again",
                               status=503)
        if answer[0] == "timeout":
            raise RequestError(f"plan: planning took longer than the server's limit of {self.time_limit:g} s and "
                               "was stopped; plan fewer statistics or fewer modes (or use optcomp plan)")
        raise PlanError(str(answer[1]), field=answer[2], index=answer[3])

    def _run_blocking(self, plan: Plan, modes: list[str]) -> tuple[Any, ...]:
        """The worker's answer, ``("timeout",)``, or ``("unstarted", message)`` where the OS refused a
        process (the error is logged). Any other failure to start propagates as itself: the cleanup
        touches only a process that started (``join`` of an unstarted one raises an AssertionError that
        would replace the real error)."""
        if self._ctx is None:
            self._ctx = _context()
        try:
            receive, send = self._ctx.Pipe(duplex=False)
        except OSError as exc:  # out of file descriptors
            return self._unstarted(exc)
        proc = self._ctx.Process(target=_plan_in_worker, args=(send, plan, modes), daemon=True)
        started = False
        with self._lock:
            self._live.add(proc)
        try:
            try:
                proc.start()
            except OSError as exc:  # fork/exec refused (EAGAIN, ENOMEM, EMFILE): a server condition
                return self._unstarted(exc)
            started = True
            send.close()
            if receive.poll(self.time_limit):
                try:
                    answer: tuple[Any, ...] = receive.recv()
                except EOFError:  # the worker died without an answer (killed at shutdown, out of memory)
                    answer = ("error", "plan: the planner worker stopped without an answer", None, None)
                return answer
            return ("timeout",)
        finally:
            if started:
                if proc.is_alive():
                    proc.kill()
                proc.join(_JOIN_SECONDS)
            send.close()  # a no-op once closed; closes it where the start failed
            receive.close()
            with self._lock:
                self._live.discard(proc)

    @staticmethod
    def _unstarted(exc: OSError) -> tuple[str, str]:
        _log.error("could not start a planner worker: %s: %s", type(exc).__name__, exc, exc_info=exc)
        return ("unstarted", f"{type(exc).__name__}: {exc}")

    def shutdown(self) -> None:
        """Kill every live worker (the server is stopping)."""
        with self._lock:
            live = list(self._live)
        for proc in live:
            if proc.is_alive():
                proc.kill()

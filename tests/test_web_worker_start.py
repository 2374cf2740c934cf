"""A planner worker that cannot start: the real error reaches the user and the log (``web/_worker.py``).

Before the fix, the cleanup of a failed ``Process.start()`` called ``join()`` on a process that never
started, whose ``AssertionError('can only join a started process')`` replaced the real error. A failure
to start is planted here: the OS refusing a process (``OSError``, e.g. ``EAGAIN`` from fork) is answered
503 with its message and logged; any other error propagates as itself; the pipe's ends are closed.
"""

from __future__ import annotations

import errno
import logging
import warnings
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

with warnings.catch_warnings():  # starlette's note that its TestClient will move to httpx2
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from optcomp.planner import plan_from_dict
from optcomp.web import _worker, create_app

PLAN: dict[str, Any] = {"epsilon": 1.0, "delta": 1e-6, "dataset_size": 1000,
                        "statistics": [{"name": "n", "kind": "count"}]}


class _FailingStart:
    """A multiprocessing context whose processes raise ``error`` from ``start()``; it keeps the pipe ends."""

    def __init__(self, error: BaseException) -> None:
        self._real: Any = _worker._context()  # BaseContext does not declare Process
        self._error = error
        self.connections: list[Any] = []

    def Pipe(self, duplex: bool = True) -> Any:
        ends = self._real.Pipe(duplex=duplex)
        self.connections += ends
        return ends

    def Process(self, **kwargs: Any) -> Any:
        proc = self._real.Process(**kwargs)
        error = self._error

        def start() -> None:
            raise error

        proc.start = start
        return proc


def test_os_refusing_a_worker_is_a_503_naming_the_real_error(caplog: pytest.LogCaptureFixture) -> None:
    ctx = _FailingStart(OSError(errno.EAGAIN, "planted: fork refused"))
    app = create_app()
    client = TestClient(app, raise_server_exceptions=False)
    runner = _runner_of(app)
    runner._ctx = ctx
    with caplog.at_level(logging.ERROR, logger="optcomp.web"):
        r = client.post("/api/plan", json={"plan": PLAN, "modes": ["basic"]})
    assert r.status_code == 503, r.text
    body = r.json()
    assert body["ok"] is False and "planted: fork refused" in body["error"]
    assert "could not start a planner worker" in body["error"] and "AssertionError" not in body["error"]
    assert any("planted: fork refused" in rec.getMessage() or (rec.exc_info and "planted" in str(rec.exc_info[1]))
               for rec in caplog.records), caplog.records
    assert ctx.connections and all(c.closed for c in ctx.connections)
    assert not runner._live


def test_other_start_errors_propagate_as_themselves() -> None:
    runner = _worker.PlanRunner(time_limit=5.0)
    ctx = _FailingStart(RuntimeError("planted: cannot pickle the plan"))
    runner._ctx = ctx
    with pytest.raises(RuntimeError, match="planted: cannot pickle the plan"):
        runner._run_blocking(plan_from_dict(PLAN), ["basic"])
    assert all(c.closed for c in ctx.connections) and not runner._live


def _runner_of(app: Any) -> _worker.PlanRunner:
    """The app's PlanRunner, found through the /api/plan route's closure."""
    route = next(r for r in app.routes if getattr(r, "path", "") == "/api/plan")
    cells = [c.cell_contents for c in (route.endpoint.__closure__ or ())]
    inner = next(c for c in cells if callable(c))
    return next(c.cell_contents for c in inner.__closure__ if isinstance(c.cell_contents, _worker.PlanRunner))

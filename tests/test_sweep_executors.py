"""optcomp.sweep executors: the local process pool, a real Dask LocalCluster, and the CLI as a user types
it — against ``dask scheduler`` and two ``dask worker`` processes on 127.0.0.1 (plainly, then with one worker
SIGKILLed while it holds a task), with a local pool worker SIGKILLed mid-sweep, with ``kill -9`` of the CLI
(no worker, forkserver or resource tracker left behind), and at random moments followed by a re-run: every
row present once and bit-identical to an uninterrupted in-process run."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

from optcomp import sweep
from optcomp.sweep import _executors
from tests import _pool_tasks
from tests.tolerances import SWEEP_RELATIVE_WIDTH

distributed = pytest.importorskip("distributed")

#: Seconds allowed for a scheduler/worker process to come up on a loaded machine.
_START_TIMEOUT_S = 120.0

GRID = f"""
query = "epsilon"
[accuracy]
relative_width = {SWEEP_RELATIVE_WIDTH}
[axes]
noise_multiplier = [0.9, 1.3, 2.0]
sampling_rate = [0.01, 0.05]
steps = [10, 100, 400]
delta = [1e-5, 1e-7]
"""


@pytest.fixture(scope="module")
def points(tmp_path_factory: pytest.TempPathFactory) -> list[sweep.Point]:
    path = tmp_path_factory.mktemp("grid") / "grid.toml"
    path.write_text(GRID)
    return sweep.load_grid(path)


@pytest.fixture(scope="module")
def reference(points: list[sweep.Point], tmp_path_factory: pytest.TempPathFactory) -> list[sweep.Row]:
    """The uninterrupted in-process run."""
    db = tmp_path_factory.mktemp("ref") / "ref.sqlite"
    sweep.run(points, db, workers=1)
    with sweep.Store(db) as store:
        rows = store.rows(points)
    assert len(rows) == len(points) and all(r.error is None for r in rows)
    return rows


def _stored(points: list[sweep.Point], db: Path) -> list[sweep.Row]:
    with sweep.Store(db) as store:
        assert store.count() == len({p.key for p in points})
        return store.rows(points)


def test_process_pool_gives_the_in_process_rows(points: list[sweep.Point], reference: list[sweep.Row],
                                                tmp_path: Path) -> None:
    s = sweep.run(points, tmp_path / "pool.sqlite", workers=2)
    assert s.workers == 2 and s.tasks > 1
    assert _stored(points, tmp_path / "pool.sqlite") == reference


def test_local_cluster_gives_the_in_process_rows(points: list[sweep.Point], reference: list[sweep.Row],
                                                 tmp_path: Path) -> None:
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        s = sweep.run(points, tmp_path / "dask.sqlite", scheduler=client)
    assert s.workers == 2 and s.written == len(points)
    assert _stored(points, tmp_path / "dask.sqlite") == reference


#: Runs the rest of its command line with this interpreter after asking (Linux: ``prctl(PR_SET_PDEATHSIG)``,
#: kept across ``exec``) for SIGKILL when this test process dies: even a killed test run leaves no scheduler
#: or worker behind. (Not a ``preexec_fn``: that runs between fork and exec of a process with threads.)
_LAUNCH = ("import ctypes, os, sys\n"
           "if sys.platform.startswith('linux'): ctypes.CDLL(None).prctl(1, 9)\n"
           "if os.getppid() != int(os.environ['OPTCOMP_TEST_PARENT']): sys.exit(1)\n"
           "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])")


@dataclass
class DaskProcesses:
    """A ``dask scheduler`` and ``dask worker`` processes on 127.0.0.1 (workers by name)."""

    address: str
    scheduler: subprocess.Popen[bytes]
    workers: dict[str, subprocess.Popen[bytes]]
    addresses: dict[str, str]  # worker name -> its address at the scheduler
    log: Path

    def failure(self, what: str) -> str:
        return f"{what}; the cluster's log ends:\n" + self.log.read_text(errors="replace")[-3000:]


def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
    """SIGKILL each process's group (its session: anything it started too) and reap it. (Not SIGTERM: a
    dask worker's graceful close waits on a scheduler that is closing too, for seconds.)"""
    for p in procs:
        if p.poll() is None:  # (a group whose leader was reaped is not signalled: its id may be reused)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
    for p in procs:
        p.wait(timeout=30.0)


@pytest.fixture
def dask_processes(tmp_path: Path) -> Iterator[DaskProcesses]:
    """``python -m dask scheduler`` and two ``python -m dask worker`` processes (exactly what a user types,
    through this interpreter; ``--no-nanny``: a killed worker stays dead), each in its own session, started
    and awaited within :data:`_START_TIMEOUT_S`, stopped (and reaped) at the end whatever happened."""
    env = os.environ | {"PYTHONPATH": os.pathsep.join(sys.path), "OPTCOMP_TEST_PARENT": str(os.getpid())}
    log, info_file = tmp_path / "dask.log", tmp_path / "scheduler.json"
    procs: list[subprocess.Popen[bytes]] = []
    with log.open("wb") as out:
        def start(*args: str) -> subprocess.Popen[bytes]:
            p = subprocess.Popen([sys.executable, "-c", _LAUNCH, "-m", "dask", *args], env=env, stdout=out,
                                 stderr=out, stdin=subprocess.DEVNULL, start_new_session=True)
            procs.append(p)
            return p

        def failure(what: str) -> str:
            return f"{what}; the cluster's log ends:\n" + log.read_text(errors="replace")[-3000:]

        try:
            # port 0: the scheduler binds a free loopback port itself and writes its address to info_file
            scheduler = start("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                              "--scheduler-file", str(info_file))
            deadline = time.monotonic() + _START_TIMEOUT_S
            address = ""
            while not address:  # (the file may be seen half written)
                assert scheduler.poll() is None, failure("the scheduler exited during start-up")
                assert time.monotonic() < deadline, failure("the scheduler did not start")
                time.sleep(0.05)
                with contextlib.suppress(FileNotFoundError, json.JSONDecodeError, KeyError):
                    address = str(json.loads(info_file.read_text())["address"])
            assert address.startswith("tcp://127.0.0.1:"), address
            workers = {name: start("worker", address, "--name", name, "--nthreads", "1", "--no-nanny",
                                   "--no-dashboard", "--host", "127.0.0.1", "--death-timeout", "60")
                       for name in ("w0", "w1")}
            cluster = DaskProcesses(address, scheduler, workers, {}, log)
            with distributed.Client(address, timeout=_START_TIMEOUT_S, set_as_default=False) as client:
                while True:  # both workers registered, or a process died (fail at once, with its log)
                    dead = [" ".join(map(str, p.args[3:])) for p in procs if p.poll() is not None]
                    assert not dead, failure(f"{dead} exited during start-up")
                    try:
                        client.wait_for_workers(len(workers), timeout=1.0)
                        break
                    except TimeoutError:
                        assert time.monotonic() < deadline, failure("the workers did not register")
                info = client.scheduler_info()["workers"]
                cluster.addresses = {w["name"]: addr for addr, w in info.items()}
            assert set(cluster.addresses) == set(workers)
            yield cluster
        finally:
            _stop(procs)
    assert all(p.returncode is not None for p in procs)


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-c", "import sys; from optcomp.cli import main; sys.exit(main())", *args]


def test_the_cli_on_a_scheduler_and_two_worker_processes_also_with_one_killed(
    points: list[sweep.Point], reference: list[sweep.Row], tmp_path: Path, dask_processes: DaskProcesses,
) -> None:
    """``optcomp sweep GRID --scheduler tcp://…`` as a user types it (no Client handed in): the rows of an
    in-process run, bit for bit; then again with a worker SIGKILLed while it holds a task: every row once."""
    cluster = dask_processes
    grid = tmp_path / "grid.toml"
    grid.write_text(GRID)
    env = os.environ | {"PYTHONPATH": os.pathsep.join(sys.path)}
    plain = subprocess.run(_cli("sweep", str(grid), "--scheduler", cluster.address, "--db", str(tmp_path / "a.sqlite")),
                           env=env, capture_output=True, check=False, timeout=_START_TIMEOUT_S + 300)
    assert plain.returncode == 0, cluster.failure(plain.stderr.decode())
    assert _stored(points, tmp_path / "a.sqlite") == reference

    victim = cluster.workers["w1"]
    db = tmp_path / "killed.sqlite"
    proc = subprocess.Popen(_cli("sweep", str(grid), "--scheduler", cluster.address, "--db", str(db)), env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        with distributed.Client(cluster.address, set_as_default=False) as watcher:
            deadline = time.monotonic() + _START_TIMEOUT_S
            while not watcher.processing([cluster.addresses["w1"]]).get(cluster.addresses["w1"]):
                assert proc.poll() is None, "the sweep finished before worker w1 was given a task"
                assert time.monotonic() < deadline, "worker w1 was never given a task"
                time.sleep(0.02)
            os.killpg(victim.pid, signal.SIGKILL)  # it holds a task of this sweep
        _, err = proc.communicate(timeout=_START_TIMEOUT_S + 300)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert victim.wait(timeout=30) == -signal.SIGKILL
    assert proc.returncode == 0, cluster.failure(err.decode())
    assert _stored(points, db) == reference  # every row once (count = points), bit for bit


def test_an_address_with_no_client_made_first_and_a_scheduler_without_workers(
    points: list[sweep.Point], reference: list[sweep.Row], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``sweep.run(..., scheduler="tcp://…")`` makes no default client and needs none (the bug was
    ``distributed.as_completed`` asking for the default one); a scheduler without workers is a
    ``TimeoutError`` naming it after :data:`DASK_WORKER_WAIT_S`, not a hang."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0",
                                  protocol="tcp://", host="127.0.0.1") as cluster:
        s = sweep.run(points, tmp_path / "dask.sqlite", scheduler=cluster.scheduler_address)
        assert s.written == len(points) and s.workers == 2
        assert _stored(points, tmp_path / "dask.sqlite") == reference
        with pytest.raises(ValueError, match="No clients found"):
            distributed.default_client()  # the run made none its default
    monkeypatch.setattr(_executors, "DASK_WORKER_WAIT_S", 0.5)
    with distributed.LocalCluster(n_workers=0, processes=False, dashboard_address=":0", protocol="tcp://",
                                  host="127.0.0.1") as empty, \
            pytest.raises(TimeoutError, match=f"no Dask worker joined the scheduler {empty.scheduler_address} "):
        sweep.run(points, tmp_path / "none.sqlite", scheduler=empty.scheduler_address)
    with sweep.Store(tmp_path / "none.sqlite") as store:
        assert store.count() == 0


def test_kill_9_of_the_cli_at_random_moments_then_a_rerun(points: list[sweep.Point], reference: list[sweep.Row],
                                                           tmp_path: Path) -> None:
    grid = tmp_path / "grid.toml"
    grid.write_text(GRID)
    db = tmp_path / "grid.sqlite"
    env = os.environ | {"PYTHONPATH": os.pathsep.join(sys.path)}
    cmd = [sys.executable, "-c", "import sys; from optcomp.cli import main; sys.exit(main())",
           "sweep", str(grid), "--workers", "1"]
    # moments drawn over one whole uninterrupted CLI run (start-up and computation) timed here, on this
    # machine at its present load: a fixed guess would, on a slow machine, kill only during the imports
    start = time.monotonic()
    timed = subprocess.run([*cmd, "--db", str(tmp_path / "timed.sqlite")], env=env, capture_output=True, check=False,
                           timeout=_START_TIMEOUT_S + 600)
    span = time.monotonic() - start
    assert timed.returncode == 0, timed.stderr
    rng = random.Random(26)
    killed = 0
    for _ in range(10):
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        time.sleep(rng.uniform(0.0, span))
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)  # the CLI and anything it started
            killed += 1
        proc.wait()
    assert killed >= 1  # (once the store is complete a run only starts up: later kills may find it gone)
    done = subprocess.run(cmd, env=env, capture_output=True, check=False, timeout=_START_TIMEOUT_S + 600)
    assert done.returncode == 0, done.stderr
    assert _stored(points, db) == reference


def _pool_workers(cli: psutil.Process, n: int, proc: subprocess.Popen[bytes]) -> list[psutil.Process]:
    """The CLI's ``n`` pool workers (children of its forkserver, grandchildren of the CLI), once running."""
    deadline = time.monotonic() + _START_TIMEOUT_S
    while True:
        assert proc.poll() is None, "the sweep ended before its pool workers were seen"
        assert time.monotonic() < deadline, "no pool workers appeared"
        with contextlib.suppress(psutil.NoSuchProcess):
            workers = [p for p in cli.children(recursive=True) if p.ppid() != cli.pid]
            if len(workers) >= n:
                return workers
        time.sleep(0.02)


def _alive(procs: list[psutil.Process]) -> list[psutil.Process]:
    out = []
    for p in procs:
        with contextlib.suppress(psutil.NoSuchProcess):
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                out.append(p)
    return out


def test_kill_9_of_the_cli_leaves_no_process_behind(tmp_path: Path) -> None:
    """``kill -9`` of ``optcomp sweep`` (the CLI process alone, not its group): within seconds no pool
    worker, forkserver or resource tracker of it is left (they used to live on, ~380 MB, for good)."""
    grid = tmp_path / "grid.toml"
    grid.write_text(GRID)
    env = os.environ | {"PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(_cli("sweep", str(grid), "--workers", "2"), env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    cli = psutil.Process(proc.pid)
    descendants: list[psutil.Process] = []
    try:
        _pool_workers(cli, 2, proc)  # mid-sweep: the workers hold tasks
        descendants = cli.children(recursive=True)
        assert len(descendants) >= 3  # the forkserver, its 2 workers (and the resource tracker)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 15.0
        while _alive(descendants) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = _alive(descendants)
        assert not left, [(p.pid, p.cmdline()[-3:]) for p in left]
    finally:
        for p in _alive(descendants):  # never leak them, whatever the verdict
            p.kill()
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_pool_worker_killed_mid_sweep_has_its_tasks_rerun(points: list[sweep.Point],
                                                             reference: list[sweep.Row], tmp_path: Path) -> None:
    """SIGKILL of one local pool worker mid-sweep: no ``BrokenProcessPool`` traceback; the unfinished
    tasks run again on a fresh pool and the sweep ends with every row, bit for bit."""
    grid = tmp_path / "grid.toml"
    grid.write_text(GRID)
    env = os.environ | {"PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(_cli("sweep", str(grid), "--workers", "2"), env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        victim = _pool_workers(psutil.Process(proc.pid), 2, proc)[0]
        victim.kill()
        _, err = proc.communicate(timeout=_START_TIMEOUT_S + 300)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 0 and b"Traceback" not in err, err.decode()
    assert _stored(points, tmp_path / "grid.sqlite") == reference


def test_a_pool_broken_too_often_is_one_error_after_bounded_restarts(tmp_path: Path) -> None:
    """The pool is replaced at most ``restarts`` times: a worker lost once costs only a re-run; a task
    that kills every worker it runs on ends in :class:`sweep.WorkersLost`, not a hang or a traceback."""
    pool = _executors.ProcessPool(2, restarts=1)
    try:
        flag = str(tmp_path / "died")
        got = dict(pool.map_unordered(_pool_tasks.die_once, [(flag, x) for x in range(6)]))
        assert got == {i: i * i for i in range(6)} and os.path.exists(flag)
        with pytest.raises(sweep.WorkersLost, match="died 2 times"):
            list(pool.map_unordered(_pool_tasks.die, range(3)))
        assert dict(pool.map_unordered(_pool_tasks.square, range(4))) == {i: i * i for i in range(4)}
    finally:
        pool.close()

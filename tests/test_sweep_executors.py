"""optcomp.sweep executors: the local process pool, a real Dask LocalCluster, a scheduler and workers as
separate processes on 127.0.0.1 with one worker killed mid-sweep, and ``kill -9`` of the CLI at random
moments: every row present once and identical to an uninterrupted in-process run."""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from optcomp import sweep
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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def cluster_processes(tmp_path: Path) -> Iterator[tuple[str, list[subprocess.Popen[bytes]]]]:
    """A scheduler and two workers (no nanny: a killed worker stays dead), separate processes on 127.0.0.1."""
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = os.environ | {"PYTHONPATH": os.pathsep.join(sys.path)}
    log = (tmp_path / "dask.log").open("wb")
    procs = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                               "--port", str(port), "--no-dashboard"], env=env, stdout=log, stderr=log)]
    procs += [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1",
                                "--no-nanny", "--no-dashboard", "--host", "127.0.0.1"], env=env, stdout=log, stderr=log)
              for _ in range(2)]
    try:
        with distributed.Client(address, timeout=_START_TIMEOUT_S) as client:
            client.wait_for_workers(2, timeout=_START_TIMEOUT_S)
        yield address, procs
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait()
        log.close()


def test_separate_processes_with_a_worker_killed_mid_sweep(
    points: list[sweep.Point], reference: list[sweep.Row], tmp_path: Path,
    cluster_processes: tuple[str, list[subprocess.Popen[bytes]]],
) -> None:
    address, procs = cluster_processes
    victim = procs[1]
    killed: list[int] = []

    def progress(done: int, total: int) -> None:
        if done > 0 and not killed:  # a first task is back: the other worker is mid-task; kill one of them
            victim.send_signal(signal.SIGKILL)
            killed.append(done)

    with distributed.Client(address) as client:
        # tasks of ~one chain each, so that the killed worker holds work when it dies
        s = sweep.run(points, tmp_path / "killed.sqlite", scheduler=client, progress=progress)
    assert killed and victim.wait() == -signal.SIGKILL
    assert s.written == len(points)
    assert _stored(points, tmp_path / "killed.sqlite") == reference


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

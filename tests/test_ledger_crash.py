"""optcomp.ledger under kill -9 and under 32 concurrent writers, on SQLite and PostgreSQL.

Children are forked from the test process (the library is already imported, so a child costs
milliseconds) and SIGKILL themselves at an injected point:

* ``before_commit``: inside the charge transaction, after every row is written, before COMMIT;
* ``after_commit``: right after ``charge`` returned (the caller would now run the mechanism);
* ``during_release``: inside ``with ledger.release(...)``, i.e. while the mechanism runs;
* ``in_released``: inside the ``released`` transaction, before its COMMIT.

After each kill the parent checks: a charge the child reported as committed is there (status
``charged``), an aborted one left nothing, the spent sum equals the charges of the live rows, and
``verify()`` (hash chain, recomputed cache, release index, integrity check) passes.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import random
import signal
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import pytest

from optcomp.ledger import BudgetExceeded, PureDP, _store

POINTS = ("before_commit", "after_commit", "during_release", "in_released")
CHARGE = PureDP("1/8")
#: Full verify() every this many kills (and after the last); rows and sums are checked after every kill.
VERIFY_EVERY = 10


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _after(method: Callable[..., Any]) -> Callable[..., Any]:
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        method(*args, **kwargs)
        _die()

    return wrapped


def _child(site: Any, point: str, rid: str, wfd: int) -> None:
    led = site.open()
    if point == "before_commit":
        _store.Tx.save_state = _after(_store.Tx.save_state)  # type: ignore[method-assign]
        led.charge(rid, CHARGE)
    elif point == "after_commit":
        led.charge(rid, CHARGE)
        os.write(wfd, b"C")
        _die()
    elif point == "during_release":
        with led.release(rid, CHARGE):
            os.write(wfd, b"C")
            _die()
    else:
        led.charge(rid, CHARGE)
        os.write(wfd, b"C")
        _store.Tx.set_status = _after(_store.Tx.set_status)  # type: ignore[method-assign]
        led.released(rid, "digest")


def _kill_rounds(site: Any, rounds: int, seed: int) -> None:
    site.create(dataset="d", relation="add_remove", epsilon=10**6, delta=0, currency="basic").close()
    led = site.open()  # the parent's connection, never used by a child
    rng = random.Random(seed)
    committed: set[str] = set()
    for i in range(rounds):
        point = POINTS[i % len(POINTS)] if i < len(POINTS) else rng.choice(POINTS)
        rid = f"k{i}"
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child never returns
            try:
                os.close(r)
                _child(site, point, rid, w)
            finally:
                os._exit(3)
        os.close(w)
        _, status = os.waitpid(pid, 0)
        said = os.read(r, 16)
        os.close(r)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, (point, status)
        rows = {t.release_id: t for t in led.tickets()}
        if said == b"C":
            committed.add(rid)
            assert rows[rid].status == "charged", point  # crash before `released` commits: still counts
        else:
            assert point == "before_commit" and rid not in rows
        assert set(rows) == committed
        assert led.spent()[0] == len(committed) * CHARGE.epsilon
        if i % VERIFY_EVERY == 0 or i == rounds - 1:  # the chain is cumulative: a later walk sees every row
            v = led.verify()
            assert v.ok, v.problems
    led.close()


def test_kill9_sqlite_200_times(ledger_site: Any) -> None:
    if ledger_site.kind != "sqlite":
        pytest.skip("the PostgreSQL share runs in test_kill9_postgres")
    _kill_rounds(ledger_site, 200, seed=1)


def test_kill9_postgres(ledger_site: Any) -> None:
    if ledger_site.kind != "postgres":
        pytest.skip("the SQLite share runs in test_kill9_sqlite_200_times")
    _kill_rounds(ledger_site, 60, seed=2)


@pytest.mark.slow
def test_kill9_many(ledger_site: Any) -> None:
    _kill_rounds(ledger_site, 600, seed=3)


# --- parallel writers -----------------------------------------------------------------------------


def _writer(site: Any, wid: int, out: Any) -> None:
    led = site.open()
    got = []
    for rid in ["dup", *(f"w{wid}-{j}" for j in range(3))]:
        try:
            t = led.charge(rid, CHARGE)
            got.append((rid, t.replay))
        except BudgetExceeded:
            got.append((rid, None))
        except Exception as exc:  # noqa: BLE001 — reported, not raised: a dead writer would leave the parent waiting
            got.append((rid, f"error: {exc}"))
    led.close()
    out.put((wid, got))


def _reader(site: Any, stop: Any, out: Any) -> None:
    led = site.open()
    seen, last = 0, Fraction(0)
    while not stop.is_set() or seen == 0:
        spent = led.spent()[0]
        if spent < last or spent > 5:
            out.put(("bad", str(spent)))
            return
        last, seen = spent, seen + 1
        led.report()
    led.close()
    out.put(("ok", seen))


def test_32_parallel_writers_admit_exactly_40(ledger_site: Any) -> None:
    site = ledger_site
    site.create(dataset="d", relation="add_remove", epsilon=5, delta=0, currency="basic").close()
    ctx = mp.get_context("fork")
    out, rout, stop = ctx.Queue(), ctx.Queue(), ctx.Event()
    readers = [ctx.Process(target=_reader, args=(site, stop, rout)) for _ in range(2)]
    writers = [ctx.Process(target=_writer, args=(site, w, out)) for w in range(32)]
    for p in readers + writers:
        p.start()
    try:  # a writer that dies must fail the test, not leave the readers spinning and the run hanging
        results = [out.get(timeout=300) for _ in writers]
        for p in writers:
            p.join(timeout=300)
        stop.set()
        reads = [rout.get(timeout=300) for _ in readers]
        for p in readers:
            p.join(timeout=300)
    finally:
        stop.set()
        for p in readers + writers:
            if p.is_alive():
                p.kill()
            p.join(timeout=60)
    assert all(p.exitcode == 0 for p in writers + readers)
    assert all(kind == "ok" for kind, _ in reads), reads
    errors = [(rid, replay) for _, got in results for rid, replay in got if isinstance(replay, str)]
    assert not errors, errors[:3]
    admitted = {rid for _, got in results for rid, replay in got if replay is False}
    dup = [replay for _, got in results for rid, replay in got if rid == "dup"]
    assert len(admitted) == 40
    assert dup.count(False) == 1 and all(r is True for r in dup if r is not False)  # counted once
    led = site.open()
    rows = led.tickets()
    assert len(rows) == 40 and {t.release_id for t in rows} == admitted
    assert [t.seq for t in rows] == list(range(1, 41))  # no gaps
    assert led.spent()[0] == 5
    v = led.verify()
    assert v.ok, v.problems
    led.close()

"""The ledger a person can trust (issue 32, items 1, 8 and 9; issue 36's refusals).

* A charge or ``release()`` under a voided — or already released — release id is refused before the
  mechanism runs (``ReleaseIdClosed``; on the command line one stderr line, exit 2); nothing is appended.
* Whether an id was charged, and its status, come from the hash chain: a release index edited by hand is
  refused by ``charge``/``released``/``void`` and makes ``report`` and ``export`` exit 2 (one line).
* Refused attempts are recorded outside the hash chain (the chain, and ``verify()``, unchanged), on
  SQLite and PostgreSQL, also in a ledger made before the table existed; a refusal over budget names what
  remains and what still fits, and the values it names fit.
* ``ledger backup`` prints the chain head whole.
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from optcomp.cli import main
from optcomp.ledger import (
    BudgetExceeded,
    GaussianRelease,
    Ledger,
    PureDP,
    ReleaseIdClosed,
    ReleaseIdConflict,
    StoreError,
)

Site = Any
#: A number the ledger stores as float.hex, as it would appear if printed raw.
HEX_FLOAT = re.compile(r"0x[0-9a-f]+(\.[0-9a-f]*)?p[+-]?\d+", re.IGNORECASE)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(code: int, err: str) -> bool:
    return code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def _sql(site: Site, *statements: str) -> None:
    """Run SQL on the ledger's store behind the library's back (as someone with write access would)."""
    if site.kind == "sqlite":
        conn = sqlite3.connect(site.location, isolation_level=None)  # autocommit: a refused one leaves no lock
        try:
            for s in statements:
                conn.execute(s)
        finally:
            conn.close()
        return
    import psycopg

    with psycopg.connect(site.location, autocommit=True) as conn:
        conn.execute(f"SET search_path TO {site.schema}")
        for s in statements:
            conn.execute(s)


def _drop_status_trigger(site: Site) -> str:
    return ("DROP TRIGGER releases_status_only" if site.kind == "sqlite"
            else "DROP TRIGGER releases_status_only ON releases")


# --- issue 32, item 1: a voided release never runs uncharged ------------------------------------------


def test_cli_charge_after_void_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's three commands: the third exits 2 with one line (it exited 0, "voided (a retry: the
    same ticket)", and the report showed spent [0, 0] while the mechanism ran)."""
    p = str(tmp_path / "v.ledger")
    assert run(capsys, "ledger", "init", p, "--dataset", "d", "--relation", "add_remove", "--epsilon", "1",
               "--delta", "0", "--currency", "basic")[0] == 0
    assert run(capsys, "ledger", "charge", p, "q1", "pure:epsilon=0.5")[0] == 0
    assert run(capsys, "ledger", "void", p, "q1", "--reason", "x")[0] == 0
    code, out, err = run(capsys, "ledger", "charge", p, "q1", "pure:epsilon=0.5")
    assert one_line_error(code, err) and "voided" in err and "new release id" in err and out == ""
    code, _, err = run(capsys, "ledger", "charge", p, "q1", "pure:epsilon=0.25")  # any release under that id
    assert one_line_error(code, err) and "voided" in err
    assert run(capsys, "ledger", "charge", p, "q1-retry", "pure:epsilon=0.5")[0] == 0  # what the docs say to do
    assert run(capsys, "ledger", "released", p, "q1-retry")[0] == 0
    code, _, err = run(capsys, "ledger", "charge", p, "q1-retry", "pure:epsilon=0.5")  # released: closed too
    assert one_line_error(code, err) and "already released" in err
    code, out, _ = run(capsys, "ledger", "export", p)
    assert [e["kind"] for e in json.loads(out)["events"]] == ["charge", "void", "charge", "released"]
    rep = json.loads(run(capsys, "ledger", "report", p, "--json")[1])
    assert rep["spent"][0] == "0x1.0000000000000p-1" and rep["refused"]["count"] == 3


def test_release_context_manager_never_runs_the_body_under_a_voided_id(ledger_site: Site) -> None:
    led = ledger_site.create(dataset="d", relation="add_remove", epsilon=1, delta=0, currency="basic")
    ran: list[str] = []
    with pytest.raises(RuntimeError, match="boom"), led.release("job-7", PureDP("0.5")):
        raise RuntimeError("boom")  # the job failed before reading the data
    led.void("job-7", "failed before reading the data")
    for attempt in (PureDP("0.5"), PureDP("0.1")):
        with pytest.raises(ReleaseIdClosed, match="voided"), led.release("job-7", attempt):
            ran.append("body")
    with led.release("done", PureDP("0.25")) as run_:
        run_.output = 1
    with pytest.raises(ReleaseIdClosed, match="already released"), led.release("done", PureDP("0.25")):
        ran.append("body")
    assert ran == []
    assert led.spent()[0] == Fraction(1, 4) and [e["kind"] for e in led.export()["events"]] == [
        "charge", "void", "charge", "released"]
    assert led.verify().ok
    led.charge("live", PureDP("0.25"))
    with pytest.raises(ReleaseIdConflict, match="was charged with pure DP, ε = 0.25, not pure DP, ε = 0.5"):
        led.charge("live", PureDP("0.5"))  # a conflict names both releases in words
    led.close()


# --- issue 32, item 8: an edited release index is not trusted ----------------------------------------


def test_report_and_export_exit_2_on_an_edited_status(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "l.ledger"
    with Ledger.create(str(p), dataset="d", relation="add_remove", epsilon=1, delta=0, currency="basic") as led:
        led.charge("q1", PureDP("0.1"))
        led.charge("q2", PureDP("0.1"))
    conn = sqlite3.connect(p)
    conn.execute("DROP TRIGGER releases_status_only")
    conn.execute("UPDATE releases SET status = 'released' WHERE release_id = 'q2'")
    conn.commit()
    conn.close()
    code, _, err = run(capsys, "ledger", "verify", str(p))
    assert one_line_error(code, err) and "release index" in err
    for command in ("report", "export"):
        for extra in ((), ("--json",)):
            code, out, err = run(capsys, "ledger", command, str(p), *extra)
            assert one_line_error(code, err) and "release index" in err and "'q2'" in err, (command, err)
    code, out, _ = run(capsys, "ledger", "report", str(p), "--json")
    assert any("q2" in problem for problem in json.loads(out)["problems"])
    code, out, err = run(capsys, "ledger", "released", str(p), "q2")  # it said "released (a retry)" before
    assert one_line_error(code, err) and "release index" in err


def test_released_does_not_trust_an_edited_index(ledger_site: Site) -> None:
    """A voided release whose index row is set back to 'charged': ``released`` would have published it
    with its charge refunded; it is refused, and so are charges and voids touching that id."""
    led = ledger_site.create(dataset="d", relation="add_remove", epsilon=1, delta=0, currency="basic")
    led.charge("a", PureDP("0.5"))
    led.void("a", "never ran")
    _sql(ledger_site, _drop_status_trigger(ledger_site), "UPDATE releases SET status = 'charged' WHERE release_id = 'a'")
    for attempt in (lambda: led.released("a", "digest"), lambda: led.void("a", "again"),
                    lambda: led.charge("a", PureDP("0.5"))):
        with pytest.raises(StoreError, match="release index differs from the hash chain"):
            attempt()
    assert [t.status for t in led.tickets()] == ["voided"]  # tickets come from the chain
    assert any("release index" in p for p in led.report()["problems"])
    assert any("release index" in p for p in led.verify().problems)
    assert len(led.export()["events"]) == 2
    led.close()


# --- refused attempts: recorded outside the chain, the chain unchanged -----------------------------


def test_refusals_are_recorded_outside_the_chain(ledger_site: Site) -> None:
    led = ledger_site.create(dataset="d", relation="add_remove", epsilon=1, delta="1e-6", currency="zcdp")
    led.charge("g", GaussianRelease(5))
    head = led.export()["events"][-1]["row_hash"]
    with pytest.raises(BudgetExceeded) as refused:
        led.charge("big", PureDP("0.5"))
    message = str(refused.value)
    assert "remaining: ρ ≈" in message and "σ ≥" in message and "ε ≤" in message and "\n" not in message
    with pytest.raises(ReleaseIdConflict):
        led.charge("g", GaussianRelease(6))
    with pytest.raises(BudgetExceeded):
        led.charge_many([("ok-1", PureDP("0.01")), ("too-big", GaussianRelease(1))])
    export = led.export()
    assert export["events"][-1]["row_hash"] == head and len(export["events"]) == 1  # the chain: unchanged
    assert led.verify().ok
    refusals = led.refusals()
    assert refusals["count"] == 3 and [r["release_id"] for r in refusals["recent"]] == ["big", "g", "too-big"]
    assert refusals["recent"][0]["release_text"] == "pure DP, ε = 0.5" and refusals["recent"][0]["chain_seq"] == 2
    reason = refusals["recent"][0]["reason"]  # the record says what remained then; the message adds what fits
    assert message.startswith(reason + "; what still fits: ") and "; remaining: ρ ≈" in reason
    assert refusals["recent"][1]["reason"].startswith("release_id 'g' was charged with Gaussian, σ = 5")
    assert "outside the hash chain" in refusals["note"]
    assert led.report()["refused"]["count"] == 3 and export["refusals"]["count"] == 3
    forbidden = ("DELETE FROM refusals", "UPDATE refusals SET reason = 'x'")
    for sql in forbidden:
        with pytest.raises(Exception, match="append-only"):  # sqlite3.Error or psycopg.Error
            _sql(ledger_site, sql)
    led.close()


def test_a_ledger_made_before_the_refusals_table_reads_and_records(ledger_site: Site,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """A ledger written before refused attempts were recorded (its four tables only) reads, verifies and
    reports read-only; its first refusal creates the table, and the chain is untouched."""
    led = ledger_site.create(dataset="d", relation="add_remove", epsilon="0.1", delta=0, currency="basic")
    led.charge("q", PureDP("0.1"))
    led.close()
    _sql(ledger_site, "DROP TABLE refusals")
    with Ledger.open(ledger_site.location, schema=ledger_site.schema, read_only=True) as ro:
        assert ro.verify().ok and ro.report()["refused"]["count"] == 0 and ro.export()["refusals"]["count"] == 0
    if ledger_site.kind == "sqlite":
        code, _, err = run(capsys, "ledger", "charge", ledger_site.location, "more", "pure:epsilon=0.1")
        assert one_line_error(code, err) and "nothing more fits" in err
    else:
        with ledger_site.open() as led, pytest.raises(BudgetExceeded, match="nothing more fits"):
            led.charge("more", PureDP("0.1"))
    with Ledger.open(ledger_site.location, schema=ledger_site.schema, read_only=True) as ro:
        assert ro.verify().ok and ro.refusals()["count"] == 1 and len(ro.export()["events"]) == 1


@pytest.mark.parametrize("currency", ["zcdp", "gdp", "rdp", "approx-zcdp"])
def test_what_a_refusal_says_fits_does_fit(tmp_path: Path, currency: str) -> None:
    """The σ and ε a refusal names, typed back as the decimals shown, are admitted (shown rounded on the
    safe side); the remaining it names is the report's."""
    led = Ledger.create(str(tmp_path / "f.ledger"), dataset="d", relation="add_remove", epsilon=2, delta="1e-6",
                        currency=currency, **({"orders": [22.0]} if currency == "rdp" else {}))
    led.charge("first", GaussianRelease("4.5"))
    with pytest.raises(BudgetExceeded) as refused:
        led.charge("huge", GaussianRelease("0.01"))
    message = str(refused.value)
    sigma = re.search(r"σ ≥ ([0-9.e-]+)", message)
    assert sigma is not None and led.fits(GaussianRelease(sigma.group(1))) >= 1
    epsilon = re.search(r"ε ≤ ([0-9.e-]+)", message)
    if epsilon is not None:
        assert led.fits(PureDP(epsilon.group(1))) >= 1
    assert led.report()["remaining_text"] in message and not HEX_FLOAT.search(message)
    led.close()


def test_cli_refusal_names_what_remains_and_what_fits(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 36's ledger: two Gaussians of σ = 4 against (2, 1e-6) in zCDP; a pure ε = 0.5 is refused, and
    the one line says the remaining ρ and the smallest σ (4.4149) and largest ε (0.2265) that still fit."""
    p = str(tmp_path / "census.ledger")
    assert run(capsys, "ledger", "init", p, "--dataset", "census", "--relation", "add_remove", "--epsilon", "2",
               "--delta", "1e-6")[0] == 0
    for rid in ("g1", "g2"):
        assert run(capsys, "ledger", "charge", p, rid, "gaussian:sigma=4")[0] == 0
    code, out, err = run(capsys, "ledger", "charge", p, "q", "pure:epsilon=0.5")
    assert one_line_error(code, err) and out == ""
    assert "remaining: ρ ≈ 0.02565 left of 0.08815" in err and "σ ≥ 4.4149" in err and "ε ≤ 0.2265" in err
    assert run(capsys, "ledger", "charge", p, "q", "gaussian:sigma=4.4149")[0] == 0  # what it named fits
    code, out, _ = run(capsys, "ledger", "report", p)
    assert code == 0 and "refused attempts" in out and "pure DP, ε = 0.5" in out


# --- issue 32, item 9: the conflict message and the backup's chain head ------------------------------


def test_conflict_message_is_in_words(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = str(tmp_path / "c.ledger")
    with Ledger.create(p, dataset="d", relation="add_remove", epsilon=1, delta=0, currency="basic") as led:
        led.charge("q", PureDP(0.5))  # a float: stored as 0x1.0000000000000p-1
    code, _, err = run(capsys, "ledger", "charge", p, "q", "pure:epsilon=0.25")
    assert one_line_error(code, err) and "pure DP, ε = 0.5" in err and not HEX_FLOAT.search(err)


def test_backup_prints_the_chain_head_whole(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = str(tmp_path / "l.ledger")
    with Ledger.create(p, dataset="d", relation="add_remove", epsilon=1, delta=0, currency="basic") as led:
        led.charge("q", PureDP("0.1"))
        head = led.export()["events"][-1]["row_hash"]
    code, out, _ = run(capsys, "ledger", "backup", p, str(tmp_path / "b.ledger"))
    assert code == 0 and f"chain head (note it elsewhere): {head}" in out.splitlines()


# --- issue 36: no hexadecimal float in anything meant for a person ---------------------------------


def _busy_ledger(path: str, currency: str) -> Ledger:
    """A ledger with float-valued releases (stored as float.hex), each status, refusals and a conflict."""
    options: dict[str, Any] = {"orders": [22.0]} if currency == "rdp" else {}
    led = Ledger.create(path, dataset="d", relation="add_remove", epsilon=1.5, delta=1e-6, currency=currency,
                        **options)
    led.charge("p", PureDP(0.05))
    led.released("p", "sha256:aa")
    if currency != "basic":
        led.charge("g", GaussianRelease(7.3, sensitivity=0.5))
    led.charge("v", PureDP(0.07))
    led.void("v", "never ran")
    for rid, release in (("v", PureDP(0.07)), ("p", PureDP(0.1)), ("huge", PureDP(10.0))):
        with pytest.raises((BudgetExceeded, ReleaseIdConflict)):
            led.charge(rid, release)
    return led


@pytest.mark.parametrize("currency", ["basic", "zcdp", "rdp", "gdp", "approx-zcdp"])
def test_no_hex_float_reaches_a_person(tmp_path: Path, capsys: pytest.CaptureFixture[str], currency: str) -> None:
    p = str(tmp_path / "h.ledger")
    led = _busy_ledger(p, currency)
    rep = led.report(PureDP(0.01))
    texts = [r[k] for r in rep["refused"]["recent"] for k in ("release_text", "reason", "time_text")]
    texts += [json.dumps({k: v for k, v in rep.items() if k.endswith("_text") or k == "what_fits"},
                         ensure_ascii=False), rep["fits"]["release_text"], rep["guarantee"]]
    texts += [h["release_text"] + h["charge_text"] for h in led.history()]
    led.close()
    for args in (("report", p), ("report", p, "--fits", "pure:epsilon=0.01"), ("released", p, "p"),
                 ("charge", p, "p", "pure:epsilon=0.05"), ("charge", p, "new", "gaussian:sigma=0.001"),
                 ("charge", p, "p", "pure:epsilon=0.06"), ("charge", p, "v", "pure:epsilon=0.07")):
        _, out, err = run(capsys, "ledger", *args)
        texts += [out, err]
    for text in texts:
        assert not HEX_FLOAT.search(text), text
    exported = json.loads(run(capsys, "ledger", "export", p)[1])
    assert HEX_FLOAT.search(json.dumps(exported["events"][0]["body"]))  # the exact values stay in the JSON
    assert all(not HEX_FLOAT.search(e.get("release_text", "") + e.get("charge_text", "")) for e in exported["events"])


def test_report_json_only_adds_fields(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--json keeps every field it had (exact values as before) and adds readable ones beside them."""
    p = str(tmp_path / "j.ledger")
    with Ledger.create(p, dataset="d", relation="add_remove", epsilon=1, delta="1e-6", currency="zcdp") as led:
        led.charge("g", GaussianRelease(10))
    rep = json.loads(run(capsys, "ledger", "report", p, "--fits", "pure:epsilon=0.01", "--json")[1])
    before = {"dataset", "relation", "mode", "budget", "problems", "releases", "currency", "components", "threshold",
              "spent", "remaining", "spent_float", "remaining_float", "guarantee", "certificate", "smallest_sigma",
              "largest_pure_epsilon", "fits"}
    remaining = Fraction(rep["remaining"][0])
    assert before <= set(rep) and rep["spent"] == ["1/200"] and rep["fits"]["count"] == remaining // Fraction(1, 20000)
    assert rep["fraction_spent"] == pytest.approx(float(Fraction(1, 200) / Fraction(rep["threshold"][0])))
    assert rep["what_fits"][1]["text"].startswith("σ ≥ ") and math.isfinite(rep["what_fits"][1]["value"])

"""The read-only ledger view of the local web page (in-process, no browser), on SQLite and PostgreSQL, and
``optcomp serve --ledger``'s refusals of a ledger it cannot show."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

with warnings.catch_warnings():  # starlette's note that its TestClient will move to httpx2
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from optcomp.cli import main
from optcomp.ledger import BudgetExceeded, GaussianRelease, Ledger, PureDP
from optcomp.web import create_app

HEX_FLOAT = re.compile(r"0x[0-9a-f]+(\.[0-9a-f]*)?p[+-]?\d+", re.IGNORECASE)


def test_ledger_page_and_api(tmp_path: Path) -> None:
    p = str(tmp_path / "w.ledger")
    led = Ledger.create(p, dataset="census", relation="add_remove", epsilon=1, delta="1e-6", currency="zcdp")
    led.charge("q1", PureDP("0.01"))
    led.released("q1", "x")
    led.charge("q2", PureDP("0.02"))
    led.close()
    client = TestClient(create_app(ledger=p))
    page = client.get("/ledger")
    assert page.status_code == 200 and "Privacy ledger" in page.text
    data = client.get("/api/ledger").json()
    assert data["ok"] and data["report"]["dataset"] == "census"
    assert [(r["release_id"], r["status"]) for r in data["releases"]] == [("q1", "released"), ("q2", "charged")]
    assert data["report"]["spent_float"] == [pytest.approx(0.00025)] and data["report"]["problems"] == []
    first, second = data["releases"]  # the chain's history: words beside the exact values, cumulative spend
    assert (first["release_text"], first["charge_text"]) == ("pure DP, ε = 0.01", "ρ = 5e-5")
    assert first["release"] == {"kind": "pure", "epsilon": "1/100"} and first["time_text"].endswith(" UTC")
    assert second["cumulative"] == [pytest.approx(0.00025)]
    assert second["fraction"] == pytest.approx(data["report"]["fraction_spent"])
    assert client.post("/api/ledger").status_code == 405  # read-only


def test_ledger_api_without_a_ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPTCOMP_LEDGER", raising=False)
    none = TestClient(create_app()).get("/api/ledger")
    assert none.status_code == 404 and "optcomp serve --ledger FILE" in none.json()["error"]
    missing = TestClient(create_app(ledger=str(tmp_path / "none"))).get("/api/ledger")
    assert missing.status_code == 404 and "ledger" in missing.json()["error"]


def test_ledger_api_on_both_stores_shows_the_refusals_in_words(ledger_site: Any) -> None:
    """The page's data for a SQLite file and for a PostgreSQL schema (``create_app(ledger_schema=…)``,
    ``optcomp serve --ledger-schema``): float-valued releases (stored as float.hex) read as decimals, the
    refused attempt with what remained then; the exact values stay in their own fields."""
    led = ledger_site.create(dataset="census", relation="add_remove", epsilon=2, delta="1e-6", currency="zcdp")
    led.charge("g1", GaussianRelease(4.0))
    led.charge("g2", GaussianRelease(4.0))
    with pytest.raises(BudgetExceeded) as refused:
        led.charge("q", PureDP(0.5))
    led.close()
    data = TestClient(create_app(ledger=ledger_site.location, ledger_schema=ledger_site.schema)).get("/api/ledger")
    assert data.status_code == 200
    body = data.json()
    report, releases = body["report"], body["releases"]
    assert releases[0]["release"]["sigma"] == "0x1.0000000000000p+2"  # exact, in its own field
    assert releases[0]["release_text"] == "Gaussian, σ = 4, Δ = 1" and releases[1]["charge_text"] == "ρ = 0.03125"
    reason = report["refused"]["recent"][0]["reason"]
    assert report["refused"]["count"] == 1 and str(refused.value).startswith(reason + "; what still fits")
    assert "remaining: ρ ≈ 0.02565 left of 0.08815" in reason
    assert "σ ≥ 4.4149" in str(refused.value) and "ε ≤ 0.2265" in str(refused.value)
    texts = json.dumps([{k: v for k, v in x.items() if k.endswith("_text") or k in ("reason", "what_fits")}
                        for x in [report, *releases, *report["refused"]["recent"]]], ensure_ascii=False)
    assert not HEX_FLOAT.search(texts)


def test_serve_refuses_a_ledger_it_cannot_show(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``optcomp serve --ledger`` checks the ledger before serving (one line, exit 2), rather than serving a
    page that only says it cannot read it; ``--ledger-schema`` is for a PostgreSQL --ledger only."""
    not_a_ledger = tmp_path / "notes.txt"
    not_a_ledger.write_text("hello\n")
    good = str(tmp_path / "ok.ledger")
    Ledger.create(good, dataset="d", relation="add_remove", epsilon=1, delta=0, currency="basic").close()
    for args, said in ((["--ledger", str(tmp_path / "missing.ledger")], "existing ledger file"),
                       (["--ledger", str(not_a_ledger)], "not an optcomp ledger"),
                       (["--ledger", good, "--ledger-schema", "s"], "PostgreSQL option"),
                       (["--ledger-schema", "s"], "give --ledger too")):
        assert main(["serve", "--port", "0", *args]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and said in err and "Traceback" not in err
    assert not_a_ledger.read_text() == "hello\n"

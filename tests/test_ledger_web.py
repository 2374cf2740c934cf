"""The read-only ledger view of the local web page (in-process, no browser)."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

with warnings.catch_warnings():  # starlette's note that its TestClient will move to httpx2
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from optcomp.ledger import Ledger, PureDP
from optcomp.web import create_app


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

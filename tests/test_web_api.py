"""The planner's JSON API and ``optcomp serve`` options (in-process, no browser)."""

from __future__ import annotations

import re
import socket
from importlib import resources
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

import warnings

with warnings.catch_warnings():  # starlette's note that its TestClient will move to httpx2
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from optcomp.cli import main
from optcomp.cli.serve import is_loopback
from optcomp.planner import plan_from_dict, plan_from_text
from optcomp.web import create_app

PLAN: dict[str, Any] = {
    "epsilon": 1.0,
    "delta": 1e-6,
    "dataset_size": 1000,
    "statistics": [
        {"name": "n", "kind": "count"},
        {"name": "m", "kind": "mean", "lower": 0, "upper": 10, "mechanism": "gaussian"},
    ],
}


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app(), raise_server_exceptions=False)


def test_page_and_assets_are_local(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200 and "Privacy budget planner" in page.text
    for name in ("index.html", "app.js", "style.css"):
        text = (resources.files("optcomp.web") / "static" / name).read_text(encoding="utf-8")
        urls = set(re.findall(r"https?://[^\s\"')]+", text)) - {"http://www.w3.org/2000/svg"}
        assert urls == set(), f"{name} refers to the internet: {urls}"
    for asset in ("/static/app.js", "/static/style.css"):
        assert client.get(asset).status_code == 200


def test_plan_endpoint_matches_library(client: TestClient) -> None:
    r = client.post("/api/plan", json={"plan": PLAN, "modes": ["basic", "optimal"]})
    assert r.status_code == 200
    body = r.json()
    assert body["ok"] and set(body["result"]["modes"]) == {"basic", "optimal"}
    assert plan_from_dict(body["plan"]) == plan_from_dict(PLAN)
    opt = body["result"]["modes"]["optimal"]
    assert opt["feasible"] and opt["epsilon_certified"] <= 1.0


@pytest.mark.parametrize(
    ("payload", "index", "field", "text"),
    [
        ({"plan": {**PLAN, "statistics": [PLAN["statistics"][0], {**PLAN["statistics"][1], "upper": "ten"}]}},
         1, "upper", "statistic 'm' (#2): field 'upper' must be a number"),
        ({"plan": {**PLAN, "delta": 2}}, None, "delta", "plan: field 'delta' must be in [0, 0.1], got 2.0"),
        ({"plan": {**PLAN, "statistics": []}}, None, "statistics", "plan: field 'statistics'"),
        ({"plan": {**PLAN, "delta": 0.0}}, None, "delta", "must be > 0 when a statistic uses the gaussian"),
        ({"plan": PLAN, "modes": ["best"]}, None, "modes", "modes must be a non-empty list"),
        ({"nothing": 1}, None, None, "request body must be an object with a 'plan' field"),
        ([1, 2], None, None, "request body must be an object"),
    ],
)
def test_invalid_requests_are_422_with_location(
    client: TestClient, payload: Any, index: int | None, field: str | None, text: str
) -> None:
    r = client.post("/api/plan", json=payload)
    assert r.status_code == 422
    body = r.json()
    assert body["ok"] is False and text in body["error"]
    assert body["index"] == index and body["field"] == field


def test_malformed_json_is_not_a_500(client: TestClient) -> None:
    for url in ("/api/plan", "/api/export", "/api/import"):
        r = client.post(url, content=b"{not json", headers={"Content-Type": "application/json"})
        assert r.status_code == 422 and "not valid JSON" in r.json()["error"]


def test_export_import_round_trip(client: TestClient) -> None:
    toml_text = client.post("/api/export", json={"plan": PLAN}).text
    assert plan_from_text(toml_text, fmt="toml") == plan_from_dict(PLAN)
    back = client.post("/api/import", json={"text": toml_text, "format": "toml"}).json()
    assert back["ok"] and plan_from_dict(back["plan"]) == plan_from_dict(PLAN)
    bad = client.post("/api/import", json={"text": "epsilon = 1\n", "format": "toml"})
    assert bad.status_code == 422 and "field 'delta' is required" in bad.json()["error"]


def test_serve_refuses_remote_host_without_flag(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--host", "0.0.0.0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--allow-remote" in err


def test_serve_remote_with_flag_warns(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import uvicorn

    calls: list[tuple[str, int]] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, host, port, log_level: calls.append((host, port)))
    # free ports: serve checks that its port can be bound (a fixed one may be taken on the machine running this)
    remote, local = _free_port("0.0.0.0"), _free_port("127.0.0.1")
    assert main(["serve", "--host", "0.0.0.0", "--port", str(remote), "--allow-remote"]) == 0
    assert calls == [("0.0.0.0", remote)]
    assert "warning: serving on 0.0.0.0" in capsys.readouterr().err
    assert main(["serve", "--port", str(local)]) == 0
    assert calls[-1] == ("127.0.0.1", local)


def _free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(("host", "loop"), [("127.0.0.1", True), ("127.0.0.2", True), ("::1", True),
                                            ("localhost", True), ("0.0.0.0", False), ("192.168.1.4", False),
                                            ("example.org", False)])
def test_is_loopback(host: str, loop: bool) -> None:
    assert is_loopback(host) is loop

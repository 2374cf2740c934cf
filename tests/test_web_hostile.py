"""The planner API under hostile input: malformed requests are 4xx with a message, and a slow plan never
stops the server from answering (live uvicorn on 127.0.0.1, plans computed in killable workers)."""

from __future__ import annotations

import json
import random
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")
pytest.importorskip("uvicorn")

import warnings

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from optcomp.planner import load_plan, plan_from_dict, plan_to_dict
from optcomp.web import create_app

ROOT = Path(__file__).resolve().parent.parent
CENSUS = plan_to_dict(load_plan(ROOT / "examples" / "census_plan.toml"))
GOOD: dict[str, Any] = {"epsilon": 1.0, "delta": 1e-6, "dataset_size": 1000,
                        "statistics": [{"name": "n", "kind": "count"},
                                       {"name": "m", "kind": "mean", "lower": 0, "upper": 10}]}
#: Values that no field of the schema accepts where they are put below (wrong type or out of range).
BAD_VALUES: list[Any] = ["x", "", None, [], {}, [1], {"a": 1}, True, -1, 0, 10**400, -(10**400), 1e308, -1e308,
                         1e-320, 5e-324, 1e-315, "NaN", [[[[1]]]]]
#: Per-call bound turning a hang into a failure (not a timing assertion).
HANG = 60.0


def _malformed_bodies() -> list[tuple[str, bytes]]:
    """≥ 200 requests the API must refuse with a 4xx (url, raw body)."""
    out: list[tuple[str, bytes]] = []
    raw = [b"", b"{", b"[", b"{not json", b"\xff\xfe\x00", b"null", b"1", b'"plan"', b"[1, 2]", b'{"plan": }',
           b'{"plan": NaN}', b'{"plan": Infinity}', b'{"plan": -Infinity}', b"1" * 5000,
           b'{"plan": ' + b"1" * 5000 + b"}", b"[" * 100_000 + b"]" * 100_000,
           b'{"plan": ' + b"[" * 50_000 + b"]" * 50_000 + b"}", b'{"plan": {"epsilon": 1e999, "delta": 0}}']
    out += [(url, body) for url in ("/api/plan", "/api/export", "/api/import") for body in raw]
    for key in ("epsilon", "delta", "beta", "reserve_epsilon", "gaussian_delta_share", "dataset_size",
                "dataset_size_public", "neighbouring", "version", "statistics"):
        for v in BAD_VALUES:
            if key == "dataset_size" and v is None:
                continue  # optional: None means "absent" (the mean then refuses the plan, tested below)
            out.append(("/api/plan", json.dumps({"plan": {**GOOD, key: v}}).encode()))
    for key in ("name", "kind", "mechanism", "lower", "upper", "bins", "weight", "lock_epsilon", "count_share"):
        for v in BAD_VALUES[:10]:
            stat = {"name": "s", "kind": "sum", "lower": 0, "upper": 1, key: v}
            if key == "bins":
                stat = {"name": "s", "kind": "histogram", "bins": v}
            if v is None and key in ("lock_epsilon",):
                continue
            out.append(("/api/plan", json.dumps({"plan": {**GOOD, "statistics": [stat]}}).encode()))
    for key in ("epsilon", "delta", "statistics"):  # missing fields
        out.append(("/api/plan", json.dumps({"plan": {k: v for k, v in GOOD.items() if k != key}}).encode()))
    for nan in ("NaN", "Infinity", "-Infinity"):  # literal non-numbers in every numeric field
        for key in ("epsilon", "delta", "beta", "reserve_epsilon"):
            out.append(("/api/plan", f'{{"plan": {{"epsilon": 1, "delta": 0, "{key}": {nan}, '
                                     f'"statistics": [{{"name": "n", "kind": "count"}}]}}}}'.encode()))
    deep: Any = {"name": "n", "kind": "count"}
    for _ in range(40):
        deep = [deep]
    out.append(("/api/plan", json.dumps({"plan": {**GOOD, "statistics": [deep]}}).encode()))
    out.append(("/api/plan", json.dumps({"plan": {**GOOD, "statistics": deep}}).encode()))
    many = [{"name": f"s{i}", "kind": "count"} for i in range(2001)]
    out.append(("/api/plan", json.dumps({"plan": {**GOOD, "statistics": many}}).encode()))
    out.append(("/api/plan", json.dumps({"plan": {**GOOD, "statistics": [{"name": "x" * 2_000_000}]}}).encode()))
    for modes in ("basic", [], [1], [["basic"]], ["basic", "best"], {"basic": 1}, None):
        out.append(("/api/plan", json.dumps({"plan": GOOD, "modes": modes}).encode()))
    for text, fmt in (("epsilon = ", "toml"), ("a = " + "[" * 5000 + "]" * 5000, "toml"), ("[" * 50_000, "json"),
                      ("epsilon = 1e-320\ndelta = 0\n[[statistics]]\nname='n'\nkind='count'\n", "toml"), ("", "yaml")):
        out.append(("/api/import", json.dumps({"text": text, "format": fmt}).encode()))
    for census_eps in (1e-320, 5e-324, 1e-315, 1e308, 0.0, -1.0):
        out.append(("/api/plan", json.dumps({"plan": {**CENSUS, "epsilon": census_eps}}).encode()))
    rng = random.Random(0)
    keys = list(GOOD) + ["beta", "reserve_epsilon"]
    while len(out) < 320:  # random wrong types in random fields
        key = rng.choice(keys)
        out.append(("/api/plan", json.dumps({"plan": {**GOOD, key: rng.choice(BAD_VALUES)}}).encode()))
    return [(url, body) for url, body in out if not _valid(url, body)]


def _valid(url: str, body: bytes) -> bool:
    """Whether a generated request is in fact a valid plan (e.g. δ = 5e-324 is a valid δ): not malformed."""
    try:
        doc = json.loads(body)
        if url != "/api/plan" or not isinstance(doc, dict) or doc.get("modes", ["basic"]) != ["basic"]:
            return False
        plan_from_dict(doc["plan"])
    except (ValueError, KeyError, TypeError, RecursionError):
        return False
    return True


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app(), raise_server_exceptions=False)


def test_malformed_requests_are_4xx_with_one_line_messages(client: TestClient) -> None:
    cases = _malformed_bodies()
    assert len(cases) >= 200
    for url, body in cases:
        r = client.post(url, content=body, headers={"Content-Type": "application/json"})
        assert 400 <= r.status_code < 500, (url, body[:200], r.status_code, r.text[:300])
        answer = r.json()
        assert answer["ok"] is False and isinstance(answer["error"], str), (url, body[:200])
        assert "\n" not in answer["error"] and len(answer["error"]) <= 600, answer["error"][:700]
        assert answer["field"] is None or isinstance(answer["field"], str)
        assert answer["index"] is None or isinstance(answer["index"], int)


def test_errors_are_located_by_the_exception_not_the_text(client: TestClient) -> None:
    bad = {**GOOD, "statistics": [GOOD["statistics"][0], {**GOOD["statistics"][1], "upper": -3}]}
    answer = client.post("/api/plan", json={"plan": bad}).json()
    assert (answer["index"], answer["field"]) == (1, "upper")
    answer = client.post("/api/plan", json={"plan": {**CENSUS, "epsilon": 1e-320}}).json()
    assert (answer["index"], answer["field"]) == (None, "epsilon") and "1e-320" in answer["error"]
    locked = {**GOOD, "epsilon": 0.01, "statistics": [{"name": "n", "kind": "count", "lock_epsilon": 0.5}]}
    answer = client.post("/api/plan", json={"plan": locked}).json()
    assert answer["field"] == "epsilon" and "'n' (#1)" in answer["error"]


def test_body_size_limit() -> None:
    from optcomp.web.app import MAX_BODY_BYTES

    r = TestClient(create_app()).post("/api/plan", content=b" " * (MAX_BODY_BYTES + 1))
    assert r.status_code == 413 and "at most" in r.json()["error"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _request(url: str, payload: dict[str, Any] | None = None) -> tuple[int, dict[str, Any] | str]:
    data = None if payload is None else json.dumps(payload).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=HANG) as r:
            body = r.read().decode()
            return r.status, json.loads(body) if payload is not None else body
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read().decode())


def _slow_plan() -> dict[str, Any]:
    """A valid plan that takes seconds in every mode (2,000 distinct weights, mixed mechanisms)."""
    rng = random.Random(1)
    mechs = ("laplace", "gaussian", "discrete_laplace")
    stats = [{"name": f"s{i}", "kind": "count", "mechanism": mechs[i % 3], "weight": rng.uniform(0.1, 10.0)}
             for i in range(2000)]
    return {"epsilon": 1.0, "delta": 1e-6, "statistics": stats}


@pytest.mark.skipif(sys.platform == "win32", reason="SIGTERM")
def test_live_server_answers_while_a_hostile_plan_is_refused() -> None:
    port = _free_port()
    code = ("import uvicorn; from optcomp.web import create_app; "
            f"uvicorn.run(create_app(time_limit=1.0), host='127.0.0.1', port={port}, log_level='warning')")
    server = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + HANG  # start-up (imports) on a loaded machine: poll, not a fixed wait
        while True:
            assert server.poll() is None, f"the server exited ({server.returncode}) before answering"
            assert time.monotonic() < deadline, f"the server did not answer within {HANG:g} s"
            try:
                if _request(base + "/")[0] == 200:
                    break
            except OSError:
                time.sleep(0.1)
        # a subnormal budget (it once froze the planner): refused at once, naming the field
        status, answer = _request(base + "/api/plan", {"plan": {**CENSUS, "epsilon": 1e-320}, "modes": ["basic"]})
        assert status == 422 and isinstance(answer, dict) and answer["field"] == "epsilon"
        # a plan that computes past the limit: killed and refused, while GET / is answered meanwhile
        result: dict[str, Any] = {}

        def post() -> None:
            result["answer"] = _request(base + "/api/plan", {"plan": _slow_plan()})
            result["done"] = time.monotonic()

        worker = threading.Thread(target=post)
        worker.start()
        answered: list[float] = []
        while worker.is_alive():
            assert _request(base + "/")[0] == 200
            answered.append(time.monotonic())
        worker.join(HANG)
        status, answer = result["answer"]
        assert status == 422 and isinstance(answer, dict) and "limit of 1 s" in answer["error"]
        assert answered and answered[0] < result["done"], "GET / was not answered while the plan ran"
        # and the server still plans afterwards
        assert _request(base + "/api/plan", {"plan": GOOD, "modes": ["basic"]})[0] == 200
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(HANG)
        finally:
            if server.poll() is None:
                server.kill()
    assert server.returncode is not None

"""End-to-end: the read-only ledger page in headless Chromium, as a curator opens it (issue 36).

A zCDP ledger at (ε, δ) = (2, 1e-6) — released, charged and voided releases, two Gaussians of σ = 4
(the issue's input) and two refused attempts — is served by uvicorn on 127.0.0.1. At 1,400 and 800 px the
page must show the budget as a bar whose fraction is ``optcomp ledger report --json``'s, a chart with one
point per release, every release in words with its time and status, what still fits, the refused
attempts, and no hexadecimal float anywhere. Screenshots go to pytest's tmp dir, or to the directory
named by ``OPTCOMP_SCREENSHOTS`` (``OPTCOMP_SCREENSHOTS=docs/img`` renews the ones in docs/ledger.md).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
uvicorn = pytest.importorskip("uvicorn")
sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed")

from optcomp.ledger import BudgetExceeded, GaussianRelease, Ledger, PureDP, ReleaseIdClosed
from optcomp.web import create_app
from tests._live import live_server
from tests.test_web_browser import CHROMIUM, WAIT_MS

pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no Chromium found (install Debian's chromium package, or set OPTCOMP_CHROMIUM)",
)
HEX_FLOAT = re.compile(r"0x[0-9a-f]+(\.[0-9a-f]*)?p[+-]?\d+", re.IGNORECASE)
#: Largest difference (in fraction of the bar) between the drawn bar and the report: a pixel in 800.
BAR_PIXEL = 2e-3
RELEASE_IDS = ["median-income", "age-histogram", "cancelled-run", "income-by-county"]


@pytest.fixture
def ledger_path(tmp_path: Path) -> str:
    path = str(tmp_path / "census.ledger")
    led = Ledger.create(path, dataset="census-2020", relation="add_remove", epsilon=2, delta="1e-6", currency="zcdp")
    led.charge("median-income", PureDP("0.1"))
    led.released("median-income", "sha256:aa")
    led.charge("age-histogram", GaussianRelease(4))
    led.released("age-histogram", "sha256:bb")
    led.charge("cancelled-run", PureDP("0.2"))
    led.void("cancelled-run", "the job failed before reading the data")
    led.charge("income-by-county", GaussianRelease(4))
    with pytest.raises(ReleaseIdClosed):
        led.charge("cancelled-run", PureDP("0.2"))
    with pytest.raises(BudgetExceeded):
        led.charge("big-query", PureDP("0.5"))
    led.close()
    return path


def _shots(tmp_path: Path) -> Path:
    where = os.environ.get("OPTCOMP_SCREENSHOTS")
    return Path(where) if where else tmp_path


def _open(pw: Any, url: str, width: int) -> tuple[Any, Any, list[str]]:
    browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"], timeout=WAIT_MS)
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.set_default_timeout(WAIT_MS)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.goto(url)
    return browser, page, errors


def _report_json(path: str) -> dict[str, Any]:
    """``optcomp ledger report PATH --json`` as a user runs it: a process of its own. (Not ``main()`` under
    ``capsys``: uvicorn's logging set-up closes every existing handler, and a handler that holds the
    stream pytest captures into — absl's, after dp_accounting was imported by another test — would
    close pytest's capture file for the rest of the worker's run.)"""
    code = "import sys; from optcomp.cli import main; sys.exit(main(sys.argv[1:]))"
    done = subprocess.run([sys.executable, "-c", code, "ledger", "report", path, "--json"],
                          capture_output=True, text=True, check=True, timeout=WAIT_MS / 1000)
    report: dict[str, Any] = json.loads(done.stdout)
    return report


@pytest.mark.parametrize("width", [1400, 800])
def test_ledger_page_as_a_curator_reads_it(ledger_path: str, tmp_path: Path, width: int) -> None:
    report = _report_json(ledger_path)
    with live_server(create_app(ledger=ledger_path)) as url, sync_api.sync_playwright() as pw:
        browser, page, errors = _open(pw, url + "ledger", width)
        page.wait_for_function("document.body.dataset.ready === '1'", timeout=WAIT_MS)
        name = "ledger.png" if width == 1400 else f"ledger-{width}.png"
        page.screenshot(path=str(_shots(tmp_path) / name), full_page=True)
        bar = page.evaluate("""() => { const b = document.querySelector('#bar');
            return [Number(b.dataset.fraction), b.querySelector('.spent').getBoundingClientRect().width /
                    b.getBoundingClientRect().width]; }""")
        points = page.evaluate("[...document.querySelectorAll('#chart circle.pt')].map(c => c.dataset.release)")
        units = page.evaluate("[...document.querySelectorAll('#chart text.unit')].map(t => t.textContent)")
        strokes = page.evaluate("""() => [getComputedStyle(document.querySelector('#chart .swatch')).borderTopColor,
            getComputedStyle(document.querySelector('#chart polyline.series')).stroke]""")
        summary = page.locator("#summary").inner_text()
        fits = page.locator("#fits").inner_text()
        rows = [r.inner_text() for r in page.locator("#releases tbody tr").all()]
        refused = page.locator("#refused-card").inner_text()
        body = page.locator("body").inner_text()
        overflow = page.evaluate("document.documentElement.scrollWidth > window.innerWidth")
        browser.close()
    assert errors == []
    assert bar[0] == report["fraction_spent"] and abs(bar[1] - report["fraction_spent"]) < BAR_PIXEL
    assert points == RELEASE_IDS  # one point per release, in charge order
    # the second axis in the currency's units: its top is the threshold shown; the legend's swatch is the line's colour
    assert units[-1] == "ρ spent" and units[-2] == report["components_text"][0]["threshold_text"].lstrip("≈")
    assert len(strokes) == 2 and strokes[0] == strokes[1]
    assert "census-2020" in summary and "zCDP filter" in summary and "ε = 2, δ = 1e-6" in summary
    assert report["fraction_spent_text"] in summary and report["remaining_text"] in summary
    assert "1 charged, 2 released, 1 voided" in summary
    assert all(f["text"] in fits for f in report["what_fits"]) and "σ ≥" in fits and "ε ≤" in fits
    cells = [r.split("\t") for r in rows]
    assert [c[1:3] for c in cells] == [["median-income", "released"], ["age-histogram", "released"],
                                       ["cancelled-run", "voided"], ["income-by-county", "charged"]]
    assert "Gaussian, σ = 4, Δ = 1" in rows[1] and "ρ = 0.03125" in rows[1] and "pure DP, ε = 0.1" in rows[0]
    assert all(re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", c[3]) for c in cells)
    assert "2 refused attempts" in refused and "big-query" in refused and "outside the hash chain" in refused
    assert not HEX_FLOAT.search(body) and not overflow
    assert "= ≈" not in body and "of ≈" not in body  # a rounded amount reads "ρ ≈ 0.0675", never "ρ = ≈0.0675"
    refusal = next(r for r in report["refused"]["recent"] if r["release_id"] == "big-query")
    assert "remaining: ρ ≈" in refusal["reason"] and refusal["reason"] in refused


def test_ledger_page_without_a_ledger_names_the_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPTCOMP_LEDGER", raising=False)
    with live_server(create_app()) as url, sync_api.sync_playwright() as pw:
        browser, page, errors = _open(pw, url + "ledger", 1000)
        page.wait_for_function("!document.querySelector('#error').hidden", timeout=WAIT_MS)
        error = page.locator("#error").inner_text()
        browser.close()
    assert "optcomp serve --ledger FILE" in error and "create_app" not in error
    assert all("404" in e for e in errors)  # the API's 404, logged by the browser; no script error

"""End-to-end: the read-only ledger page in headless Chromium, as a curator opens it.

A filter ledger with released, charged and voided releases is served by uvicorn on 127.0.0.1; the
page must show the budget, what is spent and remaining, and every release with its status. The
screenshot is saved to pytest's tmp dir (``pytest --basetemp DIR`` keeps it).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("starlette")
uvicorn = pytest.importorskip("uvicorn")
sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed")

from optcomp.ledger import Ledger, PureDP
from optcomp.web import create_app
from tests._live import live_server
from tests.test_web_browser import CHROMIUM, WAIT_MS

pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no Chromium found (install Debian's chromium package, or set OPTCOMP_CHROMIUM)",
)


@pytest.fixture
def ledger_url(tmp_path: Path) -> Iterator[str]:
    path = str(tmp_path / "census.ledger")
    led = Ledger.create(path, dataset="census", relation="add_remove", epsilon=1, delta="1e-6", currency="zcdp")
    led.charge("median-income", PureDP("0.1"))
    led.released("median-income", "sha256:aa")
    led.charge("age-histogram", PureDP("0.15"))
    led.charge("cancelled-run", PureDP("0.05"))
    led.void("cancelled-run", "the job failed before reading the data")
    led.close()
    with live_server(create_app(ledger=path)) as url:
        yield url + "ledger"


def test_ledger_page_shows_budget_and_releases(ledger_url: str, tmp_path: Path) -> None:
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"], timeout=WAIT_MS)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.set_default_timeout(WAIT_MS)
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(ledger_url)
        page.wait_for_function("document.querySelectorAll('#releases tbody tr').length === 3", timeout=WAIT_MS)
        page.screenshot(path=str(tmp_path / "ledger.png"), full_page=True)
        summary = page.locator("#summary").inner_text()
        rows = [r.inner_text() for r in page.locator("#releases tbody tr").all()]
        browser.close()
    assert errors == []
    assert "census" in summary and "zcdp" in summary and "remaining" in summary
    assert "1 charged, 1 released, 1 voided" in summary
    assert [r.split("\t")[1:3] for r in rows] == [
        ["median-income", "released"], ["age-histogram", "charged"], ["cancelled-run", "voided"]]

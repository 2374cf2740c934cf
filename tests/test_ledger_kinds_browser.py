"""The ``/ledger`` page with the release kinds of issue 35 item 4, as a person reads it in headless Chromium:
each release in words (Laplace, zCDP with its δ share, discrete Gaussian, Rényi curve), "what still fits"
with one more zCDP release's ρ, no hexadecimal float, nothing wider than the window."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed")

from optcomp.ledger import DiscreteGaussianRelease, LaplaceRelease, Ledger, RenyiRelease, ZCDPRelease
from optcomp.web import create_app
from tests._live import live_server
from tests.test_ledger_browser import HEX_FLOAT, _open, _report_json, _shots
from tests.test_web_browser import CHROMIUM, WAIT_MS

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium found (install Debian's chromium package)")


@pytest.mark.parametrize("width", [1400, 800])
def test_ledger_page_shows_the_new_kinds(tmp_path: Path, width: int) -> None:
    path = str(tmp_path / "kinds.ledger")
    led = Ledger.create(path, dataset="survey-2026", relation="add_remove", epsilon=3, delta="1e-6",
                        currency="rdp", orders=[16])
    led.charge("mean-age", LaplaceRelease(20))
    led.charge("census-style", ZCDPRelease("0.01", "1e-9"))
    led.charge("county-counts", DiscreteGaussianRelease(30, 2, dimension=3))
    led.charge("dp-sgd-run", RenyiRelease((2, 8, 16, 32), ("0.01", "0.05", "0.1", "0.2")))
    led.close()
    report = _report_json(path)
    with live_server(create_app(ledger=path)) as url, sync_api.sync_playwright() as pw:
        browser, page, errors = _open(pw, url + "ledger", width)
        page.wait_for_function("document.body.dataset.ready === '1'", timeout=WAIT_MS)
        page.screenshot(path=str(_shots(tmp_path) / f"ledger-kinds-{width}.png"), full_page=True)
        rows = [r.inner_text() for r in page.locator("#releases tbody tr").all()]
        fits = page.locator("#fits").inner_text()
        body = page.locator("body").inner_text()
        overflow = page.evaluate("document.documentElement.scrollWidth > window.innerWidth")
        clipped = page.evaluate("""() => { const t = document.querySelector('#releases');
            return t.getBoundingClientRect().right > t.parentElement.getBoundingClientRect().right + 1; }""")
        browser.close()
    assert errors == []
    assert "Laplace, b = 20, Δ = 1" in rows[0]
    assert "zCDP, ρ = 0.01, δ share = 1e-9" in rows[1]
    assert "discrete Gaussian, σ = 30, Δ = 2, dimension 3" in rows[2]
    assert "Rényi curve at 4 orders" in rows[3]
    assert all(f["text"] in fits for f in report["what_fits"]) and "ρ ≤" in fits
    assert not HEX_FLOAT.search(body) and not overflow and not clipped  # rdp's two-part charges wrap at 800 px
    assert not re.search(r"\bNaN\b|undefined", body)

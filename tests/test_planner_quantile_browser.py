"""End-to-end: a quantile (the exponential mechanism) on the planner page, as a person adds one.

Skipped, with the reason, when Playwright or a Chromium binary is missing (the fixtures and helpers are
``tests/test_web_browser.py``'s). Screenshots are saved to pytest's tmp dir.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed")

from optcomp.planner import MODES, plan_all, plan_from_dict
from tests.test_web_browser import (
    _number,
    _row,
    _wait_error,
    _wait_planned,
    page,
    pytestmark,
    server_url,
)

__all__ = ["page", "pytestmark", "server_url"]  # the fixtures and the Chromium skip, re-used


def test_a_median_is_added_typed_and_shown_in_every_mode(page: Any, tmp_path: Path) -> None:
    pg = page
    pg.click("#add")
    _wait_planned(pg)
    row = _row(pg, 3)
    row.locator('[data-key="name"]').fill("median_age")
    row.locator('[data-key="kind"]').select_option("quantile")  # the mechanism follows: exponential
    assert row.locator('[data-key="mechanism"]').input_value() == "exponential"
    assert row.locator('[data-key="q"]').input_value() == "0.5" and row.locator('[data-key="q"]').is_enabled()
    assert row.locator('[data-key="lower"]').is_disabled() and row.locator('[data-key="upper"]').is_disabled()
    row.locator('[data-key="bins"]').fill("121")
    _wait_planned(pg)
    pg.screenshot(path=str(tmp_path / "quantile-added.png"), full_page=True)
    shown = {}
    for mode in MODES:
        pg.select_option("#mode", mode)
        acc = row.locator(".acc").inner_text()
        assert acc.startswith("±") and "ranks" in acc, acc
        shown[mode] = _number(acc)
    # the numbers are the library's, for the plan the page sends
    plan = plan_from_dict(pg.evaluate("() => buildDoc()"))
    assert plan.statistics[3].candidates == 121 and plan.statistics[3].quantile == 0.5
    want = plan_all(plan)
    for mode in MODES:
        assert shown[mode] == pytest.approx(want[mode].statistics[3].accuracy, rel=2e-3), mode
    assert shown["mechanism_aware"] < shown["basic"] and shown["optimal"] < shown["basic"]
    chart = pg.locator("#chart svg").inner_html()
    assert "ranks" in chart
    pg.screenshot(path=str(tmp_path / "quantile-modes.png"), full_page=True)


def test_a_bad_quantile_is_named_under_its_field(page: Any, tmp_path: Path) -> None:
    pg = page
    row = _row(pg, 0)
    row.locator('[data-key="kind"]').select_option("quantile")
    row.locator('[data-key="bins"]').fill("1")  # one candidate: nothing to choose
    _wait_error(pg)
    msg = pg.locator('tr.msg[data-index="0"] .error').inner_text()
    assert "field 'candidates'" in msg and "[2, 2**53]" in msg
    assert "invalid" in (row.locator('[data-key="bins"]').get_attribute("class") or "")
    row.locator('[data-key="bins"]').fill("50")
    row.locator('[data-key="q"]').fill("1.5")
    _wait_error(pg)
    assert "field 'quantile' must be in (0, 1)" in pg.locator('tr.msg[data-index="0"] .error').inner_text()
    assert "invalid" in (row.locator('[data-key="q"]').get_attribute("class") or "")
    row.locator('[data-key="mechanism"]').select_option("laplace")  # back to a count: the kind follows
    assert row.locator('[data-key="kind"]').input_value() == "count"
    _wait_planned(pg)
    pg.screenshot(path=str(tmp_path / "quantile-error-cleared.png"), full_page=True)

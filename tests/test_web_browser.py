"""End-to-end: the planner page in headless Chromium (Playwright + the system Chromium).

Skipped, with the reason, when Playwright or a Chromium binary is missing. Screenshots of every step are
saved to pytest's tmp dir (``pytest --basetemp DIR`` keeps them in a known place).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
uvicorn = pytest.importorskip("uvicorn")
sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed")

from optcomp.planner import load_plan
from optcomp.web import create_app
from tests._live import live_server


def _chromium() -> str | None:
    for candidate in (os.environ.get("OPTCOMP_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser",
                      shutil.which("chromium"), shutil.which("chromium-browser")):
        if candidate and Path(candidate).exists():
            return candidate
    return None


CHROMIUM = _chromium()
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no Chromium found (install Debian's chromium package, or set OPTCOMP_CHROMIUM)",
)
#: Longest wait (ms) for one re-plan to show in the page (mechanism-aware PLD on a loaded machine); also
#: Playwright's limit for launching Chromium and for every page action (its own defaults, 30 s for actions
#: and 5 s for some waits, are hang guards sized for an idle machine).
WAIT_MS = 60_000


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    with live_server(create_app()) as url:
        yield url


@pytest.fixture
def page(server_url: str) -> Iterator[Any]:
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"], timeout=WAIT_MS)
        context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
        context.set_default_timeout(WAIT_MS)
        pg = context.new_page()
        errors: list[str] = []
        pg.on("pageerror", lambda exc: errors.append(str(exc)))
        pg.goto(server_url)
        _wait_planned(pg)
        yield pg
        assert errors == [], f"JavaScript errors: {errors}"
        context.close()
        browser.close()


def _wait_planned(pg: Any) -> None:
    pg.wait_for_function("document.querySelector('#status').textContent.startsWith('updated')", timeout=WAIT_MS)


def _wait_error(pg: Any) -> None:
    pg.wait_for_function("document.querySelector('#status').textContent.startsWith('not planned')", timeout=WAIT_MS)


def _row(pg: Any, i: int) -> Any:
    return pg.locator(f'tr.stat[data-index="{i}"]')


def _number(text: str) -> float:
    return float(text.replace("±", "").replace("×", "").split()[0])


def _build_three(pg: Any) -> None:
    """Remove the default statistics and build: a count, a bounded sum, a Gaussian histogram."""
    while pg.locator("tr.stat").count():
        pg.locator("tr.stat button.remove").first.click()
    _wait_error(pg)  # an empty plan is refused, with the message in the budget card
    assert "field 'statistics' must be a non-empty list" in pg.locator("#global-error").inner_text()
    for _ in range(3):
        pg.click("#add")
    for i, (name, kind, mech) in enumerate([("visits", "count", "laplace"), ("spend", "sum", "laplace"),
                                            ("region", "histogram", "gaussian")]):
        row = _row(pg, i)
        row.locator('[data-key="name"]').fill(name)
        row.locator('[data-key="kind"]').select_option(kind)
        row.locator('[data-key="mechanism"]').select_option(mech)
    _row(pg, 1).locator('[data-key="upper"]').fill("500")
    _row(pg, 2).locator('[data-key="bins"]').fill("12")
    _wait_planned(pg)


def _epsilons(pg: Any) -> list[float]:
    return [_number(_row(pg, i).locator(".eps").inner_text()) for i in range(pg.locator("tr.stat").count())]


def test_build_weight_lock(page: Any, tmp_path: Path) -> None:
    pg = page
    pg.screenshot(path=str(tmp_path / "0-default.png"), full_page=True)
    _build_three(pg)
    pg.screenshot(path=str(tmp_path / "1-three-statistics.png"), full_page=True)
    eps = _epsilons(pg)
    assert eps[0] == pytest.approx(eps[1]) == pytest.approx(eps[2])  # equal weights, equal budgets
    assert pg.locator("#modes tbody tr").count() == 5
    assert "✓" in pg.locator("#modes tbody tr.selected").inner_text()
    assert "all bins" in _row(pg, 2).locator(".acc").inner_text()
    assert pg.locator("#chart svg rect.bar-mode").count() == 3 + 1  # three bars and the legend swatch

    # Changing a weight: 'spend' gets three times the budget of 'visits'.
    acc_before = _number(_row(pg, 1).locator(".acc").inner_text())
    _row(pg, 1).locator('[data-key="weight"]').fill("3")
    _wait_planned(pg)
    eps = _epsilons(pg)
    assert eps[1] == pytest.approx(3 * eps[0], rel=1e-3)
    assert _number(_row(pg, 1).locator(".acc").inner_text()) < acc_before
    pg.screenshot(path=str(tmp_path / "2-weight.png"), full_page=True)

    # Locking 'visits' at ε = 0.05: held in every accounting mode.
    _row(pg, 0).locator('[data-key="lock"]').select_option("epsilon")
    _row(pg, 0).locator('[data-key="lockValue"]').fill("0.05")
    _wait_planned(pg)
    for mode in ("basic", "kov", "optimal", "mechanism_aware"):
        pg.select_option("#mode", mode)
        assert _number(_row(pg, 0).locator(".eps").inner_text()) == 0.05
    pg.screenshot(path=str(tmp_path / "3-locked.png"), full_page=True)


def test_an_answer_to_a_superseded_form_is_dropped(page: Any) -> None:
    """An answer arriving after a later edit, within that edit's debounce, is not shown: the status does not
    say 'updated' until the latest form is planned. (The page used to show such an answer; on a slow machine
    a wait for 'updated' then read the numbers of the form before the edit.) The server's answers are held
    back here (Playwright routes), so the order of events does not depend on the machine's speed."""
    pg = page
    _build_three(pg)
    held: list[Any] = []
    pg.route("**/api/plan", lambda route: held.append(route))
    weight = _row(pg, 1).locator('[data-key="weight"]')
    weight.fill("3")
    while not held:
        pg.wait_for_timeout(20)
    stale = held[0].fetch()  # the server's answer for weight 3, kept from the page until the next edit
    weight.fill("5")
    held[0].fulfill(response=stale)
    while len(held) < 2:  # the debounce has run out: the latest form's request is sent (and held)
        pg.wait_for_timeout(20)
    assert pg.locator("#status").inner_text().startswith("planning")
    held[1].continue_()
    pg.unroute("**/api/plan")
    _wait_planned(pg)
    eps = _epsilons(pg)
    assert eps[1] == pytest.approx(5 * eps[0], rel=1e-3)


def test_bad_input_shows_inline_message(page: Any, tmp_path: Path) -> None:
    pg = page
    _row(pg, 1).locator('[data-key="weight"]').fill("heavy")
    _wait_error(pg)
    message = pg.locator('tr.msg[data-index="1"] .error')
    assert message.is_visible()
    assert "statistic 'mean_age' (#2): field 'weight' must be a number" in message.inner_text()
    assert "invalid" in (_row(pg, 1).locator('[data-key="weight"]').get_attribute("class") or "")
    pg.screenshot(path=str(tmp_path / "4-bad-weight.png"), full_page=True)
    _row(pg, 1).locator('[data-key="weight"]').fill("2")
    _wait_planned(pg)
    assert not message.is_visible()

    pg.fill("#g-delta", "2")
    _wait_error(pg)
    assert "plan: field 'delta' must be in [0, 0.1], got 2.0" in pg.locator("#global-error").inner_text()
    assert "invalid" in (pg.locator("#g-delta").get_attribute("class") or "")
    pg.screenshot(path=str(tmp_path / "5-bad-delta.png"), full_page=True)
    pg.fill("#g-delta", "1e-6")
    _wait_planned(pg)
    assert not pg.locator("#global-error").is_visible()


def test_save_and_reload(page: Any, tmp_path: Path) -> None:
    pg = page
    _build_three(pg)
    _row(pg, 2).locator('[data-key="lock"]').select_option("accuracy")
    _row(pg, 2).locator('[data-key="lockValue"]').fill("80")
    _wait_planned(pg)
    before = [_row(pg, i).locator(".acc").inner_text() for i in range(3)]
    with pg.expect_download() as info:
        pg.click("#save")
    saved = tmp_path / "saved.toml"
    info.value.save_as(str(saved))
    plan = load_plan(saved)
    assert [s.name for s in plan.statistics] == ["visits", "spend", "region"]
    assert plan.statistics[2].lock_accuracy == 80.0 and plan.statistics[1].upper == 500.0

    pg.reload()
    _wait_planned(pg)
    assert _row(pg, 0).locator('[data-key="name"]').input_value() == "population"  # back to the default
    pg.set_input_files("#load", str(saved))
    pg.wait_for_function("document.querySelector('#file-message').textContent.startsWith('loaded')",
                         timeout=WAIT_MS)
    _wait_planned(pg)
    assert [_row(pg, i).locator('[data-key="name"]').input_value() for i in range(3)] == ["visits", "spend", "region"]
    assert _row(pg, 2).locator('[data-key="lock"]').input_value() == "accuracy"
    assert [_row(pg, i).locator(".acc").inner_text() for i in range(3)] == before
    assert _number(_row(pg, 2).locator(".acc").inner_text()) <= 80.0
    pg.screenshot(path=str(tmp_path / "6-reloaded.png"), full_page=True)

    broken = tmp_path / "broken.toml"
    broken.write_text(saved.read_text().replace("bins = 12", "bins = 0"))
    pg.set_input_files("#load", str(broken))
    pg.wait_for_function("document.querySelector('#file-message').textContent.startsWith('not loaded')",
                         timeout=WAIT_MS)
    assert "statistic 'region' (#3): field 'bins'" in pg.locator("#file-message").inner_text()


def test_mechanism_menu_is_the_table(page: Any, tmp_path: Path) -> None:
    """Every statistic's mechanism menu lists the name table's planner entries, in order, as the server sends them."""
    from optcomp.mechanisms import planner_mechanisms

    pg = page
    want = [(e.name, e.label) for e in planner_mechanisms()]
    assert pg.locator("tr.stat").count() == 3
    for i in range(3):
        options = _row(pg, i).locator('[data-key="mechanism"] option')
        got = [(options.nth(j).get_attribute("value"), options.nth(j).inner_text()) for j in range(options.count())]
        assert got == want
    assert _row(pg, 0).locator('[data-key="mechanism"]').input_value() == "discrete_laplace"  # the default plan's
    pg.screenshot(path=str(tmp_path / "7-mechanism-menu.png"), full_page=True)


# ---------------------------------------------------------------------------------------------
# Narrow and wide windows, a failed load, a lock chosen before its value (issue 27, item 17).
# ---------------------------------------------------------------------------------------------

CENSUS = Path(__file__).resolve().parents[1] / "examples" / "census_plan.toml"

#: Smallest on-screen font size (px) accepted for the chart's labels and values.
MIN_CHART_FONT_PX = 10.5

_LAYOUT_PROBE = """() => {
  const vw = document.documentElement.clientWidth;
  const rows = [...document.querySelectorAll('tr.stat')];
  const right = (e) => e.getBoundingClientRect().right;
  const cut = (sel) => rows.map((r) => r.querySelector(sel)).filter((e) => e && !e.disabled)
      .filter((e) => e.scrollWidth > e.clientWidth + 1).map((e) => e.value);
  const svg = document.querySelector('#chart svg');
  const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  const fonts = [...svg.querySelectorAll('text')].map((t) => parseFloat(getComputedStyle(t).fontSize) * scale);
  return {
    viewport: vw,
    pageWidth: document.documentElement.scrollWidth,
    outRight: Math.max(...rows.flatMap((r) => [...r.querySelectorAll('td.out, td.c-remove')].map(right))),
    cutNames: cut('[data-key="name"]'), cutUppers: cut('[data-key="upper"]'), cutLowers: cut('[data-key="lower"]'),
    chartFont: Math.min(...fonts),
    chartCut: [...svg.querySelectorAll('text.label')].filter((t) => t.textContent.endsWith('…')).map((t) => t.textContent),
  };
}"""


def _open(server_url: str, width: int) -> Iterator[Any]:
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"], timeout=WAIT_MS)
        pg = browser.new_page(viewport={"width": width, "height": 900})
        pg.set_default_timeout(WAIT_MS)
        errors: list[str] = []
        pg.on("pageerror", lambda exc: errors.append(str(exc)))
        pg.goto(server_url)
        _wait_planned(pg)
        yield pg
        assert errors == [], f"JavaScript errors: {errors}"
        browser.close()


def _load_census(pg: Any) -> None:
    pg.set_input_files("#load", str(CENSUS))
    pg.wait_for_function("document.querySelector('#file-message').textContent.startsWith('loaded')", timeout=WAIT_MS)
    _wait_planned(pg)


@pytest.mark.parametrize("width", [800, 1400])
def test_census_plan_fits_the_window(server_url: str, width: int, tmp_path: Path) -> None:
    """Every result column is inside the window, no name or bound is cut, the chart is drawn at 1:1 with
    readable labels, none of them shortened."""
    for pg in _open(server_url, width):
        _load_census(pg)
        pg.screenshot(path=str(tmp_path / f"census-{width}.png"), full_page=True)
        got = pg.evaluate(_LAYOUT_PROBE)
        assert got["pageWidth"] <= got["viewport"], got
        assert got["outRight"] <= got["viewport"], got
        assert got["cutNames"] == [] and got["cutUppers"] == [] and got["cutLowers"] == [], got
        assert got["chartFont"] >= MIN_CHART_FONT_PX and got["chartCut"] == [], got
        assert pg.locator(".acc").first.is_visible() and pg.locator(".gain").first.is_visible()


def test_a_failed_load_keeps_the_plan(server_url: str, tmp_path: Path) -> None:
    """A file that does not load says why in the file bar and leaves the valid plan on the page as it was."""
    for pg in _open(server_url, 800):
        _load_census(pg)
        before = [_row(pg, i).locator(".eps").inner_text() for i in range(3)]
        broken = tmp_path / "broken.toml"
        broken.write_text(CENSUS.read_text(encoding="utf-8").replace("weight = 2.0", "weight = -1", 1), encoding="utf-8")
        pg.set_input_files("#load", str(broken))
        pg.wait_for_function("document.querySelector('#file-message').textContent.startsWith('not loaded')",
                             timeout=WAIT_MS)
        pg.screenshot(path=str(tmp_path / "failed-load.png"), full_page=True)
        message = pg.locator("#file-message")
        assert "broken.toml" in message.inner_text() and "field 'weight'" in message.inner_text()
        assert "error" in (message.get_attribute("class") or "") and message.get_attribute("role") == "alert"
        assert "invalid" in (pg.locator("label.file").get_attribute("class") or "")
        assert "has-error" not in (pg.locator("body").get_attribute("class") or "")  # nothing greyed out
        assert pg.locator("tr.msg:not([hidden])").count() == 0 and pg.locator("#stats .invalid").count() == 0
        assert [_row(pg, i).locator(".eps").inner_text() for i in range(3)] == before
        _load_census(pg)  # a good file afterwards clears the message
        assert "error" not in (message.get_attribute("class") or "")


def test_choosing_a_lock_waits_for_its_value(server_url: str, tmp_path: Path) -> None:
    for pg in _open(server_url, 800):
        _row(pg, 0).locator('[data-key="lock"]').select_option("accuracy")
        value = _row(pg, 0).locator('[data-key="lockValue"]')
        assert value.evaluate("e => document.activeElement === e") and value.get_attribute("placeholder") == "α ≤"
        _wait_planned(pg)
        pg.screenshot(path=str(tmp_path / "lock-chosen.png"))
        assert "applies once its value is typed" in pg.locator("#status").inner_text()
        assert pg.locator("tr.msg:not([hidden])").count() == 0 and not pg.locator("#global-error").is_visible()
        value.fill("40")
        _wait_planned(pg)
        assert _number(_row(pg, 0).locator(".acc").inner_text()) <= 40.0
        assert "applies once" not in pg.locator("#status").inner_text()

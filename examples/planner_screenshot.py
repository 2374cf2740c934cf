"""Regenerate ``docs/img/planner.png``: the planner page with ``examples/census_plan.toml`` loaded.

Needs the ``web`` extra, Playwright for Python and a Chromium (``/usr/bin/chromium`` or $OPTCOMP_CHROMIUM).
Run: ``PYTHONPATH=src python examples/planner_screenshot.py``.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from pathlib import Path

import uvicorn
from playwright.sync_api import sync_playwright

from optcomp.web import create_app

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(), host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    ready = "document.querySelector('#status').textContent.startsWith('updated')"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=os.environ.get("OPTCOMP_CHROMIUM", "/usr/bin/chromium"))
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(f"http://127.0.0.1:{port}/")
        page.wait_for_function(ready, timeout=120_000)
        page.set_input_files("#load", str(ROOT / "examples" / "census_plan.toml"))
        page.wait_for_function("document.querySelector('#file-message').textContent.startsWith('loaded')")
        page.wait_for_function(ready, timeout=120_000)
        page.select_option("#mode", "mechanism_aware")
        page.screenshot(path=str(ROOT / "docs" / "img" / "planner.png"), full_page=True)
        browser.close()
    server.should_exit = True


if __name__ == "__main__":
    main()

"""Read-only ledger view for the local web page: ``GET /ledger`` (the page) and ``GET /api/ledger``.

The ledger shown is fixed when the app is made — ``optcomp serve --ledger FILE`` (``--ledger-schema``
for a ``postgresql://`` conninfo), ``create_app(ledger=PATH, ledger_schema=…)``, or the environment
variables ``OPTCOMP_LEDGER`` and ``OPTCOMP_LEDGER_SCHEMA`` — never taken from a request, so a visitor cannot make the server open other
files. Nothing here writes. The page shows the budget as a bar and a chart of the cumulative spend over
the releases, what still fits, every release in words (time, status, charge) and the refused attempts;
every number comes from ``Ledger.report`` and ``Ledger.history`` (exact values and their words beside).
"""

from __future__ import annotations

import os
from importlib import resources
from typing import Any

from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Route

_STATIC = resources.files("optcomp.web") / "static"
#: What the page says when no ledger was given: the command a person types.
NO_LEDGER = ("no ledger to show: start the page with `optcomp serve --ledger FILE` (or set OPTCOMP_LEDGER=FILE "
             "before `optcomp serve`)")


def ledger_routes(ledger: str | None = None, schema: str | None = None) -> list[BaseRoute]:
    """The two read-only routes for ``ledger`` (default ``$OPTCOMP_LEDGER``; 404 when none is set) in the
    PostgreSQL ``schema`` (default ``$OPTCOMP_LEDGER_SCHEMA``, else the store's default)."""
    location = ledger if ledger is not None else os.environ.get("OPTCOMP_LEDGER")
    if schema is None:
        schema = os.environ.get("OPTCOMP_LEDGER_SCHEMA")  # PostgreSQL only; None: the default schema

    def page(request: Request) -> Response:
        return FileResponse(str(_STATIC / "ledger.html"), media_type="text/html")

    def api(request: Request) -> Response:  # sync: starlette runs it in a worker thread
        if not location:
            return JSONResponse({"ok": False, "error": NO_LEDGER}, status_code=404)
        from optcomp.ledger import Ledger, StoreError

        try:
            led = Ledger.open(location, schema=schema, read_only=True)
            try:
                report: dict[str, Any] = led.report()
                releases = led.history()
            finally:
                led.close()
        except (ValueError, StoreError) as exc:
            return JSONResponse({"ok": False, "error": str(exc)}, status_code=404)
        return JSONResponse({"ok": True, "report": report, "releases": releases})

    return [Route("/ledger", page), Route("/api/ledger", api)]

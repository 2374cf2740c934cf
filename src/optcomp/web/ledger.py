"""Read-only ledger view for the local web page: ``GET /ledger`` (the page) and ``GET /api/ledger``.

The ledger shown is fixed when the app is made — ``create_app(ledger=PATH)``, or the environment
variable ``OPTCOMP_LEDGER`` (a SQLite path, or a ``postgresql://`` conninfo with
``OPTCOMP_LEDGER_SCHEMA``) — never taken from a request, so a visitor cannot make the server open other
files. Nothing here writes: the page lists the releases, the spent and the remaining budget.
"""

from __future__ import annotations

import os
from importlib import resources
from typing import Any

from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Route

_STATIC = resources.files("optcomp.web") / "static"


def ledger_routes(ledger: str | None = None) -> list[BaseRoute]:
    """The two read-only routes for ``ledger`` (default ``$OPTCOMP_LEDGER``; 404 when none is set)."""
    location = ledger if ledger is not None else os.environ.get("OPTCOMP_LEDGER")
    schema = os.environ.get("OPTCOMP_LEDGER_SCHEMA")  # PostgreSQL only; None: the default schema

    def page(request: Request) -> Response:
        return FileResponse(str(_STATIC / "ledger.html"), media_type="text/html")

    def api(request: Request) -> Response:  # sync: starlette runs it in a worker thread
        if not location:
            return JSONResponse({"ok": False, "error": "no ledger configured (create_app(ledger=…) or "
                                 "OPTCOMP_LEDGER)"}, status_code=404)
        from optcomp.ledger import Ledger, StoreError

        try:
            led = Ledger.open(location, schema=schema, read_only=True)
        except (ValueError, StoreError) as exc:
            return JSONResponse({"ok": False, "error": str(exc)}, status_code=404)
        try:
            report: dict[str, Any] = led.report()
            releases = [{"release_id": t.release_id, "seq": t.seq, "status": t.status, "slot": t.slot,
                         "release": t.release.to_json(), "charge": [float(c) for c in t.charge]}
                        for t in led.tickets()]
        finally:
            led.close()
        return JSONResponse({"ok": True, "report": report, "releases": releases})

    return [Route("/ledger", page), Route("/api/ledger", api)]

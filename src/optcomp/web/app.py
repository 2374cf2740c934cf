"""Routes: ``/`` (the page), ``/static/*``, ``POST /api/plan``, ``POST /api/export``, ``POST /api/import``;
``GET /ledger`` and ``GET /api/ledger`` (read-only ledger view, :mod:`optcomp.web.ledger`)."""

from __future__ import annotations

import json
import re
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from optcomp.planner import (
    MODES,
    plan_all,
    plan_from_dict,
    plan_from_text,
    plan_to_dict,
    plan_to_toml,
    result_to_dict,
)
from optcomp.web.ledger import ledger_routes

_STATIC = resources.files("optcomp.web") / "static"
_WHERE = re.compile(r"statistic (?:'.*?' )?\(?#(\d+)\)?")
_FIELD = re.compile(r"field '(\w+)'")
#: Largest plan the page accepts (statistics), so that one request cannot tie the server up for minutes.
MAX_STATISTICS = 2000


def _error(message: str, status: int = 422) -> JSONResponse:
    """``{"ok": false, ...}`` locating the statistic (0-based index) and the field named by ``message``."""
    where = _WHERE.search(message)
    field = _FIELD.search(message)
    return JSONResponse(
        {"ok": False, "error": message, "index": int(where.group(1)) - 1 if where else None,
         "field": field.group(1) if field else None},
        status_code=status,
    )


async def _body(request: Request) -> Any:
    raw = await request.body()
    try:
        return json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"request body is not valid JSON: {exc}") from exc


async def index(request: Request) -> Response:
    return FileResponse(str(_STATIC / "index.html"), media_type="text/html")


async def api_plan(request: Request) -> Response:
    """Validate ``{"plan": <document>, "modes": [...]}`` and return every mode's allocation."""
    try:
        body = await _body(request)
        if not isinstance(body, dict) or "plan" not in body:
            raise ValueError("request body must be an object with a 'plan' field")
        modes = body.get("modes", list(MODES))
        if not isinstance(modes, list) or not modes or any(m not in MODES for m in modes):
            raise ValueError(f"modes must be a non-empty list of {', '.join(MODES)}, got {modes!r}")
        plan = plan_from_dict(body["plan"])
        if len(plan.statistics) > MAX_STATISTICS:
            raise ValueError(f"plan: at most {MAX_STATISTICS} statistics in the web page, got {len(plan.statistics)}")
        results = plan_all(plan, modes)
    except (ValueError, NotImplementedError, OverflowError) as exc:
        return _error(" ".join(str(exc).splitlines()))
    return JSONResponse({"ok": True, "plan": plan_to_dict(plan), "result": result_to_dict(results)})


async def api_export(request: Request) -> Response:
    """The validated plan document as TOML text (for "Save")."""
    try:
        body = await _body(request)
        plan = plan_from_dict(body.get("plan") if isinstance(body, dict) else None)
    except ValueError as exc:
        return _error(" ".join(str(exc).splitlines()))
    return PlainTextResponse(plan_to_toml(plan), media_type="application/toml")


async def api_import(request: Request) -> Response:
    """``{"text": <TOML or JSON>, "format": "toml" | "json"}`` → the validated plan document (for "Load")."""
    try:
        body = await _body(request)
        if not isinstance(body, dict) or not isinstance(body.get("text"), str):
            raise ValueError("request body must be an object with a 'text' string")  # noqa: TRY004
        fmt = body.get("format", "toml")
        if fmt not in ("toml", "json"):
            raise ValueError(f"format must be toml or json, got {fmt!r}")
        plan = plan_from_text(body["text"], fmt=fmt)
    except ValueError as exc:
        return _error(" ".join(str(exc).splitlines()))
    return JSONResponse({"ok": True, "plan": plan_to_dict(plan)})


def create_app(ledger: str | None = None) -> Starlette:
    """The planner web application (mount it in any ASGI server; ``optcomp serve`` uses uvicorn), plus
    the read-only ledger view of ``ledger`` (default ``$OPTCOMP_LEDGER``) at ``/ledger``."""
    return Starlette(
        routes=[
            Route("/", index),
            Route("/api/plan", api_plan, methods=["POST"]),
            Route("/api/export", api_export, methods=["POST"]),
            Route("/api/import", api_import, methods=["POST"]),
            *ledger_routes(ledger),
            Mount("/static", app=StaticFiles(directory=str(_STATIC)), name="static"),
        ]
    )

"""Routes: ``/`` (the page), ``/static/*``, ``GET /api/mechanisms`` (the page's mechanism menu),
``POST /api/plan``, ``POST /api/export``, ``POST /api/import``; ``GET /ledger`` and ``GET /api/ledger`` (read-only ledger view, :mod:`optcomp.web.ledger`).

Requests are validated on the event loop (bounded work: the body is at most ``MAX_BODY_BYTES`` and a
plan at most ``MAX_STATISTICS`` statistics); the plan itself is computed in a separate worker process
(:mod:`optcomp.web._worker`) with a time limit per request, so that no request can stop the server from
answering others, and one that runs too long is killed and answered with an error.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from optcomp.mechanisms import planner_mechanisms
from optcomp.planner import MODES, plan_from_dict, plan_from_text, plan_to_toml, show
from optcomp.web._worker import PLAN_TIME_LIMIT, PlanRunner, RequestError
from optcomp.web.ledger import ledger_routes

_STATIC = resources.files("optcomp.web") / "static"
#: Largest plan the page accepts (statistics), so that one request cannot tie a worker up for minutes.
MAX_STATISTICS = 2000
#: Largest request body (bytes): 2,000 statistics take about 300 kB as JSON.
MAX_BODY_BYTES = 1 << 20


def _error(exc: ValueError) -> JSONResponse:
    """``{"ok": false, "error", "index", "field"}`` from the exception's own ``field``/``index`` attributes
    (:class:`optcomp.planner.PlanError` and :class:`RequestError` carry them; other errors locate nothing)."""
    return JSONResponse(
        {"ok": False, "error": " ".join(str(exc).splitlines()), "index": getattr(exc, "index", None),
         "field": getattr(exc, "field", None)},
        status_code=getattr(exc, "status", 422),
    )


async def _body(request: Request) -> Any:
    """The request's JSON body (at most ``MAX_BODY_BYTES``; NaN/Infinity literals are read as floats and
    then refused by the field they land in)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise RequestError(f"request body must be at most {MAX_BODY_BYTES} bytes, got {declared}", status=413)
    raw = bytearray()
    async for chunk in request.stream():
        raw.extend(chunk)
        if len(raw) > MAX_BODY_BYTES:
            raise RequestError(f"request body must be at most {MAX_BODY_BYTES} bytes", status=413)
    try:
        return json.loads(bytes(raw))
    except RecursionError as exc:
        raise RequestError("request body is not valid JSON: nested too deeply") from exc
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, an integer literal too long
        raise RequestError(f"request body is not valid JSON: {' '.join(str(exc).splitlines())}") from exc


Handler = Callable[[Request], Awaitable[Response]]


def _api(handler: Handler) -> Handler:
    """An API route: a refused request (any ``ValueError``) is answered 4xx with its one-line message."""

    async def route(request: Request) -> Response:
        try:
            return await handler(request)
        except ValueError as exc:
            return _error(exc)
        except RecursionError:  # a document nested beyond Python's limit anywhere in validation
            return _error(RequestError("request body is nested too deeply"))

    route.__name__ = handler.__name__
    route.__doc__ = handler.__doc__
    return route


async def index(request: Request) -> Response:
    return FileResponse(str(_STATIC / "index.html"), media_type="text/html")


async def api_mechanisms(request: Request) -> Response:
    """The mechanisms a statistic may use, from the one name table (``optcomp.mechanisms.MECHANISM_NAMES``):
    ``{"ok": true, "mechanisms": [{"name", "label", "aliases"}, ...]}`` in menu order."""
    return JSONResponse({"ok": True, "mechanisms": [
        {"name": e.name, "label": e.label, "aliases": list(e.aliases)} for e in planner_mechanisms()]})


def _modes(body: dict[str, Any]) -> list[str]:
    modes = body.get("modes", list(MODES))
    if not isinstance(modes, list) or not modes or not all(isinstance(m, str) and m in MODES for m in modes):
        raise RequestError(f"modes must be a non-empty list of {', '.join(MODES)}, got {show(modes)}", field="modes")
    return modes


def _plan_endpoint(runner: PlanRunner) -> Handler:
    async def api_plan(request: Request) -> Response:
        """Validate ``{"plan": <document>, "modes": [...]}`` and return every mode's allocation."""
        body = await _body(request)
        if not isinstance(body, dict) or "plan" not in body:
            raise RequestError("request body must be an object with a 'plan' field")
        modes = _modes(body)
        plan = plan_from_dict(body["plan"], max_statistics=MAX_STATISTICS)  # fast: fields only
        payload = await runner.run(plan, modes)  # the planning itself, in a worker process
        return Response(payload, media_type="application/json")

    return api_plan


async def api_export(request: Request) -> Response:
    """The validated plan document as TOML text (for "Save")."""
    body = await _body(request)
    plan = plan_from_dict(body.get("plan") if isinstance(body, dict) else None, max_statistics=MAX_STATISTICS)
    return PlainTextResponse(plan_to_toml(plan), media_type="application/toml")


async def api_import(request: Request) -> Response:
    """``{"text": <TOML or JSON>, "format": "toml" | "json"}`` → the validated plan document (for "Load")."""
    from optcomp.planner import plan_to_dict

    body = await _body(request)
    if not isinstance(body, dict) or not isinstance(body.get("text"), str):
        raise RequestError("request body must be an object with a 'text' string")
    fmt = body.get("format", "toml")
    if fmt not in ("toml", "json"):
        raise RequestError(f"format must be toml or json, got {show(fmt)}", field="format")
    plan = plan_from_text(body["text"], fmt=fmt, max_statistics=MAX_STATISTICS)
    return JSONResponse({"ok": True, "plan": plan_to_dict(plan)})


def create_app(ledger: str | None = None, *, time_limit: float = PLAN_TIME_LIMIT,
               ledger_schema: str | None = None) -> Starlette:
    """The planner web application (mount it in any ASGI server; ``optcomp serve`` uses uvicorn), plus
    the read-only ledger view of ``ledger`` (default ``$OPTCOMP_LEDGER``) at ``/ledger``.

    Args:
        ledger: path of a ledger to show read-only at ``/ledger`` (default ``$OPTCOMP_LEDGER``), or a
            ``postgresql://`` conninfo.
        ledger_schema: the PostgreSQL schema of ``ledger`` (default ``$OPTCOMP_LEDGER_SCHEMA``, else
            ``optcomp_ledger``).
        time_limit: seconds one ``POST /api/plan`` may compute before its worker is killed and the
            request is answered with an error (HTTP 422).
    """
    runner = PlanRunner(time_limit=time_limit)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        runner.shutdown()  # kill workers still computing (the server is stopping)

    return Starlette(
        routes=[
            Route("/", index),
            Route("/api/mechanisms", api_mechanisms, methods=["GET"]),
            Route("/api/plan", _api(_plan_endpoint(runner)), methods=["POST"]),
            Route("/api/export", _api(api_export), methods=["POST"]),
            Route("/api/import", _api(api_import), methods=["POST"]),
            *ledger_routes(ledger, ledger_schema),
            Mount("/static", app=StaticFiles(directory=str(_STATIC)), name="static"),
        ],
        lifespan=lifespan,
    )

"""The planner's local web page: a Starlette app serving one static page and a JSON API.

The API validates and plans through :mod:`optcomp.planner` (the same code as the library and the CLI); an
invalid plan is answered with HTTP 422 and ``{"ok": false, "error": <one line>, "index": <statistic
number or null>, "field": <field or null>}``, never a 500. Needs the ``web`` extra (starlette, uvicorn).
"""

from __future__ import annotations

from optcomp.web.app import create_app

__all__ = ["create_app"]

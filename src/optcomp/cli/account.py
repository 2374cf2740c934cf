"""CLI command module (filled in by its feature)."""

from __future__ import annotations

from optcomp.cli._common import cli  # noqa: F401

"""Shared CLI plumbing: the command group and output helpers (tables via rich, JSON for scripts)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from optcomp._numerics import Bound


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="optcomp")
def cli() -> None:
    """optcomp: optimal, certified privacy accounting."""


def read_text(path: Path, what: str) -> str:
    """The UTF-8 text of ``path``; an unreadable or undecodable file is a ValueError naming ``what``."""
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"{what} cannot be read: {path} ({exc.strerror})") from exc
    except UnicodeDecodeError as exc:
        raise ValueError(f"{what} {path} must be UTF-8 text, got an undecodable byte at {exc.start}") from exc


def parse_json(text: str, path: Path, what: str) -> Any:
    """``json.loads(text)``; invalid JSON is a ValueError naming ``what`` and ``path``."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{what} {path} is not valid JSON: {exc}") from exc


def _jsonable(value: Any) -> Any:
    if isinstance(value, Bound):
        return {"lower": _jsonable(value.lower), "upper": _jsonable(value.upper)}
    if isinstance(value, float):
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return value
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def emit_json(payload: Any) -> None:
    """Print ``payload`` as JSON on stdout (Bounds become {lower, upper}; inf becomes "inf")."""
    click.echo(json.dumps(_jsonable(payload), indent=2))


def emit_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Print a rich table on stdout."""
    table = Table(title=title)
    for col in columns:
        table.add_column(col)
    for row in rows:
        table.add_row(*[fmt(v) for v in row])
    Console().print(table)


def fmt(value: Any) -> str:
    """Human formatting of numbers and Bounds for tables."""
    if isinstance(value, Bound):
        return f"[{value.lower:.6g}, {value.upper:.6g}]"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)

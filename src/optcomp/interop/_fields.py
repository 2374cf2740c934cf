"""Reading one DpEvent node, whatever its spelling (JSON object, named tuple, attrs object), and its fields'
validators: each error names the field by its path in the tree."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any, cast

__all__ = ["_integer", "_node", "_real", "_short"]


def _node(node: object, path: str) -> tuple[str, dict[str, Any]]:
    """``(class_name, fields)`` of one node: a JSON object, a named tuple or a DpEvent object."""
    if isinstance(node, Mapping):
        name = node.get("class_name")
        if not isinstance(name, str):
            raise ValueError(  # noqa: TRY004 (contract: ValueError)
                f"{path} must be a DpEvent object with a string 'class_name' (e.g. "
                f'{{"class_name": "GaussianDpEvent", "noise_multiplier": 1.0}}), got {_short(node)}'
            )
        return name, {str(k): v for k, v in node.items() if k not in ("class_name", "module_name")}
    fields = getattr(node, "_fields", None)
    if isinstance(fields, tuple) and isinstance(getattr(node, "class_name", None), str):
        skip = ("class_name", "module_name")
        return str(cast(Any, node).class_name), {f: getattr(node, f) for f in fields if f not in skip}
    attrs = getattr(type(node), "__attrs_attrs__", None)
    if attrs is not None and type(node).__name__.endswith("DpEvent"):
        return type(node).__name__, {a.name: getattr(node, a.name) for a in attrs}
    raise ValueError(
        f"{path} must be a DpEvent (object, named tuple or JSON object with 'class_name'), got {_short(node)}"
    )


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _real(path: str, value: object, *, low: float, low_open: bool = False, high: float = math.inf) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(float(value)):
        raise ValueError(f"{path} must be a real number, got {_short(value)}")
    x = float(value)
    ok = (x > low if low_open else x >= low) and x <= high and not math.isinf(x)
    if not ok:
        rng = f"{'(' if low_open else '['}{low:g}, {high:g}{']' if math.isfinite(high) else ')'}"
        raise ValueError(f"{path} must be in {rng}, got {x!r}")
    return x


def _integer(path: str, value: object, *, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{path} must be an integer >= {low}, got {_short(value)}")  # noqa: TRY004
    k = int(value)
    if k < low or (high is not None and k > high):
        rng = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"{path} must be an integer {rng}, got {k}")
    return k

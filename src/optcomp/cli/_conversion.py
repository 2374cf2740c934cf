"""How ``optcomp account`` shows an answer of the Rényi conversion (items known by their Rényi curve).

The library's :class:`optcomp.rdp.ConversionBound` is a bracket that also says which route gave its upper
end, the closed form's value, the optimal route's own bracket, the verified witness law of its lower end
and what it holds for; this module only lays those out (JSON fields, the lines under the table). A
``renyi:file=PATH`` entry is read here too (``{"orders": [...], "epsilons": [...]}``, JSON or TOML).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from optcomp.cli._common import fmt, load_structured


def is_conversion(bound: Any) -> bool:
    """Whether ``bound`` came from the Rényi conversion (it names its route)."""
    return hasattr(bound, "route") and hasattr(bound, "closed_form")


def fields(bound: Any) -> dict[str, Any]:
    """The JSON fields of a conversion answer beyond ``lower``/``upper``."""
    out: dict[str, Any] = {
        "route": bound.route,
        "closed_form_upper": bound.closed_form,
        "closed_form_order": bound.order,
        "optimal": None if bound.optimal is None else {"lower": bound.optimal.lower, "upper": bound.optimal.upper},
        "holds_for": bound.statement,
    }
    w = bound.witness
    out["witness"] = None if w is None else {
        "losses": list(w.losses), "p": list(w.p), "q": list(w.q),
        "exact": "P = p_raw/sum(p_raw), Q = q_raw/sum(q_raw) in rational arithmetic",
        "p_raw": list(w.p_raw), "q_raw": list(w.q_raw),
    }
    return out


def echo_lines(rows: list[dict[str, Any]]) -> None:
    """The lines under the table: each conversion answer's route and scope (once), and its witness."""
    shown = False
    for r in rows:
        b = r["bound"]
        if not is_conversion(b):
            continue
        at = ", ".join(f"{k}={fmt(v)}" for k, v in r["at"].items())
        opt = "not run or no better" if b.optimal is None else f"[{fmt(b.optimal.lower)}, {fmt(b.optimal.upper)}]"
        click.echo(f"{r['query']} at {at}: route {b.route} (closed form {fmt(b.closed_form)} at order "
                   f"{fmt(b.order)}; optimal conversion {opt})")
        if b.witness is not None:
            pts = "; ".join(f"L={fmt(x)} P={fmt(p)}" for x, p in zip(b.witness.losses, b.witness.p, strict=True))
            click.echo(f"  lower end attained by the verified law {pts}")
        if not shown:
            click.echo(f"  {b.statement}")
            shown = True


def read_curve_file(entry: dict[str, Any]) -> dict[str, Any]:
    """A ``renyi`` entry with ``file=PATH`` → the same entry with ``orders``/``epsilons`` from the file."""
    if "file" not in entry:
        return entry
    rest = {k: v for k, v in entry.items() if k != "file"}
    if "orders" in rest or "epsilons" in rest:
        raise ValueError("renyi: give orders/epsilons or file=, not both")
    data = load_structured(Path(str(entry["file"])), "Renyi curve file")
    if not isinstance(data, dict) or "orders" not in data or "epsilons" not in data:
        raise ValueError(f"Renyi curve file {entry['file']} must hold 'orders' and 'epsilons' lists")
    return {**rest, "orders": data["orders"], "epsilons": data["epsilons"]}

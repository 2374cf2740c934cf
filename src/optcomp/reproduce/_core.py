"""The common shape of a reproduction target: checks (paper vs optcomp), a table of numbers, a figure.

A target is a function ``run(ctx) -> Result``. :func:`save` writes ``NAME.png``, ``NAME.svg`` (the
figure), ``NAME.csv`` (the rows) and ``NAME.json`` (checks, parameters, assumptions, rows). Figures need
matplotlib (the ``plot`` extra); the backend is forced to Agg so that no display is needed.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from optcomp._numerics import ProgressLine

#: Relative agreement demanded of two computations of one exact quantity (closed form vs engine).
AGREE_RTOL = 1e-9
#: Absolute slack for probabilities compared with a certified upper end (which may exceed an exact 0 by ~1e-16).
AGREE_ATOL = 2.0**-50
#: Relative slack when comparing a bound with another bound that should dominate it (rounding only).
ORDER_RTOL = 1e-9


def _quiet(_: str) -> None:
    return None


@dataclass(frozen=True)
class Context:
    """How a target runs: ``fast`` (fewer points, for the test suite) and a progress callback."""

    fast: bool = False
    progress: ProgressLine = _quiet


@dataclass(frozen=True)
class Check:
    """One line of the "paper says / optcomp gives / agree?" table.

    Attributes:
        claim: what is compared.
        paper: the paper's number or statement (marked "reconstructed" where our copy lacks it).
        ours: optcomp's number.
        agree: ``True``/``False``, or ``None`` where the paper states nothing checkable (shown only).
    """

    claim: str
    paper: str
    ours: str
    agree: bool | None


@dataclass
class Result:
    """What a target produced."""

    name: str
    title: str
    checks: list[Check]
    rows: list[dict[str, Any]]
    params: dict[str, Any] = field(default_factory=dict)
    assumptions: list[str] = field(default_factory=list)
    figure: Any = None

    @property
    def ok(self) -> bool:
        """Every checkable claim agrees."""
        return all(c.agree is not False for c in self.checks)


def pyplot() -> Any:
    """matplotlib.pyplot with the Agg backend; a clear error without the ``plot`` extra."""
    try:
        import matplotlib as mpl
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise NotImplementedError("optcomp reproduce needs matplotlib: pip install 'optcomp[plot]'") from exc
    mpl.use("Agg")
    mpl.rcParams["svg.hashsalt"] = "optcomp-reproduce"  # deterministic SVG ids
    import matplotlib.pyplot as plt

    return plt


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def save(result: Result, output: Path) -> list[Path]:
    """Write the figure (PNG, SVG), the rows (CSV) and everything (JSON) under ``output``."""
    output.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    if result.figure is not None:
        for ext in ("png", "svg"):
            path = output / f"{result.name}.{ext}"
            # a fixed SVG hash salt and no date metadata keep committed figures reproducible byte for byte
            meta = {"Date": None} if ext == "svg" else {"Software": None}
            result.figure.savefig(path, dpi=110, bbox_inches="tight", metadata=meta)
            written.append(path)
        pyplot().close(result.figure)
    if result.rows:
        path = output / f"{result.name}.csv"
        keys: list[str] = []
        for row in result.rows:
            keys.extend(k for k in row if k not in keys)
        with path.open("w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=keys)
            writer.writeheader()
            for row in result.rows:
                writer.writerow({k: (repr(v) if isinstance(v, float) else v) for k, v in row.items()})
        written.append(path)
    path = output / f"{result.name}.json"
    payload = {
        "name": result.name,
        "title": result.title,
        "params": result.params,
        "assumptions": result.assumptions,
        "checks": [c.__dict__ for c in result.checks],
        "rows": result.rows,
    }
    path.write_text(json.dumps(_jsonable(payload), indent=1) + "\n", encoding="utf-8")
    written.append(path)
    return written


def fmt(x: float) -> str:
    """Numbers in checks: 6 significant digits."""
    return f"{x:.6g}"


def close(a: float, b: float, rtol: float = AGREE_RTOL, atol: float = 0.0) -> bool:
    """|a − b| ≤ atol + rtol·max(|a|, |b|)."""
    return abs(a - b) <= atol + rtol * max(abs(a), abs(b))


def markdown_checks(payload: dict[str, Any]) -> str:
    """The checks of a saved ``NAME.json`` as the markdown table ``docs/papers.md`` embeds (tests compare them)."""
    lines = ["| claim | paper says | optcomp gives | agree? |", "|---|---|---|---|"]
    for c in payload["checks"]:
        agree = "—" if c["agree"] is None else ("yes" if c["agree"] else "**no**")
        cells = [str(c["claim"]), str(c["paper"]), str(c["ours"]), agree]
        lines.append("| " + " | ".join(x.replace("|", "\\|").replace("\n", " ") for x in cells) + " |")
    return "\n".join(lines)

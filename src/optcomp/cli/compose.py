"""``optcomp compose`` and ``optcomp region``: optimal composition of (ε, δ)-DP black boxes.

``optcomp compose`` compares the classic theorems with the optimal composition::

    optcomp compose --eps 0.1 --delta 0.001 -k 30 --target-delta 0.05
    optcomp compose --mech 0.1,0 --mech 0.3,1e-6 --mech 0.05,0 --target-eps 1.0 --json
    optcomp compose --file mechs.txt --target-delta 1e-6      # lines "EPS,DELTA" or a JSON list of pairs

``optcomp region`` exports the boundary β(α) of the composed privacy region (KOV Thm III.3 for
``--eps/--delta/-k``; for ``--mech``/``--file`` the outer bound ∩ R(ε_g, δ_opt(ε_g)) on ``--eps-points``
values of ε_g — one optimal-δ computation each)::

    optcomp region --eps 0.1 --delta 0.001 -k 30 --format csv --output region.csv

Parsing and formatting only; every number comes from :mod:`optcomp.bounds`, :mod:`optcomp.optimal`
and :mod:`optcomp.region`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
import numpy as np

from optcomp import bounds, optimal, region
from optcomp._numerics import Bound
from optcomp.cli import _rdp_compare
from optcomp.cli._common import cli, emit_json, emit_table, parse_json, read_text

EpsDelta = tuple[float, float]


def _parse_pair(text: str, where: str) -> EpsDelta:
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 2:
        raise ValueError(f"{where} must be EPS,DELTA, got {text!r}")
    try:
        return (float(parts[0]), float(parts[1]))
    except ValueError as exc:
        raise ValueError(f"{where} must be two numbers EPS,DELTA, got {text!r}") from exc


def _read_file(path: str) -> list[EpsDelta]:
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"file must be a readable file, got {path!r}")
    text = read_text(p, "file")
    if p.suffix.lower() == ".json":
        data = parse_json(text, p, "file")
        if not isinstance(data, list):
            raise ValueError(f"file {path!r} must hold a JSON list of [eps, delta] pairs")
        out: list[EpsDelta] = []
        for i, item in enumerate(data):
            if (
                not isinstance(item, (list, tuple))
                or len(item) != 2
                or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in item)
            ):
                raise ValueError(f"file {path!r} entry {i} must be [eps, delta] (two numbers), got {item!r}")
            out.append((float(item[0]), float(item[1])))
        return out
    lines = [ln.split("#", 1)[0].strip() for ln in text.splitlines()]
    return [_parse_pair(ln, f"{path} line {i + 1}") for i, ln in enumerate(lines) if ln]


def _mechanisms(
    eps: float | None, delta: float | None, k: int | None, mech: Sequence[str], file: str | None
) -> Sequence[EpsDelta]:
    homogeneous = eps is not None or delta is not None or k is not None
    sources = int(homogeneous) + int(bool(mech)) + int(file is not None)
    if sources != 1:
        raise click.UsageError("give exactly one of: --eps/--delta/-k, repeated --mech EPS,DELTA, or --file")
    if homogeneous:
        if eps is None or delta is None or k is None:
            raise click.UsageError("--eps, --delta and -k must be given together")
        return optimal.homogeneous(eps, delta, k)
    if mech:
        return [_parse_pair(m, "--mech") for m in mech]
    assert file is not None
    return _read_file(file)


_SOURCE_OPTIONS = [
    click.option("--eps", "eps", type=float, default=None, help="Per-mechanism ε (with --delta and -k)."),
    click.option("--delta", "delta", type=float, default=None, help="Per-mechanism δ."),
    click.option("-k", "--k", "k", type=int, default=None, help="Number of mechanisms."),
    click.option("--mech", "mech", multiple=True, help="One mechanism EPS,DELTA (repeatable)."),
    click.option("--file", "file", type=str, default=None, help="File of EPS,DELTA lines or a JSON list of pairs."),
]


def _with_sources(fn: Any) -> Any:
    for opt in reversed(_SOURCE_OPTIONS):
        fn = opt(fn)
    return fn


@cli.command("compose")
@_with_sources
@click.option("--target-delta", type=float, default=None, help="Total δ: report ε of every theorem.")
@click.option("--target-eps", type=float, default=None, help="Total ε: report δ of every theorem.")
@click.option(
    "--method", type=click.Choice(["auto", "exact", "grid", "mv"]), default="auto", show_default=True,
    help="Algorithm of the optimal composition.",
)
@click.option("--tolerance", type=float, default=optimal.DEFAULT_TOLERANCE, show_default=True,
              help="Target bracket width in ε (grid / mv).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def compose_command(
    eps: float | None,
    delta: float | None,
    k: int | None,
    mech: tuple[str, ...],
    file: str | None,
    target_delta: float | None,
    target_eps: float | None,
    method: str,
    tolerance: float,
    as_json: bool,
) -> None:
    """Compare basic, advanced (DRV and lecture-notes forms), KOV and optimal composition."""
    mechs = _mechanisms(eps, delta, k, mech, file)
    if (target_delta is None) == (target_eps is None):
        raise click.UsageError("give exactly one of --target-delta or --target-eps")
    if target_delta is not None:
        classic = bounds.compare_epsilon(mechs, target_delta)
        opt = optimal.epsilon(mechs, target_delta, method=method, tolerance=tolerance)  # type: ignore[arg-type]
        quantity, target_name, target = "epsilon", "target_delta", target_delta
    else:
        assert target_eps is not None
        classic = bounds.compare_delta(mechs, target_eps)
        opt = optimal.delta(mechs, target_eps, method=method, tolerance=tolerance)  # type: ignore[arg-type]
        quantity, target_name, target = "delta", "target_epsilon", target_eps
    labels = {
        "basic": "basic (KOV Thm III.1)",
        "advanced_drv": "advanced, DRV form (KOV Thm III.2)",
        "advanced_lecture_notes": "advanced, lecture notes (Smith-Ullman Thm 1.1)",
        "kov": "KOV bound (Thm III.4/III.5)",
    }
    rdp_items = _rdp_compare.from_epsilon_delta(mechs)
    rdp_payload = _rdp_compare.comparison(
        rdp_items, [target_delta] if target_delta is not None else [], [target_eps] if target_eps is not None else []
    )
    if as_json:
        emit_json({"k": len(mechs), target_name: target, "method": method, quantity: {**classic, "optimal": opt},
                   "rdp_comparison": rdp_payload})
        return
    rows: list[list[Any]] = []
    for key, label in labels.items():
        value = classic[key]
        ratio = value / opt.upper if opt.upper > 0 and math.isfinite(opt.upper) else math.nan
        rows.append([label, value, ratio])
    rows.append([f"optimal (MV Thm 1.5, method={method})", opt, 1.0])
    emit_table(
        f"{len(mechs)} mechanisms, {target_name} = {target:g}",
        ["theorem", quantity, "ratio to optimal (upper)"],
        rows,
    )
    _rdp_compare.print_comparison(rdp_payload)


@cli.command("region")
@_with_sources
@click.option("--points", type=int, default=201, show_default=True, help="Number of α grid points.")
@click.option("--eps-points", type=int, default=33, show_default=True,
              help="With --mech/--file: number of ε_g in [0, Σε_i] whose optimal δ bounds the region.")
@click.option("--tolerance", type=float, default=optimal.DEFAULT_TOLERANCE, show_default=True,
              help="With --mech/--file: grid tolerance (in ε) of each optimal δ.")
@click.option("--format", "fmt_", type=click.Choice(["csv", "json"]), default="csv", show_default=True)
@click.option("--output", type=click.Path(dir_okay=False, writable=True), default=None, help="File (default stdout).")
def region_command(
    eps: float | None,
    delta: float | None,
    k: int | None,
    mech: tuple[str, ...],
    file: str | None,
    points: int,
    eps_points: int,
    tolerance: float,
    fmt_: str,
    output: str | None,
) -> None:
    """Export the boundary β(α) of the composed privacy region (type I error α, type II error β)."""
    mechs = _mechanisms(eps, delta, k, mech, file)
    if isinstance(mechs, optimal.Homogeneous):
        reg = region.composed(mechs.epsilon, mechs.delta, mechs.k)
    else:
        if eps_points < 1:
            raise ValueError(f"eps_points must be an integer >= 1, got {eps_points}")
        total = bounds.basic_heterogeneous(mechs)[0]
        grid = [float(x) for x in np.linspace(0.0, total, eps_points)]
        reg = region.from_optimal(mechs, grid, tolerance=tolerance)
    alphas, betas = reg.boundary(points)
    if fmt_ == "csv":
        text = "alpha,beta\n" + "".join(f"{a!r},{b!r}\n" for a, b in zip(alphas.tolist(), betas.tolist()))
    else:
        payload = {
            "constraints": [{"epsilon": e, "delta": d} for e, d in reg.constraints],
            "tv_bound": reg.tv_bound(),
            "alpha": alphas.tolist(),
            "beta": betas.tolist(),
        }
        text = json.dumps(payload, indent=2) + "\n"
    if output is None:
        click.echo(text, nl=False)
    else:
        Path(output).write_text(text)


__all__ = ["Bound", "compose_command", "region_command"]

"""``optcomp plot``: draw a figure to a PNG or SVG file (needs the ``plot`` extra: matplotlib).

Examples::

    optcomp plot tradeoff --gdp 1 --gdp 2 --eps 1 --delta 0.01 --output curves.png
    optcomp plot tradeoff --gdp 2 --subsample 0.2 --output subsampled.svg     # certified band
    optcomp plot tradeoff --sigma 1.1 --q 0.01 --steps 1000 --gdp 0.5 --output run.png  # a DP-SGD run's band
    optcomp plot region --eps 0.1 --delta 0.001 -k 1 -k 10 -k 50 --output region.png  # KOV Figs. 1–3
    optcomp plot compare --eps 0.01 --eps 0.1 --delta-g 2.98e-8 --max-k 1000 --output mv.png  # MV §6

Each subcommand makes one call into :mod:`optcomp.plot`.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import click
import numpy as np

from optcomp._numerics import check_nonnegative, check_open_probability
from optcomp.cli import compose as _costs
from optcomp.cli._common import check_feasible, cli, progress_bar, size, squared
from optcomp.cli._tradeoff_sources import source_curve, source_options
from optcomp.cli.fdp import build_curve


def _plot_module() -> Any:
    try:
        import matplotlib  # noqa: F401
    except ImportError as exc:
        raise click.ClickException("optcomp plot needs matplotlib: pip install 'optcomp[plot]'") from exc
    from optcomp import plot

    return plot


_OUTPUT = click.option(
    "--output",
    "output",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Figure file (.png or .svg).",
)


@cli.group("plot")
def plot_group() -> None:
    """Draw trade-off curves, privacy regions or the composition-theorem comparison."""


@plot_group.command("tradeoff")
@click.option("--gdp", "gdps", type=float, multiple=True, help="μ of a μ-GDP curve (repeatable).")
@click.option("--eps", "eps", type=float, default=None, help="ε of an (ε, δ)-DP curve.")
@click.option("--delta", "delta", type=float, default=None, help="δ of the (ε, δ)-DP curve (default 0).")
@click.option("-k", "k", type=click.IntRange(min=1), default=1, show_default=True, help="k-fold composition.")
@click.option("--subsample", "sampling_rate", type=float, default=None,
              help="Subsampling rate without replacement (DRS Thm 4.2): draws a certified band.")
@_OUTPUT
@source_options
def plot_tradeoff_cmd(
    gdps: tuple[float, ...],
    eps: float | None,
    delta: float | None,
    k: int,
    sampling_rate: float | None,
    output: Path,
    **source: Any,
) -> None:
    """Trade-off curves β = f(α): μ-GDP, (ε, δ)-DP, and what you ran (a DP-SGD run, --mech or --dp-event:
    a certified band)."""
    plot = _plot_module()
    found = source_curve(**source)
    if found is not None and (k > 1 or sampling_rate is not None):
        raise click.UsageError("-k/--subsample apply to --gdp/--eps curves, not to --mech, --dp-event or a "
                               "DP-SGD run (whose counts and steps are their own)")
    curves = [build_curve(mu, None, None, k, 1, sampling_rate) for mu in gdps]
    if found is not None:
        curves.append(found)
    if eps is not None:
        curves.append(build_curve(None, eps, delta, k, 1, sampling_rate))
    elif delta is not None:
        raise click.UsageError("--delta goes with --eps")
    if not curves:
        raise click.UsageError("give at least one --gdp MU or --eps E [--delta D]")
    plot.plot_tradeoff(curves, path=output)
    click.echo(f"wrote {output}")


@plot_group.command("region")
@click.option("--eps", "eps", type=float, required=True, help="ε of each mechanism.")
@click.option("--delta", "delta", type=float, default=0.0, show_default=True, help="δ of each mechanism.")
@click.option("-k", "ks", type=int, multiple=True, help="Numbers of compositions to draw (repeatable).")
@_OUTPUT
def plot_region_cmd(eps: float, delta: float, ks: tuple[int, ...], output: Path) -> None:
    """Privacy regions of k-fold (ε, δ)-DP composition, as in KOV Figures 1–3."""
    plot = _plot_module()
    kk = list(ks) or [1]
    largest = max(kk)
    check_feasible(
        f"privacy regions for -k up to {largest}",
        sum(_costs._REGION_S_PER_K2 * squared(k) for k in kk),
        _costs._BYTES_PER_K * size(largest),
        f"use -k <= {_costs._largest_k(_costs._REGION_S_PER_K2, 2)}",
    )
    with progress_bar("privacy regions (KOV Thm III.3)", total=sum(k // 2 + 1 for k in kk if k > 0)) as advance:
        plot.plot_privacy_region(eps, delta, kk, path=output, progress=advance)
    click.echo(f"wrote {output}")


@plot_group.command("compare")
@click.option("--eps", "eps", type=float, multiple=True, help="Per-mechanism ε (repeatable).")
@click.option("--delta-g", "delta_g", type=float, default=2.0**-25, show_default=True, help="Target δ_g.")
@click.option("--max-k", "max_k", type=click.IntRange(min=1), default=1000, show_default=True, help="Largest k.")
@_OUTPUT
def plot_compare_cmd(eps: tuple[float, ...], delta_g: float, max_k: int, output: Path) -> None:
    """ε_g vs k for Summing, DRV, KOV Bound and Optimal (MV §6)."""
    plot = _plot_module()
    eps_list = [check_nonnegative("--eps", e) for e in eps] or [0.1]
    check_open_probability("--delta-g", delta_g)
    points = 40  # plot_composition_comparison's default: ~40 k's, geometrically spaced up to max_k
    check_feasible(
        f"the comparison up to --max-k {max_k}",
        len(eps_list) * _costs._EPSILON_S_PER_K2 * sum(x * x for x in np.geomspace(1.0, size(max_k), points).tolist())
        if size(max_k) < math.inf else math.inf,
        _costs._BYTES_PER_K * size(max_k),
        f"use --max-k <= {_costs._largest_k(_costs._EPSILON_S_PER_K2, 2)}",
    )
    with progress_bar("optimal composition at each k", total=len(eps_list) * points) as advance:
        plot.plot_composition_comparison(eps_list, delta_g, max_k, path=output, points=points, progress=advance)
    click.echo(f"wrote {output}")

"""``optcomp reproduce``: regenerate the papers' figures and numbers, with the paper's value beside ours::

    optcomp reproduce --list
    optcomp reproduce kov-geometric --output out/
    optcomp reproduce --all --output docs/img          # the committed figures of docs/papers.md
    optcomp reproduce gdp-fig5 --fast                  # fewer points, coarser grids

Each target writes NAME.png, NAME.svg, NAME.csv and NAME.json under ``--output`` and prints a table
"paper says / optcomp gives / agree?". Every number comes from :mod:`optcomp.reproduce`.
"""

from __future__ import annotations

import time
from pathlib import Path

import click
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from optcomp.cli._common import _progress_setting, _show_progress, cli


def _progress_bar() -> Progress:
    """A spinner per target on stderr, following ``--progress/--no-progress`` (default: a terminal only)."""
    console = Console(stderr=True, force_terminal=True if _progress_setting[0] else None)
    return Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=console,
                    transient=True, disable=not _show_progress(console))


@cli.command("reproduce")
@click.argument("name", required=False)
@click.option("--all", "run_all", is_flag=True, help="Run every target.")
@click.option("--list", "list_only", is_flag=True, help="List the targets and exit.")
@click.option("--output", type=click.Path(file_okay=False, path_type=Path), default=Path("optcomp-reproduce"),
              show_default=True, help="Directory for the PNG/SVG/CSV/JSON files.")
@click.option("--fast", is_flag=True, help="Smaller, quicker versions (fewer points, coarser grids).")
def reproduce_command(name: str | None, run_all: bool, list_only: bool, output: Path, fast: bool) -> None:
    """Regenerate a paper's figure and numbers (NAME), or all of them (--all)."""
    from optcomp.reproduce import TARGETS, run_and_save

    if list_only:
        for target, fn in TARGETS.items():
            click.echo(f"{target:16s} {(fn.__doc__ or '').strip().splitlines()[0]}")
        return
    if (name is None) == (not run_all):
        raise click.UsageError("give exactly one of NAME or --all (see --list)")
    names = list(TARGETS) if run_all else [str(name)]
    if name is not None and name not in TARGETS:
        raise ValueError(f"NAME must be one of {', '.join(TARGETS)}, got {name!r}")
    console = Console()
    timings: list[tuple[str, float, str]] = []
    start = time.perf_counter()
    with _progress_bar() as bar:
        for i, target in enumerate(names, 1):
            task = bar.add_task(f"[{i}/{len(names)}] {target}", total=None)

            def step(msg: str, task: TaskID = task, target: str = target, i: int = i) -> None:
                bar.update(task, description=f"[{i}/{len(names)}] {target}: {msg}")

            t0 = time.perf_counter()
            result, files = run_and_save(target, output, fast=fast, progress=step)
            elapsed = time.perf_counter() - t0
            bar.remove_task(task)
            table = Table(title=f"{result.name}: {result.title}", title_justify="left")
            for col in ("claim", "paper says", "optcomp gives", "agree?"):
                table.add_column(col, overflow="fold")
            for c in result.checks:
                table.add_row(c.claim, c.paper, c.ours, "—" if c.agree is None else ("yes" if c.agree else "NO"))
            console.print(table)
            console.print(f"  wrote {', '.join(p.name for p in files)} to {output}  ({elapsed:.1f} s)")
            verdict = "agrees" if result.ok else "DISAGREES (see docs/papers.md)"
            timings.append((target, elapsed, verdict))
    if len(names) > 1:
        summary = Table(title=f"optcomp reproduce: {len(names)} targets in {time.perf_counter() - start:.1f} s")
        for col in ("target", "seconds", "verdict"):
            summary.add_column(col)
        for target, elapsed, verdict in timings:
            summary.add_row(target, f"{elapsed:.1f}", verdict)
        console.print(summary)

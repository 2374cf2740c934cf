"""``optcomp sweep GRID``: a grid of DP-SGD configurations, every row certified, stored as it finishes.

::

    optcomp sweep grid.toml                       # a local process pool (--workers, default: the cores)
    optcomp sweep grid.toml --scheduler tcp://10.0.0.5:8786 --csv rows.csv --plot frontier.png

The grid format is :mod:`optcomp.sweep._spec`'s (``docs/sweep.md``). Rows go to a SQLite file (``--db``,
default ``GRID`` with the suffix ``.sqlite``) as they finish; running the same command again resumes,
recomputing nothing that finished. Exports: ``--csv``, ``--parquet`` (the ``parquet`` extra), ``--json``
(the rows on stdout), ``--plot`` (the ``plot`` extra). Everything is one call of :func:`optcomp.sweep.run`.
"""

from __future__ import annotations

from pathlib import Path

import click

from optcomp import sweep
from optcomp.cli._common import cli, emit_table, progress_bar


@cli.command("sweep")
@click.argument("grid", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--db", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help=("The SQLite results file (default: GRID with the suffix .sqlite). Re-runs resume from it; a file "
                    "that is not a sweep store (a ledger, another database, a text file) is refused, untouched."))
@click.option("--workers", type=int, default=None,
              help="Local worker processes (default: the cores available; 1: in this process).")
@click.option("--scheduler", default=None, metavar="tcp://HOST:PORT",
              help="Run on a Dask distributed scheduler instead of local processes (the dask extra).")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write every row of the grid as CSV.")
@click.option("--parquet", "parquet_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write every row of the grid as Parquet (the parquet extra: pyarrow).")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Draw ε against steps per σ and the (σ, steps) frontier (.png or .svg; the plot extra).")
@click.option("--json", "as_json", is_flag=True, help="Print the rows as JSON on stdout.")
def sweep_command(grid: Path, db: Path | None, workers: int | None, scheduler: str | None, csv_path: Path | None,
                  parquet_path: Path | None, plot_path: Path | None, as_json: bool) -> None:
    """Evaluate a grid of DP-SGD configurations (TOML/JSON), every row a certified bracket.

    Bad input anywhere in the grid is refused before any work starts (the message names the row and the
    parameter), and so is a --db that is not a sweep store (a text file, another database, a ledger: the
    file is left untouched); a row that fails at run time stores its error and the sweep goes on. A local
    worker that dies mid-sweep has its tasks re-run on a fresh pool; workers lost more often than that
    end the command with one line and exit status 2 (the rows finished so far are kept; run it again).
    """
    if workers is not None and workers < 1:
        raise ValueError(f"--workers must be an integer >= 1, got {workers}")
    points = sweep.load_grid(grid)
    store = db if db is not None else grid.with_suffix(".sqlite")
    with sweep.Store(store) as s:  # a file that is not a sweep store is refused here, untouched
        try:
            with progress_bar(f"sweep {grid.name}", total=len(points)) as advance:
                summary = sweep.run(points, s, workers=workers, scheduler=scheduler, progress=advance)
        except sweep.WorkersLost as exc:  # one line, exit 2 (as every refusal); the rows so far are kept
            raise click.ClickException(str(exc)) from None
        recs = sweep.records(points, s.rows(points))
    if csv_path is not None:
        sweep.write_csv(recs, csv_path)
    if parquet_path is not None:
        sweep.write_parquet(recs, parquet_path)
    if plot_path is not None:
        from optcomp.plot import plot_sweep

        plot_sweep(recs, plot_path)
    if as_json:
        click.echo(sweep.to_json(recs))
        return
    emit_table(
        f"sweep {grid.name}",
        ["points", "already stored", "written now", "errors", "tasks", "workers", "seconds", "results"],
        [[summary.points, summary.skipped, summary.written, summary.errors, summary.tasks, summary.workers,
          round(summary.seconds, 2), str(store)]],
    )

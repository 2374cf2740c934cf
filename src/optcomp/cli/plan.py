"""``optcomp plan FILE``: the allocation of a plan file under every accounting mode, side by side."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from optcomp.cli._common import cli, emit_json, fmt_spec, load_structured, progress_bar
from optcomp.planner import MODES, plan_all, plan_from_dict, result_to_dict

_SHORT = {"basic": "basic", "advanced": "advanced", "kov": "KOV", "optimal": "optimal", "mechanism_aware": "mech-aware"}


@cli.command("plan")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the allocation as JSON.")
@click.option("--mode", "modes", multiple=True, type=click.Choice(MODES),
              help="Accounting mode(s) to show (default: all).")
@click.option("--ledger", "ledger_path", default=None,
              help="Also create a plan ledger at this path from the optimal allocation (docs/ledger.md).")
@click.option("--verbose", is_flag=True, help="Write the mechanism-aware search's per-evaluation log to stderr.")
def plan_command(file: Path, as_json: bool, modes: tuple[str, ...], ledger_path: str | None,
                 verbose: bool = False) -> None:
    """Split a plan's (ε, δ) budget across its statistics (TOML or JSON plan FILE; see docs/planner.md)."""
    plan = plan_from_dict(load_structured(file, "plan file"))  # depth-checked before the planner reads it
    wanted = modes or MODES
    if ledger_path is not None and "optimal" not in wanted:
        wanted = (*wanted, "optimal")
    with progress_bar(f"planning {len(plan.statistics)} statistics") as _:
        # The per-evaluation log is shown only when asked for (--verbose); the bar above follows
        # --progress/--no-progress like every other command's.
        results = plan_all(plan, wanted, progress=_log_line if verbose else None)
    if ledger_path is not None:
        from optcomp.cli.ledger import create_plan_ledger

        create_plan_ledger(ledger_path, plan, results["optimal"], dataset=file.stem)
    if as_json:
        emit_json(result_to_dict(results))
        return
    console = Console(width=max(Console().width, 150))
    head = Table(title=f"Plan {file.name}: ε = {g(plan.epsilon)}, δ = {g(plan.delta)}, β = {g(plan.beta)}"
                 + (f", reserve ε = {g(plan.reserve_epsilon)}" if plan.reserve_epsilon else ""))
    for col in ("mode", "scale", "certified ε (upper)", "budget ε", "evaluations", "seconds"):
        head.add_column(col)
    for mode, r in results.items():
        head.add_row(_SHORT[mode], g(r.scale, ".6g"), g(r.epsilon_certified, ".6g"), g(r.epsilon_budget, ".6g"),
                     str(r.evaluations), g(r.seconds, ".3f"))
    console.print(head)
    table = Table(title="Accuracy α: half-width of the (1 − β) interval (histograms: per bin / all bins; "
                  "quantiles: rank error, docs/planner.md)")
    table.add_column("statistic")
    table.add_column("mechanism")
    table.add_column("ε_i (" + _SHORT[list(results)[-1]] + ")")
    for mode in results:
        table.add_column(f"α {_SHORT[mode]}", justify="right")
    last = list(results)[-1]
    table.add_column(f"gain {_SHORT[last]} vs basic", justify="right")
    for i, st in enumerate(plan.statistics):
        lock = " (locked)" if st.lock_epsilon is not None or st.lock_accuracy is not None else ""
        lock += " (ranks)" if st.kind == "quantile" else ""
        row = [st.name + lock, st.mechanism, g(results[last].statistics[i].epsilon, ".4g")]
        for r in results.values():
            s = r.statistics[i]
            acc = g(s.accuracy, ".4g")
            if s.kind == "histogram":
                acc += f" / {g(s.accuracy_simultaneous, '.4g')}"
            row.append(acc)
        row.append(f"{g(results[last].statistics[i].gain_vs_basic, '.3f')}×")
        table.add_row(*row)
    console.print(table)


def _log_line(line: str) -> None:
    click.echo(f"mechanism-aware: {line}", err=True)


#: Every number in the tables goes through one formatter (no −0, no NaN).
g = fmt_spec

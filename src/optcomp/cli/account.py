"""``optcomp account`` and ``optcomp dpsgd``: certified ε or δ of a composition given on the command line.

``optcomp account`` reads a composition from repeated ``--mech`` options or from a JSON/TOML file::

    optcomp account --mech gaussian:sigma=1.1,q=0.01,count=1000 \\
                    --mech laplace:scale=2,count=10 --mech epsdelta:eps=0.1,delta=1e-6,count=50 \\
                    --delta 1e-4

A ``--mech`` is ``KIND:KEY=VALUE,...``. ``KIND`` names a mechanism of :mod:`optcomp.mechanisms` by a
name of the one table :data:`optcomp.mechanisms.MECHANISM_NAMES` (``gaussian``, ``epsdelta``, ...;
``optcomp account --help`` lists them all) or by its class name; the keys are that class's fields (``eps`` is short for ``epsilon``), plus ``count`` (how
many times it runs, default 1) and ``q`` (Poisson subsampling rate: wraps it in
:class:`optcomp.mechanisms.PoissonSubsampled`). A config file holds the same as a list::

    # account.toml                                 // account.json
    delta = 1e-5                                    {"delta": 1e-5, "mechanisms": [
    [[mechanisms]]                                    {"kind": "gaussian", "sigma": 1.1, "q": 0.01,
    kind = "gaussian"                                  "count": 1000}]}
    sigma = 1.1
    q = 0.01
    count = 1000

TOML needs Python ≥ 3.11 (``tomllib``); JSON works everywhere. The answer is the library's certified
bracket from :func:`optcomp.compose` ``(...).epsilon(δ)`` / ``.delta(ε)``; nothing is computed here.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import click
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from optcomp.cli import _conversion, _rdp_compare
from optcomp.cli._common import (
    TIME_LIMIT_S,
    _progress_setting,
    _show_progress,
    check_feasible,
    cli,
    delta_query,
    emit_json,
    emit_table,
    fmt,
    fmt_directed,
    informative,
    load_structured,
    memory_limit_bytes,
    size,
)
from optcomp.dpsgd import SUPPORTED_SAMPLING
from optcomp.mechanisms import MECHANISM_NAMES, mechanism_spellings

if TYPE_CHECKING:
    from optcomp.cli._stages import Stages

#: What to change when the engines return no information ([0, inf]).
_FEWER = "use fewer compositions (a smaller count) or a larger sampling rate or noise"
#: ``--mech`` kinds → class names in :mod:`optcomp.mechanisms` (a class name itself also works), from the
#: one name table :data:`optcomp.mechanisms.MECHANISM_NAMES`.
KINDS: dict[str, str] = {spelling: e.spec.__name__ for spelling, e in mechanism_spellings().items()}

#: Short spellings of field names accepted in ``--mech`` and config files.
ALIASES: dict[str, str] = {"eps": "epsilon"}

#: Keys handled by the CLI rather than passed to the mechanism's constructor.
RESERVED = ("kind", "count", "q")


def _parse_value(text: str) -> int | float | str | list[int | float | str]:
    if ";" in text:  # a list (a Renyi curve's orders or epsilons): A;B;C
        return [_parse_value(part.strip()) for part in text.split(";") if part.strip()]  # type: ignore[misc]
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            continue
    return text


def parse_mech(spec: str) -> dict[str, Any]:
    """``"gaussian:sigma=1.1,count=10"`` → ``{"kind": "gaussian", "sigma": 1.1, "count": 10}``."""
    from optcomp._keyvalues import parse_key_values

    kind, fields = parse_key_values(spec, "--mech")  # refuses a key given twice (the spec is ambiguous)
    if not kind:
        raise ValueError(f"--mech must look like KIND:KEY=VALUE,..., got {spec!r}")
    if "kind" in fields:
        raise ValueError(f"--mech parameter 'kind' is given twice in {spec!r}; give it once")
    return {"kind": kind, **{key: _parse_value(value) for key, value in fields.items()}}


def load_config(path: Path) -> dict[str, Any]:
    """Read a JSON (``.json``) or TOML (other suffixes) composition file."""
    data = load_structured(path, "config")
    if not isinstance(data, dict):
        raise ValueError(f"config {path} must be a table/object, got {type(data).__name__}")  # noqa: TRY004 (STYLE: bad input is ValueError)
    return data


def _config_mechanisms(data: dict[str, Any]) -> list[dict[str, Any]]:
    mechs = data.get("mechanisms", data.get("mechanism", []))
    if not isinstance(mechs, list) or not all(isinstance(m, dict) for m in mechs):
        raise ValueError("config 'mechanisms' must be a list of tables/objects")
    return [dict(m) for m in mechs]


def build_item(entry: dict[str, Any]) -> tuple[Any, int]:
    """One parsed ``--mech``/config entry → ``(mechanism, count)`` for :func:`optcomp.compose`."""
    from optcomp import mechanisms
    from optcomp._numerics import check_int, check_sampling_rate

    kind = str(entry.get("kind", ""))
    cls_name = KINDS.get(kind.lower(), kind)
    cls = getattr(mechanisms, cls_name, None)
    if not isinstance(cls, type) or not hasattr(cls, "neighbouring"):  # laws etc. are not specifications
        known = ", ".join(sorted(KINDS))
        raise ValueError(f"mechanism kind must be one of {known}, got {kind!r}")
    count = check_int("count", entry.get("count", 1), minimum=1)
    if cls is mechanisms.Renyi:
        from optcomp.cli._conversion import read_curve_file

        entry = read_curve_file(entry)
    names = {f.name for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else set()
    subsample = "q" in entry and "q" not in names  # DiscretePair has a field 'q' of its own
    reserved = RESERVED if subsample else ("kind", "count")
    kwargs: dict[str, Any] = {}
    for key, value in entry.items():
        if key in reserved:
            continue
        name = ALIASES.get(key, key)
        if name in kwargs:  # eps= and epsilon= both given
            raise ValueError(f"{kind} parameter {name!r} is given twice (as {key!r} and an alias); give it once")
        kwargs[name] = value
    if dataclasses.is_dataclass(cls):
        unknown = sorted(set(kwargs) - names)
        if unknown:
            raise ValueError(f"{kind} parameters must be among {sorted(names)}, got {unknown}")
    try:
        mech = cls(**kwargs)
    except TypeError as exc:
        raise ValueError(f"{kind}: {exc}") from exc
    if subsample:
        q = check_sampling_rate("q", entry["q"])
        mech = mechanisms.PoissonSubsampled(mech, sampling_rate=q)
    return mech, count


def parse_accuracy(text: str | None, table: dict[str, Any] | None = None) -> Any:
    """``--accuracy KEY=VALUE,...`` (or a config file's ``accuracy`` table) → ``DEFAULT_ACCURACY`` with
    those fields replaced. The command-line string wins over the table."""
    from optcomp._numerics import DEFAULT_ACCURACY

    fields = sorted(f.name for f in dataclasses.fields(DEFAULT_ACCURACY))
    changes: dict[str, Any] = {}
    if text is not None:
        from optcomp._keyvalues import parse_key_values

        _, given = parse_key_values(text, "--accuracy", kind=False)  # refuses a key given twice
        for key, value in given.items():
            if key not in fields:
                raise ValueError(f"--accuracy must be KEY=VALUE with KEY among {fields}, got {key}={value}")
            changes[key] = _parse_value(value)
    elif table is not None:
        if not isinstance(table, dict) or not set(table) <= set(fields):
            raise ValueError(f"config 'accuracy' must be a table with keys among {fields}, got {table!r}")
        changes = dict(table)
    if not changes:
        return DEFAULT_ACCURACY
    acc = dataclasses.replace(DEFAULT_ACCURACY, **changes)
    cap = memory_limit_bytes()
    if acc.memory_cap > cap:  # checked before any grid is built: the engine trusts memory_cap
        raise ValueError(
            f"--accuracy memory_cap must be <= {cap:.4g} bytes (half of this machine's physical memory), "
            f"got {acc.memory_cap:g}"
        )
    return acc


def _progress(description: str) -> Progress:
    console = Console(stderr=True, force_terminal=True if _progress_setting[0] else None)
    return Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=not _show_progress(console),
    )


def _describe(entry: dict[str, Any]) -> str:
    params = ", ".join(f"{k}={v}" for k, v in entry.items() if k not in ("kind", "count"))
    return f"{entry.get('kind')}({params}) × {entry.get('count', 1)}"


def _kind_lines() -> str:
    """The help's list of ``--mech`` kinds, one line per entry of the name table."""
    lines = []
    for e in MECHANISM_NAMES:
        lines.append(f"  {e.name:<20}{e.keys}\n")
        lines.extend(f"  {alias:<20}the same as {e.name}\n" for alias in e.aliases)
    return "".join(lines)


_ACCOUNT_EPILOG = """\b
Mechanism kinds (KIND in --mech, "kind" in a config file):
""" + _kind_lines() + """\
  or any class name of optcomp.mechanisms, with its fields as keys.
Every kind also takes count= (how many times it runs, default 1) and
q= (Poisson subsampling rate in (0, 1]).

\b
Config file (--config job.toml; TOML, or JSON with
the same keys):
  delta = 1e-5                  # or epsilon = ...; --delta/--epsilon win
  [accuracy]                    # optional, fields of optcomp.Accuracy
  grid_step = 1e-4
  [[mechanisms]]
  kind = "gaussian"
  sigma = 1.1
  q = 0.01
  count = 1000
  [[mechanisms]]
  kind = "epsdelta"
  eps = 0.1
  delta = 1e-8
  count = 50

\b
Example:
  optcomp account --mech gaussian:sigma=1.1,q=0.01,count=1000 --delta 1e-5
  optcomp account --config job.toml --json
"""


@cli.command("account", epilog=_ACCOUNT_EPILOG)
@click.option(
    "--mech",
    "mechs",
    multiple=True,
    metavar="KIND:KEY=VALUE,...",
    help="A mechanism and how often it runs, e.g. gaussian:sigma=1.1,q=0.01,count=1000. Repeatable.",
)
@click.option(
    "--config",
    "config",
    type=click.Path(path_type=Path, dir_okay=False),
    help="JSON or TOML file with 'mechanisms' (optionally 'delta', 'epsilon', an 'accuracy' table).",
)
@click.option(
    "--delta", "deltas", type=float, multiple=True, help="Report the ε bracket at this δ. Repeatable."
)
@click.option(
    "--epsilon", "epsilons", type=float, multiple=True, help="Report the δ bracket at this ε. Repeatable."
)
@click.option(
    "--accuracy",
    default=None,
    metavar="KEY=VALUE,...",
    help="Override fields of the default Accuracy (e.g. grid_step=1e-4).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.option("--dp-event", type=click.Path(path_type=Path, dir_okay=False), help="dp_accounting DpEvent JSON file.")
@click.option("--opacus-history", type=click.Path(path_type=Path, dir_okay=False), help="Opacus history JSON file.")
@click.option("--neighbouring", type=click.Choice(["add_remove", "substitution", "zero_out"]), default="add_remove",
              help="Relation a --dp-event tree is read under (dp_accounting: ADD_OR_REMOVE_ONE / REPLACE_ONE / "
              "REPLACE_SPECIAL).")
@click.option("--sampling", "sampling", type=click.Choice(["event", "fixed_size"]), default="event",
              help="With --dp-event/--opacus-history: how the run's batches were formed — as the sampling events say "
              "(default), or fixed-size (each PoissonSampledDpEvent is a uniform batch, read under substitution).")
@click.option("--reference/--no-reference", "reference", default=None,
              help="With --dp-event/--opacus-history: run dp_accounting's answer beside ours always / never. "
              "Default: only for trees it answers in seconds (at most 20 composed events, counts up to 1e6). "
              "It runs after our certified answer is computed (and printed, for a table); Ctrl-C stops only it. "
              "With --json it runs only when --reference is given (the document is then printed after it).")
def account(
    mechs: Sequence[str],
    config: Path | None,
    deltas: Sequence[float],
    epsilons: Sequence[float],
    accuracy: str | None,
    as_json: bool,
    dp_event: Path | None = None,
    opacus_history: Path | None = None,
    neighbouring: str = "add_remove",
    sampling: str = "event",
    reference: bool | None = None,
) -> None:
    """Certified ε(δ) or δ(ε) bracket of a composition of mechanisms."""
    if dp_event is not None or opacus_history is not None:  # another library's description: cli/_interop.py
        from optcomp.cli._interop import account_interop

        if mechs or config is not None:
            raise click.UsageError("--dp-event/--opacus-history cannot be combined with --mech or --config")
        acc = parse_accuracy(accuracy)
        account_interop(dp_event=dp_event, opacus_history=opacus_history, neighbouring=neighbouring,
                        deltas=deltas, epsilons=epsilons, accuracy=acc, as_json=as_json,
                        reference=reference, sampling=sampling)
        return
    entries, deltas, epsilons, accuracy_table = _gather(mechs, config, deltas, epsilons)
    from optcomp._numerics import check_nonnegative, check_probability
    from optcomp.cli._stages import stages

    # The queries' own checks, run before the (possibly long) composition rather than after it.
    deltas = [check_probability("delta", d) for d in deltas]
    epsilons = [check_nonnegative("epsilon", e) for e in epsilons]
    with stages(3) as stage:  # on stderr, on a terminal or with --progress: "stage i/3: ..."
        advance = stage.start(f"building {len(entries)} mechanisms", total=len(entries))
        items = []
        for i, e in enumerate(entries, start=1):
            items.append(build_item(e))
            if i % 256 == 0 or i == len(entries):  # the display's cost stays small on 10⁵ entries
                advance(256 if i % 256 == 0 else i % 256)
        acc = parse_accuracy(accuracy, accuracy_table)
        rows = _query_rows(items, acc, deltas, epsilons, stage)
        stage.start("the RDP comparison table")
        from optcomp.mechanisms import is_renyi_item

        if any(is_renyi_item(m) for m, _ in items):  # the answer is itself the Rényi conversion
            rdp_payload = {"label": _rdp_compare.LABEL, "skipped": "the answer above is the Renyi conversion itself"}
        else:
            rdp_payload = _rdp_compare.comparison([(m, n) for m, n in items], deltas, epsilons)
    _emit_account(entries, rows, rdp_payload, as_json=as_json)


def _gather(
    mechs: Sequence[str], config: Path | None, deltas: Sequence[float], epsilons: Sequence[float]
) -> tuple[list[dict[str, Any]], list[float], list[float], dict[str, Any] | None]:
    """The ``--mech`` entries after the config file's, the queries (the command line's, else the config
    file's ``delta``/``epsilon``) and the config file's ``accuracy`` table; usage errors when either is empty."""
    entries = [parse_mech(m) for m in mechs]
    deltas, epsilons = list(deltas), list(epsilons)
    accuracy_table: dict[str, Any] | None = None
    if config is not None:
        data = load_config(config)
        accuracy_table = data.get("accuracy")
        entries = _config_mechanisms(data) + entries
        if not deltas and not epsilons:
            if "delta" in data:
                deltas = [data["delta"]]
            if "epsilon" in data:
                epsilons = [data["epsilon"]]
    if not entries:
        raise click.UsageError("give at least one --mech or a --config with mechanisms")
    if not deltas and not epsilons:
        raise click.UsageError("give --delta (for an ε bracket) or --epsilon (for a δ bracket)")
    return entries, deltas, epsilons, accuracy_table


def _query_rows(
    items: list[tuple[Any, int]], acc: Any, deltas: Sequence[float], epsilons: Sequence[float], stage: Stages,
) -> list[dict[str, Any]]:
    """One call, :func:`optcomp.compose` ``(*items)``, then its ε bracket at each δ and δ bracket at each ε
    (each a stage of ``stage``)."""
    from optcomp import compose
    from optcomp.cli._costs import check_composition_cost

    description = check_composition_cost(items)  # refused up front beyond the limits
    rows: list[dict[str, Any]] = []
    # the composition is built lazily: its cost is paid by the first query, so one stage holds both
    advance = stage.start(f"{description}, answering each query", total=len(deltas) + len(epsilons))
    # an item whose law only dominates the run (truncated Poisson, fixed size) takes its lower end from its
    # explicit pair (Composition.dominated): ``lower`` is always a lower bound for what ran (docs/samplers.md)
    pld = compose(*items, accuracy=acc)
    for d in deltas:
        rows.append({"query": "epsilon", "at": {"delta": d}, "bound": informative(
            pld.epsilon(d), f"epsilon at delta={d:g}", _FEWER)})
        advance(1)
    for e in epsilons:
        rows.append({"query": "delta", "at": {"epsilon": e}, "bound": delta_query(pld.delta, e)})
        advance(1)
    return rows


def _emit_account(
    entries: list[dict[str, Any]], rows: list[dict[str, Any]], rdp_payload: Any, *, as_json: bool
) -> None:
    """Print the brackets (and the RDP comparison) as JSON or as a table."""
    if as_json:
        emit_json(
            {
                "composition": entries,
                "results": [
                    {"query": r["query"], **r["at"], "lower": r["bound"].lower, "upper": r["bound"].upper,
                     **(_conversion.fields(r["bound"]) if _conversion.is_conversion(r["bound"]) else {})}
                    for r in rows
                ],
                "rdp_comparison": rdp_payload,
            }
        )
        return
    title = "Composition: " + "; ".join(_describe(e) for e in entries)
    if any(KINDS.get(str(e.get("kind", "")).lower(), e.get("kind")) == "BoundedRange" for e in entries):
        title += " (bounded-range steps: adaptive composition, in the order given)"
    emit_table(
        title,
        ["quantity", "at", "lower", "upper (certified)"],
        [
            (
                r["query"],
                ", ".join(f"{k}={fmt(v)}" for k, v in r["at"].items()),
                fmt_directed(r["bound"].lower, up=False),
                fmt_directed(r["bound"].upper, up=True),
            )
            for r in rows
        ],
    )
    _conversion.echo_lines(rows)
    if not any(_conversion.is_conversion(r["bound"]) for r in rows):
        _rdp_compare.print_comparison(rdp_payload)


#: Cost of user-level DP-SGD per example of a user (one core; the (k + 1)-component mixture's law is
#: evaluated on every grid point): 10⁴ examples took 10.5 s and 0.23 GB (σ = 1, q = 0.001, 100 steps),
#: building the mixture alone for 10⁶ took 6.2 s and 0.31 GB.
_USER_S_PER_EXAMPLE = 1.0e-3
_USER_BYTES_PER_EXAMPLE = 300.0


def check_user_level_cost(examples_per_user: int, group: int = 1) -> None:
    """Refuse a user-level run of ``examples_per_user`` × ``group`` examples per unit whose estimated cost
    exceeds the limits, before anything is built; the advice names the option the user gave (``--group``
    for a group of users: its exact pair is one unit of g·k examples)."""
    examples = examples_per_user * group
    if examples <= 1:
        return
    by_time = int(TIME_LIMIT_S / _USER_S_PER_EXAMPLE)
    by_memory = int(memory_limit_bytes() / _USER_BYTES_PER_EXAMPLE) if math.isfinite(memory_limit_bytes()) else by_time
    fits = min(by_time, by_memory)
    if group > 1:
        what = (f"the exact group pair of --group {group} (a unit of {examples} examples: --group × "
                f"--examples-per-user)")
        hint = f"use --group <= {max(1, fits // examples_per_user)}"
        if examples_per_user > 1:
            hint += f" at --examples-per-user {examples_per_user} (--group × --examples-per-user <= {fits})"
    else:
        what, hint = f"user-level DP-SGD with --examples-per-user {examples_per_user}", f"use --examples-per-user <= {fits}"
    check_feasible(what, _USER_S_PER_EXAMPLE * size(examples), _USER_BYTES_PER_EXAMPLE * size(examples), hint)


_DPSGD_EPILOG = """\b
Examples:
  optcomp dpsgd --sigma 1.1 --q 0.01 --steps 1000 --delta 1e-5
  optcomp dpsgd --target-epsilon 2 --q 0.01 --steps 1000 --delta 1e-5      # solve for sigma
  optcomp dpsgd --target-epsilon 2 --sigma 1.1 --q 0.01 --delta 1e-5 --solve steps
"""


@cli.command("dpsgd", epilog=_DPSGD_EPILOG)
@click.option("--sigma", "noise_multiplier", type=float, default=None,
              help="Noise multiplier σ (solved for with --target-epsilon).")
@click.option("--q", "sampling_rate", type=float, required=True, help="Poisson sampling rate q in (0, 1].")
@click.option("--steps", type=int, default=None, help="Number of steps (solved for with --target-epsilon --solve steps).")
@click.option("--delta", type=float, required=True, help="Target δ.")
@click.option("--target-epsilon", "target_epsilon", type=float, default=None,
              help="Solve for the smallest σ (or, with --solve steps, the largest number of steps) whose certified ε "
              "is at most this, then account for that run.")
@click.option("--solve", type=click.Choice(["sigma", "steps"]), default="sigma", show_default=True,
              help="What --target-epsilon solves for.")
@click.option("--max-steps", "max_steps", type=int, default=None,
              help="Search limit of --solve steps (default: the library's, 10^7).")
@click.option(
    "--accuracy", default=None, metavar="KEY=VALUE,...", help="Override fields of the default Accuracy."
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.option("--statement", is_flag=True, help="Also print a short certified privacy statement of the run.")
@click.option("--sampling", default="poisson", show_default=True,
              type=click.Choice(SUPPORTED_SAMPLING),
              help="Batch sampler (docs/samplers.md); --q: m/n (fixed_size), 1/(steps per epoch) (shuffle, balls_in_bins).")
@click.option("--examples-per-user", "examples_per_user", type=int, default=1, show_default=True,
              help="Examples per privacy unit (user-level DP-SGD; poisson only).")
@click.option("--dataset-size", "dataset_size", type=int, default=None, help="n (truncated_poisson).")
@click.option("--max-batch-size", "max_batch_size", type=int, default=None, help="Batch cap B (truncated_poisson).")
def dpsgd_command(
    noise_multiplier: float | None, sampling_rate: float, steps: int | None, delta: float, accuracy: str | None,
    as_json: bool, statement: bool = False, sampling: str = "poisson", examples_per_user: int = 1,
    dataset_size: int | None = None, max_batch_size: int | None = None, target_epsilon: float | None = None,
    solve: str = "sigma", max_steps: int | None = None,
) -> None:
    """Certified ε bracket of DP-SGD (default: Poisson subsampling, add/remove relation), or the σ / number
    of steps that meets a target ε (--target-epsilon)."""
    from optcomp import dpsgd
    from optcomp._numerics import check_int, check_positive, check_sampling_rate

    # the library's checks, under the options' names
    if noise_multiplier is not None:
        check_positive("--sigma", noise_multiplier)
    check_sampling_rate("--q", sampling_rate)
    if steps is not None:
        check_int("--steps", steps)
    check_int("--examples-per-user", examples_per_user)
    check_user_level_cost(examples_per_user)
    sampler = dpsgd.SamplerOptions(sampling=cast("dpsgd.Sampling", sampling),  # a click.Choice of the table's names
                                   examples_per_user=examples_per_user, dataset_size=dataset_size,
                                   max_batch_size=max_batch_size)
    acc = parse_accuracy(accuracy)
    if target_epsilon is not None:
        from optcomp.cli._dpsgd_solve import solve_run

        with _progress("solving") as progress:
            progress.add_task(f"solving for {solve} (each trial is a certified accounting)", total=None)
            noise_multiplier, steps = solve_run(target_epsilon, solve, noise_multiplier, sampling_rate, steps,
                                                delta, sampler, acc, max_steps)
    elif noise_multiplier is None or steps is None:
        raise click.UsageError("give --sigma and --steps (or --target-epsilon E to solve for one of them)")
    elif max_steps is not None:
        raise click.UsageError("--max-steps goes with --target-epsilon --solve steps")
    with _progress("accounting") as progress:
        progress.add_task("accounting DP-SGD", total=None)
        # the run's bracket (both ends certified for the run) and, where the sampler's upper end comes
        # from a dominating pair that is not the run's own, that pair's bracket under its own name
        run, pair = dpsgd.epsilon_brackets(noise_multiplier, sampling_rate, steps, delta, accuracy=acc, **sampler)
        bound = informative(run, "epsilon", _FEWER)
    # the pair's own row where it only dominates the run (its bracket differs from the run's)
    dominating = pair if dpsgd.SAMPLERS[sampling].pair_row and pair != run else None
    relation = dpsgd.SAMPLING_RELATION[sampling] if examples_per_user == 1 else "add_remove_user"
    params = {"sigma": noise_multiplier, "q": sampling_rate, "steps": steps, "delta": delta, "sampling": sampling,
              "relation": relation, **{k: v for k, v in sampler.items() if k != "sampling" and v not in (None, 1)},
              **({} if target_epsilon is None else {"target_epsilon": target_epsilon, "solved_for": solve})}
    from optcomp.mechanisms import Gaussian, PoissonSubsampled

    rdp_items = [(PoissonSubsampled(Gaussian(noise_multiplier), sampling_rate=sampling_rate), steps)]
    plain = sampling == "poisson" and examples_per_user == 1
    rdp_payload = _rdp_compare.comparison(rdp_items, [delta]) if plain else None
    text = None
    if statement:  # the paragraph is written by optcomp.interop.dpsgd_statement
        from optcomp.interop import dpsgd_statement

        text = dpsgd_statement(noise_multiplier=noise_multiplier, sampling_rate=sampling_rate, steps=steps,
                               delta=delta, epsilon=bound, **sampler)
    if as_json:
        emit_json({**params, "epsilon": bound,
                   **({"dominating_pair_epsilon": dominating} if dominating is not None else {}),
                   **({"rdp_comparison": rdp_payload} if rdp_payload else {}),
                   **({"statement": text} if text else {})})
        return
    rows = [("epsilon" if dominating is None else "epsilon (the run)", fmt_directed(bound.lower, up=False), fmt_directed(bound.upper, up=True))]
    if dominating is not None:  # its lower end bounds the pair's ε, not the run's: a row of its own
        rows.append(("epsilon (dominating pair; lower is that pair's, not the run's)",
                     fmt_directed(dominating.lower, up=False), fmt_directed(dominating.upper, up=True)))
    # A solved σ is shown rounded up (the safe side: more noise); --json has it exactly.
    shown = {**params, **({"sigma": fmt_directed(noise_multiplier, up=True)} if target_epsilon is not None else {})}
    emit_table(
        "DP-SGD: " + ", ".join(f"{k}={fmt(v)}" for k, v in shown.items()),
        ["quantity", "lower", "upper (certified)"],
        rows,
    )
    if rdp_payload:
        _rdp_compare.print_comparison(rdp_payload)
    if text:
        click.echo("\n" + text)

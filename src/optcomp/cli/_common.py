"""Shared CLI plumbing: the command group, output helpers (tables via rich, JSON for scripts), progress
bars and the up-front refusal of work that would not finish in reasonable time or memory."""

from __future__ import annotations

import importlib
import json
import math
import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    Progress,
    SpinnerColumn,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

if TYPE_CHECKING:  # imported where used: ``optcomp --help`` must not pay for numpy
    from optcomp._numerics import Bound

#: Work estimated to take longer than this (seconds) is refused before it starts.
TIME_LIMIT_S: float = 600.0

#: Fraction of the machine's physical memory a single command may plan to use.
MEMORY_FRACTION: float = 0.5


class OptcompGroup(click.Group):
    """A click group whose command list shows each command's whole first sentence (never cut with "…")
    and whose subgroups are of the same kind.

    ``lazy_commands`` (name → (module, one-line help)) names commands whose module is imported only when
    the command is looked up, so ``optcomp --help`` and ``optcomp --version`` import no command module
    (and no numpy/scipy); the help list shows the registered line for a command not yet imported.
    """

    group_class = type

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy_commands: dict[str, tuple[str, str]] = {}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(self.commands) | set(self.lazy_commands))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in self.lazy_commands:
            importlib.import_module(self.lazy_commands[cmd_name][0])  # its decorator attaches it to this group
        return super().get_command(ctx, cmd_name)

    def _short_help(self, ctx: click.Context, name: str) -> str | None:
        if name not in self.commands and name in self.lazy_commands:
            return self.lazy_commands[name][1]
        cmd = self.get_command(ctx, name)
        return None if cmd is None or cmd.hidden else cmd.get_short_help_str(limit=1000)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, text) for name in self.list_commands(ctx) if (text := self._short_help(ctx, name)) is not None]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


#: ``--progress``/``--no-progress`` of the current invocation (None: a bar only when stderr is a terminal).
_progress_setting: list[bool | None] = [None]


@click.group(cls=OptcompGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="optcomp")
@click.option(
    "--progress/--no-progress",
    "progress",
    default=None,
    help="Show (or hide) progress bars on stderr for long work. Default: only when stderr is a terminal.",
)
def cli(progress: bool | None) -> None:
    """optcomp: optimal, certified privacy accounting.

    Every command prints a table (or --json for scripts). Bad input is one line on stderr and exit
    status 2; work estimated to need more than about ten minutes or half the machine's memory is
    refused up front, with a line that says what would make it feasible.
    """
    _progress_setting[0] = progress
    import numpy as np  # here, not at import: ``optcomp --help``/``--version`` never reach this line

    # For the whole command: a NaN made in an engine (inf − inf, 0·inf) raises FloatingPointError, which
    # ``main`` reports as one line; overflow to ±inf and underflow to 0 are IEEE arithmetic the engines
    # rely on and stay silent.
    errstate = np.errstate(over="ignore", under="ignore", divide="ignore", invalid="raise")
    click.get_current_context().with_resource(errstate)


def _show_progress(console: Console) -> bool:
    setting = _progress_setting[0]
    return console.is_terminal if setting is None else setting


@contextmanager
def progress_bar(description: str, total: int | None = None) -> Iterator[Callable[[int, int], None]]:
    """A rich progress bar with an ETA on stderr; yields ``advance(done, total)`` for the library's
    ``progress=`` hooks. Shown only when stderr is a terminal or ``--progress`` is given; ``total=None``
    draws a spinner with the elapsed time (work without a progress hook)."""
    console = Console(stderr=True, force_terminal=True if _progress_setting[0] else None)
    columns: list[Any] = [SpinnerColumn(), TextColumn("{task.description}")]
    if total is not None:
        columns += [BarColumn(), TaskProgressColumn(), TimeRemainingColumn()]
    columns.append(TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True, disable=not _show_progress(console)) as bar:
        task = bar.add_task(description, total=total)

        def advance(done: int, of: int) -> None:
            bar.update(task, completed=done, total=of)

        yield advance


def memory_limit_bytes() -> float:
    """:data:`MEMORY_FRACTION` of the machine's physical memory (``inf`` where it cannot be read)."""
    try:
        return MEMORY_FRACTION * os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # platforms without sysconf
        return math.inf


def size(n: int) -> float:
    """A count as a float for cost estimates: ``inf`` where it exceeds the float range (k = 10⁴⁰⁰)."""
    return float(n) if abs(n) < 10**300 else math.inf


def squared(n: int) -> float:
    """``size(n)²`` without the OverflowError of ``float ** 2``."""
    x = size(n)
    return x * x


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.0f} h"
    return f"{seconds / 86400:.2g} days"


def check_feasible(what: str, seconds: float, memory: float, hint: str) -> None:
    """Refuse (``ValueError``) work whose estimate exceeds :data:`TIME_LIMIT_S` or the memory cap.

    Args:
        what: the work, e.g. ``"optimal composition of -k 10000000 mechanisms"``.
        seconds: estimated run time on one core of a current machine.
        memory: estimated peak memory in bytes.
        hint: what would make it feasible, e.g. ``"use -k <= 3000000"``.
    """
    cap = memory_limit_bytes()
    if memory > cap:
        raise ValueError(
            f"{what} would need about {memory / 2**30:.3g} GiB of memory (cap {cap / 2**30:.3g} GiB); {hint}"
        )
    if seconds > TIME_LIMIT_S:
        raise ValueError(
            f"{what} would take about {_duration(seconds)} (limit {_duration(TIME_LIMIT_S)}); {hint}"
        )


def accuracy_advice(message: str) -> str:
    """A library ``GridTooLargeError`` message rewritten for the command line: the facts it states, then
    one piece of advice naming the ``--accuracy`` option (never ``Accuracy.<field>``, never twice).

    A width the engine reached ("the width is W") becomes the suggestion ``--accuracy relative_width=W``
    rounded up to two digits; the largest ``memory_cap`` is the machine's cap (:func:`memory_limit_bytes`),
    named only where memory is the limit (a balls-in-bins refusal by its work limit, "operations (limit …)",
    is not lifted by any cap).
    A message that names no ``Accuracy`` field (a run whose loss no grid spans at any accuracy: "use fewer
    steps or more noise") is returned unchanged: no accuracy setting would help.
    """
    if "Accuracy." not in message:
        return message
    facts = message.split("; ask for", 1)[0].split("; raise", 1)[0].strip().rstrip(";.")
    facts = re.sub(r"\bAccuracy\.(\w+)", r"--accuracy \1", facts)
    reached = re.search(r"the width is ([0-9.]+(?:e[-+]?[0-9]+)?)", facts)
    cap = memory_limit_bytes()
    raise_cap = f"raise --accuracy memory_cap=… (this machine: at most {cap:.3g})" if math.isfinite(cap) else (
        "raise --accuracy memory_cap=…")
    if "no informative certified bracket" in message:  # a δ query's refusal: its own advice, in CLI names
        return facts.replace("raise --accuracy memory_cap", raise_cap)
    work_limit = ("operations (limit" in facts and "memory" not in facts) or "no longer shrinks" in facts
    # balls-in-bins: neither its work limit nor a width floor its rounding bounds set is lifted by any cap
    if reached is not None and 0.0 < float(reached.group(1)) < 1.0:
        width = float(reached.group(1))
        digits = 10.0 ** (math.floor(math.log10(width)) - 1)
        suggestion = f"{math.ceil(width / digits) * digits:.2g}"
        if work_limit or "Renyi conversion" in message:  # no grid to shrink: memory does not narrow it
            return f"{facts}; use --accuracy relative_width={suggestion} (or larger)"
        return f"{facts}; use --accuracy relative_width={suggestion} (or larger), or {raise_cap}"
    return f"{facts}; use a larger --accuracy relative_width=… or grid_step=…, or {raise_cap}"


#: ε from which a δ query the engine cannot evaluate (it leaves the float range) is answered through
#: monotonicity instead: δ(ε) is non-increasing in ε, so δ(ε) ≤ δ(HUGE_EPSILON) for every ε ≥ HUGE_EPSILON.
HUGE_EPSILON = 1000.0


def delta_query(query: Callable[[float], Bound], epsilon: float) -> Bound:
    """``query(epsilon)`` (a certified δ(ε) bracket from the library).

    For ε ≥ :data:`HUGE_EPSILON` where the engine overflows (``OverflowError``, or a NaN under the CLI's
    ``errstate``), the answer is ``Bound(0, δ(HUGE_EPSILON).upper)``: certified, because δ is
    non-increasing in ε (δ(ε) ≤ δ(HUGE_EPSILON) ≤ its upper end) and non-negative. For a Gaussian the
    upper end is the engine's floor (about 1e-306), i.e. δ = 0 to print precision.
    """
    try:
        return query(epsilon)
    except (OverflowError, FloatingPointError):
        if not epsilon >= HUGE_EPSILON:
            raise
        from optcomp._numerics import Bound

        return Bound(0.0, query(HUGE_EPSILON).upper)


def informative(bound: Bound, what: str, hint: str) -> Bound:
    """``bound`` unless it is [0, inf] (it says nothing: never printed as an answer); a ValueError otherwise."""
    if bound.lower == 0.0 and math.isinf(bound.upper):
        raise ValueError(f"the engines cannot bracket {what} here: their certified bracket is [0, inf], which is "
                         f"no answer; {hint}")
    return bound


def read_text(path: Path, what: str) -> str:
    """The UTF-8 text of ``path``; an unreadable or undecodable file is a ValueError naming ``what``."""
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"{what} cannot be read: {path} ({exc.strerror})") from exc
    except UnicodeDecodeError as exc:
        raise ValueError(f"{what} {path} must be UTF-8 text, got an undecodable byte at {exc.start}") from exc


#: Deepest nesting of lists/objects accepted in an input file. Every file the CLI reads (pairs, configs,
#: plans, DpEvent trees, Opacus histories) is a few levels deep; a deeper one is refused before any reader
#: recurses into it (Python's json parser and recursive walks stop near depth 1000 with a RecursionError).
MAX_JSON_DEPTH = 100


def nesting_depth(data: Any) -> int:
    """Deepest list/dict nesting of parsed ``data`` (a scalar is 0), walked without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        deepest = max(deepest, depth + 1)
        if deepest > MAX_JSON_DEPTH:
            return deepest
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return deepest


def check_depth(data: Any, path: Path, what: str) -> Any:
    """``data`` if it nests at most :data:`MAX_JSON_DEPTH` levels; a ValueError naming ``what`` otherwise."""
    if nesting_depth(data) > MAX_JSON_DEPTH:
        raise ValueError(f"{what} {path} must nest at most {MAX_JSON_DEPTH} levels of lists/objects")
    return data


class _DuplicateKeyError(ValueError):
    """A JSON object with the same key twice (json.loads would keep the last one silently)."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` of :func:`parse_json`: an object whose key repeats is ambiguous input."""
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise _DuplicateKeyError(key)
        obj[key] = value
    return obj


def parse_json(text: str, path: Path, what: str) -> Any:
    """``json.loads(text)``; invalid JSON, an object with a repeated key (``{"sigma": 1, "sigma": 2}``:
    never the last one silently), or JSON nested deeper than :data:`MAX_JSON_DEPTH` (at any depth: the
    parser's own RecursionError is turned into the same error) is a ValueError naming ``what`` and
    ``path``."""
    try:
        data = json.loads(text, object_pairs_hook=_unique_keys)
    except _DuplicateKeyError as exc:
        raise ValueError(f"{what} {path} gives the key {exc.args[0]!r} twice in one object; give it once") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{what} {path} is not valid JSON: {exc}") from exc
    except RecursionError:
        raise ValueError(f"{what} {path} must nest at most {MAX_JSON_DEPTH} levels of lists/objects") from None
    return check_depth(data, path, what)


def load_structured(path: Path, what: str) -> Any:
    """The parsed JSON (``.json``) or TOML (any other suffix) document in ``path``: unreadable, invalid or
    nested deeper than :data:`MAX_JSON_DEPTH` is a ValueError naming ``what`` and ``path``."""
    text = read_text(path, what)
    if path.suffix.lower() == ".json":
        return parse_json(text, path, what)
    import tomllib

    try:
        return check_depth(tomllib.loads(text), path, what)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{what} {path} is not valid TOML: {exc}") from exc
    except RecursionError:
        raise ValueError(f"{what} {path} must nest at most {MAX_JSON_DEPTH} levels of tables/arrays") from None


def _is_bound(value: Any) -> bool:
    """Whether ``value`` is a :class:`~optcomp._numerics.Bound` (none exists before that module is loaded)."""
    numerics = sys.modules.get("optcomp._numerics")
    return numerics is not None and isinstance(value, numerics.Bound)


def _jsonable(value: Any) -> Any:
    if _is_bound(value):
        return {"lower": _jsonable(value.lower), "upper": _jsonable(value.upper)}
    if isinstance(value, float):
        if math.isnan(value):  # never an answer: refuse rather than print an invalid or misleading number
            raise ArithmeticError("internal error: a computed value is NaN; please report the command line")
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return value + 0.0  # −0.0 → 0.0
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def emit_json(payload: Any) -> None:
    """Print ``payload`` as JSON on stdout (Bounds become {lower, upper}; inf becomes "inf")."""
    click.echo(dumps(payload))


def dumps(payload: Any) -> str:
    """``payload`` as strict JSON text (no NaN/Infinity tokens: inf is the string "inf")."""
    return json.dumps(_jsonable(payload), indent=2, allow_nan=False)


def emit_table(
    title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]], *, caption: str | None = None
) -> None:
    """Print a rich table on stdout. Cells are plain text: ``[inf, inf]`` is never read as markup."""
    table = Table(title=escape(title), caption=None if caption is None else escape(caption))
    for col in columns:
        table.add_column(escape(col))
    for row in rows:
        table.add_row(*[escape(fmt(v)) for v in row])
    Console().print(table)


def fmt_directed(value: float, *, up: bool) -> str:
    """``value`` to 6 significant digits rounded outwards: up for an upper end, down for a lower end.

    A certified upper end printed below its value would no longer be certified; rounding to nearest can do
    that, so the ends of a :class:`Bound` are rounded away from the bracket's inside.
    """
    if math.isnan(value):
        raise ArithmeticError("internal error: a computed value is NaN; please report the command line")
    text = f"{value + 0.0:.6g}"
    if not math.isfinite(value) or value == 0.0:
        return text
    for _ in range(4):
        shown = float(text)
        if (shown >= value) if up else (shown <= value):
            return text
        unit = 10.0 ** (math.floor(math.log10(abs(value))) - 5)  # one unit in the 6th significant digit
        text = f"{shown + (unit if up else -unit):.6g}"
    return text


def fmt_spec(value: float, spec: str = "g") -> str:
    """``format(value, spec)`` for display: −0.0 prints as 0, NaN is refused (ArithmeticError)."""
    if math.isnan(value):
        raise ArithmeticError("internal error: a computed value is NaN; please report the command line")
    return format(value + 0.0, spec)


def fmt(value: Any) -> str:
    """Human formatting of numbers and Bounds for tables (−0.0 prints as 0; NaN is refused)."""
    if _is_bound(value):
        return f"[{fmt_directed(value.lower, up=False)}, {fmt_directed(value.upper, up=True)}]"
    if isinstance(value, float):
        if math.isnan(value):
            raise ArithmeticError("internal error: a computed value is NaN; please report the command line")
        return f"{value + 0.0:.6g}"
    return str(value)

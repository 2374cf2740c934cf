"""``optcomp account --dp-event FILE`` / ``--opacus-history FILE``: certified brackets of another
library's description, with that library's own answer beside ours when it is installed.

The reference answer is dp_accounting's ``PLDAccountant`` at its default discretisation, fed the same
event tree (an Opacus history is turned into its DpEvent tree first). It is imported lazily with
:func:`importlib.import_module`, only here, only when present; optcomp never depends on it. Its number
is placed against our certified bracket: *below* it means it under-reports ε (the truth is at least our
lower end), *above* it means it is conservative, *inside* means they agree to our bracket's width.
With ``--json`` the reference runs only when ``--reference`` is given: a script's document is printed as
soon as our certified answer is ready, its ``reference`` field saying the comparison was not run.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import click

from optcomp._numerics import Bound
from optcomp.cli._common import (
    delta_query,
    emit_json,
    emit_table,
    fmt_directed,
    informative,
    parse_json,
    read_text,
)


def _reference_module() -> tuple[Any, Any, str] | None:
    """dp_accounting's ``dp_event`` module, its accountant classes (``PLDAccountant``, ``RdpAccountant``)
    and its version, if installed."""
    try:
        events = importlib.import_module("dp_accounting.dp_event")
        pld = importlib.import_module("dp_accounting.pld.pld_privacy_accountant")
        rdp = importlib.import_module("dp_accounting.rdp.rdp_privacy_accountant")
    except ImportError:
        return None
    try:
        from importlib.metadata import version

        ver = version("dp-accounting")
    except Exception:  # noqa: BLE001 (metadata is optional decoration of the label)
        ver = "?"
    return events, SimpleNamespace(PLDAccountant=pld.PLDAccountant, RdpAccountant=rdp.RdpAccountant), ver


def _to_events(node: Any, events: Any) -> Any:
    """The JSON event tree as dp_accounting objects (``None`` where dp_accounting has no such class)."""
    if isinstance(node, dict):
        cls = getattr(events, str(node.get("class_name")), None)
        if cls is None:
            return None
        kwargs = {}
        for key, value in node.items():
            if key in ("class_name", "module_name"):
                continue
            if isinstance(value, dict):
                value = _to_events(value, events)
                if value is None:
                    return None
            elif isinstance(value, list) and value and isinstance(value[0], dict):
                converted = [_to_events(v, events) for v in value]
                if any(v is None for v in converted):
                    return None
                value = converted
            kwargs[key] = value
        return cls(**kwargs)
    return None


def fmt_bound(row: dict[str, Any]) -> str:
    return f"{fmt_directed(row['lower'], up=False)}, {fmt_directed(row['upper'], up=True)}"


def _position(value: float, bound: Bound) -> str:
    if value < bound.lower:
        return "below our certified bracket"
    if value > bound.upper:
        return "above our certified bracket"
    return "inside our certified bracket"


def verdict(row: dict[str, Any]) -> str | None:
    """What the reference's number means for a user, in words (None when there is no number)."""
    if row["position"] is None:
        return None
    query, ref, low = row["query"], row["reference"], fmt_directed(row["lower"], up=False)
    if row["position"].startswith("below"):
        return (f"it UNDER-REPORTS {query}: the true {query} is at least {low}, so {ref:.6g} is not a valid "
                "privacy guarantee for this run")
    if row["position"].startswith("above"):
        return "conservative: a valid but looser guarantee"
    return "the two agree to the width of our bracket"


#: The reference runs by default only on trees it answers in seconds (measured with dp_accounting 0.4 on
#: one core: each composed event costs about 0.4-0.6 s, a self-composition count up to 10⁵ under 1 s; a
#: count of 10¹⁵ took over 15 minutes). Larger trees skip it, saying why, unless ``--reference`` is given.
REFERENCE_MAX_EVENTS = 20
REFERENCE_MAX_COUNT = 10**6
_REFERENCE_S_PER_EVENT = 0.5
#: The ``reference`` of a ``--json`` document by default: JSON is for scripts, which get our certified
#: answer at once; dp_accounting's comparison (seconds to hours) runs there only with ``--reference``.
JSON_REFERENCE_NOT_RUN = "dp_accounting reference not run (--json runs it only with --reference)"


def reference_cost(event_json: Any) -> tuple[int, int]:
    """(events dp_accounting composes one by one, largest product of self-composition counts on a path) of
    a DpEvent JSON tree, walked without recursion (the tree's depth is bounded by the file check)."""
    events, largest = 0, 1
    stack: list[tuple[Any, int]] = [(event_json, 1)]
    while stack:
        node, count = stack.pop()
        if not isinstance(node, dict):
            continue
        name = node.get("class_name")
        if name == "ComposedDpEvent" and isinstance(node.get("events"), list):
            stack.extend((child, count) for child in node["events"])
            continue
        if name == "SelfComposedDpEvent":
            c = node.get("count", 1)
            count *= c if isinstance(c, int) and not isinstance(c, bool) and c > 0 else 1
        largest = max(largest, count)
        inner = node.get("event")
        if isinstance(inner, dict):
            stack.append((inner, count))
        elif name != "SelfComposedDpEvent":
            events += 1
    return events, largest


def _reference_skipped(event_json: Any) -> str | None:
    """Why the default run skips the reference (its estimated cost), or None when it is cheap."""
    events, count = reference_cost(event_json)
    if events > REFERENCE_MAX_EVENTS:
        return (f"skipped: {events} composed events would take dp_accounting about "
                f"{_REFERENCE_S_PER_EVENT * events:.0f} s (pass --reference to run it)")
    if count > REFERENCE_MAX_COUNT:
        return (f"skipped: a composition count of {count:.3g} (more than {REFERENCE_MAX_COUNT:.0e}) would take "
                "dp_accounting minutes to hours (pass --reference to run it)")
    return None


def _reference(
    event_json: dict[str, Any], neighbouring: str, deltas: Sequence[float], epsilons: Sequence[float],
    run: bool | None = None,
) -> tuple[str, list[float] | None]:
    """(label or reason, dp_accounting's answers to the queries in order, or None). ``run``: True always
    runs it, False never, None (default) only when :func:`reference_cost` is small. The label names the
    accountant that answered: ``PLDAccountant``, or ``RdpAccountant`` where the PLD accountant does not
    support the event (it refuses sampling without replacement, for one)."""
    if run is False:
        return "dp_accounting reference not run (--no-reference)", None
    found = _reference_module()
    if found is None:
        return "dp_accounting not installed", None
    events, accountants, ver = found
    label = f"dp_accounting {ver} PLDAccountant"
    skipped = None if run else _reference_skipped(event_json)
    if skipped is not None:
        return f"{label}: {skipped}", None
    event = _to_events(event_json, events)
    if event is None:
        return f"dp_accounting {ver}: has no event class for part of this tree", None
    relation_name = {"add_remove": "ADD_OR_REMOVE_ONE", "zero_out": "REPLACE_SPECIAL"}.get(neighbouring, "REPLACE_ONE")
    relation = importlib.import_module("dp_accounting.privacy_accountant").NeighboringRelation[relation_name]
    try:
        accountant = accountants.PLDAccountant(relation)
        if not accountant.supports(event):
            rdp_class = getattr(accountants, "RdpAccountant", None)
            accountant = None if rdp_class is None else rdp_class(neighboring_relation=relation)
            if accountant is None or not accountant.supports(event):
                return f"dp_accounting {ver}: neither accountant supports this event under {relation_name}", None
            label = (f"dp_accounting {ver} RdpAccountant (its PLDAccountant does not support this event "
                     f"under {relation_name})")
        accountant.compose(event)
        answers = [float(accountant.get_epsilon(d)) for d in deltas]
        answers += [float(accountant.get_delta(e)) for e in epsilons]
    except (ValueError, TypeError, ArithmeticError, RuntimeError, MemoryError) as exc:
        # The reference is a comparison only: its failure must not hide our certified answer.
        return f"{label}: failed ({type(exc).__name__}: {exc})", None
    return label, answers


def account_interop(
    *,
    dp_event: Path | None,
    opacus_history: Path | None,
    neighbouring: str,
    deltas: Sequence[float],
    epsilons: Sequence[float],
    accuracy: Any,
    as_json: bool,
    reference: bool | None = None,
    sampling: str = "event",
) -> None:
    """Run ``optcomp account`` on a DpEvent JSON file or an Opacus history JSON file (module docstring)."""
    if (dp_event is None) == (opacus_history is None):
        raise ValueError("give exactly one of --dp-event FILE and --opacus-history FILE")
    if not deltas and not epsilons:
        raise ValueError("give --delta (for an ε bracket) or --epsilon (for a δ bracket)")
    from optcomp.cli._costs import check_composition_cost
    from optcomp.cli._stages import stages

    with stages(3) as stage:  # on stderr, on a terminal or with --progress: "stage i/3: ..."
        stage.start(f"reading the {'--dp-event' if dp_event else '--opacus-history'} file")
        composition, event_json, source = _read_source(dp_event, opacus_history, neighbouring, sampling)
        description = check_composition_cost([*composition.items, *composition.allocations])
        advance = stage.start(f"{description}, answering each query", total=len(deltas) + len(epsilons))
        bounds = []
        for d in deltas:
            bounds.append(informative(composition.epsilon(d, accuracy=accuracy), f"epsilon at delta={d:g}",
                                      "use fewer compositions"))
            advance(1)
        for e in epsilons:
            bounds.append(delta_query(lambda x: composition.delta(x, accuracy=accuracy), e))
            advance(1)
        queries = [("epsilon", "delta", d) for d in deltas] + [("delta", "epsilon", e) for e in epsilons]
        if not as_json:  # our certified answer first: the reference may take a while (--no-reference skips it)
            stage.progress.stop()
            _print_table(composition, source, queries, _rows(queries, bounds, None))
            stage.progress.start()
        skip = as_json and reference is None  # a script's document waits on no comparison it did not ask for
        stage.start("our certified answer is ready" + ("" if skip else "; dp_accounting's reference (Ctrl-C or "
                                                                        "--no-reference skips it)"))
        label, answers = (JSON_REFERENCE_NOT_RUN, None) if skip else _reference_or_interrupted(
            event_json, composition.neighbouring, deltas, epsilons, reference)
    rows = _rows(queries, bounds, answers)
    if as_json:
        emit_json(
            {
                "source": source,
                "neighbouring": composition.neighbouring,
                "engine": composition.engine,
                "private": composition.private,
                "event": event_json,
                "reference": label,
                "results": rows,
                "warnings": [{"peer": w.peer, "path": w.path, "message": w.message} for w in composition.warnings],
            }
        )
        return
    _print_reference(label, queries, rows)


def _reference_or_interrupted(
    event_json: Any, neighbouring: str, deltas: Sequence[float], epsilons: Sequence[float], run: bool | None
) -> tuple[str, list[float] | None]:
    """:func:`_reference`; an interrupt (Ctrl-C) stops only the reference, so the certified answer, already computed, is still printed (as a table or as the
    ``--json`` document, whose ``reference`` then says it was interrupted)."""
    try:
        return _reference(event_json, neighbouring, deltas, epsilons, run)
    except KeyboardInterrupt:
        return "dp_accounting reference interrupted (Ctrl-C); the certified answer stands alone", None


def _read_source(
    dp_event: Path | None, opacus_history: Path | None, neighbouring: str, sampling: str = "event"
) -> tuple[Any, Any, str]:
    """(the composition, its DpEvent JSON tree, ``"dp_event"`` or ``"opacus_history"``) of the one file given.
    The readers' Python warnings are not shown: their :class:`~optcomp.interop.PeerWarning` lines are printed
    with the answer (:func:`_print_warnings`)."""
    import warnings

    from optcomp import interop

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", interop.PeerUnderReportWarning)
        return _read(interop, dp_event, opacus_history, neighbouring, sampling)


def _read(
    interop: Any, dp_event: Path | None, opacus_history: Path | None, neighbouring: str, sampling: Any
) -> tuple[Any, Any, str]:
    if dp_event is not None:
        data = parse_json(read_text(dp_event, "--dp-event file"), dp_event, "--dp-event file")
        return interop.from_dp_event(data, neighbouring=neighbouring, sampling=sampling), data, "dp_event"
    if opacus_history is not None:
        data = parse_json(
            read_text(opacus_history, "--opacus-history file"), opacus_history, "--opacus-history file"
        )
        expected = "substitution" if sampling == "fixed_size" else "add_remove"
        if neighbouring != expected:
            raise ValueError(
                f"--neighbouring must be {expected} for an Opacus history "
                f"{'with --sampling fixed_size' if sampling == 'fixed_size' else '(Poisson batches)'}, got {neighbouring!r}"
            )
        composition = interop.from_opacus_history(data, sampling=sampling)
        return composition, interop.opacus_history_to_dp_event(data), "opacus_history"
    # unreachable: exactly one was given (checked by the caller)
    raise ValueError("give exactly one of --dp-event FILE and --opacus-history FILE")


def _rows(
    queries: list[tuple[str, str, float]], bounds: list[Bound], answers: list[float] | None
) -> list[dict[str, Any]]:
    """One result row per query: our bracket, the reference's answer, where it falls against the bracket
    and what that means (``verdict``)."""
    rows = []
    for i, ((query, at_name, at), bound) in enumerate(zip(queries, bounds)):
        ref = None if answers is None else answers[i]
        row = {
            "query": query,
            at_name: at,
            "lower": bound.lower,
            "upper": bound.upper,
            "reference": ref,
            "position": None if ref is None or math.isnan(ref) else _position(ref, bound),
        }
        rows.append({**row, "verdict": verdict(row)})
    return rows


def _print_table(
    composition: Any, source: str, queries: list[tuple[str, str, float]], rows: list[dict[str, Any]]
) -> None:
    """Our certified brackets as a table (printed before the reference is computed), each end rounded
    outwards (a lower end never printed above its value)."""
    labels = [f"{name}={value:g}" for _, name, value in queries]
    emit_table(
        f"{source} ({composition.neighbouring}, engine {composition.engine})",
        ["quantity", "at", "lower", "upper (certified)"],
        [(r["query"], where, fmt_directed(r["lower"], up=False), fmt_directed(r["upper"], up=True))
         for r, where in zip(rows, labels)],
    )
    if not composition.private:  # a line of its own: never wrapped inside the table's title
        click.echo("NOT PRIVATE: " + ", ".join(composition.non_private))
    for w in composition.warnings:  # one line each, unwrapped (docs/interop.md §8)
        click.echo(f"WARNING: {w.message}")


def _print_reference(label: str, queries: list[tuple[str, str, float]], rows: list[dict[str, Any]]) -> None:
    """The reference's label, then one line per query placing its answer against our bracket, in words."""
    click.echo(f"reference: {label}")
    for r, (_, name, value) in zip(rows, queries):
        if r["position"] is not None:
            click.echo(
                f"  {r['query']} at {name}={value:g}: {r['reference']:.6g}, {r['position']} [{fmt_bound(r)}]; "
                f"{r['verdict']}"
            )

"""``optcomp ledger …``: a persistent privacy ledger from the command line (:mod:`optcomp.ledger`).

::

    optcomp ledger init census.ledger --dataset census-2020 --relation add_remove \\
        --epsilon 1 --delta 1e-6 --currency zcdp
    optcomp ledger charge census.ledger q-0001 pure:epsilon=0.01       # then run the mechanism
    optcomp ledger released census.ledger q-0001 --digest SHA256
    optcomp ledger report census.ledger --fits pure:epsilon=0.01
    optcomp ledger verify census.ledger
    optcomp ledger export census.ledger
    optcomp ledger backup census.ledger census-2026-11-27.ledger

A release is ``KIND:KEY=VALUE,...`` with ``KIND`` one of ``pure`` (epsilon), ``approx`` (epsilon, delta),
``gaussian`` (sigma, sensitivity), ``laplace`` (scale, sensitivity), ``zcdp`` (rho, and an optional δ share
``delta`` for the (ε, δ) currencies), ``renyi`` (``orders=2;8;32,epsilons=0.1;0.5;2``, optional delta),
``dgauss`` or ``discrete_gaussian`` (sigma, sensitivity, dimension — an integer or ``any`` —, norm ``l2``,
``l1`` or ``linf``, optional delta), ``br`` (epsilon: one exponential-mechanism / bounded-range step, charged its
tight zCDP ρ in the zCDP currencies), ``select`` (epsilon of a pure base, law = geometric / logarithmic /
negative-binomial with eta / poisson with mean: the best of K runs); values are exact decimals (``0.01`` is
1/100); a key given twice is refused. A PostgreSQL ledger is a ``postgresql://`` location plus ``--schema`` (refused for
a SQLite file). ``report``, ``verify`` and ``export`` open the ledger read-only (an auditor needs no write
permission; they also run ``verify``'s checks and exit 2 when any fails). Output is a table in words
("Gaussian, σ = 4, Δ = 1"; every number decimal), or ``--json`` (exact values, with the words in added
``*_text`` fields). Bad input, a file that is not a ledger or fails its checks, a refused charge
(``refused: …``, naming what remains and what still fits; or a release id that was voided or released:
the mechanism must not run — a new attempt takes a new release id) and a failed ``verify`` are one line
on stderr and exit 2. No command changes a file that is not a ledger or fails its checks; a refused
charge changes nothing but the refused attempts' record, which is outside the hash chain.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from optcomp.cli._common import cli, emit_json, emit_table, parse_json, read_text
from optcomp.ledger import (
    CURRENCIES,
    RELATIONS,
    BudgetExceeded,
    Ledger,
    Release,
    StoreError,
    Ticket,
    amounts,
    describe,
    from_json,
    number,
    slots_from_planner,
)

#: Releases a report's table lists (the latest; ``export`` has them all).
_RELEASES_SHOWN = 20
_KEYS = {"pure": ("epsilon",), "approx": ("epsilon", "delta"), "gaussian": ("sigma", "sensitivity"),
         "zcdp": ("rho", "delta"), "laplace": ("scale", "sensitivity"), "renyi": ("orders", "epsilons", "delta"),
         "dgauss": ("sigma", "sensitivity", "dimension", "norm", "delta"),
         "br": ("epsilon",), "select": ("epsilon", "law", "eta", "mean")}
_DEFAULTS = {"gaussian": {"sensitivity": "1"}}
#: Other spellings of a kind (the stored kind of ``dgauss`` is ``discrete_gaussian``).
_KIND_ALIASES = {"discrete_gaussian": "dgauss", "rdp": "renyi"}
_STORED_KIND = {"dgauss": "discrete_gaussian"}


def _value(kind: str, key: str, value: str) -> Any:
    """A CLI value as ``from_json`` takes it: lists for a Rényi curve (``2;8;32``), an integer or None for a
    dimension (``any``), text otherwise (exact decimals)."""
    if kind == "renyi" and key in ("orders", "epsilons"):
        return [v.strip() for v in value.split(";") if v.strip()]
    if key == "dimension":
        if value.lower() in ("any", "none"):
            return None
        if not value.isdigit():
            raise ValueError(f"release {kind}: dimension must be an integer ≥ 1 or 'any', got {value!r}")
        return int(value)
    return value


def parse_release(text: str) -> Release:
    """``KIND:KEY=VALUE,...`` → a release (``ValueError`` naming what is wrong; a repeated key is refused)."""
    kind, _, rest = text.partition(":")
    kind = _KIND_ALIASES.get(kind, kind)
    if kind not in _KEYS:
        raise ValueError(f"release kind must be one of {', '.join(_KEYS)}, got {kind!r} (format KIND:KEY=VALUE,...)")
    values: dict[str, Any] = {"kind": _STORED_KIND.get(kind, kind)}
    for part in filter(None, rest.split(",")):
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq or key not in _KEYS[kind]:
            raise ValueError(f"release {kind} takes {', '.join(_KEYS[kind])} as KEY=VALUE, got {part!r}")
        if key in values:
            raise ValueError(f"release {kind}: {key} is given twice in {text!r}; give each parameter once")
        values[key] = _value(kind, key, value.strip())
    return from_json({**_DEFAULTS.get(kind, {}), **values})


def create_plan_ledger(path: str, plan: Any, result: Any, *, dataset: str) -> None:
    """``optcomp plan FILE --ledger PATH``: a plan ledger whose slots are the planner's certified pairs."""
    slots = slots_from_planner(plan, result)
    try:
        led = Ledger.create(path, dataset=dataset, relation=plan.neighbouring, epsilon=plan.epsilon,
                            delta=plan.delta, mode="plan", plan=slots)
    except StoreError as e:
        raise click.ClickException(str(e)) from None
    cert = led.report()["certificate"]
    led.close()
    click.echo(f"plan ledger {path}: {len(slots)} slots, certified ε ≤ {float.fromhex(cert['upper']):.6g} "
               f"at δ = {plan.delta:g} ({cert['engine']})", err=True)


@contextmanager
def _opened(path: str, schema: str | None, *, read_only: bool = False) -> Iterator[Ledger]:
    """The ledger at ``path``, closed afterwards; a store's refusal or a refused charge becomes one line
    (click's error: exit 2)."""
    try:
        led = Ledger.open(path, schema=schema, read_only=read_only)
    except StoreError as e:
        raise click.ClickException(str(e)) from None
    try:
        yield led
    except (StoreError, BudgetExceeded) as e:
        raise click.ClickException(str(e)) from None
    finally:
        led.close()


def _num(value: Any) -> str:
    """An exact stored number (``p/q`` or ``float.hex``) or a float in decimals (the ledger's formatter)."""
    if value is None:
        return "-"
    try:
        return number(value if isinstance(value, (str, int, float)) else str(value), digits=10)
    except (ValueError, ZeroDivisionError, OverflowError):
        return str(value)


def _ticket(t: Ticket, led: Ledger) -> dict[str, Any]:
    """A ticket as JSON: exact fields, and its release and charge in words beside them."""
    charge_text = amounts(led.currency.components, t.charge) if led.currency is not None else f"slot {t.slot}"
    return {"release_id": t.release_id, "seq": t.seq, "release": t.release.to_json(),
            "charge": [str(c) for c in t.charge], "slot": t.slot, "status": t.status, "replay": t.replay,
            "release_text": describe(t.release), "charge_text": charge_text}


def _show_ticket(t: Ticket, led: Ledger, as_json: bool) -> None:
    data = _ticket(t, led)
    if as_json:
        emit_json(data)
        return
    again = {"charged": " (a retry: the same ticket; run the mechanism once)", "released": " (already released)",
             "voided": " (already voided)"}
    rows = [("release", data["release_text"]), ("status", t.status + (again[t.status] if t.replay else "")),
            ("sequence number", t.seq), ("charge", data["charge_text"])]
    if t.slot is not None:
        rows.append(("slot", t.slot))
    emit_table(f"release {t.release_id}", ["", "value"], rows)


def _summary_rows(rep: dict[str, Any]) -> list[tuple[str, Any]]:
    n = rep["releases"]
    rows: list[tuple[str, Any]] = [
        ("dataset", rep["dataset"]), ("relation", rep["relation"]),
        ("budget", f"{rep['budget_text']}, {rep['currency_text']}"),
        ("spent", f"{rep['fraction_spent_text']} of the budget"), ("remaining", rep["remaining_text"]),
        ("releases", f"{n['charged']} charged, {n['released']} released, {n['voided']} voided (not counted)"),
        ("guarantee", rep["guarantee"])]
    rows += [(f"what still fits: {f['what']}", f["text"]) for f in rep["what_fits"]] or [
        ("what still fits", "nothing: the budget is spent")]
    if "currency" not in rep:
        rows.append(("certified plan ε", f"≤ {_num(rep['certificate']['upper'])} ({rep['certificate']['engine']})"))
    if "fits" in rep:
        rows.append((f"more {rep['fits']['release_text']} that fit", rep["fits"]["text"]))
    if rep["refused"]["count"]:
        rows.append(("refused attempts", f"{rep['refused']['count']} (below; outside the hash chain, unverified)"))
    rows += [("PROBLEM", problem) for problem in rep["problems"]]
    return rows


def _show_report(rep: dict[str, Any], title: str, as_json: bool, history: list[dict[str, Any]] | None = None) -> None:
    """The report as tables a person reads (--json: the exact report, with the words beside)."""
    if as_json:
        emit_json(rep)
        return
    emit_table(title, ["", "value"], _summary_rows(rep))
    if "currency" in rep:
        emit_table(f"{rep['currency_text']}: each component (--json has every digit)",
                   ["component", "threshold", "spent", "remaining"],
                   [(c["symbol"], c["threshold_text"], c["spent_text"], c["remaining_text"])
                    for c in rep["components_text"]])
    if history:
        shown = history[-_RELEASES_SHOWN:]
        caption = (f"the latest {len(shown)} of {len(history)} (all of them: optcomp ledger export)"
                   if len(shown) < len(history) else None)
        emit_table("releases, in charge order", ["#", "release id", "charged (UTC)", "status", "release", "charge"],
                   [(h["seq"], h["release_id"], h["time_text"].removesuffix(" UTC"), h["status"], h["release_text"],
                     h["charge_text"]) for h in shown], caption=caption)
    if rep["refused"]["recent"]:
        emit_table("refused attempts (the latest; outside the hash chain, not verified)",
                   ["release id", "when (UTC)", "release", "reason"],
                   [(r["release_id"], r["time_text"].removesuffix(" UTC"), r["release_text"], r["reason"])
                    for r in rep["refused"]["recent"]])


def _problems(led: Ledger, rep_problems: list[str]) -> list[str]:
    """The report's problems, or else what a full :meth:`Ledger.verify` finds (recomputed charges, the
    storage integrity check): report and export are audit commands and say so when the checks fail."""
    return list(rep_problems) or list(led.verify().problems)


def _fail_on(problems: list[str], what: str) -> None:
    if problems:
        raise click.ClickException(f"the ledger fails its checks: {problems[0]} ({what}; run `optcomp ledger "
                                   "verify`)")


_path = click.argument("path")
_schema = click.option("--schema", default=None,
                       help="PostgreSQL only: the schema that holds this ledger (default optcomp_ledger); "
                            "refused for a SQLite file.")
_json = click.option("--json", "as_json", is_flag=True, help="Print JSON.")


@cli.group("ledger")
def ledger_group() -> None:
    """A persistent privacy ledger: charge every release before it runs (docs/ledger.md)."""


@ledger_group.command("init")
@_path
@click.option("--dataset", required=True, help="What the budget protects.")
@click.option("--relation", required=True, type=click.Choice(RELATIONS), help="The neighbouring relation.")
@click.option("--epsilon", required=True, help="Budget ε (exact decimal).")
@click.option("--delta", required=True, help="Budget δ (exact decimal).")
@click.option("--mode", type=click.Choice(["filter", "plan"]), default="filter", show_default=True)
@click.option("--currency", type=click.Choice(CURRENCIES), default="zcdp", show_default=True,
              help="Filter currency (filter mode).")
@click.option("--delta-steps", default=None, help="approx-zcdp: the part δ″ of δ kept for Σδ_i (default 0).")
@click.option("--order", "orders", multiple=True, type=float,
              help="rdp: the order α (once), or with --workload the grid to choose it from (repeatable).")
@click.option("--workload", default=None,
              help="rdp: the release you expect to charge most (KIND:KEY=VALUE); picks the best order for it.")
@click.option("--plan", "plan_file", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Plan mode: JSON list of releases ([{\"kind\": \"pure\", \"epsilon\": \"0.1\"}, ...]).")
@_schema
@_json
def init_command(path: str, dataset: str, relation: str, epsilon: str, delta: str, mode: str, currency: str,
                 delta_steps: str | None, orders: tuple[float, ...], workload: str | None, plan_file: Path | None,
                 schema: str | None, as_json: bool) -> None:
    """Create a ledger (refuses if anything exists at PATH, an empty file included)."""
    options: dict[str, Any] = {}
    if delta_steps is not None:
        options["delta_steps"] = delta_steps
    if orders:
        options["orders"] = list(orders)
    if workload is not None:
        options["workload"] = parse_release(workload)
    plan = None
    if plan_file is not None:
        data = parse_json(read_text(plan_file, "plan"), plan_file, "plan")
        if not isinstance(data, list):
            raise ValueError(f"plan {plan_file} must be a JSON list of releases")
        plan = [from_json(d) for d in data]
    try:
        led = Ledger.create(path, dataset=dataset, relation=relation, epsilon=epsilon, delta=delta,
                            mode=mode, currency=currency, plan=plan, schema=schema, **options)  # type: ignore[arg-type]
    except StoreError as e:
        raise click.ClickException(str(e)) from None
    try:
        _show_report(led.report(), f"new ledger {path}", as_json)
    finally:
        led.close()


@ledger_group.command("charge")
@_path
@click.argument("release_id")
@click.argument("release")
@click.option("--slot", type=int, default=None, help="Plan mode: the slot to use (default: the next).")
@_schema
@_json
def charge_command(path: str, release_id: str, release: str, slot: int | None, schema: str | None,
                   as_json: bool) -> None:
    """Charge RELEASE (KIND:KEY=VALUE,...) under RELEASE_ID; run the mechanism only after this succeeds."""
    r = parse_release(release)
    with _opened(path, schema) as led:
        t = led.charge(release_id, r, slot=slot)
        _show_ticket(t, led, as_json)


@ledger_group.command("released")
@_path
@click.argument("release_id")
@click.option("--digest", default="", help="A digest of the published output (recorded).")
@_schema
@_json
def released_command(path: str, release_id: str, digest: str, schema: str | None, as_json: bool) -> None:
    """Mark a charged release as run and published."""
    with _opened(path, schema) as led:
        t = led.released(release_id, digest)
        _show_ticket(t, led, as_json)


@ledger_group.command("void")
@_path
@click.argument("release_id")
@click.option("--reason", required=True, help="Why the mechanism provably never ran on the data.")
@_schema
@_json
def void_command(path: str, release_id: str, reason: str, schema: str | None, as_json: bool) -> None:
    """Curator's refund of a charged release that never ran (recorded with its reason)."""
    with _opened(path, schema) as led:
        t = led.void(release_id, reason)
        _show_ticket(t, led, as_json)


@ledger_group.command("report")
@_path
@click.option("--fits", "fits", default=None, help="Also count how many more of this release fit.")
@_schema
@_json
def report_command(path: str, fits: str | None, schema: str | None, as_json: bool) -> None:
    """Spent, remaining, the guarantee, and what still fits (read-only; exit 2 if the ledger fails its checks)."""
    r = parse_release(fits) if fits else None
    with _opened(path, schema, read_only=True) as led:
        rep = led.report(r)
        rep["problems"] = _problems(led, rep["problems"])
        history = None if as_json else led.history()
    _show_report(rep, f"ledger {path}", as_json, history)
    _fail_on(rep["problems"], "the figures above are replayed from its hash chain")


@ledger_group.command("verify")
@_path
@_schema
@_json
def verify_command(path: str, schema: str | None, as_json: bool) -> None:
    """Re-walk the hash chain and recompute everything (read-only); one error line (exit 2) if anything is wrong."""
    try:
        led = Ledger.open(path, schema=schema, read_only=True)
    except StoreError as e:
        raise click.ClickException(f"ledger verification failed: {e}") from None
    try:
        v = led.verify()
    finally:
        led.close()
    if not v.ok:
        raise click.ClickException(f"ledger verification failed: {'; '.join(v.problems)}")
    if as_json:
        emit_json({"ok": v.ok, "events": v.events, "problems": list(v.problems)})
    else:
        emit_table(f"ledger {path}", ["check", "result"],
                   [("hash chain, recomputed charges, admission replayed", f"ok ({v.events} events)"),
                    ("cached state and release index", "ok"), ("storage integrity check", "ok")])


@ledger_group.command("export")
@_path
@_schema
@_json
def export_command(path: str, schema: str | None, as_json: bool) -> None:
    """The configuration and the whole event log, as JSON (read-only; always JSON, --json accepted)."""
    with _opened(path, schema, read_only=True) as led:
        problems = _problems(led, led.check())
        emit_json(led.export())
    _fail_on(problems, "exported as stored")


@ledger_group.command("backup")
@_path
@click.argument("destination")
@_json
def backup_command(path: str, destination: str, as_json: bool) -> None:
    """Copy a SQLite ledger to the new file DESTINATION, consistently, while it is in use (SQLite's backup API).

    A backup is the ledger as it was at this instant: restoring it later forgets every charge made
    since, which hands their budget back. See docs/ledger.md, Backups.
    """
    with _opened(path, None, read_only=True) as led:
        events, head = led.backup(destination)
    if as_json:
        emit_json({"destination": destination, "events": events, "head": head})
    else:
        emit_table(f"backup of {path}", ["", "value"], [("written to", destination), ("events", events)])
        click.echo(f"chain head (note it elsewhere): {head}")  # whole, on its own line: never cut at the width

"""``optcomp ledger …``: a persistent privacy ledger from the command line (:mod:`optcomp.ledger`).

::

    optcomp ledger init census.ledger --dataset census-2020 --relation add_remove \\
        --epsilon 1 --delta 1e-6 --currency zcdp
    optcomp ledger charge census.ledger q-0001 pure:epsilon=0.01       # then run the mechanism
    optcomp ledger released census.ledger q-0001 --digest SHA256
    optcomp ledger report census.ledger --fits pure:epsilon=0.01
    optcomp ledger verify census.ledger
    optcomp ledger export census.ledger

A release is ``KIND:KEY=VALUE,...`` with ``KIND`` one of ``pure`` (epsilon), ``approx`` (epsilon, delta),
``gaussian`` (sigma, sensitivity), ``zcdp`` (rho); values are exact decimals (``0.01`` is 1/100). A
PostgreSQL ledger is a ``postgresql://`` location plus ``--schema``. ``--json`` everywhere. Bad input is
one line on stderr and exit 2 — so is a refused charge (``refused: …``: the mechanism must not run) and
a failed ``verify`` (``ledger verification failed: …``).
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any, TypeVar

import click

from optcomp.cli._common import cli, emit_json, parse_json, read_text
from optcomp.ledger import (
    CURRENCIES,
    BudgetExceeded,
    Ledger,
    Release,
    StoreError,
    Ticket,
    from_json,
    slots_from_planner,
)

_KEYS = {"pure": ("epsilon",), "approx": ("epsilon", "delta"), "gaussian": ("sigma", "sensitivity"), "zcdp": ("rho",)}
_DEFAULTS = {"gaussian": {"sensitivity": "1"}}


def parse_release(text: str) -> Release:
    """``KIND:KEY=VALUE,...`` → a release (``ValueError`` naming what is wrong)."""
    kind, _, rest = text.partition(":")
    if kind not in _KEYS:
        raise ValueError(f"release kind must be one of {', '.join(_KEYS)}, got {kind!r} (format KIND:KEY=VALUE,...)")
    values: dict[str, Any] = {"kind": kind, **_DEFAULTS.get(kind, {})}
    for part in filter(None, rest.split(",")):
        key, eq, value = part.partition("=")
        if not eq or key.strip() not in _KEYS[kind]:
            raise ValueError(f"release {kind} takes {', '.join(_KEYS[kind])} as KEY=VALUE, got {part!r}")
        values[key.strip()] = value.strip()
    return from_json(values)


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


def _open(path: str, schema: str) -> Ledger:
    try:
        return Ledger.open(path, schema=schema)
    except StoreError as e:
        raise click.ClickException(str(e)) from None


_T = TypeVar("_T")


def _with(path: str, schema: str, action: Callable[[Ledger], _T]) -> _T:
    """Open the ledger, run ``action`` on it, close it (whatever happens)."""
    led = _open(path, schema)
    try:
        return action(led)
    finally:
        led.close()


def _ticket(t: Ticket) -> dict[str, Any]:
    return {"release_id": t.release_id, "seq": t.seq, "release": t.release.to_json(),
            "charge": [str(c) for c in t.charge], "slot": t.slot, "status": t.status, "replay": t.replay}


def _brief(value: Any) -> Any:
    """Text-mode form of a report value: exact rationals and hex floats as 10 significant digits (the
    exact strings stay in ``--json``)."""
    if isinstance(value, dict):
        return {k: _brief(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_brief(v) for v in value]
    if isinstance(value, str):
        try:
            if value.startswith(("0x", "-0x")):
                return float.fromhex(value)
            if "/" in value and len(value) > 24:
                return f"{float(Fraction(value)):.10g}…"
        except (ValueError, ZeroDivisionError, OverflowError):
            return value
    return value


def _show(payload: dict[str, Any], as_json: bool) -> None:
    if as_json:
        emit_json(payload)
        return
    for key, value in payload.items():
        shown = _brief(value)
        if isinstance(shown, list) and len(shown) == 1:
            shown = shown[0]
        click.echo(f"{key}: {shown}")


_path = click.argument("path")
_schema = click.option("--schema", default="optcomp_ledger", show_default=True,
                       help="PostgreSQL only: the schema that holds this ledger.")
_json = click.option("--json", "as_json", is_flag=True, help="Print JSON.")


@cli.group("ledger")
def ledger_group() -> None:
    """A persistent privacy ledger: charge every release before it runs (docs/ledger.md)."""


@ledger_group.command("init")
@_path
@click.option("--dataset", required=True, help="What the budget protects.")
@click.option("--relation", required=True, help="The neighbouring relation (add_remove, substitution, ...).")
@click.option("--epsilon", required=True, help="Budget ε (exact decimal).")
@click.option("--delta", required=True, help="Budget δ (exact decimal).")
@click.option("--mode", type=click.Choice(["filter", "plan"]), default="filter", show_default=True)
@click.option("--currency", type=click.Choice(CURRENCIES), default="zcdp", show_default=True,
              help="Filter currency (filter mode).")
@click.option("--delta-steps", default=None, help="approx-zcdp: the part δ″ of δ kept for Σδ_i (default 0).")
@click.option("--order", "orders", multiple=True, type=float, help="rdp: an order α of the grid (repeatable).")
@click.option("--plan", "plan_file", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Plan mode: JSON list of releases ([{\"kind\": \"pure\", \"epsilon\": \"0.1\"}, ...]).")
@_schema
@_json
def init_command(path: str, dataset: str, relation: str, epsilon: str, delta: str, mode: str, currency: str,
                 delta_steps: str | None, orders: tuple[float, ...], plan_file: Path | None, schema: str,
                 as_json: bool) -> None:
    """Create a ledger (refuses if one exists)."""
    options: dict[str, Any] = {}
    if delta_steps is not None:
        options["delta_steps"] = delta_steps
    if orders:
        options["orders"] = list(orders)
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
    _show(led.report(), as_json)
    led.close()


@ledger_group.command("charge")
@_path
@click.argument("release_id")
@click.argument("release")
@click.option("--slot", type=int, default=None, help="Plan mode: the slot to use (default: the next).")
@_schema
@_json
def charge_command(path: str, release_id: str, release: str, slot: int | None, schema: str, as_json: bool) -> None:
    """Charge RELEASE (KIND:KEY=VALUE,...) under RELEASE_ID; run the mechanism only after this succeeds."""
    r = parse_release(release)
    led = _open(path, schema)
    try:
        t = led.charge(release_id, r, slot=slot)
    except BudgetExceeded as e:
        raise click.ClickException(str(e)) from None
    finally:
        led.close()
    _show(_ticket(t), as_json)


@ledger_group.command("released")
@_path
@click.argument("release_id")
@click.option("--digest", default="", help="A digest of the published output (recorded).")
@_schema
@_json
def released_command(path: str, release_id: str, digest: str, schema: str, as_json: bool) -> None:
    """Mark a charged release as run and published."""
    _show(_ticket(_with(path, schema, lambda led: led.released(release_id, digest))), as_json)


@ledger_group.command("void")
@_path
@click.argument("release_id")
@click.option("--reason", required=True, help="Why the mechanism provably never ran on the data.")
@_schema
@_json
def void_command(path: str, release_id: str, reason: str, schema: str, as_json: bool) -> None:
    """Curator's refund of a charged release that never ran (recorded with its reason)."""
    _show(_ticket(_with(path, schema, lambda led: led.void(release_id, reason))), as_json)


@ledger_group.command("report")
@_path
@click.option("--fits", "fits", default=None, help="Also count how many more of this release fit.")
@_schema
@_json
def report_command(path: str, fits: str | None, schema: str, as_json: bool) -> None:
    """Spent, remaining, the guarantee with its certificate, and remaining in user units."""
    r = parse_release(fits) if fits else None
    _show(_with(path, schema, lambda led: led.report(r)), as_json)


@ledger_group.command("verify")
@_path
@_schema
@_json
def verify_command(path: str, schema: str, as_json: bool) -> None:
    """Re-walk the hash chain and recompute the cached state; one error line (exit 2) if anything is wrong."""
    led = _open(path, schema)
    try:
        v = led.verify()
    finally:
        led.close()
    if not v.ok:
        raise click.ClickException(f"ledger verification failed: {'; '.join(v.problems)}")
    _show({"ok": v.ok, "events": v.events, "problems": list(v.problems)}, as_json)


@ledger_group.command("export")
@_path
@_schema
@_json
def export_command(path: str, schema: str, as_json: bool) -> None:
    """The configuration and the whole event log, as JSON (always; --json accepted for symmetry)."""
    led = _open(path, schema)
    try:
        emit_json(led.export())
    finally:
        led.close()

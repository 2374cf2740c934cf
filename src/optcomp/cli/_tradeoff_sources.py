"""The trade-off curve of what a user ran, for ``optcomp tradeoff`` and ``optcomp plot tradeoff``: a DP-SGD
run (``--sigma --q --steps``), a composition of ``--mech`` specs, or a dp_accounting ``--dp-event`` tree.

Each is a certified :class:`~optcomp.fdp.TradeOffBracket` from the library — :func:`optcomp.dpsgd.tradeoff`
for a run, :func:`optcomp.fdp.from_pld` of the :func:`optcomp.compose` composition for ``--mech`` and of
:func:`optcomp.interop.from_dp_event`'s for ``--dp-event`` — so the attack TPR at an FPR (1 − f(FPR),
Dong–Roth–Su §2.1) is a bracket too. Nothing is computed here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar, cast

import click

from optcomp.dpsgd import SAMPLERS

_F = TypeVar("_F", bound=Callable[..., Any])

#: The words a label carries when ``--group`` went through the exact group pair (read by ``optcomp tradeoff``).
EXACT_GROUP = "exact group pair"

#: The options of a source, in the order they appear in ``--help``.
_OPTIONS: tuple[Callable[[Any], Any], ...] = (
    click.option("--mech", "mechs", multiple=True, metavar="KIND:KEY=VALUE,...",
                 help="A mechanism of the composition, as in 'optcomp account --mech' (repeatable)."),
    click.option("--dp-event", "dp_event", type=click.Path(path_type=Path, dir_okay=False), default=None,
                 help="A dp_accounting DpEvent JSON file (docs/interop.md)."),
    click.option("--neighbouring", type=click.Choice(["add_remove", "substitution"]), default="add_remove",
                 show_default=True, help="Relation a --dp-event tree is read under."),
    click.option("--sigma", "sigma", type=float, default=None, help="DP-SGD run: noise multiplier σ."),
    click.option("--q", "q", type=float, default=None, help="DP-SGD run: sampling rate q (m/n for fixed_size)."),
    click.option("--steps", "steps", type=int, default=None, help="DP-SGD run: number of steps."),
    click.option("--sampling", type=click.Choice([n for n, s in SAMPLERS.items() if s.tradeoff]), default="poisson",
                 show_default=True,
                 help="DP-SGD run: batch sampler (the samplers with an exact pair)."),
    click.option("--examples-per-user", "examples_per_user", type=int, default=1, show_default=True,
                 help="DP-SGD run: examples per privacy unit (poisson only)."),
    click.option("--accuracy", default=None, metavar="KEY=VALUE,...",
                 help="Override fields of the default Accuracy (for --mech, --dp-event and a DP-SGD run)."),
)


def source_options(command: _F) -> _F:
    """Attach the source options to a click command (its function takes them as keywords)."""
    for option in reversed(_OPTIONS):
        command = option(command)
    return command


def _run_curve(sigma: float | None, q: float | None, steps: int | None, sampling: str, examples_per_user: int,
               accuracy: Any, group: int = 1) -> tuple[str, Any]:
    from optcomp import dpsgd
    from optcomp._numerics import check_int, check_positive, check_sampling_rate
    from optcomp.cli.account import check_user_level_cost

    if sigma is None or q is None or steps is None:
        raise click.UsageError("a DP-SGD run needs all of --sigma, --q and --steps")
    check_positive("--sigma", sigma)  # the library's checks, under the options' names
    check_sampling_rate("--q", q)
    check_int("--steps", steps)
    check_int("--examples-per-user", examples_per_user)
    check_user_level_cost(examples_per_user)
    label = f"DP-SGD sigma={sigma:g}, q={q:g}, steps={steps}, {sampling}" + (
        f", {examples_per_user} examples per user" if examples_per_user > 1 else "")
    if group > 1:  # a group of g units of k examples is one unit of g·k examples (exact group pair)
        check_user_level_cost(examples_per_user, group)
        label += f", group of {group} ({EXACT_GROUP}: {examples_per_user * group} examples per unit)"
    curve = dpsgd.tradeoff(sigma, q, steps, sampling=cast("dpsgd.Sampling", sampling),  # a click.Choice of the table's
                           examples_per_user=examples_per_user * group, accuracy=accuracy)
    return label, curve


def _event_curve(path: Path, neighbouring: str, accuracy: Any) -> tuple[str, Any]:
    from optcomp import fdp, interop
    from optcomp.cli._common import parse_json, read_text

    composition = interop.from_dp_event(parse_json(read_text(path, "--dp-event file"), path, "--dp-event file"),
                                        neighbouring=neighbouring)
    if composition.empty:
        raise ValueError(f"--dp-event {path} has no mechanism (only no-ops): nothing to attack, f(α) = 1 − α")
    if not composition.private:
        raise ValueError(f"--dp-event {path} is not private ({', '.join(composition.non_private)}): f = 0, every "
                         "attack succeeds")
    if composition.allocations:
        raise ValueError(f"--dp-event {path} has a RandomAllocationDpEvent: no exact law, so no trade-off bracket")
    label = f"dp_event {path.name} ({composition.neighbouring})"
    curve = fdp.from_pld(composition.pld(accuracy=accuracy))
    if not composition.has_dominating_pairs:
        return label, curve
    # a truncated-Poisson step's law only dominates the run: its upper curve (the attack side) is not the
    # run's; the explicit pair's is (a dominated pair: f_run ≤ f_explicit ≤ its upper curve; issue 27 C)
    explicit = composition.dominated_pld(accuracy=accuracy)
    label += " (attack side from the truncated steps' explicit pair)"
    return label, fdp.TradeOffBracket(lower=curve.lower, upper=fdp.from_pld(explicit).upper)


def source_curve(*, mechs: Sequence[str], dp_event: Path | None, neighbouring: str, sigma: float | None,
                 q: float | None, steps: int | None, sampling: str, examples_per_user: int,
                 accuracy: str | None, group: int = 1) -> tuple[str, Any] | None:
    """(label, certified TradeOffBracket) of the one source given, or None when none is (usage errors for
    two sources, or a partial DP-SGD run).

    ``group`` > 1: the curve of a group of that many records (units) through the exact group pair
    (:meth:`optcomp.Composition.group`; a Poisson DP-SGD run with g·k examples per unit) when every
    mechanism has one, the label ending in "(exact group pair)"; otherwise Dong–Roth–Su Thm 2.14 on the
    curve (:func:`optcomp.fdp.group_privacy`, a bound, not the group's own curve), the label saying why."""
    from optcomp.cli.account import parse_accuracy

    run = sigma is not None or q is not None or steps is not None
    given = [name for name, on in (("--mech", bool(mechs)), ("--dp-event", dp_event is not None),
                                   ("a DP-SGD run (--sigma/--q/--steps)", run)) if on]
    if len(given) > 1:
        raise click.UsageError(f"give one curve: {' and '.join(given)} cannot be combined")
    stray = [name for name, on in (("--accuracy", accuracy is not None and not given),
                                   ("--neighbouring", neighbouring != "add_remove" and dp_event is None),
                                   ("--sampling", sampling != "poisson" and not run),
                                   ("--examples-per-user", examples_per_user != 1 and not run)) if on]
    if stray:  # never ignored silently
        raise click.UsageError(f"{', '.join(stray)} goes with the curve it describes (--mech, --dp-event or "
                               "--sigma/--q/--steps)")
    if not given:
        return None
    acc = parse_accuracy(accuracy)
    if run and (group == 1 or SAMPLERS[sampling].user_level):  # a group of g users of k: one of g·k examples
        return _run_curve(sigma, q, steps, sampling, examples_per_user, acc, group)
    if run:
        label, curve = _run_curve(sigma, q, steps, sampling, examples_per_user, acc)
        return _bound_group(label, curve, group, f"no exact group pair for {sampling} sampling")
    if dp_event is not None:
        return _bound_group(*_event_curve(dp_event, neighbouring, acc), group, "a dp_event tree is read as a PLD")
    from optcomp import compose, fdp
    from optcomp.cli.account import build_item, parse_mech

    entries = [parse_mech(m) for m in mechs]
    composition = compose(*[build_item(e) for e in entries], accuracy=acc)
    label = "composition of " + "; ".join(mechs)
    if group == 1:
        return label, fdp.from_pld(composition)
    try:
        grouped = composition.group(group)
    except ValueError as why:  # NoGroupLawError: no exact pair for one of the mechanisms
        return _bound_group(label, fdp.from_pld(composition), group, str(why))
    return label + f", group of {group} ({EXACT_GROUP})", fdp.from_pld(grouped)


def _bound_group(label: str, curve: Any, group: int, why: str) -> tuple[str, Any]:
    """Dong–Roth–Su Thm 2.14 on ``curve`` for ``group`` > 1 (a bound), the label saying so and why."""
    if group == 1:
        return label, curve
    from optcomp.fdp import group_privacy

    return label + f", group of {group} (DRS Thm 2.14 bound; {why})", group_privacy(curve, group)

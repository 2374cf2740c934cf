"""``optcomp select``: certified ε(δ) / δ(ε) of releasing the best of K runs of a base (private selection).

The base is given as ``--mech`` entries (as for ``optcomp account``), a DP-SGD run (``--sigma --q
--steps``, any ``--sampling``) or a dp_accounting ``--dp-event`` tree; K's law by ``--law`` and its
parameters, or by the event itself when the tree's root is a ``RepeatAndSelectDpEvent``::

    optcomp select --sigma 1.1 --q 0.01 --steps 1000 --law poisson --mean 10 --delta 1e-6
    optcomp select --mech gaussian:sigma=4 --law geometric --mean 10 --delta 1e-6 --statement
    optcomp select --dp-event tuning.json --delta 1e-5 --json

One library call (:func:`optcomp.selection.select`, or :func:`optcomp.interop.from_repeat_and_select`),
then its answers: the certified bracket, the route that certified the upper end, and every route's value.
With a base dp_accounting can describe and a law it has (Poisson, truncated negative binomial), its
``RdpAccountant`` answer for the same ``RepeatAndSelectDpEvent`` is placed beside ours (``--reference``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from optcomp.cli._common import cli, emit_json, emit_table, fmt_directed, parse_json, read_text

#: ``--law`` names → what they need.
LAWS = ("geometric", "logarithmic", "negative-binomial", "poisson", "binomial", "fixed")

_EPILOG = """\b
Laws of K (--law), independent of the data:
  geometric          --mean M (gamma = 1/M) or --gamma G       (K >= 1)
  logarithmic        --mean M or --gamma G                     (K >= 1)
  negative-binomial  --eta E and --mean M or --gamma G         (Papernot-Steinke D_{eta,gamma})
  poisson            --mean M                                  (K = 0 releases nothing)
  binomial           --n N --p P
  fixed              --n N                                     (exactly N runs)
--threshold: Liu-Talwar's known-threshold variant (release the first candidate
whose score reaches the threshold; after each one below it stop with
probability --gamma); pure eps-DP bases only.

\b
Examples:
  optcomp select --sigma 1.1 --q 0.01 --steps 1000 --law poisson --mean 10 --delta 1e-6
  optcomp select --mech laplace:scale=2 --law geometric --mean 10 --delta 1e-6 --statement
  optcomp select --dp-event tuning.json --delta 1e-5 --json
"""


def _law(law: str | None, mean: float | None, gamma: float | None, eta: float | None, n: int | None,
         p: float | None) -> Any:
    """The law of K of the options (``ValueError``/usage errors naming the option)."""
    from optcomp import selection

    if law is None:
        raise click.UsageError("give --law (the law of K) unless the --dp-event root is a RepeatAndSelectDpEvent")
    given = {"--mean": mean, "--gamma": gamma, "--eta": eta, "--n": n, "--p": p}
    allowed = {"geometric": ("--mean", "--gamma"), "logarithmic": ("--mean", "--gamma"),
               "negative-binomial": ("--eta", "--mean", "--gamma"), "poisson": ("--mean",),
               "binomial": ("--n", "--p"), "fixed": ("--n",)}[law]
    extra = [k for k, v in given.items() if v is not None and k not in allowed]
    if extra:
        raise click.UsageError(f"--law {law} takes {', '.join(allowed)}, not {', '.join(extra)}")
    if law in ("geometric", "logarithmic", "negative-binomial"):
        if (mean is None) == (gamma is None):
            raise click.UsageError(f"--law {law} needs exactly one of --mean and --gamma")
        shape = {"geometric": 1.0, "logarithmic": 0.0}.get(law, eta)
        if shape is None:
            raise click.UsageError("--law negative-binomial needs --eta")
        if gamma is not None:
            return selection.TruncatedNegativeBinomial(shape, gamma)
        assert mean is not None  # exactly one of the two (checked above)
        return selection.TruncatedNegativeBinomial.from_mean(shape, mean)
    if law == "poisson":
        if mean is None:
            raise click.UsageError("--law poisson needs --mean")
        return selection.Poisson(mean)
    if n is None:
        raise click.UsageError(f"--law {law} needs --n")
    if law == "fixed":
        return selection.Binomial(n)
    if p is None:
        raise click.UsageError("--law binomial needs --p")
    return selection.Binomial(n, p)


def _base(mechs: Sequence[str], sigma: float | None, q: float | None, steps: int | None, sampling: str,
          accuracy: Any) -> tuple[Any, str]:
    """(the base's composition, its description) from ``--mech`` entries or a DP-SGD run."""
    from optcomp import compose

    if mechs and sigma is not None:
        raise click.UsageError("give the base as --mech entries or as a DP-SGD run (--sigma/--q/--steps), not both")
    if mechs:
        from optcomp.cli.account import build_item, parse_mech

        items = [build_item(parse_mech(m)) for m in mechs]
        return compose(*items, accuracy=accuracy), "; ".join(mechs)
    if sigma is None or q is None or steps is None:
        raise click.UsageError("give the base: --mech entries, a DP-SGD run (--sigma, --q, --steps) or --dp-event FILE")
    from optcomp import dpsgd

    run = dpsgd.Run.checked(sigma, q, steps, sampling)
    return compose(*run.items(), accuracy=accuracy), f"DP-SGD sigma={sigma:g}, q={q:g}, steps={steps}, {sampling}"


def _event_law(law: Any) -> tuple[float, float] | None:
    """dp_accounting's (mean, shape) of a law of K, if it has one."""
    from optcomp.selection import Poisson, TruncatedNegativeBinomial

    if isinstance(law, Poisson):
        return law.mean, math.inf
    if isinstance(law, TruncatedNegativeBinomial) and law.eta >= 0.0:
        return law.mean, law.eta
    return None


@cli.command("select", epilog=_EPILOG)
@click.option("--mech", "mechs", multiple=True, metavar="KIND:KEY=VALUE,...",
              help="A mechanism of the base and how often it runs (as for optcomp account). Repeatable.")
@click.option("--sigma", type=float, default=None, help="DP-SGD base: noise multiplier.")
@click.option("--q", type=float, default=None, help="DP-SGD base: sampling rate.")
@click.option("--steps", type=int, default=None, help="DP-SGD base: number of steps.")
@click.option("--sampling", default="poisson", show_default=True,
              type=click.Choice(["poisson", "fixed_size", "truncated_poisson", "shuffle", "balls_in_bins"]),
              help="DP-SGD base: batch sampler.")
@click.option("--dp-event", type=click.Path(path_type=Path, dir_okay=False),
              help="dp_accounting DpEvent JSON: a RepeatAndSelectDpEvent root, or the base's tree with --law.")
@click.option("--neighbouring", type=click.Choice(["add_remove", "substitution", "zero_out"]), default="add_remove",
              help="Relation a --dp-event tree is read under.")
@click.option("--law", type=click.Choice(LAWS), default=None, help="The law of K (see below).")
@click.option("--mean", type=float, default=None, help="E[K].")
@click.option("--gamma", type=float, default=None, help="gamma of a truncated negative binomial law (or --threshold's stopping probability).")
@click.option("--eta", type=float, default=None, help="eta of --law negative-binomial (> -1).")
@click.option("--n", "n", type=int, default=None, help="n of --law binomial / fixed.")
@click.option("--p", "p", type=float, default=None, help="p of --law binomial.")
@click.option("--threshold", is_flag=True, help="Liu-Talwar's known-threshold variant (stopping probability --gamma).")
@click.option("--delta", "deltas", type=float, multiple=True, help="Report the ε bracket at this δ. Repeatable.")
@click.option("--epsilon", "epsilons", type=float, multiple=True, help="Report the δ bracket at this ε. Repeatable.")
@click.option("--accuracy", default=None, metavar="KEY=VALUE,...",
              help="Fields of the base's Accuracy (default relative_width=1e-3 for its δ(ε) curve).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables.")
@click.option("--statement", is_flag=True, help="Also print a short certified privacy statement (at the first --delta).")
@click.option("--reference/--no-reference", "reference", default=None,
              help="dp_accounting's RdpAccountant answer beside ours: always / never (default: cheap trees, "
              "and with --json only when given).")
def select_command(
    mechs: Sequence[str], sigma: float | None, q: float | None, steps: int | None, sampling: str,
    dp_event: Path | None, neighbouring: str, law: str | None, mean: float | None, gamma: float | None,
    eta: float | None, n: int | None, p: float | None, threshold: bool, deltas: Sequence[float],
    epsilons: Sequence[float], accuracy: str | None, as_json: bool, statement: bool, reference: bool | None,
) -> None:
    """Certified ε(δ) or δ(ε) of releasing the best of K runs of a base (private selection, hyperparameter tuning)."""
    from optcomp import selection
    from optcomp._numerics import check_nonnegative, check_probability
    from optcomp.cli.account import parse_accuracy

    if not deltas and not epsilons:
        raise click.UsageError("give --delta (for an ε bracket) or --epsilon (for a δ bracket)")
    deltas = [check_probability("--delta", d) for d in deltas]
    epsilons = [check_nonnegative("--epsilon", e) for e in epsilons]
    acc = parse_accuracy(accuracy, None) if accuracy is not None else selection.PROFILE_ACCURACY
    event_json: Any = None
    if dp_event is not None:
        if mechs or sigma is not None:
            raise click.UsageError("--dp-event cannot be combined with --mech or a DP-SGD run")
        event_json = parse_json(read_text(dp_event, "--dp-event file"), dp_event, "--dp-event file")
        sel, source = _from_event(event_json, neighbouring, acc, law, mean, gamma, eta, n, p, threshold)
    else:
        base, source = _base(mechs, sigma, q, steps, sampling, acc)
        if threshold:
            if law not in (None, "geometric") or gamma is None or mean is not None:
                raise click.UsageError("--threshold takes --gamma (the stopping probability) and no other law")
            sel = selection.threshold(base, gamma, accuracy=acc)
        else:
            sel = selection.select(base, _law(law, mean, gamma, eta, n, p), accuracy=acc)
    answers = [sel.epsilon(d) for d in deltas] + [sel.delta(e) for e in epsilons]
    text = sel.statement(deltas[0]) if statement and deltas else None
    label, ref = _reference_answers(sel, event_json, neighbouring, deltas, epsilons, reference, as_json)
    if as_json:
        emit_json({"base": source, "repetitions": answers[0].repetitions, "results": [a.to_dict() for a in answers],
                   "reference": label, "reference_values": ref, **({"statement": text} if text else {})})
        return
    _print(source, answers, label, ref)
    if statement and not deltas:
        click.echo("\n(--statement needs a --delta)")
    if text:
        click.echo("\n" + text)


def _from_event(event_json: Any, neighbouring: str, acc: Any, law: str | None, mean: float | None,
                gamma: float | None, eta: float | None, n: int | None, p: float | None,
                threshold: bool) -> tuple[Any, str]:
    from optcomp import interop, selection

    root = event_json.get("class_name") if isinstance(event_json, dict) else None
    if root == "RepeatAndSelectDpEvent":
        if law is not None or threshold or any(v is not None for v in (mean, gamma, eta, n, p)):
            raise click.UsageError("a RepeatAndSelectDpEvent carries its own law of K: drop --law and its parameters")
        return interop.from_repeat_and_select(event_json, neighbouring=neighbouring, accuracy=acc), "dp_event"
    tree = interop.from_dp_event(event_json, neighbouring=neighbouring)
    if tree.empty or not tree.private:
        raise ValueError("the --dp-event tree has no mechanism, or is not private")
    base = tree.pld(accuracy=acc)
    if threshold:
        if gamma is None:
            raise click.UsageError("--threshold takes --gamma (the stopping probability)")
        return selection.threshold(base, gamma, accuracy=acc), "dp_event"
    return selection.select(base, _law(law, mean, gamma, eta, n, p), accuracy=acc), "dp_event"


def _reference_answers(sel: Any, event_json: Any, neighbouring: str, deltas: Sequence[float],
                       epsilons: Sequence[float], reference: bool | None, as_json: bool) -> tuple[str, list[float] | None]:
    """dp_accounting's RdpAccountant on the same RepeatAndSelectDpEvent (cli/_interop's runner)."""
    from optcomp.cli._interop import JSON_REFERENCE_NOT_RUN, _reference

    if reference is False:
        return "dp_accounting reference not run (--no-reference)", None
    if as_json and reference is None:
        return JSON_REFERENCE_NOT_RUN, None
    if not hasattr(sel, "repetitions"):
        return "dp_accounting has no known-threshold selection", None
    if isinstance(event_json, dict) and event_json.get("class_name") == "RepeatAndSelectDpEvent":
        shape = event_json.get("shape")  # JSON's spelling of an infinite shape ("inf") as dp_accounting's float
        wrapped = {**event_json, "shape": float(shape) if isinstance(shape, str) else shape}
    else:
        pair = _event_law(sel.repetitions)
        if pair is None:
            return f"dp_accounting has no RepeatAndSelectDpEvent for {sel.repetitions.describe()}", None
        try:
            from optcomp.interop import to_dp_event_json

            inner = event_json if event_json is not None else to_dp_event_json(
                *sel.base.items, neighbouring=sel.base.neighbouring or "add_remove")
        except ValueError as exc:
            return f"dp_accounting cannot describe this base ({exc})", None
        wrapped = {"class_name": "RepeatAndSelectDpEvent", "event": inner, "mean": pair[0], "shape": pair[1]}
    relation = neighbouring if event_json is not None else (sel.base.neighbouring or "add_remove")
    return _reference(wrapped, relation, deltas, epsilons, reference)


def _print(source: str, answers: Sequence[Any], label: str, ref: list[float] | None) -> None:
    first = answers[0]
    emit_table(
        f"best of K runs ({first.repetitions}) of: {source}",
        ["quantity", "at", "lower", "upper (certified)", "route", "dp_accounting"],
        [(a.quantity, f"{'delta' if a.quantity == 'epsilon' else 'epsilon'}={a.at:g}",
          fmt_directed(a.lower, up=False), fmt_directed(a.upper, up=True), a.route,
          "-" if ref is None or ref[i] is None else f"{ref[i]:.6g}")
         for i, a in enumerate(answers)],
    )
    rows = []
    for r in first.routes:
        values = [next(x.upper for x in a.routes if x.route == r.route) for a in answers]
        shown = ["n/a" if v is None else fmt_directed(v, up=True) for v in values]
        rows.append((r.route, *shown, r.note if all(v is None for v in values) else ""))
    emit_table("every route (certified upper ends; the smallest answers)",
               ["route", *[f"{a.quantity} at {a.at:g}" for a in answers], "why not applicable"], rows)
    click.echo(f"lower end: {first.lower_end}")
    click.echo(f"reference: {label}")

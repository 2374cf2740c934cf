"""``optcomp matrix``: matrix-factorization mechanisms (DP-FTRL tree, BandMF, BLT), certified.

Examples::

    optcomp matrix sensitivity --strategy bsr:n=2000,bands=64 --pattern min_sep:b=64,k=32
    optcomp matrix epsilon --strategy tree:n=2000 --pattern min_separation:s=313,k=6 --sigma 7 --delta 1e-9
    optcomp matrix bandmf --strategy bsr:n=2000,bands=64 --cycle-length 64 --sampling-rate 0.6402 \\
        --sigma 6 --delta 1e-5 --statement
    optcomp matrix bandmf --jax-config config.json --delta 1e-5 --json

Each command parses its options (the spellings of :func:`optcomp.matrix.strategy_from_text` and
:func:`optcomp.matrix.pattern_from_text`), makes one library call and formats the answer.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import click

from optcomp import matrix
from optcomp.cli._common import cli, emit_json, emit_table, load_structured, progress_bar


@cli.group("matrix")
def matrix_group() -> None:
    """Matrix-factorization mechanisms: sensitivity, un-amplified ε, amplified BandMF (docs/matrix.md)."""


def _rational(x: Fraction) -> str:
    """An exact rational as ``"p/q"`` in decimal, however many digits (BSR with 10⁴ bands: ~12,000): the
    interpreter's limit on int → str conversions guards parsing untrusted text, not our own exact values."""
    limit = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        return str(x)
    finally:
        sys.set_int_max_str_digits(limit)


def _sensitivity_payload(s: matrix.SensitivityBound) -> dict[str, Any]:
    return {
        "squared": s.squared,
        "sensitivity": s.bound,
        "exact": s.exact,
        "method": s.method,
        "witness": list(s.witness),
        "squared_rational": [_rational(s.squared_lower), _rational(s.squared_upper)],
    }


@matrix_group.command("sensitivity")
@click.option("--strategy", "strategy_text", required=True, help="e.g. bsr:n=2000,bands=64, tree:n=2000, "
              "toeplitz:n=100,coefs=1/0.5, blt:n=..,buf_decay=..,output_scale=.., dense:file=C.npy")
@click.option("--pattern", "pattern_text", required=True,
              help="single | fixed_epoch:k=K | min_sep:b=B[,k=K] (y − x) | min_separation:s=S[,k=K] (y − x − 1)")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def sensitivity_command(strategy_text: str, pattern_text: str, as_json: bool) -> None:
    """Certified bracket on the sensitivity Δ (and Δ²) of a strategy under a participation pattern."""
    strategy, pattern = matrix.strategy_from_text(strategy_text), matrix.pattern_from_text(pattern_text)
    with progress_bar(f"sensitivity of {strategy_text} under {pattern_text}", total=1) as advance:
        s = matrix.sensitivity(strategy, pattern, progress=advance)
    if as_json:
        emit_json(_sensitivity_payload(s))
        return
    emit_table(f"sensitivity ({s.method}{', exact' if s.exact else ''})", ["quantity", "lower", "upper"],
               [["Δ²", s.squared.lower, s.squared.upper], ["Δ", s.lower, s.upper]],
               caption=f"exhibited pattern: {list(s.witness)[:12]}" if s.witness else None)


@matrix_group.command("epsilon")
@click.option("--strategy", "strategy_text", required=True, help="As for `optcomp matrix sensitivity`.")
@click.option("--pattern", "pattern_text", required=True, help="As for `optcomp matrix sensitivity`.")
@click.option("--sigma", "noise_multiplier", type=float, required=True, help="Noise multiplier σ (noise std σζ).")
@click.option("--normalizer", type=click.Choice(list(matrix.NORMALIZERS)), default="absolute", show_default=True,
              help="ζ: absolute (1) or max_column_norm (jax_privacy's column-normalised σ).")
@click.option("--relation", type=click.Choice(list(matrix.RELATIONS)), default="zero_out", show_default=True)
@click.option("--delta", "deltas", type=float, multiple=True, help="δ at which to bracket ε (repeatable).")
@click.option("--epsilon", "epsilons", type=float, multiple=True, help="ε at which to bracket δ (repeatable).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.option("--statement", is_flag=True, help="Print the privacy statement paragraph.")
def epsilon_command(strategy_text: str, pattern_text: str, noise_multiplier: float, normalizer: str, relation: str,
                    deltas: Sequence[float], epsilons: Sequence[float], as_json: bool, statement: bool) -> None:
    """Un-amplified release: certified μ-GDP (μ = Δ/(σζ)) and its ε/δ, with the RDP number beside it."""
    if not deltas and not epsilons:
        raise ValueError("give at least one --delta or --epsilon")
    r = matrix.release(matrix.strategy_from_text(strategy_text), matrix.pattern_from_text(pattern_text),
                       noise_multiplier=noise_multiplier, normalizer=matrix.check_normalizer(normalizer),
                       relation=matrix.check_relation(relation))
    rows = [["epsilon", f"delta={d:g}", r.epsilon(d), r.rdp_epsilon(d)] for d in deltas]
    rows += [["delta", f"epsilon={e:g}", r.delta(e), None] for e in epsilons]
    if as_json:
        payload: dict[str, Any] = {"sensitivity": _sensitivity_payload(r.sensitivity), "mu": r.mu,
                                   "relation": r.relation, "normalizer": r.normalizer,
                                   "answers": [{"quantity": q, "at": at, "bound": b, "rdp_upper_only": x}
                                               for q, at, b, x in rows]}
        if statement:
            payload["statement"] = r.statement()
        emit_json(payload)
        return
    emit_table(f"matrix mechanism, μ-GDP with μ ∈ [{r.mu.lower:.10g}, {r.mu.upper:.10g}] ({r.relation})",
               ["quantity", "at", "certified bracket", "RDP (upper only)"],
               [[q, at, b, "-" if x is None else x] for q, at, b, x in rows])
    if statement:
        click.echo(r.statement())


@matrix_group.command("bandmf")
@click.option("--strategy", "strategy_text", default=None, help="A banded strategy (bsr:..., toeplitz:..., dense:...).")
@click.option("--jax-config", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="A jax_privacy BandMFExecutionPlanConfig as JSON (read as data).")
@click.option("--cycle-length", type=int, default=None, help="b̂: number of groups (≥ bands).")
@click.option("--sampling-rate", type=float, default=None, help="Poisson rate q within a group.")
@click.option("--sigma", "noise_multiplier", type=float, default=None, help="σ (noise std σ·max column norm).")
@click.option("--partition", type=click.Choice(list(matrix.PARTITION_RELATION)), default="equal_split", show_default=True)
@click.option("--public-partition", is_flag=True, help="The partition is fixed and public (bracket on the truth).")
@click.option("--per-column/--no-per-column", default=True, show_default=True, help="Per-column sensitivities.")
@click.option("--group-size", type=int, default=None, help="Truncated Poisson: examples per group.")
@click.option("--max-batch-size", type=int, default=None, help="Truncated Poisson: the batch cap.")
@click.option("--examples-per-user", type=int, default=1, show_default=True)
@click.option("--delta", "deltas", type=float, multiple=True, help="δ at which to bracket ε (repeatable).")
@click.option("--epsilon", "epsilons", type=float, multiple=True, help="ε at which to bracket δ (repeatable).")
@click.option("--target-epsilon", type=float, default=None, help="Also calibrate σ for this ε at the first --delta.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.option("--statement", is_flag=True, help="Print the privacy statement paragraph.")
def bandmf_command(strategy_text: str | None, jax_config: Path | None, cycle_length: int | None,
                   sampling_rate: float | None, noise_multiplier: float | None, partition: str,
                   public_partition: bool, per_column: bool, group_size: int | None, max_batch_size: int | None,
                   examples_per_user: int, deltas: Sequence[float], epsilons: Sequence[float],
                   target_epsilon: float | None, as_json: bool, statement: bool) -> None:
    """Amplified BandMF with cyclic Poisson sampling: certified ε/δ (max over groups), optional σ calibration."""
    if (strategy_text is None) == (jax_config is None):
        raise ValueError("give exactly one of --strategy and --jax-config")
    if not deltas and not epsilons:
        raise ValueError("give at least one --delta or --epsilon")
    if jax_config is not None:
        run = matrix.from_jax_privacy_config(load_structured(jax_config, "--jax-config"), per_column=per_column)
    else:
        missing = [n for n, v in (("--cycle-length", cycle_length), ("--sampling-rate", sampling_rate),
                                  ("--sigma", noise_multiplier)) if v is None]
        if missing:
            raise ValueError(f"--strategy needs {', '.join(missing)}")
        run = matrix.bandmf(matrix.strategy_from_text(str(strategy_text)), cycle_length=int(cycle_length or 0),
                            sampling_rate=float(sampling_rate or 0.0), noise_multiplier=float(noise_multiplier or 0.0),
                            partition=partition, partition_public=public_partition, per_column=per_column,
                            group_size=group_size, max_batch_size=max_batch_size,
                            examples_per_user=examples_per_user)
    rows: list[list[Any]] = [["epsilon", f"delta={d:g}", run.epsilon(d)] for d in deltas]
    rows += [["delta", f"epsilon={e:g}", run.delta(e)] for e in epsilons]
    if not run.partition_public:  # the revealed-partition mechanism dominates the run: its lower end is not the run's
        rows += [["epsilon (partition revealed; not the run)", f"delta={d:g}", run.revealed_epsilon(d)] for d in deltas]
        rows += [["delta (partition revealed; not the run)", f"epsilon={e:g}", run.revealed_delta(e)] for e in epsilons]
    sigma = None
    if target_epsilon is not None:
        if not deltas:
            raise ValueError("--target-epsilon needs a --delta")
        sigma = matrix.noise_multiplier(run, target_epsilon, deltas[0])
    if as_json:
        payload: dict[str, Any] = {"relation": run.relation, "partition": run.partition,
                                   "partition_public": run.partition_public, "per_column": run.per_column,
                                   "answers": [{"quantity": q, "at": at, "bound": b} for q, at, b in rows]}
        if sigma is not None:
            payload["noise_multiplier_for_target"] = sigma
        if statement:
            payload["statement"] = run.statement()
        emit_json(payload)
        return
    emit_table(f"amplified BandMF ({run.relation}, {'public' if run.partition_public else 'hidden'} partition)",
               ["quantity", "at", "certified bracket"], rows,
               caption=None if sigma is None else f"least σ for ε = {target_epsilon:g}: {sigma:.8g} (safe side)")
    if statement:
        click.echo(run.statement())

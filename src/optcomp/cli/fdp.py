"""``optcomp tradeoff``: print or export a trade-off curve (f-DP / Gaussian DP, Dong–Roth–Su).

Examples::

    optcomp tradeoff --gdp 1.0                        # G_1 as a table
    optcomp tradeoff --gdp 0.5 -k 16 --format csv     # G_{0.5·√16} = G_2, CSV on stdout
    optcomp tradeoff --eps 0.1 --delta 1e-6 -k 100 --output curve.json
    optcomp tradeoff --gdp 1 --subsample 0.01 --json  # certified bracket of C_p(G_1) (DRS Thm 4.2)
    optcomp tradeoff --gdp 1 --subsample 0.01 -k 1000  # C_p(G_1)^1000: DP-SGD order (subsample, then compose)

The curve comes from one library call (:func:`optcomp.fdp.gaussian_tradeoff`,
:func:`optcomp.fdp.epsilon_delta_composition`, :func:`optcomp.fdp.group_privacy`,
:func:`optcomp.fdp.subsample`); the summary line (advantage, attack TPR at ``--fpr``) comes from
:mod:`optcomp.fdp` readouts, as certified :class:`~optcomp.Bound` values.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

import click
import numpy as np

from optcomp._numerics import Progress, check_nonnegative, check_probability, check_sampling_rate
from optcomp.cli._common import (
    TIME_LIMIT_S,
    check_feasible,
    cli,
    dumps,
    emit_table,
    memory_limit_bytes,
    progress_bar,
    size,
)
from optcomp.cli._common import (
    fmt as fmt_number,
)
from optcomp.cli._tradeoff_sources import EXACT_GROUP, source_curve, source_options
from optcomp.fdp import (
    TradeOff,
    TradeOffBracket,
    advantage,
    attack_tpr,
    epsilon_delta_composition,
    epsilon_delta_tradeoff,
    gaussian_tradeoff,
    gdp_compose,
    group_privacy,
    subsample,
)

# Cost models (one core of the reference machine), used only to refuse work beyond the limits up front:
# epsilon_delta_composition builds k + 1 knots (k = 10⁷: 1.8 s); gdp_compose takes k as a count (O(1)); a
# group of size g of a non-Gaussian curve composes α ↦ 1 − f(α) g times per evaluation (measured: g = 10⁴
# costs 0.18 s at 21 points, 1.5 s at 10⁴ points, 1.3 s for the advantage readout). Points are written
# in chunks as they are evaluated (CSV/JSON stream to the output: memory does not grow with --points;
# 10⁶ points of G_1 as CSV: about 2 s).
_EPSDELTA_S_PER_K = 2.0e-7
_EPSDELTA_BYTES_PER_K = 64.0
_GROUP_S_PER_CELL = 1.5e-8
_GROUP_S_PER_PASS = 1.8e-5
_GROUP_S_READOUTS = 1.5e-4
_CURVE_S_PER_POINT = 1.0e-5
#: Bytes of one chunk of points in flight (the α chunk, its β's and its text).
_CURVE_BYTES_PER_POINT = 400.0
#: Largest table printed on a terminal (more rows are unreadable there: use csv or json).
TABLE_MAX_ROWS = 10_000
#: α values evaluated per progress step.
_CHUNK = 10_000
#: Beyond this μ, e^{μ²} overflows (the convexity bound p·μ² alone is used).
_GDP_EXP_LIMIT = 26.0


def check_curve_cost(gdp: float | None, eps: float | None, k: int, group: int, points: int) -> None:
    """Refuse (ValueError) a curve whose estimated cost exceeds the time limit or the memory cap."""
    if eps is not None:
        by_memory = int(memory_limit_bytes() / _EPSDELTA_BYTES_PER_K)
        check_feasible(
            f"the {k}-fold (epsilon, delta) trade-off curve",
            _EPSDELTA_S_PER_K * size(k),
            _EPSDELTA_BYTES_PER_K * size(k),
            f"use -k <= {min(by_memory, int(TIME_LIMIT_S / _EPSDELTA_S_PER_K))}",
        )
    seconds = _CURVE_S_PER_POINT * size(points)
    if group > 1 and gdp is None:
        passes = math.ceil(size(points) / _CHUNK) if math.isfinite(size(points)) else math.inf
        seconds += size(group) * (_GROUP_S_PER_CELL * size(points) + _GROUP_S_PER_PASS * passes + _GROUP_S_READOUTS)
    check_feasible(
        f"a curve of --points {points}" + (f" for --group {group}" if group > 1 else ""),
        seconds,
        _CURVE_BYTES_PER_POINT * min(size(points), _CHUNK),
        "use a smaller --points" + (" or --group" if group > 1 and gdp is None else ""),
    )


def build_curve(
    gdp: float | None, eps: float | None, delta: float | None, k: int, group: int, sampling_rate: float | None
) -> tuple[str, TradeOff | TradeOffBracket]:
    """The curve described by the options (shared with ``optcomp plot``); ValueError/UsageError on misuse."""
    if (gdp is None) == (eps is None):
        raise click.UsageError("give exactly one of --gdp MU or --eps E [--delta D]")
    # The library's own checks, run first and under the options' names (before a possibly long build).
    if gdp is not None:
        check_nonnegative("--gdp", gdp)
    if eps is not None:
        check_nonnegative("--eps", eps)
    if delta is not None:
        check_probability("--delta", delta)
    if sampling_rate is not None:
        check_sampling_rate("--subsample", sampling_rate)
    check_curve_cost(gdp, eps, k, group, 2)
    if sampling_rate is not None:
        label, run = _subsampled_run(gdp, eps, delta, k, sampling_rate)
        if group > 1:
            return label + f", group of {group} (applied to the whole run)", group_privacy(run, group)
        return label, run
    f: TradeOff
    if eps is not None:
        d = 0.0 if delta is None else delta
        f = epsilon_delta_composition(eps, d, k)
        label = f"f_(eps={fmt_number(eps)},delta={fmt_number(d)})" + (f" composed {k}-fold" if k > 1 else "")
    elif gdp is not None:
        if delta is not None:
            raise click.UsageError("--delta goes with --eps, not with --gdp")
        mu = gdp_compose([gdp], [k]) if k > 1 else gdp
        f = gaussian_tradeoff(mu)
        label = f"G_{fmt_number(mu)}" + (f" ({k}-fold of G_{fmt_number(gdp)})" if k > 1 else "")
    else:  # excluded above
        raise click.UsageError("give exactly one of --gdp MU or --eps E [--delta D]")
    if group > 1:
        f = group_privacy(f, group)
        label += f", group of {group}"
    return label, f


def _subsampled_run(
    gdp: float | None, eps: float | None, delta: float | None, k: int, sampling_rate: float
) -> tuple[str, TradeOff | TradeOffBracket]:
    """C_p(f)^{⊗k}: each of the k steps subsampled (DRS Thm 4.2), then the k steps composed (Thm 3.2) —
    the order of DP-SGD. Subsampling once after composing, C_p(f^{⊗k}), would describe a run that draws
    one subset for all k steps, and understates a DP-SGD attack (issue 27 D).

    k = 1: :func:`optcomp.fdp.subsample`'s bracket. k > 1 with ``--gdp μ``: the step C_p(G_μ) is the
    law of ``SubsampledWithoutReplacement(Gaussian(1/μ), p)`` (the symmetrized Poisson pair, whose
    trade-off function is C_p(G_μ)), composed k times by the PLD engine and read with
    :func:`optcomp.fdp.from_pld` (a certified bracket). k > 1 with ``--eps``: refused (no tight law
    of C_p(f_{ε,δ}) is composed here)."""
    p = fmt_number(sampling_rate)
    if eps is not None:
        d = 0.0 if delta is None else check_probability("--delta", delta)
        f: TradeOff = epsilon_delta_tradeoff(eps, d)
        name = f"f_(eps={fmt_number(eps)},delta={fmt_number(d)})"
    elif gdp is not None:
        if delta is not None:
            raise click.UsageError("--delta goes with --eps, not with --gdp")
        f, name = gaussian_tradeoff(gdp), f"G_{fmt_number(gdp)}"
    else:  # excluded by build_curve
        raise click.UsageError("give exactly one of --gdp MU or --eps E [--delta D]")
    if k == 1 or (gdp is not None and gdp == 0.0):  # G_0 = Id: subsampled and composed it stays Id
        return f"C_p({name}), subsampled p={p} (bracket)", subsample(f, sampling_rate)
    if gdp is None:
        raise ValueError(
            "--subsample with -k > 1 is computed for --gdp only (each step subsampled, then the k steps "
            "composed: C_p(f)^k, the DP-SGD order); for --eps use -k 1"
        )
    from optcomp import compose
    from optcomp._numerics import LOSS_SCALE, MAX_MEAN_LOSS
    from optcomp.fdp import from_pld
    from optcomp.mechanisms import Gaussian, PoissonSubsampled, SubsampledWithoutReplacement

    if not (LOSS_SCALE.contains(gdp) and math.isfinite(1.0 / gdp)):  # σ = 1/μ must be a finite float
        raise ValueError(f"--gdp must be {LOSS_SCALE} and at least {1.0 / sys.float_info.max:.4g} with --subsample "
                         f"and -k > 1 (the range the engines compute), got {gdp!r}")
    # mean privacy loss of the run ≤ k·min{p²(e^{μ²} − 1), p·μ²}/2 (as dpsgd's up-front refusal)
    chi2 = sampling_rate * sampling_rate * math.expm1(gdp * gdp) if gdp < _GDP_EXP_LIMIT else math.inf
    mean = k * min(chi2, sampling_rate * gdp * gdp) / 2.0
    if mean > MAX_MEAN_LOSS:
        raise ValueError(f"-k {k} with --gdp {gdp!r} and --subsample {sampling_rate!r}: the composed privacy loss "
                         f"has mean about {mean:.3g}, beyond {MAX_MEAN_LOSS:g} (no grid spans it); use a smaller -k")
    step = SubsampledWithoutReplacement(Gaussian(sigma=1.0 / gdp), sampling_rate=sampling_rate)
    run = from_pld(compose((step, k)).pld())
    # the symmetrized step's k-fold composition only dominates the run: the attack side (upper curve) is the
    # attained one-direction pairs' (docs/samplers.md §1; issue 27 C's audit)
    attained = from_pld(compose((PoissonSubsampled(step.mechanism, sampling_rate=sampling_rate), k)).pld())
    label = f"C_p({name}) composed {k}-fold (each step subsampled p={p}, then composed: DP-SGD order; bracket)"
    return label, TradeOffBracket(lower=run.lower, upper=attained.upper)
def _curve(
    gdp: float | None, eps: float | None, delta: float | None, k: int, group: int, sampling_rate: float | None,
    source: dict[str, Any],
) -> tuple[str, TradeOff | TradeOffBracket]:
    """The curve of the options: a source's (:mod:`optcomp.cli._tradeoff_sources`) or :func:`build_curve`'s."""
    found = source_curve(**source, group=group)
    if found is None:
        return build_curve(gdp, eps, delta, k, group, sampling_rate)
    if gdp is not None or eps is not None or delta is not None or k > 1 or sampling_rate is not None:
        raise click.UsageError("--gdp/--eps/--delta/-k/--subsample describe another curve: give them without "
                               "--mech, --dp-event or a DP-SGD run (whose counts and steps are their own)")
    return found  # --group was applied by the source: its exact group pair, else DRS Thm 2.14 (the label says)


def curve_chunks(
    curve: TradeOff | TradeOffBracket,
    points: int,
    progress: Progress | None = None,
) -> tuple[list[str], Iterator[list[list[float]]]]:
    """Columns, and the rows (alpha, beta) or (alpha, beta_lower, beta_upper) for a bracket on the uniform
    grid of ``points`` α's in [0, 1], evaluated chunk by chunk (``progress(done, total)`` after each):
    only one chunk is in memory at a time."""
    bracket = isinstance(curve, TradeOffBracket)

    def rows() -> Iterator[list[list[float]]]:
        for start in range(0, points, _CHUNK):
            stop = min(points, start + _CHUNK)
            a = np.arange(start, stop, dtype=np.float64) / (points - 1)  # i/(n − 1): exact ends, monotone
            if isinstance(curve, TradeOffBracket):
                lo, hi = curve(a)
                chunk = [[x, y + 0.0, z + 0.0] for x, y, z in
                         zip(a.tolist(), np.atleast_1d(lo).tolist(), np.atleast_1d(hi).tolist())]
            else:
                chunk = [[x, y + 0.0] for x, y in zip(a.tolist(), np.atleast_1d(curve(a)).tolist())]
            if progress is not None:
                progress(stop, points)
            yield chunk

    return (["alpha", "beta_lower", "beta_upper"] if bracket else ["alpha", "beta"]), rows()


def curve_rows(
    curve: TradeOff | TradeOffBracket,
    alphas: np.ndarray,
    progress: Progress | None = None,
) -> tuple[list[str], list[list[float]]]:
    """Columns and rows at given ``alphas`` (all in memory: for tables and plots)."""
    rows: list[list[float]] = []
    bracket = isinstance(curve, TradeOffBracket)
    for start in range(0, len(alphas), _CHUNK):
        a = alphas[start : start + _CHUNK]
        if isinstance(curve, TradeOffBracket):
            lo, hi = curve(a)
            rows += [[float(x), float(y) + 0.0, float(z) + 0.0] for x, y, z in zip(a, np.atleast_1d(lo), np.atleast_1d(hi))]
        else:
            rows += [[float(x), float(y) + 0.0] for x, y in zip(a, np.atleast_1d(curve(a)))]
        if progress is not None:
            progress(min(len(alphas), start + _CHUNK), len(alphas))
    return (["alpha", "beta_lower", "beta_upper"] if bracket else ["alpha", "beta"]), rows


def _number(value: float) -> str:
    """One curve value as CSV/JSON text: shortest round-trip repr; NaN refused, −0.0 already removed."""
    if math.isnan(value):
        raise ArithmeticError("internal error: a computed value is NaN; please report the command line")
    return repr(value)


def write_curve(out: TextIO, fmt: str, head: dict[str, Any], columns: list[str],
                chunks: Iterator[list[list[float]]]) -> int:
    """Stream the curve to ``out`` as CSV (a header line, then one line per point) or as the JSON object
    ``head`` with ``"points": [{column: value, ...}, ...]`` written chunk by chunk. Returns the rows written."""
    written = 0
    if fmt == "csv":
        out.write(",".join(columns) + "\n")
        for chunk in chunks:
            out.write("".join(",".join(_number(v) for v in row) + "\n" for row in chunk))
            written += len(chunk)
        return written
    text = dumps({**head, "points": []})
    opening, closing = text.rsplit("[]", 1)
    out.write(opening + "[")
    keys = [json.dumps(c) for c in columns]
    for chunk in chunks:
        for row in chunk:
            sep = "," if written else ""
            fields = ", ".join(f"{k}: {_number(v)}" for k, v in zip(keys, row))
            out.write(f"{sep}\n    {{{fields}}}")
            written += 1
    out.write("\n  ]" + closing + "\n")
    return written


@cli.command("tradeoff")
@click.option("--gdp", "gdp", type=float, default=None, help="μ of μ-GDP (per mechanism).")
@click.option("--eps", "eps", type=float, default=None, help="ε of (ε, δ)-DP (per mechanism).")
@click.option("--delta", "delta", type=float, default=None, help="δ of (ε, δ)-DP (default 0).")
@click.option("-k", "k", type=click.IntRange(min=1), default=1, show_default=True, help="k-fold composition.")
@click.option("--group", type=click.IntRange(min=1), default=1, show_default=True,
              help="Group size: the exact group pair for --mech specs with one (Gaussian, Laplace, discrete Laplace, "
                   "Poisson-subsampled Gaussian) and Poisson DP-SGD runs; otherwise the DRS Thm 2.14 bound. The "
                   "curve's name (and JSON 'group') says which.")
@click.option("--subsample", "sampling_rate", type=float, default=None,
              help="Subsampling rate p without replacement (DRS Thm 4.2), DP-SGD order: each of the -k steps "
                   "is subsampled, then the steps are composed (C_p(f)^k, --gdp only for k > 1); --group applies "
                   "to the whole run. Prints a certified bracket.")
@click.option("--points", type=click.IntRange(min=2), default=21, show_default=True, help="Number of α points.")
@click.option("--fpr", "fprs", type=float, multiple=True,
              help="FPR at which to report the attack TPR (repeatable; default 0.01).")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default=None,
              help="Output format (default: table on stdout; from the extension of --output).")
@click.option("--output", "output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the curve to this file (.csv or .json).")
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@source_options
def tradeoff(
    gdp: float | None,
    eps: float | None,
    delta: float | None,
    k: int,
    group: int,
    sampling_rate: float | None,
    points: int,
    fprs: tuple[float, ...],
    fmt: str | None,
    output: Path | None,
    as_json: bool,
    **source: Any,
) -> None:
    """Print or export a trade-off curve β = f(α) (type II error at type I error α): of μ-GDP or (ε, δ)-DP
    mechanisms, or of what you ran — a DP-SGD run, --mech specs or a --dp-event tree (the attack TPR of
    your training run at each --fpr)."""
    if as_json:
        fmt = "json"
    if fmt is None:
        fmt = "table" if output is None else ("json" if output.suffix.lower() == ".json" else "csv")
    if fmt == "table" and output is None and points > TABLE_MAX_ROWS:
        raise ValueError(
            f"--points must be <= {TABLE_MAX_ROWS} for a table on the terminal, got {points}; "
            "use --format csv or --json (or --output FILE)"
        )
    fprs = tuple(check_probability("--fpr", f) for f in fprs) or (0.01,)
    check_curve_cost(gdp, eps, k, group, points)
    with progress_bar("building the curve") as _:
        label, curve = _curve(gdp, eps, delta, k, group, sampling_rate, source)
    with progress_bar("advantage and attack TPR") as _:
        adv = advantage(curve)
        tprs = [attack_tpr(curve, f) for f in fprs]
    head: dict[str, Any] = {
        "curve": label,
        "certified": "bracket" if isinstance(curve, TradeOffBracket) else "exact",
        "advantage": adv,
        "fpr": fprs[0],
        "attack_tpr": tprs[0],
        "attacks": [{"fpr": f, "attack_tpr": t} for f, t in zip(fprs, tprs)],
    }
    if group > 1:  # which route answered the group (the label says it in words)
        head["group"] = {"size": group, "route": "exact_pair" if EXACT_GROUP in label else "drs_thm_2_14"}
    if output is not None and fmt == "table":
        raise click.UsageError("--format table cannot be written to --output; use csv or json")
    with progress_bar(f"evaluating {points} points", total=points) as advance:
        columns, chunks = curve_chunks(curve, points, advance)
        if fmt == "table":
            rows = [row for chunk in chunks for row in chunk]
            emit_table(f"trade-off {label}", columns, rows)
            click.echo(f"advantage (max TPR-FPR) in {fmt_number(adv)}; " + "; ".join(
                f"attack TPR at FPR={fmt_number(f)} in {fmt_number(t)}" for f, t in zip(fprs, tprs)))
            return
        if output is None:
            write_curve(sys.stdout, fmt, head, columns, chunks)
            return
        with output.open("w", encoding="utf-8") as out:
            written = write_curve(out, fmt, head, columns, chunks)
    click.echo(f"wrote {written} points of {label} to {output}")


__all__ = ["build_curve", "curve_chunks", "curve_rows", "tradeoff", "write_curve"]

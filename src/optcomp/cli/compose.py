"""``optcomp compose`` and ``optcomp region``: optimal composition of (ε, δ)-DP black boxes.

``optcomp compose`` compares the classic theorems with the optimal composition::

    optcomp compose --eps 0.1 --delta 0.001 -k 30 --target-delta 0.05
    optcomp compose --mech 0.1,0 --mech 0.3,1e-6 --mech 0.05,0 --target-eps 1.0 --json
    optcomp compose --file mechs.txt --target-delta 1e-6      # lines "EPS,DELTA" or a JSON list of pairs
    optcomp compose --mech exponential:epsilon=0.1,count=100 --target-delta 1e-6   # + the bounded-range row

A ``--mech`` may also name an ε-DP black box from the mechanism table with a ``count``: ``exponential``
(and its aliases: an ε-bounded-range step), ``permute_and_flip``, ``laplace_noisy_max`` (ε-DP) or
``epsdelta``. The theorems compare them as (ε, δ) pairs; where some are bounded-range, one more row gives
their optimal composition *as* bounded-range steps (the adaptive recursion of ``docs/selection.md``, in
the order given, through :func:`optcomp.compose`), the comparison's tighter answer.

``optcomp region`` exports the boundary β(α) of the composed privacy region (KOV Thm III.3 for
``--eps/--delta/-k``; for ``--mech``/``--file`` the outer bound ∩ R(ε_g, δ_opt(ε_g)) on ``--eps-points``
values of ε_g — one optimal-δ computation each)::

    optcomp region --eps 0.1 --delta 0.001 -k 30 --format csv --output region.csv

Parsing and formatting only; every number comes from :mod:`optcomp.bounds`, :mod:`optcomp.optimal`
and :mod:`optcomp.region`. The cost models below decide only whether to start: work they estimate
beyond :data:`optcomp.cli._common.TIME_LIMIT_S` or the memory cap is refused with the largest -k that
fits.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, get_args

import click
import numpy as np

from optcomp import bounds, optimal
from optcomp._numerics import Bound, EpsDelta
from optcomp.cli._common import (
    TIME_LIMIT_S,
    check_feasible,
    cli,
    dumps,
    emit_json,
    emit_table,
    fmt,
    informative,
    memory_limit_bytes,
    parse_json,
    progress_bar,
    read_text,
    size,
    squared,
)

# Cost models of the homogeneous engines, measured on one core of the reference machine (see
# benchmarks/): optimal.epsilon grows as k² (k = 10⁶: 12 s), optimal.delta and the memory of both as k
# (k/2 binomial weights, about a dozen float64 arrays), region.composed + its boundary as k².
# They only decide whether to start the work (and to draw a bar); update them with the engines.
_EPSILON_S_PER_K2 = 12.0 / 1e12  # 12 s at k = 10⁶
_DELTA_S_PER_K = 6.0e-8
_BYTES_PER_K = 48.0
_REGION_S_PER_K2 = 3.0e-8
#: The boundary export: one (row, constraint) cell of β's max, and the bytes of one row (arrays + text).
_BOUNDARY_S_PER_CELL = 1.0e-7
_BOUNDARY_BYTES_PER_ROW = 128.0
#: k from which compose shows a progress spinner (the optimal engine has no progress hook).
_SPINNER_K = 200_000


#: ``region --mech/--file``: ε_g values by default, and the cost of one optimal δ per listed pair
#: (10⁵ distinct pairs: 2.3-4.4 s per ε_g on the reference machine). A long list gets fewer ε_g by
#: default so that the region stays within _REGION_DEFAULT_S; an explicit --eps-points is kept (and
#: refused only past the time limit).
_EPS_POINTS = 33
_OPTIMAL_DELTA_S_PER_PAIR = 4.0e-5
_REGION_DEFAULT_S = 30.0


def _default_eps_points(pairs: int) -> int:
    """:data:`_EPS_POINTS`, or fewer (at least 3) when that many optimal δ's of ``pairs`` distinct pairs would
    take longer than :data:`_REGION_DEFAULT_S`; a note on stderr names the reduction."""
    fits = int(_REGION_DEFAULT_S / (_OPTIMAL_DELTA_S_PER_PAIR * max(pairs, 1)))
    if fits >= _EPS_POINTS:
        return _EPS_POINTS
    chosen = max(3, fits)
    click.echo(f"optcomp: note: {pairs} distinct pairs: the region is bounded at --eps-points {chosen} values of ε_g "
               f"(not {_EPS_POINTS}: each costs about {_OPTIMAL_DELTA_S_PER_PAIR * pairs:.1g} s); give "
               "--eps-points to choose", err=True)
    return chosen


def _largest_k(seconds_per: float, power: int) -> int:
    """The largest k with seconds_per·k^power within the time limit and 48·k bytes within the cap."""
    by_time = (TIME_LIMIT_S / seconds_per) ** (1.0 / power)
    by_memory = memory_limit_bytes() / _BYTES_PER_K
    return int(min(by_time, by_memory))


def _check_optimal_cost(mechs: Sequence[EpsDelta], query: str) -> None:
    """Refuse an optimal composition of a homogeneous spec whose estimate exceeds the limits."""
    if not isinstance(mechs, optimal.Homogeneous):
        return
    k = mechs.k
    per, power = (_EPSILON_S_PER_K2, 2) if query == "epsilon" else (_DELTA_S_PER_K, 1)
    check_feasible(
        f"the optimal composition of -k {k} mechanisms",
        per * (squared(k) if power == 2 else size(k)),
        _BYTES_PER_K * size(k),
        f"use -k <= {_largest_k(per, power)}",
    )


#: Largest Σε_i the optimal engine is asked about: beyond it its log-weights leave the float range (it
#: then returned [0, 0] for ε = 1e307, k = 10, whose truth is above the float maximum). Until the engine
#: handles this itself, such compositions are refused with a ValueError naming the sum.
_OPTIMAL_MAX_TOTAL_EPSILON = sys.float_info.max / 64


def _check_optimal_range(mechs: Sequence[EpsDelta]) -> None:
    if isinstance(mechs, optimal.Homogeneous):
        total = bounds.basic(mechs.epsilon, mechs.delta, mechs.k)[0]
        where = f"-k {mechs.k} × --eps {mechs.epsilon:g}"
    else:
        total = bounds.basic_heterogeneous(mechs)[0]
        where = "the sum of the mechanisms' ε"
    if not total <= _OPTIMAL_MAX_TOTAL_EPSILON:
        raise ValueError(
            f"total epsilon ({where}) must be <= {_OPTIMAL_MAX_TOTAL_EPSILON:.3g} for the optimal composition, "
            f"got {total:g}; the optimal engine's binomial weights leave the floating-point range there"
        )


def _ratio(value: float, optimum: float) -> str:
    """``value / optimum`` as a table cell; "—" where the ratio is undefined (0/0, inf/inf)."""
    if optimum == 0.0:
        return "—" if value == 0.0 else "inf"
    if math.isinf(optimum):
        return "—"
    return fmt(value / optimum)


def _parse_pair(text: str, where: str) -> EpsDelta:
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 2:
        raise ValueError(f"{where} must be EPS,DELTA, got {text!r}")
    try:
        return (float(parts[0]), float(parts[1]))
    except ValueError as exc:
        raise ValueError(f"{where} must be two numbers EPS,DELTA, got {text!r}") from exc


def _read_file(path: str) -> list[EpsDelta]:
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"file must be a readable file, got {path!r}")
    text = read_text(p, "file")
    if p.suffix.lower() == ".json":
        data = parse_json(text, p, "file")
        if not isinstance(data, list):
            raise ValueError(f"file {path!r} must hold a JSON list of [eps, delta] pairs")
        out: list[EpsDelta] = []
        for i, item in enumerate(data):
            if (
                not isinstance(item, (list, tuple))
                or len(item) != 2
                or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in item)
            ):
                raise ValueError(f"file {path!r} entry {i} must be [eps, delta] (two numbers), got {item!r}")
            out.append((float(item[0]), float(item[1])))
        return out
    lines = [ln.split("#", 1)[0].strip() for ln in text.splitlines()]
    return [_parse_pair(ln, f"{path} line {i + 1}") for i, ln in enumerate(lines) if ln]


#: Specification classes a ``--mech NAME:...`` of ``compose``/``region`` may name: (ε, δ) black boxes.
_BLACK_BOXES = ("BoundedRange", "PermuteAndFlip", "LaplaceNoisyMax", "EpsilonDelta")


def _named_mech(text: str) -> tuple[Any, int]:
    """``NAME:KEY=VALUE,...,count=K`` of a black box in :data:`_BLACK_BOXES` → (mechanism, count)."""
    from optcomp.cli.account import build_item, parse_mech

    item, count = build_item(parse_mech(text))
    if type(item).__name__ not in _BLACK_BOXES:
        raise ValueError(f"--mech of compose must be EPS,DELTA or an (epsilon, delta) black box "
                         f"(exponential, permute_and_flip, laplace_noisy_max, epsdelta) with count=K, got {text!r}; "
                         "optcomp account --mech composes the other mechanisms")
    return item, count


def _pair_of(item: Any) -> EpsDelta:
    return (float(item.epsilon), float(getattr(item, "delta", 0.0)))


def _mech_specs(mech: Sequence[str]) -> list[tuple[Any, int]]:
    """Each ``--mech``: a named black box with its count, or an EPS,DELTA pair (count 1, item None)."""
    return [_named_mech(m) if ":" in m else (None, 1) for m in mech]


def _mechanisms(
    eps: float | None, delta: float | None, k: int | None, mech: Sequence[str], file: str | None
) -> Sequence[EpsDelta]:
    homogeneous = eps is not None or delta is not None or k is not None
    sources = int(homogeneous) + int(bool(mech)) + int(file is not None)
    if sources != 1:
        raise click.UsageError("give exactly one of: --eps/--delta/-k, repeated --mech EPS,DELTA, or --file")
    if homogeneous:
        if eps is None or delta is None or k is None:
            raise click.UsageError("--eps, --delta and -k must be given together")
        return optimal.homogeneous(eps, delta, k)
    if mech:
        specs = _mech_specs(mech)
        if len(specs) == 1 and specs[0][0] is not None:  # one named box with a count: the homogeneous engine
            e, d = _pair_of(specs[0][0])
            return optimal.homogeneous(e, d, specs[0][1])
        pairs: list[EpsDelta] = []
        for m, (item, count) in zip(mech, specs):
            pairs.extend([_parse_pair(m, "--mech")] if item is None else [_pair_of(item)] * count)
        return pairs
    assert file is not None
    return _read_file(file)


_SOURCE_OPTIONS = [
    click.option("--eps", "eps", type=float, default=None, help="Per-mechanism ε (with --delta and -k)."),
    click.option("--delta", "delta", type=float, default=None, help="Per-mechanism δ."),
    click.option("-k", "--k", "k", type=int, default=None, help="Number of mechanisms."),
    click.option("--mech", "mech", multiple=True, help="One mechanism EPS,DELTA (repeatable)."),
    click.option("--file", "file", type=str, default=None, help="File of EPS,DELTA lines or a JSON list of pairs."),
]


def _with_sources(fn: Any) -> Any:
    for opt in reversed(_SOURCE_OPTIONS):
        fn = opt(fn)
    return fn


@cli.command("compose")
@_with_sources
@click.option("--target-delta", type=float, default=None, help="Total δ: report ε of every theorem.")
@click.option("--target-eps", type=float, default=None, help="Total ε: report δ of every theorem.")
@click.option(
    "--method", type=click.Choice(get_args(optimal.Method)), default="auto", show_default=True,
    help="Algorithm of the optimal composition.",
)
@click.option("--tolerance", type=float, default=optimal.DEFAULT_TOLERANCE, show_default=True,
              help="Target bracket width in ε (grid / mv).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def compose_command(
    eps: float | None,
    delta: float | None,
    k: int | None,
    mech: tuple[str, ...],
    file: str | None,
    target_delta: float | None,
    target_eps: float | None,
    method: optimal.Method,  # a click.Choice of its values
    tolerance: float,
    as_json: bool,
) -> None:
    """Compare basic, advanced (DRV and lecture-notes forms), KOV and optimal composition."""
    mechs = _mechanisms(eps, delta, k, mech, file)
    if (target_delta is None) == (target_eps is None):
        raise click.UsageError("give exactly one of --target-delta or --target-eps")
    _check_optimal_cost(mechs, "epsilon" if target_delta is not None else "delta")
    _check_optimal_range(mechs)
    spinner = isinstance(mechs, optimal.Homogeneous) and mechs.k >= _SPINNER_K
    if target_delta is not None:
        classic = bounds.compare_epsilon(mechs, target_delta)
        with progress_bar(f"optimal composition of {len(mechs)} mechanisms") if spinner else _nothing():
            opt = informative(optimal.epsilon(mechs, target_delta, method=method, tolerance=tolerance),
                              "the optimal epsilon", "use fewer mechanisms or a larger --tolerance")
        quantity, target_name, target = "epsilon", "target_delta", target_delta
    else:
        assert target_eps is not None
        classic = bounds.compare_delta(mechs, target_eps)
        with progress_bar(f"optimal composition of {len(mechs)} mechanisms") if spinner else _nothing():
            opt = optimal.delta(mechs, target_eps, method=method, tolerance=tolerance)
        quantity, target_name, target = "delta", "target_epsilon", target_eps
    labels = {
        "basic": "basic (KOV Thm III.1)",
        "advanced_drv": "advanced, DRV form (KOV Thm III.2)",
        "advanced_lecture_notes": "advanced, lecture notes (Smith-Ullman Thm 1.1)",
        "kov": "KOV bound (Thm III.4/III.5)",
    }
    from optcomp.cli import _rdp_compare  # here: the RDP engine loads the mechanisms (scipy.stats)

    rdp_items = _rdp_compare.from_epsilon_delta(mechs)
    rdp_payload = _rdp_compare.comparison(
        rdp_items, [target_delta] if target_delta is not None else [], [target_eps] if target_eps is not None else []
    )
    br = _bounded_range_row(mech, target_delta, target_eps)
    if as_json:
        extra = {} if br is None else {"bounded_range_optimal": br}
        emit_json({"k": len(mechs), target_name: target, "method": method,
                   quantity: {**classic, "optimal": opt, **extra}, "rdp_comparison": rdp_payload})
        return
    rows: list[list[Any]] = []
    for key, label in labels.items():
        value = classic[key]
        rows.append([label, value, _ratio(value, opt.upper)])
    rows.append([f"optimal (MV Thm 1.5, method={method})", opt, _ratio(opt.upper, opt.upper)])
    if br is not None:
        rows.append(["optimal, bounded-range steps as such (adaptive, docs/selection.md)", br,
                     _ratio(br.upper, opt.upper)])
    emit_table(
        f"{len(mechs)} mechanisms, {target_name} = {fmt(target)}",
        ["theorem", quantity, "ratio to optimal (upper)"],
        rows,
        caption="— : ratio undefined (0/0 or inf/inf)" if opt.upper == 0.0 or math.isinf(opt.upper) else None,
    )
    _rdp_compare.print_comparison(rdp_payload)


def _bounded_range_row(mech: Sequence[str], target_delta: float | None, target_eps: float | None) -> Bound | None:
    """The optimal composition with the bounded-range ``--mech`` steps composed as such (adaptive, in the
    order given; the others as (ε, δ) boxes), or None when no ``--mech`` is bounded-range."""
    from optcomp import compose
    from optcomp.mechanisms import BoundedRange, EpsilonDelta, Mechanism

    specs = _mech_specs(mech)
    if not any(isinstance(item, BoundedRange) for item, _ in specs):
        return None
    items: list[tuple[Mechanism, int]] = []
    for m, (item, count) in zip(mech, specs):
        if item is None:
            e, d = _parse_pair(m, "--mech")
            items.append((EpsilonDelta(e, delta=d), 1))
        elif isinstance(item, BoundedRange):
            items.append((item, count))
        else:
            e, d = _pair_of(item)
            items.append((EpsilonDelta(e, delta=d), count))
    composition = compose(*items)
    if target_delta is not None:
        return composition.epsilon(target_delta)
    assert target_eps is not None
    return composition.delta(target_eps)


@cli.command("region")
@_with_sources
@click.option(
    "--points", type=click.IntRange(min=2), default=201, show_default=True,
    help="Number of points of the uniform α grid; every kink of the boundary is added to them (so the "
    "export has up to --points + 3·(constraints) rows and linear interpolation of it is exact).",
)
@click.option("--eps-points", type=click.IntRange(min=1), default=None,
              help="With --mech/--file: number of ε_g in [0, Σε_i] whose optimal δ bounds the region "
              "(default 33, fewer for long lists so that the region takes about 30 s at most; a note on "
              "stderr says so).")
@click.option("--tolerance", type=float, default=optimal.DEFAULT_TOLERANCE, show_default=True,
              help="With --mech/--file: grid tolerance (in ε) of each optimal δ.")
@click.option("--format", "fmt_", type=click.Choice(["csv", "json"]), default="csv", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@click.option("--output", type=click.Path(dir_okay=False, writable=True), default=None, help="File (default stdout).")
def region_command(
    eps: float | None,
    delta: float | None,
    k: int | None,
    mech: tuple[str, ...],
    file: str | None,
    points: int,
    eps_points: int | None,
    tolerance: float,
    fmt_: str,
    as_json: bool,
    output: str | None,
) -> None:
    """Export the boundary β(α) of the composed privacy region (type I error α, type II error β).

    With --eps/--delta/-k the region is KOV Thm III.3 (⌊k/2⌋ + 1 constraints, cost O(k²)); with
    --mech/--file it is the outer bound ∩ R(ε_g, δ_opt(ε_g)) over --eps-points values of ε_g.
    """
    mechs = _mechanisms(eps, delta, k, mech, file)
    if as_json:
        fmt_ = "json"
    homogeneous = isinstance(mechs, optimal.Homogeneous)
    if eps_points is None:
        eps_points = _default_eps_points(len(set(mechs))) if not homogeneous else _EPS_POINTS
    # Up front: the constraints (KOV Thm III.3: ⌊k/2⌋ + 1) and the boundary (points + 3 kinks each).
    n_constraints = size(mechs.k // 2 + 1) if isinstance(mechs, optimal.Homogeneous) else float(eps_points)
    rows = float(points) + 3.0 * n_constraints
    seconds = _BOUNDARY_S_PER_CELL * rows * n_constraints
    if not isinstance(mechs, optimal.Homogeneous):
        seconds += eps_points * _OPTIMAL_DELTA_S_PER_PAIR * len(set(mechs))  # repeated pairs are pooled
    if isinstance(mechs, optimal.Homogeneous):
        seconds += _REGION_S_PER_K2 * squared(mechs.k)
    check_feasible(
        f"the privacy region of -k {mechs.k} mechanisms" if isinstance(mechs, optimal.Homogeneous)
        else f"a region boundary of --points {points} and --eps-points {eps_points}",
        seconds,
        _BYTES_PER_K * n_constraints + _BOUNDARY_BYTES_PER_ROW * rows,
        f"use -k <= {_largest_k(_REGION_S_PER_K2 + 0.75 * _BOUNDARY_S_PER_CELL, 2)}" if homogeneous
        else "use a smaller --points or --eps-points",
    )
    from optcomp import region  # here: regions load the f-DP package, which ``compose`` does not need

    if isinstance(mechs, optimal.Homogeneous):
        kk = mechs.k
        with progress_bar(f"privacy region of {kk} mechanisms (KOV Thm III.3)", total=kk // 2 + 1) as advance:
            reg = region.composed(mechs.epsilon, mechs.delta, kk, progress=advance)
    else:
        total = bounds.basic_heterogeneous(mechs)[0]
        grid = [float(x) for x in np.linspace(0.0, total, eps_points)] if math.isfinite(total) else [0.0]
        with progress_bar("optimal δ at each ε_g", total=len(grid)) as advance:
            reg = region.from_optimal(mechs, grid, tolerance=tolerance, progress=advance)
    with progress_bar(f"boundary against {len(reg.constraints)} constraints", total=points) as advance:
        alphas, betas = reg.boundary(points, progress=advance)
    if fmt_ == "csv":
        text = "alpha,beta\n" + "".join(f"{a!r},{b!r}\n" for a, b in zip(alphas.tolist(), betas.tolist()))
    else:
        payload = {
            "constraints": [{"epsilon": e, "delta": d} for e, d in reg.constraints],
            "tv_bound": reg.tv_bound(),
            "alpha": alphas.tolist(),
            "beta": betas.tolist(),
        }
        text = dumps(payload) + "\n"
    if output is None:
        click.echo(text, nl=False)
    else:
        Path(output).write_text(text)


@contextmanager
def _nothing() -> Iterator[None]:
    yield None


__all__ = ["Bound", "compose_command", "region_command"]

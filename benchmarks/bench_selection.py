"""Private selection (issue 34, items 3 and 5): optcomp.selection's routes vs dp_accounting's RepeatAndSelectDpEvent.

Each row is ε at δ of releasing the best of K runs of a base (K independent of the data):

* optcomp: ``optcomp.selection.select(base, law).epsilon(δ)`` at its default accuracy — every route
  (pure, Papernot–Steinke Thm 2 / Thm 6 on the base's exact RDP curve with Thm 6's δ̂ from the certified PLD,
  the privacy-profile route, the composition of K_max runs), the smallest certified upper end and its route;
* dp_accounting: ``RdpAccountant`` composed with ``RepeatAndSelectDpEvent(event, mean, shape)`` (its PLD
  accountant does not support the event), ``get_epsilon(δ)``: Thm 2 / Thm 6 through an RDP conversion of
  the base (its Thm 6 δ̂ from the RDP curve too). A law dp_accounting has no event for (a fixed count) is "-".
* OpenDP 0.16 (``make_select_private_candidate``) has only Liu–Talwar's known-threshold variant for ε-DP
  bases: one row each for a Laplace base, beside optcomp's ``threshold``. autodp 0.2.3.1 (PyPI) has no
  private selection (its ``transformer_zoo`` lists it as a TODO): not run.

Every time is cold (``benchmarks/_cold.py``): each cell runs in a fresh interpreter (single-threaded BLAS) that
imported optcomp, dp_accounting and OpenDP and computed nothing else, every optcomp cache empty; a cell taking
under a second is repeated (each run a fresh interpreter, up to ``--repeats``) and the table keeps the minimum
CPU time (``time.process_time``) of the call. Usage::

    python benchmarks/bench_selection.py [--repeats 2] [--output benchmarks/RESULTS_selection.md]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import opendp.prelude as dp
from dp_accounting import dp_event as E
from dp_accounting.rdp import rdp_privacy_accountant as R

from optcomp.mechanisms import Gaussian, Laplace, PoissonSubsampled
from optcomp.selection import (
    Binomial,
    Geometric,
    Logarithmic,
    Poisson,
    TruncatedNegativeBinomial,
    select,
    threshold,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _cold  # the cold-timing policy and tools (benchmarks/_cold.py)

HERE = Path(__file__).resolve().parent
PEERS = ("dp_accounting.rdp", "opendp.prelude", "optcomp.selection")
DELTA = 1e-6

#: (label, the base as optcomp.compose items, its DpEvent)
BASES: list[tuple[str, Callable[[], list[Any]], Callable[[], Any]]] = [
    ("Gaussian σ=4", lambda: [(Gaussian(sigma=4.0), 1)], lambda: E.GaussianDpEvent(4.0)),
    ("Laplace b=2 (ε₀=0.5)", lambda: [(Laplace(scale=2.0), 1)], lambda: E.LaplaceDpEvent(2.0)),
    ("DP-SGD σ=1.1 q=256/60000 T=3516",
     lambda: [(PoissonSubsampled(Gaussian(sigma=1.1), sampling_rate=256 / 60000), 3516)],
     lambda: E.SelfComposedDpEvent(E.PoissonSampledDpEvent(256 / 60000, E.GaussianDpEvent(1.1)), 3516)),
    ("DP-SGD σ=1 q=0.01 T=1000",
     lambda: [(PoissonSubsampled(Gaussian(sigma=1.0), sampling_rate=0.01), 1000)],
     lambda: E.SelfComposedDpEvent(E.PoissonSampledDpEvent(0.01, E.GaussianDpEvent(1.0)), 1000)),
]
#: (label, optcomp law, dp_accounting (mean, shape) or None)
LAWS: list[tuple[str, Callable[[], Any], tuple[float, float] | None]] = [
    ("geometric, E[K]=10", lambda: Geometric(mean=10.0), (10.0, 1.0)),
    ("logarithmic, E[K]=10", lambda: Logarithmic(mean=10.0), (10.0, 0.0)),
    ("TNB η=0.5, E[K]=10", lambda: TruncatedNegativeBinomial.from_mean(0.5, 10.0), (10.0, 0.5)),
    ("Poisson, μ=10", lambda: Poisson(10.0), (10.0, float("inf"))),
    ("fixed K=10", lambda: Binomial(10), None),
]


def ours(base: int, law: int, delta: float) -> dict[str, Any]:
    return select(BASES[base][1](), LAWS[law][1]()).epsilon(delta).to_dict()


def theirs(base: int, mean: float, shape: float, delta: float) -> float:
    acc = R.RdpAccountant()
    acc.compose(E.RepeatAndSelectDpEvent(BASES[base][2](), mean, shape))
    return float(acc.get_epsilon(delta))


def ours_threshold(scale: float, gamma: float, delta: float) -> float:
    return float(threshold(Laplace(scale=scale), gamma).epsilon(delta).to_dict()["upper"])


def _opendp_features(scale: float, gamma: float) -> tuple[float, float]:
    dp.enable_features("contrib", "honest-but-curious")  # switches, not accounting: untimed
    return scale, gamma


def opendp_threshold(args: tuple[float, float]) -> float:
    scale, gamma = args
    space = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    m = dp.m.make_user_measurement(*space, dp.max_divergence(), lambda x: (x, x), lambda d: d / scale,
                                   TO="(f64, ExtrinsicObject)")
    return float(dp.c.make_select_private_candidate(m, stop_probability=gamma, threshold=0.0).map(1.0))


#: The timed cells, each run cold in its own interpreter (``_cold.cold``).
CELLS: dict[str, _cold.Cell] = {"ours": ours, "theirs": theirs, "threshold": ours_threshold,
                                "opendp": (_opendp_features, opendp_threshold)}


def best(name: str, repeats: int, *args: Any) -> dict[str, Any] | None:
    out = _cold.cold(__file__, name, *args, timeout=600.0, env={**os.environ, **_cold.SINGLE_THREAD_ENV},
                     repeats=repeats)
    if "error" in out:
        print(f"  {name} {args} failed: {out['error']}", file=sys.stderr)
        return None
    return out


def _cpu(run: dict[str, Any] | None, digits: int) -> str:
    return "-" if run is None else f"{run['cpu']:.{digits}f}"


def fmt(x: float | None, digits: int = 4) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def selection_rows(repeats: int) -> list[str]:
    lines = []
    for i, (base_label, _, _) in enumerate(BASES):
        for j, (law_label, _, pair) in enumerate(LAWS):
            mine = best("ours", repeats, i, j, DELTA)
            peer_run = None if pair is None else best("theirs", repeats, i, pair[0], pair[1], DELTA)
            if mine is None:
                continue
            a = mine["value"]
            routes = {r["route"]: r["upper"] for r in a["routes"]}
            peer = None if peer_run is None else peer_run["value"]
            ratio = "-" if peer is None else f"{a['upper'] / peer:.3f}"
            lines.append(
                f"| {base_label} | {law_label} | [{fmt(a['lower'])}, {fmt(a['upper'])}] | {a['route']} | "
                f"{fmt(routes.get('pure'))} | {fmt(routes.get('rdp-thm2') or routes.get('rdp-thm6'))} | "
                f"{fmt(routes.get('profile'))} | {fmt(routes.get('composition'))} | {fmt(peer)} | {ratio} | "
                f"{mine['cpu']:.2f} | {_cpu(peer_run, 2)} |"
            )
            print(lines[-1], flush=True)
    return lines


def threshold_rows(repeats: int) -> list[str]:
    lines = []
    for scale, gamma in ((2.0, 0.1), (2.0, 0.9), (0.5, 0.05)):
        mine = best("threshold", repeats, scale, gamma, DELTA)
        peer = best("opendp", repeats, scale, gamma)
        if mine is None:
            continue
        lines.append(f"| Laplace b={scale:g} (ε₀={1 / scale:g}) | {gamma:g} | {fmt(mine['value'])} | "
                     f"{fmt(None if peer is None else peer['value'])} | {mine['cpu']:.3f} | "
                     f"{_cpu(peer, 3)} |")
        print(lines[-1], flush=True)
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--output", type=Path, default=HERE / "RESULTS_selection.md")
    args = parser.parse_args(argv)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        "# Private selection: optcomp.selection vs dp_accounting's RepeatAndSelectDpEvent",
        "",
        (f"Date {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC. Machine: "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores shared with other jobs, Python "
        f"{platform.python_version()}, 1-min load average {load:.1f} at the start. Every time is cold "
        "(`benchmarks/_cold.py`): CPU seconds of the call in a fresh single-threaded interpreter that imported "
        "optcomp, dp_accounting and OpenDP and computed nothing else (every optcomp cache empty); a cell taking "
        f"under 1 s is repeated, each run a fresh interpreter, up to {args.repeats} runs, and the minimum kept "
        f"(shared machines make wall time noisy). δ = {DELTA:g}."),
        "",
        ("ε of releasing the best of K runs. optcomp: the certified bracket [lower, upper] (lower 0 where no lower end is "
        "known: a composed base), the route whose upper end it is, and each route's certified upper end "
        "('pure': (2+η)ε₀ / ε₀+μ·tanh(ε₀/2); 'rdp': Papernot–Steinke Thm 2 (TNB laws) or Thm 6 (Poisson) on the exact "
        "RDP curve, Thm 6's δ̂ from the certified PLD; 'profile': the privacy-profile route; 'composition': K_max runs "
        "composed). dp_accounting: RdpAccountant on RepeatAndSelectDpEvent (RDP conversion; its PLD accountant does not "
        "support the event)."),
        "",
        ("| base | K | optcomp ε | route | pure | rdp (Thm 2/6) | profile | composition | dp_accounting ε | ours/theirs | "
        "optcomp s | dp_accounting s |"),
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
        *selection_rows(args.repeats),
        "",
        "## Liu–Talwar's known-threshold variant (pure ε₀-DP base), beside OpenDP",
        "",
        ("OpenDP 0.16 `make_select_private_candidate(measurement, stop_probability, threshold)` maps ε₀ to 2ε₀ "
        "(Liu–Talwar Thm 3.1); optcomp's `threshold` gives ε₀ + min(ε₀, log(1/γ)). autodp 0.2.3.1 has no private "
        "selection: not run."),
        "",
        "| base | stop probability γ | optcomp ε | OpenDP ε | optcomp s | OpenDP s |",
        "|---|---|---|---|---|---|",
        *threshold_rows(args.repeats),
        "",
        f"1-min load average at the end: {os.getloadavg()[0]:.1f}.",
    ]
    args.output.write_text("\n".join(lines) + "\n")


if __name__ == "__main__" and not _cold.cold_cells(CELLS, sys.argv[1:], peers=PEERS):
    main()

"""Benchmark of the Rényi conversion (issue 35): zCDP and RDP-curve budgets to (ε, δ), beside dp_accounting.

Rows (δ = 1e-5 and 1e-10):

* ρ-zCDP for ρ ∈ {0.1, 0.5, 1, 2}: optcomp's certified bracket (``compose(ZeroConcentrated(ρ)).epsilon(δ)``:
  lower end from a verified witness law, upper end the tighter of the closed form and the dual certificate)
  and the route that answered; dp_accounting's ``RdpAccountant`` on ``ZCDpEvent(ρ)`` (the curve αρ at its
  default orders, its conversion); and the ε of a Gaussian with μ = √(2ρ) (dp_accounting ``PLDAccountant`` on
  ``GaussianDpEvent(1/√(2ρ))``) — what substituting a Gaussian for the zCDP budget reports, which is *below*
  the bracket's lower end: no valid conversion can report it.
* RDP curves: the DP-SGD curve of (σ, q, T) at the integer subset of dp_accounting's default orders (exact
  there, and the same numbers ``RdpAccountant`` computes: ``benchmarks/RESULTS_rdp.md``) given as a ``Renyi``
  item, against ``RdpAccountant`` on the ``PoissonSampledDpEvent`` at those orders; and a curve stated at five
  orders (N(0, 1), Δ = 1).

Every time is cold (``benchmarks/_cold.py``): optcomp's query and dp_accounting's ``RdpAccountant`` each run in a
fresh interpreter (single-threaded BLAS) that imported both libraries and computed nothing else, every optcomp
cache empty; a cell taking under a second is repeated (each run a fresh interpreter) and the minimum CPU and wall
time of the call kept. The Gaussian proxy's ε is an answer, computed here untimed. Writes
``benchmarks/RESULTS_zcdp.md``. Run: ``PYTHONPATH=src python benchmarks/bench_zcdp.py``.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

from dp_accounting import dp_event
from dp_accounting.pld import PLDAccountant
from dp_accounting.rdp import RdpAccountant

from optcomp import compose, rdp
from optcomp.mechanisms import Gaussian, PoissonSubsampled, Renyi, ZeroConcentrated

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _cold  # the cold-timing policy and tools (benchmarks/_cold.py)

HERE = Path(__file__).resolve().parent
PEERS = ("dp_accounting.rdp", "dp_accounting.pld")
DELTAS = (1e-5, 1e-10)
RHOS = (0.1, 0.5, 1.0, 2.0)
DPSGD = [(1.1, 256 / 60000, 3516), (0.8, 0.01, 1000)]
FIVE_ORDERS = ([2.0, 4.0, 8.0, 16.0, 32.0], [1.0, 2.0, 4.0, 8.0, 16.0])  # N(0, 1) with Δ = 1 at five orders


def _integer_orders() -> list[float]:
    return [a for a in rdp.DEFAULT_ORDERS if a == int(a)]


def ours(kind: str, arg: Any, delta: float) -> dict[str, Any]:
    """optcomp's bracket; a DP-SGD row computes its RDP curve inside the timed call, as dp_accounting does."""
    if kind == "zcdp":
        item: Any = ZeroConcentrated(arg)
    elif kind == "dpsgd":
        sigma, q, steps = arg
        curve = rdp.compose((PoissonSubsampled(Gaussian(sigma), sampling_rate=q), steps), orders=_integer_orders())
        item = Renyi(curve.orders.tolist(), curve.rdp.tolist())
    else:
        item = Renyi(arg[0], arg[1])
    b = compose(item).epsilon(delta)
    return {"lower": b.lower, "upper": b.upper, "route": b.route, "closed_form": b.closed_form}


def peer_zcdp(rho: float, delta: float) -> float:
    acc = RdpAccountant()
    acc.compose(dp_event.ZCDpEvent(rho))
    return float(acc.get_epsilon(delta))


def peer_dpsgd(sigma: float, q: float, steps: int, delta: float) -> float:
    acc = RdpAccountant(_integer_orders())
    acc.compose(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(sigma)), steps)
    return float(acc.get_epsilon(delta))


def peer_gaussian(rho: float, delta: float) -> float:
    """The Gaussian proxy's ε (an answer beside the table, not timed)."""
    acc = PLDAccountant()
    acc.compose(dp_event.GaussianDpEvent(1.0 / math.sqrt(2.0 * rho)))
    return float(acc.get_epsilon(delta))


#: The timed cells, each run cold in its own interpreter (``_cold.cold``).
CELLS: dict[str, _cold.Cell] = {"ours": ours, "peer_zcdp": peer_zcdp, "peer_dpsgd": peer_dpsgd}


def cold(repeats: int, name: str, *args: Any) -> dict[str, Any]:
    out = _cold.cold(__file__, name, *args, timeout=1800.0, env={**os.environ, **_cold.SINGLE_THREAD_ENV},
                     repeats=repeats)
    if "error" in out:
        raise RuntimeError(f"{name} {args}: {out['error']}")
    return out


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)
    load = os.getloadavg()[0]
    lines = [
        "# Rényi conversion (zCDP and RDP curves) vs dp_accounting",
        "",
        (f"{time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC. Machine: {platform.processor() or platform.machine()}, "
         f"{os.cpu_count()} cores shared with other jobs, Python {platform.python_version()}, 1-min load average "
         f"{load:.1f} at the start. optcomp: certified ε bracket of `compose(item).epsilon(δ)` (default accuracy), "
         "the route that gave its upper end, and the closed form (Canonne–Kamath–Steinke Prop. 12) beside it. "
         "Every time is cold (`benchmarks/_cold.py`): CPU and wall seconds of the call in a fresh single-threaded "
         "interpreter that imported optcomp and dp_accounting and computed nothing else (every optcomp cache "
         f"empty); a cell taking under 1 s is repeated, each run a fresh interpreter, up to {args.repeats} runs, and "
         "the minimum kept. A DP-SGD row's time includes computing its RDP curve, on both sides. "
         "dp_accounting 'RDP': `RdpAccountant` (default orders; the integer ones for DP-SGD) on the same budget; "
         "'Gaussian proxy': `PLDAccountant` on a Gaussian with μ = √(2ρ) (what substituting a Gaussian for a zCDP "
         "budget reports; an answer, not timed). A number below optcomp's lower end is not a valid ε for every "
         "mechanism with that curve."),
        "",
        ("| budget | δ | optcomp lower | optcomp upper | route | closed form | dp_acc RDP ε | dp_acc Gaussian proxy ε | "
        "optcomp CPU s | optcomp wall s | dp_acc CPU s |"),
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    rows: list[tuple[str, str, Any, float, tuple[Any, ...] | None, float | None]] = []
    for rho in RHOS:
        for delta in DELTAS:
            rows.append((f"zCDP ρ={rho:g}", "zcdp", rho, delta, ("peer_zcdp", rho, delta), peer_gaussian(rho, delta)))
    for sigma, q, steps in DPSGD:
        for delta in DELTAS:
            rows.append((f"DP-SGD curve σ={sigma} q={q:.5g} T={steps} (integer orders)", "dpsgd", [sigma, q, steps],
                         delta, ("peer_dpsgd", sigma, q, steps, delta), None))
    for delta in DELTAS:
        rows.append(("curve of N(0,1) at α=2,4,8,16,32", "renyi", list(FIVE_ORDERS), delta, None, None))
    cell = (lambda x: "—" if x is None else f"{x:.6f}")
    for name, kind, arg, delta, peer, gauss in rows:
        mine = cold(args.repeats, "ours", kind, arg, delta)
        theirs = None if peer is None else cold(args.repeats, *peer)
        m = mine["value"]
        peer_cpu = "—" if theirs is None else f"{theirs['cpu']:.2g}"
        lines.append(
            f"| {name} | {delta:g} | {m['lower']:.6f} | {m['upper']:.6f} | {m['route']} | "
            f"{m['closed_form']:.6f} | {cell(None if theirs is None else theirs['value'])} | {cell(gauss)} | "
            f"{mine['cpu']:.3f} | {mine['wall']:.3f} | {peer_cpu} |"
        )
        print(lines[-1], flush=True)
    lines += ["", f"1-min load average at the end: {os.getloadavg()[0]:.1f}."]
    (HERE / "RESULTS_zcdp.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__" and not _cold.cold_cells(CELLS, sys.argv[1:], peers=PEERS):
    main(sys.argv[1:])

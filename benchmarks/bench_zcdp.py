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

optcomp runs each row in a cold process (``time.process_time`` there, import excluded, and wall-clock of the
whole child); dp_accounting runs in this process (warm). Writes ``benchmarks/RESULTS_zcdp.md``.
Run: ``PYTHONPATH=src python benchmarks/bench_zcdp.py``.
"""

from __future__ import annotations

import json
import math
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

from dp_accounting import dp_event
from dp_accounting.pld import PLDAccountant
from dp_accounting.rdp import RdpAccountant

HERE = Path(__file__).resolve().parent
DELTAS = (1e-5, 1e-10)
RHOS = (0.1, 0.5, 1.0, 2.0)
DPSGD = [(1.1, 256 / 60000, 3516), (0.8, 0.01, 1000)]
FIVE_ORDERS = ([2.0, 4.0, 8.0, 16.0, 32.0], [1.0, 2.0, 4.0, 8.0, 16.0])  # N(0, 1) with Δ = 1 at five orders

_CHILD = r"""
import json, sys, time
t0 = time.process_time()
from optcomp import compose, rdp
from optcomp.mechanisms import Gaussian, PoissonSubsampled, Renyi, ZeroConcentrated
kind, arg, delta = sys.argv[1], json.loads(sys.argv[2]), float(sys.argv[3])
t1 = time.process_time()
if kind == "zcdp":
    item = ZeroConcentrated(arg)
elif kind == "dpsgd":
    sigma, q, steps = arg
    ints = [a for a in rdp.DEFAULT_ORDERS if a == int(a)]
    curve = rdp.compose((PoissonSubsampled(Gaussian(sigma), sampling_rate=q), steps), orders=ints)
    item = Renyi(curve.orders.tolist(), curve.rdp.tolist())
else:
    item = Renyi(arg[0], arg[1])
b = compose(item).epsilon(delta)
t2 = time.process_time()
print(json.dumps({"lower": b.lower, "upper": b.upper, "route": b.route, "closed_form": b.closed_form,
                  "cpu": t2 - t1, "import_cpu": t1 - t0}))
"""


def ours(kind: str, arg: object, delta: float) -> dict[str, float | str]:
    env = {**os.environ, "PYTHONPATH": str(HERE.parent / "src")}
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", _CHILD, kind, json.dumps(arg), repr(delta)],
                         capture_output=True, text=True, check=True, env=env).stdout
    row: dict[str, float | str] = json.loads(out)
    row["wall"] = time.perf_counter() - t0
    return row


def timed(fn: object) -> tuple[float, float]:
    t0 = time.perf_counter()
    value = fn()  # type: ignore[operator]
    return float(value), time.perf_counter() - t0


def peer_zcdp(rho: float, delta: float) -> float:
    acc = RdpAccountant()
    acc.compose(dp_event.ZCDpEvent(rho))
    return float(acc.get_epsilon(delta))


def peer_gaussian(rho: float, delta: float) -> float:
    acc = PLDAccountant()
    acc.compose(dp_event.GaussianDpEvent(1.0 / math.sqrt(2.0 * rho)))
    return float(acc.get_epsilon(delta))


def peer_dpsgd(sigma: float, q: float, steps: int, delta: float) -> float:
    from optcomp.rdp import DEFAULT_ORDERS

    acc = RdpAccountant([a for a in DEFAULT_ORDERS if a == int(a)])
    acc.compose(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(sigma)), steps)
    return float(acc.get_epsilon(delta))


def main() -> None:
    load = os.getloadavg()[0]
    sys.path.insert(0, str(HERE.parent / "src"))
    lines = [
        "# Rényi conversion (zCDP and RDP curves) vs dp_accounting",
        "",
        (f"Machine: {platform.processor() or platform.machine()}, Python {platform.python_version()}, load average "
         f"{load:.1f} at the start. optcomp: certified ε bracket of `compose(item).epsilon(δ)` (default accuracy), "
         "the route that gave its upper end, and the closed form (Canonne–Kamath–Steinke Prop. 12) beside it; "
         "CPU seconds of the query in a cold process (import excluded) and wall seconds of that whole process. "
         "dp_accounting 'RDP': `RdpAccountant` (default orders) on the same budget; 'Gaussian proxy': "
         "`PLDAccountant` on a Gaussian with μ = √(2ρ) (what substituting a Gaussian for a zCDP budget reports). "
         "A number below optcomp's lower end is not a valid ε for every mechanism with that curve."),
        "",
        "| budget | δ | optcomp lower | optcomp upper | route | closed form | dp_acc RDP ε | dp_acc Gaussian proxy ε | "
        "optcomp CPU s | optcomp wall s | dp_acc s |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    rows: list[tuple[str, str, object, float, object, object]] = []
    for rho in RHOS:
        for delta in DELTAS:
            rows.append((f"zCDP ρ={rho:g}", "zcdp", rho, delta, lambda r=rho, d=delta: peer_zcdp(r, d),
                         lambda r=rho, d=delta: peer_gaussian(r, d)))
    for sigma, q, steps in DPSGD:
        for delta in DELTAS:
            rows.append((f"DP-SGD curve σ={sigma} q={q:.5g} T={steps} (integer orders)", "dpsgd", [sigma, q, steps], delta,
                         lambda s=sigma, qq=q, t=steps, d=delta: peer_dpsgd(s, qq, t, d), None))
    for delta in DELTAS:
        rows.append(("curve of N(0,1) at α=2,4,8,16,32", "renyi", list(FIVE_ORDERS), delta, None, None))
    for name, kind, arg, delta, peer, proxy in rows:
        mine = ours(kind, arg, delta)
        rdp_eps, t_peer = timed(peer) if peer is not None else (math.nan, math.nan)
        gauss = timed(proxy)[0] if proxy is not None else math.nan
        cell = (lambda x: "—" if isinstance(x, float) and math.isnan(x) else f"{x:.6f}")
        lines.append(
            f"| {name} | {delta:g} | {mine['lower']:.6f} | {mine['upper']:.6f} | {mine['route']} | "
            f"{mine['closed_form']:.6f} | {cell(rdp_eps)} | {cell(gauss)} | {mine['cpu']:.2f} | {mine['wall']:.2f} | "
            f"{'—' if math.isnan(t_peer) else f'{t_peer:.2g}'} |"
        )
        print(lines[-1], flush=True)
    (HERE / "RESULTS_zcdp.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

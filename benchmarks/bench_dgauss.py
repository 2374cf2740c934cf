"""The discrete Gaussian (issue 35): optcomp's exact-lattice bracket against what the peers offer for it.

Rows: k releases of the discrete Gaussian N_ℤ(0, σ²) on an integer query of shift Δ (or a shift vector), at δ.
Columns, each timed cold (``benchmarks/_cold.py``): a fresh interpreter (single-threaded BLAS) that imported
optcomp and dp_accounting and computed nothing else, every optcomp cache empty; a cell taking under a second is
repeated, each run a fresh interpreter, and the minimum CPU and wall time kept:

* optcomp: ``optcomp.compose((DiscreteGaussian(σ, shift=v), k)).epsilon(δ)`` at ``DEFAULT_ACCURACY`` — routed to
  the exact lattice engine (``docs/dgauss.md``): a certified bracket, its relative width shown;
* dp_accounting RDP: ``RdpAccountant()`` (default orders) composed with ``ZCDpEvent(ρ)`` k times, ρ = ‖v‖²/(2σ²):
  exactly what dp_accounting after 0.6 does with a ``DiscreteGaussianDpEvent`` (its RdpAccountant adds
  ρ·α to every order; 0.6 itself has no such class and its PLD accountant refuses the event);
* the continuous-Gaussian proxy: dp_accounting's ``PLDAccountant()`` (defaults) composed with
  ``GaussianDpEvent(σ/‖v‖)`` k times — "use the Gaussian with the same σ" — and, beside it, that proxy's exact value
  (optcomp's GDP closed form, certified). Where the proxy's exact upper end is below the discrete Gaussian's
  certified lower end, the proxy under-reports ("proxy low").

Usage: ``python benchmarks/bench_dgauss.py [--repeats 2] [--output benchmarks/RESULTS_dgauss.md]``.
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

from dp_accounting import dp_event as E
from dp_accounting.pld import PLDAccountant
from dp_accounting.rdp import RdpAccountant

import optcomp
from optcomp.mechanisms import DiscreteGaussian, Gaussian

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _cold  # the cold-timing policy and tools (benchmarks/_cold.py)

HERE = Path(__file__).resolve().parent
CHILD_TIMEOUT_S = 300.0
PEERS = ("dp_accounting.rdp", "dp_accounting.pld")

#: (σ, shift vector, k, δ)
ROWS: list[tuple[float, tuple[int, ...], int, float]] = [
    (1.0, (1,), 1, 1e-6),
    (1.0, (1,), 10, 1e-6),
    (0.5, (1,), 100, 1e-6),
    (2.0, (1,), 100, 1e-6),
    (2.0, (1,), 100, 1e-10),
    (1.0, (1,), 10, 1e-100),
    (10.0, (3,), 1000, 1e-6),
    (100.0, (70,), 1000, 1e-6),
    (1.0, (3, 4), 10, 1e-6),
    (1.0, (5,), 10, 1e-6),
]


def _norm(shift: list[int]) -> float:
    return math.sqrt(sum(v * v for v in shift))


def ours(sigma: float, shift: list[int], k: int, delta: float) -> list[float]:
    b = optcomp.compose((DiscreteGaussian(sigma, shift=tuple(shift)), k)).epsilon(delta)
    return [b.lower, b.upper]


def rdp(sigma: float, shift: list[int], k: int, delta: float) -> float:
    acc = RdpAccountant()
    acc.compose(E.SelfComposedDpEvent(E.ZCDpEvent(_norm(shift) ** 2 / (2 * sigma * sigma)), k))
    return float(acc.get_epsilon(delta))


def proxy(sigma: float, shift: list[int], k: int, delta: float) -> float:
    acc = PLDAccountant()
    acc.compose(E.SelfComposedDpEvent(E.GaussianDpEvent(sigma / _norm(shift)), k))
    return float(acc.get_epsilon(delta))


def proxy_exact(sigma: float, shift: list[int], k: int, delta: float) -> list[float]:
    b = optcomp.compose((Gaussian(sigma, sensitivity=_norm(shift)), k)).epsilon(delta)
    return [b.lower, b.upper]


#: The timed cells, each run cold in its own interpreter (``_cold.cold``).
CELLS: dict[str, _cold.Cell] = {"ours": ours, "rdp": rdp, "proxy": proxy}


def measure(row: tuple[float, tuple[int, ...], int, float], repeats: int) -> dict[str, dict[str, Any]]:
    env = {**os.environ, **_cold.SINGLE_THREAD_ENV}
    sigma, shift, k, delta = row
    got = {}
    for which in CELLS:
        got[which] = _cold.cold(__file__, which, sigma, list(shift), k, delta, timeout=CHILD_TIMEOUT_S, env=env,
                                repeats=repeats)
        if "error" in got[which]:
            raise RuntimeError(f"{which} {row}: {got[which]['error']}")
    got["proxy_exact"] = {"value": proxy_exact(sigma, list(shift), k, delta)}  # an answer, not timed
    return got


def fmt_row(row: tuple[float, tuple[int, ...], int, float], m: dict[str, dict[str, Any]]) -> str:
    sigma, shift, k, delta = row
    lo, hi = m["ours"]["value"]
    width = (hi - lo) / max(hi, 1.0)
    by_rdp, by_proxy = m["rdp"]["value"], m["proxy"]["value"]
    p_lo, p_hi = m["proxy_exact"]["value"]
    verdict = "proxy low" if p_hi < lo else ("proxy high" if p_lo > hi else "overlap")
    shown = shift[0] if len(shift) == 1 else shift
    return (f"| {sigma:g} | {shown} | {k} | {delta:g} | [{lo:.6f}, {hi:.6f}] | {width:.1e} | {m['ours']['cpu']:.4f} | "
            f"{m['ours']['wall']:.4f} | {by_rdp:.4f} | {m['rdp']['cpu']:.4f} | {by_proxy:.4f} | {m['proxy']['cpu']:.3f} | "
            f"[{p_lo:.6f}, {p_hi:.6f}] | {verdict} |")


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--output", type=Path, default=HERE / "RESULTS_dgauss.md")
    args = parser.parse_args(argv)
    load0 = os.getloadavg()[0]
    started = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    lines = [
        "# Discrete Gaussian: optcomp's exact lattice vs dp_accounting (RDP of its zCDP, and the Gaussian proxy)",
        "",
        "",
        ("| σ | shift | k | δ | optcomp ε (exact lattice, certified) | rel. width | optcomp CPU s | optcomp wall s | "
         "dp_accounting RDP ε (ρ-zCDP) | RDP CPU s | Gaussian proxy ε (dp_accounting PLD) | proxy CPU s | "
         "proxy's exact ε (GDP, certified) | proxy vs exact |"),
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in ROWS:
        lines.append(fmt_row(row, measure(row, args.repeats)))
        print(lines[-1], flush=True)
    lines[1] = (
        f"{started} UTC. Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores shared with "
        f"other jobs, Python {platform.python_version()}; 1-min load average {load0:.2f} at start, "
        f"{os.getloadavg()[0]:.2f} at end. Every time is cold (`benchmarks/_cold.py`): CPU seconds of the call in a "
        "fresh single-threaded interpreter that imported optcomp and dp_accounting and computed nothing else (no "
        "warm-up, every optcomp cache empty); a cell taking under 1 s is repeated, each run a fresh interpreter, "
        f"up to {args.repeats} runs, and the minimum kept; wall beside optcomp's. The proxy's exact ε is an answer, "
        "not timed. optcomp's rows go to the exact lattice engine at DEFAULT_ACCURACY. 'proxy low': the "
        "continuous Gaussian of the same σ (its certified exact ε) lies below the discrete Gaussian's certified "
        "lower end — the proxy under-reports."
    )
    args.output.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__" and not _cold.cold_cells(CELLS, sys.argv[1:], peers=PEERS):
    main(sys.argv[1:])

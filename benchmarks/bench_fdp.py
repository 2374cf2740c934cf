"""Benchmark of the f-DP readouts on DP-SGD privacy loss distributions (issue 15).

For Poisson-subsampled Gaussian DP-SGD PLDs (σ ∈ {0.8, 1, 2}, q ∈ {0.01, 0.001}, 10³ steps; 10⁴ and
10⁵ steps for a few settings), each readout is timed cold (``benchmarks/_cold.py``): in a fresh interpreter
that imports optcomp and computes nothing before it, on a fresh PLD at the default accuracy (nothing cached
from another readout or row): ``fdp.from_pld`` (the whole certified trade-off bracket from one realisation),
``fdp.attack_tpr(pld, fpr=0.01)``, ``fdp.advantage(pld)`` and ``fdp.epsilon_at(pld, 1e-5)``, with their
certified answers. Writes ``benchmarks/RESULTS_fdp.md``. Run: ``PYTHONPATH=src python benchmarks/bench_fdp.py``
(``--quick``: the 10³-step rows only).
"""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import optcomp
from optcomp import Gaussian, PoissonSubsampled
from optcomp.fdp import advantage, attack_tpr, epsilon_at, from_pld
from optcomp.pld import PrivacyLossDistribution

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _cold  # the cold-timing policy and tools (benchmarks/_cold.py)

DELTA = 1e-5
FPR = 0.01
CASES = [(s, q, 1000) for s in (0.8, 1.0, 2.0) for q in (0.01, 0.001)] + [
    (1.0, 0.01, 10_000),
    (1.0, 0.001, 10_000),
    (1.0, 0.01, 100_000),
    (2.0, 0.001, 100_000),
]
HERE = Path(__file__).resolve().parent


def fresh(sigma: float, q: float, steps: int) -> PrivacyLossDistribution:
    return optcomp.compose((PoissonSubsampled(Gaussian(sigma), sampling_rate=q), steps))


def _curve(sigma: float, q: float, steps: int) -> int:
    return int(from_pld(fresh(sigma, q, steps)).lower.breakpoints().size)


def _bracket(readout: Callable[[Any], Any]) -> Callable[[float, float, int], list[float]]:
    def cell(sigma: float, q: float, steps: int) -> list[float]:
        b = readout(fresh(sigma, q, steps))
        return [float(b.lower), float(b.upper)]

    return cell


#: The timed cells, each run cold in its own interpreter (``_cold.cold``).
CELLS: dict[str, Callable[..., Any]] = {
    "from_pld": _curve,
    "tpr": _bracket(lambda pld: attack_tpr(pld, FPR)),
    "advantage": _bracket(advantage),
    "epsilon": _bracket(lambda pld: epsilon_at(pld, DELTA)),
}


def timed(name: str, case: tuple[float, float, int]) -> tuple[Any, float]:
    """(answer, wall seconds) of one cold cell."""
    out = _cold.cold(__file__, name, *case, timeout=1800.0)
    if "error" in out:
        raise RuntimeError(f"{name} {case}: {out['error']}")
    return out["value"], float(out["wall"])


def main(argv: list[str]) -> None:
    cases = [c for c in CASES if c[2] == 1000] if "--quick" in argv else CASES
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        "# f-DP readouts on DP-SGD PLDs",
        "",
        (f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores shared with other "
         f"jobs (1-min load average {load:.1f} at the start), Python {platform.python_version()}. Default "
         "accuracy (relative width 1e-4). Each readout is cold: a fresh interpreter that imported optcomp and "
         "computed nothing else, on a fresh PLD (one run each, wall-clock seconds). "
         f"`from_pld`: certified trade-off bracket (knots of its lower curve); TPR: `attack_tpr(pld, fpr={FPR})`; "
         f"advantage: `advantage(pld)` = δ(0); ε: `epsilon_at(pld, {DELTA:g})`. Every answer is a certified bracket."),
        "",
        "| σ | q | steps | from_pld s (knots) | TPR at FPR 0.01 | TPR s | advantage | adv. s | ε(1e-5) | ε s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    print("\n".join(lines), flush=True)
    for case in cases:
        sigma, q, steps = case
        points, t_curve = timed("from_pld", case)
        tpr, t_tpr = timed("tpr", case)
        adv, t_adv = timed("advantage", case)
        eps, t_eps = timed("epsilon", case)
        lines.append(
            f"| {sigma} | {q:g} | {steps} | {t_curve:.2f} ({points} knots) | [{tpr[0]:.6f}, {tpr[1]:.6f}] | "
            f"{t_tpr:.2f} | [{adv[0]:.6f}, {adv[1]:.6f}] | {t_adv:.2f} | [{eps[0]:.5f}, {eps[1]:.5f}] | "
            f"{t_eps:.2f} |"
        )
        print(lines[-1], flush=True)
    (HERE / "RESULTS_fdp.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__" and not _cold.cold_cells(CELLS, sys.argv[1:]):
    main(sys.argv[1:])

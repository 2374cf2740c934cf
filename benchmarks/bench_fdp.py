"""Benchmark of the f-DP readouts on DP-SGD privacy loss distributions (issue 15).

For Poisson-subsampled Gaussian DP-SGD PLDs (σ ∈ {0.8, 1, 2}, q ∈ {0.01, 0.001}, 10³ steps; 10⁴ and
10⁵ steps for a few settings), each readout is timed on a *fresh* PLD (nothing cached from another
readout): ``fdp.from_pld`` (the whole certified trade-off bracket from one realisation),
``fdp.attack_tpr(pld, fpr=0.01)``, ``fdp.advantage(pld)`` and ``fdp.epsilon_at(pld, 1e-5)``, with their
certified answers. Writes ``benchmarks/RESULTS_fdp.md``. Run: ``PYTHONPATH=src python benchmarks/bench_fdp.py``
(``--quick``: the 10³-step rows only).
"""

from __future__ import annotations

import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import optcomp
from optcomp import Gaussian, PoissonSubsampled
from optcomp.fdp import advantage, attack_tpr, epsilon_at, from_pld
from optcomp.pld import PrivacyLossDistribution

DELTA = 1e-5
FPR = 0.01
CASES = [(s, q, 1000) for s in (0.8, 1.0, 2.0) for q in (0.01, 0.001)] + [
    (1.0, 0.01, 10_000),
    (1.0, 0.001, 10_000),
    (1.0, 0.01, 100_000),
    (2.0, 0.001, 100_000),
]
HERE = Path(__file__).resolve().parent
T = TypeVar("T")


def timed(fn: Callable[[], T]) -> tuple[T, float]:
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def fresh(sigma: float, q: float, steps: int) -> PrivacyLossDistribution:
    return optcomp.compose((PoissonSubsampled(Gaussian(sigma), sampling_rate=q), steps))


def main(argv: list[str]) -> None:
    cases = [c for c in CASES if c[2] == 1000] if "--quick" in argv else CASES
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        "# f-DP readouts on DP-SGD PLDs",
        "",
        (f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores shared with other "
         f"jobs (1-min load average {load:.1f} at the start), Python {platform.python_version()}. Default "
         "accuracy (relative width 1e-4). Each readout runs on a fresh PLD (one run each, wall-clock seconds). "
         f"`from_pld`: certified trade-off bracket (knots of its lower curve); TPR: `attack_tpr(pld, fpr={FPR})`; "
         f"advantage: `advantage(pld)` = δ(0); ε: `epsilon_at(pld, {DELTA:g})`. Every answer is a certified bracket."),
        "",
        "| σ | q | steps | from_pld s (knots) | TPR at FPR 0.01 | TPR s | advantage | adv. s | ε(1e-5) | ε s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    print("\n".join(lines), flush=True)
    for case in cases:
        sigma, q, steps = case
        bracket, t_curve = timed(lambda c=case: from_pld(fresh(*c)))  # type: ignore[misc]
        points = bracket.lower.breakpoints().size
        tpr, t_tpr = timed(lambda c=case: attack_tpr(fresh(*c), FPR))  # type: ignore[misc]
        adv, t_adv = timed(lambda c=case: advantage(fresh(*c)))  # type: ignore[misc]
        eps, t_eps = timed(lambda c=case: epsilon_at(fresh(*c), DELTA))  # type: ignore[misc]
        lines.append(
            f"| {sigma} | {q:g} | {steps} | {t_curve:.2f} ({points} knots) | [{tpr.lower:.6f}, {tpr.upper:.6f}] | "
            f"{t_tpr:.2f} | [{adv.lower:.6f}, {adv.upper:.6f}] | {t_adv:.2f} | [{eps.lower:.5f}, {eps.upper:.5f}] | "
            f"{t_eps:.2f} |"
        )
        print(lines[-1], flush=True)
    (HERE / "RESULTS_fdp.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])

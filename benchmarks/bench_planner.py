"""Benchmark of the budget planner: re-planning time per accounting mode for 20, 100 and 1,000 statistics.

Plans (seed 0): statistics drawn uniformly from {count, sum in [0, 100], mean in [0, 100] with public n,
histogram with 2–30 bins}, mechanisms from {Laplace, Gaussian, discrete Laplace} (discrete only where the
sensitivity is an integer, which it is here), weights uniform in [0.5, 2] (so every ε_i is distinct: the
hard case for the engines), ε = 1, δ = 1e-6, β = 0.05. Plus ``examples/census_plan.toml`` (21 statistics, one a median).
"Re-planning" is one ``optcomp.planner.allocate(plan, mode)`` call from scratch (validation, locks, the
search for the largest certified-feasible scale, accuracies), as the web page does after an edit
(the page runs all five modes; its time is the sum). Each call is timed cold (``benchmarks/_cold.py``): in a
fresh interpreter that imported optcomp and computed nothing else (the planner's μ memo empty). Targets (issue 10): 100 statistics ≤ 0.5 s in every
mode; 1,000 ≤ 2 s black-box, ≤ 15 s mechanism-aware.

Writes ``benchmarks/RESULTS_planner.md``. Run: ``PYTHONPATH=src python benchmarks/bench_planner.py``
(``--quick``: 20 and 100 statistics only).
"""

from __future__ import annotations

import platform
import sys
from pathlib import Path
from typing import Any

import numpy as np

from optcomp.planner import MODES, allocate, load_plan, plan_from_dict

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _cold  # the cold-timing policy and tools (benchmarks/_cold.py)

SIZES = (20, 100, 1000)
TARGETS = {100: {m: 0.5 for m in MODES}, 1000: {**{m: 2.0 for m in MODES}, "mechanism_aware": 15.0}}


def random_plan(k: int, seed: int = 0) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    stats = []
    for i in range(k):
        kind = str(rng.choice(["count", "sum", "mean", "histogram"]))
        mech = str(rng.choice(["laplace", "gaussian", "discrete_laplace"]))
        s: dict[str, Any] = {"name": f"s{i}", "kind": kind, "mechanism": mech, "weight": float(rng.uniform(0.5, 2.0))}
        if kind in ("sum", "mean"):
            s.update(lower=0, upper=100)
        if kind == "histogram":
            s["bins"] = int(rng.integers(2, 31))
        stats.append(s)
    return {"epsilon": 1.0, "delta": 1e-6, "dataset_size": 100_000, "statistics": stats}


def _plan(size: int) -> Any:
    """The census example (size 0) or the random mixed plan of ``size`` statistics."""
    if size == 0:
        return load_plan(HERE.parent / "examples" / "census_plan.toml")
    return plan_from_dict(random_plan(size))


def _allocate(prepared: tuple[Any, str]) -> list[float]:
    plan, mode = prepared
    r = allocate(plan, mode)
    return [r.evaluations, r.scale, r.epsilon_certified]


#: The timed cell: the plan is built untimed, then one ``allocate(plan, mode)`` is timed.
CELLS: dict[str, _cold.Cell] = {"allocate": (lambda size, mode: (_plan(size), mode), _allocate)}


def main() -> None:
    quick = "--quick" in sys.argv
    sizes = SIZES[:2] if quick else SIZES
    cases = [("census example (21)", 0), *((f"random mixed ({k})", k) for k in sizes)]
    rows = []
    for label, size in cases:
        k = len(_plan(size).statistics)
        for mode in MODES:
            out = _cold.cold(__file__, "allocate", size, mode, timeout=1800.0)
            if "error" in out:
                raise RuntimeError(f"{label} {mode}: {out['error']}")
            (evaluations, scale, certified), dt = out["value"], float(out["wall"])
            target = TARGETS.get(k, {}).get(mode)
            verdict = "" if target is None else ("✓" if dt <= target else "✗") + f" (≤ {target:g} s)"
            rows.append(f"| {label} | {mode} | {dt:.3f} | {int(evaluations)} | {scale:.6g} | "
                        f"{certified:.6f} | {verdict} |")
            print(rows[-1], flush=True)
    import numpy

    lines = [
        "# Budget planner: re-planning time (issue 10)",
        "",
        (f"One cold run (a fresh interpreter that computed nothing before the call), wall-clock seconds on {platform.machine()} / Python {platform.python_version()}, "
        f"numpy {numpy.__version__}{' (--quick)' if quick else ''}. ε = 1, δ = 1e-6. Each row is one "
        "`allocate(plan, mode)` from scratch; evaluations = accounting calls made by the scale search; "
        "certified ε = the mode's certified upper ε of the plan at δ (≤ 1 in every row). A `mechanism_aware` "
        "row counts its PLD engine calls (`optcomp.compose` on a fixed grid step, placed by a GDP model of "
        "the plan) plus one `optcomp.optimal.epsilon` check at the found scale; it runs without the "
        "`optimal` allocation (`plan_all` passes it as a floor). The black-box times are dominated by "
        "`optcomp.optimal.epsilon` (2–10 calls), the mechanism-aware ones by `optcomp.compose` (PLD)."),
        "",
        "| plan | mode | time (s) | evaluations | common scale | certified ε | target |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
    ]
    (HERE / "RESULTS_planner.md").write_text("\n".join(lines), encoding="utf-8")


if __name__ == "__main__" and not _cold.cold_cells(CELLS, sys.argv[1:], peers=("optcomp.planner",)):
    main()

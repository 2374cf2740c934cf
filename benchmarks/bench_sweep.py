"""Benchmark: `optcomp.sweep` on the issue-26 grid against a plain loop of `dpsgd.epsilon`.

The grid (10,000 points): σ 20 values linspace [0.5, 3] × q 10 values geomspace [1e-4, 0.05] × T 10 values
geomspace [1e2, 1e5] (rounded) × δ ∈ {1e-4, 1e-5, 1e-6, 1e-7, 1e-8}; ε at δ, default accuracy.

1. The plain loop: `dpsgd.epsilon` on a random sample of the points (seeded), one process,
   single-threaded BLAS; its mean time per point × 10,000 is the loop's extrapolated time (stated as such).
   Each point starts cold within that process (`benchmarks/_cold.py`: libraries imported first, every optcomp
   cache emptied before each point), so the loop gets no help from an earlier point that a sweep would not.
2. The sweep on `--workers` local processes (default 2), into a SQLite file; every row checked to be a
   finite bracket lower ≤ upper without error, and each sampled point's sweep bracket checked to
   intersect the plain bracket (two certified brackets of one ε).
3. A stated subset (the first `--cluster-chains` chains) on a 2-worker
   `distributed.LocalCluster` (processes), compared row by row with the local run: identical floats.
4. The dispatch overhead per task (no-op tasks through the process pool and the LocalCluster) against the
   mean compute time of a sweep task.

Run: `python benchmarks/bench_sweep.py [--quick]` → `benchmarks/RESULTS_sweep.md`. `--db` keeps the
SQLite file (a re-run resumes it; the report then says how many rows were already there).
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from threadpoolctl import threadpool_limits

from optcomp import dpsgd, sweep
from optcomp.pld import GridTooLargeError
from optcomp.sweep._executors import DaskCluster, ProcessPool

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _cold  # the cold-timing policy and tools (benchmarks/_cold.py)


def grid(quick: bool) -> dict[str, Any]:
    n_sigma, n_q, n_t = (4, 3, 4) if quick else (20, 10, 10)
    return {
        "query": "epsilon",
        "axes": {
            "noise_multiplier": {"start": 0.5, "stop": 3.0, "num": n_sigma},
            "sampling_rate": {"start": 1e-4, "stop": 0.05, "num": n_q, "log": True},
            "steps": {"start": 100, "stop": 100000, "num": n_t, "log": True},
            "delta": [1e-4, 1e-5, 1e-6, 1e-7, 1e-8],
        },
    }


def conditions() -> str:
    load = os.getloadavg()
    cpu = len(os.sched_getaffinity(0))  # (not nproc: it reads OMP_NUM_THREADS, which distributed sets to 1)
    return (f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, {platform.machine()}, {cpu} cores, "
            f"load average {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} (1/5/15 min)")


def plain(points: list[sweep.Point], n: int, seed: int) -> tuple[list[tuple[sweep.Point, Any, float]], float, float]:
    """`dpsgd.epsilon` on a seeded sample: (point, bracket or None, CPU s) each, wall and CPU in all."""
    sample = random.Random(seed).sample(points, min(n, len(points)))
    out = []
    _cold.import_libraries()
    start = time.perf_counter()
    cpu = time.process_time()
    with threadpool_limits(limits=1):
        for p in sample:
            g = p.get
            _cold.clear_caches()
            t0 = time.process_time()
            try:
                b = dpsgd.epsilon(g("noise_multiplier"), g("sampling_rate"), g("steps"), g("delta"))
            except GridTooLargeError:  # the width is not reached before the memory cap: dpsgd refuses
                b = None
            out.append((p, b, time.process_time() - t0))
    return out, time.perf_counter() - start, time.process_time() - cpu


def plain_breakdown(samples: list[tuple[sweep.Point, Any, float]]) -> list[str]:
    """Where the plain loop's CPU goes: the sampled points' CPU by δ and by σ band (a table)."""
    total = sum(t for _, _, t in samples) or 1e-9
    out = ["| group | points | CPU s | share of the plain loop's CPU |", "|---|---|---|---|"]
    for d in sorted({p.get("delta") for p, _, _ in samples}, reverse=True):  # type: ignore[type-var]
        ts = [t for p, _, t in samples if p.get("delta") == d]
        out.append(f"| δ = {d:g} | {len(ts)} | {sum(ts):.1f} | {100 * sum(ts) / total:.0f} % |")
    for lo, hi in ((0.0, 1.0), (1.0, 2.0), (2.0, 9.0)):
        ts = [t for p, _, t in samples if lo <= float(p.get("noise_multiplier")) < hi]  # type: ignore[arg-type]
        out.append(f"| {lo:g} ≤ σ < {hi:g} | {len(ts)} | {sum(ts):.1f} | {100 * sum(ts) / total:.0f} % |")
    return out


def overhead(executor: Any, n: int) -> float:
    start = time.perf_counter()
    for _ in executor.map_unordered(abs, list(range(n))):
        pass
    return (time.perf_counter() - start) / n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--plain-sample", type=int, default=200)
    ap.add_argument("--chains", type=int, default=0, help="sweep a random sample of this many (σ, q) chains "
                    "of the grid instead of all 200 (0: all)")
    ap.add_argument("--cluster-chains", type=int, default=2, help="chains (the first of the swept points) run "
                    "again on the LocalCluster and compared row by row")
    ap.add_argument("--db", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=HERE / "RESULTS_sweep.md")
    args = ap.parse_args()
    lines = ["# RESULTS_sweep: `optcomp sweep` against a plain `dpsgd.epsilon` loop", "",
             f"Command: `{' '.join(['python benchmarks/bench_sweep.py', *sys.argv[1:]])}`", "",
             (f"Conditions at the start: {conditions()}; Python {platform.python_version()}. The machine is "
             "shared with other engineers' jobs at the same time: absolute times are noisy, and the ratios "
             "below are within this one run."), ""]

    def flush() -> None:
        args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
        print("\n".join(lines[-3:]), flush=True)

    points = sweep.grid_points(grid(args.quick))
    if args.chains:
        pairs = sorted({(p.get("noise_multiplier"), p.get("sampling_rate")) for p in points})  # type: ignore[type-var]
        keep = set(random.Random(2026).sample(pairs, args.chains))
        points = [p for p in points if (p.get("noise_multiplier"), p.get("sampling_rate")) in keep]
        lines += [(f"Subset: {args.chains} (σ, q) chains of the grid's {len(pairs)} drawn at random (seed 2026), "
                  f"each with all its T and δ: {len(points)} points. Both timings below are on this subset."), ""]
    n = len(points)
    samples, t_plain, cpu_plain = plain(points, args.plain_sample, seed=26)
    per_point = t_plain / len(samples)
    cpu_point = cpu_plain / len(samples)
    lines += ["## 1. Plain loop (sampled, extrapolated)", "",
              (f"`dpsgd.epsilon` on {len(samples)} points drawn at random (seed 26) from the {n}: "
              f"{t_plain:.1f} s, {per_point:.3f} s per point ({sum(b is None for _, b, _ in samples)} refused by "
              "`dpsgd.epsilon`: the requested width is not reached before the memory cap; their time is counted); "
              f"**extrapolated to {n} points: {per_point * n:.0f} s wall, {cpu_point * n:.0f} s CPU** "
              "(one process, single-threaded BLAS)."), "", "Where its CPU goes (the sampled points):", "",
              *plain_breakdown(samples), ""]
    flush()

    tmp = tempfile.mkdtemp(prefix="bench_sweep_")
    db = args.db if args.db is not None else Path(tmp) / "sweep.sqlite"
    s = sweep.run(points, db, workers=args.workers)
    with sweep.Store(db) as store:
        rows = store.rows(points)
    by_key = {r.key: r for r in rows}
    bad = [r for r in rows if r.error is not None or r.lower is None or r.upper is None or not r.lower <= r.upper]
    wide = [r for r in rows if r.width is not None and r.width > points[0].accuracy.relative_width]
    disjoint = [p for p, b, _ in samples if b is not None
                and not (by_key[p.key].lower <= b.upper and b.lower <= by_key[p.key].upper)]  # type: ignore[operator]
    ratio = per_point * n / s.seconds
    lines += ["## 2. The sweep", "",
              (f"`sweep.run(points, db, workers={args.workers})`: {s.points} points, {s.skipped} already stored, "
              f"{s.written} written, {s.errors} errors, {s.tasks} tasks on {s.workers} workers; "
              f"**{s.seconds:.0f} s wall**; the workers' CPU time inside the tasks: {s.compute_seconds:.0f} s in all."), "",
              f"- rows with a finite certified bracket lower ≤ upper and no error: {len(rows) - len(bad)} of {n}",
              (f"- rows wider than the requested relative width (kept at the narrowest certified bracket the "
              f"memory cap allows; `dpsgd.epsilon` raises there): {len(wide)}"),
              f"- sampled points whose sweep bracket does not intersect the plain bracket: {len(disjoint)}",
              (f"- **speed-up against the extrapolated plain loop: {ratio:.1f}×** "
              f"(wall clock, under the load stated above); **CPU time: plain {cpu_point * n:.0f} s against the sweep's "
              f"{s.compute_seconds:.0f} s = {cpu_point * n / max(s.compute_seconds, 1e-9):.1f}× less work** (reuse of work "
              "alone, load-independent)"),
              ""]
    flush()

    pairs_in_order = list(dict.fromkeys((p.get("noise_multiplier"), p.get("sampling_rate")) for p in points))
    chosen = set(pairs_in_order[: args.cluster_chains])
    subset = [p for p in points if (p.get("noise_multiplier"), p.get("sampling_rate")) in chosen]
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        cdb = Path(tmp) / "cluster.sqlite"
        c = sweep.run(subset, cdb, scheduler=client)
        with sweep.Store(cdb) as store:
            crow = store.rows(subset)
        same = sum(1 for r in crow if r == by_key[r.key])
        dask_cost = overhead(DaskCluster(client), 200)
    pool = ProcessPool(2)
    overhead(pool, 20)
    pool_cost = overhead(pool, 400)
    pool.close()
    mean_task = s.compute_seconds / max(1, s.tasks)
    lines += ["## 3. The same rows on a 2-worker LocalCluster", "",
              (f"Subset: the {len(subset)} points of the chains (σ, q) ∈ {sorted(chosen)} on "  # type: ignore[type-var]
              f"`distributed.LocalCluster(n_workers=2, "
              f"processes=True)`: {c.seconds:.0f} s wall, {c.tasks} tasks; **rows identical to the local run: "
              f"{same} of {len(crow)}**."), "",
              "## 4. Per-task overhead", "",
              (f"Mean CPU per sweep task: {mean_task:.2f} s. Dispatch of a no-op task: process pool "
              f"{pool_cost * 1e3:.2f} ms, LocalCluster {dask_cost * 1e3:.2f} ms, i.e. "
              f"{100 * pool_cost / mean_task:.3f} % and {100 * dask_cost / mean_task:.3f} % of a task's compute."), "",
              f"Conditions at the end: {conditions()}.", ""]
    flush()


if __name__ == "__main__":
    sys.exit(main())

"""Before/after table: the benchmark workloads answered by two source trees of optcomp, side by side.

Run ``python benchmarks/before_after.py --before OLD/src [--after src]``: every workload runs in a fresh
interpreter per tree (``PYTHONPATH`` = that tree), alternating before/after; the time is wall-clock seconds
of the accounting call only, cold (``benchmarks/_cold.py``: the interpreter imports optcomp and computes nothing
before the call; import time excluded), the minimum over up to three cold runs (runs under 3 s are repeated,
each in a fresh interpreter). It writes ``benchmarks/BEFORE_AFTER.md``: per workload the two answers, whether the
after answer is the same, tighter (its bracket inside the before one) or different, and the time ratio.

Workloads are those of ``bench_pld.py`` (optcomp's own rows: default accuracy and dp_accounting's grid step),
``bench_optimal.py`` (optcomp rows), ``bench_fdp.py`` (the 1,000-step readouts), ``bench_rdp.py``
(optcomp's RDP ε and the PLD bracket) and ``bench_planner.py`` (every mode on every plan), each written
with calls both trees accept. Peers are not run: this table compares optcomp with itself.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

#: Kill a run after max(MIN_TIMEOUT_S, TIMEOUT_FACTOR × the after tree's time) (the before tree may be slow).
MIN_TIMEOUT_S = 30.0
TIMEOUT_FACTOR = 10.0
#: Runs shorter than this are repeated (minimum of REPEATS, each in a fresh interpreter).
REPEAT_BELOW_S = 3.0
REPEATS = 2


# ------------------------------------------------------------------------------------------------
# Workloads: name → (group, label, callable returning a list of floats). Run inside the child.
# ------------------------------------------------------------------------------------------------


def _pld_cases() -> list[tuple[str, str, Any]]:
    import bench_pld

    out = []
    for i, case in enumerate(bench_pld.build_cases(quick=False)):
        out.append((f"pld:{i}:default", case.name + " — default accuracy", case))
        if case.group not in ("huge", "blackbox"):
            out.append((f"pld:{i}:grid", case.name + " — grid step 1e-4", case))
    return out


def _run_pld(name: str) -> Callable[[], list[float]]:
    import bench_pld

    _, _, kind = name.split(":")
    spec = json.loads(os.environ["BEFORE_AFTER_CASE"])  # (items, delta): build_cases runs once, in the parent
    items = [(k, p, n) for k, p, n in spec["items"]]
    step = bench_pld.OPTCOMP_FINE_GRID if kind == "grid" else None

    def run() -> list[float]:
        _, lower, upper, _ = bench_pld._optcomp(items, spec["delta"], step)
        return [float(lower), float(upper)]  # type: ignore[arg-type]

    return run


OPTIMAL_NAMES = [f"het:optcomp:{s}" for s in ("1e2", "1e3", "1e4", "1e5")] + ["het:optcomp:1e4:1e-4", "het:mv:1e2"]
OPTIMAL_NAMES += [f"hom:optcomp:{s}" for s in ("1e3", "1e4", "1e5", "1e6", "1e7", "1e8", "1e9")]
OPTIMAL_NAMES += ["pooled:optcomp:1e7"]


def _run_optimal(name: str) -> Callable[[], list[float]]:
    import bench_optimal
    import numpy as np

    from optcomp import optimal

    kind, engine, size, *rest = name.split(":", 1)[1].split(":")
    k = int(float(size))
    tol = float(rest[0]) if rest else optimal.DEFAULT_TOLERANCE
    if kind == "het":
        mechs: Any = [(float(e), 0.0) for e in np.random.default_rng(bench_optimal.SEED).uniform(0.001, 0.1, k)]
    elif kind == "pooled":
        mechs = [(0.1, 0.0)] * k
    else:
        mechs = optimal.homogeneous(bench_optimal.HOM_EPS, 0.0, k)
    kw: dict[str, Any] = {"method": "mv", "tolerance": 0.01} if engine == "mv" else {"tolerance": tol}

    def run() -> list[float]:
        b = optimal.epsilon(mechs, bench_optimal.DELTA_G, **kw)
        return [b.lower, b.upper]

    return run


FDP_CASES = [(s, q, 1000) for s in (0.8, 1.0, 2.0) for q in (0.01, 0.001)]
FDP_READOUTS = ("from_pld", "attack_tpr", "advantage", "epsilon_at")


def _run_fdp(name: str) -> Callable[[], list[float]]:
    import optcomp
    from optcomp import Gaussian, PoissonSubsampled, fdp

    _, sigma, q, steps, readout = name.split(":")

    def fresh() -> Any:
        return optcomp.compose((PoissonSubsampled(Gaussian(float(sigma)), sampling_rate=float(q)), int(steps)))

    def run() -> list[float]:
        if readout == "from_pld":
            b = fdp.from_pld(fresh())
            return [float(b.lower(0.01)), float(b.upper(0.01))]  # the curve at α = 0.01
        if readout == "attack_tpr":
            r = fdp.attack_tpr(fresh(), 0.01)
        elif readout == "advantage":
            r = fdp.advantage(fresh())
        else:
            r = fdp.epsilon_at(fresh(), 1e-5)
        return [r.lower, r.upper]

    return run


RDP_CASES = [(1.1, 256 / 60000, 3516), (0.8, 0.01, 1000), (2.0, 0.1, 100), (1.0, 0.001, 100000)]


def _run_rdp(name: str) -> Callable[[], list[float]]:
    from optcomp import dpsgd, rdp
    from optcomp.mechanisms import Gaussian, PoissonSubsampled

    _, idx, what = name.split(":")
    sigma, q, steps = RDP_CASES[int(idx)]

    def run() -> list[float]:
        if what == "dpsgd":
            b = dpsgd.epsilon(sigma, q, steps, 1e-5)
            return [b.lower, b.upper]
        kw = {} if what == "default" else {"orders": [a for a in rdp.DEFAULT_ORDERS if a == int(a)]}
        return [rdp.compose((PoissonSubsampled(Gaussian(sigma), sampling_rate=q), steps), **kw).epsilon(1e-5).value]

    return run


PLANNER_PLANS = ("census", "20", "100", "1000")


def _run_planner(name: str) -> Callable[[], list[float]]:
    import bench_planner

    from optcomp.planner import allocate, load_plan, plan_from_dict

    _, which, mode = name.split(":")
    if which == "census":
        plan = load_plan(HERE.parent / "examples" / "census_plan.toml")
    else:
        plan = plan_from_dict(bench_planner.random_plan(int(which)))

    def run() -> list[float]:
        r = allocate(plan, mode)
        return [r.scale, r.epsilon_certified]

    return run


def workloads() -> list[tuple[str, str, dict[str, str]]]:
    """(name, label, extra environment) of every workload, in table order."""
    out = [(n, label, {"BEFORE_AFTER_CASE": json.dumps({"items": case.items, "delta": case.delta})})
           for n, label, case in _pld_cases()]
    plain: list[tuple[str, str]] = []
    plain += [(f"optimal:{n}", f"optimal.epsilon {n}") for n in OPTIMAL_NAMES]
    plain += [(f"fdp:{s}:{q}:{k}:{r}", f"{r} σ={s} q={q} steps={k}") for s, q, k in FDP_CASES for r in FDP_READOUTS]
    for i, (s, q, k) in enumerate(RDP_CASES):
        for what in ("integer", "default", "dpsgd"):
            label = f"dpsgd.epsilon σ={s} q={q:.4g} steps={k}" if what == "dpsgd" else f"rdp ε ({what} orders) σ={s} q={q:.4g} steps={k}"
            plain.append((f"rdp:{i}:{what}", label))
    modes = ("basic", "advanced", "kov", "optimal", "mechanism_aware")
    plain += [(f"planner:{p}:{m}", f"planner {p} statistics, {m}") for p in PLANNER_PLANS for m in modes]
    return out + [(n, label, {}) for n, label in plain]


RUNNERS: dict[str, Callable[[str], Callable[[], list[float]]]] = {
    "pld": _run_pld, "optimal": _run_optimal, "fdp": _run_fdp, "rdp": _run_rdp, "planner": _run_planner,
}


def child(name: str) -> None:
    """Run one workload in this interpreter and print JSON {values, seconds}."""
    run = RUNNERS[name.split(":")[0]](name)
    import _cold

    _cold.import_libraries()  # imports only: the call below is cold
    values, wall, cpu = _cold.timed(run)
    print(json.dumps({"values": values, "seconds": cpu if os.environ.get("BEFORE_AFTER_CLOCK") == "cpu" else wall}))


# ------------------------------------------------------------------------------------------------
# Parent: alternate trees, compare.
# ------------------------------------------------------------------------------------------------


def measure(tree: Path, name: str, timeout: float, extra: dict[str, str]) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(tree.resolve()), **extra)
    try:
        res = subprocess.run([sys.executable, __file__, "--child", name], capture_output=True, text=True,
                             timeout=timeout, env=env, check=False, cwd=HERE)
    except subprocess.TimeoutExpired:
        return {"skipped": f"> {timeout:.0f} s"}
    if res.returncode != 0:
        return {"skipped": "error: " + (res.stderr.strip().splitlines() or ["?"])[-1][:100]}
    out: dict[str, Any] = json.loads(res.stdout.strip().splitlines()[-1])
    return out


def verdict(group: str, before: list[float], after: list[float]) -> str:
    if before == after:
        return "same"
    if group == "planner":  # (scale, certified ε): a larger scale is better; ε must stay within budget
        rel = (after[0] - before[0]) / before[0]
        if rel == 0.0:
            return "same scale, ε moved"
        return f"larger scale ({rel:+.1e})" if rel > 0 else f"**smaller scale** ({rel:+.1e})"
    if len(before) == 1:
        return "lower (tighter)" if after[0] < before[0] else "**higher**"
    lo0, hi0 = before
    lo1, hi1 = after
    if lo1 >= lo0 and hi1 <= hi0:
        return "tighter (inside)"
    return f"**moved** (upper {'+' if hi1 > hi0 else '-'}{abs(hi1 - hi0) / max(abs(hi0), 1e-300):.1e} rel.)"


def fmt_values(v: list[float]) -> str:
    if len(v) == 1:
        return f"{v[0]:.9g}"
    return f"[{v[0]:.10g}, {v[1]:.10g}]"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--child")
    ap.add_argument("--before", type=Path)
    ap.add_argument("--after", type=Path, default=HERE.parent / "src")
    ap.add_argument("--only", default="", help="comma-separated name prefixes (e.g. pld,optimal)")
    ap.add_argument("--output", type=Path, default=HERE / "BEFORE_AFTER.md")
    ap.add_argument("--repeats", type=int, default=REPEATS, help="runs per tree below REPEAT_BELOW_S (minimum kept)")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="time the call by wall clock, or by the process's CPU time (a loaded shared machine)")
    args = ap.parse_args(argv)
    os.environ["BEFORE_AFTER_CLOCK"] = args.clock
    if args.child:
        child(args.child)
        return 0
    if args.before is None:
        ap.error("--before is required")
    prefixes = tuple(p for p in args.only.split(",") if p)
    rows = []
    t_start = time.time()
    for name, label, extra in workloads():
        if prefixes and not name.startswith(prefixes):
            continue
        group = name.split(":")[0]
        a = measure(args.after, name, 600.0, extra)
        timeout = max(MIN_TIMEOUT_S, TIMEOUT_FACTOR * a.get("seconds", MIN_TIMEOUT_S))
        b = measure(args.before, name, timeout, extra)
        if "seconds" in a and a["seconds"] < REPEAT_BELOW_S:
            for _ in range(args.repeats - 1):
                a2 = measure(args.after, name, 600.0, extra)
                if "seconds" in a2:
                    a["seconds"] = min(a["seconds"], a2["seconds"])
                if "seconds" in b and b["seconds"] < REPEAT_BELOW_S:
                    b2 = measure(args.before, name, timeout, extra)
                    if "seconds" in b2:
                        b["seconds"] = min(b["seconds"], b2["seconds"])
        if "values" in a and "values" in b:
            v = verdict(group, b["values"], a["values"])
            ratio = f"{a['seconds'] / b['seconds']:.2f}"
        else:
            v, ratio = "—", "—"
        cells = [b, a]
        answers = [fmt_values(c["values"]) if "values" in c else c["skipped"] for c in cells]
        times = [f"{c['seconds']:.3f}" if "seconds" in c else "—" for c in cells]
        row = f"| {group} | {label} | {answers[0]} | {answers[1]} | {v} | {times[0]} | {times[1]} | {ratio} |"
        rows.append(row)
        print(row, flush=True)
    load = os.getloadavg()[0]
    lines = [
        "# Before/after: optcomp against an earlier tree on the benchmark workloads",
        "",
        (f"Before: `{args.before}`; after: `{args.after}`. {platform.machine()}, Python {platform.python_version()}, "
         f"{os.cpu_count()} cores, 1-min load average {load:.1f} at the end; {time.time() - t_start:.0f} s in all. "
         f"Each cell: a fresh interpreter per tree, before and after alternated, {args.clock} seconds of the call "
         f"(minimum of {args.repeats} runs below {REPEAT_BELOW_S:g} s). Brackets are [lower, upper] (planner: "
         "[common scale, certified ε]; RDP: its ε). *tighter*: the after bracket lies inside the before one. "
         f"A before run is stopped after max({MIN_TIMEOUT_S:g} s, {TIMEOUT_FACTOR:g} × the after time)."),
        "",
        "| group | workload | before | after | after vs before | before s | after s | after/before |",
        "|---|---|---|---|---|---|---|---|",
        *rows,
        "",
    ]
    args.output.write_text("\n".join(lines), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Before/after table: the benchmark workloads answered by two source trees of optcomp, side by side.

Run ``python benchmarks/before_after.py --before OLD/src [--after src]``: every workload runs in a fresh
interpreter per tree (``PYTHONPATH`` = that tree), alternating before/after; the time is wall-clock seconds
of the accounting call only, cold (``benchmarks/_cold.py``: the interpreter imports optcomp and computes nothing
before the call; import time excluded), the minimum over up to three cold runs (runs under 3 s are repeated,
each in a fresh interpreter). It writes ``benchmarks/BEFORE_AFTER.md``: per workload the two answers, whether the
after answer is the same, tighter (its bracket inside the before one) or different, and the time ratio.

Workloads are those of ``bench_pld.py`` (optcomp's own rows: default accuracy and dp_accounting's grid step),
``bench_rows.py`` (the 21 single rows), ``bench_profile.py`` (the deep-tail profile and ε(δ) sweeps on one PLD),
``bench_optimal.py`` (optcomp rows), ``bench_fdp.py`` (the 1,000-step readouts), ``bench_rdp.py``
(optcomp's RDP ε and the PLD bracket) and ``bench_planner.py`` (every mode on every plan); a sample of sweep
rows (one chain per sampler and query, ``sweep._evaluate.evaluate_chain``); and the runs whose lower end
comes from a dominated composition (``runs``: every DP-SGD sampler's ε, δ and dominating-pair brackets and
inverses, compositions of truncated-Poisson and fixed-size steps, dp_accounting events, BandMF, group
privacy), each written with calls both trees accept. Peers are not run: this table compares optcomp with
itself.
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


def _run_rows(name: str) -> Callable[[], list[float]]:
    import bench_rows

    import optcomp
    from optcomp import mechanisms as m

    _, row = bench_rows.build_rows()[int(name.split(":")[1])]
    sigma, q, steps, delta = row

    def run() -> list[float]:
        b = optcomp.compose((m.PoissonSubsampled(m.Gaussian(sigma=sigma), sampling_rate=q), steps)).epsilon(delta)
        return [b.lower, b.upper]

    return run


def _run_profile(name: str) -> Callable[[], list[float]]:
    import bench_profile

    row = name.split(":", 1)[1]

    def run() -> list[float]:
        return [x for pair in bench_profile.child(row)["brackets"] for x in pair]

    return run


#: Sweep sample: one chain per (sampler, query), ε at δ and δ at ε over a few T (``sweep._evaluate``).
SWEEP_SAMPLERS: dict[str, dict[str, Any]] = {
    "poisson": {}, "fixed_size": {"sampling": "fixed_size"}, "shuffle": {"sampling": "shuffle"},
    "truncated_poisson": {"sampling": "truncated_poisson", "dataset_size": 2000, "max_batch_size": 30},
    "user": {"examples_per_user": 3}, "balls_in_bins": {"sampling": "balls_in_bins"},
}


def _sweep_doc(sampler: str, query: str) -> dict[str, Any]:
    axes: dict[str, Any] = {"noise_multiplier": [0.9, 1.6], "sampling_rate": 0.01, "steps": [100, 400, 1600]}
    axes.update({k: v for k, v in SWEEP_SAMPLERS[sampler].items()})
    axes["delta" if query == "epsilon" else "epsilon"] = [1e-5, 1e-7] if query == "epsilon" else [0.5, 2.0]
    if sampler == "balls_in_bins":
        axes["steps"] = [100, 300]
    return {"query": query, "axes": axes}


def _run_sweep(name: str) -> Callable[[], list[float]]:
    from optcomp.sweep import grid_points
    from optcomp.sweep._evaluate import chain_key, evaluate_chain

    _, sampler, query = name.split(":")
    points = grid_points(_sweep_doc(sampler, query))

    def run() -> list[float]:
        chains: dict[Any, list[Any]] = {}
        for p in points:
            chains.setdefault(chain_key(p), []).append(p)
        out: list[float] = []
        for chain in chains.values():
            for row in evaluate_chain(chain):
                out += [-1.0, -1.0] if row.lower is None or row.upper is None else [row.lower, row.upper]
        return out

    return run


#: ``runs``: the answers whose lower end comes from a dominated composition (issue 33's run bracket).
RUN_SAMPLERS: dict[str, dict[str, Any]] = {
    "poisson": {}, "fixed_size": {"sampling": "fixed_size"}, "shuffle": {"sampling": "shuffle"},
    "truncated_poisson": {"sampling": "truncated_poisson", "dataset_size": 1000, "max_batch_size": 12},
    "balls_in_bins": {"sampling": "balls_in_bins"}, "user": {"examples_per_user": 3},
}
RUN_CASES = [(1.0, 0.01, 200), (0.8, 0.1, 50), (2.0, 0.25, 3)]
RUN_EVENTS: dict[str, Any] = {
    "truncated": {"class_name": "SelfComposedDpEvent", "count": 50, "event": {
        "class_name": "TruncatedSubsampledGaussianDpEvent", "dataset_size": 1000, "sampling_probability": 0.01,
        "truncated_batch_size": 12, "noise_multiplier": 1.0}},
    "allocation k=4": {"class_name": "ComposedDpEvent", "events": [
        {"class_name": "RandomAllocationDpEvent", "event": {"class_name": "GaussianDpEvent", "noise_multiplier": 2.0},
         "num_selected": 4, "num_steps": 8}, {"class_name": "GaussianDpEvent", "noise_multiplier": 1.0}]},
    "allocation k=1": {"class_name": "RandomAllocationDpEvent", "event": {
        "class_name": "GaussianDpEvent", "noise_multiplier": 1.0}, "num_selected": 1, "num_steps": 10},
    "fixed size": {"class_name": "SelfComposedDpEvent", "count": 20, "event": {
        "class_name": "SampledWithoutReplacementDpEvent", "source_dataset_size": 1000, "sample_size": 50,
        "event": {"class_name": "GaussianDpEvent", "noise_multiplier": 1.0}}},
}


def _run_runs(name: str) -> Callable[[], list[float]]:
    from optcomp import Accuracy, compose, dpsgd, matrix
    from optcomp.interop import from_dp_event
    from optcomp.mechanisms import (
        Gaussian,
        Laplace,
        PoissonSubsampled,
        SubsampledWithoutReplacement,
        TruncatedPoissonGaussian,
    )

    kind, *args = name.split(":")[1:]

    def pair(b: Any) -> list[float]:
        return [float(b.lower), float(b.upper)]

    def run() -> list[float]:
        if kind == "dpsgd":
            sampler, i = args
            sigma, q, steps = RUN_CASES[int(i)]
            kw = RUN_SAMPLERS[sampler]
            brackets = dpsgd.epsilon_brackets(sigma, q, steps, 1e-5, accuracy=Accuracy(relative_width=1e-2), **kw)
            return (pair(dpsgd.epsilon(sigma, q, steps, 1e-5, **kw)) + pair(dpsgd.delta(sigma, q, steps, 1.0, **kw))
                    + pair(brackets[0]) + pair(brackets[1]))
        if kind == "inverse":
            kw = RUN_SAMPLERS[args[0]]
            acc = Accuracy(relative_width=1e-2)
            sigma = dpsgd.noise_multiplier(2.0, 0.05, 40, 1e-5, accuracy=acc, **kw)
            try:
                steps = float(dpsgd.steps(4.0, 1.5, 0.05, 1e-5, accuracy=acc, max_steps=2000, **kw))
            except ValueError:
                steps = -1.0
            return [sigma, sigma, steps, steps]  # two degenerate "brackets": compared for equality
        if kind == "tradeoff":
            import numpy as np

            t = dpsgd.tradeoff(1.0, 0.05, 30, sampling=args[0])
            a = np.linspace(0.0, 1.0, 21)
            return [float(x) for pr in zip(np.asarray(t.lower(a)), np.asarray(t.upper(a))) for x in pr]
        if kind == "compose":
            truncated = TruncatedPoissonGaussian(1.0, dataset_size=500, sampling_rate=0.02, max_batch_size=12)
            fixed = SubsampledWithoutReplacement(Gaussian(1.0, sensitivity=2.0), sampling_rate=0.05)
            comp = {"truncated": compose((truncated, 100)), "fixed size": compose((fixed, 30)),
                    "mixed": compose((truncated, 20), Laplace(5.0)), "fixed size once": compose(fixed)}[args[0]]
            lo, hi = comp.delta_curve([0.0, 0.5, 1.0, 3.0])
            return pair(comp.epsilon(1e-6)) + pair(comp.delta(0.5)) + [float(x) for pr in zip(lo, hi) for x in pr]
        if kind == "event":
            ev = from_dp_event(RUN_EVENTS[args[0]], neighbouring="substitution" if args[0] == "fixed size" else "add_remove")
            return pair(ev.epsilon(1e-5)) + pair(ev.delta(1.0))
        if kind == "bandmf":
            s = matrix.bsr(64, 8)
            kw: dict[str, Any] = {"cycle_length": 8, "sampling_rate": 0.3, "noise_multiplier": 2.0}
            extra: dict[str, Any] = {"public": {"partition_public": True}, "hidden": {},
                                     "truncated": {"group_size": 100, "max_batch_size": 35, "partition_public": True},
                                     "user": {"examples_per_user": 2}}[args[0]]
            r = matrix.bandmf(s, **kw, **extra)
            return pair(r.epsilon(1e-5)) + pair(r.delta(1.0)) + pair(r.revealed_epsilon(1e-5))
        # group privacy: Composition.group_epsilon after issue 33, fdp.group_epsilon before
        fixed = SubsampledWithoutReplacement(Gaussian(1.0, sensitivity=2.0), sampling_rate=0.05)
        comp, g = {"dpsgd g=4": (compose((PoissonSubsampled(Gaussian(1.0), sampling_rate=0.01), 100)), 4),
                   "fixed size g=2": (compose((fixed, 10)), 2), "laplace g=8": (compose((Laplace(10.0), 50)), 8)}[args[0]]
        if hasattr(comp, "group_epsilon"):
            return pair(comp.group_epsilon(g, 1e-5))
        from optcomp import fdp

        return pair(fdp.group_epsilon(comp, g, 1e-5))  # type: ignore[attr-defined]

    return run


def _runs_names() -> list[tuple[str, str]]:
    out = [(f"runs:dpsgd:{s}:{i}", f"dpsgd ε, δ, brackets {s} σ={c[0]} q={c[1]} T={c[2]}")
           for s in RUN_SAMPLERS for i, c in enumerate(RUN_CASES)]
    out += [(f"runs:inverse:{s}", f"dpsgd noise_multiplier, steps ({s})") for s in RUN_SAMPLERS]
    out += [(f"runs:tradeoff:{s}", f"dpsgd.tradeoff ({s}) at 21 α") for s in ("poisson", "fixed_size")]
    out += [(f"runs:compose:{c}", f"compose {c}: ε, δ, δ curve") for c in ("truncated", "fixed size", "mixed",
                                                                          "fixed size once")]
    out += [(f"runs:event:{e}", f"dp_event {e}: ε, δ") for e in RUN_EVENTS]
    out += [(f"runs:bandmf:{b}", f"BandMF {b}: ε, δ, revealed ε") for b in ("public", "hidden", "truncated", "user")]
    out += [(f"runs:group:{g}", f"group ε {g}") for g in ("dpsgd g=4", "fixed size g=2", "laplace g=8")]
    return out


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
    import bench_profile
    import bench_rows

    plain += [(f"rows:{i}", bench_rows._row_name(kind, row)) for i, (kind, row) in enumerate(bench_rows.build_rows())]
    plain += [(f"profile:{r}", f"bench_profile {r}") for r in bench_profile.ROWS]
    plain += [(f"sweep:{s}:{q}", f"sweep chain {s}, {q} queries") for s in SWEEP_SAMPLERS for q in ("epsilon", "delta")]
    plain += _runs_names()
    return out + [(n, label, {}) for n, label in plain]


RUNNERS: dict[str, Callable[[str], Callable[[], list[float]]]] = {
    "pld": _run_pld, "optimal": _run_optimal, "fdp": _run_fdp, "rdp": _run_rdp, "planner": _run_planner,
    "rows": _run_rows, "profile": _run_profile, "sweep": _run_sweep, "runs": _run_runs,
}


def child_batch(group: str) -> None:
    """``--batch``: every workload of ``group`` in this one interpreter (one warm-up), printing JSON
    {name: {values, seconds} or {skipped}} — answers only; the seconds are warm CPU time, not a cold process."""
    import optcomp

    optcomp.compose((optcomp.Gaussian(1.0), 2)).epsilon(1e-5)  # warm-up: imports and caches
    cases_file = os.environ.get("BEFORE_AFTER_CASES")
    cases = json.loads(Path(cases_file).read_text(encoding="utf-8")) if cases_file else {}
    only = tuple(p for p in os.environ.get("BEFORE_AFTER_ONLY", "").split(",") if p) or ("",)
    out: dict[str, Any] = {}
    for name, _, _ in workloads():
        if name.split(":")[0] != group or not name.startswith(only):
            continue
        if name in cases:
            os.environ["BEFORE_AFTER_CASE"] = cases[name]
        try:
            run = RUNNERS[group](name)
            c0 = time.process_time()
            out[name] = {"values": run(), "seconds": time.process_time() - c0}
        except Exception as exc:  # noqa: BLE001 (a row that fails is reported as skipped, with its error)
            out[name] = {"skipped": f"error: {type(exc).__name__}: {str(exc)[:80]}"}
    print(json.dumps(out))


def measure_batch(tree: Path, group: str, cases: dict[str, str]) -> dict[str, Any]:
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as f:
        json.dump(cases, f)  # the pld cases' item lists are too long for an environment variable
    env = dict(os.environ, PYTHONPATH=str(tree.resolve()), BEFORE_AFTER_CASES=f.name)
    try:
        res = subprocess.run([sys.executable, __file__, "--child-batch", group], capture_output=True, text=True,
                             env=env, check=False, cwd=HERE)
    finally:
        Path(f.name).unlink()
    if res.returncode != 0:
        return {"__error__": (res.stderr.strip().splitlines() or ["?"])[-1][:200]}
    out: dict[str, Any] = json.loads(res.stdout.strip().splitlines()[-1])
    return out


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
    if len(before) != 2:  # several brackets (lower, upper, lower, upper, …): compared pair by pair
        if len(before) != len(after):
            return "**moved** (different length)"
        moved = [i // 2 for i in range(0, len(before), 2)
                 if not (after[i] >= before[i] and after[i + 1] <= before[i + 1])]
        return "tighter (inside)" if not moved else f"**moved** ({len(moved)} of {len(before) // 2} brackets)"
    lo0, hi0 = before
    lo1, hi1 = after
    if lo1 >= lo0 and hi1 <= hi0:
        return "tighter (inside)"
    return f"**moved** (upper {'+' if hi1 > hi0 else '-'}{abs(hi1 - hi0) / max(abs(hi0), 1e-300):.1e} rel.)"


def fmt_values(v: list[float]) -> str:
    if len(v) == 1:
        return f"{v[0]:.9g}"
    if len(v) > 2:  # several brackets: the first, and how many
        return f"[{v[0]:.10g}, {v[1]:.10g}] … ({len(v) // 2} brackets)"
    return f"[{v[0]:.10g}, {v[1]:.10g}]"


def _row(group: str, label: str, b: dict[str, Any], a: dict[str, Any]) -> str:
    """One table row: the two answers, the verdict, the two times and their ratio."""
    if "values" in a and "values" in b:
        v = verdict(group, b["values"], a["values"])
        ratio = f"{a['seconds'] / b['seconds']:.2f}" if b["seconds"] > 0 else "—"
    else:
        v, ratio = "—", "—"
    answers = [fmt_values(c["values"]) if "values" in c else c["skipped"] for c in (b, a)]
    times = [f"{c['seconds']:.3f}" if "seconds" in c else "—" for c in (b, a)]
    return f"| {group} | {label} | {answers[0]} | {answers[1]} | {v} | {times[0]} | {times[1]} | {ratio} |"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--child")
    ap.add_argument("--child-batch")
    ap.add_argument("--batch", action="store_true",
                    help="answers only: each group's workloads in one interpreter per tree (warm CPU seconds)")
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
    if args.child_batch:
        child_batch(args.child_batch)
        return 0
    if args.before is None:
        ap.error("--before is required")
    prefixes = tuple(p for p in args.only.split(",") if p)
    os.environ["BEFORE_AFTER_ONLY"] = args.only  # the batch children run only these
    rows = []
    t_start = time.time()
    batches: dict[tuple[str, str], dict[str, Any]] = {}
    for name, label, extra in workloads():
        if prefixes and not name.startswith(prefixes):
            continue
        group = name.split(":")[0]
        if args.batch:
            cases = {n: e["BEFORE_AFTER_CASE"] for n, _, e in workloads() if "BEFORE_AFTER_CASE" in e}
            for side, tree in (("after", args.after), ("before", args.before)):
                if (side, group) not in batches:
                    batches[side, group] = measure_batch(tree, group, cases)
            a = batches["after", group].get(name, {"skipped": batches["after", group].get("__error__", "missing")})
            b = batches["before", group].get(name, {"skipped": batches["before", group].get("__error__", "missing")})
            rows.append(_row(group, label, b, a))
            print(rows[-1], flush=True)
            continue
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
        rows.append(_row(group, label, b, a))
        print(rows[-1], flush=True)
    load = os.getloadavg()[0]
    lines = [
        "# Before/after: optcomp against an earlier tree on the benchmark workloads",
        "",
        (f"Before: `{args.before}`; after: `{args.after}`. {platform.machine()}, Python {platform.python_version()}, "
         f"{os.cpu_count()} cores, 1-min load average {load:.1f} at the end; {time.time() - t_start:.0f} s in all. "
         + (("Answers only (--batch): each group's workloads in one interpreter per tree after one warm-up; the "
             "seconds are warm CPU seconds of each call, not a cold process. ") if args.batch else
            (f"Each cell: a fresh interpreter per tree, before and after alternated, {args.clock} seconds of the call "
             f"(minimum of {args.repeats} runs below {REPEAT_BELOW_S:g} s). A before run is stopped after "
             f"max({MIN_TIMEOUT_S:g} s, {TIMEOUT_FACTOR:g} × the after time). "))
         + "Brackets are [lower, upper] (planner: [common scale, certified ε]; RDP: its ε; several brackets: the "
         "first shown, all compared). *tighter*: the after bracket lies inside the before one."),
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

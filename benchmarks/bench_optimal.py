"""Benchmark of optimal composition of (ε, δ)-DP black boxes (issue 8): optcomp vs dp_accounting vs MV Thm 1.7.

Cases (all δ_i = 0, target δ_g = 1e-6):

* distinct real ε_i ~ U[0.001, 0.1] drawn by ``numpy.random.default_rng(20261121).uniform(0.001, 0.1, k)``
  for k ∈ {10², 10³, 10⁴, 10⁵} (k = 10⁴ is the issue's draw), at tolerance 1e-3 (and 1e-4 for 10⁴);
* homogeneous k copies of (0.01, 0), k = 10³ … 10⁹, and a plain list of 10⁷ copies of (0.1, 0) (pooling).

Peers: dp_accounting 0.6 composing the same black boxes (``pld_lib.from_privacy_parameters(
DifferentialPrivacyParameters(ε_i, 0), value_discretization_interval=1e-4)``, composed one by one or by
``self_compose``; its pessimistic point estimate is checked against optcomp's certified optimal δ), and
``method="mv"`` (MV Thm 1.7, η = 0.01) where its own cost estimate is under the budget.

Every cell is cold (``benchmarks/_cold.py``): a fresh interpreter (``--case``) that imported the libraries and
computed nothing else, so that its time is a cold-process number and its peak RSS its own; time is wall-clock
of that one call. Writes ``benchmarks/RESULTS_optimal.md``.
Run: ``python benchmarks/bench_optimal.py`` (``--quick``: smaller budget, fewer peer cells).
"""

from __future__ import annotations

import json
import os
import platform
import resource
import sys
import time
from pathlib import Path

import numpy as np

DELTA_G = 1e-6
HOM_EPS = 0.01
DP_INTERVAL = 1e-4
SEED = 20261121
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _cold  # the cold-timing policy and tools (benchmarks/_cold.py)


def _het(k: int) -> list[tuple[float, float]]:
    return [(float(e), 0.0) for e in np.random.default_rng(SEED).uniform(0.001, 0.1, k)]


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def run_case(name: str) -> dict[str, object]:
    """One cell, in this (fresh) interpreter."""
    from optcomp import optimal

    _cold.import_libraries(*(("dp_accounting.pld.privacy_loss_distribution",) if ":dp:" in name else ()))
    kind, engine, size, *rest = name.split(":")
    k = int(float(size))
    tol = float(rest[0]) if rest else optimal.DEFAULT_TOLERANCE
    if kind == "het":
        mechs: object = _het(k)
    elif kind == "pooled":
        mechs = [(0.1, 0.0)] * k
    else:
        mechs = optimal.homogeneous(HOM_EPS, 0.0, k)
    base = _rss_mb()
    _cold.clear_caches()  # cold: nothing the call computes comes from before it
    t0 = time.perf_counter()
    if engine == "optcomp":
        b = optimal.epsilon(mechs, DELTA_G, tolerance=tol)  # type: ignore[arg-type]
        out: dict[str, object] = {"lower": b.lower, "upper": b.upper}
    elif engine == "mv":
        b = optimal.epsilon(mechs, DELTA_G, method="mv", tolerance=0.01)  # type: ignore[arg-type]
        out = {"lower": b.lower, "upper": b.upper}
    else:
        from dp_accounting.pld import common
        from dp_accounting.pld import privacy_loss_distribution as pld_lib

        def one(e: float) -> pld_lib.PrivacyLossDistribution:
            return pld_lib.from_privacy_parameters(
                common.DifferentialPrivacyParameters(e, 0.0), value_discretization_interval=DP_INTERVAL
            )

        if kind == "hom":
            pld = one(HOM_EPS).self_compose(k)
        else:
            eps_list = [e for e, _ in mechs]  # type: ignore[attr-defined]
            pld = one(eps_list[0])
            for e in eps_list[1:]:
                pld = pld.compose(one(e))
        out = {"point": float(pld.get_epsilon_for_delta(DELTA_G))}
    out["seconds"] = time.perf_counter() - t0
    out["rss_mb"] = _rss_mb()
    out["rss_base_mb"] = base
    if engine == "dp":
        check = optimal.delta(mechs, float(out["point"]), tolerance=1e-4)  # type: ignore[arg-type]
        out["delta_at_point"] = [check.lower, check.upper]
    return out


def mv_estimate(name: str) -> float:
    from optcomp import optimal
    from optcomp.optimal._mv import mv_cost_seconds
    from optcomp.optimal._spec import spec

    kind, _, size = name.split(":")[:3]
    k = int(float(size))
    mechs = _het(k) if kind == "het" else optimal.homogeneous(HOM_EPS, 0.0, k)
    return mv_cost_seconds(spec(mechs), 0.01)


def child(name: str, timeout: float) -> dict[str, object]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(HERE.parent / "src") + os.pathsep + env.get("PYTHONPATH", "")
    result: dict[str, object] = _cold.run_child([__file__, "--case", name], timeout=timeout, env=env)
    if "error" in result:
        error = str(result["error"])
        return {"skipped": f"> {timeout:.0f} s (killed)" if error.startswith("timeout") else f"error: {error}"}
    return result


def fmt(name: str, r: dict[str, object]) -> str:
    kind, engine, size, *rest = name.split(":")
    label = {"optcomp": "optcomp (auto)", "mv": "MV Thm 1.7, η = 0.01", "dp": f"dp_accounting PLD h={DP_INTERVAL:g}"}[engine]
    if rest:
        label += f", tolerance {rest[0]}"
    case = {"het": "distinct ε_i", "hom": "homogeneous (0.01, 0)", "pooled": "list of (0.1, 0) copies"}[kind]
    head = f"| {case} | {float(size):.0e} | {label} |"
    if "skipped" in r:
        return f"{head} {r['skipped']} | | | |"
    mem = f"{float(r['rss_mb']):.0f} (base {float(r['rss_base_mb']):.0f})"  # type: ignore[arg-type]
    if "point" in r:
        lo, hi = r["delta_at_point"]  # type: ignore[misc]
        verdict = "valid" if float(hi) <= DELTA_G else ("**not (ε, δ_g)-DP**" if float(lo) > DELTA_G else "undecided")
        return f"{head} {float(r['seconds']):.3f} | {float(r['point']):.9f} (point) | optimal δ at it ∈ [{lo:.10g}, {hi:.10g}]: {verdict} | {mem} |"  # type: ignore[arg-type]
    lo, hi = float(r["lower"]), float(r["upper"])  # type: ignore[arg-type]
    return f"{head} {float(r['seconds']):.3f} | [{lo:.9f}, {hi:.9f}] | width {hi - lo:.2e} | {mem} |"  # type: ignore[arg-type]


def main(argv: list[str]) -> None:
    if "--case" in argv:
        print(json.dumps(run_case(argv[argv.index("--case") + 1])))
        return
    quick = "--quick" in argv
    budget = 60.0 if quick else 600.0
    het_sizes = ["1e2", "1e3", "1e4", "1e5"]
    names = [f"het:optcomp:{s}" for s in het_sizes] + ["het:optcomp:1e4:1e-4"]
    names += [f"het:mv:{s}" for s in het_sizes]
    names += [f"het:dp:{s}" for s in (het_sizes[:2] if quick else het_sizes[:3])]
    hom_sizes = ["1e3", "1e4", "1e5", "1e6", "1e7", "1e8", "1e9"]
    names += [f"hom:optcomp:{s}" for s in hom_sizes] + ["pooled:optcomp:1e7"]
    names += [f"hom:dp:{s}" for s in (hom_sizes[:2] if quick else hom_sizes[:4])]
    rows = []
    load = os.getloadavg()[0]
    for name in names:
        if ":mv:" in name:
            est = mv_estimate(name)
            if est > min(budget, 120.0):
                rows.append(fmt(name, {"skipped": f"refused: estimated {est:.3g} s"}))
                print(rows[-1], flush=True)
                continue
        rows.append(fmt(name, child(name, budget)))
        print(rows[-1], flush=True)
    lines = [
        "# Optimal composition of (ε, δ)-DP black boxes (issue 8)",
        "",
        f"Target δ_g = {DELTA_G:g}, all δ_i = 0. Distinct ε_i: `numpy.random.default_rng({SEED}).uniform(0.001, 0.1, k)`.",
        f"One cold run{' (--quick)' if quick else ''}: wall-clock seconds of one call in a fresh interpreter that computed",
        f"nothing before it; memory = peak RSS of that interpreter in MB (base = after imports). {platform.machine()}, Python",
        f"{platform.python_version()}, numpy {np.__version__}, {os.cpu_count()} CPUs, load average {load:.1f} at start.",
        "optcomp returns a certified bracket of OptComp; dp_accounting a pessimistic point estimate, checked",
        "against optcomp's certified optimal δ at that ε.",
        "",
        "| case | k | engine | time (s) | ε_g | width / check | memory (MB) |",
        "|---|---|---|---|---|---|---|",
        *rows,
    ]
    (HERE / "RESULTS_optimal.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {HERE / 'RESULTS_optimal.md'}")


if __name__ == "__main__":
    main(sys.argv[1:])

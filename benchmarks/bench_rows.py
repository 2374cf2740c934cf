"""Single-row speed: optcomp at its default accuracy vs dp_accounting's default pessimistic PLD, side by side.

Issue 26 item 5. Rows: the 18-row DP-SGD grid σ ∈ {0.8, 1, 2} × q ∈ {0.01, 0.001} × T ∈ {10³, 10⁴, 10⁵} at
δ = 1e-5, plus the deep-tail rows of ``bench_pld.py`` (q = 0.01, σ = 1 at δ = 1e-10, 1e-12, 1e-15). Each row is
ε at δ for T Poisson-subsampled Gaussian steps under the **add/remove-one** relation on both sides:

* optcomp: ``optcomp.compose((PoissonSubsampled(Gaussian(σ), sampling_rate=q), T)).epsilon(δ)`` with
  ``DEFAULT_ACCURACY`` (certified bracket, relative width 1e-4; both directions of add/remove);
* dp_accounting: ``PLDAccountant()`` (its defaults: ``NeighborRel.ADD_OR_REMOVE_ONE``, value discretisation
  interval 1e-4, pessimistic estimate, both directions) composed with
  ``PoissonSampledDpEvent(q, GaussianDpEvent(σ))`` T times, then ``get_epsilon(δ)``: the pessimistic PLD alone.

Every measurement is cold (``benchmarks/_cold.py``): a fresh interpreter with single-threaded BLAS/OpenMP
(``OPENBLAS_NUM_THREADS`` etc. set before numpy is imported, and ``threadpoolctl.threadpool_limits(1)`` around
the call) that imports both libraries (import time excluded) and computes nothing before the timed call, every
optcomp cache empty and an empty disk-cache directory. Cells are interleaved (optcomp, dp_accounting, optcomp,
…) and repeated, each repeat cold; the table keeps the minimum CPU time (``time.process_time``) and the minimum
wall time of the repeats. Usage::

    python benchmarks/bench_rows.py [--repeats 3] [--only 0,5,17] [--output benchmarks/RESULTS_rows.md]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _cold

SINGLE_THREAD_ENV = _cold.SINGLE_THREAD_ENV
#: A child is killed after this many seconds.
CHILD_TIMEOUT_S = 300.0

Row = tuple[float, float, int, float]  # σ, q, T, δ


def build_rows() -> list[tuple[str, Row]]:
    rows: list[tuple[str, Row]] = []
    for q in (0.01, 0.001):
        for sigma in (0.8, 1.0, 2.0):
            for steps in (1000, 10_000, 100_000):
                rows.append(("grid", (sigma, q, steps, 1e-5)))
    for delta, steps in ((1e-10, 100_000), (1e-12, 10_000), (1e-15, 1000)):
        rows.append(("deep tail", (1.0, 0.01, steps, delta)))
    return rows


# ------------------------------------------------------------------------------------------------
# Child: one library, one row.
# ------------------------------------------------------------------------------------------------


def _optcomp(row: Row) -> dict[str, Any]:
    import optcomp
    from optcomp import mechanisms as m

    sigma, q, steps, delta = row
    b = optcomp.compose((m.PoissonSubsampled(m.Gaussian(sigma=sigma), sampling_rate=q), steps)).epsilon(delta)
    return {"lower": b.lower, "upper": b.upper}


def _dpa(row: Row) -> dict[str, Any]:
    import dp_accounting as dpa
    from dp_accounting.pld import pld_privacy_accountant

    sigma, q, steps, delta = row
    acc = pld_privacy_accountant.PLDAccountant()  # add/remove, interval 1e-4, pessimistic
    acc.compose(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma)), steps)
    return {"epsilon": float(acc.get_epsilon(delta))}


LIBS = {"optcomp": _optcomp, "dp_accounting": _dpa}
#: The peer's modules, imported before the timed call (as optcomp's are: ``_cold.import_libraries``).
PEERS = {"optcomp": (), "dp_accounting": ("dp_accounting", "dp_accounting.pld.pld_privacy_accountant")}


def child(lib: str, row: Row) -> None:
    import logging

    from threadpoolctl import threadpool_limits

    logging.disable(logging.WARNING)
    fn = LIBS[lib]
    _cold.import_libraries(*PEERS[lib])  # cold: nothing computed before the timed call
    with threadpool_limits(limits=1):
        out, wall, cpu = _cold.timed(lambda: fn(row))
        out["cpu"], out["wall"] = cpu, wall
    print(json.dumps(out))


def measure(lib: str, row: Row) -> dict[str, Any]:
    env = {**os.environ, **SINGLE_THREAD_ENV}
    cmd = [str(Path(__file__).resolve()), "--child", lib, "--row", json.dumps(row)]
    return _cold.run_child(cmd, timeout=CHILD_TIMEOUT_S, env=env)


# ------------------------------------------------------------------------------------------------
# Parent: interleave, keep minima, render.
# ------------------------------------------------------------------------------------------------


def _best(runs: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [r for r in runs if "error" not in r]
    if not ok:
        return runs[-1]
    out = dict(ok[0])
    out["cpu"] = min(r["cpu"] for r in ok)
    out["wall"] = min(r["wall"] for r in ok)
    return out


def _row_name(kind: str, row: Row) -> str:
    sigma, q, steps, delta = row
    return f"{kind}: σ={sigma:g} q={q:g} T={steps:g} δ={delta:g}"


def render(rows: list[tuple[str, Row]], res: list[dict[str, dict[str, Any]]], meta: dict[str, str]) -> str:
    lines = ["# Single-row speed: optcomp (default accuracy) vs dp_accounting's default pessimistic PLD", ""]
    lines += [f"- {k}: {v}" for k, v in meta.items()]
    lines += [
        "",
        (
        "ε at δ for T Poisson-subsampled Gaussian steps, add/remove-one relation on both sides (optcomp: both "
        "directions of add/remove; dp_accounting: `PLDAccountant()` defaults, `NeighborRel.ADD_OR_REMOVE_ONE`, "
        "value discretisation interval 1e-4, pessimistic PLD only, its `get_epsilon`). optcomp: "
        "`compose(...).epsilon(δ)` at `DEFAULT_ACCURACY` (relative width 1e-4), a certified bracket. Each cell "
        "is cold: a fresh interpreter with single-threaded BLAS/OpenMP (environment variables and "
        "`threadpoolctl.threadpool_limits(1)`) that imports both libraries and computes nothing before the timed "
        "call (no warm-up; every optcomp cache empty: `benchmarks/_cold.py`); cells interleaved, "
        "minimum over the repeats of CPU time (`process_time`) and of wall time. *ratio* = optcomp CPU time / "
        "dp_accounting CPU time (≤ 1: optcomp at least as fast). Script: `benchmarks/bench_rows.py`."
        ),
        "",
        (
            "| row | optcomp ε bracket | rel. width | dp_accounting ε (pessimistic) | optcomp CPU s "
            "| dp_accounting CPU s | ratio | optcomp wall s | dp_accounting wall s |"
        ),
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for (kind, row), r in zip(rows, res, strict=True):
        o, d = r["optcomp"], r["dp_accounting"]
        if "error" in o:
            ob, ow, oc, owall = f"error: {o['error']}", "—", math.nan, math.nan
        else:
            ob = f"[{o['lower']:.7g}, {o['upper']:.7g}]"
            ow = f"{(o['upper'] - o['lower']) / max(o['upper'], 0.01):.2g}"
            oc, owall = o["cpu"], o["wall"]
        de = f"error: {d['error']}" if "error" in d else f"{d['epsilon']:.7g}"
        dc, dwall = (math.nan, math.nan) if "error" in d else (d["cpu"], d["wall"])
        ratio = oc / dc if math.isfinite(dc) and math.isfinite(oc) and dc > 0 else math.nan
        lines.append(
            f"| {_row_name(kind, row)} | {ob} | {ow} | {de} | {oc:.4f} | {dc:.4f} | {ratio:.2f} | {owall:.4f} | {dwall:.4f} |"
        )
    faster = sum(
        1
        for r in res
        if "error" not in r["optcomp"] and "error" not in r["dp_accounting"]
        and r["optcomp"]["cpu"] <= r["dp_accounting"]["cpu"]
    )
    lines += ["", f"optcomp at least as fast (CPU) on {faster} of {len(rows)} rows.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--child")
    ap.add_argument("--row")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", default="", help="comma-separated row indices")
    ap.add_argument("--output", type=Path, default=HERE / "RESULTS_rows.md")
    args = ap.parse_args(argv)
    if args.child:
        sigma, q, steps, delta = json.loads(args.row)
        child(args.child, (float(sigma), float(q), int(steps), float(delta)))
        return 0
    rows = build_rows()
    if args.only:
        rows = [rows[int(i)] for i in args.only.split(",")]
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    runs: list[dict[str, list[dict[str, Any]]]] = [{lib: [] for lib in LIBS} for _ in rows]
    for _ in range(args.repeats):  # interleaved: every row and library once per round
        for i, (_, row) in enumerate(rows):
            for lib in LIBS:
                runs[i][lib].append(measure(lib, row))
        print(f"bench_rows: round done after {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    res = [{lib: _best(r[lib]) for lib in LIBS} for r in runs]
    from importlib.metadata import version

    meta = {
        "date (UTC)": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores (shared), load average at start {load0:.2f}, "
        f"at end {os.getloadavg()[0]:.2f}",
        "python": platform.python_version(),
        "optcomp": version("optcomp"),
        "dp-accounting": version("dp-accounting"),
        "repeats": f"{args.repeats} per cell (fresh interpreter each), interleaved",
        "total wall time": f"{time.perf_counter() - t0:.0f} s",
    }
    args.output.write_text(render(rows, res, meta), encoding="utf-8")
    print(f"bench_rows: wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

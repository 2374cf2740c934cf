"""Benchmark: a deep-tail privacy profile and an ε(δ) sweep on one PLD (issue 27 item 7).

Run ``python benchmarks/bench_profile.py [--before SRC]``. It writes ``benchmarks/RESULTS_profile.md``.
Each row is cold (``benchmarks/_cold.py``): it runs in a fresh interpreter (``python bench_profile.py --child ROW``,
imports excluded from the timing) that computes nothing before it with ``PYTHONPATH`` set to this checkout's ``src`` — and, with ``--before SRC``, once more with
another tree's ``src`` (e.g. ``git archive <commit> src | tar -x -C /tmp/before``), so that the two
columns come from one run on one machine. Times are ``time.process_time`` (CPU, all threads) and
``time.perf_counter`` (wall) around the accounting calls only; each row's brackets are printed so
that a reader can check they are the same (or narrower).

Rows:

* ``profile41``: ``compose((PoissonSubsampled(Gaussian(1), 0.01), 1000)).pld().delta_curve(ε)`` at
  41 points ε = 0, 0.5, …, 20 (the issue's deep-tail profile) on a fresh PLD;
* ``delta10``: ``pld.delta(10.0)`` on a fresh PLD of the same composition;
* ``sweep-…``: ``pld.epsilon(δ)`` for δ = 1e-4, …, 1e-8 in turn on *one* PLD (DP-SGD σ, q, T), the
  way a sweep asks; the later queries read the realisation the earlier ones built.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "RESULTS_profile.md"
SRC = HERE.parent / "src"
DELTAS = [1e-4, 1e-5, 1e-6, 1e-7, 1e-8]
SWEEPS = {"sweep-s1-q0.01-T1e3": (1.0, 0.01, 1000), "sweep-s1-q0.01-T1e4": (1.0, 0.01, 10000),
          "sweep-s0.8-q1e-3-T1e4": (0.8, 1e-3, 10000), "sweep-s3-q1e-4-T21544": (3.0, 1e-4, 21544)}
ROWS = ["profile41", "delta10", *SWEEPS]


def _dpsgd(sigma: float, q: float, steps: int) -> Any:
    from optcomp import compose
    from optcomp.mechanisms import Gaussian, PoissonSubsampled

    return compose((PoissonSubsampled(Gaussian(sigma=sigma), sampling_rate=q), steps)).pld()


def child(row: str) -> dict[str, Any]:
    """One row, timed cold (the PLD object is built outside the timing; it is lazy)."""
    import _cold
    import numpy as np

    _cold.import_libraries()  # imports only; the caches are emptied again right before each timed call

    if row in SWEEPS:
        pld = _dpsgd(*SWEEPS[row])
        _cold.clear_caches()
        c0, w0 = time.process_time(), time.perf_counter()
        out = [(b.lower, b.upper) for b in (pld.epsilon(d) for d in DELTAS)]
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
        return {"cpu": cpu, "wall": wall, "brackets": out}
    pld = _dpsgd(1.0, 0.01, 1000)
    _cold.clear_caches()
    if row == "delta10":
        c0, w0 = time.process_time(), time.perf_counter()
        b = pld.delta(10.0)
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
        return {"cpu": cpu, "wall": wall, "brackets": [(b.lower, b.upper)]}
    eps = np.linspace(0.0, 20.0, 41)
    c0, w0 = time.process_time(), time.perf_counter()
    lo, hi = pld.delta_curve(eps)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    width = float(np.max((hi - lo) / hi))
    return {"cpu": cpu, "wall": wall, "brackets": list(zip(lo.tolist(), hi.tolist(), strict=True)), "width": width}


def run(row: str, src: Path) -> dict[str, Any]:
    import _cold

    env = dict(os.environ, PYTHONPATH=str(src))
    result = _cold.run_child([__file__, "--child", row], timeout=3600.0, env=env)  # an empty disk cache too
    if "error" in result:
        raise RuntimeError(f"{row} ({src}): {result['error']}")
    return result


def _load() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def render(results: dict[str, dict[str, dict[str, Any]]], labels: list[str], meta: dict[str, str]) -> str:
    lines = [
        "# RESULTS_profile: deep-tail privacy profile and an ε(δ) sweep on one PLD (issue 27 item 7)",
        "",
        f"Command: `{meta['command']}`",
        "",
        (
            f"Conditions: {meta['start']} UTC, {platform.machine()}, {os.cpu_count()} cores, load average at "
            f"the start {meta['load_start']} and at the end {meta['load_end']} (1/5/15 min); Python "
            f"{platform.python_version()}. The machine is shared: compare the columns of one row (same run)."
        ),
        "",
        "| row | " + " | ".join(f"{label} CPU s | {label} wall s" for label in labels) + " | brackets |",
        "|---|" + "---|---|" * len(labels) + "---|",
    ]
    for row in ROWS:
        cells = []
        for label in labels:
            r = results[label][row]
            cells.append(f"{r['cpu']:.2f} | {r['wall']:.2f}")
        last = results[labels[-1]][row]["brackets"]
        if len(labels) > 1:
            first = results[labels[0]][row]["brackets"]
            same = first == last
            narrower = all(b[1] - b[0] <= a[1] - a[0] for a, b in zip(first, last, strict=True))
            verdict = "identical" if same else ("narrower or equal everywhere" if narrower else "SOME WIDER")
        else:
            verdict = ""
        lines.append(f"| {row} | " + " | ".join(cells) + f" | {verdict} |")
    lines += ["", "Brackets of the last column (lower, upper):", ""]
    for row in ROWS:
        r = results[labels[-1]][row]
        shown = r["brackets"] if row != "profile41" else [r["brackets"][i] for i in (5, 10, 20, 40)]
        note = f" (ε = 2.5, 5, 10, 20; max relative width {r['width']:.3g})" if row == "profile41" else ""
        lines.append(f"- {row}{note}: " + ", ".join(f"[{a:.10g}, {b:.10g}]" for a, b in shown))
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--before", type=Path, help="another tree's src directory, run in the same session")
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child)))
        return 0
    trees = ([("before", args.before)] if args.before else []) + [("this tree", SRC)]
    meta = {"command": "python benchmarks/bench_profile.py" + (" --before SRC" if args.before else ""),
            "start": time.strftime("%Y-%m-%d %H:%M", time.gmtime()), "load_start": _load()}
    results: dict[str, dict[str, dict[str, Any]]] = {label: {} for label, _ in trees}
    for row in ROWS:  # the trees alternate row by row, so that both see the same load
        for label, src in trees:
            results[label][row] = run(row, src)
            print(row, label, f"cpu {results[label][row]['cpu']:.2f} s", flush=True)
    meta["load_end"] = _load()
    RESULTS.write_text(render(results, [label for label, _ in trees], meta), encoding="utf-8")
    print(f"wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

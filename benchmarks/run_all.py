"""Run every benchmark and gather the results into ``benchmarks/RESULTS.md``.

Runs ``bench_optimal.py``, ``bench_pld.py``, ``bench_planner.py``, ``bench_rdp.py``, ``bench_zcdp.py``, ``bench_samplers.py``,
``bench_dgauss.py``, ``bench_selection.py``, ``bench_br.py``,
``bench_fdp.py``, ``bench_ledger.py``, ``bench_matrix.py``, ``bench_sweep.py`` and ``bench_rows.py``, each in its own
interpreter, then concatenates their ``RESULTS_*.md`` (those that exist) into ``RESULTS.md``.
Extra arguments are passed to ``bench_pld.py`` (e.g. ``--quick``), except ``--skip-optimal``, which
reuses the existing ``RESULTS_optimal.md`` instead of re-running ``bench_optimal.py``, and except
``--gather``, which runs nothing and only concatenates the ``RESULTS_*.md`` already there (each part
keeps its own date and machine line).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCHMARKS = [
    ("bench_optimal.py", "RESULTS_optimal.md"),
    ("bench_pld.py", "RESULTS_pld.md"),
    ("bench_planner.py", "RESULTS_planner.md"),
    ("bench_rdp.py", "RESULTS_rdp.md"),
    ("bench_zcdp.py", "RESULTS_zcdp.md"),
    ("bench_samplers.py", "RESULTS_samplers.md"),
    ("bench_dgauss.py", "RESULTS_dgauss.md"),
    ("bench_fdp.py", "RESULTS_fdp.md"),
    ("bench_ledger.py", "RESULTS_ledger.md"),
    ("bench_matrix.py", "RESULTS_matrix.md"),
    ("bench_sweep.py", "RESULTS_sweep.md"),
    ("bench_profile.py", "RESULTS_profile.md"),
    ("bench_selection.py", "RESULTS_selection.md"),
    ("bench_br.py", "RESULTS_br.md"),
    ("bench_rows.py", "RESULTS_rows.md"),
]


def main(argv: list[str]) -> int:
    status = 0
    skip = set()
    if "--gather" in argv:  # only concatenate the RESULTS_*.md already there (no benchmark is run)
        skip.update(script for script, _ in BENCHMARKS)
        argv = [a for a in argv if a != "--gather"]
    if "--skip-optimal" in argv:
        argv = [a for a in argv if a != "--skip-optimal"]
        skip.add("bench_optimal.py")
    for script, _ in BENCHMARKS:
        path = HERE / script
        if script in skip:
            print(f"run_all: {script} skipped (existing results kept)", file=sys.stderr)
            continue
        if not path.exists():
            print(f"run_all: {script} not present, skipped", file=sys.stderr)
            continue
        extra = argv if script == "bench_pld.py" else []
        t0 = time.perf_counter()
        rc = subprocess.call([sys.executable, str(path), *extra], cwd=HERE.parent)
        print(f"run_all: {script} exited {rc} after {time.perf_counter() - t0:.0f} s", file=sys.stderr)
        status = status or rc
    parts = [(HERE / res).read_text(encoding="utf-8") for _, res in BENCHMARKS if (HERE / res).exists()]
    (HERE / "RESULTS.md").write_text("\n\n".join(p.rstrip("\n") for p in parts) + "\n", encoding="utf-8")
    print(f"run_all: wrote {HERE / 'RESULTS.md'} from {len(parts)} part(s)", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

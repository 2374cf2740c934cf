"""Bounded-range (exponential mechanism) compositions: optcomp's adaptive recursion beside the other routes and
the peers that answer (issue 34).

Rows (ε at δ unless the row says δ):

* **optcomp adaptive** — ``optcomp.compose((BoundedRange(ε₀), k), ...).epsilon(δ)``: the certified bracket of
  the optimal *adaptive* composition (default relative width 1e-4 unless the row names its own);
* **optcomp non-adaptive** — ``optcomp.adaptive.nonadaptive_epsilon`` / ``nonadaptive_delta``: Dong–Durfee–Rogers
  2020 Thm 3, steps fixed in advance (a lower bound on the adaptive value);
* **pure-ε optimum** — ``optcomp.optimal.epsilon([(ε₀, 0)] * k, δ)``: the steps as ε₀-DP black boxes (KOV);
* **zCDP route** — ρ = k·KL_max(ε₀) (``optcomp.mechanisms.tight_zcdp``), converted by ``optcomp.rdp``'s improved
  conversion on dp_accounting's default orders; **RDP-curve route** — the exact RDP curve of a BR step
  (``optcomp.rdp.compose``), same conversion;
* **autodp** — ``autodp.mechanism_zoo.ExponentialMechanism(ε₀)`` composed k times, ``get_approxDP(δ)`` (its ε²/8
  zCDP route); **OpenDP** — ``make_noisy_max`` (Gumbel, scale 2/ε₀) with the zCDP output measure, ``make_composition``
  of k, ``make_zCDP_to_approxDP``. Both from the ``bench`` extra.

Every cell runs in a fresh interpreter (a cold process: no kernel or lattice cached; single-threaded BLAS) that
first imports the libraries — numpy, scipy and optcomp's modules, resolving its lazily imported names — and then
times the call itself: CPU time (``time.process_time``) and wall time; the table keeps the minimum over the
repeats. Usage::

    python benchmarks/bench_br.py [--repeats 2] [--output benchmarks/RESULTS_br.md]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SINGLE_THREAD_ENV = {k: "1" for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                                      "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")}
CHILD_TIMEOUT_S = 600.0

_PRELUDE = """
import json, math, time, warnings
warnings.simplefilter("ignore")
import numpy as np
import scipy.fft, scipy.special, scipy.signal
import optcomp as oc
import optcomp.adaptive, optcomp.engines, optcomp.queries, optcomp.pld, optcomp.rdp, optcomp.optimal
oc.compose, oc.BoundedRange, oc.Accuracy  # the lazy root names resolved before the timer
"""

#: (label, code computing `out` = dict with 'lower'/'upper' or 'value'); the timed part is between the markers.
CELLS: list[tuple[str, str, str]] = [
    ("adaptive, 100 × ε₀=0.1, δ=1e-6", "optcomp adaptive",
     "import optcomp as oc\n#T\nb = oc.compose((oc.BoundedRange(0.1), 100)).epsilon(1e-6)\n#E\nout = {'lower': b.lower, 'upper': b.upper}"),
    ("adaptive, 1,000 × ε₀=0.1, δ=1e-6, width 1e-3", "optcomp adaptive",
     "import optcomp as oc\n#T\nb = oc.compose((oc.BoundedRange(0.1), 1000)).epsilon(1e-6, accuracy=oc.Accuracy(relative_width=1e-3))\n#E\nout = {'lower': b.lower, 'upper': b.upper}"),
    ("mix, 50 × ε₀=0.1 then 1,000 × SG(σ=1, q=0.01), δ=1e-6", "optcomp adaptive",
     "import optcomp as oc\nfrom optcomp.mechanisms import PoissonSubsampled, Gaussian\n#T\nb = oc.compose((oc.BoundedRange(0.1), 50), (PoissonSubsampled(Gaussian(1.0), sampling_rate=0.01), 1000)).epsilon(1e-6)\n#E\nout = {'lower': b.lower, 'upper': b.upper}"),
    ("mix, 1,000 × SG(σ=1, q=0.01) then 50 × ε₀=0.1, δ=1e-6", "optcomp adaptive",
     "import optcomp as oc\nfrom optcomp.mechanisms import PoissonSubsampled, Gaussian\n#T\nb = oc.compose((PoissonSubsampled(Gaussian(1.0), sampling_rate=0.01), 1000), (oc.BoundedRange(0.1), 50)).epsilon(1e-6)\n#E\nout = {'lower': b.lower, 'upper': b.upper}"),
    ("non-adaptive δ(ε=2), 10⁴ × ε₀=0.01", "optcomp non-adaptive",
     "from optcomp.adaptive import nonadaptive_delta\n#T\nb = nonadaptive_delta(0.01, 10_000, 2.0)\n#E\nout = {'lower': b.lower, 'upper': b.upper}"),
    ("non-adaptive ε(δ=1e-6), 10⁴ × ε₀=0.01", "optcomp non-adaptive",
     "from optcomp.adaptive import nonadaptive_epsilon\n#T\nb = nonadaptive_epsilon(0.01, 10_000, 1e-6)\n#E\nout = {'lower': b.lower, 'upper': b.upper}"),
    ("non-adaptive, 100 × ε₀=0.1, δ=1e-6", "optcomp non-adaptive",
     "from optcomp.adaptive import nonadaptive_epsilon\n#T\nb = nonadaptive_epsilon(0.1, 100, 1e-6)\n#E\nout = {'lower': b.lower, 'upper': b.upper}"),
    ("pure-ε optimum, 100 × ε₀=0.1, δ=1e-6", "optcomp.optimal",
     "from optcomp import optimal\n#T\nb = optimal.epsilon([(0.1, 0.0)] * 100, 1e-6)\n#E\nout = {'lower': b.lower, 'upper': b.upper}"),
    ("zCDP route (tight KL_max), 100 × ε₀=0.1, δ=1e-6", "optcomp.rdp",
     "from optcomp import rdp\nfrom optcomp.mechanisms import BoundedRange, tight_zcdp\n#T\no = np.array(rdp.DEFAULT_ORDERS)\nv = rdp.RdpCurve(o, o * 100 * tight_zcdp(BoundedRange(0.1))).epsilon(1e-6).value\n#E\nout = {'value': v}"),
    ("RDP-curve route, 100 × ε₀=0.1, δ=1e-6", "optcomp.rdp",
     "from optcomp import rdp\nfrom optcomp.mechanisms import BoundedRange\n#T\nv = rdp.compose((BoundedRange(0.1), 100)).epsilon(1e-6).value\n#E\nout = {'value': v}"),
    ("autodp ExponentialMechanism, 100 × ε₀=0.1, δ=1e-6", "autodp",
     "from autodp import mechanism_zoo as mz, transformer_zoo as tz\n#T\nv = tz.Composition()([mz.ExponentialMechanism(0.1)], [100]).get_approxDP(1e-6)\n#E\nout = {'value': float(v)}"),
    ("OpenDP noisy max (Gumbel, zCDP), 100 × ε₀=0.1, δ=1e-6", "opendp",
     "import opendp.prelude as dp\ndp.enable_features('contrib')\n#T\nm = dp.m.make_noisy_max(dp.vector_domain(dp.atom_domain(T=int)), dp.linf_distance(T=int), dp.zero_concentrated_divergence(), scale=20.0)\nc = dp.c.make_zCDP_to_approxDP(dp.c.make_composition([m] * 100))\nv = c.map(1).epsilon(1e-6)\n#E\nout = {'value': float(v)}"),
    ("autodp ExponentialMechanism, 1,000 × ε₀=0.1, δ=1e-6", "autodp",
     "from autodp import mechanism_zoo as mz, transformer_zoo as tz\n#T\nv = tz.Composition()([mz.ExponentialMechanism(0.1)], [1000]).get_approxDP(1e-6)\n#E\nout = {'value': float(v)}"),
    ("pure-ε optimum, 1,000 × ε₀=0.1, δ=1e-6", "optcomp.optimal",
     "from optcomp import optimal\n#T\nb = optimal.epsilon([(0.1, 0.0)] * 1000, 1e-6)\n#E\nout = {'lower': b.lower, 'upper': b.upper}"),
]


def _child(code: str) -> dict[str, Any]:
    head, rest = code.split("#T\n", 1)
    body, tail = rest.split("#E\n", 1)
    script = (_PRELUDE + head + "\nt_cpu, t_wall = time.process_time(), time.perf_counter()\n" + body
              + "\ncpu, wall = time.process_time() - t_cpu, time.perf_counter() - t_wall\n" + tail
              + "\nprint(json.dumps({**out, 'cpu': cpu, 'wall': wall}))\n")
    env = {**os.environ, **SINGLE_THREAD_ENV, "PYTHONPATH": str(HERE.parent / "src")}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=CHILD_TIMEOUT_S,
                          env=env, check=False)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed"}
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _answer(r: dict[str, Any]) -> str:
    if "error" in r:
        return f"error: {r['error']}"
    if "value" in r:
        return f"{r['value']:.6g} (upper bound only)"
    return f"[{r['lower']:.7g}, {r['upper']:.7g}]"


def _width(r: dict[str, Any]) -> str:
    if "lower" not in r:
        return "–"
    up = r["upper"]
    return f"{(up - r['lower']) / max(abs(up), 0.01):.1e}" if up else "0"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--output", default=str(HERE / "RESULTS_br.md"))
    args = ap.parse_args()
    load0, start = os.getloadavg()[0], time.time()
    rows = []
    for label, who, code in CELLS:
        runs = [_child(code) for _ in range(args.repeats)]
        ok = [r for r in runs if "error" not in r]
        best = min(ok, key=lambda r: r["cpu"]) if ok else runs[0]
        cpu = min(r["cpu"] for r in ok) if ok else float("nan")
        wall = min(r["wall"] for r in ok) if ok else float("nan")
        rows.append(f"| {label} | {who} | {_answer(best)} | {_width(best)} | {cpu:.3f} | {wall:.3f} |")
        print(rows[-1], flush=True)
    versions = {}
    for pkg in ("autodp", "opendp", "numpy", "scipy"):
        try:
            from importlib.metadata import version

            versions[pkg] = version(pkg)
        except Exception:  # noqa: BLE001 (a missing peer is reported as such)
            versions[pkg] = "not installed"
    lines = [
        "# Bounded-range (exponential mechanism) compositions: optcomp beside the other routes and the peers",
        "",
        f"- date (UTC): {time.strftime('%Y-%m-%d %H:%M', time.gmtime())}",
        f"- machine: {platform.machine()}, {os.cpu_count()} cores (shared), load average at start {load0:.2f}, "
        f"at end {os.getloadavg()[0]:.2f}",
        f"- python: {platform.python_version()}; " + ", ".join(f"{k} {v}" for k, v in versions.items()),
        f"- repeats: {args.repeats} per cell (fresh interpreter each); total wall time: {time.time() - start:.0f} s",
        "",
        "Each cell is a fresh interpreter (single-threaded BLAS) that imports the libraries first (numpy, scipy, "
        "optcomp's modules, its lazy names resolved) and then times the call: nothing is cached across cells; the "
        "times are the call's minimum CPU time (`process_time`) and minimum wall time over the repeats. optcomp's adaptive "
        "rows are certified brackets of the optimal composition against an analyst who adapts each step to the "
        "earlier outputs (default relative width 1e-4 unless the row names its own); *non-adaptive* is the "
        "optimum for steps fixed in advance (Dong–Durfee–Rogers 2020 Thm 3), a lower bound on the adaptive one; "
        "the zCDP and RDP rows, autodp and OpenDP give upper bounds only (autodp and OpenDP use the ε²/8 zCDP "
        "bound of a BR step). Script: `benchmarks/bench_br.py`.",
        "",
        "| row | by | answer | rel. width | CPU s | wall s |",
        "|---|---|---|---|---|---|",
        *rows,
    ]
    Path(args.output).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()

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

Every time is cold (``benchmarks/_cold.py``): each cell runs in a fresh interpreter (single-threaded BLAS) that
imported optcomp and the peers and computed nothing else, every optcomp cache empty; a cell is repeated (each run
a fresh interpreter) while it takes under a second, and the table keeps the minimum CPU (``time.process_time``)
and wall time. Usage::

    python benchmarks/bench_br.py [--repeats 2] [--output benchmarks/RESULTS_br.md]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import numpy as np
import opendp.prelude as dp
from autodp import mechanism_zoo, transformer_zoo

import optcomp
from optcomp import optimal, rdp
from optcomp.adaptive import nonadaptive_delta, nonadaptive_epsilon
from optcomp.mechanisms import BoundedRange, Gaussian, PoissonSubsampled, tight_zcdp

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _cold  # the cold-timing policy and tools (benchmarks/_cold.py)

HERE = Path(__file__).resolve().parent
PEERS = ("autodp.mechanism_zoo", "autodp.transformer_zoo", "opendp.prelude", "optcomp.adaptive")
CHILD_TIMEOUT_S = 600.0


def _bracket(b: Any) -> dict[str, float]:
    return {"lower": float(b.lower), "upper": float(b.upper)}


def adaptive(eps0: float, k: int, delta: float, width: float | None) -> dict[str, float]:
    kw = {} if width is None else {"accuracy": optcomp.Accuracy(relative_width=width)}
    return _bracket(optcomp.compose((BoundedRange(eps0), k)).epsilon(delta, **kw))


def mix(br_first: bool, delta: float) -> dict[str, float]:
    br, sg = (BoundedRange(0.1), 50), (PoissonSubsampled(Gaussian(1.0), sampling_rate=0.01), 1000)
    return _bracket(optcomp.compose(*((br, sg) if br_first else (sg, br))).epsilon(delta))


def nonadaptive_d(eps0: float, k: int, eps: float) -> dict[str, float]:
    return _bracket(nonadaptive_delta(eps0, k, eps))


def nonadaptive_e(eps0: float, k: int, delta: float) -> dict[str, float]:
    return _bracket(nonadaptive_epsilon(eps0, k, delta))


def pure(eps0: float, k: int, delta: float) -> dict[str, float]:
    return _bracket(optimal.epsilon([(eps0, 0.0)] * k, delta))


def zcdp_route(eps0: float, k: int, delta: float) -> dict[str, float]:
    orders = np.array(rdp.DEFAULT_ORDERS)
    return {"value": float(rdp.RdpCurve(orders, orders * k * tight_zcdp(BoundedRange(eps0))).epsilon(delta).value)}


def rdp_route(eps0: float, k: int, delta: float) -> dict[str, float]:
    return {"value": float(rdp.compose((BoundedRange(eps0), k)).epsilon(delta).value)}


def autodp_em(eps0: float, k: int, delta: float) -> dict[str, float]:
    composed = transformer_zoo.Composition()([mechanism_zoo.ExponentialMechanism(eps0)], [k])
    return {"value": float(composed.get_approxDP(delta))}


def _opendp_features(eps0: float, k: int, delta: float) -> tuple[float, int, float]:
    dp.enable_features("contrib")  # a switch, not accounting: untimed
    return eps0, k, delta


def opendp_noisy_max(args: tuple[float, int, float]) -> dict[str, float]:
    eps0, k, delta = args
    m = dp.m.make_noisy_max(dp.vector_domain(dp.atom_domain(T=int)), dp.linf_distance(T=int),
                            dp.zero_concentrated_divergence(), scale=2.0 / eps0)
    composed = dp.c.make_zCDP_to_approxDP(dp.c.make_composition([m] * k))
    return {"value": float(composed.map(1).epsilon(delta))}


#: The timed cells, each run cold in its own interpreter (``_cold.cold``).
CELLS: dict[str, _cold.Cell] = {
    "adaptive": adaptive, "mix": mix, "nonadaptive_delta": nonadaptive_d, "nonadaptive_epsilon": nonadaptive_e,
    "pure": pure, "zcdp": zcdp_route, "rdp": rdp_route, "autodp": autodp_em,
    "opendp": (_opendp_features, opendp_noisy_max),
}

#: (label, by, cell, arguments)
ROWS: list[tuple[str, str, str, tuple[Any, ...]]] = [
    ("adaptive, 100 × ε₀=0.1, δ=1e-6", "optcomp adaptive", "adaptive", (0.1, 100, 1e-6, None)),
    ("adaptive, 1,000 × ε₀=0.1, δ=1e-6, width 1e-3", "optcomp adaptive", "adaptive", (0.1, 1000, 1e-6, 1e-3)),
    ("mix, 50 × ε₀=0.1 then 1,000 × SG(σ=1, q=0.01), δ=1e-6", "optcomp adaptive", "mix", (True, 1e-6)),
    ("mix, 1,000 × SG(σ=1, q=0.01) then 50 × ε₀=0.1, δ=1e-6", "optcomp adaptive", "mix", (False, 1e-6)),
    ("non-adaptive δ(ε=2), 10⁴ × ε₀=0.01", "optcomp non-adaptive", "nonadaptive_delta", (0.01, 10_000, 2.0)),
    ("non-adaptive, 100 × ε₀=0.1, δ=1e-6", "optcomp non-adaptive", "nonadaptive_epsilon", (0.1, 100, 1e-6)),
    ("pure-ε optimum, 100 × ε₀=0.1, δ=1e-6", "optcomp.optimal", "pure", (0.1, 100, 1e-6)),
    ("zCDP route (tight KL_max), 100 × ε₀=0.1, δ=1e-6", "optcomp.rdp", "zcdp", (0.1, 100, 1e-6)),
    ("RDP-curve route, 100 × ε₀=0.1, δ=1e-6", "optcomp.rdp", "rdp", (0.1, 100, 1e-6)),
    ("autodp ExponentialMechanism, 100 × ε₀=0.1, δ=1e-6", "autodp", "autodp", (0.1, 100, 1e-6)),
    ("OpenDP noisy max (Gumbel, zCDP), 100 × ε₀=0.1, δ=1e-6", "opendp", "opendp", (0.1, 100, 1e-6)),
    ("autodp ExponentialMechanism, 1,000 × ε₀=0.1, δ=1e-6", "autodp", "autodp", (0.1, 1000, 1e-6)),
    ("pure-ε optimum, 1,000 × ε₀=0.1, δ=1e-6", "optcomp.optimal", "pure", (0.1, 1000, 1e-6)),
]


def _answer(r: dict[str, Any]) -> str:
    if "error" in r:
        return f"error: {r['error']}"
    v = r["value"]
    if "value" in v:
        return f"{v['value']:.6g} (upper bound only)"
    return f"[{v['lower']:.7g}, {v['upper']:.7g}]"


def _width(r: dict[str, Any]) -> str:
    if "error" in r or "lower" not in r["value"]:
        return "–"
    lo, up = r["value"]["lower"], r["value"]["upper"]
    return f"{(up - lo) / max(abs(up), 0.01):.1e}" if up else "0"


def _times(r: dict[str, Any]) -> str:
    return "– | –" if "error" in r else f"{r['cpu']:.3f} | {r['wall']:.3f}"


def _version(pkg: str) -> str:
    try:
        return version(pkg)
    except PackageNotFoundError:
        return "not installed"


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--output", default=str(HERE / "RESULTS_br.md"))
    args = ap.parse_args(argv)
    env = {**os.environ, **_cold.SINGLE_THREAD_ENV}
    load0, start = os.getloadavg()[0], time.time()
    rows = []

    for label, who, cell, cell_args in ROWS:
        r = _cold.cold(__file__, cell, *cell_args, timeout=CHILD_TIMEOUT_S, env=env, repeats=args.repeats)
        rows.append(f"| {label} | {who} | {_answer(r)} | {_width(r)} | {_times(r)} | {r.get('runs', 0)} |")
        print(rows[-1], flush=True)
    lines = [
        "# Bounded-range (exponential mechanism) compositions: optcomp beside the other routes and the peers",
        "",
        f"- date (UTC): {time.strftime('%Y-%m-%d %H:%M', time.gmtime())}",
        (f"- machine: {platform.machine()}, {os.cpu_count()} cores (shared with other jobs), 1-min load average "
        f"{load0:.2f} at the start, {os.getloadavg()[0]:.2f} at the end"),
        f"- python: {platform.python_version()}; "
        + ", ".join(f"{p} {_version(p)}" for p in ("autodp", "opendp", "numpy", "scipy")),
        f"- total wall time: {time.time() - start:.0f} s",
        "",
        ("Every time is cold (`benchmarks/_cold.py`): each cell is a fresh interpreter (single-threaded BLAS) that "
        "imported optcomp, autodp and OpenDP and computed nothing else (every optcomp cache empty), then timed the "
        f"call; a cell taking under 1 s is repeated, each run a fresh interpreter, up to {args.repeats} runs "
        "('runs'), and the table keeps the minimum CPU time (`process_time`) and wall time. optcomp's adaptive "
        "rows are certified brackets of the optimal composition against an analyst who adapts each step to the "
        "earlier outputs (default relative width 1e-4 unless the row names its own); *non-adaptive* is the "
        "optimum for steps fixed in advance (Dong–Durfee–Rogers 2020 Thm 3), a lower bound on the adaptive one; "
        "the zCDP and RDP rows, autodp and OpenDP give upper bounds only (autodp and OpenDP use the ε²/8 zCDP "
        "bound of a BR step). Script: `benchmarks/bench_br.py`."),
        "",
        "| row | by | answer | rel. width | CPU s | wall s | runs |",
        "|---|---|---|---|---|---|---|",
        *rows,
    ]
    Path(args.output).write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__" and not _cold.cold_cells(CELLS, sys.argv[1:], peers=PEERS):
    main(sys.argv[1:])

"""Private selection (issue 34, items 3 and 5): optcomp.selection's routes vs dp_accounting's RepeatAndSelectDpEvent.

Each row is ε at δ of releasing the best of K runs of a base (K independent of the data):

* optcomp: ``optcomp.selection.select(base, law).epsilon(δ)`` at its default accuracy — every route
  (pure, Papernot–Steinke Thm 2 / Thm 6 on the base's exact RDP curve with Thm 6's δ̂ from the certified PLD,
  the privacy-profile route, the composition of K_max runs), the smallest certified upper end and its route;
* dp_accounting: ``RdpAccountant`` composed with ``RepeatAndSelectDpEvent(event, mean, shape)`` (its PLD
  accountant does not support the event), ``get_epsilon(δ)``: Thm 2 / Thm 6 through an RDP conversion of
  the base (its Thm 6 δ̂ from the RDP curve too). A law dp_accounting has no event for (a fixed count) is "-".
* OpenDP 0.16 (``make_select_private_candidate``) has only Liu–Talwar's known-threshold variant for ε-DP
  bases: one row each for a Laplace base, beside optcomp's ``threshold``. autodp 0.2.3.1 (PyPI) has no
  private selection (its ``transformer_zoo`` lists it as a TODO): not run.

Every cell runs in a fresh interpreter (imports, then the call; single-threaded BLAS), timed by CPU time
(``time.process_time``) of the call; the table keeps the minimum over ``--repeats``. Usage::

    python benchmarks/bench_selection.py [--repeats 2] [--output benchmarks/RESULTS_selection.md]
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
ENV = {k: "1" for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS")}
DELTA = 1e-6

#: (label, base as optcomp.compose items in Python source, its DpEvent as Python source)
BASES = [
    ("Gaussian σ=4", "[(Gaussian(sigma=4.0), 1)]", "E.GaussianDpEvent(4.0)"),
    ("Laplace b=2 (ε₀=0.5)", "[(Laplace(scale=2.0), 1)]", "E.LaplaceDpEvent(2.0)"),
    ("DP-SGD σ=1.1 q=256/60000 T=3516",
     "[(PoissonSubsampled(Gaussian(sigma=1.1), sampling_rate=256/60000), 3516)]",
     "E.SelfComposedDpEvent(E.PoissonSampledDpEvent(256/60000, E.GaussianDpEvent(1.1)), 3516)"),
    ("DP-SGD σ=1 q=0.01 T=1000",
     "[(PoissonSubsampled(Gaussian(sigma=1.0), sampling_rate=0.01), 1000)]",
     "E.SelfComposedDpEvent(E.PoissonSampledDpEvent(0.01, E.GaussianDpEvent(1.0)), 1000)"),
]
#: (label, optcomp law in Python source, dp_accounting (mean, shape) or None)
LAWS = [
    ("geometric, E[K]=10", "Geometric(mean=10.0)", (10.0, 1.0)),
    ("logarithmic, E[K]=10", "Logarithmic(mean=10.0)", (10.0, 0.0)),
    ("TNB η=0.5, E[K]=10", "TruncatedNegativeBinomial.from_mean(0.5, 10.0)", (10.0, 0.5)),
    ("Poisson, μ=10", "Poisson(10.0)", (10.0, float("inf"))),
    ("fixed K=10", "Binomial(10)", None),
]

_OURS = """
import json, time
from optcomp.mechanisms import Gaussian, Laplace, PoissonSubsampled
from optcomp.selection import Binomial, Geometric, Logarithmic, Poisson, TruncatedNegativeBinomial, select
t = time.process_time()
answer = select({base}, {law}).epsilon({delta!r})
cpu = time.process_time() - t
print(json.dumps({{"cpu": cpu, "answer": answer.to_dict()}}))
"""
_THEIRS = """
import json, time
from dp_accounting import dp_event as E
from dp_accounting.rdp import rdp_privacy_accountant as R
t = time.process_time()
acc = R.RdpAccountant()
acc.compose(E.RepeatAndSelectDpEvent({event}, {mean!r}, float({shape!r})))
eps = float(acc.get_epsilon({delta!r}))
cpu = time.process_time() - t
print(json.dumps({{"cpu": cpu, "epsilon": eps}}))
"""
_OPENDP = """
import json, time
import opendp.prelude as dp
dp.enable_features("contrib", "honest-but-curious")
t = time.process_time()
space = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
m = dp.m.make_user_measurement(*space, dp.max_divergence(), lambda x: (x, x), lambda d: d / {scale!r},
                               TO="(f64, ExtrinsicObject)")
eps = float(dp.c.make_select_private_candidate(m, stop_probability={gamma!r}, threshold=0.0).map(1.0))
cpu = time.process_time() - t
print(json.dumps({{"cpu": cpu, "epsilon": eps}}))
"""
_OURS_THRESHOLD = """
import json, time
from optcomp.mechanisms import Laplace
from optcomp.selection import threshold
t = time.process_time()
answer = threshold(Laplace(scale={scale!r}), {gamma!r}).epsilon({delta!r})
cpu = time.process_time() - t
print(json.dumps({{"cpu": cpu, "answer": answer.to_dict()}}))
"""


def child(source: str) -> dict[str, Any] | None:
    env = {**os.environ, **ENV, "PYTHONPATH": str(HERE.parent / "src")}
    try:
        out = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, env=env, timeout=600,
                             check=True)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        print(f"  failed: {getattr(exc, 'stderr', '')[-300:]}", file=sys.stderr)
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def best(source: str, repeats: int) -> dict[str, Any] | None:
    runs = [r for r in (child(source) for _ in range(repeats)) if r is not None]
    return min(runs, key=lambda r: r["cpu"]) if runs else None


def _cpu(run: dict[str, Any] | None, digits: int) -> str:
    return "-" if run is None else f"{run['cpu']:.{digits}f}"


def fmt(x: float | None, digits: int = 4) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def selection_rows(repeats: int) -> list[str]:
    lines = []
    for base_label, base, event in BASES:
        for law_label, law, pair in LAWS:
            ours = best(_OURS.format(base=base, law=law, delta=DELTA), repeats)
            theirs = None if pair is None else best(
                _THEIRS.format(event=event, mean=pair[0], shape=str(pair[1]), delta=DELTA), repeats)
            if ours is None:
                continue
            a = ours["answer"]
            routes = {r["route"]: r["upper"] for r in a["routes"]}
            peer = None if theirs is None else theirs["epsilon"]
            ratio = "-" if peer is None else f"{a['upper'] / peer:.3f}"
            lines.append(
                f"| {base_label} | {law_label} | [{fmt(a['lower'])}, {fmt(a['upper'])}] | {a['route']} | "
                f"{fmt(routes.get('pure'))} | {fmt(routes.get('rdp-thm2') or routes.get('rdp-thm6'))} | "
                f"{fmt(routes.get('profile'))} | {fmt(routes.get('composition'))} | {fmt(peer)} | {ratio} | "
                f"{ours['cpu']:.2f} | {_cpu(theirs, 2)} |"
            )
            print(lines[-1], flush=True)
    return lines


def threshold_rows(repeats: int) -> list[str]:
    lines = []
    for scale, gamma in ((2.0, 0.1), (2.0, 0.9), (0.5, 0.05)):
        ours = best(_OURS_THRESHOLD.format(scale=scale, gamma=gamma, delta=DELTA), repeats)
        theirs = best(_OPENDP.format(scale=scale, gamma=gamma), repeats)
        if ours is None:
            continue
        lines.append(f"| Laplace b={scale:g} (ε₀={1 / scale:g}) | {gamma:g} | {fmt(ours['answer']['upper'])} | "
                     f"{fmt(None if theirs is None else theirs['epsilon'])} | {ours['cpu']:.3f} | "
                     f"{_cpu(theirs, 3)} |")
        print(lines[-1], flush=True)
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--output", type=Path, default=HERE / "RESULTS_selection.md")
    args = parser.parse_args(argv)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        "# Private selection: optcomp.selection vs dp_accounting's RepeatAndSelectDpEvent",
        "",
        (f"Date {time.strftime('%Y-%m-%d')}. Machine: {platform.processor() or platform.machine()}, Python "
        f"{platform.python_version()}, load average {load:.1f} at the start (times are CPU seconds of the call in a "
        f"cold interpreter, minimum of {args.repeats}; shared machines make wall time noisy). δ = {DELTA:g}."),
        "",
        ("ε of releasing the best of K runs. optcomp: the certified bracket [lower, upper] (lower 0 where no lower end is "
        "known: a composed base), the route whose upper end it is, and each route's certified upper end "
        "('pure': (2+η)ε₀ / ε₀+μ·tanh(ε₀/2); 'rdp': Papernot–Steinke Thm 2 (TNB laws) or Thm 6 (Poisson) on the exact "
        "RDP curve, Thm 6's δ̂ from the certified PLD; 'profile': the privacy-profile route; 'composition': K_max runs "
        "composed). dp_accounting: RdpAccountant on RepeatAndSelectDpEvent (RDP conversion; its PLD accountant does not "
        "support the event)."),
        "",
        ("| base | K | optcomp ε | route | pure | rdp (Thm 2/6) | profile | composition | dp_accounting ε | ours/theirs | "
        "optcomp s | dp_accounting s |"),
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
        *selection_rows(args.repeats),
        "",
        "## Liu–Talwar's known-threshold variant (pure ε₀-DP base), beside OpenDP",
        "",
        ("OpenDP 0.16 `make_select_private_candidate(measurement, stop_probability, threshold)` maps ε₀ to 2ε₀ "
        "(Liu–Talwar Thm 3.1); optcomp's `threshold` gives ε₀ + min(ε₀, log(1/γ)). autodp 0.2.3.1 has no private "
        "selection: not run."),
        "",
        "| base | stop probability γ | optcomp ε | OpenDP ε | optcomp s | OpenDP s |",
        "|---|---|---|---|---|---|",
        *threshold_rows(args.repeats),
    ]
    args.output.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()

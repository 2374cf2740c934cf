"""Benchmark of the batch samplers of :mod:`optcomp.dpsgd` (issue 17) against the peers that answer.

Rows (δ as stated; optcomp at its default accuracy; one run each, times in seconds):

* fixed size: optcomp ``sampling="fixed_size"`` (substitution, Δ = 2) vs dp_accounting's
  ``SampledWithoutReplacementDpEvent`` under ``REPLACE_ONE`` (its RDP accountant: the PLD one refuses it);
* user-level Poisson: ``MixtureOfGaussians`` (σ = 1, c = (0, 1), p = (½, ½)) vs dp_accounting's
  ``MixtureOfGaussiansDpEvent``; k = 8 examples per user, 1,000 steps (optcomp only: dp_accounting's
  event is the same law);
* truncated Poisson: n = 60,000, q = 256/60,000, B = 300, σ = 1.1, T = 3,516 vs dp_accounting 0.6's
  ``TruncatedSubsampledGaussianDpEvent``; also the explicit pair's lower end;
* shuffle: one epoch of 1,000 steps, σ = 1, δ = 1e-6: optcomp's certified lower and upper ends vs the
  Poisson ε at the same σ, batch size, steps;
* balls-in-bins (issues 23, 32): ``dpsgd.epsilon(σ, 1/t, t·E, δ, sampling="balls_in_bins")`` at the
  **default accuracy** (relative width 1e-4), each row cold: a fresh Python process (nothing cached in
  memory; optcomp keeps no disk cache) that imports optcomp (``_cold.import_libraries``: every module the
  call may reach, so a lazy import's compilation is not timed) and then times the call (wall and CPU,
  ``time.process_time``), beside ``PLD_accounting``'s ``gaussian_allocation_epsilon_range(delta, sigma,
  num_steps=t, num_epochs=E)`` (Feldman–Shenfeld; default accuracy, run under ``nice`` in a child process
  with a time limit of ``PEER_LIMIT`` s: a row past it reads "no answer in N s"), on the (σ, t, E) rows
  of ``ALLOCATION_ROWS``, δ = 1e-6 (and one row at δ = 1e-10, one of 10⁵ steps per epoch and one whose
  width is refused, optcomp only); and 10-of-100 (k > 1: optcomp's upper end is Lemma B's blocks, the
  same ten epochs of 1-of-10 that PLD_accounting computes for ``num_selected=10``; its lower end is the
  binned maximum). The header records the load average while the rows ran (a shared machine).

Writes ``benchmarks/RESULTS_samplers.md``. Run: ``PYTHONPATH=src python benchmarks/bench_samplers.py``.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import platform
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import dp_accounting
from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.rdp import RdpAccountant

from optcomp import Bound, compose, dpsgd
from optcomp.mechanisms import MixtureOfGaussians
from optcomp.mechanisms.allocation import RandomAllocation, allocation_lower_pair

HERE = Path(__file__).resolve().parent
#: (σ, steps per epoch t, epochs E) of the balls-in-bins rows (δ = 1e-6).
ALLOCATION_ROWS = [(3.0, 10, 10), (3.0, 100, 10), (1.0, 1000, 1), (2.0, 100, 10), (0.8, 10, 10), (1.0, 1000, 10)]
#: Seconds PLD_accounting may take per row before the row reads "no answer".
PEER_LIMIT = 240


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def pld_peer(event: Any, delta: float, relation: Any = None) -> float:
    kwargs = {} if relation is None else {"neighboring_relation": relation}
    acc = pld_privacy_accountant.PLDAccountant(**kwargs)
    acc.compose(event)
    return float(acc.get_epsilon(delta))


def rdp_peer(event: Any, delta: float, relation: Any) -> float:
    acc = RdpAccountant(neighboring_relation=relation)
    acc.compose(event)
    return float(acc.get_epsilon(delta))


def fmt(b: Bound) -> str:
    return f"[{b.lower:.6g}, {b.upper:.6g}]"


def _peer_allocation(conn: Any, kwargs: dict[str, Any]) -> None:
    import os

    os.nice(10)
    from PLD_accounting.random_allocation_api import gaussian_allocation_epsilon_range

    t0 = time.perf_counter()
    hi, lo = gaussian_allocation_epsilon_range(**kwargs)
    conn.send((lo, hi, time.perf_counter() - t0))


def peer_allocation(**kwargs: Any) -> tuple[str, str]:
    """PLD_accounting's bracket and time in a child process, or "no answer in N s"."""
    if importlib.util.find_spec("PLD_accounting") is None:
        return "not installed", "—"
    import multiprocessing

    parent, child = multiprocessing.Pipe()
    proc = multiprocessing.Process(target=_peer_allocation, args=(child, kwargs))
    proc.start()
    if not parent.poll(PEER_LIMIT):
        proc.kill()
        proc.join()
        return f"no answer in {PEER_LIMIT} s", f"> {PEER_LIMIT}"
    lo, hi, took = parent.recv()
    proc.join()
    return f"[{lo:.6g}, {hi:.6g}]", f"{took:.2f}"


#: One balls-in-bins row in a fresh process: imports first, then the timed call (its JSON on stdout).
_ROW = """
import json, sys, time
sys.path.insert(0, sys.argv[2])
from _cold import import_libraries
from optcomp import dpsgd
from optcomp.pld import GridTooLargeError
import_libraries()  # the policy of benchmarks/_cold.py: the call pays no import (lazy ones included)
sigma, rate, steps, delta = json.loads(sys.argv[1])
wall, cpu = time.perf_counter(), time.process_time()
try:
    b = dpsgd.epsilon(sigma, rate, steps, delta, sampling="balls_in_bins")
    out = {"bracket": [b.lower, b.upper]}
except GridTooLargeError as exc:
    out = {"refused": str(exc), "bracket": [exc.bracket.lower, exc.bracket.upper] if exc.bracket else None}
out.update(wall=time.perf_counter() - wall, cpu=time.process_time() - cpu)
print(json.dumps(out))
"""


def cold_row(sigma: float, rate: float, steps: int, delta: float) -> dict[str, Any]:
    """``dpsgd.epsilon(..., sampling="balls_in_bins")`` at the default accuracy in a fresh process (cold)."""
    import json
    import subprocess
    import sys

    args = json.dumps([sigma, rate, steps, delta])
    done = subprocess.run([sys.executable, "-c", _ROW, args, str(HERE)], capture_output=True, text=True, check=True)
    return dict(json.loads(done.stdout))


def _times(r: dict[str, Any]) -> str:
    return f"{r['wall']:.2f} (CPU {r['cpu']:.2f})"


def balls_in_bins_rows() -> list[tuple[str, str, str, str, str]]:
    """The balls-in-bins rows: optcomp's certified bracket at the default accuracy, each in a fresh process,
    beside PLD_accounting's (module docstring)."""
    rows = []
    for sigma, t, epochs in ALLOCATION_ROWS:
        r = cold_row(sigma, 1 / t, t * epochs, 1e-6)
        lo, hi = r["bracket"]
        peer, tp = peer_allocation(delta=1e-6, sigma=sigma, num_steps=t, num_epochs=epochs)
        rows.append((f"balls-in-bins σ = {sigma:g}, t = {t:,}, E = {epochs}, δ = 1e-6 (relative width "
                     f"{(hi - lo) / max(hi, 0.01):.1e})", fmt(Bound(lo, hi)), _times(r), peer, tp))
    for sigma, t, epochs, delta in ((1.0, 1000, 10, 1e-10), (2.0, 100_000, 1, 1e-6)):
        r = cold_row(sigma, 1 / t, t * epochs, delta)
        lo, hi = r["bracket"]
        rows.append((f"balls-in-bins σ = {sigma:g}, t = {t:,}, E = {epochs}, δ = {delta:g} (relative width "
                     f"{(hi - lo) / max(hi, 0.01):.1e})", fmt(Bound(lo, hi)), _times(r), "—", "—"))
    r = cold_row(2.0, 1e-7, 10**7, 1e-6)
    shown = f"refused: {r['refused'][:160]}…" if "refused" in r else fmt(Bound(*r["bracket"]))
    rows.append(("balls-in-bins σ = 2, t = 10⁷, E = 1, δ = 1e-6 (issue 32: the default width is out of reach: "
                 "GridTooLargeError, one line and exit 2 on the command line)", shown, _times(r), "—", "—"))
    allocation = RandomAllocation(sigma=3.0, steps=100, selected=10)
    lower = compose(allocation_lower_pair(3.0, 100, selected=10)).epsilon(1e-6)
    upper, tu = timed(lambda: compose(*allocation.upper_items()).epsilon(1e-6))
    peer, tp = peer_allocation(delta=1e-6, sigma=3.0, num_steps=100, num_selected=10, num_epochs=1)
    rows.append(("random allocation 10-of-100, σ = 3, one epoch, δ = 1e-6 (upper: Lemma B blocks, ten "
                 "epochs of 1-of-10 at grid step 2⁻¹⁰, not tight; lower: binned maximum of the 10-of-100 pair; "
                 "the peer's lower end bounds the blocks, not 10-of-100)", f"[{lower.lower:.6g}, {upper.upper:.6g}]",
                 f"{tu:.2f}", peer, tp))
    return rows


def main() -> None:
    rows: list[tuple[str, str, str, str, str]] = []  # case, optcomp bracket, optcomp s, peer, peer s
    replace = dp_accounting.NeighboringRelation.REPLACE_ONE

    b, t = timed(lambda: dpsgd.epsilon(1.0, 256 / 60_000, 3516, 1e-5, sampling="fixed_size"))
    ev = dp_event.SelfComposedDpEvent(
        dp_event.SampledWithoutReplacementDpEvent(60_000, 256, dp_event.GaussianDpEvent(0.5)), 3516
    )
    p, tp = timed(lambda: rdp_peer(ev, 1e-5, replace))
    rows.append(("fixed size m = 256 of n = 60,000, σ = 1 (clip norm 1: Δ = 2 under substitution), "
                 "T = 3,516, δ = 1e-5", fmt(b), f"{t:.2f}",
                 f"{p:.6g} (RDP, GaussianDpEvent(σ/Δ = 0.5); its PLD accountant has no such event)",
                 f"{tp:.2f}"))

    mog = MixtureOfGaussians(1.0, sensitivities=(0.0, 1.0), probabilities=(0.5, 0.5))
    b, t = timed(lambda: compose(mog).epsilon(1e-5))
    ev = dp_event.MixtureOfGaussiansDpEvent(1.0, [0.0, 1.0], [0.5, 0.5])
    p, tp = timed(lambda: pld_peer(ev, 1e-5))
    rows.append(("mixture of Gaussians σ = 1, c = (0, 1), p = (½, ½), δ = 1e-5", fmt(b), f"{t:.2f}",
                 f"{p:.6g}", f"{tp:.2f}"))

    b, t = timed(lambda: dpsgd.epsilon(1.0, 0.01, 1000, 1e-5, examples_per_user=8))
    rows.append(("user-level Poisson, k = 8 examples/user, σ = 1, q = 0.01, T = 1,000, δ = 1e-5", fmt(b),
                 f"{t:.2f}", "—", "—"))

    q = 256 / 60_000
    kw: dict[str, Any] = {"sampling": "truncated_poisson", "dataset_size": 60_000, "max_batch_size": 300}
    (b, pair), t = timed(lambda: dpsgd.epsilon_brackets(1.1, q, 3516, 1e-5, **kw))
    ev = dp_event.SelfComposedDpEvent(dp_event.TruncatedSubsampledGaussianDpEvent(60_000, q, 300, 1.1), 3516)
    p, tp = timed(lambda: pld_peer(ev, 1e-5))
    rows.append(("truncated Poisson n = 60,000, q = 256/60,000, B = 300, σ = 1.1, T = 3,516, δ = 1e-5 "
                 f"(the run: lower end from the explicit pair; dominating pair {fmt(pair)}, relative width "
                 f"{(pair.upper - pair.lower) / pair.upper:.1e})", fmt(b), f"{t:.2f}", f"{p:.6g}", f"{tp:.2f}"))

    b, t = timed(lambda: dpsgd.epsilon(1.1, q, 3516, 1e-5, sampling="shuffle"))
    rows.append(("shuffle, b = 256 of n = 60,000 (q = 256/60,000, short last batch kept), σ = 1.1, T = 3,516, "
                 "δ = 1e-5", fmt(b), f"{t:.2f}", "—", "—"))

    b, t = timed(lambda: dpsgd.epsilon(1.0, 1 / 1000, 1000, 1e-6, sampling="shuffle"))
    poisson = dpsgd.epsilon(1.0, 1 / 1000, 1000, 1e-6)
    rows.append(("shuffle, 1 epoch of 1,000 steps, σ = 1, δ = 1e-6 (Poisson at the same σ, q, T: "
                 f"{fmt(poisson)})", fmt(b), f"{t:.2f}", "—", "—"))

    load_before = os.getloadavg()
    rows.extend(balls_in_bins_rows())
    load_after = os.getloadavg()

    lines = [
        "# Batch samplers (issue 17) vs dp_accounting and PLD_accounting",
        "",
        f"Machine: {platform.processor() or platform.machine()}, Python {platform.python_version()}, "
        f"dp_accounting {importlib.metadata.version('dp-accounting')}. ε brackets [lower, upper]; optcomp's "
        "upper ends are certified for the run (docs/samplers.md says, per sampler, what the lower end "
        "bounds). Times in seconds, one run each (wall clock; balls-in-bins rows: wall (CPU) of a cold call in "
        "a fresh process at the default accuracy). Load average (1, 5, 15 min) on this shared machine: "
        f"{', '.join(f'{x:.1f}' for x in load_before)} before the balls-in-bins rows, "
        f"{', '.join(f'{x:.1f}' for x in load_after)} after.",
        "",
        "| case | optcomp ε | s | peer ε | s |",
        "|---|---|---|---|---|",
        *[f"| {c} | {o} | {to} | {pe} | {tpe} |" for c, o, to, pe, tpe in rows],
        "",
    ]
    (HERE / "RESULTS_samplers.md").write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()

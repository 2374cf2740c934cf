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
* balls-in-bins (issue 23): ``dpsgd.epsilon(σ, 1/t, t·E, δ, sampling="balls_in_bins")`` at relative
  width 1e-3 beside ``PLD_accounting``'s ``gaussian_allocation_epsilon_range(delta, sigma,
  num_steps=t, num_epochs=E)`` (Feldman–Shenfeld; default accuracy, run under ``nice`` in a child
  process with a time limit of ``PEER_LIMIT`` s: a row past it reads "no answer in N s"), on the
  (σ, t, E) rows of ``ALLOCATION_ROWS``, δ = 1e-6 (and one row at δ = 1e-10, optcomp only); and
  10-of-100 (k > 1: optcomp's upper end is Lemma B's blocks, the same ten epochs of 1-of-10 that
  PLD_accounting computes for ``num_selected=10``; its lower end is the binned maximum).

Writes ``benchmarks/RESULTS_samplers.md``. Run: ``PYTHONPATH=src python benchmarks/bench_samplers.py``.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
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


def _cold() -> None:
    """Forget the cached epoch laws, so that every row's time includes building them."""
    from optcomp.mechanisms import _allocation_grid, _allocation_lower

    for fn in (_allocation_grid.upper_law, _allocation_grid.upper_laws, _allocation_lower.lower_laws):
        fn.cache_clear()


def balls_in_bins_rows() -> list[tuple[str, str, str, str, str]]:
    """The issue-23 rows: optcomp's certified bracket (relative width 1e-3) beside PLD_accounting's; every
    row starts with empty law caches (:func:`_cold`)."""
    from optcomp import Accuracy

    acc = Accuracy(relative_width=1e-3)
    rows = []
    for sigma, t, epochs in ALLOCATION_ROWS:
        _cold()
        b, tb = timed(lambda s=sigma, t=t, e=epochs: dpsgd.epsilon(  # type: ignore[misc]
            s, 1 / t, t * e, 1e-6, sampling="balls_in_bins", accuracy=acc))
        peer, tp = peer_allocation(delta=1e-6, sigma=sigma, num_steps=t, num_epochs=epochs)
        rows.append((f"balls-in-bins σ = {sigma:g}, t = {t:,}, E = {epochs}, δ = 1e-6 (relative width "
                     f"{(b.upper - b.lower) / b.upper:.1e})", fmt(b), f"{tb:.2f}", peer, tp))
    _cold()
    b, tb = timed(lambda: dpsgd.epsilon(1.0, 1 / 1000, 10_000, 1e-10, sampling="balls_in_bins", accuracy=acc))
    rows.append(("balls-in-bins σ = 1, t = 1,000, E = 10, δ = 1e-10 (relative width "
                 f"{(b.upper - b.lower) / b.upper:.1e})", fmt(b), f"{tb:.2f}", "—", "—"))
    allocation = RandomAllocation(sigma=3.0, steps=100, selected=10)
    lower = compose(allocation_lower_pair(3.0, 100, selected=10)).epsilon(1e-6)
    _cold()
    upper, tu = timed(lambda: compose(*allocation.upper_items()).epsilon(1e-6))
    peer, tp = peer_allocation(delta=1e-6, sigma=3.0, num_steps=100, num_selected=10, num_epochs=1)
    rows.append(("random allocation 10-of-100, σ = 3, one epoch, δ = 1e-6 (upper: Lemma B blocks, ten "
                 "epochs of 1-of-10, not tight; lower: binned maximum of the 10-of-100 pair; the peer's "
                 "lower end bounds the blocks, not 10-of-100)", f"[{lower.lower:.6g}, {upper.upper:.6g}]",
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

    rows.extend(balls_in_bins_rows())

    lines = [
        "# Batch samplers (issue 17) vs dp_accounting and PLD_accounting",
        "",
        f"Machine: {platform.processor() or platform.machine()}, Python {platform.python_version()}, "
        f"dp_accounting {importlib.metadata.version('dp-accounting')}. ε brackets [lower, upper]; optcomp's "
        "upper ends are certified for the run (docs/samplers.md says, per sampler, what the lower end "
        "bounds). Times in seconds, one run each (wall clock, shared 2-core machine).",
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

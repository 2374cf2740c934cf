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
* balls-in-bins: σ = 3, t = 100, k = 10, δ = 1e-6 vs ``PLD_accounting`` (Feldman–Shenfeld), if it is
  installed (``pip install -e '.[bench]'``); and 10 epochs of 1,000 steps (σ = 1, δ = 1e-5), optcomp only.

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
from optcomp.mechanisms.allocation import allocation_lower_pair, allocation_upper_mechanism

HERE = Path(__file__).resolve().parent


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

    lower = compose(allocation_lower_pair(3.0, 100, selected=10)).epsilon(1e-6)
    upper, t = timed(lambda: compose(allocation_upper_mechanism(3.0, selected=10)).epsilon(1e-6))
    peer, tp = "not installed", "—"
    if importlib.util.find_spec("PLD_accounting") is not None:
        from PLD_accounting.random_allocation_api import gaussian_allocation_epsilon_range

        (hi, lo), tpv = timed(lambda: gaussian_allocation_epsilon_range(
            delta=1e-6, sigma=3.0, num_steps=100, num_selected=10, num_epochs=1))
        peer, tp = f"[{lo:.6g}, {hi:.6g}] (PLD_accounting)", f"{tpv:.2f}"
    rows.append(("random allocation σ = 3, t = 100, k = 10, δ = 1e-6 (lower: binned maximum; upper: no "
                 "amplification)", f"[{lower.lower:.6g}, {upper.upper:.6g}]", f"{t:.2f}", peer, tp))

    b, t = timed(lambda: dpsgd.epsilon(1.0, 1 / 1000, 10_000, 1e-5, sampling="balls_in_bins"))
    rows.append(("balls-in-bins, 10 epochs of 1,000 steps, σ = 1, δ = 1e-5", fmt(b), f"{t:.2f}", "—", "—"))

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

"""Benchmark of :mod:`optcomp.matrix` (issue 24) beside dp_accounting, on the design note's workloads.

Rows (one run each, wall-clock seconds):

* Gboard es-ES DP-FTRL tree: σ = 7, n = 2000, min_sep 314 (the notebook's ``min_separation`` 313), ≤ 6
  participations, δ = 1e-10: optcomp's exact Δ² (tree DP), certified ε and RDP comparator vs dp_accounting's
  PLD and RDP accountants on ``GaussianDpEvent(7/√79)`` (the notebook's own DP took 348 s, as reported);
* ``SingleEpochTreeAggregationDpEvent(7.0, 2000)`` at δ = 1e-10 through ``optcomp.interop`` (zero-out) vs
  dp_accounting's RDP accountant (``REPLACE_SPECIAL``; its PLD accountant refuses the event);
* BSR n = 2000, 64 bands: exact ζ², b-min-sep (k = 32) and (20, 100)-epoch Δ²;
* amplified BandMF, BSR, q = 500/781, 32 rounds, σ = 6, δ = 1e-5: the standard reduction and the
  per-column refinement vs dp_accounting's PLD and RDP on ``SelfComposed(PoissonSampled(q, Gaussian(6)), 32)``;
  the noise multiplier for ε = 2 vs ``dp_accounting.calibrate_dp_mechanism`` with its PLD accountant;
* the reduction's δ at ε ∈ {1, 1.5, 2} (q = 0.6402, the design note's row 6).

jax_privacy is not run: it needs jax, which the ``bench`` extra does not install; its numbers in the design
note (2.5186051 for the BandMF row) are quoted there. Writes ``benchmarks/RESULTS_matrix.md``.
Run: ``PYTHONPATH=src python benchmarks/bench_matrix.py``.
"""

from __future__ import annotations

import importlib.metadata
import math
import platform
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import dp_accounting
from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.rdp import RdpAccountant

from optcomp import interop, matrix

HERE = Path(__file__).resolve().parent
NR = dp_accounting.NeighboringRelation


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def pld_peer(event: Any, delta: float) -> float:
    acc = pld_privacy_accountant.PLDAccountant()
    acc.compose(event)
    return float(acc.get_epsilon(delta))


def rdp_peer(event: Any, delta: float, relation: Any = NR.ADD_OR_REMOVE_ONE) -> float:
    acc = RdpAccountant(neighboring_relation=relation)
    acc.compose(event)
    return float(acc.get_epsilon(delta))


def _b(bound: Any, digits: int = 7) -> str:
    return f"[{bound.lower:.{digits}g}, {bound.upper:.{digits}g}]"


def tree_rows() -> list[str]:
    tree, pattern = matrix.tree(2000), matrix.from_min_separation(313, 6)
    sens, t_sens = timed(lambda: matrix.sensitivity(tree, pattern))
    rel = matrix.release(tree, pattern, noise_multiplier=7.0)
    eps, t_eps = timed(lambda: rel.epsilon(1e-10))
    event = dp_event.GaussianDpEvent(7.0 / math.sqrt(79))
    peer, t_peer = timed(lambda: pld_peer(event, 1e-10))
    rdp, t_rdp = timed(lambda: rdp_peer(event, 1e-10))
    seven = matrix.sensitivity(tree, matrix.min_sep(314, 7)).squared_lower
    return [
        (f"| Gboard tree Δ² (n = 2000, min_sep 314, k = 6; k = 7 gives {seven}) | {sens.squared_lower} ({sens.method}) "
        f"| {t_sens:.2f} | notebook DP: 348 s (reported) | — |"),
        (f"| Gboard tree ε, σ = 7, δ = 1e-10 | {_b(eps, 9)}; RDP comparator {rel.rdp_epsilon(1e-10):.6f} | {t_eps:.3f} "
        f"| {peer:.7f} (PLD); {rdp:.6f} (RDP) | {t_peer:.2f}; {t_rdp:.2f} |"),
    ]


def tree_event_row() -> str:
    event = dp_event.SingleEpochTreeAggregationDpEvent(7.0, 2000)
    eps, t = timed(lambda: interop.from_dp_event(event, neighbouring=NR.REPLACE_SPECIAL).epsilon(1e-10))
    rdp, t_rdp = timed(lambda: rdp_peer(event, 1e-10, NR.REPLACE_SPECIAL))
    return (f"| SingleEpochTreeAggregationDpEvent(7.0, 2000), zero-out, δ = 1e-10 | {_b(eps, 9)} | {t:.3f} "
            f"| {rdp:.6f} (RDP; its PLD accountant refuses the event) | {t_rdp:.2f} |")


def bsr_rows() -> list[str]:
    s = matrix.bsr(2000, 64)
    rows = []
    for label, pattern in (("ζ² (single)", matrix.single()), ("b-min-sep k = 32", matrix.min_sep(64, 32)),
                           ("(20, 100)-epoch", matrix.fixed_epoch(20))):
        b, t = timed(lambda p=pattern: matrix.sensitivity(s, p))
        rows.append(f"| BSR n = 2000, b = 64: {label} Δ² | {float(b.squared_lower)!r} (exact rational, {b.method}) "
                    f"| {t:.3f} | — | — |")
    return rows


def bandmf_rows() -> list[str]:
    s, q = matrix.bsr(2000, 64), 500 / 781
    plain_run = matrix.bandmf(s, cycle_length=64, sampling_rate=q, noise_multiplier=6.0, per_column=False)
    refined_run = matrix.bandmf(s, cycle_length=64, sampling_rate=q, noise_multiplier=6.0, partition_public=True)
    plain, t_plain = timed(lambda: plain_run.epsilon(1e-5))
    refined, t_refined = timed(lambda: refined_run.epsilon(1e-5))
    event = dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(6.0)), 32)
    peer, t_peer = timed(lambda: pld_peer(event, 1e-5))
    rdp, t_rdp = timed(lambda: rdp_peer(event, 1e-5))
    sigma, t_sigma = timed(lambda: matrix.noise_multiplier(plain_run, 2.0, 1e-5))
    sigma_pc, t_sigma_pc = timed(lambda: matrix.noise_multiplier(refined_run, 2.0, 1e-5))

    def make(z: float) -> Any:
        return dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(z)), 32)

    peer_sigma, t_peer_sigma = timed(lambda: dp_accounting.calibrate_dp_mechanism(
        pld_privacy_accountant.PLDAccountant, make, 2.0, 1e-5))
    row6 = matrix.bandmf(s, cycle_length=64, sampling_rate=0.6402, noise_multiplier=6.0, per_column=False)
    deltas = "; ".join(f"δ({e:g}) ∈ {_b(row6.delta(e), 5)}" for e in (1.0, 1.5, 2.0))
    return [
        (f"| amplified BandMF, standard reduction (every column at 1) | {_b(plain)} | {t_plain:.2f} "
        f"| {peer:.6f} (PLD); {rdp:.4f} (RDP) | {t_peer:.2f}; {t_rdp:.2f} |"),
        (f"| amplified BandMF, per-column sensitivities (public partition: bracket on the truth) | {_b(refined)} "
        f"| {t_refined:.2f} | — | — |"),
        (f"| BandMF noise multiplier for ε = 2, δ = 1e-5 (safe side) | {sigma:.7f} | {t_sigma:.2f} "
        f"| {float(peer_sigma):.7f} (calibrate_dp_mechanism, PLD) | {t_peer_sigma:.2f} |"),
        (f"| BandMF noise multiplier for ε = 2, per-column run (inverse solver on its certified ε) | {sigma_pc:.7f} "
        f"| {t_sigma_pc:.2f} | — | — |"),
        f"| reduction δ at q = 0.6402 (design note row 6) | {deltas} | — | — | — |",
    ]


def main() -> None:
    rows = [*tree_rows(), tree_event_row(), *bsr_rows(), *bandmf_rows()]
    ver = importlib.metadata.version("dp_accounting")
    text = "\n".join([
        "# Matrix mechanisms (issue 24) vs dp_accounting",
        "",
        (f"Machine: {platform.machine()}, Python {platform.python_version()}, dp_accounting {ver}. ε brackets "
        "[lower, upper] (optcomp's upper ends certified; docs/matrix.md says what each lower end bounds). Times in "
        "seconds, one run each (wall clock, shared 2-core machine). jax_privacy is not run (it needs jax)."),
        "",
        "| case | optcomp | s | peer | s |",
        "|---|---|---|---|---|",
        *rows,
        "",
    ])
    (HERE / "RESULTS_matrix.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()

"""Benchmark of :mod:`optcomp.matrix` (issue 24) beside dp_accounting, on the design note's workloads.

Rows (one run each, wall-clock seconds; every timed call is cold, ``benchmarks/_cold.py``: a fresh interpreter
that imported the libraries and computed nothing else):

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
import sys
from pathlib import Path
from typing import Any

import dp_accounting
from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.rdp import RdpAccountant

from optcomp import interop, matrix

HERE = Path(__file__).resolve().parent
NR = dp_accounting.NeighboringRelation
sys.path.insert(0, str(HERE))
import _cold  # the cold-timing policy and tools (benchmarks/_cold.py)

Q_BANDMF = 500 / 781


def pld_peer(event: Any, delta: float) -> float:
    acc = pld_privacy_accountant.PLDAccountant()
    acc.compose(event)
    return float(acc.get_epsilon(delta))


def rdp_peer(event: Any, delta: float, relation: Any = NR.ADD_OR_REMOVE_ONE) -> float:
    acc = RdpAccountant(neighboring_relation=relation)
    acc.compose(event)
    return float(acc.get_epsilon(delta))


def _pair(bound: Any) -> list[float]:
    return [float(bound.lower), float(bound.upper)]


def _b(pair: list[float], digits: int = 7) -> str:
    return f"[{pair[0]:.{digits}g}, {pair[1]:.{digits}g}]"


def _sensitivity(bound: Any, *, exact: bool) -> list[Any]:
    """Δ²'s lower end (the exact rational as text, or its float) and the method."""
    return [str(bound.squared_lower) if exact else float(bound.squared_lower), bound.method]


def _bandmf(kind: str) -> Any:
    s = matrix.bsr(2000, 64)
    if kind == "plain":
        return matrix.bandmf(s, cycle_length=64, sampling_rate=Q_BANDMF, noise_multiplier=6.0, per_column=False)
    return matrix.bandmf(s, cycle_length=64, sampling_rate=Q_BANDMF, noise_multiplier=6.0, partition_public=True)


def _bandmf_event(z: float) -> Any:
    return dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(Q_BANDMF, dp_event.GaussianDpEvent(z)), 32)


_BSR_PATTERNS = {"single": matrix.single(), "min_sep": matrix.min_sep(64, 32), "fixed_epoch": matrix.fixed_epoch(20)}

#: The timed cells, each run cold in its own interpreter (``_cold.cold``); a pair builds its inputs untimed.
CELLS: dict[str, _cold.Cell] = {
    "tree_sensitivity": (lambda: (matrix.tree(2000), matrix.from_min_separation(313, 6)),
                         lambda sp: _sensitivity(matrix.sensitivity(*sp), exact=True)),
    "tree_epsilon": (lambda: matrix.release(matrix.tree(2000), matrix.from_min_separation(313, 6),
                                            noise_multiplier=7.0),
                     lambda rel: _pair(rel.epsilon(1e-10))),
    "tree_pld_peer": lambda: pld_peer(dp_event.GaussianDpEvent(7.0 / math.sqrt(79)), 1e-10),
    "tree_rdp_peer": lambda: rdp_peer(dp_event.GaussianDpEvent(7.0 / math.sqrt(79)), 1e-10),
    "tree_event": lambda: _pair(interop.from_dp_event(dp_event.SingleEpochTreeAggregationDpEvent(7.0, 2000),
                                                      neighbouring=NR.REPLACE_SPECIAL).epsilon(1e-10)),
    "tree_event_rdp": lambda: rdp_peer(dp_event.SingleEpochTreeAggregationDpEvent(7.0, 2000), 1e-10,
                                       NR.REPLACE_SPECIAL),
    "bsr_sensitivity": (lambda name: (matrix.bsr(2000, 64), _BSR_PATTERNS[name]),
                        lambda sp: _sensitivity(matrix.sensitivity(*sp), exact=False)),
    "bandmf_epsilon": (_bandmf, lambda run: _pair(run.epsilon(1e-5))),
    "bandmf_sigma": (_bandmf, lambda run: matrix.noise_multiplier(run, 2.0, 1e-5)),
    "bandmf_pld_peer": lambda: pld_peer(_bandmf_event(6.0), 1e-5),
    "bandmf_rdp_peer": lambda: rdp_peer(_bandmf_event(6.0), 1e-5),
    "bandmf_sigma_peer": lambda: float(dp_accounting.calibrate_dp_mechanism(
        pld_privacy_accountant.PLDAccountant, _bandmf_event, 2.0, 1e-5)),
}


def timed(name: str, *args: Any) -> tuple[Any, float]:
    """(answer, wall seconds) of one cold cell."""
    out = _cold.cold(__file__, name, *args, timeout=1800.0)
    if "error" in out:
        raise RuntimeError(f"{name} {args}: {out['error']}")
    return out["value"], float(out["wall"])


def tree_rows() -> list[str]:
    tree, pattern = matrix.tree(2000), matrix.from_min_separation(313, 6)
    (squared, method), t_sens = timed("tree_sensitivity")
    rel = matrix.release(tree, pattern, noise_multiplier=7.0)
    eps, t_eps = timed("tree_epsilon")
    peer, t_peer = timed("tree_pld_peer")
    rdp, t_rdp = timed("tree_rdp_peer")
    seven = matrix.sensitivity(tree, matrix.min_sep(314, 7)).squared_lower
    return [
        (f"| Gboard tree Δ² (n = 2000, min_sep 314, k = 6; k = 7 gives {seven}) | {squared} ({method}) "
        f"| {t_sens:.2f} | notebook DP: 348 s (reported) | — |"),
        (f"| Gboard tree ε, σ = 7, δ = 1e-10 | {_b(eps, 9)}; RDP comparator {rel.rdp_epsilon(1e-10):.6f} | {t_eps:.3f} "
        f"| {peer:.7f} (PLD); {rdp:.6f} (RDP) | {t_peer:.2f}; {t_rdp:.2f} |"),
    ]


def tree_event_row() -> str:
    eps, t = timed("tree_event")
    rdp, t_rdp = timed("tree_event_rdp")
    return (f"| SingleEpochTreeAggregationDpEvent(7.0, 2000), zero-out, δ = 1e-10 | {_b(eps, 9)} | {t:.3f} "
            f"| {rdp:.6f} (RDP; its PLD accountant refuses the event) | {t_rdp:.2f} |")


def bsr_rows() -> list[str]:
    rows = []
    for label, name in (("ζ² (single)", "single"), ("b-min-sep k = 32", "min_sep"), ("(20, 100)-epoch", "fixed_epoch")):
        (value, method), t = timed("bsr_sensitivity", name)
        rows.append(f"| BSR n = 2000, b = 64: {label} Δ² | {value!r} (exact rational, {method}) "
                    f"| {t:.3f} | — | — |")
    return rows


def bandmf_rows() -> list[str]:
    plain, t_plain = timed("bandmf_epsilon", "plain")
    refined, t_refined = timed("bandmf_epsilon", "refined")
    peer, t_peer = timed("bandmf_pld_peer")
    rdp, t_rdp = timed("bandmf_rdp_peer")
    sigma, t_sigma = timed("bandmf_sigma", "plain")
    sigma_pc, t_sigma_pc = timed("bandmf_sigma", "refined")
    peer_sigma, t_peer_sigma = timed("bandmf_sigma_peer")
    row6 = matrix.bandmf(matrix.bsr(2000, 64), cycle_length=64, sampling_rate=0.6402, noise_multiplier=6.0,
                         per_column=False)
    deltas = "; ".join(f"δ({e:g}) ∈ {_b(_pair(row6.delta(e)), 5)}" for e in (1.0, 1.5, 2.0))
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
        "seconds, one cold run each (a fresh interpreter that computed nothing before the call; wall clock, shared "
        "2-core machine). jax_privacy is not run (it needs jax)."),
        "",
        "| case | optcomp | s | peer | s |",
        "|---|---|---|---|---|",
        *rows,
        "",
    ])
    (HERE / "RESULTS_matrix.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__" and not _cold.cold_cells(
        CELLS, sys.argv[1:], peers=("optcomp.matrix", "optcomp.interop", "dp_accounting.rdp",
                                    "dp_accounting.pld.pld_privacy_accountant")):
    main()

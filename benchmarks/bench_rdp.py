"""Benchmark of :mod:`optcomp.rdp` against dp_accounting's ``RdpAccountant`` (values and time).

Cases: DP-SGD (Poisson-subsampled Gaussian, add/remove) at (σ, q, steps) ∈ {(1.1, 256/60000, 3516),
(0.8, 0.01, 1000), (2.0, 0.1, 100), (1.0, 0.001, 100000)}, δ = 1e-5, improved conversion (both sides), on

* the integer subset of dp_accounting's default orders (both exact: should agree to rounding), and
* dp_accounting's default orders (fractional orders: optcomp uses a certified chord bound, dp_accounting
  an infinite series; optcomp's ε is ≥ dp_accounting's, by the amount shown).

Also reports, for reference, optcomp's certified PLD bracket (``optcomp.dpsgd.epsilon``, default accuracy).
Every time is cold (``benchmarks/_cold.py``): one call in a fresh interpreter that imported both libraries and
computed nothing else. Writes ``benchmarks/RESULTS_rdp.md``. Run: ``PYTHONPATH=src python benchmarks/bench_rdp.py``.
"""

from __future__ import annotations

import platform
import sys
from pathlib import Path

from dp_accounting import dp_event
from dp_accounting.rdp import RdpAccountant

from optcomp import dpsgd, rdp
from optcomp.mechanisms import Gaussian, PoissonSubsampled

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _cold  # the cold-timing policy and tools (benchmarks/_cold.py)

DELTA = 1e-5
CASES = [(1.1, 256 / 60000, 3516), (0.8, 0.01, 1000), (2.0, 0.1, 100), (1.0, 0.001, 100000)]
HERE = Path(__file__).resolve().parent


def timed(name: str, *args: object) -> tuple[float, float]:
    """(ε, wall seconds) of one cold cell (``CELLS``)."""
    out = _cold.cold(__file__, name, *args, timeout=1800.0)
    if "error" in out:
        raise RuntimeError(f"{name} {args}: {out['error']}")
    return float(out["value"]), float(out["wall"])


def peer(sigma: float, q: float, steps: int, orders: list[float] | None) -> float:
    acc = RdpAccountant(orders)
    acc.compose(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(sigma)), steps)
    return float(acc.get_epsilon(DELTA))


def ours(sigma: float, q: float, steps: int, orders: list[float] | None) -> float:
    kw = {} if orders is None else {"orders": orders}
    return rdp.compose((PoissonSubsampled(Gaussian(sigma), sampling_rate=q), steps), **kw).epsilon(DELTA).value  # type: ignore[arg-type]


CELLS = {"ours": ours, "peer": peer}


def main() -> None:
    ints = [a for a in rdp.DEFAULT_ORDERS if a == int(a)]
    lines = [
        "# RDP comparator vs dp_accounting RdpAccountant",
        "",
        (f"Machine: {platform.processor() or platform.machine()}, Python {platform.python_version()}. "
        f"δ = {DELTA:g}, improved conversion. Times in seconds, one cold run each (a fresh interpreter that "
        "computed nothing before the call). "
        "'integer': the integer subset of dp_accounting's default orders (both exact: they must agree to "
        "rounding); 'default': all its default orders, where optcomp bounds the fractional orders by a "
        "certified chord between integer orders and dp_accounting evaluates them by a series, so ours may "
        "be higher (never lower)."),
        "",
        "| σ | q | steps | orders | optcomp ε | dp_accounting ε | rel. diff | optcomp s | dp_acc s | PLD bracket |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for sigma, q, steps in CASES:
        pld = dpsgd.epsilon(sigma, q, steps, DELTA)
        for name, orders in (("integer", ints), ("default", None)):
            mine, t_mine = timed("ours", sigma, q, steps, orders)
            theirs, t_theirs = timed("peer", sigma, q, steps, orders)
            rel = (mine - theirs) / theirs
            lines.append(
                f"| {sigma} | {q:.5g} | {steps} | {name} | {mine:.6f} | {theirs:.6f} | {rel:+.2e} | "
                f"{t_mine:.3f} | {t_theirs:.3f} | [{pld.lower:.4f}, {pld.upper:.4f}] |"
            )
            print(lines[-1], flush=True)
    (HERE / "RESULTS_rdp.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__" and not _cold.cold_cells(CELLS, sys.argv[1:], peers=("dp_accounting.rdp",)):
    main()

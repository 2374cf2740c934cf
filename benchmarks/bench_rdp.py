"""Benchmark of :mod:`optcomp.rdp` against dp_accounting's ``RdpAccountant`` (values and time).

Cases: DP-SGD (Poisson-subsampled Gaussian, add/remove) at (σ, q, steps) ∈ {(1.1, 256/60000, 3516),
(0.8, 0.01, 1000), (2.0, 0.1, 100), (1.0, 0.001, 100000)}, δ = 1e-5, improved conversion (both sides), on

* the integer subset of dp_accounting's default orders (both exact: should agree to rounding), and
* dp_accounting's default orders (fractional orders: optcomp uses a certified chord bound, dp_accounting
  an infinite series; optcomp's ε is ≥ dp_accounting's, by the amount shown).

Also reports, for reference, optcomp's certified PLD bracket (``optcomp.dpsgd.epsilon``, default accuracy).
Writes ``benchmarks/RESULTS_rdp.md``. Run: ``PYTHONPATH=src python benchmarks/bench_rdp.py``.
"""

from __future__ import annotations

import platform
import time
from collections.abc import Callable
from pathlib import Path

from dp_accounting import dp_event
from dp_accounting.rdp import RdpAccountant

from optcomp import dpsgd, rdp
from optcomp.mechanisms import Gaussian, PoissonSubsampled

DELTA = 1e-5
CASES = [(1.1, 256 / 60000, 3516), (0.8, 0.01, 1000), (2.0, 0.1, 100), (1.0, 0.001, 100000)]
HERE = Path(__file__).resolve().parent


def timed(fn: Callable[[], float]) -> tuple[float, float]:
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def peer(sigma: float, q: float, steps: int, orders: list[float] | None) -> float:
    acc = RdpAccountant(orders)
    acc.compose(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(sigma)), steps)
    return float(acc.get_epsilon(DELTA))


def ours(sigma: float, q: float, steps: int, orders: list[float] | None) -> float:
    kw = {} if orders is None else {"orders": orders}
    return rdp.compose((PoissonSubsampled(Gaussian(sigma), sampling_rate=q), steps), **kw).epsilon(DELTA).value  # type: ignore[arg-type]


def main() -> None:
    ints = [a for a in rdp.DEFAULT_ORDERS if a == int(a)]
    lines = [
        "# RDP comparator vs dp_accounting RdpAccountant",
        "",
        (f"Machine: {platform.processor() or platform.machine()}, Python {platform.python_version()}. "
        f"δ = {DELTA:g}, improved conversion. Times in seconds (one run each). "
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
            case = (sigma, q, steps, orders)
            mine, t_mine = timed(lambda c=case: ours(*c))  # type: ignore[misc]
            theirs, t_theirs = timed(lambda c=case: peer(*c))  # type: ignore[misc]
            rel = (mine - theirs) / theirs
            lines.append(
                f"| {sigma} | {q:.5g} | {steps} | {name} | {mine:.6f} | {theirs:.6f} | {rel:+.2e} | "
                f"{t_mine:.3f} | {t_theirs:.3f} | [{pld.lower:.4f}, {pld.upper:.4f}] |"
            )
            print(lines[-1], flush=True)
    (HERE / "RESULTS_rdp.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()

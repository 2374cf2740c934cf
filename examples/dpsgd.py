"""DP-SGD accounting with optcomp: a certified ε bracket, and the noise needed for a target ε.

MNIST-style run: 60 000 examples, batches of 256 drawn by Poisson sampling (q = 256/60000), noise
multiplier σ = 1.1, 15 epochs, δ = 1e-5. Run ``python examples/dpsgd.py``.
"""

from __future__ import annotations

import math
import time

from rich.console import Console
from rich.table import Table

from optcomp import dpsgd

N, BATCH, EPOCHS, SIGMA, DELTA, TARGET = 60_000, 256, 15, 1.1, 1e-5, 3.0


def main() -> None:
    q = BATCH / N
    steps = math.ceil(EPOCHS * N / BATCH)
    t0 = time.perf_counter()
    eps = dpsgd.epsilon(SIGMA, q, steps, DELTA)
    t1 = time.perf_counter()
    sigma = dpsgd.noise_multiplier(TARGET, q, steps, DELTA, rtol=1e-2)
    t2 = time.perf_counter()
    check = dpsgd.epsilon(sigma, q, steps, DELTA)

    table = Table(title=f"DP-SGD: q = {BATCH}/{N}, {EPOCHS} epochs = {steps} steps, δ = {DELTA:g}")
    for col in ("question", "answer", "certified ε bracket", "time (s)"):
        table.add_column(col)
    table.add_row(
        f"ε at σ = {SIGMA}", f"ε ≤ {eps.upper:.4f}", f"[{eps.lower:.4f}, {eps.upper:.4f}]", f"{t1 - t0:.2f}"
    )
    table.add_row(
        f"σ for ε ≤ {TARGET:g}",
        f"σ = {sigma:.4f}",
        f"[{check.lower:.4f}, {check.upper:.4f}]",
        f"{t2 - t1:.2f}",
    )
    Console().print(table)


if __name__ == "__main__":
    main()

"""A heterogeneous composition: Gaussian + Laplace + randomized response + an (ε, δ)-DP black box.

Each mechanism's exact privacy-loss distribution is composed by :func:`optcomp.compose`; the answer is
a certified bracket. Composition needs one neighbouring relation in which every guarantee holds; these
base mechanisms are relation-agnostic (each query has sensitivity 1 under whichever relation is in
use), so the composed PLD reports ``neighbouring = None``; pass ``neighbouring=`` to state it.
Run ``python examples/heterogeneous.py``.
"""

from __future__ import annotations

import time

from rich.console import Console
from rich.table import Table

import optcomp
from optcomp import mechanisms as m

DELTA = 1e-6


def main() -> None:
    parts = [
        ("Gaussian σ = 4", m.Gaussian(sigma=4.0), 20),
        ("Laplace b = 10", m.Laplace(scale=10.0), 10),
        ("randomized response ε = 0.5", m.RandomizedResponse(epsilon=0.5), 5),
        ("(0.1, 1e-8)-DP black box", m.EpsilonDelta(epsilon=0.1, delta=1e-8), 30),
    ]
    table = Table(title=f"Heterogeneous composition, δ = {DELTA:g}")
    for col in ("mechanism", "count", "ε bracket alone", "ε bracket, all so far"):
        table.add_column(col)
    so_far: list[tuple[object, int]] = []
    t0 = time.perf_counter()
    for name, mech, count in parts:
        so_far.append((mech, count))
        alone = optcomp.compose((mech, count)).epsilon(DELTA)
        total = optcomp.compose(*so_far).epsilon(DELTA)
        table.add_row(
            name,
            str(count),
            f"[{alone.lower:.4f}, {alone.upper:.4f}]",
            f"[{total.lower:.4f}, {total.upper:.4f}]",
        )
    Console().print(table)
    Console().print(f"({time.perf_counter() - t0:.2f} s)")


if __name__ == "__main__":
    main()

"""MV Thm 1.7 (method="mv", η = 0.01) vs the split engine (default, tolerance 1e-3) on distinct ε_i.

ε_i = numpy.random.default_rng(20261121).uniform(0.001, 0.1, k), δ_i = 0, δ_g = 1e-6. Prints a Markdown
table (docs/optimal.md). Run: PYTHONPATH=src python examples/mv_vs_split.py
"""

from __future__ import annotations

import time

import numpy as np

from optcomp import optimal
from optcomp.optimal._mv import mv_cost_seconds
from optcomp.optimal._spec import spec

print("| k | split: bracket | width | s | MV Thm 1.7: bracket | width | s | MV cost estimate (s) |")
print("|---|---|---|---|---|---|---|---|")
optimal.epsilon([(0.01, 0.0), (0.02, 0.0)] * 10, 1e-6)
for k in (20, 50, 100, 200, 400):
    mechs = [(float(e), 0.0) for e in np.random.default_rng(20261121).uniform(0.001, 0.1, k)]
    t0 = time.perf_counter()
    b = optimal.epsilon(mechs, 1e-6)
    t1 = time.perf_counter()
    est = mv_cost_seconds(spec(mechs), 0.01)
    if est <= 120:
        m = optimal.epsilon(mechs, 1e-6, method="mv", tolerance=0.01)
        t2 = time.perf_counter()
        mv = f"[{m.lower:.5f}, {m.upper:.5f}] | {m.width:.1e} | {t2 - t1:.2f}"
    else:
        mv = "refused | | "
    print(f"| {k} | [{b.lower:.5f}, {b.upper:.5f}] | {b.width:.1e} | {t1 - t0:.3f} | {mv} | {est:.3g} |", flush=True)

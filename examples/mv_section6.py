"""Reproduce the comparison of Murtagh–Vadhan Section 6 (Figure 2): classic bounds relative to optimal.

MV's setting: k homogeneous (ε, 0)-DP mechanisms, total δ_g = 2^-25. "DRV" is advanced composition in the
Dwork–Rothblum–Vadhan form (MV Thm 1.3 = KOV Thm III.2), "KOV bound" is MV Thm 6.1 (= KOV Thm III.4),
"optimal" is MV Thm 1.4 computed exactly (the certified upper end is used in the ratios). MV report that
for large k the KOV bound is about 20% above optimal and DRV about 30–40% above.

Run:  .venv/bin/python examples/mv_section6.py
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from optcomp import bounds, optimal

DELTA_G = 2.0**-25
EPSILONS = (0.1, 0.05, 0.01, 0.005)
KS = (10, 100, 1_000, 10_000, 100_000)


def rows() -> list[tuple[float, int, float, float, float, float, float]]:
    """(ε, k, basic, DRV, KOV, optimal upper, bracket width) for every setting."""
    out = []
    for eps in EPSILONS:
        for k in KS:
            opt = optimal.epsilon(optimal.homogeneous(eps, 0.0, k), DELTA_G)
            out.append(
                (
                    eps,
                    k,
                    bounds.basic(eps, 0.0, k)[0],
                    bounds.advanced_drv(eps, 0.0, k, DELTA_G)[0],
                    bounds.kov_bound(eps, 0.0, k, DELTA_G)[0],
                    opt.upper,
                    opt.width,
                )
            )
    return out


def main() -> None:
    table = Table(title="MV Section 6: ε_g at δ_g = 2^-25, δ = 0 (ratios to optimal)")
    for col in ("ε", "k", "optimal ε_g", "KOV/opt", "DRV/opt", "basic/opt", "bracket width"):
        table.add_column(col, justify="right")
    for eps, k, basic, drv, kov, opt, width in rows():
        table.add_row(
            f"{eps:g}", f"{k}", f"{opt:.6g}", f"{kov / opt:.3f}", f"{drv / opt:.3f}", f"{basic / opt:.3f}", f"{width:.1e}"
        )
    Console().print(table)


if __name__ == "__main__":
    main()

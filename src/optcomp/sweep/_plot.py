"""The sweep's figure (the ``plot`` extra): ε against steps per σ, and the (σ, steps) frontier.

Nothing is computed here: both panels read the stored rows' *certified upper* ε (the bound a training run
may claim). Left: ε against the number of steps, one line per σ, at one (sampling rate, δ) of the grid.
Right: the frontier — for a few ε budgets, the most steps whose certified ε stays within the budget, per
σ (only steps of the grid: a frontier read off the grid, not a calibration).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from optcomp.plot import _check_path, _pyplot

#: ε budgets of the frontier panel.
BUDGETS = (0.5, 1.0, 2.0, 4.0, 8.0)


def _slice(recs: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], str]:
    """The ε rows of the most common (sampling rate, δ, sampler) of the grid, and its caption."""
    rows = [r for r in recs if r["query"] == "epsilon" and r.get("upper") is not None and r.get("error") is None]
    if not rows:
        raise ValueError("the plot needs epsilon rows (query = 'epsilon') without errors")
    counts: dict[tuple[Any, ...], int] = {}
    for r in rows:
        k = (r.get("sampling_rate"), r.get("delta"), r.get("sampling"))
        counts[k] = counts.get(k, 0) + 1
    q, d, s = max(counts, key=lambda k: counts[k])
    keep = [r for r in rows if (r.get("sampling_rate"), r.get("delta"), r.get("sampling")) == (q, d, s)]
    return keep, f"q = {q:.3g}, δ = {d:.0e}, {s}"


def plot_sweep(recs: Sequence[dict[str, Any]], path: str | Path) -> None:
    """Draw the sweep's two panels into ``path`` (``.png`` or ``.svg``)."""
    out = _check_path(path)
    plt = _pyplot()
    rows, caption = _slice(recs)
    sigmas = sorted({float(r["noise_multiplier"]) for r in rows})
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    cmap = plt.get_cmap("viridis")
    for i, sigma in enumerate(sigmas):
        pts = sorted((int(r["steps"]), float(r["upper"])) for r in rows if float(r["noise_multiplier"]) == sigma)
        left.plot([t for t, _ in pts], [e for _, e in pts], marker=".", color=cmap(i / max(1, len(sigmas) - 1)),
                  label=f"σ = {sigma:.3g}")
    left.set(xscale="log", yscale="log", xlabel="steps T", ylabel="certified upper ε", title=f"ε against steps ({caption})")
    left.legend(fontsize="x-small", ncol=2)
    for budget in BUDGETS:
        frontier = []
        for sigma in sigmas:
            ok = [int(r["steps"]) for r in rows if float(r["noise_multiplier"]) == sigma and float(r["upper"]) <= budget]
            if ok:
                frontier.append((sigma, max(ok)))
        if frontier:
            right.plot([s for s, _ in frontier], [t for _, t in frontier], marker="o", label=f"ε ≤ {budget:g}")
    right.set(yscale="log", xlabel="noise multiplier σ", ylabel="most steps of the grid within the budget",
              title="frontier (certified upper ε)")
    right.legend(fontsize="small")
    fig.tight_layout()
    if out is not None:
        fig.savefig(out)
    plt.close(fig)

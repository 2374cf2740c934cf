"""Figures: trade-off curves (Dong–Roth–Su), privacy regions (KOV Figs. 1–3) and the MV §6 comparison.

matplotlib is an optional dependency (the ``plot`` extra) and is imported only when a figure is drawn;
without it every function raises ``ImportError`` with the install hint. The Agg backend is used, so
figures are written to files (``.png`` or ``.svg``) and never opened in a window.

Nothing here computes privacy: every number comes from one public call (:mod:`optcomp.fdp`,
:mod:`optcomp.bounds`, :mod:`optcomp.optimal`). Certified brackets are drawn as shaded bands; curves
that are approximations say so in their legend labels.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from optcomp._numerics import (
    Progress,
    check_epsilon_delta,
    check_int,
    check_nonnegative,
    check_open_probability,
)
from optcomp.fdp import TradeOff, TradeOffBracket, alpha_grid

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["SUPPORTED_SUFFIXES", "plot_composition_comparison", "plot_privacy_region", "plot_sweep", "plot_tradeoff"]

#: File types the figures can be written as.
SUPPORTED_SUFFIXES: tuple[str, ...] = (".png", ".svg")

_INSTALL_HINT = "optcomp.plot needs matplotlib: pip install 'optcomp[plot]'"


#: Largest k·ε sent to :func:`optcomp.optimal.epsilon`: beyond it its log-weights leave the float range.
_OPTIMAL_MAX_TOTAL_EPSILON = sys.float_info.max / 64


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError(_INSTALL_HINT) from exc
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _check_path(path: str | Path | None) -> Path | None:
    if path is None:
        return None
    p = Path(path)
    if p.suffix.lower() not in SUPPORTED_SUFFIXES:
        raise ValueError(f"output must end in one of {', '.join(SUPPORTED_SUFFIXES)}, got {str(p)!r}")
    return p


def _finish(fig: Figure, path: Path | None) -> Figure:
    if path is not None:
        fig.savefig(path, dpi=150, bbox_inches="tight")
    return fig


def plot_tradeoff(
    curves: Sequence[tuple[str, TradeOff | TradeOffBracket]],
    *,
    path: str | Path | None = None,
    title: str = "Trade-off functions",
    diagonal: bool = True,
) -> Figure:
    """Draw trade-off functions β = f(α) (type II vs type I error; DRS Fig. 1/3 style).

    A :class:`~optcomp.fdp.TradeOffBracket` is drawn as a shaded band between its certified lower and
    upper curves. The dashed diagonal is f = 1 − α (perfect privacy).

    Args:
        curves: (label, curve) pairs.
        path: file to write (``.png``/``.svg``), or ``None`` to only return the figure.
        title: figure title.
        diagonal: draw the perfect-privacy line.
    """
    out = _check_path(path)
    if not curves:
        raise ValueError("curves must hold at least one (label, curve) pair, got none")
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5.0, 5.0))
    a = alpha_grid(801)
    for label, c in curves:
        if isinstance(c, TradeOffBracket):
            lo, hi = c(a)
            line = ax.plot(a, hi, lw=1.0, label=f"{label} (certified bracket)")[0]
            ax.fill_between(a, lo, hi, color=line.get_color(), alpha=0.3)
            ax.plot(a, lo, lw=1.0, color=line.get_color())
        else:
            ax.plot(a, c(a), lw=1.5, label=label)
    if diagonal:
        ax.plot([0, 1], [1, 0], ls="--", lw=0.8, color="grey", label="perfect privacy 1 − α")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")
    ax.set_xlabel("type I error α (false-positive rate)")
    ax.set_ylabel("type II error β = f(α)")
    ax.set_title(title)
    ax.legend(fontsize=8, loc="upper right")
    return _finish(fig, out)


def plot_privacy_region(
    epsilon: float,
    delta: float,
    ks: Sequence[int],
    *,
    path: str | Path | None = None,
    progress: Progress | None = None,
) -> Figure:
    """The privacy region of the k-fold composition of (ε, δ)-DP (KOV Figs. 1–3, Thm III.3).

    In the (P_FA, P_MD) plane the region is {(α, β) : f(α) ≤ β ≤ 1 − f(1 − α)} where f is the lower
    boundary of :func:`optcomp.region.composed` (KOV Thm III.3), i.e. the trade-off function
    f_{ε,δ}^{⊗k} (DRS §2, KOV §II; the tests check it equals :func:`optcomp.fdp.epsilon_delta_composition`).
    ``progress(done, total)`` counts the constraints of all k computed so far (Σ ⌊k/2⌋ + 1 in all).
    """
    from optcomp import region

    eps, d = check_epsilon_delta(epsilon, delta)
    kk = [check_int(f"ks[{i}]", k) for i, k in enumerate(ks)]
    if not kk:
        raise ValueError("ks must hold at least one k, got none")
    out = _check_path(path)
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5.0, 5.0))
    a = alpha_grid(801)
    total = sum(k // 2 + 1 for k in kk)
    done = 0
    for k in kk:
        def step(i: int, _n: int, base: int = done) -> None:
            if progress is not None:
                progress(base + i, total)

        r = region.composed(eps, d, k, progress=step)
        done += k // 2 + 1
        lower = np.asarray(r.beta(a))
        upper = 1.0 - np.asarray(r.beta(1.0 - a))
        line = ax.plot(a, lower, lw=1.2, label=f"k = {k}")[0]
        ax.plot(a, upper, lw=1.2, color=line.get_color())
        ax.fill_between(a, lower, upper, color=line.get_color(), alpha=0.12)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")
    ax.set_xlabel("P_FA (false alarm)")
    ax.set_ylabel("P_MD (missed detection)")
    ax.set_title(f"Privacy region of k-fold ({eps:g}, {d:g})-DP (KOV Thm III.3)")
    ax.legend(fontsize=8)
    return _finish(fig, out)


def plot_composition_comparison(
    epsilons: Sequence[float],
    delta_g: float,
    max_k: int,
    *,
    path: str | Path | None = None,
    points: int = 40,
    progress: Progress | None = None,
) -> Figure:
    """ε_g against k for Summing, DRV, KOV Bound and Optimal composition (MV §6, Figure 2; δ = 0).

    Summing: kε (MV Thm 1.2); DRV: :func:`optcomp.bounds.advanced_drv` with δ̃ = δ_g (MV Thm 1.3);
    KOV Bound: :func:`optcomp.bounds.kov_bound` (MV Thm 6.1); Optimal: the certified upper end of
    :func:`optcomp.optimal.epsilon` (MV Thm 1.4). The y axis is logarithmic unless some ε_g is 0.
    ``progress(done, total)`` is called after each (ε, k) point. ``max_k·ε`` beyond the float range of
    the optimal engine (about 2.8e306) is a ValueError.
    """
    from optcomp import bounds, optimal

    dg = check_open_probability("delta_g", delta_g)
    kmax = check_int("max_k", max_k)
    n = check_int("points", points, minimum=2)
    eps_list = [check_nonnegative(f"epsilons[{i}]", e) for i, e in enumerate(epsilons)]
    if not eps_list:
        raise ValueError("epsilons must hold at least one ε, got none")
    if not max(eps_list) * kmax <= _OPTIMAL_MAX_TOTAL_EPSILON:
        raise ValueError(
            f"max_k * epsilon must be <= {_OPTIMAL_MAX_TOTAL_EPSILON:.3g} (the optimal engine's float range), "
            f"got {max(eps_list) * kmax:g}"
        )
    out = _check_path(path)
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.0, 4.5))
    ks = [int(k) for k in np.unique(np.round(np.geomspace(1, kmax, n)))]
    styles = {"Summing": ":", "DRV": "-.", "KOV Bound": "--", "Optimal": "-"}
    positive = True
    for j, eps in enumerate(eps_list):
        series: dict[str, list[float]] = {name: [] for name in styles}
        for i, k in enumerate(ks):
            series["Summing"].append(bounds.basic(eps, 0.0, k)[0])
            series["DRV"].append(bounds.advanced_drv(eps, 0.0, k, dg)[0])
            series["KOV Bound"].append(bounds.kov_bound(eps, 0.0, k, dg)[0])
            series["Optimal"].append(optimal.epsilon(optimal.homogeneous(eps, 0.0, k), dg).upper)
            if progress is not None:
                progress(j * len(ks) + i + 1, len(eps_list) * len(ks))
        positive = positive and all(v > 0 for vs in series.values() for v in vs)
        color = None
        for name, ls in styles.items():
            line = ax.plot(ks, series[name], ls=ls, color=color, label=f"{name}, ε = {eps:g}")[0]
            color = line.get_color()
    ax.set_xscale("log")
    ax.set_yscale("log" if positive else "linear")
    ax.set_xlabel("k (number of mechanisms)")
    ax.set_ylabel("ε_g")
    ax.set_title(f"Composition theorems, δ = 0, δ_g = {dg:.3g} (MV §6)")
    ax.legend(fontsize=7, ncol=2)
    return _finish(fig, out)

# --- the sweep's figure (optcomp sweep --plot) -----------------------------------------------------------
# ε against steps per σ, and the (σ, steps) frontier. Nothing is computed here: both panels read the stored
# rows' *certified upper* ε (the bound a training run may claim). Left: ε against the number of steps, one
# line per σ, at one (sampling rate, δ) of the grid. Right: the frontier — for a few ε budgets, the most
# steps whose certified ε stays within the budget, per σ (only steps of the grid: a frontier read off the
# grid, not a calibration).

#: ε budgets of the frontier panel.
SWEEP_BUDGETS = (0.5, 1.0, 2.0, 4.0, 8.0)


def _sweep_slice(recs: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], str]:
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
    rows, caption = _sweep_slice(recs)
    sigmas = sorted({float(r["noise_multiplier"]) for r in rows})
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    cmap = plt.get_cmap("viridis")
    for i, sigma in enumerate(sigmas):
        pts = sorted((int(r["steps"]), float(r["upper"])) for r in rows if float(r["noise_multiplier"]) == sigma)
        left.plot([t for t, _ in pts], [e for _, e in pts], marker=".", color=cmap(i / max(1, len(sigmas) - 1)),
                  label=f"σ = {sigma:.3g}")
    left.set(xscale="log", yscale="log", xlabel="steps T", ylabel="certified upper ε", title=f"ε against steps ({caption})")
    left.legend(fontsize="x-small", ncol=2)
    for budget in SWEEP_BUDGETS:
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

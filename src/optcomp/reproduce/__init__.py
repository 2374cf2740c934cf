"""``optcomp reproduce``: the papers' figures and headline numbers, regenerated, with the paper's value beside ours.

One small module per paper; :data:`TARGETS` maps a target name to its function. Each target returns a
:class:`Result` (checks "paper says / optcomp gives / agree?", rows of numbers, a matplotlib figure) that
:func:`save` writes as PNG, SVG, CSV and JSON. ``fast=True`` runs a smaller version (fewer points, a
coarser grid) for the test suite; the committed ``docs/img`` output is the full version.

==================  =======================================================================================
target              reproduces
==================  =======================================================================================
``kov-fig1``        KOV Fig. 1: the privacy region R(ε, δ)
``kov-fig2``        KOV Fig. 2: composed regions, k = 1..5, ε = 0.4, δ ∈ {0, 0.1} (Thm III.3)
``kov-fig3``        KOV Fig. 3: Thm III.3 vs Thm III.4 vs DRV regions
``kov-variance``    KOV §V-A: least variance of Gaussian, Laplace, staircase vs Cor. V.2 / Thm V.3
``kov-geometric``   KOV Thm V.4: geometric mechanism = Thm III.3's region (δ = 0), certified
``kov-cuts``        KOV Appendix A: cut-query additive error with classic, KOV and optimal composition
``mv-section6``     Murtagh–Vadhan §6 / Fig. 2: classic theorems relative to optimal, δ_g = 2^-25
``buckets-fig2``    privacy buckets Fig. 2: Gaussian vs M_{ε,δ} under r = 512 compositions
``buckets-fig3``    privacy buckets Fig. 3: Vuvuzela's conversation protocol
``gdp-fig1``        Dong–Roth–Su Fig. 1: CLT approximation vs exact trade-off
``gdp-fig4``        Dong–Roth–Su Fig. 4: GDP → (ε, δ)
``gdp-fig5``        Dong–Roth–Su Fig. 5: composition, GDP vs advanced composition
``gdp-noisy-sgd``   Dong–Roth–Su §5: noisy SGD ε vs epochs (CLT, certified PLD, RDP)
==================  =======================================================================================
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from optcomp._numerics import ProgressLine
from optcomp.reproduce import buckets, gdp, kov, mv
from optcomp.reproduce._core import Check, Context, Result, save

#: Target name → function. Order is the order of ``--all`` and of ``docs/papers.md``.
TARGETS: dict[str, Callable[[Context], Result]] = {
    "kov-fig1": kov.fig1,
    "kov-fig2": kov.fig2,
    "kov-fig3": kov.fig3,
    "kov-variance": kov.variance,
    "kov-geometric": kov.geometric,
    "kov-cuts": kov.cuts,
    "mv-section6": mv.section6,
    "buckets-fig2": buckets.fig2,
    "buckets-fig3": buckets.fig3,
    "gdp-fig1": gdp.fig1,
    "gdp-fig4": gdp.fig4,
    "gdp-fig5": gdp.fig5,
    "gdp-noisy-sgd": gdp.noisy_sgd,
}


def run(name: str, *, fast: bool = False, progress: ProgressLine | None = None) -> Result:
    """Run one target. ``ValueError`` naming ``name`` and the known targets if it is not one."""
    if name not in TARGETS:
        raise ValueError(f"target must be one of {', '.join(TARGETS)}, got {name!r}")
    ctx = Context(fast=fast) if progress is None else Context(fast=fast, progress=progress)
    return TARGETS[name](ctx)


def run_and_save(name: str, output: Path, *, fast: bool = False, progress: ProgressLine | None = None) -> tuple[Result, list[Path]]:
    """Run one target and write its files under ``output``."""
    result = run(name, fast=fast, progress=progress)
    return result, save(result, output)


__all__ = ["TARGETS", "Check", "Context", "Result", "run", "run_and_save", "save"]

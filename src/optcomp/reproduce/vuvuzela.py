"""Vuvuzela's conversation-protocol noise: the one parameter set and model shared by ``optcomp reproduce
buckets-fig3`` and ``examples/vuvuzela.py`` (derivation and sources: ``docs/vuvuzela.md``).

Sources. Meiser–Mohammadi, *Tight on budget?* (CCS 2018), §2.3 and Figure 3 give the observations
r = 65,536 and r = 524,288, the Laplace means 150k and 450k, the Gaussian means 15k/45k and 150k/450k
("the same variance and mean") and the privacy target e^ε ≤ 2, δ ≤ 1e-4. The rest is Vuvuzela's
(van den Hooff, Lazar, Zaharia, Zeldovich, SOSP 2015) conversation-protocol noise as restated in
docs/vuvuzela.md (the Vuvuzela text is not in ``shared/papers``):

* each round every server adds n₁ = max(0, ⌈Y₁⌉) single dummy accesses and n₂ = max(0, ⌈Y₂⌉) dummy
  pairs, Y₁ ~ Lap(µ, b), Y₂ ~ Lap(µ/2, b/2);
* one user's conversation changes the single count by at most 2 and the pair count by at most 1, so one
  round is (2/b + 1/(b/2)) = (4/b)-DP up to the clamp at 0 (Vuvuzela's per-round ε = 4/b);
* the scales are Vuvuzela's for its 150k and 450k means as we recall its parameter table: b = 7,300 and
  b = 20,000 (about 70,000 and 500,000 rounds at e^ε = 2, δ = 1e-4; Meiser–Mohammadi use 2¹⁶ and 2¹⁹).
  b = 13,800 belongs to Vuvuzela's µ = 300k configuration.

Two versions of the law are composed, both certified through :func:`optcomp.compose`:

* :func:`clamped` — the noise as the protocol draws it, rounded and clamped at 0
  (:class:`~optcomp.mechanisms.ShiftedTruncatedLaplace`). The clamp is not a post-processing of the
  released count (max(c, ⌈c + Y⌉) depends on c): outputs c, …, c + Δ − 1 have no mass under the shifted
  pair, so δ(ε) ≥ 1 − Π(1 − q_i) for every ε (:func:`clamp_floor`), about 0.9·1e-4 here;
* :func:`unclamped` — the continuous Laplace noise alone (rounding up is a post-processing, the clamp is
  dropped): the analysis of the Laplace pair that ignores the clamp.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from optcomp import Accuracy, compose
from optcomp._items import merged_mu
from optcomp.mechanisms import Gaussian, Laplace, ShiftedTruncatedLaplace
from optcomp.queries import Composition


@dataclass(frozen=True)
class Panel:
    """One panel of Meiser–Mohammadi Fig. 3: ``rounds`` observations of the Laplace configuration
    (mean ``mean``, scale ``scale`` of the single-access noise) and the Gaussian means compared with it."""

    label: str
    rounds: int
    mean: float
    scale: float
    gaussian_means: tuple[float, float]


#: The two panels (module docstring for the sources).
PANELS = (
    Panel("LP-150k", 65_536, 150_000.0, 7_300.0, (15_000.0, 150_000.0)),
    Panel("LP-450k", 524_288, 450_000.0, 20_000.0, (45_000.0, 450_000.0)),
)
#: Sensitivities of the single-access and the pair-access counts (messages per conversation change).
DELTA_SINGLE, DELTA_PAIR = 2, 1
#: The privacy target of Figure 3 (and Vuvuzela's): e^ε ≤ 2 and δ ≤ 1e-4.
TARGET_EXP_EPSILON, TARGET_DELTA = 2.0, 1e-4


def clamped(panel: Panel, *, accuracy: Accuracy | None = None) -> Composition:
    """The r-round composition of the protocol's noise itself: n₁ = max(0, ⌈Lap(µ, b)⌉) (Δ = 2) and
    n₂ = max(0, ⌈Lap(µ/2, b/2)⌉) (Δ = 1), exact laws (the clamp's rare large loss is kept off the grid)."""
    items = (
        (ShiftedTruncatedLaplace(panel.scale, mean=panel.mean, sensitivity=DELTA_SINGLE), panel.rounds),
        (ShiftedTruncatedLaplace(panel.scale / 2, mean=panel.mean / 2, sensitivity=DELTA_PAIR), panel.rounds),
    )
    return compose(*items) if accuracy is None else compose(*items, accuracy=accuracy)


def unclamped(panel: Panel, *, accuracy: Accuracy | None = None) -> Composition:
    """The r-round composition of the continuous, unclamped noise: Lap(b) with Δ = 2 and Lap(b/2) with
    Δ = 1 (each round (4/b)-DP)."""
    items = (
        (Laplace(panel.scale, sensitivity=float(DELTA_SINGLE)), panel.rounds),
        (Laplace(panel.scale / 2, sensitivity=float(DELTA_PAIR)), panel.rounds),
    )
    return compose(*items) if accuracy is None else compose(*items, accuracy=accuracy)


def clamp_floor(panel: Panel) -> float:
    """1 − Π(1 − q_i): under the shifted noise the outputs c, …, c + Δ − 1 have no mass while the unshifted
    one puts q = P(⌈Y⌉ ≤ Δ − 1) = ½·e^{−(µ − Δ + 1)/b} on them, so δ(ε) ≥ this for every ε (both counts,
    every round). Rounded down (the lower end of a bracket)."""
    log_keep = panel.rounds * (
        math.log1p(-0.5 * math.exp(-(panel.mean - DELTA_SINGLE + 1) / panel.scale))
        + math.log1p(-0.5 * math.exp(-(panel.mean / 2 - DELTA_PAIR + 1) / (panel.scale / 2)))
    )
    return -math.expm1(log_keep) * (1.0 - 2.0**-40)  # a few ulps of expm1/log1p, rounded down


def gaussian_same_variance_mu(panel: Panel) -> float:
    """μ of the r-round Gaussian noise with the Laplace configuration's variances (σ = √2·b for the single
    count, √2·b/2 for the pairs), unclamped: μ = √(r·((2/σ₁)² + (1/σ₂)²)) (DRS Cor. 3.3)."""
    s1 = math.sqrt(2.0) * panel.scale
    s2 = s1 / 2
    return merged_mu([
        (Gaussian(s1, sensitivity=float(DELTA_SINGLE)), panel.rounds),
        (Gaussian(s2, sensitivity=float(DELTA_PAIR)), panel.rounds),
    ])


__all__ = [
    "DELTA_PAIR",
    "DELTA_SINGLE",
    "PANELS",
    "TARGET_DELTA",
    "TARGET_EXP_EPSILON",
    "Panel",
    "clamp_floor",
    "clamped",
    "gaussian_same_variance_mu",
    "unclamped",
]

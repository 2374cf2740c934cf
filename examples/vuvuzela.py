"""Vuvuzela's conversation-protocol noise, accounted: privacy-buckets Figure 3 regenerated.

Meiser and Mohammadi ("Tight on budget? Tight bounds for r-fold approximate differential privacy",
CCS 2018, §2.3, Figure 3) plot upper and lower bounds on δ(ε) for e^ε ∈ [1, 3.5] after r = 65,536 and
r = 524,288 rounds of the Vuvuzela conversation protocol (van den Hooff, Lazar, Zaharia, Zeldovich:
"Vuvuzela: Scalable Private Messaging Resistant to Traffic Analysis", SOSP 2015), for the Laplace
noise Vuvuzela recommends (means 150k and 450k dummy messages per round) and for Gaussian noise
(means 150k/450k "with the same variance and mean", and 10× cheaper means 15k/45k).

Model and parameters: ``optcomp.reproduce.vuvuzela``, shared with ``optcomp reproduce buckets-fig3``
(sources and derivation in docs/vuvuzela.md):

* Each round every server adds n₁ = max(0, ⌈Y₁⌉) single dummy accesses and n₂ = max(0, ⌈Y₂⌉) dummy
  pairs, Y₁ ~ Lap(µ, b), Y₂ ~ Lap(µ/2, b/2); one user's conversation changes the single count by at
  most 2 and the pair count by at most 1 (so one round is (4/b)-DP up to the clamp at 0, the
  ε = 4/b, δ = ½·e^{(2−µ)/b} per round of the Vuvuzela paper). Laplace configurations: µ = 150,000,
  b = 7,300 and µ = 450,000, b = 20,000.
* Gaussian configuration "GS-m": the same two counts with N(m, σ²) and N(m/2, (σ/2)²) noise, σ = √2·b
  of the Laplace configuration with the same *variance* (``--gauss-sigma`` overrides it).

How the bracket is computed (all through ``optcomp.compose(...).delta(ε)``, certified):

* Laplace (default): ``ShiftedTruncatedLaplace`` composes the exact clamped, rounded law; the PLD
  engine keeps its rare large-loss atom (the clamp) off the grid, so the bracket is tight.
* ``--coupled`` (a cross-check, and the path for Gaussian noise): the clamp at 0 is the only part of the noise whose privacy loss is large (≈ 8.9 for µ = 150k) and
  rare (≈ 6e-10 per draw). Coupling Y with the unclamped noise c + ⌈Y⌉ (equal unless Y ≤ −1, which has
  probability τ under either dataset), the r-round composition differs in total variation by at most
  T = r·(τ₁ + τ₂), hence δ_clamped(ε) ≤ δ_unclamped(ε) + (1 + e^ε)·T and ≥ δ_unclamped(ε) − (1 + e^ε)·T.
  A second lower bound: outputs c, …, c + Δ − 1 have no mass under the shifted pair, so
  δ(ε) ≥ 1 − Π(1 − q_i) (q_i the mass of Y_i ≤ Δ_i − 1), for every ε.
* The unclamped rounded Laplace pair (Δ + K, K) is exactly a ``DiscretePair`` on the outputs grouped by
  likelihood ratio (x ≤ 0, x = 1, …, Δ, x ≥ Δ + 1; grouping by the ratio loses nothing).
* Gaussian noise is accounted unrounded (rounding is post-processing: the upper end stays valid; the
  lower end is that of the unrounded mechanism), with the same clamp coupling, τ = Φ(−m/σ), and the
  same floor (outputs below c + Δ). ``--no-clamp`` drops the clamp (counts may go negative: not
  physical, but what an analysis of the Gaussian pair alone computes).

``--quick`` uses 6 values of e^ε and r = 65,536 only.
Figures go to ``--output DIR`` (default: a new temporary directory), never over tracked files.

Run ``python examples/vuvuzela.py --quick``.
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.special import log_ndtr

import optcomp
from optcomp.mechanisms import DiscretePair, Gaussian
from optcomp.reproduce import vuvuzela

# The one parameter set and model, shared with ``optcomp reproduce buckets-fig3`` (docs/vuvuzela.md):
# the two panels (r, Laplace mean µ and scale b, Gaussian means), the counts' sensitivities, the target.
PANELS = vuvuzela.PANELS
DELTA_SINGLE, DELTA_PAIR = vuvuzela.DELTA_SINGLE, vuvuzela.DELTA_PAIR
TARGET_EXP_EPSILON, TARGET_DELTA = vuvuzela.TARGET_EXP_EPSILON, vuvuzela.TARGET_DELTA


@dataclass(frozen=True)
class Curve:
    label: str
    exp_eps: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    seconds: float


def rounded_laplace_pair(b: float, sensitivity: int) -> DiscretePair:
    """(Δ + K, K), K = ⌈Y⌉ − µ with Y ~ Lap(µ, b), grouped by likelihood ratio (module docstring)."""
    cell = -math.expm1(-1.0 / b)  # 1 − e^{−1/b}
    far = 0.5 * math.exp(-sensitivity / b)
    mid_q = [0.5 * math.exp(-(x - 1) / b) * cell for x in range(1, sensitivity + 1)]
    mid_p = [0.5 * math.exp((x - sensitivity) / b) * cell for x in range(1, sensitivity + 1)]
    return DiscretePair((far, *mid_p, 0.5), (0.5, *mid_q, far))


def coupling_mass(rounds: int, taus: list[float]) -> float:
    """T = r·Σ τ_i: total-variation distance between the clamped and unclamped r-round compositions."""
    return rounds * math.fsum(taus)


def bracket(
    pld: optcomp.Composition, exp_eps: np.ndarray, t: float, floor: float
) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = pld.delta_curve(np.log(exp_eps))
    slack = (1.0 + exp_eps) * t
    return np.maximum(np.maximum(lo - slack, 0.0), floor), np.minimum(hi + slack, 1.0)


def laplace_curve(panel: vuvuzela.Panel, exp_eps: np.ndarray, coupled: bool) -> Curve:
    start = time.perf_counter()
    rounds, mu, b = panel.rounds, panel.mean, panel.scale
    floor = vuvuzela.clamp_floor(panel)
    if not coupled:
        lo, hi = bracket(vuvuzela.clamped(panel), exp_eps, 0.0, floor)
    else:
        taus = [0.5 * math.exp(-(mu + 1) / b), 0.5 * math.exp(-(mu / 2 + 1) / (b / 2))]
        pld = optcomp.compose(
            (rounded_laplace_pair(b, DELTA_SINGLE), rounds), (rounded_laplace_pair(b / 2, DELTA_PAIR), rounds)
        )
        lo, hi = bracket(pld, exp_eps, coupling_mass(rounds, taus), floor)
    return Curve(f"LP-{mu / 1000:g}k", exp_eps, lo, hi, time.perf_counter() - start)


def gaussian_curve(rounds: int, mean: float, sigma: float, exp_eps: np.ndarray, clamp: bool) -> Curve:
    start = time.perf_counter()
    # P(N ≤ 0) for both counts (m/σ = (m/2)/(σ/2)): the clamp's coupling mass, and the Q-mass of the
    # outputs below c + Δ where the shifted P has none (the lower floor 1 − (1 − τ)^{2r}).
    log_tau = float(log_ndtr(-mean / sigma))
    tau = math.exp(log_tau) if clamp else 0.0
    floor = -math.expm1(2 * rounds * math.log1p(-tau)) if clamp else 0.0
    pld = optcomp.compose(
        (Gaussian(sigma, sensitivity=DELTA_SINGLE), rounds),
        (Gaussian(sigma / 2, sensitivity=DELTA_PAIR), rounds),
    )
    lo, hi = bracket(pld, exp_eps, coupling_mass(rounds, [tau, tau]), floor)
    label = f"GS-{mean / 1000:g}k (σ={sigma:.0f}{'' if clamp else ', no clamp'})"
    return Curve(label, exp_eps, lo, hi, time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="6 values of e^ε, r = 65,536 only")
    parser.add_argument(
        "--coupled",
        action="store_true",
        help="Laplace by the clamp coupling (looser cross-check) instead of the exact law",
    )
    parser.add_argument("--gauss-sigma", type=float, default=None, help="σ of every Gaussian configuration")
    parser.add_argument(
        "--no-clamp",
        action="store_true",
        help="Gaussian counts may go negative (no clamp at 0; not physical)",
    )
    parser.add_argument(
        "--output", type=Path, default=None, help="directory for the figure (default: a temp dir)"
    )
    args = parser.parse_args()
    exp_eps = np.linspace(1.0, 3.5, 6 if args.quick else 26)
    panels = PANELS[:1] if args.quick else PANELS
    total = time.perf_counter()
    results: list[tuple[int, list[Curve]]] = []
    for panel in panels:
        rounds = panel.rounds
        sigma = args.gauss_sigma if args.gauss_sigma is not None else math.sqrt(2.0) * panel.scale
        curves = [laplace_curve(panel, exp_eps, args.coupled)]
        curves += [gaussian_curve(rounds, m, sigma, exp_eps, not args.no_clamp) for m in panel.gaussian_means]
        results.append((rounds, curves))
        print(f"r = {rounds:,} observations: δ(ε) bracket [lower, upper] (certified upper)")
        for c in curves:
            at = int(np.argmin(np.abs(c.exp_eps - TARGET_EXP_EPSILON)))
            meets = "meets" if c.upper[at] <= TARGET_DELTA else "does NOT meet"
            print(
                f"  {c.label:24s} e^ε = {c.exp_eps[at]:.2f}: δ ∈ [{c.lower[at]:.3e}, {c.upper[at]:.3e}]  "
                f"{meets} (e^ε ≤ 2, δ ≤ 1e-4)   [{c.seconds:.1f} s]"
            )
    print(f"total {time.perf_counter() - total:.1f} s")
    out = args.output if args.output is not None else Path(tempfile.mkdtemp(prefix="optcomp-vuvuzela-"))
    out.mkdir(parents=True, exist_ok=True)
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no figure (pip install optcomp[plot])")
        return
    fig, axes = plt.subplots(1, len(results), figsize=(6 * len(results), 4.5), squeeze=False)
    for ax, (rounds, curves) in zip(axes[0], results):
        for c, color in zip(curves, ("tab:red", "tab:blue", "tab:green")):
            ax.semilogy(c.exp_eps, np.maximum(c.upper, 1e-300), color=color, label=f"{c.label} upper")
            ax.semilogy(c.exp_eps, np.maximum(c.lower, 1e-300), color=color, ls=":", label=f"{c.label} lower")
        ax.plot([TARGET_EXP_EPSILON], [TARGET_DELTA], "k*", label="privacy target")
        ax.set(xlabel="e^ε", ylabel="δ(ε)", title=f"r = {rounds:,} observations", ylim=(1e-12, 1.5))
        ax.legend(fontsize=7)
    path = out / "vuvuzela_figure3.png"
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"figure written to {path}")


if __name__ == "__main__":
    main()

"""Optimal composition of (ε, δ)-DP black boxes (KOV Thm III.3; Murtagh–Vadhan Thms 1.4, 1.5, 1.7).

``OptComp((ε_1, δ_1), …, (ε_k, δ_k), δ_g)`` is the least ε_g ≥ 0 such that every adaptive composition
of (ε_i, δ_i)-DP mechanisms is (ε_g, δ_g)-DP. MV Thm 1.5 characterises it: with the privacy loss of the
canonical mechanisms, X_i = +ε_i w.p. p_i = e^{ε_i}/(1 + e^{ε_i}) and −ε_i otherwise, L = Σ X_i,

    D(ε_g) := E[(1 − e^{ε_g − L})_+],   (ε_g, δ_g)-DP  ⟺  D(ε_g) ≤ r := 1 − (1 − δ_g)/Π(1 − δ_i),

and the optimal δ at ε_g is δ_g = 1 − Π(1 − δ_i)(1 − D(ε_g)).

Engines (``method="auto"`` picks the first that applies; one module per idea):

* :mod:`._route` — the one routing decision (:func:`._route.choose`), the caller's accuracy translated
  once (``Accuracy`` or the expert ``tolerance``), and the grid refinement loops;
* :mod:`._huge` — ε_i > 745 split off as a deterministic shift of the loss;
* :mod:`._spec` — validation, pooling of repeated (ε, δ) pairs, r with a certified error near the floor;
* :mod:`._homogeneous` — one distinct ε at any k (exact binomial tails in log space, windowed);
* :mod:`._brute` — at most 16 non-zero ε_i (all 2^k subsets);
* :mod:`._split` + :mod:`._freq` (+ :mod:`._tree`) — distinct real ε_i: a dominating mixture of grid
  neighbours above, a dominated quantised pair below, both O(kΔ²) from the truth and exact when the ε_i
  share a lattice; composed in the frequency domain (closed-form characteristic functions at the alive
  DFT bins, certified bounds on the dead ones, one inverse FFT), directly for ≤ 64 items, by the tree of
  windowed convolutions only where neither applies;
* :mod:`._mv` — MV Thm 1.7 as published (``method="mv"``), in log space, with a cost estimate;
* :mod:`._solve` — every envelope → ε(δ) and δ(ε) by exact piecewise inversion;
* :mod:`._calibrate` — the largest per-query ε₀ meeting a k-fold target (certified), next to KOV Cor V.1.

Edge-case semantics:

* ε_i = 0 contributes only δ_i; any δ_i = 1 makes every finite guarantee impossible (ε = ∞, δ = 1).
* δ_g below the floor 1 − Π(1 − δ_i): ``Bound(inf, inf)`` (certified, not an error). Exactly at the floor:
  ε_g = Σε_i. When even 256-bit arithmetic cannot tell on which side of the floor δ_g lies (and more than
  64 δ_i > 0 rule out exact rationals), the upper end is ``inf``.
* ε_i > 745 (p_i = 1 in float64): the mechanism's loss is +ε_i except with probability < 2⁻¹⁰⁷⁴; it is
  split off as a deterministic shift (its tiny − mass on the +∞ atom of the upper end). Answers beyond
  the float range are ``Bound(1.797…e308, inf)``.
"""

from __future__ import annotations

from optcomp._numerics import Bound
from optcomp.optimal._api import DEFAULT_MAX_POINTS, delta, epsilon
from optcomp.optimal._calibrate import BlackBoxCalibration, calibrate
from optcomp.optimal._huge import HUGE_EPS
from optcomp.optimal._mv import MV_MAX_SECONDS
from optcomp.optimal._route import DEFAULT_TOLERANCE, Method
from optcomp.optimal._spec import Homogeneous, homogeneous

__all__ = [
    "DEFAULT_MAX_POINTS",
    "DEFAULT_TOLERANCE",
    "HUGE_EPS",
    "MV_MAX_SECONDS",
    "BlackBoxCalibration",
    "Bound",
    "Homogeneous",
    "Method",
    "calibrate",
    "delta",
    "epsilon",
    "homogeneous",
]

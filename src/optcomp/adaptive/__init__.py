"""Adaptive composition of bounded-range (BR) steps — the exponential mechanism, Gumbel noisy max, top-k
peeling — interleaved with fixed pairs, in the order given (``docs/selection.md``).

The optimal adaptive δ(ε) of a sequence of steps, where an analyst picks each BR step's worst-case pair
(P_t, Q_t) after seeing the earlier outputs, is the backward recursion δ₀(x) = (1 − e^x)_+,

    δ_j(x) = sup_{t ∈ [0, ε_j]} [p_t δ_{j−1}(x − t) + (1 − p_t) δ_{j−1}(x − t + ε_j)]     (BR step),
    δ_j(x) = E_P[δ_{j−1}(x − L)]                                                          (fixed step),

read at x = ε (the first step conditions the rest). :class:`AdaptiveRecursion` brackets it on a lattice:
the upper end by the chord in y = e^x (δ is convex in y) with the closed-form maximum of each t-cell, the lower
end by an adversary restricted to a grid of t (exact on the lattice), the fixed steps by certified lattice
kernels (:func:`optcomp.pld.lattice_kernels`). :func:`nonadaptive_delta` / :func:`nonadaptive_epsilon` give
the optimum when the steps' pairs are fixed in advance (Dong–Durfee–Rogers 2020, Thm 3), a *lower* bound on
the adaptive one, labelled as such.

This room computes; :func:`optcomp.compose` (the queries floor) routes compositions with BR steps here.
"""

from __future__ import annotations

from optcomp.adaptive._engine import AdaptiveRecursion
from optcomp.adaptive._nonadaptive import nonadaptive_delta, nonadaptive_epsilon
from optcomp.adaptive._plan import BRRun, FixedRun, Run

__all__ = ["AdaptiveRecursion", "BRRun", "FixedRun", "Run", "nonadaptive_delta", "nonadaptive_epsilon"]

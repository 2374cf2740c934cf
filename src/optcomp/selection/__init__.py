"""Private selection and hyperparameter tuning, certified: release the best of K runs of a base.

Run a base mechanism — a DP-SGD training run, a composition, one mechanism — K times, K drawn at random
independently of the data, and release only the best candidate (by a score the runs themselves compute,
in a fixed total order). How much privacy does the whole search cost? :func:`select` answers with every
route whose hypotheses hold and names the one that certified the smallest ε (``ROUTES``):

* Liu–Talwar (STOC 2019) / Papernot–Steinke Cor. 3 for pure ε-DP bases (``pure``);
* Papernot–Steinke (ICLR 2022) Thm 2 (truncated negative binomial K: geometric, logarithmic) and Thm 6
  (Poisson K), fed with the base's exact RDP curve and, for Thm 6, δ̂ from its certified PLD
  (``rdp-thm2``, ``rdp-thm6``);
* a privacy-profile bound from the base's certified δ(ε) curve (``profile``; ``docs/private-selection.md``
  §4 has the proof), which handles every law of K (also binomial and fixed counts);
* for a bounded K, the composition of K_max runs (``composition``).

:func:`threshold` is Liu–Talwar's known-threshold variant (stop at the first candidate above a threshold,
or with probability γ after each one below it).

The building blocks are public too: :class:`ProfileRoute` (the profile route on any certified profile grid),
:func:`theorem2` / :func:`theorem6` (Papernot–Steinke on any RDP curve; :func:`epsilon_hats` are Thm 6's ε̂), :func:`order_delta` and
:func:`law_lower_delta` (the exact best-of-K law of a pair, and the certified lower end of one mechanism).

>>> from optcomp.selection import select, Poisson
>>> from optcomp import Gaussian
>>> b = select(Gaussian(sigma=4.0), Poisson(10.0)).epsilon(1e-6)   # doctest: +SKIP
"""

from __future__ import annotations

from optcomp.selection._exact import law_lower_delta, order_delta
from optcomp.selection._profile import ProfileRoute
from optcomp.selection._rdp_routes import epsilon_hats, theorem2, theorem6
from optcomp.selection._repetitions import (
    Binomial,
    Geometric,
    Logarithmic,
    Poisson,
    Repetitions,
    TruncatedNegativeBinomial,
)
from optcomp.selection._select import (
    PROFILE_ACCURACY,
    ROUTES,
    RouteAnswer,
    Selection,
    SelectionBound,
    pure_epsilon,
    select,
)
from optcomp.selection._threshold import ThresholdSelection, threshold

__all__ = [
    "PROFILE_ACCURACY",
    "ROUTES",
    "Binomial",
    "Geometric",
    "Logarithmic",
    "Poisson",
    "ProfileRoute",
    "Repetitions",
    "RouteAnswer",
    "Selection",
    "SelectionBound",
    "ThresholdSelection",
    "TruncatedNegativeBinomial",
    "epsilon_hats",
    "law_lower_delta",
    "order_delta",
    "pure_epsilon",
    "select",
    "theorem2",
    "theorem6",
    "threshold",
]

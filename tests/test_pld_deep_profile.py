"""Issue 27 item 7: a deep-tail privacy profile shares its tilted compositions across the points.

The brackets stay certified: every point of a 41-point profile to ε = 20 of a Gaussian composition
(on the grid, where the GDP closed form is the truth) contains the 50-digit truth, and the profile of
the DP-SGD PLD is the same as the point-by-point queries (each δ query reads its own tilts)."""

from __future__ import annotations

import math

import numpy as np

from optcomp import DEFAULT_ACCURACY, compose
from optcomp.mechanisms import Gaussian, PoissonSubsampled, privacy_loss_laws
from optcomp.pld import PrivacyLossDistribution
from tests._references import gdp_delta
from tests.tolerances import EXACT_RTOL


def test_deep_profile_of_a_gaussian_composition_contains_the_gdp_truth() -> None:
    laws = privacy_loss_laws(Gaussian(sigma=2.0))
    pld = PrivacyLossDistribution.from_laws(*laws, accuracy=DEFAULT_ACCURACY).self_compose(16)
    mu = math.sqrt(16) / 2.0
    eps = np.linspace(0.0, 20.0, 41)
    lo, hi = pld.delta_curve(eps)
    for e, a, b in zip(eps.tolist(), lo.tolist(), hi.tolist(), strict=True):
        truth = float(gdp_delta(mu, e))
        assert a <= truth * (1 + EXACT_RTOL) and truth <= b * (1 + EXACT_RTOL), (e, a, truth, b)
        assert b - a <= DEFAULT_ACCURACY.relative_width * b, (e, a, b)


def test_deep_profile_matches_pointwise_queries_on_dpsgd() -> None:
    """σ = 1, q = 0.01, 1,000 steps: the shared profile's brackets at ε = 5, 10, 20 are within the
    requested width of the single-point ``delta`` brackets, and overlap them (both are certified)."""
    step = PoissonSubsampled(Gaussian(sigma=1.0), sampling_rate=0.01)
    eps = np.linspace(0.0, 20.0, 41)
    lo, hi = compose((step, 1000)).pld().delta_curve(eps)
    for e in (5.0, 10.0, 20.0):
        i = int(np.flatnonzero(eps == e)[0])
        single = compose((step, 1000)).pld().delta(e)
        assert max(lo[i], single.lower) <= min(hi[i], single.upper)
        assert hi[i] - lo[i] <= DEFAULT_ACCURACY.relative_width * hi[i]

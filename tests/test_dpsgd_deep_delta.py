"""DP-SGD inverses at deep δ: answered and certified down to ``MIN_INVERSE_DELTA`` = 1e−300, refused by name
below it (where the PLD engine's upper ε is loose or infinite and the σ search used to run for minutes)."""

from __future__ import annotations

import math

import pytest

from optcomp import dpsgd
from tests._references.gdp import gdp_mu


def test_noise_multiplier_at_delta_1e120_is_certified() -> None:
    sigma = dpsgd.noise_multiplier(20.0, 0.01, 1000, 1e-120)
    assert dpsgd.epsilon(sigma, 0.01, 1000, 1e-120).upper <= 20.0
    # T full-batch Gaussian steps are μ-GDP with μ = √T/σ (exact; mpmath): subsampling only adds privacy
    assert sigma < math.sqrt(1000) / gdp_mu(20.0, 1e-120)


@pytest.mark.parametrize("delta", [1e-301, 1e-310, 5e-324])
def test_inverses_below_the_supported_delta_are_refused_by_name(delta: float) -> None:
    with pytest.raises(ValueError, match=r"delta must be in \[1e-300, 1\)"):
        dpsgd.noise_multiplier(20.0, 0.01, 1000, delta)
    with pytest.raises(ValueError, match=r"delta must be in \[1e-300, 1\)"):
        dpsgd.steps(20.0, 2.0, 0.01, delta)

"""GDP closed forms certified: directed against 50-digit mpmath on μ ∈ [1e-3, 50], ε ∈ [0, 200] (issue 15).

``gdp_delta`` and ``gdp_log_delta`` are upper ends (never below the exact value), with a stated excess;
``gdp_epsilon`` is never below the exact root and ``gdp_mu_for`` never above. The grid includes the
cancelling corner (small μ, ε ≫ μ²) and a 5 × 5 spot grid on which the float formula was once below the
truth at 15 of 25 points.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from optcomp.fdp import gdp_delta, gdp_epsilon, gdp_log_delta, gdp_mu_for
from tests._references import at_least_within, excess
from tests._references import gdp_delta as mp_delta
from tests._references import gdp_epsilon as mp_epsilon
from tests._references import gdp_log_delta as mp_log_delta
from tests.tolerances import GDP_DIRECTED_RTOL

SPOT_MUS = [0.1, 0.5, 1.0, 2.0, 5.0]
SPOT_EPSILONS = [0.01, 0.5, 1.0, 3.0, 10.0]
GRID_MUS = [1e-3, 3e-3, 0.01, 0.05, 0.1, 0.3, 1.0, 3.0, 10.0, 25.0, 50.0]
GRID_EPSILONS = [0.0, 1e-6, 0.01, 0.5, 1.0, 3.0, 10.0, 30.0, 100.0, 200.0]
TINY = math.ulp(0.0)


@pytest.mark.parametrize("mu", SPOT_MUS)
@pytest.mark.parametrize("eps", SPOT_EPSILONS)
def test_gdp_delta_on_spot_grid_never_below_truth_and_within_stated_excess(mu: float, eps: float) -> None:
    truth = mp_delta(mu, eps)
    got = gdp_delta(mu, eps)
    assert at_least_within(got, truth, GDP_DIRECTED_RTOL, floor=TINY)


@pytest.mark.parametrize("mu", GRID_MUS)
def test_grid_never_below_truth_including_cancelling_corner(mu: float) -> None:
    vals = np.asarray(gdp_delta(mu, np.array(GRID_EPSILONS)))
    logs = np.asarray(gdp_log_delta(mu, np.array(GRID_EPSILONS)))
    for eps, v, lv in zip(GRID_EPSILONS, vals.tolist(), logs.tolist(), strict=True):
        truth = mp_delta(mu, eps)
        log_truth = mp_log_delta(mu, eps)
        assert v >= truth, (mu, eps)
        assert lv >= log_truth, (mu, eps)
        assert v == gdp_delta(mu, eps)  # scalar and vector paths agree
        if truth > TINY:
            assert v > 0.0
        # the stated excess: 8u(κ + a² + |log δ| + 8) in log δ, twice (κ ≤ 1 + 2|a|/μ + 2/μ² on this grid)
        a = abs(-eps / mu + mu / 2)
        kappa = 1 + 2 * a / mu + 2 / mu**2
        bound = 2 * 8 * np.finfo(float).eps / 2 * (kappa + a * a + abs(float(log_truth)) + 8)
        assert excess(lv, log_truth) <= bound + 1e-300


@pytest.mark.parametrize("mu", [1e-3, 0.1, 1.0, 5.0, 50.0])
@pytest.mark.parametrize("delta", [1e-12, 1e-5, 0.01])
def test_inverses_on_the_safe_side(mu: float, delta: float) -> None:
    eps = gdp_epsilon(mu, delta)
    assert mp_delta(mu, eps) <= delta
    if eps > 0:
        assert eps >= mp_epsilon(mu, delta)
    if mu <= 5.0:
        for e in (0.5, 2.0):
            m = gdp_mu_for(e, delta)
            assert mp_delta(m, e) <= delta


def test_extremes() -> None:
    assert gdp_delta(0.0, 1.0) == 0.0
    assert gdp_delta(1.0, math.inf) == 0.0
    assert gdp_delta(1.0, 1e300) == TINY  # positive truth below the smallest double: rounded up
    assert gdp_log_delta(1.0, 1e4) >= float(mp_log_delta(1.0, 1e4))
    with pytest.raises(ValueError, match="epsilon"):
        gdp_delta(1.0, -1.0)
    with pytest.raises(ValueError, match="mu"):
        gdp_delta(float("nan"), 1.0)

"""Group privacy on the privacy profile (issue 27 item 1): certified upper ends of ε(δ) for groups.

Independent truth: a group of g on GDP μ is GDP gμ (closed form via mpmath in ``tests._references``).
Regression inputs: DP-SGD σ = 1, q = 0.01, 10³ Poisson steps (add/remove) and Laplace(10)×50 at δ = 1e-5,
whose groups of 8 and 16 had upper end ``inf`` on the trade-off route.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from optcomp import DEFAULT_ACCURACY
from optcomp.fdp import group_profile
from optcomp.fdp._gdp import gdp_delta_bound
from optcomp.fdp._group_profile import group_delta_profile, group_epsilon_upper
from optcomp.mechanisms import Gaussian, Laplace, PoissonSubsampled, privacy_loss_laws
from optcomp.pld import PrivacyLossDistribution
from tests._references import gdp_epsilon


class _Gdp:
    """One step of GDP μ with its certified closed-form δ bracket (a ``delta_curve`` object)."""

    def __init__(self, mu: float) -> None:
        self.mu = mu

    def delta_curve(self, epsilons: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        pairs = [gdp_delta_bound(self.mu, float(e)) for e in epsilons]
        return np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])

    def delta(self, epsilon: float) -> object:  # pragma: no cover - protocol filler
        raise NotImplementedError


@pytest.mark.parametrize(("g", "rtol"), [(8, 2e-4), (16, 5e-4)])
def test_group_of_gdp_is_gdp_of_g_mu(g: int, rtol: float) -> None:
    truth = float(gdp_epsilon(0.5 * g, 1e-5))
    upper = group_epsilon_upper(_Gdp(0.5), g, 1e-5, base_step=2.0**-6)
    assert truth <= upper <= truth * (1 + rtol), (truth, upper)


def test_group_of_a_gaussian_pld_brackets_the_closed_form() -> None:
    pld = PrivacyLossDistribution.from_laws(
        *privacy_loss_laws(Gaussian(sigma=2.0)), accuracy=DEFAULT_ACCURACY
    )
    for g in (8, 16):
        truth = float(gdp_epsilon(0.5 * g, 1e-5))
        b = group_profile(pld, g, 1e-5)
        assert b.lower <= truth <= b.upper < math.inf, (g, b, truth)
        assert b.route == "profile" and "bare PLD" in b.reason
        assert b.upper <= truth * 1.01, (g, b, truth)  # default base step 1/8: 24.60, 65.73


def test_profile_is_capped_nonincreasing_and_refuses_bad_input() -> None:
    base = np.array([1.0, 0.5, 0.1, 0.0])
    prof = group_delta_profile(base, 3, every=4, step=0.25, n=64)
    assert np.all(prof <= 1.0) and np.all(np.diff(prof) <= 0.0)
    with pytest.raises(ValueError, match="g must be"):
        group_delta_profile(base, 0, every=4, step=0.25, n=8)
    with pytest.raises(ValueError, match="step must be"):
        group_delta_profile(base, 2, every=4, step=0.3, n=8)
    with pytest.raises(ValueError, match="delta must be"):
        group_epsilon_upper(_Gdp(0.5), 2, 0.0)


@pytest.mark.slow  # 30 s: make test-slow (keeps make test under 10 minutes on 2 cores)
def test_dpsgd_groups_of_8_and_16_have_a_finite_upper_end() -> None:
    """σ = 1, q = 0.01, 10³ steps, δ = 1e-5: the trade-off route gave ``inf`` for g = 8 and 16."""
    laws = privacy_loss_laws(PoissonSubsampled(Gaussian(sigma=1.0), sampling_rate=0.01))
    pld = PrivacyLossDistribution.from_laws(*laws, accuracy=DEFAULT_ACCURACY).self_compose(1000)
    step, every = 2.0**-7, 16
    _, upper = pld.delta_curve(np.arange(0, 321, dtype=np.float64) * every * step)
    ends = {}
    for g in (8, 16):
        prof = group_delta_profile(upper, g, every=every, step=step, n=128 * 128 + 1)
        ends[g] = float(np.flatnonzero(prof <= 1e-5)[0] * step)
    # The exact group pairs give [20.89480, 20.89631] (g = 8) and [52.71271, 52.71652] (g = 16)
    # (tests/test_group_exact.py): the profile's upper ends must lie above them. Measured: 26.59 / 101.3
    # with base step 1/16; the weak triangle inequality is loose for g = 16.
    assert 20.8963 <= ends[8] <= 27.0 and 52.7165 <= ends[16] <= 110.0, ends


def test_laplace_group_of_8_has_a_finite_upper_end() -> None:
    """Laplace(10)×50 (pure ε = 5), δ = 1e-5, g = 8: below group-pure 40, above the route's lower 27.82."""
    pld = PrivacyLossDistribution.from_laws(*privacy_loss_laws(Laplace(10.0)), accuracy=DEFAULT_ACCURACY)
    upper = group_epsilon_upper(pld.self_compose(50), 8, 1e-5, base_step=2.0**-4, base_max=12.0)
    assert 27.82 <= upper <= 33.5, upper

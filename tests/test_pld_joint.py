"""optcomp.pld.epsilons_at_step: many δ of one PLD at one grid step, sharing probes and tilted ends.

Independent truth: the GDP closed form (mpmath) for a composed Gaussian, down to δ = 1e-12 (tilted
ends). Against the engine: every bracket intersects a fresh ``pld.epsilon(δ)`` at the same step and is
no wider than it by more than the share of the target a shared tilted end may add (``docs/pld.md`` §6); the
answers depend only on the PLD, the step and the set of δ (not on queries asked before).
"""

from __future__ import annotations

import math

import pytest

from optcomp import Accuracy, dpsgd
from optcomp.composition import compose
from optcomp.mechanisms import Gaussian, privacy_loss_laws
from optcomp.pld import PrivacyLossDistribution, epsilons_at_step
from tests._references import gdp_epsilon

DELTAS = [1e-4, 1e-6, 1e-8, 1e-10, 1e-12]
#: A shared or milder tilted end may add this share of the width target to a bracket (20 %: ``_SHARE``
#: times ``_TILT_AIM``, twice over for the two ends).
TILT_SHARE = 0.4


def _gaussian(sigma: float, k: int, step: float) -> PrivacyLossDistribution:
    laws = privacy_loss_laws(Gaussian(sigma=sigma))
    return PrivacyLossDistribution.from_laws(*laws, accuracy=Accuracy(grid_step=step)).self_compose(k)


@pytest.mark.parametrize("sigma,k,step", [(1.0, 50, 2e-3), (2.0, 1000, 1e-3)])
def test_brackets_contain_the_gdp_truth(sigma: float, k: int, step: float) -> None:
    got = epsilons_at_step(_gaussian(sigma, k, step), step, DELTAS)
    mu = math.sqrt(k) / sigma
    for d in DELTAS:
        truth = gdp_epsilon(mu, d)
        assert got[d].lower <= truth <= got[d].upper, (d, got[d], truth)


def _dpsgd_pld(sigma: float, q: float, steps: int, step: float) -> PrivacyLossDistribution:
    items = dpsgd.Run.checked(sigma, q, steps, "poisson", 1, None, None).items()
    return compose(*items, accuracy=Accuracy(grid_step=step)).pld()


@pytest.mark.parametrize("sigma,q,steps,step", [(3.0, 0.05, 20000, 3.2e-4), (1.0, 0.01, 3000, 1e-3)])
def test_each_bracket_meets_a_fresh_query_at_the_same_step(sigma: float, q: float, steps: int, step: float) -> None:
    deltas = [1e-4, 1e-5, 1e-6, 1e-7, 1e-8]
    got = epsilons_at_step(_dpsgd_pld(sigma, q, steps, step), step, deltas)
    target = Accuracy().relative_width
    for d in deltas:
        fresh = _dpsgd_pld(sigma, q, steps, step).epsilon(d)
        b = got[d]
        assert b.lower <= fresh.upper and fresh.lower <= b.upper, (d, b, fresh)
        assert b.width / b.upper <= fresh.width / fresh.upper + TILT_SHARE * target, (d, b, fresh)


def test_answers_do_not_depend_on_earlier_queries() -> None:
    step = 3.2e-4
    deltas = [1e-5, 1e-7, 1e-8]
    alone = epsilons_at_step(_dpsgd_pld(3.0, 0.05, 20000, step), step, deltas)
    pld = _dpsgd_pld(3.0, 0.05, 20000, step)
    pld.epsilon(1e-9)  # leaves a realisation (and tilted ends) at the same step behind
    epsilons_at_step(pld, step, [1e-6])
    assert epsilons_at_step(pld, step, deltas) == alone


def test_bad_delta_is_refused() -> None:
    with pytest.raises(ValueError, match="delta"):
        epsilons_at_step(_gaussian(1.0, 10, 1e-2), 1e-2, [1e-5, 1.5])

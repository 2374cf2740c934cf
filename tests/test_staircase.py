"""The staircase mechanism against its density, integrated exactly (piecewise constant) in mpmath."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize_scalar

import optcomp
from optcomp.mechanisms import RandomizedResponse, Staircase, optimal_gamma, privacy_loss_laws
from optcomp.mechanisms.staircase import staircase_mean_absolute, staircase_variance
from tests._references import staircase_delta, staircase_moments, three_atom_kfold_delta
from tests.test_mechanisms import law_delta
from tests.tolerances import EXACT_RTOL, PLD_TEST_STEP, PMF_ATOL, STAIRCASE_GAMMA_ATOL

CASES = [(1.0, 0.3, 1.0), (2.0, 0.8, 3.0), (0.5, 0.0, 1.0), (3.0, 1.0, 0.5), (1.2, 0.5, 2.0), (0.7, 0.1, 1.0)]


@pytest.mark.parametrize(("eps", "gamma", "sens"), CASES)
def test_law_matches_integrated_density(eps: float, gamma: float, sens: float) -> None:
    law, add = privacy_loss_laws(Staircase(eps, gamma=gamma, sensitivity=sens))
    assert law is add
    assert set(law.atom_losses.tolist()) <= {-eps, 0.0, eps}
    for eps_prime in (0.0, 0.3 * eps, 0.9 * eps, eps, 1.5 * eps):
        truth = float(staircase_delta(eps, gamma, sens, eps_prime))
        assert law_delta(law, eps_prime) == pytest.approx(truth, rel=EXACT_RTOL, abs=PMF_ATOL)


@pytest.mark.parametrize(("eps", "gamma", "sens"), CASES)
def test_moments_match_integrated_density(eps: float, gamma: float, sens: float) -> None:
    first, second = staircase_moments(eps, gamma, sens)
    assert staircase_variance(eps, gamma, sensitivity=sens) == pytest.approx(float(second), rel=EXACT_RTOL)
    assert staircase_mean_absolute(eps, gamma, sensitivity=sens) == pytest.approx(float(first), rel=EXACT_RTOL)
    assert Staircase(eps, gamma=gamma, sensitivity=sens).variance == staircase_variance(eps, gamma, sensitivity=sens)


@pytest.mark.parametrize("eps", [0.05, 0.5, 1.0, 2.0, 5.0, 12.0])
@pytest.mark.parametrize(("cost", "moment"), [("l1", staircase_mean_absolute), ("l2", staircase_variance)])
def test_optimal_gamma_minimises_the_cost(eps: float, cost: str, moment: object) -> None:
    """Geng–Viswanath's closed forms against a numerical minimisation of the closed-form moments."""
    found = minimize_scalar(lambda g: moment(eps, g), bounds=(0.0, 1.0), method="bounded",  # type: ignore[operator]
                            options={"xatol": STAIRCASE_GAMMA_ATOL / 10})
    assert optimal_gamma(eps, cost) == pytest.approx(found.x, abs=STAIRCASE_GAMMA_ATOL)  # type: ignore[arg-type]
    assert moment(eps, optimal_gamma(eps, cost)) <= moment(eps, found.x) * (1 + EXACT_RTOL)  # type: ignore[operator,arg-type]


def test_optimal_gamma_limits_and_default() -> None:
    assert optimal_gamma(1e-9, "l2") == pytest.approx(0.5, abs=STAIRCASE_GAMMA_ATOL)
    assert optimal_gamma(1e-9, "l1") == pytest.approx(0.5, abs=STAIRCASE_GAMMA_ATOL)
    assert Staircase(2.0).gamma == optimal_gamma(2.0, "l2")
    # the staircase beats Laplace (variance 2Δ²/ε²) at every ε, by a factor → ~1 for small ε
    for eps in (0.1, 1.0, 4.0):
        assert staircase_variance(eps, optimal_gamma(eps, "l2")) < 2.0 / eps**2


def test_half_step_is_randomized_response() -> None:
    """γ = 1/2: the middle atom vanishes and the law is that of RR(ε)."""
    stair, _ = privacy_loss_laws(Staircase(1.3, gamma=0.5))
    rr, _ = privacy_loss_laws(RandomizedResponse(1.3))
    for eps_prime in (0.0, 0.5, 1.0):
        assert law_delta(stair, eps_prime) == pytest.approx(law_delta(rr, eps_prime), rel=EXACT_RTOL)


def test_composition_contains_the_trinomial_truth() -> None:
    """k-fold composition through optcomp.compose: δ(ε') of the trinomial sum of k losses in {−ε, 0, ε}."""
    eps, gamma, k = 0.4, 0.2, 12
    law, _ = privacy_loss_laws(Staircase(eps, gamma=gamma))
    masses = dict(zip(law.atom_losses.tolist(), law.atom_p.tolist(), strict=True))
    pld = optcomp.compose((Staircase(eps, gamma=gamma), k), accuracy=optcomp.Accuracy(grid_step=PLD_TEST_STEP))
    for eps_prime in (0.0, 0.8, 2.0):
        truth = three_atom_kfold_delta(eps, masses[eps], masses[-eps], masses[0.0], k, eps_prime)
        assert pld.delta(eps_prime).contains(float(truth))


def test_pure_dp() -> None:
    for eps, gamma, sens in CASES:
        law, _ = privacy_loss_laws(Staircase(eps, gamma=gamma, sensitivity=sens))
        assert law_delta(law, eps) == pytest.approx(0.0, abs=PMF_ATOL)


@settings(max_examples=40, deadline=None)
@given(st.floats(0.01, 20.0), st.floats(0.0, 1.0))
def test_law_is_a_probability_law(eps: float, gamma: float) -> None:
    law, _ = privacy_loss_laws(Staircase(eps, gamma=gamma))
    assert math.fsum(law.atom_p) == pytest.approx(1.0, rel=EXACT_RTOL)
    assert math.fsum(law.atom_q) == pytest.approx(1.0, rel=EXACT_RTOL)
    np.testing.assert_allclose(law.atom_q, law.atom_p * np.exp(-law.atom_losses), rtol=EXACT_RTOL)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"epsilon": 0.0}, "epsilon"),
        ({"epsilon": math.nan}, "epsilon"),
        ({"epsilon": 1.0, "gamma": 1.5}, "gamma"),
        ({"epsilon": 1.0, "gamma": -0.1}, "gamma"),
        ({"epsilon": 1.0, "sensitivity": 0.0}, "sensitivity"),
    ],
)
def test_invalid_parameters(kwargs: dict[str, float], name: str) -> None:
    with pytest.raises(ValueError, match=name):
        Staircase(**kwargs)


def test_invalid_cost() -> None:
    with pytest.raises(ValueError, match="cost"):
        optimal_gamma(1.0, "linf")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="epsilon"):
        optimal_gamma(-1.0)

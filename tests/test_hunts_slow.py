"""Long soundness hunts (``make test-slow``; CI runs them after ``make test``).

The same independent references as the fast suite, over wider domains and many more examples: every
certified end must sit on the right side of a 50-digit truth. Each hunt is a few minutes at most on
2 cores; under ``CI=true`` hypothesis is derandomised (tests/conftest.py), locally each run draws anew.

* optimal composition: real ε_i by 2^k enumeration, lattice ε_i by exact convolution, homogeneous by
  the binomial sum (MV Thm 1.4), δ_i from 0 to 1e-2 and target δ from 1e-300 to 0.5;
* the PLD engine at its default (requested-width) accuracy: k-fold Gaussian (GDP closed form) at any
  δ down to 1e-300, k-fold two-point pairs by binomial enumeration, k-fold canonical (ε, δ) against
  the exact optimal composition, one Poisson-subsampled Gaussian step (Dong–Roth–Su Thm 4.2);
* the f-DP (ε, δ) composition readout against KOV Thm III.3.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optcomp import Accuracy, compose, fdp, optimal
from optcomp.mechanisms import DiscretePair, EpsilonDelta, Gaussian, PoissonSubsampled
from tests._references import (
    canonical_homogeneous_law,
    canonical_outcomes,
    delta_floor,
    delta_target,
    epsilon_delta_composition_delta,
    gdp_epsilon,
    law_least_epsilon,
    subsampled_gaussian_delta,
    two_point_pair_delta,
)
from tests.test_optimal_soundness import assert_contains, check_lattice_against_convolution

pytestmark = pytest.mark.slow

_HUNT = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_DELTA_I = st.one_of(st.just(0.0), st.floats(1e-12, 1e-2))
_TARGET = st.floats(-300.0, math.log10(0.5)).map(lambda x: 10.0**x)


# --------------------------------------------------------------------------------------------
# Optimal composition of black boxes.
# --------------------------------------------------------------------------------------------


@_HUNT
@given(
    eps=st.lists(st.floats(0.001, 3.0), min_size=1, max_size=11),
    dl=st.lists(_DELTA_I, min_size=11, max_size=11),
    target=_TARGET,
    near_floor=st.booleans(),
    method=st.sampled_from(["auto", "grid"]),
)
def test_hunt_optimal_real_epsilons(
    eps: list[float], dl: list[float], target: float, near_floor: bool, method: str
) -> None:
    deltas = dl[: len(eps)]
    floor = delta_floor(deltas)
    delta_g = min(0.5, float(floor * (1 + target)) if near_floor else float(floor + target))
    losses, probs = canonical_outcomes(eps)
    truth = law_least_epsilon(losses, probs, delta_target(deltas, delta_g))
    assert_contains(optimal.epsilon(list(zip(eps, deltas)), delta_g, method=method), truth)  # type: ignore[arg-type]


@settings(max_examples=40, deadline=None)
@given(
    a=st.lists(st.integers(1, 20), min_size=12, max_size=60),
    unit=st.sampled_from([0.01, 0.05, 0.13]),
    dl=_DELTA_I,
    target=_TARGET,
)
def test_hunt_optimal_lattice(a: list[int], unit: float, dl: float, target: float) -> None:
    check_lattice_against_convolution(a, unit, dl, target, grid_tolerance=0.1)


@settings(max_examples=40, deadline=None)
@given(eps=st.floats(0.001, 2.0), k=st.integers(1, 250), dl=_DELTA_I, target=_TARGET)
def test_hunt_optimal_homogeneous(eps: float, k: int, dl: float, target: float) -> None:
    floor = delta_floor([dl] * k)
    delta_g = min(0.5, float(floor + target))
    losses, probs = canonical_homogeneous_law(eps, k)
    truth = law_least_epsilon(losses, probs, delta_target([dl] * k, delta_g))
    assert_contains(optimal.epsilon(optimal.homogeneous(eps, dl, k), delta_g), truth)


# --------------------------------------------------------------------------------------------
# The PLD engine at its default accuracy.
# --------------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(sigma=st.floats(0.3, 5.0), k=st.integers(1, 2000), log10_delta=st.floats(-300.0, -1.0))
def test_hunt_pld_gaussian_any_delta(sigma: float, k: int, log10_delta: float) -> None:
    delta = 10.0**log10_delta
    b = compose((Gaussian(sigma), k)).epsilon(delta)
    truth = gdp_epsilon(math.sqrt(k) / sigma, delta)
    assert b.lower <= truth <= b.upper, (b, truth)


@settings(max_examples=40, deadline=None)
@given(
    p=st.floats(0.02, 0.98),
    q=st.floats(0.02, 0.98),
    k=st.integers(1, 200),
    eps=st.floats(0.0, 6.0),
)
def test_hunt_pld_two_point_pairs(p: float, q: float, k: int, eps: float) -> None:
    b = compose((DiscretePair((p, 1 - p), (q, 1 - q)), k)).delta(eps)
    truth = min(two_point_pair_delta(p, q, k, eps), 1)  # the 50-digit sum may land a hair above 1
    assert b.lower <= truth <= b.upper, (b, truth)


@settings(max_examples=30, deadline=None)
@given(eps=st.floats(0.01, 1.5), dl=_DELTA_I, k=st.integers(1, 60), target=st.floats(-14.0, -1.0))
def test_hunt_pld_canonical_vs_optimal(eps: float, dl: float, k: int, target: float) -> None:
    delta_g = -math.expm1(k * math.log1p(-dl)) + 10.0**target
    if delta_g >= 1.0:
        return
    # An explicit grid step keeps the grid engine (automatic accuracy routes (ε, δ) boxes to optimal).
    b = compose((EpsilonDelta(eps, delta=dl), k), accuracy=Accuracy(grid_step=2e-3)).epsilon(delta_g)
    exact = optimal.epsilon(optimal.homogeneous(eps, dl, k), delta_g)
    assert b.lower <= exact.upper and exact.lower <= b.upper, (b, exact)


@settings(max_examples=30, deadline=None)
@given(sigma=st.floats(0.4, 4.0), q=st.floats(0.001, 1.0), eps=st.floats(0.0, 4.0))
def test_hunt_pld_one_subsampled_gaussian_step(sigma: float, q: float, eps: float) -> None:
    b = compose((PoissonSubsampled(Gaussian(sigma), sampling_rate=q), 1)).delta(eps)
    truth = subsampled_gaussian_delta(1.0 / sigma, q, eps)
    assert b.lower <= truth <= b.upper, (b, truth)


# --------------------------------------------------------------------------------------------
# f-DP: the exact (ε, δ) composition readout.
# --------------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(eps=st.floats(0.01, 2.0), dl=_DELTA_I, k=st.integers(1, 300), frac=st.floats(0.0, 1.0))
def test_hunt_fdp_epsilon_delta_composition_delta(eps: float, dl: float, k: int, frac: float) -> None:
    eps_g = frac * k * eps
    comp = fdp.epsilon_delta_composition(eps, dl, k)
    got = comp.delta_bound(eps_g)
    truth = epsilon_delta_composition_delta(eps, dl, k, eps_g)
    assert got.lower <= truth <= got.upper, (got, truth)
    assert comp.delta(eps_g) == got.upper

"""Discrete mechanisms: laws against exact hockey-stick sums over their pmfs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optcomp.mechanisms import (
    DiscreteLaplace,
    DiscretePair,
    KaryRandomizedResponse,
    PrivacyLossLaw,
    RandomizedResponse,
    privacy_loss_laws,
)
from tests._references import discrete_delta
from tests.test_mechanisms import law_delta, law_total_masses
from tests.tolerances import EXACT_RTOL, PMF_ATOL

EPSILONS = (-0.5, 0.0, 0.3, 1.0, 2.5, 7.0)


def check_law_against_pmfs(law: PrivacyLossLaw, p: np.ndarray, q: np.ndarray) -> None:
    """δ(ε) equal to Σ max(P − e^ε Q, 0); masses total 1; dQ = e^{−L} dP on the atoms."""
    for eps in EPSILONS:
        assert law_delta(law, eps) == pytest.approx(discrete_delta(p, q, eps), rel=EXACT_RTOL, abs=PMF_ATOL)
    p_total, q_total = law_total_masses(law)
    assert p_total == pytest.approx(1.0, rel=EXACT_RTOL)
    assert q_total == pytest.approx(1.0, rel=EXACT_RTOL)
    np.testing.assert_allclose(law.atom_q, law.atom_p * np.exp(-law.atom_losses), rtol=EXACT_RTOL)


@settings(max_examples=40, deadline=None)
@given(epsilon=st.floats(0.0, 30.0))
def test_randomized_response(epsilon: float) -> None:
    remove, add = privacy_loss_laws(RandomizedResponse(epsilon))
    e = math.exp(epsilon)
    p = np.array([e / (1 + e), 1 / (1 + e)])
    check_law_against_pmfs(remove, p, p[::-1].copy())
    assert remove is add


@settings(max_examples=40, deadline=None)
@given(epsilon=st.floats(0.0, 30.0), k=st.integers(2, 50))
def test_kary_randomized_response(epsilon: float, k: int) -> None:
    remove, add = privacy_loss_laws(KaryRandomizedResponse(epsilon, k=k))
    e = math.exp(epsilon)
    p = np.ones(k) / (e + k - 1)
    p[0] = e / (e + k - 1)
    q = p.copy()
    q[[0, 1]] = q[[1, 0]]
    check_law_against_pmfs(remove, p, q)
    assert remove is add


def test_kary_with_two_letters_is_binary() -> None:
    for eps in (0.0, 1.0, 3.0):
        a = privacy_loss_laws(KaryRandomizedResponse(1.5, k=2))[0]
        b = privacy_loss_laws(RandomizedResponse(1.5))[0]
        assert law_delta(a, eps) == pytest.approx(law_delta(b, eps), rel=EXACT_RTOL, abs=PMF_ATOL)


@st.composite
def pmf_pairs(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    n = draw(st.integers(1, 8))
    weights = st.one_of(st.just(0.0), st.floats(1e-6, 1.0))
    p = np.array(draw(st.lists(weights, min_size=n, max_size=n)))
    q = np.array(draw(st.lists(weights, min_size=n, max_size=n)))
    p[0] += 0.5
    q[-1] += 0.5
    return p / p.sum(), q / q.sum()


@settings(max_examples=60, deadline=None)
@given(pair=pmf_pairs())
def test_discrete_pair_and_its_swap(pair: tuple[np.ndarray, np.ndarray]) -> None:
    p, q = pair
    remove, add = privacy_loss_laws(DiscretePair(tuple(p), tuple(q)))
    check_law_against_pmfs(remove, p, q)
    check_law_against_pmfs(add, q, p)


def discrete_laplace_pmfs(scale: float, sensitivity: int) -> tuple[np.ndarray, np.ndarray]:
    j = np.arange(-400, 401)
    noise = np.exp(-np.abs(j) / scale)
    noise /= math.fsum(noise.tolist())
    p = np.zeros(j.size + sensitivity)
    q = np.zeros(j.size + sensitivity)
    p[sensitivity:] = noise
    q[:-sensitivity] = noise
    return p, q


@settings(max_examples=30, deadline=None)
@given(scale=st.floats(0.1, 3.0), sensitivity=st.integers(1, 6))
def test_discrete_laplace_against_enumeration(scale: float, sensitivity: int) -> None:
    remove, add = privacy_loss_laws(DiscreteLaplace(scale, sensitivity=sensitivity))
    p, q = discrete_laplace_pmfs(scale, sensitivity)
    check_law_against_pmfs(remove, p, q)
    assert remove is add


@pytest.mark.parametrize(
    ("factory", "name"),
    [
        (lambda: RandomizedResponse(-1.0), "epsilon"),
        (lambda: RandomizedResponse(math.nan), "epsilon"),
        (lambda: RandomizedResponse(math.inf), "epsilon"),
        (lambda: KaryRandomizedResponse(1.0, k=1), "k"),
        (lambda: KaryRandomizedResponse(1.0, k=2.0), "k"),
        (lambda: KaryRandomizedResponse(1.0, k=True), "k"),
        (lambda: DiscretePair((0.5, 0.6), (0.5, 0.5)), "p"),
        (lambda: DiscretePair((0.5, 0.5), (-0.5, 1.5)), "q"),
        (lambda: DiscretePair((0.5, math.nan), (0.5, 0.5)), "p"),
        (lambda: DiscretePair((1.0,), (0.5, 0.5)), "same length"),
        (lambda: DiscretePair((), ()), "p"),
        (lambda: DiscreteLaplace(0.0), "scale"),
        (lambda: DiscreteLaplace(1.0, sensitivity=0), "sensitivity"),
        (lambda: DiscreteLaplace(1.0, sensitivity=1.5), "sensitivity"),
    ],
)
def test_discrete_validation(factory: object, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        factory()  # type: ignore[operator]

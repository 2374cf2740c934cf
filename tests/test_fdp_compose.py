"""Composition of trade-off functions: exact tensor products, Berry–Esseen band, (ε,δ) CLT, group privacy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom

from optcomp.fdp import (
    CLTResult,
    alpha_grid,
    clt,
    clt_epsilon_delta,
    delta_scaled,
    epsilon_delta_tradeoff,
    epsilon_dp_functionals,
    from_distributions,
    functionals,
    gaussian_tradeoff,
    group_privacy,
    tensor,
)
from tests.tolerances import CLT_MU_RTOL, EXACT_RTOL, METHOD_RTOL

GRID = alpha_grid(401)


def _exact_eps0_composition(eps: float, n: int):  # type: ignore[no-untyped-def]
    """n-fold f_{ε,0} exactly: the canonical mechanism's loss is (2K − n)ε with K ~ Bin(n, e^ε/(1+e^ε))."""
    p = 1.0 / (1.0 + math.exp(-eps))
    k = np.arange(n + 1)
    return from_distributions(binom.pmf(k, n, p), binom.pmf(k, n, 1 - p))


@pytest.mark.parametrize("eps,n", [(1.0, 6), (0.3, 10), (0.05, 12)])
def test_tensor_of_eps0_matches_binomial(eps: float, n: int) -> None:
    f = tensor(*[epsilon_delta_tradeoff(eps, 0.0)] * n)
    np.testing.assert_allclose(f(GRID), _exact_eps0_composition(eps, n)(GRID), atol=METHOD_RTOL)


def test_tensor_matches_hockey_stick_of_product() -> None:
    f = tensor(epsilon_delta_tradeoff(0.5, 0.01), epsilon_delta_tradeoff(1.0, 0.02))
    # MV/KOV: the composed (ε,δ) curve of two canonical mechanisms; δ at ε = 1.5 is 1 − (1−δ1)(1−δ2).
    assert f.delta(1.5) == pytest.approx(1 - 0.99 * 0.98, abs=METHOD_RTOL)


@pytest.mark.parametrize("eps,n", [(0.1, 100), (0.3, 50), (0.05, 400), (1.0, 10)])
def test_berry_esseen_band_contains_exact_composition(eps: float, n: int) -> None:
    exact = _exact_eps0_composition(eps, n)(GRID)
    res = clt([epsilon_delta_tradeoff(eps, 0.0)] * n)
    assert isinstance(res, CLTResult)
    lo, hi = res.band(GRID)
    assert np.all(lo <= exact + EXACT_RTOL) and np.all(exact <= hi + EXACT_RTOL)
    # μ ≈ √n ε for small ε; the estimate is not a bound, the band is.
    assert res.mu_estimate == pytest.approx(math.sqrt(n) * eps, rel=CLT_MU_RTOL)


@given(st.floats(0.01, 1.0), st.integers(1, 60))
@settings(max_examples=20, deadline=None)
def test_berry_esseen_band_property(eps: float, n: int) -> None:
    exact = _exact_eps0_composition(eps, n)(GRID)
    lo, hi = clt([epsilon_delta_tradeoff(eps, 0.0)] * n).band(GRID)
    assert np.all(lo <= exact + EXACT_RTOL) and np.all(exact <= hi + EXACT_RTOL)


def test_clt_mu_converges() -> None:
    # n ε² fixed: the Berry–Esseen width shrinks like 1/√n and μ → √(n) ε.
    widths = []
    for n in (100, 400, 1600):
        res = clt_epsilon_delta([1.0 / math.sqrt(n)] * n, [0.0] * n)
        widths.append(res.gamma)
        assert res.mu_estimate == pytest.approx(1.0, rel=1.0 / n)
    assert widths[0] > widths[1] > widths[2]


def test_epsilon_delta_clt_band_contains_exact() -> None:
    eps, d, n = 0.2, 1e-3, 30
    exact_eps0 = _exact_eps0_composition(eps, n)
    big = 1 - (1 - d) ** n
    exact = delta_scaled(exact_eps0, big)(GRID)
    res = clt_epsilon_delta([eps] * n, [d] * n)
    assert res.delta == pytest.approx(big, rel=EXACT_RTOL)
    lo, hi = res.band(GRID)
    assert np.all(lo <= exact + EXACT_RTOL) and np.all(exact <= hi + EXACT_RTOL)
    # and the tensor product of the PL curves agrees with the decomposition (DRS eq. (11)) for small n
    small = tensor(*[epsilon_delta_tradeoff(eps, d)] * 4)
    ref = delta_scaled(_exact_eps0_composition(eps, 4), 1 - (1 - d) ** 4)
    np.testing.assert_allclose(small(GRID), ref(GRID), atol=METHOD_RTOL)


@given(st.floats(0.0, 3.0), st.floats(0.0, 0.5))
@settings(max_examples=30, deadline=None)
def test_f_eps_delta_factorises(eps: float, d: float) -> None:
    f = delta_scaled(epsilon_delta_tradeoff(eps, 0.0), d)
    np.testing.assert_allclose(f(GRID), epsilon_delta_tradeoff(eps, d)(GRID), atol=METHOD_RTOL)


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 2.0])
def test_epsilon_functionals_closed_form_vs_atoms(eps: float) -> None:
    closed = epsilon_dp_functionals(eps)
    atoms = functionals(epsilon_delta_tradeoff(eps, 0.0))
    assert closed.kl == pytest.approx(eps * math.expm1(eps) / (math.exp(eps) + 1), rel=EXACT_RTOL)
    assert closed.kappa2 == pytest.approx(eps**2, rel=EXACT_RTOL)
    assert closed.kappa3 == pytest.approx(eps**3, rel=EXACT_RTOL)
    for name in ("kl", "kappa2", "kappa3", "kappa3_bar"):
        assert getattr(atoms, name) == pytest.approx(getattr(closed, name), rel=METHOD_RTOL)


def test_gaussian_functionals() -> None:
    fun = functionals(gaussian_tradeoff(1.0))
    assert fun.kl == pytest.approx(0.5) and fun.kappa2 == pytest.approx(1.25)
    assert fun.kappa3_bar == pytest.approx(2 * math.sqrt(2 / math.pi))
    # the CLT of one Gaussian returns its own μ
    assert clt([gaussian_tradeoff(0.3)] * 4).mu_estimate == pytest.approx(0.6, rel=EXACT_RTOL)


def test_group_privacy_general_curve() -> None:
    f = epsilon_delta_tradeoff(0.5, 0.0)
    g2 = group_privacy(f, 2)
    a = GRID
    direct = np.asarray(f(1 - np.asarray(f(a))))  # 1 − h(h(α)) with h = 1 − f
    np.testing.assert_allclose(g2(a), direct, atol=EXACT_RTOL)
    # groups of 2 under (ε,0)-DP are (2ε,0)-DP: the group curve dominates f_{2ε,0}
    assert g2.dominates(epsilon_delta_tradeoff(1.0, 0.0), atol=EXACT_RTOL)
    assert isinstance(group_privacy(gaussian_tradeoff(0.5), 4)(0.1), float)


def test_bad_inputs() -> None:
    with pytest.raises(ValueError, match="k"):
        group_privacy(gaussian_tradeoff(1.0), 0)
    with pytest.raises(ValueError, match="delta"):
        delta_scaled(gaussian_tradeoff(1.0), 1.5)
    with pytest.raises(ValueError, match="deltas"):
        clt_epsilon_delta([0.1], [-0.1])
    with pytest.raises(ValueError, match="epsilons"):
        clt_epsilon_delta([-0.1], [0.0])
    with pytest.raises(ValueError, match="tensor"):
        tensor(gaussian_tradeoff(1.0), epsilon_delta_tradeoff(1.0, 0.0))
    with pytest.raises(ValueError, match="infinite"):
        clt([epsilon_delta_tradeoff(1.0, 0.1)])


@pytest.mark.parametrize("eps,d,k", [(0.1, 1e-3, 50), (0.5, 0.0, 10), (1.0, 1e-3, 7)])
def test_composition_equals_kov_region_boundary(eps: float, d: float, k: int) -> None:
    region = pytest.importorskip("optcomp.region")
    from optcomp.fdp import epsilon_delta_composition

    ours = np.asarray(epsilon_delta_composition(eps, d, k)(GRID))
    kov = np.asarray(region.composed(eps, d, k).beta(GRID))
    np.testing.assert_allclose(ours, kov, atol=METHOD_RTOL)

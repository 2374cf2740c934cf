"""Laplace, truncated Laplace and Vuvuzela's dummy-traffic noise against direct computation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optcomp.mechanisms import Laplace, ShiftedTruncatedLaplace, TruncatedLaplace, privacy_loss_laws
from tests._references import discrete_delta, truncated_laplace_delta, vuvuzela_pmfs
from tests.test_mechanisms import law_delta, law_total_masses
from tests.tolerances import EXACT_RTOL, LAW_GRID_RTOL, PMF_ATOL


@pytest.mark.parametrize(
    ("scale", "bound", "sens"),
    [
        (1.0, math.inf, 1.0),
        (0.4, math.inf, 1.3),
        (1.0, 3.0, 1.0),
        (2.0, 1.5, 1.0),
        (1.0, 0.7, 1.0),
        (1.0, 0.4, 1.0),
    ],
)
@pytest.mark.parametrize("epsilon", [-0.3, 0.0, 0.2, 0.9, 3.0])
def test_truncated_laplace_delta_by_quadrature(
    scale: float, bound: float, sens: float, epsilon: float
) -> None:
    remove, add = privacy_loss_laws(TruncatedLaplace(scale, truncation=bound, sensitivity=sens))
    truth = truncated_laplace_delta(scale, bound, sens, epsilon)
    assert law_delta(remove, epsilon) == pytest.approx(truth, rel=EXACT_RTOL, abs=PMF_ATOL)
    assert remove is add


@settings(max_examples=40, deadline=None)
@given(
    scale=st.floats(0.05, 20.0),
    bound=st.one_of(st.just(math.inf), st.floats(0.1, 50.0)),
    sens=st.floats(0.1, 5.0),
)
def test_truncated_laplace_masses_and_consistency(scale: float, bound: float, sens: float) -> None:
    law, _ = privacy_loss_laws(TruncatedLaplace(scale, truncation=bound, sensitivity=sens))
    p_total, q_total = law_total_masses(law)
    assert p_total == pytest.approx(1.0, rel=EXACT_RTOL)
    assert q_total == pytest.approx(1.0, rel=EXACT_RTOL)
    if law.continuous is not None:  # dQ = e^{−L} dP on the continuous part
        c = law.continuous
        grid = np.linspace(c.lower, c.upper, 20001)
        mids = 0.5 * (grid[1:] + grid[:-1])
        via_p = float(np.sum(np.diff(np.exp(c.p_logcdf(grid))) * np.exp(-mids)))
        assert via_p == pytest.approx(math.exp(c.q_logsf(np.array([c.lower]))[0]), rel=LAW_GRID_RTOL)


def test_laplace_is_truncated_laplace_without_bound() -> None:
    a = privacy_loss_laws(Laplace(0.7, sensitivity=1.2))[0]
    b = privacy_loss_laws(TruncatedLaplace(0.7, truncation=math.inf, sensitivity=1.2))[0]
    for eps in (0.0, 0.5, 1.7, 2.0):
        assert law_delta(a, eps) == law_delta(b, eps)
    # pure ε-DP at ε = Δ/b: δ(Δ/b) = 0, and the known δ(0) = 1 − e^{−ε/2}
    assert law_delta(a, 1.2 / 0.7) == pytest.approx(0.0, abs=PMF_ATOL)
    assert law_delta(a, 0.0) == pytest.approx(-math.expm1(-0.5 * 1.2 / 0.7), rel=EXACT_RTOL)


@pytest.mark.parametrize(
    ("mean", "scale", "sens"), [(20.0, 3.0, 1), (20.5, 2.0, 2), (1.3, 1.0, 3), (0.0, 0.5, 1)]
)
def test_vuvuzela_noise_against_enumeration(mean: float, scale: float, sens: int) -> None:
    remove, add = privacy_loss_laws(ShiftedTruncatedLaplace(scale, mean=mean, sensitivity=sens))
    p, q = vuvuzela_pmfs(mean, scale, sens, top=int(mean + 80 * scale))
    for eps in (-0.5, 0.0, 0.1, sens / scale / 2, sens / scale, 3.0):
        assert law_delta(remove, eps) == pytest.approx(
            discrete_delta(p, q, eps), rel=EXACT_RTOL, abs=PMF_ATOL
        )
        assert law_delta(add, eps) == pytest.approx(discrete_delta(q, p, eps), rel=EXACT_RTOL, abs=PMF_ATOL)
    p_total, q_total = law_total_masses(remove)
    assert p_total == pytest.approx(1.0, rel=EXACT_RTOL)
    assert q_total == pytest.approx(1.0, rel=EXACT_RTOL)


def test_vuvuzela_parameters_give_small_finite_law() -> None:
    """Vuvuzela's conversation-protocol noise (mean 300 000, scale 13 800): a handful of exact atoms.

    Only the clamped atom N = 0 (mass e^{−mean/b}/2) carries a loss above Δ/b, so δ(Δ/b) is below it.
    """
    remove, _ = privacy_loss_laws(ShiftedTruncatedLaplace(13_800.0, mean=300_000.0, sensitivity=2))
    assert remove.atom_losses.size <= 8
    p_total, q_total = law_total_masses(remove)
    assert p_total == pytest.approx(1.0, rel=EXACT_RTOL)
    assert q_total == pytest.approx(1.0, rel=EXACT_RTOL)
    clamped = 0.5 * math.exp(-300_000.0 / 13_800.0)
    assert 0.0 < law_delta(remove, 2 / 13_800) <= clamped
    assert remove.q_neg_inf < 1e-9


@pytest.mark.parametrize(
    ("factory", "name"),
    [
        (lambda: Laplace(0.0), "scale"),
        (lambda: Laplace(math.nan), "scale"),
        (lambda: Laplace(1.0, sensitivity=-1.0), "sensitivity"),
        (lambda: TruncatedLaplace(1.0, truncation=0.0), "truncation"),
        (lambda: TruncatedLaplace(1.0, truncation=math.nan), "truncation"),
        (lambda: ShiftedTruncatedLaplace(1.0, mean=-1.0), "mean"),
        (lambda: ShiftedTruncatedLaplace(0.0, mean=1.0), "scale"),
        (lambda: ShiftedTruncatedLaplace(1.0, mean=1.0, sensitivity=0), "sensitivity"),
        (lambda: ShiftedTruncatedLaplace(1.0, mean=1.0, sensitivity=1.0), "sensitivity"),
    ],
)
def test_laplace_validation(factory: object, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        factory()  # type: ignore[operator]


@settings(max_examples=10, deadline=None)
@given(mean=st.floats(0.0, 30.0), scale=st.floats(0.3, 3.0), sens=st.integers(1, 4), at=st.floats(0.0, 4.0))
def test_vuvuzela_noise_over_domain(mean: float, scale: float, sens: int, at: float) -> None:
    remove, add = privacy_loss_laws(ShiftedTruncatedLaplace(scale, mean=mean, sensitivity=sens))
    p, q = vuvuzela_pmfs(mean, scale, sens, top=int(mean + 80 * scale))
    assert law_delta(remove, at) == pytest.approx(discrete_delta(p, q, at), rel=EXACT_RTOL, abs=PMF_ATOL)
    assert law_delta(add, at) == pytest.approx(discrete_delta(q, p, at), rel=EXACT_RTOL, abs=PMF_ATOL)

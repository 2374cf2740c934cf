"""pld.lattice_kernels: a block of fixed laws as certified P-masses on the loss lattice (the adaptive
bounded-range engine's fixed steps). Read as a hockey-stick curve, the upper kernel must lie above the exact
δ(ε) and the lower kernel below it, at second order in the step."""

from __future__ import annotations

import math

import numpy as np
import pytest

from optcomp._numerics import Accuracy
from optcomp.mechanisms import (
    DiscretePair,
    EpsilonDelta,
    Gaussian,
    Laplace,
    PoissonSubsampled,
    RandomizedResponse,
    privacy_loss_laws,
)
from optcomp.pld import LatticeKernel, lattice_kernels
from tests._references import gdp_delta


def _delta(kernel: LatticeKernel, eps: float, upper: bool) -> float:
    loss = (kernel.first + np.arange(kernel.values.size)) * kernel.step
    finite = float(np.sum(kernel.values * np.maximum(-np.expm1(eps - loss), 0.0)))
    return finite + kernel.error + kernel.p_inf if upper else finite - kernel.error + kernel.p_inf


@pytest.mark.parametrize(("sigma", "count"), [(1.0, 1), (2.0, 1), (4.0, 16)])
def test_gaussian_kernels_bracket_the_closed_form(sigma: float, count: int) -> None:
    law, _ = privacy_loss_laws(Gaussian(sigma))
    up, low = lattice_kernels([(law, count)], 1e-3, Accuracy())
    mu = math.sqrt(count) / sigma
    for eps in (0.0, 0.3, 1.0, 2.0):
        truth = float(gdp_delta(mu, eps))
        assert _delta(low, eps, False) <= truth <= _delta(up, eps, True)
        assert _delta(up, eps, True) - _delta(low, eps, False) <= 1e-4 * truth + 1e-12


def test_subsampled_kernels_and_pooling_keep_the_mean_loss() -> None:
    """The pooled lattice pair shifts no mass by a first-order amount: its mean loss is within O(Δ²) of the
    split's (a Poisson-subsampled Gaussian piles mass at its lowest loss, the case pooling upward is for)."""
    law, _ = privacy_loss_laws(PoissonSubsampled(Gaussian(1.0), sampling_rate=0.01))
    up, low = lattice_kernels([(law, 1)], 1e-3, Accuracy())
    mean = [float(np.dot(k.values, (k.first + np.arange(k.values.size)) * k.step)) for k in (up, low)]
    assert abs(mean[0] - mean[1]) < 1e-6
    q_mass = float(np.sum(low.values * np.exp(-(low.first + np.arange(low.values.size)) * low.step)))
    assert 1.0 <= q_mass <= 1.0 + 1e-9  # the pooled groups sit just above their lattice points


@pytest.mark.parametrize("mechanism", [RandomizedResponse(0.5), EpsilonDelta(0.5, delta=1e-3), Laplace(2.0),
                                       DiscretePair((0.6, 0.3, 0.1), (0.2, 0.3, 0.5))])
def test_kernels_of_atom_laws_bracket_their_exact_curve(mechanism: object) -> None:
    laws = privacy_loss_laws(mechanism)  # type: ignore[arg-type]
    for law in laws:
        up, low = lattice_kernels([(law, 1)], 0.5 / 64, Accuracy())
        for eps in (0.0, 0.25, 0.5, 1.0):
            exact = float(np.sum(law.atom_p * np.maximum(-np.expm1(eps - law.atom_losses), 0.0))) + law.p_inf
            if law.continuous is not None:  # Laplace: its continuous part by a fine quadrature of the law
                x = np.linspace(law.continuous.lower, law.continuous.upper, 200001)
                cdf = np.exp(law.continuous.p_logcdf(x))
                exact += float(np.sum(np.diff(cdf) * np.maximum(-np.expm1(eps - 0.5 * (x[1:] + x[:-1])), 0.0)))
            assert _delta(low, eps, False) <= exact * (1 + 1e-6) + 1e-12
            assert exact <= _delta(up, eps, True) * (1 + 1e-6) + 1e-12
    on_lattice = lattice_kernels([(privacy_loss_laws(RandomizedResponse(0.5))[0], 1)], 0.5 / 64, Accuracy())[1]
    assert set(np.flatnonzero(on_lattice.values) + on_lattice.first) == {-64, 64}  # atoms on lattice points stay

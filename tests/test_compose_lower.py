"""``optcomp.compose``'s lower ends are the run's: items whose law only dominates the run (a fixed-size step,
T > 1; a truncated-Poisson step) take their lower end from their ``dominated_counterpart`` pairs.

Truths: the attained one-direction pairs of fixed-size sampling (``PoissonSubsampled`` of the base, composed
on their own), the explicit pair of truncated Poisson (``dpsgd``'s run bracket), and bit-identity of every
other composition with its routed engine (nothing more is built).
"""

from __future__ import annotations

import numpy as np
import pytest

from optcomp import Accuracy, Bound, compose, dpsgd
from optcomp.mechanisms import (
    Gaussian,
    Laplace,
    PoissonSubsampled,
    SubsampledWithoutReplacement,
    TruncatedPoissonGaussian,
)
from optcomp.queries import Composition
from tests.tolerances import COARSE_GRID_STEP

ACC = Accuracy(grid_step=COARSE_GRID_STEP)


def _swr(sigma: float, q: float) -> SubsampledWithoutReplacement:
    return SubsampledWithoutReplacement(Gaussian(sigma, sensitivity=2.0), sampling_rate=q)


def _poisson(sigma: float, q: float) -> PoissonSubsampled:
    return PoissonSubsampled(Gaussian(sigma, sensitivity=2.0), sampling_rate=q)


def test_fixed_size_compose_lower_end_is_the_attained_pairs() -> None:
    """σ = 1, q = 0.01, T = 1000, δ = 1e-5 (issue 27 C): [14.8200, 14.8211] was the law's; the run's lower
    end is the attained pairs' 13.3605 (default accuracy, as the audit's numbers)."""
    run = compose((_swr(1.0, 0.01), 1000))
    b = run.epsilon(1e-5)
    attained = compose((_poisson(1.0, 0.01), 1000)).epsilon(1e-5)
    law = run.dominating().epsilon(1e-5)
    assert b == Bound(attained.lower, law.upper)
    assert b.lower <= 13.3617
    assert 14.8210 < b.upper < 14.8212  # the upper end is the law's, unchanged
    assert law.lower > 14.82  # the law's own lower end is above every attained pair's ε
    assert b == dpsgd.epsilon(1.0, 0.01, 1000, 1e-5, sampling="fixed_size")


def test_every_query_takes_the_dominated_lower_end() -> None:
    run = compose((_swr(1.0, 0.05), 40), accuracy=ACC)
    dominated = run.dominated()
    assert dominated == compose((_poisson(1.0, 0.05), 40), accuracy=ACC)
    law = run.dominating()
    assert law.lower_end == "law" and law.dominated() is None and law.dominating() is law
    e = 1.0
    assert run.delta(e) == Bound(min(dominated.delta(e).lower, law.delta(e).upper), law.delta(e).upper)
    eps = np.array([0.0, 0.5, 1.0, 2.0])
    lo, hi = run.delta_curve(eps)
    d_lo, _ = dominated.delta_curve(eps)
    l_lo, l_hi = law.delta_curve(eps)
    np.testing.assert_array_equal(hi, l_hi)
    np.testing.assert_array_equal(lo, np.minimum(d_lo, l_hi))
    assert np.all(lo <= l_lo)
    curve = run.hockey_stick_curve(eps)
    np.testing.assert_array_equal(curve.lower, lo)
    np.testing.assert_array_equal(curve.upper, hi)


def test_truncated_poisson_compose_is_dpsgds_run_bracket() -> None:
    n, q, b, sigma, steps = 1000, 0.01, 12, 1.0, 50
    step = TruncatedPoissonGaussian(sigma, dataset_size=n, sampling_rate=q, max_batch_size=b)
    got = compose((step, steps), accuracy=ACC).epsilon(1e-5)
    want = dpsgd.epsilon(sigma, q, steps, 1e-5, sampling="truncated_poisson", dataset_size=n, max_batch_size=b,
                         accuracy=ACC)
    assert got == want
    assert got.lower < compose((step, steps), accuracy=ACC).dominating().epsilon(1e-5).lower


def test_mixed_composition_lower_end_is_the_counterparts_composition() -> None:
    """Fixed-size + Laplace: the lower end is that of (Poisson counterpart + Laplace), composed with no
    relation fixed (the counterpart fixes add/remove)."""
    laplace = Laplace(4.0, sensitivity=2.0)
    run = compose((_swr(1.0, 0.02), 30), (laplace, 3), accuracy=ACC)
    counterpart = compose((_poisson(1.0, 0.02), 30), (laplace, 3), accuracy=ACC)
    law = run.dominating().epsilon(1e-5)
    assert run.epsilon(1e-5) == Bound(min(counterpart.epsilon(1e-5).lower, law.upper), law.upper)
    # one fixed-size step composed with anything else is not the single (attained) step
    one = compose(_swr(1.0, 0.02), laplace, accuracy=ACC)
    assert one.dominated() == compose(_poisson(1.0, 0.02), laplace, accuracy=ACC)


def test_one_fixed_size_step_and_q_one_keep_their_own_lower_end() -> None:
    """One step's symmetrized law is attained; with q = 1 there is no sampling (the base's own pair)."""
    assert compose(_swr(1.0, 0.02), accuracy=ACC).dominated() is None
    assert dpsgd.epsilon(1.0, 0.02, 1, 1e-5, sampling="fixed_size", accuracy=ACC) == compose(
        _swr(1.0, 0.02), accuracy=ACC).epsilon(1e-5)
    assert compose((_swr(1.0, 1.0), 5), accuracy=ACC).dominated() is None


@pytest.mark.parametrize(
    "items",
    [
        [(Gaussian(1.0), 10)],
        [(Gaussian(1.0), 3), (Gaussian(2.0), 1)],
        [(PoissonSubsampled(Gaussian(1.0), sampling_rate=0.01), 100)],
        [(PoissonSubsampled(Gaussian(1.0), sampling_rate=0.01), 100), (Laplace(2.0), 2)],
    ],
)
def test_other_compositions_are_unchanged_and_build_nothing_more(
    items: list[tuple[object, int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every query equals its routed engine's answer bit for bit, and no second composition is built."""
    c = compose(*items)  # type: ignore[arg-type]  # default accuracy: the GDP route for the Gaussians

    def refuse(self: Composition) -> None:
        raise AssertionError(f"a second composition was built: {self!r}")

    monkeypatch.setattr(Composition, "__post_init__", refuse)
    assert c.dominated() is None
    engine = c.route()
    assert c.epsilon(1e-5) == engine.epsilon(1e-5, strict=False)
    assert c.delta(1.0) == engine.delta(1.0)
    eps = np.array([0.0, 1.0, 3.0])
    for got, want in zip(c.delta_curve(eps), engine.delta_curve(eps), strict=True):
        np.testing.assert_array_equal(got, want)
    monkeypatch.undo()
    assert c.dominating().epsilon(1e-5) == c.epsilon(1e-5)

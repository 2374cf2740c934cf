"""Batch samplers of DP-SGD (issue 17, ``docs/samplers.md``): fixed size, user-level Poisson (mixture of
Gaussians), truncated Poisson, shuffling — against closed forms, mpmath, exact enumeration of small
datasets, dp_accounting's published numbers and Chua et al.'s cube bound."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

from optcomp import DEFAULT_ACCURACY, Accuracy, Bound, compose, dpsgd
from optcomp.interop import from_dp_event
from optcomp.mechanisms import (
    Gaussian,
    MixtureOfGaussians,
    PoissonSubsampled,
    SubsampledWithoutReplacement,
    TruncatedPoissonGaussian,
)
from optcomp.mechanisms.allocation import RandomAllocation, allocation_lower_pair, allocation_upper_mechanism
from optcomp.mechanisms.shuffle import (
    batches_per_epoch,
    lower_batches_per_epoch,
    shuffle_epochs,
    shuffle_lower_items,
    shuffle_lower_pair,
)
from optcomp.mechanisms.truncated import truncated_poisson_lower_pair
from tests._references import (
    DP_ACCOUNTING_MOG_EPSILON,
    DP_ACCOUNTING_TRUNCATED_EPSILON,
    PLD_ACCOUNTING_ALLOCATION_EPSILON,
    gdp_epsilon,
    mixture_gaussian_delta,
)
from tests.tolerances import COARSE_GRID_STEP, EXACT_RTOL, QUADRATURE_ATOL, SHUFFLE_BIN_RTOL

COARSE = Accuracy(grid_step=COARSE_GRID_STEP)
DELTA = 1e-5


# --- fixed size ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("sigma", "q", "steps"), [(1.0, 0.01, 100), (0.8, 0.25, 7), (2.0, 1.0, 3)])
def test_fixed_size_is_the_without_replacement_composition_to_the_last_digit(
    sigma: float, q: float, steps: int
) -> None:
    """Upper end: the symmetrized step's composition; lower end (q < 1): the attained one-direction pairs'
    (``PoissonSubsampled`` of the same base, issue 27 C's audit)."""
    step = SubsampledWithoutReplacement(Gaussian(sigma, sensitivity=2.0), sampling_rate=q)
    pld = compose((step, steps), accuracy=COARSE)
    assert pld.neighbouring == "substitution"
    attained = pld if q == 1.0 else compose((PoissonSubsampled(step.mechanism, sampling_rate=q), steps), accuracy=COARSE)
    eps, dlt = pld.dominating().epsilon(DELTA), pld.dominating().delta(1.0)  # the symmetrized law's own
    expected_eps = Bound(min(attained.epsilon(DELTA).lower, eps.upper), eps.upper)
    expected_dlt = Bound(min(attained.delta(1.0).lower, dlt.upper), dlt.upper)
    assert (pld.epsilon(DELTA), pld.delta(1.0)) == (expected_eps, expected_dlt)  # compose's lower end: the run's
    assert dpsgd.epsilon(sigma, q, steps, DELTA, sampling="fixed_size", accuracy=COARSE) == expected_eps
    assert dpsgd.delta(sigma, q, steps, 1.0, sampling="fixed_size", accuracy=COARSE) == expected_dlt
    assert dpsgd.epsilon_brackets(sigma, q, steps, DELTA, sampling="fixed_size", accuracy=COARSE)[1] == eps


def test_fixed_size_without_sampling_is_the_gaussian_of_sensitivity_two() -> None:
    """q = 1: every step sees every record; T steps of Δ = 2 are μ = 2√T/σ GDP."""
    bound = dpsgd.epsilon(2.0, 1.0, 9, DELTA, sampling="fixed_size")
    assert bound.lower <= float(gdp_epsilon(2.0 * 3.0 / 2.0, DELTA)) <= bound.upper


def test_fixed_size_calibration_lands_on_the_safe_side() -> None:
    sigma = dpsgd.noise_multiplier(3.0, 0.01, 200, DELTA, sampling="fixed_size", accuracy=COARSE)
    assert dpsgd.epsilon(sigma, 0.01, 200, DELTA, sampling="fixed_size", accuracy=COARSE).upper <= 3.0
    # the substitution relation with Δ = 2 costs more noise than Poisson under add/remove
    assert sigma > dpsgd.noise_multiplier(3.0, 0.01, 200, DELTA, accuracy=COARSE)


# --- mixture of Gaussians, user-level DP-SGD -------------------------------------------------------


def test_mixture_matches_dp_accounting_published_value() -> None:
    """σ = 1, c = (0, 1), p = (½, ½), δ = 1e-5: dp_accounting 0.6 (pessimistic PLD) reports 3.5339980; our
    certified bracket contains it (its discretisation error is below our bracket width here)."""
    bound = compose(MixtureOfGaussians(1.0, sensitivities=(0.0, 1.0), probabilities=(0.5, 0.5))).epsilon(DELTA)
    assert bound.lower <= DP_ACCOUNTING_MOG_EPSILON <= bound.upper


@pytest.mark.parametrize("q", [0.5, 0.01])
def test_two_point_mixture_is_the_poisson_subsampled_gaussian(q: float) -> None:
    mixture = compose((MixtureOfGaussians(1.3, sensitivities=(0.0, 2.0), probabilities=(1 - q, q)), 20))
    poisson = compose((PoissonSubsampled(Gaussian(1.3, sensitivity=2.0), sampling_rate=q), 20))
    for a, b in ((mixture.epsilon(DELTA), poisson.epsilon(DELTA)), (mixture.delta(0.5), poisson.delta(0.5))):
        assert a.lower <= b.upper and b.lower <= a.upper  # two certified brackets of one truth
        assert a.upper == pytest.approx(b.upper, rel=DEFAULT_ACCURACY.relative_width)


@pytest.mark.parametrize(
    ("sigma", "shifts", "probs"),
    [(1.0, [0.0, 1.0, 2.0], [0.5, 0.3, 0.2]), (0.7, [0.5, 1.5], [0.25, 0.75]), (3.0, [0.0, 4.0], [0.9, 0.1])],
)
@pytest.mark.parametrize("epsilon", [0.0, 0.3, 1.2])
def test_mixture_delta_brackets_the_mpmath_truth(
    sigma: float, shifts: list[float], probs: list[float], epsilon: float
) -> None:
    truth = max(
        mixture_gaussian_delta(sigma, shifts, probs, epsilon),
        mixture_gaussian_delta(sigma, shifts, probs, epsilon, add=True),
    )
    bound = compose(MixtureOfGaussians(sigma, sensitivities=shifts, probabilities=probs)).delta(epsilon)
    assert bound.lower <= float(truth) * (1 + EXACT_RTOL) and float(truth) <= bound.upper * (1 + EXACT_RTOL)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"sensitivities": (-1.0, 1.0), "probabilities": (0.5, 0.5)}, "sensitivities"),
        ({"sensitivities": (0.0, math.nan), "probabilities": (0.5, 0.5)}, "sensitivities"),
        ({"sensitivities": (0.0, 1.0), "probabilities": (0.5, 0.6)}, "probabilities"),
        ({"sensitivities": (0.0, 1.0), "probabilities": (1.0,)}, "probabilities"),
        ({"sensitivities": (0.0, 1.0), "probabilities": (1.0, 0.0)}, "sensitivities"),
        ({"sensitivities": (), "probabilities": ()}, "sensitivities"),
        ({"sensitivities": (0.0, 1e200), "probabilities": (0.5, 0.5)}, "sensitivities / sigma"),
    ],
)
def test_mixture_validation_names_the_parameter(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        MixtureOfGaussians(1.0, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="sigma"):
        MixtureOfGaussians(0.0, sensitivities=(1.0,), probabilities=(1.0,))


def test_user_level_reduces_to_example_level_and_grows_with_k() -> None:
    one = dpsgd.epsilon(1.0, 0.01, 100, DELTA, accuracy=COARSE)
    assert dpsgd.epsilon(1.0, 0.01, 100, DELTA, examples_per_user=1, accuracy=COARSE) == one
    two = dpsgd.epsilon(1.0, 0.01, 100, DELTA, examples_per_user=2, accuracy=COARSE)
    eight = dpsgd.epsilon(1.0, 0.01, 100, DELTA, examples_per_user=8, accuracy=COARSE)
    assert one.upper < two.lower and two.upper < eight.lower


def test_user_level_without_sampling_is_a_gaussian_of_sensitivity_k() -> None:
    """q = 1: all k examples are in every batch, T steps of Δ = k are μ = k√T/σ GDP."""
    bound = dpsgd.epsilon(4.0, 1.0, 4, DELTA, examples_per_user=3)
    assert bound.lower <= float(gdp_epsilon(3.0 * 2.0 / 4.0, DELTA)) <= bound.upper


def test_user_level_mixture_probabilities_are_binomial() -> None:
    mech = dpsgd.user_level_mixture(1.0, 0.1, 5)
    assert mech.sensitivities == (0.0, 1.0, 2.0, 3.0, 4.0, 5.0)
    np.testing.assert_allclose(mech.probabilities, stats.binom.pmf(np.arange(6), 5, 0.1), rtol=EXACT_RTOL)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"examples_per_user": 0}, "examples_per_user"),
        ({"examples_per_user": 2, "sampling": "fixed_size"}, "examples_per_user"),
        ({"sampling": "truncated_poisson"}, "dataset_size"),
        ({"sampling": "truncated_poisson", "dataset_size": 100, "max_batch_size": 0}, "max_batch_size"),
        ({"dataset_size": 100}, "truncated_poisson"),
    ],
)
def test_sampler_options_are_validated(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        dpsgd.epsilon(1.0, 0.1, 10, DELTA, **kwargs)  # type: ignore[arg-type]


# --- truncated Poisson ------------------------------------------------------------------------------


def test_truncated_poisson_at_the_dp_accounting_row() -> None:
    """n = 60,000, q = 256/60,000, B = 300, σ = 1.1, T = 3,516, δ = 1e-5: the dominating pair's bracket is
    ≤ 1e-4 relative wide, below dp_accounting 0.6's 2.3955 (which accounts the truncated branch with the
    symmetrized REPLACE_ONE law, pointwise above the Poisson pair with Δ = 2 that dominates it). The run's
    bracket (issue 27 C) keeps that upper end, and its lower end is the explicit pair's (all other
    gradients 0) — a lower bound for the run, far below the dominating pair's lower end."""
    q = 256 / 60_000
    kwargs: dict[str, Any] = {"sampling": "truncated_poisson", "dataset_size": 60_000, "max_batch_size": 300}
    pair = dpsgd.epsilon_brackets(1.1, q, 3516, DELTA, **kwargs)[1]
    assert pair.upper - pair.lower <= DEFAULT_ACCURACY.relative_width * pair.upper
    assert pair.upper < DP_ACCOUNTING_TRUNCATED_EPSILON
    step = TruncatedPoissonGaussian(1.1, dataset_size=60_000, sampling_rate=q, max_batch_size=300)
    explicit = compose((truncated_poisson_lower_pair(step), 3516)).epsilon(DELTA)
    run = dpsgd.epsilon(1.1, q, 3516, DELTA, **kwargs)
    assert run == Bound(explicit.lower, pair.upper)
    assert (run, pair) == dpsgd.epsilon_brackets(1.1, q, 3516, DELTA, **kwargs)
    assert explicit.upper < pair.lower
    # the cap can only help the explicit pair, never hurt it: its rate is below q
    assert explicit.upper <= dpsgd.epsilon(1.1, q, 3516, DELTA).upper


def test_every_sampler_lower_end_is_the_runs() -> None:
    """Issue 27 C audit: for each sampler whose upper end is a dominating pair that is not the run's own,
    ``epsilon`` takes its lower end from the dominated (explicit) pair; elsewhere both functions agree."""
    q, steps = 0.01, 200
    for kwargs in ({}, {"examples_per_user": 2}):
        run, pair = dpsgd.epsilon_brackets(1.0, q, steps, DELTA, accuracy=COARSE, **kwargs)
        assert run == pair == dpsgd.epsilon(1.0, q, steps, DELTA, accuracy=COARSE, **kwargs)
    truncated: dict[str, Any] = {"sampling": "truncated_poisson", "dataset_size": 1000, "max_batch_size": 12}
    fixed: dict[str, Any] = {"sampling": "fixed_size"}  # T > 1: the symmetrized step's composition dominates
    for kwargs in (fixed, truncated, {"sampling": "shuffle"}, {"sampling": "balls_in_bins"}):
        run, pair = dpsgd.epsilon_brackets(1.0, q, steps, DELTA, accuracy=COARSE, **kwargs)
        assert run.upper == pair.upper and run.lower < pair.lower


def test_truncated_poisson_without_truncation_is_poisson() -> None:
    kwargs = {"sampling": "truncated_poisson", "dataset_size": 50, "max_batch_size": 50}
    assert dpsgd.epsilon(1.0, 0.1, 20, DELTA, **kwargs) == dpsgd.epsilon(1.0, 0.1, 20, DELTA)  # type: ignore[arg-type]


def _batch_sum_mixture(
    gradients: list[float], sampling_rate: float, cap: int
) -> dict[float, float]:
    """Exact law of the truncated Poisson batch sum of a 1-d dataset: mean → probability."""
    law: dict[float, float] = {}
    n = len(gradients)
    for mask in itertools.product((0, 1), repeat=n):
        kept = [g for g, m in zip(gradients, mask) if m]
        weight = sampling_rate ** len(kept) * (1 - sampling_rate) ** (n - len(kept))
        subsets = list(itertools.combinations(kept, cap)) if len(kept) > cap else [tuple(kept)]
        for sub in subsets:
            key = round(sum(sub), 12)
            law[key] = law.get(key, 0.0) + weight / len(subsets)
    return law


def _hockey_stick(p: dict[float, float], q: dict[float, float], sigma: float, epsilon: float) -> float:
    """∫ (p(y) − e^ε q(y))₊ dy for two finite Gaussian mixtures (adaptive quadrature, split at the means)."""
    pm, pw = np.array(list(p)), np.array(list(p.values()))
    qm, qw = np.array(list(q)), np.array(list(q.values()))

    def gap(y: float) -> float:
        return max(0.0, float(pw @ stats.norm.pdf(y, pm, sigma) - math.exp(epsilon) * (qw @ stats.norm.pdf(y, qm, sigma))))

    lo, hi = min(pm.min(), qm.min()) - 14 * sigma, max(pm.max(), qm.max()) + 14 * sigma
    edges = np.linspace(lo, hi, 80)
    return math.fsum(
        integrate.quad(gap, a, b, epsabs=QUADRATURE_ATOL / 400, epsrel=EXACT_RTOL, limit=200)[0]
        for a, b in itertools.pairwise(edges)
    )


@pytest.mark.parametrize(
    ("others", "x", "cap"),
    [([-1.0, -1.0, -1.0, -1.0], 1.0, 2), ([0.0, 0.0, 0.0], 1.0, 1), ([0.5, -1.0, 1.0, -0.3], -1.0, 2)],
)
def test_truncated_poisson_dominates_every_enumerated_small_dataset(
    others: list[float], x: float, cap: int
) -> None:
    """n ≤ 5 records, one step: the exact pair of the pipeline (all subsets, all truncations) has δ(ε) at
    most the dominating pair's certified upper δ, in both directions."""
    sigma, q = 0.8, 0.4
    with_x = _batch_sum_mixture([*others, x], q, cap)
    without = _batch_sum_mixture(others, q, cap)
    kwargs = {"sampling": "truncated_poisson", "dataset_size": len(others) + 1, "max_batch_size": cap}
    for epsilon in (0.0, 0.5, 1.5):
        exact = max(_hockey_stick(with_x, without, sigma, epsilon), _hockey_stick(without, with_x, sigma, epsilon))
        bound = dpsgd.delta(sigma, q, 1, epsilon, **kwargs)  # type: ignore[arg-type]
        assert exact <= bound.upper * (1 + EXACT_RTOL) + QUADRATURE_ATOL


def test_truncated_poisson_explicit_pair_is_attained() -> None:
    """All other gradients 0: the enumerated run is exactly the Poisson pair at the effective rate."""
    sigma, q, cap = 0.8, 0.4, 1
    others = [0.0, 0.0, 0.0]
    step = TruncatedPoissonGaussian(sigma, dataset_size=4, sampling_rate=q, max_batch_size=cap)
    with_x = _batch_sum_mixture([*others, 1.0], q, cap)
    assert with_x[1.0] == pytest.approx(step.effective_rate, rel=EXACT_RTOL)


# --- shuffling ---------------------------------------------------------------------------------------

#: One epoch of 1,000 batches (q = 1/1000), σ = 1, δ = 1e-6: a setting chosen by us (not a row copied
#: from Chua et al.'s paper), kept as a second, less noisy check.
CHUA_ROW = {"sigma": 1.0, "steps": 1000, "delta": 1e-6}

#: The parameter row of the code that accompanies Chua et al., ICML 2024 (arXiv 2403.17673):
#: google-research/google-research dpsgd_batch_sampler_accounting/example.py runs σ = 0.35,
#: num_steps_per_epoch = 1000 (Poisson rate 1/1000), num_epochs = 1, and reports δ at
#: ε ∈ (0.5, 1, 2, 4, 6, 8, 10) for the deterministic, Poisson, shuffle (lower) and balls-in-bins samplers.
CHUA_CODE_SIGMA, CHUA_CODE_STEPS = 0.35, 1000
CHUA_CODE_EPSILONS = (0.5, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0)


def test_shuffle_lower_end_exceeds_poisson_at_chua_et_al_row() -> None:
    """At every ε of their row our certified lower δ for the shuffled epoch lies above the certified upper δ
    of Poisson sampling (same σ, batch fraction 1/1000, 1,000 steps), i.e. at δ* = Poisson's upper δ(ε)
    the shuffled run's ε exceeds the Poisson ε. It also reproduces their cube lower bound
    (``ShuffleAccountant``: caps 0, 0.01, ..., 99.99) up to the bins' resolution."""
    sigma, steps, q = CHUA_CODE_SIGMA, CHUA_CODE_STEPS, 1 / CHUA_CODE_STEPS
    shuffle = compose(shuffle_lower_pair(sigma, q))  # one epoch
    poisson = compose((PoissonSubsampled(Gaussian(sigma), sampling_rate=q), steps), accuracy=COARSE)
    caps = np.arange(0.0, 100.0, 0.01)

    def out(mean: float) -> np.ndarray:
        log_in = stats.norm.logcdf((caps - mean) / sigma) + (steps - 1) * stats.norm.logcdf(caps / sigma)
        return -np.expm1(log_in)

    for epsilon in CHUA_CODE_EPSILONS:
        lower, upper = shuffle.delta(epsilon).lower, poisson.delta(epsilon).upper
        assert lower > upper, (epsilon, lower, upper)
        cube = float(np.max(out(2.0) - math.exp(epsilon) * out(1.0)))
        assert lower >= cube * (1 - SHUFFLE_BIN_RTOL)
    # the same through the public API, in ε at δ = 1e-6
    delta = 1e-6
    assert (
        dpsgd.epsilon(sigma, q, steps, delta, sampling="shuffle").lower
        > dpsgd.epsilon(sigma, q, steps, delta, accuracy=COARSE).upper
    )


def test_shuffle_lower_end_exceeds_the_poisson_upper_end() -> None:
    sigma, steps, delta = CHUA_ROW["sigma"], int(CHUA_ROW["steps"]), CHUA_ROW["delta"]
    shuffle = dpsgd.epsilon(sigma, 1 / steps, steps, delta, sampling="shuffle")
    poisson = dpsgd.epsilon(sigma, 1 / steps, steps, delta)
    assert shuffle.lower > poisson.upper
    # the upper end is the Gaussian without amplification: μ = √E/σ
    assert shuffle.upper >= float(gdp_epsilon(1.0 / sigma, delta))


def test_shuffle_lower_pair_beats_chua_cube_bound() -> None:
    """Chua et al.'s cube sets {max_t x_t > C} are coarsenings of our binned maximum: our certified lower δ
    is at least their best cube value (up to the bins' resolution)."""
    sigma, t, epsilon = 0.8, 50, 1.0
    caps = np.linspace(0.0, 8.0, 801)

    def out(mean: float) -> np.ndarray:
        return -np.expm1(stats.norm.logcdf((caps - mean) / sigma) + (t - 1) * stats.norm.logcdf(caps / sigma))

    cube = float(np.max(out(2.0) - math.exp(epsilon) * out(1.0)))
    bound = dpsgd.delta(sigma, 1 / t, t, epsilon, sampling="shuffle")
    assert cube * (1 - SHUFFLE_BIN_RTOL) <= bound.lower <= bound.upper


def test_shuffle_epochs_and_batches() -> None:
    assert batches_per_epoch(1 / 1000) == (1000, True)
    assert batches_per_epoch(256 / 60_000) == (234, False)
    assert shuffle_epochs(1000, 1 / 1000) == 1 and shuffle_epochs(1001, 1 / 1000) == 2
    assert lower_batches_per_epoch(1 / 1000) == 1000 and lower_batches_per_epoch(256 / 60_000) == 235
    # fewer steps than one epoch of ⌈1/q⌉ batches: no complete epoch, lower end 0
    assert dpsgd.epsilon(1.0, 256 / 60_000, 234, DELTA, sampling="shuffle", accuracy=COARSE).lower == 0.0


def test_shuffle_with_a_batch_size_that_does_not_divide_the_dataset() -> None:
    """Issue 27 item 2: b = 256 of n = 60,000 (q = 256/60,000, 1/q = 234.375), σ = 1.1, 3,516 steps,
    δ = 1e-5. The run keeps the short last batch (235 batches per epoch, 14 complete epochs in 3,516
    steps): the certified lower end is positive, and it is exactly the lower end of a run with 235 equal
    batches per epoch (the binned maximum's law does not depend on the batches' weights); the upper end
    counts ⌈3516/234⌉ = 16 epochs without amplification."""
    q, steps = 256 / 60_000, 3516
    bound = dpsgd.epsilon(1.1, q, steps, DELTA, sampling="shuffle")
    assert 0.0 < bound.lower < bound.upper
    assert bound.lower == dpsgd.epsilon(1.1, 1 / 235, steps, DELTA, sampling="shuffle").lower
    assert bound.upper == compose((Gaussian(1.1 / math.sqrt(16)), 1)).epsilon(DELTA).upper
    assert shuffle_lower_items(1.1, q, steps) == [(shuffle_lower_pair(1.1, 1 / 235), 14)]


def test_shuffle_upper_end_is_the_composed_gaussian() -> None:
    bound = dpsgd.epsilon(2.0, 0.1, 40, DELTA, sampling="shuffle")  # 4 epochs: μ = 2/2 = 1
    assert bound.lower <= float(gdp_epsilon(1.0, DELTA)) <= bound.upper


# --- interop -----------------------------------------------------------------------------------------


def test_interop_reads_the_sampler_events() -> None:
    mog = {
        "class_name": "MixtureOfGaussiansDpEvent",
        "standard_deviation": 1.0,
        "sensitivities": [0, 1],
        "sampling_probs": [0.5, 0.5],
    }
    composition = from_dp_event({"class_name": "SelfComposedDpEvent", "event": mog, "count": 3})
    assert composition.items == ((MixtureOfGaussians(1.0, sensitivities=(0, 1), probabilities=(0.5, 0.5)), 3),)
    assert composition.to_dp_event_json()["event"] == {**mog, "sensitivities": [0.0, 1.0]}
    truncated = {
        "class_name": "TruncatedSubsampledGaussianDpEvent",
        "dataset_size": 1000,
        "sampling_probability": 0.01,
        "truncated_batch_size": 15,
        "noise_multiplier": 1.0,
    }
    composition = from_dp_event(truncated)
    step = TruncatedPoissonGaussian(1.0, dataset_size=1000, sampling_rate=0.01, max_batch_size=15)
    assert composition.items == ((step, 1),)
    assert composition.to_dp_event_json() == truncated
    # the imported step's lower end is the run's (the explicit pair), as dpsgd.epsilon's (issue 27 C)
    imported = from_dp_event({"class_name": "SelfComposedDpEvent", "event": truncated, "count": 50})
    kwargs: dict[str, Any] = {"sampling": "truncated_poisson", "dataset_size": 1000, "max_batch_size": 15}
    assert imported.epsilon(DELTA, accuracy=COARSE) == dpsgd.epsilon(1.0, 0.01, 50, DELTA, accuracy=COARSE, **kwargs)
    assert from_dp_event({**truncated, "noise_multiplier": 0.0}).epsilon(DELTA).upper == math.inf
    assert from_dp_event({**truncated, "truncated_batch_size": 0}).engine == "none"



#: dp_accounting's ``RandomAllocationDpEvent`` as JSON (class name plus field names): the fields and their
#: order are those of google/differential-privacy python/dp_accounting/dp_accounting/dp_event_test.py
#: after PR #414, ``RandomAllocationDpEvent(event=GaussianDpEvent(2.0), num_selected=10, num_steps=100)``.
RANDOM_ALLOCATION = {
    "class_name": "RandomAllocationDpEvent",
    "event": {"class_name": "GaussianDpEvent", "noise_multiplier": 3.0},
    "num_selected": 10,
    "num_steps": 100,
}


def test_interop_reads_random_allocation_onto_balls_in_bins() -> None:
    """The event is one epoch: σ = 3, t = 100, k = 10 gives the bracket of PLD_accounting's example (its
    (lower, upper) inside ours); E epochs of k = 1 are dpsgd's ``sampling="balls_in_bins"`` exactly."""
    composition = from_dp_event(RANDOM_ALLOCATION)
    assert composition.items == ()
    assert composition.allocations == ((RandomAllocation(sigma=3.0, steps=100, selected=10), 1),)
    assert composition.to_dp_event_json() == RANDOM_ALLOCATION
    bound = composition.epsilon(1e-6)
    allocation = RandomAllocation(sigma=3.0, steps=100, selected=10)
    assert bound.lower == compose(allocation_lower_pair(3.0, 100, selected=10)).epsilon(1e-6).lower
    assert bound.upper == compose(*allocation.upper_items()).epsilon(1e-6).upper
    # PLD_accounting brackets the same ten epochs of 1-of-10 (Lemma B): our certified upper end of that
    # product lies inside its bracket; its lower end is not a lower end for 10-of-100, ours is
    peer_lower, peer_upper = PLD_ACCOUNTING_ALLOCATION_EPSILON
    assert bound.lower <= peer_lower <= bound.upper <= peer_upper
    one = {**RANDOM_ALLOCATION, "event": {"class_name": "GaussianDpEvent", "noise_multiplier": 1.0}}
    epochs = {"class_name": "SelfComposedDpEvent", "event": {**one, "num_selected": 1, "num_steps": 10}, "count": 3}
    # The same pairs as dpsgd's (at h = 2^-10; dpsgd refines h itself): the brackets overlap and agree.
    ours, theirs = from_dp_event(epochs).epsilon(DELTA), dpsgd.epsilon(1.0, 0.1, 30, DELTA, sampling="balls_in_bins")
    assert ours.lower <= theirs.upper and theirs.lower <= ours.upper
    assert ours.upper == pytest.approx(theirs.upper, rel=1e-3)
    assert from_dp_event(epochs).to_dp_event_json() == epochs


def test_interop_random_allocation_beside_other_events() -> None:
    """Beside a Gaussian, the upper end composes the allocation's Lemma B blocks (4-of-8: four epochs of
    1-of-2), the lower end the Gaussian with the allocation's dominated pair."""
    gaussian = {"class_name": "GaussianDpEvent", "noise_multiplier": 1.0}
    allocation = {**RANDOM_ALLOCATION, "event": {"class_name": "GaussianDpEvent", "noise_multiplier": 2.0},
                  "num_selected": 4, "num_steps": 8}
    composition = from_dp_event({"class_name": "ComposedDpEvent", "events": [allocation, gaussian]})
    blocks = RandomAllocation(sigma=2.0, steps=8, selected=4).upper_items()
    assert composition.dominating_items() == ((Gaussian(1.0), 1), (blocks[0][0], 4))
    assert composition.dominated_items() == ((Gaussian(1.0), 1), (allocation_lower_pair(2.0, 8, selected=4), 1))
    bound = composition.delta(1.0)
    assert compose(Gaussian(1.0)).delta(1.0).lower < bound.lower <= bound.upper
    assert bound.upper == compose((blocks[0][0], 4), (Gaussian(1.0), 1)).delta(1.0).upper
    assert bound.upper <= compose((Gaussian(1.0), 2)).delta(1.0).upper  # amplified: below no amplification


@pytest.mark.parametrize(
    ("change", "neighbouring", "match"),
    [
        ({}, "substitution", "add/remove only"),
        ({"num_selected": 101}, "add_remove", "num_selected"),
        ({"num_steps": 0}, "add_remove", "num_steps"),
        ({"num_selected": 1.0}, "add_remove", "num_selected"),
        ({"event": {"class_name": "LaplaceDpEvent", "noise_multiplier": 1.0}}, "add_remove", "Gaussian step"),
    ],
)
def test_interop_random_allocation_refusals(change: dict[str, Any], neighbouring: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        from_dp_event({**RANDOM_ALLOCATION, **change}, neighbouring=neighbouring)
    with pytest.raises(ValueError, match="root.event: a RandomAllocationDpEvent cannot be sampled"):
        from_dp_event({"class_name": "PoissonSampledDpEvent", "sampling_probability": 0.1, "event": RANDOM_ALLOCATION})


def test_interop_random_allocation_edges() -> None:
    assert from_dp_event({**RANDOM_ALLOCATION, "num_selected": 0}).engine == "none"
    assert from_dp_event({**RANDOM_ALLOCATION, "event": {"class_name": "NoOpDpEvent"}}).engine == "none"
    silent = from_dp_event({**RANDOM_ALLOCATION, "event": {"class_name": "GaussianDpEvent", "noise_multiplier": 0.0}})
    assert not silent.private and silent.epsilon(DELTA).upper == math.inf
    # k = t: every step sees the example, the run is k Gaussian steps; the bracket holds the GDP truth.
    full = from_dp_event({**RANDOM_ALLOCATION, "num_selected": 4, "num_steps": 4})
    bound = full.epsilon(DELTA)
    assert bound.lower <= float(gdp_epsilon(2.0 / 3.0, DELTA)) <= bound.upper


# --- balls-in-bins / random allocation ---------------------------------------------------------------


def test_allocation_bracket_contains_pld_accounting_readme_example() -> None:
    """σ = 3, t = 100, k = 10 of them, one epoch, δ = 1e-6: PLD_accounting's (lower, upper) lies inside our
    certified (lower, upper): our lower end is the exact pair's binned maximum, our upper end uses no
    amplification."""
    lower = compose(allocation_lower_pair(3.0, 100, selected=10)).epsilon(1e-6)
    upper = compose(allocation_upper_mechanism(3.0, selected=10)).epsilon(1e-6)
    peer_lower, peer_upper = PLD_ACCOUNTING_ALLOCATION_EPSILON
    assert lower.lower <= peer_lower <= peer_upper <= upper.upper


def test_allocation_with_one_step_per_epoch_is_the_gaussian() -> None:
    """t = k = 1: the epoch is the Gaussian; the binned lower pair is the Gaussian up to binning."""
    truth = float(gdp_epsilon(1.0, DELTA))
    bound = dpsgd.epsilon(1.0, 1.0, 1, DELTA, sampling="balls_in_bins")
    assert bound.lower <= truth <= bound.upper
    assert compose(allocation_lower_pair(1.0, 1)).epsilon(DELTA).lower >= truth * (1 - SHUFFLE_BIN_RTOL)


def test_balls_in_bins_in_dpsgd() -> None:
    """Amplified: far below no amplification (Gaussian(σ/√E)), above the binned-maximum lower end."""
    bound = dpsgd.epsilon(1.0, 1 / 1000, 10_000, DELTA, sampling="balls_in_bins", accuracy=COARSE)
    binned = compose((allocation_lower_pair(1.0, 1000), 10)).epsilon(DELTA)
    assert binned.lower < bound.lower < bound.upper < float(gdp_epsilon(math.sqrt(10.0), DELTA))
    with pytest.raises(ValueError, match="sampling_rate"):
        dpsgd.epsilon(1.0, 0.0011, 100, DELTA, sampling="balls_in_bins")


@pytest.mark.parametrize(
    "kwargs",
    [
        {"sampling": "shuffle"},
        {"sampling": "balls_in_bins"},
        {"sampling": "truncated_poisson", "dataset_size": 10_000, "max_batch_size": 15},
        {"examples_per_user": 3},
    ],
)
def test_calibration_meets_the_target_for_every_sampler(kwargs: dict[str, Any]) -> None:
    sigma = dpsgd.noise_multiplier(3.0, 0.001, 2000, DELTA, accuracy=COARSE, **kwargs)
    assert dpsgd.epsilon(sigma, 0.001, 2000, DELTA, accuracy=COARSE, **kwargs).upper <= 3.0
    steps = dpsgd.steps(3.0, sigma, 0.001, DELTA, accuracy=COARSE, **kwargs)
    assert dpsgd.epsilon(sigma, 0.001, steps, DELTA, accuracy=COARSE, **kwargs).upper <= 3.0


def test_opacus_style_accountant_with_a_sampler() -> None:
    from optcomp.interop import Accountant

    accountant = Accountant(sampling="fixed_size", accuracy=COARSE)
    for _ in range(50):
        accountant.step(noise_multiplier=1.0, sample_rate=0.01)
    assert accountant.get_epsilon(DELTA) == dpsgd.epsilon(1.0, 0.01, 50, DELTA, sampling="fixed_size", accuracy=COARSE)
    users = Accountant(examples_per_user=4, accuracy=COARSE)
    users.step(noise_multiplier=1.0, sample_rate=0.01)
    assert users.get_epsilon(DELTA) == dpsgd.epsilon(1.0, 0.01, 1, DELTA, examples_per_user=4, accuracy=COARSE)
    with pytest.raises(ValueError, match="whole run"):
        Accountant(sampling="shuffle")
    with pytest.raises(ValueError, match="dataset_size"):
        Accountant(sampling="truncated_poisson")
    kwargs: dict[str, Any] = {"dataset_size": 1000, "max_batch_size": 12}
    truncated = Accountant(sampling="truncated_poisson", accuracy=COARSE, **kwargs)
    for _ in range(30):
        truncated.step(noise_multiplier=1.0, sample_rate=0.01)
    expected = dpsgd.epsilon(1.0, 0.01, 30, DELTA, sampling="truncated_poisson", accuracy=COARSE, **kwargs)
    assert truncated.get_epsilon(DELTA) == expected  # the run's lower end, not the dominating pair's


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_mixture_with_a_subnormal_shift_stays_sound() -> None:
    """Regression (found by the property test): a shift of 2.2e-309 made Newton's start overflow. Shifts
    are now rounded up to 2⁻⁵⁰⁰ (conservative); the engine's answer may be trivial but never unsound."""
    shifts, probs = [2.225073858507203e-309, 1.0], [0.5, 0.5]
    truth = max(mixture_gaussian_delta(1.0, shifts, probs, 0.0), mixture_gaussian_delta(1.0, shifts, probs, 0.0, add=True))
    bound = compose(MixtureOfGaussians(1.0, sensitivities=shifts, probabilities=probs), accuracy=COARSE).delta(0.0)
    assert bound.lower <= float(truth) * (1 + EXACT_RTOL) and float(truth) <= bound.upper * (1 + EXACT_RTOL)


@settings(max_examples=12, deadline=None)
@given(
    sigma=st.floats(0.3, 5.0),
    shifts=st.lists(st.one_of(st.just(0.0), st.floats(0.01, 3.0)), min_size=1, max_size=4),
    weights=st.lists(st.floats(0.05, 1.0), min_size=4, max_size=4),
    epsilon=st.floats(0.0, 2.0),
)
def test_mixture_delta_property(sigma: float, shifts: list[float], weights: list[float], epsilon: float) -> None:
    """Random mixtures: the certified δ bracket holds the mpmath truth (max of both directions)."""
    shifts = [*shifts, 1.0]  # at least one positive shift
    w = weights[: len(shifts)] + [0.5] * (len(shifts) - len(weights))
    probs = [x / math.fsum(w) for x in w]
    probs[-1] = 1.0 - math.fsum(probs[:-1])
    truth = max(
        mixture_gaussian_delta(sigma, shifts, probs, epsilon),
        mixture_gaussian_delta(sigma, shifts, probs, epsilon, add=True),
    )
    bound = compose(MixtureOfGaussians(sigma, sensitivities=shifts, probabilities=probs), accuracy=COARSE).delta(epsilon)
    assert bound.lower <= float(truth) * (1 + EXACT_RTOL) and float(truth) <= bound.upper * (1 + EXACT_RTOL)

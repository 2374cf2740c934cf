"""Planner accuracy formulas against simulation (seeded) and their exact definitions."""

from __future__ import annotations

import math

import numpy as np
import pytest

from optcomp.planner import half_width, plan_from_dict, simultaneous_beta
from optcomp.planner._noise import _discrete_tail, accuracy, components, noise_scale

#: Monte Carlo draws per check and the allowed deviation in binomial standard errors (seeded draws).
DRAWS = 400_000
SIGMAS = 5.0
SEED = 20261122


def _rng() -> np.random.Generator:
    return np.random.default_rng(SEED)


def _se(p: float, n: int = DRAWS) -> float:
    return SIGMAS * math.sqrt(p * (1.0 - p) / n)


def _discrete_laplace(rng: np.random.Generator, scale: float, size: int | tuple[int, int]) -> np.ndarray:
    p = -math.expm1(-1.0 / scale)  # success probability of each geometric, support {1, 2, ...}
    return rng.geometric(p, size) - rng.geometric(p, size)  # type: ignore[no-any-return]


@pytest.mark.parametrize("beta", [0.05, 0.01, 0.3])
@pytest.mark.parametrize("scale", [0.7, 3.0, 40.0])
def test_laplace_and_gaussian_coverage_is_exactly_one_minus_beta(beta: float, scale: float) -> None:
    rng = _rng()
    lap = rng.laplace(0.0, scale, DRAWS)
    a = half_width("laplace", scale, beta)
    assert abs(np.mean(np.abs(lap) <= a) - (1 - beta)) <= _se(beta)
    gauss = rng.normal(0.0, scale, DRAWS)
    a = half_width("gaussian", scale, beta)
    assert abs(np.mean(np.abs(gauss) <= a) - (1 - beta)) <= _se(beta)


@pytest.mark.parametrize("beta", [0.05, 0.2])
@pytest.mark.parametrize("scale", [0.3, 1.0, 7.5, 60.0])
def test_discrete_laplace_half_width_is_the_least_integer(beta: float, scale: float) -> None:
    m = half_width("discrete_laplace", scale, beta)
    assert m == int(m) >= 0
    t = 1.0 / scale
    assert _discrete_tail(int(m), t) <= beta
    if m > 0:
        assert _discrete_tail(int(m) - 1, t) > beta
    k = _discrete_laplace(_rng(), scale, DRAWS)
    exact = 1.0 - _discrete_tail(int(m), t)
    assert abs(np.mean(np.abs(k) <= m) - exact) <= _se(1.0 - exact) + 1.0 / DRAWS
    assert exact >= 1.0 - beta


@pytest.mark.parametrize("mechanism", ["laplace", "gaussian", "discrete_laplace"])
def test_histogram_simultaneous_coverage(mechanism: str) -> None:
    bins, beta, scale, n = 12, 0.05, 4.0, 50_000
    rng = _rng()
    if mechanism == "laplace":
        noise = rng.laplace(0.0, scale, (n, bins))
    elif mechanism == "gaussian":
        noise = rng.normal(0.0, scale, (n, bins))
    else:
        noise = _discrete_laplace(rng, scale, (n, bins))
    a_sim = half_width(mechanism, scale, simultaneous_beta(beta, bins))
    a_bin = half_width(mechanism, scale, beta)
    assert a_sim > a_bin
    covered = np.mean(np.all(np.abs(noise) <= a_sim, axis=1))
    if mechanism == "discrete_laplace":  # exact coverage of the integer interval is ≥ 1 − β
        exact = (1.0 - _discrete_tail(int(a_sim), 1.0 / scale)) ** bins
        assert exact >= 1.0 - beta
        assert abs(covered - exact) <= _se(1 - exact, n)
    else:
        assert abs(covered - (1 - beta)) <= _se(beta, n)
    per_bin = np.mean(np.abs(noise[:, 0]) <= a_bin)
    assert per_bin >= 1 - beta - _se(beta, n)


def _mean_plan(public: bool) -> dict:  # type: ignore[type-arg]
    return {"epsilon": 1.0, "delta": 1e-6, "dataset_size": 400, "dataset_size_public": public, "beta": 0.1,
            "statistics": [{"name": "m", "kind": "mean", "lower": -3.0, "upper": 5.0}]}


def test_public_mean_is_noisy_sum_over_n() -> None:
    plan = plan_from_dict(_mean_plan(True))
    stat = plan.statistics[0]
    comps = components(plan, stat)
    assert len(comps) == 1 and comps[0].sensitivity == 5.0  # max(|L|, |U|) under add/remove
    scale = noise_scale(comps[0], 0.5, 0.0)
    a, _ = accuracy(plan, stat, comps, (scale,))
    draws = _rng().laplace(0.0, scale, DRAWS) / 400
    assert abs(np.mean(np.abs(draws) <= a) - 0.9) <= _se(0.1)


def test_ratio_mean_covers_at_least_one_minus_beta() -> None:
    plan = plan_from_dict(_mean_plan(False))
    stat = plan.statistics[0]
    comps = components(plan, stat)
    assert [c.role for c in comps] == ["sum", "count"]
    assert comps[0].sensitivity == 4.0  # (U − L)/2 for the centred sum
    scales = tuple(noise_scale(c, c.share * 0.6, 0.0) for c in comps)
    a, _ = accuracy(plan, stat, comps, scales)
    rng = _rng()
    n = 400
    for values in (np.full(n, 5.0), np.full(n, -3.0), rng.uniform(-3.0, 5.0, n)):
        centre = 1.0
        s_true = float(np.sum(values - centre))
        mean = float(np.mean(values))
        s_noisy = s_true + rng.laplace(0.0, scales[0], DRAWS)
        n_noisy = n + rng.laplace(0.0, scales[1], DRAWS)
        est = centre + s_noisy / n_noisy
        assert np.mean(np.abs(est - mean) <= a) >= 0.9 - _se(0.1)


def test_substitution_histogram_sensitivities() -> None:
    base = {"epsilon": 1.0, "delta": 1e-6, "neighbouring": "substitution"}
    for mech, sens, copies in (("laplace", 1.0, 2), ("gaussian", math.sqrt(2.0), 1), ("geometric", 1.0, 2)):
        plan = plan_from_dict({**base, "statistics": [{"name": "h", "kind": "histogram", "bins": 4, "mechanism": mech}]})
        (c,) = components(plan, plan.statistics[0])
        assert (c.sensitivity, c.copies) == (sens, copies)

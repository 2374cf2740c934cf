"""Noise calibration: the returned noise meets the target (certified), the bracket holds the GDP truth,
and the answer beats the KOV Thm V.3 sufficient noise."""

from __future__ import annotations

import math

import pytest

from optcomp import Accuracy, Bound, calibrate, compose
from optcomp._numerics import CALIBRATION_RTOL
from optcomp.mechanisms import Gaussian
from tests._references import gdp_mu, kov_corollary_v1
from tests.tolerances import COARSE_GRID_STEP, EXACT_RTOL

CASES = [(1.0, 1e-5, 10), (0.5, 1e-6, 1)]
#: Bisection tolerance for these tests: the certified properties hold at any tolerance.
RTOL = 10 * CALIBRATION_RTOL


@pytest.mark.parametrize(("eps", "delta", "k"), CASES)
def test_gaussian_calibration(eps: float, delta: float, k: int) -> None:
    cal = calibrate.noise_for_target(Gaussian, eps, delta, k, rtol=RTOL)
    # Re-check through the public composition API: the certified upper ε meets the target.
    assert compose((Gaussian(sigma=cal.noise), k)).epsilon(delta).upper <= eps
    assert cal.epsilon.upper <= eps
    # Beats KOV Thm V.3's sufficient σ = √(8k log(e + ε/δ))/ε.
    kov_sigma = math.sqrt(calibrate.kov_noise_variance(eps, delta, k))
    assert cal.kov_noise == pytest.approx(kov_sigma, rel=EXACT_RTOL)
    assert cal.noise <= kov_sigma
    # The bracket holds the true least σ: k-fold Gaussian is √k/σ-GDP (Dong–Roth–Su Cor. 3.3).
    sigma_star = math.sqrt(k) / gdp_mu(eps, delta)
    assert cal.bracket.lower <= sigma_star <= cal.bracket.upper
    assert cal.bracket.upper == cal.noise


def test_callable_family_and_noise_field() -> None:
    from optcomp.mechanisms import PoissonSubsampled

    coarse = Accuracy(grid_step=COARSE_GRID_STEP)
    cal = calibrate.noise_for_target(
        lambda s: PoissonSubsampled(Gaussian(sigma=s), sampling_rate=0.1),
        1.0,
        1e-5,
        3,
        rtol=1e-2,
        accuracy=coarse,
    )
    assert cal.epsilon.upper <= 1.0
    subsampled = PoissonSubsampled(Gaussian(sigma=cal.noise), sampling_rate=0.1)
    assert compose((subsampled, 3), accuracy=coarse).epsilon(1e-5).upper <= 1.0
    by_name = calibrate.noise_for_target(
        Gaussian, 1.0, 1e-5, 3, noise_field="sigma", rtol=1e-2, accuracy=coarse
    )
    by_callable = calibrate.noise_for_target(
        lambda s: Gaussian(sigma=s), 1.0, 1e-5, 3, rtol=1e-2, accuracy=coarse
    )
    assert by_name.noise == by_callable.noise
    assert cal.noise < by_name.noise  # subsampling amplifies privacy


def test_laplace_family_meets_target() -> None:
    from optcomp.mechanisms import Laplace

    cal = calibrate.noise_for_target(Laplace, 1.0, 1e-5, 5, rtol=RTOL)
    assert compose((Laplace(scale=cal.noise), 5)).epsilon(1e-5).upper <= 1.0
    # Laplace of scale b is (1/b)-DP, so 5-fold basic composition already meets ε = 1 at b = 5: the true
    # least scale is ≤ 5, and the returned one is within the bisection tolerance of it.
    assert cal.bracket.lower <= 5.0
    assert cal.noise <= 5.0 * (1 + RTOL)


def test_kov_formulas() -> None:
    eps, delta, k = 1.0, 1e-5, 10
    e0, var = kov_corollary_v1(eps, delta, k)
    assert calibrate.kov_noise_variance(eps, delta, k) == pytest.approx(float(var), rel=EXACT_RTOL)
    assert calibrate.kov_noise_variance(eps, delta, k, sensitivity=2.0) == pytest.approx(
        4 * float(var), rel=EXACT_RTOL
    )
    e, d = calibrate.kov_per_query_budget(eps, delta, k)
    assert e == pytest.approx(float(e0), rel=EXACT_RTOL)
    assert d == pytest.approx(delta / (2 * k), rel=EXACT_RTOL)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: calibrate.noise_for_target(Gaussian, 0.0, 1e-5, 1), "target_epsilon"),
        (lambda: calibrate.noise_for_target(Gaussian, math.nan, 1e-5, 1), "target_epsilon"),
        (lambda: calibrate.noise_for_target(Gaussian, 1.0, 0.0, 1), "target_delta"),
        (lambda: calibrate.noise_for_target(Gaussian, 1.0, 1e-5, 0), "k"),
        (lambda: calibrate.noise_for_target(Gaussian, 1.0, 1e-5, 1, rtol=0.0), "rtol"),
        (lambda: calibrate.noise_for_target(42, 1.0, 1e-5, 1), "family"),
        (lambda: calibrate.kov_noise_variance(1.0, 0.0, 1), "target_delta"),
        (lambda: calibrate.kov_noise_variance(1.0, 1e-5, 1, sensitivity=-1.0), "sensitivity"),
        (lambda: calibrate.kov_per_query_budget(-1.0, 1e-5, 1), "epsilon"),  # bounds.kov_per_query_budget
    ],
)
def test_validation(call: object, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        call()  # type: ignore[operator]


def _too_large_below(threshold: float) -> object:
    from optcomp.pld import GridTooLargeError

    def evaluate(noise: float) -> Bound:
        if noise < threshold:
            raise GridTooLargeError(f"grid too large at noise={noise}")
        return Bound(100.0 / noise, 100.0 / noise * (1 + 1e-3))

    return evaluate


def test_grid_too_large_counts_as_failing() -> None:
    """A candidate whose grid exceeds the engine's limit is "not feasible here": the search moves on."""
    evaluate = _too_large_below(10.0)
    noise = calibrate.smallest_passing_noise(evaluate, 1.0, start=1e-3, rtol=RTOL)  # type: ignore[arg-type]
    assert evaluate(noise).upper <= 1.0  # type: ignore[operator]
    assert noise <= 100.0 * (1 + 1e-3) * (1 + RTOL)


def test_nothing_feasible_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="grid limit"):
        calibrate.smallest_passing_noise(_too_large_below(math.inf), 1.0)  # type: ignore[arg-type]


def test_coarse_levels_do_not_change_the_safe_side() -> None:
    """With coarse passes (the library's inverses) the returned noise still passes at the fine level."""
    fine = Accuracy(grid_step=COARSE_GRID_STEP)
    coarse, ratios = calibrate.level_accuracies(fine)
    assert [a.grid_step for a in coarse] == sorted((a.grid_step for a in coarse), reverse=True)

    def at(acc: Accuracy):  # type: ignore[no-untyped-def]
        return lambda s: compose((Gaussian(s), 4), accuracy=acc).epsilon(1e-6)

    noise = calibrate.smallest_passing_noise(
        at(fine), 0.7, rtol=RTOL, coarse=[at(a) for a in coarse], ratios=ratios
    )
    assert at(fine)(noise).upper <= 0.7
    assert at(fine)(noise / (1 + RTOL) ** 2).upper > 0.7


def test_noise_for_target_is_within_rtol_of_the_least_certified_noise_and_brackets_the_truth() -> None:
    """The one calibrator (issue 25/26): the returned σ passes, σ/(1 + rtol) fails (certified, at the same
    accuracy), and the bracket holds the GDP truth √k/μ*."""
    eps, delta, k = 1.0, 1e-5, 10
    cal = calibrate.noise_for_target(Gaussian, eps, delta, k)
    assert compose((Gaussian(cal.noise), k)).epsilon(delta).upper <= eps
    assert compose((Gaussian(cal.noise / (1 + 1e-5)), k)).epsilon(delta).upper > eps
    assert cal.bracket.lower <= math.sqrt(k) / gdp_mu(eps, delta) <= cal.bracket.upper


def test_noise_for_target_calibrates_an_increasing_integer_parameter() -> None:
    """``increasing``/``integer``: the largest k-fold count of a Gaussian meeting the target, exactly."""
    cal = calibrate.noise_for_target(lambda t: [(Gaussian(4.0), int(t))], 1.0, 1e-5, 1, increasing=True,
                                     integer=True, start=10.0, limit=10**6)
    t = int(cal.noise)
    assert compose((Gaussian(4.0), t)).epsilon(1e-5).upper <= 1.0 < compose((Gaussian(4.0), t + 1)).epsilon(1e-5).upper
    assert cal.bracket.lower == t <= cal.bracket.upper

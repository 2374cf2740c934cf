"""DP-SGD accounting: truths at q = 1 (GDP closed form), monotonicity, safe-side inverses, validation."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optcomp import Accuracy, dpsgd
from optcomp._numerics import CALIBRATION_RTOL
from tests._references import gdp_delta, gdp_epsilon, gdp_mu
from tests.tolerances import COARSE_GRID_STEP

DELTA = 1e-5
#: Monotonicity and safe-side properties hold at every accuracy; a coarse grid keeps them fast.
COARSE = Accuracy(grid_step=COARSE_GRID_STEP)


@pytest.mark.parametrize(("sigma", "steps"), [(1.0, 1), (2.0, 10), (5.0, 300), (0.7, 3)])
def test_epsilon_at_q1_brackets_gdp_truth(sigma: float, steps: int) -> None:
    truth = float(gdp_epsilon(math.sqrt(steps) / sigma, DELTA))
    b = dpsgd.epsilon(sigma, 1.0, steps, DELTA)
    assert b.lower <= truth <= b.upper


@pytest.mark.parametrize(("sigma", "steps", "eps"), [(1.0, 1, 1.0), (3.0, 50, 0.5)])
def test_delta_at_q1_brackets_gdp_truth(sigma: float, steps: int, eps: float) -> None:
    truth = float(gdp_delta(math.sqrt(steps) / sigma, eps))
    b = dpsgd.delta(sigma, 1.0, steps, eps)
    assert b.lower <= truth <= b.upper


def test_subsampling_helps() -> None:
    """A q < 1 step is a post-processing-free weakening: its certified ε is below the q = 1 truth."""
    full = float(gdp_epsilon(math.sqrt(20) / 1.0, DELTA))
    assert dpsgd.epsilon(1.0, 0.05, 20, DELTA).upper < full


small_sigma = st.floats(1.0, 4.0)
small_q = st.floats(0.01, 1.0)
small_steps = st.integers(1, 8)


@settings(max_examples=6, deadline=None)
@given(sigma=small_sigma, ratio=st.floats(1.05, 2.0), q=small_q, steps=small_steps)
def test_epsilon_decreasing_in_sigma(sigma: float, ratio: float, q: float, steps: int) -> None:
    # True ε is non-increasing in σ, so the smaller σ's certified upper can never fall below the larger
    # σ's certified lower.
    less_noise = dpsgd.epsilon(sigma, q, steps, DELTA, accuracy=COARSE)
    more_noise = dpsgd.epsilon(sigma * ratio, q, steps, DELTA, accuracy=COARSE)
    assert less_noise.upper >= more_noise.lower


@settings(max_examples=6, deadline=None)
@given(sigma=small_sigma, q=small_q, steps=small_steps, extra=st.integers(1, 10))
def test_epsilon_increasing_in_steps(sigma: float, q: float, steps: int, extra: int) -> None:
    fewer = dpsgd.epsilon(sigma, q, steps, DELTA, accuracy=COARSE)
    more = dpsgd.epsilon(sigma, q, steps + extra, DELTA, accuracy=COARSE)
    assert more.upper >= fewer.lower


@settings(max_examples=6, deadline=None)
@given(sigma=small_sigma, q=st.floats(0.01, 0.9), ratio=st.floats(1.05, 3.0), steps=small_steps)
def test_epsilon_increasing_in_q(sigma: float, q: float, ratio: float, steps: int) -> None:
    lower_q = dpsgd.epsilon(sigma, q, steps, DELTA, accuracy=COARSE)
    higher_q = dpsgd.epsilon(sigma, min(1.0, q * ratio), steps, DELTA, accuracy=COARSE)
    assert higher_q.upper >= lower_q.lower


def test_noise_multiplier_is_on_the_safe_side() -> None:
    # The safe side holds at any tolerance: only evaluated, passing σ are returned.
    target, q, steps = 2.0, 0.1, 10
    sigma = dpsgd.noise_multiplier(target, q, steps, DELTA, rtol=1e-2, accuracy=COARSE)
    assert dpsgd.epsilon(sigma, q, steps, DELTA, accuracy=COARSE).upper <= target


def test_noise_multiplier_close_to_gdp_root_at_q1() -> None:
    target, steps = 1.0, 10
    sigma_star = math.sqrt(steps) / gdp_mu(target, DELTA)  # least σ meeting the target exactly
    sigma = dpsgd.noise_multiplier(target, 1.0, steps, DELTA, rtol=10 * CALIBRATION_RTOL)
    assert dpsgd.epsilon(sigma, 1.0, steps, DELTA).upper <= target
    assert sigma >= sigma_star
    # Above the root by at most the bisection tolerance and the engine's bracket width (a few %).
    assert sigma <= sigma_star * (1 + 10 * CALIBRATION_RTOL) * 1.05


@pytest.mark.parametrize(("target", "sigma", "q"), [(2.0, 10.0, 1.0), (0.8, 2.0, 0.1)])
def test_steps_is_on_the_safe_side(target: float, sigma: float, q: float) -> None:
    t = dpsgd.steps(target, sigma, q, DELTA, max_steps=10**4, accuracy=COARSE)
    assert t >= 1
    assert dpsgd.epsilon(sigma, q, t, DELTA, accuracy=COARSE).upper <= target


def test_steps_not_above_gdp_truth_at_q1() -> None:
    target, sigma = 2.0, 10.0
    t_max = math.floor((sigma * gdp_mu(target, DELTA)) ** 2)  # largest T with √T/σ ≤ μ*
    t = dpsgd.steps(target, sigma, 1.0, DELTA, max_steps=10**4)
    assert t <= t_max
    assert t >= 0.9 * t_max


def test_steps_unreachable_target_raises() -> None:
    with pytest.raises(ValueError, match="target_epsilon"):
        dpsgd.steps(0.01, 0.5, 1.0, DELTA)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"noise_multiplier": 0.0}, "noise_multiplier"),
        ({"noise_multiplier": -1.0}, "noise_multiplier"),
        ({"noise_multiplier": math.nan}, "noise_multiplier"),
        ({"sampling_rate": 0.0}, "sampling_rate"),
        ({"sampling_rate": 1.5}, "sampling_rate"),
        ({"sampling_rate": math.nan}, "sampling_rate"),
        ({"steps": 0}, "steps"),
        ({"steps": 2.5}, "steps"),
        ({"steps": True}, "steps"),
        ({"delta": 0.0}, "delta"),
        ({"delta": 1.0}, "delta"),
        ({"delta": math.nan}, "delta"),
        ({"sampling": "with_replacement"}, "sampling"),
    ],
)
def test_epsilon_validation(kwargs: dict[str, object], name: str) -> None:
    args: dict[str, object] = {"noise_multiplier": 1.0, "sampling_rate": 0.1, "steps": 10, "delta": DELTA}
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        dpsgd.epsilon(**args)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: dpsgd.delta(1.0, 0.1, 10, -1.0), "epsilon"),
        (lambda: dpsgd.delta(1.0, 0.1, 10, math.nan), "epsilon"),
        (lambda: dpsgd.noise_multiplier(0.0, 0.1, 10, DELTA), "target_epsilon"),
        (lambda: dpsgd.noise_multiplier(1.0, 0.1, 0, DELTA), "steps"),
        (lambda: dpsgd.noise_multiplier(1.0, 0.1, 10, 2.0), "delta"),
        (lambda: dpsgd.steps(math.nan, 1.0, 0.1, DELTA), "target_epsilon"),
        (lambda: dpsgd.steps(1.0, 0.0, 0.1, DELTA), "noise_multiplier"),
        (lambda: dpsgd.steps(1.0, 1.0, 0.0, DELTA), "sampling_rate"),
    ],
)
def test_inverse_validation(call: object, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        call()  # type: ignore[operator]


def test_noise_multiplier_searches_past_infeasible_grids() -> None:
    """Regression (issue 7): at q = 1, 4373 steps, δ = 1.25e-8 the search used to raise GridTooLargeError
    at its starting σ = 1; the least σ is √T/μ* (GDP, Dong–Roth–Su Cor. 3.3), about 750."""
    target, steps, delta = 0.428, 4373, 1.25e-08
    sigma_star = math.sqrt(steps) / gdp_mu(target, delta)
    sigma = dpsgd.noise_multiplier(target, 1.0, steps, delta)
    assert dpsgd.epsilon(sigma, 1.0, steps, delta).upper <= target
    assert sigma_star <= sigma <= sigma_star * (1 + CALIBRATION_RTOL) * 1.01


def test_steps_tolerance_brackets_the_answer() -> None:
    """The returned T passes; T·(1 + rtol) + 1 steps fail (the search ended on a bracket that tight)."""
    target, sigma, q, rtol = 1.5, 1.0, 0.05, 1e-2
    t = dpsgd.steps(target, sigma, q, DELTA, max_steps=10**4, accuracy=COARSE, rtol=rtol)
    assert dpsgd.epsilon(sigma, q, t, DELTA, accuracy=COARSE).upper <= target
    assert dpsgd.epsilon(sigma, q, math.floor(t * (1 + rtol)) + 1, DELTA, accuracy=COARSE).upper > target


def test_steps_returns_the_largest_certified_t_exactly() -> None:
    """Issue 27 item 3: steps(2.0, 1.1, 256/60000, 1e-5) returned 10203 although 10204 certifies ε ≤ 2
    (1.99974); the answer is now the largest T whose certified ε meets the target: T passes, T + 1 not."""
    q = 256 / 60000
    t = dpsgd.steps(2.0, 1.1, q, 1e-5)
    assert t >= 10204
    assert dpsgd.epsilon(1.1, q, t, 1e-5).upper <= 2.0 < dpsgd.epsilon(1.1, q, t + 1, 1e-5).upper


def test_noise_multiplier_is_within_1e5_of_the_least_certified_sigma() -> None:
    """Issue 26 item 6: σ ≤ 0.72824 with certified ε ≤ 3 at the default accuracy (was 0.7285008), and σ is
    within 1e-5 (relative) of the least σ whose certified ε meets the target."""
    q, steps = 256 / 60000, 3516
    sigma = dpsgd.noise_multiplier(3.0, q, steps, 1e-5)
    assert sigma <= 0.72824
    assert dpsgd.epsilon(sigma, q, steps, 1e-5).upper <= 3.0
    assert dpsgd.epsilon(sigma / (1 + 1e-5), q, steps, 1e-5).upper > 3.0


@pytest.mark.parametrize("delta", [5e-324, 1e-310, 1e-300, 1e-5])
def test_sigma_guess_is_finite_at_subnormal_delta(delta: float) -> None:
    """The σ search's starting guess took log(1/δ): 1/5e-324 overflows to inf, μ became 0 and the guess
    divided by zero (noise_multiplier(1.0, 0.01, 100, 5e-324) raised ZeroDivisionError). It takes −log δ."""
    from optcomp.dpsgd import _sigma_guess

    guess = _sigma_guess(1.0, 0.01, 100, delta)
    assert math.isfinite(guess) and guess > 0

"""Group privacy on every trade-off type (DRS Thm 2.14; issue 15).

Truths: the group (ε, δ) statement δ(gε) = δ(1 + e^ε + … + e^{(g−1)ε}) in mpmath, G_μ ↦ G_{gμ}, and the
pointwise composition 1 − (1 − f)^{∘g} (the exact knots must agree with it); brackets must contain the
group curve of the truth.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from optcomp.fdp import (
    GaussianTradeOff,
    PiecewiseLinearTradeOff,
    TradeOffBracket,
    alpha_grid,
    clt_epsilon_delta,
    delta_at,
    epsilon_delta_composition,
    epsilon_delta_tradeoff,
    from_distributions,
    gaussian_tradeoff,
    group_privacy,
    subsample,
)
from tests._references import group_epsilon_delta_delta, group_epsilon_delta_tradeoff
from tests.tolerances import METHOD_RTOL


def pointwise(f: PiecewiseLinearTradeOff, g: int, alpha: np.ndarray) -> np.ndarray:
    x = alpha
    for _ in range(g):
        x = 1.0 - np.asarray(f(x))
    return 1.0 - x


def test_group_of_epsilon_delta_is_tight_at_g_epsilon() -> None:
    """Group 3 of (1, 1e-6)-DP at ε = 3: the bracket holds δ(1 + e + e²) and is narrow (issue 15)."""
    g = group_privacy(epsilon_delta_tradeoff(1.0, 1e-6), 3)
    b = delta_at(g, 3.0)
    truth = group_epsilon_delta_delta(1.0, 1e-6, 3)
    assert b.lower <= truth <= b.upper
    assert b.upper - b.lower <= 1e-6 * truth + 1e-15  # was [1.11e-5, 1.01e-2]


@settings(max_examples=40, deadline=None)
@given(
    epsilon=st.floats(0.01, 3.0),
    delta=st.floats(0.0, 0.01),
    g=st.integers(2, 6),
)
@example(epsilon=2.0, delta=3e-08, g=6)  # e^{12} amplifies the knots' α rounding to ~1e-12 in β
def test_group_of_epsilon_delta_curve(epsilon: float, delta: float, g: int) -> None:
    f = epsilon_delta_tradeoff(epsilon, delta)
    grouped = group_privacy(f, g)
    assert isinstance(grouped, PiecewiseLinearTradeOff)
    # exact knots = the 50-digit composition of the closed form (the definition, DRS Thm 2.14)
    for a in (0.0, 1e-9, 1e-4, 0.01, 0.2, 0.5, 0.9):
        truth_a = float(group_epsilon_delta_tradeoff(epsilon, delta, g, a))
        assert abs(float(np.asarray(grouped(a))) - truth_a) <= float(np.max(grouped.knot_error))
    # δ(gε) ≤ δ' = δ(1 + … + e^{(g−1)ε}) always (the curve is at least f_{gε, δ'}), with equality while
    # h^{∘(g−1)}(0) = δ(1 + … + e^{(g−2)ε}) stays below h's first knot (1 − δ)/(1 + e^ε)
    truth = group_epsilon_delta_delta(epsilon, delta, g)
    b = delta_at(grouped, g * epsilon)
    assert b.lower <= min(1.0, truth)
    if group_epsilon_delta_delta(epsilon, delta, g - 1) <= (1.0 - delta) / (1.0 + math.exp(epsilon)):
        assert truth <= b.upper + 1e-15
        closed = epsilon_delta_tradeoff(g * epsilon, truth)
        # within the curve's own stated per-knot error (up to ~4e-10 where e^{gε} amplifies the α rounding)
        assert grouped.dominates(closed, atol=1e-12 + float(np.max(grouped.knot_error)))


def test_group_of_gaussian_is_closed_form() -> None:
    g = group_privacy(gaussian_tradeoff(0.7), 3)
    assert isinstance(g, GaussianTradeOff)
    assert g.mu == pytest.approx(2.1, rel=METHOD_RTOL)


def test_group_of_composition_and_discrete_pairs_matches_pointwise() -> None:
    for f in (epsilon_delta_composition(0.3, 1e-5, 8), from_distributions([0.5, 0.3, 0.2], [0.2, 0.3, 0.5])):
        grouped = group_privacy(f, 2)
        a = alpha_grid(513)
        assert np.allclose(np.asarray(grouped(a)), pointwise(f, 2, a), rtol=0.0, atol=1e-12)


def test_group_of_brackets_contains_group_of_truth() -> None:
    # subsampled Gaussian bracket (DRS Thm 4.2) and the CLT band (non-piecewise-linear curves)
    sub = subsample(gaussian_tradeoff(1.0), 0.3)
    band = clt_epsilon_delta([0.1] * 50, [0.0] * 50).band
    exact = epsilon_delta_composition(0.1, 0.0, 50)
    a = alpha_grid(129)
    for bracket, truth in ((band, exact), (sub, None)):
        grouped = group_privacy(bracket, 2)
        assert isinstance(grouped, TradeOffBracket)
        lo, hi = (np.asarray(v) for v in grouped(a))
        assert np.all(lo <= hi + 1e-12)
        if truth is not None:
            t = pointwise(truth, 2, a)
            assert np.all(lo <= t + 1e-12) and np.all(t <= hi + 1e-12)


def test_group_size_one_and_bad_input() -> None:
    f = epsilon_delta_tradeoff(1.0, 0.0)
    assert group_privacy(f, 1) is f
    with pytest.raises(ValueError, match="k"):
        group_privacy(f, 0)
    with pytest.raises(ValueError, match="k"):
        group_privacy(f, 1.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="TradeOff"):
        group_privacy("f", 2)  # type: ignore[call-overload]


def test_group_of_pure_dp_is_k_epsilon() -> None:
    grouped = group_privacy(epsilon_delta_tradeoff(0.5, 0.0), 4)
    assert delta_at(grouped, 2.0).upper <= 1e-11  # 0 up to the knots' certified error
    assert delta_at(grouped, 2.0 - 0.01).lower > 0.0
    assert math.isclose(float(np.asarray(grouped(0.0))), 1.0)


def test_pointwise_group_stops_at_a_fixed_point() -> None:
    """A million-fold group of f_{ε,0} at a subnormal ε: h = 1 − f is the identity in floats, so the
    pointwise iteration stops after one step instead of running a million (the CLI's
    `tradeoff --eps 1e-320 --group 1000000` took over 5 minutes)."""
    from optcomp.fdp import delta_at, epsilon_delta_tradeoff, group_privacy

    f = group_privacy(epsilon_delta_tradeoff(1e-320, 0.0), 10**6)
    alphas = np.linspace(0.0, 1.0, 11)
    assert np.array_equal(f(alphas), 1.0 - alphas)
    b = delta_at(f, 0.0)
    assert b.lower <= 0.0 <= b.upper

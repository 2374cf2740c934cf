"""Soundness of optimal composition at the edges: once-wrong cases and property tests vs 50-digit mpmath (issue 8).

Independent references:

* homogeneous: the binomial sum of MV Thm 1.4 term by term in mpmath;
* real ε_i, k ≤ 10: all 2^k outcomes enumerated in mpmath (MV Thm 1.5);
* ε_i on a common lattice, any k: the loss law convolved exactly in mpmath on the lattice;
* beyond those, the exact lattice answers for ε_i rounded down / up bracket the truth (OptComp is
  monotone in each ε_i), and every certified bracket must meet that interval.
"""

from __future__ import annotations

import math
from typing import SupportsFloat

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optcomp import bounds, optimal
from optcomp._numerics import Bound
from tests._references import (
    canonical_homogeneous_law,
    canonical_lattice_law,
    canonical_outcomes,
    delta_floor,
    delta_target,
    law_delta_at,
    law_least_epsilon,
    two_group_homogeneous_hockey_stick,
)


def assert_contains(b: Bound, truth: SupportsFloat) -> None:
    """The certified bracket holds the 50-digit truth (bisection error 2⁻⁹⁰·max L allowed at the ends)."""
    if truth == math.inf:
        assert b.upper == math.inf, (b, truth)
        return
    t = float(truth)
    slack = 1e-20 * max(1.0, t)
    assert b.lower <= t + slack and t - slack <= b.upper, (b, t)


# ---------------------------------------------------------------------------------------------
# Edge cases once answered on the wrong side: near the δ floor, after overflow, huge ε and k.
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("delta_g", "expected"), [(9.999950050166167e-06, 15.89395), (1e-5, 11.027898422605717)]
)
def test_upper_end_near_the_delta_floor(delta_g: float, expected: float) -> None:
    """Was: upper 15.60295 (1.8 % below the truth 15.89395) and 11.027898422595566 < 11.027898422605717."""
    b = optimal.epsilon([(0.05, 1e-08)] * 1000, delta_g)
    losses, probs = canonical_homogeneous_law(0.05, 1000)
    truth = law_least_epsilon(losses, probs, delta_target([1e-8] * 1000, delta_g))
    assert_contains(b, truth)
    assert abs(float(truth) - expected) < 1e-5 * expected
    assert b.width <= 1e-6 * b.upper


@pytest.mark.parametrize("gap", [1e-3, 1e-8, 1e-12, 1e-14])
def test_near_floor_grid_of_targets(gap: float) -> None:
    """δ_g = floor·(1 + gap): both ends on the right side (the lower end was above the truth, even inf)."""
    mechs = [(0.3, 1e-3)] * 10 + [(0.2, 2e-4)] * 6
    floor = delta_floor([d for _, d in mechs])
    delta_g = float(floor * (1 + gap))
    b = optimal.epsilon(mechs, delta_g)
    losses, probs = canonical_lattice_law([3] * 10 + [2] * 6, 0.1)
    truth = law_least_epsilon(losses, probs, delta_target([d for _, d in mechs], delta_g))
    assert_contains(b, truth)


def test_mv_after_float_overflow() -> None:
    """Was [0.9447, 0.9547] (truth 0.1439): Dyer's sums overflowed; now probabilities in [0, 1]."""
    mechs = [(0.001, 0.0)] * 1500
    b = optimal.epsilon(mechs, 1e-6, method="mv", tolerance=0.2)
    exact = optimal.epsilon(mechs, 1e-6)
    assert b.lower <= exact.upper and exact.lower <= b.upper
    assert exact.upper < 0.1439 + 1e-4 and exact.lower > 0.1439 - 1e-4


def test_mv_beyond_sum_600_and_cost_refusal() -> None:
    mechs = [(2.0, 0.0)] * 300 + [(1.5, 0.0)] * 20
    ticks: list[tuple[int, int]] = []
    b = optimal.epsilon(mechs, 1e-6, method="mv", tolerance=0.9, progress=lambda d, t: ticks.append((d, t)))
    exact = optimal.epsilon(mechs, 1e-6)
    assert b.lower <= exact.upper and exact.lower <= b.upper
    assert ticks and ticks[-1][0] == ticks[-1][1]
    with pytest.raises(ValueError, match="method='mv'.*would take about"):
        optimal.epsilon([(0.05, 0.0)] * 5000, 1e-6, method="mv", tolerance=1e-3)


@pytest.mark.parametrize("eps", [1e15, 1e100, 1e308])
def test_huge_epsilon_is_not_zero(eps: float) -> None:
    """Was [0, 0] at ε = 1e308 and lower = 0 from ε = 1e15: the loss is kε except w.p. ~e^{−ε}."""
    b = optimal.epsilon(optimal.homogeneous(eps, 0.0, 10), 1e-6)
    total = 10 * eps
    if math.isinf(total):
        assert b.upper == math.inf and b.lower >= float(np.finfo(np.float64).max) * (1 - 1e-9)
    else:
        assert b.lower <= total <= b.upper
        assert b.lower >= total * (1 - 1e-9)
    het = optimal.epsilon([(eps, 0.0)] * 3 + [(0.1, 0.0)] * 5, 1e-6)
    assert het.lower >= min(3 * eps, 1e308) * (1 - 1e-9)


def test_huge_k_is_lazy_or_refused() -> None:
    """k = 10¹² copies: a certified answer (never a MemoryError)."""
    try:
        b = optimal.epsilon(optimal.homogeneous(0.01, 0.0, 10**12), 1e-6)
    except ValueError as exc:
        assert "window" in str(exc)
    else:
        assert 0 < b.lower <= b.upper < math.inf


def test_pooling_of_repeated_pairs() -> None:
    many = [(0.1, 0.0)] * 10**6
    assert optimal.epsilon(many, 1e-6) == optimal.epsilon(optimal.homogeneous(0.1, 0.0, 10**6), 1e-6)
    grouped = [(0.1, 1e-10)] * 3000 + [(0.2, 0.0)] * 2000
    b = optimal.epsilon(grouped, 1e-6)
    assert math.isfinite(b.upper) and b.width <= 1e-6 * b.upper  # on the lattice 0.1·ℤ: exact


# ---------------------------------------------------------------------------------------------
# Property tests against independent references.
# ---------------------------------------------------------------------------------------------

_DELTA_I = st.one_of(st.just(0.0), st.floats(1e-12, 1e-2))
_TARGET = st.floats(-300.0, math.log10(0.5)).map(lambda x: 10.0**x)


@settings(max_examples=25, deadline=None)
@given(
    eps=st.lists(st.floats(0.005, 1.5), min_size=1, max_size=9),
    dl=st.lists(_DELTA_I, min_size=9, max_size=9),
    target=_TARGET,
    near_floor=st.booleans(),
)
def test_real_epsilons_enumerated(eps: list[float], dl: list[float], target: float, near_floor: bool) -> None:
    deltas = dl[: len(eps)]
    mechs = list(zip(eps, deltas))
    floor = delta_floor(deltas)
    delta_g = min(0.5, float(floor * (1 + target)) if near_floor else float(floor + target))
    losses, probs = canonical_outcomes(eps)
    truth = law_least_epsilon(losses, probs, delta_target(deltas, delta_g))
    assert_contains(optimal.epsilon(mechs, delta_g), truth)
    eps_g = float(truth) if math.isfinite(float(truth)) else 1.0
    d = optimal.delta(mechs, eps_g)
    d_true = law_delta_at(deltas, losses, probs, eps_g)
    assert d.lower <= d_true * (1 + 1e-15) + 1e-300 and d_true * (1 - 1e-15) <= d.upper


@settings(max_examples=15, deadline=None)
@given(
    a=st.lists(st.integers(1, 12), min_size=17, max_size=40),
    dl=_DELTA_I,
    target=_TARGET,
)
def test_lattice_epsilons_vs_exact_convolution(a: list[int], dl: float, target: float) -> None:
    check_lattice_against_convolution(a, 0.05, dl, target, grid_tolerance=0.05)


def check_lattice_against_convolution(
    a: list[int], unit: float, dl: float, target: float, *, grid_tolerance: float
) -> None:
    """ε_i = a_i·unit, all δ_i = dl: auto and grid brackets hold the exact 50-digit lattice answer."""
    mechs = [(ai * unit, dl) for ai in a]
    floor = delta_floor([dl] * len(a))
    delta_g = min(0.5, float(floor + target))
    losses, probs = canonical_lattice_law(a, unit)
    truth = law_least_epsilon(losses, probs, delta_target([dl] * len(a), delta_g))
    assert_contains(optimal.epsilon(mechs, delta_g), truth)
    assert_contains(optimal.epsilon(mechs, delta_g, method="grid", tolerance=grid_tolerance), truth)


@pytest.mark.slow  # 200 real ε_i, 8 draws, two exact lattice compositions each: about two minutes on 2 cores
@settings(max_examples=8, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    dl=_DELTA_I,
    target=st.floats(-30.0, math.log10(0.5)).map(lambda x: 10.0**x),
)
def test_split_engine_inside_rounded_lattice_answers(seed: int, dl: float, target: float) -> None:
    """200 real ε_i: the truth lies between the exact answers for ε_i rounded down / up to 0.01·ℤ."""
    eps = np.random.default_rng(seed).uniform(0.01, 0.2, 200)
    unit = 0.01
    mechs = [(float(e), dl) for e in eps]
    floor = -math.expm1(200 * math.log1p(-dl))
    delta_g = min(0.5, floor + target)
    b = optimal.epsilon(mechs, delta_g, tolerance=1e-2)
    down = optimal.epsilon([(max(1, math.floor(e / unit)) * unit, dl) for e in eps], delta_g, method="exact")
    up = optimal.epsilon([(math.ceil(e / unit) * unit, dl) for e in eps], delta_g, method="exact")
    assert b.lower <= up.upper and down.lower <= b.upper


# ---------------------------------------------------------------------------------------------
# Effort, classic bounds, calibration.
# ---------------------------------------------------------------------------------------------


def test_more_effort_never_widens() -> None:
    eps = np.random.default_rng(7).uniform(0.01, 0.2, 500)
    mechs = [(float(e), 0.0) for e in eps]
    widths = [optimal.epsilon(mechs, 1e-6, tolerance=t).width for t in (1e-1, 1e-2, 1e-3)]
    assert widths[0] >= widths[1] >= widths[2]
    assert widths[2] <= 1e-3


def test_heterogeneous_advanced_composition_in_comparisons() -> None:
    mechs = [(0.01 * (1 + i % 50), 0.0) for i in range(500)]
    out = bounds.compare_epsilon(mechs, 1e-6)
    hom_at_max = bounds.advanced_drv(0.5, 0.0, 500, 1e-6)[0]
    assert out["advanced_drv"] == bounds.advanced_drv_heterogeneous(mechs, 1e-6)[0] < hom_at_max
    assert out["advanced_lecture_notes"] <= out["advanced_drv"]
    opt = optimal.epsilon(mechs, 1e-6)
    for name in ("basic", "advanced_drv", "advanced_lecture_notes", "kov"):
        assert out[name] >= opt.lower
    same = [(0.1, 1e-7)] * 100
    assert bounds.advanced_drv_heterogeneous(same, 1e-6)[0] == pytest.approx(
        bounds.advanced_drv(0.1, 1e-7, 100, 1e-6)[0]
    )
    lazy = bounds.compare_epsilon(optimal.homogeneous(0.1, 1e-7, 100), 1e-3)
    assert lazy == pytest.approx(bounds.compare_epsilon(same, 1e-3))


@pytest.mark.parametrize(
    ("eps", "dlt", "k", "d0"), [(1.0, 1e-5, 100, 0.0), (0.5, 1e-6, 1000, 1e-10), (2.0, 1e-3, 10, 1e-5)]
)
def test_black_box_calibration_is_safe_and_beats_kov(eps: float, dlt: float, k: int, d0: float) -> None:
    c = optimal.calibrate(eps, dlt, k, delta0=d0)
    assert c.epsilon.upper <= eps
    assert optimal.epsilon(optimal.homogeneous(c.epsilon0, d0, k), dlt).upper <= eps
    assert c.bracket.lower == c.epsilon0 <= c.bracket.upper
    assert (
        optimal.epsilon(optimal.homogeneous(c.bracket.upper * (1 + 1e-9), d0, k), dlt).upper > eps
        or c.bracket.upper == math.inf
    )
    kov = optimal.calibrate(eps, dlt, k, delta0=c.kov_delta0)
    assert kov.epsilon0 >= c.kov_epsilon0  # KOV Cor V.1 is sufficient, the optimal budget is larger


def test_calibration_rejects_impossible_delta0() -> None:
    with pytest.raises(ValueError, match="delta0"):
        optimal.calibrate(1.0, 1e-6, 100, delta0=1e-7)


def test_underflowed_tilted_masses_still_bound_the_window_tails() -> None:
    """Was [0, 0] (truth 53.6079): after a tilt of θ·B ≈ 6000 the ε = 3 items' − outcomes underflowed to 0
    in the tilted masses, and the Chernoff bound on the mass below the window lost 62 % of P."""
    mechs = [(3.0, 0.0)] * 20 + [(0.001, 0.0)] * 2000
    b = optimal.epsilon(mechs, 0.5)
    big_d = two_group_homogeneous_hockey_stick((3.0, 20), ("0.001", 2000), dps=30)
    assert big_d(b.upper) <= 0.5 <= big_d(b.lower)
    assert b.width <= 1e-3


@pytest.mark.parametrize(
    ("mechs", "delta_g", "truth"),
    [
        ([(746.0, 0.0)], 0.5, 746 - math.log(2)),  # D(ε) = 1 − e^{ε − 746} below the shift
        ([(800.0, 0.0)] * 3, 1e-3, 2400 + math.log1p(-1e-3)),
        ([(1000.0, 0.1)], 0.5, 1000 + math.log(1 - (1 - (1 - 0.5) / 0.9))),
    ],
)
def test_huge_epsilons_answer_below_their_shift(
    mechs: list[tuple[float, float]], delta_g: float, truth: float
) -> None:
    """Was [746, 746] etc.: ε_i > 745 were a shift with the rest's root clamped at 0, so the lower end sat
    above a truth below the shift (found by review). Truths: the closed form 1 − e^{ε − Σε_i} = r."""
    b = optimal.epsilon(mechs, delta_g)
    assert b.lower <= truth <= b.upper
    assert b.width <= 1e-9 * truth
    mixed = optimal.epsilon([(1000.0, 0.1), (0.5, 0.0)], 0.5)  # sound (the grid engine is tight here)
    assert mixed.lower <= 999.4122133351 <= mixed.upper

"""Optimal composition (KOV Thm III.3, MV Thms 1.4, 1.5, 1.7) against independent mpmath truths."""

from __future__ import annotations

import math
from typing import SupportsFloat

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optcomp import bounds, optimal
from optcomp._numerics import Bound
from tests._references import (
    kov_theorem_iii3_deltas,
    lattice_hockey_stick_float,
    mv_heterogeneous_sum,
    mv_homogeneous_sum,
    mv_homogeneous_sum_large_k,
    mv_lattice_sum,
    optimal_delta_from_sum,
    optimal_epsilon_from_sum,
)
from tests.tolerances import (
    EXACT_RTOL,
    METHOD_RTOL,
    OPTIMAL_GRID_TOLERANCE,
    OPTIMAL_LARGE_K_RTOL,
    OPTIMAL_LATTICE_RTOL,
    OPTIMAL_MV_ETA,
)


def assert_in(b: Bound, truth: SupportsFloat, rtol: float) -> None:
    t = float(truth)
    if math.isinf(t):
        assert b == Bound(math.inf, math.inf)
        return
    assert b.lower <= t <= b.upper, (b, t)
    assert b.width <= rtol * max(abs(t), 1.0), (b, t)


def overlap(a: Bound, b: Bound) -> bool:
    """Two certified brackets of the same truth must intersect (a tight one sits inside a loose one)."""
    return a.lower <= b.upper and b.lower <= a.upper


# ---------------------------------------------------------------------------------------------
# Homogeneous: closed form vs mpmath.
# ---------------------------------------------------------------------------------------------


def test_thousand_equal_pairs_are_homogeneous_and_exact() -> None:
    """1000 × (0.1, 0) as a plain list: detected as homogeneous, the bracket holds the MV Thm 1.4 ε."""
    mechs = [(0.1, 0.0)] * 1000  # a plain list of equal pairs is detected as homogeneous
    b = optimal.epsilon(mechs, 1e-6)
    truth = optimal_epsilon_from_sum(lambda x: mv_homogeneous_sum(0.1, 1000, x), [], 1e-6, hi=100.0)
    assert_in(b, truth, EXACT_RTOL)


@pytest.mark.parametrize(
    ("eps", "dlt", "k", "delta_g"),
    [(0.1, 0.0, 1, 0.01), (0.5, 1e-3, 7, 0.05), (0.01, 0.0, 400, 1e-8), (1.0, 1e-4, 25, 1e-2), (0.3, 0.0, 64, 2**-25)],
)
def test_homogeneous_epsilon_matches_mpmath(eps: float, dlt: float, k: int, delta_g: float) -> None:
    b = optimal.epsilon(optimal.homogeneous(eps, dlt, k), delta_g)
    truth = optimal_epsilon_from_sum(lambda x: mv_homogeneous_sum(eps, k, x), [dlt] * k, delta_g, hi=k * eps)
    assert_in(b, truth, EXACT_RTOL)


@pytest.mark.parametrize(("eps", "dlt", "k", "eps_g"), [(0.1, 0.0, 100, 1.0), (0.2, 1e-3, 30, 0.7), (1.0, 0.0, 9, 0.0)])
def test_homogeneous_delta_matches_mpmath(eps: float, dlt: float, k: int, eps_g: float) -> None:
    b = optimal.delta(optimal.homogeneous(eps, dlt, k), eps_g)
    truth = optimal_delta_from_sum(lambda x: mv_homogeneous_sum(eps, k, x), [dlt] * k, eps_g)
    assert_in(b, truth, EXACT_RTOL)


def test_kov_figure3_pairs_of_theorem_III3() -> None:
    """30-fold (0.1, 0.001): the Thm III.3 pairs ((k−2i)ε, 1 − (1−δ)^k (1 − δ_i)), δ_i from eq. (6)."""
    eps, dlt, k = 0.1, 0.001, 30
    mechs = optimal.homogeneous(eps, dlt, k)
    for i, truth in enumerate(kov_theorem_iii3_deltas(eps, dlt, k)):
        b = optimal.delta(mechs, (k - 2 * i) * eps)
        assert b.lower <= float(truth) <= b.upper
        assert b.width <= EXACT_RTOL * float(truth)


# ---------------------------------------------------------------------------------------------
# Heterogeneous: brute force, lattice DP, grid bracket, MV.
# ---------------------------------------------------------------------------------------------

HET = [(0.05, 0.0), (0.3, 1e-4), (0.11, 0.0), (0.7, 0.0), (0.02, 1e-3), (0.4, 0.0)]


def test_heterogeneous_brute_force_matches_mpmath() -> None:
    eps = [e for e, _ in HET]
    dl = [d for _, d in HET]
    for delta_g in (1e-2, 2e-3, 1.2e-3):
        truth = optimal_epsilon_from_sum(lambda x: mv_heterogeneous_sum(eps, x), dl, delta_g, hi=sum(eps))
        assert_in(optimal.epsilon(HET, delta_g), truth, EXACT_RTOL)
    for eps_g in (0.0, 0.5, 1.2):
        truth = optimal_delta_from_sum(lambda x: mv_heterogeneous_sum(eps, x), dl, eps_g)
        assert_in(optimal.delta(HET, eps_g), truth, EXACT_RTOL)


def test_lattice_dp_matches_mpmath() -> None:
    a = [1, 3, 2, 5, 1, 4, 2, 2, 3, 1, 5, 4, 3, 2, 1, 1, 2, 3, 4, 5, 2, 3]  # 22 > brute-force limit
    mechs = [(ai * 0.05, 0.0) for ai in a]
    for delta_g in (1e-3, 1e-6):
        truth = optimal_epsilon_from_sum(lambda x: mv_lattice_sum(a, 0.05, x), [], delta_g, hi=0.05 * sum(a))
        assert_in(optimal.epsilon(mechs, delta_g, method="exact"), truth, METHOD_RTOL)
    truth = optimal_delta_from_sum(lambda x: mv_lattice_sum(a, 0.05, x), [], 1.0)
    assert_in(optimal.delta(mechs, 1.0, method="exact"), truth, METHOD_RTOL)


def test_brute_force_equals_lattice_dp() -> None:
    """Same instance twice: 12 mechanisms (brute force) and 12 + 8 zero-ε... padded to force the DP."""
    base = [(0.1 * a, 0.0) for a in (1, 2, 3, 1, 2, 4, 1, 1, 3, 2, 2, 1)]
    brute = optimal.epsilon(base, 1e-5)
    # Split each mechanism into units? No: duplicate the instance so k > 16 and compare with mpmath.
    doubled = base + base
    dp = optimal.epsilon(doubled, 1e-5)
    truth = optimal_epsilon_from_sum(lambda x: mv_lattice_sum([1, 2, 3, 1, 2, 4, 1, 1, 3, 2, 2, 1] * 2, 0.1, x), [], 1e-5, hi=5.0)
    assert_in(dp, truth, METHOD_RTOL)
    grid_on_brute = optimal.epsilon(base, 1e-5, method="grid", tolerance=OPTIMAL_GRID_TOLERANCE)
    assert overlap(grid_on_brute, brute)


def test_grid_bracket_contains_exact_and_meets_tolerance() -> None:
    mechs = [(0.013 * (1 + (i * 7919) % 97) / 10.0, 0.0) for i in range(40)]
    b = optimal.epsilon(mechs, 1e-6, method="grid", tolerance=OPTIMAL_GRID_TOLERANCE)
    assert b.width <= OPTIMAL_GRID_TOLERANCE
    eps = [e for e, _ in mechs]
    kov = bounds.kov_bound_heterogeneous(mechs, 1e-6)[0]
    assert b.upper <= kov
    # The same ε_i, on an exact lattice (all multiples of 0.0013): the exact value lies inside.
    exact = optimal.epsilon(mechs, 1e-6, method="exact")
    assert exact.width <= OPTIMAL_LATTICE_RTOL * exact.upper
    assert overlap(b, exact)
    assert sum(eps) > b.upper


def test_grid_width_shrinks_with_tolerance() -> None:
    mechs = [(0.001 + 0.0937 * ((i * 0.618034) % 1.0), 0.0) for i in range(300)]
    coarse = optimal.epsilon(mechs, 1e-6, method="grid", tolerance=0.1)
    fine = optimal.epsilon(mechs, 1e-6, method="grid", tolerance=OPTIMAL_GRID_TOLERANCE)
    assert fine.width <= OPTIMAL_GRID_TOLERANCE < coarse.width or fine.width <= coarse.width
    assert fine.width <= OPTIMAL_GRID_TOLERANCE
    assert coarse.lower <= fine.upper and fine.lower <= coarse.upper


def test_mv_method_contains_exact_within_eta() -> None:
    exact = optimal.epsilon(HET, 2e-3)
    mv = optimal.epsilon(HET, 2e-3, method="mv", tolerance=OPTIMAL_MV_ETA)
    assert math.isfinite(exact.upper)
    assert overlap(mv, exact)
    assert mv.upper - exact.upper <= OPTIMAL_MV_ETA


def test_all_methods_agree_on_lattice() -> None:
    mechs = [(0.1 * a, 0.0) for a in (1, 2, 3, 1, 2)]
    ex = optimal.epsilon(mechs, 1e-4, method="exact")
    assert ex.width <= METHOD_RTOL * ex.upper
    for method in ("auto", "grid", "mv"):
        b = optimal.epsilon(mechs, 1e-4, method=method, tolerance=OPTIMAL_MV_ETA)
        assert overlap(b, ex)
        assert b.width <= (OPTIMAL_MV_ETA if method == "mv" else OPTIMAL_GRID_TOLERANCE), (method, b)


# ---------------------------------------------------------------------------------------------
# Edge cases with documented semantics.
# ---------------------------------------------------------------------------------------------


def test_single_mechanism_closed_form() -> None:
    """k = 1, δ = 0: D(ε_g) = p(1 − e^{ε_g − ε}) for ε_g < ε, so ε_g = ε + ln(1 − r(1 + e^{−ε}))."""
    eps, r = 1.0, 0.1
    truth = eps + math.log1p(-r * (1 + math.exp(-eps)))
    b = optimal.epsilon([(eps, 0.0)], r)
    assert b.lower <= truth <= b.upper and b.width <= EXACT_RTOL


def test_target_below_floor_is_infinite() -> None:
    mechs = [(0.1, 0.01)] * 10
    floor = 1 - 0.99**10
    assert optimal.epsilon(mechs, floor * 0.99) == Bound(math.inf, math.inf)
    at_floor_plus = optimal.epsilon(mechs, floor * 1.001)
    assert math.isfinite(at_floor_plus.upper) and at_floor_plus.upper <= 1.0
    assert optimal.delta(mechs, math.inf).contains(floor)


def test_zero_target_is_basic_composition() -> None:
    """δ_g = 0 with δ_i = 0: D(ε_g) = 0 iff ε_g ≥ Σε_i, so OptComp = Σε_i (every method path)."""
    for mechs in (
        [(0.1, 0.0)] * 10,
        [(0.1, 0.0), (0.25, 0.0)],
        [(0.01 * (i + 1), 0.0) for i in range(30)],
        [(0.013 * math.sqrt(i + 1), 0.0) for i in range(30)],
    ):
        b = optimal.epsilon(mechs, 0.0)
        total = math.fsum(e for e, _ in mechs)
        assert b.lower <= total <= b.upper and b.width <= EXACT_RTOL * total
        assert optimal.delta(mechs, 2 * total) == Bound(0.0, 0.0)


def test_large_target_gives_zero() -> None:
    assert optimal.epsilon([(0.1, 0.0)] * 10, 0.9) == Bound(0.0, 0.0)
    assert optimal.epsilon(HET, 1.0) == Bound(0.0, 0.0)


def test_zero_epsilons_and_full_delta() -> None:
    assert optimal.epsilon([(0.0, 0.01)] * 5, 0.05) == Bound(0.0, 0.0)
    assert optimal.epsilon([(0.0, 0.01)] * 5, 0.04) == Bound(math.inf, math.inf)
    assert optimal.epsilon([(0.5, 1.0), (0.1, 0.0)], 0.5) == Bound(math.inf, math.inf)
    assert optimal.delta([(0.5, 1.0)], 3.0) == Bound(1.0, 1.0)
    with_zero = optimal.epsilon([(0.3, 0.0), (0.0, 0.0), (0.2, 0.0)], 1e-3)
    without = optimal.epsilon([(0.3, 0.0), (0.2, 0.0)], 1e-3)
    assert with_zero == without


def test_homogeneous_spec_is_a_sequence() -> None:
    h = optimal.homogeneous(0.2, 1e-5, 4)
    assert len(h) == 4 and list(h) == [(0.2, 1e-5)] * 4 and h[-1] == (0.2, 1e-5) and h[1:3] == [(0.2, 1e-5)] * 2
    assert optimal.epsilon(h, 1e-3) == optimal.epsilon(list(h), 1e-3)


# ---------------------------------------------------------------------------------------------
# Properties.
# ---------------------------------------------------------------------------------------------

eps_st = st.floats(min_value=0.0, max_value=2.0, allow_nan=False)
small_delta = st.floats(min_value=0.0, max_value=1e-3, allow_nan=False)
target_delta = st.floats(min_value=1e-9, max_value=0.5, allow_nan=False)


@settings(max_examples=30, deadline=None)
@given(eps=st.floats(0.001, 1.0), dlt=small_delta, k=st.integers(1, 300), delta_g=target_delta)
def test_monotone_in_k_and_between_theorems(eps: float, dlt: float, k: int, delta_g: float) -> None:
    b_k = optimal.epsilon(optimal.homogeneous(eps, dlt, k), delta_g)
    b_k1 = optimal.epsilon(optimal.homogeneous(eps, dlt, k + 1), delta_g)
    assert b_k.lower <= b_k1.upper
    # optimal ≤ KOV (Thm III.4) ≤ basic (Thm III.1) at the δ each of them certifies.
    kov_eps, kov_delta = bounds.kov_bound(eps, dlt, k, delta_g)
    opt = optimal.epsilon(optimal.homogeneous(eps, dlt, k), kov_delta)
    assert opt.lower <= kov_eps * (1 + EXACT_RTOL)
    basic_eps, basic_delta = bounds.basic(eps, dlt, k)
    assert kov_eps <= basic_eps
    assert optimal.epsilon(optimal.homogeneous(eps, dlt, k), basic_delta).lower <= basic_eps * (1 + EXACT_RTOL)


@settings(max_examples=25, deadline=None)
@given(
    mechs=st.lists(st.tuples(eps_st, small_delta), min_size=1, max_size=8),
    bump=st.floats(0.0, 0.5),
    which=st.integers(0, 7),
    delta_g=target_delta,
)
def test_monotone_in_each_epsilon_and_delta(mechs: list[tuple[float, float]], bump: float, which: int, delta_g: float) -> None:
    i = which % len(mechs)
    base = optimal.epsilon(mechs, delta_g)
    more_eps = list(mechs)
    more_eps[i] = (mechs[i][0] + bump, mechs[i][1])
    more_delta = list(mechs)
    more_delta[i] = (mechs[i][0], min(1.0, mechs[i][1] + bump * 1e-3))
    assert base.lower <= optimal.epsilon(more_eps, delta_g).upper
    assert base.lower <= optimal.epsilon(more_delta, delta_g).upper
    d0 = optimal.delta(mechs, 0.3)
    assert d0.lower <= optimal.delta(more_eps, 0.3).upper


@settings(max_examples=20, deadline=None)
@given(eps=st.floats(0.01, 1.0), dlt=small_delta, k=st.integers(1, 40), delta_g=target_delta)
def test_homogeneous_equals_heterogeneous_path(eps: float, dlt: float, k: int, delta_g: float) -> None:
    """The binomial closed form and the brute-force / lattice paths agree on equal entries."""
    hom = optimal.epsilon(optimal.homogeneous(eps, dlt, k), delta_g)
    # A tiny second value forces the heterogeneous path; monotonicity brackets the homogeneous answer.
    het_hi = optimal.epsilon([(eps, dlt)] * k + [(1e-9, 0.0)], delta_g, method="grid", tolerance=OPTIMAL_GRID_TOLERANCE)
    assert hom.lower <= het_hi.upper
    assert het_hi.lower <= hom.upper + OPTIMAL_GRID_TOLERANCE


@settings(max_examples=20, deadline=None)
@given(a=st.lists(st.integers(1, 5), min_size=2, max_size=10), delta_g=st.floats(1e-6, 0.1))
def test_grid_bracket_contains_brute_force(a: list[int], delta_g: float) -> None:
    mechs = [(0.07 * ai, 0.0) for ai in a]
    exact = optimal.epsilon(mechs, delta_g)
    grid = optimal.epsilon(mechs, delta_g, method="grid", tolerance=OPTIMAL_GRID_TOLERANCE)
    assert overlap(grid, exact)


# ---------------------------------------------------------------------------------------------
# Validation.
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mechs", "target", "match"),
    [
        ([(-0.1, 0.0)], 1e-3, "epsilon"),
        ([(0.1, 1.5)], 1e-3, "delta"),
        ([(float("nan"), 0.0)], 1e-3, "epsilon"),
        ([(0.1, float("nan"))], 1e-3, "delta"),
        ([(float("inf"), 0.0)], 1e-3, "epsilon"),
        ([], 1e-3, "mechanisms"),
        ([(0.1,)], 1e-3, "mechanisms"),
        ("abc", 1e-3, "mechanisms"),
        ([(True, 0.0)], 1e-3, "bool"),
        ([0.1, 0.2], 1e-3, "mechanisms"),
        ([(0.1, 0.0)], -0.1, "delta"),
        ([(0.1, 0.0)], float("nan"), "delta"),
    ],
)
def test_bad_inputs_raise(mechs: object, target: float, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        optimal.epsilon(mechs, target)  # type: ignore[arg-type]


def test_bad_keywords_raise() -> None:
    with pytest.raises(ValueError, match="method"):
        optimal.epsilon([(0.1, 0.0)], 1e-3, method="fast")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="tolerance"):
        optimal.epsilon([(0.1, 0.0)], 1e-3, tolerance=0.0)
    with pytest.raises(ValueError, match="max_points"):
        optimal.epsilon([(0.1, 0.0)], 1e-3, max_points=2.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="epsilon"):
        optimal.delta([(0.1, 0.0)], -1.0)
    with pytest.raises(ValueError, match="mv"):
        optimal.delta([(0.1, 0.0)], 1.0, method="mv")
    with pytest.raises(ValueError, match="k"):
        optimal.homogeneous(0.1, 0.0, 0)
    with pytest.raises(ValueError, match="k"):
        optimal.homogeneous(0.1, 0.0, 2.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="k"):
        optimal.homogeneous(0.1, 0.0, True)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="exact"):
        optimal.epsilon([(0.01 * math.sqrt(i + 2), 0.0) for i in range(40)], 1e-3, method="exact")


def test_windowed_lattice_dp_matches_direct_convolution() -> None:
    """400 mechanisms on the lattice 0.01·ℤ: the tilted, windowed FFT tree vs a plain float64 convolution
    (``lattice_hockey_stick_float``)."""
    a = [1 + (i * 37) % 10 for i in range(400)]
    unit = 0.01
    big_d = lattice_hockey_stick_float(a, unit)
    for delta_g in (1e-4, 1e-8):
        lo, hi = 0.0, sum(a) * unit
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            lo, hi = (lo, mid) if big_d(mid) <= delta_g else (mid, hi)
        b = optimal.epsilon([(ai * unit, 0.0) for ai in a], delta_g, method="exact")
        assert b.lower <= hi * (1 + METHOD_RTOL) and lo * (1 - METHOD_RTOL) <= b.upper
        assert b.width <= OPTIMAL_LATTICE_RTOL * hi
    d = optimal.delta([(ai * unit, 0.0) for ai in a], 2.0, method="exact")
    assert d.lower <= big_d(2.0) * (1 + METHOD_RTOL) and big_d(2.0) * (1 - METHOD_RTOL) <= d.upper


def test_million_copies_bracket_vs_mpmath() -> None:
    """k = 10^6 copies of (0.01, 0) at δ_g = 1e-6: D(lower) > δ_g ≥ D(upper) at 40 digits (MV Thm 1.4).

    The tail sum starts at ℓ0 = ⌊(ε_g/ε + k)/2⌋ + 1 with C(k, ℓ)(1 + e^ε)^{−k} from ``loggamma`` and is
    continued by the ratio (k − ℓ)/(ℓ + 1) until the terms are 1e-30 of the sum.
    """
    k, delta_g = 10**6, 1e-6
    b = optimal.epsilon(optimal.homogeneous(0.01, 0.0, k), delta_g)
    assert b.width <= OPTIMAL_LARGE_K_RTOL * b.upper

    big_d = mv_homogeneous_sum_large_k
    assert big_d("0.01", k, b.lower) > delta_g >= big_d("0.01", k, b.upper)


@pytest.mark.parametrize(("eps", "k", "delta_g"), [(8.0, 200, 1e-6), (1.0, 10_000, 1e-6), (2.0, 2000, 0.016)])
def test_epsilon_beyond_float_exponent_range_is_finite_and_exact(eps: float, k: int, delta_g: float) -> None:
    """Answers ε_g > 709 (e^{−ε_g} underflows in the suffix sums B_j) stay exact: D(lower) ≥ δ_g ≥ D(upper)."""
    b = optimal.epsilon(optimal.homogeneous(eps, 0.0, k), delta_g)
    assert math.isfinite(b.upper)
    assert b.width <= EXACT_RTOL * b.upper
    assert mv_homogeneous_sum(eps, k, b.lower) >= delta_g >= mv_homogeneous_sum(eps, k, b.upper)
    if k <= 1000:  # the lattice DP (unequal ε_i) goes through the same suffix sums
        het = optimal.epsilon([(eps, 0.0)] * k + [(eps / 2, 0.0)] * 20, delta_g)
        assert math.isfinite(het.upper)
        assert het.width <= EXACT_RTOL * het.upper


@pytest.mark.parametrize("mechanisms", [[(1.93, 0.037)], [(0.5, 0.0), (0.5, 0.5)], [(0.0, 7.9e-6)]])
def test_delta_grid_on_equal_or_zero_epsilons(mechanisms: list[tuple[float, float]]) -> None:
    """method='grid' on equal (or no non-zero) ε_i uses the exact homogeneous form, as documented."""
    for eps_g in (0.0, 0.3):
        assert optimal.delta(mechanisms, eps_g, method="grid") == optimal.delta(mechanisms, eps_g)


@pytest.mark.parametrize(("mechanisms", "delta_g"), [([(0.5, 0.0)], 0.0), ([(0.5, 0.0), (0.3, 0.0)], 1e-300), ([(1.0, 0.5)], 0.5)])
def test_mv_at_the_delta_floor_is_finite(mechanisms: list[tuple[float, float]], delta_g: float) -> None:
    """δ_g at (or within 1e-300 of) the floor: the truth is ≈ Σε_i, not 'no finite ε' (MV Thm 1.7 search)."""
    b = optimal.epsilon(mechanisms, delta_g, method="mv", tolerance=OPTIMAL_MV_ETA)
    truth = optimal.epsilon(mechanisms, delta_g)
    assert b.lower <= truth.lower and truth.upper <= b.upper

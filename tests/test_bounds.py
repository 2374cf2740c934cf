"""Classic composition theorems: formulas vs mpmath, relations between them, validation."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import SupportsFloat

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optcomp import bounds, optimal
from tests._references import (
    classic_closed_forms,
    decimal,
    kov_corollary_v1,
    lower_within_ulps,
    total_variation_bound,
    upper_within_ulps,
)
from tests.tolerances import EXACT_RTOL, ROUND_TRIP_RTOL


def close(a: float, b: SupportsFloat) -> bool:
    return abs(a - float(b)) <= EXACT_RTOL * abs(float(b))


def test_basic_forms() -> None:
    assert bounds.basic(0.1, 1e-5, 30) == (pytest.approx(3.0, rel=EXACT_RTOL), pytest.approx(3e-4, rel=EXACT_RTOL))
    eps, dlt = bounds.basic_heterogeneous([(0.1, 1e-5), (0.2, 0.0), (0.3, 2e-5)])
    assert close(eps, decimal("0.6")) and close(dlt, decimal("3e-5"))
    assert bounds.basic(1.0, 0.5, 3)[1] == 1.0


@pytest.mark.parametrize(("eps", "k", "slack"), [(0.1, 1000, 1e-6), (0.01, 10**6, 1e-9), (1.0, 5, 0.5)])
def test_advanced_forms_vs_mpmath(eps: float, k: int, slack: float) -> None:
    ref = classic_closed_forms(eps, 1e-9, k, slack)
    assert close(bounds.advanced_drv(eps, 1e-9, k, slack)[0], ref["drv"])
    assert close(bounds.advanced_lecture_notes(eps, 1e-9, k, slack)[0], ref["notes"])
    assert bounds.advanced_drv(eps, 1e-9, k, slack)[1] == pytest.approx(k * 1e-9 + slack, rel=EXACT_RTOL)
    # The lecture-notes drift is ε·tanh(ε/2) ≤ ε(e^ε − 1): never larger than the DRV form.
    assert bounds.advanced_lecture_notes(eps, 0.0, k, slack)[0] <= bounds.advanced_drv(eps, 0.0, k, slack)[0]


@pytest.mark.parametrize(("eps", "dlt", "k", "slack"), [(0.1, 0.001, 30, 1e-3), (0.01, 0.0, 10**4, 1e-6), (2.0, 0.0, 3, 1e-3)])
def test_kov_bound_vs_mpmath(eps: float, dlt: float, k: int, slack: float) -> None:
    ref = classic_closed_forms(eps, dlt, k, slack)
    got_eps, got_delta = bounds.kov_bound(eps, dlt, k, slack)
    assert close(got_eps, ref["kov"])
    assert close(got_delta, ref["kov_delta"])
    # Thm III.5 with equal entries is Thm III.4.
    het_eps, het_delta = bounds.kov_bound_heterogeneous([(eps, dlt)] * min(k, 50), slack)
    hom_eps, hom_delta = bounds.kov_bound(eps, dlt, min(k, 50), slack)
    assert het_eps == pytest.approx(hom_eps, rel=EXACT_RTOL) and het_delta == pytest.approx(hom_delta, rel=EXACT_RTOL)


def test_kov_slack_zero_is_basic() -> None:
    assert bounds.kov_bound(0.3, 0.0, 10, 0.0)[0] == pytest.approx(3.0, rel=EXACT_RTOL)
    assert bounds.kov_bound_heterogeneous([(0.3, 0.0), (0.2, 0.0)], 0.0)[0] == pytest.approx(0.5, rel=EXACT_RTOL)


def test_kov_per_query_budget_is_sufficient() -> None:
    """KOV Cor V.1: per-query (ε0, δ0) gives (ε, δ) after k-fold composition — checked with OptComp."""
    for eps, dlt, k in [(1.0, 1e-5, 100), (0.5, 1e-6, 1000), (2.0, 1e-3, 10)]:
        e0, d0 = bounds.kov_per_query_budget(eps, dlt, k)
        assert close(e0, kov_corollary_v1(eps, dlt, k)[0])
        assert d0 == pytest.approx(dlt / (2 * k), rel=EXACT_RTOL)
        assert optimal.epsilon(optimal.homogeneous(e0, d0, k), dlt).upper <= eps


def test_tv_bound_remark_a1() -> None:
    assert close(bounds.tv_bound(1.0, 0.1), total_variation_bound(1.0, 0.1))
    assert bounds.tv_bound(0.0, 0.0) == 0.0 and bounds.tv_bound(math.inf, 0.0) == 1.0


@settings(max_examples=40, deadline=None)
@given(eps=st.floats(0.0, 3.0), dlt=st.floats(0.0, 1e-3), k=st.integers(1, 10**5), slack=st.floats(1e-12, 1.0))
def test_kov_never_above_basic_and_monotone_in_k(eps: float, dlt: float, k: int, slack: float) -> None:
    kov = bounds.kov_bound(eps, dlt, k, slack)[0]
    assert kov <= bounds.basic(eps, dlt, k)[0] * (1 + EXACT_RTOL)
    assert kov <= bounds.kov_bound(eps, dlt, k + 1, slack)[0] * (1 + EXACT_RTOL)
    assert bounds.advanced_lecture_notes(eps, dlt, k, slack)[0] <= bounds.advanced_drv(eps, dlt, k, slack)[0] * (
        1 + EXACT_RTOL
    )


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: bounds.basic(-0.1, 0.0, 3), "epsilon"),
        (lambda: bounds.basic(float("nan"), 0.0, 3), "epsilon"),
        (lambda: bounds.basic(0.1, 1.5, 3), "delta"),
        (lambda: bounds.basic(0.1, 0.0, 0), "k"),
        (lambda: bounds.basic(0.1, 0.0, 2.5), "k"),
        (lambda: bounds.basic(0.1, 0.0, True), "k"),
        (lambda: bounds.advanced_drv(0.1, 0.0, 3, 0.0), "delta_slack"),
        (lambda: bounds.advanced_lecture_notes(0.1, 0.0, 3, float("nan")), "delta_slack"),
        (lambda: bounds.kov_bound(0.1, -1e-3, 3, 0.1), "delta"),
        (lambda: bounds.kov_bound_heterogeneous([], 0.1), "mechanisms"),
        (lambda: bounds.kov_bound_heterogeneous([(0.1, 0.0, 1.0)], 0.1), "mechanisms"),
        (lambda: bounds.basic_heterogeneous([(0.1, 2.0)]), "delta"),
        (lambda: bounds.kov_per_query_budget(0.0, 1e-5, 3), "epsilon"),
        (lambda: bounds.kov_per_query_budget(1.0, 0.0, 3), "delta"),
        (lambda: bounds.tv_bound(1.0, float("nan")), "delta"),
    ],
)
def test_bad_inputs_raise(call: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()  # type: ignore[operator]


@settings(max_examples=40, deadline=None)
@given(
    mechs=st.lists(st.tuples(st.floats(0.001, 1.0), st.floats(0.0, 1e-4)), min_size=1, max_size=30),
    target=st.floats(1e-3, 0.5),
)
def test_compare_round_trip(mechs: list[tuple[float, float]], target: float) -> None:
    """compare_delta inverts compare_epsilon: each theorem's ε at δ_g certifies δ ≤ δ_g again."""
    eps_of = bounds.compare_epsilon(mechs, target)
    for name, eps in eps_of.items():
        if math.isfinite(eps):
            assert bounds.compare_delta(mechs, eps)[name] <= target * (1 + ROUND_TRIP_RTOL)
    # Optimal never exceeds any of them (KOV Thm III.3/III.5; MV Thm 1.5).
    assert optimal.epsilon(mechs, target).lower <= min(eps_of.values()) * (1 + EXACT_RTOL)


# Directed rounding (issue 15): every closed form is rounded to its safe side and within a few tens of
# ulps of 50-digit mpmath, including the cancelling corners (tiny ε, δ near 0 and 1, huge k).
_CLOSED_FORM_GRID = [
    (eps, dlt, k, slack)
    for eps in (1e-8, 1e-3, 0.1, 1.0, 5.0)
    for dlt in (0.0, 1e-12, 1e-3)
    for k in (1, 10, 10**6)
    for slack in (1e-300, 1e-6, 0.5)
]
_ULPS = 64 * 2.0**-53


@pytest.mark.parametrize(("eps", "dlt", "k", "slack"), _CLOSED_FORM_GRID)
def test_closed_forms_directed_against_mpmath(eps: float, dlt: float, k: int, slack: float) -> None:
    ref = classic_closed_forms(eps, dlt, k, slack)

    def up_close(got: float, truth: SupportsFloat) -> None:
        assert upper_within_ulps(got, truth, _ULPS)

    up_close(bounds.advanced_drv(eps, dlt, k, slack)[0], ref["drv"])
    up_close(bounds.advanced_lecture_notes(eps, dlt, k, slack)[0], ref["notes"])
    kov_eps, kov_delta = bounds.kov_bound(eps, dlt, k, slack)
    up_close(kov_eps, ref["kov"])
    up_close(kov_delta, ref["kov_delta"])
    up_close(bounds.tv_bound(eps, dlt), ref["tv"])
    if dlt > 0:
        e0, d0 = bounds.kov_per_query_budget(eps, dlt, k)
        assert lower_within_ulps(e0, ref["per_query"], _ULPS)
        assert Fraction(d0) <= Fraction(dlt) / (2 * k)  # exact rationals

"""Soundness audit of the adaptive bounded-range engine (issue 34 items 1, 2) against the independent references
of ``tests/_references/br_audit.py``: achieved values of explicit adaptive strategy trees (the optimum is at least
these: the engine's upper end may never be below them) and a first-order lattice bracket built from monotonicity
alone (the optimum is at most its upper end: the engine's lower end may never be above it). Heterogeneous ε's,
the order of steps, mixes with Gaussian, Laplace and subsampled-Gaussian steps, extreme ε (1e-6, 20), δ near 0 and
1, and bad input. The long random hunts are marked ``slow``."""

from __future__ import annotations

import math

import numpy as np
import pytest

import optcomp as oc
from optcomp.adaptive import nonadaptive_delta
from optcomp.mechanisms import BoundedRange, Gaussian, GumbelTopK, Laplace, PoissonSubsampled
from tests._references.br_audit import (
    BR,
    LossLaw,
    adaptive_lower,
    fixed_cells,
    gaussian_law,
    laplace_law,
    monotone_bracket,
    subsampled_gaussian_law,
)
from tests._references.br_audit import nonadaptive_delta as nonadaptive_reference

#: Relative slack of the comparisons (the references are float64 sums of a few hundred non-negative terms).
_SLACK = 1e-12


def _br_reference(epsilons: list[float], x: float, cells: int, tree_cells: int) -> tuple[float, float]:
    """(achieved δ of a near-optimal strategy tree, upper end of the monotone bracket) at the lattice point x."""
    h = min(epsilons) / cells
    n0 = round(x / h)
    span = sum(math.ceil(e / h) for e in epsilons) + 3
    _, up = monotone_bracket([BR(e) for e in epsilons], h, [n0 * h], n0 - span, n0 + span)[0]
    return float(adaptive_lower(epsilons, n0 * h, cells=tree_cells)), up


def _mixed_reference(epsilons: list[float], position: int, laws: list[LossLaw], x: float, cells: int) -> tuple[
        float, float]:
    """The monotone bracket of BR steps with one fixed step at ``position`` (both directions: the larger)."""
    h = min(epsilons) / cells
    n0 = round(x / h)
    lo = up = 0.0
    for law in laws:
        fixed = fixed_cells(law, h, tail=1e-30)
        steps: list[BR | object] = [BR(e) for e in epsilons]
        steps.insert(position, fixed)
        span = sum(math.ceil(e / h) for e in epsilons) + (fixed.j1 - fixed.j0) + 5 + max(abs(fixed.j0), abs(fixed.j1))
        l_n, u_n = monotone_bracket(steps, h, [n0 * h], n0 - span, n0 + span)[0]  # type: ignore[arg-type]
        lo, up = max(lo, l_n), max(up, u_n)
    return lo, up


def _assert_inside(b: oc.Bound, lower_truth: float, upper_truth: float) -> None:
    assert b.lower <= b.upper
    assert b.upper >= lower_truth * (1 - _SLACK), f"upper end {b.upper!r} below an achieved δ {lower_truth!r}"
    assert b.lower <= upper_truth * (1 + _SLACK), f"lower end {b.lower!r} above a certain δ bound {upper_truth!r}"


# -- BR steps alone, heterogeneous ε --------------------------------------------------------------------------
@pytest.mark.parametrize(("epsilons", "x"), [
    ([0.5, 0.5], 0.25),
    ([1.0, 0.3, 0.7], 0.4),
    ([0.05, 0.05, 0.05], 0.02),
    ([3.0, 3.0], 2.0),
    ([0.7, 0.07], 0.0),
    ([0.2, 2.0], 1.9),
    ([0.1, 0.15, 0.25], 0.2),  # the lattice unit 0.05 (near multiples)
    ([1 / 3, 0.5], 0.4),  # the lattice unit 1/6
])
def test_br_steps_inside_the_references(epsilons: list[float], x: float) -> None:
    lo, up = _br_reference(epsilons, x, cells=100, tree_cells=60)
    h = min(epsilons) / 100
    b = oc.compose(*[(BoundedRange(e), 1) for e in epsilons]).delta(round(x / h) * h)
    _assert_inside(b, lo, up)


@pytest.mark.parametrize(("epsilons", "x"), [([1e-6, 1e-6, 1e-6], 1e-6), ([1e-6], 2e-7), ([20.0, 20.0], 25.0),
                                             ([20.0], 5.0), ([20.0, 2.0], 19.0)])
def test_extreme_epsilons_inside_the_references(epsilons: list[float], x: float) -> None:
    lo, up = _br_reference(epsilons, x, cells=100, tree_cells=40)
    h = min(epsilons) / 100
    b = oc.compose(*[(BoundedRange(e), 1) for e in epsilons]).delta(round(x / h) * h)
    _assert_inside(b, lo, up)


@pytest.mark.parametrize(("epsilons", "delta"), [([20.0, 20.0, 20.0], 1e-6), ([1e-6, 1e-6, 1e-6], 1e-7),
                                                 ([0.5, 0.2, 0.9], 1e-3), ([0.5, 0.2, 0.9], 1e-6)])
def test_epsilon_queries_against_the_references(epsilons: list[float], delta: float) -> None:
    """ε(δ): the true δ at the upper end is ≤ δ (an achieved δ above it would refute it) and the true δ at the
    lower end is ≥ δ (a certain upper δ below it would refute it)."""
    b = oc.compose(*[(BoundedRange(e), 1) for e in epsilons]).epsilon(delta)
    assert 0.0 <= b.lower <= b.upper <= sum(epsilons) * (1 + 1e-15)
    h = min(epsilons) / 100
    if b.upper > 0.0:
        achieved = float(adaptive_lower(epsilons, math.ceil(b.upper / h) * h, cells=40))  # δ non-increasing
        assert achieved <= delta * (1 + _SLACK)
    if b.lower > 0.0:
        n0 = math.floor(b.lower / h)
        span = sum(math.ceil(e / h) for e in epsilons) + 3
        _, up = monotone_bracket([BR(e) for e in epsilons], h, [n0 * h], n0 - span, n0 + span)[0]
        assert up >= delta * (1 - _SLACK)


def test_order_of_heterogeneous_steps_matters_and_both_orders_are_inside() -> None:
    """The same multiset of ε's in two orders: each bracket holds its own references."""
    for eps in ([2.0, 0.2, 0.2], [0.2, 0.2, 2.0]):
        lo, up = _br_reference(eps, 1.0, cells=50, tree_cells=40)
        _assert_inside(oc.compose(*[(BoundedRange(e), 1) for e in eps]).delta(1.0), lo, up)


# -- mixes with fixed steps, in the order given ----------------------------------------------------------------
@pytest.mark.parametrize("position", [0, 1, 2])
def test_laplace_step_anywhere_among_br_steps(position: int) -> None:
    eps, x = [0.3, 1.0], 1.2
    items: list[object] = [BoundedRange(e) for e in eps]
    items.insert(position, Laplace(1.0))
    lo, up = _mixed_reference(eps, position, [laplace_law(1.0)], x, cells=60)
    _assert_inside(oc.compose(*items).delta(x), lo, up)


def test_laplace_first_is_worth_more_than_laplace_last() -> None:
    """Cesar–Rogers: a fixed step before a BR step helps the analyst; both certified brackets are consistent
    with that and the references tell the orders apart."""
    first = oc.compose(Laplace(1.0), BoundedRange(0.3), BoundedRange(1.0)).delta(1.2)
    last = oc.compose(BoundedRange(0.3), BoundedRange(1.0), Laplace(1.0)).delta(1.2)
    assert first.upper >= last.lower


@pytest.mark.parametrize("position", [0, 1])
def test_gaussian_step_before_or_after(position: int) -> None:
    eps = [0.5]
    items: list[object] = [BoundedRange(0.5)]
    items.insert(position, Gaussian(1.0))
    lo, up = _mixed_reference(eps, position, [gaussian_law(1.0)], 1.0, cells=40)
    _assert_inside(oc.compose(*items).delta(1.0), lo, up)


# -- δ near 0 and 1, far ε, subnormal δ (regressions) -----------------------------------------------------------
def test_subnormal_delta_is_answered() -> None:
    """ε(5e-324) used to overflow (1/δ = inf in the window placement)."""
    b = oc.compose((BoundedRange(0.1), 10)).epsilon(5e-324)
    assert 0.9 < b.lower <= b.upper <= 1.0 + 1e-15
    assert oc.compose((BoundedRange(0.1), 10)).epsilon(1e-300).upper <= 1.0 + 1e-15


def test_delta_far_beyond_the_largest_loss_is_zero() -> None:
    """δ(1e300) used to overflow a lattice index; at and beyond Σ ε_j it is exactly 0, and with an unbounded
    fixed loss the query is read at a cap far in the tail (δ non-increasing)."""
    c = oc.compose((BoundedRange(0.1), 10))
    assert c.delta(1e300) == oc.Bound(0.0, 0.0)
    assert c.delta(1.5) == oc.Bound(0.0, 0.0)
    lo, hi = c.delta_curve([0.5, 1e300])
    assert hi[1] == 0.0 and 0.0 < lo[0] <= hi[0]
    mixed = oc.compose(BoundedRange(0.5), Gaussian(1.0))
    far = mixed.delta(1e300)
    assert far.lower == 0.0 and far.upper <= 1e-12  # the kernels' certified absolute error
    lo, hi = mixed.delta_curve([1.0, 1e300])
    assert hi[1] <= 1e-12 and 0.0 < lo[0] <= hi[0]
    assert hi[0] == pytest.approx(mixed.delta(1.0).upper, rel=1e-3)


def test_delta_near_one_and_zero() -> None:
    c = oc.compose((BoundedRange(0.3), 3))
    assert c.epsilon(1.0 - 1e-12) == oc.Bound(0.0, 0.0)
    lo, up = _br_reference([0.3, 0.3, 0.3], 0.0, cells=60, tree_cells=60)
    _assert_inside(c.delta(0.0), lo, up)
    near_top = c.delta(0.89)  # just below Σ ε = 0.9: a tiny δ, still bracketed
    assert 0.0 <= near_top.lower <= near_top.upper < 1e-3


# -- bad input -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("build", "name"), [
    (lambda: BoundedRange(0.0), "epsilon"),
    (lambda: BoundedRange(-0.1), "epsilon"),
    (lambda: BoundedRange(math.inf), "epsilon"),
    (lambda: BoundedRange(math.nan), "epsilon"),
    (lambda: oc.ExponentialMechanism(501.0), "epsilon"),
    (lambda: GumbelTopK(0.1, 0), "k"),
    (lambda: GumbelTopK(0.1, 2.5), "k"),  # type: ignore[arg-type]
    (lambda: oc.compose((BoundedRange(0.1), 2.5)), "count"),
    (lambda: oc.compose((BoundedRange(0.1), 3)).epsilon(-1e-9), "delta"),
    (lambda: oc.compose((BoundedRange(0.1), 3)).epsilon(math.nan), "delta"),
    (lambda: oc.compose((BoundedRange(0.1), 3)).delta(-1.0), "epsilon"),
    (lambda: oc.compose((BoundedRange(0.1), 3)).delta(math.nan), "epsilon"),
    (lambda: oc.compose(BoundedRange(0.1), PoissonSubsampled(Gaussian(1.0), sampling_rate=1.5)), "sampling_rate"),
])
def test_bad_input_is_a_value_error_naming_the_parameter(build: object, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        build()  # type: ignore[operator]


# -- the non-adaptive route (adaptive/_nonadaptive.py, being rewritten on another branch) -------------------------
def test_nonadaptive_upper_end_in_the_deep_tail() -> None:
    """k = 100 steps of 0.1 at ε = 9: the pair t = argmax of a scan achieves δ ≈ 3.2e-101 > 0 (mpmath)."""
    truth = nonadaptive_reference(0.1, 100, 9.0)
    assert truth > 1e-102
    assert nonadaptive_delta(0.1, 100, 9.0).upper >= float(truth)


# -- the long hunts ----------------------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6))
def test_random_br_compositions_inside_the_references(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(6):
        k = int(rng.integers(1, 4))
        base = math.exp(rng.uniform(math.log(1e-3), math.log(8.0)))
        eps = [float(f"{base * math.exp(rng.uniform(0.0, math.log(20.0))):.6g}") for _ in range(k)]
        h = min(eps) / 150
        x = round(float(rng.uniform(0.0, 1.0)) * sum(eps) / h) * h
        lo, up = _br_reference(eps, x, cells=150, tree_cells=60)
        _assert_inside(oc.compose(*[(BoundedRange(e), 1) for e in eps]).delta(x), lo, up)


@pytest.mark.slow
@pytest.mark.parametrize("position", [0, 1])
def test_subsampled_gaussian_before_or_after(position: int) -> None:
    laws = [subsampled_gaussian_law(1.0, 0.2, True), subsampled_gaussian_law(1.0, 0.2, False)]
    items: list[object] = [BoundedRange(0.4)]
    items.insert(position, PoissonSubsampled(Gaussian(1.0), sampling_rate=0.2))
    lo, up = _mixed_reference([0.4], position, laws, 0.5, cells=100)
    _assert_inside(oc.compose(*items).delta(0.5), lo, up)


def test_rdp_standard_conversion_at_subnormal_delta() -> None:
    """Mironov's conversion used log(1/δ): inf at δ = 5e-324 (the account table showed 'inf (alpha=1.1)')."""
    from optcomp import rdp

    curve = rdp.compose((BoundedRange(0.1), 10))
    std = curve.epsilon(5e-324, conversion="standard")
    assert math.isfinite(std.value)
    assert std.value >= curve.epsilon(1e-300, conversion="standard").value


def test_heterogeneous_epsilons_on_a_common_unit_reach_the_width() -> None:
    """50 steps of 0.1 and 50 of 0.15 at δ = 1e-6: the lattice unit 0.05 makes both near multiples (before, the
    unit 0.1 left 0.15 half a cell off, the upper end converged at first order and the query ran out of memory
    after 17 s CPU); the bracket holds the non-adaptive value of 100 steps of 0.1 as a floor."""
    b = oc.compose((BoundedRange(0.1), 50), (BoundedRange(0.15), 50)).epsilon(1e-6)
    assert b.relative_width_above(0.01) <= 1e-4
    assert oc.compose((BoundedRange(0.1), 100)).epsilon(1e-6).upper < b.lower
    assert b.upper < oc.compose((BoundedRange(0.15), 100)).epsilon(1e-6).lower
    small = oc.compose(BoundedRange(0.5), BoundedRange(0.2), BoundedRange(0.9)).epsilon(1e-9)
    assert small.relative_width_above(0.01) <= 1e-4

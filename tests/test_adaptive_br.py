"""Compositions with bounded-range steps (optcomp.adaptive, routed by Composition._decide), against independent
references: Dong–Durfee–Rogers' non-adaptive closed form in 50-digit mpmath, the exhaustive adaptive strategy
tree (k ≤ 3), brute force over t-vectors (k ≤ 4), exact mixed trees with a fixed pair in either order, and
the orderings the theorems promise."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import optcomp as oc
from optcomp import optimal, rdp
from optcomp._items import adaptive_runs
from optcomp.adaptive import AdaptiveRecursion, nonadaptive_delta, nonadaptive_epsilon
from optcomp.adaptive._curve import Curve
from optcomp.adaptive._steps import br_lower, br_upper
from optcomp.mechanisms import BoundedRange, DiscretePair, Gaussian, Laplace, PoissonSubsampled, tight_zcdp
from tests._references.bounded_range import (
    adaptive_tree_optimum,
    fixed_then_br_delta,
    nonadaptive_closed_form,
    nonadaptive_grid_optimum,
    nonadaptive_scan,
    uniform_grids,
)
from tests.tolerances import BR_SCAN_RTOL, BR_TREE_RTOL

COARSE = oc.Accuracy(relative_width=1e-2)


# -- the non-adaptive closed form (DDR20 Thm 3) ----------------------------------------------------------------
@pytest.mark.parametrize(("e0", "k", "eps"), [(0.1, 10, 0.5), (0.5, 5, 1.0), (1.0, 3, 0.5), (0.1, 30, 1.0),
                                              (0.3, 20, 2.0), (2.0, 4, 0.1), (0.05, 60, 1.0)])
def test_nonadaptive_delta_brackets_the_mpmath_closed_form(e0: float, k: int, eps: float) -> None:
    truth = nonadaptive_closed_form(e0, k, eps)
    b = nonadaptive_delta(e0, k, eps)
    assert b.lower <= truth <= b.upper
    assert b.upper - b.lower <= 1e-9 * float(truth)


@pytest.mark.parametrize(("e0", "k", "eps"), [(0.1, 10, 0.5), (0.5, 5, 1.0), (0.3, 8, 0.7)])
def test_the_theorem_candidates_hold_the_maximum_over_t(e0: float, k: int, eps: float) -> None:
    """DDR20 Thm 3's claim (its upper end relies on it): no t on a fine grid beats the k + 1 candidates."""
    assert nonadaptive_scan(e0, k, eps, points=600) <= nonadaptive_closed_form(e0, k, eps) * (1 + 1e-20)


@pytest.mark.parametrize(("e0", "k", "eps"), [(3.0249467389857103, 100, 292.3907735248468),
                                              (0.859702458919245, 100, 83.93378277863476), (0.1, 100, 9.99),
                                              (0.02, 3, 0.0599), (1.0, 100, 0.0)])
def test_nonadaptive_delta_near_the_ends_brackets_the_closed_form(e0: float, k: int, eps: float) -> None:
    """ε near kε₀ (the only live terms are at the candidates' small i; a window placed at the mean of the
    binomial once missed them all and answered an upper end of 0) and ε = 0."""
    truth = nonadaptive_closed_form(e0, k, eps)
    b = nonadaptive_delta(e0, k, eps)
    assert 0 < truth
    assert b.lower <= truth <= b.upper
    assert b.upper - b.lower <= 1e-7 * float(truth)


@settings(max_examples=25, deadline=None)
@given(st.floats(1e-3, 3.0), st.integers(1, 40), st.floats(0.0, 1.0))
@example(1.8722096170797256, 3, 1.0)  # ε = float(kε₀) just below the exact kε₀: δ > 0 there
def test_nonadaptive_delta_brackets_the_closed_form_anywhere(e0: float, k: int, share: float) -> None:
    eps = share * k * e0
    truth = nonadaptive_closed_form(e0, k, eps)
    b = nonadaptive_delta(e0, k, eps)
    assert b.lower <= truth <= b.upper


def test_nonadaptive_epsilon_at_ten_thousand_steps_is_certified_at_both_ends() -> None:
    """The search starts at an uncertified float estimate; the ends it returns are evaluated points."""
    b = nonadaptive_epsilon(0.01, 10_000, 1e-6)
    assert nonadaptive_delta(0.01, 10_000, b.upper).upper <= 1e-6 < nonadaptive_delta(0.01, 10_000, b.lower).lower
    assert 0 < b.relative_width < 1e-8
    assert 2.2 < b.lower


def test_nonadaptive_epsilon_inverts_the_delta() -> None:
    b = nonadaptive_epsilon(0.1, 100, 1e-6)
    assert nonadaptive_delta(0.1, 100, b.upper).upper <= 1e-6 < nonadaptive_delta(0.1, 100, b.lower).lower
    assert b.relative_width < 1e-9
    assert nonadaptive_epsilon(0.1, 100, 0.0).upper == pytest.approx(10.0)
    top = nonadaptive_epsilon(1.8722096170797256, 3, 0.0).upper  # at least the exact kε₀, not its float below
    assert Fraction(top) >= 3 * Fraction(1.8722096170797256)
    assert nonadaptive_delta(1.8722096170797256, 3, top).upper == 0.0
    with pytest.raises(ValueError, match="count"):
        nonadaptive_delta(0.1, 0, 1.0)


# -- the adaptive recursion against exhaustive strategy trees --------------------------------------------------
def _lattice_pass(epsilons: list[float], x: float, cells: int) -> tuple[float, float, float]:
    r = AdaptiveRecursion(adaptive_runs([(BoundedRange(e), 1) for e in epsilons]), oc.Accuracy())
    p = r.run_pass(cells, x, x, 1e-30)
    return p.lower(x), p.upper(x), p.step


@pytest.mark.parametrize(("epsilons", "x", "cells"), [([0.5, 0.5], 0.25, 4), ([1.0, 0.5], 0.5, 2),
                                                      ([0.5, 0.5, 0.5], 0.5, 2), ([0.4, 0.8], 0.3, 4)])
def test_lattice_adversary_is_the_exhaustive_adaptive_tree(epsilons: list[float], x: float, cells: int) -> None:
    """On the lattice (x a lattice point, every ε a multiple of h) the lower end *is* the best adaptive strategy
    with t from the lattice's grid at every node — enumerated here strategy by strategy; the upper end is
    above every strategy, also on finer grids."""
    lower, upper, h = _lattice_pass(epsilons, x, cells)
    grids = uniform_grids(epsilons, [round(e / h) for e in epsilons])
    tree = adaptive_tree_optimum(epsilons, x, grids)
    assert lower == pytest.approx(float(tree), rel=BR_TREE_RTOL)
    assert lower <= tree * (1 + BR_TREE_RTOL)
    finer = uniform_grids(epsilons, [6] * len(epsilons)) if len(epsilons) == 2 else grids
    assert adaptive_tree_optimum(epsilons, x, finer) <= upper
    b = oc.compose(*[(BoundedRange(e), 1) for e in epsilons]).delta(x)
    assert b.lower <= b.upper and tree <= b.upper


@pytest.mark.parametrize(("epsilons", "x"), [([0.3, 0.3, 0.3, 0.3], 0.4), ([0.2, 0.5, 0.3, 0.1], 0.3)])
def test_brute_force_over_t_vectors_stays_below_the_upper_end(epsilons: list[float], x: float) -> None:
    """Steps fixed in advance (every t-vector on a grid, k = 4, heterogeneous ε): never above the adaptive upper
    end, and the adaptive lower end is at least the best of them less the grid's own gap."""
    grids = uniform_grids(epsilons, [5] * len(epsilons))
    brute = nonadaptive_grid_optimum(epsilons, x, grids)
    b = oc.compose(*[(BoundedRange(e), 1) for e in epsilons]).delta(x)
    assert brute <= b.upper
    assert b.lower >= brute * (1 - 1e-2)


@pytest.mark.parametrize("fixed_first", [True, False])
@pytest.mark.parametrize(("p", "q"), [((0.6, 0.3, 0.1), (0.2, 0.3, 0.5)), ((0.7, 0.3), (0.4, 0.6))])
@pytest.mark.parametrize("eps", [0.0, 0.3, 0.8])
def test_a_fixed_pair_and_a_br_step_in_either_order(p: tuple[float, ...], q: tuple[float, ...], eps: float,
                                                   fixed_first: bool) -> None:
    """The exact adaptive value (t chosen per history on a fine grid; both directions of the pair, as compose
    states δ for the pair and its swap) lies inside the bracket, in the order given."""
    fixed = DiscretePair(p, q)
    items = [fixed, BoundedRange(0.5)] if fixed_first else [BoundedRange(0.5), fixed]
    truth = max(fixed_then_br_delta(list(p), list(q), 0.5, eps, fixed_first, points=120),
                fixed_then_br_delta(list(q), list(p), 0.5, eps, fixed_first, points=120))
    b = oc.compose(*items).delta(eps)
    assert truth <= b.upper
    assert b.lower <= truth * (1 + 1e-5) + 1e-12


# -- the cell maximum of the upper end -------------------------------------------------------------------------
@settings(max_examples=8)
@given(st.lists(st.floats(0.05, 1.0), min_size=3, max_size=5), st.integers(2, 9), st.integers(0, 1000))
def test_br_upper_is_above_a_dense_scan_of_its_own_interpolant(weights: list[float], m: int, seed: int) -> None:
    """For a random convex curve (the hockey-stick curve of a random pair, exact at the lattice points), the
    certified upper end of a BR step is at least the supremum over a dense t-grid of the chord interpolant it
    bounds, and the lower end at most the supremum of the true objective (the scan holds the lattice points t = jh
    the lower end's adversary uses: without them a 321-point scan at m = 3 missed it by 1e-5 relative)."""
    rng = np.random.default_rng(seed)
    pw = np.array(weights) / np.sum(weights)
    qw = rng.dirichlet(np.ones(pw.size))
    h = 0.4 / m
    n = np.arange(-60, 61)
    x = n * h
    true = np.array([np.maximum(pw - np.exp(v) * qw, 0).sum() for v in x])
    curve = Curve(h, -60, true, true)
    up = br_upper(curve, m, -20, 20)
    low = br_lower(curve, m * h, -20, 20)
    ts = np.union1d(np.linspace(0.0, m * h, 321), np.arange(m + 1) * h)  # the lower end's t-grid included
    p_t = -np.expm1(ts - m * h) / -math.expm1(-m * h)
    for k, xn in list(enumerate(np.arange(-20, 21) * h))[::3]:
        scan = max(p_t[j] * curve.upper_at(xn - ts[j]) + (1 - p_t[j]) * curve.upper_at(xn - ts[j] + m * h)
                   for j in range(ts.size))
        assert up[k] >= scan * (1 - BR_SCAN_RTOL)
        exact = max(p_t[j] * np.maximum(pw - np.exp(xn - ts[j]) * qw, 0).sum()
                    + (1 - p_t[j]) * np.maximum(pw - np.exp(xn - ts[j] + m * h) * qw, 0).sum() for j in range(ts.size))
        assert low[k] <= exact * (1 + BR_SCAN_RTOL) + 1e-15


# -- the numbers, and the orderings ---------------------------------------------------------------------
def test_one_hundred_exponential_mechanisms_at_one_in_a_million() -> None:
    """Issue 34: 100 steps of ε₀ = 0.1 at δ = 1e-6 — ~4.77 pure, ~2.25 BR (adaptive), ~2.42 zCDP."""
    adaptive = oc.compose((oc.ExponentialMechanism(0.1), 100)).epsilon(1e-6)
    assert 2.2507 < adaptive.lower <= adaptive.upper < 2.2511
    assert adaptive.relative_width_above(0.01) <= 1e-4
    pure = optimal.epsilon([(0.1, 0.0)] * 100, 1e-6)
    assert pure.upper == pytest.approx(4.7746, abs=1e-4)
    rho = 100 * tight_zcdp(BoundedRange(0.1))
    zcdp = rdp.RdpCurve(np.array(rdp.DEFAULT_ORDERS), np.array(rdp.DEFAULT_ORDERS) * rho).epsilon(1e-6).value
    assert zcdp == pytest.approx(2.419, abs=1e-3)
    assert rdp.compose((BoundedRange(0.1), 100)).epsilon(1e-6).value == pytest.approx(2.400, abs=1e-3)
    assert nonadaptive_epsilon(0.1, 100, 1e-6).upper == pytest.approx(2.2460, abs=1e-4)


@settings(max_examples=8)
@given(st.floats(0.02, 1.0), st.integers(1, 40), st.floats(1e-9, 1e-2))
def test_non_adaptive_adaptive_rdp_zcdp_ordering(e0: float, k: int, delta: float) -> None:
    """non-adaptive ≤ adaptive ≤ (RDP curve) ≤ (zCDP), each converted the same way, and adaptive ≤ the pure-ε
    optimum (an ε-BR step is ε-DP)."""
    adaptive = oc.compose((BoundedRange(e0), k)).epsilon(delta, accuracy=COARSE)
    assert nonadaptive_epsilon(e0, k, delta).lower <= adaptive.upper
    curve = rdp.compose((BoundedRange(e0), k))
    orders = np.array(rdp.DEFAULT_ORDERS)
    zcdp = rdp.RdpCurve(orders, orders * k * tight_zcdp(BoundedRange(e0)))
    assert adaptive.lower <= curve.epsilon(delta).value <= zcdp.epsilon(delta).value
    assert adaptive.lower <= optimal.epsilon([(e0, 0.0)] * k, delta).upper


def test_zcdp_is_not_always_below_the_pure_optimum() -> None:
    """The design note's chain '… ≤ (zCDP route) ≤ pure-ε optimum' fails for few steps: one step of ε₀ = 1 is
    1-DP exactly, while its tight zCDP converts to more."""
    orders = np.array(rdp.DEFAULT_ORDERS)
    zcdp = rdp.RdpCurve(orders, orders * tight_zcdp(BoundedRange(1.0))).epsilon(1e-6).value
    assert zcdp > optimal.epsilon([(1.0, 0.0)], 1e-6).upper


# -- routing, order, queries ----------------------------------------------------------------------------------
def test_compositions_with_br_steps_keep_their_order() -> None:
    g, br = Gaussian(2.0), BoundedRange(0.1)
    c = oc.compose(br, g, (br, 2), g)
    assert c.engine() == "adaptive"
    assert c.items == ((br, 1), (g, 1), (br, 2), (g, 1))
    assert oc.compose((br, 2), br).items == ((br, 3),)
    assert c.self_compose(2).items == ((br, 1), (g, 1), (br, 2), (g, 1), (br, 1), (g, 1), (br, 2), (g, 1))
    assert oc.compose(br).compose(oc.compose(g)).items == ((br, 1), (g, 1))
    assert oc.compose(g, g).items == ((g, 2),)  # no BR step: pooled as before
    assert c.symmetric
    assert not oc.compose(br, PoissonSubsampled(g, sampling_rate=0.1)).symmetric
    with pytest.raises(ValueError, match="bounded-range"):
        c.pld()


def test_order_matters_under_adaptivity() -> None:
    """A fixed step run before a BR step gives the analyst more than one run after it (Cesar–Rogers): with the
    Laplace step first the certified lower end is above the upper end of the other order."""
    lap, br = Laplace(1.0), BoundedRange(1.0)
    first = oc.compose(lap, (br, 3)).delta(1.0)
    after = oc.compose((br, 3), lap).delta(1.0)
    assert first.lower > after.upper


def test_delta_decreases_and_epsilon_inverts_it() -> None:
    c = oc.compose((BoundedRange(0.2), 30), (Gaussian(3.0), 5))
    lo, hi = c.delta_curve([0.5, 1.0, 2.0, 3.0], accuracy=COARSE)
    assert np.all(np.diff(hi) <= 0) and np.all(lo <= hi)
    b = c.epsilon(1e-5, accuracy=COARSE)
    assert c.delta(b.upper, accuracy=COARSE).upper <= 1e-5 * (1 + 1e-2)
    assert c.delta(b.lower, accuracy=COARSE).lower >= 1e-5 * (1 - 1e-2) or b.lower == 0.0
    assert c.hockey_stick_curve([1.0, 2.0], accuracy=COARSE).upper.shape == (2,)


def test_deep_delta_and_the_trivial_ends() -> None:
    c = oc.compose((BoundedRange(0.2), 50))
    deep = c.epsilon(1e-12, accuracy=COARSE)
    assert 0 < deep.lower <= deep.upper < 10.0 and deep.relative_width_above(0.01) <= 1e-2
    zero = c.epsilon(0.0)  # ε(0) = Σ ε_j exactly (approached as every t_j → ε_j)
    assert Fraction(zero.lower) <= 50 * Fraction(0.2) <= Fraction(zero.upper)
    assert zero.upper <= math.nextafter(zero.lower, math.inf)
    assert c.epsilon(1.0) == oc.Bound(0.0, 0.0)
    assert oc.compose(BoundedRange(0.2), Gaussian(1.0)).epsilon(0.0).upper == math.inf


def test_grid_step_override_and_bad_input() -> None:
    c = oc.compose((BoundedRange(0.1), 20))
    b = c.epsilon(1e-6, accuracy=oc.Accuracy(grid_step=0.02))
    fine = c.epsilon(1e-6)
    assert b.lower <= fine.upper and fine.lower <= b.upper
    with pytest.raises(ValueError, match="delta"):
        c.epsilon(1.5)
    with pytest.raises(ValueError, match="epsilon"):
        c.delta(-1.0)
    with pytest.raises(ValueError, match="epsilon"):
        BoundedRange(float("nan"))


def test_mass_at_infinity_and_atoms_on_the_lattice() -> None:
    c = oc.compose(BoundedRange(0.5), oc.EpsilonDelta(0.5, delta=1e-3))
    assert c.epsilon(1e-4) == oc.Bound(math.inf, math.inf)  # δ(ε) ≥ P(L = +∞) = 1e-3 at every ε
    finite = c.epsilon(2e-3)
    assert finite.upper < math.inf and finite.relative_width_above(0.01) <= 1e-4
    # permute-and-flip steps of the same ε sit on the lattice: the width is reached as for BR steps alone
    mixed = oc.compose((BoundedRange(0.1), 20), (oc.PermuteAndFlip(0.1), 20)).epsilon(1e-6)
    assert mixed.relative_width_above(0.01) <= 1e-4
    alone = oc.compose((BoundedRange(0.1), 20)).epsilon(1e-6)
    assert alone.upper < mixed.lower

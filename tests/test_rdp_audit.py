"""An independent audit of the Rényi conversion (issue 35 item 1): every bracket against truths computed
another way.

The truth of a curve's conversion is the best **two-point** law (``tests/_references/rdp_binary.py``: any
pair's optimal set is a binary post-processing that meets the curve too), found by a float search of its
own and re-checked at 50 digits; its ε is a lower bound on the truth (the pair is a law with the curve), so
every upper end must be at least it, and the search is close to exact, so every lower end must be at most
it. Compositions: a run of the items is what the lower end must be attained by (basic composition bounds
the run's ε from above where the curve-known box is nearly silent).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import optcomp
from optcomp import rdp
from optcomp.mechanisms import Gaussian, Laplace, Renyi, ZeroConcentrated
from tests._references import (
    BinaryCurve,
    best_pair_delta,
    best_pair_epsilon,
    gdp_epsilon,
    laplace_pdf,
    pair_delta,
    pair_epsilon,
    pair_meets,
    renyi_divergence,
    zcdp_closed_form_epsilon,
)
from tests.tolerances import RENYI_BRACKET_RTOL

#: The reference pair's ε is a float search's: the lower end may exceed it by this relative amount.
REFERENCE_RTOL = 1e-9


def _cks_epsilon(orders: list[float], values: list[float], delta: float) -> float:
    """The closed form (Canonne–Kamath–Steinke Prop. 12) over finitely many orders, in plain floats with a
    relative margin: an upper bound on the ε of every law with that curve."""
    best = min(v + math.log1p(-1.0 / a) - (math.log(delta) + math.log(a)) / (a - 1.0) for a, v in zip(orders, values, strict=True))
    return best * (1.0 + 1e-12) + 1e-15


# -- compositions: the lower end must be a run's ---------------------------------------------------------


def test_a_nearly_silent_zcdp_box_beside_a_gaussian_has_the_gaussians_epsilon() -> None:
    """ZeroConcentrated(1e-6) ⊗ N(μ = 1): the box is (ε₁, 1e-9)-DP with ε₁ ≈ 0.0091 (CKS), so by basic
    composition the run is (ε_G(1e-5 − 1e-9) + ε₁, 1e-5)-DP, ε ≤ 4.387. The summed curve's worst law
    (ε ≥ 4.728) is not a run of these items: its ε is no lower end for them."""
    b = optcomp.compose(ZeroConcentrated(1e-6), Gaussian(1.0)).epsilon(1e-5)
    run_upper = float(gdp_epsilon(1.0, 1e-5 - 1e-9) + zcdp_closed_form_epsilon(1e-6, 1e-9))
    assert b.lower <= run_upper < b.upper
    assert b.lower >= float(gdp_epsilon(1.0, 1e-5)) * (1 - 1e-9)  # the Gaussian itself is a run


def test_a_nearly_silent_renyi_box_beside_a_laplace() -> None:
    """A Renyi box with tiny ε at α = 2, 8, 32 beside Laplace(b = 1): the same basic-composition bound."""
    orders, values = [2.0, 8.0, 32.0], [1e-7, 4e-7, 1.6e-6]
    b = optcomp.compose(Renyi(orders, values), Laplace(1.0)).epsilon(1e-6)
    eps1 = _cks_epsilon(orders, values, 1e-9)
    laplace_only = optcomp.compose(Laplace(1.0)).epsilon(1e-6 - 1e-9)
    assert b.lower <= laplace_only.upper + eps1


def test_one_box_alone_keeps_its_witness() -> None:
    """A single curve-known item (count 1) is its own worst run: the witness law stays the lower end."""
    b = optcomp.compose(ZeroConcentrated(0.5)).epsilon(1e-5)
    assert b.witness is not None and b.lower > float(gdp_epsilon(1.0, 1e-5))


# -- the optimal conversion against the two-point reference ---------------------------------------------


def _dpsgd_curve() -> tuple[list[float], list[float]]:
    orders = np.array(rdp.DEFAULT_ORDERS)
    return orders.tolist(), (1000 * rdp.poisson_subsampled_gaussian(0.8, 0.01, orders=orders)).tolist()


@pytest.mark.parametrize("delta", [1e-5, 1e-10, 1e-12])
def test_dpsgd_curve_bracket_holds_the_two_point_truth_and_is_narrow(delta: float) -> None:
    """The DP-SGD curve (σ = 0.8, q = 0.01, 1000 steps) at dp_accounting's orders: the bracket contains
    the best two-point law's ε and meets the default relative width down to δ = 1e-12."""
    orders, values = _dpsgd_curve()
    b = optcomp.compose(Renyi(orders, values)).epsilon(delta)
    curve = BinaryCurve(orders=tuple(orders), values=tuple(values))
    pair = best_pair_epsilon(curve, delta)
    assert pair_meets(curve, pair.p, pair.q)
    truth_below = float(pair_epsilon(pair.p, pair.q, delta))
    assert truth_below <= b.upper
    assert b.lower <= truth_below * (1 + REFERENCE_RTOL)
    assert b.relative_width_above(0.01) <= RENYI_BRACKET_RTOL


# -- the upper end against the two-point truth: zCDP, single and several orders, mixed compositions -------


def _assert_brackets_the_truth(b: object, curve: BinaryCurve, delta: float) -> None:
    """``b`` (an ε bracket at ``delta``) holds the best two-point law's ε and is within the default width of
    it: the pair is a law with the curve (re-checked at 50 digits), so the upper end must be at least its ε."""
    pair = best_pair_epsilon(curve, delta)
    assert pair_meets(curve, pair.p, pair.q)
    truth_below = float(pair_epsilon(pair.p, pair.q, delta))
    assert truth_below <= b.upper <= truth_below * (1 + RENYI_BRACKET_RTOL)  # type: ignore[attr-defined]
    assert b.lower <= truth_below * (1 + REFERENCE_RTOL)  # type: ignore[attr-defined]


#: ~10 s a case: two in the fast suite (one per δ), all eight in ``make test-slow``.
_ZCDP_FAST = {(0.1, 1e-5), (2.0, 1e-10)}


@pytest.mark.parametrize(("rho", "delta"), [
    pytest.param(rho, delta, id=f"{rho}-{delta}", marks=() if (rho, delta) in _ZCDP_FAST else pytest.mark.slow)
    for delta in (1e-5, 1e-10) for rho in (1e-3, 0.1, 2.0, 10.0)
])
def test_zcdp_epsilon_against_the_two_point_truth(rho: float, delta: float) -> None:
    b = optcomp.compose(ZeroConcentrated(rho)).epsilon(delta)
    _assert_brackets_the_truth(b, BinaryCurve(rho=rho), delta)
    assert b.upper <= float(zcdp_closed_form_epsilon(rho, delta)) * (1 + 1e-12)


_FINITE = {
    "one order (2)": ([2.0], [0.5]),
    "one order (1.5)": ([1.5], [0.05]),
    "one order (64)": ([64.0], [3.0]),
    "three orders, one unstated": ([2.0, 4.0, 8.0], [0.3, math.inf, 2.0]),
    "a curve no Gaussian has": ([1.5, 3.0, 10.0, 40.0], [0.02, 0.3, 1.0, 1.5]),
}


@pytest.mark.parametrize("delta", [1e-5, 1e-10])
@pytest.mark.parametrize("name", sorted(_FINITE))
def test_finite_curve_epsilon_against_the_two_point_truth(name: str, delta: float) -> None:
    orders, values = _FINITE[name]
    b = optcomp.compose(Renyi(orders, values)).epsilon(delta)
    _assert_brackets_the_truth(b, BinaryCurve(orders=tuple(orders), values=tuple(values)), delta)
    assert b.upper <= _cks_epsilon(orders, values, delta)


@pytest.mark.parametrize(("name", "epsilon"), [("one order (2)", 3.0), ("three orders, one unstated", 1.0),
                                               ("a curve no Gaussian has", 2.0)])
def test_finite_curve_delta_against_the_two_point_truth(name: str, epsilon: float) -> None:
    orders, values = _FINITE[name]
    curve = BinaryCurve(orders=tuple(orders), values=tuple(values))
    b = optcomp.compose(Renyi(orders, values)).delta(epsilon)
    pair = best_pair_delta(curve, epsilon)
    assert pair_meets(curve, pair.p, pair.q)
    truth_below = float(pair_delta(pair.p, pair.q, epsilon))
    assert truth_below <= b.upper <= truth_below * (1 + RENYI_BRACKET_RTOL)
    assert b.lower <= truth_below * (1 + REFERENCE_RTOL)


def _laplace_renyi(b: float, alpha: float) -> float:
    """D_α of Laplace(1, b) against Laplace(0, b) by quadrature (both directions equal), a hair low."""
    return float(renyi_divergence(laplace_pdf(1, b), laplace_pdf(0, b), alpha, -80, 80, [0.0, 1.0])) * (1 - 1e-9)


def test_a_renyi_box_with_a_laplace_and_gaussians_converts_the_summed_curve() -> None:
    """Renyi(α = 2, 4, 16) ⊗ Laplace(b = 2) ⊗ 3 × N(σ = 4): the upper end is the summed curve's optimal
    conversion (curve re-summed here: Laplace by quadrature, Gaussians α/(2σ²)); the lower end is a run's,
    at most the upper end and at least the run with the box silent (Laplace and Gaussians alone)."""
    orders, values = [2.0, 4.0, 16.0], [0.05, 0.12, 0.6]
    items = (Renyi(orders, values), Laplace(2.0), (Gaussian(4.0), 3))
    summed = tuple(v + _laplace_renyi(2.0, a) + 3 * a / (2 * 16.0) for a, v in zip(orders, values, strict=True))
    curve = BinaryCurve(orders=tuple(orders), values=summed)
    comp = optcomp.compose(*items)
    b, law = comp.epsilon(1e-6), comp.dominating().epsilon(1e-6)  # the run's bracket; the summed curve's
    assert b.witness is None and "a run of these items" in b.statement  # type: ignore[attr-defined]
    _assert_brackets_the_truth(law, curve, 1e-6)
    assert b.upper == law.upper
    silent_box = optcomp.compose(Laplace(2.0), (Gaussian(4.0), 3)).epsilon(1e-6)
    assert silent_box.lower <= b.lower <= b.upper


def test_zcdp_with_a_laplace_is_converted_at_the_default_orders() -> None:
    """ZeroConcentrated(0.1) ⊗ Laplace(b = 1): no Renyi item fixes the orders, so the summed curve is
    ρα + D_α(Laplace) at dp_accounting's orders; the upper end is its optimal conversion."""
    comp = optcomp.compose(ZeroConcentrated(0.1), Laplace(1.0))
    b, law = comp.epsilon(1e-5), comp.dominating().epsilon(1e-5)
    assert b.upper == law.upper
    orders = tuple(float(a) for a in rdp.DEFAULT_ORDERS)
    lap = rdp.laplace(1.0, orders=np.array(orders))
    for a, v in ((1.5, lap[4]), (16.0, lap[orders.index(16.0)])):  # the library's Laplace curve is the quadrature's
        assert v == pytest.approx(_laplace_renyi(1.0, a), rel=1e-7)
    summed = tuple(0.1 * a + float(v) * (1 - 1e-9) for a, v in zip(orders, lap, strict=True))
    _assert_brackets_the_truth(law, BinaryCurve(orders=orders, values=summed), 1e-5)
    laplace_alone = optcomp.compose(Laplace(1.0)).epsilon(1e-5)
    assert laplace_alone.lower <= b.lower <= b.upper


# -- the requested width, and curves at the float range's edge ----------------------------------------------


def test_the_requested_width_is_met_or_refused_with_the_bracket() -> None:
    """RenyiEngine honours Accuracy.relative_width like the other engines: met (1e-8 at ρ = 0.5), or
    GridTooLargeError carrying the certified bracket it reached (1e-12; ρ = 1000, whose optimal ε ≈ 1200
    puts the two-point law's q below the float range: closed form above, the Gaussian below)."""
    fine = optcomp.compose(ZeroConcentrated(0.5), accuracy=optcomp.Accuracy(relative_width=1e-8)).epsilon(1e-5)
    assert fine.relative_width_above(0.01) <= 1e-8
    for rho, width in ((0.5, 1e-12), (1000.0, 1e-4)):
        comp = optcomp.compose(ZeroConcentrated(rho), accuracy=optcomp.Accuracy(relative_width=width))
        with pytest.raises(optcomp.pld.GridTooLargeError, match="not reached by the Renyi conversion") as info:
            comp.epsilon(1e-5)
        got = info.value.bracket
        assert got is not None and got.lower <= got.upper <= float(zcdp_closed_form_epsilon(rho, 1e-5)) * (1 + 1e-12)
        assert got.lower >= float(gdp_epsilon(math.sqrt(2 * rho), 1e-5)) * (1 - 1e-9)
    loose = optcomp.compose(ZeroConcentrated(1000.0), accuracy=optcomp.Accuracy(relative_width=0.05)).epsilon(1e-5)
    assert loose.relative_width_above(0.01) <= 0.05


@pytest.mark.parametrize("rho", [1e6, 1e200])
def test_huge_rho_answers_a_delta_bracket_and_never_a_math_error(rho: float) -> None:
    comp = optcomp.compose(ZeroConcentrated(rho), accuracy=optcomp.Accuracy(relative_width=0.5))
    d = comp.delta(10.0)
    assert 0.0 <= d.lower <= d.upper == 1.0
    try:
        e = comp.epsilon(1e-5)
    except optcomp.pld.GridTooLargeError as err:  # ρ = 1e200: no lower end (μ overflows), [0, closed form]
        e = err.bracket
    assert e is not None and e.upper >= rho

"""Issue 35, item 1: ZeroConcentrated and Renyi items, the closed-form and the certified optimal conversion.

Truths: the CKS/Balle closed form minimised over every α at 50 digits (``tests/_references``); the Gaussian
with μ = √(2ρ), which is exactly ρ-zCDP (so the optimal conversion's δ is never below its δ); witness laws
re-verified here in mpmath at 50 digits (Rényi moments at a dense set of orders, both KLs, normalisation);
dual certificates re-evaluated in mpmath on a dense loss sweep and at random losses.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import optcomp
from optcomp import rdp
from optcomp.mechanisms import (
    EpsilonDelta,
    Gaussian,
    Laplace,
    NoPrivacyLossLawError,
    Renyi,
    ZeroConcentrated,
)
from optcomp.rdp import BinaryCertificate, ConversionBound, DualCertificate, StatedCurve
from tests._references import (
    binary_certificate_value,
    binary_lagrangian_grid_max,
    dual_certificate_gap,
    dual_certificate_value,
    finite_law_delta,
    gdp_delta,
    gdp_epsilon,
    law_kls,
    law_log_moments,
    zcdp_closed_form_delta,
    zcdp_closed_form_epsilon,
)
from tests.tolerances import EXACT_RTOL, RENYI_BRACKET_RTOL

RHOS = (0.1, 0.5, 1.0)
DELTAS = (1e-5, 1e-10)


# -- the closed-form route ------------------------------------------------------------------------------


@pytest.mark.parametrize("rho", RHOS)
@pytest.mark.parametrize("delta", DELTAS)
def test_closed_form_epsilon_reproduces_mpmath(rho: float, delta: float) -> None:
    truth = zcdp_closed_form_epsilon(rho, delta)
    value, _ = rdp.closed_form_epsilon(StatedCurve(rho), delta)
    assert value >= truth  # outward
    assert value == pytest.approx(float(truth), rel=EXACT_RTOL)


@pytest.mark.parametrize("rho", RHOS)
@pytest.mark.parametrize("delta", DELTAS)
def test_closed_form_delta_reproduces_mpmath(rho: float, delta: float) -> None:
    eps = float(zcdp_closed_form_epsilon(rho, delta))
    truth = zcdp_closed_form_delta(rho, eps)
    value, _ = rdp.closed_form_delta(StatedCurve(rho), eps)
    assert value >= truth
    assert value == pytest.approx(float(truth), rel=EXACT_RTOL)


def test_finite_closed_form_is_the_improved_conversion_at_the_orders() -> None:
    orders, values = [2.0, 4.0, 8.0], [0.5, 1.0, 2.0]
    conv = rdp.conversion(Renyi(orders, values))
    curve = rdp.RdpCurve(np.array(orders), np.array(values))
    assert conv.epsilon(1e-6).closed_form == curve.epsilon(1e-6, conversion="improved").value


# -- the optimal route: between the Gaussian and the closed form, narrow --------------------------------


@pytest.mark.parametrize("rho", RHOS)
@pytest.mark.parametrize("delta", DELTAS)
def test_zcdp_bracket_lies_between_gaussian_and_closed_form(rho: float, delta: float) -> None:
    b = optcomp.compose(ZeroConcentrated(rho)).epsilon(delta)
    assert isinstance(b, ConversionBound) and b.route in ("optimal", "closed_form")
    gaussian = gdp_epsilon(math.sqrt(2.0 * rho), delta)
    closed = zcdp_closed_form_epsilon(rho, delta)
    assert gaussian < b.lower <= b.upper
    assert b.upper <= closed * (1 + EXACT_RTOL)
    assert b.relative_width <= RENYI_BRACKET_RTOL
    assert b.witness is not None  # the lower end is a verified law, not the Gaussian fallback
    assert "any mechanism" in b.statement and "every order" in b.statement


@pytest.mark.parametrize("rho", RHOS)
def test_zcdp_delta_bracket_and_its_certificates(rho: float) -> None:
    eps = float(zcdp_closed_form_epsilon(rho, 1e-6))
    conv = rdp.conversion(ZeroConcentrated(rho))
    b = conv.delta(eps)
    assert float(gdp_delta(math.sqrt(2.0 * rho), eps)) < b.lower <= b.upper <= zcdp_closed_form_delta(rho, eps) * (1 + EXACT_RTOL)
    assert (b.upper - b.lower) / b.upper <= RENYI_BRACKET_RTOL * 10  # δ-relative: ε-relative × ε·α
    _check_witness_zcdp(b, rho, eps)
    assert b.optimal is not None
    found = conv.optimal_delta(eps)  # the linear program's own certificate, whichever route answered
    assert found is not None and found[2] is not None
    _check_certificate(found[2])
    assert b.optimal.upper <= found[2].bound  # the optimal route keeps the tighter certificate (two-point or LP)


def _check_witness_zcdp(b: ConversionBound, rho: float, eps: float) -> None:
    """The witness law re-verified independently: D_α ≤ αρ in both directions at dense orders, KLs ≤ ρ."""
    w = b.witness
    assert w is not None
    p, q = list(w.p_raw), list(w.q_raw)
    kl_pq, kl_qp = law_kls(p, q)
    assert kl_pq <= rho and kl_qp <= rho
    for alpha in np.concatenate([1.0 + np.geomspace(1e-6, 1.0, 40), np.geomspace(2.0, 4.0 * max(w.losses) / rho + 2, 200)]):
        fwd, rev = law_log_moments(p, q, float(alpha))
        cap = rho * alpha * (alpha - 1.0)
        assert fwd <= cap and rev <= cap, alpha
    assert finite_law_delta(p, q, eps) >= b.lower


def _check_certificate(cert: DualCertificate | BinaryCertificate) -> None:
    """(★) on a dense loss sweep and at random losses, and the bound it proves, in mpmath; a two-point
    certificate: its bound recomputed (L(x₀) and the tangent plane's rise) and L on a grid below it."""
    if isinstance(cert, BinaryCertificate):
        assert binary_certificate_value(cert) <= cert.bound * (1 + 1e-30)
        assert binary_lagrangian_grid_max(cert) <= cert.bound
        return
    rng = random.Random(35)
    sweep = [float(x) for x in np.linspace(-40.0, 40.0, 4001)]
    sweep += [rng.uniform(-60.0, 60.0) for _ in range(300)] + [cert.epsilon + rng.uniform(0.0, 1.0) for _ in range(100)]
    assert dual_certificate_gap(cert, sweep) >= 0
    assert dual_certificate_value(cert) <= cert.bound


def test_finite_curve_certificates_and_the_gaussian_with_that_curve() -> None:
    """A curve at 5 orders stated by N(1, 1): the Gaussian meets it, so its δ is below the upper end; the
    optimal route beats the closed form here, and both certificates re-verify."""
    orders = [2.0, 4.0, 8.0, 16.0, 32.0]
    conv = rdp.conversion(Renyi(orders, [a / 2.0 for a in orders]))
    b = conv.delta(5.0)
    assert b.route == "optimal" and b.upper < b.closed_form
    assert gdp_delta(1.0, 5.0) <= b.upper
    w = b.witness
    assert w is not None
    for alpha in orders:
        fwd, rev = law_log_moments(list(w.p_raw), list(w.q_raw), alpha)
        assert fwd <= (alpha - 1) * alpha / 2 and rev <= (alpha - 1) * alpha / 2
    assert b.certificate is not None
    _check_certificate(b.certificate)
    e = conv.epsilon(1e-5)
    assert e.route == "optimal" and e.upper < e.closed_form and gdp_epsilon(1.0, 1e-5) <= e.upper


# -- composition with other items -------------------------------------------------------------------------


def test_gaussians_compose_as_zcdp() -> None:
    mixed = optcomp.compose(ZeroConcentrated(0.25), (Gaussian(2.0), 2))  # 0.25 + 2 · 1/8
    alone = optcomp.compose(ZeroConcentrated(0.5))
    assert mixed.engine() == alone.engine() == "renyi"
    m, a = mixed.epsilon(1e-5), alone.epsilon(1e-5)
    assert (m.upper, m.optimal, m.route) == (a.upper, a.optimal, a.route)  # the same summed curve, converted
    # the lower end is a run's: the box may be N(0, 2) beside the two Gaussians (μ = 1 in all); the summed
    # curve's worst law is not shown to be a run of a box and two Gaussians
    assert m.lower == pytest.approx(float(gdp_epsilon(1.0, 1e-5)), rel=EXACT_RTOL) and m.witness is None
    assert "a run of these items" in m.statement


def test_composition_with_a_laplace_bounds_the_gaussian_run() -> None:
    """ρ-zCDP ⊗ Laplace: the Gaussian with μ = √(2ρ) is one such zCDP box, so the grid's certified lower δ of
    the Gaussian ⊗ Laplace run is below the conversion's upper end."""
    comp = optcomp.compose(ZeroConcentrated(0.125), Laplace(2.0))
    b = comp.epsilon(1e-5)
    run = optcomp.compose(Gaussian(2.0), Laplace(2.0)).epsilon(1e-5)
    assert run.lower <= b.upper
    assert "DEFAULT_ORDERS" in b.statement


def test_renyi_items_at_different_orders_compose_by_the_monotone_and_convex_bounds() -> None:
    a = Renyi([2.0, 8.0], [0.5, 2.0])
    b = Renyi([4.0], [1.0])
    curve = rdp.stated_curve([(a, 1), (b, 1)])
    assert curve.orders is not None and curve.values is not None
    assert curve.orders.tolist() == [2.0, 4.0]  # 8 dropped: b states nothing above 4
    chord = ((8.0 - 4.0) * 1.0 * 0.5 + (4.0 - 2.0) * 7.0 * 2.0) / (6.0 * 3.0)  # a at α = 4 by the chord
    assert curve.values[1] == pytest.approx(min(2.0, chord) + 1.0, rel=EXACT_RTOL)
    assert curve.values[1] >= min(2.0, chord) + 1.0


# -- properties -----------------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(rho=st.floats(1e-3, 5.0), factor=st.floats(1.0, 3.0), delta=st.sampled_from([1e-3, 1e-6, 1e-9]))
def test_closed_form_is_monotone_in_rho(rho: float, factor: float, delta: float) -> None:
    small, _ = rdp.closed_form_epsilon(StatedCurve(rho), delta)
    large, _ = rdp.closed_form_epsilon(StatedCurve(rho * factor), delta)
    assert small <= large * (1 + EXACT_RTOL)


@pytest.mark.slow  # 10-12 s: make test-slow (keeps make test under 10 minutes on 2 cores)
@settings(max_examples=6, deadline=None)
@given(rho=st.floats(0.05, 2.0), factor=st.floats(1.0, 2.0))
def test_brackets_are_ordered_in_rho(rho: float, factor: float) -> None:
    small = rdp.conversion(ZeroConcentrated(rho)).delta(3.0)
    large = rdp.conversion(ZeroConcentrated(rho * factor)).delta(3.0)
    assert small.lower <= large.upper


@pytest.mark.slow  # 10-12 s: make test-slow (keeps make test under 10 minutes on 2 cores)
@settings(max_examples=6, deadline=None)
@given(a=st.floats(0.05, 1.0), b=st.floats(0.05, 1.0), k=st.integers(1, 4))
def test_composition_adds(a: float, b: float, k: int) -> None:
    together = optcomp.compose(ZeroConcentrated(a), (ZeroConcentrated(b), k)).delta(4.0)
    summed = optcomp.compose(ZeroConcentrated(a + k * b)).delta(4.0)
    assert together.lower <= summed.upper and summed.lower <= together.upper
    assert together.closed_form == pytest.approx(summed.closed_form, rel=EXACT_RTOL)


def test_renyi_composition_adds() -> None:
    orders = [2.0, 4.0, 8.0]
    one = optcomp.compose((Renyi(orders, [0.2, 0.4, 0.8]), 3)).epsilon(1e-6)
    summed = optcomp.compose(Renyi(orders, [0.6, 1.2, 2.4])).epsilon(1e-6)
    assert one.lower <= summed.upper and summed.lower <= one.upper


# -- edges and bad input --------------------------------------------------------------------------------


def test_zero_rho_reveals_nothing() -> None:
    comp = optcomp.compose(ZeroConcentrated(0.0))
    assert tuple(comp.epsilon(1e-6)) == (0.0, 0.0)
    assert tuple(comp.delta(0.0)) == (0.0, 0.0)


def test_delta_zero_and_one() -> None:
    comp = optcomp.compose(ZeroConcentrated(0.5))
    assert comp.epsilon(0.0).upper == math.inf
    assert comp.epsilon(1.0).upper == 0.0


@pytest.mark.parametrize(("build", "match"), [
    (lambda: ZeroConcentrated(-0.1), "rho must be in"),
    (lambda: ZeroConcentrated(math.nan), "rho must be in"),
    (lambda: ZeroConcentrated(math.inf), "rho must be in"),
    (lambda: ZeroConcentrated("0.5"), "rho must be a real number"),  # type: ignore[arg-type]
    (lambda: Renyi([1.0, 2.0], [0.1, 0.2]), "orders must be finite numbers > 1"),
    (lambda: Renyi([0.5], [0.1]), "orders must be finite numbers > 1"),
    (lambda: Renyi([math.nan], [0.1]), "orders must be finite numbers > 1"),
    (lambda: Renyi([4.0, 2.0], [0.1, 0.2]), "strictly increasing .unsorted"),
    (lambda: Renyi([2.0, 2.0], [0.1, 0.2]), "strictly increasing .duplicate"),
    (lambda: Renyi([2.0, 4.0], [0.1]), "one value per order"),
    (lambda: Renyi([2.0], [-0.1]), r"epsilons must be in \[0, inf\]"),
    (lambda: Renyi([2.0], [math.nan]), r"epsilons must be in \[0, inf\]"),
    (lambda: Renyi([2.0], [math.inf]), "at least one finite"),
    (lambda: Renyi([], []), "orders must hold at least one value"),
    (lambda: Renyi("2", [0.1]), "orders must be a sequence"),  # type: ignore[arg-type]
    (lambda: Renyi([True], [0.1]), "orders must be a real number"),
])
def test_bad_input_is_a_named_value_error(build: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        build()  # type: ignore[operator]


def test_items_without_a_finite_curve_are_refused() -> None:
    comp = optcomp.compose(ZeroConcentrated(0.5), EpsilonDelta(1.0, delta=1e-6))
    with pytest.raises(ValueError, match="cannot be composed with Renyi or zCDP items"):
        comp.epsilon(1e-5)
    with pytest.raises(NoPrivacyLossLawError, match="known only by its Rényi curve"):
        optcomp.compose(ZeroConcentrated(0.5)).pld()


def test_zcdp_group_privacy_is_g_squared_rho() -> None:
    """Bun–Steinke Prop. 27: a ρ-zCDP box is (g²ρ)-zCDP for groups of g (the Gaussian attains it)."""
    assert optcomp.compose(ZeroConcentrated(0.125)).group(2).items == ((ZeroConcentrated(0.5), 1),)
    with pytest.raises(ValueError, match="no exact group-privacy law"):
        optcomp.compose(Renyi([2.0], [0.5])).group(2)

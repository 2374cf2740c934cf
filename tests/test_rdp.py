"""optcomp.rdp against Rényi divergences integrated in mpmath, closed forms, and dp_accounting."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optcomp import Accuracy, dpsgd, rdp
from optcomp.mechanisms import (
    EpsilonDelta,
    Gaussian,
    Laplace,
    PoissonSubsampled,
    RandomizedResponse,
    Staircase,
    SubsampledWithoutReplacement,
)
from tests._references import gaussian_mixture_pdf, laplace_pdf, normal_pdf, renyi_divergence
from tests.tolerances import COARSE_GRID_STEP, EXACT_RTOL, RDP_PEER_RTOL, RDP_QUAD_RTOL

ORDERS = (1.5, 2.0, 3.0, 7.5, 16.0)


def test_gaussian_closed_form() -> None:
    sigma, sens = 1.7, 0.6
    values = rdp.gaussian(sigma, sensitivity=sens, orders=ORDERS)
    for a, v in zip(ORDERS, values, strict=True):
        truth = renyi_divergence(normal_pdf(sens, sigma), normal_pdf(0, sigma), a, -40, 40, [0.0])
        assert v == pytest.approx(float(truth), rel=RDP_QUAD_RTOL)
        assert v >= a * sens**2 / (2 * sigma**2)


def test_laplace_closed_form() -> None:
    b = 0.8
    p, q = laplace_pdf(1, b), laplace_pdf(0, b)
    for a, v in zip(ORDERS, rdp.laplace(b, orders=ORDERS), strict=True):
        assert v == pytest.approx(float(renyi_divergence(p, q, a, -80, 80, [0.0, 1.0])), rel=RDP_QUAD_RTOL)


def test_randomized_response_and_discrete_laws() -> None:
    eps = 0.9
    pr = math.exp(eps) / (1 + math.exp(eps))
    for a, v in zip(ORDERS, rdp.randomized_response(eps, orders=ORDERS), strict=True):
        truth = math.log(pr**a * (1 - pr) ** (1 - a) + (1 - pr) ** a * pr ** (1 - a)) / (a - 1)
        assert v == pytest.approx(truth, rel=EXACT_RTOL)
    # the generic discrete-law path agrees with the closed form; the staircase at γ = 1/2 is RR(ε);
    # the (ε, 0) black box is RR(ε) too (KOV canonical mechanism)
    closed = rdp.randomized_response(eps, orders=ORDERS)
    for mech in (EpsilonDelta(eps, delta=0.0), Staircase(eps, gamma=0.5)):
        np.testing.assert_allclose(rdp.of_mechanism(mech, ORDERS), closed, rtol=EXACT_RTOL)
    # any staircase is (ε, 0)-DP: below the ε bound, increasing in α
    stair = rdp.of_mechanism(Staircase(eps, gamma=0.2), ORDERS)
    assert np.all(stair <= eps) and np.all(np.diff(stair) >= 0)


@pytest.mark.parametrize(("sigma", "q"), [(1.0, 0.1), (0.7, 0.3), (2.0, 0.02)])
def test_subsampled_gaussian_integer_orders_exact(sigma: float, q: float) -> None:
    mix = gaussian_mixture_pdf(sigma, q)
    ints = (2.0, 3.0, 6.0)
    for a, v in zip(ints, rdp.poisson_subsampled_gaussian(sigma, q, orders=ints), strict=True):
        remove = renyi_divergence(mix, normal_pdf(0, sigma), a, -60, 60, [0.0, 1.0])
        add = renyi_divergence(normal_pdf(0, sigma), mix, a, -60, 60, [0.0, 1.0])
        assert v == pytest.approx(float(remove), rel=RDP_QUAD_RTOL)
        assert v >= float(add) * (1 - RDP_QUAD_RTOL)


@pytest.mark.parametrize(("sigma", "q"), [(1.0, 0.1), (0.7, 0.3)])
def test_subsampled_gaussian_fractional_orders_are_upper_bounds(sigma: float, q: float) -> None:
    """The chord bound of log A_α lies above the exact divergence of both directions (and is close)."""
    mix = gaussian_mixture_pdf(sigma, q)
    fracs = (1.5, 2.5, 4.3)
    for a, v in zip(fracs, rdp.poisson_subsampled_gaussian(sigma, q, orders=fracs), strict=True):
        exact = max(
            float(renyi_divergence(mix, normal_pdf(0, sigma), a, -60, 60, [0.0, 1.0])),
            float(renyi_divergence(normal_pdf(0, sigma), mix, a, -60, 60, [0.0, 1.0])),
        )
        assert exact <= v <= 2 * exact


def test_q_one_is_the_gaussian() -> None:
    np.testing.assert_allclose(
        rdp.poisson_subsampled_gaussian(1.3, 1.0), rdp.gaussian(1.3), rtol=EXACT_RTOL
    )


def test_composition_adds_and_conversions() -> None:
    one = rdp.compose(Gaussian(2.0), orders=ORDERS)
    many = rdp.compose((Gaussian(2.0), 5), Laplace(3.0), orders=ORDERS)
    np.testing.assert_allclose(many.rdp, 5 * one.rdp + rdp.laplace(3.0, orders=ORDERS), rtol=EXACT_RTOL)
    delta = 1e-6
    std = many.epsilon(delta, conversion="standard")
    imp = many.epsilon(delta, conversion="improved")
    a = np.asarray(ORDERS)
    assert std.value == pytest.approx(float(np.min(many.rdp + math.log(1 / delta) / (a - 1))), rel=EXACT_RTOL)
    assert imp.value <= std.value
    # δ(ε) inverts ε(δ): at the converted ε the converted δ is at most the target
    assert many.delta(imp.value, conversion="improved").value <= delta * (1 + EXACT_RTOL)
    assert many.delta(std.value, conversion="standard").value <= delta * (1 + EXACT_RTOL)


@settings(max_examples=15, deadline=None)
@given(st.floats(0.6, 3.0), st.floats(0.001, 0.2), st.integers(1, 2000))
def test_rdp_is_above_the_certified_lower_end(sigma: float, q: float, steps: int) -> None:
    """RDP gives an upper bound on ε, so it is never below the PLD engine's certified lower end."""
    curve = rdp.compose((PoissonSubsampled(Gaussian(sigma), sampling_rate=q), steps))
    pld = dpsgd.epsilon(sigma, q, steps, 1e-5, accuracy=Accuracy(grid_step=COARSE_GRID_STEP))
    assert curve.epsilon(1e-5).value >= pld.lower


def test_unsupported_mechanisms_say_so() -> None:
    with pytest.raises(NotImplementedError, match="infinite"):
        rdp.of_mechanism(EpsilonDelta(1.0, delta=1e-3))
    with pytest.raises(NotImplementedError, match="no RDP formula"):
        rdp.of_mechanism(SubsampledWithoutReplacement(Gaussian(1.0), sampling_rate=0.1))
    assert "unsupported" in rdp.compare([EpsilonDelta(1.0, delta=1e-3)], delta=1e-5)
    out = rdp.compare([(RandomizedResponse(0.5), 10)], delta=1e-5)
    assert set(out) >= {"standard", "improved", "method"}


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: rdp.gaussian(0.0), "sigma"),
        (lambda: rdp.gaussian(1.0, orders=[1.0]), "orders"),
        (lambda: rdp.gaussian(1.0, orders=[math.nan]), "orders"),
        (lambda: rdp.laplace(-1.0), "scale"),
        (lambda: rdp.poisson_subsampled_gaussian(1.0, 1.5), "sampling_rate"),
        (lambda: rdp.compose(Gaussian(1.0)).epsilon(0.0), "delta"),
        (lambda: rdp.compose(Gaussian(1.0)).epsilon(1e-5, conversion="x"), "conversion"),  # type: ignore[arg-type]
        (lambda: rdp.compose((Gaussian(1.0), 0)), "count"),
        (lambda: rdp.of_mechanism(3.0), "mechanism"),
    ],
)
def test_invalid_input(call: object, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        call()  # type: ignore[operator]


# --- dp_accounting's RdpAccountant (peer): same orders, same conversion --------------------------


@pytest.mark.parametrize(
    ("sigma", "q", "steps"), [(1.1, 256 / 60000, 3516), (0.8, 0.01, 1000), (2.0, 0.1, 100), (5.0, 0.5, 20)]
)
def test_agrees_with_dp_accounting_on_integer_orders(sigma: float, q: float, steps: int) -> None:
    dp_event = pytest.importorskip("dp_accounting.dp_event")
    rdp_peer = pytest.importorskip("dp_accounting.rdp")
    ints = [a for a in rdp.DEFAULT_ORDERS if a == int(a)]
    acc = rdp_peer.RdpAccountant(ints)
    acc.compose(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(sigma)), steps)
    ours = rdp.compose((PoissonSubsampled(Gaussian(sigma), sampling_rate=q), steps), orders=ints)
    np.testing.assert_allclose(ours.rdp, acc._rdp, rtol=RDP_PEER_RTOL)
    for delta in (1e-5, 1e-8):
        assert ours.epsilon(delta).value == pytest.approx(acc.get_epsilon(delta), rel=RDP_PEER_RTOL)


def test_agrees_with_dp_accounting_on_default_orders_closed_forms() -> None:
    dp_event = pytest.importorskip("dp_accounting.dp_event")
    rdp_peer = pytest.importorskip("dp_accounting.rdp")
    acc = rdp_peer.RdpAccountant()
    acc.compose(dp_event.GaussianDpEvent(3.0), 40)
    acc.compose(dp_event.LaplaceDpEvent(2.0), 5)
    ours = rdp.compose((Gaussian(3.0), 40), (Laplace(2.0), 5))
    np.testing.assert_allclose(ours.rdp, acc._rdp, rtol=RDP_PEER_RTOL)
    assert ours.epsilon(1e-6).value == pytest.approx(acc.get_epsilon(1e-6), rel=RDP_PEER_RTOL)
    # fractional orders of the subsampled Gaussian: ours is the certified chord bound, never below the peer
    acc = rdp_peer.RdpAccountant()
    acc.compose(dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.0)), 500)
    ours = rdp.compose((PoissonSubsampled(Gaussian(1.0), sampling_rate=0.01), 500))
    assert np.all(ours.rdp >= acc._rdp * (1 - RDP_PEER_RTOL))


# --- the labelled comparison in the CLI ------------------------------------------------------------


def _json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    import json

    from optcomp.cli import main

    assert main(argv) == 0
    return dict(json.loads(capsys.readouterr().out))


def test_cli_shows_rdp_beside_brackets(capsys: pytest.CaptureFixture[str]) -> None:
    out = _json(["dpsgd", "--sigma", "1.1", "--q", "0.01", "--steps", "100", "--delta", "1e-5", "--json"], capsys)
    cmp = out["rdp_comparison"]
    assert isinstance(cmp, dict) and "RDP" in cmp["label"]
    expected = rdp.compose((PoissonSubsampled(Gaussian(1.1), sampling_rate=0.01), 100)).epsilon(1e-5).value
    assert cmp["results"][0]["improved"]["epsilon"] == pytest.approx(expected, rel=EXACT_RTOL)
    out = _json(["compose", "--eps", "0.1", "--delta", "0", "-k", "30", "--target-delta", "1e-5", "--json"], capsys)
    assert "results" in out["rdp_comparison"]  # type: ignore[operator]
    out = _json(["compose", "--eps", "0.1", "--delta", "1e-4", "-k", "3", "--target-eps", "0.5", "--json"], capsys)
    assert "infinite" in out["rdp_comparison"]["unsupported"]  # type: ignore[index]
    out = _json(["account", "--mech", "staircase:epsilon=0.5,count=5", "--delta", "1e-5", "--json"], capsys)
    assert out["rdp_comparison"]["results"][0]["improved"]["epsilon"] >= out["results"][0]["lower"]  # type: ignore[index]


@settings(max_examples=30, deadline=None)
@given(st.floats(0.3, 5.0), st.floats(0.0005, 1.0), st.floats(1.05, 1.5))
def test_subsampled_gaussian_monotone(sigma: float, q: float, factor: float) -> None:
    """ρ(α) non-decreasing in α (Rényi divergences are, and the chord bound keeps it), decreasing in σ,
    increasing in q — up to rounding."""
    base = rdp.poisson_subsampled_gaussian(sigma, q)
    assert np.all(np.diff(base) >= -EXACT_RTOL * base[1:])
    assert np.all(rdp.poisson_subsampled_gaussian(sigma * factor, q) <= base * (1 + EXACT_RTOL))
    assert np.all(rdp.poisson_subsampled_gaussian(sigma, q / factor) <= base * (1 + EXACT_RTOL))
    assert np.all(base <= rdp.gaussian(sigma) * (1 + EXACT_RTOL))  # subsampling never hurts


def test_delta_at_huge_epsilon_is_the_smallest_double_not_one() -> None:
    """(α − 1)(ρ − ε) overflows to −inf at ε = 1e308: δ is below every double, so its upper end is the
    smallest positive double (it printed δ = 1 in the CLI's RDP comparison); an infinite ρ still gives 1."""
    import math

    import numpy as np

    from optcomp import rdp
    from optcomp.mechanisms import Gaussian

    curve = rdp.compose(Gaussian(1.0))
    for conversion in ("standard", "improved"):
        assert curve.delta(1e308, conversion=conversion).value == math.ulp(0.0)
    assert rdp.RdpCurve(curve.orders, np.full(curve.orders.shape, np.inf)).delta(5.0).value == 1.0

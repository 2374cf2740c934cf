"""Bounded-range steps on the mechanisms floor: the specs and names users type, the worst-case family, the
tight zCDP values and the exact RDP curve, against 40–50-digit mpmath references."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import optcomp as oc
from optcomp import rdp
from optcomp.cli import main
from optcomp.mechanisms import (
    BoundedRange,
    ExponentialMechanism,
    Gaussian,
    GumbelNoisyMax,
    GumbelTopK,
    Laplace,
    LaplaceNoisyMax,
    PermuteAndFlip,
    RandomizedResponse,
    group_mechanism,
    mechanism_spellings,
    privacy_loss_laws,
    tight_zcdp,
)
from optcomp.mechanisms.bounded_range import family_masses, family_rdp, kl_max
from tests._references.bounded_range import (
    br_pair,
    family_renyi_max,
    kl_scan,
    laplace_kl,
    laplace_renyi,
    rr_kl,
    rr_renyi,
)
from tests._references.bounded_range import kl_max as kl_max_ref
from tests.tolerances import BR_CLOSED_FORM_RTOL, BR_ZCDP_SLACK, EXACT_RTOL

EPSILONS = [1e-3, 0.01, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0]
#: Orders from just above 1 to 1000: the grid on which sup_α D_α/α is checked.
ORDERS = [1 + 10.0**-k for k in range(7, 0, -1)] + [1.5, 2.0, 3.0, 5.0, 10.0, 30.0, 100.0, 1000.0]


@pytest.mark.parametrize("bad", [0.0, -1.0, math.nan, math.inf, 501.0, "0.1"])
def test_bounded_range_refuses_bad_epsilon(bad: object) -> None:
    with pytest.raises(ValueError, match="epsilon"):
        BoundedRange(bad)  # type: ignore[arg-type]


def test_names_users_type_build_bounded_range() -> None:
    assert ExponentialMechanism(0.1) == GumbelNoisyMax(0.1) == BoundedRange(0.1)
    assert GumbelTopK(0.2, 5) == (BoundedRange(0.2), 5)
    with pytest.raises(ValueError, match="k"):
        GumbelTopK(0.2, 0)
    names = mechanism_spellings()
    assert names["exponential"].spec is BoundedRange
    assert names["gumbel_max"].spec is BoundedRange
    assert names["permute_and_flip"].spec is PermuteAndFlip
    assert names["laplace_noisy_max"].spec is LaplaceNoisyMax


@pytest.mark.parametrize("eps", EPSILONS)
def test_family_masses_match_the_definition(eps: float) -> None:
    for t in (0.0, 0.3 * eps, eps / 2, eps):
        p, q = family_masses(eps, t)
        rp, rq = br_pair(eps, t)
        assert p == pytest.approx(float(rp), rel=EXACT_RTOL, abs=1e-300)
        assert q == pytest.approx(float(rq), rel=EXACT_RTOL, abs=1e-300)
        if 0 < t < eps:  # the losses are t and t − ε
            assert math.log(p / q) == pytest.approx(t, rel=1e-9, abs=1e-12)
            assert math.log((1 - p) / (1 - q)) == pytest.approx(t - eps, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("eps", EPSILONS)
def test_kl_max_is_the_maximum_over_t_and_rounded_up(eps: float) -> None:
    truth = kl_max_ref(eps)
    got = kl_max(eps)
    assert got >= truth
    assert got <= truth * (1 + BR_CLOSED_FORM_RTOL)
    assert got <= eps**2 / 8  # Cesar–Rogers: KL_max ≤ ε²/8
    scan = kl_scan(eps)
    assert scan <= truth * (1 + 1e-12)


@pytest.mark.parametrize("eps", [0.01, 0.1, 1.0, 5.0])
def test_sup_over_orders_of_d_alpha_over_alpha_is_reached_at_alpha_to_one(eps: float) -> None:
    """The claim tight zCDP relies on: for the BR family, the Laplace mechanism and randomized response,
    D_α/α never exceeds its α → 1 limit (the KL divergence) on a grid of orders up to 1000."""
    curve = family_rdp(eps, ORDERS)
    assert np.all(curve / np.array(ORDERS) <= kl_max(eps) * (1 + BR_ZCDP_SLACK))
    lap = [laplace_renyi(eps, a) / a for a in ORDERS]
    assert max(lap) <= laplace_kl(eps) * (1 + 1e-12)
    assert float(lap[0]) == pytest.approx(eps + math.expm1(-eps), rel=1e-5)
    rr = [rr_renyi(eps, a) / a for a in ORDERS]
    assert max(rr) <= rr_kl(eps) * (1 + 1e-12)


@pytest.mark.parametrize("eps", [0.05, 0.5, 2.0])
def test_family_rdp_is_the_supremum_over_t(eps: float) -> None:
    alphas = [1.5, 2.0, 4.0, 16.0, 128.0]
    got = family_rdp(eps, alphas)
    for g, a in zip(got, alphas, strict=True):
        best = family_renyi_max(eps, a)
        assert g >= best
        assert g <= best * (1 + BR_CLOSED_FORM_RTOL)
    assert np.array_equal(rdp.of_mechanism(BoundedRange(eps), alphas), got)


def test_tight_zcdp_closed_forms() -> None:
    eps = 0.7
    assert tight_zcdp(BoundedRange(eps)) == kl_max(eps)
    lap = tight_zcdp(Laplace(2.0, sensitivity=1.4))
    assert lap >= 0.7 + math.expm1(-0.7) and lap == pytest.approx(0.7 + math.expm1(-0.7), rel=BR_CLOSED_FORM_RTOL)
    for pure in (PermuteAndFlip(eps), LaplaceNoisyMax(eps), RandomizedResponse(eps)):
        assert tight_zcdp(pure) == pytest.approx(eps * math.tanh(eps / 2), rel=BR_CLOSED_FORM_RTOL)
        assert tight_zcdp(pure) >= eps * math.tanh(eps / 2)
    assert tight_zcdp(Gaussian(2.0)) == pytest.approx(0.125, rel=BR_CLOSED_FORM_RTOL)
    # permute-and-flip is ε-DP, not BR: its zCDP is the ε-DP one, above the BR value ε²/8 a peer shipped
    assert tight_zcdp(PermuteAndFlip(eps)) > eps**2 / 8
    with pytest.raises(NotImplementedError):
        tight_zcdp(oc.EpsilonDelta(1.0, delta=1e-6))


def test_non_br_selections_have_the_pure_dp_pair_and_route_to_optimal() -> None:
    rr = privacy_loss_laws(RandomizedResponse(0.3))[0]
    for m in (PermuteAndFlip(0.3), LaplaceNoisyMax(0.3)):
        law = privacy_loss_laws(m)[0]
        assert np.array_equal(law.atom_losses, rr.atom_losses) and np.array_equal(law.atom_p, rr.atom_p)
        assert oc.compose((m, 10)).engine() == "optimal"


def test_group_privacy_of_bounded_range() -> None:
    g = group_mechanism(BoundedRange(0.1), 3)
    assert isinstance(g, BoundedRange) and g.epsilon >= 0.3
    assert group_mechanism(PermuteAndFlip(0.2), 2).epsilon >= 0.4
    assert oc.compose((BoundedRange(0.1), 2)).group(2).items == ((BoundedRange(0.2), 2),)


def test_cli_account_takes_exponential_steps(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["account", "--mech", "exponential:eps=0.1,count=100", "--delta", "1e-6", "--json",
                 "--accuracy", "relative_width=1e-3"])
    out, err = capsys.readouterr()
    assert code == 0, err
    row = json.loads(out)["results"][0]
    truth = oc.compose((BoundedRange(0.1), 100)).epsilon(1e-6, accuracy=oc.Accuracy(relative_width=1e-3))
    assert (row["lower"], row["upper"]) == (truth.lower, truth.upper)
    assert 2.24 < row["lower"] <= row["upper"] < 2.26


def test_cli_refuses_a_bad_exponential_epsilon(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["account", "--mech", "exponential:eps=-1", "--delta", "1e-6"])
    _, err = capsys.readouterr()
    assert code == 2
    assert "epsilon" in err and "Traceback" not in err


def test_cli_refuses_more_bounded_range_steps_than_fit(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["account", "--mech", "exponential:eps=0.1,count=1000000", "--delta", "1e-6"])
    _, err = capsys.readouterr()
    assert code == 2
    assert "bounded-range steps" in err and "at most" in err and len(err.strip().splitlines()) == 1


def test_cli_table_says_adaptive(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["account", "--mech", "exponential:eps=0.5,count=3", "--mech", "rr:eps=0.5", "--delta", "1e-3"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "adaptive" in " ".join(out.split())


def test_pure_selection_mechanisms_share_one_registration() -> None:
    """The pure-ε selection mechanisms are registered once (a union type), not once per class: the same
    function answers each, and it answers each with the ε-DP pair's value."""
    from optcomp.mechanisms import (
        EpsilonDelta,
        LaplaceNoisyMax,
        PermuteAndFlip,
        RandomizedResponse,
        privacy_loss_laws,
    )
    from optcomp.mechanisms._zcdp import tight_zcdp

    zcdp = {tight_zcdp.dispatch(c) for c in (RandomizedResponse, PermuteAndFlip, LaplaceNoisyMax)}
    laws = {privacy_loss_laws.dispatch(c) for c in (BoundedRange, PermuteAndFlip, LaplaceNoisyMax)}
    assert len(zcdp) == 1 and len(laws) == 1
    pure = EpsilonDelta(0.7, delta=0.0)
    assert tight_zcdp(PermuteAndFlip(0.7)) == tight_zcdp(LaplaceNoisyMax(0.7)) == tight_zcdp(pure)
    for m in (PermuteAndFlip(0.7), LaplaceNoisyMax(0.7), BoundedRange(0.7)):
        (a, _), (b, _) = privacy_loss_laws(m), privacy_loss_laws(pure)
        assert np.array_equal(a.atom_losses, b.atom_losses) and np.array_equal(a.atom_p, b.atom_p)

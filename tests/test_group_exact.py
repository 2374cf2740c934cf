"""Group privacy with the mechanisms known (issue 27 item 1): ``Composition.group`` and the exact route of
:meth:`optcomp.Composition.group_epsilon`.

Independent truths (``tests._references``): GDP gμ for a Gaussian group (Dong–Roth–Su Thm 2.14), the Laplace
closed form ε(δ) = gΔ/b + 2 ln(1 − δ) for one step and the pure ε = T·gΔ/b at δ = 0, and the mpmath
hockey-stick of the Bin(g, q)-mixture pair for a Poisson-subsampled Gaussian group. Regression inputs: the
issue's DP-SGD (σ = 1, q = 0.01, 10³ Poisson steps) at δ = 1e-5 for groups of 8 and 16 and Laplace(10)×50 at
a group of 8, each ≤ 1e-3 relative wide.
"""

from __future__ import annotations

import json
import math

import pytest

from optcomp import compose
from optcomp.cli import main
from optcomp.fdp import GroupEpsilon
from optcomp.mechanisms import (
    DiscreteLaplace,
    Gaussian,
    Laplace,
    NoGroupLawError,
    PoissonSubsampled,
    SubsampledWithoutReplacement,
    group_mechanism,
)
from optcomp.queries import Composition
from tests._references import gdp_epsilon, laplace_epsilon, mixture_gaussian_delta

_DPSGD = compose((PoissonSubsampled(Gaussian(1.0), sampling_rate=0.01), 1000))
_LAPLACE = compose((Laplace(10.0), 50))

#: The issue's target: the bracket's width relative to its upper end.
_TARGET_WIDTH = 1e-3

#: Brackets of the profile route before this change (docs/fdp.md, /work/notes/old/group2.md): the exact
#: answers must not be above their upper ends (both are certified upper ends of the same quantity).
_PROFILE_UPPER = {("dpsgd", 8): 26.59, ("dpsgd", 16): 101.30, ("laplace", 8): 33.52}


@pytest.mark.parametrize(
    ("name", "composition", "g"), [("dpsgd", _DPSGD, 8), ("dpsgd", _DPSGD, 16), ("laplace", _LAPLACE, 8)]
)
def test_issue_workloads_are_narrow_and_exact(name: str, composition: Composition, g: int) -> None:
    b = composition.group_epsilon(g, 1e-5)
    assert isinstance(b, GroupEpsilon) and b.route == "exact" and b.reason == ""
    assert b.width <= _TARGET_WIDTH * b.upper, b
    assert b.upper <= _PROFILE_UPPER[name, g], b


def test_a_group_of_one_is_the_plain_answer() -> None:
    for composition in (_DPSGD, _LAPLACE):
        assert composition.group(1) is composition
        b = composition.group_epsilon(1, 1e-5)
        plain = composition.epsilon(1e-5)
        assert (b.lower, b.upper, b.route) == (plain.lower, plain.upper, "exact")


@pytest.mark.parametrize("g", [2, 8, 16])
def test_gaussian_group_is_gdp_of_g_mu(g: int) -> None:
    truth = float(gdp_epsilon(0.5 * g, 1e-5))
    b = compose(Gaussian(2.0)).group_epsilon(g, 1e-5)
    assert b.route == "exact" and b.lower <= truth <= b.upper, (b, truth)
    assert b.width <= _TARGET_WIDTH * b.upper


def test_laplace_group_matches_the_closed_forms() -> None:
    one = compose(Laplace(10.0, sensitivity=1.5)).group_epsilon(4, 1e-3)  # ε₀ = 4·1.5/10
    truth = laplace_epsilon(0.6, 1e-3)
    assert one.lower <= truth <= one.upper and one.width <= _TARGET_WIDTH * one.upper, (one, truth)
    pure = _LAPLACE.group(8).epsilon(0.0)  # 50 steps of ε = 8/10: ε(0) = 40 exactly
    assert pure.lower <= 40.0 <= pure.upper, pure
    assert _LAPLACE.group(8).items == ((Laplace(10.0, sensitivity=8.0), 50),)


def test_poisson_gaussian_group_is_the_binomial_mixture() -> None:
    sigma, q, g, eps = 1.5, 0.2, 3, 0.5
    grouped = compose(PoissonSubsampled(Gaussian(sigma), sampling_rate=q)).group(g)
    weights = [math.comb(g, j) * q**j * (1 - q) ** (g - j) for j in range(g + 1)]
    shifts = [float(j) for j in range(g + 1)]
    truth = max(float(mixture_gaussian_delta(sigma, shifts, weights, eps, add=add)) for add in (False, True))
    b = grouped.delta(eps)
    assert b.lower <= truth <= b.upper, (b, truth)
    assert grouped.neighbouring == "add_remove"


def test_group_sensitivity_rounds_up_and_discrete_laplace_is_exact() -> None:
    m = group_mechanism(Gaussian(1.0, sensitivity=0.1), 3)
    assert (
        isinstance(m, Gaussian) and m.sensitivity >= 3 * 0.1 and m.sensitivity == math.nextafter(3 * 0.1, 1.0)
    )
    assert group_mechanism(DiscreteLaplace(2.0, sensitivity=2), 5) == DiscreteLaplace(2.0, sensitivity=10)


def test_mechanisms_without_a_group_law_fall_back_to_the_profile_route() -> None:
    c = compose((SubsampledWithoutReplacement(Gaussian(1.0), sampling_rate=0.5), 2))
    with pytest.raises(NoGroupLawError, match="hypergeometric"):
        c.group(2)
    with pytest.raises(NoGroupLawError, match="Laplace"):
        compose(PoissonSubsampled(Laplace(1.0), sampling_rate=0.1)).group(2)
    b = c.group_epsilon(2, 1e-5)
    assert b.route == "profile" and "hypergeometric" in b.reason
    plain = c.epsilon(1e-5)
    assert b.lower <= plain.upper and plain.lower <= b.upper  # the one-record ε is inside a group of ≤ 2


@pytest.mark.parametrize("g", [0, -1, 2.0, 1.5, True, "2"])
def test_bad_group_sizes_are_refused_naming_g(g: object) -> None:
    with pytest.raises(ValueError, match="^g must be"):
        _LAPLACE.group(g)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="^g must be"):
        _LAPLACE.group_epsilon(g, 1e-5)  # type: ignore[arg-type]


def test_a_huge_poisson_group_is_refused_up_front() -> None:
    with pytest.raises(ValueError, match="^g must be at most"):
        compose(PoissonSubsampled(Gaussian(1.0), sampling_rate=0.01)).group(10**9)


def _tradeoff_json(capsys: pytest.CaptureFixture[str], args: list[str]) -> dict[str, object]:
    rc = main(["tradeoff", *args, "--points", "2", "--json"])
    captured = capsys.readouterr()
    assert rc == 0 and captured.err == "", captured.err
    out: dict[str, object] = json.loads(captured.out)
    return out


def test_cli_tradeoff_group_says_which_route_answered(capsys: pytest.CaptureFixture[str]) -> None:
    exact = _tradeoff_json(capsys, ["--sigma", "1", "--q", "0.01", "--steps", "1000", "--group", "8"])
    assert exact["group"] == {"size": 8, "route": "exact_pair"} and "exact group pair" in str(exact["curve"])
    mech = _tradeoff_json(capsys, ["--mech", "laplace:scale=10", "--group", "8"])
    assert mech["group"] == {"size": 8, "route": "exact_pair"}
    bound = _tradeoff_json(capsys, ["--mech", "staircase:eps=1", "--group", "2"])
    assert bound["group"] == {"size": 2, "route": "drs_thm_2_14"} and "Staircase" in str(bound["curve"])
    plain = _tradeoff_json(capsys, ["--mech", "laplace:scale=10"])
    assert "group" not in plain

"""optcomp.compose: validation, and end-to-end brackets around exact closed forms."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import optcomp
from optcomp import (
    EpsilonDelta,
    Gaussian,
    Laplace,
    PoissonSubsampled,
    RandomizedResponse,
    SubsampledWithoutReplacement,
    compose,
)

#: A coarser grid for the many single-mechanism brackets (they must contain the truth at any step).
COARSE = optcomp.Accuracy(grid_step=1e-3)
from tests._references import (
    discrete_kfold_delta,
    epsilon_delta_composition_delta,
    gdp_delta,
    poisson_gaussian_delta,
)
from tests.test_mechanisms import law_delta
from tests.test_mechanisms_consistency import MECHANISMS


@pytest.mark.parametrize("count", [0, -1, 1.5, True, math.nan])
def test_count_validation(count: object) -> None:
    with pytest.raises(ValueError, match="count"):
        compose((Gaussian(1.0), count))


def test_empty_and_malformed_items() -> None:
    with pytest.raises(ValueError, match="at least one"):
        compose()
    with pytest.raises(ValueError, match="pair"):
        compose((Gaussian(1.0), 2, 3))
    with pytest.raises(ValueError, match="mechanism"):
        compose(["not", "hashable"])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="accuracy"):
        compose(Gaussian(1.0), accuracy=1e-4)  # type: ignore[arg-type]


@pytest.mark.parametrize("item", [None, "gaussian", 1.0, Gaussian, (None, 3), [Gaussian(1.0)]])
def test_malformed_item_is_a_value_error_naming_the_item(item: object) -> None:
    with pytest.raises(ValueError, match=r"items\[1\] must be a mechanism specification"):
        compose(Laplace(1.0), item)  # type: ignore[arg-type]


def test_epsilon_delta_pair_points_to_optimal() -> None:
    """Regression (issue 9): ``compose((0.1, 1e-6))`` said "count must be an integer >= 1, got 1e-06"."""
    with pytest.raises(ValueError, match="optcomp.optimal") as info:
        compose((0.1, 1e-6))  # type: ignore[arg-type]
    assert "must be an integer" not in str(info.value)


# --- the neighbouring relation -------------------------------------------------------------------

POISSON = PoissonSubsampled(Gaussian(1.0), sampling_rate=0.1)
WOR = SubsampledWithoutReplacement(Gaussian(1.0, sensitivity=2.0), sampling_rate=0.1)


def test_items_fixing_different_relations_are_refused() -> None:
    with pytest.raises(ValueError, match="add_remove.*substitution"):
        compose(POISSON, Laplace(1.0), (WOR, 3))


@pytest.mark.parametrize(("item", "wrong"), [(POISSON, "substitution"), (WOR, "add_remove")])
def test_explicit_relation_contradicting_an_item_is_refused(item: object, wrong: str) -> None:
    with pytest.raises(ValueError, match=f"neighbouring='{wrong}'"):
        compose(item, neighbouring=wrong)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", ["add", "replace", 1, True])
def test_neighbouring_value_is_validated(value: object) -> None:
    with pytest.raises(ValueError, match="neighbouring must be one of"):
        compose(Gaussian(1.0), neighbouring=value)  # type: ignore[arg-type]


def test_result_reports_the_relation() -> None:
    assert compose(Gaussian(1.0), RandomizedResponse(1.0)).neighbouring is None
    assert compose(Gaussian(1.0), neighbouring="substitution").neighbouring == "substitution"
    assert compose((POISSON, 10), Laplace(2.0)).neighbouring == "add_remove"
    assert compose(WOR, EpsilonDelta(0.5, delta=1e-6)).neighbouring == "substitution"
    assert compose(POISSON, neighbouring="add_remove").neighbouring == "add_remove"
    pld = compose(POISSON)
    with pytest.raises(AttributeError):
        pld.neighbouring = "substitution"  # type: ignore[misc]


def test_pld_composition_keeps_or_refuses_relations() -> None:
    add_remove, substitution = compose(POISSON), compose(WOR)
    agnostic = compose(Laplace(1.0))
    assert add_remove.compose(agnostic).neighbouring == "add_remove"
    assert agnostic.compose(substitution).neighbouring == "substitution"
    assert substitution.self_compose(3).neighbouring == "substitution"
    with pytest.raises(ValueError, match="add_remove.*substitution"):
        add_remove.compose(substitution)


def test_relation_does_not_change_the_numbers() -> None:
    """The relation is a label and a guard: a base mechanism's bracket is the same under either."""
    coarse = optcomp.Accuracy(grid_step=1e-2)
    a = compose((Laplace(1.0), 3), neighbouring="add_remove", accuracy=coarse).delta(1.0)
    b = compose((Laplace(1.0), 3), neighbouring="substitution", accuracy=coarse).delta(1.0)
    assert a == b


def test_compose_is_exported() -> None:
    assert optcomp.compose is compose


# --- end to end: the engine's certified brackets contain exact closed forms -------------------------


def mv_homogeneous_delta(epsilon: float, delta: float, k: int, epsilon_g: float) -> float:
    """Murtagh–Vadhan Thm 1.4 solved for δ_g at 50 digits (``tests._references``), as a float."""
    return float(epsilon_delta_composition_delta(epsilon, delta, k, epsilon_g))


@pytest.mark.parametrize(("sigma", "k"), [(1.0, 1), (2.0, 10), (20.0, 400)])
@pytest.mark.parametrize("epsilon", [0.0, 0.5, 2.0])
def test_gaussian_composition_contains_gdp(sigma: float, k: int, epsilon: float) -> None:
    bound = compose((Gaussian(sigma), k)).delta(epsilon)
    assert bound.contains(gdp_delta(math.sqrt(k) / sigma, epsilon))


def test_heterogeneous_gaussians_contain_gdp() -> None:
    bound = compose(Gaussian(1.0), (Gaussian(2.0, sensitivity=3.0), 2), Gaussian(4.0)).delta(1.0)
    mu = math.sqrt(1.0 + 2 * 1.5**2 + 0.25**2)
    assert bound.contains(gdp_delta(mu, 1.0))


@pytest.mark.parametrize(("epsilon", "delta", "k"), [(0.1, 0.0, 30), (0.5, 1e-6, 8), (1.0, 1e-3, 3)])
def test_epsilon_delta_composition_contains_murtagh_vadhan(epsilon: float, delta: float, k: int) -> None:
    pld = compose((EpsilonDelta(epsilon, delta=delta), k))
    for epsilon_g in (0.0, 0.3 * k * epsilon, 0.55 * k * epsilon):
        assert pld.delta(epsilon_g).contains(mv_homogeneous_delta(epsilon, delta, k, epsilon_g))


@pytest.mark.parametrize("epsilon", [0.0, 0.3, 0.9])
def test_single_laplace_contains_exact_delta(epsilon: float) -> None:
    """Laplace with ε₀ = Δ/b: δ(ε) = 1 − e^{(ε − ε₀)/2} for ε ≤ ε₀."""
    bound = compose(Laplace(1.0)).delta(epsilon)
    assert bound.contains(-math.expm1(0.5 * (epsilon - 1.0)))


@pytest.mark.parametrize("epsilon", [0.0, 0.4, 1.0])
def test_single_randomized_response_contains_exact_delta(epsilon: float) -> None:
    """Randomized response with ε₀: δ(ε) = (e^{ε₀} − e^ε)/(1 + e^{ε₀}) for ε ≤ ε₀."""
    eps0 = 1.0
    bound = compose(RandomizedResponse(eps0)).delta(epsilon)
    assert bound.contains((math.exp(eps0) - math.exp(epsilon)) / (1 + math.exp(eps0)))


@pytest.mark.parametrize("epsilon", [0.0, 0.05, 0.5])
def test_single_subsampled_gaussian_contains_mixture_delta(epsilon: float) -> None:
    sigma, q = 0.8, 0.3
    bound = compose(PoissonSubsampled(Gaussian(sigma), sampling_rate=q)).delta(epsilon)
    truth = max(
        float(poisson_gaussian_delta(sigma, q, epsilon, add=False)),
        float(poisson_gaussian_delta(sigma, q, epsilon, add=True)),
    )
    assert bound.contains(truth)


def test_pooling_equal_items_is_self_composition() -> None:
    mech = PoissonSubsampled(Gaussian(1.0), sampling_rate=0.1)
    a = compose((mech, 3), mech).delta(0.5)
    b = compose((mech, 4)).delta(0.5)
    assert (a.lower, a.upper) == (b.lower, b.upper)


def test_result_is_a_composition_whose_grid_merges_the_gaussians() -> None:
    comp = compose((Laplace(1.0), 3), RandomizedResponse(0.5), (Gaussian(2.0), 5), Gaussian(3.0))
    assert isinstance(comp, optcomp.Composition)
    assert comp.count == 3 + 1 + 5 + 1
    assert isinstance(comp.pld(), optcomp.pld.PrivacyLossDistribution)
    assert comp.pld().count == 3 + 1 + 1  # the six Gaussian runs become one exact Gaussian


@settings(max_examples=5, deadline=None)
@given(mu=st.floats(0.1, 3.0), k=st.integers(1, 500), epsilon=st.floats(0.0, 3.0))
def test_gaussian_composition_contains_gdp_over_domain(mu: float, k: int, epsilon: float) -> None:
    sigma = math.sqrt(k) / mu
    assert compose((Gaussian(sigma), k)).delta(epsilon).contains(gdp_delta(mu, epsilon))


@settings(max_examples=6, deadline=None)
@given(epsilon0=st.floats(0.05, 2.0), at=st.floats(0.0, 2.0))
def test_single_randomized_response_over_domain(epsilon0: float, at: float) -> None:
    truth = max(0.0, (math.exp(epsilon0) - math.exp(at)) / (1 + math.exp(epsilon0)))
    assert compose(RandomizedResponse(epsilon0)).delta(at).contains(truth)


@pytest.mark.parametrize(("epsilon0", "delta0", "q", "k"), [(1.0, 1e-4, 0.2, 12), (2.0, 0.0, 0.05, 20)])
@pytest.mark.parametrize("epsilon", [0.0, 0.3, 1.0])
def test_subsampled_canonical_composition_contains_enumeration(
    epsilon0: float, delta0: float, q: float, k: int, epsilon: float
) -> None:
    mechanism = PoissonSubsampled(EpsilonDelta(epsilon0, delta=delta0), sampling_rate=q)
    remove, add = optcomp.privacy_loss_laws(mechanism)
    truth = max(
        discrete_kfold_delta(remove.atom_losses, remove.atom_p, remove.p_inf, k, epsilon),
        discrete_kfold_delta(add.atom_losses, add.atom_p, add.p_inf, k, epsilon),
    )
    assert compose((mechanism, k)).delta(epsilon).contains(truth)


@pytest.mark.parametrize("epsilon", [0.0, 1.0, 2.5])
def test_randomized_response_composition_contains_murtagh_vadhan(epsilon: float) -> None:
    assert (
        compose((RandomizedResponse(0.5), 10))
        .delta(epsilon)
        .contains(mv_homogeneous_delta(0.5, 0.0, 10, epsilon))
    )


@pytest.mark.parametrize("mechanism", MECHANISMS, ids=repr)
def test_single_mechanism_bracket_contains_exact_law_delta(mechanism: object) -> None:
    """One run of each mechanism: the engine's bracket contains δ(ε) computed exactly from the law."""
    remove, add = optcomp.privacy_loss_laws(mechanism)
    pld = compose(mechanism, accuracy=COARSE)
    for epsilon in (0.0, 0.2, 1.0):
        truth = max(law_delta(remove, epsilon), law_delta(add, epsilon))
        assert pld.delta(epsilon).contains(truth)

"""optcomp.selection (issue 34, item 3): laws of K, the routes against independent truths, the exact
best-of-K law as a lower end no upper end may cross, orderings, monotonicity, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import optcomp
from optcomp import selection
from optcomp.mechanisms import DiscretePair, Gaussian, Laplace, PoissonSubsampled, RandomizedResponse
from optcomp.rdp import DEFAULT_ORDERS, RdpCurve
from optcomp.selection import (
    Binomial,
    Geometric,
    Logarithmic,
    Poisson,
    ProfileRoute,
    TruncatedNegativeBinomial,
    order_delta,
    select,
    theorem2,
    theorem6,
)
from tests._references.selection import (
    best_of_k_delta,
    gaussian_rdp,
    k_dpgf,
    k_mean,
    k_pgf,
    k_pgf_series,
    ps_theorem2,
    ps_theorem6,
    randomized_response_pair,
    worst_order_delta,
)
from tests.tolerances import SELECTION_DELTA_ATOL, SELECTION_LAW_RTOL, SELECTION_ROUTE_RTOL

LAWS = [
    (Geometric(0.1), "tnb", {"eta": 1.0, "gamma": 0.1}),
    (Logarithmic(0.05), "tnb", {"eta": 0.0, "gamma": 0.05}),
    (TruncatedNegativeBinomial(0.5, 0.1), "tnb", {"eta": 0.5, "gamma": 0.1}),
    (TruncatedNegativeBinomial(-0.5, 0.3), "tnb", {"eta": -0.5, "gamma": 0.3}),
    (TruncatedNegativeBinomial(3.0, 0.4), "tnb", {"eta": 3.0, "gamma": 0.4}),
    (Poisson(10.0), "poisson", {"mu": 10.0}),
    (Poisson(0.3), "poisson", {"mu": 0.3}),
    (Binomial(20, 0.3), "binomial", {"n": 20, "p": 0.3}),
    (Binomial(5), "binomial", {"n": 5, "p": 1.0}),
]


# -- the laws of K against their pmf series ---------------------------------------------------------------
@pytest.mark.parametrize(("law", "kind", "params"), LAWS, ids=lambda x: getattr(x, "name", ""))
def test_law_closed_forms_match_the_pmf_series(law: selection.Repetitions, kind: str, params: dict[str, float]) -> None:
    pgf = k_pgf_series(kind, params)
    closed = k_pgf(kind, params)
    for x in (0.0, 0.3, 0.99, 1.0):  # the reference's own closed form against its series
        assert float(closed(x)) == pytest.approx(float(pgf(x)), rel=SELECTION_LAW_RTOL, abs=1e-30)
    assert law.mean == pytest.approx(float(k_mean(kind, params)), rel=SELECTION_LAW_RTOL)
    for x in (0.0, 0.1, 0.5, 0.9, 0.999, 1.0):
        assert float(law.pgf(x)) == pytest.approx(float(pgf(x)), rel=SELECTION_LAW_RTOL, abs=law.pgf_error)
    for d in (1e-12, 1e-6, 0.01, 0.5):
        truth = float(1 - pgf(1 - d)) if d >= 1e-6 else float(law.mean) * d  # series cancels below 1e-6
        assert float(law.pgf_tail(d)) == pytest.approx(truth, rel=1e-5 if d < 1e-6 else SELECTION_LAW_RTOL)
    dpgf = k_dpgf(kind, params)
    for x in (0.2, 0.7, 1.0):
        assert math.exp(float(law.log_dpgf(x))) == pytest.approx(float(dpgf(x)), rel=SELECTION_LAW_RTOL)


@pytest.mark.parametrize(("eta", "mean"), [(1.0, 10.0), (0.0, 10.0), (0.5, 3.0), (-0.5, 2.5), (4.0, 100.0)])
def test_from_mean_inverts_the_mean(eta: float, mean: float) -> None:
    law = TruncatedNegativeBinomial.from_mean(eta, mean)
    assert law.mean == pytest.approx(mean, rel=1e-13)
    assert float(k_mean("tnb", {"eta": eta, "gamma": law.gamma})) == pytest.approx(mean, rel=1e-12)


# -- soundness: the exact best-of-K law is a lower end no certified upper end may cross ---------------------
def _route_of(p: list[float], q: list[float], law: selection.Repetitions) -> ProfileRoute:
    """The profile route fed with the pair's exact profile (a float evaluation at 401 points)."""
    eps = np.linspace(0.0, 12.0, 401)
    pa, qa = np.array(p), np.array(q)
    delta = [max(np.maximum(pa - math.exp(e) * qa, 0).sum(), np.maximum(qa - math.exp(e) * pa, 0).sum()) for e in eps]
    return ProfileRoute.build(law, eps, np.asarray(delta) * (1 + 1e-12) + 1e-300)


laws = st.one_of(
    st.builds(Geometric, st.floats(0.02, 0.9)),
    st.builds(Logarithmic, st.floats(0.01, 0.9)),
    st.builds(TruncatedNegativeBinomial, st.floats(-0.9, 4.0).filter(lambda e: e == 0.0 or abs(e) >= 1e-6),
              st.floats(0.02, 0.9)),
    st.builds(Poisson, st.floats(0.1, 30.0)),
    st.builds(Binomial, st.integers(1, 8), st.floats(0.05, 1.0)),
)


pairs = {
    "law": laws,
    "weights": st.lists(st.floats(0.02, 1.0), min_size=2, max_size=5),
    "other": st.lists(st.floats(0.02, 1.0), min_size=2, max_size=5),
    "epsilon": st.floats(0.0, 3.0),
}


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**pairs)
def test_profile_route_is_above_every_order_of_random_pairs(
    law: selection.Repetitions, weights: list[float], other: list[float], epsilon: float
) -> None:
    """The worst order of a random pair's exact best-of-K law (every permutation, 50 digits) is a true
    δ(ε) of the selection: the profile route's certified upper end must be at least it."""
    _check_profile_route(law, weights, other, epsilon)


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**pairs)
def test_profile_route_is_above_every_order_hunt(
    law: selection.Repetitions, weights: list[float], other: list[float], epsilon: float
) -> None:
    """The same, a long hunt (``make test-slow``)."""
    _check_profile_route(law, weights, other, epsilon)


def _check_profile_route(law: selection.Repetitions, weights: list[float], other: list[float], epsilon: float) -> None:
    n = min(len(weights), len(other))
    p = [w / sum(weights[:n]) for w in weights[:n]]
    q = [w / sum(other[:n]) for w in other[:n]]
    pgf = k_pgf(*_reference_law(law))
    truth = float(worst_order_delta(p, q, pgf, epsilon))
    upper, _ = _route_of(p, q, law).delta(epsilon)
    assert upper >= truth - SELECTION_DELTA_ATOL


def _reference_law(law: selection.Repetitions) -> tuple[str, dict[str, float]]:
    if isinstance(law, TruncatedNegativeBinomial):
        return "tnb", {"eta": law.eta, "gamma": law.gamma}
    if isinstance(law, Poisson):
        return "poisson", {"mu": law.mean}
    assert isinstance(law, Binomial)
    return "binomial", {"n": law.n, "p": law.p}


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(law=laws, epsilon0=st.floats(0.05, 3.0), epsilon=st.floats(0.0, 6.0))
def test_randomized_response_base_brackets_its_exact_selection_law(
    law: selection.Repetitions, epsilon0: float, epsilon: float
) -> None:
    """Randomized response: the exact best-of-K law of both orders (50 digits) lies inside the bracket the
    user gets (every route, through compose and the engines); the lower end is that law's own value."""
    p, q = randomized_response_pair(epsilon0)
    truth = float(worst_order_delta(p, q, k_pgf(*_reference_law(law)), epsilon))
    answer = select(RandomizedResponse(epsilon0), law).delta(epsilon)
    assert answer.upper >= truth - SELECTION_DELTA_ATOL
    assert answer.lower <= truth + SELECTION_DELTA_ATOL
    assert answer.lower >= truth * (1 - 1e-4) - 1e-9  # RR has only the two orders (pgf rounding aside)
    for route in answer.routes:
        assert route.upper is None or route.upper >= truth - SELECTION_DELTA_ATOL, route


@pytest.mark.parametrize("law", [Geometric(mean=10), Poisson(10.0), Logarithmic(mean=10), Binomial(10, 0.5)],
                         ids=lambda x: x.name)
@pytest.mark.parametrize("p", [[0.5, 0.3, 0.2], [0.1, 0.2, 0.3, 0.4]])
def test_discrete_pair_through_compose_is_above_the_worst_order(law: selection.Repetitions, p: list[float]) -> None:
    """A DiscretePair base, end to end (the engines' certified curve): above the worst order at several ε."""
    q = p[::-1]
    s = select(DiscretePair(p, q), law)
    pgf = k_pgf(*_reference_law(law))
    for eps in (0.2, 1.0, 2.5):
        truth = float(worst_order_delta(p, q, pgf, eps))
        assert s.delta(eps).upper >= truth - SELECTION_DELTA_ATOL


def test_order_delta_is_the_reference_law() -> None:
    p, q = [0.2, 0.5, 0.3], [0.4, 0.1, 0.5]
    law = Poisson(4.0)
    for eps in (0.0, 0.5, 1.5):
        assert order_delta(p, q, law, eps) == pytest.approx(
            float(best_of_k_delta(p, q, k_pgf("poisson", {"mu": 4.0}), eps)), rel=1e-12, abs=1e-15)


def test_gaussian_lower_end_is_below_the_monotone_order_law() -> None:
    """Gaussian base: the lower end (cells of the loss, both monotone orders) is below the exact law of the
    decreasing-likelihood-ratio order computed by quadrature, and close to it."""
    from scipy.integrate import quad
    from scipy.stats import norm

    mu, law = 0.5, Geometric(0.2)

    def integrand(v: float, eps: float, increasing: bool) -> float:
        z = norm.ppf(v if not increasing else 1 - v)
        big_b = norm.cdf(z + mu) if not increasing else norm.sf(z + mu)
        dens = math.exp(-mu * z - mu * mu / 2)
        a = math.exp(float(law.log_dpgf(big_b))) * dens
        return max(a - math.exp(eps) * math.exp(float(law.log_dpgf(v))), 0.0)

    s = select(Gaussian(sigma=1 / mu), law)
    for eps in (0.3, 1.0):
        lower = s.delta(eps).lower
        exact = max(quad(integrand, 0, 1, args=(eps, inc), limit=400, epsabs=1e-12)[0] for inc in (False, True))
        assert lower <= exact + 1e-9
        assert lower >= 0.9 * exact


# -- the routes against the theorems as written ------------------------------------------------------------
@pytest.mark.parametrize(("eta", "gamma"), [(1.0, 0.1), (0.0, 0.05), (0.5, 0.02), (2.0, 0.3)])
def test_theorem2_matches_the_formula(eta: float, gamma: float) -> None:
    orders = np.asarray(DEFAULT_ORDERS)
    mu = 0.3
    rdp = np.array([float(x) for x in gaussian_rdp(orders, mu)])
    law = TruncatedNegativeBinomial(eta, gamma)
    ours = theorem2(RdpCurve(orders, rdp), law).rdp
    ref = [float(x) for x in ps_theorem2(orders, rdp, eta, gamma, law.mean)]
    ref = np.minimum.accumulate(np.array(ref)[::-1])[::-1]  # RDP is non-decreasing in the order
    assert np.all(ours >= ref * (1 - 1e-15))
    assert ours == pytest.approx(ref, rel=SELECTION_ROUTE_RTOL)


def test_theorem6_matches_the_formula() -> None:
    orders = np.asarray(DEFAULT_ORDERS)
    rdp = np.array([float(x) for x in gaussian_rdp(orders, 0.2)])
    hats = np.linspace(0.3, 1e-4, orders.size)
    ours = theorem6(RdpCurve(orders, rdp), Poisson(7.0), hats).rdp
    ref = np.array([float(x) for x in ps_theorem6(orders, rdp, 7.0, hats)])
    ref = np.minimum.accumulate(np.maximum(ref, 0.0)[::-1])[::-1]
    assert np.all(ours >= ref * (1 - 1e-15))
    assert ours == pytest.approx(ref, rel=SELECTION_ROUTE_RTOL)


def test_theorem2_route_is_dp_accountings_repeat_and_select() -> None:
    """The same inputs give dp_accounting's `_compute_rdp_repeat_and_select` (Thm 2), to rounding."""
    rdp_module = pytest.importorskip("dp_accounting.rdp.rdp_privacy_accountant")
    orders = np.asarray(DEFAULT_ORDERS)
    rdp = optcomp.rdp.gaussian(3.0, orders=orders)
    for shape in (0.0, 1.0, 0.5):
        law = TruncatedNegativeBinomial.from_mean(shape, 10.0)
        theirs = np.asarray(rdp_module._compute_rdp_repeat_and_select(orders, rdp, 10.0, shape))
        ours = theorem2(RdpCurve(orders, rdp), law).rdp
        assert ours == pytest.approx(theirs, rel=1e-8)


def test_pure_routes_are_the_closed_forms() -> None:
    """The closed forms, to within the LOSS_FLOOR charged on ε₀ (2⁻⁴⁰ per loss value)."""
    base = RandomizedResponse(0.7)
    assert select(base, Geometric(0.2)).epsilon(0.0).upper == pytest.approx(3 * 0.7, rel=1e-10)
    assert select(base, TruncatedNegativeBinomial(0.5, 0.2)).epsilon(0.0).upper == pytest.approx(2.5 * 0.7, rel=1e-10)
    assert select(base, Logarithmic(0.2)).epsilon(0.0).upper == pytest.approx(2 * 0.7, rel=1e-10)
    poisson = select(base, Poisson(5.0)).epsilon(0.0)
    assert poisson.upper == pytest.approx(0.7 + 5 * math.tanh(0.35), rel=1e-10)
    assert poisson.route == "pure"
    assert select(Laplace(scale=4.0), Geometric(0.2)).epsilon(0.0).upper == pytest.approx(0.75, rel=1e-10)


@pytest.mark.parametrize("eps0", [0.1, 0.5, 1.5])
@pytest.mark.parametrize("mu", [0.5, 3.0, 20.0])
def test_poisson_pure_bound_is_above_the_exact_randomized_response(eps0: float, mu: float) -> None:
    """ε₀ + μ·tanh(ε₀/2) (docs §3): the exact RR law's δ at that ε is 0, both orders."""
    bound = selection.select(RandomizedResponse(eps0), Poisson(mu)).epsilon(0.0).upper
    p, q = randomized_response_pair(eps0)
    assert float(worst_order_delta(p, q, k_pgf("poisson", {"mu": mu}), bound)) <= SELECTION_DELTA_ATOL


def test_one_run_is_the_base_itself() -> None:
    """K = 1 (Binomial(1)): the selection is the base: its bracket holds the base's δ."""
    base = optcomp.compose(Gaussian(sigma=2.0))
    for eps in (0.2, 1.0):
        truth = base.delta(eps)
        got = select(base, Binomial(1)).delta(eps)
        assert got.upper >= truth.lower
        assert got.upper <= truth.upper * (1 + 1e-2)


def test_routes_name_themselves_and_the_smallest_answers() -> None:
    answer = select(Gaussian(sigma=4.0), Poisson(10.0)).epsilon(1e-6)
    values = {r.route: r.upper for r in answer.routes}
    assert set(values) == set(selection.ROUTES)
    assert answer.upper == min(v for v in values.values() if v is not None)
    assert values[answer.route] == answer.upper
    assert values["pure"] is None and values["composition"] is None
    assert values["rdp-thm6"] is not None and values["profile"] is not None
    assert answer.lower <= answer.upper


def test_dpsgd_base_has_no_lower_end_by_name() -> None:
    run = optcomp.dpsgd.Run.checked(1.1, 0.01, 200, "poisson")
    answer = select(optcomp.compose(*run.items()), Geometric(mean=10)).epsilon(1e-5)
    assert answer.lower == 0.0 and answer.lower_end == "none"
    assert math.isfinite(answer.upper)
    base_eps = optcomp.compose(*run.items()).epsilon(1e-5)
    assert answer.upper > base_eps.lower  # selecting costs something: a sanity check of scale


# -- monotonicity ------------------------------------------------------------------------------------------
def test_epsilon_decreases_in_delta_and_delta_in_epsilon() -> None:
    s = select(Gaussian(sigma=3.0), Geometric(mean=10))
    eps = [s.epsilon(d).upper for d in (1e-3, 1e-6, 1e-9)]
    assert eps == sorted(eps)
    deltas = [s.delta(e).upper for e in (0.5, 1.5, 3.0)]
    assert deltas == sorted(deltas, reverse=True)


def test_more_candidates_cost_more() -> None:
    base = optcomp.compose(Gaussian(sigma=3.0))
    for make in (lambda m: Poisson(m), lambda m: Geometric(mean=m)):
        eps = [select(base, make(m)).epsilon(1e-6).upper for m in (2.0, 20.0)]
        assert eps == sorted(eps)


def test_a_noisier_base_costs_less() -> None:
    eps = [select(Gaussian(sigma=s), Poisson(10.0)).epsilon(1e-6).upper for s in (2.0, 4.0, 8.0)]
    assert eps == sorted(eps, reverse=True)


# -- threshold variant -------------------------------------------------------------------------------------
def test_threshold_variant_pure_bound_and_refusal() -> None:
    t = selection.threshold(Laplace(scale=2.0), 0.1)
    assert t.epsilon(1e-6).upper == pytest.approx(1.0, rel=1e-10)  # 2·ε₀, ε₀ = 0.5
    assert selection.threshold(Laplace(scale=2.0), 1.0).epsilon(0.0).upper == pytest.approx(0.5, rel=1e-10)
    assert selection.threshold(Laplace(scale=2.0), 0.9).epsilon(0.0).upper == pytest.approx(0.5 - math.log(0.9), rel=1e-10)
    with pytest.raises(NotImplementedError, match="pure"):
        selection.threshold(Gaussian(sigma=1.0), 0.1)


# -- bad input ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: TruncatedNegativeBinomial(-1.0, 0.1), "eta"),
        (lambda: TruncatedNegativeBinomial(float("nan"), 0.1), "eta"),
        (lambda: TruncatedNegativeBinomial(5e-324, 0.5), "eta"),  # found by the slow hunt: expm1 underflowed
        (lambda: TruncatedNegativeBinomial(-1e-9, 0.5), "eta"),
        (lambda: TruncatedNegativeBinomial(1.0, 0.0), "gamma"),
        (lambda: TruncatedNegativeBinomial(1.0, 1.0), "gamma"),
        (lambda: Geometric(1.5), "gamma"),
        (lambda: Geometric(), "exactly one"),
        (lambda: Geometric(0.1, mean=3.0), "exactly one"),
        (lambda: Geometric(mean=1.0), "mean"),
        (lambda: TruncatedNegativeBinomial.from_mean(0.5, float("nan")), "mean"),
        (lambda: Poisson(0.0), "mean"),
        (lambda: Poisson(-1.0), "mean"),
        (lambda: Poisson(float("inf")), "mean"),
        (lambda: Binomial(0), "n"),
        (lambda: Binomial(2.5), "n"),  # type: ignore[arg-type]
        (lambda: Binomial(True), "n"),  # type: ignore[arg-type]
        (lambda: Binomial(3, 0.0), "p"),
        (lambda: Binomial(3, 1.5), "p"),
        (lambda: select(Gaussian(sigma=1.0), "poisson"), "repetitions"),  # type: ignore[arg-type]
        (lambda: select(Gaussian(sigma=1.0), Poisson(2.0)).epsilon(-0.1), "delta"),
        (lambda: select(Gaussian(sigma=1.0), Poisson(2.0)).epsilon(1.0), "delta"),
        (lambda: select(Gaussian(sigma=1.0), Poisson(2.0)).epsilon(float("nan")), "delta"),
        (lambda: select(Gaussian(sigma=1.0), Poisson(2.0)).delta(-1.0), "epsilon"),
        (lambda: select(Gaussian(sigma=1.0), Poisson(2.0)).delta(float("nan")), "epsilon"),
        (lambda: select(Gaussian(sigma=1.0), Poisson(2.0), accuracy=1e-3), "accuracy"),  # type: ignore[arg-type]
        (lambda: selection.threshold(Laplace(scale=1.0), 0.0), "stop_probability"),
        (lambda: selection.threshold(Laplace(scale=1.0), 1.5), "stop_probability"),
    ],
)
def test_bad_input_is_a_value_error_naming_the_parameter(make: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        make()  # type: ignore[operator]


def test_subsampled_base_routes() -> None:
    """A DP-SGD step composition answers by all three general routes and they bracket consistently."""
    base = optcomp.compose((PoissonSubsampled(Gaussian(sigma=1.0), sampling_rate=0.02), 200))
    answer = select(base, Poisson(5.0)).epsilon(1e-6)
    values = {r.route: r.upper for r in answer.routes}
    assert values["rdp-thm6"] is not None and values["profile"] is not None
    assert answer.upper == min(values["rdp-thm6"], values["profile"])

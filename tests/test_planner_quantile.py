"""The planner's quantile statistic: the exponential mechanism, its rank error, and its accounting as a
bounded-range (BR) step in every mode (issue 34, item 4).

The references are independent of the planner's code: the exponential mechanism is run exactly (its
output law, in mpmath) on every small dataset, for the sensitivity, the BR width and the rank error; the
accountings are checked against the library's adaptive BR recursion and the pure-ε optimum.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import optcomp as oc
from optcomp.ledger import Ledger
from optcomp.ledger._choices import BoundedRangeRelease
from optcomp.ledger._release import PureDP
from optcomp.planner import (
    MODES,
    PlanError,
    allocate,
    certified_epsilon,
    plan_all,
    plan_from_dict,
    plan_from_text,
    plan_to_toml,
)
from optcomp.planner._accounting import _azuma
from optcomp.planner._noise import components, rank_error
from tests._references.bounded_range import (
    excess_tail,
    exponential_mechanism_law,
    log_ratio_width,
    quantile_counts,
    quantile_utilities,
    worst_case_tail,
)


def _datasets(n: int, G: int) -> list[tuple[int, ...]]:
    return list(itertools.combinations_with_replacement(range(G + 1), n))


@pytest.mark.parametrize(("q", "relation"), [(0.5, "add_remove"), (0.3, "add_remove"), (0.5, "substitution"),
                                             (0.9, "substitution")])
def test_sensitivity_and_bounded_range_on_every_small_dataset(q: float, relation: str) -> None:
    """max |u(x, y) − u(x', y)| over neighbours is the planner's Δ, and the EM with b = 2Δ/ε is ε-BR."""
    G, eps = 4, 0.7
    plan = plan_from_dict({"epsilon": 1.0, "delta": 0.0, "neighbouring": relation, "statistics": [
        {"name": "m", "kind": "quantile", "quantile": q, "candidates": G}]})
    delta_u = components(plan, plan.statistics[0])[0].sensitivity
    b = 2 * delta_u / eps
    worst_diff, worst_width = 0.0, 0.0
    for n in range(1, 5):
        for x in _datasets(n, G):
            ux = quantile_utilities(x, G, q)
            if relation == "add_remove":
                neighbours = [tuple(sorted((*x, s))) for s in range(G + 1)]
            else:
                neighbours = [tuple(sorted((*x[:i], s, *x[i + 1:]))) for i in range(n) for s in range(G + 1)]
            px = exponential_mechanism_law(ux, b)
            for y in neighbours:
                uy = quantile_utilities(y, G, q)
                worst_diff = max(worst_diff, max(abs(a - c) for a, c in zip(ux, uy)))
                worst_width = max(worst_width, log_ratio_width(px, exponential_mechanism_law(uy, b)))
    assert worst_diff == pytest.approx(delta_u, abs=1e-12)  # the planner's Δ is attained, never exceeded
    assert worst_width <= eps * (1 + 1e-12)


@pytest.mark.parametrize(("G", "beta", "q"), [(3, 0.2, 0.5), (5, 0.1, 0.5), (5, 0.3, 0.25)])
def test_rank_error_holds_on_every_small_dataset(G: int, beta: float, q: float) -> None:
    """P[excess rank error > α] ≤ β for the exact EM law on every dataset of up to 7 records, and the
    textbook bound b·ln(G/β) is never below α."""
    b = 1.3
    alpha = rank_error(b, G, beta)
    assert alpha <= b * math.log(G / beta)
    worst = 0.0
    for n in range(1, 8):
        for x in _datasets(n, G):
            p = exponential_mechanism_law(quantile_utilities(x, G, q), b)
            worst = max(worst, excess_tail(p, [abs(c - q * n) for c in quantile_counts(x, G)], alpha))
    assert worst <= beta


def test_rank_error_is_the_exact_worst_case_over_score_vectors() -> None:
    """At α the score vector with every other candidate just above α has tail → β (the bound is tight)."""
    for G, beta, b in [(2, 0.05, 1.0), (121, 0.05, 3.5), (10**6, 0.01, 0.2)]:
        assert worst_case_tail(G, rank_error(b, G, beta), b) == pytest.approx(beta, rel=1e-9)
    assert rank_error(1.0, 2, 0.6) == 0.0  # (G − 1)(1 − β)/β < 1: the best candidate is the likeliest
    assert rank_error(math.inf, 5, 0.05) == math.inf


def _medians(k: int, **extra: Any) -> dict[str, Any]:
    stats = [{"name": f"m{i}", "kind": "quantile", "candidates": 100} for i in range(k)]
    return {"epsilon": 1.0, "delta": 1e-6, "statistics": [{"name": "n", "kind": "count"}, *stats], **extra}


def test_every_mode_composes_the_median_as_a_bounded_range_step() -> None:
    """Per mode, the certified ε of 24 medians at ε_i = 0.1 is below the same steps counted as pure ε-DP
    boxes (where a finer route exists) and above the adaptive BR optimum (a lower end it must not cross)."""
    plan = plan_from_dict(_medians(24))
    eps = [0.1] * 25
    steps = [(0.1, 0.0)] * 25
    truth = oc.compose((oc.Laplace(scale=10.0), 1), (oc.BoundedRange(0.1), 24)).epsilon(1e-6)
    pure_opt = oc.optimal.epsilon(steps, 1e-6).upper
    got = {m: certified_epsilon(plan, m, eps) for m in MODES}
    for m in MODES:
        assert got[m] >= truth.lower, m
    assert got["basic"] == pytest.approx(2.5)
    bounded = [False] + [True] * 24
    as_br = _azuma(steps, bounded, 1e-6, tight=False)
    assert got["advanced"] == pytest.approx(as_br, rel=1e-9) and as_br < _azuma(steps, [False] * 25, 1e-6, tight=False)
    assert got["advanced"] < 4.1 and got["kov"] < got["advanced"]
    assert got["optimal"] < pure_opt - 0.4  # 24 BR steps: far below the pure-ε optimum
    assert got["mechanism_aware"] <= got["optimal"]


def test_allocation_gains_from_bounded_range_accounting() -> None:
    res = plan_all(plan_from_dict(_medians(12)))
    acc = {m: r.statistics[1].accuracy for m, r in res.items()}
    for m, r in res.items():
        assert r.epsilon_certified <= r.epsilon_budget, m
    assert acc["basic"] >= acc["advanced"] >= acc["kov"] and acc["optimal"] < acc["kov"]
    assert acc["mechanism_aware"] <= acc["optimal"] * (1 + 1e-3)
    # the reported rank error is the closed form at the allocated ε (Δ = 1/2: b = 1/ε_i)
    for r in res.values():
        s = r.statistics[1]
        assert s.noise == (pytest.approx(1.0 / s.epsilon),)
        assert s.accuracy == pytest.approx(s.noise[0] * math.log(99 * 0.95 / 0.05))


def test_zero_delta_plan_with_a_median_is_pure() -> None:
    plan = plan_from_dict({**_medians(3), "delta": 0.0})
    for m in MODES:
        r = allocate(plan, m)
        assert r.epsilon_certified <= 1.0 and sum(s.epsilon for s in r.statistics) == pytest.approx(1.0, rel=1e-3)


@pytest.mark.parametrize(
    ("stat", "pattern"),
    [
        ({"kind": "quantile"}, r"'m' \(#1\): field 'candidates' is required for a quantile"),
        ({"kind": "quantile", "candidates": 1}, r"field 'candidates' must be an integer in \[2, 2\*\*53\], got 1"),
        ({"kind": "quantile", "candidates": 9, "quantile": 1.0}, r"field 'quantile' must be in \(0, 1\), got 1.0"),
        ({"kind": "quantile", "candidates": 9, "mechanism": "laplace"},
         r"field 'mechanism' of a quantile must be exponential, got 'laplace'"),
        ({"kind": "count", "mechanism": "gumbel_max"}, r"field 'mechanism' exponential releases a quantile only"),
        ({"kind": "count", "candidates": 3}, r"field 'candidates' applies to a quantile only, not a count"),
        ({"kind": "quantile", "candidates": 9, "lower": 0, "upper": 1}, r"fields 'lower'/'upper' apply to a sum"),
    ],
)
def test_bad_quantiles_are_named(stat: dict[str, Any], pattern: str) -> None:
    with pytest.raises(PlanError, match=pattern):
        plan_from_dict({"epsilon": 1.0, "delta": 0.0, "statistics": [{"name": "m", **stat}]})


def test_quantile_round_trips_and_defaults_to_the_median() -> None:
    plan = plan_from_dict({"epsilon": 1.0, "delta": 0.0, "statistics": [
        {"name": "m", "kind": "quantile", "candidates": 7}, {"name": "p9", "kind": "quantile", "quantile": 0.9,
                                                              "candidates": 1000, "mechanism": "bounded_range"}]})
    assert plan.statistics[0].quantile == 0.5 and plan.statistics[0].mechanism == "exponential"
    assert plan.statistics[1].mechanism == "exponential"
    assert plan_from_text(plan_to_toml(plan), fmt="toml") == plan


def test_plan_ledger_charges_the_median_as_a_bounded_range_slot(tmp_path: Any) -> None:
    from optcomp.ledger._plan import dominated, slots_from_planner

    plan = plan_from_dict(_medians(3))
    result = allocate(plan, "optimal")
    slots = slots_from_planner(plan, result)
    assert [s.kind for s in slots] == ["pure", "br", "br", "br"]
    led = Ledger.create(str(tmp_path / "p.ledger"), dataset="d", relation="add_remove", epsilon=1, delta="1e-6",
                        mode="plan", plan=slots)
    assert float.fromhex(led.report()["certificate"]["upper"]) <= 1.0
    e = Fraction(result.statistics[1].epsilon)
    assert dominated(BoundedRangeRelease(e), slots[1]) and dominated(BoundedRangeRelease(e / 2), slots[1])
    assert not dominated(BoundedRangeRelease(e * 2), slots[1]) and not dominated(PureDP(e / 2), slots[1])
    led.close()


def test_a_quantile_can_be_locked_at_a_rank_error() -> None:
    plan = plan_from_dict({"epsilon": 2.0, "delta": 1e-6, "statistics": [
        {"name": "n", "kind": "count"},
        {"name": "m", "kind": "quantile", "candidates": 1000, "lock_accuracy": 50.0}]})
    for mode in ("basic", "optimal"):
        r = allocate(plan, mode)
        m = r.statistics[1]
        assert m.locked == "accuracy" and m.accuracy <= 50.0
        assert rank_error(1.0 / (m.epsilon * (1 - 2e-6)), 1000, 0.05) > 50.0  # the least ε_i (to 1e-6 relative)
        assert r.epsilon_certified <= 2.0


_quantile_stat = st.fixed_dictionaries({
    "kind": st.sampled_from(["count", "sum", "quantile", "quantile"]),
    "mechanism": st.sampled_from(["laplace", "gaussian"]),
    "q": st.floats(0.01, 0.99),
    "candidates": st.integers(2, 10**6),
    "weight": st.floats(0.1, 10.0),
})


@pytest.mark.slow  # each plan with a quantile runs the adaptive BR recursion (about 1 s per evaluation)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=st.lists(_quantile_stat, min_size=1, max_size=5), eps=st.floats(0.3, 4.0),
       delta=st.sampled_from([0.0, 1e-8, 1e-5]), relation=st.sampled_from(["add_remove", "substitution"]))
def test_random_plans_with_quantiles_are_certified_in_every_mode(
    raw: list[dict[str, Any]], eps: float, delta: float, relation: str
) -> None:
    stats = []
    for i, r in enumerate(raw):
        s: dict[str, Any] = {"name": f"s{i}", "kind": r["kind"], "weight": r["weight"]}
        if r["kind"] == "quantile":
            s.update(quantile=r["q"], candidates=r["candidates"])
        else:
            s["mechanism"] = r["mechanism"] if delta > 0 else "laplace"
            if r["kind"] == "sum":
                s.update(lower=0, upper=10)
            elif relation == "substitution":
                continue  # a count is public under substitution
        stats.append(s)
    if not stats:
        return
    plan = plan_from_dict({"epsilon": eps, "delta": delta, "neighbouring": relation, "statistics": stats})
    res = plan_all(plan)
    basic = res["basic"].scale
    for mode, r in res.items():
        assert r.epsilon_certified <= r.epsilon_budget, mode
        assert certified_epsilon(plan, mode, [s.epsilon for s in r.statistics]) <= eps * (1 + 1e-12), mode
        assert r.scale >= basic * (1 - 1e-3), mode  # no mode is worse than basic composition

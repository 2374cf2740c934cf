"""Adaptive composition: the natural filter's violation, every shipped filter's validity on every
randomized-response tree of depth ≤ 4 over a menu, and the per-mode counts of docs/ledger.md.

References are independent of the ledger (``tests._references.ledger``): RR transcripts are enumerated
leaf by leaf and their hockey-stick divergence computed with mpmath; thresholds and counts are recomputed
from the closed forms (Bun–Steinke Prop 1.3, Canonne–Kamath–Steinke Prop 12, Mironov Prop 5, Dong–Roth–Su
Cor. 2.13, the binomial form of KOV Thm III.3)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optcomp import optimal
from optcomp.ledger import (
    CURRENCIES,
    BudgetExceeded,
    Currency,
    Ledger,
    PureDP,
    best_order,
    bulk_admitted,
    make_currency,
)
from optcomp.rdp import DEFAULT_ORDERS
from tests._references import (
    admitted_counts,
    at_precision,
    decimal,
    rr_path_delta,
    rr_tree_deltas,
    rr_worst_tree,
)

#: Adaptive-tree enumeration runs at this many digits (the margins it checks are ≥ 1e-3 relative).
TREE_DPS = 30
#: The §1 counterexample's numbers are quoted to this absolute precision in docs/ledger.md.
QUOTED_ATOL = 5e-6

Tree = tuple[Fraction, Any, Any] | None  # (ε, subtree after output 0, subtree after output 1)
COUNTEREXAMPLE: Tree = (
    Fraction(1, 10),
    (Fraction(1, 2), (Fraction(1, 5), None, None), (Fraction(1, 5), None, None)),
    (Fraction(3, 5), None, None),
)


def test_counterexample_tree_violates_the_natural_filter() -> None:
    forward, reverse = rr_tree_deltas(COUNTEREXAMPLE, 0.5)
    assert abs(forward - decimal("0.07691")) < QUOTED_ATOL
    assert abs(reverse - decimal("0.0466")) < 10 * QUOTED_ATOL
    a, b = rr_path_delta([Fraction(1, 10), Fraction(3, 5)], 0.5), rr_path_delta([Fraction(1, 10), Fraction(1, 2), Fraction(1, 5)], 0.5)
    assert abs(a - decimal("0.06144")) < QUOTED_ATOL and abs(b - decimal("0.06204")) < QUOTED_ATOL
    # the library's optimal composition agrees (certified bracket around the 50-digit value)
    for path, ref in (([0.1, 0.6], a), ([0.1, 0.5, 0.2], b)):
        br = optimal.delta([(e, 0.0) for e in path], 0.5)
        assert br.lower <= float(ref) * (1 + QUOTED_ATOL) and float(ref) * (1 - QUOTED_ATOL) <= br.upper
    # a natural filter at (0.5, 0.0621) admits every prefix of both paths, yet δ(0.5) = 0.0769
    budget = decimal("0.0621")
    for path in ([0.1], [0.1, 0.6], [0.1, 0.5], [0.1, 0.5, 0.2]):
        assert rr_path_delta([Fraction(str(e)) for e in path], 0.5) <= budget
    assert forward > budget


@pytest.mark.parametrize("name", CURRENCIES)
def test_every_filter_refuses_the_counterexample(name: str) -> None:
    cur = make_currency(name, "0.5", "0.0621", **_opts(name))
    admitted = [_admits(cur, [Fraction(1, 10), Fraction(3, 5)]), _admits(cur, [Fraction(1, 10), Fraction(1, 2), Fraction(1, 5)])]
    assert not all(admitted)


def test_ledger_refuses_the_counterexample(tmp_path: Any) -> None:
    led = Ledger.create(str(tmp_path / "l"), dataset="d", relation="add_remove", epsilon="0.5", delta="0.0621", currency="zcdp")
    led.charge("1", PureDP("0.1"))
    with pytest.raises(BudgetExceeded):
        led.charge("2", PureDP("0.6"))
    led.close()


def _budget_left(epsilon: object, delta: object, order: float) -> bool:
    try:
        make_currency("rdp", epsilon, delta, orders=[order])
    except ValueError:
        return False
    return True


def _opts(name: str) -> dict[str, Any]:
    """rdp: the order of DEFAULT_ORDERS best for the menu's middle release, chosen at creation."""
    return {"workload": PureDP("0.3")} if name == "rdp" else {}


def _admits(cur: Currency, path: list[Fraction]) -> bool:
    """Whether the filter lets the whole path run (its own rule: for rdp, a union of two filters)."""
    spent = tuple(Fraction(0) for _ in cur.thresholds)
    for e in path:
        spent = tuple(s + c for s, c in zip(spent, cur.charge(PureDP(e)), strict=True))
        if not cur.within(spent):
            return False
    return True


MENU = [Fraction(1, 10), Fraction(1, 5), Fraction(3, 10), Fraction(1, 2), Fraction(3, 5)]


def test_natural_filter_fails_on_the_enumerated_trees() -> None:
    with at_precision(TREE_DPS):
        budget = decimal("0.0621")
        worst = rr_worst_tree(MENU, 3, 0.5, lambda path: rr_path_delta(path, 0.5) <= budget)
        assert worst >= decimal("0.0769")


@pytest.mark.parametrize("name", CURRENCIES)
@pytest.mark.parametrize(("eps", "delta"), [("0.5", "0.0621"), ("1", "0.001")])
def test_every_filter_keeps_every_tree_of_depth_4_within_budget(name: str, eps: str, delta: str) -> None:
    cur = make_currency(name, eps, delta, **_opts(name))
    with at_precision(TREE_DPS):
        worst = rr_worst_tree(MENU, 4, float(eps), lambda path: _admits(cur, path))
        assert worst <= decimal(delta)


# --- queries admitted at (1, 1e-6), RR(ε_i) repeated ------------------------------------------------


#: The per-mode table of docs/ledger.md (pinned; each row also recomputed by ``admitted_counts``).
TABLE = {
    Fraction(1, 100): {"basic": 100, "approx-zcdp": 349, "zcdp": 487, "rdp": 490, "gdp": 356, "plan": 562},
    Fraction(1, 10): {"basic": 10, "approx-zcdp": 3, "zcdp": 4, "rdp": 10, "gdp": 3, "plan": 10},
}


@pytest.mark.parametrize("ei", list(TABLE))
def test_queries_admitted_per_mode(ei: Fraction) -> None:
    ref = admitted_counts(ei, DEFAULT_ORDERS)
    assert ref == TABLE[ei]
    got: dict[str, int] = {}
    for name in CURRENCIES:
        opts = {"orders": [best_order(PureDP(ei), 1, "1e-6")]} if name == "rdp" else {}
        got[name] = bulk_admitted(make_currency(name, 1, "1e-6", **opts), PureDP(ei), 10**4)
    k = ref["plan"]
    pairs = [(float(ei), 0.0)]
    assert optimal.epsilon(pairs * k, 1e-6).upper <= 1.0 < optimal.epsilon(pairs * (k + 1), 1e-6).lower
    got["plan"] = k
    assert got == TABLE[ei]


def test_count_through_a_real_ledger(tmp_path: Any) -> None:
    led = Ledger.create(str(tmp_path / "l"), dataset="d", relation="add_remove", epsilon=1, delta="1e-6", currency="zcdp")
    led.charge_many([(f"q{i}", PureDP("0.01")) for i in range(487)])
    with pytest.raises(BudgetExceeded):
        led.charge("q487", PureDP("0.01"))
    assert led.fits(PureDP("0.01")) == 0 and led.verify().ok
    led.close()
    with pytest.raises(ValueError, match="does not fit"):
        Ledger.create(str(tmp_path / "p"), dataset="d", relation="add_remove", epsilon=1, delta="1e-6", mode="plan",
                      plan=[PureDP("0.01")] * 563)
    plan = Ledger.create(str(tmp_path / "p"), dataset="d", relation="add_remove", epsilon=1, delta="1e-6", mode="plan",
                         plan=[PureDP("0.01")] * 562)
    assert plan.fits(PureDP("0.01")) == 562
    plan.close()


def test_float_parameters_are_their_binary_values() -> None:
    """The float 0.01 is 0.0100000000000000002081…: 100 of them exceed ε = 1 exactly (99 fit)."""
    assert bulk_admitted(make_currency("basic", 1, 0), PureDP(0.01), 200) == 99
    assert bulk_admitted(make_currency("basic", 1, 0), PureDP("0.01"), 200) == 100


# --- rdp never admits fewer releases than basic (issue 27, item 4) ----------------------------------------

#: The orders of DEFAULT_ORDERS that leave an RDP budget at (1, 1e-6) (the others are refused at creation).
ORDERS_WITH_BUDGET = [a for a in DEFAULT_ORDERS if _budget_left(1, "1e-6", float(a))]


def _halts_after(cur: Currency, stream: list[Fraction]) -> int:
    """How many releases of ``stream`` a filter admits before it first refuses one (RRUV's halting)."""
    spent = tuple(Fraction(0) for _ in cur.thresholds)
    for n, e in enumerate(stream):
        spent = tuple(s + c for s, c in zip(spent, cur.charge(PureDP(e)), strict=True))
        if not cur.within(spent):
            return n
    return len(stream)


def test_rdp_with_the_issue_input_admits_at_least_basic() -> None:
    """Issue 27 item 4, exactly: PureDP(0.01) at (1, 1e-6). The default grid's intersection admitted 95
    (< basic's 100); a grid without a workload is now refused, and every single order of that grid
    admits at least 100 (the union with pure basic), the best one 490."""
    with pytest.raises(ValueError, match="orders"):
        make_currency("rdp", 1, "1e-6")
    counts = [bulk_admitted(make_currency("rdp", 1, "1e-6", orders=[a]), PureDP("0.01"), 10**4)
              for a in ORDERS_WITH_BUDGET]
    assert min(counts) >= 100 and max(counts) == 490
    chosen = make_currency("rdp", 1, "1e-6", workload=PureDP("0.01"))
    assert chosen.options["orders"] == ["0x1.6000000000000p+4"]  # α = 22
    assert bulk_admitted(chosen, PureDP("0.01"), 10**4) == 490


@settings(max_examples=60, deadline=None)
@given(stream=st.lists(st.sampled_from([Fraction(1, 100), Fraction(1, 20), Fraction(1, 10), Fraction(1, 3),
                                        Fraction(1, 2), Fraction(1)]), min_size=1, max_size=60),
       budget=st.sampled_from([(1, "1e-6"), ("1/2", "1e-3"), (2, "1e-9")]),
       pick=st.integers(min_value=0, max_value=10**6))
def test_rdp_never_halts_before_basic(stream: list[Fraction], budget: tuple[object, str], pick: int) -> None:
    """On every stream of pure releases the rdp filter (any order of the grid that leaves a budget)
    runs at least as long as basic's at the same budget: it is rdp ∪ pure basic."""
    orders = [a for a in DEFAULT_ORDERS if _budget_left(*budget, float(a))]
    rdp = make_currency("rdp", *budget, orders=[orders[pick % len(orders)]])
    assert _halts_after(rdp, stream) >= _halts_after(make_currency("basic", *budget), stream)

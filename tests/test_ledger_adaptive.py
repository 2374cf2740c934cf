"""Adaptive composition: the natural filter's violation, every shipped filter's validity on every
randomized-response tree of depth ≤ 4 over a menu, and the per-mode counts of docs/ledger.md.

References are independent of the ledger: RR transcripts are enumerated leaf by leaf and their
hockey-stick divergence computed with mpmath; thresholds and counts are recomputed here from the
closed forms (Bun–Steinke Prop 1.3, Canonne–Kamath–Steinke Prop 12, Mironov Prop 5, Dong–Roth–Su
Cor. 2.13, the binomial form of KOV Thm III.3)."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

import mpmath
import pytest

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
from tests.tolerances import MPMATH_DPS

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


def _p(eps: Fraction) -> mpmath.mpf:
    """P[RR(ε) reports the true bit] = e^ε/(1 + e^ε)."""
    e = mpmath.mpf(eps.numerator) / eps.denominator
    return 1 / (1 + mpmath.exp(-e))


def _leaves(tree: Tree, p: mpmath.mpf, q: mpmath.mpf) -> list[tuple[mpmath.mpf, mpmath.mpf]]:
    """(P, Q) of every transcript: P with the individual's bit 1, Q with it 0."""
    if tree is None:
        return [(p, q)]
    e, on0, on1 = tree
    t = _p(e)
    return _leaves(on1, p * t, q * (1 - t)) + _leaves(on0, p * (1 - t), q * t)


def hockey(pairs: list[tuple[mpmath.mpf, mpmath.mpf]], eps: float) -> tuple[mpmath.mpf, mpmath.mpf]:
    """δ(ε) in both directions: Σ (P − e^ε Q)_+ and Σ (Q − e^ε P)_+."""
    k = mpmath.exp(mpmath.mpf(eps))
    return (mpmath.fsum(max(0, p - k * q) for p, q in pairs), mpmath.fsum(max(0, q - k * p) for p, q in pairs))


def path_delta(path: list[Fraction], eps: float) -> mpmath.mpf:
    """Optimal δ(ε) of the non-adaptive composition RR(ε_1) ⊗ … (exact: all 2^k outputs)."""
    tree: Tree = None
    for e in reversed(path):
        tree = (e, tree, tree)
    return hockey(_leaves(tree, mpmath.mpf(1), mpmath.mpf(1)), eps)[0]


def test_counterexample_tree_violates_the_natural_filter() -> None:
    with mpmath.workdps(MPMATH_DPS):
        forward, reverse = hockey(_leaves(COUNTEREXAMPLE, mpmath.mpf(1), mpmath.mpf(1)), 0.5)
        assert abs(forward - mpmath.mpf("0.07691")) < QUOTED_ATOL
        assert abs(reverse - mpmath.mpf("0.0466")) < 10 * QUOTED_ATOL
        a, b = path_delta([Fraction(1, 10), Fraction(3, 5)], 0.5), path_delta([Fraction(1, 10), Fraction(1, 2), Fraction(1, 5)], 0.5)
        assert abs(a - mpmath.mpf("0.06144")) < QUOTED_ATOL and abs(b - mpmath.mpf("0.06204")) < QUOTED_ATOL
        # the library's optimal composition agrees (certified bracket around the 50-digit value)
        for path, ref in (([0.1, 0.6], a), ([0.1, 0.5, 0.2], b)):
            br = optimal.delta([(e, 0.0) for e in path], 0.5)
            assert br.lower <= float(ref) * (1 + QUOTED_ATOL) and float(ref) * (1 - QUOTED_ATOL) <= br.upper
        # a natural filter at (0.5, 0.0621) admits every prefix of both paths, yet δ(0.5) = 0.0769
        budget = mpmath.mpf("0.0621")
        for path in ([0.1], [0.1, 0.6], [0.1, 0.5], [0.1, 0.5, 0.2]):
            assert path_delta([Fraction(str(e)) for e in path], 0.5) <= budget
        assert forward > budget


@pytest.mark.parametrize("name", CURRENCIES)
def test_every_filter_refuses_the_counterexample(name: str) -> None:
    cur = make_currency(name, "0.5", "0.0621", **_opts(name))
    admitted = [_admits(cur, [Fraction(1, 10), Fraction(3, 5)]), _admits(cur, [Fraction(1, 10), Fraction(1, 2), Fraction(1, 5)])]
    assert not all(admitted)


def test_ledger_refuses_the_counterexample(tmp_path: Any) -> None:
    led = Ledger.create(str(tmp_path / "l"), dataset="d", relation="r", epsilon="0.5", delta="0.0621", currency="zcdp")
    led.charge("1", PureDP("0.1"))
    with pytest.raises(BudgetExceeded):
        led.charge("2", PureDP("0.6"))
    led.close()


def _opts(name: str) -> dict[str, Any]:
    """rdp: the default grid (DEFAULT_ORDERS where the budget is positive) — every order at once."""
    return {}


def _admits(cur: Currency, path: list[Fraction]) -> bool:
    spent = tuple(Fraction(0) for _ in cur.thresholds)
    for e in path:
        spent = tuple(s + c for s, c in zip(spent, cur.charge(PureDP(e)), strict=True))
        if any(s > t for s, t in zip(spent, cur.thresholds, strict=True)):
            return False
    return True


def worst_tree(menu: list[Fraction], depth: int, eps: float,
               admits: Callable[[list[Fraction]], bool]) -> mpmath.mpf:
    """max over every RR tree of depth ≤ ``depth`` whose every path the filter admits, of the
    transcript's δ(ε) (forward; the reverse is the same maximum by relabelling outputs). The maximum
    splits over nodes because δ is a sum over leaves and each node's choice is free."""
    k = mpmath.exp(mpmath.mpf(eps))

    def v(hist: list[Fraction], p: mpmath.mpf, q: mpmath.mpf) -> mpmath.mpf:
        best = max(mpmath.mpf(0), p - k * q)
        if len(hist) < depth:
            for e in menu:
                if admits([*hist, e]):
                    t = _p(e)
                    best = max(best, v([*hist, e], p * t, q * (1 - t)) + v([*hist, e], p * (1 - t), q * t))
        return best

    return v([], mpmath.mpf(1), mpmath.mpf(1))


MENU = [Fraction(1, 10), Fraction(1, 5), Fraction(3, 10), Fraction(1, 2), Fraction(3, 5)]


def test_natural_filter_fails_on_the_enumerated_trees() -> None:
    with mpmath.workdps(TREE_DPS):
        budget = mpmath.mpf("0.0621")
        worst = worst_tree(MENU, 3, 0.5, lambda path: path_delta(path, 0.5) <= budget)
        assert worst >= mpmath.mpf("0.0769")


@pytest.mark.parametrize("name", CURRENCIES)
@pytest.mark.parametrize(("eps", "delta"), [("0.5", "0.0621"), ("1", "0.001")])
def test_every_filter_keeps_every_tree_of_depth_4_within_budget(name: str, eps: str, delta: str) -> None:
    cur = make_currency(name, eps, delta, **_opts(name))
    with mpmath.workdps(TREE_DPS):
        worst = worst_tree(MENU, 4, float(eps), lambda path: _admits(cur, path))
        assert worst <= mpmath.mpf(delta)


# --- queries admitted at (1, 1e-6), RR(ε_i) repeated ------------------------------------------------


def _ref_counts(ei: Fraction) -> dict[str, int]:
    """Independent 50-digit counts (closed forms; one order for RDP, chosen over DEFAULT_ORDERS)."""
    with mpmath.workdps(MPMATH_DPS):
        eps, delta = mpmath.mpf(1), mpmath.mpf(10) ** -6
        e = mpmath.mpf(ei.numerator) / ei.denominator
        L = -mpmath.log(delta)
        out = {"basic": int(1 / ei)}
        out["approx-zcdp"] = int(mpmath.floor((mpmath.sqrt(L + eps) - mpmath.sqrt(L)) ** 2 / (e * e / 2)))

        def offset(a: mpmath.mpf) -> mpmath.mpf:
            return mpmath.log(1 - 1 / a) - (mpmath.log(delta) + mpmath.log(a)) / (a - 1)

        a_star = mpmath.findroot(lambda a: mpmath.diff(lambda x: (eps - offset(x)) / x, a), 20)
        out["zcdp"] = int(mpmath.floor((eps - offset(a_star)) / a_star / (e * e / 2)))
        p = _p(ei)

        def rr(a: mpmath.mpf) -> mpmath.mpf:
            return mpmath.log(p**a * (1 - p) ** (1 - a) + (1 - p) ** a * p ** (1 - a)) / (a - 1)

        out["rdp"] = max(int(mpmath.floor((eps - offset(mpmath.mpf(a))) / rr(mpmath.mpf(a))))
                         for a in DEFAULT_ORDERS if eps > offset(mpmath.mpf(a)))
        mu_i = 2 * mpmath.sqrt(2) * mpmath.erfinv(2 * p - 1)
        mu = mpmath.findroot(lambda m: mpmath.ncdf(-eps / m + m / 2) - mpmath.e * mpmath.ncdf(-eps / m - m / 2) - delta,
                             (mpmath.mpf("0.01"), mpmath.mpf(5)), solver="bisect")
        out["gdp"] = int(mpmath.floor(mu**2 / mu_i**2))

        def plan_delta(k: int) -> mpmath.mpf:  # k-fold RR(ε_i) at ε = 1: E_P[(1 − e^{1 − L})_+], L = ε_i(k − 2j)
            return mpmath.fsum(mpmath.binomial(k, j) * p ** (k - j) * (1 - p) ** j
                               * max(0, 1 - mpmath.exp(eps - e * (k - 2 * j))) for j in range(k + 1))

        lo, hi = int(1 / ei), 20 * int(1 / ei)  # plan_delta(lo) = 0 ≤ δ < plan_delta(hi); δ grows with k
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if plan_delta(mid) <= delta else (lo, mid)
        out["plan"] = lo
    return out


#: The per-mode table of docs/ledger.md (pinned; each row also recomputed by _ref_counts).
TABLE = {
    Fraction(1, 100): {"basic": 100, "approx-zcdp": 349, "zcdp": 487, "rdp": 490, "gdp": 356, "plan": 562},
    Fraction(1, 10): {"basic": 10, "approx-zcdp": 3, "zcdp": 4, "rdp": 10, "gdp": 3, "plan": 10},
}


@pytest.mark.parametrize("ei", list(TABLE))
def test_queries_admitted_per_mode(ei: Fraction) -> None:
    ref = _ref_counts(ei)
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
    led = Ledger.create(str(tmp_path / "l"), dataset="d", relation="r", epsilon=1, delta="1e-6", currency="zcdp")
    led.charge_many([(f"q{i}", PureDP("0.01")) for i in range(487)])
    with pytest.raises(BudgetExceeded):
        led.charge("q487", PureDP("0.01"))
    assert led.fits(PureDP("0.01")) == 0 and led.verify().ok
    led.close()
    with pytest.raises(ValueError, match="does not fit"):
        Ledger.create(str(tmp_path / "p"), dataset="d", relation="r", epsilon=1, delta="1e-6", mode="plan",
                      plan=[PureDP("0.01")] * 563)
    plan = Ledger.create(str(tmp_path / "p"), dataset="d", relation="r", epsilon=1, delta="1e-6", mode="plan",
                         plan=[PureDP("0.01")] * 562)
    assert plan.fits(PureDP("0.01")) == 562
    plan.close()


def test_float_parameters_are_their_binary_values() -> None:
    """The float 0.01 is 0.0100000000000000002081…: 100 of them exceed ε = 1 exactly (99 fit)."""
    assert bulk_admitted(make_currency("basic", 1, 0), PureDP(0.01), 200) == 99
    assert bulk_admitted(make_currency("basic", 1, 0), PureDP("0.01"), 200) == 100

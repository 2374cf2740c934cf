"""optcomp.ledger: protocol, exactness, plan mode, reports and validation, on SQLite and PostgreSQL."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from fractions import Fraction
from typing import Any

import pytest

from optcomp.ledger import (
    CURRENCIES,
    ApproxDP,
    BatchRelease,
    BudgetExceeded,
    ChargeError,
    GaussianRelease,
    LaplaceRelease,
    Ledger,
    PureDP,
    ReleaseIdConflict,
    StoreError,
    ZCDPRelease,
    bulk_admitted,
    decode,
    encode,
    exact,
    from_json,
    from_mechanism,
    make_currency,
)
from optcomp.mechanisms import EpsilonDelta, Gaussian, Laplace, RandomizedResponse
from tests._references import approx_zcdp_rho_star, gdp_delta_at_mu_squared
from tests.tolerances import EXACT_RTOL

Site = Any
#: Relative width (10^-30) in which a rounded threshold must sit below its 50-digit value (outward margin 1e-40).
THRESHOLD_RTOL_LOG10 = -30
#: Relative step that must push a reported σ / ε across the admission boundary (they are float-tight).
USER_UNIT_RTOL = 2.0**-40
#: GDP: RR(ε) and G_μ(ε) touch at ε, so δ_μ(ε) vanishes up to float rounding.
TOUCH_ATOL = 2.0**-40


def basic(site: Site, epsilon: object = 5, delta: object = 0) -> Ledger:
    led: Ledger = site.create(dataset="d", relation="add_remove", epsilon=epsilon, delta=delta, currency="basic")
    return led


# --- protocol -------------------------------------------------------------------------------------


def test_charge_admits_exactly_and_refuses_after(ledger_site: Site) -> None:
    led = basic(ledger_site)
    for i in range(40):
        led.charge(f"r{i}", PureDP("1/8"))
    with pytest.raises(BudgetExceeded, match="in ε"):
        led.charge("r40", PureDP("1/8"))
    assert led.spent() == (Fraction(5), Fraction(0))
    assert led.verify().ok
    led.close()


def test_retry_is_idempotent_and_conflict_is_an_error(ledger_site: Site) -> None:
    led = basic(ledger_site)
    t1 = led.charge("a", PureDP("0.5"))
    t2 = led.charge("a", PureDP("0.5"))
    assert (t2.replay, t2.seq, t2.charge) == (True, t1.seq, t1.charge)
    with pytest.raises(ReleaseIdConflict, match="'a'"):
        led.charge("a", PureDP("0.25"))
    assert led.spent()[0] == Fraction(1, 2)
    led.close()


def test_status_transitions_and_void(ledger_site: Site) -> None:
    led = basic(ledger_site)
    led.charge("a", PureDP(1))
    led.charge("b", PureDP(1))
    assert led.released("a", "sha").status == "released"
    assert led.released("a", "sha").replay
    with pytest.raises(ValueError, match="released"):
        led.void("a", "too late")
    with pytest.raises(ValueError, match="reason"):
        led.void("b", " ")
    assert led.void("b", "job failed before reading data").status == "voided"
    with pytest.raises(ValueError, match="never charged"):
        led.released("zzz")
    assert led.spent()[0] == 1  # the void refunded b, a still counts
    assert {t.release_id: t.status for t in led.tickets()} == {"a": "released", "b": "voided"}
    events = led.export()["events"]
    assert [e["kind"] for e in events] == ["charge", "charge", "released", "void"]
    assert events[-1]["body"]["reason"] == "job failed before reading data"
    assert led.verify().ok
    led.close()


def test_context_manager_charges_before_running_and_never_refunds(ledger_site: Site) -> None:
    led = basic(ledger_site)
    ran = []
    with led.release("ok", PureDP(1)) as run:
        assert led.tickets()[0].status == "charged"  # committed before the body runs
        ran.append(1)
        run.output = 123
    assert led.tickets()[0].status == "released"
    with pytest.raises(RuntimeError, match="boom"), led.release("fails", PureDP(1)):
        raise RuntimeError("boom")
    assert {t.release_id: t.status for t in led.tickets()}["fails"] == "charged"
    assert led.spent()[0] == 2
    with pytest.raises(BudgetExceeded), led.release("too-big", PureDP(4)):
        ran.append(2)
    assert ran == [1]
    led.close()


def test_charge_many_is_all_or_nothing(ledger_site: Site) -> None:
    led = basic(ledger_site, epsilon=1)
    with pytest.raises(BudgetExceeded):
        led.charge_many([("a", PureDP("0.5")), ("b", PureDP("0.5")), ("c", PureDP("0.5"))])
    assert led.tickets() == []
    ts = led.charge_many([("a", PureDP("0.5")), ("a", PureDP("0.5")), ("b", PureDP("0.5"))])
    assert [t.replay for t in ts] == [False, True, False]
    assert led.spent()[0] == 1 and led.verify().ok
    led.close()


FORBIDDEN = ["DELETE FROM events", "UPDATE events SET body = 'x'", "DELETE FROM releases",
             "UPDATE releases SET status = 'charged' WHERE release_id = 'b'",
             "UPDATE releases SET charge = '[]' WHERE release_id = 'a'", "UPDATE meta SET config = '{}'",
             "DELETE FROM state"]


def test_append_only_triggers(ledger_site: Site) -> None:
    led = basic(ledger_site)
    led.charge("a", PureDP(1))
    led.charge("b", PureDP(1))
    led.released("b")
    led.close()
    if ledger_site.kind == "sqlite":
        conn = sqlite3.connect(ledger_site.location)
        for sql in FORBIDDEN:
            with pytest.raises(sqlite3.DatabaseError, match="append-only"):
                conn.execute(sql)
        conn.close()
        return
    import psycopg

    with psycopg.connect(ledger_site.location, autocommit=True) as conn:
        conn.execute(f"SET search_path TO {ledger_site.schema}")
        for sql in FORBIDDEN:
            with pytest.raises(psycopg.Error, match="append-only"):
                conn.execute(sql)
    assert ledger_site.open().verify().ok


def test_tampering_is_detected_by_verify(tmp_path: Any) -> None:
    path = str(tmp_path / "l.ledger")
    led = Ledger.create(path, dataset="d", relation="add_remove", epsilon=5, delta=0, currency="basic")
    led.charge("a", PureDP(1))
    led.close()
    conn = sqlite3.connect(path)
    conn.execute("DROP TRIGGER events_no_update")
    conn.execute("UPDATE events SET body = replace(body, '0x1.0000000000000p+0', '0x1.0000000000000p-1')")
    conn.commit()
    conn.close()
    problems = Ledger.open(path).verify().problems
    assert any("hash chain" in p for p in problems)
    assert any("cached state" in p for p in problems)


def test_reopen_in_a_new_process_never_regains_budget(tmp_path: Any) -> None:
    path = str(tmp_path / "l.ledger")
    Ledger.create(path, dataset="d", relation="add_remove", epsilon=1, delta=0, currency="basic").close()
    script = ("import sys\nfrom optcomp.ledger import Ledger, PureDP, BudgetExceeded\n"
              "led = Ledger.open(sys.argv[1]); n = 0\n"
              "for i in range(10):\n"
              "    try:\n        led.charge(sys.argv[2] + str(i), PureDP('0.25')); n += 1\n"
              "    except BudgetExceeded:\n        pass\n"
              "print(n)\n")
    first = subprocess.run([sys.executable, "-c", script, path, "p"], capture_output=True, text=True, check=True)
    second = subprocess.run([sys.executable, "-c", script, path, "q"], capture_output=True, text=True, check=True)
    assert (first.stdout.strip(), second.stdout.strip()) == ("4", "0")
    led = Ledger.open(path)
    assert led.spent()[0] == 1 and led.verify().ok


def test_create_refuses_existing_and_open_refuses_missing(ledger_site: Site, tmp_path: Any) -> None:
    basic(ledger_site).close()
    with pytest.raises(StoreError, match="exists"):
        basic(ledger_site)
    with pytest.raises(ValueError, match="ledger"):
        Ledger.open(str(tmp_path / "missing.ledger"))


# --- exactness ------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [0.1, 1e-17, "0.01", "1/3", Fraction(2, 7), 5, "0x1.8p-3", 2.0**-1074])
def test_parameters_round_trip_exactly(value: object) -> None:
    x = exact("epsilon", value)
    assert decode(encode(x)) == x
    r = PureDP(value)  # type: ignore[arg-type]
    assert from_json(r.to_json()) == r


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), True, "abc", "1/0", None, [1]])
def test_bad_numbers_are_value_errors(bad: object) -> None:
    with pytest.raises(ValueError, match="epsilon"):
        PureDP(bad)  # type: ignore[arg-type]


def test_million_tiny_charges_refused_at_exactly_the_right_count(tmp_path: Any) -> None:
    """10⁶ charges of the float 1e-17 against 1e-11: exactly ⌊1e-11/1e-17⌋ (as exact binary values) fit;
    a float accumulator would have admitted all 10⁶ (it sums to 9.99999999987e-12 < 1e-11)."""
    tiny, budget = Fraction(1e-17), Fraction(1e-11)
    k = budget.numerator * tiny.denominator // (budget.denominator * tiny.numerator)
    assert k == 999_999 and sum([1e-17] * 10**6) < 1e-11
    cur = make_currency("basic", 1e-11, 0)
    assert bulk_admitted(cur, PureDP(1e-17), 10**6) == k
    # the ledger itself, at the boundary: k − 2 already spent (one exact charge), then four more tries
    led = Ledger.create(str(tmp_path / "l"), dataset="d", relation="add_remove", epsilon=1e-11, delta=0, currency="basic")
    led.charge("bulk", PureDP((k - 2) * tiny))
    admitted = 0
    for i in range(4):
        try:
            led.charge(f"t{i}", PureDP(1e-17))
            admitted += 1
        except BudgetExceeded:
            pass
    assert admitted == 2 and led.spent()[0] == k * tiny
    led.close()


# --- currencies -----------------------------------------------------------------------------------


def test_currency_charges() -> None:
    z = make_currency("zcdp", 1, "1e-6")
    assert z.charge(PureDP("0.1")) == (Fraction(1, 200),)
    assert z.charge(GaussianRelease(2, sensitivity=1)) == (Fraction(1, 8),)
    assert z.charge(ZCDPRelease("0.01")) == (Fraction(1, 100),)
    with pytest.raises(ChargeError, match="δ = 0"):
        z.charge(ApproxDP(1, "1e-9"))
    b = make_currency("basic", 1, "1e-6")
    with pytest.raises(ChargeError, match="gaussian"):
        b.charge(GaussianRelease(2))
    g = make_currency("gdp", 1, "1e-6")
    assert g.charge(GaussianRelease(4, sensitivity=2)) == (Fraction(1, 4),)
    r = make_currency("rdp", 20, "1e-6", orders=[8.0])
    # (α μ²/2 at α = 8; the pure basic branch: ε 0 and the non-pure flag 1, which closes that branch)
    assert r.charge(GaussianRelease(1)) == (Fraction(4), Fraction(0), Fraction(1))
    assert r.charge(PureDP("0.5"))[1:] == (Fraction(1, 2), Fraction(0))


def test_thresholds_enclose_50_digit_values() -> None:
    lower, rho_star = approx_zcdp_rho_star(1, -6, THRESHOLD_RTOL_LOG10)
    t = make_currency("approx-zcdp", 1, "1e-6").thresholds[0]
    assert lower <= t <= rho_star
    # GDP: δ_μ(ε) at μ_T lies within a hair below δ
    mu2 = make_currency("gdp", 1, "1e-6").thresholds[0]
    floor, d, delta = gdp_delta_at_mu_squared(mu2, 1, -6, THRESHOLD_RTOL_LOG10)
    assert floor <= d <= delta


def test_pure_mu_agrees_with_the_fdp_module() -> None:
    """RR(ε) is μ(ε)-GDP tightly: G_μ ≤ f_ε everywhere, with equality at α = 1/(1 + e^ε)."""
    import math

    import numpy as np

    from optcomp.fdp import gaussian_tradeoff

    eps = 0.5
    mu = float(make_currency("gdp", 1, "1e-6").charge(PureDP(eps))[0]) ** 0.5
    g = gaussian_tradeoff(mu)
    star = 1 / (1 + math.exp(eps))
    assert float(g(star)) == pytest.approx(star, rel=EXACT_RTOL)
    alphas = np.linspace(0, 1, 201)
    rr = np.maximum.reduce([np.zeros_like(alphas), 1 - math.exp(eps) * alphas, math.exp(-eps) * (1 - alphas)])
    assert np.all(np.asarray(g(alphas)) <= rr + TOUCH_ATOL)


@pytest.mark.parametrize("name", CURRENCIES)
def test_currency_validation(name: str) -> None:
    with pytest.raises(ValueError, match="epsilon"):
        make_currency(name, 0, "1e-6")
    with pytest.raises(ValueError, match="delta"):
        make_currency(name, 1, 1)
    with pytest.raises(ValueError, match="currency"):
        make_currency("optimal", 1, "1e-6")


def test_rdp_grid_refuses_orders_without_budget() -> None:
    with pytest.raises(ValueError, match="orders"):
        make_currency("rdp", 1, "1e-6", orders=[1.1])


def test_batch_is_charged_at_its_optimal_composition() -> None:
    from optcomp import optimal

    b = make_currency("basic", 5, "1e-5")
    batch = BatchRelease([PureDP(0.1)] * 100, "1e-6")
    eps, d = b.charge(batch)
    assert d == Fraction(1, 10**6)
    assert float(eps) == optimal.epsilon([(0.1, 0.0)] * 100, 1e-6).upper < 10  # basic would charge 10


@pytest.mark.parametrize("epsilon", ["0.01", "0.5", "3"])
def test_rdp_charge_agrees_with_optcomp_rdp(epsilon: str) -> None:
    """The ledger's directed 60-digit RR curve and optcomp.rdp's float curve are the same function."""
    from optcomp import rdp

    orders = [1.5, 2.0, 23.0, 256.0]
    ours = [float(make_currency("rdp", 100, "1e-6", orders=[a]).charge(PureDP(epsilon))[0]) for a in orders]
    ref = rdp.randomized_response(float(epsilon), orders=orders)
    assert ours == pytest.approx(list(ref), rel=EXACT_RTOL)


def test_from_mechanism() -> None:
    assert from_mechanism(RandomizedResponse(0.5)) == PureDP(0.5)
    # a Laplace is its own kind since the tight zCDP rule (before, it was stored as PureDP(Δ/b): such stored
    # releases keep that rule, tests/test_ledger_kinds.py)
    assert from_mechanism(Laplace(10.0, sensitivity=1.0)) == LaplaceRelease(10.0)
    assert from_mechanism(Laplace(10.0, sensitivity=1.0)).epsilon == Fraction(1) / Fraction(10.0)
    assert from_mechanism(EpsilonDelta(1.0, delta=1e-6)) == ApproxDP(1.0, 1e-6)
    assert from_mechanism(Gaussian(2.0)) == GaussianRelease(2.0)


# --- reports --------------------------------------------------------------------------------------


def test_report_in_user_units(ledger_site: Site) -> None:
    led: Ledger = ledger_site.create(dataset="d", relation="add_remove", epsilon=1, delta="1e-6", currency="zcdp")
    led.charge("g", GaussianRelease(10))
    rep = led.report(PureDP("0.01"))
    sigma, eps = rep["smallest_sigma"], rep["largest_pure_epsilon"]
    rem = decode(rep["remaining"][0])
    assert Fraction(1) / (2 * Fraction(sigma) ** 2) <= rem < Fraction(1) / (2 * Fraction(sigma * (1 - USER_UNIT_RTOL)) ** 2)
    assert Fraction(eps) ** 2 / 2 <= rem < Fraction(eps * (1 + USER_UNIT_RTOL)) ** 2 / 2
    assert rep["fits"]["count"] == int(rem / Fraction(1, 20000))
    assert "zCDP" in rep["guarantee"] and rep["certificate"]["alpha"]
    led.close()


# --- plan mode ------------------------------------------------------------------------------------


def test_plan_mode(ledger_site: Site) -> None:
    plan = [PureDP("0.5"), ApproxDP("0.3", "1e-7"), GaussianRelease(20)]
    led: Ledger = ledger_site.create(dataset="d", relation="add_remove", epsilon=1, delta="1e-6", mode="plan", plan=plan)
    cert = led.report()["certificate"]
    assert float.fromhex(cert["upper"]) <= 1.0 and "PLD" in cert["engine"]
    with pytest.raises(BudgetExceeded, match="dominated"):
        led.charge("a", PureDP("0.6"))
    led.charge("a", PureDP("0.4"))  # slot 0, dominated
    with pytest.raises(BudgetExceeded, match="dominated"):
        led.charge("b", GaussianRelease(19))
    led.charge("c", GaussianRelease(30, sensitivity=1), slot=2)  # skips slot 1
    with pytest.raises(BudgetExceeded):
        led.charge("d", ApproxDP("0.3", "1e-7"), slot=1)
    assert led.next_slot() == 3 and led.verify().ok
    led.close()


def test_plan_that_does_not_fit_is_refused(tmp_path: Any) -> None:
    with pytest.raises(ValueError, match="does not fit"):
        Ledger.create(str(tmp_path / "p"), dataset="d", relation="add_remove", epsilon=1, delta="1e-6", mode="plan",
                      plan=[PureDP(0.01)] * 563)
    assert not os.path.exists(str(tmp_path / "p"))


def test_bad_creation_arguments(tmp_path: Any) -> None:
    p = str(tmp_path / "x")
    with pytest.raises(ValueError, match="dataset"):
        Ledger.create(p, dataset="", relation="add_remove", epsilon=1, delta=0, currency="basic")
    with pytest.raises(ValueError, match="mode"):
        Ledger.create(p, dataset="d", relation="add_remove", epsilon=1, delta=0, mode="odometer")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="release_id"):
        Ledger.create(p, dataset="d", relation="add_remove", epsilon=1, delta=0, currency="basic").charge("", PureDP(1))


@pytest.mark.parametrize("name", CURRENCIES)
def test_user_units_are_tight_in_every_currency(name: str, tmp_path: Any) -> None:
    """The reported σ fits and the float below it does not; the reported ε fits and the float above it
    does not (rounded up / down to the float grid, decided by the ledger's own exact rule)."""
    import math

    led = Ledger.create(str(tmp_path / "u"), dataset="d", relation="add_remove", epsilon=1, delta="1e-6", currency=name,
                        **({"orders": [22.0]} if name == "rdp" else {}))
    led.charge("first", PureDP("0.05"))
    rep = led.report()
    sigma, eps = rep["smallest_sigma"], rep["largest_pure_epsilon"]
    if name == "basic":
        assert sigma is None
    else:
        assert led.fits(GaussianRelease(sigma)) >= 1 and led.fits(GaussianRelease(math.nextafter(sigma, 0))) == 0
    assert led.fits(PureDP(eps)) >= 1 and led.fits(PureDP(math.nextafter(eps, math.inf))) == 0
    rho = rep["largest_rho"]  # one more zCDP release (what still fits), where the currency charges one
    if rho is not None:
        assert led.fits(ZCDPRelease(rho)) >= 1 and led.fits(ZCDPRelease(math.nextafter(rho, math.inf))) == 0
    assert (rho is None) == (name in ("basic", "gdp"))
    led.close()


def test_batch_release_through_a_ledger(tmp_path: Any) -> None:
    led = Ledger.create(str(tmp_path / "b"), dataset="d", relation="add_remove", epsilon=5, delta="1e-5", currency="basic")
    t = led.charge("batch-1", BatchRelease([PureDP("0.1")] * 100, "1e-6"))
    assert t.charge[0] < 10 and t.charge[1] == Fraction(1, 10**6)
    assert led.charge("batch-1", BatchRelease([PureDP("0.1")] * 100, "1e-6")).replay
    assert led.verify().ok  # the recomputed charge (optimal composition again) equals the stored one
    led.close()


def test_an_rdp_ledger_written_before_the_union_reads_back_as_it_was() -> None:
    """A stored rdp configuration without ``branches`` (a grid checked at every order, no basic branch)
    keeps its meaning: one branch, the grid's charges only."""
    from optcomp.ledger._currency import from_config

    old = {"name": "rdp", "epsilon": "0x1.4000000000000p+4", "delta": "1/1000000",
           "components": ["alpha=2", "alpha=8"], "thresholds": ["3", "17"], "certificate": {},
           "options": {"orders": ["0x1.0000000000000p+1", "0x1.0000000000000p+3"]}}
    cur = from_config(old)
    assert cur.charge(GaussianRelease(1)) == (Fraction(1), Fraction(4))
    assert cur.within((Fraction(3), Fraction(17))) and not cur.within((Fraction(3), Fraction(18)))
    assert from_config(cur.to_config()) == cur

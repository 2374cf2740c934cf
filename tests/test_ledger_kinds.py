"""The release kinds stated in zCDP, Rényi DP and the discrete Gaussian, and the tight Laplace zCDP
(issue 35 item 4): old ledgers still verify; each new kind's charge agrees with the library's composition
(``optcomp.rdp``, the lattice and Rényi engines of ``optcomp.compose``) and with independent mpmath truths;
a refused charge leaves no trace; bad CLI specs exit 2 with one line."""

from __future__ import annotations

import gzip
import itertools
import json
import math
import shutil
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import optcomp
from optcomp import rdp
from optcomp.cli import main
from optcomp.ledger import (
    ApproxDP,
    BudgetExceeded,
    ChargeError,
    DiscreteGaussianRelease,
    GaussianRelease,
    LaplaceRelease,
    Ledger,
    PureDP,
    RenyiRelease,
    ZCDPRelease,
    from_json,
    from_mechanism,
    make_currency,
)
from optcomp.ledger._chain import Replay, canonical, vec
from optcomp.ledger._costs import laplace_rdp, laplace_zcdp, renyi_at, zcdp_epsilon
from optcomp.ledger._exact import decode
from optcomp.ledger._store import open_store
from optcomp.mechanisms import (
    DiscreteGaussian,
    EpsilonDelta,
    Gaussian,
    Laplace,
    RandomizedResponse,
    Renyi,
    ZeroConcentrated,
)
from optcomp.mechanisms.discrete_gaussian import largest_squared_norm
from tests._references.ledger_kinds import (
    as_mpf,
    cks_epsilon,
    laplace_kl,
    laplace_renyi,
    laplace_renyi_orders,
    orders_grid,
)

OLD = Path(__file__).resolve().parent / "_references" / "old_ledgers"
FROZEN: dict[str, Any] = json.loads((OLD / "ledgers.json").read_text(encoding="utf-8"))["ledgers"]
DELTA = Fraction(1, 10**6)


# --- old ledgers still verify ---------------------------------------------------------------------------


def _restore(export: dict[str, Any], location: str, schema: str | None) -> None:
    """Write an exported ledger back into a fresh store, row for row as the old version wrote it: the
    configuration text, genesis and time; every event with its stored body, time and hashes; the release
    index and the cached state as that chain implies them."""
    config = canonical(export["config"])
    width = len(export["config"]["currency"]["thresholds"]) if export["config"]["mode"] == "filter" else 0
    store = open_store(location, schema=schema, mode="create")
    try:
        store.create(config, export["genesis"], export["created_at"], vec([Fraction(0)] * width))
        events = [(e["seq"], e["kind"], e["release_id"], canonical(e["body"]), e["created_at"], e["prev_hash"],
                   e["row_hash"]) for e in export["events"]]
        replay = Replay.start(export["genesis"], width)
        replay.feed(events)
        assert not replay.problems, replay.problems
        with store.write() as tx:
            for ev in events:
                tx.append(*ev)
            for rec in replay.records.values():
                tx.insert_release(rec.release_id, rec.seq, rec.spec, vec(rec.charge), rec.slot)
                if rec.status != "charged":
                    tx.set_status(rec.release_id, rec.status)
            tx.save_state(*replay.state())
    finally:
        store.close()


@pytest.mark.parametrize("name", sorted(FROZEN))
def test_old_ledgers_verify(name: str, ledger_site: Any) -> None:
    """Every ledger written by main bdcfc60 (each currency, plan mode) verifies today, bit for bit: the
    hash chain, and every stored charge recomputed by today's rule of its stored kind (a Laplace stored as
    ``pure`` keeps ε²/2; a zCDP release without a δ share reads back as the same object)."""
    export = FROZEN[name]
    _restore(export, ledger_site.location, ledger_site.schema)
    led = ledger_site.open()
    try:
        check = led.verify()
        assert check.ok, check.problems
        assert check.events == len(export["events"])
        again = led.export()
        for old, new in zip(export["events"], again["events"], strict=True):
            assert (new["row_hash"], new["body"]) == (old["row_hash"], old["body"])
            if old["kind"] == "charge":
                assert canonical(from_json(old["body"]["release"]).to_json()) == canonical(old["body"]["release"])
                assert new["release_text"] == old["release_text"]
                assert new.get("charge_text") == old.get("charge_text")
        led.report()
    finally:
        led.close()


@pytest.mark.parametrize("name", ["gdp", "rdp-order"])
def test_old_ledgers_written_at_50_digits_drift_only_in_the_last_grid_step(name: str, tmp_path: Path) -> None:
    """The same script run under ``mpmath.mp.dps = 50`` at bdcfc60 (``ledgers_mp50.json``): there the
    ledger's rounding margin was 1e-40 at 50 digits instead of the double, and some transcendental pure-DP
    charges (μ(ε)², RR's D_α) landed one or two steps of the 2^-192 grid higher. verify() names exactly
    those, and nothing else differs: each is within 2^-188 of today's value and above it (both are upper
    bounds: the margin is 1e-40 relative)."""
    export = json.loads((OLD / "ledgers_mp50.json").read_text(encoding="utf-8"))["ledgers"][name]
    _restore(export, str(tmp_path / "old.ledger"), None)
    led = Ledger.open(str(tmp_path / "old.ledger"))
    problems = led.verify().problems
    assert problems
    by_seq = {e["seq"]: e for e in export["events"]}
    for problem in problems:
        seq = int(problem.split(":")[0].removeprefix("seq "))
        assert problem.endswith("stored charge differs from the recomputed one"), problem
        body = by_seq[seq]["body"]
        assert from_json(body["release"]).kind in ("pure", "approx")
        stored, now = decode(body["charge"][0]), led.cost(from_json(body["release"]))[0]
        assert 0 < stored - now <= Fraction(1, 2**188)
    led.close()


def test_charges_do_not_depend_on_mpmath_precision_at_import(tmp_path: Path) -> None:
    """A process that sets ``mpmath.mp.dps = 50`` before importing optcomp charges every transcendental kind
    exactly as a default one (the margin is a double), so its ledger verifies anywhere."""
    code = (
        "import sys, mpmath\n"
        "if sys.argv[1] == '50':\n    mpmath.mp.dps = 50\n"
        "import json\nfrom fractions import Fraction\n"
        "from optcomp.ledger import make_currency, PureDP, LaplaceRelease, ZCDPRelease, RenyiRelease\n"
        "out = []\n"
        "for name, opts in (('gdp', {}), ('rdp', {'orders': [8]}), ('zcdp', {}), ('basic', {})):\n"
        "    c = make_currency(name, 4, '1e-6', **opts)\n"
        "    for r in (PureDP(0.3), PureDP('0.1'), LaplaceRelease(7), ZCDPRelease('0.02', '1e-8'),\n"
        "              RenyiRelease((2, 8), ('0.01', '0.05'), '1e-8')):\n"
        "        try:\n            out.append([str(x) for x in c.charge(r)])\n"
        "        except ValueError:\n            out.append(None)\n"
        "print(json.dumps(out))\n"
    )
    import subprocess
    import sys

    runs = [subprocess.run([sys.executable, "-c", code, dps], capture_output=True, text=True, check=True).stdout
            for dps in ("15", "50")]
    assert runs[0] == runs[1] and json.loads(runs[0]).count(None) < 10


def test_old_sqlite_file_verifies_and_takes_the_new_kinds(tmp_path: Path) -> None:
    """The zcdp ledger file as the old version left it on disk: verifies, then takes every new kind
    (each charged its new rule) and still verifies; the old Laplace (stored ``pure``) keeps its charge."""
    path = tmp_path / "zcdp.ledger"
    with gzip.open(OLD / "ledger_zcdp.sqlite.gz", "rb") as src, open(path, "wb") as dst:
        shutil.copyfileobj(src, dst)
    led = Ledger.open(str(path))
    assert led.verify().ok
    before = led.spent()
    old_laplace = next(r for r in led.history() if r["release_id"] == "q-laplace")
    new = [("n-laplace", LaplaceRelease(10)), ("n-zcdp", ZCDPRelease("0.001", "1e-9")),
           ("n-dg", DiscreteGaussianRelease(8, 2, dimension=3)), ("n-dg-any", DiscreteGaussianRelease(20, 3, None))]
    for rid, r in new:
        led.charge(rid, r)
    assert led.spent()[0] - before[0] == (laplace_zcdp(Fraction(1, 10)) + Fraction(1, 1000) + Fraction(4, 2 * 64)
                                          + Fraction(9, 2 * 400))
    assert laplace_zcdp(Fraction(1, 10)) < Fraction(1, 200)  # tighter than the ε²/2 the old pure Laplace pays
    assert led.verify().ok
    again = next(r for r in led.history() if r["release_id"] == "q-laplace")
    assert again == old_laplace
    led.close()


# --- charges agree with the library's composition -------------------------------------------------------


@pytest.mark.parametrize("epsilon", ["1e-8", "0.001", "0.1", "1", "3", "10", "1000"])
def test_laplace_zcdp_is_the_supremum_of_its_renyi_curve(epsilon: str) -> None:
    """ρ = ε + e^{−ε} − 1 (rounded up) is sup_α D_α/α of the Laplace pair (mpmath at 150 digits, orders from
    1 + 10⁻¹² to 10⁴), reached as α → 1; at most ε²/2 (any ε-DP mechanism); and ≥ the library's curve /α."""
    e = Fraction(epsilon)
    rho = laplace_zcdp(e)
    ratios = [laplace_renyi(e, a) / a for a in laplace_renyi_orders()]
    assert max(ratios) <= as_mpf(rho)
    assert ratios[11] >= as_mpf(rho) * (1 - 1e-9)  # α = 1 + 1e-12: the supremum, nearly
    kl = laplace_kl(e)
    assert as_mpf(rho) - kl <= kl * 1e-39 + 2.0**-190  # the outward margin only
    assert rho <= e * e / 2
    if e >= Fraction(1, 1000):  # the library's float curve is loose below (an upper bound all the same)
        lib = rdp.of_mechanism(Laplace(scale=1.0 / float(e)), rdp.DEFAULT_ORDERS) / np.asarray(rdp.DEFAULT_ORDERS)
        assert float(np.max(lib)) <= float(rho) * (1 + 1e-9)


@pytest.mark.parametrize("alpha", [Fraction(3, 2), Fraction(4), Fraction(32), Fraction(256)])
@pytest.mark.parametrize("scale", [0.5, 3.0, 40.0])
def test_rdp_currency_charges_laplace_its_library_curve(alpha: Fraction, scale: float) -> None:
    """In the rdp currency a Laplace pays D_α of its pair at the ledger's order: the library's curve
    (``optcomp.rdp.of_mechanism``, certified up) to 1e-12, never above it by more than its slack, and
    below randomized response's (what a ``pure`` release of the same ε pays)."""
    c = make_currency("rdp", 30, DELTA, orders=[float(alpha)])
    r = from_mechanism(Laplace(scale=scale, sensitivity=1.0))
    assert isinstance(r, LaplaceRelease)
    got = c.charge(r)
    lib = float(rdp.of_mechanism(Laplace(scale=scale), [float(alpha)])[0])
    assert got[0] == laplace_rdp(r.epsilon, alpha)
    assert math.isclose(float(got[0]), lib, rel_tol=1e-12)
    assert got[1:] == (r.epsilon, 0)  # a Laplace is pure: the basic branch stays open
    assert got[0] <= c.charge(PureDP(r.epsilon))[0]


@pytest.mark.parametrize(("sigma", "sensitivity", "dimension", "norm"), [
    (1.0, 1, 1, "l2"), (2.5, 3, 1, "l2"), (4.0, 5 ** 0.5, 2, "l2"), (3.0, 2, 4, "l2"), (7.0, 2, None, "l2"),
    (1.5, 3, 3, "linf"), (6.0, 4, None, "l1"), (10.0, 3, 3, "l2"),
])
def test_discrete_gaussian_charges_agree_with_the_library(sigma: float, sensitivity: float,
                                                          dimension: int | None, norm: str) -> None:
    """zCDP charge ρ = max‖v‖²/(2σ²) exactly; rdp charge αρ = the library's curve (``rdp.of_mechanism``) at α
    where the worst shift is determined; the (ε, δ) of its share in the basic currency is the library's
    closed-form conversion of the same ρ (``rdp.closed_form_epsilon``) and above the lattice engine's
    exact ε, which ``optcomp.compose`` certifies for one release."""
    r = DiscreteGaussianRelease(sigma, sensitivity, dimension, norm, delta=DELTA)
    assert make_currency("zcdp", 1, DELTA).charge(r) == (r.rho,)
    assert make_currency("approx-zcdp", 1, DELTA).charge(r) == (r.rho, 0)
    alpha = Fraction(8)
    got = make_currency("rdp", 30, DELTA, orders=[8]).charge(r)
    assert got == (alpha * r.rho, 0, 1)
    eps, d = make_currency("basic", 100, "0.5").charge(r)
    assert d == DELTA
    closed = rdp.closed_form_epsilon(rdp.StatedCurve(rho=float(r.rho)), float(DELTA))[0]
    assert math.isclose(float(eps), closed, rel_tol=1e-9)
    try:
        mech = DiscreteGaussian(sigma, sensitivity=float(sensitivity), dimension=dimension, norm=norm)  # type: ignore[arg-type]
    except ValueError:
        return  # the worst shift is not determined: the zCDP charge needs only the largest norm
    assert Fraction(sum(v * v for v in mech.worst)) / (2 * Fraction(sigma) ** 2) == r.rho
    assert math.isclose(float(rdp.of_mechanism(mech, [8.0])[0]), float(got[0]), rel_tol=1e-9)
    lattice = optcomp.compose((mech, 1)).epsilon(float(DELTA))
    assert lattice.upper <= float(eps)


@pytest.mark.parametrize("rho", ["0.1", "0.5", "1"])
@pytest.mark.parametrize("delta", ["1e-5", "1e-10"])
def test_zcdp_share_converts_as_the_library_does(rho: str, delta: str) -> None:
    """A ρ-zCDP release with a δ share pays, in the basic currency, the closed-form conversion the
    library's Rényi engine states (``rdp.closed_form_epsilon``, 1e-9 relative), which lies above the
    certified optimal conversion's lower end (``optcomp.compose(ZeroConcentrated(ρ))``)."""
    r = ZCDPRelease(rho, delta)
    eps, d = make_currency("basic", 100, "0.5").charge(r)
    assert d == Fraction(delta) and eps == zcdp_epsilon(Fraction(rho), Fraction(delta))
    closed = rdp.closed_form_epsilon(rdp.StatedCurve(rho=float(rho)), float(delta))[0]
    assert math.isclose(float(eps), closed, rel_tol=1e-9)
    assert optcomp.compose(ZeroConcentrated(float(rho))).epsilon(float(delta)).lower <= float(eps)
    # the 60-digit value at the order searched: no order of a fine grid gives less by more than 1e-12
    assert as_mpf(eps, 40) <= cks_epsilon(Fraction(rho), Fraction(delta), orders_grid()) + 1e-12


@pytest.mark.parametrize(("orders", "epsilons"), [
    ((2, 8, 32), ("0.1", "0.5", "2")), ((1.5, 3, 64), ("0.01", "0.05", "1")), ((4,), ("0.3",)),
])
def test_renyi_release_agrees_with_the_renyi_engine(orders: tuple[float, ...], epsilons: tuple[str, ...]) -> None:
    """A stated Rényi curve: the rdp currency at a stated order pays the stated value; with a δ share the
    basic currency pays the library's closed-form conversion of the same curve (1e-9), above the lower end
    of the certified optimal conversion (``optcomp.compose(Renyi(...))``); the zcdp and gdp currencies
    refuse it by name."""
    r = RenyiRelease(orders, epsilons, delta=DELTA)
    for a, e in zip(orders, epsilons, strict=True):
        assert make_currency("rdp", 30, DELTA, orders=[a]).charge(r) == (Fraction(e), 0, 1)
    eps, d = make_currency("basic", 100, "0.5").charge(r)
    item = Renyi(tuple(float(a) for a in orders), tuple(float(e) for e in epsilons))
    closed = rdp.closed_form_epsilon(rdp.stated_curve([(item, 1)]), float(DELTA))[0]
    assert d == DELTA and float(eps) <= closed * (1 + 1e-9)
    assert optcomp.compose(item).epsilon(float(DELTA)).lower <= float(eps)
    if len(orders) > 1:
        assert math.isclose(float(eps), closed, rel_tol=1e-9)
    for name in ("zcdp", "gdp"):
        with pytest.raises(ChargeError, match="docs/ledger.md §2.9"):
            make_currency(name, 1, DELTA).charge(r)
    above = make_currency("rdp", 30, DELTA, orders=[float(orders[-1]) * 2])
    with pytest.raises(ChargeError, match="states nothing there"):
        above.charge(r)


def _renyi(p: np.ndarray, q: np.ndarray, alpha: float) -> float:
    return float(np.log(np.sum(p**alpha * q ** (1 - alpha))) / (alpha - 1))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.05, 1.0), min_size=3, max_size=5), st.lists(st.floats(0.05, 1.0), min_size=3, max_size=5),
       st.lists(st.sampled_from([1.25, 1.5, 2.0, 3.0, 5.0, 8.0, 16.0]), min_size=1, max_size=4, unique=True),
       st.floats(1.01, 16.0))
def test_renyi_at_bounds_every_law_with_the_stated_curve(ps: list[float], qs: list[float], stated: list[float],
                                                         alpha: float) -> None:
    """For random pairs of discrete laws, the bound ``renyi_at`` draws from the pair's own D_α at a few
    orders is at least the pair's D_α at any order up to the largest (convexity of (α − 1)D_α), and None
    above it."""
    n = min(len(ps), len(qs))
    p, q = np.asarray(ps[:n]) / sum(ps[:n]), np.asarray(qs[:n]) / sum(qs[:n])
    orders = sorted(stated)
    values = [max(_renyi(p, q, a), _renyi(q, p, a)) * (1 + 1e-9) + 1e-12 for a in orders]
    fo = [Fraction(a) for a in orders]
    bound = renyi_at(fo, [Fraction(v) for v in values], Fraction(alpha))
    if alpha > orders[-1]:
        assert bound is None
        return
    assert bound is not None
    assert float(bound) >= max(_renyi(p, q, alpha), _renyi(q, p, alpha)) * (1 - 1e-9) - 1e-12


@pytest.mark.parametrize("dimension", [1, 2, 3, 4, 5, None])
@pytest.mark.parametrize("norm", ["l2", "l1", "linf"])
def test_largest_squared_norm_by_enumeration(dimension: int | None, norm: str) -> None:
    """max ‖v‖₂² over integer v with ‖v‖ ≤ Δ in ``dimension`` coordinates, against brute force (any
    dimension: five coordinates suffice for Δ ≤ 4, Lagrange)."""
    if norm == "linf" and dimension is None:
        with pytest.raises(ValueError, match="dimension"):
            largest_squared_norm(2, None, "linf")
        return
    d = dimension or 5
    for sensitivity in (1, 1.5, 2, 3 ** 0.5, 5 ** 0.5, 3, 4):
        best = 0
        for v in itertools.product(range(5), repeat=d):
            size = (sum(x * x for x in v) if norm == "l2" else sum(v) if norm == "l1" else max(v))
            limit = sensitivity**2 if norm == "l2" else sensitivity
            if size <= limit + 1e-9:
                best = max(best, sum(x * x for x in v))
        assert largest_squared_norm(sensitivity, dimension, norm) == best, (sensitivity, dimension, norm)  # type: ignore[arg-type]


def test_plan_slots_of_the_new_kinds_compose_through_the_library_engines(tmp_path: Path) -> None:
    """A plan ledger's certificate is the library's composition of its slots: a discrete Gaussian plan goes
    to the lattice engine (its ε equals ``optcomp.compose``'s upper end), a plan with a zCDP or Rényi slot
    to the Rényi engine; a release is admitted into a slot that dominates it and refused otherwise."""
    dg = DiscreteGaussianRelease(2, 1)
    led = Ledger.create(str(tmp_path / "dg.ledger"), dataset="d", relation="add_remove", epsilon=6, delta=DELTA,
                        mode="plan", plan=[dg, dg, dg])
    cert = led.config["certificate"]
    assert "lattice" in cert["engine"]
    assert float.fromhex(cert["upper"]) == optcomp.compose((DiscreteGaussian(2.0), 3)).epsilon(float(DELTA)).upper
    led.charge("a", DiscreteGaussianRelease(2, 1))
    with pytest.raises(BudgetExceeded, match="not dominated"):
        led.charge("b", DiscreteGaussianRelease(3, 1))  # another σ: the lattice laws are not ordered in σ
    led.charge("b", DiscreteGaussianRelease(2, "1.5"))  # the same worst shift (1,)
    assert led.verify().ok
    led.close()

    led = Ledger.create(str(tmp_path / "lap.ledger"), dataset="d", relation="add_remove", epsilon=6, delta=DELTA,
                        mode="plan", plan=[LaplaceRelease(4), GaussianRelease(5), PureDP("0.5")])
    want = optcomp.compose(Laplace(4.0), Gaussian(5.0), EpsilonDelta(0.5, delta=0.0)).epsilon(float(DELTA)).upper
    assert float.fromhex(led.config["certificate"]["upper"]) == want
    with pytest.raises(BudgetExceeded, match="not dominated"):
        led.charge("l", LaplaceRelease(3))
    led.charge("l", LaplaceRelease(5))
    led.charge("g", GaussianRelease(6))
    led.charge("p", LaplaceRelease(2))  # a Laplace of ε = 0.5 is 0.5-DP: the pure slot takes it
    assert led.verify().ok
    led.close()

    slots = [ZCDPRelease("0.05"), RenyiRelease((2, 8, 32), ("0.1", "0.5", "2")), GaussianRelease(6), PureDP("0.2")]
    led = Ledger.create(str(tmp_path / "curves.ledger"), dataset="d", relation="add_remove", epsilon=8, delta=DELTA,
                        mode="plan", plan=slots)
    want = optcomp.compose(ZeroConcentrated(0.05), Renyi((2.0, 8.0, 32.0), (0.1, 0.5, 2.0))).engine()
    assert want == "renyi" and "Rényi" in led.config["certificate"]["engine"]
    items = optcomp.compose(ZeroConcentrated(0.05), Renyi((2.0, 8.0, 32.0), (0.1, 0.5, 2.0)), Gaussian(6.0),
                            RandomizedResponse(0.2))  # a pure slot composes as RR(ε), the worst ε-DP pair
    assert float.fromhex(led.config["certificate"]["upper"]) == items.epsilon(float(DELTA)).upper
    led.charge("z", DiscreteGaussianRelease(4, 1))  # ρ = 1/32 ≤ 0.05
    led.charge("r", GaussianRelease(10))  # αμ²/2 = α/200 ≤ the slot's curve at 2, 8 and 32
    with pytest.raises(BudgetExceeded, match="not dominated"):
        led.charge("g", GaussianRelease(5))  # μ = 1/5 > 1/6
    led.charge("g", GaussianRelease(7))
    led.charge("p", LaplaceRelease(8))  # ε = 1/8 ≤ 0.2
    assert led.verify().ok
    led.close()
    with pytest.raises(ValueError, match="has none"):
        Ledger.create(str(tmp_path / "mixed.ledger"), dataset="d", relation="add_remove", epsilon=8, delta=DELTA,
                      mode="plan", plan=[ZCDPRelease("0.01"), ApproxDP("0.1", "1e-9")])


# --- a refused charge leaves no trace ------------------------------------------------------------------


def _trace(led: Ledger) -> tuple[Any, ...]:
    v = led.verify()
    return led.spent(), v.events, led.tickets(), led.history()


@pytest.mark.parametrize(("currency", "release", "error"), [
    ("zcdp", RenyiRelease((2, 8), ("0.1", "0.2")), ChargeError),
    ("gdp", ZCDPRelease("0.01"), ChargeError),
    ("gdp", DiscreteGaussianRelease(5), ChargeError),
    ("basic", ZCDPRelease("0.01"), ChargeError),
    ("basic", DiscreteGaussianRelease(5), ChargeError),
    ("approx-zcdp", RenyiRelease((2, 8), ("0.1", "0.2")), ChargeError),
    ("zcdp", DiscreteGaussianRelease("0.5", 3, dimension=4), BudgetExceeded),
    ("zcdp", LaplaceRelease("0.1"), BudgetExceeded),
    ("rdp", RenyiRelease((2, 32), ("0.1", "100")), BudgetExceeded),
    ("rdp", RenyiRelease((2, 8), ("0.1", "0.2")), ChargeError),  # nothing stated at the ledger's order 32
    ("basic", ZCDPRelease(5, "1e-9"), BudgetExceeded),
])
def test_a_refused_charge_leaves_no_trace(ledger_site: Any, currency: str, release: Any, error: type) -> None:
    """Refused (no rule, or over budget): the chain, the spent vector, the index and verify() are as before,
    and the release id is still free."""
    opts: dict[str, Any] = {"orders": [32]} if currency == "rdp" else {}
    led = ledger_site.create(dataset="d", relation="add_remove", epsilon=1, delta=DELTA, currency=currency, **opts)
    led.charge("before", PureDP("0.01"))
    trace = _trace(led)
    with pytest.raises(error) as info:
        led.charge("new", release)
    assert "\n" not in str(info.value)
    assert _trace(led) == trace and led.verify().ok
    led.charge("new", PureDP("0.02"))
    assert led.verify().ok
    led.close()


# --- the CLI: specs of the new kinds --------------------------------------------------------------------


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_charges_the_new_kinds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``optcomp ledger charge`` takes each new kind's spec and charges what the library object would."""
    p = str(tmp_path / "k.ledger")
    assert run(capsys, "ledger", "init", p, "--dataset", "d", "--relation", "add_remove", "--epsilon", "20",
               "--delta", "1e-6", "--currency", "approx-zcdp", "--delta-steps", "1e-7")[0] == 0
    specs = {
        "laplace:scale=20": LaplaceRelease(20),
        "laplace:scale=3,sensitivity=0.5": LaplaceRelease(3, "0.5"),
        "zcdp:rho=0.01,delta=1e-9": ZCDPRelease("0.01", "1e-9"),
        "dgauss:sigma=8,sensitivity=2,dimension=3": DiscreteGaussianRelease(8, 2, 3),
        "discrete_gaussian:sigma=9,sensitivity=2,dimension=any,norm=l1": DiscreteGaussianRelease(9, 2, None, "l1"),
        "renyi:orders=2;8;32,epsilons=0.001;0.004;0.02,delta=1e-9": RenyiRelease((2, 8, 32), ("0.001", "0.004", "0.02"),
                                                                                 "1e-9"),
        "rdp:orders=64,epsilons=0.001,delta=1e-9": RenyiRelease((64,), ("0.001",), "1e-9"),
    }
    led = Ledger.open(p, read_only=True)
    for i, (spec, release) in enumerate(specs.items()):
        code, out, err = run(capsys, "ledger", "charge", p, f"q{i}", spec, "--json")
        assert code == 0, err
        ticket = json.loads(out)
        assert from_json(ticket["release"]) == release
        assert tuple(decode(x) for x in ticket["charge"]) == led.cost(release)
    led.close()
    code, out, _ = run(capsys, "ledger", "report", p, "--json")
    rep = json.loads(out)
    assert code == 0 and not rep["problems"]
    code, out, _ = run(capsys, "ledger", "export", p)
    texts = " | ".join(e.get("release_text", "") for e in json.loads(out)["events"])
    for word in ("Laplace, b = 20", "zCDP, ρ = 0.01, δ share = 1e-9", "discrete Gaussian, σ = 8, Δ = 2, dimension 3",
                 "(ℓ₁), any dimension", "Rényi curve at 3 orders"):
        assert word in texts
    assert run(capsys, "ledger", "verify", p)[0] == 0


@pytest.mark.parametrize(("spec", "needle"), [
    ("renyi:orders=2;8", "epsilons"),
    ("renyi:orders=2;8,epsilons=0.1", "one value per order"),
    ("renyi:orders=8;2,epsilons=0.1;0.2", "increasing"),
    ("renyi:orders=1;2,epsilons=0;0.1", "orders must be > 1"),
    ("renyi:orders=2;x,epsilons=1;2", "orders"),
    ("renyi:orders=2,epsilons=-1", "epsilons"),
    ("dgauss:sensitivity=2", "sigma"),
    ("dgauss:sigma=1,sensitivity=0.5", "sensitivity"),
    ("dgauss:sigma=1,dimension=2.5", "dimension"),
    ("dgauss:sigma=1,norm=l3", "norm"),
    ("dgauss:sigma=1,norm=linf,dimension=any", "dimension"),
    ("dgauss:sigma=0", "sigma"),
    ("zcdp:rho=0.1,delta=0", "delta"),
    ("zcdp:rho=0.1,delta=1", "delta"),
    ("laplace:scale=0", "scale"),
    ("laplace:scale=1,sensitivity=-1", "sensitivity"),
    ("laplace:epsilon=1", "scale"),
    ("laplace:scale=1,scale=2", "twice"),
    ("renyi:orders=2;8,epsilons=0.1;0.2", "§2.9"),  # the zcdp currency has no rule for it
    ("dgauss:sigma=0.1,sensitivity=3,dimension=4", "refused"),
])
def test_cli_bad_specs_exit_2_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], spec: str,
                                           needle: str) -> None:
    p = str(tmp_path / "c.ledger")
    Ledger.create(p, dataset="d", relation="add_remove", epsilon=1, delta=DELTA, currency="zcdp").close()
    code, _, err = run(capsys, "ledger", "charge", p, "q", spec)
    assert code == 2 and len(err.strip().splitlines()) == 1 and needle in err and "Traceback" not in err
    led = Ledger.open(p, read_only=True)
    assert led.verify().events == 0
    led.close()


def test_from_mechanism_maps_the_new_kinds() -> None:
    """The library's specifications map to the new kinds exactly (a Rényi item's infinite orders dropped:
    nothing is stated there); a discrete Gaussian given by its shift is refused by name."""
    assert from_mechanism(ZeroConcentrated(0.5)) == ZCDPRelease(0.5)
    assert from_mechanism(Laplace(2.0, sensitivity=3.0)) == LaplaceRelease(2.0, 3.0)
    assert from_mechanism(Renyi((2.0, 8.0, 64.0), (0.1, 0.4, math.inf))) == RenyiRelease((2.0, 8.0), (0.1, 0.4))
    got = from_mechanism(DiscreteGaussian(3.0, sensitivity=2.0, dimension=3, norm="linf"))
    assert got == DiscreteGaussianRelease(3.0, 2.0, 3, "linf") and got.rho == Fraction(12, 18)
    with pytest.raises(ValueError, match="shift"):
        from_mechanism(DiscreteGaussian(3.0, shift=(1, 2)))
    for r in (got, RenyiRelease((2, 8), ("0.1", "0.4"), "1e-8"), ZCDPRelease("0.2", "1e-9"), LaplaceRelease("0.5")):
        assert from_json(json.loads(json.dumps(r.to_json()))) == r

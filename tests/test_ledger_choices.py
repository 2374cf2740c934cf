"""The ledger's ``br`` and ``select`` release kinds (issue 34 item 4): their charges against independent
computations (a 30-digit scan of KL(P_t‖Q_t) over the BR family, RR's Rényi divergence, exact rationals), a
session that charges exponential-mechanism steps and refuses the one that would overspend, the CLI path."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optcomp.cli import main
from optcomp.ledger import (
    BoundedRangeRelease,
    BudgetExceeded,
    Ledger,
    PureDP,
    SelectionRelease,
    br_rho,
    bulk_admitted,
    describe,
    exact,
    from_json,
    from_mechanism,
    make_currency,
)
from optcomp.ledger._currency import rr_rdp
from optcomp.mechanisms import BoundedRange
from optcomp.selection._repetitions import Poisson
from optcomp.selection._select import pure_route
from tests._references.bounded_range import kl_scan
from tests._references.selection import poisson_pure_epsilon


@pytest.mark.parametrize("epsilon", ["0.01", "0.1", "1", "5"])
def test_br_rho_is_the_kl_maximum_rounded_up(epsilon: str) -> None:
    rho = br_rho(exact("epsilon", epsilon))
    scan = kl_scan(float(epsilon))
    assert scan <= rho <= Fraction(epsilon) ** 2 / 8
    assert rho <= scan * (1 + 1e-4)  # the scan's grid is 400 points: it reaches the maximum to O(h²)


@settings(max_examples=30, deadline=None)
@given(st.fractions(Fraction(1, 10**9), Fraction(20)))
def test_br_charges_never_exceed_the_pure_ones(epsilon: Fraction) -> None:
    """A BR step is ε-DP, so no currency charges it more than a pure ε box; zCDP charges it ρ ≤ ε²/8."""
    br, pure = BoundedRangeRelease(epsilon), PureDP(epsilon)
    assert 0 < br.rho <= epsilon**2 / 8
    for name, options in (("basic", {}), ("zcdp", {}), ("approx-zcdp", {}), ("gdp", {}), ("rdp", {"orders": [40]})):
        c = make_currency(name, 25, "1e-6", **options)  # type: ignore[arg-type]
        assert all(a <= b for a, b in zip(c.charge(br), c.charge(pure), strict=True)), name


@pytest.mark.parametrize("alpha", [2, 8, 40])
def test_br_rdp_charge_is_the_smaller_of_two_valid_bounds(alpha: int) -> None:
    c = make_currency("rdp", 25, "1e-6", orders=[alpha])
    e = Fraction(1, 2)
    got = c.charge(BoundedRangeRelease(e))
    assert got[0] == min(rr_rdp(e, Fraction(alpha)), alpha * br_rho(e))
    assert got[1:] == (e, Fraction(0))  # the pure basic branch: a BR step is pure


def test_zcdp_ledger_admits_about_four_times_the_pure_steps(tmp_path: Path) -> None:
    """ε = 1, δ = 1e-6: ρ_T ≈ 0.0244 holds 19 exponential-mechanism steps of ε₀ = 0.1 (ρ ≈ 0.00125 each)
    against 4 pure ε₀ = 0.1 boxes (ε²/2 = 0.005)."""
    c = make_currency("zcdp", 1, "1e-6")
    assert bulk_admitted(c, BoundedRangeRelease("0.1"), 1000) == 19
    assert bulk_admitted(c, PureDP("0.1"), 1000) == 4
    led = Ledger.create(str(tmp_path / "em.ledger"), dataset="d", relation="add_remove", epsilon=1, delta="1e-6",
                        currency="zcdp")
    for i in range(19):
        led.charge(f"em-{i}", BoundedRangeRelease("0.1"))
    with pytest.raises(BudgetExceeded, match="exponential mechanism"):
        led.charge("em-19", BoundedRangeRelease("0.1"))
    assert led.verify().ok


def test_selection_charges_its_pure_epsilon() -> None:
    assert SelectionRelease("0.1", "geometric").pure_epsilon == Fraction(3, 10)
    assert SelectionRelease("0.1", "logarithmic").pure_epsilon == Fraction(2, 10)
    assert SelectionRelease("0.1", "negative-binomial", eta="-0.5").pure_epsilon == Fraction(15, 100)
    s = SelectionRelease("0.1", "poisson", mean=10)
    truth = poisson_pure_epsilon("0.1", 10)  # 50 digits
    assert truth <= s.pure_epsilon <= truth + truth / 10**30
    assert float(s.pure_epsilon) <= pure_route(0.1, Poisson(10.0))  # the library's float route is above
    c = make_currency("basic", 5, 0)
    assert c.charge(s) == c.charge(PureDP(s.pure_epsilon))


@pytest.mark.parametrize("release", [BoundedRangeRelease("0.25"), SelectionRelease("1/3", "poisson", mean="2.5"),
                                     SelectionRelease("0.1", "negative-binomial", eta=2),
                                     SelectionRelease(1, "geometric")])
def test_choices_round_trip_and_read_in_words(release: BoundedRangeRelease | SelectionRelease) -> None:
    assert from_json(json.loads(json.dumps(release.to_json()))) == release
    text = describe(release)
    assert "0x" not in text
    assert ("exponential mechanism" in text) or ("best of K runs" in text)


def test_bad_choices_are_refused_by_name() -> None:
    with pytest.raises(ValueError, match="epsilon"):
        BoundedRangeRelease(-1)
    with pytest.raises(ValueError, match="law"):
        SelectionRelease("0.1", "uniform")
    with pytest.raises(ValueError, match="mean"):
        SelectionRelease("0.1", "poisson")
    with pytest.raises(ValueError, match="mean"):
        SelectionRelease("0.1", "poisson", mean=0)
    with pytest.raises(ValueError, match="eta"):
        SelectionRelease("0.1", "negative-binomial", eta=-1)
    with pytest.raises(ValueError, match="geometric"):
        SelectionRelease("0.1", "geometric", eta=0)
    assert from_mechanism(BoundedRange(0.5)) == BoundedRangeRelease(0.5)


def test_cli_charges_exponential_steps_and_refuses_the_overspend(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    p = str(tmp_path / "c.ledger")
    assert main(["ledger", "init", p, "--dataset", "d", "--relation", "add_remove", "--epsilon", "1",
                 "--delta", "1e-6", "--currency", "zcdp"]) == 0
    for i in range(19):
        assert main(["ledger", "charge", p, f"q{i}", "br:epsilon=0.1"]) == 0
    capsys.readouterr()
    assert main(["ledger", "charge", p, "q19", "br:epsilon=0.1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "refused" in err and "exponential mechanism" in err
    assert main(["ledger", "charge", p, "s1", "select:epsilon=0.001,law=geometric", "--json"]) == 0
    assert "select" in capsys.readouterr().out
    assert main(["ledger", "charge", p, "s2", "select:epsilon=0.001,law=poisson"]) == 2
    assert "mean" in capsys.readouterr().err


def test_cli_process_refuses_a_bad_law_in_one_line(tmp_path: Path) -> None:
    p = str(tmp_path / "c.ledger")
    exe = [sys.executable, "-c", "import sys; from optcomp.cli import main; sys.exit(main())"]
    subprocess.run([*exe, "ledger", "init", p, "--dataset", "d", "--relation", "add_remove", "--epsilon", "1",
                    "--delta", "1e-6", "--currency", "basic"], check=True, capture_output=True)
    r = subprocess.run([*exe, "ledger", "charge", p, "s", "select:epsilon=0.1,law=uniform"], capture_output=True,
                       text=True, check=False)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "law" in r.stderr and "Traceback" not in r.stderr

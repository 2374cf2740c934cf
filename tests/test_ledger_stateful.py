"""optcomp.ledger against an in-memory Fraction model (hypothesis.stateful): charges, retries,
conflicts, releases, voids and reopenings in any order keep the stored state equal to the model's.
A charge under a voided or released id is refused (issue 32, item 1), and every refusal — over budget,
conflicting, closed — is one more recorded refused attempt, the chain unchanged."""

from __future__ import annotations

import os
import shutil
import tempfile
from fractions import Fraction

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from optcomp.ledger import BudgetExceeded, Ledger, PureDP, ReleaseIdClosed, ReleaseIdConflict

BUDGET = Fraction(2)
IDS = st.sampled_from(["a", "b", "c", "d", "e", "f", "g"])
EPS = st.sampled_from([Fraction(1, 8), Fraction(1, 3), Fraction(1, 2), Fraction(1, 10**17), Fraction(7, 10)])


class LedgerMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.dir = tempfile.mkdtemp(prefix="optcomp-ledger-")
        self.path = os.path.join(self.dir, "l.ledger")
        self.led = Ledger.create(self.path, dataset="d", relation="add_remove", epsilon=BUDGET, delta=0, currency="basic")
        self.charges: dict[str, Fraction] = {}
        self.status: dict[str, str] = {}
        self.refused = 0

    def spent(self) -> Fraction:
        return sum((c for r, c in self.charges.items() if self.status[r] != "voided"), Fraction(0))

    @rule(rid=IDS, eps=EPS)
    def charge(self, rid: str, eps: Fraction) -> None:
        if rid in self.charges:
            if self.charges[rid] == eps and self.status[rid] == "charged":
                assert self.led.charge(rid, PureDP(eps)).replay
                return
            closed = self.status[rid] != "charged"
            try:
                self.led.charge(rid, PureDP(eps))
                raise AssertionError("a conflicting retry, or a charge under a closed id, was accepted")
            except ReleaseIdConflict as exc:
                assert isinstance(exc, ReleaseIdClosed) == closed
                self.refused += 1
            return
        fits = self.spent() + eps <= BUDGET
        try:
            t = self.led.charge(rid, PureDP(eps))
            assert fits and t.status == "charged"
            self.charges[rid], self.status[rid] = eps, "charged"
        except BudgetExceeded:
            assert not fits
            self.refused += 1

    @rule(rid=IDS)
    def released(self, rid: str) -> None:
        if self.status.get(rid) in ("charged", "released"):
            assert self.led.released(rid, "x").status == "released"
            self.status[rid] = "released"

    @rule(rid=IDS)
    def void(self, rid: str) -> None:
        if self.status.get(rid) in ("charged", "voided"):
            assert self.led.void(rid, "did not run").status == "voided"
            self.status[rid] = "voided"

    @rule()
    def reopen(self) -> None:
        self.led.close()
        self.led = Ledger.open(self.path)

    @invariant()
    def matches_model(self) -> None:
        assert self.led.spent()[0] == self.spent()
        assert {t.release_id: t.status for t in self.led.tickets()} == self.status
        assert self.led.refusals(0)["count"] == self.refused

    def teardown(self) -> None:
        v = self.led.verify()
        self.led.close()
        shutil.rmtree(self.dir, ignore_errors=True)
        assert v.ok, v.problems


TestLedgerMachine = LedgerMachine.TestCase
TestLedgerMachine.settings = settings(max_examples=15, stateful_step_count=20, deadline=None)

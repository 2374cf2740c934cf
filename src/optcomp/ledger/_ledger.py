"""The ledger: one dataset + one neighbouring relation + one budget + one mode, fixed at creation.

Protocol (``docs/ledger.md`` §4): :meth:`Ledger.charge` admits or refuses a release in one write
transaction — under the ledger's write lock, replay the events appended since this object last looked
(:mod:`._chain`) and refuse unless the cached state equals the replay, compare exactly against the
replay, append a ``charge`` event to the hash chain, index the release id, update the cache, COMMIT
(and, on SQLite, copy the commit into the main file before returning). The caller runs the mechanism
only after ``charge`` returns, then calls :meth:`Ledger.released`. A retry with the same release id and
the same release, while it is charged, returns the same ticket; a different release under that id is an
error, and so is any charge under an id that was voided or released (:class:`ReleaseIdClosed`: the
mechanism would run uncharged; a new attempt takes a new id). A crash anywhere leaves the charge counted
(no automatic refund); :meth:`Ledger.void` is the curator's explicit, reasoned refund of a release that
provably never ran. Whether an id was charged, and its status, are read from the chain; the release index
must agree. A refusal is recorded outside the chain (:meth:`Ledger.refusals`). :meth:`Ledger.verify`
re-walks the chain and recomputes the cache and the index.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from fractions import Fraction
from typing import Any, Literal, Self

from optcomp.ledger import _plan, _report
from optcomp.ledger._chain import Event, Record, Replay, State, canonical, index_difference, row_hash, vec
from optcomp.ledger._currency import Currency, Vector, from_config, make_currency
from optcomp.ledger._exact import decode, encode
from optcomp.ledger._outcomes import (
    BudgetExceeded,
    Refused,
    ReleaseIdClosed,
    ReleaseIdConflict,
    ReleaseRun,
    Step,
    Ticket,
    Verification,
    same_release,
)
from optcomp.ledger._release import GaussianRelease, PureDP, Release, from_json
from optcomp.ledger._store import Location, Store, StoreError, Tx, is_postgres, location_text, open_store
from optcomp.ledger._words import CURRENCY_WORDS, amounts, component_symbol, describe

Mode = Literal["filter", "plan"]
#: Bumped when the stored format changes; a ledger of another format is refused, never reinterpreted.
FORMAT = 1
#: The neighbouring relations a ledger may name (``docs/ledger.md`` §1; the planner's spelling).
RELATIONS: tuple[str, ...] = ("add_remove", "substitution")

__all__ = ["RELATIONS", "BudgetExceeded", "Ledger", "ReleaseIdClosed", "ReleaseIdConflict", "ReleaseRun", "Ticket",
           "Verification", "canonical", "row_hash"]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


class Ledger:
    """A persistent privacy ledger (see the module docstring). Create with :meth:`create`, reopen with
    :meth:`open`; every method is one transaction, safe across threads of one process only through one
    :class:`Ledger` per thread, and across processes and machines through the store's locks."""

    def __init__(self, store: Store) -> None:
        self._store = store
        with store.read() as tx:
            config, genesis, created = tx.meta()
        if hashlib.sha256((config + "\n" + created).encode()).hexdigest() != genesis:
            raise StoreError("the ledger's configuration does not match its genesis hash: corrupted or edited")
        try:
            self.config: dict[str, Any] = json.loads(config)
            if self.config.get("format") != FORMAT:
                raise StoreError(f"ledger format {self.config.get('format')!r} is not {FORMAT}")
            self.mode: Mode = self.config["mode"]
            if not all(isinstance(self.config[k], str) for k in ("dataset", "relation")):
                raise ValueError("dataset and relation must be strings")
            self.budget = (decode(self.config["budget"]["epsilon"]), decode(self.config["budget"]["delta"]))
            self.currency: Currency | None = from_config(self.config["currency"]) if self.mode == "filter" else None
            self.slots: tuple[Release, ...] = tuple(from_json(s) for s in self.config.get("slots", []))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise StoreError(f"the ledger's configuration row is unreadable ({exc}): corrupted") from None
        self.genesis = genesis
        self.created_at = created
        self._replay: Replay | None = None

    # --- life cycle -------------------------------------------------------------------------------

    @classmethod
    def create(cls, location: Location, *, dataset: str, relation: str, epsilon: object, delta: object,
               mode: Mode = "filter", currency: str = "zcdp", plan: Sequence[Release] | None = None,
               schema: str | None = None, **options: Any) -> Ledger:
        """Create a ledger; refuses if anything exists at ``location`` (an empty file included).

        Args:
            location: a SQLite file path (``str`` or ``os.PathLike``, e.g. ``pathlib.Path``), or a
                ``postgresql://`` conninfo string (``schema`` names the ledger).
            dataset: what the budget protects (free text, stored).
            relation: the neighbouring relation, one of :data:`RELATIONS`.
            epsilon, delta: the budget (exact numbers).
            mode: ``filter`` (adaptive releases in ``currency``) or ``plan`` (the fixed ``plan``).
            currency: filter currency, one of :data:`optcomp.ledger.CURRENCIES`.
            plan: plan mode: the slots, in order.
            schema: PostgreSQL only (default ``optcomp_ledger``); refused for a SQLite file.
            options: currency options (``delta_steps``; ``orders`` and ``workload`` for rdp).
        """
        location = location_text(location)
        if not isinstance(dataset, str) or not dataset.strip():
            raise ValueError(f"dataset must be a non-empty string, got {dataset!r}")
        if relation not in RELATIONS:
            raise ValueError(f"relation must be one of {', '.join(RELATIONS)}, got {relation!r}")
        if mode not in ("filter", "plan"):
            raise ValueError(f"mode must be 'filter' or 'plan', got {mode!r}")
        if schema is not None and not is_postgres(location):
            raise ValueError(f"schema is a PostgreSQL option; a SQLite ledger ({location!r}) takes none")
        cur = make_currency("basic" if mode == "plan" else currency, epsilon, delta, **options)
        config: dict[str, Any] = {"format": FORMAT, "dataset": dataset, "relation": relation, "mode": mode,
                                  "budget": {"epsilon": encode(cur.epsilon), "delta": encode(cur.delta)}}
        if mode == "filter":
            if plan:
                raise ValueError("plan is only for mode='plan' (a plan in a filter is one BatchRelease)")
            config["currency"] = cur.to_config()
            spent = vec([Fraction(0)] * len(cur.thresholds))
        else:
            if options:
                raise ValueError(f"plan mode takes no currency options, got {sorted(options)}")
            slots = list(plan or [])
            config["slots"] = [s.to_json() for s in slots]
            config["certificate"] = _plan.certify(slots, cur.epsilon, cur.delta)
            spent = vec([])
        if not is_postgres(location) and os.path.lexists(location):
            kind = "an empty file" if os.path.isfile(location) and os.path.getsize(location) == 0 else "a file"
            raise StoreError(f"ledger {location!r} already exists ({kind}); init never takes over an "
                             "existing path: remove it or choose another")
        store = open_store(location, schema=schema, mode="create")
        created = _now()
        text = canonical(config)
        genesis = hashlib.sha256((text + "\n" + created).encode()).hexdigest()
        try:
            store.create(text, genesis, created, spent)
        except BaseException:
            store.close()
            raise
        return cls(store)

    @classmethod
    def open(cls, location: Location, *, schema: str | None = None, read_only: bool = False) -> Ledger:
        """Open an existing ledger at ``location`` (as for :meth:`create`; never creates one; a file that is not
        a ledger is refused unchanged). ``read_only``: for reading (report, verify, export): never writes."""
        location = location_text(location)
        if not is_postgres(location) and not os.path.isfile(location):
            raise ValueError(f"ledger must be an existing ledger file, got {location!r}")
        store = open_store(location, schema=schema, mode="read" if read_only else "write")
        try:
            return cls(store)
        except BaseException:
            store.close()
            raise

    @property
    def read_only(self) -> bool:
        """Whether this ledger was opened read-only (write methods raise :class:`StoreError`)."""
        return self._store.read_only

    def close(self) -> None:
        """Close the connection (the ledger itself is always consistent on disk)."""
        self._store.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def backup(self, destination: Location) -> tuple[int, str]:
        """Write a consistent snapshot of this SQLite ledger to the new file ``destination`` (SQLite's
        online backup API; safe while other processes charge). Returns the snapshot's (events, chain
        head; ``destination``: a str or os.PathLike). A backup is an earlier state: ``docs/ledger.md`` §4."""
        destination = location_text(destination, "destination")
        _, problems = self._current()
        if problems:
            raise StoreError(f"refusing to back up a ledger that fails its checks: {problems[0]}")
        self._store.backup(destination)
        with Ledger.open(destination, read_only=True) as copy:
            copied, _ = copy._current()
        return copied.seq - 1, copied.head

    # --- the chain, replayed ------------------------------------------------------------------------

    def _synced(self, tx: Tx) -> tuple[Replay, list[str]]:
        """This object's replay of the chain brought up to ``tx`` (a full walk from the genesis hash the
        first time or after a problem, then only the new events), with every problem found, including a
        cached state row that differs from it."""
        if self._replay is None or self._replay.problems:
            width = len(self.currency.thresholds) if self.currency is not None else 0
            self._replay = Replay.start(self.genesis, width)
            self._replay.feed(tx.events())
        else:
            self._replay.feed(tx.events(since=self._replay.seq))
        return self._replay, self._replay.against(tx.state())

    def _checked(self, tx: Tx) -> Replay:
        """:meth:`_synced`, refusing (:class:`StoreError`) on any problem: what every write rests on."""
        replay, problems = self._synced(tx)
        if problems:
            raise StoreError(f"ledger refused: {problems[0]}; nothing was recorded "
                             "(run `optcomp ledger verify`)")
        return replay

    def check(self) -> list[str]:
        """The problems a replay of the hash chain finds — broken links, a cached state or a release index
        that differs from the chain — without :meth:`verify`'s recomputation of every charge (the chain
        walk is incremental after the first call; the index is read whole)."""
        return self._checked_view()[1]

    def _current(self) -> tuple[Replay, list[str]]:
        with self._store.read() as tx:
            return self._synced(tx)

    # --- accounting -------------------------------------------------------------------------------

    def cost(self, release: Release) -> Vector:
        """The exact charge of ``release`` in this ledger (filter mode; plan mode charges a slot)."""
        if self.currency is None:
            return ()
        return self.currency.charge(release)

    def _admit(self, spent: Vector, next_slot: int, release: Release, slot: int | None) -> tuple[Vector, int | None]:
        """(new spent, slot used); raises :class:`BudgetExceeded`. A pure function of the replayed state."""
        if self.currency is not None:
            if slot is not None:
                raise ValueError("slot is only for plan ledgers")
            c = self.currency
            charge = c.charge(release)
            new = tuple(s + x for s, x in zip(spent, charge, strict=True))
            if not c.within(new):
                over = [component_symbol(n) for n, x, t in zip(c.components, new, c.thresholds, strict=True) if x > t]
                raise BudgetExceeded(f"refused: {describe(release)} costs {amounts(c.components, charge)}, more than "
                                     f"the {CURRENCY_WORDS.get(c.name, c.name)} has left in {', '.join(over)}")
            return new, None
        start = next_slot if slot is None else slot
        if isinstance(start, bool) or not isinstance(start, int) or start < 0:
            raise ValueError(f"slot must be an integer ≥ 0, got {slot!r}")
        if start < next_slot:
            raise BudgetExceeded(f"refused: slot {start} is already used or skipped (next is {next_slot})")
        if start >= len(self.slots):
            raise BudgetExceeded(f"refused: the plan has {len(self.slots)} slots, all used")
        if not _plan.dominated(release, self.slots[start]):
            raise BudgetExceeded(f"refused: {describe(release)} is not dominated by slot {start} "
                                 f"({describe(self.slots[start])})")
        return spent, start

    def charge(self, release_id: str, release: Release, *, slot: int | None = None) -> Ticket:
        """Charge ``release`` under ``release_id`` (one transaction; see the module docstring).

        Raises:
            BudgetExceeded: it does not fit (nothing charged; the attempt is recorded among the refusals,
                and the message names what remains and what would still fit).
            ReleaseIdClosed: ``release_id`` was voided or released: it is never charged again (a new
                attempt needs a new release id).
            ReleaseIdConflict: ``release_id`` was charged with a different release.
            StoreError: the ledger fails its checks (its cached state, chain or release index), or is
                read-only.
            ValueError: bad ``release_id`` or a release this ledger's currency cannot charge.
        """
        return self.charge_many([(release_id, release, slot)])[0]

    def charge_many(self, items: Sequence[tuple[str, Release] | tuple[str, Release, int | None]]) -> list[Ticket]:
        """Charge several releases in one transaction, all or nothing, in order (each admitted against
        the state its predecessors left; retries of already-charged ids are replays). One commit — one
        fsync — for the lot, so a client with many releases declared up front pays the disk once.

        Admission rests on this object's own replay of the hash chain (:mod:`._chain`), checked equal to
        the cached state inside the write transaction; any difference refuses the whole batch. Whether an
        id was charged, and its status, are read from the chain (the release index must agree with it).
        A refused batch records its first refused item, with the message it raises, among the refusals.

        Raises:
            BudgetExceeded: some item does not fit (nothing of the batch is charged).
            ReleaseIdClosed, ReleaseIdConflict, StoreError, ValueError: as :meth:`charge`.
        """
        prepared: list[tuple[str, Release, int | None, str]] = []
        for item in items:
            rid, release = item[0], item[1]
            slot = item[2] if len(item) > 2 else None
            if not isinstance(rid, str) or not rid or len(rid) > 200:
                raise ValueError(f"release_id must be a non-empty string of ≤ 200 characters, got {rid!r}")
            if self.currency is not None:
                self.currency.charge(release)  # a charge this currency cannot make fails before any lock
            prepared.append((rid, release, slot, canonical(release.to_json())))
        refused: Refused | None = None
        with self._store.write() as tx:
            replay = self._checked(tx)
            try:
                steps = self._decide(tx, replay, prepared)
            except Refused as exc:  # over budget: the record says what remained (arithmetic only, under the lock)
                refused, over = exc, isinstance(exc.error, BudgetExceeded)
                reason = " ".join(f"{exc.error}{'; ' + self._left(exc.spent, exc.next_slot) if over else ''}".split())
                tx.add_refusal(exc.release_id, exc.spec, reason, _now(), replay.seq)
            else:
                tickets = self._append_charges(tx, replay, steps)
        if refused is not None:
            if isinstance(refused.error, BudgetExceeded):  # and what still fits, searched after the commit
                raise BudgetExceeded(f"{reason}; {self._fits_words(refused.spent, refused.next_slot)}") from None
            raise refused.error from None
        return tickets

    def _index_agrees(self, tx: Tx, release_id: str, record: Record | None) -> None:
        """Refuse (:class:`StoreError`) when the index row of ``release_id`` differs from the chain's."""
        found = tx.release(release_id)
        row = None if found is None else (release_id, *found)
        expected = None if record is None else record.index_row()
        if row != expected:
            raise StoreError(f"ledger refused: {index_difference(release_id, row, expected)}; nothing was recorded "
                             "(run `optcomp ledger verify`)")

    def _decide(self, tx: Tx, replay: Replay, prepared: list[tuple[str, Release, int | None, str]]) -> list[Step]:
        """Admission of a batch against the chain, before anything is written: the steps, or
        :class:`Refused` carrying the first refusal and the state it was refused against."""
        spent, next_slot = replay.spent, replay.next_slot
        steps: list[Step] = []
        fresh: dict[str, str] = {}
        for rid, release, slot, spec in prepared:
            record = replay.records.get(rid)
            self._index_agrees(tx, rid, record)
            try:
                if record is not None:
                    steps.append(Step(rid, release, spec, replay=self._retry(record, spec)))
                    continue
                if rid in fresh:
                    same_release(rid, fresh[rid], spec)
                    steps.append(Step(rid, release, spec, again=True))
                    continue
                new, used = self._admit(spent, next_slot, release, slot)
            except (BudgetExceeded, ReleaseIdConflict) as exc:
                raise Refused(exc, rid, spec, spent, next_slot) from None
            steps.append(Step(rid, release, spec, tuple(n - s for n, s in zip(new, spent, strict=True)), used))
            fresh[rid] = spec
            spent, next_slot = new, next_slot if used is None else used + 1
        return steps

    def _append_charges(self, tx: Tx, replay: Replay, steps: list[Step]) -> list[Ticket]:
        spent, seq, head, next_slot = replay.spent, replay.seq, replay.head, replay.next_slot
        tickets: list[Ticket] = []
        made: dict[str, Ticket] = {}
        for st in steps:
            if st.replay is not None or st.again:
                tickets.append(st.replay or Ticket(st.release_id, made[st.release_id].seq, st.release,
                                                   made[st.release_id].charge, made[st.release_id].slot, "charged",
                                                   replay=True))
                continue
            body = canonical({"release": json.loads(st.spec), "charge": [encode(x) for x in st.charge],
                              "slot": st.slot})
            created = _now()
            h = row_hash(head, seq, "charge", st.release_id, body, created)
            tx.append(seq, "charge", st.release_id, body, created, head, h)
            tx.insert_release(st.release_id, seq, st.spec, vec(st.charge), st.slot)
            made[st.release_id] = Ticket(st.release_id, seq, st.release, st.charge, st.slot, "charged")
            tickets.append(made[st.release_id])
            spent = tuple(s + x for s, x in zip(spent, st.charge, strict=True))
            seq, head = seq + 1, h
            next_slot = next_slot if st.slot is None else st.slot + 1
        tx.save_state(vec(spent), seq, head, next_slot)
        return tickets

    @staticmethod
    def _retry(record: Record, spec: str) -> Ticket:
        """The ticket of a retry of a charged release id; a closed or conflicting one is refused."""
        rid = record.release_id
        if record.status == "voided":
            raise ReleaseIdClosed(f"release_id {rid!r} was voided (reason: {record.note}): a voided id is closed and "
                                  "never charged again; charge the new attempt under a new release id")
        if record.status == "released":
            raise ReleaseIdClosed(f"release_id {rid!r} was already released under its charge (seq {record.seq}): "
                                  "running it again is a new release; charge it under a new release id")
        same_release(rid, record.spec, spec)
        return Ticket(rid, record.seq, from_json(json.loads(record.spec)), record.charge, record.slot, "charged",
                      replay=True)

    def _left(self, spent: Vector, next_slot: int) -> str:
        """What remains from ``spent`` (a refusal's second part; exact arithmetic only: it runs under the lock)."""
        return _report.left(self.currency, spent) if self.currency else _report.slots_left(self.slots, next_slot)

    def _fits_words(self, spent: Vector, next_slot: int) -> str:
        """What would still fit from ``spent`` (a refusal's last part: the searches of :meth:`report`)."""
        if self.currency is None:
            return _report.slot_fits_words(self.slots, next_slot)
        return _report.fits_words(self.currency, spent, self._pure_epsilon_at(spent), self._sigma_at(spent))

    def _transition(self, release_id: str, kind: str, status: str, body: dict[str, Any]) -> Ticket:
        with self._store.write() as tx:
            replay = self._checked(tx)
            record = replay.records.get(release_id)
            self._index_agrees(tx, release_id, record)
            if record is None:
                raise ValueError(f"release_id {release_id!r} was never charged")
            release = from_json(json.loads(record.spec))
            if record.status == status:
                return Ticket(release_id, record.seq, release, record.charge, record.slot, status, replay=True)
            if record.status != "charged":
                raise ValueError(f"release_id {release_id!r} is {record.status}; only a charged release can become "
                                 f"{status}")
            spent = replay.spent
            if status == "voided":
                spent = tuple(s - c for s, c in zip(spent, record.charge, strict=True))
            text = canonical(body)
            created = _now()
            h = row_hash(replay.head, replay.seq, kind, release_id, text, created)
            tx.append(replay.seq, kind, release_id, text, created, replay.head, h)
            tx.set_status(release_id, status)
            tx.save_state(vec(spent), replay.seq + 1, h, replay.next_slot)
        return Ticket(release_id, record.seq, release, record.charge, record.slot, status)

    def released(self, release_id: str, output_digest: str = "") -> Ticket:
        """Mark a charged release as run and published (idempotent); ``output_digest`` is recorded."""
        if not isinstance(output_digest, str) or len(output_digest) > 200:
            raise ValueError("output_digest must be a string of ≤ 200 characters")
        return self._transition(release_id, "released", "released", {"digest": output_digest})

    def void(self, release_id: str, reason: str) -> Ticket:
        """Curator's refund of a charged release that provably never ran on the data (a failure that
        depends on the data is itself an output: do not void it). The reason is recorded in the chain;
        plan slots stay used."""
        if not isinstance(reason, str) or not reason.strip():
            raise ValueError("reason must be a non-empty string (a void is an explicit, recorded act)")
        return self._transition(release_id, "void", "voided", {"reason": reason})

    @contextmanager
    def release(self, release_id: str, release: Release, *, slot: int | None = None) -> Iterator[ReleaseRun]:
        """Charge, run, mark released: ``with ledger.release(id, r) as run: run.output = mech(data)``.

        The body runs only after the charge committed; a refused charge — over budget, or a release id
        that was voided or already released (:class:`ReleaseIdClosed`) — raises before the body runs.
        On normal exit the release is marked released with the sha256 of ``repr(run.output)``; on an
        exception it stays charged (no refund).
        """
        ticket = self.charge(release_id, release, slot=slot)
        if ticket.status != "charged":  # charge() refuses closed ids; never run a body without a live charge
            raise ReleaseIdClosed(f"release_id {release_id!r} is {ticket.status}; nothing may run under it")
        run = ReleaseRun(ticket)
        yield run
        digest = hashlib.sha256(repr(run.output).encode()).hexdigest() if run.output is not None else ""
        self.released(release_id, digest)

    # --- reading ----------------------------------------------------------------------------------

    def spent(self) -> Vector:
        """The exact spent vector replayed from the hash chain (filter mode; ``()`` in plan mode)."""
        return self._current()[0].spent

    def next_slot(self) -> int:
        """Plan mode: the index of the next unused slot (replayed from the hash chain)."""
        return self._current()[0].next_slot

    def tickets(self) -> list[Ticket]:
        """Every release id ever charged, in charge order, with its current status (read from the hash
        chain, not from the release index)."""
        records = list(self._current()[0].records.values())
        return [Ticket(r.release_id, r.seq, from_json(json.loads(r.spec)), r.charge, r.slot, r.status)
                for r in records]

    def history(self) -> list[dict[str, Any]]:
        """Every release in charge order, as the hash chain tells it, with its time, status, words and the
        cumulative spend once it and every earlier release are counted (:func:`._report.history`; the
        ``/ledger`` page's table and chart)."""
        records = list(self._current()[0].records.values())
        return _report.history(self.currency, len(self.slots), records)

    def refusals(self, last: int | None = None) -> dict[str, Any]:
        """The refused attempts (release id, release, reason, time), ``last`` of them or all: recorded
        outside the hash chain and not verified (``docs/ledger.md`` §4, Refused attempts)."""
        with self._store.read() as tx:
            count, rows = tx.refusals(last)
        return _report.refusals(count, rows)

    def fits(self, release: Release) -> int:
        """How many more copies of ``release`` fit now (exact; −1: unlimited; plan mode: dominating
        slots left)."""
        if self.currency is None:
            nxt = self.next_slot()
            return sum(1 for s in self.slots[nxt:] if _plan.dominated(release, s))
        return self.currency.copies(release, self.spent())

    def _admissible(self, release: Release, spent: Vector) -> bool:
        try:
            self._admit(spent, 0, release, None)
        except (BudgetExceeded, ValueError):
            return False
        return True

    def smallest_sigma(self, sensitivity: float = 1.0) -> float | None:
        """Smallest float σ (rounded up) such that one more Δ-sensitive Gaussian fits, or None."""
        return self._sigma_at(self.spent(), sensitivity)

    def _sigma_at(self, spent: Vector, sensitivity: float = 1.0) -> float | None:
        if self.currency is None or "gaussian" not in _charges_of(self.currency):
            return None
        return _report.smallest_sigma(lambda s: self._admissible(GaussianRelease(s, sensitivity), spent))

    def largest_pure_epsilon(self) -> float | None:
        """Largest float ε (rounded down) such that one more ε-DP query fits, or None."""
        return self._pure_epsilon_at(self.spent())

    def _pure_epsilon_at(self, spent: Vector) -> float | None:
        if self.currency is None:
            return None
        return _report.largest_pure_epsilon(lambda e: self._admissible(PureDP(e), spent), float(self.currency.epsilon))

    def report(self, release: Release | None = None) -> dict[str, Any]:
        """Spent, remaining, the guarantee with its certificate, and remaining in the user's units; the
        same in words (``*_text`` fields, ``what_fits``, ``fraction_spent``) and the refused attempts.

        ``problems`` lists what a replay of the chain finds wrong — a broken link, a cached state or a
        release index that differs from the chain (:meth:`check`). In filter mode "spent" is in the
        currency's units, not an (ε, δ) claim: translating a running total into (ε, δ) would be an
        odometer, which needs its own theorem (RRUV 2016).
        """
        replay, problems = self._checked_view()
        out = _report.header(self.config, self.mode, problems, replay.status)
        if self.currency is not None:
            spent = replay.spent
            out |= _report.filter_fields(self.currency, spent, self._pure_epsilon_at(spent), self._sigma_at(spent))
        else:
            out |= _report.plan_fields(self.slots, replay.next_slot, self.budget, self.config["certificate"])
        if release is not None:
            count = self.fits(release)
            out["fits"] = {"release": release.to_json(), "count": count, "release_text": describe(release),
                           "text": "unlimited" if count < 0 else f"{count} more"}
        out["refused"] = self.refusals(_report.REFUSALS_SHOWN)
        return out

    def _checked_view(self) -> tuple[Replay, list[str]]:
        """The replay and every problem a reader should see: the chain's, the cached state's and the
        release index's (the whole index compared with the chain)."""
        with self._store.read() as tx:
            replay, problems = self._synced(tx)
            rows = tx.releases()
        return replay, problems + replay.index_problems(rows)

    def export(self) -> dict[str, Any]:
        """The configuration and the whole event log (JSON-able; enough to re-verify elsewhere), each
        event with its release and charge in words beside the exact body (``release_text``,
        ``charge_text``), and the refused attempts (``refusals``: outside the chain, unverified)."""
        with self._store.read() as tx:
            events = tx.events()
            count, rows = tx.refusals()
        return {"config": self.config, "genesis": self.genesis, "created_at": self.created_at,
                "events": _report.events(events, self.currency), "refusals": _report.refusals(count, rows)}

    def verify(self) -> Verification:
        """Re-walk the hash chain from the genesis hash, recompute every charge from its stored release
        and replay the admission rule on it, recompute the cached state and the release index, and run
        the store's integrity check. Reads only (works on a ledger opened read-only); a store that
        cannot be read is reported as a problem, not raised. The refused attempts are outside the chain
        and are not verified."""
        try:
            with self._store.read() as tx:
                config, genesis, created = tx.meta()
                events: list[Event] = tx.events()
                state: State = tx.state()
                index = tx.releases()
        except StoreError as exc:
            return Verification(False, 0, (str(exc),))
        problems: list[str] = []
        if hashlib.sha256((config + "\n" + created).encode()).hexdigest() != genesis:
            problems.append("genesis hash does not match the configuration")
        replay = Replay.start(genesis, len(self.currency.thresholds) if self.currency is not None else 0)
        replay.feed(events, self._charge_check())
        problems += replay.against(state)
        problems += replay.index_problems(index)
        check = self._store.integrity()
        if check != "ok":
            problems.append(f"storage integrity check: {check}")
        return Verification(not problems, len(events), tuple(problems))

    def _charge_check(self) -> Any:
        """verify()'s check of one charge event: the stored charge equals the one recomputed from the
        stored release (memoised per distinct release), and (filter mode) the admission rule held."""
        memo: dict[str, Vector] = {}

        def check(seq: int, before: Vector, ch: Vector, body: dict[str, Any]) -> str | None:
            spec = canonical(body["release"])
            if spec not in memo:
                memo[spec] = self.cost(from_json(body["release"]))
            if ch != memo[spec]:
                return "stored charge differs from the recomputed one"
            after = tuple(s + c for s, c in zip(before, ch, strict=True))
            if self.currency is not None and not self.currency.within(after):
                return f"charge admitted beyond the budget ({self.currency.exceeded(after)})"
            return None

        return check


def _charges_of(c: Currency) -> set[str]:
    from optcomp.ledger._currency import _CHARGES

    return set(_CHARGES[c.name])

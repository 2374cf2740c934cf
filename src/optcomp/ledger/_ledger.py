"""The ledger: one dataset + one neighbouring relation + one budget + one mode, fixed at creation.

Protocol (``docs/ledger.md`` §4): :meth:`Ledger.charge` admits or refuses a release in one write
transaction — read the cached state under the ledger's write lock, compare exactly, append a ``charge``
event to the hash chain, index the release id, update the cache, COMMIT. The caller runs the mechanism
only after ``charge`` returns, then calls :meth:`Ledger.released`. A retry with the same release id and
the same release returns the same ticket; a different release under that id is an error. A crash
anywhere leaves the charge counted (no automatic refund); :meth:`Ledger.void` is the curator's explicit,
reasoned refund of a release that provably never ran. :meth:`Ledger.verify` re-walks the chain and
recomputes the cache.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from fractions import Fraction
from typing import Any, Literal, Self

from optcomp.ledger import _plan
from optcomp.ledger._currency import Currency, Vector, from_config, make_currency
from optcomp.ledger._exact import decode, encode
from optcomp.ledger._release import GaussianRelease, PureDP, Release, from_json
from optcomp.ledger._store import Store, StoreError, open_store

Mode = Literal["filter", "plan"]
#: Bumped when the stored format changes; a ledger of another format is refused, never reinterpreted.
FORMAT = 1


class BudgetExceeded(RuntimeError):
    """The release does not fit: nothing was recorded, the mechanism must not run."""


class ReleaseIdConflict(ValueError):
    """A release id was reused with different parameters."""


def canonical(obj: object) -> str:
    """Canonical JSON (sorted keys, no spaces, UTF-8): what the hash chain hashes."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def row_hash(prev: str, seq: int, kind: str, release_id: str, body: str, created_at: str) -> str:
    """sha256(prev_hash ‖ '\\n' ‖ canonical [seq, kind, release_id, body, created_at])."""
    payload = prev + "\n" + canonical([seq, kind, release_id, body, created_at])
    return hashlib.sha256(payload.encode()).hexdigest()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def _vec(v: Sequence[Fraction]) -> str:
    return canonical([encode(x) for x in v])


def _unvec(s: str) -> Vector:
    return tuple(decode(x) for x in json.loads(s))


@dataclass(frozen=True)
class Ticket:
    """The outcome of a charge: its release id, sequence number, exact charge and status.

    ``replay`` is true when this call found the release already charged (an idempotent retry).
    """

    release_id: str
    seq: int
    release: Release
    charge: Vector
    slot: int | None
    status: str
    replay: bool = False


@dataclass(frozen=True)
class Verification:
    """What :meth:`Ledger.verify` found: ``ok`` iff ``problems`` is empty."""

    ok: bool
    events: int
    problems: tuple[str, ...] = field(default=())


class Ledger:
    """A persistent privacy ledger (see the module docstring). Create with :meth:`create`, reopen with
    :meth:`open`; every method is one transaction, safe across threads of one process only through one
    :class:`Ledger` per thread, and across processes and machines through the store's locks."""

    def __init__(self, store: Store) -> None:
        self._store = store
        with store.read() as tx:
            config, genesis, created = tx.meta()
        self.config: dict[str, Any] = json.loads(config)
        if self.config.get("format") != FORMAT:
            raise StoreError(f"ledger format {self.config.get('format')!r} is not {FORMAT}")
        self.genesis = genesis
        self.created_at = created
        self.mode: Mode = self.config["mode"]
        self.currency: Currency | None = from_config(self.config["currency"]) if self.mode == "filter" else None
        self.slots: tuple[Release, ...] = tuple(from_json(s) for s in self.config.get("slots", []))

    # --- life cycle -------------------------------------------------------------------------------

    @classmethod
    def create(cls, location: str, *, dataset: str, relation: str, epsilon: object, delta: object,
               mode: Mode = "filter", currency: str = "zcdp", plan: Sequence[Release] | None = None,
               schema: str = "optcomp_ledger", **options: Any) -> Ledger:
        """Create a ledger; refuses if one exists at ``location``.

        Args:
            location: a SQLite file path, or a ``postgresql://`` conninfo (``schema`` names the ledger).
            dataset: what the budget protects (free text, stored).
            relation: the neighbouring relation (``add_remove``, ``substitution`` or free text).
            epsilon, delta: the budget (exact numbers).
            mode: ``filter`` (adaptive releases in ``currency``) or ``plan`` (the fixed ``plan``).
            currency: filter currency, one of :data:`optcomp.ledger.CURRENCIES`.
            plan: plan mode: the slots, in order.
            options: currency options (``delta_steps``, ``orders``).
        """
        if not isinstance(dataset, str) or not dataset.strip():
            raise ValueError(f"dataset must be a non-empty string, got {dataset!r}")
        if not isinstance(relation, str) or not relation.strip():
            raise ValueError(f"relation must be a non-empty string, got {relation!r}")
        if mode not in ("filter", "plan"):
            raise ValueError(f"mode must be 'filter' or 'plan', got {mode!r}")
        cur = make_currency("basic" if mode == "plan" else currency, epsilon, delta, **options)
        config: dict[str, Any] = {"format": FORMAT, "dataset": dataset, "relation": relation, "mode": mode,
                                  "budget": {"epsilon": encode(cur.epsilon), "delta": encode(cur.delta)}}
        if mode == "filter":
            if plan:
                raise ValueError("plan is only for mode='plan' (a plan in a filter is one BatchRelease)")
            config["currency"] = cur.to_config()
            spent = _vec([Fraction(0)] * len(cur.thresholds))
        else:
            if options:
                raise ValueError(f"plan mode takes no currency options, got {sorted(options)}")
            slots = list(plan or [])
            config["slots"] = [s.to_json() for s in slots]
            config["certificate"] = _plan.certify(slots, cur.epsilon, cur.delta)
            spent = _vec([])
        if not location.startswith(("postgresql://", "postgres://")) and os.path.exists(location) \
                and os.path.getsize(location) > 0:
            raise StoreError(f"ledger {location!r} already exists")
        store = open_store(location, schema=schema)
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
    def open(cls, location: str, *, schema: str = "optcomp_ledger") -> Ledger:
        """Open an existing ledger (never creates one)."""
        if not location.startswith(("postgresql://", "postgres://")) and not os.path.isfile(location):
            raise ValueError(f"ledger must be an existing ledger file, got {location!r}")
        store = open_store(location, schema=schema)
        try:
            return cls(store)
        except BaseException:
            store.close()
            raise

    def close(self) -> None:
        """Close the connection (the ledger itself is always consistent on disk)."""
        self._store.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- accounting -------------------------------------------------------------------------------

    def cost(self, release: Release) -> Vector:
        """The exact charge of ``release`` in this ledger (filter mode; plan mode charges a slot)."""
        if self.currency is None:
            return ()
        return self.currency.charge(release)

    def _admit(self, spent: Vector, next_slot: int, release: Release, slot: int | None) -> tuple[Vector, int | None]:
        """(new spent, slot used); raises :class:`BudgetExceeded`. Pure function of the cached state."""
        if self.currency is not None:
            if slot is not None:
                raise ValueError("slot is only for plan ledgers")
            ch = self.currency.charge(release)
            new = tuple(s + c for s, c in zip(spent, ch, strict=True))
            over = [n for n, x, t in zip(self.currency.components, new, self.currency.thresholds, strict=True)
                    if x > t]
            if over:
                raise BudgetExceeded(f"refused: the charge would exceed the {self.currency.name} budget in "
                                     f"{', '.join(over)}")
            return new, None
        start = next_slot if slot is None else slot
        if isinstance(start, bool) or not isinstance(start, int) or start < 0:
            raise ValueError(f"slot must be an integer ≥ 0, got {slot!r}")
        if start < next_slot:
            raise BudgetExceeded(f"refused: slot {start} is already used or skipped (next is {next_slot})")
        if start >= len(self.slots):
            raise BudgetExceeded(f"refused: the plan has {len(self.slots)} slots, all used")
        if not _plan.dominated(release, self.slots[start]):
            raise BudgetExceeded(f"refused: release {release.to_json()} is not dominated by slot {start} "
                                 f"{self.slots[start].to_json()}")
        return spent, start

    def charge(self, release_id: str, release: Release, *, slot: int | None = None) -> Ticket:
        """Charge ``release`` under ``release_id`` (one transaction; see the module docstring).

        Raises:
            BudgetExceeded: it does not fit (nothing recorded).
            ReleaseIdConflict: ``release_id`` was charged with a different release.
            ValueError: bad ``release_id`` or a release this ledger's currency cannot charge.
        """
        return self.charge_many([(release_id, release, slot)])[0]

    def charge_many(self, items: Sequence[tuple[str, Release] | tuple[str, Release, int | None]]) -> list[Ticket]:
        """Charge several releases in one transaction, all or nothing, in order (each admitted against
        the state its predecessors left; retries of already-charged ids are replays). One commit — one
        fsync — for the lot, so a client with many releases declared up front pays the disk once.

        Raises:
            BudgetExceeded: some item does not fit (nothing of the batch is recorded).
            ReleaseIdConflict, ValueError: as :meth:`charge`.
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
        tickets: list[Ticket] = []
        with self._store.write() as tx:
            spent_s, seq, head, next_slot = tx.state()
            spent = _unvec(spent_s)
            batch: dict[str, Ticket] = {}
            for rid, release, slot, spec in prepared:
                found = tx.release(rid)
                if found is not None:
                    tickets.append(self._replay(rid, spec, found))
                    continue
                if rid in batch:
                    tickets.append(self._replay(rid, spec, (canonical(batch[rid].release.to_json()),
                                                            _vec(batch[rid].charge), batch[rid].slot, "charged",
                                                            batch[rid].seq)))
                    continue
                new, used = self._admit(spent, next_slot, release, slot)
                ch = tuple(n - s for n, s in zip(new, spent, strict=True))
                body = canonical({"release": json.loads(spec), "charge": [encode(x) for x in ch], "slot": used})
                created = _now()
                h = row_hash(head, seq, "charge", rid, body, created)
                tx.append(seq, "charge", rid, body, created, head, h)
                tx.insert_release(rid, seq, spec, _vec(ch), used)
                ticket = Ticket(rid, seq, release, ch, used, "charged")
                batch[rid] = ticket
                tickets.append(ticket)
                spent, seq, head = new, seq + 1, h
                next_slot = next_slot if used is None else used + 1
            tx.save_state(_vec(spent), seq, head, next_slot)
        return tickets

    def _replay(self, release_id: str, spec: str, found: tuple[str, str, int | None, str, int]) -> Ticket:
        old_spec, charge, slot, status, seq = found
        if old_spec != spec:
            raise ReleaseIdConflict(f"release_id {release_id!r} was charged with {old_spec}, not {spec}")
        return Ticket(release_id, seq, from_json(json.loads(old_spec)), _unvec(charge), slot, status, replay=True)

    def _transition(self, release_id: str, kind: str, status: str, body: dict[str, Any]) -> Ticket:
        with self._store.write() as tx:
            found = tx.release(release_id)
            if found is None:
                raise ValueError(f"release_id {release_id!r} was never charged")
            spec, charge, slot, old, cseq = found
            if old == status:
                return Ticket(release_id, cseq, from_json(json.loads(spec)), _unvec(charge), slot, old, replay=True)
            if old != "charged":
                raise ValueError(f"release_id {release_id!r} is {old}; only a charged release can become {status}")
            spent_s, seq, head, next_slot = tx.state()
            spent = _unvec(spent_s)
            if status == "voided":
                spent = tuple(s - c for s, c in zip(spent, _unvec(charge), strict=True))
            text = canonical(body)
            created = _now()
            h = row_hash(head, seq, kind, release_id, text, created)
            tx.append(seq, kind, release_id, text, created, head, h)
            tx.set_status(release_id, status)
            tx.save_state(_vec(spent), seq + 1, h, next_slot)
        return Ticket(release_id, cseq, from_json(json.loads(spec)), _unvec(charge), slot, status)

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

        The body runs only after the charge committed; on normal exit the release is marked released
        with the sha256 of ``repr(run.output)``; on an exception it stays charged (no refund).
        """
        ticket = self.charge(release_id, release, slot=slot)
        run = ReleaseRun(ticket)
        yield run
        digest = hashlib.sha256(repr(run.output).encode()).hexdigest() if run.output is not None else ""
        self.released(release_id, digest)

    # --- reading ----------------------------------------------------------------------------------

    def spent(self) -> Vector:
        """The cached exact spent vector (filter mode; ``()`` in plan mode)."""
        with self._store.read() as tx:
            return _unvec(tx.state()[0])

    def next_slot(self) -> int:
        """Plan mode: the index of the next unused slot."""
        with self._store.read() as tx:
            return tx.state()[3]

    def tickets(self) -> list[Ticket]:
        """Every release id ever charged, in charge order, with its current status."""
        with self._store.read() as tx:
            rows = tx.releases()
        return [Ticket(rid, seq, from_json(json.loads(spec)), _unvec(ch), slot, status)
                for rid, spec, ch, slot, status, seq in rows]

    def fits(self, release: Release) -> int:
        """How many more copies of ``release`` fit now (exact; plan mode: dominating slots left)."""
        if self.currency is None:
            nxt = self.next_slot()
            return sum(1 for s in self.slots[nxt:] if _plan.dominated(release, s))
        ch = self.currency.charge(release)
        rem = [t - s for t, s in zip(self.currency.thresholds, self.spent(), strict=True)]
        counts = [math.floor(r / c) for r, c in zip(rem, ch, strict=True) if c > 0]
        return min(int(c) for c in counts) if counts else -1

    def _admissible(self, release: Release, spent: Vector) -> bool:
        try:
            self._admit(spent, 0, release, None)
        except (BudgetExceeded, ValueError):
            return False
        return True

    def smallest_sigma(self, sensitivity: float = 1.0) -> float | None:
        """Smallest float σ (rounded up) such that one more Δ-sensitive Gaussian fits, or None."""
        if self.currency is None or "gaussian" not in _charges_of(self.currency):
            return None
        spent = self.spent()

        def ok(s: float) -> bool:
            return self._admissible(GaussianRelease(s, sensitivity), spent)

        lo, hi = 0.0, 1.0
        while not ok(hi):
            hi *= 2.0
            if hi > 1e300:
                return None
        for _ in range(2100):
            mid = (lo + hi) / 2
            if mid in (lo, hi):
                break
            lo, hi = (lo, mid) if ok(mid) else (mid, hi)
        return hi

    def largest_pure_epsilon(self) -> float | None:
        """Largest float ε (rounded down) such that one more ε-DP query fits, or None."""
        if self.currency is None:
            return None
        spent = self.spent()

        def ok(e: float) -> bool:
            return self._admissible(PureDP(e), spent)

        if not ok(0.0):
            return None
        lo, hi = 0.0, float(self.currency.epsilon) + 1.0
        if ok(hi):
            return hi
        for _ in range(2100):
            mid = (lo + hi) / 2
            if mid in (lo, hi):
                break
            lo, hi = (mid, hi) if ok(mid) else (lo, mid)
        return lo

    def report(self, release: Release | None = None) -> dict[str, Any]:
        """Spent, remaining, the guarantee with its certificate, and remaining in the user's units.

        In filter mode "spent" is in the currency's units, not an (ε, δ) claim: translating a running
        total into (ε, δ) would be an odometer, which needs its own theorem (RRUV 2016).
        """
        budget = self.config["budget"]
        out: dict[str, Any] = {"dataset": self.config["dataset"], "relation": self.config["relation"],
                               "mode": self.mode, "budget": {"epsilon": float(decode(budget["epsilon"])),
                                                             "delta": float(decode(budget["delta"]))}}
        tickets = self.tickets()
        out["releases"] = {s: sum(1 for t in tickets if t.status == s) for s in ("charged", "released", "voided")}
        if self.currency is not None:
            c = self.currency
            spent = self.spent()
            out["currency"] = c.name
            out["components"] = list(c.components)
            out["threshold"] = [encode(t) for t in c.thresholds]
            out["spent"] = [encode(s) for s in spent]
            out["remaining"] = [encode(t - s) for t, s in zip(c.thresholds, spent, strict=True)]
            out["spent_float"] = [float(s) for s in spent]
            out["remaining_float"] = [float(t - s) for t, s in zip(c.thresholds, spent, strict=True)]
            out["guarantee"] = c.guarantee()
            out["certificate"] = c.certificate
            out["smallest_sigma"] = self.smallest_sigma()
            out["largest_pure_epsilon"] = self.largest_pure_epsilon()
        else:
            nxt = self.next_slot()
            out["slots"] = len(self.slots)
            out["next_slot"] = nxt
            out["remaining_slots"] = [s.to_json() for s in self.slots[nxt:]]
            out["guarantee"] = (f"({out['budget']['epsilon']:g}, {out['budget']['delta']:g})-DP: the whole "
                                "plan's certified optimal composition")
            out["certificate"] = self.config["certificate"]
        if release is not None:
            out["fits"] = {"release": release.to_json(), "count": self.fits(release)}
        return out

    def export(self) -> dict[str, Any]:
        """The configuration and the whole event log (JSON-able; enough to re-verify elsewhere)."""
        with self._store.read() as tx:
            events = tx.events()
        return {"config": self.config, "genesis": self.genesis, "created_at": self.created_at,
                "events": [{"seq": e[0], "kind": e[1], "release_id": e[2], "body": json.loads(e[3]),
                            "created_at": e[4], "prev_hash": e[5], "row_hash": e[6]} for e in events]}

    def verify(self) -> Verification:
        """Re-walk the hash chain from the genesis hash, recompute every charge from its stored release,
        recompute the cached state and the release index, and run the store's integrity check."""
        with self._store.read() as tx:
            config, genesis, created = tx.meta()
            events = tx.events()
            state = tx.state()
            index = {r[0]: r for r in tx.releases()}
        problems: list[str] = []
        if hashlib.sha256((config + "\n" + created).encode()).hexdigest() != genesis:
            problems.append("genesis hash does not match the configuration")
        problems += self._walk(events, genesis, state, index)
        check = self._store.integrity()
        if check != "ok":
            problems.append(f"storage integrity check: {check}")
        return Verification(not problems, len(events), tuple(problems))

    def _walk(self, events: list[tuple[int, str, str, str, str, str, str]], genesis: str,
              state: tuple[str, int, str, int], index: dict[str, Any]) -> list[str]:
        problems: list[str] = []
        head, expect_seq = genesis, 1
        n = len(self.currency.thresholds) if self.currency is not None else 0
        spent: Vector = tuple(Fraction(0) for _ in range(n))
        status: dict[str, str] = {}
        charges: dict[str, Vector] = {}
        next_slot, memo = 0, {}
        for seq, kind, rid, body, created, prev, h in events:
            if seq != expect_seq:
                problems.append(f"sequence gap: expected {expect_seq}, found {seq}")
            if prev != head or row_hash(prev, seq, kind, rid, body, created) != h:
                problems.append(f"hash chain broken at seq {seq}")
            head, expect_seq = h, seq + 1
            b = json.loads(body)
            if kind == "charge":
                spec = canonical(b["release"])
                if spec not in memo:
                    memo[spec] = self.cost(from_json(b["release"]))
                ch = tuple(decode(x) for x in b["charge"])
                if ch != memo[spec]:
                    problems.append(f"seq {seq}: stored charge differs from the recomputed one")
                if rid in status:
                    problems.append(f"seq {seq}: release_id {rid!r} charged twice")
                status[rid], charges[rid] = "charged", ch
                spent = tuple(s + c for s, c in zip(spent, ch, strict=True))
                if b["slot"] is not None:
                    next_slot = b["slot"] + 1
            elif status.get(rid) != "charged":
                problems.append(f"seq {seq}: {kind} of a release that is not charged")
            else:
                status[rid] = "released" if kind == "released" else "voided"
                if kind == "void":
                    spent = tuple(s - c for s, c in zip(spent, charges[rid], strict=True))
        if self.currency is not None and any(s > t for s, t in zip(spent, self.currency.thresholds, strict=True)):
            problems.append("recomputed spend exceeds the budget")
        if (_vec(spent), expect_seq, head, next_slot) != state:
            problems.append("cached state differs from the recomputation")
        if {k: v[4] for k, v in index.items()} != status:
            problems.append("release index differs from the event log")
        return problems


class ReleaseRun:
    """Handle of :meth:`Ledger.release`: the committed ticket; set ``output`` to record its digest."""

    def __init__(self, ticket: Ticket) -> None:
        self.ticket = ticket
        self.output: object = None


def _charges_of(c: Currency) -> set[str]:
    from optcomp.ledger._currency import _CHARGES

    return set(_CHARGES[c.name])


def bulk_admitted(currency: Currency, release: Release, count: int, spent: Vector | None = None) -> int:
    """How many of ``count`` successive copies of ``release`` a filter admits from ``spent`` (default
    empty): the ledger's exact rule Σ + charge ≤ T, iterated one charge at a time — on integers scaled
    by the common denominator, so 10⁶ steps take a fraction of a second (tests and benchmarks)."""
    s = spent if spent is not None else tuple(Fraction(0) for _ in currency.thresholds)
    ch = currency.charge(release)
    den = math.lcm(*(x.denominator for x in (*s, *ch, *currency.thresholds)))
    admitted = count
    for sj, cj, tj in zip(s, ch, currency.thresholds, strict=True):
        acc, step, top = int(sj * den), int(cj * den), int(tj * den)
        if step == 0:
            if acc > top:
                return 0
            continue
        n = 0
        while n < admitted and acc + step <= top:
            acc += step
            n += 1
        admitted = n
    return admitted

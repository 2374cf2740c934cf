"""The hash chain and its replay: what admission rests on, and what :meth:`Ledger.verify` re-walks.

Every event row carries ``row_hash = sha256(prev_hash ‖ '\\n' ‖ canonical [seq, kind, release_id, body,
created_at])``, the first ``prev_hash`` being the genesis hash of the configuration (``docs/ledger.md``
§4). :class:`Replay` folds events into the state they imply — the spent vector, the next sequence
number, the chain head, the next plan slot, each release's status — checking every link on the way.

Admission never trusts the cached ``state`` row: each :class:`optcomp.ledger.Ledger` keeps a replay of the
chain that it walked itself (from the genesis hash, once, then only the events appended since), and a
charge is admitted against the replay's spent vector after the cached row was found equal to it, inside
the charge's write transaction. A cache edited in the file (or by SQL) and a chain with a broken link
are refused rather than charged against.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from optcomp.ledger._currency import Vector
from optcomp.ledger._exact import decode, encode
from optcomp.ledger._words import number

#: Significant digits of a spent vector named in a problem (a cached state that differs from the chain).
CHECK_DIGITS = 17
#: One stored event: (seq, kind, release_id, body, created_at, prev_hash, row_hash).
Event = tuple[int, str, str, str, str, str, str]
#: The cached ``state`` row: (spent, next_seq, head, next_slot).
State = tuple[str, int, str, int]


def canonical(obj: object) -> str:
    """Canonical JSON (sorted keys, no spaces, UTF-8): what the hash chain hashes."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def row_hash(prev: str, seq: int, kind: str, release_id: str, body: str, created_at: str) -> str:
    """sha256(prev_hash ‖ '\\n' ‖ canonical [seq, kind, release_id, body, created_at])."""
    payload = prev + "\n" + canonical([seq, kind, release_id, body, created_at])
    return hashlib.sha256(payload.encode()).hexdigest()


def vec(v: Sequence[Fraction]) -> str:
    """A vector of exact rationals as stored text (canonical JSON of their exact encodings)."""
    return canonical([encode(x) for x in v])


def _spent_words(stored: str) -> str:
    """A stored spent vector in decimals (:func:`._words.number` to :data:`CHECK_DIGITS` digits), or
    "unreadable" (a problem message is read by a person: never the stored ``float.hex``)."""
    try:
        return "[" + ", ".join(number(x, digits=CHECK_DIGITS) for x in unvec(stored)) + "]"
    except (ValueError, TypeError, AttributeError, ZeroDivisionError, OverflowError):
        return "unreadable"


def unvec(s: str) -> Vector:
    """Inverse of :func:`vec`."""
    return tuple(decode(x) for x in json.loads(s))


#: ``check(seq, spent_before, charge, body)`` → a problem sentence or None, applied to each charge event.
ChargeCheck = Callable[[int, Vector, Vector, dict[str, object]], str | None]
#: One row of the release index: (release_id, spec, charge, slot, status, charge_seq).
IndexRow = tuple[str, str, str, int | None, str, int]


@dataclass
class Record:
    """One release as the hash chain tells it: the charge event and, once there is one, the event that
    closed it (``released`` with its digest, or ``void`` with its reason)."""

    release_id: str
    seq: int
    spec: str
    charge: Vector
    slot: int | None
    status: str
    charged_at: str
    closed_at: str | None = None
    note: str = ""

    def index_row(self) -> IndexRow:
        """The row the release index must hold for this release."""
        return self.release_id, self.spec, vec(self.charge), self.slot, self.status, self.seq


@dataclass
class Replay:
    """The state implied by the events folded so far (start with :meth:`start`, extend with :meth:`feed`).

    Attributes:
        seq: the next sequence number expected; head: the last row hash (the genesis hash at first);
        spent: the exact spent vector (charges minus voids); next_slot: plan mode's next unused slot;
        status, charges: each release id's status and charge; records: each release id's
        :class:`Record` (in charge order); problems: every broken link found.
    """

    seq: int
    head: str
    spent: Vector
    next_slot: int = 0
    status: dict[str, str] = field(default_factory=dict)
    charges: dict[str, Vector] = field(default_factory=dict)
    records: dict[str, Record] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @classmethod
    def start(cls, genesis: str, width: int) -> Replay:
        """The empty chain of a ledger whose spent vector has ``width`` components."""
        return cls(1, genesis, tuple(Fraction(0) for _ in range(width)))

    def state(self) -> State:
        """What the cached ``state`` row must equal."""
        return vec(self.spent), self.seq, self.head, self.next_slot

    def feed(self, events: Sequence[Event], check: ChargeCheck | None = None) -> None:
        """Fold ``events`` (in order) into the replay; links, sequence numbers and transitions are checked,
        and ``check`` (if given) is applied to every charge (the stored charge against a recomputed one,
        or the admission rule against the state before it)."""
        for seq, kind, rid, body, created, prev, h in events:
            if seq != self.seq:
                self.problems.append(f"sequence gap: expected {self.seq}, found {seq}")
            if prev != self.head or row_hash(prev, seq, kind, rid, body, created) != h:
                self.problems.append(f"hash chain broken at seq {seq}")
            self.head, self.seq = h, seq + 1
            try:
                self._apply(seq, kind, rid, json.loads(body), check, created)
            except (ValueError, KeyError, TypeError) as exc:
                self.problems.append(f"seq {seq}: unreadable event body ({exc})")

    def _apply(self, seq: int, kind: str, rid: str, b: dict[str, object], check: ChargeCheck | None,
               created: str) -> None:
        if kind == "charge":
            components = b["charge"]
            if not isinstance(components, list):
                raise TypeError(f"charge must be a list, got {components!r}")
            ch = tuple(decode(str(x)) for x in components)
            if len(ch) != len(self.spent):
                raise ValueError(f"charge has {len(ch)} components, the ledger {len(self.spent)}")
            problem = check(seq, self.spent, ch, b) if check is not None else None
            if problem:
                self.problems.append(f"seq {seq}: {problem}")
            if rid in self.status:
                self.problems.append(f"seq {seq}: release_id {rid!r} charged twice")
            self.status[rid], self.charges[rid] = "charged", ch
            self.spent = tuple(s + c for s, c in zip(self.spent, ch, strict=True))
            slot = b["slot"]
            if slot is not None and not isinstance(slot, int):
                raise TypeError(f"slot must be an integer, got {slot!r}")
            if slot is not None:
                self.next_slot = slot + 1
            self.records[rid] = Record(rid, seq, canonical(b["release"]), ch, slot, "charged", created)
        elif self.status.get(rid) != "charged":
            self.problems.append(f"seq {seq}: {kind} of a release that is not charged")
        else:
            self.status[rid] = "released" if kind == "released" else "voided"
            record = self.records[rid]
            record.status, record.closed_at = self.status[rid], created
            record.note = str(b.get("digest" if kind == "released" else "reason", ""))
            if kind == "void":
                self.spent = tuple(s - c for s, c in zip(self.spent, self.charges[rid], strict=True))

    def against(self, cached: State) -> list[str]:
        """The problems found so far, plus a difference between ``cached`` and this replay."""
        out = list(self.problems)
        if cached != self.state():
            mine, theirs = _spent_words(vec(self.spent)), _spent_words(cached[0])
            same = " (the spent vectors differ beyond the digits shown)" if mine == theirs and cached[0] != vec(
                self.spent) else ""
            out.append(f"the cached state (spent {theirs}, next seq {cached[1]}) differs from the hash "
                       f"chain's (spent {mine}, next seq {self.seq}){same}")
        return out

    def index_problems(self, rows: Sequence[IndexRow]) -> list[str]:
        """Where the release index (``rows``) differs from the chain's records: a row edited, added or
        missing (the index is a lookup aid; the chain is what the ledger trusts)."""
        index = {r[0]: r for r in rows}
        out: list[str] = []
        for rid in sorted(set(index) | set(self.records)):
            row, record = index.get(rid), self.records.get(rid)
            expected = None if record is None else record.index_row()
            if row != expected:
                out.append(index_difference(rid, row, expected))
        return out


def index_difference(release_id: str, row: IndexRow | None, expected: IndexRow | None) -> str:
    """One sentence naming how the index row of ``release_id`` differs from the chain's."""
    if row is None:
        return f"release index differs from the hash chain: release_id {release_id!r} is missing from the index"
    if expected is None:
        return (f"release index differs from the hash chain: release_id {release_id!r} is in the index but was "
                "never charged in the chain")
    if row[4] != expected[4]:
        return (f"release index differs from the hash chain: release_id {release_id!r} is {row[4]} in the index "
                f"but {expected[4]} in the chain")
    return f"release index differs from the hash chain: the row of release_id {release_id!r} was edited"

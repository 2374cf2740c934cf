"""What a charge comes back with — a :class:`Ticket`, or one of the refusals — and what :meth:`verify`
finds (:class:`Verification`); plus the two internal carriers of a charge batch (:class:`Step`,
:class:`Refused`) and the release-id rule (:func:`same_release`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from optcomp.ledger._currency import Vector
from optcomp.ledger._release import Release
from optcomp.ledger._words import describe_spec


class BudgetExceeded(RuntimeError):
    """The release does not fit: nothing was recorded, the mechanism must not run."""


class ReleaseIdConflict(ValueError):
    """A release id was reused with different parameters."""


class ReleaseIdClosed(ReleaseIdConflict):
    """A release id whose release was voided or released: it is closed and never charged again, so a
    mechanism run under it would run uncharged. Raised before anything runs; a new attempt is a new
    release, under a new release id."""


class Refused(Exception):
    """A refusal decided inside a charge transaction, with what the ledger records and advises."""

    def __init__(self, error: Exception, release_id: str, spec: str, spent: Vector, next_slot: int) -> None:
        super().__init__(str(error))
        self.error, self.release_id, self.spec = error, release_id, spec
        self.spent, self.next_slot = spent, next_slot


@dataclass(frozen=True)
class Step:
    """One item of a charge batch, decided: a new charge, a retry of a charged id (``replay``), or a
    repeat of an id charged earlier in the same batch (``again``)."""

    release_id: str
    release: Release
    spec: str
    charge: Vector = ()
    slot: int | None = None
    replay: Ticket | None = None
    again: bool = False


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


def same_release(release_id: str, old_spec: str, spec: str) -> None:
    """Refuse (:class:`ReleaseIdConflict`) a release id charged with another release."""
    if old_spec != spec:
        raise ReleaseIdConflict(f"release_id {release_id!r} was charged with {describe_spec(json.loads(old_spec))}, "
                                f"not {describe_spec(json.loads(spec))}; a different release needs a new release id")


class ReleaseRun:
    """Handle of :meth:`Ledger.release`: the committed ticket; set ``output`` to record its digest."""

    def __init__(self, ticket: Ticket) -> None:
        self.ticket = ticket
        self.output: object = None

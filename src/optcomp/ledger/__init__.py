"""A persistent privacy ledger: every release from a dataset charged, exactly, before it runs.

One ledger = one dataset + one neighbouring relation + one budget + one mode, fixed at creation
(``docs/ledger.md``):

* ``mode="plan"``: a fixed list of slots whose certified optimal (or PLD) composition fits the budget;
  each release is dominated by its slot (:mod:`._plan`).
* ``mode="filter"``: fully adaptive releases through a valid filter in a currency chosen at creation —
  ``basic``, ``approx-zcdp``, ``zcdp``, ``rdp`` (one order fixed at creation, united with pure
  basic) or ``gdp``
  (:mod:`._currency`). The natural "compose the realised parameters optimally" filter is not valid
  under adaptivity and is not offered; a whole fixed plan can be one filter step (:class:`BatchRelease`).

Accounting is exact (parameters stored exactly, charges and thresholds as rationals, admission an exact
comparison); storage is SQLite (default) or PostgreSQL (:mod:`._store`), append-only with a hash chain that
admission replays (:mod:`._chain`); ``Ledger.open(path, read_only=True)`` for auditors, ``backup`` for
a consistent copy. A voided or released release id is closed (:class:`ReleaseIdClosed`); refused attempts
are recorded outside the chain (``Ledger.refusals``). Every text meant for a person comes from one
formatter (:mod:`._words`: :func:`describe`, :func:`number`, the registry :data:`RELEASE_WORDS`).

    >>> from optcomp.ledger import Ledger, PureDP
    >>> led = Ledger.create("census.ledger", dataset="census-2020", relation="add_remove",
    ...                     epsilon=1, delta="1e-6", currency="zcdp")       # doctest: +SKIP
    >>> with led.release("q-0001", PureDP("0.01")) as run:                   # doctest: +SKIP
    ...     run.output = noisy_count(data)
"""

from optcomp.ledger._choices import LAWS, BoundedRangeRelease, SelectionRelease, br_rho
from optcomp.ledger._currency import (
    CURRENCIES,
    ChargeError,
    Currency,
    best_order,
    bulk_admitted,
    make_currency,
)
from optcomp.ledger._exact import decode, encode, exact
from optcomp.ledger._ledger import RELATIONS, Ledger
from optcomp.ledger._outcomes import (
    BudgetExceeded,
    ReleaseIdClosed,
    ReleaseIdConflict,
    ReleaseRun,
    Ticket,
    Verification,
)
from optcomp.ledger._plan import slots_from_planner
from optcomp.ledger._release import (
    ApproxDP,
    BatchRelease,
    DiscreteGaussianRelease,
    GaussianRelease,
    LaplaceRelease,
    PureDP,
    Release,
    RenyiRelease,
    ZCDPRelease,
    from_json,
    from_mechanism,
)
from optcomp.ledger._store import StoreError
from optcomp.ledger._words import RELEASE_WORDS, ReleaseWords, amounts, describe, describe_spec, number

__all__ = [
    "CURRENCIES",
    "LAWS",
    "RELATIONS",
    "RELEASE_WORDS",
    "ApproxDP",
    "BatchRelease",
    "BoundedRangeRelease",
    "BudgetExceeded",
    "ChargeError",
    "Currency",
    "DiscreteGaussianRelease",
    "GaussianRelease",
    "LaplaceRelease",
    "Ledger",
    "PureDP",
    "Release",
    "ReleaseIdClosed",
    "ReleaseIdConflict",
    "ReleaseRun",
    "ReleaseWords",
    "RenyiRelease",
    "SelectionRelease",
    "StoreError",
    "Ticket",
    "Verification",
    "ZCDPRelease",
    "amounts",
    "best_order",
    "br_rho",
    "bulk_admitted",
    "decode",
    "describe",
    "describe_spec",
    "encode",
    "exact",
    "from_json",
    "from_mechanism",
    "make_currency",
    "number",
    "slots_from_planner",
]

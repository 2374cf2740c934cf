"""The labelled RDP comparison that ``compose``, ``account`` and ``dpsgd`` print beside certified brackets.

One helper per output form; the numbers all come from :func:`optcomp.rdp.compare`. RDP is an upper bound
only (never tight), which the label says; a composition RDP cannot express (an (ε, δ > 0) black box, a
mechanism without a formula in :mod:`optcomp.rdp`) is reported as unsupported, with the reason.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from optcomp import rdp
from optcomp.cli._common import emit_table, fmt

_SECONDS_PER_ITEM = 4.0e-4

LABEL = "RDP comparison (upper bound only, not certified-tight; dp_accounting default orders)"


def from_epsilon_delta(mechs: Sequence[tuple[float, float]]) -> list[tuple[object, int]]:
    """(ε, δ) black boxes as (EpsilonDelta, count) items, equal pairs grouped (k may be huge)."""
    from optcomp.mechanisms import EpsilonDelta
    from optcomp.optimal import Homogeneous

    if isinstance(mechs, Homogeneous):
        return [(EpsilonDelta(mechs.epsilon, delta=mechs.delta), mechs.k)]
    return [(EpsilonDelta(e, delta=d), n) for (e, d), n in Counter((float(e), float(d)) for e, d in mechs).items()]


def _compare(items: Sequence[object], **query: float) -> dict[str, Any]:
    """:func:`optcomp.rdp.compare`, with float overflow reported as unsupported (the comparison is an
    add-on: it never turns the certified answer beside it into an error)."""
    with np.errstate(all="ignore"):
        try:
            out = rdp.compare(items, **query)
        except (OverflowError, FloatingPointError, ValueError) as exc:
            return {"unsupported": f"RDP cannot evaluate these parameters ({exc})"}
    if "unsupported" in out:
        return out
    for side in ("standard", "improved"):
        entry = out[side]
        values: list[object] = list(entry.values()) if isinstance(entry, dict) else []
        if any(isinstance(v, float) and math.isnan(v) for v in values):
            return {"unsupported": "RDP cannot evaluate these parameters (beyond float range)"}
    return out


#: Most distinct mechanisms the RDP comparison is computed for: it costs about 0.4 ms per distinct item
#: and query (10⁵ distinct pairs: 40 s, longer than the certified answer beside it). Beyond it the
#: comparison is skipped and the payload says so (``"skipped"``).
MAX_DISTINCT_ITEMS = 1000


def comparison(
    items: Sequence[object], deltas: Sequence[float] = (), epsilons: Sequence[float] = ()
) -> dict[str, Any]:
    """JSON payload: ``{"label", "results": [{"query", "delta"|"epsilon", "standard", "improved"}...]}``,
    ``{"label", "unsupported": reason}``, or ``{"label", "skipped": reason}`` for more than
    :data:`MAX_DISTINCT_ITEMS` distinct items."""
    if len(items) > MAX_DISTINCT_ITEMS:
        return {"label": LABEL, "skipped": (
            f"not computed for {len(items)} distinct mechanisms (more than {MAX_DISTINCT_ITEMS}; about "
            f"{_SECONDS_PER_ITEM * len(items) * max(1, len(deltas) + len(epsilons)):.0f} s)")}
    results: list[dict[str, Any]] = []
    for d in deltas:
        if not 0.0 < d < 1.0:
            results.append({"query": "epsilon", "delta": d, "unsupported": "RDP conversion needs 0 < delta < 1"})
            continue
        out = _compare(items, delta=d)
        if "unsupported" in out:
            return {"label": LABEL, "unsupported": out["unsupported"]}
        results.append({"query": "epsilon", "delta": d, "standard": out["standard"], "improved": out["improved"]})
    for e in epsilons:
        out = _compare(items, epsilon=e)
        if "unsupported" in out:
            return {"label": LABEL, "unsupported": out["unsupported"]}
        results.append({"query": "delta", "epsilon": e, "standard": out["standard"], "improved": out["improved"]})
    return {"label": LABEL, "results": results}


def print_comparison(payload: dict[str, Any]) -> None:
    """The payload of :func:`comparison` as a small table (or one line when unsupported)."""
    if "unsupported" in payload:
        emit_table(payload["label"], ["note"], [[f"not available: {payload['unsupported']}"]])
        return
    if "skipped" in payload:
        emit_table(payload["label"], ["note"], [[f"skipped: {payload['skipped']}"]])
        return
    rows = []
    for r in payload["results"]:
        at = f"delta={fmt(r['delta'])}" if r["query"] == "epsilon" else f"epsilon={fmt(r['epsilon'])}"
        if "unsupported" in r:
            rows.append([r["query"], at, r["unsupported"], ""])
            continue
        q = r["query"]
        rows.append(
            [
                q,
                at,
                f"{fmt(r['standard'][q])} (alpha={fmt(r['standard']['order'])})",
                f"{fmt(r['improved'][q])} (alpha={fmt(r['improved']['order'])})",
            ]
        )
    emit_table(payload["label"], ["quantity", "at", "standard conversion", "improved conversion"], rows)

"""The labelled RDP comparison that ``compose``, ``account`` and ``dpsgd`` print beside certified brackets.

One helper per output form; the numbers all come from :func:`optcomp.rdp.compare`. RDP is an upper bound
only (never tight), which the label says; a composition RDP cannot express (an (ε, δ > 0) black box, a
mechanism without a formula in :mod:`optcomp.rdp`) is reported as unsupported, with the reason.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from optcomp import rdp
from optcomp.cli._common import emit_table

LABEL = "RDP comparison (upper bound only, not certified-tight; dp_accounting default orders)"


def from_epsilon_delta(mechs: Sequence[tuple[float, float]]) -> list[tuple[object, int]]:
    """(ε, δ) black boxes as (EpsilonDelta, count) items, equal pairs grouped (k may be huge)."""
    from optcomp.mechanisms import EpsilonDelta
    from optcomp.optimal import Homogeneous

    if isinstance(mechs, Homogeneous):
        return [(EpsilonDelta(mechs.epsilon, delta=mechs.delta), mechs.k)]
    return [(EpsilonDelta(e, delta=d), n) for (e, d), n in Counter((float(e), float(d)) for e, d in mechs).items()]


def comparison(
    items: Sequence[object], deltas: Sequence[float] = (), epsilons: Sequence[float] = ()
) -> dict[str, Any]:
    """JSON payload: ``{"label", "results": [{"query", "delta"|"epsilon", "standard", "improved"}...]}``
    or ``{"label", "unsupported": reason}``."""
    results: list[dict[str, Any]] = []
    for d in deltas:
        if not 0.0 < d < 1.0:
            results.append({"query": "epsilon", "delta": d, "unsupported": "RDP conversion needs 0 < delta < 1"})
            continue
        out = rdp.compare(items, delta=d)
        if "unsupported" in out:
            return {"label": LABEL, "unsupported": out["unsupported"]}
        results.append({"query": "epsilon", "delta": d, "standard": out["standard"], "improved": out["improved"]})
    for e in epsilons:
        out = rdp.compare(items, epsilon=e)
        if "unsupported" in out:
            return {"label": LABEL, "unsupported": out["unsupported"]}
        results.append({"query": "delta", "epsilon": e, "standard": out["standard"], "improved": out["improved"]})
    return {"label": LABEL, "results": results}


def print_comparison(payload: dict[str, Any]) -> None:
    """The payload of :func:`comparison` as a small table (or one line when unsupported)."""
    if "unsupported" in payload:
        emit_table(payload["label"], ["note"], [[f"not available: {payload['unsupported']}"]])
        return
    rows = []
    for r in payload["results"]:
        at = f"delta={r['delta']:g}" if r["query"] == "epsilon" else f"epsilon={r['epsilon']:g}"
        if "unsupported" in r:
            rows.append([r["query"], at, r["unsupported"], ""])
            continue
        q = r["query"]
        rows.append(
            [
                q,
                at,
                f"{r['standard'][q]:.6g} (alpha={r['standard']['order']:g})",
                f"{r['improved'][q]:.6g} (alpha={r['improved']['order']:g})",
            ]
        )
    emit_table(payload["label"], ["quantity", "at", "standard conversion", "improved conversion"], rows)

"""What a report adds for a person: the budget as fractions and words, what still fits, the releases in
order with their cumulative spend, and the refused attempts (:meth:`optcomp.ledger.Ledger.report`,
:meth:`optcomp.ledger.Ledger.history`, the ``/ledger`` page and the CLI tables).

Every figure here is read off the exact state replayed from the hash chain; the texts come from the one
formatter (:mod:`._words`). Fractions are exact rationals turned into floats only at the end (for a bar's
width or a chart's height). "What still fits" is the ledger's own exact admission rule searched to adjacent
floats (:meth:`optcomp.ledger.Ledger.smallest_sigma`, :meth:`~optcomp.ledger.Ledger.largest_pure_epsilon`),
then shown to :data:`._words.FIT_DIGITS` digits rounded on the safe side (σ up, ε down), so the value
shown, typed back, still fits.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from datetime import datetime
from fractions import Fraction
from typing import Any

from optcomp._inverse import float_boundary
from optcomp.ledger._chain import Event, Record
from optcomp.ledger._currency import Currency, Vector
from optcomp.ledger._exact import decode, encode
from optcomp.ledger._release import Release, ZCDPRelease
from optcomp.ledger._store import Refusal
from optcomp.ledger._words import (
    AMOUNT_DIGITS,
    CURRENCY_WORDS,
    FIT_DIGITS,
    amounts,
    budget_text,
    component_symbol,
    describe,
    describe_spec,
    equation,
    number,
    percent,
)

#: The largest σ :func:`smallest_sigma` tries (beyond it: no Gaussian fits, None).
LARGEST_SIGMA = 1e300
#: How many of the latest refused attempts a report lists (``export`` has them all).
REFUSALS_SHOWN = 20
#: Said wherever refused attempts are shown: they are a record for the data owner, not evidence.
REFUSALS_NOTE = ("recorded outside the hash chain and not verified: anyone with write access to the ledger can "
                 "add or remove rows; nothing in the accounting reads them")


def header(config: dict[str, Any], mode: str, problems: list[str], status: dict[str, str]) -> dict[str, Any]:
    """A report's first fields: what the ledger protects, its mode and budget, its problems, its counts."""
    budget = {"epsilon": float(decode(config["budget"]["epsilon"])), "delta": float(decode(config["budget"]["delta"]))}
    return {"dataset": config["dataset"], "relation": config["relation"], "mode": mode, "budget": budget,
            "problems": problems,
            "releases": {s: sum(1 for v in status.values() if v == s) for s in ("charged", "released", "voided")}}


def filter_fields(c: Currency, spent: Vector, epsilon: float | None, sigma: float | None) -> dict[str, Any]:
    """A filter ledger's report: the exact vectors (``p/q`` or ``float.hex``) and their floats, the
    guarantee and its certificate, the user's units, and the same in words (:func:`filter_view`)."""
    rho = largest_rho(c, spent)
    out = {"currency": c.name, "components": list(c.components), "threshold": [encode(t) for t in c.thresholds],
           "spent": [encode(s) for s in spent],
           "remaining": [encode(t - s) for t, s in zip(c.thresholds, spent, strict=True)],
           "spent_float": [float(s) for s in spent],
           "remaining_float": [float(t - s) for t, s in zip(c.thresholds, spent, strict=True)],
           "guarantee": c.guarantee(), "certificate": c.certificate, "smallest_sigma": sigma,
           "largest_pure_epsilon": epsilon, "largest_rho": None if rho is None else _float_down(rho)}
    return out | filter_view(c, spent, epsilon, sigma)


def _float_down(x: Fraction) -> float:
    f = float(x)
    return f if Fraction(f) <= x else math.nextafter(f, -math.inf)


def largest_rho(currency: Currency, spent: Vector) -> Fraction | None:
    """The largest ρ of one more ρ-zCDP release (:class:`ZCDPRelease` without a δ share) that fits from
    ``spent``, exactly, or None (the currency charges none, or nothing fits). The charge of ρ is affine in ρ
    in every currency that has one (ρ, αρ, plus a constant count of non-pure releases), so each open branch
    allows (T_j − spent_j − c_j(0))/slope_j in each component it charges, and the best branch wins."""
    try:
        c0, c1, c2 = (currency.charge(ZCDPRelease(r)) for r in (0, 1, 2))
    except ValueError:
        return None
    slope = tuple(b - a for a, b in zip(c0, c1, strict=True))
    if any(z != a + 2 * s for a, s, z in zip(c0, slope, c2, strict=True)) or any(s < 0 for s in slope):
        return None
    best: Fraction | None = None
    for group in currency.branches or (tuple(range(len(currency.thresholds))),):
        room = [currency.thresholds[j] - spent[j] - c0[j] for j in group]
        if any(r < 0 for r in room):
            continue
        limits = [r / slope[j] for r, j in zip(room, group, strict=True) if slope[j] > 0]
        if limits:
            best = min(limits) if best is None else max(best, min(limits))
    return best if best is not None and best > 0 else None


def plan_fields(slots: Sequence[Release], next_slot: int, budget: tuple[Fraction, Fraction],
                certificate: dict[str, Any]) -> dict[str, Any]:
    """A plan ledger's report: slots, the next one, the guarantee and certificate, and words (:func:`plan_view`)."""
    e, d = budget
    out = {"slots": len(slots), "next_slot": next_slot, "remaining_slots": [s.to_json() for s in slots[next_slot:]],
           "guarantee": f"({number(e)}, {number(d)})-DP: the whole plan's certified optimal composition",
           "certificate": certificate}
    return out | plan_view(slots, next_slot, e, d)


def events(rows: Sequence[Event], currency: Currency | None) -> list[dict[str, Any]]:
    """The event log as ``export`` gives it: every stored field, and beside a charge's exact body its
    release and charge in words (``release_text``, ``charge_text``)."""
    out = []
    for seq, kind, rid, body_text, created, prev, h in rows:
        body = json.loads(body_text)
        item = {"seq": seq, "kind": kind, "release_id": rid, "body": body, "created_at": created,
                "prev_hash": prev, "row_hash": h}
        if kind == "charge" and isinstance(body, dict):
            item["release_text"] = describe_spec(body.get("release"))
            charge = body.get("charge", [])
            if currency is not None and isinstance(charge, list) and len(charge) == len(currency.components):
                item["charge_text"] = amounts(currency.components, [decode(str(x)) for x in charge])
        out.append(item)
    return out


def fraction_spent(currency: Currency, spent: Vector) -> Fraction:
    """The fraction of the budget spent, exactly: over the branches still open (every component within
    its threshold), the smallest of their largest spent_j / T_j (components with T_j = 0 count 0 while
    nothing is charged to them); 1 when no branch is open."""
    best: Fraction | None = None
    for group in currency.branches or (tuple(range(len(currency.thresholds))),):
        if any(spent[j] > currency.thresholds[j] for j in group):
            continue
        worst = max((spent[j] / currency.thresholds[j] for j in group if currency.thresholds[j] > 0),
                    default=Fraction(0))
        best = worst if best is None else min(best, worst)
    return Fraction(1) if best is None else best


def open_components(currency: Currency, spent: Vector) -> set[int]:
    """The components that belong to a branch still open (every component of it within its threshold)."""
    groups = currency.branches or (tuple(range(len(currency.thresholds))),)
    return {j for g in groups if all(spent[i] <= currency.thresholds[i] for i in g) for j in g}


def components(currency: Currency, spent: Vector) -> list[dict[str, Any]]:
    """Each component of the currency in words: its symbol, threshold, spent (alone, and as ``amount_text``:
    "ρ ≈ 0.06884 of 0.1851"), remaining and fraction spent (``None`` for a threshold of 0: the rdp
    currency's count of non-pure releases), and whether it belongs to a branch still open (``open``; the
    rdp currency's pure basic branch closes for good at its first non-pure release)."""
    live = open_components(currency, spent)
    out = []
    for j, (name, t, s) in enumerate(zip(currency.components, currency.thresholds, spent, strict=True)):
        symbol, spent_text = component_symbol(name), number(s, digits=AMOUNT_DIGITS)
        threshold_text = number(t, digits=AMOUNT_DIGITS)
        out.append({"component": name, "symbol": symbol, "threshold_text": threshold_text, "spent_text": spent_text,
                    "amount_text": f"{equation(symbol, spent_text)} of {threshold_text.lstrip('≈')}",
                    "remaining_text": number(t - s, digits=AMOUNT_DIGITS),
                    "fraction": float(s / t) if t > 0 else None,
                    "fraction_text": percent(s / t) if t > 0 else "", "open": j in live})
    return out


def smallest_sigma(fits: Callable[[float], bool]) -> float | None:
    """Smallest float σ (rounded up: the next float down does not fit) with ``fits(σ)``, or None when no σ
    up to :data:`LARGEST_SIGMA` fits. ``fits`` is the ledger's exact admission of one more Gaussian."""
    # σ = 1, 2, 4, ... until one fits (none up to 1e300: None), then bisection to adjacent floats
    return float_boundary(fits, name="sigma", passing_above=True, fail=0.0, start=1.0, first_gap=1.0,
                          highest=LARGEST_SIGMA).passing


def largest_pure_epsilon(fits: Callable[[float], bool], budget_epsilon: float) -> float | None:
    """Largest float ε (rounded down: the next float up does not fit) with ``fits(ε)``, or None when not
    even ε = 0 fits; ``budget_epsilon + 1`` when that fits (no ε-DP release is refused)."""
    if not fits(0.0):
        return None
    hi = budget_epsilon + 1.0
    if fits(hi):
        return hi
    return float_boundary(fits, name="epsilon", passing_above=False, fail=hi, passing=0.0).passing


def what_fits(epsilon: float | None, sigma: float | None, rho: Fraction | None = None) -> list[dict[str, Any]]:
    """"What still fits", in words: the largest ε of one more pure-DP release (rounded down), the
    smallest σ of one more Gaussian of sensitivity 1 (rounded up) and, where the currency charges zCDP
    releases, the largest ρ of one more (rounded down), each shown to FIT_DIGITS digits."""
    out: list[dict[str, Any]] = []
    if epsilon is not None and epsilon > 0:
        out.append({"what": "one more pure-DP release", "bound": "epsilon", "value": epsilon,
                    "text": f"ε ≤ {number(epsilon, digits=FIT_DIGITS, direction='down')}"})
    if sigma is not None:
        out.append({"what": "one more Gaussian release (Δ = 1)", "bound": "sigma", "value": sigma,
                    "text": f"σ ≥ {number(sigma, digits=FIT_DIGITS, direction='up')}"})
    if rho is not None:
        out.append({"what": "one more zCDP release", "bound": "rho", "value": _float_down(rho),
                    "text": f"ρ ≤ {number(rho, digits=FIT_DIGITS, direction='down')}"})
    return out


def remaining_text(currency: Currency, spent: Vector) -> str:
    """"ρ ≈ 0.02565 left of 0.08815" for every component with a positive threshold in a branch still
    open ("nothing": no branch is open)."""
    live = open_components(currency, spent)
    parts = [f"{equation(component_symbol(n), number(t - s, digits=AMOUNT_DIGITS))} left of "
             f"{number(t, digits=AMOUNT_DIGITS).lstrip('≈')}"
             for j, (n, t, s) in enumerate(zip(currency.components, currency.thresholds, spent, strict=True))
             if t > 0 and j in live]
    return ", ".join(parts) or "nothing"


def left(currency: Currency, spent: Vector) -> str:
    """A refusal's second part, what remains (in the currency): "remaining: ρ ≈ 0.02565 left of 0.08815
    (70.9 % of the budget spent)". Exact arithmetic only (it is recorded under the write lock)."""
    return f"remaining: {remaining_text(currency, spent)} ({percent(fraction_spent(currency, spent))} of the budget spent)"


def slots_left(slots: Sequence[Release], next_slot: int) -> str:
    """A plan ledger's refusal, second part: "slots left: 2 of 3"."""
    return f"slots left: {max(0, len(slots) - next_slot)} of {len(slots)}"


def slot_fits_words(slots: Sequence[Release], next_slot: int) -> str:
    """A plan ledger's refusal, last part: the next slot's release, or that every slot is used."""
    if next_slot >= len(slots):
        return "nothing more fits: every slot of the plan is used"
    return f"what still fits: a release dominated by slot {next_slot} ({describe(slots[next_slot])}) or by a later one"


def fits_words(currency: Currency, spent: Vector, epsilon: float | None, sigma: float | None) -> str:
    """A refusal's last part: what would still fit (:func:`what_fits`), or that nothing does."""
    fits = [f"{f['what']} with {f['text']}" for f in what_fits(epsilon, sigma, largest_rho(currency, spent))]
    return "what still fits: " + ", or ".join(fits) if fits else "nothing more fits: the budget is spent"


def filter_view(currency: Currency, spent: Vector, epsilon: float | None, sigma: float | None) -> dict[str, Any]:
    """The readable fields a filter ledger's report adds (its exact fields are unchanged)."""
    frac = fraction_spent(currency, spent)
    return {"currency_text": CURRENCY_WORDS.get(currency.name, currency.name),
            "budget_text": budget_text(currency.epsilon, currency.delta),
            "fraction_spent": float(frac), "fraction_spent_text": percent(frac),
            "components_text": components(currency, spent), "remaining_text": remaining_text(currency, spent),
            "what_fits": what_fits(epsilon, sigma, largest_rho(currency, spent))}


def plan_view(slots: Sequence[Release], next_slot: int, epsilon: Fraction, delta: Fraction) -> dict[str, Any]:
    """The readable fields a plan ledger's report adds: slots used as the fraction spent, the next slot."""
    frac = Fraction(next_slot, len(slots)) if slots else Fraction(1)
    fits = ([{"what": f"a release dominated by slot {next_slot}", "bound": "slot", "value": next_slot,
              "text": describe(slots[next_slot])}] if next_slot < len(slots) else [])
    return {"currency_text": "fixed plan (optimal composition)", "budget_text": budget_text(epsilon, delta),
            "fraction_spent": float(frac), "fraction_spent_text": percent(frac),
            "remaining_text": f"{len(slots) - next_slot} of {len(slots)} slots left", "what_fits": fits,
            "remaining_slots_text": [describe(s) for s in slots[next_slot:]]}


def time_text(iso: str | None) -> str:
    """A stored UTC timestamp as "2026-01-03 14:22:05 UTC" (the stored text if it does not parse)."""
    if not iso:
        return ""
    try:
        return datetime.fromisoformat(iso).strftime("%Y-%m-%d %H:%M:%S UTC")
    except ValueError:
        return iso


def history(currency: Currency | None, n_slots: int, records: Sequence[Record]) -> list[dict[str, Any]]:
    """Every release in charge order with its time, status, words and the budget spent once it and all
    earlier ones are counted (a voided release adds nothing: its charge was refunded). ``cumulative`` is
    one float per component; ``fraction`` is :func:`fraction_spent` of that running total (plan mode:
    slots used over slots)."""
    out: list[dict[str, Any]] = []
    running: Vector = tuple(Fraction(0) for _ in (currency.thresholds if currency is not None else ()))
    for r in records:
        if r.status != "voided":
            running = tuple(a + c for a, c in zip(running, r.charge, strict=True))
        entry: dict[str, Any] = {
            "release_id": r.release_id, "seq": r.seq, "status": r.status, "slot": r.slot,
            "release": json.loads(r.spec), "release_text": describe_spec(json.loads(r.spec)),
            "charge": [float(c) for c in r.charge], "charged_at": r.charged_at, "closed_at": r.closed_at,
            "time_text": time_text(r.charged_at), "note": r.note}
        if currency is not None:
            entry["charge_text"] = amounts(currency.components, r.charge)
            entry["cumulative"] = [float(x) for x in running]
            frac = fraction_spent(currency, running)
            entry["fraction"], entry["fraction_text"] = float(frac), percent(frac)
        else:
            entry["charge_text"] = f"slot {r.slot}"
            frac = Fraction(r.slot + 1, n_slots) if r.slot is not None and n_slots else Fraction(0)
            entry["fraction"], entry["fraction_text"] = float(frac), percent(frac)
        out.append(entry)
    return out


def refusals(count: int, rows: Sequence[Refusal]) -> dict[str, Any]:
    """The refused attempts block of a report: how many, the latest ones in words, and what they are."""
    recent = []
    for rid, spec, reason, created, seq in rows:
        try:
            text = describe_spec(json.loads(spec))
        except ValueError:
            text = spec
        recent.append({"release_id": rid, "release": spec, "release_text": text, "reason": reason,
                       "time": created, "time_text": time_text(created), "chain_seq": seq})
    return {"count": count, "recent": recent, "note": REFUSALS_NOTE}

"""Classic closed-form composition theorems for (ε, δ)-DP, each returning an exact ``(epsilon, delta)`` pair.

Every function here evaluates a published closed form; the pair it returns is a valid (ε, δ)-DP
guarantee for the adaptive composition *as the theorem states it*. The formulas are evaluated with
``expm1``/``log1p`` where that matters; they are closed forms, so they are returned as plain floats
(the project convention: ``Bound`` is for answers that are not closed forms).

Sources (``shared/papers/``):

* Basic composition: KOV Thm III.1 (homogeneous, ``(kε, kδ)``) and the heterogeneous form
  ``(Σε_i, Σδ_i)`` stated after it.
* Advanced composition, two published forms that differ in the drift term:

  - :func:`advanced_drv` — Dwork–Rothblum–Vadhan as quoted in KOV Thm III.2 and MV Thm 1.3:
    ε̃ = kε(e^ε − 1) + ε√(2k ln(1/δ̃)), total δ = kδ + δ̃.
  - :func:`advanced_lecture_notes` — Smith–Ullman lecture notes Thm 1.1:
    ε̃ = kε(e^ε − 1)/(e^ε + 1) + ε√(2k ln(1/δ')), total δ = kδ + δ'.

* KOV Thm III.4 (:func:`kov_bound`), KOV Thm III.5 (:func:`kov_bound_heterogeneous`) and the
  per-query budget of KOV Cor V.1 (:func:`kov_per_query_budget`).
"""

from __future__ import annotations

import math
from typing import Sequence

from optcomp._numerics import (
    check_epsilon_delta,
    check_int,
    check_nonnegative,
    check_positive,
    check_probability,
)

EpsDelta = tuple[float, float]


def _check_mechanisms(mechanisms: Sequence[EpsDelta]) -> list[EpsDelta]:
    try:
        items = list(mechanisms)
    except TypeError as exc:
        raise ValueError(f"mechanisms must be a sequence of (epsilon, delta) pairs, got {mechanisms!r}") from exc
    if not items:
        raise ValueError("mechanisms must contain at least one (epsilon, delta) pair, got []")
    out: list[EpsDelta] = []
    for i, pair in enumerate(items):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise ValueError(f"mechanisms[{i}] must be an (epsilon, delta) pair, got {pair!r}")
        out.append(check_epsilon_delta(pair[0], pair[1], prefix=f"mechanisms[{i}]."))
    return out


def _drift(epsilon: float) -> float:
    """ε·(e^ε − 1)/(e^ε + 1) = ε·tanh(ε/2), the expected privacy loss of randomized response."""
    return epsilon * math.tanh(epsilon / 2.0)


def _one_minus_product(deltas: Sequence[float]) -> float:
    """1 − Π(1 − δ_i), evaluated as −expm1(Σ log1p(−δ_i)) (exact to a few ulps, no cancellation)."""
    if any(d >= 1.0 for d in deltas):
        return 1.0
    return -math.expm1(math.fsum(math.log1p(-d) for d in deltas))


def basic(epsilon: float, delta: float, k: int) -> EpsDelta:
    """Basic composition of k (ε, δ)-DP mechanisms: ``(kε, kδ)`` (KOV Thm III.1; MV Thm 1.2).

    Args:
        epsilon: per-mechanism ε ≥ 0.
        delta: per-mechanism δ ∈ [0, 1].
        k: number of mechanisms, an integer ≥ 1.

    Returns:
        ``(k·ε, min(1, k·δ))`` — δ is capped at the trivially valid value 1.
    """
    epsilon, delta = check_epsilon_delta(epsilon, delta)
    k = check_int("k", k)
    return (k * epsilon, min(1.0, k * delta))


def basic_heterogeneous(mechanisms: Sequence[EpsDelta]) -> EpsDelta:
    """Basic composition of (ε_i, δ_i)-DP mechanisms: ``(Σε_i, Σδ_i)`` (KOV, remark after Thm III.1).

    Args:
        mechanisms: a non-empty sequence of (ε_i, δ_i) pairs, ε_i ≥ 0, δ_i ∈ [0, 1].

    Returns:
        ``(Σ ε_i, min(1, Σ δ_i))`` with the sums taken by ``math.fsum`` (correctly rounded).
    """
    items = _check_mechanisms(mechanisms)
    return (math.fsum(e for e, _ in items), min(1.0, math.fsum(d for _, d in items)))


def advanced_drv(epsilon: float, delta: float, k: int, delta_slack: float) -> EpsDelta:
    """Advanced composition, Dwork–Rothblum–Vadhan form (KOV Thm III.2, eq. (4); MV Thm 1.3).

    ε̃ = k·ε·(e^ε − 1) + ε·√(2k·ln(1/δ̃)),  total δ = k·δ + δ̃.

    Note the drift term kε(e^ε − 1) is twice as large (for small ε) as in the lecture-notes form
    :func:`advanced_lecture_notes`; MV Section 6 compares against this form ("DRV").

    Args:
        epsilon: per-mechanism ε ≥ 0.
        delta: per-mechanism δ ∈ [0, 1].
        k: number of mechanisms, integer ≥ 1.
        delta_slack: the extra slack δ̃ ∈ (0, 1].

    Returns:
        ``(ε̃, min(1, k·δ + δ̃))``.
    """
    epsilon, delta = check_epsilon_delta(epsilon, delta)
    k = check_int("k", k)
    delta_slack = _check_slack(delta_slack)
    eps = k * epsilon * math.expm1(epsilon) + epsilon * math.sqrt(2.0 * k * -math.log(delta_slack))
    return (eps, min(1.0, k * delta + delta_slack))


def advanced_lecture_notes(epsilon: float, delta: float, k: int, delta_slack: float) -> EpsDelta:
    """Advanced ("strong") composition, Smith–Ullman lecture notes Thm 1.1, eq. (1).

    ε̃ = ε·√(2k·ln(1/δ')) + k·ε·(e^ε − 1)/(e^ε + 1),  total δ = k·δ + δ'.

    Args:
        epsilon: per-mechanism ε ≥ 0.
        delta: per-mechanism δ ∈ [0, 1].
        k: number of mechanisms, integer ≥ 1.
        delta_slack: the extra slack δ' ∈ (0, 1].

    Returns:
        ``(ε̃, min(1, k·δ + δ'))``.
    """
    epsilon, delta = check_epsilon_delta(epsilon, delta)
    k = check_int("k", k)
    delta_slack = _check_slack(delta_slack)
    eps = epsilon * math.sqrt(2.0 * k * -math.log(delta_slack)) + k * _drift(epsilon)
    return (eps, min(1.0, k * delta + delta_slack))


def _check_slack(delta_slack: object) -> float:
    x = check_probability("delta_slack", delta_slack)
    if x == 0.0:
        raise ValueError(f"delta_slack must be in (0, 1], got {x!r}")
    return x


def _kov_epsilon(sum_eps: float, sum_sq: float, sum_drift: float, delta_slack: float) -> float:
    """The min of the three terms of KOV eq. (7)/(8) given Σε_i, Σε_i², Σε_i·tanh(ε_i/2)."""
    candidates = [sum_eps]
    if delta_slack > 0.0:
        root = math.sqrt(sum_sq)
        candidates.append(sum_drift + math.sqrt(2.0 * sum_sq * math.log(math.e + root / delta_slack)))
        candidates.append(sum_drift + math.sqrt(2.0 * sum_sq * -math.log(delta_slack)))
    return min(candidates)


def kov_bound(epsilon: float, delta: float, k: int, delta_slack: float) -> EpsDelta:
    """The KOV closed-form bound (KOV Thm III.4, eq. (7); MV Thm 6.1 "KOV Bound").

    ε̃ = min{ kε,
              kε(e^ε − 1)/(e^ε + 1) + ε√(2k·ln(e + √(kε²)/δ̃)),
              kε(e^ε − 1)/(e^ε + 1) + ε√(2k·ln(1/δ̃)) },
    total δ = 1 − (1 − δ)^k (1 − δ̃).

    With ``delta_slack = 0`` only the first term applies (ε̃ = kε), which is the theorem at δ̃ = 0.

    Args:
        epsilon: per-mechanism ε ≥ 0.
        delta: per-mechanism δ ∈ [0, 1].
        k: number of mechanisms, integer ≥ 1.
        delta_slack: δ̃ ∈ [0, 1].

    Returns:
        ``(ε̃, 1 − (1 − δ)^k (1 − δ̃))``.
    """
    epsilon, delta = check_epsilon_delta(epsilon, delta)
    k = check_int("k", k)
    delta_slack = check_probability("delta_slack", delta_slack)
    eps = _kov_epsilon(k * epsilon, k * epsilon * epsilon, k * _drift(epsilon), delta_slack)
    return (eps, _pow_delta(delta, k, delta_slack))


def _pow_delta(delta: float, k: int, delta_slack: float) -> float:
    """1 − (1 − δ)^k (1 − δ̃) via expm1/log1p."""
    if delta >= 1.0 or delta_slack >= 1.0:
        return 1.0
    return -math.expm1(k * math.log1p(-delta) + math.log1p(-delta_slack))


def kov_bound_heterogeneous(mechanisms: Sequence[EpsDelta], delta_slack: float) -> EpsDelta:
    """The KOV heterogeneous closed-form bound (KOV Thm III.5, eq. (8)).

    ε̃ = min{ Σε_ℓ,
              Σ ε_ℓ(e^{ε_ℓ} − 1)/(e^{ε_ℓ} + 1) + √(2 Σε_ℓ² · ln(1/δ̃)),
              Σ ε_ℓ(e^{ε_ℓ} − 1)/(e^{ε_ℓ} + 1) + √(2 Σε_ℓ² · ln(e + √(Σε_ℓ²)/δ̃)) },
    total δ = 1 − (1 − δ̃) Π(1 − δ_ℓ).

    Args:
        mechanisms: non-empty sequence of (ε_ℓ, δ_ℓ) pairs.
        delta_slack: δ̃ ∈ [0, 1] (δ̃ = 0 leaves only the first term).

    Returns:
        ``(ε̃, 1 − (1 − δ̃) Π(1 − δ_ℓ))``.
    """
    items = _check_mechanisms(mechanisms)
    delta_slack = check_probability("delta_slack", delta_slack)
    eps = _kov_epsilon(
        math.fsum(e for e, _ in items),
        math.fsum(e * e for e, _ in items),
        math.fsum(_drift(e) for e, _ in items),
        delta_slack,
    )
    return (eps, _one_minus_product([d for _, d in items] + [delta_slack]))


def kov_per_query_budget(epsilon: float, delta: float, k: int) -> EpsDelta:
    """Per-query budget that guarantees (ε, δ) after k-fold composition (KOV Cor V.1).

    ε_0 = √(ε² / (4k·ln(e + ε/δ))),  δ_0 = δ/(2k).

    Args:
        epsilon: target total ε > 0.
        delta: target total δ ∈ (0, 1].
        k: number of queries, integer ≥ 1.

    Returns:
        ``(ε_0, δ_0)``: each query may be (ε_0, δ_0)-DP.
    """
    epsilon = check_positive("epsilon", epsilon)
    delta = check_probability("delta", delta)
    if delta == 0.0:
        raise ValueError(f"delta must be in (0, 1], got {delta!r}")
    k = check_int("k", k)
    eps0 = math.sqrt(epsilon * epsilon / (4.0 * k * math.log(math.e + epsilon / delta)))
    return (eps0, delta / (2.0 * k))


def tv_bound(epsilon: float, delta: float) -> float:
    """Largest total-variation distance of an (ε, δ)-DP mechanism (KOV Remark A.1(b)).

    ‖M(D) − M(D')‖_TV ≤ 1 − 2(1 − δ)/(1 + e^ε) = δ + (1 − δ)·tanh(ε/2).

    Args:
        epsilon: ε ≥ 0 (``inf`` allowed: the bound is then 1).
        delta: δ ∈ [0, 1].
    """
    epsilon = check_nonnegative("epsilon", epsilon, allow_inf=True)
    delta = check_probability("delta", delta)
    if math.isinf(epsilon):
        return 1.0
    return delta + (1.0 - delta) * math.tanh(epsilon / 2.0)


__all__ = [
    "advanced_drv",
    "advanced_lecture_notes",
    "basic",
    "basic_heterogeneous",
    "kov_bound",
    "kov_bound_heterogeneous",
    "kov_per_query_budget",
    "tv_bound",
]

"""Classic closed-form composition theorems for (ε, δ)-DP, each returning an exact ``(epsilon, delta)`` pair.

Every function here evaluates a published closed form; the pair it returns is a valid (ε, δ)-DP
guarantee for the adaptive composition *as the theorem states it*. The formulas are evaluated with
``expm1``/``log1p`` where that matters and every returned float is rounded to its safe side: ε and δ of a
guarantee (and the TV bound) *up*, a per-query budget *down*, past the exact value by at most a few tens
of ulps (each is a handful of operations on non-negative terms; tested against 50-digit mpmath). They are
closed forms, so they are returned as plain floats (``Bound`` is for answers that are not).

Sources (``shared/papers/``):

* Basic composition: KOV Thm III.1 (homogeneous, ``(kε, kδ)``) and the heterogeneous form
  ``(Σε_i, Σδ_i)`` stated after it.
* Advanced composition, two published forms that differ in the drift term:

  - :func:`advanced_drv` — Dwork–Rothblum–Vadhan as quoted in KOV Thm III.2 and MV Thm 1.3:
    ε̃ = kε(e^ε − 1) + ε√(2k ln(1/δ̃)), total δ = kδ + δ̃.
  - :func:`advanced_lecture_notes` — Smith–Ullman lecture notes Thm 1.1:
    ε̃ = kε(e^ε − 1)/(e^ε + 1) + ε√(2k ln(1/δ')), total δ = kδ + δ'.

* Heterogeneous advanced composition (:func:`advanced_drv_heterogeneous`,
  :func:`advanced_lecture_notes_heterogeneous`): the same Azuma argument with per-step bounded
  differences ±ε_i (Dwork–Rothblum–Vadhan; "whenever we have kε or kε² ... replace it by the summation",
  KOV after Thm III.5): ε̃ = Σ drift(ε_i) + √(2 ln(1/δ̃) Σε_i²), total δ = Σδ_i + δ̃.
* KOV Thm III.4 (:func:`kov_bound`), KOV Thm III.5 (:func:`kov_bound_heterogeneous`) and the
  per-query budget of KOV Cor V.1 (:func:`kov_per_query_budget`).

Inputs may also be a :class:`optcomp.optimal.Homogeneous` (k copies of one pair, any k): the
``compare_*`` functions then use the closed forms without materialising the list.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterable, Sequence
from fractions import Fraction
from typing import NamedTuple

from optcomp._numerics import (
    EpsDelta,
    check_epsilon_delta,
    check_epsilon_delta_pairs,
    check_int,
    check_nonnegative,
    check_positive,
    check_probability,
)
from optcomp._rounding import next_down, next_up, widen_down, widen_up


def _check_mechanisms(mechanisms: Sequence[EpsDelta]) -> list[EpsDelta]:
    return check_epsilon_delta_pairs("mechanisms", mechanisms)


#: Operations charged to every advanced-composition ε (the same for all forms, so that equal formulas
#: give equal answers: drift sums, ln, sqrt, products, with their libm errors).
_ADVANCED_OPS = 16


def _up(x: float, ops: int) -> float:
    """x computed from non-negative terms by ≤ ``ops`` operations of relative error ≤ u each (libm's
    exp/log/sqrt/tanh/expm1/log1p within an ulp), moved up past the exact value: x(1 + 2·ops·u), one
    step up. Inf and 0 stay."""
    if not math.isfinite(x) or x == 0.0:
        return x
    return next_up(widen_up(x, 2 * ops))


def _down(x: float, ops: int) -> float:
    """The mirror of :func:`_up`: below the exact value (for budgets, where smaller is the safe side)."""
    if not math.isfinite(x) or x == 0.0:
        return x
    return next_down(widen_down(x, 2 * ops))


#: Largest k the closed forms accept: k must convert to a float (k·ε, √k) without overflow.
K_MAX = 10**300

#: ln of the largest float: e^x overflows above it, so e^x − 1 is reported as ``inf`` (its rounded value).
_LOG_FLOAT_MAX = math.log(sys.float_info.max)


def _expm1(x: float) -> float:
    """e^x − 1, with ``inf`` (the correctly rounded value) where it exceeds the float range."""
    return math.expm1(x) if x <= _LOG_FLOAT_MAX else math.inf


def _fsum(values: Iterable[float]) -> float:
    """``math.fsum`` of non-negative terms; a sum beyond the float range is ``inf`` (its rounded value)."""
    try:
        return math.fsum(values)
    except OverflowError:  # fsum raises on an intermediate overflow of non-negative terms: the sum is > max
        return math.inf


def _mul_up(k: int, x: float) -> float:
    """k·x rounded up (the float product rounds to nearest, which may be below the exact value)."""
    p = k * x
    if math.isfinite(p) and Fraction(p) < k * Fraction(x):
        return next_up(p)
    return p


def _sum_up(values: Iterable[float]) -> float:
    """Σ values (non-negative) rounded up: ``math.fsum`` is correctly rounded, so at most one step up.

    Whether the step is needed is the sign of the exact residual Σ values − s, read from ``fsum`` of the
    values and −s (correctly rounded, so its sign is exact and it is 0 only when the residual is)."""
    vals = list(values)
    s = _fsum(vals)
    if not math.isfinite(s):
        return s
    try:
        residual = math.fsum([*vals, -s])
    except OverflowError:  # an exact sum at the top of the float range: step up (the safe side)
        return next_up(s)
    return next_up(s) if residual > 0.0 else s


def _drift(epsilon: float) -> float:
    """ε·(e^ε − 1)/(e^ε + 1) = ε·tanh(ε/2), the expected privacy loss of randomized response."""
    return epsilon * math.tanh(epsilon / 2.0)


def _one_minus_product(deltas: Sequence[float]) -> float:
    """1 − Π(1 − δ_i), evaluated as −expm1(Σ log1p(−δ_i)) (exact to a few ulps, no cancellation); exactly
    δ_j when it is the only nonzero δ_i (1 − (1 − δ_j) = δ_j, nothing to round)."""
    if any(d >= 1.0 for d in deltas):
        return 1.0
    nonzero = [d for d in deltas if d != 0.0]
    if len(nonzero) <= 1:
        return nonzero[0] if nonzero else 0.0
    return min(1.0, _up(-math.expm1(math.fsum(math.log1p(-d) for d in deltas)), 6))


def basic(epsilon: float, delta: float, k: int) -> EpsDelta:
    """Basic composition of k (ε, δ)-DP mechanisms: ``(kε, kδ)`` (KOV Thm III.1; MV Thm 1.2).

    Args:
        epsilon: per-mechanism ε ≥ 0.
        delta: per-mechanism δ ∈ [0, 1].
        k: number of mechanisms, an integer ≥ 1.

    Returns:
        ``(k·ε, min(1, k·δ))``, both products rounded up (a claim rounded down would not be certified);
        δ is capped at the trivially valid value 1.
    """
    epsilon, delta = check_epsilon_delta(epsilon, delta)
    k = check_int("k", k, maximum=K_MAX)
    return (_mul_up(k, epsilon), min(1.0, _mul_up(k, delta)))


def basic_heterogeneous(mechanisms: Sequence[EpsDelta]) -> EpsDelta:
    """Basic composition of (ε_i, δ_i)-DP mechanisms: ``(Σε_i, Σδ_i)`` (KOV, remark after Thm III.1).

    Args:
        mechanisms: a non-empty sequence of (ε_i, δ_i) pairs, ε_i ≥ 0, δ_i ∈ [0, 1].

    Returns:
        ``(Σ ε_i, min(1, Σ δ_i))`` with the sums rounded up (``math.fsum``, then one step up unless exact).
    """
    items = _check_mechanisms(mechanisms)
    return (_sum_up(e for e, _ in items), min(1.0, _sum_up(d for _, d in items)))


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
    k = check_int("k", k, maximum=K_MAX)
    delta_slack = _check_slack(delta_slack)
    eps = _up(k * epsilon * _expm1(epsilon) + epsilon * math.sqrt(2.0 * k * -math.log(delta_slack)), _ADVANCED_OPS)
    return (eps, min(1.0, next_up(_mul_up(k, delta) + delta_slack) if delta else delta_slack))


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
    k = check_int("k", k, maximum=K_MAX)
    delta_slack = _check_slack(delta_slack)
    eps = _up(epsilon * math.sqrt(2.0 * k * -math.log(delta_slack)) + k * _drift(epsilon), _ADVANCED_OPS)
    return (eps, min(1.0, next_up(_mul_up(k, delta) + delta_slack) if delta else delta_slack))


def _heterogeneous_advanced(
    mechanisms: Sequence[EpsDelta], delta_slack: float, drift: Callable[[float], float]
) -> EpsDelta:
    sums = _sums(mechanisms)
    delta_slack = _check_slack(delta_slack)
    drift_sum = sums.drift_drv if drift is _drv_drift else sums.drift
    return (_advanced_epsilon(drift_sum, sums.root, delta_slack), min(1.0, _up(sums.sum_delta + delta_slack, 2)))


def _advanced_epsilon(drift_sum: float, root: float, delta_slack: float) -> float:
    """Σdrift + √(Σε_i²)·√(2 ln(1/δ̃)), with δ̃ ∈ (0, 1]; the product is 0 (not inf·0) when δ̃ = 1."""
    t = math.sqrt(2.0 * -math.log(delta_slack))
    return _up(drift_sum + (root * t if t > 0.0 else 0.0), _ADVANCED_OPS)


def _drv_drift(epsilon: float) -> float:
    """ε·(e^ε − 1), the DRV drift term."""
    return epsilon * _expm1(epsilon)


def advanced_drv_heterogeneous(mechanisms: Sequence[EpsDelta], delta_slack: float) -> EpsDelta:
    """Heterogeneous advanced composition, DRV drift (KOV Thm III.2 with k·ε, k·ε² replaced by sums).

    ε̃ = Σ ε_i(e^{ε_i} − 1) + √(2·ln(1/δ̃)·Σ ε_i²),  total δ = Σ δ_i + δ̃.

    The Azuma step of the DRV proof only uses that the i-th loss increment lies in [−ε_i, ε_i] with
    conditional mean ≤ ε_i(e^{ε_i} − 1), so the sums replace kε and kε² (KOV, remark after Thm III.5).
    Equals :func:`advanced_drv` when all pairs are equal.

    Args:
        mechanisms: non-empty sequence of (ε_i, δ_i) pairs, or an ``optimal.homogeneous(...)``.
        delta_slack: δ̃ ∈ (0, 1].
    """
    return _heterogeneous_advanced(mechanisms, delta_slack, _drv_drift)


def advanced_lecture_notes_heterogeneous(mechanisms: Sequence[EpsDelta], delta_slack: float) -> EpsDelta:
    """Heterogeneous advanced composition, lecture-notes drift (Smith–Ullman Thm 1.1 with sums).

    ε̃ = Σ ε_i(e^{ε_i} − 1)/(e^{ε_i} + 1) + √(2·ln(1/δ')·Σ ε_i²),  total δ = Σ δ_i + δ'.

    Args:
        mechanisms: non-empty sequence of (ε_i, δ_i) pairs, or an ``optimal.homogeneous(...)``.
        delta_slack: δ' ∈ (0, 1].
    """
    return _heterogeneous_advanced(mechanisms, delta_slack, _drift)


class _Sums(NamedTuple):
    """What the classic theorems read from a composition (sums beyond the float range are ``inf``)."""

    k: int
    sum_eps: float  # Σε_i
    root: float  # √(Σε_i²), formed without squaring (no overflow below its own value)
    drift: float  # Σε_i·tanh(ε_i/2)
    drift_drv: float  # Σε_i·(e^{ε_i} − 1)
    sum_delta: float  # min(1, Σδ_i)
    log_survive: float  # Σ ln(1 − δ_i), −inf if some δ_i = 1


def _sums(mechanisms: Sequence[EpsDelta]) -> _Sums:
    """The sums every classic theorem needs, for a list of pairs or a lazy homogeneous sequence."""
    hom = getattr(mechanisms, "k", None)
    if isinstance(hom, int) and hasattr(mechanisms, "epsilon") and hasattr(mechanisms, "delta"):
        e, d = check_epsilon_delta(mechanisms.epsilon, mechanisms.delta)
        k = check_int("k", hom, maximum=K_MAX)
        log_s = -math.inf if d >= 1.0 else k * math.log1p(-d)
        return _Sums(k, k * e, math.sqrt(k) * e, k * _drift(e), k * _drv_drift(e), min(1.0, k * d), log_s)
    items = _check_mechanisms(mechanisms)
    eps = [e for e, _ in items]
    dl = [d for _, d in items]
    log_s = -math.inf if any(d >= 1.0 for d in dl) else math.fsum(math.log1p(-d) for d in dl)
    return _Sums(
        len(items), _fsum(eps), math.hypot(*eps), _fsum(_drift(e) for e in eps),
        _fsum(_drv_drift(e) for e in eps), min(1.0, math.fsum(dl)), log_s,
    )


def _check_slack(delta_slack: object) -> float:
    x = check_probability("delta_slack", delta_slack)
    if x == 0.0:
        raise ValueError(f"delta_slack must be in (0, 1], got {x!r}")
    return x


def _log_e_plus(a: float, b: float) -> float:
    """ln(e + a/b) for a ≥ 0, b > 0, finite where a/b overflows: ln a − ln b + ln(1 + e·b/a)."""
    ratio = a / b
    if math.isfinite(ratio) or math.isinf(a):
        return math.log(math.e + ratio)
    return math.log(a) - math.log(b) + math.log1p(math.e * b / a)


def _kov_epsilon(sum_eps: float, root: float, sum_drift: float, delta_slack: float) -> float:
    """The min of the three terms of KOV eq. (7)/(8) given Σε_i, √(Σε_i²), Σε_i·tanh(ε_i/2).

    √(2Σε_i²·L) is evaluated as √(Σε_i²)·√(2L), so it overflows only where its value does.
    """
    candidates = [sum_eps]  # already rounded up by the caller (exact when it is exact)
    if delta_slack > 0.0:
        candidates.append(_up(sum_drift + root * math.sqrt(2.0 * _log_e_plus(root, delta_slack)), _ADVANCED_OPS + 4))
        candidates.append(_up(sum_drift + root * math.sqrt(2.0 * -math.log(delta_slack)), _ADVANCED_OPS))
    return min(candidates)  # the min of upper ends is an upper end of the min


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
    k = check_int("k", k, maximum=K_MAX)
    delta_slack = check_probability("delta_slack", delta_slack)
    eps = _kov_epsilon(_mul_up(k, epsilon), math.sqrt(k) * epsilon, k * _drift(epsilon), delta_slack)
    return (eps, _pow_delta(delta, k, delta_slack))


def _pow_delta(delta: float, k: int, delta_slack: float) -> float:
    """1 − (1 − δ)^k (1 − δ̃) via expm1/log1p; exactly δ̃ when δ = 0 (1 − (1 − δ̃) = δ̃, nothing to round)."""
    if delta >= 1.0 or delta_slack >= 1.0:
        return 1.0
    if delta == 0.0:
        return delta_slack
    return min(1.0, _up(-math.expm1(k * math.log1p(-delta) + math.log1p(-delta_slack)), 8))


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
        _sum_up(e for e, _ in items),
        math.hypot(*(e for e, _ in items)),
        _fsum(_drift(e) for e, _ in items),
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
    k = check_int("k", k, maximum=K_MAX)
    eps0 = _down(epsilon / math.sqrt(4.0 * k * _log_e_plus(epsilon, delta)), 12)
    return (eps0, _down(delta / (2.0 * k), 2))


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
    return min(1.0, _up(delta + (1.0 - delta) * math.tanh(epsilon / 2.0), 6))


def _one_minus_survive(log_survive: float, delta_slack: float) -> float:
    """1 − Π(1 − δ_i)·(1 − δ̃) from Σ ln(1 − δ_i)."""
    if log_survive == -math.inf or delta_slack >= 1.0:
        return 1.0
    return min(1.0, _up(-math.expm1(log_survive + math.log1p(-delta_slack)), 8))


def compare_epsilon(mechanisms: Sequence[EpsDelta], target_delta: float) -> dict[str, float]:
    """The ε each classic theorem certifies when the *total* δ must equal ``target_delta``.

    The slack each theorem needs is solved from its own δ formula: basic needs Σδ_i ≤ δ_g; the two
    advanced forms δ̃ = δ_g − Σδ_i (their heterogeneous forms, equal to the homogeneous ones when all
    pairs are equal); KOV Thm III.5 δ̃ = 1 − (1 − δ_g)/Π(1 − δ_i). ``inf`` means the theorem cannot reach
    ``target_delta`` (or its ε exceeds the float range). Accepts an ``optimal.homogeneous(...)`` of any k
    in O(1), without materialising it.

    Returns:
        ``{"basic", "advanced_drv", "advanced_lecture_notes", "kov"}`` → ε.
    """
    sm = _sums(mechanisms)
    target = check_probability("target_delta", target_delta)
    out = {"basic": sm.sum_eps if sm.sum_delta <= target else math.inf}
    slack = target - sm.sum_delta
    for name, drift in (("advanced_drv", sm.drift_drv), ("advanced_lecture_notes", sm.drift)):
        out[name] = _advanced_epsilon(drift, sm.root, min(1.0, slack)) if slack > 0 else math.inf
    if sm.log_survive == -math.inf:
        out["kov"] = math.inf if target < 1.0 else 0.0
    else:
        kov_slack = -math.expm1(math.log1p(-target) - sm.log_survive) if target < 1.0 else 1.0
        out["kov"] = _kov_epsilon(sm.sum_eps, sm.root, sm.drift, min(1.0, kov_slack)) if kov_slack >= 0 else math.inf
    return out


def compare_delta(mechanisms: Sequence[EpsDelta], target_epsilon: float) -> dict[str, float]:
    """The total δ each classic theorem certifies at ε = ``target_epsilon`` (its formula solved for δ̃).

    Advanced forms (heterogeneous): δ̃ = exp(−((ε − Σdrift)/√(Σε_i²))²/2) when ε > Σdrift (else 1),
    total Σδ_i + δ̃. KOV Thm III.5: the least δ̃ over its three terms (δ̃ = 0 if ε ≥ Σε_i; the
    log(e + √Σε_i²/δ̃) term inverted exactly). Basic certifies Σδ_i only when ε ≥ Σε_i (else 1). The
    exponents are formed as ((ε − drift)/scale)², so ε up to the float maximum gives the true δ (often 0)
    rather than an overflow. A homogeneous spec costs O(1).

    Returns:
        ``{"basic", "advanced_drv", "advanced_lecture_notes", "kov"}`` → δ (1 = nothing certified).
    """
    sm = _sums(mechanisms)
    eps_t = check_nonnegative("target_epsilon", target_epsilon)
    out = {"basic": sm.sum_delta if eps_t >= sm.sum_eps else 1.0}

    def half_square(drift: float, scale: float) -> float:
        """s = ((ε − drift)/scale)²/2 for ε > drift, the exponent with drift + scale·√(2s) = ε."""
        t = (eps_t - drift) / scale
        return 0.5 * t * t

    def invert(drift: float, scale: float) -> float:
        """δ̃ with drift + scale·√(2·ln(1/δ̃)) = ε."""
        if scale == 0.0:
            return 0.0 if eps_t >= drift else 1.0
        if eps_t <= drift:
            return 1.0
        return math.exp(-half_square(drift, scale))

    for name, drift in (("advanced_drv", sm.drift_drv), ("advanced_lecture_notes", sm.drift)):
        out[name] = min(1.0, sm.sum_delta + invert(drift, sm.root))
    slack = invert(sm.drift, sm.root)
    if eps_t > sm.drift and sm.root > 0:
        s = half_square(sm.drift, sm.root)
        if s > 1.0:
            # √(Σε²)/δ̃ = e^{s−1} − e  ⇔  δ̃ = √(Σε²)/(e·(e^{s−1} − 1)), in log space when it over/underflows.
            log_slack = math.log(sm.root) - 1.0 - (s - 1.0) - math.log(-math.expm1(-(s - 1.0)))
            slack = min(slack, math.exp(log_slack) if log_slack < 0.0 else 1.0)
    if eps_t >= sm.sum_eps:
        slack = 0.0
    out["kov"] = _one_minus_survive(sm.log_survive, min(1.0, slack))
    return out


__all__ = [
    "advanced_drv",
    "advanced_drv_heterogeneous",
    "advanced_lecture_notes",
    "advanced_lecture_notes_heterogeneous",
    "basic",
    "basic_heterogeneous",
    "compare_delta",
    "compare_epsilon",
    "kov_bound",
    "kov_bound_heterogeneous",
    "kov_per_query_budget",
    "tv_bound",
]

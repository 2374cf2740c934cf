"""Optimal composition of (ε, δ)-DP black boxes (KOV Thm III.3; Murtagh–Vadhan Thms 1.4, 1.5, 1.7).

``OptComp((ε_1, δ_1), …, (ε_k, δ_k), δ_g)`` is the least ε_g ≥ 0 such that every adaptive composition
of (ε_i, δ_i)-DP mechanisms is (ε_g, δ_g)-DP. MV Thm 1.5 characterises it: with the privacy loss of the
canonical mechanisms, X_i = +ε_i w.p. p_i = e^{ε_i}/(1 + e^{ε_i}) and −ε_i otherwise, L = Σ X_i,

    D(ε_g) := E[(1 − e^{ε_g − L})_+],   (ε_g, δ_g)-DP  ⟺  D(ε_g) ≤ r := 1 − (1 − δ_g)/Π(1 − δ_i),

and the optimal δ at ε_g is δ_g = 1 − Π(1 − δ_i)(1 − D(ε_g)).

Engines (``method="auto"`` picks the first that applies; one module per idea):

* :mod:`._spec` — validation, pooling of repeated (ε, δ) pairs, r with a certified error near the floor;
* :mod:`._homogeneous` — one distinct ε at any k (exact binomial tails in log space, windowed);
* :mod:`._brute` — at most 16 non-zero ε_i (all 2^k subsets);
* :mod:`._split` + :mod:`._freq` (+ :mod:`._tree`) — distinct real ε_i: a dominating mixture of grid
  neighbours above, a dominated quantised pair below, both O(kΔ²) from the truth and exact when the ε_i
  share a lattice; composed in the frequency domain (closed-form characteristic functions at the alive
  DFT bins, certified bounds on the dead ones, one inverse FFT), directly for ≤ 64 items, by the tree of
  windowed convolutions only where neither applies;
* :mod:`._mv` — MV Thm 1.7 as published (``method="mv"``), in log space, with a cost estimate;
* :mod:`._solve` — every envelope → ε(δ) and δ(ε) by exact piecewise inversion;
* :mod:`._calibrate` — the largest per-query ε₀ meeting a k-fold target (certified), next to KOV Cor V.1.

Edge-case semantics:

* ε_i = 0 contributes only δ_i; any δ_i = 1 makes every finite guarantee impossible (ε = ∞, δ = 1).
* δ_g below the floor 1 − Π(1 − δ_i): ``Bound(inf, inf)`` (certified, not an error). Exactly at the floor:
  ε_g = Σε_i. When even 256-bit arithmetic cannot tell on which side of the floor δ_g lies (and more than
  64 δ_i > 0 rule out exact rationals), the upper end is ``inf``.
* ε_i > 745 (p_i = 1 in float64): the mechanism's loss is +ε_i except with probability < 2⁻¹⁰⁷⁴; it is
  split off as a deterministic shift (its tiny − mass on the +∞ atom of the upper end). Answers beyond
  the float range are ``Bound(1.797…e308, inf)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np

from optcomp._numerics import (
    OPTIMAL_EXACT_RELATIVE_WIDTH,
    RELATIVE_SLACK,
    SMALLEST_SUBNORMAL,
    TINY_PAD,
    Bound,
    FloatArray,
    check_int,
    check_nonnegative,
    check_positive,
    check_probability,
    log1mexp,
    round_down,
    round_up,
    rounding_error,
)
from optcomp.optimal import _split
from optcomp.optimal._brute import BRUTE_FORCE_MAX_K, brute_weights
from optcomp.optimal._homogeneous import DEFAULT_DEPTH, homogeneous_weights
from optcomp.optimal._solve import EMPTY, Weights, delta_from_envelopes, epsilon_from_envelopes
from optcomp.optimal._spec import EpsDelta, Homogeneous, Spec, Target, homogeneous, log_r_bracket, spec

Method = Literal["auto", "exact", "grid", "mv"]
Progress = Callable[[int, int], None]

#: Default target width (in ε) of the bracket returned for off-lattice heterogeneous inputs.
DEFAULT_TOLERANCE: float = 1e-3
#: Default work limit of the split engine: the largest composed window (lattice points) it builds.
DEFAULT_MAX_POINTS: int = 2**22
#: Default accuracy η of the MV Thm 1.7 algorithm (additive in ε, e^{−η/2} in δ).
DEFAULT_MV_ETA: float = 1e-2
#: ε_i above this are split off as a deterministic shift of the loss (p(ε_i) = 1 in float64).
HUGE_EPS: float = 745.0
_TINY = SMALLEST_SUBNORMAL
_FLOAT_MAX = float(np.finfo(np.float64).max)
#: Width model of the split engine, w ≈ c(k)·kΔ² with c(k) = _WIDTH_C0 + _WIDTH_C1/√k (fitted on
#: ε_i ~ U[0.001, 0.1], δ = 1e-6, k = 10²…10⁵: c = 1.1, 0.45, 0.23, 0.16; slightly above all of them).
_WIDTH_C0 = 0.15
_WIDTH_C1 = 10.0
#: The first grid step aims at this fraction of the tolerance, so that one pass usually suffices.
_FIRST_AIM = 0.7
#: Width of the composed window in units of √(Σ c_i ε_i²)/Δ (Hoeffding, see :mod:`._tree`).
_WINDOW_SIGMAS = 19.2


def _check_common(method: object, tolerance: object, max_points: object) -> tuple[Method, float, int]:
    if method not in ("auto", "exact", "grid", "mv"):
        raise ValueError(f"method must be one of 'auto', 'exact', 'grid', 'mv', got {method!r}")
    tol = check_positive("tolerance", tolerance)
    mp = check_int("max_points", max_points, minimum=16)
    return method, tol, mp


def _detect_lattice(eps: FloatArray, counts: np.ndarray, max_points: int) -> float | None:
    """A unit Δ = min ε_i / j (j ≤ 16) with every ε_i/Δ an integer up to 64 ulps and a window ≤ max_points."""
    m = float(np.min(eps))
    for j in range(1, 17):
        unit = m / j
        a = eps / unit
        ar = np.rint(a)
        if np.all(ar >= 1) and np.all(np.abs(a - ar) <= rounding_error(64.0, a)):
            if _WINDOW_SIGMAS * math.sqrt(float(np.sum(counts * ar * ar))) <= max_points:
                return unit
            return None
    return None


def _min_step(eps: FloatArray, counts: np.ndarray, max_points: int) -> float:
    return _WINDOW_SIGMAS * math.sqrt(float(np.sum(counts * eps * eps))) / max_points


def _split_huge(s: Spec) -> tuple[FloatArray, np.ndarray, float, float, int]:
    """(rest ε, rest counts, shift lower, shift upper, number of huge items)."""
    huge = s.eps > HUGE_EPS
    if not huge.any():
        return s.eps, s.counts, 0.0, 0.0, 0
    with np.errstate(over="ignore"):
        terms = (s.eps[huge] * s.counts[huge].astype(np.float64)).tolist()
    total = math.fsum(terms) if all(math.isfinite(t) for t in terms) else math.inf
    if math.isfinite(total):
        lo, hi = round_down(total), round_up(total)
    else:
        lo, hi = _FLOAT_MAX, math.inf
    return s.eps[~huge], s.counts[~huge], lo, hi, int(np.sum(s.counts[huge]))


def _envelopes(
    eps: FloatArray,
    counts: np.ndarray,
    method: Method,
    max_points: int,
    step: float | None,
    centre: float,
    depth: float,
) -> tuple[Weights, Weights, bool]:
    """(upper, lower, exact?) for the non-huge part; ``step`` None = exact engines or lattice only."""
    n = int(np.sum(counts))
    if eps.size == 0:
        return EMPTY, EMPTY, True
    if eps.size == 1:
        up, lo = homogeneous_weights(float(eps[0]), int(counts[0]), depth)
        return up, lo, True
    if n <= BRUTE_FORCE_MAX_K and method != "grid":
        up, lo = brute_weights(np.repeat(eps, counts))
        return up, lo, True
    unit = _detect_lattice(eps, counts, max_points)
    if unit is not None and (step is None or method == "exact" or unit >= step / 4.0):
        up, lo = _split.envelopes(eps, counts, unit, centre)
        return up, lo, True
    if method == "exact":
        raise ValueError(
            "method='exact' needs equal epsilons, at most "
            f"{BRUTE_FORCE_MAX_K} non-zero epsilons, or epsilons on a common lattice with a window of at most "
            f"max_points={max_points} points; got {eps.size} distinct real epsilons (use method='auto')"
        )
    assert step is not None
    up, lo = _split.envelopes(eps, counts, step, centre)
    return up, lo, False


def _with_extra(w: Weights, extra: float) -> Weights:
    return Weights(w.loss, w.logw, min(1.0, w.inf_mass + extra)) if extra > 0 else w


def _epsilon_rest(
    eps: FloatArray,
    counts: np.ndarray,
    target: Target,
    method: Method,
    tolerance: float,
    max_points: int,
    extra: float,
) -> Bound:
    if eps.size == 0:
        up = _with_extra(EMPTY, extra)
        return epsilon_from_envelopes(up, EMPTY, target)
    depth = -target.log_lo if math.isfinite(target.log_lo) else DEFAULT_DEPTH
    log_r = target.log_hi if math.isfinite(target.log_hi) else -DEFAULT_DEPTH
    centre = _split.eps_guess(eps, counts, log_r)
    n = float(np.sum(counts))
    min_step = _min_step(eps, counts, max_points)
    # Width model w ≈ c(k)·kΔ² (see _WIDTH_C0): aim below the tolerance so one pass usually suffices.
    c_k = _WIDTH_C0 + _WIDTH_C1 / math.sqrt(n)
    step = max(math.sqrt(_FIRST_AIM * tolerance / (c_k * n)), min_step)
    best: Bound | None = None
    for attempt in range(4):
        up, lo, exact = _envelopes(eps, counts, method, max_points, step, centre, depth)
        b = epsilon_from_envelopes(_with_extra(up, extra), lo, target)
        best = b if best is None else Bound(max(best.lower, b.lower), min(best.upper, b.upper))
        if not math.isfinite(best.upper) or best.width <= (tolerance if not exact else OPTIMAL_EXACT_RELATIVE_WIDTH * best.upper):
            break
        if attempt and exact:
            break
        centre = best.midpoint
        if not exact:
            new_step = max(step * math.sqrt(0.7 * tolerance / max(b.width, TINY_PAD)), min_step)
            if new_step >= 0.95 * step and attempt:
                break
            step = min(step, new_step)
    assert best is not None
    return best


def epsilon(
    mechanisms: Sequence[EpsDelta],
    delta: float,
    *,
    method: Method = "auto",
    tolerance: float = DEFAULT_TOLERANCE,
    max_points: int = DEFAULT_MAX_POINTS,
    progress: Progress | None = None,
) -> Bound:
    """Optimal ε_g = OptComp((ε_1, δ_1), …, (ε_k, δ_k), δ_g) (KOV Thm III.3; MV Thms 1.4, 1.5, 1.7).

    Args:
        mechanisms: non-empty sequence of (ε_i, δ_i) pairs, or :func:`homogeneous`. Repeated pairs are
            pooled first (10⁷ copies of one pair is the homogeneous problem).
        delta: target δ_g ∈ [0, 1].
        method: ``"auto"`` (homogeneous binomial at any k, brute force for ≤ 16 non-zero ε_i, else the
            split engine — exact on a common lattice, else Δ chosen for ``tolerance``), ``"exact"``
            (raises instead of returning a bracket wider than float noise), ``"grid"`` (the split engine
            even where an exact engine applies), ``"mv"`` (MV Thm 1.7 with η = ``tolerance``).
        tolerance: target bracket width in ε (split engine: Δ is chosen for it; ``"mv"``: η).
        max_points: work limit of the split engine (largest composed window) — the answer is returned at
            the finest Δ this allows when ``tolerance`` needs more; ``"mv"`` refuses sizes whose
            estimated cost exceeds its own limit.
        progress: ``"mv"`` only: called as ``progress(done, total)`` after every step of its search.

    Returns:
        ``Bound``: ``upper`` certified (dominating pair, weights' float error as e^{±η}, FFT error, the
        closed-form root's own rounding, r with certified error); ``lower`` certified likewise.
        ``Bound(inf, inf)`` below the δ floor; ``Bound(0, 0)`` when ε_g = 0 meets δ_g.
    """
    method, tolerance, max_points = _check_common(method, tolerance, max_points)
    delta_g = check_probability("delta", delta)
    s = spec(mechanisms)
    if method == "mv":
        from optcomp.optimal._mv import epsilon_mv

        return epsilon_mv(s, delta_g, tolerance, progress)
    target = log_r_bracket(delta_g, s)
    if target.kind == "below":
        return Bound(math.inf, math.inf)
    if target.kind == "zero":
        lo, hi = s.max_loss()
        return Bound(lo, hi)
    rest_eps, rest_counts, sh_lo, sh_hi, n_huge = _split_huge(s)
    if n_huge:
        # lower end: dropping the huge items' − outcomes (P-mass ≤ n_huge·2⁻¹⁰⁷⁴) rescales r by ≤ that.
        target = Target(target.log_lo, min(0.0, target.log_hi + 4.0 * n_huge * _TINY), target.kind)
    b = _epsilon_rest(rest_eps, rest_counts, target, method, tolerance, max_points, n_huge * _TINY)
    if not n_huge:
        return b
    hi = round_up(sh_hi + b.upper) if math.isfinite(sh_hi + b.upper) else math.inf
    # The rest's engine answers max(0, x) for the root x of D'(x) = r, but x may be negative: the true
    # ε_g = shift + x can lie below the shift. With A = {every huge item outputs +} (P(A) rescaled into
    # target.log_hi above), D(ε_g) ≥ P(A)·(1 − e^{ε_g − shift}·E_P e^{−L'}) ≥ P(A)·(1 − e^{ε_g − shift}),
    # so x ≥ log(1 − r/P(A)) always; a positive certified lower end of the rest is kept as is.
    # (Was: RandomizedResponse(746) at δ_g = 0.5 → [746, 746], truth 746 − ln 2; found by review.)
    if b.lower > 0.0:
        low_x = b.lower
    else:
        v = log1mexp(min(target.log_hi, 0.0))
        low_x = round_down(v - RELATIVE_SLACK * abs(v)) if math.isfinite(v) else -math.inf
    lo = round_down(sh_lo + low_x) if math.isfinite(sh_lo + low_x) else (0.0 if low_x < 0 else _FLOAT_MAX)
    if rest_eps.size == 0:
        # Only huge items: L = shift on A, so D(ε_g) ≤ P(Aᶜ) + (1 − e^{ε_g − shift})_+ and the upper end is
        # shift + log(1 − r⁻), r⁻ = (lower end of r) − P(Aᶜ) (above: shift + max(0, x), loose when x < 0).
        r_lo = round_down(math.exp(target.log_lo)) - n_huge * _TINY
        if r_lo > 0.0 and math.isfinite(sh_hi):
            v = math.log1p(-min(r_lo, 1.0))
            hi = min(hi, round_up(sh_hi + round_up(v)))
    return Bound(max(0.0, min(lo, hi, _FLOAT_MAX)), hi)


def delta(
    mechanisms: Sequence[EpsDelta],
    epsilon: float,
    *,
    method: Method = "auto",
    tolerance: float = DEFAULT_TOLERANCE,
    max_points: int = DEFAULT_MAX_POINTS,
) -> Bound:
    """Optimal δ_g of the adaptive composition at ε_g (KOV Thm III.3; MV Thms 1.4, 1.5).

    δ_g(ε_g) = 1 − Π(1 − δ_i)·(1 − D(ε_g)), D(ε_g) = E[(1 − e^{ε_g − L})_+] (module docstring).

    Args:
        mechanisms: non-empty sequence of (ε_i, δ_i) pairs (ε_i ≥ 0, δ_i ∈ [0, 1]), or :func:`homogeneous`.
        epsilon: ε_g ≥ 0 (``inf`` gives the floor 1 − Π(1 − δ_i)).
        method: as in :func:`epsilon`; ``"mv"`` computes ε only.
        tolerance: a width in ε from which the split engine's Δ is chosen.
        max_points: work limit of the split engine.

    Returns:
        ``Bound`` on δ_g: the D bracket of the engine's two envelopes, and Π(1 − δ_i) with its
        certified error, evaluated with expm1/log1p and rounded outwards.
    """
    method, tolerance, max_points = _check_common(method, tolerance, max_points)
    eps_g = check_nonnegative("epsilon", epsilon, allow_inf=True)
    s = spec(mechanisms)
    if method == "mv":
        raise ValueError(
            "method='mv' (MV Thm 1.7) computes epsilon only; use method='auto', 'exact' or 'grid'"
        )
    ls = s.log_survive()
    if ls[2] == -math.inf:
        return Bound(1.0, 1.0)
    if math.isinf(eps_g) or eps_g >= s.max_loss()[1]:
        if ls[0] == 0.0 and ls[1] == 0.0:
            return Bound(0.0, 0.0)
        return Bound(max(0.0, round_down(-math.expm1(ls[2]))), min(1.0, round_up(-math.expm1(ls[1]))))
    rest_eps, rest_counts, sh_lo, sh_hi, n_huge = _split_huge(s)
    x = eps_g - sh_lo
    if n_huge and (x < 0.0 or sh_hi == math.inf):
        # D ∈ [1 − e^{ε_g − shift}, 1] (E_P e^{−L'} = 1); only the trivial upper end is claimed.
        d_lo = -math.expm1(min(0.0, eps_g - sh_lo)) if x < 0 else 0.0
        lo = -math.expm1(ls[2] + math.log1p(-d_lo)) if d_lo < 1.0 else 1.0
        return Bound(max(0.0, round_down(lo)), 1.0)
    if rest_eps.size == 0:
        up, lo_w = EMPTY, EMPTY
    else:
        n = float(np.sum(rest_counts))
        step = max(math.sqrt(8.0 * tolerance / n), _min_step(rest_eps, rest_counts, max_points))
        up, lo_w, _ = _envelopes(rest_eps, rest_counts, method, max_points, step, x, DEFAULT_DEPTH)
    up = _with_extra(up, n_huge * _TINY)
    if not n_huge:
        return delta_from_envelopes(up, lo_w, x, ls)
    # D(ε_g) = D'(ε_g − shift) with shift ∈ [sh_lo, sh_hi]: D' is non-increasing.
    hi_b = delta_from_envelopes(up, lo_w, max(0.0, eps_g - sh_hi), ls)
    lo_b = delta_from_envelopes(up, lo_w, x, ls)
    return Bound(min(lo_b.lower, hi_b.upper), hi_b.upper)


from optcomp.optimal._calibrate import BlackBoxCalibration, calibrate
from optcomp.optimal._mv import MV_MAX_SECONDS

__all__ = [
    "DEFAULT_MAX_POINTS",
    "DEFAULT_MV_ETA",
    "DEFAULT_TOLERANCE",
    "MV_MAX_SECONDS",
    "BlackBoxCalibration",
    "Bound",
    "Homogeneous",
    "calibrate",
    "delta",
    "epsilon",
    "homogeneous",
]

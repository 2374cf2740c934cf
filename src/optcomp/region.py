"""Privacy regions (Kairouz–Oh–Viswanath Section II) and the region of the k-fold composition (Thm III.3).

A mechanism is (ε, δ)-DP iff every test of D0 against D1 has (type I, type II) errors (α, β) in

    R(ε, δ) = {(α, β) ∈ [0, 1]² : α + e^ε β ≥ 1 − δ  and  e^ε α + β ≥ 1 − δ}     (KOV eq. (2), Cor II.3)

(KOV write the pair as (P_MD, P_FA); the definition is symmetric in the two errors). A mechanism that is
(ε_j, δ_j)-DP for every j has its errors in the intersection ∩_j R(ε_j, δ_j), whose lower boundary is the
trade-off curve β(α) = max_j max{0, 1 − δ_j − e^{ε_j} α, e^{−ε_j}(1 − δ_j − α)}.

KOV Thm III.3: the k-fold adaptive composition of (ε, δ)-DP mechanisms has its errors in
∩_{i=0}^{⌊k/2⌋} R((k − 2i)ε, 1 − (1 − δ)^k (1 − δ_i)), with δ_i of eq. (6), and this region is attained.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from optcomp import optimal
from optcomp._numerics import (
    EpsDelta,
    FloatArray,
    Progress,
    check_epsilon_delta,
    check_int,
    check_nonnegative,
    check_probability,
)
from optcomp.fdp import PiecewiseLinearTradeOff, from_epsilon_delta_family

#: ln of the largest float: e^ε is ``inf`` above it.
_LOG_FLOAT_MAX = math.log(sys.float_info.max)

#: Most constraints :func:`composed` computes (k ≤ 20,001): each is one optimal.delta evaluation (~1 ms at
#: k = 10⁴), so the limit is about 10 s of work, estimated before any is done.
MAX_COMPOSED_CONSTRAINTS = 10_001

#: Largest α-by-constraint block :meth:`PrivacyRegion.beta` evaluates at once (bounds its memory).
_BLOCK_ELEMENTS = 1 << 22


@dataclass(frozen=True, slots=True)
class PrivacyRegion:
    """The intersection ∩_j R(ε_j, δ_j) of (ε, δ) privacy regions (KOV eq. (2)).

    ε_j = ∞ is allowed and read as the limit ε → ∞: R(∞, δ) = {α ≥ 1 − δ} ∪ {β ≥ 1 − δ} ∪ {α > 0, β > 0}
    (each line e^ε·x ≥ 1 − δ holds for every x > 0), which is where ε_g = kε lands when it overflows.

    Attributes:
        constraints: the (ε_j, δ_j) pairs, validated at construction (ε_j ∈ [0, ∞], δ_j ∈ [0, 1]).
    """

    constraints: tuple[EpsDelta, ...]

    def __post_init__(self) -> None:
        items = tuple(self.constraints)
        if not items:
            raise ValueError("constraints must contain at least one (epsilon, delta) pair, got ()")
        checked = []
        for j, pair in enumerate(items):
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise ValueError(f"constraints[{j}] must be an (epsilon, delta) pair, got {pair!r}")
            eps = check_nonnegative(f"constraints[{j}].epsilon", pair[0], allow_inf=True)
            checked.append((eps, check_probability(f"constraints[{j}].delta", pair[1])))
        object.__setattr__(self, "constraints", tuple(checked))

    @classmethod
    def from_dp(cls, epsilon: float, delta: float) -> PrivacyRegion:
        """R(ε, δ), the region of every (ε, δ)-DP mechanism (KOV eq. (2))."""
        return cls(((epsilon, delta),))

    def intersect(self, other: PrivacyRegion) -> PrivacyRegion:
        """∩ of two regions: the errors of a mechanism satisfying both sets of guarantees."""
        if not isinstance(other, PrivacyRegion):
            raise ValueError(f"other must be a PrivacyRegion, got {type(other).__name__}")  # noqa: TRY004
        return PrivacyRegion(self.constraints + other.constraints)

    def __and__(self, other: PrivacyRegion) -> PrivacyRegion:
        return self.intersect(other)

    def _arrays(self) -> tuple[FloatArray, FloatArray]:
        arr = np.asarray(self.constraints, dtype=np.float64)
        return arr[:, 0], arr[:, 1]

    def to_tradeoff(self) -> PiecewiseLinearTradeOff:
        """The lower boundary as a trade-off function: sup_j f_{ε_j, δ_j} (DRS Prop. 2.8).

        A region and its boundary curve are one object seen from two sides (KOV §II, DRS §2.4): this is
        :func:`optcomp.fdp.from_epsilon_delta_family` of the constraints, exact and piecewise linear.
        """
        eps, dlt = self._arrays()
        return from_epsilon_delta_family(eps, dlt)

    @classmethod
    def from_tradeoff(cls, f: PiecewiseLinearTradeOff) -> PrivacyRegion:
        """The region {(α, β) : β ≥ g(α)} of a piecewise-linear trade-off f, g = max{f, f⁻¹} (DRS Prop. 2.1).

        g is symmetric and convex, so it is sup_k f_{ε_k, δ_k} over its slopes −e^{±ε_k} with
        δ_k = g.delta(ε_k) (DRS Prop. 2.8 and "Primal to Dual"): one constraint per piece of slope ≤ −1,
        plus ε = 0. ``PrivacyRegion.from_tradeoff(r.to_tradeoff())`` has the same boundary as ``r``.
        """
        if not isinstance(f, PiecewiseLinearTradeOff):
            raise ValueError(f"f must be a PiecewiseLinearTradeOff, got {type(f).__name__}")  # noqa: TRY004
        g = f.symmetrized()
        with np.errstate(divide="ignore"):
            slopes = -np.diff(g.beta) / np.diff(g.alpha)
        eps = np.unique(np.concatenate([[0.0], np.log(slopes[slopes > 1.0])]))
        deltas = np.asarray(g.delta(eps), dtype=np.float64)
        return cls(tuple((float(e), float(d)) for e, d in zip(eps, deltas)))

    def beta(self, alpha: npt.ArrayLike, *, progress: Progress | None = None) -> FloatArray:
        """Lower boundary β(α) = max_j max{0, 1 − δ_j − e^{ε_j} α, e^{−ε_j}(1 − δ_j − α)} for α ∈ [0, 1].

        Args:
            alpha: type I error(s) in [0, 1].
            progress: called as ``progress(done, len(alpha))`` after each block of α values.

        Returns:
            The least type II error compatible with the region, same shape as ``alpha`` (an array).
        """
        a = np.asarray(alpha, dtype=np.float64)
        if np.isnan(a).any() or (a < 0).any() or (a > 1).any():
            raise ValueError(f"alpha must be in [0, 1], got {alpha!r}")
        eps, dlt = self._arrays()
        flat = a.reshape(-1)
        one_minus = 1.0 - dlt
        with np.errstate(over="ignore"):
            growth = np.exp(eps)  # e^{ε_j}, inf beyond ~709: the line is then vertical at α = 0
        shrink = np.exp(-eps)
        out = np.empty(flat.shape, dtype=np.float64)
        step = max(1, _BLOCK_ELEMENTS // max(1, eps.size))
        for start in range(0, flat.size, step):
            col = flat[start : start + step, None]
            # α = 0 is read as 1 − δ_j exactly (never inf·0); e^{-ε}(1 − δ − α) underflows to ±0.
            line1 = np.where(col > 0.0, one_minus - growth * np.where(col > 0.0, col, 1.0), one_minus)
            line2 = shrink * (one_minus - col)
            out[start : start + step] = np.maximum(0.0, np.maximum(line1, line2).max(axis=1))
            if progress is not None:
                progress(min(flat.size, start + step), flat.size)
        return np.asarray((out + 0.0).reshape(a.shape), dtype=np.float64)  # + 0.0 turns −0.0 into 0.0

    def contains(self, alpha: float, beta: float) -> bool:
        """Whether (α, β) ∈ [0, 1]² satisfies every constraint (KOV eq. (2), exact comparisons)."""
        a = check_probability("alpha", alpha)
        b = check_probability("beta", beta)
        for eps, dlt in self.constraints:
            growth = math.exp(eps) if eps <= _LOG_FLOAT_MAX else math.inf
            scaled_a = growth * a if a > 0.0 else 0.0  # e^ε·0 = 0 also at ε = ∞ (never inf·0)
            scaled_b = growth * b if b > 0.0 else 0.0
            if a + scaled_b < 1.0 - dlt or scaled_a + b < 1.0 - dlt:
                return False
        return True

    def boundary(self, n: int = 201, *, progress: Progress | None = None) -> tuple[FloatArray, FloatArray]:
        """``n`` points (α, β(α)) of the lower boundary on a uniform α grid of [0, 1], plus every kink.

        So the export has between ``n`` and ``n + 3·len(constraints)`` rows (duplicates are merged). The kinks α = (1 − δ_j)/(1 + e^{ε_j}) (where the two lines of constraint j meet) and the points
        where a line reaches β = 0 are added so that linear interpolation of the export is exact.
        """
        n = check_int("n", n, minimum=2)
        eps, dlt = self._arrays()
        with np.errstate(over="ignore"):
            kinks = np.concatenate([(1.0 - dlt) / (1.0 + np.exp(eps)), (1.0 - dlt) * np.exp(-eps), 1.0 - dlt])
        alphas = np.unique(np.clip(np.concatenate([np.linspace(0.0, 1.0, n), kinks]), 0.0, 1.0))
        return alphas, self.beta(alphas, progress=progress)

    def tv_bound(self) -> float:
        """max over the region of 1 − α − β: the total-variation bound (KOV Remark A.1(b)).

        The region is convex and symmetric under α ↔ β, so the minimum of α + β is attained on α = β,
        at α* = max_j (1 − δ_j)/(1 + e^{ε_j}); hence TV ≤ 1 − 2 max_j (1 − δ_j)/(1 + e^{ε_j}), which for
        one constraint is Remark A.1(b): 1 − 2(1 − δ)/(1 + e^ε).
        """
        eps, dlt = self._arrays()
        with np.errstate(over="ignore"):
            return float(max(0.0, 1.0 - 2.0 * float(np.max((1.0 - dlt) / (1.0 + np.exp(eps))))))


def composed(epsilon: float, delta: float, k: int, *, progress: Progress | None = None) -> PrivacyRegion:
    """Region of the k-fold composition of (ε, δ)-DP mechanisms (KOV Thm III.3, eqs. (5)–(6)).

    ∩_{i=0}^{⌊k/2⌋} R((k − 2i)ε, 1 − (1 − δ)^k (1 − δ_i)),
    δ_i = (1 + e^ε)^{−k} Σ_{ℓ=0}^{i−1} C(k, ℓ)(e^{(k−ℓ)ε} − e^{(k−2i+ℓ)ε}).

    The δ of the i-th constraint equals the optimal δ at ε_g = (k − 2i)ε, so it is taken from
    :func:`optimal.delta` (exact log-space binomial sum); its certified *upper* end is used, so the
    returned region contains the true one (a safe outer bound, exact up to float64 rounding). Where that
    evaluation leaves the float range (ε far beyond 700), the constraint's δ is the trivially valid 1 —
    still a safe outer bound, and for i ≥ 1 the truth there is δ_i ≥ 1 − k·e^{−ε} (the loss equals kε
    with probability (1 + e^{−ε})^{−k}), which rounds to 1. Cost O(k²): k is refused beyond
    2·``MAX_COMPOSED_CONSTRAINTS`` − 1 (about 10 s of work) before any is done;
    ``progress(i, ⌊k/2⌋ + 1)`` is called after each constraint.
    """
    epsilon, delta = check_epsilon_delta(epsilon, delta)
    k = check_int("k", k)
    if k // 2 + 1 > MAX_COMPOSED_CONSTRAINTS:
        raise ValueError(
            f"k must be at most {2 * MAX_COMPOSED_CONSTRAINTS - 1} here, got {_short(k)}: Thm III.3's region "
            f"has floor(k/2) + 1 = {_short(k // 2 + 1)} constraints, each an optimal.delta evaluation (O(k^2) work); use "
            "region.from_optimal(optimal.homogeneous(epsilon, delta, k), epsilons) with the epsilon_g you need"
        )
    spec = optimal.homogeneous(epsilon, delta, k)
    total = k // 2 + 1
    constraints: list[EpsDelta] = []
    for i in range(total):
        eps_g = (k - 2 * i) * epsilon  # inf where kε overflows: R(∞, δ) is read as its limit
        # i = 0: the loss never exceeds kε, so δ(kε) = δ(∞) = 1 − (1 − δ)^k, the engine's floor.
        constraints.append((eps_g, _optimal_delta_upper(spec, math.inf if i == 0 else eps_g)))
        if progress is not None:
            progress(i + 1, total)
    return PrivacyRegion(tuple(constraints))


def _short(n: int) -> str:
    """An integer for a message: its digits, or about 10^m when it has more than 15."""
    digits = str(n)
    return digits if len(digits) <= 15 else f"about 10^{len(digits) - 1}"


def _optimal_delta_upper(mechanisms: Sequence[EpsDelta], eps_g: float, *, tolerance: float | None = None) -> float:
    """The certified upper end of :func:`optimal.delta` at ε_g, or the trivially valid δ = 1 where the
    engine cannot evaluate it (its exp leaves the float range, or — under ``numpy.errstate(invalid=
    "raise")`` as the CLI runs — it meets inf − inf). δ = 1 keeps every region a safe outer bound."""
    try:
        if tolerance is None:
            return optimal.delta(mechanisms, eps_g).upper
        return optimal.delta(mechanisms, eps_g, tolerance=tolerance).upper
    except (OverflowError, FloatingPointError):
        return 1.0


def from_optimal(
    mechanisms: Sequence[EpsDelta],
    epsilons: Sequence[float],
    *,
    tolerance: float = optimal.DEFAULT_TOLERANCE,
    progress: Progress | None = None,
) -> PrivacyRegion:
    """Outer bound of the heterogeneous composition's region: ∩_g R(ε_g, δ_opt(ε_g)) over given ε_g.

    Every R(ε_g, δ) with δ ≥ the optimal δ at ε_g (MV Thm 1.5) contains the composition's region; the
    certified upper ends of :func:`optimal.delta` (with ``tolerance``, used by its grid method for real
    ε_i) are used. More ε_g give a tighter outer bound; the cost is one :func:`optimal.delta` per ε_g
    (``progress(j, len(epsilons))`` is called after each).
    """
    eps_list = [check_nonnegative(f"epsilons[{j}]", e) for j, e in enumerate(epsilons)]
    if not eps_list:
        raise ValueError("epsilons must contain at least one value, got []")
    constraints: list[EpsDelta] = []
    for j, e in enumerate(eps_list):
        constraints.append((float(e), _optimal_delta_upper(mechanisms, e, tolerance=tolerance)))
        if progress is not None:
            progress(j + 1, len(eps_list))
    return PrivacyRegion(tuple(constraints))


__all__ = ["MAX_COMPOSED_CONSTRAINTS", "PrivacyRegion", "composed", "from_optimal"]

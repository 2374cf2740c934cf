"""Inputs of the black-box engines: validation, pooling of repeated pairs, the certified δ floor.

A list of (ε_i, δ_i) pairs is reduced once to

* the distinct non-zero ε values with their multiplicities (repeated pairs are grouped before anything
  else: 10⁷ copies of one pair is a homogeneous problem, a few distinct pairs with multiplicities a
  grouped one), and
* a certified bracket of log S, S = Π(1 − δ_i) (every δ_i enters only through S, MV Thm 1.5).

The target of every ε query is r = 1 − (1 − δ_g)/S (MV Thm 1.5: the composition is (ε_g, δ_g)-DP iff
D(ε_g) ≤ r). Near the floor δ_g ≈ 1 − S the difference cancels, so :func:`log_r_bracket` computes r with
a certified error: first in float64 with a running error bound, and where that bound cannot separate r
from 0 (or leaves it with more than 2⁻²⁰ relative error), again with mpmath at 256 bits.
"""

from __future__ import annotations

import math
import numbers
import reprlib
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import overload

import mpmath
import numpy as np

from optcomp._numerics import OPTIMAL_R_RTOL, EpsDelta, FloatArray, check_epsilon_delta, check_int
from optcomp._rounding import next_down, next_up, rounding_error, widen_down, widen_up

#: Working precision (bits) of the mpmath fallback for r near the δ floor.
_MP_PREC = 256
_R_RTOL = OPTIMAL_R_RTOL


@dataclass(frozen=True, slots=True)
class Homogeneous(Sequence[EpsDelta]):
    """k copies of one (ε, δ) pair, recognised by the queries without materialising them.

    Behaves as a read-only sequence of k equal ``(epsilon, delta)`` tuples.
    """

    epsilon: float
    delta: float
    k: int

    def __post_init__(self) -> None:
        check_epsilon_delta(self.epsilon, self.delta)
        check_int("k", self.k)
        object.__setattr__(self, "epsilon", float(self.epsilon))
        object.__setattr__(self, "delta", float(self.delta))

    def __len__(self) -> int:
        return self.k

    @overload
    def __getitem__(self, index: int) -> EpsDelta: ...

    @overload
    def __getitem__(self, index: slice) -> list[EpsDelta]: ...

    def __getitem__(self, index: int | slice) -> EpsDelta | list[EpsDelta]:
        if isinstance(index, slice):
            return [(self.epsilon, self.delta)] * len(range(*index.indices(self.k)))
        i = index + self.k if index < 0 else index
        if not 0 <= i < self.k:
            raise IndexError(f"index {index} out of range for {self.k} mechanisms")
        return (self.epsilon, self.delta)

    def __iter__(self) -> Iterator[EpsDelta]:
        for _ in range(self.k):
            yield (self.epsilon, self.delta)


def homogeneous(epsilon: float, delta: float, k: int) -> Homogeneous:
    """The k-fold composition of one (ε, δ)-DP mechanism, as a lazy sequence (see :class:`Homogeneous`)."""
    return Homogeneous(epsilon, delta, k)


@dataclass(frozen=True, slots=True)
class Spec:
    """Validated, pooled input.

    Attributes:
        eps: the distinct non-zero ε values, ascending.
        counts: their multiplicities (int64).
        deltas: the distinct δ values (any ε), with ``delta_counts`` their multiplicities.
        k: total number of mechanisms.
    """

    eps: FloatArray
    counts: np.ndarray
    deltas: FloatArray
    delta_counts: np.ndarray
    k: int

    @property
    def n_items(self) -> int:
        """Number of mechanisms with ε > 0 (with multiplicity)."""
        return int(np.sum(self.counts))

    @property
    def is_homogeneous(self) -> bool:
        return self.eps.size == 1

    @property
    def any_full_delta(self) -> bool:
        return bool(np.any(self.deltas >= 1.0))

    def max_loss(self) -> tuple[float, float]:
        """max L = Σ c_i ε_i as a certified (lower, upper) pair (may overflow to inf upwards)."""
        if self.eps.size == 0:
            return (0.0, 0.0)
        terms = (self.eps * self.counts.astype(np.float64)).tolist()
        if not all(math.isfinite(t) for t in terms):
            return (np.finfo(np.float64).max, math.inf)
        s = math.fsum(terms)
        if not math.isfinite(s):
            return (np.finfo(np.float64).max, math.inf)
        # each product c·ε rounds once (relative u), fsum is correctly rounded.
        err = rounding_error(2.0, s)
        return (max(0.0, next_down(s - err)), next_up(s + err))

    def log_survive(self) -> tuple[float, float, float]:
        """(estimate, lower, upper) of log S = Σ c_j log1p(−δ_j); −inf if some δ_j = 1."""
        if self.any_full_delta:
            return (-math.inf, -math.inf, -math.inf)
        terms = (self.delta_counts.astype(np.float64) * np.log1p(-self.deltas)).tolist()
        s = math.fsum(terms)
        # log1p: ≤ 2u relative (we allow 2u), product by the count: u, fsum: u|s|.
        err = rounding_error(3.0, math.fsum(abs(t) for t in terms)) + rounding_error(1, abs(s))
        return (s, s - err, min(0.0, s + err))

    def expanded_eps(self) -> FloatArray:
        """All non-zero ε_i with multiplicity (only for small inputs)."""
        return np.repeat(self.eps, self.counts)


def _pool(eps: FloatArray, dlt: FloatArray, k: int, weights: np.ndarray | None = None) -> Spec:
    """Distinct non-zero ε with multiplicities, distinct δ with multiplicities (rows weighted by ``weights``)."""
    w = np.ones(eps.size, dtype=np.int64) if weights is None else weights
    pos = eps > 0
    if pos.any():
        vals, inv = np.unique(eps[pos], return_inverse=True)
        cnt = np.bincount(inv, weights=w[pos].astype(np.float64)).astype(np.int64)
    else:
        vals, cnt = np.zeros(0), np.zeros(0, dtype=np.int64)
    dv, dinv = np.unique(dlt, return_inverse=True)
    dc = np.bincount(dinv, weights=w.astype(np.float64)).astype(np.int64)
    return Spec(vals.astype(np.float64), cnt, dv.astype(np.float64), dc, k)


#: Lists longer than this are first pooled by object identity (repeated pair objects).
_POOL_BY_ID_MIN = 4096


def _distinct(mechanisms: list[object], n: int) -> dict[int, object]:
    out: dict[int, object] = {}
    for p in mechanisms:
        if id(p) not in out:
            out[id(p)] = p
            if len(out) == n:
                break
    return out


_PLAIN_REAL_TYPES: frozenset[type] = frozenset({float, int, np.float64, np.float32, np.int64, np.int32})


def spec(mechanisms: Sequence[EpsDelta]) -> Spec:
    """Validate and pool ``mechanisms`` (a sequence of pairs or a :class:`Homogeneous`)."""
    if isinstance(mechanisms, Homogeneous):
        e, d, k = mechanisms.epsilon, mechanisms.delta, mechanisms.k
        vals = np.array([e]) if e > 0 else np.zeros(0)
        cnt = np.array([k], dtype=np.int64) if e > 0 else np.zeros(0, dtype=np.int64)
        return Spec(vals, cnt, np.array([d]), np.array([k], dtype=np.int64), k)
    shown = reprlib.repr(mechanisms)
    if isinstance(mechanisms, (str, bytes)):
        raise ValueError(f"mechanisms must be a sequence of (epsilon, delta) pairs, got {shown}")  # noqa: TRY004
    if isinstance(mechanisms, list) and len(mechanisms) > _POOL_BY_ID_MIN:
        # Long lists of repeated pair *objects* ([(0.1, 0.0)] * 10**7): count the objects first (C speed),
        # validate and convert only the distinct ones.
        by_id = Counter(map(id, mechanisms))
        if len(by_id) * 4 < len(mechanisms):
            objs = _distinct(mechanisms, len(by_id))
            checked = spec(list(objs.values()))  # type: ignore[arg-type]  # validates; messages index distinct pairs
            del checked
            arr = np.asarray(list(objs.values()), dtype=np.float64)
            counts = np.array([by_id[i] for i in objs], dtype=np.int64)
            return _pool(arr[:, 0], arr[:, 1], len(mechanisms), counts)
    try:
        arr = np.asarray(mechanisms, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"mechanisms must be a sequence of (epsilon, delta) pairs, got {shown}") from exc
    if arr.ndim != 2 or arr.shape[1] != 2 or arr.shape[0] == 0:
        raise ValueError(
            f"mechanisms must be a non-empty sequence of (epsilon, delta) pairs, got shape {arr.shape}"
        )
    # numpy converts bool and numeric str silently: check the element types (on distinct rows only,
    # cheap for long lists of repeated pairs).
    if not isinstance(mechanisms, np.ndarray):
        seen: set[int] = set()
        plain = _PLAIN_REAL_TYPES
        for pair in mechanisms:
            pid = id(pair)
            if pid in seen:
                continue
            seen.add(pid)
            for x in pair:
                # exact-type fast path (type(True) is bool, so bools take the full check)
                if type(x) not in plain and (isinstance(x, bool) or not isinstance(x, numbers.Real)):
                    raise ValueError(
                        f"mechanisms must hold real (epsilon, delta) numbers (not bool or str), got {shown}"
                    )
    elif arr.dtype == np.bool_:
        raise ValueError(f"mechanisms must hold real (epsilon, delta) numbers (not bool or str), got {shown}")
    eps, dlt = arr[:, 0], arr[:, 1]
    bad = ~((eps >= 0) & np.isfinite(eps) & (dlt >= 0) & (dlt <= 1))
    if bad.any():
        i = int(np.argmax(bad))
        check_epsilon_delta(float(eps[i]), float(dlt[i]), prefix=f"mechanisms[{i}].")
    return _pool(eps, dlt, int(arr.shape[0]))


@dataclass(frozen=True, slots=True)
class Target:
    """Certified bracket of log r, r = 1 − (1 − δ_g)/S (nan-free).

    ``log_lo ≤ log r ≤ log_hi``. ``kind`` is ``"below"`` when r < 0 is certain (δ_g below the floor: no
    finite ε_g), ``"zero"`` when r = 0 exactly (δ_g equals the floor: ε_g = Σε_i), ``"ambiguous"`` when the
    sign of r could not be decided even at 256 bits (|r| < 2⁻²⁰⁰·scale: the upper end is then Σε_i if
    r ≥ 0 were assumed, so it is reported as ∞), else ``"positive"``.
    """

    log_lo: float
    log_hi: float
    kind: str


def log_r_bracket(delta_g: float, s: Spec) -> Target:
    """Certified log r for the ε query (see the module docstring)."""
    if delta_g >= 1.0:
        return Target(0.0, 0.0, "positive")
    if s.any_full_delta:
        return Target(-math.inf, -math.inf, "below")
    ls, ls_lo, ls_hi = s.log_survive()
    if ls == 0.0 and ls_lo == 0.0 and delta_g == 0.0:
        return Target(-math.inf, -math.inf, "zero")
    l1 = math.log1p(-delta_g)
    e1 = rounding_error(2.0, abs(l1))
    x = l1 - ls  # r = −expm1(x); x ≤ 0 iff δ_g ≥ floor
    ex = e1 + (ls_hi - ls_lo) / 2.0 + rounding_error(1, abs(x)) + rounding_error(1, abs(l1) + abs(ls))
    if x + ex < 0.0 and ex <= _R_RTOL * abs(x):
        x_hi, x_lo = x + ex, x - ex
        r_lo = widen_down(-math.expm1(x_hi), 4)
        r_hi = min(1.0, widen_up(-math.expm1(x_lo), 4))
        lo, hi = math.log(r_lo), math.log(r_hi)  # each rounded to within u·|value|
        return Target(lo - rounding_error(2.0, abs(lo) + 1.0), min(0.0, hi + rounding_error(2.0, abs(hi) + 1.0)), "positive")
    if x - ex > 0.0:
        return Target(-math.inf, -math.inf, "below")
    return _log_r_mp(delta_g, s)


def _log_r_mp(delta_g: float, s: Spec) -> Target:
    """r at 256 bits: the floats δ_g, δ_j are exact rationals; log1p is accurate to a few ulps of 256 bits."""
    with mpmath.workprec(_MP_PREC):
        ls = mpmath.fsum(
            int(c) * mpmath.log1p(-mpmath.mpf(float(d))) for d, c in zip(s.deltas, s.delta_counts) if d > 0
        )
        x = mpmath.log1p(-mpmath.mpf(delta_g)) - ls
        scale = abs(ls) + abs(mpmath.log1p(-mpmath.mpf(delta_g))) + 1
        err = scale * mpmath.mpf(2) ** (-_MP_PREC + 24)
        if x > err:
            return Target(-math.inf, -math.inf, "below")
        if x == 0 and ls == 0:
            return Target(-math.inf, -math.inf, "zero")
        if x >= -err:
            return _exact_r(delta_g, s, Target(-math.inf, _mp_log(-mpmath.expm1(x - err)), "ambiguous"))
        r_lo = -mpmath.expm1(x + err)
        r_hi = -mpmath.expm1(x - err)
        lo = _mp_log(r_lo)
        hi = _mp_log(r_hi)
        return Target(next_down(lo), min(0.0, next_up(hi)), "positive")


#: Largest number of mechanisms with δ_i > 0 for which r is settled in exact rational arithmetic.
_EXACT_R_MAX = 64


def _exact_r(delta_g: float, s: Spec, fallback: Target) -> Target:
    """r in exact rationals (``fractions.Fraction``) when few δ_i > 0; else ``fallback``."""
    from fractions import Fraction

    pos = s.deltas > 0
    if int(np.sum(s.delta_counts[pos])) > _EXACT_R_MAX:
        return fallback
    surv = Fraction(1)
    for d, c in zip(s.deltas[pos].tolist(), s.delta_counts[pos].tolist()):
        surv *= (1 - Fraction(d)) ** int(c)
    r = 1 - (1 - Fraction(delta_g)) / surv
    if r == 0:
        return Target(-math.inf, -math.inf, "zero")
    if r < 0:
        return Target(-math.inf, -math.inf, "below")
    with mpmath.workprec(_MP_PREC):
        lr = mpmath.log(mpmath.mpf(r.numerator) / r.denominator)
    v = float(lr)
    return Target(next_down(v), min(0.0, next_up(v)), "positive")


def _mp_log(x: mpmath.mpf) -> float:
    return float(mpmath.log(x)) if x > 0 else -math.inf

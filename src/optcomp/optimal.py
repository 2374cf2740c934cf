"""Optimal composition of (ε, δ)-DP black boxes (KOV Thm III.3; Murtagh–Vadhan Thms 1.4, 1.5, 1.7).

``OptComp((ε_1, δ_1), …, (ε_k, δ_k), δ_g)`` is the least ε_g ≥ 0 such that every adaptive composition
of (ε_i, δ_i)-DP mechanisms is (ε_g, δ_g)-DP. MV Thm 1.5 characterises it: with the privacy loss of the
canonical ("leaky randomized response") mechanisms, X_i = +ε_i w.p. p_i = e^{ε_i}/(1 + e^{ε_i}) and
X_i = −ε_i otherwise, independent, and L = Σ X_i,

    D(ε_g) := E[(1 − e^{ε_g − L})_+]
            = Π(1 + e^{ε_i})^{−1} Σ_{S ⊆ [k]} max(e^{Σ_{i∈S} ε_i} − e^{ε_g} e^{Σ_{i∉S} ε_i}, 0),

the composition is (ε_g, δ_g)-DP iff D(ε_g) ≤ r := 1 − (1 − δ_g)/Π(1 − δ_i). Equivalently the optimal δ
at a given ε_g is δ_g = 1 − Π(1 − δ_i)·(1 − D(ε_g)).

How D is evaluated (all in log space):

* The loss L lives on a lattice t_y (for equal ε_i, t_y = (2y − k)ε: KOV Thm III.3 / MV Thm 1.4 with
  binomial weights; for ε_i = a_i·ε_0, t_y = (2y − Σa_i)ε_0 with the weights of Y = Σ_{i∈S} a_i
  obtained by convolution, MV Lemmas 5.1–5.2; for small k by enumeration of all 2^k subsets).
* D is piecewise of the form A_j − e^{ε_g}·B_j between consecutive lattice points
  (A_j = Σ_{y ≥ j} w_y, B_j = Σ_{y ≥ j} w_y e^{−t_y}), so ε(δ) is solved *in closed form*,
  ε_g = ln(A_j − r) − ln B_j, after a search for the piece j — exact, not iterative.
* Every weight vector is carried twice, as an upper and a lower envelope of the true weights (the
  floating-point error of ``gammaln``/``logsumexp`` as a relative factor e^{±η}; the FFT error of
  :func:`optcomp._numerics.fft_error_bound` as an absolute term, after exponential tilting so that the
  error is small relative to the tail that matters). D is increasing in every weight, so the two
  envelopes give certified ends of every answer.
* Real ε_i that are not on a lattice are bracketed (``method="grid"``): OptComp is non-decreasing in
  each ε_i (MV Lemma 5.3 with c_i ≥ 0), so rounding every ε_i up to the lattice ε_0·ℤ gives an upper
  bound and rounding down a lower bound; both are computed exactly on their lattices.

Edge-case semantics (documented once here, tested in ``tests/test_optimal.py``):

* ε_i = 0 mechanisms contribute only their δ_i; δ_i = 1 makes every finite guarantee impossible.
* Target δ_g below the floor 1 − Π(1 − δ_i): no finite ε_g exists; :func:`epsilon` returns
  ``Bound(inf, inf)`` (a certified statement, not an error).
* Target δ_g so large that ε_g = 0 suffices: :func:`epsilon` returns ``Bound(0, 0)``.
* Target δ_g exactly at the floor (e.g. δ_g = 0 with all δ_i = 0): ε_g = Σε_i (D vanishes exactly there);
  :func:`delta` at ε_g ≥ Σε_i returns the floor. A δ_g within float rounding of the floor may land on
  either side of it.
* ``method="grid"`` on equal ε_i uses the homogeneous closed form (already exact).
"""

from __future__ import annotations

import heapq
import math
import numbers
import reprlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple, overload

import numpy as np
from scipy import signal, special

from optcomp._numerics import (
    RELATIVE_SLACK,
    UNIT_ROUNDOFF,
    Bound,
    FloatArray,
    check_epsilon_delta,
    check_int,
    check_nonnegative,
    check_positive,
    check_probability,
    fft_error_bound,
    log1mexp_array,
    log_binomial,
    round_down,
    round_up,
)

EpsDelta = tuple[float, float]
Method = Literal["auto", "exact", "grid", "mv"]

#: Default target width (in ε) of the bracket returned for off-lattice heterogeneous inputs.
DEFAULT_TOLERANCE: float = 1e-3
#: Default work limit: the largest lattice (number of points of Σ a_i) the grid method builds.
DEFAULT_MAX_POINTS: int = 2**22
#: Largest number of non-zero ε_i handled by enumeration of all subsets (MV Thm 1.5 by brute force).
BRUTE_FORCE_MAX_K: int = 16
#: Default accuracy η of the MV Thm 1.7 algorithm (additive in ε, e^{−η/2} in δ).
DEFAULT_MV_ETA: float = 1e-2

_U = UNIT_ROUNDOFF
#: Relative bracket width below which the lattice DP is not re-centred (float64 noise level).
_LATTICE_RTOL = 2.0**-30
_LN2 = math.log(2.0)


# ---------------------------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Homogeneous(Sequence[EpsDelta]):
    """k copies of one (ε, δ) pair, recognised by :func:`delta`/:func:`epsilon` without materialising them.

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
class _Spec:
    """Validated input: non-zero ε_i (or one repeated value), and log Π(1 − δ_i)."""

    eps: FloatArray  # the non-zero ε_i (empty if all are zero); unused when ``hom_k`` > 0
    hom_eps: float  # the common ε when all non-zero ε_i are equal (and hom_k of them), else nan
    hom_k: int
    log_survive: float  # Σ log1p(−δ_i) (−inf if some δ_i = 1)
    k: int


def _spec(mechanisms: Sequence[EpsDelta]) -> _Spec:
    if isinstance(mechanisms, Homogeneous):
        log_survive = -math.inf if mechanisms.delta == 1.0 else mechanisms.k * math.log1p(-mechanisms.delta)
        if mechanisms.epsilon == 0.0:
            return _Spec(np.zeros(0), math.nan, 0, log_survive, mechanisms.k)
        return _Spec(np.zeros(0), mechanisms.epsilon, mechanisms.k, log_survive, mechanisms.k)
    shown = reprlib.repr(mechanisms)
    if isinstance(mechanisms, (str, bytes)):
        raise ValueError(f"mechanisms must be a sequence of (epsilon, delta) pairs, got {shown}")  # noqa: TRY004
    try:
        has_bool = any(isinstance(x, bool) or not isinstance(x, numbers.Real) for pair in mechanisms for x in pair)
        arr = np.asarray(mechanisms, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"mechanisms must be a sequence of (epsilon, delta) pairs, got {shown}") from exc
    if has_bool:
        raise ValueError(f"mechanisms must hold real (epsilon, delta) numbers (not bool or str), got {shown}")
    if arr.ndim != 2 or arr.shape[1] != 2 or arr.shape[0] == 0:
        raise ValueError(
            f"mechanisms must be a non-empty sequence of (epsilon, delta) pairs, got shape {arr.shape}"
        )
    eps, dlt = arr[:, 0], arr[:, 1]
    bad = ~((eps >= 0) & np.isfinite(eps) & (dlt >= 0) & (dlt <= 1))
    if bad.any():
        i = int(np.argmax(bad))
        check_epsilon_delta(float(eps[i]), float(dlt[i]), prefix=f"mechanisms[{i}].")
    log_survive = -math.inf if (dlt >= 1.0).any() else float(np.sum(np.log1p(-dlt)))
    nz = eps[eps > 0]
    if nz.size and np.all(nz == nz[0]):
        return _Spec(np.zeros(0), float(nz[0]), int(nz.size), log_survive, int(arr.shape[0]))
    return _Spec(np.ascontiguousarray(nz), math.nan, 0, log_survive, int(arr.shape[0]))


# ---------------------------------------------------------------------------------------------
# The loss lattice and the exact piecewise solver.
# ---------------------------------------------------------------------------------------------


class _Weights(NamedTuple):
    """Weights w_y ≥ 0 (as logs) at losses t_y > 0 (ascending), plus mass at +∞ (always in the tail)."""

    loss: FloatArray
    logw: FloatArray
    inf_mass: float


def _log1mexp_vec(x: FloatArray) -> FloatArray:
    """log(1 − eˣ) with x clipped to ≤ 0 (x > 0 only arises from rounding at equal sides)."""
    return log1mexp_array(np.minimum(x, 0.0))


def _log1mexp_scalar(x: float) -> float:
    """log(1 − eˣ), −inf for x ≥ 0 (x ≥ 0 only arises from rounding when both sides are equal)."""
    if not x < 0.0:
        return -math.inf
    return math.log(-math.expm1(x)) if x > -_LN2 else math.log1p(-math.exp(x))


def _logsumexp(a: FloatArray) -> float:
    if a.size == 0:
        return -math.inf
    m = float(np.max(a))
    if m == -math.inf:
        return -math.inf
    return m + math.log(float(np.sum(np.exp(a - m))))


def _log_tail(w: _Weights, eps_g: float) -> float:
    """log D(ε_g) = log(inf_mass + Σ_{t_y > ε_g} w_y (1 − e^{ε_g − t_y}))."""
    j = int(np.searchsorted(w.loss, eps_g, side="right"))
    terms = w.logw[j:] + _log1mexp_vec(eps_g - w.loss[j:])
    log_inf = math.log(w.inf_mass) if w.inf_mass > 0 else -math.inf
    return float(np.logaddexp(log_inf, _logsumexp(terms)))


def _suffix_logsumexp(a: FloatArray) -> FloatArray:
    """out[j] = log Σ_{i ≥ j} exp(a[i]), out[n] = −inf (scaled cumulative sum, relative error ≤ n·u).

    The scale is the maximum of the part still to be summed: a suffix whose sum lies far (> e^{−600})
    below the current scale is recomputed with its own maximum, so tail sums never underflow.
    """
    n = a.size
    out = np.full(n + 1, -math.inf)
    start = 0
    while start < n:
        part = a[start:]
        m = float(np.max(part))
        if m == -math.inf:
            break
        with np.errstate(divide="ignore"):
            out[start:n] = np.log(np.cumsum(np.exp(part - m)[::-1])[::-1]) + m
        # Suffix sums are non-increasing: the entries below m − 600 form a tail; redo it rescaled.
        far = np.flatnonzero(out[start:n] < m - 600.0)
        if far.size == 0:
            break
        start += int(far[0])
    return out


def _root(w: _Weights, log_r: float) -> tuple[float, float]:
    """Least ε_g ≥ 0 with D(ε_g) ≤ r (exact piecewise closed form) and an absolute error bound for it.

    Between lattice points t_{j−1} ≤ ε_g ≤ t_j, D(ε_g) = inf_mass + A_j − e^{ε_g} B_j, hence
    ε_g = ln(inf_mass + A_j − r) − ln B_j on the piece where D crosses r.

    The error bound covers the evaluation of that formula (cancellation in A_j − r, the logs) given
    the weights; the weights' own errors are handled by the caller's envelopes.
    """
    log_inf = math.log(w.inf_mass) if w.inf_mass > 0 else -math.inf
    if log_inf > log_r:
        return (math.inf, 0.0)
    n = w.loss.size
    if n == 0:
        return (0.0, 0.0)
    log_a = np.logaddexp(log_inf, _suffix_logsumexp(w.logw))
    log_b = _suffix_logsumexp(w.logw - w.loss)
    # log D at ε_g = 0 and at every knot t_j (terms with index > j).
    d0 = float(log_a[0]) + _log1mexp_scalar(float(log_b[0] - log_a[0])) if log_a[0] > -math.inf else -math.inf
    if d0 <= log_r:
        return (0.0, 0.0)
    knot_b = w.loss + log_b[1:]
    with np.errstate(invalid="ignore"):
        log_d = log_a[1:] + _log1mexp_vec(np.minimum(knot_b - log_a[1:], 0.0))
    log_d = np.where(log_a[1:] == -math.inf, -math.inf, log_d)
    m = int(np.argmax(log_d <= log_r))  # log_d[n-1] = log inf_mass <= log_r, so m exists
    la, lb = float(log_a[m]), float(log_b[m])
    # A − r in log space: logsubexp(la, log_r); la >= log_r on this piece up to rounding.
    diff = la + _log1mexp_scalar(log_r - la) if la > log_r else -math.inf
    lo = float(w.loss[m - 1]) if m > 0 else 0.0
    hi = float(w.loss[m])
    if diff == -math.inf:
        eps = hi
        cond = 1.0
    else:
        eps = min(max(diff - lb, lo), hi)
        cond = 1.0 / max(-math.expm1(log_r - la), _U)
    # Suffix sums carry a relative error ≤ n·u (sequential cumsum); the subtraction A − r amplifies it by cond.
    err = 8.0 * _U * (cond * (n + 2.0) + abs(la) + abs(lb) + abs(eps))
    return (eps, err)


def _epsilon_from_envelopes(upper: _Weights, lower: _Weights, log_r: float) -> Bound:
    eps_hi, err_hi = _root(upper, log_r - RELATIVE_SLACK)
    eps_lo, err_lo = _root(lower, log_r + RELATIVE_SLACK)
    hi = round_up(eps_hi + err_hi) if math.isfinite(eps_hi) else math.inf
    lo = max(0.0, round_down(eps_lo - err_lo)) if math.isfinite(eps_lo) else math.inf
    if eps_lo == 0.0:
        lo = 0.0
    if eps_hi == 0.0:
        hi = 0.0
    return Bound(min(lo, hi), hi)


def _delta_from_envelopes(upper: _Weights, lower: _Weights, eps_g: float, log_survive: float) -> Bound:
    """δ_g = 1 − Π(1 − δ_i)(1 − D(ε_g)), with D bracketed by the two envelopes."""
    if log_survive == -math.inf:
        return Bound(1.0, 1.0)  # some δ_i = 1: nothing better than δ_g = 1 holds

    def delta_of(log_d: float) -> float:
        if log_survive == -math.inf:
            return 1.0
        d = math.exp(log_d)
        if d >= 1.0:
            return 1.0
        return -math.expm1(log_survive + math.log1p(-d))

    # Pairwise summation in _log_tail: relative error ≤ ~u·log2(n) per sum, plus the per-term exp/log1mexp.
    slack_up = RELATIVE_SLACK + 8.0 * _U * math.log2(upper.loss.size + 2.0)
    slack_lo = RELATIVE_SLACK + 8.0 * _U * math.log2(lower.loss.size + 2.0)
    hi = min(1.0, round_up(delta_of(_log_tail(upper, eps_g) + slack_up)))
    lo = max(0.0, round_down(delta_of(_log_tail(lower, eps_g) - slack_lo)))
    return Bound(min(lo, hi), hi)


def _log_r(delta_g: float, log_survive: float) -> float:
    """log r, r = 1 − (1 − δ_g)/Π(1 − δ_i); nan when r < 0 (δ_g below the floor)."""
    if delta_g >= 1.0:
        return 0.0
    if log_survive == -math.inf:
        return math.nan
    x = math.log1p(-delta_g) - log_survive  # r = −expm1(x)
    if x > 0.0:
        return math.nan
    if x == 0.0:
        return -math.inf
    return math.log(-math.expm1(x))


def _softplus(x: FloatArray | float) -> FloatArray:
    return np.asarray(np.logaddexp(0.0, x), dtype=np.float64)


# ---------------------------------------------------------------------------------------------
# Weight envelopes for each exact method.
# ---------------------------------------------------------------------------------------------


def _homogeneous_weights(eps: float, k: int) -> tuple[_Weights, _Weights]:
    """Binomial weights of KOV Thm III.3 / MV Thm 1.4: w_ℓ = C(k, ℓ) e^{ℓε}/(1 + e^ε)^k at t_ℓ = (2ℓ − k)ε.

    η bounds the relative error of each log-weight: ``gammaln`` and ``logaddexp`` are accurate to a few
    ulps of their (large) values, so the absolute error of log w_ℓ is ≤ 8u(3 ln k! + kε + k ln(1+e^ε) + 8).
    """
    y = np.arange(k // 2 + 1, k + 1, dtype=np.float64)
    sp = float(_softplus(eps))
    logw = log_binomial(k, y) + y * eps - k * sp
    eta = 8.0 * _U * (3.0 * math.lgamma(k + 1.0) + k * eps + k * sp + 8.0)
    t = (2.0 * y - k) * eps
    keep = t > 0
    t, logw = t[keep], logw[keep]
    return (
        _Weights(np.nextafter(t, math.inf), logw + eta, 0.0),
        _Weights(np.nextafter(t, -math.inf), logw - eta, 0.0),
    )


def _brute_weights(eps: FloatArray) -> tuple[_Weights, _Weights]:
    """All 2^k outcomes of the canonical mechanisms (MV Thm 1.5 summed by brute force)."""
    loss = np.zeros(1)
    logp = np.zeros(1)
    sp = _softplus(eps)
    for e, s in zip(eps.tolist(), sp.tolist()):
        loss = np.concatenate([loss + e, loss - e])
        logp = np.concatenate([logp + (e - s), logp - s])
    k = eps.size
    scale = float(np.sum(eps) + np.sum(sp))
    eta = 4.0 * _U * (k + 2) * (scale + 1.0)
    t_err = 4.0 * _U * (k + 2) * float(np.sum(eps))
    order = np.argsort(loss, kind="stable")
    loss, logp = loss[order], logp[order]
    up = loss + t_err > 0
    lo = loss - t_err > 0
    return (
        _Weights(loss[up] + t_err, logp[up] + eta, 0.0),
        _Weights(loss[lo] - t_err, logp[lo] - eta, 0.0),
    )


@dataclass(slots=True)
class _Node:
    """A partial product of the tilted factors: Q_node on y ∈ [offset, offset + len(arr)).

    ``err`` bounds |arr − truth| per entry one-sidedly in the direction of the envelope (``arr + err``
    ≥ truth for the upper side, ``arr − err`` ≤ truth for the lower side); ``mass`` is Σ arr; ``mean``
    and ``sumsq`` (Σ a_i²) choose the window; ``log_m`` is the node's log tilting normaliser; ``inf_p``
    is untilted probability moved to +∞ loss (upper side).
    """

    offset: int
    arr: FloatArray
    err: float
    mass: float
    mean: float
    sumsq: float
    log_m: float
    inf_p: float


#: ln(2/τ) of the Hoeffding window [mean ± √(Σa_i² · ln(2/τ)/2)] of a partial product (τ = 2e-20). The
#: window only saves work: the mass outside it is accounted exactly (moved up or to +∞ for the upper
#: envelope, dropped for the lower one), so no probability bound enters the certificate.
_WINDOW_LOG_TAIL = 46.0


def _merge(x: _Node, y: _Node, theta: float, side: Literal["upper", "lower"]) -> _Node:
    """Product of two nodes, then cut to the node's window (see :class:`_Node`).

    Direct convolution of non-negative vectors has relative error ≤ (m + 1)u per entry; FFT convolution
    adds :func:`fft_error_bound` (scaled by the masses). Input errors propagate as
    e_x·mass_y + e_y·mass_x + e_x·e_y·m (m = shorter length).
    """
    a, b = x.arr, y.arr
    m = min(a.size, b.size)
    n = a.size + b.size - 1
    if m <= 64 or a.size * b.size <= 2**16:
        out = np.convolve(a, b)
        e = 2.0 * (m + 1) * _U * float(np.max(out))
    else:
        out = signal.fftconvolve(a, b)
        np.maximum(out, 0.0, out=out)
        e = fft_error_bound(int(2 ** math.ceil(math.log2(n))), max(x.mass, 1.0) * max(y.mass, 1.0), 2)
    err = x.err * y.mass + y.err * x.mass + 2.0 * x.err * y.err * m + e
    node = _Node(
        x.offset + y.offset, out, err, float(np.sum(out)), x.mean + y.mean, x.sumsq + y.sumsq,
        x.log_m + y.log_m, x.inf_p + y.inf_p,
    )
    return _window(node, theta, side)


def _window(node: _Node, theta: float, side: Literal["upper", "lower"]) -> _Node:
    h = math.sqrt(node.sumsq * _WINDOW_LOG_TAIL / 2.0)
    size = node.arr.size
    lo = max(0, math.floor(node.mean - h) - node.offset)
    hi = min(size - 1, math.ceil(node.mean + h) - node.offset)
    if hi < lo or (hi - lo + 1) > 0.8 * size:
        return node
    arr = node.arr
    inf_p = node.inf_p
    if side == "upper":
        with np.errstate(divide="ignore"):
            if lo > 0:
                # Move the untilted probability of y < lo up to y = lo (D is increasing in the loss):
                # Q_new(lo) += Σ_j (Q(j) + e) e^{θ(lo − j)}.
                j = np.arange(lo, dtype=np.float64)
                log_moved = _logsumexp(np.log(arr[:lo] + node.err) + theta * (lo - j))
                if log_moved > 0.0:  # more than unit tilted mass: cutting would inflate errors; keep all
                    lo = 0
            if hi < size - 1:
                # Untilted probability of y > hi goes to +∞ loss: Σ (Q(j) + e)·e^{log M − θ(offset + j)}.
                j = np.arange(hi + 1, size, dtype=np.float64)
                inf_p += math.exp(_logsumexp(np.log(arr[hi + 1:] + node.err) + node.log_m - theta * (node.offset + j)))
        new = arr[lo : hi + 1].copy()
        if lo > 0:
            new[0] += math.exp(log_moved)
    else:
        new = arr[lo : hi + 1].copy()
    return _Node(node.offset + lo, new, node.err, float(np.sum(new)), node.mean, node.sumsq, node.log_m, inf_p)


def _convolve_all(leaves: list[_Node], theta: float, side: Literal["upper", "lower"]) -> _Node:
    """Product of all leaves in Huffman order (two shortest first), windowed after every merge."""
    heap: list[tuple[int, int, _Node]] = [(leaf.arr.size, i, leaf) for i, leaf in enumerate(leaves)]
    heapq.heapify(heap)
    counter = len(heap)
    while len(heap) > 1:
        _, _, x = heapq.heappop(heap)
        _, _, y = heapq.heappop(heap)
        z = _merge(x, y, theta, side)
        heapq.heappush(heap, (z.arr.size, counter, z))
        counter += 1
    return heap[0][2]


def _tilt_for(a: FloatArray, unit: float, eps_target: float) -> float:
    """θ (per unit of y) whose tilted mean of L equals ``eps_target`` (0 if the mean is already above it)."""
    eps = a * unit
    total = float(np.sum(eps))

    def mean_l(lam: float) -> float:
        # Under the tilt e^{λL}, P(X_i = +ε_i) = sigmoid(ε_i(1 + 2λ)), so E X_i = ε_i tanh(ε_i(1 + 2λ)/2).
        return float(np.sum(eps * np.tanh(eps * (1.0 + 2.0 * lam) / 2.0)))

    target = min(eps_target, 0.999 * total)
    if mean_l(0.0) >= target:
        return 0.0
    lo, hi = 0.0, 1.0
    while mean_l(hi) < target and hi < 1e6:
        hi *= 2.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if mean_l(mid) < target:
            lo = mid
        else:
            hi = mid
    lam = 0.5 * (lo + hi)
    # tilt e^{λ L} with L = (2y − N) unit  ⇔  e^{θ y} with θ = 2 λ unit
    return 2.0 * lam * unit


def _lattice_side(a: FloatArray, unit: float, eps_target: float, side: Literal["upper", "lower"]) -> _Weights:
    """One envelope of the weights for ε_i = a_i·unit (MV Lemmas 5.1–5.2 by convolution), exponentially tilted.

    Y = Σ_{i∈S} a_i has P(Y = y) = Q_θ(y)·M(θ)·e^{−θy}, where Q_θ is the law under the factors tilted by
    e^{θ a_i} (θ chosen so that Q_θ is centred where L = (2Y − N)·unit ≈ ``eps_target``) and
    log M(θ) = Σ [softplus(ε_i + θ a_i) − softplus(ε_i)]. Q_θ is computed by convolution with an absolute
    error bound e (:func:`_convolve_all`), so P(y) ∈ [Q̂(y) − e, Q̂(y) + e]·M e^{−θy}·e^{±η}; this is small
    relative to P near the tail that decides ε_g. Losses t_y = (2y − N)·unit are moved one ulp outwards.
    """
    vals, counts = np.unique(a.astype(np.int64), return_counts=True)
    n_total = int(np.sum(vals * counts))
    theta = _tilt_for(a, unit, eps_target)
    leaves: list[_Node] = []
    log_m = 0.0
    eta_b = 0.0
    for v, c in zip(vals.tolist(), counts.tolist()):
        e_i = v * unit
        p_t = float(special.expit(e_i + theta * v))
        log_m_leaf = c * float(_softplus(e_i + theta * v) - _softplus(e_i))
        log_m += log_m_leaf
        probs = _binom_pmf(c, p_t)
        if 0.0 < p_t < 1.0:
            eta_b += 8.0 * _U * (3.0 * math.lgamma(c + 1.0) + c * (abs(math.log(p_t)) + abs(math.log1p(-p_t))) + 4.0)
        arr = np.zeros(int(v) * c + 1)
        arr[:: int(v)] = probs
        leaves.append(_Node(0, arr, 0.0, float(np.sum(arr)), c * v * p_t, c * float(v) ** 2, log_m_leaf, 0.0))
    root = _convolve_all(leaves, theta, side)
    q, err = root.arr, root.err
    y = root.offset + np.arange(q.size, dtype=np.float64)
    t = (2.0 * y - n_total) * unit
    keep = t > 0
    y, t, qk = y[keep], t[keep], q[keep]
    eta = eta_b + 16.0 * _U * (abs(log_m) + theta * n_total + len(vals) + 8.0)
    with np.errstate(divide="ignore"):
        if side == "upper":
            logw = np.log(qk + err) + log_m - theta * y + eta
            return _Weights(np.nextafter(t, math.inf), logw, round_up(root.inf_p))
        logw = np.log(np.maximum(qk - err, 0.0)) + log_m - theta * y - eta
        return _Weights(np.nextafter(t, -math.inf), logw, 0.0)


def _binom_pmf(c: int, p: float) -> FloatArray:
    """Binomial(c, p) pmf computed in log space (relative error a few ulps of the log-weights)."""
    j = np.arange(c + 1, dtype=np.float64)
    with np.errstate(divide="ignore"):
        logpmf = log_binomial(c, j) + j * math.log(p) + (c - j) * math.log1p(-p) if 0.0 < p < 1.0 else None
    if logpmf is None:
        res = np.zeros(c + 1)
        res[c if p >= 1.0 else 0] = 1.0
        return res
    return np.asarray(np.exp(logpmf), dtype=np.float64)


_EMPTY = _Weights(np.zeros(0), np.zeros(0), 0.0)


def _eps_guess(eps: FloatArray, log_r: float) -> float:
    """A rough ε_g (normal approximation of L) used only to centre the tilt; never part of an answer."""
    mu = float(np.sum(eps * np.tanh(eps / 2.0)))
    sigma = math.sqrt(float(np.sum(eps * eps)))
    z = math.sqrt(2.0 * max(-log_r, 0.0)) if math.isfinite(log_r) else 40.0
    return min(mu + sigma * z, float(np.sum(eps)))


def _detect_lattice(eps: FloatArray, max_points: int) -> tuple[FloatArray, float, float] | None:
    """Integers a_i and units (up, down) with a_i·unit_dn ≤ ε_i ≤ a_i·unit_up, if the ε_i share a unit.

    Tries unit = min ε_i / j for j = 1..16 and accepts it when every ε_i/unit is an integer up to
    floating-point noise (64 ulps) and Σ a_i ≤ ``max_points``. The two units differ by a few ulps, so
    the bracket they give is as tight as float64 allows.
    """
    m = float(np.min(eps))
    for j in range(1, 17):
        unit = m / j
        a = eps / unit
        ar = np.rint(a)
        if np.all(ar >= 1) and np.all(np.abs(a - ar) <= 64.0 * _U * a) and float(np.sum(ar)) <= max_points:
            ratio = eps / ar
            return ar, float(np.max(ratio)) * (1.0 + 4.0 * _U), float(np.min(ratio)) * (1.0 - 4.0 * _U)
    return None


def _grid_envelopes(eps: FloatArray, eps0: float, eps_target: float) -> tuple[_Weights, _Weights]:
    """Upper envelope from ε_i rounded up to the lattice ε0·ℤ, lower envelope from ε_i rounded down.

    OptComp is non-decreasing in each ε_i (MV Lemma 5.3 with c_i ≥ 0: the canonical mechanism of a
    smaller ε_i is a post-processing of the larger one), so the rounded-up instance bounds every answer
    from above and the rounded-down one (ε_i < ε0 rounded to 0, i.e. dropped) from below. The units are
    adjusted by a few ulps so that a_i·unit_up ≥ ε_i ≥ a_i·unit_dn holds in exact arithmetic.
    """
    a_up = np.ceil(eps / eps0)
    a_up = np.maximum(a_up, 1.0)
    unit_up = float(np.max(eps / a_up)) * (1.0 + 4.0 * _U)
    upper = _lattice_side(a_up, unit_up, eps_target, "upper")
    a_dn = np.floor(eps / eps0)
    keep = a_dn >= 1
    if not keep.any():
        return upper, _EMPTY
    unit_dn = float(np.min(eps[keep] / a_dn[keep])) * (1.0 - 4.0 * _U)
    lower = _lattice_side(a_dn[keep], unit_dn, eps_target, "lower")
    return upper, lower


def _exact_envelopes(spec: _Spec, method: str, max_points: int, eps_target: float) -> tuple[_Weights, _Weights] | None:
    if spec.hom_k > 0:
        return _homogeneous_weights(spec.hom_eps, spec.hom_k)
    if spec.eps.size == 0:
        return _EMPTY, _EMPTY
    if spec.eps.size <= BRUTE_FORCE_MAX_K:
        return _brute_weights(spec.eps)
    lat = _detect_lattice(spec.eps, max_points)
    if lat is not None:
        a, unit_up, unit_dn = lat
        return (_lattice_side(a, unit_up, eps_target, "upper"), _lattice_side(a, unit_dn, eps_target, "lower"))
    if method == "exact":
        raise ValueError(
            "method='exact' needs equal epsilons, at most "
            f"{BRUTE_FORCE_MAX_K} non-zero epsilons, or epsilons on a common lattice with at most "
            f"max_points={max_points} points; got {spec.eps.size} distinct real epsilons (use method='grid')"
        )
    return None


def _max_loss(spec: _Spec) -> float:
    """max L = Σε_i (``math.fsum``, correctly rounded)."""
    if spec.hom_k > 0:
        return spec.hom_k * spec.hom_eps
    return math.fsum(spec.eps.tolist())


def _check_common(method: object, tolerance: object, max_points: object) -> tuple[Method, float, int]:
    if method not in ("auto", "exact", "grid", "mv"):
        raise ValueError(f"method must be one of 'auto', 'exact', 'grid', 'mv', got {method!r}")
    tol = check_positive("tolerance", tolerance)
    mp = check_int("max_points", max_points, minimum=16)
    return method, tol, mp


def _grid_epsilon(eps: FloatArray, log_r: float, tolerance: float, max_points: int) -> Bound:
    """Refine the grid bracket: width ≈ ε0·Σ_i ∂ε_g/∂ε_i, so ε0 is predicted from the previous pass.

    Every pass is a certified bracket; the result is their intersection. The first two passes use a
    small lattice (2^12 points), the first to centre the exponential tilt on the answer.
    """
    total = float(np.sum(eps))
    eps0 = total / min(max_points, 2**12)
    target = _eps_guess(eps, log_r)
    best: Bound | None = None
    for step in range(6):
        up, lo = _grid_envelopes(eps, eps0, target)
        b = _epsilon_from_envelopes(up, lo, log_r)
        best = b if best is None else Bound(max(best.lower, b.lower), min(best.upper, b.upper))
        if not math.isfinite(best.upper) or (step > 0 and best.width <= tolerance):
            break
        target = best.midpoint
        if step == 0:
            continue  # same lattice again, now centred
        ratio = b.width / eps0
        new_eps0 = max(0.9 * tolerance / ratio, total / max_points) if ratio > 0 else eps0
        if new_eps0 >= 0.95 * eps0:
            break
        eps0 = new_eps0
    assert best is not None
    return best


def _grid_eps0_for_delta(eps: FloatArray, tolerance: float, max_points: int) -> float:
    total = float(np.sum(eps))
    sigma = math.sqrt(float(np.sum(eps * eps)))
    sens = float(np.sum(np.minimum(1.0, eps * (1.0 + 8.0 / sigma))))
    return max(tolerance / max(sens, 1.0), total / max_points)


def delta(
    mechanisms: Sequence[EpsDelta],
    epsilon: float,
    *,
    method: Method = "auto",
    tolerance: float = DEFAULT_TOLERANCE,
    max_points: int = DEFAULT_MAX_POINTS,
) -> Bound:
    """Optimal δ_g of the adaptive composition at ε_g (KOV Thm III.3; MV Thms 1.4, 1.5).

    δ_g(ε_g) = 1 − Π(1 − δ_i)·(1 − D(ε_g)),  D(ε_g) = E[(1 − e^{ε_g − L})_+]  (see the module docstring).

    Args:
        mechanisms: non-empty sequence of (ε_i, δ_i) pairs (ε_i ≥ 0, δ_i ∈ [0, 1]), or :func:`homogeneous`.
        epsilon: ε_g ≥ 0 (``inf`` gives the floor 1 − Π(1 − δ_i)).
        method: ``"auto"`` (exact when possible, else grid), ``"exact"`` (raises if no exact algorithm
            applies), ``"grid"`` (bracket from ε_i rounded to a lattice). ``"mv"`` computes ε only.
        tolerance: target width in ε of the rounding bracket used by ``"grid"`` (chooses ε0).
        max_points: work limit, the largest lattice built.

    Returns:
        A ``Bound`` whose ``upper`` is certified: it covers the rounding of ε_i (grid), the floating-point
        error of the weights (relative e^{η}, FFT absolute error after tilting) and of the final
        expm1/log1p evaluation. ``lower`` is a valid lower bound under the same accounting.
    """
    method, tolerance, max_points = _check_common(method, tolerance, max_points)
    eps_g = check_nonnegative("epsilon", epsilon, allow_inf=True)
    spec = _spec(mechanisms)
    if method == "mv":
        raise ValueError("method='mv' (MV Thm 1.7) computes epsilon only; use method='auto', 'exact' or 'grid'")
    if math.isinf(eps_g) or eps_g >= round_up(_max_loss(spec)):
        # ε_g ≥ Σε_i: D(ε_g) = 0, so δ_g is the floor 1 − Π(1 − δ_i).
        if spec.log_survive in (0.0, -math.inf):
            return Bound.exact(0.0 if spec.log_survive == 0.0 else 1.0)
        floor = -math.expm1(spec.log_survive)
        return Bound(max(0.0, round_down(floor)), min(1.0, round_up(floor)))
    target = eps_g
    grid = method == "grid" and spec.hom_k == 0 and spec.eps.size > 0  # equal or no ε_i: already exact
    env = None if grid else _exact_envelopes(spec, method, max_points, target)
    if env is None:
        eps0 = _grid_eps0_for_delta(spec.eps, tolerance, max_points)
        env = _grid_envelopes(spec.eps, eps0, target)
    return _delta_from_envelopes(env[0], env[1], eps_g, spec.log_survive)


def epsilon(
    mechanisms: Sequence[EpsDelta],
    delta: float,
    *,
    method: Method = "auto",
    tolerance: float = DEFAULT_TOLERANCE,
    max_points: int = DEFAULT_MAX_POINTS,
) -> Bound:
    """Optimal ε_g = OptComp((ε_1, δ_1), …, (ε_k, δ_k), δ_g) (KOV Thm III.3; MV Thms 1.4, 1.5, 1.7).

    The least ε_g ≥ 0 with D(ε_g) ≤ 1 − (1 − δ_g)/Π(1 − δ_i), solved in closed form on the piece of the
    loss lattice where D crosses the target (see the module docstring).

    Args:
        mechanisms: non-empty sequence of (ε_i, δ_i) pairs, or :func:`homogeneous` (a plain list of equal
            pairs is detected as homogeneous too).
        delta: target δ_g ∈ [0, 1].
        method: ``"auto"`` (default: homogeneous closed form, brute force for ≤ 16 non-zero ε_i, lattice
            DP when the ε_i share a unit, else ``"grid"``), ``"exact"`` (same, but raises instead of
            falling back to a bracket), ``"grid"`` (ε_i rounded up/down to ε0·ℤ, ε0 refined until the
            width ≤ ``tolerance`` or the lattice reaches ``max_points``), ``"mv"`` (the approximation
            algorithm of MV Thm 1.7 with η = ``tolerance``; its Bound is [lower end from Lemma 5.3, a*·ε0]).
        tolerance: target bracket width in ε for ``"grid"``/``"mv"``; the width → 0 as it → 0 (for
            ``"grid"`` until ``max_points`` binds).
        max_points: work limit (largest lattice, Σ a_i).

    Returns:
        A ``Bound``: ``upper`` is a certified upper bound of OptComp (rounding of ε_i up, weights' upper
        envelope, the closed-form root's own floating-point error); ``lower`` a certified lower bound.
        ``Bound(inf, inf)`` when δ_g is below the floor 1 − Π(1 − δ_i) (no finite ε_g exists);
        ``Bound(0, 0)`` when ε_g = 0 already meets δ_g.
    """
    method, tolerance, max_points = _check_common(method, tolerance, max_points)
    delta_g = check_probability("delta", delta)
    spec = _spec(mechanisms)
    if method == "mv":
        eps_arr = spec.eps if spec.hom_k == 0 else np.full(spec.hom_k, spec.hom_eps)
        return _epsilon_mv(eps_arr, delta_g, spec.log_survive, tolerance)
    log_r = _log_r(delta_g, spec.log_survive)
    if math.isnan(log_r):
        return Bound(math.inf, math.inf)
    if log_r == -math.inf:
        # r = 0: D(ε_g) = 0 exactly iff ε_g ≥ max L = Σε_i (pure-DP basic composition is then optimal).
        total = _max_loss(spec)
        return Bound(max(0.0, round_down(total)), round_up(total))
    target = _eps_guess(spec.eps, log_r) if spec.hom_k == 0 and spec.eps.size > 0 else 0.0
    if method == "grid" and spec.hom_k == 0 and spec.eps.size > 0:
        return _grid_epsilon(spec.eps, log_r, tolerance, max_points)
    result: Bound | None = None
    for _ in range(3):
        # The tilt of the lattice DP is centred at ``target``; re-centre on the answer and recompute
        # (each pass is certified; the brackets are intersected).
        env = _exact_envelopes(spec, method, max_points, target)
        if env is None:
            return _grid_epsilon(spec.eps, log_r, tolerance, max_points)
        b = _epsilon_from_envelopes(env[0], env[1], log_r)
        result = b if result is None else Bound(max(result.lower, b.lower), min(result.upper, b.upper))
        lattice = spec.hom_k == 0 and spec.eps.size > BRUTE_FORCE_MAX_K
        if not lattice or not math.isfinite(result.upper) or result.width <= _LATTICE_RTOL * result.upper:
            break
        target = result.midpoint
    assert result is not None
    return result


# ---------------------------------------------------------------------------------------------
# Murtagh–Vadhan Thm 1.7: binary search over ε* with Dyer's knapsack-counting DP (Lemmas 5.1–5.3).
# ---------------------------------------------------------------------------------------------


def _dyer(a: list[int], w: FloatArray, budget: int) -> float:
    """MV Lemma 5.1: Σ_{T ⊆ [k], Σ_{i∈T} a_i ≤ B} Π_{i∈T} w_i by the table F(r, s) (one row kept)."""
    f = np.ones(budget + 1)
    for ai, wi in zip(a, w.tolist()):
        if ai <= budget:
            f[ai:] = f[ai:] + wi * f[: budget + 1 - ai]
    return float(f[budget])


def _mv_passes(a: list[int], eps0: float, a_star: int, log_r: float) -> bool:
    """MV Lemma 5.2: whether OptComp((a_i ε0, δ_i)…, δ_g) ≤ a*·ε0, via inequality (5.1) and two DPs.

    The left side of (5.1) divided by Π(1 + e^{ε_i}) is e^{Σε}F_−/Π(1+e^{ε_i}) − e^{ε*}F_+/Π(1+e^{ε_i}).
    The DP sums are of positive terms (relative error ≤ (k+1)u each); the test uses a safety margin
    γ = 4(k + 4)u in the conservative direction, so "passes" is never reported wrongly in float64.
    """
    n = sum(a)
    if a_star >= n:
        # ε* ≥ Σε'_i = max L: D(ε*) = 0 exactly (the float terms below would leave ~γ of rounding).
        return log_r >= -math.inf
    budget = (n - a_star) // 2
    eps = np.asarray(a, dtype=np.float64) * eps0
    log_norm = float(np.sum(_softplus(eps)))
    f_minus = _dyer(a, np.exp(-eps), budget)
    f_plus = _dyer(a, np.exp(eps), budget)
    gamma = 4.0 * (len(a) + 4) * _U
    term_a = math.exp(float(np.sum(eps)) + math.log(f_minus) - log_norm) * (1.0 + gamma)
    term_b = math.exp(a_star * eps0 + math.log(f_plus) - log_norm) * (1.0 - gamma)
    lhs = term_a - term_b
    if lhs <= 0.0:
        return True
    return math.log(lhs) <= log_r - gamma


def _mv_search(a: list[int], eps0: float, log_r: float) -> int:
    lo, hi = 0, sum(a)
    if not _mv_passes(a, eps0, hi, log_r):
        return -1
    while lo < hi:
        mid = (lo + hi) // 2
        if _mv_passes(a, eps0, mid, log_r):
            hi = mid
        else:
            lo = mid + 1
    return lo


def _epsilon_mv(eps: FloatArray, delta_g: float, log_survive: float, eta: float) -> Bound:
    """The MV Thm 1.7 approximation algorithm, as the paper states it, with its guarantee as a Bound.

    β = η/(k(1 + ε̄) + 1), ε0 = ln(1 + β), a_i = ⌈ε_i(1/β + 1)⌉, ε'_i = a_i ε0 ≥ ε_i; binary search for
    the least integer a* with OptComp((ε'_i, δ_i)…, δ_g) ≤ a*·ε0 (Lemma 5.2, Dyer's DP of Lemma 5.1).

    * upper = a*·ε0 (rounded up): OptComp(ε_i) ≤ OptComp(ε'_i) ≤ a*·ε0 (Thm 1.7, first inequality).
    * lower: with c_i = β(ε_i + 1) ≥ ε'_i − ε_i and c = Σc_i, Lemma 5.3 gives
      OptComp(ε'_i, e^{c/2}δ_g) − c ≤ OptComp(ε_i, δ_g); a second binary search at e^{c/2}δ_g returns a′
      with OptComp(ε'_i, e^{c/2}δ_g) > (a′ − 1)ε0, so lower = max(0, (a′ − 1)ε0 − c) (0 if e^{c/2}δ_g ≥ 1).

    Cost O(k·Σa_i·log Σa_i) = O(k³ ε̄(1 + ε̄)/η · log(…)) in numpy vector operations.
    """
    if not eta < 1.0:
        raise ValueError(f"tolerance must be in (0, 1) for method='mv' (MV Thm 1.7 eta), got {eta!r}")
    log_r = _log_r(delta_g, log_survive)
    if math.isnan(log_r):
        return Bound(math.inf, math.inf)
    if eps.size == 0:
        return Bound(0.0, 0.0)
    total = float(np.sum(eps))
    if total > 600.0:
        raise ValueError(f"method='mv' needs the sum of epsilons <= 600 (float64 range), got {total!r}")
    k = eps.size
    bar = total / k
    beta = eta / (k * (1.0 + bar) + 1.0)
    eps0 = math.log1p(beta)
    a = [int(x) for x in np.ceil(eps * (1.0 / beta + 1.0))]
    a_star = _mv_search(a, eps0, log_r)
    if a_star < 0:
        return Bound(math.inf, math.inf)
    upper = round_up(a_star * eps0)
    c = beta * k * (1.0 + bar)
    scaled = delta_g * math.exp(c / 2.0)
    if scaled >= 1.0:
        return Bound(0.0, upper)
    log_r_scaled = _log_r(scaled, log_survive)
    a_lo = _mv_search(a, eps0, log_r_scaled)
    if a_lo <= 0:
        return Bound(0.0, upper)
    lower = max(0.0, round_down((a_lo - 1) * eps0 - c))
    return Bound(min(lower, upper), upper)


__all__ = ["DEFAULT_MAX_POINTS", "DEFAULT_TOLERANCE", "Homogeneous", "delta", "epsilon", "homogeneous"]

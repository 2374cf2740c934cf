"""Rényi differential privacy (RDP): a comparator, not an optimal accountant.

What Opacus and TF Privacy report is an RDP bound, so optcomp can show it beside its certified brackets
without a peer installed. A mechanism is (α, ρ(α))-RDP when D_α(M(D)‖M(D')) ≤ ρ(α) for all neighbours,
D_α(P‖Q) = (1/(α−1))·log E_Q[(dP/dQ)^α] (Mironov 2017, "Rényi differential privacy", Def. 3).

* :func:`gaussian`, :func:`laplace`, :func:`randomized_response`: closed forms at every order α > 1.
* :func:`poisson_subsampled_gaussian`: **exact at integer orders** (Mironov–Talwar–Zhang 2019, "Rényi
  differential privacy of the sampled Gaussian mechanism", Thm 5 / eq. (integer α)); **fractional orders
  get a certified upper bound**, not the infinite series peers use: α ↦ log A_α = (α−1)ρ(α) is convex
  (A_α = E_Q[(P/Q)^α] is log-convex in α by Hölder's inequality), so for n < α < n + 1 the chord
  log A_α ≤ (n+1−α)·log A_n + (α−n)·log A_{n+1} (log A_1 = 0) bounds it from above.
* :func:`of_mechanism`: the above by mechanism specification, the exact curve of a bounded-range step
  (:func:`optcomp.mechanisms.bounded_range.family_rdp`), plus any mechanism of
  :mod:`optcomp.mechanisms` whose privacy-loss law is finite and discrete (staircase, k-ary RR,
  geometric, (ε, 0) black boxes): D_α = log E_P[e^{(α−1)L}]/(α−1), maximised over both directions.
* :func:`compose`: RDP composes by adding ρ(α) order by order (Mironov 2017, Prop. 1).
* :meth:`RdpCurve.epsilon` / :meth:`RdpCurve.delta`: the standard conversion
  ε = min_α ρ(α) + log(1/δ)/(α−1) (Mironov 2017, Prop. 3) and the improved one
  ε = min_α ρ(α) + log(1 − 1/α) − log(δα)/(α−1) (Balle et al. 2020, "Hypothesis testing interpretations
  and Rényi differential privacy", Thm 21; Canonne–Kamath–Steinke 2020, Prop. 12).

Every ρ(α) is a float rounded up by ``RELATIVE_SLACK`` (the formulas are stable log-space sums), so a
converted ε is an upper bound on the true ε. It is *not* tight — that is what the comparison shows — and
is never returned as a :class:`~optcomp.Bound`: the type :class:`RdpConversion` says "upper bound only".
Orders default to dp_accounting's ``DEFAULT_RDP_ORDERS`` (1.1, 1.2, …, 10.9, 11, …, 63, 128, 256, 512,
1024), copied here so that optcomp never imports a peer.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import singledispatch
from typing import Literal, cast

import numpy as np
import numpy.typing as npt
from scipy.special import logsumexp

from optcomp._numerics import (
    RELATIVE_SLACK,
    FloatArray,
    check_int,
    check_nonnegative,
    check_open_probability,
    check_positive,
    check_sampling_rate,
)
from optcomp._rounding import log_binomial, next_up
from optcomp.mechanisms import (
    BoundedRange,
    DiscreteGaussian,
    Gaussian,
    Laplace,
    Mechanism,
    PoissonSubsampled,
    RandomizedResponse,
    check_mechanism,
    privacy_loss_laws,
)
from optcomp.mechanisms.bounded_range import family_rdp

#: dp_accounting's ``DEFAULT_RDP_ORDERS`` (rdp_privacy_accountant.py), the orders peers report with.
DEFAULT_ORDERS: tuple[float, ...] = (
    *(1.0 + x / 10.0 for x in range(1, 100)),
    *(float(a) for a in range(11, 64)),
    128.0,
    256.0,
    512.0,
    1024.0,
)

#: The RDP → (ε, δ) conversions :meth:`RdpCurve.epsilon` and :meth:`RdpCurve.delta` implement.
Conversion = Literal["standard", "improved"]


def check_orders(orders: npt.ArrayLike) -> FloatArray:
    """``orders`` as a float array; every order must be a finite number > 1 (``ValueError`` otherwise)."""
    arr = np.atleast_1d(np.asarray(orders, dtype=np.float64))
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"orders must be a non-empty 1-d sequence of numbers > 1, got {orders!r}")
    bad = arr[~(np.isfinite(arr) & (arr > 1.0))]
    if bad.size:
        raise ValueError(f"orders must be finite numbers > 1, got {float(bad[0])!r}")
    return arr


def _up(values: FloatArray) -> FloatArray:
    """Safe-side rounding of computed RDP values (relative ``RELATIVE_SLACK`` plus one ulp)."""
    out = values + np.abs(values) * RELATIVE_SLACK
    return np.asarray(next_up(out), dtype=np.float64)


# --- closed forms ----------------------------------------------------------------------------------


def gaussian(sigma: float, *, sensitivity: float = 1.0, orders: npt.ArrayLike = DEFAULT_ORDERS) -> FloatArray:
    """ρ(α) = αΔ²/(2σ²) of the Gaussian mechanism N(0, σ²) (Mironov 2017, Prop. 7).

    Args:
        sigma: noise standard deviation σ > 0.
        sensitivity: ℓ₂-sensitivity Δ > 0.
        orders: the orders α > 1.
    """
    s = check_positive("sigma", sigma)
    d = check_positive("sensitivity", sensitivity)
    a = check_orders(orders)
    mu = d / s  # μ = Δ/σ first: Δ²/σ² would be 0/0 for Δ = σ = 1e-300
    return _up(a * (mu * mu) / 2.0)


def laplace(scale: float, *, sensitivity: float = 1.0, orders: npt.ArrayLike = DEFAULT_ORDERS) -> FloatArray:
    """ρ(α) of the Laplace mechanism Lap(b), ε = Δ/b (Mironov 2017, Prop. 6):

        ρ(α) = (1/(α−1))·log[ α/(2α−1)·e^{(α−1)ε} + (α−1)/(2α−1)·e^{−αε} ],

    evaluated as a log-sum-exp of the two positive terms (no cancellation).

    Args:
        scale: noise scale b > 0.
        sensitivity: Δ > 0.
        orders: the orders α > 1.
    """
    b = check_positive("scale", scale)
    d = check_positive("sensitivity", sensitivity)
    a = check_orders(orders)
    eps = d / b
    terms = np.stack(
        [np.log(a / (2 * a - 1)) + (a - 1) * eps, np.log((a - 1) / (2 * a - 1)) - a * eps]
    )
    return _up(np.asarray(logsumexp(terms, axis=0), dtype=np.float64) / (a - 1))


def randomized_response(epsilon: float, *, orders: npt.ArrayLike = DEFAULT_ORDERS) -> FloatArray:
    """ρ(α) of binary randomized response RR(ε), p = e^ε/(1+e^ε) (Mironov 2017, Prop. 5):

        ρ(α) = (1/(α−1))·log[ p^α(1−p)^{1−α} + (1−p)^α p^{1−α} ].

    Every (ε, 0)-DP mechanism is a post-processing of RR(ε) (KOV Thm II.5), so by the data-processing
    inequality this is also the RDP of the worst (ε, 0)-DP black box.

    Args:
        epsilon: ε ≥ 0.
        orders: the orders α > 1.
    """
    eps = check_nonnegative("epsilon", epsilon)
    a = check_orders(orders)
    log_p = -math.log1p(math.exp(-eps))  # log(e^ε/(1+e^ε))
    log_1mp = -eps + log_p  # log(1/(1+e^ε))
    terms = np.stack([a * log_p + (1 - a) * log_1mp, a * log_1mp + (1 - a) * log_p])
    return _up(np.maximum(np.asarray(logsumexp(terms, axis=0), dtype=np.float64), 0.0) / (a - 1))


def _log_a_integer(sigma: float, q: float, alpha: int) -> float:
    """log A_α = log Σ_{k=0}^{α} C(α,k)(1−q)^{α−k} q^k e^{(k²−k)/(2σ²)} (Mironov–Talwar–Zhang 2019)."""
    k = np.arange(alpha + 1, dtype=np.float64)
    terms = log_binomial(alpha, k) + k * math.log(q) + (k * k - k) / (2.0 * sigma * sigma)
    terms[:-1] += (alpha - k[:-1]) * math.log1p(-q)  # q < 1 here (q = 1 is the plain Gaussian)
    return float(logsumexp(terms))


def poisson_subsampled_gaussian(
    sigma: float, sampling_rate: float, *, sensitivity: float = 1.0, orders: npt.ArrayLike = DEFAULT_ORDERS
) -> FloatArray:
    """ρ(α) of the Poisson-subsampled Gaussian (DP-SGD step), add/remove neighbours.

    Integer α: exact, ρ(α) = log A_α/(α−1) with A_α = Σ_{k=0}^{α} C(α,k)(1−q)^{α−k}q^k e^{(k²−k)/(2σ'²)},
    σ' = σ/Δ (Mironov–Talwar–Zhang 2019, Thm 5; the maximum of both directions at integer orders, their
    Thm 4). Fractional α: the certified chord bound of the module docstring (an upper bound, ≥ the exact
    value; peers' series values are usually a little smaller), capped by the Gaussian's own ρ(α) (Rényi
    divergences are jointly quasi-convex). q = 1 is the Gaussian closed form.

    Args:
        sigma: noise standard deviation σ > 0.
        sampling_rate: Poisson rate q in (0, 1].
        sensitivity: ℓ₂-sensitivity Δ > 0.
        orders: the orders α > 1.
    """
    s = check_positive("sigma", sigma) / check_positive("sensitivity", sensitivity)
    q = check_sampling_rate("sampling_rate", sampling_rate)
    a = check_orders(orders)
    if q == 1.0:  # no subsampling: the Gaussian closed form, exact at every order
        return gaussian(s, orders=a)
    cache: dict[int, float] = {1: 0.0}

    def log_a(n: int) -> float:
        if n not in cache:
            cache[n] = _log_a_integer(s, q, n)
        return cache[n]

    out = np.empty_like(a)
    for i, alpha in enumerate(a.tolist()):
        lo = math.floor(alpha)
        frac = alpha - lo
        value = log_a(lo) if frac == 0.0 else (1.0 - frac) * log_a(lo) + frac * log_a(lo + 1)
        out[i] = max(value, 0.0) / (alpha - 1.0)
    # Rényi divergences are jointly quasi-convex (van Erven & Harremoës 2014, Thm 13), so subsampling never
    # exceeds the Gaussian's own αΔ²/(2σ²): a second certified bound, tighter for small fractional α.
    return np.minimum(_up(out), gaussian(s, orders=a))


# --- by mechanism ----------------------------------------------------------------------------------


@singledispatch
def of_mechanism(mechanism: Mechanism, orders: npt.ArrayLike = DEFAULT_ORDERS) -> FloatArray:
    """ρ(α) of one run of a mechanism specification of :mod:`optcomp.mechanisms`.

    Closed forms for Gaussian, Laplace, randomized response and the Poisson-subsampled Gaussian; any
    other mechanism whose privacy-loss laws are finite and discrete uses
    D_α(P‖Q) = log Σ_atoms P(L=ℓ)e^{(α−1)ℓ} / (α−1), the maximum of the remove and add directions.

    Raises:
        NotImplementedError: for a mechanism with a continuous law and no closed form here (e.g. a
            subsampled Laplace), or one with P(L = +∞) > 0 (its RDP is infinite: an (ε, δ > 0) box).
        ValueError: if ``mechanism`` is not a mechanism specification.
    """
    check_mechanism("mechanism", mechanism)
    a = check_orders(orders)
    best = np.zeros_like(a)
    for law in privacy_loss_laws(mechanism):
        if law.continuous is not None:
            raise NotImplementedError(f"no RDP formula for {mechanism!r} (continuous privacy loss)")
        if law.p_inf > 0.0:
            raise NotImplementedError(f"RDP of {mechanism!r} is infinite (P(L = +inf) = {law.p_inf:g} > 0)")
        with np.errstate(divide="ignore"):
            log_p = np.log(law.atom_p)
        terms = log_p[None, :] + (a[:, None] - 1.0) * law.atom_losses[None, :]
        best = np.maximum(best, np.asarray(logsumexp(terms, axis=1), dtype=np.float64) / (a - 1.0))
    return _up(best)


@of_mechanism.register
def _(mechanism: Gaussian, orders: npt.ArrayLike = DEFAULT_ORDERS) -> FloatArray:
    return gaussian(mechanism.sigma, sensitivity=mechanism.sensitivity, orders=orders)


@of_mechanism.register
def _(mechanism: Laplace, orders: npt.ArrayLike = DEFAULT_ORDERS) -> FloatArray:
    return laplace(mechanism.scale, sensitivity=mechanism.sensitivity, orders=orders)


@of_mechanism.register
def _(mechanism: DiscreteGaussian, orders: npt.ArrayLike = DEFAULT_ORDERS) -> FloatArray:
    """αρ, ρ = ‖v‖²/(2σ²) of the accounted shift v (Canonne–Kamath–Steinke 2020, Prop 5, summed over the
    coordinates): D_α = αρ + log(θ((1−α)v)/Z)/(α−1) per coordinate with θ(c) = Σ_x e^{−(x−c)²/(2σ²)} ≤ Z, so αρ
    bounds it at every order and equals it wherever (α−1)v is an integer. Not the generic sum over the
    law's atoms: its range is cut where the mass falls below e^{−800}, and at large orders the cut tail
    carries most of E_P[e^{(α−1)L}] (σ = 1, α = 64: 27.03 from the atoms, 32 exactly)."""
    return _up(check_orders(orders) * mechanism.rho)


@of_mechanism.register
def _(mechanism: RandomizedResponse, orders: npt.ArrayLike = DEFAULT_ORDERS) -> FloatArray:
    return randomized_response(mechanism.epsilon, orders=orders)


@of_mechanism.register
def _(mechanism: BoundedRange, orders: npt.ArrayLike = DEFAULT_ORDERS) -> FloatArray:
    """The exact RDP curve of one ε-BR step, sup_t D_α(P_t‖Q_t), rounded up (its family's closed form)."""
    return family_rdp(mechanism.epsilon, check_orders(orders))


@of_mechanism.register
def _(mechanism: PoissonSubsampled, orders: npt.ArrayLike = DEFAULT_ORDERS) -> FloatArray:
    base = mechanism.mechanism
    if isinstance(base, Gaussian):
        return poisson_subsampled_gaussian(
            base.sigma, mechanism.sampling_rate, sensitivity=base.sensitivity, orders=orders
        )
    raise NotImplementedError(f"no RDP formula for {mechanism!r} (only a subsampled Gaussian is supported)")


# --- composition and conversion --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RdpConversion:
    """An RDP → DP conversion: an **upper bound only** (never tight; no lower end).

    Attributes:
        value: the converted ε (or δ), an upper bound on the true one.
        order: the order α at which the minimum over ``orders`` is attained.
        conversion: ``"standard"`` or ``"improved"``.
    """

    value: float
    order: float
    conversion: str


@dataclass(frozen=True, slots=True)
class RdpCurve:
    """ρ(α) of a composition on a fixed set of orders (Mironov 2017, Prop. 1: composition adds ρ).

    Attributes:
        orders: the orders α > 1.
        rdp: ρ(α) at each order (upper bounds, ``inf`` allowed).
    """

    orders: FloatArray
    rdp: FloatArray

    def __post_init__(self) -> None:
        a = check_orders(self.orders)
        r = np.asarray(self.rdp, dtype=np.float64)
        if r.shape != a.shape or np.any(np.isnan(r)) or np.any(r < 0):
            raise ValueError(f"rdp must be non-negative numbers, one per order, got {r.tolist()[:5]!r}")
        object.__setattr__(self, "orders", a)
        object.__setattr__(self, "rdp", r)

    def __add__(self, other: RdpCurve) -> RdpCurve:
        if not np.array_equal(self.orders, other.orders):
            raise ValueError("cannot add RDP curves on different orders")
        return RdpCurve(self.orders, _up(self.rdp + other.rdp))

    def epsilon(self, delta: float, *, conversion: Conversion = "improved") -> RdpConversion:
        """ε(δ) upper bound, minimised over the orders.

        * standard (Mironov 2017, Prop. 3): ε = ρ(α) + log(1/δ)/(α−1);
        * improved (Canonne–Kamath–Steinke 2020, Prop. 12; Balle et al. 2020, Thm 21):
          ε = ρ(α) + log(1 − 1/α) − log(δα)/(α−1).

        Args:
            delta: δ in (0, 1).
            conversion: ``"standard"`` or ``"improved"``.
        """
        d = check_open_probability("delta", delta)
        a, r = self.orders, self.rdp
        if conversion == "standard":
            eps = r - math.log(d) / (a - 1.0)  # not log(1/δ): 1/δ overflows for subnormal δ
        elif conversion == "improved":
            eps = r + np.log1p(-1.0 / a) - (math.log(d) + np.log(a)) / (a - 1.0)
        else:
            raise ValueError(f"conversion must be one of ('standard', 'improved'), got {conversion!r}")
        i = int(np.argmin(eps))
        return RdpConversion(max(0.0, float(_up(eps[i : i + 1])[0])), float(a[i]), conversion)

    def delta(self, epsilon: float, *, conversion: Conversion = "improved") -> RdpConversion:
        """δ(ε) upper bound, minimised over the orders (the inverses of :meth:`epsilon`'s formulas):

        * standard: δ = exp((α−1)(ρ(α) − ε));
        * improved: δ = exp((α−1)(ρ(α) − ε + log(1 − 1/α)) − log α).

        Args:
            epsilon: ε ≥ 0.
            conversion: ``"standard"`` or ``"improved"``.
        """
        e = check_nonnegative("epsilon", epsilon)
        a, r = self.orders, self.rdp
        with np.errstate(over="ignore"):  # (α − 1)(ρ − ε) below −1.8e308 is −inf: δ below every double
            if conversion == "standard":
                log_delta = (a - 1.0) * (r - e)
            elif conversion == "improved":
                log_delta = (a - 1.0) * (r - e + np.log1p(-1.0 / a)) - np.log(a)
            else:
                raise ValueError(f"conversion must be one of ('standard', 'improved'), got {conversion!r}")
        i = int(np.argmin(log_delta))
        # log δ below the double range (−inf after overflow, or exp underflowing to 0): the bound
        # exp(log δ) is positive but below every double, so the smallest positive double is its upper end.
        log_up = -math.inf if log_delta[i] == -math.inf else float(_up(log_delta[i : i + 1])[0])
        up = 1.0 if log_up >= 0.0 else max(math.exp(log_up), math.ulp(0.0))  # e^{log δ} ≥ 1 (or overflowing): 1
        return RdpConversion(up, float(a[i]), conversion)


Item = object | tuple[object, int]


def compose(*items: Item, orders: npt.ArrayLike = DEFAULT_ORDERS) -> RdpCurve:
    """The RDP curve of a composition: Σ count·ρ_mechanism(α) (Mironov 2017, Prop. 1).

    Args:
        items: mechanism specifications, or ``(mechanism, count)`` pairs.
        orders: the orders α > 1 (default: dp_accounting's default orders).

    Raises:
        NotImplementedError: as :func:`of_mechanism`.
    """
    a = check_orders(orders)
    total = np.zeros_like(a)
    for item in items:
        if isinstance(item, tuple):
            if len(item) != 2:
                raise ValueError(f"items must be mechanisms or (mechanism, count) pairs, got {item!r}")
            mechanism, count = item
            count = check_int("count", count, minimum=1)
        else:
            mechanism, count = item, 1
        total = total + count * of_mechanism(cast(Mechanism, mechanism), a)  # checked inside
    return RdpCurve(a, _up(total))


def compare(items: Sequence[Item], *, delta: float | None = None, epsilon: float | None = None) -> dict[str, object]:
    """The labelled RDP comparison the CLI prints beside certified brackets (one public call).

    Returns a JSON-ready dict: ``{"method": ..., "orders": ..., "standard": {...}, "improved": {...}}``
    with the converted ε (for ``delta``) or δ (for ``epsilon``) and the optimal order of each
    conversion, or ``{"unsupported": reason}`` when a mechanism has no RDP formula here (e.g. δ > 0).
    """
    if (delta is None) == (epsilon is None):
        raise ValueError("give exactly one of delta or epsilon")
    try:
        curve = compose(*items)
    except NotImplementedError as exc:
        return {"unsupported": str(exc)}
    quantity = "epsilon" if delta is not None else "delta"
    out: dict[str, object] = {
        "method": "RDP accountant (upper bound, not tight; Mironov 2017 / Canonne-Kamath-Steinke 2020)",
        "orders": "dp_accounting default orders (integer orders exact; fractional orders by a certified chord bound)",
    }
    conversions: tuple[Conversion, ...] = ("standard", "improved")
    for conv in conversions:
        res = curve.epsilon(delta, conversion=conv) if delta is not None else curve.delta(float(epsilon or 0.0), conversion=conv)
        out[conv] = {quantity: res.value, "order": res.order}
    return out


__all__ = [
    "DEFAULT_ORDERS",
    "Conversion",
    "RdpConversion",
    "RdpCurve",
    "check_orders",
    "compare",
    "compose",
    "gaussian",
    "laplace",
    "of_mechanism",
    "poisson_subsampled_gaussian",
    "randomized_response",
]

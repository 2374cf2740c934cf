"""Composition and the central limit theorems of f-DP (Dong, Roth & Su §3; group privacy: :mod:`._group`).

* :func:`tensor` — f ⊗ g = T(P1×P2, Q1×Q2) (DRS Def. 3.1, Thm 3.2): closed form for Gaussians
  (G_{μ1} ⊗ G_{μ2} = G_{√(μ1²+μ2²)}, Cor. 3.3), exact product distributions for piecewise-linear f,
  and the scaling rule f ⊗ f_{0,δ} (DRS eq. (12)).
* :func:`clt` and :func:`clt_epsilon_delta` — the Berry–Esseen CLT (DRS Thm 3.4) and the (ε, δ) CLT
  (Thm 3.6). They return a :class:`CLTResult` whose ``mu_estimate`` is an *approximation* (never a
  bound) and whose ``band`` is the theorem's certified bracket of the composed curve.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.integrate import quad
from scipy.special import gammaln, logsumexp, ndtr, ndtri

from optcomp._numerics import (
    EXACT_PRODUCT_MIN,
    FEW_ULPS,
    SPECIAL_FUNCTION_LOG_ERROR,
    Bound,
    FloatArray,
    check_int,
    check_nonnegative,
    check_probability,
    round_down,
    round_up,
)
from optcomp._rounding import log1mexp_array, log_binomial, rounding_error
from optcomp.fdp._gdp import gdp_compose
from optcomp.fdp._tradeoff import (
    GaussianTradeOff,
    PiecewiseLinearTradeOff,
    TradeOff,
    TradeOffBracket,
    from_distributions,
)

__all__ = [
    "BERRY_ESSEEN_CONSTANT",
    "MAX_COMPOSITION_K",
    "MAX_PRODUCT_ATOMS",
    "CLTResult",
    "EpsilonDeltaComposition",
    "Functionals",
    "clt",
    "clt_epsilon_delta",
    "delta_scaled",
    "epsilon_delta_composition",
    "epsilon_dp_functionals",
    "functionals",
    "tensor",
]

#: Constant of the Berry–Esseen bound used in DRS Thm 3.4 (γ = 0.56 ‖κ̄3‖₁ / (‖κ2‖₁ − ‖kl‖₂²)^{3/2}).
BERRY_ESSEEN_CONSTANT: float = 0.56
#: Largest number of atoms an exact product of discrete pairs may have (beyond: use the PLD engine).
MAX_PRODUCT_ATOMS: int = 1 << 20


# ---------------------------------------------------------------------------------------------
# Tensor products.
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _DeltaScaled(TradeOff):
    """f ⊗ f_{0,δ}: (1 − δ) f(α / (1 − δ)) for α ≤ 1 − δ and 0 beyond (DRS eq. (12), Remark 1)."""

    base: TradeOff
    delta: float

    def _evaluate(self, alpha: FloatArray) -> FloatArray:
        s = 1.0 - self.delta
        if s == 0.0:
            return np.zeros_like(alpha)
        inside = alpha <= s
        arg = np.where(inside, np.minimum(alpha / s, 1.0), 1.0)
        return np.where(inside, s * np.asarray(self.base(arg), dtype=np.float64), 0.0)

    @property
    def symmetric(self) -> bool:
        return self.base.symmetric

    def breakpoints(self) -> FloatArray:
        return np.unique(np.concatenate([(1.0 - self.delta) * self.base.breakpoints(), [1.0 - self.delta]]))


def delta_scaled(f: TradeOff, delta: float) -> TradeOff:
    """f ⊗ f_{0,δ} = (1 − δ) f(α/(1 − δ)) on [0, 1 − δ], 0 beyond (DRS eq. (12)); exact.

    Piecewise-linear f stays piecewise linear (knots scaled by 1 − δ).
    """
    d = check_probability("delta", delta)
    if d == 0.0:
        return f
    if isinstance(f, PiecewiseLinearTradeOff) and d < 1.0:
        s = 1.0 - d
        xs = np.concatenate([s * f.alpha, [1.0]])
        ys = np.concatenate([s * f.beta, [0.0]])
        keep = np.r_[np.diff(xs) > 0.0, True]
        return PiecewiseLinearTradeOff(xs[keep], ys[keep], is_symmetric=f.symmetric)
    return _DeltaScaled(f, d)


def _tensor_pl(f: PiecewiseLinearTradeOff, g: PiecewiseLinearTradeOff) -> PiecewiseLinearTradeOff:
    p1, q1 = f.to_distributions()
    p2, q2 = g.to_distributions()
    n = p1.size * p2.size
    if n > MAX_PRODUCT_ATOMS:
        raise ValueError(
            f"tensor product needs {n} atoms, more than MAX_PRODUCT_ATOMS={MAX_PRODUCT_ATOMS}; "
            "use the PLD engine (optcomp.pld) for large compositions"
        )
    p = np.outer(p1, p2).ravel()
    q = np.outer(q1, q2).ravel()
    # Products of exact PMFs sum to 1 up to rounding (n·PROBABILITY_SUM_SLACK_PER_TERM, checked).
    out = from_distributions(p, q)
    return PiecewiseLinearTradeOff(out.alpha, out.beta, is_symmetric=f.symmetric and g.symmetric)


def tensor(*fs: TradeOff) -> TradeOff:
    """f1 ⊗ … ⊗ fn = T(P1×…×Pn, Q1×…×Qn): the tight composition of f_i-DP mechanisms (DRS Thm 3.2).

    Exact in the two closed families: all Gaussian → G_{√Σμ_i²} (Cor. 3.3); all piecewise linear →
    the Neyman–Pearson curve of the product of their discrete pairs (no merging of atoms, so exact up to
    float rounding of the products; limited to ``MAX_PRODUCT_ATOMS``). Mixed or other inputs raise
    ``ValueError``: compose those through :mod:`optcomp.pld`.
    """
    if not fs:
        raise ValueError("tensor needs at least one trade-off function, got none")
    if all(isinstance(f, GaussianTradeOff) for f in fs):
        return GaussianTradeOff(gdp_compose([f.mu for f in fs if isinstance(f, GaussianTradeOff)]))
    pls = [f for f in fs if isinstance(f, PiecewiseLinearTradeOff)]
    if len(pls) == len(fs):
        acc = pls[0]
        for f in pls[1:]:
            acc = _tensor_pl(acc, f)
        return acc
    kinds = sorted({type(f).__name__ for f in fs})
    raise ValueError(
        f"tensor supports all-Gaussian or all-piecewise-linear inputs exactly, got {kinds}; "
        "compose other mechanisms with the PLD engine (optcomp.pld)"
    )


#: Largest k for :func:`epsilon_delta_composition`: its exact curve has k + 2 knots (a few arrays of that
#: length are held at once; beyond this use :mod:`optcomp.optimal` for (ε, δ) or :func:`clt_epsilon_delta`).
MAX_COMPOSITION_K: int = MAX_PRODUCT_ATOMS
#: Smallest knot α kept apart from α = 0: below the smallest normal double, α loses relative precision.
_TINY: float = float(np.finfo(np.float64).tiny)


def _two_product(a: float, b: FloatArray) -> tuple[FloatArray, FloatArray]:
    """a·b = p + err exactly (Dekker's TwoProduct with Veltkamp splitting; no over/underflow assumed).

    Used so that ε_g − ε(k − 2j) keeps full relative accuracy when ε_g is within ulps of a knot of the
    composed curve, where δ' is a tiny multiple of that difference.
    """
    split = 134217729.0  # 2^27 + 1
    ca = split * a
    a_hi = ca - (ca - a)
    a_lo = a - a_hi
    cb = split * b
    b_hi = cb - (cb - b)
    b_lo = b - b_hi
    p = a * b
    err = ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo
    return p, err


def _log_sum_bracket(lo: FloatArray, hi: FloatArray) -> tuple[float, float]:
    """(lower, upper) of log Σ e^{t_j} given lo_j ≤ t_j ≤ hi_j (covers the rounding of the sum itself).

    A float sum of n positive terms has relative error ≤ (n + 2)u, and each exp/log adds a few u; the
    bracket is widened by (n + 4)·FEW_ULPS plus a relative FEW_ULPS of the result.
    """
    n = lo.size
    if n == 0:
        return (-math.inf, -math.inf)
    slack = (n + 4) * FEW_ULPS
    fin_lo = lo[np.isfinite(lo)]
    s_lo = float(logsumexp(fin_lo)) if fin_lo.size else -math.inf
    s_hi = float(logsumexp(hi))
    return (s_lo - slack - FEW_ULPS * abs(s_lo), s_hi + slack + FEW_ULPS * abs(s_hi))


@dataclass(frozen=True, eq=False, kw_only=True)
class EpsilonDeltaComposition(PiecewiseLinearTradeOff):
    """f_{ε,δ}^{⊗k}: the exact k-fold composition of (ε, δ)-DP as a trade-off function (DRS eq. (11)).

    The knots are those of :func:`epsilon_delta_composition`; besides them this value keeps (ε, δ, k), so
    that δ(ε_g) is read in log space from the binomial sum rather than from the rounded knots:
    :meth:`log_delta_bound` / :meth:`delta_bound` certify it in relative terms down to δ ≈ 1e-300 and
    below, and :meth:`delta` returns the certified upper end.
    """

    epsilon_step: float
    delta_step: float
    k: int

    def _log_pure_delta(self, epsilon_g: float) -> tuple[float, float]:
        """log δ'(ε_g) of the pure part f_{ε,0}^{⊗k}, bracketed: log Σ_j max(0, Q_j − e^{ε_g} P_j).

        K ~ Bin(k, p) under P and Bin(k, 1 − p) under Q, p = e^ε/(1 + e^ε), so Q_j/P_j = e^{ε(k − 2j)} and
        log Q_j = log C(k, j) + k log p − jε. Terms with ε(k − 2j) > ε_g are
        Q_j (1 − e^{ε_g − ε(k − 2j)}) (KOV Thm III.3, eq. (6); MV Thm 1.4). Each log term is bracketed:
        ``gammaln`` within SPECIAL_FUNCTION_LOG_ERROR·max(1, |value|), the exponent x = ε_g − ε(k − 2j)
        (product taken exactly by :func:`_two_product`) within FEW_ULPS·(|x| + u·ε|k − 2j|); each end of
        its interval is fed to log1mexp, which is monotone.
        """
        e, kk = self.epsilon_step, self.k
        if e == 0.0 or math.isinf(epsilon_g):
            return (-math.inf, -math.inf)
        if math.isinf(e):
            # Q_0 = 1 − 0·…: the outcome j = 0 has P-mass 0, Q-mass 1 (p = 1): δ' = 1.
            return (0.0, 0.0)
        # j < (k − ε_g/ε)/2 strictly; a margin of one index covers the rounding of the cut.
        ratio = epsilon_g / e
        if ratio >= kk + 1.0:  # no j ≥ 0 has ε(k − 2j) > ε_g (margin of one for the rounding of ratio)
            return (-math.inf, -math.inf)
        cut = min(kk, math.floor(0.5 * (kk - ratio)) + 1)
        j = np.arange(cut + 1, dtype=np.float64)
        log_p = -math.log1p(math.exp(-e))
        g_k = math.lgamma(kk + 1.0)
        g_j = gammaln(j + 1.0)
        g_kj = gammaln(kk - j + 1.0)
        log_q = (g_k - g_j - g_kj) + kk * log_p - j * e
        err_q = SPECIAL_FUNCTION_LOG_ERROR * (
            max(1.0, abs(g_k)) + np.maximum(1.0, np.abs(g_j)) + np.maximum(1.0, np.abs(g_kj))
            + abs(kk * log_p) + j * e + 4.0
        )
        m = kk - 2.0 * j  # exact integers (k ≤ MAX_COMPOSITION_K)
        prod, prod_err = _two_product(e, m)  # e·m = prod + prod_err exactly
        x = (epsilon_g - prod) - prod_err
        # Where ε_g/2 ≤ prod ≤ 2ε_g, ε_g − prod is exact (Sterbenz) and so is prod_err (Dekker, above
        # EXACT_PRODUCT_MIN): x is one correctly rounded subtraction, within u·|x| (x = 0 exactly at a knot).
        # Elsewhere the first subtraction adds at most u·|prod_err| ≤ u²·ε|k − 2j|.
        exact_first = (prod >= EXACT_PRODUCT_MIN) & (0.5 * prod <= epsilon_g) & (epsilon_g <= 2.0 * prod)
        err_x = FEW_ULPS * (np.abs(x) + np.where(exact_first, 0.0, rounding_error(1, e * np.abs(m))))
        x_lo = x - err_x  # most negative: the largest term
        x_hi = np.minimum(x + err_x, 0.0)
        keep = x_lo < 0.0
        with np.errstate(divide="ignore"):
            t_hi = log1mexp_array(x_lo[keep])
            t_lo = log1mexp_array(x_hi[keep])
        t_hi = t_hi + FEW_ULPS * (1.0 + np.abs(t_hi))
        t_lo = t_lo - FEW_ULPS * (1.0 + np.abs(t_lo))
        lo = log_q[keep] - err_q[keep] + t_lo
        hi = log_q[keep] + err_q[keep] + t_hi
        return _log_sum_bracket(lo, hi)

    def log_delta_bound(self, epsilon: float) -> tuple[float, float]:
        """(lower, upper) of log δ(ε) for f_{ε0,δ0}^{⊗k}: δ = Δ + (1 − Δ)δ', Δ = 1 − (1 − δ0)^k.

        δ(ε) = 1 − (1 − δ0)^k (1 − δ'(ε)) (DRS eq. (11): f ⊗ f_{0,Δ} has δ = 1 − (1 − Δ)(1 − δ_f));
        equivalently KOV Thm III.3 / MV Thm 1.4. Certified: every rounding is bracketed (see
        :meth:`_log_pure_delta`), so exp of the ends brackets δ in relative terms, also where δ
        underflows double precision.
        """
        eps = check_nonnegative("epsilon", epsilon, allow_inf=True)
        d0, kk = self.delta_step, self.k
        if d0 >= 1.0:
            return (0.0, 0.0)
        y = kk * math.log1p(-d0)  # log (1 − Δ) ≤ 0
        y_err = FEW_ULPS * abs(y)
        if d0 > 0.0:
            big = -math.expm1(y)  # Δ > 0; its relative error is e^y·y_err/Δ (from y) plus a few u
            log_big = math.log(big)
            log_err = 2.0 * (math.exp(y) * y_err / big + FEW_ULPS) + FEW_ULPS * (1.0 + abs(log_big))
            lb_lo, lb_hi = log_big - log_err, log_big + log_err
        else:
            lb_lo = lb_hi = -math.inf
        lp_lo, lp_hi = self._log_pure_delta(eps)
        lo = float(np.logaddexp(lb_lo, y - y_err + lp_lo)) if lp_lo > -math.inf or lb_lo > -math.inf else -math.inf
        hi = float(np.logaddexp(lb_hi, min(0.0, y + y_err) + lp_hi))
        lo -= FEW_ULPS * (1.0 + abs(lo)) if math.isfinite(lo) else 0.0
        hi += FEW_ULPS * (1.0 + abs(hi)) if math.isfinite(hi) else 0.0
        return (lo, min(hi, 0.0))

    def delta_bound(self, epsilon: float) -> Bound:
        """Certified bracket of δ(ε) (see :meth:`log_delta_bound`), each end rounded to its safe side."""
        lo, hi = self.log_delta_bound(epsilon)
        return Bound(max(0.0, round_down(math.exp(lo))), min(1.0, round_up(math.exp(hi))))

    def delta(self, epsilon: npt.ArrayLike) -> float | FloatArray:
        """The certified upper end of δ(ε) (never below the truth; relative error ≲ 1e-9 at k = 10⁶).

        Read in log space from the binomial sum (:meth:`delta_bound`), not from the rounded knots, so it
        keeps relative accuracy down to the smallest doubles.
        """
        eps = np.asarray(epsilon, dtype=np.float64)
        bad = np.isnan(eps) | (eps < 0.0)
        if np.any(bad):
            raise ValueError(f"epsilon must be in [0, inf], got {float(eps[bad].flat[0])!r}")
        flat = np.atleast_1d(eps).ravel()
        out = np.array([self.delta_bound(float(v)).upper for v in flat], dtype=np.float64).reshape(np.shape(eps))
        if np.ndim(eps) == 0:
            return float(out.reshape(-1)[0])
        return out


def epsilon_delta_composition(epsilon: float, delta: float, k: int) -> EpsilonDeltaComposition:
    """f_{ε,δ}^{⊗k}: the optimal k-fold composition of (ε, δ)-DP as a trade-off function, for any k.

    By DRS eq. (11), f_{ε,δ}^{⊗k} = f_{ε,0}^{⊗k} ⊗ f_{0, 1−(1−δ)^k}; f_{ε,0} is T(P, Q) of randomised
    response with P = (e^ε, 1)/(1+e^ε), so its k-fold power is the Neyman–Pearson curve of
    Bin(k, e^ε/(1+e^ε)) against Bin(k, 1/(1+e^ε)) (the region of KOV Thm III.3). Rejecting K ≤ m − 1
    gives the knots (α_m, β_m) = (1 − Δ)(P(K ≤ m − 1), Q(K ≥ m)), m = 0 … k + 1, plus (1, 0); each tail is
    a log-space cumulative sum of log-binomial masses (``logaddexp.accumulate``), so every knot keeps
    relative accuracy (≈ u·log k! — 1e-9 at k = 10⁶) however far apart the binomials are.

    Exact at every knot up to that rounding, with one labelled exception: knots with
    0 < α_m < 2.2e-308 (the smallest normal double) are not representable, so on (0, α_r), α_r the first
    representable knot, the curve is the chord from (0, (1 − δ)^k) to that knot (above the truth there;
    f(0) = (1 − δ)^k itself is exact). The δ(ε) readouts (:meth:`EpsilonDeltaComposition.delta_bound`,
    :func:`optcomp.fdp.delta_at`) do not use the knots: they are certified in log space. O(k).

    Raises:
        ValueError: for ε < 0, δ ∉ [0, 1], or k outside [1, ``MAX_COMPOSITION_K``].
    """
    e = check_nonnegative("epsilon", epsilon, allow_inf=True)
    d = check_probability("delta", delta)
    if isinstance(k, numbers.Integral) and not isinstance(k, bool) and k > MAX_COMPOSITION_K:
        raise ValueError(
            f"k must be an integer in [1, {MAX_COMPOSITION_K}] (the exact curve has k + 2 knots; for larger k "
            f"use optcomp.optimal for (epsilon, delta) readouts or fdp.clt_epsilon_delta), got {k!r}"
        )
    kk = check_int("k", k)
    s = math.exp(kk * math.log1p(-d)) if d < 1.0 else 0.0  # (1 − δ)^k = 1 − Δ
    if s == 0.0 or math.isinf(e):
        # no privacy left: f = 0 (ε = ∞ admits the test with α = β = 0; Δ = 1 likewise)
        return EpsilonDeltaComposition(
            alpha=np.array([0.0, 1.0]), beta=np.array([0.0, 0.0]), is_symmetric=True, epsilon_step=e, delta_step=d, k=kk
        )
    j = np.arange(kk + 1, dtype=np.float64)
    logc = log_binomial(kk, j)
    log_p = -math.log1p(math.exp(-e))  # log of e^ε/(1+e^ε)
    log_pm = logc + kk * log_p - (kk - j) * e  # log P(K = j)
    log_qm = logc + kk * log_p - j * e  # log Q(K = j)
    log_cdf_p = np.logaddexp.accumulate(log_pm)  # log P(K ≤ j)
    log_sf_q = np.logaddexp.accumulate(log_qm[::-1])[::-1]  # log Q(K ≥ j)
    alpha = np.concatenate([[0.0], np.minimum(np.exp(log_cdf_p), 1.0)])
    beta = np.concatenate([np.minimum(np.exp(log_sf_q), 1.0), [0.0]])
    alpha[-1], beta[0] = 1.0, 1.0
    # Drop knots that are not representable (0 < α < tiny), then scale by 1 − Δ and end at (1, 0).
    keep = np.r_[True, alpha[1:] >= _TINY]
    alpha = np.concatenate([s * alpha[keep], [1.0]])
    beta = np.concatenate([s * np.minimum.accumulate(beta[keep]), [0.0]])
    # Equal α (rounding of tiny masses, or s·α_{k+1} = 1): keep the lowest β of each α (the safe side).
    ua, first = np.unique(alpha, return_index=True)
    last = np.r_[first[1:] - 1, alpha.size - 1]
    return EpsilonDeltaComposition(alpha=ua, beta=beta[last], is_symmetric=True, epsilon_step=e, delta_step=d, k=kk)


# ---------------------------------------------------------------------------------------------
# CLT functionals.
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Functionals:
    """The moment functionals of a symmetric trade-off function with f(0) = 1 (DRS §3.2).

    With L the privacy loss log(dP/dQ) under P (|f'(x)| = e^{−L} at the x-quantile):
    kl = −∫₀¹ log|f'| = E L, kappa2 = ∫ log²|f'| = E L², kappa3 = ∫|log|f'||³ = E|L|³,
    kappa3_bar = ∫|log|f'| + kl|³ = E|L − E L|³.
    """

    kl: float
    kappa2: float
    kappa3: float
    kappa3_bar: float


def epsilon_dp_functionals(epsilon: float) -> Functionals:
    """Closed forms for f_{ε,0} (DRS §3.3): kl = ε(e^ε − 1)/(e^ε + 1), κ2 = ε², κ3 = ε³,
    κ̄3 = 8ε³ p(1 − p)((1 − p)² + p²) with p = e^ε/(1 + e^ε) (L = ±ε w.p. p, 1 − p; L − kl = 2ε(1 − p) or
    −2εp).
    """
    e = check_nonnegative("epsilon", epsilon)
    p = 1.0 / (1.0 + math.exp(-e))
    kl = e * math.tanh(e / 2.0)
    kbar = 8.0 * e**3 * p * (1.0 - p) * ((1.0 - p) ** 2 + p**2)
    return Functionals(kl=kl, kappa2=e * e, kappa3=e**3, kappa3_bar=kbar)


def _gaussian_functionals(mu: float) -> Functionals:
    # L ~ N(μ²/2, μ²) under P.
    m, s = mu * mu / 2.0, mu
    if mu == 0.0:
        return Functionals(0.0, 0.0, 0.0, 0.0)

    def integrand(z: float) -> float:
        return abs(m + s * z) ** 3 * math.exp(-z * z / 2.0) / math.sqrt(2.0 * math.pi)

    k3, _ = quad(integrand, -math.inf, math.inf, points=None)
    return Functionals(kl=m, kappa2=s * s + m * m, kappa3=float(k3), kappa3_bar=s**3 * 2.0 * math.sqrt(2.0 / math.pi))


def functionals(f: TradeOff) -> Functionals:
    """kl, κ2, κ3, κ̄3 of f (DRS §3.2): closed form for G_μ, exact sums over atoms for piecewise-linear f.

    A piecewise-linear f is T(P, Q) for the discrete pair of :meth:`PiecewiseLinearTradeOff.to_distributions`,
    so kl = Σ p log(p/q) etc. f(0) < 1 (an atom with p = 0) or a flat tail (q = 0) makes the functionals
    infinite, and they are reported as ``inf`` (DRS Thm 3.4 then does not apply).
    """
    if isinstance(f, GaussianTradeOff):
        return _gaussian_functionals(f.mu)
    if isinstance(f, PiecewiseLinearTradeOff):
        p, q = f.to_distributions()
        keep = (p > 0.0) | (q > 0.0)
        p, q = p[keep], q[keep]
        if np.any((q == 0.0) & (p > 0.0)) or np.any((p == 0.0) & (q > 0.0)):
            return Functionals(math.inf, math.inf, math.inf, math.inf)
        loss = np.log(p) - np.log(q)
        kl = float(np.sum(p * loss))
        return Functionals(
            kl=kl,
            kappa2=float(np.sum(p * loss**2)),
            kappa3=float(np.sum(p * np.abs(loss) ** 3)),
            kappa3_bar=float(np.sum(p * np.abs(loss - kl) ** 3)),
        )
    raise ValueError(
        f"functionals are available for GaussianTradeOff and PiecewiseLinearTradeOff, got {type(f).__name__}"
    )


# ---------------------------------------------------------------------------------------------
# The CLT with its Berry–Esseen band.
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _ShiftedGaussian(TradeOff):
    """One side of the Berry–Esseen band, with G_μ extended by 1 on (−∞, 0) and 0 on (1, ∞) (DRS fn. 16).

    side = −1: max{0, G_μ(α + γ) − γ} (lower); side = +1: min{1 − α, G_μ(α − γ) + γ} (upper). Not convex
    in general; these are certified pointwise bounds, not trade-off functions of a pair.
    """

    mu: float
    gamma: float
    side: int

    def _evaluate(self, alpha: FloatArray) -> FloatArray:
        x = alpha - self.side * self.gamma
        xc = np.clip(x, 0.0, 1.0)
        with np.errstate(invalid="ignore"):
            g = ndtr(-ndtri(xc) - self.mu)
        g = np.where(x < 0.0, 1.0, np.where(x > 1.0, 0.0, g))
        if self.side < 0:
            return np.maximum(g - self.gamma, 0.0)
        return np.minimum(g + self.gamma, 1.0 - alpha)


@dataclass(frozen=True)
class CLTResult:
    """Outcome of a CLT for composition (DRS Thms 3.4/3.6).

    Attributes:
        mu_estimate: μ = 2‖kl‖₁/√(‖κ2‖₁ − ‖kl‖₂²). An APPROXIMATION: G_μ (or ``estimate``) is not a
            guarantee and may be above the true composed curve.
        gamma: the Berry–Esseen width γ = 0.56‖κ̄3‖₁/(‖κ2‖₁ − ‖kl‖₂²)^{3/2} (rounded up).
        delta: the δ part Δ = 1 − Π(1 − δ_i) split off by DRS eq. (11) (0 for Thm 3.4).
        estimate: the approximate curve G_μ ⊗ f_{0,Δ} (approximation, not a bound).
        band: certified bracket of the exact composed curve: max{0, G_μ(α+γ) − γ} ≤ f(α) ≤
            min{1 − α, G_μ(α−γ) + γ}, each side scaled by f_{0,Δ}; μ is rounded to the safe side of each
            end. Trivial where γ ≥ 1/2.
    """

    mu_estimate: float
    gamma: float
    delta: float
    estimate: TradeOff
    band: TradeOffBracket


def _clt_from(fun: Sequence[Functionals], delta: float) -> CLTResult:
    kl1 = math.fsum(x.kl for x in fun)
    k2 = math.fsum(x.kappa2 for x in fun)
    kl2 = math.fsum(x.kl**2 for x in fun)
    k3b = math.fsum(x.kappa3_bar for x in fun)
    var = k2 - kl2
    if not math.isfinite(var) or not math.isfinite(k3b):
        raise ValueError("the CLT needs finite functionals (f(0) = 1 and no flat tail); got infinite ones")
    if var <= 0.0:
        raise ValueError(f"the CLT needs ‖κ2‖₁ − ‖kl‖₂² > 0 (some privacy loss), got {var!r}")
    mu = 2.0 * kl1 / math.sqrt(var)
    gamma = round_up(BERRY_ESSEEN_CONSTANT * k3b / var**1.5)
    lower: TradeOff = _ShiftedGaussian(round_up(mu), gamma, -1)
    upper: TradeOff = _ShiftedGaussian(round_down(mu), gamma, +1)
    estimate: TradeOff = GaussianTradeOff(mu)
    if delta > 0.0:
        # f ⊗ f_{0,Δ} decreases in Δ: round Δ up for the lower side and down for the upper side.
        lower = delta_scaled(lower, min(1.0, round_up(delta)))
        upper = delta_scaled(upper, round_down(delta))
        estimate = delta_scaled(estimate, delta)
    return CLTResult(mu_estimate=mu, gamma=gamma, delta=delta, estimate=estimate, band=TradeOffBracket(lower, upper))


def clt(fs: Sequence[TradeOff]) -> CLTResult:
    """Berry–Esseen CLT for f1 ⊗ … ⊗ fn (DRS Thm 3.4), for symmetric f_i with f_i(0) = 1.

    μ = 2‖kl‖₁/√(‖κ2‖₁ − ‖kl‖₂²), γ = 0.56‖κ̄3‖₁/(‖κ2‖₁ − ‖kl‖₂²)^{3/2}, and for all α
    G_μ(α + γ) − γ ≤ (f1 ⊗ … ⊗ fn)(α) ≤ G_μ(α − γ) + γ, with G_μ extended by 1 left of 0 and by 0 right
    of 1 (DRS footnote 16). ``mu_estimate`` is an approximation; ``band`` is the certified statement.
    """
    if not fs:
        raise ValueError("clt needs at least one trade-off function, got none")
    return _clt_from([functionals(f) for f in fs], 0.0)


def clt_epsilon_delta(epsilons: npt.ArrayLike, deltas: npt.ArrayLike) -> CLTResult:
    """CLT for the composition of (ε_i, δ_i)-DP mechanisms (DRS §3.3, Thm 3.6 and eq. (11)).

    f_{ε,δ} = f_{ε,0} ⊗ f_{0,δ}, so ⊗_i f_{ε_i,δ_i} = (⊗_i f_{ε_i,0}) ⊗ f_{0,Δ} with Δ = 1 − Π(1 − δ_i).
    The first factor gets the Berry–Esseen band of Thm 3.4 with the closed-form functionals of f_{ε,0};
    tensoring with f_{0,Δ} is monotone, so the scaled band is certified. As n → ∞ with Σε_i² → μ²,
    max ε_i → 0, Σδ_i → δ, max δ_i → 0, the composition tends to G_μ ⊗ f_{0,1−e^{−δ}} (Thm 3.6).
    """
    eps = np.asarray(epsilons, dtype=np.float64).ravel()
    dl = np.asarray(deltas, dtype=np.float64).ravel()
    if eps.size != dl.size or eps.size == 0:
        raise ValueError(f"epsilons and deltas must be non-empty and of equal length, got {eps.size}, {dl.size}")
    fun = [epsilon_dp_functionals(check_nonnegative(f"epsilons[{i}]", float(e))) for i, e in enumerate(eps)]
    dls = [check_probability(f"deltas[{i}]", float(d)) for i, d in enumerate(dl)]
    log_keep = math.fsum(math.log1p(-d) if d < 1.0 else -math.inf for d in dls)
    big_delta = -math.expm1(log_keep)
    return _clt_from(fun, big_delta)

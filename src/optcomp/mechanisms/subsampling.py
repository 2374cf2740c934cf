"""Privacy amplification by subsampling, exactly, on any privacy-loss law.

**Poisson subsampling, add/remove relation.** Each record enters the batch independently with
probability q. For the remove-direction pair (P, Q) = (M(D), M(D')) of the base mechanism, the
subsampled pair is (qP + (1−q)Q, Q), and the add direction is the swap (Q, qP + (1−q)Q)
(Balle–Barthe–Gaboardi, NeurIPS 2018; Zhu–Dong–Wang, AISTATS 2022: the tight dominating pair).
With L₀ = ln(dP/dQ) the new loss is the monotone transform

    L = g(L₀) = ln(1 − q + q·e^{L₀}) = log1p(q·expm1(L₀)),   g(−∞) = ln(1 − q),

and its law under the mixture is q·(P-law of L₀) + (1−q)·(Q-law of L₀), pushed through g; under Q it
is the Q-law of L₀ pushed through g. Tails are evaluated at the inverse image
g⁻¹(x) = ln(1 + (eˣ − 1)/q) = ln((1−q)/q) + ln(expm1(x − ln(1−q))) for x > ln(1 − q).
Mass P puts where Q has none scales by q (the mixture has q·p_inf there); mass Q puts where P has
none becomes the finite atom L = ln(1 − q), of mixture mass (1−q)·q_neg_inf.

**Sampling without replacement, substitution relation.** A batch of fixed size m = q·n; neighbours
differ by replacing one record. If the base pair (P, Q) is symmetric (T(P, Q) = T(Q, P)) and dominates
the base mechanism under substitution, then by advanced joint convexity (Balle–Barthe–Gaboardi 2018)
δ_sub(ε') ≤ q·δ_{P||Q}(ε) = δ_{qP+(1−q)Q || Q}(ε') for every ε' = ln(1 + q(e^ε − 1))
≥ 0, in both directions. The tight law with exactly these hockey-stick curves for ε' ≥ 0, which then
dominates for all ε' by the identity H_α(A||B) = 1 − α + α·H_{1/α}(B||A), is the symmetrization of the
Poisson remove law R: keep R on L > 0, mirror it onto L < 0 (P-mass at −ℓ equals R's Q-mass at +ℓ; Q-mass
at −ℓ equals R's P-mass at +ℓ; q_neg_inf = R.p_inf) and put the remaining mass on an atom at L = 0.
Its trade-off function is Dong–Roth–Su's C_q(f) = min{f_q, f_q⁻¹}** (Thm 4.2, ``shared/MATH.md``).
The bound is attained, e.g. when all other records equal the replaced one (then the batch without
the replaced slot is the same under D and D'): the subsampled pair *is* (qP + (1−q)Q, Q) or its swap.
Asymmetric base laws are refused (``NotImplementedError``): the tight curve there is the pointwise
maximum of two curves, which is not the law of one pair.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import KW_ONLY, dataclass
from typing import ClassVar

import numpy as np

from optcomp._numerics import SAMPLING_RATE, Domain, FloatArray, GridTooLargeError, check_sampling_rate
from optcomp._rounding import log_expm1
from optcomp.mechanisms._dispatch import LawPair, check_mechanism, is_symmetric, privacy_loss_laws
from optcomp.mechanisms._group import MAX_POISSON_GROUP, NoGroupLawError, group_mechanism
from optcomp.mechanisms._law import ContinuousLoss, PrivacyLossLaw, log_tails
from optcomp.mechanisms._spec import Mechanism, Neighbouring, combined_relation, validate_parameters
from optcomp.mechanisms._tails import as_array, log_diff_exp
from optcomp.mechanisms.gaussian import Gaussian
from optcomp.mechanisms.mixture import check_user_level_mean, user_level_mixture


def _check_base(mechanism: object, relation: Neighbouring, wrapper: str) -> None:
    """The wrapped ``mechanism`` must be a specification that fixes no relation or ``relation``."""
    base = check_mechanism("mechanism", mechanism)
    combined_relation(
        relation, base.neighbouring, what=f"{wrapper} and its mechanism {type(base).__name__}"
    )


def _forward(losses: FloatArray, q: float) -> FloatArray:
    """g(ℓ) = log1p(q·expm1(ℓ)) = ln(1 − q + q·e^ℓ), elementwise; safe for large ℓ."""
    out = np.empty_like(losses)
    big = losses > 700.0  # expm1 would overflow
    out[~big] = np.log1p(q * np.expm1(losses[~big]))
    # ln(q e^ℓ + 1 − q) = ℓ + ln q + log1p((1 − q)/q · e^{−ℓ}), no overflow for huge ℓ.
    odds = (1.0 - q) / q
    if math.isinf(odds):  # subnormal q: the same quantity with the odds kept in log space
        out[big] = losses[big] + math.log(q) + np.log1p(np.exp(math.log1p(-q) - math.log(q) - losses[big]))
    else:
        out[big] = losses[big] + math.log(q) + np.log1p(odds * np.exp(-losses[big]))
    return out


def _inverse(x: FloatArray, q: float) -> FloatArray:
    """g⁻¹(x) = ln(1 + (eˣ − 1)/q), elementwise; −inf for x ≤ ln(1 − q) (q < 1).

    Three branches keep full relative accuracy: log1p(expm1(x)/q) where (eˣ − 1)/q > −1/2;
    ln((1−q)/q) + ln(expm1(x − ln(1−q))) near the lower end ln(1 − q); x − ln q + log1p(−(1−q)e^{−x})
    for x > 1 (no overflow).
    """
    log_1mq = math.log1p(-q)
    with np.errstate(over="ignore"):  # overflow (subnormal q) is handled below
        ratio = np.expm1(np.minimum(x, 1.0)) / q
    out = np.empty_like(x)
    mid = (ratio > -0.5) & (x <= 1.0)
    low = (ratio <= -0.5) & (x <= 1.0)
    big = x > 1.0
    out[mid] = np.log1p(ratio[mid])
    over = mid & np.isinf(ratio)  # (eˣ − 1)/q overflows only for a subnormal q: ln r + log1p(1/r), r = (eˣ − 1)/q
    if np.any(over):
        em1 = np.expm1(x[over])
        out[over] = np.log(em1) - math.log(q) + np.log1p(q / em1)
    with np.errstate(divide="ignore"):
        out[low] = log_1mq - math.log(q) + log_expm1(np.maximum(x[low] - log_1mq, 0.0))
    out[big] = x[big] - math.log(q) + np.log1p(-(1.0 - q) * np.exp(-x[big]))
    return out


@dataclass(frozen=True, slots=True)
class PoissonSubsampledLoss:
    """Continuous part of the Poisson-subsampled law: ``base`` pushed through g (module docstring)."""

    base: ContinuousLoss
    q: float

    @property
    def lower(self) -> float:
        return float(_forward(np.array([self.base.lower]), self.q)[0])

    @property
    def upper(self) -> float:
        return float(_forward(np.array([self.base.upper]), self.q)[0])

    def _y(self, x: FloatArray) -> FloatArray:
        return _inverse(as_array(x).astype(np.float64, copy=True).reshape(-1), self.q).reshape(np.shape(x))

    def p_logsf(self, x: FloatArray) -> FloatArray:
        """log[q·P(L₀ > y) + (1−q)·Q(L₀ > y)], y = g⁻¹(x)."""
        y = self._y(x)
        mixed = np.logaddexp(
            math.log(self.q) + self.base.p_logsf(y), math.log1p(-self.q) + self.base.q_logsf(y)
        )
        return np.minimum(mixed, 0.0)  # a log-probability: only rounding above 0 is removed

    def p_logcdf(self, x: FloatArray) -> FloatArray:
        """log[q·P(L₀ ≤ y) + (1−q)·Q(L₀ ≤ y)], y = g⁻¹(x)."""
        y = self._y(x)
        mixed = np.logaddexp(
            math.log(self.q) + self.base.p_logcdf(y), math.log1p(-self.q) + self.base.q_logcdf(y)
        )
        return np.minimum(mixed, 0.0)  # a log-probability: only rounding above 0 is removed

    def q_logsf(self, x: FloatArray) -> FloatArray:
        """log Q(L₀ > g⁻¹(x))."""
        return np.asarray(self.base.q_logsf(self._y(x)), dtype=np.float64)

    def log_tails(self, x: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        """(p_logcdf, p_logsf, q_logcdf, q_logsf) at ``x``, bit for bit the four methods' values, with one
        inverse transform y = g⁻¹(x) and the base's four tails at y (six base tails and four inverses before)."""
        y = self._y(x)
        b_pc, b_ps, b_qc, b_qs = log_tails(self.base, y)
        lq, l1q = math.log(self.q), math.log1p(-self.q)
        p_cdf = np.minimum(np.logaddexp(lq + b_pc, l1q + b_qc), 0.0)
        p_sf = np.minimum(np.logaddexp(lq + b_ps, l1q + b_qs), 0.0)
        return p_cdf, p_sf, np.asarray(b_qc, dtype=np.float64), np.asarray(b_qs, dtype=np.float64)

    def q_logcdf(self, x: FloatArray) -> FloatArray:
        """log Q(L₀ ≤ g⁻¹(x))."""
        return np.asarray(self.base.q_logcdf(self._y(x)), dtype=np.float64)


def poisson_subsampled_law(law: PrivacyLossLaw, sampling_rate: float) -> PrivacyLossLaw:
    """The law of the pair (qP + (1−q)Q, Q) from the law of (P, Q) (module docstring; q = 1: unchanged).

    Args:
        law: law of L₀ = ln(dP/dQ) of the base pair.
        sampling_rate: q in (0, 1].

    Returns:
        The exact law of L = ln(1 − q + q·e^{L₀}) under the mixture and under Q.
    """
    q = check_sampling_rate("sampling_rate", sampling_rate)
    if q == 1.0:
        return law
    losses = _forward(law.atom_losses.copy(), q)
    atom_p = q * law.atom_p + (1.0 - q) * law.atom_q
    atom_q = law.atom_q.copy()
    if law.q_neg_inf > 0:
        losses = np.append(losses, math.log1p(-q))
        atom_p = np.append(atom_p, (1.0 - q) * law.q_neg_inf)
        atom_q = np.append(atom_q, law.q_neg_inf)
    continuous = None if law.continuous is None else PoissonSubsampledLoss(law.continuous, q)
    return PrivacyLossLaw(
        atom_losses=losses,
        atom_p=atom_p,
        atom_q=atom_q,
        p_inf=q * law.p_inf,
        q_neg_inf=0.0,
        continuous=continuous,
    )


@dataclass(frozen=True, slots=True)
class PoissonSubsampled:
    """``mechanism`` run on a Poisson subsample (each record kept independently w.p. ``sampling_rate``).

    ``PoissonSubsampled(mechanism, *, sampling_rate)``. Neighbouring relation: fixed to add/remove one
    record (a base that fixes substitution is refused). Remove law: (qP + (1−q)Q, Q) of the base remove
    pair; add law: its swap (module docstring). DP-SGD is
    ``PoissonSubsampled(Gaussian(sigma), sampling_rate=q)``.

    Attributes:
        mechanism: the base mechanism specification (its remove-direction law is used).
        sampling_rate: q in (0, 1].
    """

    mechanism: Mechanism
    _: KW_ONLY
    sampling_rate: float
    neighbouring: ClassVar[Neighbouring | None] = "add_remove"
    domains: ClassVar[Mapping[str, Domain]] = {"sampling_rate": SAMPLING_RATE}

    def __post_init__(self) -> None:
        _check_base(self.mechanism, "add_remove", type(self).__name__)
        validate_parameters(self)


@privacy_loss_laws.register
def _poisson_laws(mechanism: PoissonSubsampled) -> LawPair:
    base_remove, _ = privacy_loss_laws(mechanism.mechanism)
    remove = poisson_subsampled_law(base_remove, mechanism.sampling_rate)
    return (remove, remove.swapped())


@group_mechanism.register
def _poisson_group(mechanism: PoissonSubsampled, g: int) -> Mechanism:
    """A Gaussian base: Σⱼ Bin(g, q)(j)·N(jΔ, σ²) vs N(0, σ²), the user-level pair with g examples
    (:func:`~optcomp.mechanisms.user_level_mixture`; proof in :mod:`optcomp.mechanisms._group`).
    Other bases are refused: the aligned-shift argument is the Gaussian's."""
    base = mechanism.mechanism
    if type(base) is not Gaussian:
        raise NoGroupLawError(
            f"PoissonSubsampled({type(base).__name__}) has no exact group-privacy law (only a Gaussian base "
            "has one: the group's count in the batch is Bin(g, q) and aligned Gaussian shifts are the worst case)"
        )
    if g > MAX_POISSON_GROUP:
        raise GridTooLargeError(
            f"g must be at most {MAX_POISSON_GROUP} for PoissonSubsampled(Gaussian) (its group pair is a mixture "
            f"of g + 1 Gaussians), got {g}"
        )
    check_user_level_mean(base.sigma / base.sensitivity, mechanism.sampling_rate, 1, g)
    return user_level_mixture(base.sigma, mechanism.sampling_rate, g, sensitivity=base.sensitivity)


@dataclass(frozen=True, slots=True)
class SymmetrizedLoss:
    """Continuous part of the symmetrization S of R = Poisson(``base``, ``q``): R on L > 0, mirrored.

    S_P(L ≤ x) = R_Q(L ≥ −x) and S_Q(L ≤ x) = R_P(L ≥ −x) for x < 0; S = R on (0, ∞). The values
    that add an interval mass to a total, e.g. S_P(L ≤ x) = R_Q(L > 0) + R_P(0 < L ≤ x) for x ≥ 0,
    take R(0 < L ≤ t) from the symmetric ``base`` B (y = g⁻¹(t) ≥ 0):

        R_P(0 < L ≤ t) = q·[B_P(L₀ ≤ y) − B_P(L₀ ≤ 0)] + (1−q)·[B_Q(L₀ > 0) − B_Q(L₀ > y)],
        R_Q(0 < L ≤ t) = B_Q(L₀ > 0) − B_Q(L₀ > y).

    Each difference is taken on the side whose larger term, B_P(L₀ ≤ y) = B_Q(L₀ > 0) + B_P(0 < L₀ ≤ y)
    or B_Q(L₀ > 0), is at most the total it is added to, so the result keeps full relative accuracy
    even when R's mass sits at both ends of its support (subsampled Laplace).
    """

    base: ContinuousLoss
    q: float

    @property
    def _r(self) -> ContinuousLoss:
        return self.base if self.q == 1.0 else PoissonSubsampledLoss(self.base, self.q)

    @property
    def lower(self) -> float:
        return -self._r.upper

    @property
    def upper(self) -> float:
        return self._r.upper

    def _totals(self) -> tuple[float, float]:
        zero = np.zeros(1)
        r = self._r
        return float(r.p_logsf(zero)[0]), float(r.q_logsf(zero)[0])

    def _positive(self, t: FloatArray) -> tuple[FloatArray, FloatArray]:
        """log R_P(0 < L ≤ t) and log R_Q(0 < L ≤ t) for t ≥ 0 (class docstring)."""
        y = t if self.q == 1.0 else _inverse(t, self.q)
        zero = np.zeros(1)
        b = self.base
        bp = log_diff_exp(b.p_logcdf(y), b.p_logcdf(zero))
        bq = log_diff_exp(b.q_logsf(zero), b.q_logsf(y))
        if self.q == 1.0:
            return bp, bq
        rp = np.logaddexp(math.log(self.q) + bp, math.log1p(-self.q) + bq)
        return np.asarray(rp, dtype=np.float64), bq

    def _split(
        self,
        x: FloatArray,
        positive: Callable[[FloatArray], FloatArray],
        negative: Callable[[FloatArray], FloatArray],
    ) -> FloatArray:
        x = as_array(x)
        flat = x.reshape(-1)
        out = np.empty_like(flat)
        pos = flat >= 0
        out[pos] = positive(flat[pos])
        out[~pos] = negative(flat[~pos])
        return out.reshape(x.shape)

    def p_logsf(self, x: FloatArray) -> FloatArray:
        """x ≥ 0: R_P(L > x); x < 0: R_P(L > 0) + R_Q(0 < L < −x)."""
        log_p0, _ = self._totals()
        return self._split(x, self._r.p_logsf, lambda y: np.logaddexp(log_p0, self._positive(-y)[1]))

    def p_logcdf(self, x: FloatArray) -> FloatArray:
        """x < 0: R_Q(L ≥ −x); x ≥ 0: R_Q(L > 0) + R_P(0 < L ≤ x)."""
        _, log_q0 = self._totals()
        return self._split(
            x, lambda y: np.logaddexp(log_q0, self._positive(y)[0]), lambda y: self._r.q_logsf(-y)
        )

    def q_logsf(self, x: FloatArray) -> FloatArray:
        """x ≥ 0: R_Q(L > x); x < 0: R_Q(L > 0) + R_P(0 < L < −x)."""
        _, log_q0 = self._totals()
        return self._split(x, self._r.q_logsf, lambda y: np.logaddexp(log_q0, self._positive(-y)[0]))

    def q_logcdf(self, x: FloatArray) -> FloatArray:
        """x < 0: R_P(L ≥ −x); x ≥ 0: R_P(L > 0) + R_Q(0 < L ≤ x)."""
        log_p0, _ = self._totals()
        return self._split(
            x, lambda y: np.logaddexp(log_p0, self._positive(y)[1]), lambda y: self._r.p_logsf(-y)
        )


def symmetrized_law(base: PrivacyLossLaw, sampling_rate: float) -> PrivacyLossLaw:
    """The symmetric law S that agrees with R = Poisson(``base``, q) on L > 0 (module docstring).

    Atoms of R with ℓ > 0 are kept and mirrored to −ℓ with P and Q exchanged; q_neg_inf = R.p_inf; the
    remaining mass 1 − R_P(L > 0) − R.p_inf − R_Q(L > 0) sits on an atom at L = 0 (with equal P- and
    Q-mass). For a symmetric ``base`` that remainder equals (1−q)(a − b + d) + c₀ ≥ 0 (a, b: P- and
    Q-mass of 0 < L₀ < ∞, d = p_inf, c₀: mass at L₀ = 0); only rounding below zero is cut off.
    """
    law = poisson_subsampled_law(base, sampling_rate)
    positive = law.atom_losses > 0
    losses, atom_p, atom_q = law.atom_losses[positive], law.atom_p[positive], law.atom_q[positive]
    parts_p = [law.p_inf, *atom_p.tolist()]
    parts_q = [*atom_q.tolist()]
    continuous = None
    if law.continuous is not None and base.continuous is not None and law.continuous.upper > 0:
        zero = np.zeros(1)
        parts_p.append(math.exp(float(law.continuous.p_logsf(zero)[0])))
        parts_q.append(math.exp(float(law.continuous.q_logsf(zero)[0])))
        continuous = SymmetrizedLoss(base.continuous, check_sampling_rate("sampling_rate", sampling_rate))
    at_zero = max(0.0, 1.0 - math.fsum(parts_p + parts_q))  # ≥ 0 exactly; cut rounding only
    return PrivacyLossLaw(
        atom_losses=np.concatenate([-losses[::-1], [0.0], losses]),
        atom_p=np.concatenate([atom_q[::-1], [at_zero], atom_p]),
        atom_q=np.concatenate([atom_p[::-1], [at_zero], atom_q]),
        p_inf=law.p_inf,
        q_neg_inf=law.p_inf,
        continuous=continuous,
    )


@dataclass(frozen=True, slots=True)
class SubsampledWithoutReplacement:
    """``mechanism`` run on a uniformly random subset of fixed size m = q·n (without replacement).

    Neighbouring relation: substitution (replace one record); the base mechanism's parameters must be
    stated for that relation (e.g. ``Gaussian(sigma, sensitivity=Δ)`` with Δ the largest change of the
    query when one record is *replaced*: 2C for a sum of vectors clipped to norm C). The law is the
    symmetrized Poisson law (module docstring), whose δ(ε) is the tight
    ln(1 + q(e^ε − 1)), q·δ(ε) amplification of Balle–Barthe–Gaboardi (2018) for every ε.

    It is an upper bound for every substitution-neighbouring pair, attained for one step (its T-fold
    composition is not shown attained: a composition's lower end comes from PoissonSubsampled,
    ``optcomp.mechanisms.truncated.dominated_counterpart``). For a
    sum of records clipped to ‖x‖ ≤ C use Δ = 2C: with D = (v, …, v), ‖v‖ = C, and D' = D with one v replaced
    by −v, a batch without the replaced slot holds m copies of v either way, so
    M(D) = N(mv, σ²) and M(D') = (1−q)N(mv, σ²) + qN(mv − 2v, σ²): exactly the swapped Poisson pair
    with shift 2C. (The symmetric pair ((1−q)N(0) + qN(C), (1−q)N(0) + qN(−C)) is the right one for
    *Poisson* sampling under substitution, where an absent record leaves its slot empty; it
    underestimates sampling without replacement. Poisson sampling under substitution is not offered.)

    ``SubsampledWithoutReplacement(mechanism, *, sampling_rate)``; the relation is fixed to
    substitution (a base that fixes add/remove is refused).

    Attributes:
        mechanism: base mechanism with a *symmetric* law pair (Gaussian, Laplace, randomized response,
            EpsilonDelta, ...); others raise ``NotImplementedError`` in :func:`privacy_loss_laws`.
        sampling_rate: q = m/n in (0, 1].
    """

    mechanism: Mechanism
    _: KW_ONLY
    sampling_rate: float
    neighbouring: ClassVar[Neighbouring | None] = "substitution"
    domains: ClassVar[Mapping[str, Domain]] = {"sampling_rate": SAMPLING_RATE}

    def __post_init__(self) -> None:
        _check_base(self.mechanism, "substitution", type(self).__name__)
        validate_parameters(self)


@privacy_loss_laws.register
def _without_replacement_laws(mechanism: SubsampledWithoutReplacement) -> LawPair:
    base = privacy_loss_laws(mechanism.mechanism)
    if not is_symmetric(base):
        raise NotImplementedError(
            "SubsampledWithoutReplacement needs a base mechanism with a symmetric privacy-loss law "
            f"(T(P, Q) = T(Q, P)); {type(mechanism.mechanism).__name__} is not: its tight substitution "
            "curve is a pointwise maximum of two curves, not the law of one pair"
        )
    law = symmetrized_law(base[0], mechanism.sampling_rate)
    return (law, law)


@group_mechanism.register
def _without_replacement_group(mechanism: SubsampledWithoutReplacement, g: int) -> Mechanism:
    """Refused: the group's count in a fixed-size batch is hypergeometric in n (not carried here)."""
    raise NoGroupLawError(
        "SubsampledWithoutReplacement has no exact group-privacy law: the number of the group's records in a "
        "fixed-size batch is hypergeometric in the dataset size, which the specification does not carry, and "
        "the substitution pair of a group is not a one-sided mixture"
    )

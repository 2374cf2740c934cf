"""Mixtures: the mixture-of-Gaussians mechanism, and laws of pairs that reveal which branch ran.

**Mixture of Gaussians** (dp_accounting's ``MixtureOfGaussiansDpEvent``; Choquette-Choo et al.,
arXiv 2310.15526; Ganesh, arXiv 2401.10294). The remove-direction pair is

    P = Σᵢ pᵢ·N(cᵢ, σ²),    Q = N(0, σ²),    cᵢ ≥ 0,

and the add direction is the swap (Q, P). With z = x/σ, μᵢ = cᵢ/σ the loss is

    L(z) = ln Σᵢ pᵢ·exp(μᵢz − μᵢ²/2),

a log-sum-exp of affine functions with slopes μᵢ ≥ 0: convex and (with one μᵢ > 0) strictly
increasing from ln p₀ (p₀ = Σ_{μᵢ=0} pᵢ; −∞ if there is none) to +∞. So L ≤ t ⇔ z ≤ z(t), and

    Q(L > t) = Φ(−z(t)),   P(L > t) = Σᵢ pᵢ·Φ(μᵢ − z(t))   (and the complements with Φ(·) swapped).

z(t) solves F(z) = t' with F the log-sum-exp over the μᵢ > 0 terms only and t' = ln(eᵗ − p₀) (so F
is asymptotically linear at both ends); Newton's method on the convex increasing F started at
z₀ = minᵢ (t' − ln pᵢ + μᵢ²/2)/μᵢ (each term is a lower bound of F, so z₀ ≥ z(t)) decreases
monotonically to the root and is stopped when a step is within a few ulps. With cᵢ ∈ {0, c} and
p = (1 − q, q) this is exactly ``PoissonSubsampled(Gaussian(σ, sensitivity=c), sampling_rate=q)``.

**Revealed mixtures** (:func:`revealed_mixture`). If a variable S has the same law under both
datasets and is *shown* to the adversary, the pair ((S, M(D)), (S, M(D'))) dominates (M(D), M(D'))
(post-processing: drop S), and its privacy loss is the branch's loss: the law is the wᵢ-weighted sum
of the branches' laws (every P- and Q-mass scaled by wᵢ).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import ClassVar

import numpy as np
import numpy.typing as npt
from scipy.special import log_ndtr

from optcomp._numerics import (
    FEW_ULPS,
    MAX_MEAN_LOSS,
    MIXTURE_MAX_MU,
    MIXTURE_MIN_MU,
    POSITIVE,
    Domain,
    FloatArray,
    GridTooLargeError,
    check_probability_vector,
)
from optcomp.mechanisms._dispatch import LawPair, privacy_loss_laws
from optcomp.mechanisms._law import ContinuousLoss, PrivacyLossLaw
from optcomp.mechanisms._spec import Neighbouring, validate_parameters
from optcomp.mechanisms._tails import as_array, log_diff_exp

#: Newton steps allowed for z(t) (quadratic convergence from a start within a few units; far more
#: than needed — reaching the limit raises instead of returning an unconverged root).
_NEWTON_STEPS = 200


#: Largest (components × points) matrix the law evaluates at once (16 MiB per float64 temporary): the
#: points are taken in slices, so a mixture of many components (user-level DP-SGD with 10⁴ examples per
#: user has 10⁴ + 1) costs memory for the grid only, never components × grid.
_MAX_CELLS = 2**21


def _by_slices(fn: Callable[[FloatArray], FloatArray], x: FloatArray, components: int) -> FloatArray:
    """``fn`` on consecutive slices of the flat ``x`` (components × slice ≤ :data:`_MAX_CELLS`), joined.
    ``fn`` is elementwise, so the result is the same as ``fn(x)``."""
    step = max(1, _MAX_CELLS // max(1, components))
    if x.size <= step:
        return fn(x)
    return np.concatenate([fn(x[i : i + step]) for i in range(0, x.size, step)])


def _logsumexp_rows(terms: FloatArray) -> FloatArray:
    """log Σⱼ exp(terms[j, :]) along axis 0; −inf where every term is −inf."""
    top = np.max(terms, axis=0)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        out = safe + np.log(np.sum(np.exp(terms - safe), axis=0))
    return np.where(np.isneginf(top), -np.inf, np.where(np.isposinf(top), np.inf, out))


@dataclass(frozen=True, slots=True)
class MixtureOfGaussians:
    """The pair (Σᵢ pᵢ·N(cᵢ, σ²), N(0, σ²)) and its swap (module docstring).

    ``MixtureOfGaussians(sigma, *, sensitivities, probabilities)``: the remove direction releases the
    mixture (the record is present and moves the mean by a random cᵢ), the add direction the swap.
    It is the tight pair of DP-SGD under Poisson sampling when one unit (a user with several examples)
    contributes a random number of clipped gradients (Ganesh, arXiv 2401.10294), and dp_accounting's
    ``MixtureOfGaussiansDpEvent(σ, c, p)``. Relation-agnostic: the caller states what the pair is for.

    Attributes:
        sigma: noise standard deviation σ > 0.
        sensitivities: the shifts cᵢ ≥ 0 (finite), at least one > 0 with positive probability.
        probabilities: pᵢ ≥ 0 summing to 1, one per shift.
    """

    sigma: float
    _: KW_ONLY
    sensitivities: tuple[float, ...]
    probabilities: tuple[float, ...]
    neighbouring: ClassVar[Neighbouring | None] = None
    domains: ClassVar[Mapping[str, Domain]] = {"sigma": POSITIVE}

    def __post_init__(self) -> None:
        validate_parameters(self)
        try:
            shifts = np.asarray(self.sensitivities, dtype=np.float64)
        except (TypeError, ValueError) as err:
            raise ValueError(
                f"sensitivities must be a 1-d array of reals >= 0, got {self.sensitivities!r}"
            ) from err
        if shifts.ndim != 1 or shifts.size == 0 or not np.all(np.isfinite(shifts) & (shifts >= 0)):
            raise ValueError(
                f"sensitivities must be a non-empty 1-d array of finite reals in [0, inf), got {self.sensitivities!r}"
            )
        probs = check_probability_vector("probabilities", self.probabilities)
        if probs.size != shifts.size:
            raise ValueError(
                f"probabilities must have one entry per sensitivity, got {probs.size} and {shifts.size}"
            )
        if not np.any((shifts > 0) & (probs > 0)):
            raise ValueError(
                "sensitivities must include a shift > 0 of positive probability (else P = Q: ε = 0), "
                f"got sensitivities={shifts.tolist()!r}, probabilities={probs.tolist()!r}"
            )
        if float(np.max(shifts)) / self.sigma > MIXTURE_MAX_MU:
            raise ValueError(
                f"sensitivities / sigma must be at most {MIXTURE_MAX_MU:g}, got "
                f"{float(np.max(shifts))!r} / {self.sigma!r}"
            )
        object.__setattr__(self, "sensitivities", tuple(shifts.tolist()))
        object.__setattr__(self, "probabilities", tuple(probs.tolist()))


@dataclass(frozen=True, slots=True)
class MixtureGaussianLoss:
    """Continuous law of L for P = Σ pᵢ N(μᵢ, 1), Q = N(0, 1) (module docstring).

    Attributes:
        mus: the positive μᵢ = cᵢ/σ.
        log_weights: ln pᵢ of those components.
        log_p0: ln of the probability of the zero shifts (−inf if none).
    """

    mus: tuple[float, ...]
    log_weights: tuple[float, ...]
    log_p0: float

    @property
    def lower(self) -> float:
        return self.log_p0

    @property
    def upper(self) -> float:
        return math.inf

    def _f(self, z: FloatArray) -> tuple[FloatArray, FloatArray]:
        """F(z) = ln Σ_{μᵢ>0} pᵢ e^{μᵢz − μᵢ²/2} and F'(z) = the softmax-weighted mean of μᵢ."""
        mu = np.asarray(self.mus)[:, None]
        terms = np.asarray(self.log_weights)[:, None] + mu * z[None, :] - 0.5 * mu * mu
        f = _logsumexp_rows(terms)
        slope = np.sum(mu * np.exp(terms - f[None, :]), axis=0)
        return f, slope

    def z(self, t: npt.ArrayLike) -> FloatArray:
        """z(t) with L(z(t)) = t: −inf for t ≤ ln p₀, +inf for t = +inf (Newton from above)."""
        return _by_slices(self._z, as_array(t).reshape(-1), len(self.mus))

    def _z(self, t: FloatArray) -> FloatArray:
        """:meth:`z` on one slice of points (each point's Newton iteration is its own)."""
        out = np.full(t.shape, -np.inf)
        out[np.isposinf(t)] = np.inf
        live = np.isfinite(t) & (t > self.log_p0)
        if not np.any(live):
            return out
        tp = (
            t[live] if math.isinf(self.log_p0) else log_diff_exp(t[live], np.full(t[live].shape, self.log_p0))
        )
        mu = np.asarray(self.mus)
        lw = np.asarray(self.log_weights)
        z = np.min((tp[None, :] - lw[:, None] + 0.5 * mu[:, None] ** 2) / mu[:, None], axis=0)
        todo = np.ones(z.shape, dtype=bool)
        for _ in range(_NEWTON_STEPS):
            f, slope = self._f(z[todo])
            step = np.maximum((f - tp[todo]) / slope, 0.0)  # F ≥ t' on the right of the root
            new = z[todo] - step
            small = step <= FEW_ULPS * np.maximum(1.0, np.abs(new))
            z[todo] = new
            idx = np.flatnonzero(todo)
            todo[idx[small]] = False
            if not np.any(todo):
                break
        else:  # pragma: no cover - Newton on a convex, asymptotically linear F converges
            raise ArithmeticError("MixtureGaussianLoss: Newton's method did not converge")
        out[live] = z
        return out

    def _all_mus(self) -> tuple[FloatArray, FloatArray]:
        mus = np.asarray(self.mus)
        lws = np.asarray(self.log_weights)
        if math.isinf(self.log_p0):
            return mus, lws
        return np.append(mus, 0.0), np.append(lws, self.log_p0)

    def _p(self, x: FloatArray, sign: float) -> FloatArray:
        xs = as_array(x)
        mus, lws = self._all_mus()

        def mix(flat: FloatArray) -> FloatArray:
            terms = lws[:, None] + log_ndtr(sign * (self._z(flat)[None, :] - mus[:, None]))
            return np.minimum(_logsumexp_rows(terms), 0.0)

        return _by_slices(mix, xs.reshape(-1), len(mus)).reshape(xs.shape)

    def p_logsf(self, x: FloatArray) -> FloatArray:
        """log Σ pᵢ Φ(μᵢ − z(x))."""
        return self._p(x, -1.0)

    def p_logcdf(self, x: FloatArray) -> FloatArray:
        """log Σ pᵢ Φ(z(x) − μᵢ)."""
        return self._p(x, 1.0)

    def q_logsf(self, x: FloatArray) -> FloatArray:
        """log Φ(−z(x))."""
        xs = as_array(x)
        return np.asarray(log_ndtr(-self.z(xs)), dtype=np.float64).reshape(xs.shape)

    def q_logcdf(self, x: FloatArray) -> FloatArray:
        """log Φ(z(x))."""
        xs = as_array(x)
        return np.asarray(log_ndtr(self.z(xs)), dtype=np.float64).reshape(xs.shape)


def mixture_gaussian_law(
    sigma: float, sensitivities: Sequence[float], probabilities: Sequence[float]
) -> PrivacyLossLaw:
    """The remove-direction law of ``MixtureOfGaussians(sigma, ...)`` (inputs assumed validated).

    Shifts μ = c/σ below ``MIXTURE_MIN_MU`` (2⁻⁵⁰⁰) are rounded up to it: for a pair with a monotone
    loss the optimal sets of both hockey-stick divergences are half-lines, on each of which
    Σ pᵢ Φ(cᵢ − x) grows and Σ pᵢ Φ(x − cᵢ) shrinks with every cᵢ, so both curves only grow.
    """
    shifts = np.asarray(sensitivities, dtype=np.float64)
    probs = np.asarray(probabilities, dtype=np.float64)
    positive = (shifts > 0) & (probs > 0)
    p0 = math.fsum(probs[(shifts == 0) & (probs > 0)].tolist())
    with np.errstate(divide="ignore"):
        loss = MixtureGaussianLoss(
            mus=tuple(np.maximum(shifts[positive] / sigma, MIXTURE_MIN_MU).tolist()),
            log_weights=tuple(np.log(probs[positive]).tolist()),
            log_p0=math.log(p0) if p0 > 0 else -math.inf,
        )
    return PrivacyLossLaw(continuous=loss)


@privacy_loss_laws.register
def _mixture_laws(mechanism: MixtureOfGaussians) -> LawPair:
    law = mixture_gaussian_law(mechanism.sigma, mechanism.sensitivities, mechanism.probabilities)
    return (law, law.swapped())


@dataclass(frozen=True, slots=True)
class RevealedMixtureLoss:
    """Continuous part of Σⱼ wⱼ·(law j): every tail is log Σⱼ wⱼ·tailⱼ (module docstring)."""

    parts: tuple[ContinuousLoss, ...]
    log_weights: tuple[float, ...]

    @property
    def lower(self) -> float:
        return min(p.lower for p in self.parts)

    @property
    def upper(self) -> float:
        return max(p.upper for p in self.parts)

    def _mix(self, name: str, x: FloatArray) -> FloatArray:
        xs = as_array(x)
        rows = np.stack(
            [
                lw + np.asarray(getattr(p, name)(xs), dtype=np.float64).reshape(-1)
                for p, lw in zip(self.parts, self.log_weights, strict=True)
            ]
        )
        return np.minimum(_logsumexp_rows(rows), 0.0).reshape(xs.shape)

    def p_logsf(self, x: FloatArray) -> FloatArray:
        """log Σⱼ wⱼ Pⱼ(L > x)."""
        return self._mix("p_logsf", x)

    def p_logcdf(self, x: FloatArray) -> FloatArray:
        """log Σⱼ wⱼ Pⱼ(L ≤ x)."""
        return self._mix("p_logcdf", x)

    def q_logsf(self, x: FloatArray) -> FloatArray:
        """log Σⱼ wⱼ Qⱼ(L > x)."""
        return self._mix("q_logsf", x)

    def q_logcdf(self, x: FloatArray) -> FloatArray:
        """log Σⱼ wⱼ Qⱼ(L ≤ x)."""
        return self._mix("q_logcdf", x)


def revealed_mixture(laws: Sequence[PrivacyLossLaw], weights: Sequence[float]) -> PrivacyLossLaw:
    """The law of the pair that reveals which branch j (probability wⱼ under both datasets) ran.

    Args:
        laws: the branches' laws (one ordered pair each).
        weights: wⱼ > 0 summing to 1 (the branch's probability, equal under P and Q).

    Returns:
        Σⱼ wⱼ·lawⱼ: atoms concatenated with scaled masses, ±∞ masses and continuous parts mixed.
    """
    w = check_probability_vector("weights", list(weights))
    keep = [i for i in range(len(laws)) if w[i] > 0]
    conts = [(laws[i].continuous, math.log(w[i])) for i in keep if laws[i].continuous is not None]
    continuous: ContinuousLoss | None = None
    if conts:
        continuous = RevealedMixtureLoss(
            tuple(c for c, _ in conts if c is not None), tuple(lw for _, lw in conts)
        )
    return PrivacyLossLaw(
        atom_losses=np.concatenate([laws[i].atom_losses for i in keep]),
        atom_p=np.concatenate([w[i] * laws[i].atom_p for i in keep]),
        atom_q=np.concatenate([w[i] * laws[i].atom_q for i in keep]),
        p_inf=math.fsum(w[i] * laws[i].p_inf for i in keep),
        q_neg_inf=math.fsum(w[i] * laws[i].q_neg_inf for i in keep),
        continuous=continuous,
    )


def user_level_mixture(
    sigma: float, sampling_rate: float, examples_per_user: int, *, sensitivity: float = 1.0
) -> MixtureOfGaussians:
    """One Poisson DP-SGD step for a user with k examples: Σⱼ Bin(k, q)(j)·N(jΔ, σ²) vs N(0, σ²).

    Each of the user's k examples enters the batch independently with probability q, so J ~ Bin(k, q)
    of them do, and their clipped gradients move the sum by a vector of norm ≤ J; the worst case (all
    aligned) is the mixture of Gaussians with shifts 0..k (Ganesh, arXiv 2401.10294). Relation:
    add/remove of one user with at most k examples. Probabilities: scipy's binomial pmf, divided by
    their exact sum. ``sensitivity`` Δ (default 1, the clipped-gradient convention of :mod:`optcomp.dpsgd`)
    scales the shifts to jΔ, each rounded up when inexact (a larger shift dominates); it is also the
    pair of a group of k records of ``PoissonSubsampled(Gaussian(σ, sensitivity=Δ), q)``
    (:mod:`optcomp.mechanisms._group`).
    """
    from scipy import stats

    from optcomp.mechanisms._group import group_sensitivity

    j = np.arange(examples_per_user + 1)
    pmf = np.asarray(stats.binom.pmf(j, examples_per_user, sampling_rate), dtype=np.float64)
    pmf = pmf / math.fsum(pmf.tolist())
    return MixtureOfGaussians(
        sigma,
        sensitivities=tuple(group_sensitivity(int(i), sensitivity) for i in j.tolist()),
        probabilities=tuple(pmf.tolist()),
    )


def check_user_level_mean(sigma: float, q: float, steps: int, k: int) -> None:
    """Refuse a user-level run whose composed loss has mean beyond :data:`MAX_MEAN_LOSS`, before the
    (k + 1)-component mixture is built (a :class:`~optcomp.pld.GridTooLargeError`: a search counts
    such a σ or T as failing). The mean is *at least* steps·(kq)²/(2σ²): Donsker–Varadhan with
    the test function λx gives KL(P‖N(0, σ²)) ≥ λ·E_P[X] − λ²σ²/2 for every λ, and E_P[X] = kq for the
    mixture P of :func:`user_level_mixture` (maximised at λ = kq/σ²) — so a refusal is never a run that
    had a useful ε."""
    ratio = k * q / sigma  # float products overflow to inf (never OverflowError), which is refused
    mean = steps * ratio * ratio / 2.0
    if mean > MAX_MEAN_LOSS:
        raise GridTooLargeError(
            f"examples_per_user={k} with sampling_rate={q!r}, noise_multiplier={sigma!r} and steps={steps}: "
            f"the composed privacy loss has mean at least {mean:.3g}, beyond {MAX_MEAN_LOSS:g} (an epsilon "
            "that large protects nothing, and no grid spans it); use fewer examples per user, fewer steps "
            "or more noise"
        )

"""The exact law of a privacy loss: the contract between mechanisms and the numerical engine.

A mechanism run on neighbouring datasets gives a pair of output distributions (P, Q). Its privacy loss
is L = ln(dP/dQ)(X) with X ~ P (L = +∞ where Q has no mass, −∞ where P has none). Everything the
accountant needs is the law of L under P *and* under Q (the latter for subsampling, which mixes P and
Q):

* a discrete part: finite loss values ``atom_losses`` with their P- and Q-masses;
* a continuous part (:class:`ContinuousLoss`): sub-probability tail functions of L under P and under Q;
* the mass at L = +∞ under P (``p_inf``) and at L = −∞ under Q (``q_neg_inf``).

The masses under Q satisfy dQ = e^{−L} dP on finite losses; laws store both because each is computed
from its own closed form (accurate in its own tail). Mechanisms in :mod:`optcomp.mechanisms` produce
laws from closed-form CDFs (never sampling); :mod:`optcomp.pld` discretises them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np

from optcomp._numerics import FloatArray, check_probability_vector


@runtime_checkable
class ContinuousLoss(Protocol):
    """The absolutely continuous part of a privacy-loss law, as vectorised tail functions.

    All four functions return *sub-probability* masses of the continuous part only (atoms excluded),
    as float64 arrays of the shape of ``x``. ``lower``/``upper`` bound the support of L (may be ±inf).
    Implementations give the log versions accurately in the far tails (down to 1e-300 and below).
    """

    @property
    def lower(self) -> float: ...

    @property
    def upper(self) -> float: ...

    def p_logsf(self, x: FloatArray) -> FloatArray:
        """log P(L > x, continuous part)."""
        ...

    def p_logcdf(self, x: FloatArray) -> FloatArray:
        """log P(L <= x, continuous part)."""
        ...

    def q_logsf(self, x: FloatArray) -> FloatArray:
        """log Q(L > x, continuous part)."""
        ...

    def q_logcdf(self, x: FloatArray) -> FloatArray:
        """log Q(L <= x, continuous part)."""
        ...


@dataclass(frozen=True)
class _SwappedContinuous:
    """Continuous part of the law of the swapped pair (Q, P): L' = −L."""

    base: ContinuousLoss

    @property
    def lower(self) -> float:
        return -self.base.upper

    @property
    def upper(self) -> float:
        return -self.base.lower

    def p_logsf(self, x: FloatArray) -> FloatArray:  # P'(L' > x) = Q(L < -x)
        return self.base.q_logcdf(-np.asarray(x, dtype=np.float64))

    def p_logcdf(self, x: FloatArray) -> FloatArray:  # P'(L' <= x) = Q(L >= -x)
        return self.base.q_logsf(-np.asarray(x, dtype=np.float64))

    def q_logsf(self, x: FloatArray) -> FloatArray:
        return self.base.p_logcdf(-np.asarray(x, dtype=np.float64))

    def q_logcdf(self, x: FloatArray) -> FloatArray:
        return self.base.p_logsf(-np.asarray(x, dtype=np.float64))

    def log_tails(self, x: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        """(p_logcdf, p_logsf, q_logcdf, q_logsf) at ``x`` from one :func:`log_tails` of the base at −x."""
        b_pc, b_ps, b_qc, b_qs = log_tails(self.base, -np.asarray(x, dtype=np.float64))
        return b_qs, b_qc, b_ps, b_pc


def log_tails(cont: ContinuousLoss, x: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """(p_logcdf(x), p_logsf(x), q_logcdf(x), q_logsf(x)) of ``cont``: its own ``log_tails`` where it has
    one (the same values, sharing work such as a subsampled law's inverse transform), else the four calls."""
    own = getattr(cont, "log_tails", None)
    if own is not None:
        return own(x)  # type: ignore[no-any-return]
    return cont.p_logcdf(x), cont.p_logsf(x), cont.q_logcdf(x), cont.q_logsf(x)


def _empty() -> FloatArray:
    return np.zeros(0, dtype=np.float64)


@dataclass(frozen=True)
class PrivacyLossLaw:
    """Law of the privacy loss L = ln(dP/dQ) of one ordered pair (P, Q).

    Attributes:
        atom_losses: sorted finite loss values carrying point masses.
        atom_p: P-mass of each atom.
        atom_q: Q-mass of each atom (= atom_p · e^{−loss}, stored separately for accuracy).
        p_inf: P(L = +∞), the mass P puts where Q has none (the "δ part").
        q_neg_inf: Q(L = −∞), the mass Q puts where P has none.
        continuous: the absolutely continuous part, or ``None``.
    """

    atom_losses: FloatArray = field(default_factory=_empty)
    atom_p: FloatArray = field(default_factory=_empty)
    atom_q: FloatArray = field(default_factory=_empty)
    p_inf: float = 0.0
    q_neg_inf: float = 0.0
    continuous: ContinuousLoss | None = None

    def __post_init__(self) -> None:
        losses = np.asarray(self.atom_losses, dtype=np.float64)
        p = np.asarray(self.atom_p, dtype=np.float64)
        q = np.asarray(self.atom_q, dtype=np.float64)
        if not (losses.shape == p.shape == q.shape) or losses.ndim != 1:
            raise ValueError("atom_losses, atom_p and atom_q must be 1-d arrays of one length")
        if not np.all(np.isfinite(losses)):
            raise ValueError("atom_losses must be finite (use p_inf / q_neg_inf for infinite losses)")
        if not (np.all(p >= 0) and np.all(q >= 0) and 0 <= self.p_inf <= 1 and 0 <= self.q_neg_inf <= 1):
            raise ValueError(
                "masses must be non-negative (p_inf, q_neg_inf in [0, 1]), got "
                f"atom_p={p.tolist()[:5]!r}, atom_q={q.tolist()[:5]!r}, p_inf={self.p_inf!r}, q_neg_inf={self.q_neg_inf!r}"
            )
        order = np.argsort(losses, kind="stable")
        object.__setattr__(self, "atom_losses", losses[order])
        object.__setattr__(self, "atom_p", p[order])
        object.__setattr__(self, "atom_q", q[order])

    def swapped(self) -> PrivacyLossLaw:
        """The law of the reversed pair (Q, P): losses negated, P and Q exchanged."""
        return PrivacyLossLaw(
            atom_losses=-self.atom_losses[::-1],
            atom_p=self.atom_q[::-1],
            atom_q=self.atom_p[::-1],
            p_inf=self.q_neg_inf,
            q_neg_inf=self.p_inf,
            continuous=None if self.continuous is None else _SwappedContinuous(self.continuous),
        )

    @classmethod
    def from_discrete(cls, p: FloatArray, q: FloatArray) -> PrivacyLossLaw:
        """The law of two distributions on a common finite set, given as probability arrays."""
        p = check_probability_vector("p", p, normalised=False)
        q = check_probability_vector("q", q, normalised=False)
        if p.shape != q.shape:
            raise ValueError(f"p and q must be 1-d arrays of one length, got shapes {p.shape} and {q.shape}")
        both = (p > 0) & (q > 0)
        losses = np.log(p[both]) - np.log(q[both])
        return cls(
            atom_losses=losses,
            atom_p=p[both],
            atom_q=q[both],
            p_inf=float(math.fsum(p[(p > 0) & (q == 0)])),
            q_neg_inf=float(math.fsum(q[(q > 0) & (p == 0)])),
        )

"""The discrete Gaussian's privacy-loss law as atoms, for the grid engine (``docs/dgauss.md``).

For one coordinate of shift v the law has an atom for each noise value x ∈ [−T − v, T] (T the half-width
of :func:`~optcomp.mechanisms.discrete_gaussian.half_width`): loss c·(v² + 2vx), c = 1/(2σ²), P-mass
N_ℤ(0, σ²)(x), Q-mass N_ℤ(0, σ²)(x + v). So both P's and Q's kept ranges [−T, T] are covered; outside them
each side carries mass ≤ 2e^{−800}, below the smallest double (no double-precision query can show it).

For a shift vector v the loss is c·(‖v‖² + 2J), J = Σ_t v_t x_t, and P(J) = R(J), Q(J) = R(J + ‖v‖²) with
R the law of ⟨v, X⟩, X ~ N_ℤ(0, σ²)^d: R is the convolution of the coordinates' (stretched) mass vectors,
computed exactly up to one rounding per product and per sum (``math.fsum``, correctly rounded). With
coordinate masses within 8u (:data:`~optcomp.mechanisms.discrete_gaussian.MASS_ERROR_UNITS`), each atom of a
d-coordinate law is within (10d − 2)u of its exact value — inside the 64u the grid trusts an atom to
(``optcomp.pld._cells``) for d ≤ 6; more coordinates are refused here (the lattice engine composes any
number: compose the mechanism with discrete Gaussians of the same σ only).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from optcomp._numerics import FloatArray, GridTooLargeError
from optcomp.mechanisms._dispatch import LawPair, privacy_loss_laws
from optcomp.mechanisms._law import PrivacyLossLaw
from optcomp.mechanisms.discrete_gaussian import (
    DiscreteGaussian,
    check_lattice_size,
    half_inverse_variance,
    half_width,
    pmf,
)

#: Most non-zero coordinates of a shift whose law the grid takes as atoms: (8 + 2)d − 2 units of roundoff
#: (``MASS_ERROR_UNITS`` per coordinate, ``_STEP_UNITS`` per convolution) stay within the grid's 64.
MAX_GRID_COORDINATES = 6
#: Most products the exact convolution of a multivariate law may form.
_MAX_PRODUCTS = 2 * 10**7
#: Units of roundoff one exact convolution step adds: the product (u) and the correctly rounded sum (u).
_STEP_UNITS = 2

__all__ = ["MAX_GRID_COORDINATES", "product_law"]


def _atoms(sigma: float, worst: Sequence[int], j: np.ndarray, p: FloatArray, q: FloatArray) -> PrivacyLossLaw:
    """The law with atoms at loss c·(‖v‖² + 2J), J = ``j``, zero-mass atoms dropped."""
    norm2 = sum(v * v for v in worst)
    keep = (p > 0) | (q > 0)
    n = (norm2 + 2 * j[keep]).astype(np.float64)  # integers below 2⁵³: exact
    return PrivacyLossLaw(atom_losses=n * half_inverse_variance(sigma)[0], atom_p=p[keep], atom_q=q[keep])


def product_law(sigma: float, worst: Sequence[int]) -> PrivacyLossLaw:
    """The remove law of the shift ``worst`` (sorted |v_t|) under N_ℤ(0, σ²) noise (module docstring).

    Raises:
        GridTooLargeError: more than ``MAX_LATTICE_POINTS`` atoms or ``_MAX_PRODUCTS`` products.
        ValueError: more than ``MAX_GRID_COORDINATES`` non-zero coordinates.
    """
    t = half_width(sigma)
    if len(worst) == 1:
        v = worst[0]
        check_lattice_size(2 * t + v + 1, f"the law of a discrete Gaussian (sigma={sigma:g}, shift {v})")
        x = np.arange(-t - v, t + 1, dtype=np.int64)
        return _atoms(sigma, worst, v * x, pmf(sigma, x), pmf(sigma, x + v))  # J = v·x
    if len(worst) > MAX_GRID_COORDINATES:
        raise ValueError(
            f"the law of a discrete Gaussian with shift {tuple(worst)} ({len(worst)} non-zero coordinates) is "
            f"held as atoms for at most {MAX_GRID_COORDINATES} coordinates (its masses' error grows with each); "
            "compose it with discrete Gaussians of the same sigma only, which the exact lattice engine answers"
        )
    total = sum(worst)
    check_lattice_size(2 * t * total + sum(v * v for v in worst) + 1, f"the law of a discrete Gaussian with shift {tuple(worst)}")
    base = pmf(sigma, np.arange(-t, t + 1, dtype=np.int64))
    r = np.ones(1)
    for v in worst:  # R: the law of Σ v_t (x_t + T) on 0 … 2T·Σv
        stretched = np.zeros(2 * t * v + 1)
        stretched[::v] = base
        r = _exact_convolve(r, stretched)
    norm2 = sum(v * v for v in worst)
    j = np.arange(-t * total - norm2, t * total + 1, dtype=np.int64)  # J = Σ v_t x_t
    p = np.zeros(j.size)
    q = np.zeros(j.size)
    p[norm2:] = r  # P(J) = R(J) for J ≥ −TΣv
    q[: r.size] = r  # Q(J) = R(J + ‖v‖²) for J + ‖v‖² ≤ TΣv
    return _atoms(sigma, worst, j, p, q)


def _exact_convolve(a: FloatArray, b: FloatArray) -> FloatArray:
    """a ∗ b for non-negative a, b: each product rounded once, each output the correctly rounded sum of its
    products (``math.fsum``): within 2u of the exact convolution of the given vectors (relative, entrywise)."""
    ia, ib = np.flatnonzero(a), np.flatnonzero(b)
    if ia.size * ib.size > _MAX_PRODUCTS:
        raise GridTooLargeError(
            f"the exact convolution of a multivariate discrete Gaussian law needs {ia.size * ib.size} products "
            f"(at most {_MAX_PRODUCTS}); use a smaller sigma or shift, or compose discrete Gaussians of one sigma only"
        )
    products = (a[ia][:, None] * b[ib][None, :]).ravel()
    index = (ia[:, None] + ib[None, :]).ravel()
    order = np.argsort(index, kind="stable")
    index, products = index[order], products[order]
    starts = np.flatnonzero(np.concatenate([[True], index[1:] != index[:-1]]))
    ends = np.append(starts[1:], index.size)
    out = np.zeros(a.size + b.size - 1)
    out[index[starts]] = [math.fsum(products[s:e].tolist()) for s, e in zip(starts.tolist(), ends.tolist(), strict=True)]
    return out


@privacy_loss_laws.register
def _discrete_gaussian_laws(mechanism: DiscreteGaussian) -> LawPair:
    """The law pair of a :class:`DiscreteGaussian` (registered here, beside :func:`product_law`, so that
    ``discrete_gaussian`` need not import this module: the pair is symmetric)."""
    law = product_law(mechanism.sigma, mechanism.worst)
    return (law, law)

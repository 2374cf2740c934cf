"""Privacy loss distributions: discretisation, FFT composition, certified queries.

:class:`PrivacyLossDistribution` is the engine's one public type (``docs/pld.md``)::

    from optcomp.mechanisms import Gaussian, privacy_loss_laws
    from optcomp.pld import PrivacyLossDistribution

    pld = PrivacyLossDistribution.from_laws(*privacy_loss_laws(Gaussian(sigma=1.0))).self_compose(100)
    pld.epsilon(1e-5)   # Bound(lower, upper), upper certified

:func:`epsilons_at_step` answers many δ of one PLD at one fixed grid step, sharing tilted ends (the
sweep's passes, :mod:`optcomp.pld._joint`); :func:`refine_batch` drives such passes by the one refinement
schedule (:mod:`optcomp.pld._refine`: the step rule, the one relative width — :func:`epsilon_width`,
:func:`delta_width` — and a :class:`WarmStart` along a chain of compositions).

:class:`LatticeDistribution` is the exact lattice engine: compositions whose loss lives on one lattice
(discrete Gaussians of one σ, :mod:`optcomp.pld._lattice`), convolved over the integer index with no
discretisation of the loss.

:func:`lattice_kernels` (:mod:`optcomp.pld._lattice_kernels`) gives a block of fixed laws as certified
P-masses on the loss lattice {nΔ} (upper: the split; lower: the pooled lattice pair), for recursions that carry
a hockey-stick curve through the block (the adaptive bounded-range engine, :mod:`optcomp.adaptive`).

:func:`refine_stepped` refines the grid step of laws that live on it (a :class:`SteppedLaws`: balls-in-bins),
by the one refinement schedule (:mod:`optcomp.pld._refine`).
"""

from __future__ import annotations

from optcomp.pld._cells import GridTooLargeError
from optcomp.pld._curve import HockeyStickCurve
from optcomp.pld._joint import epsilons as epsilons_at_step
from optcomp.pld._lattice import LATTICE_RELATIVE_WIDTH, LatticeDistribution, fits, lattice_points
from optcomp.pld._lattice_kernels import LatticeKernel, lattice_kernels
from optcomp.pld._pld import PrivacyLossDistribution
from optcomp.pld._refine import (
    ORDER_RANGE,
    STEP_MARGIN,
    Reached,
    SteppedBracket,
    SteppedLaws,
    WarmStart,
    delta_width,
    epsilon_width,
    refine_batch,
    refine_stepped,
)
from optcomp.pld._roots import InfiniteMassError

__all__ = [
    "LATTICE_RELATIVE_WIDTH",
    "ORDER_RANGE",
    "STEP_MARGIN",
    "GridTooLargeError",
    "HockeyStickCurve",
    "InfiniteMassError",
    "LatticeDistribution",
    "LatticeKernel",
    "PrivacyLossDistribution",
    "Reached",
    "SteppedBracket",
    "SteppedLaws",
    "WarmStart",
    "delta_width",
    "epsilon_width",
    "epsilons_at_step",
    "fits",
    "lattice_kernels",
    "lattice_points",
    "refine_batch",
    "refine_stepped",
]

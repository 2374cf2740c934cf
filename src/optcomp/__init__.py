"""optcomp: optimal, certified privacy accounting.

Four capabilities, one vocabulary (:class:`optcomp.Bound`):

* :mod:`optcomp.optimal`, :mod:`optcomp.bounds`, :mod:`optcomp.region` — optimal composition of
  (ε, δ)-DP black boxes (Kairouz–Oh–Viswanath; Murtagh–Vadhan) and the classic theorems.
* :mod:`optcomp.pld`, :mod:`optcomp.mechanisms` — privacy loss distributions with certified
  pessimistic/optimistic brackets, FFT composition, the standard mechanisms, subsampling.
* :mod:`optcomp.fdp` — f-DP and Gaussian DP (Dong–Roth–Su).
* :mod:`optcomp.calibrate`, :mod:`optcomp.dpsgd` — noise calibration and DP-SGD accounting.
"""

from __future__ import annotations

from optcomp._numerics import DEFAULT_ACCURACY, Accuracy, Bound
from optcomp.composition import compose
from optcomp.mechanisms import (
    DiscreteLaplace,
    DiscretePair,
    EpsilonDelta,
    Gaussian,
    KaryRandomizedResponse,
    Laplace,
    PoissonSubsampled,
    RandomizedResponse,
    ShiftedTruncatedLaplace,
    Staircase,
    SubsampledWithoutReplacement,
    TruncatedLaplace,
    privacy_loss_laws,
)

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_ACCURACY",
    "Accuracy",
    "Bound",
    "DiscreteLaplace",
    "DiscretePair",
    "EpsilonDelta",
    "Gaussian",
    "KaryRandomizedResponse",
    "Laplace",
    "PoissonSubsampled",
    "RandomizedResponse",
    "ShiftedTruncatedLaplace",
    "Staircase",
    "SubsampledWithoutReplacement",
    "TruncatedLaplace",
    "__version__",
    "compose",
    "privacy_loss_laws",
]

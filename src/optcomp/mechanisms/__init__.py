"""Mechanisms: frozen specifications and the exact laws of their privacy loss.

Each specification is a frozen, validated dataclass; :func:`privacy_loss_laws` maps it to the pair
``(remove_law, add_law)`` of :class:`PrivacyLossLaw` objects that :mod:`optcomp.pld` discretises.
Every specification states its neighbouring relation in its ``neighbouring`` class attribute
(``"add_remove"`` or ``"substitution"``).
"""

from __future__ import annotations

from optcomp.mechanisms._dispatch import LawPair, privacy_loss_laws
from optcomp.mechanisms._law import ContinuousLoss, PrivacyLossLaw
from optcomp.mechanisms.discrete import (
    DiscreteLaplace,
    DiscretePair,
    EpsilonDelta,
    KaryRandomizedResponse,
    RandomizedResponse,
)
from optcomp.mechanisms.gaussian import Gaussian
from optcomp.mechanisms.laplace import Laplace, ShiftedTruncatedLaplace, TruncatedLaplace
from optcomp.mechanisms.subsampling import PoissonSubsampled, SubsampledWithoutReplacement

__all__ = [
    "ContinuousLoss",
    "DiscreteLaplace",
    "DiscretePair",
    "EpsilonDelta",
    "Gaussian",
    "KaryRandomizedResponse",
    "Laplace",
    "LawPair",
    "PoissonSubsampled",
    "PrivacyLossLaw",
    "RandomizedResponse",
    "ShiftedTruncatedLaplace",
    "SubsampledWithoutReplacement",
    "TruncatedLaplace",
    "privacy_loss_laws",
]

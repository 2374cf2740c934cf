"""Mechanisms: frozen specifications and the exact laws of their privacy loss.

Each specification is a frozen, validated dataclass; :func:`privacy_loss_laws` maps it to the pair
``(remove_law, add_law)`` of :class:`PrivacyLossLaw` objects that :mod:`optcomp.pld` discretises.
Every specification states its neighbouring relation in its ``neighbouring`` class attribute
(``"add_remove"`` or ``"substitution"``).
"""

from __future__ import annotations

from optcomp.mechanisms._dispatch import LawPair, privacy_loss_laws
from optcomp.mechanisms._law import ContinuousLoss, PrivacyLossLaw
from optcomp.mechanisms.discrete import EpsilonDelta
from optcomp.mechanisms.gaussian import Gaussian
from optcomp.mechanisms.subsampling import PoissonSubsampled, SubsampledWithoutReplacement

__all__ = [
    "ContinuousLoss",
    "EpsilonDelta",
    "Gaussian",
    "LawPair",
    "PoissonSubsampled",
    "PrivacyLossLaw",
    "SubsampledWithoutReplacement",
    "privacy_loss_laws",
]

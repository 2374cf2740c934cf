"""Mechanisms: frozen specifications and the exact laws of their privacy loss."""

from __future__ import annotations

from optcomp.mechanisms._law import ContinuousLoss, PrivacyLossLaw

__all__ = ["ContinuousLoss", "PrivacyLossLaw"]

"""Where a peer's number does not hold for the run the user describes (issue 35, item 3; ``docs/interop.md`` §8).

Reading a description, optcomp knows two things a peer's accountant does not ask for: how batches were
formed (the ``sampling`` the user states: as the events say, or fixed-size batches) and what it does with
an event it cannot account exactly. Where the peer's number for the same tree is *not* a guarantee for the
run described, the reading carries a :class:`PeerWarning` — one line naming the peer, the event's path and
why — and :func:`optcomp.interop.from_dp_event` also issues it as a :class:`PeerUnderReportWarning`
(a ``UserWarning``). optcomp's own bracket is the run's, certified as always; the warning is about the
other number. The cases (each with a test on the peer's own event, ``tests/test_interop_safety.py``):

* ``SampledWithoutReplacementDpEvent`` of Gaussians under ``REPLACE_ONE`` (fixed-size batches): dp_accounting's
  ``RdpAccountant`` (its PLD accountant refuses the event) applies a sampling-without-replacement RDP bound
  that does not hold for this pair (google/differential-privacy PR #464) — 2.70 against optcomp's
  [11.0417, 12.4824] for m = 256 of 60,000, σ = 1, 3,516 steps, δ = 1e-5;
* ``PoissonSampledDpEvent`` of Gaussians under ``REPLACE_ONE``, batches stated fixed-size
  (``sampling="fixed_size"``): dp_accounting's ``PLDAccountant`` reads the event as Poisson sampling
  (its pair q·N(+1) + (1 − q)·N(0) against q·N(−1) + (1 − q)·N(0)) and reports 2.21 where the fixed-size run
  has ε ≥ 11.04;
* an Opacus history whose batches are stated fixed-size: Opacus' accountants assume Poisson batches under
  add/remove;
* a sampled ``DiscreteGaussianDpEvent``: dp_accounting's development source after the 0.6.0 release (its
  ``RdpAccountant``'s effective Gaussian noise multiplier; no option governs it) replaces it by a Gaussian of
  noise multiplier σ/Δ under sampling, and the discrete Gaussian is not bounded by that Gaussian (σ = 1,
  10 releases, δ = 1e-6: 19.49 against 19.42). The 0.6.0 release has no ``DiscreteGaussianDpEvent``, and its
  ``RdpAccountant`` refuses a sampled ``ZCDpEvent``: there the event can only be handed to it as that
  Gaussian, whose number is the same under-report (``tests/test_interop_safety.py`` pins both against the
  installed peer).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["PeerUnderReportWarning", "PeerWarning", "emit"]


class PeerUnderReportWarning(UserWarning):
    """A peer's number for this description is not a guarantee for the run described (its message says why)."""


@dataclass(frozen=True)
class PeerWarning:
    """One peer's under-report for one event.

    Attributes:
        peer: the accountant whose number does not hold (``"dp_accounting RdpAccountant"``, ...).
        path: where in the event tree (``"root.event"``).
        message: the one line shown (it names the peer and the path).
    """

    peer: str
    path: str
    message: str


def fixed_size_replace_one(path: str) -> PeerWarning:
    """``SampledWithoutReplacementDpEvent`` of Gaussians under ``REPLACE_ONE``."""
    peer = "dp_accounting RdpAccountant"
    return PeerWarning(peer, path, (
        f"{peer} answers the SampledWithoutReplacementDpEvent at {path} under REPLACE_ONE with an amplification "
        "bound that does not hold for fixed-size batches (google/differential-privacy PR #464): its epsilon is no "
        "guarantee for this run and can under-report it; optcomp's bracket is the run's"
    ))


def poisson_read_as_fixed_size(path: str) -> PeerWarning:
    """``PoissonSampledDpEvent`` of Gaussians under ``REPLACE_ONE``, batches stated fixed-size."""
    peer = "dp_accounting PLDAccountant"
    return PeerWarning(peer, path, (
        f"{peer} reads the PoissonSampledDpEvent at {path} under REPLACE_ONE as Poisson sampling, which the "
        "fixed-size batches described (sampling='fixed_size') are not: its epsilon is no guarantee for this run "
        "and can under-report it; optcomp's bracket is the fixed-size run's"
    ))


def opacus_fixed_size() -> PeerWarning:
    """An Opacus history whose batches are stated fixed-size."""
    peer = "Opacus accountant"
    return PeerWarning(peer, "history", (
        f"{peer}s (rdp, prv, gdp) assume Poisson batches under add/remove (poisson_sampling=True), which the "
        "fixed-size batches described are not: their epsilon is no guarantee for this run and can under-report "
        "it; optcomp's bracket is the fixed-size run's under replace-one"
    ))


def sampled_discrete_gaussian(path: str) -> PeerWarning:
    """A ``DiscreteGaussianDpEvent`` under a sampling event."""
    peer = "dp_accounting RdpAccountant"
    return PeerWarning(peer, path, (
        f"{peer} (dp_accounting's source after its 0.6.0 release; 0.6.0 has no such event) replaces the sampled "
        f"DiscreteGaussianDpEvent at {path} by a Gaussian of noise multiplier sigma/sensitivity, which does not "
        "bound the discrete Gaussian: its epsilon is no guarantee for this run; optcomp's bracket is the discrete "
        "Gaussian's"
    ))


def emit(found: Iterable[PeerWarning], stacklevel: int = 3) -> None:
    """Issue each as a :class:`PeerUnderReportWarning` (Python's ``warnings``: shown once per call site)."""
    for w in found:
        warnings.warn(w.message, PeerUnderReportWarning, stacklevel=stacklevel)

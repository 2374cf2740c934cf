"""Interoperability: read dp_accounting ``DpEvent`` trees and Opacus accountant histories, write them back.

* :func:`from_dp_event` — a ``DpEvent`` tree (objects, named tuples or the JSON of ``docs/interop.md``)
  → :class:`EventComposition`, whose ``epsilon(δ)``/``delta(ε)`` are optcomp's certified brackets;
* :func:`from_opacus_history` — Opacus' ``[(noise_multiplier, sample_rate, num_steps), ...]`` or its
  ``state_dict()`` → the same; :class:`Accountant` implements Opacus' accountant interface and
  replaces Opacus' accountant on a ``DPOptimizer``;
* :func:`from_repeat_and_select` — a ``RepeatAndSelectDpEvent`` (hyperparameter tuning) → an
  :class:`optcomp.selection.Selection`, whose answers name the route that certified them;
* :func:`to_dp_event_json` — an optcomp composition → the JSON schema, to archive and re-check;
* :func:`dpsgd_statement` — a short, honest privacy statement of a DP-SGD run;
* :class:`PeerWarning` / :class:`PeerUnderReportWarning` — where a peer's number for the same description
  is no guarantee for the run described (fixed-size batches under replace-one, a sampled discrete
  Gaussian read as a Gaussian): ``EventComposition.warnings`` and a Python warning.

Nothing here imports dp_accounting or Opacus: events are duck-typed by class name and fields.
"""

from __future__ import annotations

from optcomp.interop._dp_event import SUPPORTED, UNSUPPORTED, EventComposition, from_dp_event
from optcomp.interop._export import to_dp_event_json
from optcomp.interop._opacus import Accountant, from_opacus_history, opacus_history_to_dp_event
from optcomp.interop._relation import NEIGHBOURING, Neighbouring, check_neighbouring
from optcomp.interop._safety import PeerUnderReportWarning, PeerWarning
from optcomp.interop._sampler_events import NON_PRIVATE
from optcomp.interop._select_event import from_repeat_and_select, repetitions_of
from optcomp.interop._statement import dpsgd_statement

__all__ = [
    "NEIGHBOURING",
    "NON_PRIVATE",
    "SUPPORTED",
    "UNSUPPORTED",
    "Accountant",
    "EventComposition",
    "Neighbouring",
    "PeerUnderReportWarning",
    "PeerWarning",
    "check_neighbouring",
    "dpsgd_statement",
    "from_dp_event",
    "from_opacus_history",
    "from_repeat_and_select",
    "opacus_history_to_dp_event",
    "repetitions_of",
    "to_dp_event_json",
]

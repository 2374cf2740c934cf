"""Rényi differential privacy: curves, their composition, and their conversion to (ε, δ).

Two things live here.

* **The comparator** (:mod:`._curves`, what Opacus and TF Privacy report): closed-form Rényi curves of the
  standard mechanisms (:func:`gaussian`, :func:`laplace`, :func:`randomized_response`,
  :func:`poisson_subsampled_gaussian`, :func:`of_mechanism`), their composition (:func:`compose`, an
  :class:`RdpCurve` on fixed orders) and the standard/improved conversions, upper bounds only
  (:class:`RdpConversion`); :func:`compare` is the labelled table the CLI prints beside certified brackets.
* **The conversion of black boxes known by their curve** (``ZeroConcentrated``, ``Renyi`` items of
  :func:`optcomp.compose`): :func:`stated_curve` sums every item's curve (outward), and
  :class:`RenyiConversion` converts it by the closed form (Canonne–Kamath–Steinke Prop. 12 = Balle et al.
  Thm 21) and by the **optimal conversion** — the largest δ(ε) over all privacy-loss laws under the curve,
  a linear program certified above by a dual certificate and below by a verified witness law. Its answers
  are :class:`ConversionBound` brackets that say which route answered (``docs/rdp.md``).
"""

from __future__ import annotations

from optcomp.rdp._binary import BinaryCertificate
from optcomp.rdp._closed import closed_form_delta, closed_form_epsilon
from optcomp.rdp._convert import STATEMENT, ConversionBound, RenyiConversion
from optcomp.rdp._curves import (
    DEFAULT_ORDERS,
    Conversion,
    RdpConversion,
    RdpCurve,
    check_orders,
    compare,
    compose,
    gaussian,
    laplace,
    of_mechanism,
    poisson_subsampled_gaussian,
    randomized_response,
)
from optcomp.rdp._dual import DualCertificate
from optcomp.rdp._stated import StatedCurve, holds_renyi_item, renyi_upper, stated_curve
from optcomp.rdp._witness import WitnessLaw


def conversion(*items: object, accuracy: object = None) -> RenyiConversion:
    """The :class:`RenyiConversion` of the composition of ``items`` (mechanisms or ``(mechanism, count)``
    pairs, at least one of them a ``ZeroConcentrated`` or ``Renyi`` black box or any mechanism with a
    Rényi curve here), at ``accuracy`` (default: ``optcomp.DEFAULT_ACCURACY``).

    ``optcomp.compose(*items).epsilon(δ)`` answers the same brackets through the router; this entry point
    keeps the conversion object (both routes, the witness laws it found) for inspection.
    """
    from optcomp._numerics import DEFAULT_ACCURACY, Accuracy, check_int
    from optcomp.mechanisms import check_mechanism

    pairs = []
    for i, item in enumerate(items):
        mechanism, count = item if isinstance(item, tuple) else (item, 1)
        pairs.append((check_mechanism(f"items[{i}]", mechanism), check_int("count", count, minimum=1)))
    if not pairs:
        raise ValueError("conversion needs at least one item")
    acc = DEFAULT_ACCURACY if accuracy is None else accuracy
    if not isinstance(acc, Accuracy):
        raise ValueError(f"accuracy must be an optcomp.Accuracy, got {accuracy!r}")  # noqa: TRY004 (contract: ValueError)
    return RenyiConversion(stated_curve(pairs), accuracy=acc)


__all__ = [
    "DEFAULT_ORDERS",
    "STATEMENT",
    "BinaryCertificate",
    "Conversion",
    "ConversionBound",
    "DualCertificate",
    "RdpConversion",
    "RdpCurve",
    "RenyiConversion",
    "StatedCurve",
    "WitnessLaw",
    "check_orders",
    "closed_form_delta",
    "closed_form_epsilon",
    "compare",
    "compose",
    "conversion",
    "gaussian",
    "holds_renyi_item",
    "laplace",
    "of_mechanism",
    "poisson_subsampled_gaussian",
    "randomized_response",
    "renyi_upper",
    "stated_curve",
]

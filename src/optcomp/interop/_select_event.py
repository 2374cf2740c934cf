"""dp_accounting's ``RepeatAndSelectDpEvent(event, mean, shape)`` → an optcomp :class:`~optcomp.selection.Selection`.

dp_accounting (``dp_event.py``) describes hyperparameter tuning as repeating ``event`` a random number K of
times and releasing the best run, K drawn from a law fixed by its mean and a shape (Papernot–Steinke,
arXiv 2110.03620): ``shape = inf`` Poisson, ``shape = 1`` geometric, ``shape = 0`` logarithmic, otherwise
the truncated negative binomial D_{η,γ} with η = shape. dp_accounting's RDP accountant answers it through
an RDP → DP conversion of Papernot–Steinke Thm 2 / Thm 6 (its Thm 6 δ̂ from the RDP curve as well); optcomp
reads the same event into :func:`optcomp.selection.select`, whose routes take the base's certified PLD.

The law from (mean, shape): Poisson(mean); geometric γ = 1/mean; a truncated negative binomial with
mean > 1 has its γ solved from the mean (:meth:`~optcomp.selection.TruncatedNegativeBinomial.from_mean`,
the γ that the answer's statement names: sample K with it); ``mean = 1`` with a finite shape is K = 1
(one run, the base itself: γ = 1 in dp_accounting).

The event must be the root of the tree (optcomp answers the selection's own ε/δ; composing a selection
with further events needs its privacy profile as a pair, which is not implemented). Its ``event`` is read
by :func:`~optcomp.interop.from_dp_event` under the relation given.
"""

from __future__ import annotations

import math

from optcomp._numerics import Accuracy
from optcomp.interop._dp_event import from_dp_event
from optcomp.interop._fields import _node, _real
from optcomp.interop._relation import compose_items
from optcomp.selection import (
    PROFILE_ACCURACY,
    Binomial,
    Poisson,
    Repetitions,
    Selection,
    TruncatedNegativeBinomial,
    select,
)

#: Spellings of an infinite ``shape`` in JSON (which has no Infinity literal).
_INFINITE = ("inf", "infinity", "+inf")


def repetitions_of(mean: object, shape: object, path: str = "root") -> Repetitions:
    """The law of K of dp_accounting's (mean, shape) (module docstring); ``ValueError`` naming the field."""
    if isinstance(shape, str) and shape.strip().lower() in _INFINITE:
        shape = math.inf
    if isinstance(shape, (int, float)) and not isinstance(shape, bool) and shape == math.inf:
        m = _real(f"{path}.mean", mean, low=0.0, low_open=True)
        return Poisson(m)
    eta = _real(f"{path}.shape", shape, low=0.0)
    m = _real(f"{path}.mean", mean, low=1.0)
    if m == 1.0:
        return Binomial(1)
    return TruncatedNegativeBinomial.from_mean(eta, m)


def from_repeat_and_select(
    event: object, *, neighbouring: object = "add_remove", accuracy: Accuracy = PROFILE_ACCURACY
) -> Selection:
    """The selection a ``RepeatAndSelectDpEvent`` (object, named tuple or JSON) describes.

    Args:
        event: the event, at the root of its tree.
        neighbouring: the relation the inner event tree is read under (:func:`from_dp_event`).
        accuracy: the accuracy of the base's certified δ(ε) curve.

    Raises:
        ValueError: not a ``RepeatAndSelectDpEvent``; a bad ``mean``/``shape``; an inner tree
            :func:`from_dp_event` refuses, one with no mechanism, or a non-private one.
    """
    name, fields = _node(event, "root")
    if name != "RepeatAndSelectDpEvent":
        raise ValueError(f"root must be a RepeatAndSelectDpEvent (the selection's own event), got {name}")
    expected = ("event", "mean", "shape")
    missing = [f for f in expected if f not in fields]
    extra = sorted(set(fields) - set(expected))
    if missing or extra:
        raise ValueError(f"root: RepeatAndSelectDpEvent has the fields {list(expected)}, got {sorted(fields)}")
    law = repetitions_of(fields["mean"], fields["shape"])
    inner = from_dp_event(fields["event"], neighbouring=neighbouring)
    if inner.empty:
        raise ValueError("root.event has no mechanism (only no-op events): every candidate is public")
    if not inner.private:
        raise ValueError(f"root.event is not private (NonPrivateDpEvent at {', '.join(inner.non_private)})")
    # a sampler whose law only dominates the run (allocation, truncated Poisson, fixed size): upper ends from
    # the dominating law (lower_end="law": no lower end is claimed for the run); else the run's own items
    base = inner.pld(accuracy=accuracy) if inner.has_dominating_pairs else compose_items(
        inner.dominating_items(), inner.neighbouring, accuracy)
    return select(base, law, accuracy=accuracy)


__all__ = ["from_repeat_and_select", "repetitions_of"]

"""optcomp compositions → the DpEvent JSON schema of ``docs/interop.md`` (archive, then re-check).

The inverse of :func:`optcomp.interop.from_dp_event` on the mechanisms that have a ``DpEvent``:

==============================================  ==============================================
mechanism (stated for the relation given)       event
==============================================  ==============================================
``Gaussian(σ, Δ)``                              ``GaussianDpEvent(noise_multiplier = σ/c)``
``Laplace(b, Δ)``                               ``LaplaceDpEvent(noise_multiplier = b/c)``
``DiscreteLaplace(b, Δ)``                       ``DiscreteLaplaceDpEvent(1/b, Δ/r)``
``DiscreteGaussian(σ, shift v)``                ``DiscreteGaussianDpEvent(σ, |v_t|, dimension=1)`` per non-zero
                                                coordinate (``ComposedDpEvent`` of them: the same product law)
``RandomizedResponse(ε)`` / ``Kary…(ε, k)``     ``RandomizedResponseDpEvent(p = k/(e^ε + k − 1), k)``
``EpsilonDelta(ε, δ)``                          ``EpsilonDeltaDpEvent(ε, δ)`` (``NonPrivateDpEvent`` for
                                                the fully distinguishing ``EpsilonDelta(0, δ=1)``)
``PoissonSubsampled(M, q)``                     ``PoissonSampledDpEvent(q, event(M))``
``SubsampledWithoutReplacement(M, q)``          ``SampledWithoutReplacementDpEvent(n, m, event(M))``, m/n = q
``RandomAllocation(σ, t, k)``                    ``RandomAllocationDpEvent(GaussianDpEvent(σ), k, t)``
``(M, k)``, several items                       ``SelfComposedDpEvent(event(M), k)``, ``ComposedDpEvent``
==============================================  ==============================================

with c = Δ (add/remove) or Δ/2 (substitution: one replaced record moves a sum of C-bounded records by
2C), and r = 1 or 2 likewise (Δ/r must be an integer). A mechanism with no event (truncated Laplace,
``DiscretePair``, ...) or one that does not fit the relation is a ``ValueError`` naming it.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import singledispatch
from typing import Any

from optcomp._numerics import check_int
from optcomp.interop._relation import check_neighbouring
from optcomp.mechanisms import (
    DiscreteGaussian,
    DiscreteLaplace,
    EpsilonDelta,
    Gaussian,
    KaryRandomizedResponse,
    Laplace,
    MixtureOfGaussians,
    PoissonSubsampled,
    RandomizedResponse,
    SubsampledWithoutReplacement,
    TruncatedPoissonGaussian,
)
from optcomp.mechanisms.allocation import RandomAllocation

#: Largest denominator tried first when writing a sampling rate q as sample_size/source_dataset_size.
_MAX_DATASET_SIZE = 10**9


def _sizes(q: float) -> tuple[int, int]:
    """Integers (m, n) with m/n == q in floating point: the smallest n ≤ 10⁹ that works, else exact."""
    frac = Fraction(q).limit_denominator(_MAX_DATASET_SIZE)
    if frac.numerator / frac.denominator != q:
        frac = Fraction(q)
    return frac.numerator, frac.denominator


@singledispatch
def _event(mechanism: object, substitution: bool) -> dict[str, Any]:
    """The DpEvent JSON of one run of ``mechanism`` (module table): one registered function per spec class,
    ``substitution`` the relation its parameters are stated for; this default refuses the rest."""
    raise ValueError(f"{type(mechanism).__name__} has no DpEvent (mechanism {mechanism!r} cannot be exported)")


def _scale(substitution: bool) -> float:
    """c/Δ's inverse: 2 under substitution (a replaced record moves a Δ-bounded sum by 2Δ), else 1."""
    return 2.0 if substitution else 1.0


@_event.register
def _gaussian_event(mechanism: Gaussian, substitution: bool) -> dict[str, Any]:
    return {
        "class_name": "GaussianDpEvent",
        "noise_multiplier": mechanism.sigma * _scale(substitution) / mechanism.sensitivity,
    }


@_event.register
def _laplace_event(mechanism: Laplace, substitution: bool) -> dict[str, Any]:
    return {
        "class_name": "LaplaceDpEvent",
        "noise_multiplier": mechanism.scale * _scale(substitution) / mechanism.sensitivity,
    }


@_event.register
def _discrete_laplace_event(mechanism: DiscreteLaplace, substitution: bool) -> dict[str, Any]:
    c, rem = divmod(mechanism.sensitivity, 2 if substitution else 1)
    if rem:
        raise ValueError(
            f"DiscreteLaplace(sensitivity={mechanism.sensitivity}) has no DiscreteLaplaceDpEvent under "
            "substitution (the event's sensitivity is per record, doubled by a replacement: it must be even)"
        )
    return {
        "class_name": "DiscreteLaplaceDpEvent",
        "noise_parameter": 1.0 / mechanism.scale,
        "sensitivity": c,
    }


@_event.register
def _discrete_gaussian_event(mechanism: DiscreteGaussian, substitution: bool) -> dict[str, Any]:
    """One 1-dimensional event per non-zero coordinate of the worst shift (the event states f's own
    sensitivity, under either relation): several coordinates are their composition, exactly."""
    del substitution
    events = [
        {"class_name": "DiscreteGaussianDpEvent", "sigma": mechanism.sigma, "sensitivity": float(v), "dimension": 1}
        for v in mechanism.worst
    ]
    return events[0] if len(events) == 1 else {"class_name": "ComposedDpEvent", "events": events}


@_event.register(RandomizedResponse)
@_event.register(KaryRandomizedResponse)
def _randomized_response_event(
    mechanism: RandomizedResponse | KaryRandomizedResponse, substitution: bool
) -> dict[str, Any]:
    if not substitution:
        raise ValueError(
            f"{type(mechanism).__name__} has a RandomizedResponseDpEvent under neighbouring='substitution' only"
        )
    k = mechanism.k if isinstance(mechanism, KaryRandomizedResponse) else 2
    # p = k/(e^ε + k − 1), written with e^{−ε} so that large ε does not overflow.
    t = math.exp(-mechanism.epsilon)
    return {
        "class_name": "RandomizedResponseDpEvent",
        "noise_parameter": k * t / (1.0 + (k - 1) * t),
        "num_buckets": k,
    }


@_event.register
def _epsilon_delta_event(mechanism: EpsilonDelta, substitution: bool) -> dict[str, Any]:
    if mechanism == EpsilonDelta(0.0, delta=1.0):  # fully distinguishing
        return {"class_name": "NonPrivateDpEvent"}
    return {"class_name": "EpsilonDeltaDpEvent", "epsilon": mechanism.epsilon, "delta": mechanism.delta}


@_event.register
def _poisson_event(mechanism: PoissonSubsampled, substitution: bool) -> dict[str, Any]:
    if substitution:
        raise ValueError("PoissonSubsampled has no DpEvent reading under neighbouring='substitution'")
    return {
        "class_name": "PoissonSampledDpEvent",
        "sampling_probability": mechanism.sampling_rate,
        "event": _event(mechanism.mechanism, substitution),
    }


@_event.register
def _without_replacement_event(
    mechanism: SubsampledWithoutReplacement, substitution: bool
) -> dict[str, Any]:
    if not substitution:
        raise ValueError(
            "SubsampledWithoutReplacement has a DpEvent reading under neighbouring='substitution' only"
        )
    m, n = _sizes(mechanism.sampling_rate)
    return {
        "class_name": "SampledWithoutReplacementDpEvent",
        "source_dataset_size": n,
        "sample_size": m,
        "event": _event(mechanism.mechanism, substitution),
    }


@_event.register
def _mixture_event(mechanism: MixtureOfGaussians, substitution: bool) -> dict[str, Any]:
    return {
        "class_name": "MixtureOfGaussiansDpEvent",
        "standard_deviation": mechanism.sigma,
        "sensitivities": list(mechanism.sensitivities),
        "sampling_probs": list(mechanism.probabilities),
    }


@_event.register
def _truncated_poisson_event(mechanism: TruncatedPoissonGaussian, substitution: bool) -> dict[str, Any]:
    if substitution:
        return _event.dispatch(object)(mechanism, substitution)
    return {
        "class_name": "TruncatedSubsampledGaussianDpEvent",
        "dataset_size": mechanism.dataset_size,
        "sampling_probability": mechanism.sampling_rate,
        "truncated_batch_size": mechanism.max_batch_size,
        "noise_multiplier": mechanism.sigma,
    }


@_event.register
def _random_allocation_event(mechanism: RandomAllocation, substitution: bool) -> dict[str, Any]:
    if substitution:
        return _event.dispatch(object)(mechanism, substitution)
    # Field names and order: google/differential-privacy python/dp_accounting/dp_accounting/
    # dp_event_test.py after PR #414, RandomAllocationDpEvent(event, num_selected, num_steps).
    return {
        "class_name": "RandomAllocationDpEvent",
        "event": {"class_name": "GaussianDpEvent", "noise_multiplier": mechanism.sigma},
        "num_selected": mechanism.selected,
        "num_steps": mechanism.steps,
    }


def to_dp_event_json(*items: object, neighbouring: object = "add_remove") -> dict[str, Any]:
    """The DpEvent JSON of a composition given as :func:`optcomp.compose`'s arguments.

    Args:
        *items: mechanisms or ``(mechanism, count)`` pairs, as for :func:`optcomp.compose`. An
            :class:`optcomp.interop.EventComposition` is exported with its own relation (use its
            ``to_dp_event_json()`` method).
        neighbouring: the relation the mechanisms' parameters are stated for (module docstring);
            the event tree does not record it, so archive it beside the JSON.

    Returns:
        One event: the single item's event, a ``SelfComposedDpEvent`` for a count > 1, a
        ``ComposedDpEvent`` for several items, ``NoOpDpEvent`` for none.

    Raises:
        ValueError: a mechanism without a DpEvent, or one not defined under ``neighbouring``.
    """
    substitution = check_neighbouring(neighbouring) == "substitution"
    events: list[dict[str, Any]] = []
    for item in items:
        mechanism, k = item if isinstance(item, tuple) and len(item) == 2 else (item, 1)
        k = check_int("count", k, minimum=1)
        event = _event(mechanism, substitution)
        events.append(event if k == 1 else {"class_name": "SelfComposedDpEvent", "event": event, "count": k})
    if not events:
        return {"class_name": "NoOpDpEvent"}
    if len(events) == 1:
        return events[0]
    return {"class_name": "ComposedDpEvent", "events": events}

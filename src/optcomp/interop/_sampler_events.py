"""dp_accounting's sampler events → optcomp mechanisms (``docs/interop.md``, ``docs/samplers.md``).

* ``MixtureOfGaussiansDpEvent(standard_deviation, sensitivities, sampling_probs)``: the pair
  (Σ pᵢ N(cᵢ, σ²), N(0, σ²)) and its swap, as the event states it, under either relation →
  :class:`~optcomp.mechanisms.MixtureOfGaussians`. σ = 0 is non-private (as in dp_accounting);
  shifts that are all 0 are a no-op.
* ``TruncatedSubsampledGaussianDpEvent(dataset_size, sampling_probability, truncated_batch_size,
  noise_multiplier)`` (dp_accounting 0.6, arXiv 2508.15089): add/remove only →
  :class:`~optcomp.mechanisms.TruncatedPoissonGaussian` (a dominating pair that shows the truncation
  event; dp_accounting's number for the same event lies above it, see ``docs/samplers.md``).
  A zero rate, cap or dataset is a no-op; σ = 0 is non-private.

* ``DiscreteGaussianDpEvent(sigma, sensitivity=1, dimension=None)`` (dp_accounting after 0.6; not in its 0.6
  release): an integer query of ℓ₂ sensitivity Δ with N_ℤ(0, σ²) noise in each of ``dimension`` coordinates
  (``None``: unknown) → :class:`~optcomp.mechanisms.DiscreteGaussian` with the worst integer shift, refused by
  name where that shift is not determined (``docs/dgauss.md``). The event states the query's own
  sensitivity, so it is read as stated under either relation. σ = 0 is non-private; Δ < 1 admits no
  non-zero integer shift (a no-op).

Each reader takes the event's fields and its path in the tree and returns a mechanism, ``None`` (a
no-op) or :data:`NON_PRIVATE`; ``ValueError`` names the field and the path.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from optcomp.interop._relation import Neighbouring
from optcomp.mechanisms import (
    DiscreteGaussian,
    EpsilonDelta,
    Mechanism,
    MixtureOfGaussians,
    TruncatedPoissonGaussian,
)

#: The fully distinguishing pair (loss +∞ under P, −∞ under Q): what a ``NonPrivateDpEvent`` releases.
#: Its hockey-stick divergence is 1 at every ε, in composition with anything and so ε(δ) = ∞ for δ < 1.
NON_PRIVATE = EpsilonDelta(0.0, delta=1.0)

Reader = Callable[[dict[str, Any], str, Neighbouring], Mechanism | None]


def _reals(path: str, value: object) -> list[float]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or not value:
        raise ValueError(f"{path} must be a non-empty list of real numbers, got {value!r}")
    out = []
    for i, v in enumerate(value):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or math.isnan(float(v)):
            raise ValueError(f"{path}[{i}] must be a real number, got {v!r}")
        out.append(float(v))
    return out


def _number(path: str, value: object, *, integer: bool = False) -> float:
    real = isinstance(value, (int, float)) and not isinstance(value, bool) and (isinstance(value, int) or not integer)
    if not isinstance(value, (int, float)) or not real or math.isnan(float(value)) or float(value) < 0:
        kind = "an integer" if integer else "a real number"
        raise ValueError(f"{path} must be {kind} >= 0, got {value!r}")
    return float(value)


def mixture_of_gaussians(fields: dict[str, Any], path: str, neighbouring: Neighbouring) -> Mechanism | None:
    """``MixtureOfGaussiansDpEvent`` → ``MixtureOfGaussians`` (module docstring)."""
    del neighbouring  # the event states the pair itself
    sigma = _number(f"{path}.standard_deviation", fields["standard_deviation"])
    shifts = _reals(f"{path}.sensitivities", fields["sensitivities"])
    probs = _reals(f"{path}.sampling_probs", fields["sampling_probs"])
    if len(shifts) != len(probs):
        raise ValueError(
            f"{path}: sensitivities and sampling_probs must have one length, got {len(shifts)} and {len(probs)}"
        )
    if any(c < 0 for c in shifts):
        raise ValueError(f"{path}.sensitivities must be >= 0 (optcomp's law), got {shifts!r}")
    if all(c == 0 or p == 0 for c, p in zip(shifts, probs, strict=True)):
        return None
    if sigma == 0.0:
        return NON_PRIVATE
    try:
        return MixtureOfGaussians(sigma, sensitivities=tuple(shifts), probabilities=tuple(probs))
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from err


def truncated_subsampled_gaussian(
    fields: dict[str, Any], path: str, neighbouring: Neighbouring
) -> Mechanism | None:
    """``TruncatedSubsampledGaussianDpEvent`` → ``TruncatedPoissonGaussian`` (module docstring)."""
    if neighbouring != "add_remove":
        raise ValueError(
            f"TruncatedSubsampledGaussianDpEvent at {path} is supported under add/remove only (optcomp's "
            "law is derived for that relation); use neighbouring='add_remove'"
        )
    n = int(_number(f"{path}.dataset_size", fields["dataset_size"], integer=True))
    q = _number(f"{path}.sampling_probability", fields["sampling_probability"])
    if q > 1.0:
        raise ValueError(f"{path}.sampling_probability must be in [0, 1], got {q!r}")
    b = int(_number(f"{path}.truncated_batch_size", fields["truncated_batch_size"], integer=True))
    sigma = _number(f"{path}.noise_multiplier", fields["noise_multiplier"])
    if n == 0 or b == 0 or q == 0.0:
        return None
    if sigma == 0.0:
        return NON_PRIVATE
    return TruncatedPoissonGaussian(sigma, dataset_size=n, sampling_rate=q, max_batch_size=b)


def discrete_gaussian(fields: dict[str, Any], path: str, neighbouring: Neighbouring) -> Mechanism | None:
    """``DiscreteGaussianDpEvent`` → ``DiscreteGaussian`` (module docstring)."""
    del neighbouring  # the event states the query's sensitivity itself
    sigma = _number(f"{path}.sigma", fields["sigma"])
    sensitivity = _number(f"{path}.sensitivity", fields["sensitivity"])
    dimension = fields["dimension"]
    if dimension is not None and (isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 1):
        raise ValueError(f"{path}.dimension must be an integer >= 1 or null (unknown), got {dimension!r}")
    if sensitivity < 1.0:  # no non-zero integer shift moves by less than 1
        return None
    if sigma == 0.0:
        return NON_PRIVATE
    try:
        return DiscreteGaussian(sigma, sensitivity=sensitivity, dimension=dimension, norm="l2")
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from err


#: Defaults of event fields dp_accounting declares with one (the JSON may leave them out).
FIELD_DEFAULTS: dict[str, dict[str, Any]] = {"DiscreteGaussianDpEvent": {"sensitivity": 1.0, "dimension": None}}

#: event class name → (its fields in dp_accounting's order, its reader).
SAMPLER_EVENTS: dict[str, tuple[tuple[str, ...], Reader]] = {
    "MixtureOfGaussiansDpEvent": (
        ("standard_deviation", "sensitivities", "sampling_probs"),
        mixture_of_gaussians,
    ),
    "TruncatedSubsampledGaussianDpEvent": (
        ("dataset_size", "sampling_probability", "truncated_batch_size", "noise_multiplier"),
        truncated_subsampled_gaussian,
    ),
    # dp_accounting after 0.6 (python/dp_accounting/dp_accounting/dp_event.py): sigma, sensitivity, dimension
    "DiscreteGaussianDpEvent": (("sigma", "sensitivity", "dimension"), discrete_gaussian),
}

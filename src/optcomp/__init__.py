"""optcomp: optimal, certified privacy accounting.

Four capabilities, one vocabulary (:class:`optcomp.Bound`):

* :mod:`optcomp.optimal`, :mod:`optcomp.bounds`, :mod:`optcomp.region` — optimal composition of
  (ε, δ)-DP black boxes (Kairouz–Oh–Viswanath; Murtagh–Vadhan) and the classic theorems.
* :mod:`optcomp.pld`, :mod:`optcomp.mechanisms` — privacy loss distributions with certified
  pessimistic/optimistic brackets, FFT composition, the standard mechanisms, subsampling.
* :mod:`optcomp.fdp` — f-DP and Gaussian DP (Dong–Roth–Su).
* :mod:`optcomp.calibrate`, :mod:`optcomp.dpsgd` — noise calibration and DP-SGD accounting.
* :mod:`optcomp.rdp` — Rényi curves; budgets stated in zCDP or RDP (``ZeroConcentrated``, ``Renyi``) composed
  and converted to (ε, δ) by the closed form and the certified optimal conversion.

Everything here loads on first attribute access (PEP 562): ``import optcomp`` imports neither numpy nor
scipy, so the command line starts fast; ``optcomp.Gaussian``, ``from optcomp import compose`` and every
public submodule and subpackage (``optcomp.dpsgd.epsilon(...)``; the list is read from the package
directory) are imported the first time they are used. :data:`_EXPORTS` maps each name at the root to the
module that defines it; a new root name is one line there (and one in the ``TYPE_CHECKING`` block).
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what static checkers see; at run time each name is imported on first access
    from optcomp._numerics import DEFAULT_ACCURACY, Accuracy, Bound
    from optcomp.composition import compose, tensor_bracket
    from optcomp.mechanisms import (
        BoundedRange,
        DiscreteLaplace,
        DiscretePair,
        EpsilonDelta,
        ExponentialMechanism,
        Gaussian,
        KaryRandomizedResponse,
        Laplace,
        LaplaceNoisyMax,
        Mechanism,
        PermuteAndFlip,
        PoissonSubsampled,
        RandomizedResponse,
        Renyi,
        ShiftedTruncatedLaplace,
        Staircase,
        SubsampledWithoutReplacement,
        TruncatedLaplace,
        ZeroConcentrated,
        privacy_loss_laws,
    )
    from optcomp.pld import GridTooLargeError  # the engines' refusal of a too-fine grid, at the root
    from optcomp.queries import Composition

__version__ = "0.1.0"

#: Root name → the module that defines it (imported on first access).
_EXPORTS: dict[str, str] = {
    "DEFAULT_ACCURACY": "optcomp._numerics",
    "Accuracy": "optcomp._numerics",
    "Bound": "optcomp._numerics",
    "compose": "optcomp.composition",
    "tensor_bracket": "optcomp.composition",
    "Composition": "optcomp.queries",
    "GridTooLargeError": "optcomp.pld",
    **dict.fromkeys(
        (
            "DiscreteLaplace", "DiscretePair", "EpsilonDelta", "Gaussian", "KaryRandomizedResponse", "Laplace",
            "Mechanism", "PoissonSubsampled", "RandomizedResponse", "ShiftedTruncatedLaplace", "Staircase",
            "SubsampledWithoutReplacement", "TruncatedLaplace", "privacy_loss_laws", "Renyi", "ZeroConcentrated",
            "BoundedRange", "ExponentialMechanism", "PermuteAndFlip", "LaplaceNoisyMax",
        ),
        "optcomp.mechanisms",
    ),
}


def _submodule_names() -> frozenset[str]:
    """Every public submodule and subpackage of optcomp (names not starting with "_"), read from the
    package directory: nothing to keep in sync by hand when a module is added."""
    return frozenset(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))


#: Submodules reachable as attributes of the package, imported on first access (PEP 562).
_SUBMODULES = _submodule_names()


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value  # later accesses skip this hook
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f"optcomp.{name}")
    raise AttributeError(f"module 'optcomp' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _SUBMODULES | set(_EXPORTS))


__all__ = [
    "DEFAULT_ACCURACY",
    "Accuracy",
    "Bound",
    "BoundedRange",
    "Composition",
    "DiscreteLaplace",
    "DiscretePair",
    "EpsilonDelta",
    "ExponentialMechanism",
    "Gaussian",
    "GridTooLargeError",
    "KaryRandomizedResponse",
    "Laplace",
    "LaplaceNoisyMax",
    "Mechanism",
    "PermuteAndFlip",
    "PoissonSubsampled",
    "RandomizedResponse",
    "Renyi",
    "ShiftedTruncatedLaplace",
    "Staircase",
    "SubsampledWithoutReplacement",
    "TruncatedLaplace",
    "ZeroConcentrated",
    "__version__",
    "compose",
    "privacy_loss_laws",
    "tensor_bracket",
]

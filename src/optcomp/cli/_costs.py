"""Up-front cost of composing many *distinct* mechanisms on the PLD grid (``account --mech/--config``,
``--dp-event``, ``--opacus-history``): refused beyond the limits with the size that fits, and otherwise
announced in the spinner's line with its estimate (the engine has no progress hook to draw a bar with).

Equal mechanisms are pooled and Gaussians merge into one (Dong–Roth–Su Cor. 3.3), so the cost is per
distinct law. Measured on one core (the default accuracy): 300 distinct Poisson-subsampled Gaussians took
16–19 s and 0.47 GB, 1,000 took 43 s and 1.2 GB; 3,000 distinct Laplace laws 5.8 s and 0.16 GB, 100,000 took 570 s (under load).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from optcomp.cli._common import TIME_LIMIT_S, check_feasible, memory_limit_bytes

#: Seconds and bytes per distinct law whose pair is a mixture (subsampled, user-level, truncated).
_MIXTURE_S = 0.05
_MIXTURE_BYTES = 1.5e6
#: Seconds and bytes per other distinct law (Laplace, randomized response, ...).
_LAW_S = 7.0e-3
_LAW_BYTES = 3.0e4
#: Seconds of the adaptive bounded-range recursion per k^1.5 BR steps at the default width (measured: 100 steps
#: 0.45 s, 1,000 steps at width 1e-3 3.1 s, one core; the lattice, the windows and the step count all grow).
_BR_S_PER_K15 = 5e-4
#: Class names of the mixture pairs (the costly laws).
_MIXTURES = frozenset({"PoissonSubsampled", "SubsampledWithoutReplacement", "MixtureOfGaussians",
                       "TruncatedPoissonGaussian"})


def _duration(seconds: float) -> str:
    return f"about {seconds:.0f} s" if seconds < 120 else f"about {seconds / 60:.0f} min"


def check_composition_cost(items: Sequence[tuple[Any, int]]) -> str:
    """Refuse (ValueError) a composition whose distinct laws exceed the time or memory limit; else the
    spinner's description of the work, with its estimate when it is more than a few seconds."""
    from optcomp.mechanisms import BoundedRange, Gaussian

    br_steps = sum(k for m, k in items if isinstance(m, BoundedRange))
    if br_steps:
        most = int((TIME_LIMIT_S / _BR_S_PER_K15) ** (2 / 3))
        check_feasible(f"the adaptive composition of {br_steps} bounded-range steps", _BR_S_PER_K15 * br_steps**1.5,
                       0.0, f"use at most {most} bounded-range steps (count= of exponential)")
    laws = {m for m, _ in items if not isinstance(m, (Gaussian, BoundedRange))}
    mixtures = sum(type(m).__name__ in _MIXTURES for m in laws)
    others = len(laws) - mixtures
    seconds = _MIXTURE_S * mixtures + _LAW_S * others
    memory = _MIXTURE_BYTES * mixtures + _LAW_BYTES * others
    cap = memory_limit_bytes()
    per = max(_MIXTURE_S / TIME_LIMIT_S, _MIXTURE_BYTES / cap if math.isfinite(cap) else 0.0) if mixtures else max(
        _LAW_S / TIME_LIMIT_S, _LAW_BYTES / cap if math.isfinite(cap) else 0.0)
    check_feasible(f"composing {len(laws)} distinct mechanisms", seconds, memory,
                   f"use at most {int(1 / per)} distinct ones (pool equal mechanisms with count=)")
    what = f"composing {len(laws)} distinct privacy loss distributions" if laws else "composing"
    return what + (f" ({_duration(seconds)})" if seconds >= 10 else "")

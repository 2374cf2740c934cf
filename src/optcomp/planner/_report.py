"""Plan results as plain JSON-ready dictionaries (the CLI's ``--json`` and the web API share this)."""

from __future__ import annotations

import math
from typing import Any

from optcomp.planner._allocate import ModeResult


def _num(x: float) -> float | str:
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def result_to_dict(results: dict[str, ModeResult]) -> dict[str, Any]:
    """``{"modes": {mode: {...}}}`` with every float finite or the string ``"inf"``."""
    modes: dict[str, Any] = {}
    for mode, r in results.items():
        modes[mode] = {
            "scale": r.scale,
            "epsilon_certified": _num(r.epsilon_certified),
            "epsilon_budget": r.epsilon_budget,
            "delta": r.delta,
            "feasible": r.epsilon_certified <= r.epsilon_budget,
            "evaluations": r.evaluations,
            "seconds": r.seconds,
            "statistics": [
                {
                    "name": s.name,
                    "kind": s.kind,
                    "mechanism": s.mechanism,
                    "epsilon": s.epsilon,
                    "delta": s.delta,
                    "noise": [_num(x) for x in s.noise],
                    "accuracy": _num(s.accuracy),
                    "accuracy_simultaneous": _num(s.accuracy_simultaneous),
                    "locked": s.locked,
                    "gain_vs_basic": _num(s.gain_vs_basic),
                }
                for s in r.statistics
            ],
        }
    return {"modes": modes}

"""f-DP (trade-off function) truths: group privacy, attack power (Dong–Roth–Su)."""

from __future__ import annotations

import mpmath

from tests.tolerances import MPMATH_DPS


def group_epsilon_delta_tradeoff(epsilon: float, delta: float, g: int, alpha: float) -> mpmath.mpf:
    """1 − h^{∘g}(α), h(x) = 1 − f_{ε,δ}(x) = min{1, δ + e^ε x, 1 − e^{−ε}(1 − δ − x)}: the group-privacy
    curve of (ε, δ)-DP (Dong–Roth–Su Thm 2.14 with DRS eq. (5)), at ``MPMATH_DPS`` digits."""
    with mpmath.workdps(MPMATH_DPS):
        e, d, x = mpmath.mpf(epsilon), mpmath.mpf(delta), mpmath.mpf(alpha)
        for _ in range(g):
            x = min(mpmath.mpf(1), d + mpmath.exp(e) * x, 1 - mpmath.exp(-e) * (1 - d - x))
        return 1 - x

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


def group_epsilon_delta_delta(epsilon: float, delta: float, g: int) -> float:
    """δ of the group-g statement of (ε, δ)-DP at gε: δ(1 + e^ε + … + e^{(g−1)ε}) (Dong–Roth–Su Thm 2.14 with
    eq. (5): the knot of 1 − h^{∘g} at α = 0 moves to gε), at ``MPMATH_DPS`` digits, as a float."""
    with mpmath.workdps(MPMATH_DPS):
        e = mpmath.mpf(epsilon)
        return float(mpmath.mpf(delta) * mpmath.fsum(mpmath.exp(i * e) for i in range(g)))


def gaussian_attack_tpr(mu: float, fpr: float) -> mpmath.mpf:
    """The most powerful test's true-positive rate at false-positive rate α against μ-GDP:
    1 − G_μ(α) = 1 − Φ(Φ⁻¹(1 − α) − μ) (Dong–Roth–Su eq. (3)), with Φ⁻¹(1 − α) = −√2 erfinv(2α − 1), at
    ``MPMATH_DPS`` digits (0 at α = 0, 1 at α = 1)."""
    with mpmath.workdps(MPMATH_DPS):
        if fpr == 0:
            return mpmath.mpf(0)
        if fpr == 1:
            return mpmath.mpf(1)
        return 1 - mpmath.ncdf(-mpmath.sqrt(2) * mpmath.erfinv(2 * mpmath.mpf(fpr) - 1) - mu)

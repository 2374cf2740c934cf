"""High-precision values of the log-space helpers of ``optcomp._numerics``, computed from their definitions."""

from __future__ import annotations

import math
from collections.abc import Sequence

import mpmath

from tests.tolerances import MPMATH_DPS


def log1mexp_exact(x: float) -> float:
    """log(1 − e^x) for x < 0 at ``MPMATH_DPS`` digits (log1p(−e^x) for x < −½, log(−expm1(x)) above,
    where each form keeps its digits), as a float."""
    with mpmath.workdps(MPMATH_DPS):
        xm = mpmath.mpf(x)
        return float(mpmath.log1p(-mpmath.exp(xm)) if x < -0.5 else mpmath.log(-mpmath.expm1(xm)))


def log_sum_exp_exact(xs: Sequence[float]) -> mpmath.mpf:
    """log Σ e^{x_i} over the finite terms, from the floats' exact values at ``MPMATH_DPS`` digits."""
    with mpmath.workdps(MPMATH_DPS):
        return mpmath.log(mpmath.fsum(mpmath.exp(mpmath.mpf(x)) for x in xs if x != -math.inf))

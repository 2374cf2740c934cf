"""Vectorised log-space helpers for tail functions of privacy-loss laws."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from optcomp._numerics import FloatArray
from optcomp._rounding import log1mexp_array

#: Above this argument, log(expm1(y)) is computed as y + log1p(−e^{−y}) (no overflow, full accuracy).


def as_array(x: npt.ArrayLike) -> FloatArray:
    """``x`` as a float64 array (0-d kept 0-d)."""
    return np.asarray(x, dtype=np.float64)






def log_diff_exp(a: npt.ArrayLike, b: npt.ArrayLike) -> FloatArray:
    """log(eᵃ − eᵇ) for a ≥ b elementwise (−inf where equal; b > a by rounding is read as equality)."""
    a = as_array(a)
    b = as_array(b)
    d = np.minimum(b - a, 0.0)
    with np.errstate(invalid="ignore"):
        out = a + log1mexp_array(np.where(np.isnan(d), 0.0, d))
    return np.where(np.isneginf(a), -np.inf, out)

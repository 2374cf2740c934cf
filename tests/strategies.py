"""Hypothesis strategies drawn from the parameter domains the library declares (``_numerics.Domain``).

One declaration per domain serves validation, error messages and these draws (scipy.stats' idea):
:func:`valid` draws inside a domain, endpoints included where closed; :func:`invalid` draws values
that the domain's validator must refuse (NaN, the open endpoints, values just outside, wrong types).
"""

from __future__ import annotations

import math

from hypothesis import strategies as st

from optcomp._numerics import Domain

#: Draws are kept inside this magnitude so that the laws they build stay cheap (the domain is wider).
PRACTICAL_MAX = 1e6
PRACTICAL_MIN = 1e-3


def valid(domain: Domain, *, practical: bool = True) -> st.SearchStrategy[float] | st.SearchStrategy[int]:
    """Values inside ``domain`` (clipped to a practical range when ``practical``)."""
    if domain.integer:
        hi = int(domain.upper) if math.isfinite(domain.upper) else int(domain.lower) + 50
        return st.integers(min_value=int(domain.lower), max_value=hi)
    lo, hi = domain.lower, domain.upper
    if practical:
        lo = max(lo, -PRACTICAL_MAX)
        hi = min(hi, PRACTICAL_MAX)
        if lo == 0.0 and not domain.lower_closed:
            lo = PRACTICAL_MIN
    exclude_min = not domain.lower_closed and lo == domain.lower
    exclude_max = not domain.upper_closed and hi == domain.upper
    draws = st.floats(
        min_value=lo,
        max_value=hi,
        exclude_min=exclude_min,
        exclude_max=exclude_max,
        allow_nan=False,
        allow_infinity=False,
    )
    if domain.upper_closed and math.isinf(domain.upper):
        return draws | st.just(math.inf)
    return draws


def invalid(domain: Domain) -> st.SearchStrategy[object]:
    """Values the domain's validator must refuse with a ``ValueError``."""
    outside: list[object] = [math.nan, "1", None, True]
    if math.isfinite(domain.lower):
        outside.append(domain.lower - 1.0)
        if not domain.lower_closed:
            outside.append(domain.lower)
    elif not domain.lower_closed:
        outside.append(-math.inf)
    if math.isfinite(domain.upper):
        outside.append(domain.upper + 1.0)
        if not domain.upper_closed:
            outside.append(domain.upper)
    elif not domain.upper_closed:
        outside.append(math.inf)
    if domain.integer:
        outside.append(domain.lower + 0.5)
    return st.sampled_from(outside)

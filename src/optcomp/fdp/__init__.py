"""f-DP and Gaussian DP (Dong, Roth & Su, "Gaussian Differential Privacy").

Trade-off functions are values (:class:`TradeOff`); Gaussian DP has exact closed forms
(:func:`gdp_delta`, :func:`gdp_epsilon`, :func:`gdp_mu_for`). Anything approximate says so in its name
(``clt_mu_estimate``) and carries its certified band where the paper gives one.
"""

from __future__ import annotations

from optcomp.fdp._gdp import gdp_compose, gdp_delta, gdp_epsilon, gdp_group, gdp_log_delta, gdp_mu_for
from optcomp.fdp._tradeoff import (
    GaussianTradeOff,
    PiecewiseLinearTradeOff,
    TradeOff,
    TradeOffBracket,
    alpha_grid,
    epsilon_delta_tradeoff,
    from_distributions,
    from_epsilon_delta_family,
    gaussian_tradeoff,
)

__all__ = [
    "GaussianTradeOff",
    "PiecewiseLinearTradeOff",
    "TradeOff",
    "TradeOffBracket",
    "alpha_grid",
    "epsilon_delta_tradeoff",
    "from_distributions",
    "from_epsilon_delta_family",
    "gaussian_tradeoff",
    "gdp_compose",
    "gdp_delta",
    "gdp_epsilon",
    "gdp_group",
    "gdp_log_delta",
    "gdp_mu_for",
]

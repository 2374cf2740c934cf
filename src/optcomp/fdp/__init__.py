"""f-DP and Gaussian DP (Dong, Roth & Su, "Gaussian Differential Privacy").

Trade-off functions are values (:class:`TradeOff`); Gaussian DP has exact closed forms
(:func:`gdp_delta`, :func:`gdp_epsilon`, :func:`gdp_mu_for`). Anything approximate says so in its name
(``CLTResult.mu_estimate``, ``noisy_sgd_mu_estimate``) and carries its certified band where the paper gives one.
"""

from __future__ import annotations

from optcomp.fdp._compose import (
    BERRY_ESSEEN_CONSTANT,
    MAX_COMPOSITION_K,
    CLTResult,
    EpsilonDeltaComposition,
    Functionals,
    clt,
    clt_epsilon_delta,
    delta_scaled,
    epsilon_delta_composition,
    epsilon_dp_functionals,
    functionals,
    tensor,
)
from optcomp.fdp._engine import tensor_items
from optcomp.fdp._gdp import (
    gdp_compose,
    gdp_delta,
    gdp_delta_bound,
    gdp_epsilon,
    gdp_group,
    gdp_log_delta,
    gdp_log_delta_estimate,
    gdp_mu_for,
)
from optcomp.fdp._group import group_privacy
from optcomp.fdp._group_profile import GroupEpsilon, group_profile
from optcomp.fdp._readouts import advantage, attack_tpr, delta_at, epsilon_at, from_delta_curve, from_pld
from optcomp.fdp._subsample import noisy_sgd_mu_estimate, subsample
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
    "BERRY_ESSEEN_CONSTANT",
    "MAX_COMPOSITION_K",
    "CLTResult",
    "EpsilonDeltaComposition",
    "Functionals",
    "GaussianTradeOff",
    "GroupEpsilon",
    "PiecewiseLinearTradeOff",
    "TradeOff",
    "TradeOffBracket",
    "advantage",
    "alpha_grid",
    "attack_tpr",
    "clt",
    "clt_epsilon_delta",
    "delta_at",
    "delta_scaled",
    "epsilon_at",
    "epsilon_delta_composition",
    "epsilon_delta_tradeoff",
    "epsilon_dp_functionals",
    "from_delta_curve",
    "from_distributions",
    "from_epsilon_delta_family",
    "from_pld",
    "functionals",
    "gaussian_tradeoff",
    "gdp_compose",
    "gdp_delta",
    "gdp_delta_bound",
    "gdp_epsilon",
    "gdp_group",
    "gdp_log_delta",
    "gdp_log_delta_estimate",
    "gdp_mu_for",
    "group_privacy",
    "group_profile",
    "noisy_sgd_mu_estimate",
    "subsample",
    "tensor",
    "tensor_items",
]

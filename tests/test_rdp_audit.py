"""An independent audit of the Rényi conversion (issue 35 item 1): every bracket against truths computed
another way.

The truth of a curve's conversion is the best **two-point** law (``tests/_references/rdp_binary.py``: any
pair's optimal set is a binary post-processing that meets the curve too), found by a float search of its
own and re-checked at 50 digits; its ε is a lower bound on the truth (the pair is a law with the curve), so
every upper end must be at least it, and the search is close to exact, so every lower end must be at most
it. Compositions: a run of the items is what the lower end must be attained by (basic composition bounds
the run's ε from above where the curve-known box is nearly silent).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import optcomp
from optcomp import rdp
from optcomp.mechanisms import Gaussian, Laplace, Renyi, ZeroConcentrated
from tests._references import (
    BinaryCurve,
    best_pair_epsilon,
    gdp_epsilon,
    pair_epsilon,
    pair_meets,
    zcdp_closed_form_epsilon,
)
from tests.tolerances import RENYI_BRACKET_RTOL

#: The reference pair's ε is a float search's: the lower end may exceed it by this relative amount.
REFERENCE_RTOL = 1e-9


def _cks_epsilon(orders: list[float], values: list[float], delta: float) -> float:
    """The closed form (Canonne–Kamath–Steinke Prop. 12) over finitely many orders, in plain floats with a
    relative margin: an upper bound on the ε of every law with that curve."""
    best = min(v + math.log1p(-1.0 / a) - (math.log(delta) + math.log(a)) / (a - 1.0) for a, v in zip(orders, values, strict=True))
    return best * (1.0 + 1e-12) + 1e-15


# -- compositions: the lower end must be a run's ---------------------------------------------------------


def test_a_nearly_silent_zcdp_box_beside_a_gaussian_has_the_gaussians_epsilon() -> None:
    """ZeroConcentrated(1e-6) ⊗ N(μ = 1): the box is (ε₁, 1e-9)-DP with ε₁ ≈ 0.0091 (CKS), so by basic
    composition the run is (ε_G(1e-5 − 1e-9) + ε₁, 1e-5)-DP, ε ≤ 4.387. The summed curve's worst law
    (ε ≥ 4.728) is not a run of these items: its ε is no lower end for them."""
    b = optcomp.compose(ZeroConcentrated(1e-6), Gaussian(1.0)).epsilon(1e-5)
    run_upper = float(gdp_epsilon(1.0, 1e-5 - 1e-9) + zcdp_closed_form_epsilon(1e-6, 1e-9))
    assert b.lower <= run_upper < b.upper
    assert b.lower >= float(gdp_epsilon(1.0, 1e-5)) * (1 - 1e-9)  # the Gaussian itself is a run


def test_a_nearly_silent_renyi_box_beside_a_laplace() -> None:
    """A Renyi box with tiny ε at α = 2, 8, 32 beside Laplace(b = 1): the same basic-composition bound."""
    orders, values = [2.0, 8.0, 32.0], [1e-7, 4e-7, 1.6e-6]
    b = optcomp.compose(Renyi(orders, values), Laplace(1.0)).epsilon(1e-6)
    eps1 = _cks_epsilon(orders, values, 1e-9)
    laplace_only = optcomp.compose(Laplace(1.0)).epsilon(1e-6 - 1e-9)
    assert b.lower <= laplace_only.upper + eps1


def test_one_box_alone_keeps_its_witness() -> None:
    """A single curve-known item (count 1) is its own worst run: the witness law stays the lower end."""
    b = optcomp.compose(ZeroConcentrated(0.5)).epsilon(1e-5)
    assert b.witness is not None and b.lower > float(gdp_epsilon(1.0, 1e-5))


# -- the optimal conversion against the two-point reference ---------------------------------------------


def _dpsgd_curve() -> tuple[list[float], list[float]]:
    orders = np.array(rdp.DEFAULT_ORDERS)
    return orders.tolist(), (1000 * rdp.poisson_subsampled_gaussian(0.8, 0.01, orders=orders)).tolist()


@pytest.mark.parametrize("delta", [1e-5, 1e-10, 1e-12])
def test_dpsgd_curve_bracket_holds_the_two_point_truth_and_is_narrow(delta: float) -> None:
    """The DP-SGD curve (σ = 0.8, q = 0.01, 1000 steps) at dp_accounting's orders: the bracket contains
    the best two-point law's ε and meets the default relative width down to δ = 1e-12."""
    orders, values = _dpsgd_curve()
    b = optcomp.compose(Renyi(orders, values)).epsilon(delta)
    curve = BinaryCurve(orders=tuple(orders), values=tuple(values))
    pair = best_pair_epsilon(curve, delta)
    assert pair_meets(curve, pair.p, pair.q)
    truth_below = float(pair_epsilon(pair.p, pair.q, delta))
    assert truth_below <= b.upper
    assert b.lower <= truth_below * (1 + REFERENCE_RTOL)
    assert b.relative_width_above(0.01) <= RENYI_BRACKET_RTOL

"""optcomp.matrix releases: the un-amplified GDP route and amplified BandMF, against the papers' and peers' numbers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from optcomp import DEFAULT_ACCURACY, matrix
from tests._references.gdp import gdp_epsilon
from tests._references.matrix import (
    BANDMF_PER_COLUMN_UPPER,
    BANDMF_PLD_EPSILON,
    GBOARD_PLD_EPSILON,
    GBOARD_RDP_EPSILON,
    TREE_EVENT_GDP_EPSILON,
    poisson_product_delta,
)
from tests.tolerances import QUADRATURE_ATOL

GBOARD = matrix.from_min_separation(313, 6)


def test_gboard_tree_bracket_and_rdp_beside_it() -> None:
    r = matrix.release(matrix.tree(2000), GBOARD, noise_multiplier=7.0)
    assert r.sensitivity.squared_lower == r.sensitivity.squared_upper == 79
    eps = r.epsilon(1e-10)
    assert round(eps.lower, 6) <= 8.526093 <= round(eps.upper, 6)  # the target
    assert eps.lower <= GBOARD_PLD_EPSILON  # dp_accounting's pessimistic PLD lies at or above the truth
    assert eps.contains(float(gdp_epsilon(math.sqrt(79) / 7, 1e-10)))
    assert round(r.rdp_epsilon(1e-10), 6) == GBOARD_RDP_EPSILON
    assert r.rdp_epsilon(1e-10) > eps.upper
    assert "cap of 6 participations is below the 7" in r.statement()


def test_single_tree_matches_the_tree_event() -> None:
    eps = matrix.epsilon(matrix.tree(2000), matrix.single(), noise_multiplier=7.0, delta=1e-10)
    assert round(eps.lower, 6) <= TREE_EVENT_GDP_EPSILON <= round(eps.upper, 6)


def test_relations_and_normalizers() -> None:
    s = matrix.bsr(200, 8)
    p = matrix.min_sep(8, 5)
    zero = matrix.release(s, p, noise_multiplier=3.0, normalizer="max_column_norm")
    sub = matrix.release(s, p, noise_multiplier=3.0, normalizer="max_column_norm", relation="substitution")
    assert sub.mu.lower >= 2 * zero.mu.lower * (1 - 1e-15)
    assert zero.mu.contains(math.sqrt(float(zero.sensitivity.squared_lower / zero.zeta_squared[0])) / 3.0)
    absolute = matrix.release(s, p, noise_multiplier=3.0)
    assert absolute.mu.upper > zero.mu.upper  # ζ > 1 for BSR
    d = absolute.delta(1.0)
    assert 0.0 < d.lower <= d.upper < 1.0


def test_no_amplification_bsr_matches_the_note() -> None:
    eps = matrix.epsilon(matrix.bsr(2000, 64), matrix.min_sep(64, 32), noise_multiplier=6.0, delta=1e-5,
                         normalizer="max_column_norm")
    assert round(eps.upper, 4) == 4.0755


def test_bandmf_brackets_the_peers_and_the_refinement_is_below() -> None:
    s = matrix.bsr(2000, 64)
    kw = {"cycle_length": 64, "sampling_rate": 500 / 781, "noise_multiplier": 6.0}
    plain = matrix.bandmf_epsilon(s, delta=1e-5, per_column=False, **kw)
    refined = matrix.bandmf_epsilon(s, delta=1e-5, partition_public=True, **kw)
    assert plain.contains(BANDMF_PLD_EPSILON)
    assert refined.upper <= BANDMF_PER_COLUMN_UPPER
    assert refined.upper <= plain.upper
    hidden = matrix.bandmf(s, **kw)
    assert "hidden" in hidden.statement() and "public" in matrix.bandmf(s, partition_public=True, **kw).statement()


def test_bandmf_is_monotone_in_q_and_sigma() -> None:
    s = matrix.bsr(64, 8)
    base = matrix.bandmf_epsilon(s, delta=1e-5, cycle_length=8, sampling_rate=0.3, noise_multiplier=2.0)
    more_q = matrix.bandmf_epsilon(s, delta=1e-5, cycle_length=8, sampling_rate=0.5, noise_multiplier=2.0)
    more_sigma = matrix.bandmf_epsilon(s, delta=1e-5, cycle_length=8, sampling_rate=0.3, noise_multiplier=3.0)
    assert more_q.lower >= base.lower and more_sigma.upper <= base.upper


def test_bandmf_variants_run_and_order() -> None:
    s = matrix.bsr(64, 8)
    kw = {"cycle_length": 8, "sampling_rate": 0.3, "noise_multiplier": 2.0}
    one = matrix.bandmf_epsilon(s, delta=1e-5, **kw)
    two = matrix.bandmf(s, examples_per_user=2, **kw).revealed_epsilon(1e-5)  # hidden partition: lower end 0
    assert two.lower >= one.upper * (1 - 1e-3)
    truncated = matrix.bandmf(s, group_size=100, max_batch_size=40, partition_public=True, **kw)
    assert truncated.relation == "add_remove" and "add/remove" in truncated.statement()
    bound = truncated.epsilon(1e-5)
    # lower end: the explicit pair's (x joins the batch at rate q_eff < q), so at most the untruncated run's ε;
    # upper end: the dominating pair's, which reveals the truncation and its sensitivity-2 branch (above it)
    assert 0.0 < bound.lower <= one.upper < bound.upper, (bound, one)
    with pytest.raises(ValueError, match="partition_public"):
        matrix.bandmf(s, group_size=100, max_batch_size=40, **kw)


def test_bandmf_per_column_groups_from_a_dense_banded_matrix_agree_with_toeplitz() -> None:
    s = matrix.bsr(40, 4)
    d = matrix.dense(s.dense_array())
    kw = {"cycle_length": 4, "sampling_rate": 0.5, "noise_multiplier": 1.5, "partition_public": True}
    a = matrix.bandmf_epsilon(s, delta=1e-6, **kw)
    b = matrix.bandmf_epsilon(d, delta=1e-6, **kw)
    assert a.lower <= b.upper and b.lower <= a.upper
    assert max(a.width, b.width) <= DEFAULT_ACCURACY.relative_width * max(a.upper, b.upper), (a, b)


def test_noise_multiplier_and_steps_land_on_the_safe_side() -> None:
    s = matrix.bsr(2000, 64)
    run = matrix.bandmf(s, cycle_length=64, sampling_rate=500 / 781, noise_multiplier=6.0)
    sigma = matrix.noise_multiplier(run, 2.0, 1e-5)  # per-column run: the inverse solver on its own ε
    at = matrix.bandmf_epsilon(s, delta=1e-5, cycle_length=64, sampling_rate=500 / 781, noise_multiplier=sigma)
    assert at.upper <= 2.0
    standard = matrix.noise_multiplier(matrix.bandmf(s, cycle_length=64, sampling_rate=500 / 781,
                                                     noise_multiplier=6.0, per_column=False), 2.0, 1e-5)
    assert sigma <= standard
    at = matrix.bandmf_epsilon(s, delta=1e-5, cycle_length=64, sampling_rate=500 / 781, noise_multiplier=standard,
                               per_column=False)
    assert at.upper <= 2.0
    n = matrix.steps(matrix.bandmf(matrix.bsr(640, 64), cycle_length=64, sampling_rate=0.1, noise_multiplier=2.0),
                     1.0, 1e-5)
    assert n % 64 == 0 and n >= 64


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: matrix.release(matrix.bsr(10, 2), matrix.single(), noise_multiplier=0.0), "noise_multiplier"),
        (lambda: matrix.release(matrix.bsr(10, 2), matrix.single(), noise_multiplier=-1.0), "noise_multiplier"),
        (lambda: matrix.release(matrix.dense(np.ones((3, 3))), matrix.single(), noise_multiplier=1.0), "lower-triangular"),
        (lambda: matrix.release(matrix.bsr(10, 2), matrix.single(), noise_multiplier=1.0, normalizer="x"), "normalizer"),
        (lambda: matrix.release(matrix.bsr(10, 2), matrix.single(), noise_multiplier=1.0, relation="x"), "relation"),
        (lambda: matrix.bandmf(matrix.tree(10), cycle_length=2, sampling_rate=0.5, noise_multiplier=1.0), "strategy"),
        (lambda: matrix.bandmf(matrix.bsr(10, 4), cycle_length=2, sampling_rate=0.5, noise_multiplier=1.0), "strategy"),
        (lambda: matrix.bandmf(matrix.bsr(10, 2), cycle_length=11, sampling_rate=0.5, noise_multiplier=1.0), "cycle_length"),
        (lambda: matrix.bandmf(matrix.bsr(10, 2), cycle_length=2, sampling_rate=0.0, noise_multiplier=1.0), "sampling_rate"),
        (lambda: matrix.bandmf(matrix.bsr(10, 2), cycle_length=2, sampling_rate=0.5, noise_multiplier=0.0), "noise_multiplier"),
        (lambda: matrix.bandmf(matrix.bsr(10, 2), cycle_length=2, sampling_rate=0.5, noise_multiplier=1.0,
                               partition="x"), "partition"),
        (lambda: matrix.bandmf(matrix.bsr(10, 2), cycle_length=2, sampling_rate=0.5, noise_multiplier=1.0,
                               group_size=5, partition_public=True), "max_batch_size"),
    ],
)
def test_bad_input_names_the_parameter(call: object, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        call()  # type: ignore[operator]


def test_bandmf_per_column_bracket_contains_the_explicit_pair_by_quadrature() -> None:
    # n = 3, two bands, cycle 2: group 0 holds columns 0 (‖c‖² = 1.25 = ζ²) and 2 (‖c‖² = 1, the last row):
    # its explicit pair is the product of two Poisson pairs with μ = (√1.25, 1)/(σζ); group 1 is dominated.
    sigma, q, eps = 0.8, 0.5, 1.0
    run = matrix.bandmf(matrix.bsr(3, 2), cycle_length=2, sampling_rate=q, noise_multiplier=sigma,
                        partition_public=True)
    zeta = math.sqrt(1.25)
    truth = poisson_product_delta([1.0 / sigma, 1.0 / (sigma * zeta)], q, eps)
    bound = run.delta(eps)
    assert bound.lower - QUADRATURE_ATOL <= truth <= bound.upper + QUADRATURE_ATOL

"""The discrete Gaussian (issue 35 item 2): exact lattice brackets against integer-bookkeeping convolutions,
the grid path, the worst-shift rule and its refusals, and the issue's numbers (the Gaussian is no proxy)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import optcomp
from optcomp import Accuracy
from optcomp._numerics import LossScaleError
from optcomp.mechanisms import (
    DiscreteGaussian,
    Gaussian,
    Laplace,
    PoissonSubsampled,
    group_mechanism,
    lattice_law,
    privacy_loss_laws,
)
from optcomp.mechanisms.discrete_gaussian import half_width, log_normaliser, pmf, worst_shift
from tests._references import dgauss_delta_bracket, dgauss_epsilon_reference, zcdp_conversion_epsilon
from tests.tolerances import DGAUSS_LATTICE_RTOL, EXACT_RTOL

#: (σ, k) of the issue's "done when": σ ∈ {0.5, 1, 2}, k ≤ 100.
CASES = [(s, k) for s in (0.5, 1.0, 2.0) for k in (1, 2, 7, 10, 100)]


#: Below this δ the reference's own truncation (10⁻⁷⁰ per coordinate) no longer resolves it.
_RESOLVED = 1e-50


def _inside(b: optcomp.Bound, ref: tuple[object, object]) -> bool:
    """The truth lies in both: they meet, and where the reference resolves δ our bracket holds all of it."""
    lo, hi = (float(x) for x in ref)  # type: ignore[arg-type]
    meet = b.lower <= hi and lo <= b.upper
    return meet and (lo < _RESOLVED or (b.lower <= lo and hi <= b.upper))


@pytest.mark.parametrize(("sigma", "k"), CASES)
@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-10])
def test_lattice_epsilon_contains_the_exact_convolution(sigma: float, k: int, delta: float) -> None:
    c = optcomp.compose((DiscreteGaussian(sigma), k))
    assert c.engine() == "lattice"
    b = c.epsilon(delta)
    ref = dgauss_epsilon_reference(sigma, (1,), k, delta)
    assert b.lower <= float(ref[1]) and float(ref[0]) <= b.upper, (b, ref)
    assert b.relative_width_above(1.0) <= DGAUSS_LATTICE_RTOL, b


@pytest.mark.parametrize(("sigma", "k"), CASES)
@pytest.mark.parametrize("epsilon", [0.0, 1.0, 4.0, 12.0])
def test_lattice_delta_contains_the_exact_convolution(sigma: float, k: int, epsilon: float) -> None:
    b = optcomp.compose((DiscreteGaussian(sigma), k)).delta(epsilon)
    ref = dgauss_delta_bracket(sigma, (1,), k, epsilon)
    assert _inside(b, ref), (b, [float(x) for x in ref])
    if float(ref[0]) > _RESOLVED:
        assert b.width <= DGAUSS_LATTICE_RTOL * b.upper, b


@pytest.mark.parametrize(
    ("sigma", "items", "shifts"),
    [
        (1.0, [((2,), 3)], (2, 2, 2)),
        (0.5, [((1,), 3), ((2,), 2)], (1, 1, 1, 2, 2)),
        (1.0, [((3, 4), 1)], (3, 4)),
        (2.0, [((1,), 2), ((3, 4), 1)], (1, 1, 3, 4)),
        (1.0, [((1, 1, 1, 1), 1)], (1, 1, 1, 1)),
    ],
)
def test_mixed_shifts_on_one_lattice(sigma: float, items: list[tuple[tuple[int, ...], int]], shifts: tuple[int, ...]) -> None:
    """Different integer shifts of one σ share a lattice (step gcd·/σ²): still exact."""
    c = optcomp.compose(*((DiscreteGaussian(sigma, shift=v), k) for v, k in items))
    assert c.engine() == "lattice"
    for delta in (1e-4, 1e-9):
        b = c.epsilon(delta)
        ref = dgauss_epsilon_reference(sigma, shifts, 1, delta)
        assert b.lower <= float(ref[1]) and float(ref[0]) <= b.upper, (b, ref)
        assert b.relative_width_above(1.0) <= DGAUSS_LATTICE_RTOL


@pytest.mark.parametrize(("sigma", "k", "shift"), [(1.0, 10, (1,)), (0.5, 7, (2,)), (2.0, 3, (3, 4))])
def test_grid_path_brackets_the_exact_law(sigma: float, k: int, shift: tuple[int, ...]) -> None:
    """An explicit grid step sends the same composition to the grid (the atoms law): certified there too."""
    c = optcomp.compose((DiscreteGaussian(sigma, shift=shift), k))
    ref = dgauss_epsilon_reference(sigma, shift, k, 1e-6)
    for step in (1e-2, 1e-3):
        b = c.epsilon(1e-6, accuracy=Accuracy(grid_step=step))
        assert b.lower <= float(ref[1]) and float(ref[0]) <= b.upper, (step, b, ref)
    exact = c.epsilon(1e-6)
    assert exact.lower >= c.epsilon(1e-6, accuracy=Accuracy(grid_step=1e-3)).lower


def test_mixed_with_other_mechanisms_uses_the_grid_and_dominates_each_part() -> None:
    dg = optcomp.compose((DiscreteGaussian(1.0), 10))
    both = optcomp.compose((DiscreteGaussian(1.0), 10), (Laplace(1.0), 3))
    assert both.engine() == "grid"
    assert both.epsilon(1e-6).upper >= dg.epsilon(1e-6).lower
    assert both.epsilon(1e-6).upper >= optcomp.compose((Laplace(1.0), 3)).epsilon(1e-6).lower
    sampled = optcomp.compose((PoissonSubsampled(DiscreteGaussian(1.0), sampling_rate=0.1), 20))
    assert sampled.engine() == "grid" and 0.0 < sampled.epsilon(1e-6).upper < dg.epsilon(1e-6).lower


def test_different_sigmas_leave_the_lattice() -> None:
    c = optcomp.compose((DiscreteGaussian(1.0), 3), (DiscreteGaussian(1.5), 3))
    assert c.engine() == "grid"
    a, b = optcomp.compose((DiscreteGaussian(1.0), 3)), optcomp.compose((DiscreteGaussian(1.5), 3))
    assert c.epsilon(1e-6).upper >= max(a.epsilon(1e-6).lower, b.epsilon(1e-6).lower)


@settings(max_examples=20, deadline=None)
@given(
    st.floats(0.3, 6.0),
    st.integers(1, 60),
    st.lists(st.integers(1, 4), min_size=1, max_size=2),
    st.sampled_from([1e-3, 1e-6, 1e-12]),
)
def test_lattice_and_grid_brackets_meet_and_grow_with_k(sigma: float, k: int, shift: list[int], delta: float) -> None:
    """Two certified engines on the same composition: their brackets intersect; one more release cannot
    lower ε (the certified ends keep that order)."""
    mech = DiscreteGaussian(sigma, shift=tuple(shift))
    c = optcomp.compose((mech, k))
    exact = c.epsilon(delta)
    grid = c.epsilon(delta, accuracy=Accuracy(grid_step=2e-3))
    assert exact.lower <= grid.upper and grid.lower <= exact.upper, (exact, grid)
    assert optcomp.compose((mech, k + 1)).epsilon(delta).upper >= exact.lower


# -- the claims (item 2 of the report) ----------------------------------------------------------------
def test_discrete_gaussian_is_not_bounded_by_the_gaussian_at_equal_sigma() -> None:
    """σ = 1, k = 10, δ = 1e-6: 19.49 (discrete) against 19.42 (continuous): the Gaussian is no proxy."""
    dg = optcomp.compose((DiscreteGaussian(1.0), 10)).epsilon(1e-6)
    g = optcomp.compose((Gaussian(1.0), 10)).epsilon(1e-6)
    assert round(dg.upper, 2) == 19.49 and round(g.upper, 2) == 19.42
    assert dg.lower > g.upper


def test_one_release_against_the_zcdp_conversion() -> None:
    """σ = 1, one release, δ = 1e-6: exact 4.50; CKS's conversion from ρ = 1/2 (OpenDP's route) gives 5.22."""
    b = optcomp.compose((DiscreteGaussian(1.0), 1)).epsilon(1e-6)
    assert round(b.upper, 2) == 4.50
    conv = float(zcdp_conversion_epsilon(DiscreteGaussian(1.0).rho, 1e-6))
    assert round(conv, 2) == 5.22 and conv > b.upper


def test_equal_l2_norms_give_different_epsilons() -> None:
    """(5, 0) and (3, 4), (2, 0, 0, 0) and (1, 1, 1, 1): one ℓ₂ norm each, disjoint certified ε."""
    for a, b in (((5,), (3, 4)), ((2,), (1, 1, 1, 1))):
        ea = optcomp.compose((DiscreteGaussian(1.0, shift=a), 1)).epsilon(1e-6)
        eb = optcomp.compose((DiscreteGaussian(1.0, shift=b), 1)).epsilon(1e-6)
        assert ea.upper < eb.lower or eb.upper < ea.lower, (a, b, ea, eb)


# -- the worst shift of a stated sensitivity -----------------------------------------------------------------
@pytest.mark.parametrize(
    ("sensitivity", "dimension", "norm", "worst"),
    [
        (1.0, 1, "l2", (1,)),
        (2.5, 1, "l2", (2,)),
        (3.0, 1, "l1", (3,)),
        (1.5, 3, "l2", (1, 1)),
        (math.sqrt(2), None, "l2", (1, 1)),
        (math.sqrt(5), 2, "l2", (2, 1)),
        (math.sqrt(3), 3, "l2", (1, 1, 1)),  # √3 rounded below 3 in a double still admits (1, 1, 1)
        (1.4, None, "l2", (1,)),
        (3.0, 3, "linf", (3, 3, 3)),
        (1.9, 5, "l1", (1,)),
    ],
)
def test_determined_worst_shifts(sensitivity: float, dimension: int | None, norm: str, worst: tuple[int, ...]) -> None:
    assert DiscreteGaussian(1.0, sensitivity=sensitivity, dimension=dimension, norm=norm).worst == worst  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("sensitivity", "dimension", "norm", "names"),
    [
        (5.0, 2, "l2", "(5,) and (3, 3)"),
        (2.0, 4, "l2", "(2,) and (1, 1)"),
        (2.0, None, "l2", "(2,) and (1, 1)"),
        (2.0, 2, "l1", "(2,) and (1, 1)"),
        (1e4, None, "l2", "(10000,)"),
    ],
)
def test_undetermined_worst_shifts_are_refused_by_name(
    sensitivity: float, dimension: int | None, norm: str, names: str
) -> None:
    with pytest.raises(ValueError, match="not determined") as err:
        DiscreteGaussian(1.0, sensitivity=sensitivity, dimension=dimension, norm=norm)  # type: ignore[arg-type]
    assert names in str(err.value) and "shift=" in str(err.value)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=1, max_size=4).filter(any), st.integers(0, 3))
def test_the_worst_shift_dominates_every_allowed_shift(v: list[int], extra: int) -> None:
    """Whenever a worst ℓ₂ shift is determined, every integer shift within the norm is coordinatewise below it
    (sorted), hence dominated (each coordinate is monotone in |v_t|, composition keeps the order)."""
    d = len(v) + extra
    norm = math.sqrt(sum(x * x for x in v))
    try:
        worst = worst_shift(norm, d, "l2")
    except ValueError:
        return
    mine = sorted(v, reverse=True)
    assert all(a <= b for a, b in zip(mine, list(worst) + [0] * len(mine), strict=False))


# -- domains and refusals ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"sigma": 0.0}, "sigma"),
        ({"sigma": -1.0}, "sigma"),
        ({"sigma": math.nan}, "sigma"),
        ({"sigma": 1.0, "sensitivity": 0.5}, "sensitivity"),
        ({"sigma": 1.0, "sensitivity": math.inf}, "sensitivity"),
        ({"sigma": 1.0, "dimension": 0}, "dimension"),
        ({"sigma": 1.0, "dimension": True}, "dimension"),
        ({"sigma": 1.0, "dimension": 2.0}, "dimension"),
        ({"sigma": 1.0, "norm": "l3"}, "norm"),
        ({"sigma": 1.0, "shift": ()}, "shift"),
        ({"sigma": 1.0, "shift": (0, 0)}, "shift"),
        ({"sigma": 1.0, "shift": (1.5,)}, "shift"),
        ({"sigma": 1.0, "shift": (True,)}, "shift"),
        ({"sigma": 1.0, "shift": "12"}, "shift"),
        ({"sigma": 1.0, "shift": (1,), "sensitivity": 2.0}, "shift"),
        ({"sigma": 1.0, "norm": "linf", "dimension": None}, "dimension"),
    ],
)
def test_bad_parameters_are_named_value_errors(kwargs: dict[str, object], match: str) -> None:
    sigma = kwargs.pop("sigma")
    with pytest.raises(ValueError, match=match):
        DiscreteGaussian(sigma, **kwargs)  # type: ignore[arg-type]


def test_loss_scale_beyond_the_engines_is_refused() -> None:
    with pytest.raises(LossScaleError, match="sigma"):
        DiscreteGaussian(1e-12, sensitivity=1e3)


def test_too_many_lattice_points_are_refused_on_the_grid_and_left_by_the_lattice() -> None:
    big = DiscreteGaussian(2e5)
    assert lattice_law(big) is None
    with pytest.raises(optcomp.pld.GridTooLargeError, match="lattice points"):
        privacy_loss_laws(big)


# -- the law itself ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("sigma", [0.05, 0.5, 1.0, 1.999, 2.0, 7.3, 250.0])
def test_normaliser_and_masses(sigma: float) -> None:
    """Z(σ) by the direct sum below σ = 2 and Poisson summation above agree with a direct float sum; the masses
    sum to 1 and are symmetric."""
    t = half_width(sigma)
    x = np.arange(-t, t + 1)
    direct = math.fsum(np.exp(-(x.astype(float) ** 2) / (2 * sigma * sigma)).tolist())
    assert math.exp(log_normaliser(sigma)[0]) == pytest.approx(direct, rel=EXACT_RTOL)
    p = pmf(sigma, x)
    assert math.fsum(p.tolist()) == pytest.approx(1.0, rel=EXACT_RTOL)
    np.testing.assert_array_equal(p, p[::-1])


def test_group_of_g_records_scales_the_shift() -> None:
    assert group_mechanism(DiscreteGaussian(1.0, shift=(3, 4)), 2).worst == (8, 6)
    c = optcomp.compose((DiscreteGaussian(1.0), 4)).group(2)
    ref = dgauss_epsilon_reference(1.0, (2,), 4, 1e-6)
    b = c.epsilon(1e-6)
    assert b.lower <= float(ref[1]) and float(ref[0]) <= b.upper


@pytest.mark.parametrize("delta", [1e-100, 1e-300])
def test_deep_delta_is_read_through_tilts(delta: float) -> None:
    """A δ far below the untilted FFT floor: the first tilt comes from a central-limit guess; the bracket is as
    narrow as at δ = 1e-6 and meets the grid's."""
    c = optcomp.compose((DiscreteGaussian(1.0), 10))
    b = c.epsilon(delta)
    assert b.relative_width_above(1.0) <= DGAUSS_LATTICE_RTOL
    g = c.epsilon(delta, accuracy=Accuracy(grid_step=1e-3))
    assert b.lower <= g.upper and g.lower <= b.upper


def test_lattice_curve_and_estimate() -> None:
    c = optcomp.compose((DiscreteGaussian(1.0), 10))
    curve = c.hockey_stick_curve(np.array([0.0, 5.0, 19.0]))
    for e, lo, hi in zip(curve.epsilons, curve.lower, curve.upper, strict=True):
        ref = dgauss_delta_bracket(1.0, (1,), 10, float(e))
        assert lo <= float(ref[0]) and float(ref[1]) <= hi
    b = c.epsilon(1e-6)
    assert b.lower <= c.epsilon_estimate(1e-6) <= b.upper

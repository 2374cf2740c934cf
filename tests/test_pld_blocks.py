"""Two-level ("block") composition of a large-count part (``docs/pld.md`` §5a, Lemmas 5 and 6).

Truths: the GDP closed form (k Gaussians compose exactly to GDP), the one-level engine's certified
bracket at a finer step (hypothesis, with random block shapes forced onto small counts), and the error
terms charged (a planted level-1 error must move both ends outwards).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optcomp import Accuracy, compose
from optcomp.mechanisms import Gaussian, PoissonSubsampled, privacy_loss_laws
from optcomp.pld import PrivacyLossDistribution, _blocks, _realise
from tests._references import gdp_delta, gdp_epsilon


@contextmanager
def _spy() -> Iterator[list[str]]:
    """Record which two-level builders run."""
    calls: list[str] = []
    up, lo = _realise.upper_blocks, _realise.lower_blocks

    def upper(*a: Any, **kw: Any) -> _blocks.BlockUpper:
        calls.append("upper")
        return up(*a, **kw)

    def lower(*a: Any, **kw: Any) -> _blocks.BlockLower:
        calls.append("lower")
        return lo(*a, **kw)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_realise, "upper_blocks", upper)
        mp.setattr(_realise, "lower_blocks", lower)
        yield calls


@contextmanager
def _forced(m: int, ratio: int) -> Iterator[None]:
    """Every untilted end with one part goes through two levels with blocks of m steps, ratio R."""

    def shape(self: object, vecs: list[tuple[np.ndarray, int]]) -> _blocks.Shape | None:
        if len(vecs) != 1:
            return None
        k = vecs[0][1]
        mm = min(m, k)
        return _blocks.Shape(mm, k // mm, k % mm, ratio)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_realise.Direction, "_shape", shape)
        yield


def test_shape_is_a_function_of_the_count() -> None:
    assert _blocks.shape(_blocks.BLOCK_MIN_COUNT - 1) is None
    for k in (4096, 10_000, 99_991, 100_000, 10**7):
        sh = _blocks.shape(k)
        assert sh is not None
        assert sh.m * sh.r + sh.rem == k and 0 <= sh.rem < sh.m
        assert 2 <= sh.ratio <= sh.m and abs(math.log(sh.m / math.sqrt(k))) <= math.log(1.5) + 1e-12
    assert _blocks.shape(100_000) == _blocks.Shape(250, 400, 0, 16)  # a divisor: no remainder block


@pytest.mark.parametrize("k", [10_000, 40_000])
def test_gaussians_through_two_levels_contain_gdp(k: int) -> None:
    """k Gaussians of σ = √k compose to GDP with μ = 1 exactly: the two-level bracket contains it."""
    with _spy() as calls:
        laws = privacy_loss_laws(Gaussian(math.sqrt(k)))
        pld = PrivacyLossDistribution.from_laws(*laws, accuracy=Accuracy()).self_compose(k)
        b = pld.epsilon(1e-5)
        assert {"upper", "lower"} <= set(calls)
    truth = gdp_epsilon(1.0, 1e-5)
    assert b.lower <= truth <= b.upper, (b, truth)
    assert b.upper - b.lower <= 1e-4 * truth
    for eps in (0.25, 1.0, 2.5):
        d = pld.delta(eps)
        t = gdp_delta(1.0, eps)
        assert d.lower <= t <= d.upper, (eps, d, t)


def test_two_level_bracket_overlaps_a_fine_one_level_bracket() -> None:
    """σ = 2, q = 1e-3, 10⁴ steps at one step Δ: the two-level ends bracket the one-level ones at Δ/4."""
    mech = PoissonSubsampled(Gaussian(2.0), sampling_rate=1e-3)
    with _spy() as calls:
        two = compose((mech, 10_000), accuracy=Accuracy(grid_step=2e-5))
        b2 = [two.delta(e) for e in (0.05, 0.17, 0.4)]
        assert {"upper", "lower"} <= set(calls)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_realise, "BLOCK_MIN_COUNT", 10**12)
        one = compose((mech, 10_000), accuracy=Accuracy(grid_step=5e-6))
        b1 = [one.delta(e) for e in (0.05, 0.17, 0.4)]
        same = compose((mech, 10_000), accuracy=Accuracy(grid_step=2e-5))
        b0 = [same.delta(e) for e in (0.05, 0.17, 0.4)]
    for x, y, z in zip(b2, b1, b0, strict=True):
        assert x.lower <= y.upper and y.lower <= x.upper, (x, y)
        # R² ≈ m: the regrid's error about equals level 1's, so about twice one level's width at Δ
        assert x.upper - x.lower <= 3 * (z.upper - z.lower), (x, z)


@settings(max_examples=10, deadline=None)
@given(
    sigma=st.floats(0.8, 3.0),
    q=st.floats(1e-3, 0.05),
    k=st.integers(64, 1500),
    m=st.integers(2, 60),
    ratio=st.integers(2, 12),
    eps=st.floats(0.0, 2.0),
)
def test_hypothesis_two_levels_against_one_level(
    sigma: float, q: float, k: int, m: int, ratio: int, eps: float
) -> None:
    """Random shapes forced onto small counts: the two-level upper ≥ a fine one-level lower and the
    two-level lower ≤ a fine one-level upper."""
    mech = PoissonSubsampled(Gaussian(sigma), sampling_rate=q)
    with _forced(m, ratio):
        two = compose((mech, k), accuracy=Accuracy(grid_step=2e-3)).delta(eps)
    one = compose((mech, k), accuracy=Accuracy(grid_step=5e-4)).delta(eps)
    assert one.lower <= two.upper and two.lower <= one.upper, (two, one)


def _planted(extra: float) -> Callable[..., tuple[np.ndarray, int, float]]:
    level_one = _blocks._level_one

    def planted(*a: Any) -> tuple[np.ndarray, int, float]:
        y, j0, err = level_one(*a)
        return y, j0, err + extra

    return planted


def _ends(step: float) -> tuple[Any, Any]:
    mech = PoissonSubsampled(Gaussian(2.0), sampling_rate=1e-3)
    pld = PrivacyLossDistribution.from_laws(*privacy_loss_laws(mech), accuracy=Accuracy(grid_step=step))
    d = pld.self_compose(10_000)._directions(step)[0]
    return d.upper(0), d.lower(0)


def test_a_larger_level_one_error_moves_both_ends_out() -> None:
    """The telescoped level-1 error is charged: r·2·err₁ at least, on the upper end's floor and on
    both error terms of the lower end, and the δ they read moves outwards (Lemmas 5 and 6)."""
    up0, lo0 = _ends(2e-5)
    planted = 1e-9
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_blocks, "_level_one", _planted(planted))
        up1, lo1 = _ends(2e-5)
    sh = _blocks.shape(10_000)
    assert sh is not None
    least = sh.r * 2 * planted * 0.99
    assert up1.floor - up0.floor >= least
    assert lo1.err_p - lo0.err_p >= least
    assert lo1.err_a - lo0.err_a >= least
    eps = np.array([0.05, 0.17])
    assert np.all(up1.delta(eps) > up0.delta(eps))
    assert np.all(lo1.delta(eps) < lo0.delta(eps))


def test_coarse_steps_keep_one_level() -> None:
    """A coarse step Δ' = RΔ > ``_MAX_COARSE_STEP`` keeps one level: at Δ' = 800 (grid_step 100, R = 8)
    expm1(RΔ) overflowed, the split weights were NaN and the level-2 window raised OverflowError; below
    709 the weights' fixed 16u widening does not cover their (7 + 2RΔ)u rounding. One level there, and
    the bracket contains the GDP truth (k Gaussians of σ compose to μ = √k/σ)."""
    k, sigma = 4096, 0.01
    mu = math.sqrt(k) / sigma
    with _spy() as calls:
        laws = privacy_loss_laws(Gaussian(sigma))
        pld = PrivacyLossDistribution.from_laws(*laws, accuracy=Accuracy(grid_step=100.0)).self_compose(k)
        for eps in (mu * mu / 2, mu * mu / 2 + 2 * mu):
            d = pld.delta(eps)
            t = gdp_delta(mu, eps)
            assert d.lower <= t <= d.upper, (eps, d, t)
        assert calls == []
    x = np.full(5, 0.2)
    assert _blocks.blocked([(x, 10**6)], 1 << 30, 5.0, 1e-3) is not None  # Δ' = 0.032
    assert _blocks.blocked([(x, 10**6)], 1 << 30, 5.0, 1.0) is None  # Δ' = 32

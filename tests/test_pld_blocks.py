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
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from optcomp import Accuracy, Bound, GridTooLargeError, compose
from optcomp._rounding import widen_down
from optcomp.mechanisms import (
    DiscreteLaplace,
    EpsilonDelta,
    Gaussian,
    Laplace,
    PoissonSubsampled,
    RandomizedResponse,
    privacy_loss_laws,
)
from optcomp.pld import PrivacyLossDistribution, _blocks, _realise
from optcomp.pld._fft import Composed
from optcomp.pld._query import UpperEnd, tilt
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
    with _spy() as calls:  # δ queries keep one level: read the two-level realisation (ε(δ) queries') directly
        dirs = compose((mech, 10_000), accuracy=Accuracy(grid_step=2e-5)).pld()._directions(2e-5, True)
        b2 = []
        for e in (0.05, 0.17, 0.4):
            x = np.array([e])
            lo = max(float(dirs[i].delta_lower(x)[0]) for i in range(len(dirs)))
            hi = max(float(dirs[i].delta_upper(x)[0]) for i in range(len(dirs)))
            b2.append(Bound(lo, hi))
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
    the bracket contains the GDP truth (k Gaussians of σ compose to μ = √k/σ). At grid_step 100 that
    bracket is the trivial [0, 1], which δ queries refuse by name (GridTooLargeError, not an overflow);
    at grid_step 10 (Δ' = 80, still one level) it is informative and contains the truth."""
    k, sigma = 4096, 0.01
    mu = math.sqrt(k) / sigma
    with _spy() as calls:
        laws = privacy_loss_laws(Gaussian(sigma))
        pld = PrivacyLossDistribution.from_laws(*laws, accuracy=Accuracy(grid_step=100.0)).self_compose(k)
        finer = PrivacyLossDistribution.from_laws(*laws, accuracy=Accuracy(grid_step=10.0)).self_compose(k)
        for eps in (mu * mu / 2, mu * mu / 2 + 2 * mu):
            with pytest.raises(GridTooLargeError, match="no informative certified bracket"):
                pld.delta(eps)
            d = finer.delta(eps)
            t = gdp_delta(mu, eps)
            assert 0.0 < d.lower <= t <= d.upper < 1.0, (eps, d, t)
        assert calls == []
    x = np.full(5, 0.2)
    assert _blocks.blocked([(x, 10**6)], 1 << 30, 5.0, 1e-3) is not None  # Δ' = 0.032
    assert _blocks.blocked([(x, 10**6)], 1 << 30, 5.0, 1.0) is None  # Δ' = 32


# -- the charges against an exact reference of the same algorithm (long double, direct convolution) ----------
_LD = np.longdouble


def _ld_power(v: np.ndarray, count: int) -> np.ndarray:
    out = np.array([_LD(1)])
    for _ in range(count):
        out = np.convolve(out, v)
    return out


def _ld_rows(y: np.ndarray, j0: int, ratio: int) -> tuple[np.ndarray, int]:
    c0 = j0 // ratio
    lead = j0 - c0 * ratio
    buf = np.zeros(-(-(lead + y.size) // ratio) * ratio, dtype=_LD)
    buf[lead : lead + y.size] = y
    return buf.reshape(-1, ratio), c0


def _ld_blocks(x: np.ndarray, first: int, sh: _blocks.Shape, bin_block: Callable[..., np.ndarray]) -> tuple[np.ndarray, int]:
    """The exact level-2 product of the exactly binned/regridded exact level-1 blocks, and its first index."""
    out, f2 = np.array([_LD(1)]), 0
    for c, times in [(sh.m, sh.r)] + ([(sh.rem, 1)] if sh.rem else []):
        rows, c0 = _ld_rows(_ld_power(x.astype(_LD), c), c * first, sh.ratio)
        z = bin_block(rows, c)
        f2 += times * c0
        for _ in range(times):
            out = np.convolve(out, z)
    return out, f2


def _beyond(exact: np.ndarray, f2: int, got: Composed, scale: Any = 1) -> tuple[float, float, float]:
    """(Σ (computed − exact)₊, Σ (exact − computed)₊, the same on the window only), the computed window
    placed in the exact product's index range (padded where the circular window is longer)."""
    lo = got.first - f2
    size = max(exact.size, lo + got.values.size) - min(0, lo)
    ex, comp = np.zeros(size, dtype=_LD), np.zeros(size, dtype=_LD)
    shift = -min(0, lo)
    ex[shift : shift + exact.size] = exact
    comp[shift + lo : shift + lo + got.values.size] = got.values.astype(_LD) * scale
    win = np.zeros(size, dtype=bool)
    win[shift + lo : shift + lo + got.values.size] = True
    short = np.maximum(ex - comp, 0)
    return float(np.sum(np.maximum(comp - ex, 0))), float(np.sum(short)), float(np.sum(short[win]))


@pytest.mark.parametrize(
    "mech", [Gaussian(0.5), PoissonSubsampled(Gaussian(0.5), sampling_rate=0.2), Laplace(1.0), RandomizedResponse(1.0), EpsilonDelta(0.5, delta=1e-2)]
)
@pytest.mark.parametrize("m, r, rem, ratio, log_tau", [(6, 5, 0, 2, -5.0), (7, 4, 3, 3, -3.0), (5, 8, 4, 5, -2.0), (9, 3, 0, 9, -30.0)])
def test_block_charges_cover_an_exact_reference(mech: Any, m: int, r: int, rem: int, ratio: int, log_tau: float) -> None:
    """Lemmas 5 and 6, float and window errors: the computed level-2 vectors differ from the same
    algorithm in exact arithmetic (long double, direct convolutions, no windows) by at most their charged
    errors — the upper end's missing mass ≤ its floor, the lower end's excess P-mass ≤ err_p, its missing
    Â-mass on the window ≤ err_a. Wide tails (log τ up to −2) make the wrap charges dominate."""
    step, sh = 0.05, _blocks.Shape(m, r, rem, ratio)
    o = np.arange(ratio, dtype=np.float64)
    w = np.asarray(widen_down(np.expm1((ratio - o) * step) / np.expm1(ratio * step), 16), dtype=_LD)

    def split(rows: np.ndarray, c: int) -> np.ndarray:
        z = np.zeros(rows.shape[0] + 1, dtype=_LD)
        z[:-1] = rows @ w
        z[1:] += rows.sum(axis=1) - rows @ w
        return z

    def binned_a(rows: np.ndarray, c: int) -> np.ndarray:
        h = _blocks.representative(c, ratio)
        return np.asarray(rows @ np.exp((_LD((h * ratio - c) / 2) - o.astype(_LD)) * _LD(step)))

    for d in PrivacyLossDistribution.from_laws(*privacy_loss_laws(mech), accuracy=Accuracy(grid_step=step))._directions(step):
        vs = d.bulk
        sp, qu = vs.splits[0][0], vs.quants[0][0]
        x, _ = tilt(sp.log_masses, sp.first, step, 0.0, 1.0)
        up = _blocks.upper_blocks(x, sp.first, sh, step, log_tau, 1 << 22).composed
        _, missing, _ = _beyond(*_ld_blocks(x, sp.first, sh, split), up)
        assert missing <= up.fft_error + up.wrap, mech
        p, _ = tilt(qu.log_p, qu.first, step, 0.0, -1.0)
        a, _ = tilt(qu.log_q_hat, qu.first, step, 0.0, 1.0, normalise=True)
        lo = _blocks.lower_blocks(p, a, qu.first, sh, step, log_tau, 1 << 22)
        excess_p, _, _ = _beyond(*_ld_blocks(p, qu.first, sh, lambda rows, c: rows.sum(axis=1)), lo.p)
        _, _, missing_a = _beyond(*_ld_blocks(a, qu.first, sh, binned_a), lo.a, np.exp(_LD(lo.log_a_shift)))
        assert excess_p <= lo.p.fft_error + lo.p.wrap, mech
        assert missing_a <= lo.a.fft_error * math.exp(lo.log_a_shift) * (1 + 1e-12), mech


_HUNT_MECHANISMS: dict[str, Callable[[float, float], Any]] = {
    "subsampled_gaussian": lambda s, q: PoissonSubsampled(Gaussian(s), sampling_rate=q),
    "laplace": lambda s, q: Laplace(s),
    "discrete_laplace": lambda s, q: DiscreteLaplace(s),
    "subsampled_laplace": lambda s, q: PoissonSubsampled(Laplace(s), sampling_rate=q),
    "randomized_response": lambda s, q: RandomizedResponse(1.0 / s),
    "epsilon_delta": lambda s, q: EpsilonDelta(1.0 / s, delta=q / 10),
    "gaussian": lambda s, q: Gaussian(s),
}


def _untilted(mech: Any, k: int, step: float) -> list[tuple[Any, Any]]:
    pld = PrivacyLossDistribution.from_laws(*privacy_loss_laws(mech), accuracy=Accuracy(grid_step=step))
    return [(d.upper(0), d.lower(0)) for d in pld.self_compose(k)._directions(step)]


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(
    kind=st.sampled_from(sorted(_HUNT_MECHANISMS)),
    scale=st.floats(0.3, 5.0),
    q=st.floats(1e-5, 1.0),
    k=st.integers(64, 2500),
    m=st.integers(2, 80),
    ratio=st.integers(2, 16),
    step=st.floats(2e-3, 2e-2),
    eps=st.lists(st.floats(-2.0, 60.0), min_size=1, max_size=4),
)
def test_hypothesis_block_ends_against_fine_one_level(
    kind: str, scale: float, q: float, k: int, m: int, ratio: int, step: float, eps: list[float]
) -> None:
    """Forced shapes (remainder blocks included), every direction, ε < 0 to the far tail: each untilted
    two-level end against the untilted one-level ends at a 4× finer step (upper ≥ their lower, lower ≤
    their upper), and k Gaussians against the GDP closed form (ε ≥ 0)."""
    mech = _HUNT_MECHANISMS[kind](scale, q)
    x = np.array(eps)
    with _forced(m, ratio):
        two = _untilted(mech, k, step)
    try:
        one = _untilted(mech, k, step / 4)
    except GridTooLargeError:
        assume(False)  # the reference is out of the memory cap: no check
    for (up2, lo2), (up1, lo1) in zip(two, one, strict=True):
        hi2, low2 = up2.delta(x), lo2.delta(x)
        assert np.all(hi2 >= lo1.delta(x) * (1 - 1e-12)), (hi2, lo1.delta(x))
        assert np.all(low2 <= up1.delta(x) * (1 + 1e-12)), (low2, up1.delta(x))
        if kind == "gaussian":
            mu = math.sqrt(k) / scale
            for e, a, b in zip(eps, low2, hi2, strict=True):
                if e >= 0:
                    t = gdp_delta(mu, e)
                    assert a <= t <= b, (e, a, t, b)


def test_a_nan_composition_certifies_no_upper_end() -> None:
    """An overflowed composition (NaN values or error, as the block weights gave at RΔ > 709) must read
    as δ ≤ 1, not as δ ≤ p_inf: UpperEnd.finite turned a NaN total into 0 (the lower end's twin of
    ``LowerEnd.bound``'s NaN guard)."""
    z = np.array([0.25, 0.25, 0.25, 0.25])
    for values, err in ((np.full(4, math.nan), 0.0), (z, math.nan)):  # a NaN input spreads over an FFT
        end = UpperEnd(Composed(values, 0, err, 0.0), 0.1, 0.0, 0.0, 0.0, 1e-3)
        assert np.all(end.delta(np.array([-1.0, 0.0, 0.15])) == 1.0)  # ε inside the grid (s_max = 0.3)


def test_only_epsilon_queries_compose_in_two_levels() -> None:
    """δ(ε) queries and curves keep one level: a two-level untilted end's FFT floor is higher, and it sent the
    deep points of `fdp.from_pld` at 10⁵ DP-SGD steps to tilted ends (35 s instead of 1.7 s)."""
    pld = compose((PoissonSubsampled(Gaussian(2.0), sampling_rate=1e-3), 100_000)).pld()
    pld.delta(0.6)
    assert pld._realised and all(not blocks for _, blocks in pld._realised)
    pld.epsilon(1e-5)
    assert all(blocks for _, blocks in pld._realised)

"""Issue 26 item 5 (single-row speed): the shortcuts of the engine keep its certificates.

Truths: the GDP closed form (k Gaussians compose exactly to GDP) for two-level ends whose level 2 is
transformed in double; the laws' own four tail functions (bit for bit) for the one-call tails; the
refined tail search for the unrefined interval that must contain it; the long-double modulus for the
double-precision bound on |φ̂|.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pytest

from optcomp import Accuracy
from optcomp.mechanisms import Gaussian, Laplace, PoissonSubsampled, Staircase, log_tails, privacy_loss_laws
from optcomp.pld import PrivacyLossDistribution, _blocks, _fft
from optcomp.pld._cells import window
from tests._references import gdp_epsilon


@contextmanager
def _level_two_precisions() -> Iterator[list[int]]:
    """Record the ``wide_from`` of every level-2 composition (:func:`._blocks._level_two_wide`)."""
    seen: list[int] = []
    original = _blocks._level_two_wide

    def spy(n: int) -> int:
        seen.append(original(n))
        return seen[-1]

    _blocks._level_two_wide = spy
    try:
        yield seen
    finally:
        _blocks._level_two_wide = original


@pytest.mark.parametrize("k", [10_000, 40_000])
def test_level_two_in_double_contains_gdp(k: int) -> None:
    """k Gaussians of σ = √k are GDP(1) exactly: two-level brackets whose level 2 ran in double contain it."""
    laws = privacy_loss_laws(Gaussian(math.sqrt(k)))
    for delta in (1e-3, 1e-5, 1e-7):
        pld = PrivacyLossDistribution.from_laws(*laws, accuracy=Accuracy()).self_compose(k)
        with _level_two_precisions() as seen:
            b = pld.epsilon(delta)
        assert any(w > _fft.LONG_DOUBLE_COUNT for w in seen), seen  # the double path was exercised
        truth = gdp_epsilon(1.0, delta)
        assert b.lower <= truth <= b.upper, (delta, b, truth)
        assert b.upper - b.lower <= 1e-4 * truth


def test_short_level_two_windows_keep_long_double() -> None:
    assert _blocks._level_two_wide(_blocks.LEVEL_TWO_DOUBLE_LEN - 1) == _fft.LONG_DOUBLE_COUNT
    assert _blocks._level_two_wide(_blocks.LEVEL_TWO_DOUBLE_LEN) > 2**60


_LAWS = [
    law
    for mech in (
        PoissonSubsampled(Gaussian(2.0), sampling_rate=1e-3),
        PoissonSubsampled(Gaussian(0.7), sampling_rate=0.3),
        PoissonSubsampled(Laplace(0.5), sampling_rate=0.1),
        Gaussian(1.0),
        Laplace(1.0),
        Staircase(1.0),
    )
    for law in privacy_loss_laws(mech)
]


@pytest.mark.parametrize("i", range(len(_LAWS)))
@pytest.mark.parametrize("log_tail", [-20.0, -45.0, -712.0])
def test_unrefined_window_contains_the_window(i: int, log_tail: float) -> None:
    """The cheap interval the two-level gate's memory test reads contains the window itself."""
    law = _LAWS[i]
    a, b = window(law, log_tail)
    lo, hi = window(law, log_tail, refine=False)
    assert lo <= a and b <= hi, ((a, b), (lo, hi))


@pytest.mark.parametrize("i", range(len(_LAWS)))
def test_log_tails_are_the_four_tails(i: int) -> None:
    """One call gives the four tail functions' values bit for bit (the cells do not move)."""
    cont = _LAWS[i].continuous
    if cont is None:
        pytest.skip("no continuous part")
    x = np.concatenate([np.linspace(-3.0, 3.0, 601), [-40.0, -1e-9, 0.0, 1e-9, 40.0]])
    x = np.clip(x, cont.lower, cont.upper)
    got = log_tails(cont, x)
    want = (cont.p_logcdf(x), cont.p_logsf(x), cont.q_logcdf(x), cont.q_logsf(x))
    for g, w in zip(got, want, strict=True):
        assert np.array_equal(np.asarray(g), np.asarray(w), equal_nan=True)


def test_modulus_bound_is_above_the_long_double_modulus() -> None:
    """|φ̂| from the complex128 rounding, widened, is never below the long-double modulus."""
    rng = np.random.default_rng(7)
    scale = 10.0 ** rng.uniform(-300, 0, 20_000)
    phi = (rng.normal(size=20_000) + 1j * rng.normal(size=20_000)).astype(np.clongdouble) * scale
    phi += np.clongdouble(1e-19j) * rng.normal(size=20_000)  # parts off the double grid
    bound = _fft._abs_up(phi).astype(np.longdouble)
    assert np.all(bound >= np.abs(phi))

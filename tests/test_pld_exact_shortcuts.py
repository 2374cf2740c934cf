"""The deep-tail profile's bit-identical shortcuts (issue 27 item 7) give the same floats as the plain
computation they replace: zero-padding straight into a long-double buffer, exp skipped where it gives
exactly 0.0, and a lower end's test-set sums read as slices (checked against the whole-vector sums in
``tests/test_pld_profile_sharing.py``)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from optcomp.pld._fft import _exp_shifted, _folded


@pytest.mark.parametrize("seed", range(20))
def test_folded_is_the_padded_one_row_sum_bit_for_bit(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, size = int(rng.integers(1, 3000)), int(rng.integers(1, 6000))
    x = rng.random(size) * (rng.random(size) < 0.7)
    x[rng.random(size) < 0.2] = -0.0
    pad = (-x.size) % n
    plain = np.concatenate([x, np.zeros(pad)]).reshape(-1, n).sum(axis=0) if pad or x.size > n else x
    for dtype in (np.longdouble, np.float64):
        got, ref = _folded(x, n, dtype), plain.astype(dtype)
        assert got.dtype == ref.dtype
        assert np.array_equal(got, ref) and np.array_equal(np.signbit(got), np.signbit(ref))


@pytest.mark.parametrize("share", [0.0, 0.05, 0.5, 1.0])
def test_exp_shifted_is_numpys_exp_bit_for_bit(share: float) -> None:
    rng = np.random.default_rng(7)
    v = -rng.random(50_000) * 700.0
    deep = rng.random(v.size) < share
    v[deep] = -700.0 - rng.random(int(np.count_nonzero(deep))) * 2000.0  # many exactly 0.0 after exp
    v[:3] = [-np.inf, np.nan, 0.0]
    ref = np.exp(v)
    got = _exp_shifted(v.copy())
    assert np.array_equal(got, ref, equal_nan=True) and np.array_equal(np.signbit(got), np.signbit(ref))


def test_error_factors_past_the_double_range_are_infinite_not_capped() -> None:
    """An error factor e^x with x past the double range is charged as +inf (it was capped at e^700, which
    under-charged the bound: found by the twolevel engineer, issue 26)."""
    from optcomp.pld import _fft

    assert _fft._exp_or_inf(10.0) == math.exp(10.0)
    assert _fft._exp_or_inf(701.0) == math.inf
    assert _fft._exp_or_inf(2000.0) == math.inf

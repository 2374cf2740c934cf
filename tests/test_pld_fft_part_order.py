"""Audit (issue 26, rowspeed3 + sweepspeed): FFT composition when `premultiply` reorders the parts.

`pld/_fft.premultiply` puts the parts composed more than once first and the parts used once (short or
sparse vectors, multiplied into groups) after them. When that leaves the number of parts unchanged,
`_premultiply_parts` returned the reordered parts with the masses of the *original* order, so a part's
bound M = min(mass, |φ̂| + e) on its spectrum used another part's mass. With the dropped-frequency
threshold at e^-120 (was e^-760), k·ln(wrong mass) < −120 drops *every* frequency, the composition comes
back as 0 with an error bar of 10⁻⁴⁸, and the upper δ falls below the truth.

Independent truth for the end-to-end case: for EpsilonDelta(ε₁, δ₁) composed with M₂ (independent losses;
EpsilonDelta's loss is +∞ w.p. δ₁, +ε₁ w.p. (1 − δ₁)p, −ε₁ w.p. (1 − δ₁)(1 − p), p = e^ε₁/(1 + e^ε₁)),
each direction has δ(ε) = δ₁ + (1 − δ₁)(p·δ₂(ε − ε₁) + (1 − p)·δ₂(ε + ε₁)) ≥ δ₁ + (1 − δ₁)·p·δ₂(ε − ε₁),
so the reported δ(ε₁) ≥ δ₁ + (1 − δ₁)·p·δ₂(0), with δ₂(0) ≥ the certified lower end of M₂ alone (one part:
no premultiply).
"""

from __future__ import annotations

import math

import numpy as np

from optcomp.composition import compose
from optcomp.mechanisms import EpsilonDelta, Gaussian, PoissonSubsampled
from optcomp.pld._fft import compose as fft_compose
from optcomp.pld._fft import window


def test_fft_compose_keeps_each_parts_own_mass_when_premultiply_reorders() -> None:
    j = np.arange(25.0)
    g = np.exp(-((j - 12.0) ** 2) / 8.0)
    g *= 0.999 / g.sum()  # composed 294 times: mass 0.999^294 ≈ 0.745
    short = np.full(23, 0.5 / 23)  # used once, short: premultiply moves it after the k = 294 part
    parts = [(short, 1), (g, 294)]
    exact = 0.5 * 0.999**294
    a, n, wrap = window(parts, -40.0, 10**6)
    c = fft_compose(parts, (a, n, wrap))
    # the total mass is a [0, 1]-weighted sum: within the FFT error bar plus what the window leaves out
    assert abs(float(np.sum(c.values)) - exact) <= c.fft_error + wrap + 1e-12 * exact


def test_mixed_composition_upper_delta_is_not_below_the_truth() -> None:
    eps1, delta1 = 1.0, 0.1
    dpsgd_step = (PoissonSubsampled(Gaussian(1.0), sampling_rate=0.01), 2000)
    d2 = compose(dpsgd_step).pld().delta(0.0)
    p = math.exp(eps1) / (1.0 + math.exp(eps1))
    truth_lower = delta1 + (1.0 - delta1) * p * d2.lower  # ≈ 0.2489
    for items in (
        ((EpsilonDelta(eps1, delta=delta1), 1), dpsgd_step),
        (dpsgd_step, (EpsilonDelta(eps1, delta=delta1), 1)),
    ):
        b = compose(*items).pld().delta(eps1)
        assert b.upper >= truth_lower, (items, b, truth_lower)


def test_fft_compose_charges_the_folding_of_a_part_longer_than_the_window() -> None:
    """Pre-existing (fails on main too): a part longer than the window is folded modulo N by a double
    sum (`_fft._folded`) whose rounding §5's budget does not charge; with N = 1 (Higham's transform bound
    is 0 there) the composed total misses (Σx)^k by up to 25× the error bar. Exact reference: rational
    arithmetic on the doubles."""
    from fractions import Fraction

    rng = np.random.default_rng(37)
    x = rng.random(19)
    x /= x.sum()
    c = fft_compose([(x, 300)], (0, 1, 0.0))
    exact = sum(Fraction(float(v)) for v in x) ** 300
    assert abs(Fraction(float(np.sum(c.values))) - exact) <= Fraction(c.fft_error)


def test_item_order_does_not_change_a_mixed_bracket_beyond_its_width() -> None:
    """The order of the items of a heterogeneous composition is not the mechanism's business: every
    ordering of a one-off black box, a randomized-response-like box and a many-times DP-SGD step gives
    intersecting certified brackets."""
    from itertools import permutations

    items = [
        (EpsilonDelta(0.5, delta=0.01), 1),
        (EpsilonDelta(0.2, delta=0.0), 3),
        (PoissonSubsampled(Gaussian(1.2), sampling_rate=0.02), 1500),
    ]
    brackets = [compose(*order).pld().epsilon(0.02) for order in permutations(items)]
    lo = max(b.lower for b in brackets)
    hi = min(b.upper for b in brackets)
    assert lo <= hi, brackets

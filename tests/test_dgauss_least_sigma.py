"""The least σ of a discrete Gaussian for an (ε, δ) target: ε is not monotone in σ on the lattice, so the σ
searches (the planner's ``dgauss``, ``calibrate.noise_for_target``) scan (``mechanisms/_dgauss_scan.py``).

Checked against the independent integer-bookkeeping reference (``tests/_references/dgauss.py``): the σ
returned truly passes, the σ below it (on the scan's resolution) truly fail, and every span the scan
skips or the floor it proves truly fails.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optcomp import compose
from optcomp._inverse_many import lowest_passing
from optcomp._numerics import Bound
from optcomp.calibrate import noise_for_target
from optcomp.mechanisms import DiscreteGaussian
from optcomp.mechanisms.discrete_gaussian import cleared_until, epsilon_floor, proven_floor
from optcomp.planner._dgauss import dgauss_sigma
from tests._references.dgauss import delta_bracket


def _truly_passes(sigma: float, shifts: tuple[int, ...], count: int, epsilon: float, delta: float) -> bool:
    """True δ(ε) ≤ δ (the reference's upper end), or False when its lower end is above δ (else undecided)."""
    lo, hi = delta_bracket(sigma, shifts, count, epsilon)
    if hi <= delta:
        return True
    assert lo > delta, f"the reference cannot decide sigma={sigma}"
    return False


def test_the_lattice_epsilon_is_not_monotone_in_sigma() -> None:
    """The premise (reference): Δ = 1, δ = 1e−9, ε = 6.2 passes at σ = 0.95 and fails at σ = 1.0."""
    assert _truly_passes(0.95, (1,), 1, 6.2, 1e-9)
    assert not _truly_passes(1.0, (1,), 1, 6.2, 1e-9)


def test_planner_sigma_is_the_least_passing_one() -> None:
    """The planner's σ for ε = 6.2 at δ = 1e−9 is 0.9417 (was the secant's 1.0158: 8 % more noise)."""
    sigma = dgauss_sigma(1, 1, 6.2, 1e-9, 1.0)
    assert compose((DiscreteGaussian(sigma), 1)).epsilon(1e-9).upper <= 6.2
    assert _truly_passes(sigma, (1,), 1, 6.2, 1e-9)
    assert sigma < 0.9425
    for below in (0.3, 0.6, 0.9, 0.93, 0.94, sigma * (1 - 2e-3)):
        assert not _truly_passes(below, (1,), 1, 6.2, 1e-9)


def test_planner_sigma_finds_a_narrow_window_far_below() -> None:
    """ε = 12 at δ = 1e−5: σ ∈ [0.2041, 0.2065] passes (the x = 1 atom's mass falls under δ there) while σ up
    to 0.35 fails; the secant's answer was 0.452."""
    sigma = dgauss_sigma(1, 1, 12.0, 1e-5, 0.43)
    assert sigma < 0.205
    assert _truly_passes(sigma, (1,), 1, 12.0, 1e-5)
    assert not _truly_passes(0.25, (1,), 1, 12.0, 1e-5)


def test_calibrate_rescans_a_discrete_gaussian_and_its_bracket_holds_the_true_least() -> None:
    """``noise_for_target(DiscreteGaussian, 12, 1e−5, 1)`` returned 0.452 with a bracket [0.45204, 0.45204]
    that claimed to hold the least noise, though 0.2042 passes; now its noise is 0.2041 and its bracket's
    lower end is a proven floor (the reference fails just below it)."""
    cal = noise_for_target(DiscreteGaussian, 12.0, 1e-5, 1)
    assert cal.noise < 0.205
    assert cal.epsilon.upper <= 12.0
    assert _truly_passes(cal.noise, (1,), 1, 12.0, 1e-5)
    assert cal.bracket.lower <= cal.noise == cal.bracket.upper
    assert not _truly_passes(cal.bracket.lower * (1 - 1e-6), (1,), 1, 12.0, 1e-5)


@settings(max_examples=25, deadline=None)
@given(st.floats(0.25, 3.0), st.floats(1.0, 1.05), st.integers(1, 3), st.integers(1, 3),
       st.floats(-10.0, -3.0))
def test_epsilon_floor_is_below_the_reference_over_its_span(lo: float, grow: float, shift: int, count: int,
                                                            log_delta: float) -> None:
    """At any σ of [lo, hi], the truth δ(floor) ≥ δ, i.e. ε(δ) ≥ floor (reference at both ends and inside)."""
    hi, delta = lo * grow, 10.0**log_delta
    floor = epsilon_floor(lo, hi, (shift,), count, delta)
    if floor <= 0.0:
        return
    for sigma in (lo, math.sqrt(lo * hi), hi):
        assert delta_bracket(sigma, (shift,), count, floor)[1] >= delta


@pytest.mark.parametrize(("count", "target", "delta", "start"), [(1, 6.2, 1e-9, 0.5), (2, 5.0, 1e-6, 0.5),
                                                                  (3, 4.0, 1e-6, 0.6)])
def test_cleared_spans_truly_fail(count: int, target: float, delta: float, start: float) -> None:
    """Every span ``cleared_until`` proves (both of its proofs) truly fails at its points (reference)."""
    law = lambda s: compose((DiscreteGaussian(s), count))
    spans = []
    for lo in np.geomspace(start, 2.0 * start, 6):
        end = cleared_until(float(lo), target, delta, (1,), count, 1.005, law)
        if end > lo:
            spans.append((float(lo), end))
            for sigma in (float(lo), math.sqrt(lo * end), end):
                assert not _truly_passes(sigma, (1,), count, target, delta)
    assert spans


def test_proven_floor_truly_fails() -> None:
    floor = proven_floor(6.2, 1e-9, (1,), 1)
    assert 0.2 < floor < 0.3
    assert not _truly_passes(floor, (1,), 1, 6.2, 1e-9)


def test_lowest_passing_on_a_bumpy_value() -> None:
    """A synthetic bumpy v(x) = 1/x + 0.4·sin(30x): the scan returns the least passing point to the grid's
    resolution, never a failing one, and skips cleared spans without evaluating them."""
    def v(x: float) -> Bound:
        y = 1.0 / x + 0.4 * math.sin(30.0 * x)
        return Bound(y, y)

    xs = np.linspace(0.5, 3.0, 200001)
    passing_x = xs[1.0 / xs + 0.4 * np.sin(30.0 * xs) <= 1.0]
    found = lowest_passing(v, 1.0, name="x", passing=3.0, lowest=0.5, ratio=1.001, rtol=1e-9)
    assert found.passing is not None and found.fail is not None
    assert v(found.passing).upper <= 1.0 < v(found.fail).upper
    assert abs(found.passing - passing_x[0]) < 1e-4
    seen: list[float] = []

    def counted(x: float) -> Bound:
        seen.append(x)
        return v(x)

    lowest_passing(counted, 1.0, name="x", passing=3.0, lowest=0.5, ratio=1.001, rtol=1e-9,
                   cleared=lambda x: max(x, 0.6) if x < 0.6 else x)
    assert min(seen) >= 0.6

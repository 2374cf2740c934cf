"""Heterogeneous compositions of many distinct mechanisms, and (ε, δ) black boxes through optcomp.optimal.

* Distinct mechanisms used once are multiplied together before the FFT (``pld._fft.premultiply``: sparse
  parts by shifted adds, short ones by direct convolution); the composed vector and its error bar are
  checked against the plain FFT path and an exact reference, and whole brackets against exact
  enumeration of the product pair.
* Compositions made only of ``EpsilonDelta`` / ``RandomizedResponse`` items answer from the optimal
  black-box engine (issue 7: 10⁴ × (0.01, 1e-9) used to raise ``GridTooLargeError``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from optcomp import Accuracy, compose, optimal
from optcomp.mechanisms import DiscretePair, EpsilonDelta, Laplace, RandomizedResponse, privacy_loss_laws
from optcomp.pld import PrivacyLossDistribution, _fft

#: OptComp(10⁴ × (0.01, 1e-9), δ = 1e-5) by Murtagh–Vadhan Thm 1.4 in 60-digit mpmath (benchmarks/bench_pld.py).
MV_TRUTH = 6.653865294919366
#: Relative accuracy of the float64 enumeration references below (far inside every bracket checked).
REF_RTOL = 1e-10


def test_black_box_homogeneous_matches_murtagh_vadhan() -> None:
    b = compose((EpsilonDelta(0.01, delta=1e-9), 10_000)).epsilon(1e-5)
    assert b.lower <= MV_TRUTH <= b.upper
    assert (b.upper - b.lower) / b.upper <= Accuracy().relative_width
    # the δ query answers from the same engine: the truth's ε has δ ≈ 1e-5
    d = compose((EpsilonDelta(0.01, delta=1e-9), 10_000)).delta(b.upper)
    assert d.lower <= 1e-5 * (1 + 1e-9) and d.upper <= 1e-5 * (1 + 1e-9)


def test_black_box_distinct_and_randomized_response_contain_the_exact_answer() -> None:
    # ≤ 16 items: optcomp.optimal enumerates all 2^k outcomes (exact)
    eps = [0.05 + 0.037 * i for i in range(10)]
    items = [EpsilonDelta(e, delta=1e-7) for e in eps[:6]] + [RandomizedResponse(e) for e in eps[6:]]
    exact = optimal.epsilon([(e, 1e-7) for e in eps[:6]] + [(e, 0.0) for e in eps[6:]], 1e-6)
    assert exact.upper - exact.lower <= 1e-9
    pld = compose(*items)
    b = pld.epsilon(1e-6)
    assert b.lower <= exact.upper and exact.lower <= b.upper
    lo, hi = pld.delta_curve([0.2, 0.8])
    for e, lo_i, hi_i in zip([0.2, 0.8], lo, hi, strict=True):
        ref = optimal.delta([(x, 1e-7) for x in eps[:6]] + [(x, 0.0) for x in eps[6:]], e)
        assert lo_i <= ref.upper and ref.lower <= hi_i


def test_black_box_routing_keeps_the_grid_for_an_explicit_step_and_for_mixtures() -> None:
    exact = optimal.epsilon(optimal.homogeneous(0.3, 0.0, 50), 1e-6)
    grid = compose((RandomizedResponse(0.3), 50), accuracy=Accuracy(grid_step=0.1)).epsilon(1e-6)
    assert grid.lower <= exact.lower and exact.upper <= grid.upper
    assert grid.upper - grid.lower > 1e-3  # the grid's bracket, not optimal's exact one
    # through the grid engine (no routing: the PLDs are built from laws), distinct εᵢ: sparse parts
    # multiplied before the FFT
    eps = [0.02 + 0.011 * i for i in range(12)]
    plds = [PrivacyLossDistribution.from_laws(*privacy_loss_laws(EpsilonDelta(e, delta=1e-8))) for e in eps]
    pld = plds[0]
    for other in plds[1:]:
        pld = pld.compose(other)
    ref = optimal.epsilon([(e, 1e-8) for e in eps], 1e-4)
    b = pld.epsilon(1e-4)
    assert b.lower <= ref.upper and ref.lower <= b.upper
    assert (b.upper - b.lower) / b.upper <= Accuracy().relative_width


def _pairs() -> list[DiscretePair]:
    rng = np.random.default_rng(7)
    out = []
    for size in (10, 10, 10, 3, 3, 3, 3):  # 10 outcomes: > 16 grid points (short, dense); 3: sparse
        p = 1.0 + 0.4 * rng.random(size)
        q = 1.0 + 0.4 * rng.random(size)
        out.append(DiscretePair(tuple((p / p.sum()).tolist()), tuple((q / q.sum()).tolist())))
    return out


def _exact_delta(pairs: list[DiscretePair], eps: float) -> float:
    """max over both orders of Σ (P − e^ε Q)₊ of the product pair, by enumeration (float64)."""
    out = 0.0
    for swap in (False, True):
        p_all, q_all = np.ones(1), np.ones(1)
        for pair in pairs:
            p, q = (np.array(pair.q), np.array(pair.p)) if swap else (np.array(pair.p), np.array(pair.q))
            p_all, q_all = np.outer(p_all, p).ravel(), np.outer(q_all, q).ravel()
        diff = p_all - math.exp(eps) * q_all
        out = max(out, math.fsum(diff[diff > 0].tolist()))
    return out


def test_distinct_discrete_pairs_against_exact_enumeration() -> None:
    pairs = _pairs()
    pld = compose(*pairs)
    eps_grid = [0.05, 0.2, 0.4]
    lo, hi = pld.delta_curve(eps_grid)
    for e, lo_i, hi_i in zip(eps_grid, lo, hi, strict=True):
        ref = _exact_delta(pairs, e)
        assert lo_i <= ref * (1 + REF_RTOL) and ref * (1 - REF_RTOL) <= hi_i
    b = pld.epsilon(1e-3)
    assert _exact_delta(pairs, b.upper) <= 1e-3 * (1 + REF_RTOL)
    assert b.lower == 0.0 or _exact_delta(pairs, b.lower) >= 1e-3 * (1 - REF_RTOL)


@pytest.mark.parametrize("n", [64, 1000, 4096])
def test_premultiply_changes_the_composition_by_less_than_its_charged_error(
    n: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(n)
    parts: list[tuple[np.ndarray, int]] = []
    for i in range(40):
        if i % 2:
            x = np.zeros(int(rng.integers(5, 300)))  # sparse: ≤ 4 non-zeros anywhere
            x[rng.choice(x.size, size=min(4, x.size), replace=False)] = rng.random(min(4, x.size))
        else:
            x = rng.random(int(rng.integers(20, 200))) ** 4  # short and dense
        parts.append((x / x.sum() * 0.999, 1))
    parts.append((rng.random(700), 3))  # a repeated part stays on the FFT path
    parts[-1] = (parts[-1][0] / parts[-1][0].sum(), 3)
    win = (0, n, 0.0)
    fast = _fft.compose(parts, win)
    grouped, _, _ = _fft.premultiply(parts, n)
    assert len(grouped) < len(parts)
    monkeypatch.setattr(_fft, "premultiply", lambda ps, _n: (ps, 0.0, 0.0))
    plain = _fft.compose(parts, win)
    diff = fast.values - plain.values
    # any [0, 1]-weighted sum: the worst weights are the indicator of the positive (negative) entries
    worst = max(float(np.sum(diff[diff > 0])), float(-np.sum(diff[diff < 0])))
    assert worst <= fast.fft_error + plain.fft_error
    # exact reference: linear convolution, folded modulo n
    ref = np.ones(1)
    for x, k in parts:
        for _ in range(k):
            ref = np.convolve(ref, x)
    ref = np.concatenate([ref, np.zeros((-ref.size) % n)]).reshape(-1, n).sum(axis=0)
    err = fast.values - ref
    assert max(float(np.sum(err[err > 0])), float(-np.sum(err[err < 0]))) <= fast.fft_error


def test_grid_engine_reads_the_finite_part_when_the_infinite_mass_nearly_fills_delta() -> None:
    # 10⁴ × δᵢ = 1e-9 puts ≈ 1e-5 − 5e-11 at +∞: the grid must read a finite part of ≈ 5e-11 through
    # a tilted composition (the tilt trigger compares its error floor with δ − P(∞), not δ)
    law = privacy_loss_laws(EpsilonDelta(0.01, delta=1e-9))[0]
    b = PrivacyLossDistribution.from_laws(law).self_compose(10_000).epsilon(1e-5)
    assert b.lower <= MV_TRUTH <= b.upper
    assert (b.upper - b.lower) / b.upper <= Accuracy().relative_width
    # mixed with another mechanism (grid engine): a certified bracket, no GridTooLargeError
    mixed = compose((EpsilonDelta(0.01, delta=1e-9), 10_000), Laplace(100.0)).epsilon(1e-5)
    assert mixed.upper >= MV_TRUTH and (mixed.upper - mixed.lower) / mixed.upper <= Accuracy().relative_width


@pytest.mark.parametrize(
    ("eps", "dl", "k", "finite"),
    [(0.1, 1e-7, 500, 1e-8), (0.5, 0.0, 200, 1e-6), (0.05, 1e-6, 2000, 1e-9), (0.2, 1e-9, 1000, 1e-10)],
)
def test_grid_engine_canonical_vs_optimal(eps: float, dl: float, k: int, finite: float) -> None:
    """The grid engine itself (``from_laws``: no routing to optcomp.optimal) on k-fold canonical (ε, δ),
    with δ_g just above the floor 1 − (1 − δ)^k (a finite part ``finite``)."""
    delta_g = -math.expm1(k * math.log1p(-dl)) + finite
    law = privacy_loss_laws(EpsilonDelta(eps, delta=dl))[0]
    b = PrivacyLossDistribution.from_laws(law).self_compose(k).epsilon(delta_g)
    exact = optimal.epsilon(optimal.homogeneous(eps, dl, k), delta_g)
    assert b.lower <= exact.upper and exact.lower <= b.upper, (b, exact)
    assert (b.upper - b.lower) / b.upper <= Accuracy().relative_width


def test_huge_black_boxes_stay_on_the_grid_and_below_their_shift() -> None:
    """compose() routed ε_i > 745 to optimal, whose lower end then sat above the truth (review)."""
    b = compose(RandomizedResponse(746.0)).epsilon(0.5)
    assert b.lower <= 746 - math.log(2) <= b.upper
    mixed = compose(EpsilonDelta(1000.0, delta=0.1), RandomizedResponse(0.5)).epsilon(0.5)
    grid = compose(
        EpsilonDelta(1000.0, delta=0.1), RandomizedResponse(0.5), accuracy=Accuracy(grid_step=1e-3)
    )
    g = grid.epsilon(0.5)
    assert mixed.lower <= g.upper and g.lower <= mixed.upper and mixed.upper < 1000.0


def test_premultiplied_product_that_underflows_is_charged_not_a_crash() -> None:
    """A product of many low-mass once-used parts underflowed to 0 and log(0) raised (review)."""
    items = [EpsilonDelta(0.1 * (i + 1), delta=0.999) for i in range(110)]
    b = compose(*items, Laplace(1.0), accuracy=Accuracy(grid_step=0.05)).delta(1.0)
    assert b.upper == 1.0 and 0.0 <= b.lower <= 1.0

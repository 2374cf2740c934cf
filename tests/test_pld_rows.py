"""The ε(δ) refinement's speed-ups keep every bracket certified and the width target met (issue 26 item 5).

* passes intersect: a direction whose earlier certified upper end is below the other's is not recomposed,
  and the bracket kept is never wider than the last pass's own;
* the bracket still meets the requested width and overlaps a fixed-grid bracket of another step (both
  are certified, so they must intersect);
* a first pass placed by the per-step width model (``pld/_stepmodel.py``) ends q = 10⁻³ rows in one pass,
  and one that misses is replayed by the plain schedule bit for bit; lazily realised directions answer
  bit for bit as eager ones.
"""

from __future__ import annotations

import math

import pytest

from optcomp import DEFAULT_ACCURACY, Accuracy, compose
from optcomp.mechanisms import Gaussian, PoissonSubsampled
from optcomp.pld import GridTooLargeError, _pld, _refine, _stepmodel
from optcomp.pld._cells import cells, window
from optcomp.pld._lazy import Directions

DELTA = 1e-5


def _sgd(sigma: float, q: float, steps: int, accuracy: Accuracy = DEFAULT_ACCURACY):  # type: ignore[no-untyped-def]
    return compose((PoissonSubsampled(Gaussian(sigma), sampling_rate=q), steps), accuracy=accuracy).pld()


@pytest.mark.parametrize(("sigma", "q", "steps", "grid"), [(2.0, 0.001, 1000, 4e-6), (0.8, 0.001, 1000, 3e-5), (2.0, 0.01, 1000, 5e-5)])
def test_default_bracket_meets_width_and_overlaps_a_fine_grid(sigma: float, q: float, steps: int, grid: float) -> None:
    b = _sgd(sigma, q, steps).epsilon(DELTA)
    assert 0.0 < b.lower <= b.upper
    assert (b.upper - b.lower) / b.upper <= DEFAULT_ACCURACY.relative_width
    fine = _sgd(sigma, q, steps, Accuracy(grid_step=grid)).epsilon(DELTA)
    assert max(b.lower, fine.lower) <= min(b.upper, fine.upper)


def test_passes_intersect_and_skip_a_dominated_direction() -> None:
    pld = _sgd(2.0, 0.001, 1000)
    coarse, fine = pld._directions(2e-4), pld._directions(2e-5)
    fresh = _pld._EpsilonMeasure(DELTA)
    alone = fresh.run(fine)
    chained = _pld._EpsilonMeasure(DELTA)
    chained.run(coarse)
    both = chained.run(fine)
    assert alone.lower <= both.lower <= both.upper <= alone.upper
    # the add direction's coarse upper end is below the remove direction's fine one: kept, not recomposed
    assert both.upper == alone.upper
    assert min(chained.uppers.values()) < both.lower


def test_a_dominated_direction_is_probed_at_a_coarser_step() -> None:
    """σ = 2, q = 0.01: the add direction's coarse bracket says a step between the passes brings its
    upper end below the remove direction's; it is read there, and the bracket is the fine pass's own."""
    pld = _sgd(2.0, 0.01, 100_000)
    coarse, fine = pld._directions(2e-3), pld._directions(1.2e-4)
    alone = _pld._EpsilonMeasure(DELTA).run(fine)
    probed = _pld._EpsilonMeasure(DELTA, DEFAULT_ACCURACY.relative_width, pld._direction)
    probed.run(coarse)
    both = probed.run(fine)
    assert both == alone
    steps = sorted(step for step, _, _ in probed.last.values())
    assert steps[0] == 1.2e-4 and 2 * 1.2e-4 < steps[1] < 2e-3


def _counting_passes(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    steps: list[float] = []
    real = _refine._Passes.one

    def counted(self, step, target):  # type: ignore[no-untyped-def]
        steps.append(step)
        return real(self, step, target)

    monkeypatch.setattr(_refine._Passes, "one", counted)
    return steps


@pytest.mark.parametrize(("sigma", "q", "steps", "grid"), [(2.0, 0.001, 1000, 4e-6), (1.0, 0.001, 1000, 1e-5)])
def test_model_started_query_takes_one_pass_and_meets_the_width(
    monkeypatch: pytest.MonkeyPatch, sigma: float, q: float, steps: int, grid: float
) -> None:
    """q = 10⁻³: the first pass is placed by the per-step width model (not at 10⁻²), meets the width,
    and its bracket overlaps a fine fixed grid's (both certified)."""
    seen = _counting_passes(monkeypatch)
    b = _sgd(sigma, q, steps).epsilon(DELTA)
    assert len(seen) == 1 and seen[0] < 1e-3
    assert 0.0 < b.lower <= b.upper and (b.upper - b.lower) / b.upper <= DEFAULT_ACCURACY.relative_width
    fine = _sgd(sigma, q, steps, Accuracy(grid_step=grid)).epsilon(DELTA)
    assert max(b.lower, fine.lower) <= min(b.upper, fine.upper)


def test_wide_per_step_losses_keep_the_plain_start(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _counting_passes(monkeypatch)
    _sgd(1.0, 0.01, 1000).epsilon(DELTA)
    assert seen[0] == 1e-2


def test_loss_scale_is_the_per_step_standard_deviation() -> None:
    """s of PoissonSubsampled(Gaussian(σ), q) against q·√(e^{1/σ²} − 1) (the small-q standard deviation
    of the loss): within 2 %; it only places the first pass."""
    for sigma, q in ((2.0, 0.001), (1.0, 0.001), (2.0, 0.01)):
        law = _sgd(sigma, q, 10)._laws()[0][0][0]
        s = _stepmodel.loss_scale(law)
        assert s is not None and s == pytest.approx(q * math.sqrt(math.expm1(1 / sigma**2)), rel=0.02)


def test_loss_scale_p_side_is_that_of_cells() -> None:
    """The scale reads the P side of the law's cells alone (no atoms): the same first cell and upper
    P masses as :func:`optcomp.pld._cells.cells`, bit for bit."""
    for sigma, q in ((2.0, 0.001), (0.8, 0.02)):
        for laws in _sgd(sigma, q, 10)._laws():
            law = laws[0][0]
            a, b = window(law, math.log(_stepmodel._SCALE_TAIL))
            step = (b - a) / _stepmodel._SCALE_CELLS
            full = cells(law, step, (a, b), 4 * _stepmodel._SCALE_CELLS)
            first, lm_hi = _stepmodel._p_upper(law, step, (a, b))
            assert first == full.first and lm_hi.tobytes() == full.lm_hi.tobytes()


def test_a_model_start_that_misses_replays_the_plain_schedule(monkeypatch: pytest.MonkeyPatch) -> None:
    """A model-started refinement that does not end within the width is forgotten: the query ends exactly
    as the plain schedule from 10⁻² ends (here one pass allowed: both refuse with the same error)."""
    monkeypatch.setattr(_refine, "MAX_PASSES", 1)
    monkeypatch.setattr(_pld, "first_step", lambda laws, target, support=None: None)
    with pytest.raises(GridTooLargeError) as plain:
        _sgd(2.0, 0.001, 1000).epsilon(DELTA)
    monkeypatch.setattr(_pld, "first_step", lambda laws, target, support=None: 2e-3)
    seen = _counting_passes(monkeypatch)
    with pytest.raises(GridTooLargeError) as replayed:
        _sgd(2.0, 0.001, 1000).epsilon(DELTA)
    assert seen == [2e-3, 1e-2]  # the model's pass missed by far more than _MODEL_MISS: given up at once
    assert str(replayed.value) == str(plain.value)


def test_deep_delta_keeps_the_plain_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """Below PLD_DEEP_DELTA a width may be out of reach (the narrowest bracket is returned): no model start."""
    seen = _counting_passes(monkeypatch)
    _sgd(2.0, 0.001, 1000).epsilon(1e-16)
    assert seen[0] == 1e-2


def test_lazy_directions_build_only_what_is_read_and_answer_bit_for_bit() -> None:
    """A pass's directions are realised on first use: the ε pass of σ = 2, q = 10⁻³ reads the add
    direction 6× coarser and never builds it at its own step; the bracket equals the eager one's."""
    pld = _sgd(2.0, 0.001, 1000)
    step = 1.3e-5
    lazy = pld._directions(step)
    probed = _pld._EpsilonMeasure(DELTA, DEFAULT_ACCURACY.relative_width, pld._direction).run(lazy)
    assert lazy._dirs[0] is not None and lazy._dirs[1] is None
    eager = Directions(step, 2, lambda i, memo: pld._realise(pld._laws()[i], step, memo))
    full = tuple(eager[i] for i in range(2))
    assert _pld._EpsilonMeasure(DELTA).run(full) == _pld._EpsilonMeasure(DELTA).run(lazy[:])
    assert probed.upper == _pld._EpsilonMeasure(DELTA).run(full).upper


def test_the_model_aims_finer_where_two_levels_double_the_width() -> None:
    """σ = 2, q = 1e-3, 10⁵ steps is composed in two levels (docs/pld.md §5a), whose width at a given step is
    about twice one level's: the model start aims √2 finer there, and the query takes one pass within the
    width (speed only; every pass is certified)."""
    from optcomp.pld import _blocks

    law = PoissonSubsampled(Gaussian(2.0), sampling_rate=1e-3)
    pld = compose((law, 100_000)).pld()
    laws = pld._laws()
    a, b = pld._span(laws[0][0][0], 0)
    s = _stepmodel.loss_scale(laws[0][0][0])
    assert s is not None and _blocks.likely_two_level(100_000, s, b - a)
    one = _stepmodel.first_step(laws, 1e-4)
    two = _stepmodel.first_step(laws, 1e-4, b - a)
    assert one is not None and two is not None and two == pytest.approx(one / math.sqrt(2), rel=1e-12)
    bound = pld.epsilon(1e-5)
    assert (bound.upper - bound.lower) / bound.upper <= 1e-4

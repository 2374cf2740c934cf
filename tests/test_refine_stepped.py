"""The refinement of laws that live on the grid step (``pld._refine.refine_stepped``, issue 33 item 2; issue
32 item 4's stops): synthetic runs whose bracket at step h is known, placed by balls-in-bins' own first step
and dyadic steps; and the balls-in-bins run (``AllocationRun``) as the :class:`SteppedLaws` it drives."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

from optcomp import Accuracy, dpsgd
from optcomp._numerics import Bound
from optcomp.mechanisms._allocation_grid import MAX_WORK
from optcomp.mechanisms.allocation import (
    ALLOCATION_FIRST_STEP,
    ALLOCATION_START_FACTOR,
    ALLOCATION_START_WIDTH,
    AllocationRun,
    grid_step_below,
)
from optcomp.pld import GridTooLargeError, SteppedBracket, SteppedLaws, refine_stepped
from optcomp.pld._refine import STEPPED_MAX_RATIO, step_ratio

#: The epoch-loss scale of the synthetic runs (places their first step as balls-in-bins would).
SCALE = 0.05


@dataclass
class _Laws:
    """Synthetic :class:`SteppedLaws`: balls-in-bins' placement at loss scale SCALE, its own work counter."""

    counted: list[float] = field(default_factory=lambda: [0.0])
    title: str = "synthetic"
    max_work: float = 2 * MAX_WORK

    @property
    def work(self) -> float:
        return self.counted[0]

    def first_step(self, target: float) -> float:
        start = ALLOCATION_START_FACTOR * SCALE * math.sqrt(max(target, ALLOCATION_START_WIDTH))
        return grid_step_below(min(ALLOCATION_FIRST_STEP, start))

    def step_below(self, h: float) -> float:
        return grid_step_below(h)


def _split(upper_at: Callable[[Accuracy], Bound], lower: float,
           plain: Bound | None = None) -> Callable[[Accuracy], tuple[Bound, Bound]]:
    """A synthetic ``bracket_at``: the split pair's bracket ``upper_at(acc)``, the run's upper end that capped
    by ``plain`` (no amplification), its lower end ``lower`` (as a run bracket would merge them)."""
    def at(acc: Accuracy) -> tuple[Bound, Bound]:
        pair = upper_at(acc)
        top = pair.upper if plain is None else min(pair.upper, plain.upper)
        return Bound(min(lower, top), top), pair
    return at


def _bracket(width_at: Callable[[float], float], target: float, strict: bool = True) -> SteppedBracket:
    """refine_stepped on a synthetic run whose bracket at step h is [1, 1 + width_at(h)]."""
    return refine_stepped(_Laws(), _split(lambda acc: Bound(0.5, 1.0 + width_at(acc.grid_step or 1.0)), 1.0),
                          Accuracy(relative_width=target), floor=0.01, strict=strict)
def test_a_width_floor_that_no_step_removes_is_refused_early_by_name() -> None:
    """Issue 32 item 4: a width with a step-independent part w0 above the target (the laws' compounded
    rounding bounds) is refused after the second pass, naming it, instead of refining to the work limit;
    a query that is not strict gets the narrowest bracket; a width of pure second order is never stopped."""
    passes: list[float] = []

    def floor(h: float) -> float:
        passes.append(h)
        return 3e-4 + 40 * h * h

    with pytest.raises(GridTooLargeError, match="no longer shrinks with the step") as info:
        _bracket(floor, 1e-4)
    assert len(passes) == 2 and info.value.bracket is not None
    assert _bracket(floor, 1e-4, strict=False).run.upper == 1.0 + floor(passes[-1])
    met = _bracket(lambda h: 40 * h * h, 1e-6)
    assert met.run.upper - 1.0 <= 1e-6


def test_a_fixed_no_amplification_end_is_not_taken_for_a_width_floor() -> None:
    """While the run's upper end is the no-amplification one (a fixed value), the width does not shrink
    with the step either, yet a finer step brings the laws' end below it: no early stop there."""
    done = refine_stepped(_Laws(), _split(lambda acc: Bound(0.5, 1.0 + 4e4 * (acc.grid_step or 1.0) ** 2), 0.99999,
                                          Bound(0.5, 1.0005)),
                          Accuracy(relative_width=1e-4), floor=0.01)
    assert done.run.upper < 1.0005 and done.run.upper - done.run.lower <= 1e-4 * done.run.upper


def test_a_width_floor_before_a_costly_second_pass_is_refused_after_a_coarse_probe() -> None:
    """σ = 2, t = 10⁷ (the laws' rounding bounds dominate the width): where the second pass would take many
    times the first's work, a probe at 4× the first step (1/16 of its work) fits width ≈ a·h² + w0 and the
    refusal by name comes without that pass, carrying the first pass's bracket; a width of pure second
    order still reaches its target after the probe (the probe only adds a pass, never moves the answer)."""
    def run(width_at: Callable[[float], float], target: float, passes: list[float]) -> SteppedBracket:
        laws = _Laws()
        first = 1.5 * 2.0**-11  # the first step at scale 0.05, width 1e-4

        def upper_at(acc: Accuracy) -> Bound:
            h = acc.grid_step or 1.0
            passes.append(h)
            laws.counted[0] += 1e9 * (first / h) ** 2  # counted work ∝ h⁻², 1e9 at the first step
            return Bound(0.5, 1.0 + width_at(h))

        return refine_stepped(laws, _split(upper_at, 1.0), Accuracy(relative_width=target), floor=0.01)

    passes: list[float] = []
    with pytest.raises(GridTooLargeError, match="no longer shrinks with the step") as info:
        run(lambda h: 3e-4 + 4 * h * h, 1e-4, passes)
    assert passes == [passes[0], 4 * passes[0]]  # the first pass and the probe, not the 9-fold second pass
    assert info.value.bracket == Bound(1.0, 1.0 + 3e-4 + 4 * passes[0] ** 2)
    probed: list[float] = []
    met = run(lambda h: 600 * h * h, 1e-4, probed)
    assert probed[1] == 4 * probed[0] and len(probed) == 3 and met.run.upper - 1.0 <= 1e-4


def test_the_step_rule_is_the_schedules_on_the_dyadic_steps() -> None:
    """The next step is the schedule's (``step_ratio`` from a one-pass history: order 2, STEP_MARGIN, at most
    STEPPED_MAX_RATIO) rounded down to a dyadic step; the first pass's step is the first one tried, and the
    second (its width 16× the target) about a quarter of it."""
    passes: list[float] = []

    def width(h: float) -> float:
        passes.append(h)
        return 1e-4 * 16 * (h / passes[0]) ** 2

    _bracket(width, 1e-4)
    assert passes[0] == _Laws().first_step(1e-4)
    assert passes[1] == grid_step_below(passes[0] * step_ratio([(passes[0], 16e-4)], 1e-4, max_ratio=STEPPED_MAX_RATIO))
    assert passes[1] <= passes[0] / 4


def test_the_balls_in_bins_run_is_the_stepped_laws_its_sampler_row_builds() -> None:
    """``SAMPLERS["balls_in_bins"].stepped`` builds the run's :class:`AllocationRun` (the tail budget of the
    query's δ), whose placement is its own: dyadic steps, a first step at most ALLOCATION_FIRST_STEP."""
    run = dpsgd.Run.checked(3.0, 0.1, 25, "balls_in_bins")
    factory = run.sampler.stepped
    assert factory is not None
    laws: SteppedLaws = factory(run, 1e-6)
    assert laws == AllocationRun.of(3.0, 0.1, 25, 1e-6)
    assert laws.first_step(1e-8) <= laws.first_step(1e-2) <= ALLOCATION_FIRST_STEP
    assert laws.step_below(0.7) == 0.5 and laws.step_below(0.75) == 0.75
    assert laws.max_work == 2 * MAX_WORK and laws.title == "balls-in-bins"

"""Batch queries (issue 33 item 2): ``Engine.answers``, ``RunBracket.answers``, ``dpsgd.Run.answers``.

Checked: every engine's batch holds the truth its single queries hold (an exact reference where there is one:
the GDP closed form in mpmath); an engine that shares nothing answers exactly as its single queries; the grid's
shared realisations meet the requested width and overlap the single queries' certified brackets; a query's
error is its own answer and leaves the others; a fixed grid step is one pass; the run bracket's batch merges
each query as its single query does; the warm start only changes the grid steps tried, never soundness.
"""

from __future__ import annotations

import math
from typing import Literal

import pytest

from optcomp import Accuracy, Bound, compose, dpsgd
from optcomp.engines import Answers, each_answer
from optcomp.mechanisms import Gaussian, Laplace, PoissonSubsampled
from optcomp.pld import GridTooLargeError, WarmStart, delta_width, epsilon_width
from tests._references.gdp import gdp_delta

WIDTH = 1e-3
ACC = Accuracy(relative_width=WIDTH)
DELTAS = [1e-3, 1e-6, 1e-9]
EPSILONS = [0.5, 1.0, 4.0]


def test_an_engine_that_shares_nothing_answers_as_its_single_queries() -> None:
    comp = compose((Gaussian(2.0), 10), accuracy=ACC)  # the GDP closed form, μ = √10/2
    engine = comp.route()
    got = engine.answers(DELTAS, EPSILONS)
    assert got.epsilons == {d: comp.epsilon(d) for d in DELTAS}
    assert got.deltas == {e: comp.delta(e) for e in EPSILONS}
    mu = math.sqrt(10) / 2
    for e, b in got.deltas.items():
        assert isinstance(b, Bound) and b.lower <= gdp_delta(mu, e) <= b.upper


def test_the_grid_shares_realisations_and_meets_the_width() -> None:
    comp = compose((PoissonSubsampled(Gaussian(1.0), sampling_rate=0.01), 500), accuracy=ACC)
    got = comp.route().answers(DELTAS, EPSILONS)
    for d, b in got.epsilons.items():
        single = comp.epsilon(d)
        assert isinstance(b, Bound) and epsilon_width(b) <= WIDTH
        assert max(b.lower, single.lower) <= min(b.upper, single.upper)  # both certified: they overlap
    for e, b in got.deltas.items():
        single = comp.delta(e)
        assert isinstance(b, Bound) and delta_width(b) <= WIDTH
        assert max(b.lower, single.lower) <= min(b.upper, single.upper)


def test_a_fixed_grid_step_is_one_pass_of_shared_realisation() -> None:
    step = 2e-3
    comp = compose((PoissonSubsampled(Gaussian(1.0), sampling_rate=0.01), 200), accuracy=Accuracy(grid_step=step))
    got = comp.route().answers(DELTAS, EPSILONS)
    lo, hi = comp.pld().delta_curve(EPSILONS)
    assert [got.deltas[e] for e in EPSILONS] == [Bound(float(a), float(b)) for a, b in zip(lo, hi, strict=True)]


def test_a_query_error_is_its_own_answer() -> None:
    class Refusing:
        def epsilon(self, delta: float, strict: bool) -> Bound:
            if delta < 1e-6:
                raise GridTooLargeError("too deep")
            return Bound(1.0, 1.0)

        def delta(self, epsilon: float) -> Bound:
            raise ValueError("epsilon is out of range")

    got = each_answer(Refusing(), [1e-3, 1e-9], [1.0])  # type: ignore[arg-type]
    assert got.epsilons[1e-3] == Bound(1.0, 1.0)
    assert isinstance(got.epsilons[1e-9], GridTooLargeError) and isinstance(got.deltas[1.0], ValueError)


def test_the_run_brackets_batch_merges_each_query_as_its_single_query() -> None:
    comp = compose((Laplace(5.0), 3), (Gaussian(2.0), 2), accuracy=Accuracy(grid_step=1e-3))
    run = dpsgd.Run.checked(1.0, 0.05, 50, "fixed_size").bracket(Accuracy(grid_step=1e-3))
    for bracket in (comp.run_bracket(), run):
        got = bracket.answers(DELTAS, EPSILONS)
        assert isinstance(got, Answers)
        for d in DELTAS:  # a fixed step: one realisation, the single queries' own
            b = got.epsilons[d]
            assert isinstance(b, Bound) and b.lower <= b.upper
            assert b == bracket.epsilon(d) or max(b.lower, bracket.epsilon(d).lower) <= min(b.upper, bracket.epsilon(d).upper)
        for e in EPSILONS:
            assert got.deltas[e] == bracket.delta(e)


@pytest.mark.parametrize("sampling", ["poisson", "shuffle"])
def test_a_warm_start_changes_steps_not_soundness(sampling: Literal["poisson", "shuffle"]) -> None:
    """Along a chain of T, the second T starts where the first met its width: its brackets still meet the
    width and overlap the cold single queries'."""
    warm = (WarmStart(), WarmStart())
    for steps in (100, 400):
        run = dpsgd.Run.checked(1.5, 0.02, steps, sampling)
        got = run.answers([1e-5], [1.0], ACC, warm=warm)
        cold = dpsgd.epsilon(1.5, 0.02, steps, 1e-5, sampling=sampling, accuracy=ACC)
        b = got.epsilons[1e-5]
        assert isinstance(b, Bound) and max(b.lower, cold.lower) <= min(b.upper, cold.upper)
    # the grid's warm start moved along the chain (shuffled epochs: one Gaussian, the closed form, no grid)
    assert warm[0].position == (400 if sampling == "poisson" else 0)

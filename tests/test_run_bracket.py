"""The run bracket (issue 33 item 1): one home of "which pair bounds a run from below" and of the merge
"lower end from the dominated composition, upper end from the dominating one".

Checked: the merge's four cases (the law is the run's; a dominated composition; none; a second dominating
composition), that every query of a composition whose law only dominates its run *is* its run bracket's,
the batch queries, the sampler table (names, flags) against the ``Sampling`` literal, who builds which
bracket, and group privacy's profile route taking its lower end from the run (not from the dominating law,
which is no lower bound: a fixed-size run).
"""

from __future__ import annotations

from typing import get_args

import numpy as np
import pytest

from optcomp import Accuracy, Bound, compose, dpsgd
from optcomp._items import dominated_items
from optcomp.fdp import group_profile
from optcomp.mechanisms import (
    Gaussian,
    Laplace,
    PoissonSubsampled,
    SubsampledWithoutReplacement,
    TruncatedPoissonGaussian,
)
from optcomp.mechanisms.truncated import truncated_poisson_lower_pair
from optcomp.queries import RunBracket
from tests.tolerances import COARSE_GRID_STEP

COARSE = Accuracy(grid_step=COARSE_GRID_STEP)
DELTA = 1e-5
_TRUNCATED = TruncatedPoissonGaussian(1.0, dataset_size=500, sampling_rate=0.02, max_batch_size=12)
_FIXED = SubsampledWithoutReplacement(Gaussian(1.0, sensitivity=2.0), sampling_rate=0.05)


def test_the_merge_takes_each_end_from_its_composition() -> None:
    upper = compose((PoissonSubsampled(Gaussian(1.0), sampling_rate=0.05), 20), accuracy=COARSE)
    lower = compose((PoissonSubsampled(Gaussian(1.0), sampling_rate=0.04), 20), accuracy=COARSE)
    cap = compose(Gaussian(3.0))
    up, low, top = upper.epsilon(DELTA), lower.epsilon(DELTA), cap.epsilon(DELTA)
    assert RunBracket(upper, upper).exact and RunBracket.own(upper).epsilon(DELTA) == up
    assert RunBracket(upper, lower).epsilon(DELTA) == Bound(min(low.lower, up.upper), up.upper)
    assert RunBracket(upper, None).epsilon(DELTA) == Bound(0.0, up.upper)
    capped = min(up.upper, top.upper)
    assert RunBracket(upper, lower, cap).epsilon(DELTA) == Bound(min(low.lower, capped), capped)
    assert top.upper < up.upper  # the cap is what answers here
    # a lower end above the upper end is clipped to it (the merged bracket is never inverted)
    assert RunBracket(upper, lower).merge(Bound(1.0, 2.0), Bound(3.0, 4.0)) == Bound(2.0, 2.0)


def test_a_composition_whose_law_only_dominates_asks_its_run_bracket() -> None:
    for comp in (compose((_TRUNCATED, 50), accuracy=COARSE), compose((_FIXED, 10), Laplace(5.0), accuracy=COARSE)):
        run = comp.run_bracket()
        assert not run.exact and run.lower == comp.dominated() and run.upper is comp.dominating()
        assert comp.epsilon(DELTA) == run.epsilon(DELTA) and comp.delta(0.5) == run.delta(0.5)
        eps = [0.0, 0.5, 2.0]
        for a, b in zip(comp.delta_curve(eps), run.delta_curve(eps), strict=True):
            assert np.array_equal(a, b)
        assert comp.epsilon(DELTA).lower < comp.dominating().epsilon(DELTA).lower  # the run's lower end
    own = compose((PoissonSubsampled(Gaussian(1.0), sampling_rate=0.05), 20), accuracy=COARSE)
    assert own.run_bracket().exact and own.dominated() is None


def test_batch_queries_are_the_single_ones() -> None:
    run = compose((_TRUNCATED, 50), accuracy=COARSE).run_bracket()
    deltas, epsilons = [1e-3, 1e-5, 1e-7], [0.0, 1.0]
    assert run.epsilons(deltas) == [run.epsilon(d) for d in deltas]
    assert run.deltas(epsilons) == [run.delta(e) for e in epsilons]


def test_which_pair_bounds_a_run_from_below() -> None:
    """The one rule (``dominated_items``): each item's counterpart, pooled; none where every law is the run's
    own or the run is one fixed-size step alone (its symmetrized law is attained)."""
    assert dominated_items(((_TRUNCATED, 3), (Laplace(1.0), 2))) == (
        (truncated_poisson_lower_pair(_TRUNCATED), 3), (Laplace(1.0), 2))
    assert dominated_items(((_FIXED, 2),)) == ((PoissonSubsampled(_FIXED.mechanism, sampling_rate=0.05), 2),)
    assert dominated_items(((_FIXED, 1),)) is None
    assert dominated_items(((SubsampledWithoutReplacement(Gaussian(1.0), sampling_rate=1.0), 4),)) is None
    assert dominated_items(((Gaussian(1.0), 4), (Laplace(1.0), 1))) is None


def test_the_sampler_table_is_the_one_list_of_names() -> None:
    assert get_args(dpsgd.Sampling) == tuple(dpsgd.SAMPLERS) == dpsgd.SUPPORTED_SAMPLING
    assert dpsgd.SAMPLING_RELATION == {name: row.relation for name, row in dpsgd.SAMPLERS.items()}
    assert [n for n, r in dpsgd.SAMPLERS.items() if r.exact] == ["poisson"]
    for name, row in dpsgd.SAMPLERS.items():
        assert row.batches and row.title and row.relation in ("add_remove", "substitution", "zero_out"), name


@pytest.mark.parametrize("sampling", list(dpsgd.SAMPLERS))
def test_every_sampler_builds_its_run_bracket(sampling: str) -> None:
    kw = {"dataset_size": 1000, "max_batch_size": 12} if dpsgd.SAMPLERS[sampling].sized else {}
    run = dpsgd.Run.checked(1.0, 0.01, 200, sampling, **kw)
    bracket = run.bracket(COARSE)
    assert bracket.exact == dpsgd.SAMPLERS[sampling].exact
    if dpsgd.SAMPLERS[sampling].lower is not None:  # its own dominated pair
        assert bracket.lower is not None and bracket.lower.items == tuple(dpsgd.SAMPLERS[sampling].lower(run))
    if sampling == "truncated_poisson":  # the items' counterparts
        assert bracket.lower == compose(*run.items(), accuracy=COARSE).dominated()


def test_run_at_is_validated_again() -> None:
    run = dpsgd.Run.checked(1.0, 0.01, 200, "truncated_poisson", 1, 1000, 12)
    assert run.at(sigma=2.0) == dpsgd.Run(2.0, 0.01, 200, "truncated_poisson", 1, 1000, 12)
    assert run.at(steps=5).steps == 5
    with pytest.raises(ValueError, match="noise_multiplier"):
        run.at(sigma=-1.0)


@pytest.mark.slow  # about 10 s on 2 cores: make test-slow
def test_group_profile_lower_end_is_the_runs() -> None:
    """10 fixed-size steps have no group law (the profile route): its lower end is the run's one-record ε
    (the attained pairs', 8.5532 at g = 2), not the symmetrized law's (8.6657, no lower bound of the run)."""
    comp = compose((_FIXED, 10))
    b = comp.group_epsilon(2, DELTA)
    assert b.route == "profile" and "hypergeometric" in b.reason
    law = group_profile(comp.pld(), 2, DELTA)
    dominated = comp.dominated()
    assert dominated is not None
    assert b.upper == law.upper and b.lower == group_profile(dominated.pld(), 1, DELTA).lower
    assert b.lower < law.lower and b.lower <= dominated.epsilon(DELTA).upper

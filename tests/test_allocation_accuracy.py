"""Balls-in-bins honours ``Accuracy`` and keeps its certificate on the faster laws (issue 32 items 4 and 9):
the requested relative width is met or ``GridTooLargeError`` names why (with the narrowest certified
bracket as its ``bracket``), never [0, x] silently; the factor cells are checked against 30-digit
integrals (they used to carry 5.7e-7 of excess mass each at h = 2⁻¹¹, times t); the laws on one grid
are the earlier laws (``tests/_references/allocation_legacy_*``) or on their safe side; a lower-only law
is refused by ``compose``; the CLI's run has no coarser-grid "dominating pair" row."""

from __future__ import annotations

import json
import math

import pytest

from optcomp import Accuracy, compose, dpsgd
from optcomp.cli import main
from optcomp.composition import dominated_composition
from optcomp.mechanisms import _allocation_grid
from optcomp.mechanisms._allocation_cells import factor_cells, window
from optcomp.mechanisms._allocation_grid import upper_law
from optcomp.mechanisms._allocation_lower import lower_laws
from optcomp.mechanisms.allocation import (
    ALLOCATION_START_FACTOR,
    ALLOCATION_START_WIDTH,
    AllocationEpoch,
    AllocationEpochLower,
    allocation_scale,
    allocation_tail,
    grid_step_below,
)
from optcomp.pld import GridTooLargeError, PrivacyLossDistribution
from tests._references.allocation import factor_cell_integrals
from tests._references.allocation_legacy_grid import upper_law as legacy_upper_law
from tests._references.allocation_legacy_lower import lower_laws as legacy_lower_laws

DEFAULT_WIDTH = Accuracy().relative_width


def _width(b: object) -> float:
    return (b.upper - b.lower) / max(b.upper, 0.01)  # type: ignore[attr-defined]


@pytest.mark.parametrize(("mu", "t", "h"), [(1.0, 1000, 2.0**-11), (1 / 3, 100, 2.0**-9), (1 / 50, 1000, 1.5 * 2.0**-14)])
def test_factor_cells_match_thirty_digit_integrals(mu: float, t: int, h: float) -> None:
    """Every value of a factor cell is within its certified relative error of the 30-digit integral, at the
    window's ends and its middle; the bound is far below what the t-fold sum could feel."""
    j_lo, j_hi = window(mu, t, h, allocation_tail(1e-6, 10, t))
    cells = factor_cells(mu, t, h, j_lo, j_hi)
    mode = round((-mu * mu / 2 - math.log(t)) / h)
    for j in (j_lo, j_lo + 7, mode - 3, mode, j_hi - 9, j_hi - 1):
        i = j - j_lo
        exact = factor_cell_integrals(mu, t, h, j)
        for value, truth in zip((cells.q[i], cells.r[i], cells.up[i], cells.down[i]), exact, strict=True):
            assert abs(value - truth) <= cells.rel[i] * truth, (j, value, truth, cells.rel[i])
    assert float(cells.rel.max()) < 1e-11


def test_split_law_carries_no_excess_mass() -> None:
    """Issue 32 item 4: the factor split by CDF differences added ≈ 1.4e-7 of mass per factor at h = 2⁻¹⁰ (the
    t-fold sum: 1.4e-4 at t = 1,000, which moved ε by about 1e-4 relative); the split law's Q-mass now
    exceeds 1 by rounding only."""
    law = upper_law(1.0, 1000, 2.0**-10, allocation_tail(1e-6, 10, 1000))
    assert math.fsum(law.atom_q.tolist()) - 1.0 < 1e-7


@pytest.mark.parametrize(
    ("sigma", "q", "steps"),
    [(3.0, 0.1, 25), (1.0, 0.01, 50), (3.0, 0.1, 100)],
    ids=["partial-last-epoch", "less-than-one-epoch", "whole-epochs"],
)
def test_default_accuracy_is_met(sigma: float, q: float, steps: int) -> None:
    """At the default accuracy the bracket is as narrow as asked, also for a partial last epoch (it counted
    ⌈T/t⌉ epochs above and ⌊T/t⌋ below: 20 % wide at T = 25, t = 10) and for less than one epoch (its lower end
    was 0: [0, x], silently)."""
    b = dpsgd.epsilon(sigma, q, steps, 1e-6, sampling="balls_in_bins")
    assert 0.0 < b.lower <= b.upper
    assert _width(b) <= DEFAULT_WIDTH


def test_a_width_out_of_reach_is_refused_with_its_bracket(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 32 item 4: where the next grid would exceed the work limit, ε raises GridTooLargeError naming
    the width reached; the narrowest certified bracket travels as ``bracket`` and overlaps the first pass's.
    Queries that are not strict (δ queries, deep δ: the engine's convention) get that bracket, no refusal."""
    args = (3.0, 0.01, 1000, 1e-6)
    for cached in (upper_law, _allocation_grid.upper_laws, lower_laws):  # the first pass's work is counted
        cached.cache_clear()
    start = grid_step_below(ALLOCATION_START_FACTOR * allocation_scale(3.0, 100) * math.sqrt(ALLOCATION_START_WIDTH))
    done = _allocation_grid.WORK[0]
    first = dpsgd.epsilon(*args, sampling="balls_in_bins", accuracy=Accuracy(grid_step=start))  # the first pass
    monkeypatch.setattr(_allocation_grid, "MAX_WORK", _allocation_grid.WORK[0] - done)  # room for it only
    with pytest.raises(GridTooLargeError, match="relative width 1e-05 is not reached.*the width is") as info:
        dpsgd.epsilon(*args, sampling="balls_in_bins", accuracy=Accuracy(relative_width=1e-5))
    reached = info.value.bracket
    assert reached is not None and _width(reached) > 1e-5
    assert max(reached.lower, first.lower) <= min(reached.upper, first.upper)
    run = dpsgd.Run.checked(3.0, 0.01, 1000, "balls_in_bins")  # not strict: δ queries, deep δ
    assert run.bound(lambda c: c.epsilon(1e-6), Accuracy(relative_width=1e-5), delta=1e-6, strict=False) == reached


def test_the_cli_refuses_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    """The refusal on the command line: exit 2, one stderr line with the width reached and the advice."""
    code = main(["dpsgd", "--sigma", "3", "--q", "0.01", "--steps", "1000", "--delta", "1e-6", "--sampling",
                 "balls_in_bins", "--accuracy", "relative_width=1e-9"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "relative width 1e-09 is not reached" in err and "--accuracy relative_width=" in err
    assert "memory_cap" not in err  # the work limit, not memory, stops it: no cap would help


def test_the_cli_run_has_no_coarser_dominating_pair_row(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 32 item 9: the split pair's row (a coarser grid's bound, above the run's upper end, unlabelled)
    is gone from the table and the JSON: balls-in-bins' pair is attained (Lemma A), the run's bracket is its."""
    base = ["dpsgd", "--sigma", "3", "--q", "0.1", "--steps", "100", "--delta", "1e-6", "--sampling", "balls_in_bins"]
    assert main(base) == 0
    table = capsys.readouterr().out
    assert "dominating pair" not in table
    assert main([*base, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert "dominating_pair_epsilon" not in data
    assert data["epsilon"]["lower"] <= data["epsilon"]["upper"]


def test_compose_refuses_a_lower_only_law() -> None:
    """Issue 32 item 9: AllocationEpochLower's envelopes (lower P, upper Q) make any upper end meaningless;
    compose refuses it by name; its lower end is read through dominated_composition."""
    lower = AllocationEpochLower(3.0, steps=10, grid_step=2.0**-8)
    with pytest.raises(ValueError, match="AllocationEpochLower is a lower-only law"):
        compose((lower, 2))
    with pytest.raises(ValueError, match="lower-only"):
        compose(AllocationEpoch(3.0, steps=10, grid_step=2.0**-8), lower)
    b = dominated_composition((lower, 2), accuracy=Accuracy(grid_step=2.0**-8)).epsilon(1e-6)
    assert 0.0 < b.lower


#: (σ, t, E, h): the laws on one grid (every stage on h) against the earlier code's (kept as a reference).
SAME_GRID = [(3.0, 10, 10, 2.0**-9), (1.0, 100, 10, 2.0**-9), (0.8, 10, 10, 2.0**-8), (1.0, 7, 3, 2.0**-9)]


@pytest.mark.parametrize(("sigma", "t", "epochs", "h"), SAME_GRID)
def test_laws_on_one_grid_against_the_earlier_code(
    sigma: float, t: int, epochs: int, h: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With every stage on h the split law is the earlier one less its float excess (its ε lower by at most
    1e-5 relative, the excess mass it carried, never higher beyond rounding); the labelled law's ε is the
    earlier one's within 1e-5 relative (sharper factor cells, the reveals of pairs outside both cores); the
    two brackets overlap."""
    monkeypatch.setattr(_allocation_grid, "ALLOCATION_STAGE_LEVELS", 0)
    acc = Accuracy(grid_step=h)

    def eps(remove: object, add: object) -> object:
        return PrivacyLossDistribution.from_laws(remove, add, accuracy=acc).self_compose(epochs).epsilon(1e-6)  # type: ignore[arg-type]

    new, old = upper_law.__wrapped__(sigma, t, h), legacy_upper_law(sigma, t, h)
    up_new, up_old = eps(new, new.swapped()).upper, eps(old, old.swapped()).upper  # type: ignore[attr-defined]
    assert up_old * (1 - 1e-5) <= up_new <= up_old * (1 + 1e-12)
    low_new, low_old = eps(*lower_laws.__wrapped__(sigma, t, h)).lower, eps(*legacy_lower_laws(sigma, t, h)).lower  # type: ignore[attr-defined]
    assert abs(low_new - low_old) <= 1e-5 * low_old
    assert max(low_new, low_old) <= min(up_new, up_old)


def test_a_sweep_row_keeps_the_bracket_a_refusal_carries() -> None:
    """The sweep stores the narrowest certified bracket of a refused balls-in-bins point (its width goes with
    the row), as it does for the shared grid's passes; a refusal without one stays an error."""
    from optcomp._numerics import Bound
    from optcomp.engines import one_answer

    def refuse(bracket: Bound | None) -> Bound:
        exc = GridTooLargeError("the requested relative width 1e-09 is not reached")
        exc.bracket = bracket
        raise exc

    assert one_answer(lambda _: refuse(Bound(0.5, 0.6)), 1e-6, None) == Bound(0.5, 0.6)
    assert isinstance(one_answer(lambda _: refuse(None), 1e-6, None), GridTooLargeError)


def test_a_warm_process_refuses_by_the_work_prediction() -> None:
    """A pass served from the law caches counts the work its laws took when built (``counted_cache``): a
    warm process (a sweep, a notebook) refuses a width out of reach by the work prediction at once, as a
    cold one does, instead of building the next step's laws up to the work limit (tens of seconds)."""
    args = (3.0, 0.1, 100, 1e-6)
    dpsgd.epsilon(*args, sampling="balls_in_bins")  # the default width: its pass's laws are now cached
    with pytest.raises(GridTooLargeError, match="it would take about") as info:
        dpsgd.epsilon(*args, sampling="balls_in_bins", accuracy=Accuracy(relative_width=1e-12))
    assert info.value.bracket is not None and info.value.bracket.lower <= info.value.bracket.upper

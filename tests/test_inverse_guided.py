"""`optcomp._inverse`'s vectorised boundary (`float_boundaries`) and solve's caller-model hooks
(`propose`, `accept`, `lowest`, the bracket carried by `SearchBudgetExceeded`): the safe side, as for
`solve`, whatever the verdicts."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optcomp._inverse import SearchBracket, SearchBudgetExceeded, float_boundaries, float_boundary, solve


@settings(max_examples=100, deadline=None)
@given(
    roots=st.lists(st.floats(1e-250, 1e250), min_size=1, max_size=20),
    passing_above=st.booleans(),
    start=st.floats(1e-10, 1e10),
)
def test_float_boundaries_are_the_scalar_boundaries_to_adjacent_floats(
    roots: list[float], passing_above: bool, start: float
) -> None:
    """Each element's answer: ``passing`` passed and ``fail`` failed where they were evaluated, they are
    adjacent floats, and they equal the scalar :func:`float_boundary`'s (the boundary of a monotone verdict
    in floats is unique)."""
    r = np.array(roots)
    evaluated: list[tuple[np.ndarray, np.ndarray]] = []

    def passes(x: np.ndarray) -> np.ndarray:
        ok = x >= r if passing_above else x <= r
        evaluated.append((x.copy(), ok.copy()))
        return ok

    fail, passing = float_boundaries(passes, np.full_like(r, start), passing_above=passing_above)
    for i, root in enumerate(roots):
        assert math.nextafter(min(fail[i], passing[i]), math.inf) == max(fail[i], passing[i])
        verdicts = {bool(ok[i]) for x, ok in evaluated if x[i] == passing[i]}
        assert verdicts == {True}
        assert {bool(ok[i]) for x, ok in evaluated if x[i] == fail[i]} == {False}
        one = float_boundary(lambda x, root=root: x >= root if passing_above else x <= root, name="x",
                             passing_above=passing_above, start=start, first_gap=start)
        assert (one.fail, one.passing) == (fail[i], passing[i])


def test_float_boundaries_never_return_an_unevaluated_point_for_a_noisy_verdict() -> None:
    """A verdict that is not monotone (noise near the root): still only evaluated points come back,
    with the verdict they had."""
    rng = np.random.default_rng(0)
    roots = 10.0 ** rng.uniform(-5, 5, 200)
    seen: dict[tuple[int, float], bool] = {}

    def passes(x: np.ndarray) -> np.ndarray:
        noisy = np.abs(np.log(x / roots)) < 1e-12
        ok = np.where(noisy, rng.random(x.size) < 0.5, x <= roots)
        for i, (xi, oi) in enumerate(zip(x.tolist(), ok.tolist())):
            seen.setdefault((i, xi), oi)
            assert seen[(i, xi)] == oi or noisy[i]
            seen[(i, xi)] = oi
        return ok

    fail, passing = float_boundaries(passes, np.ones(200), passing_above=False)
    for i in range(200):
        assert seen[(i, float(passing[i]))] is True and seen[(i, float(fail[i]))] is False


def test_propose_replaces_the_step_and_accept_stops_early() -> None:
    """solve with a caller's model: the proposals are what is evaluated, a passing value within the
    accept window ends the search, and the bracket is solve's (evaluated points only)."""
    calls: list[float] = []

    def value(x: float) -> float:  # increasing, root at x = 3
        calls.append(x)
        return x / 3.0

    proposals = iter([1.0, 2.0, 2.999])
    found = solve(value, 1.0, name="x", guess=0.5, rtol=1e-9, increasing=True, accept=0.99,
                  propose=lambda x, v, bracket: next(proposals))
    assert calls == [0.5, 1.0, 2.0, 2.999]
    assert found == SearchBracket(None, 2.999)


def test_lowest_ends_a_search_that_finds_nothing_passing() -> None:
    def value(x: float) -> float:
        return math.inf  # nothing passes

    found = solve(value, 1.0, name="x", guess=1.0, rtol=1e-3, increasing=True, lowest=1e-3,
                  propose=lambda x, v, bracket: x / 10.0)
    assert found.passing is None and found.fail is not None and found.fail <= 1e-3


def test_budget_exhaustion_carries_the_bracket() -> None:
    with pytest.raises(SearchBudgetExceeded, match="x") as info:
        solve(lambda x: x / 3.0, 1.0, name="x", guess=1.0, rtol=1e-12, increasing=True, budget=3,
              propose=lambda x, v, bracket: x * 1.5)
    assert info.value.bracket == SearchBracket(None, 2.25)  # 1, 1.5, 2.25 evaluated: all pass

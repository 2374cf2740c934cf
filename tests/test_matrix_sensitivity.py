"""optcomp.matrix.sensitivity: brute force inside every bracket, the design note's exact numbers, bad input."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optcomp import matrix
from optcomp.matrix._pattern import all_patterns
from optcomp.matrix._sensitivity import tree_pattern_value
from optcomp.matrix._tree import tree_brute_force
from tests._references.matrix import (
    blt_matrix,
    brute_force_orthogonal,
    brute_force_signed,
    patterns,
    toeplitz_matrix,
)

PATTERNS = [
    ("single", matrix.single(), {}),
    ("min_sep", matrix.min_sep(1, 3), {"k": 3, "b": 1}),
    ("min_sep", matrix.min_sep(2, 2), {"k": 2, "b": 2}),
    ("min_sep", matrix.min_sep(3), {"k": 99, "b": 3}),
    ("fixed_epoch", matrix.fixed_epoch(2), {"k": 2}),
    ("fixed_epoch", matrix.fixed_epoch(3), {"k": 3}),
]


def _strategies(n: int, rng: np.random.Generator) -> list[matrix.Strategy]:
    signed = rng.normal(size=(n, n))
    return [
        matrix.bsr(n, 3),
        matrix.bsr(n, n),
        matrix.toeplitz([1.0, -0.5, 0.25], n),
        matrix.toeplitz([1.0, 0.2, 0.9], n),
        matrix.dense(np.tril(np.abs(signed))),
        matrix.dense(np.tril(signed)),
        matrix.dense(signed[: n // 2 + 1]),
        matrix.blt([0.5, 0.9], [0.2, 0.3], n),
        matrix.blt([0.7], [1.5], n),
    ]


@pytest.mark.parametrize("n", [6, 9])
@pytest.mark.parametrize(("kind", "pattern", "kw"), PATTERNS)
def test_brute_force_lies_inside_every_bracket(n: int, kind: str, pattern: matrix.Pattern, kw: dict[str, int]) -> None:
    if kind == "fixed_epoch" and n % kw["k"]:
        pytest.skip("epochs must divide n")
    rng = np.random.default_rng(n)
    pis = patterns(n, kind, min(kw.get("k", 1), n), kw.get("b", 1))
    for s in _strategies(n, rng):
        bound = matrix.sensitivity(s, pattern)
        if isinstance(s, matrix.Blt):
            exact_c = blt_matrix([float(x) for x in s.buf_decay], [float(x) for x in s.output_scale], n)
            truth = brute_force_signed(exact_c, pis)  # C ≥ 0: all signs +, the truth
            assert bound.squared_lower <= truth <= bound.squared_upper, (s, bound)
            continue
        c = s.dense_array()
        truth_below = max(brute_force_signed(c, pis), brute_force_orthogonal(c, pis))
        assert truth_below <= bound.squared_upper, (s, bound)
        if np.all(c.T @ c >= 0) or bound.exact:
            assert bound.squared_lower <= truth_below, (s, bound)
        if bound.exact:
            assert bound.squared_lower == truth_below, (s, bound)


@pytest.mark.parametrize("n", [1, 2, 5, 8, 12])
@pytest.mark.parametrize("sep", [1, 2, 3, 5])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_toeplitz_closed_form_is_the_brute_force(n: int, sep: int, k: int) -> None:
    if sep > n:
        return
    coefs = [Fraction(1, t + 1) for t in range(n)]  # non-negative, non-increasing: Thm 2 applies
    s = matrix.toeplitz(coefs, n)
    bound = matrix.sensitivity(s, matrix.min_sep(sep, k))
    pis = patterns(n, "min_sep", k, sep)
    assert bound.exact
    assert bound.squared_lower == brute_force_signed(toeplitz_matrix(coefs, n), pis)


def test_design_note_numbers_are_reproduced_exactly() -> None:
    s = matrix.bsr(2000, 64)
    zeta = matrix.sensitivity(s, matrix.single())
    assert zeta.exact and float(zeta.squared_lower) == 2.3888481082954343
    b = matrix.sensitivity(s, matrix.min_sep(64, 32))
    assert b.exact and b.method == "banded-vecsens" and float(b.squared_lower) == 75.99817020431523
    e = matrix.sensitivity(s, matrix.fixed_epoch(20))
    assert e.exact and float(e.squared_lower) == 47.776962165908685


def test_gboard_tree_is_79_and_87() -> None:
    t = matrix.tree(2000)
    assert matrix.sensitivity(t, matrix.from_min_separation(313, 6)).squared_lower == 79
    assert matrix.sensitivity(t, matrix.min_sep(314, 7)).squared_lower == 87
    assert matrix.sensitivity(t, matrix.single()).squared_lower == 11


@pytest.mark.parametrize("completion", [False, True])
def test_tree_dp_matches_brute_force_up_to_22_steps(completion: bool) -> None:
    for n in range(1, 23):
        for k in (1, 2, 3):
            for sep in (1, 2, 3, 5):
                if sep > n:
                    continue
                pattern = matrix.min_sep(sep, k)
                pis = list(all_patterns(pattern, n))
                got = matrix.sensitivity(matrix.tree(n, completion=completion), pattern)
                assert got.squared_lower == tree_brute_force((n,), completion, pis), (n, k, sep)


def test_tree_restarts_and_fixed_epoch() -> None:
    for counts in [(3, 5), (4, 4, 2), (7, 1)]:
        for sep in (1, 2, 3):
            pattern = matrix.min_sep(sep, 3)
            pis = list(all_patterns(pattern, sum(counts)))
            got = matrix.sensitivity(matrix.tree(step_counts=counts), pattern)
            assert got.squared_lower == tree_brute_force(counts, False, pis)
    t = matrix.tree(12)
    got = matrix.sensitivity(t, matrix.fixed_epoch(3))
    assert got.squared_lower == max(tree_pattern_value(t, pi) for pi in patterns(12, "fixed_epoch", 3))


def test_restarts_sum_over_trees_at_single_participation_per_tree() -> None:
    # Separation ≥ each tree's size: at most one participation per tree, and Δ² adds up over the trees.
    got = matrix.sensitivity(matrix.tree(step_counts=(8, 8, 8)), matrix.min_sep(8))
    assert got.squared_lower == 3 * matrix.sensitivity(matrix.tree(8), matrix.single()).squared_lower


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(-4, 4), min_size=1, max_size=5), st.integers(1, 4), st.integers(1, 3))
def test_adding_participations_never_lowers_delta(coefs: list[int], sep: int, k: int) -> None:
    if coefs[0] == 0:
        coefs[0] = 1
    s = matrix.toeplitz([float(c) for c in coefs], 8)
    a = matrix.sensitivity(s, matrix.min_sep(sep, k))
    b = matrix.sensitivity(s, matrix.min_sep(sep, k + 1))
    pis = patterns(8, "min_sep", k + 1, sep)
    assert a.squared_lower <= b.squared_upper
    assert brute_force_signed(s.dense_array(), pis) <= b.squared_upper


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: matrix.min_sep(0), "min_sep"),
        (lambda: matrix.sensitivity(matrix.bsr(10, 2), matrix.min_sep(11)), "min_sep"),
        (lambda: matrix.sensitivity(matrix.bsr(10, 2), matrix.fixed_epoch(3)), "epochs"),
        (lambda: matrix.bsr(10, 11), "bands"),
        (lambda: matrix.toeplitz([0.0, 1.0], 4), "coefs"),
        (lambda: matrix.toeplitz([1.0, float("nan")], 4), "coefs"),
        (lambda: matrix.blt([1.5], [0.1], 4), "buf_decay"),
        (lambda: matrix.tree(0), "n"),
        (lambda: matrix.from_min_separation(-1), "min_separation"),
        (lambda: matrix.sensitivity("C", matrix.single()), "strategy"),
        (lambda: matrix.sensitivity(matrix.bsr(4, 2), "single"), "pattern"),
        (lambda: matrix.dense(np.zeros(3)), "matrix"),
    ],
)
def test_bad_input_names_the_parameter(call: object, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        call()  # type: ignore[operator]


def test_min_separation_converter() -> None:
    assert matrix.from_min_separation(313, 6) == matrix.min_sep(314, 6)


_ENTRY = st.sampled_from([0.0, 0.0, 1.0, -1.0, 0.5, -0.25, 2.0, 0.125])


@settings(max_examples=40, deadline=None)
@given(
    st.integers(2, 6).flatmap(lambda n: st.lists(st.lists(_ENTRY, min_size=n, max_size=n), min_size=1, max_size=n)),
    st.integers(1, 3),
    st.integers(1, 3),
)
def test_dense_brackets_hold_for_drawn_matrices(rows: list[list[float]], sep: int, k: int) -> None:
    c = np.array(rows)
    n = c.shape[1]
    if not np.any(c) or sep > n:
        return
    bound = matrix.sensitivity(matrix.dense(c), matrix.min_sep(sep, k))
    pis = patterns(n, "min_sep", k, sep)
    below = max(brute_force_signed(c, pis), brute_force_orthogonal(c, pis))
    assert below <= bound.squared_upper
    if np.all(c.T @ c >= 0):  # X ≥ 0: the signed brute force is the truth
        assert bound.squared_lower <= below


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.9, 1.0]), min_size=1, max_size=2),
    st.lists(st.sampled_from([0.0, 0.1, 0.4, 0.7]), min_size=2, max_size=2),
    st.integers(4, 7),
    st.integers(1, 3),
)
def test_blt_brackets_contain_the_exact_brute_force(theta: list[float], omega: list[float], n: int, sep: int) -> None:
    omega = omega[: len(theta)]
    s = matrix.blt(theta, omega, n)
    pattern = matrix.min_sep(sep, 3)
    truth = brute_force_signed(blt_matrix(theta, omega, n), patterns(n, "min_sep", 3, sep))
    bound = matrix.sensitivity(s, pattern)
    assert bound.squared_lower <= truth <= bound.squared_upper

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


# --- issue 32, item 7: Toeplitz (BSR) sensitivities in O(bands), a cost guard before the rest ----------------


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-5, 5), min_size=1, max_size=6), st.integers(1, 14), st.integers(1, 8),
       st.integers(1, 6))
def test_progression_value_is_the_column_sum(coefs: list[int], n: int, step: int, count: int) -> None:
    """The O(bands) value of π = {0, step, …} equals ‖Σ_{i∈π} c_i‖² summed column by column (exact)."""
    from optcomp.matrix._sensitivity import _progression_value

    coefs[0] = coefs[0] or 1
    n = max(n, len(coefs))
    s = matrix.toeplitz([Fraction(c, 3) for c in coefs], n)
    count = min(count, -(-n // step))
    c = toeplitz_matrix(list(s.coefs), n)
    pi = range(0, count * step, step)
    truth = sum((sum((c[r][i] for i in pi), Fraction(0)) ** 2 for r in range(n)), Fraction(0))
    assert _progression_value(s, step, count) == truth


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-5, 5), min_size=1, max_size=6), st.integers(1, 14), st.integers(1, 8),
       st.integers(1, 6))
def test_front_progression_is_vecsens(coefs: list[int], n: int, sep: int, k: int) -> None:
    """A Toeplitz strategy's column norms are non-increasing, so VecSens (the max-plus program) is attained by
    {0, b, 2b, …}: the O(bands) route gives the program's value on every drawn strategy."""
    from optcomp.matrix._exact import vecsens_int
    from optcomp.matrix._sensitivity import _front_norms

    coefs[0] = coefs[0] or 1
    n = max(n, len(coefs))
    s = matrix.toeplitz([Fraction(c, 2) for c in coefs], n)
    sep = min(sep, n)
    k = min(k, -(-n // sep))
    _, norms = s.scaled_column_norms_squared()
    value, witness = _front_norms(s, sep, k)
    assert value == vecsens_int(norms, sep, k)[0] == sum(norms[i] for i in witness)
    assert witness == tuple(range(0, k * sep, sep))


@pytest.mark.slow  # 30 s: make test-slow (keeps make test under 10 minutes on 2 cores)
def test_issue_bsr_min_sep_answers_exactly() -> None:
    """The issue's input, through the CLI as a user types it (a process, so that a hang fails the test rather
    than the run: the old max-plus program took k·n = 10¹⁰ steps here). Δ² = 1000·‖c‖²: every one of the
    1000 participations 0, 10⁴, … has all 10⁴ bands inside n = 10⁷ (checked against binom(2t, t)/4ᵗ)."""
    import json
    import math
    import subprocess
    import sys

    bands, k = 10_000, 1000
    cli = "import sys; from optcomp.cli import main; sys.exit(main(sys.argv[1:]))"
    proc = subprocess.run([sys.executable, "-c", cli, "matrix", "sensitivity", "--strategy",
                           f"bsr:n=10000000,bands={bands}", "--pattern", "min_sep:b=10000", "--json"],
                          capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    d = 4 ** (bands - 1)
    norm = Fraction(sum((math.comb(2 * t, t) * 4 ** (bands - 1 - t)) ** 2 for t in range(bands)), d * d)
    assert out["exact"] and out["method"] == "banded-vecsens"
    assert out["squared_rational"][0] == out["squared_rational"][1]
    limit = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)  # 12,000-digit integers: our own exact values, not untrusted text
    try:
        assert Fraction(out["squared_rational"][0]) == k * norm
    finally:
        sys.set_int_max_str_digits(limit)
    assert out["witness"] == list(range(0, k * 10_000, 10_000))


def test_exact_routes_need_only_the_bands(monkeypatch: pytest.MonkeyPatch) -> None:
    """bsr n = 10⁷ with 64 bands under every exact route never builds an n-long vector (the column norms of
    every step, or a row sum per step): each route reads O(bands) integers."""
    from optcomp.matrix._strategy import Toeplitz

    def refuse(self: Toeplitz) -> None:
        raise AssertionError("an n-long vector was built")

    monkeypatch.setattr(Toeplitz, "scaled_column_norms_squared", refuse)
    monkeypatch.setattr(Toeplitz, "column_norms_squared", refuse)
    s = matrix.bsr(10**7, 64)
    small = matrix.bsr(2000, 64)
    for pattern in (matrix.single(), matrix.min_sep(64, 32), matrix.min_sep(10), matrix.fixed_epoch(10**4)):
        big = matrix.sensitivity(s, pattern)
        assert big.exact and big.squared_lower > 0
    monkeypatch.undo()
    assert matrix.sensitivity(small, matrix.min_sep(64, 32)).squared_lower == Fraction(
        matrix.sensitivity(small, matrix.min_sep(64, 32)).squared_upper)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--strategy", "bsr:n=10000000,bands=20000", "--pattern", "single"], "bands must be at most 11585"),
        (["--strategy", "toeplitz:n=100000,coefs=1/-0.5/0.25", "--pattern", "min_sep:b=1"], "n: the sensitivity"),
        (["--strategy", "toeplitz:n=100000,coefs=1/-0.5/0.25", "--pattern", "fixed_epoch:k=50000"], "float Gram matrix"),
        (["--strategy", "blt:n=10000000,buf_decay=0.9,output_scale=0.5", "--pattern", "min_sep:b=100"],
         "at most 244032 steps"),
        (["--strategy", "tree:n=10000000", "--pattern", "fixed_epoch:k=10"], "fixed-epoch sensitivity of a tree"),
    ],
)
def test_costly_sensitivities_are_refused_up_front(args: list[str], needle: str, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """One stderr line naming the size and what to do, exit 2, before the work starts (the work itself is
    replaced by a failure here)."""
    from optcomp.cli import main
    from optcomp.matrix import _dense, _sensitivity
    from optcomp.matrix import _strategy as strategies

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("the work started before the refusal")

    monkeypatch.setattr(_dense, "gram_bracket", refuse)
    monkeypatch.setattr(strategies.Blt, "enclosure", refuse)
    monkeypatch.setattr(_sensitivity, "tree_pattern_value", refuse)
    monkeypatch.setattr(strategies, "bsr_coefficients", refuse)
    rc = main(["matrix", "sensitivity", *args])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("optcomp: error: ") and err.count("\n") == 1, err
    assert needle in err, err


def test_exact_arithmetic_too_large_is_refused_by_bands() -> None:
    coefs = [Fraction(1, 2**t) for t in range(17_000)]  # 17,000 integers of 17,000 bits: 2.9e8 bits > 2**28
    with pytest.raises(ValueError, match="^bands: the exact sensitivity"):
        matrix.sensitivity(matrix.toeplitz(coefs), matrix.single())


def test_long_dense_work_reports_progress() -> None:
    """The dense route's passes call ``progress(done, total)`` up to (k, k): the CLI draws it as a bar."""
    calls: list[tuple[int, int]] = []
    s = matrix.toeplitz([1.0, -0.5, 0.25], 12)
    bound = matrix.sensitivity(s, matrix.min_sep(1, 5), progress=lambda done, total: calls.append((done, total)))
    assert bound.method.endswith("alg4-bound")
    assert calls and calls[-1] == (5, 5) and [d for d, _ in calls] == sorted(d for d, _ in calls)

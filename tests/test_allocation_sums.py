"""The balls-in-bins laws' shallow sums (issue 32 item 4): dyadic window and prefix sums, the pairwise
accumulator, and one merge stage of each law, checked against exact sums (rationals) and against an
implementation by explicit pairs with 40-digit cells (``tests/_references/allocation_pairs.py``): every
value within γ of its stated depth of the exact value (the lower law), or above the exact split and within
1e-12 of it (the upper law)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from optcomp._rounding import gamma
from optcomp.mechanisms._allocation_grid import Upper, combine_upper
from optcomp.mechanisms._allocation_lower import Lower, combine_lower
from optcomp.mechanisms._allocation_sums import Accumulator, BlockSums
from tests._references.allocation_pairs import labelled_stage, split_stage


def _masses(rng: np.random.Generator, n: int) -> np.ndarray:
    """Positive masses over some 60 orders of magnitude (a law's bulk and its tails)."""
    centre = rng.uniform(0.3, 0.7) * n
    return np.exp(-((np.arange(n) - centre) ** 2) / (n / 3.0)) * rng.uniform(0.5, 1.5, n)


def _exact(values: np.ndarray) -> Fraction:
    return sum((Fraction(float(v)) for v in values), Fraction(0))


@pytest.mark.parametrize("seed", range(4))
def test_window_and_prefix_sums_are_within_their_depth(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, pad = 97, 40
    rows = np.vstack([_masses(rng, n), _masses(rng, n)])
    sums = BlockSums(rows, pad, max(pad, n).bit_length())
    g = gamma(sums.depth)
    padded = np.hstack([np.zeros((2, pad)), rows, np.zeros((2, pad))])
    for length in (1, 2, 3, 7, 16, 29, 40):
        start = int(rng.integers(-length + 1, 1))  # the first windows reach into the padding on the left
        count = n - start  # the last ones on the right
        got = sums.window(start, length, count)
        for c in range(0, count, 5):
            for r in range(2):
                exact = _exact(padded[r, pad + start + c : pad + start + c + length])
                assert abs(Fraction(float(got[r, c])) - exact) <= Fraction(g) * exact
        np.testing.assert_allclose(got[0], np.convolve(padded[0, pad + start :], np.ones(length))[length - 1 :][:count],
                                   rtol=1e-13)
    counts = np.array([0, 1, 2, 5, 31, 32, 33, 64, 96, 97])
    got = sums.prefix(counts)
    for c, k in enumerate(counts):
        exact = _exact(rows[1, :k])
        assert abs(Fraction(float(got[1, c])) - exact) <= Fraction(g) * exact


def test_the_accumulator_is_within_its_depth() -> None:
    rng = np.random.default_rng(7)
    acc = Accumulator(1, 50, chunk=4)
    terms = []
    for _ in range(203):
        term = np.zeros(50)
        at = int(rng.integers(0, 40))
        term[at : at + 10] = _masses(rng, 10)
        acc.target(at, at + 10)[0, at : at + 10] += term[at : at + 10]
        terms.append(term)
    total = acc.total()[0]
    g = Fraction(gamma(acc.depth))
    for k in range(50):
        exact = _exact(np.array([t[k] for t in terms]))
        assert abs(Fraction(float(total[k])) - exact) <= g * exact
    assert acc.terms == 203


def _laws(seed: int, same: bool) -> tuple[tuple[int, np.ndarray, np.ndarray], tuple[int, np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    a = (int(rng.integers(-20, 20)), _masses(rng, 40), _masses(rng, 40) * 0.9)
    b = a if same else (int(rng.integers(-20, 20)), _masses(rng, 31), _masses(rng, 31) * 1.1)
    return a, b


#: (a squaring?, h_in/h_out, seed): one case in the fast suite, the others in make test-slow.
STAGES = [(False, 2, 4), pytest.param(True, 1, 1, marks=pytest.mark.slow), pytest.param(False, 1, 2, marks=pytest.mark.slow),
          pytest.param(True, 2, 3, marks=pytest.mark.slow)]


@pytest.mark.parametrize(("same", "ratio", "seed"), STAGES)
def test_a_labelled_stage_is_within_its_relative_bound(same: bool, ratio: int, seed: int) -> None:
    """One stage of Lemma D's law (inputs exact: rel 0; nothing trimmed: tail 0) against explicit pairs in
    rationals: every label's Q- and P-mass within the stage's rel of the exact value, no label missing."""
    h = 2.0**-3  # the far field (d ≥ 23, 29 on the finer output grid) is reached
    (fa, qa, pa), (fb, qb, pb) = _laws(seed, same)
    a = Lower(fa, qa, pa, 0.0, 1, h)
    b = a if same else Lower(fb, qb, pb, 0.0, 1, h)
    out = combine_lower(a, b, 10, h / ratio, 0.0)
    q_exact, p_exact = labelled_stage(fa, qa.tolist(), pa.tolist(), fb, qb.tolist(), pb.tolist(), h, h / ratio)
    assert 0 < out.rel < 1e-13
    rel = Fraction(out.rel)
    got = {out.first + i: (q, p) for i, (q, p) in enumerate(zip(out.q, out.p, strict=True)) if q > 0}
    assert set(got) == set(q_exact)
    for k, (q, p) in got.items():
        assert abs(Fraction(float(q)) - q_exact[k]) <= rel * q_exact[k], k
        assert abs(Fraction(float(p)) - p_exact[k]) <= rel * p_exact[k], k


@pytest.mark.parametrize(("same", "ratio", "seed"), STAGES)
def test_a_split_stage_is_an_upper_envelope(same: bool, ratio: int, seed: int) -> None:
    """One stage of Lemma C's law against the 40-digit split of every pair: each output mass at least the
    exact one (an upper envelope) and within 1e-12 relative of it (the stage's charge is small)."""
    h = 2.0**-3
    (fa, qa, _), (fb, qb, _) = _laws(seed, same)
    a = Upper(fa, qa, 0.0, 0.0, 0.0, 1, h)
    b = a if same else Upper(fb, qb, 0.0, 0.0, 0.0, 1, h)
    out = combine_upper(a, b, 10, h / ratio, 0.0)
    exact = split_stage(fa, qa.tolist(), fb, qb.tolist(), h, h / ratio)
    got = {out.first + i: float(q) for i, q in enumerate(out.q)}
    for k, v in exact.items():
        assert got.get(k, 0.0) >= v, k
        assert got[k] <= v * (1 + 1e-12) + 1e-300, k
    assert all(v <= 1e-300 for k, v in got.items() if k not in exact)

"""Truths for one merge stage of the balls-in-bins laws (``docs/samplers.md`` Lemmas C, D): the sum of two
independent partial sums given as masses on the grid x_j = t·e^{j·h_in}, by explicit pairs in exact rational
arithmetic (every float mass read as the rational it is), with the output cell of each pair decided in
40-digit mpmath — an implementation that shares nothing with the library's window sums, convolutions,
accumulators or tabulated weights.

* :func:`labelled_stage`: Lemma D's labels: the pair (i, j) lands on the output label
  k = ⌊ln(e^{i·h_in} + e^{j·h_in})/h_out⌋; Q_k = Σ qᵢq'ⱼ, P_k = Σ (pᵢq'ⱼ + qᵢp'ⱼ).
* :func:`split_stage`: Lemma C's mean-preserving split: the pair's Q-mass qᵢq'ⱼ goes to y_k and y_{k+1}
  (y_k = e^{k·h_out}) with the weights (1 − w, w), w = (x − y_k)/(y_{k+1} − y_k), x = e^{i·h_in} + e^{j·h_in}
  (40 digits; the masses summed exactly in rationals, then the weights' products in mpmath).
"""

from __future__ import annotations

import functools
from collections import defaultdict
from fractions import Fraction

import mpmath

_DPS = 40


@functools.cache
def _point(i: int, h: float) -> mpmath.mpf:
    """e^{i·h} (40 digits)."""
    with mpmath.workdps(_DPS):
        return mpmath.exp(i * mpmath.mpf(h))


def _label(i: int, j: int, h_in: float, h_out: float) -> tuple[int, mpmath.mpf]:
    """(k, w): the output cell of x_i + x_j and the weight of its upper point (40 digits)."""
    with mpmath.workdps(_DPS):
        x = _point(i, h_in) + _point(j, h_in)
        k = int(mpmath.floor(mpmath.log(x) / mpmath.mpf(h_out)))
        lo, hi = _point(k, h_out), _point(k + 1, h_out)
        return k, (x - lo) / (hi - lo)


def labelled_stage(
    first_a: int, qa: list[float], pa: list[float], first_b: int, qb: list[float], pb: list[float], h_in: float, h_out: float
) -> tuple[dict[int, Fraction], dict[int, Fraction]]:
    """(Q_k, P_k) of Lemma D's labelled sum, exact rationals keyed by the output label k."""
    q: dict[int, Fraction] = defaultdict(Fraction)
    p: dict[int, Fraction] = defaultdict(Fraction)
    for i, (qi, pi) in enumerate(zip(qa, pa, strict=True)):
        for j, (qj, pj) in enumerate(zip(qb, pb, strict=True)):
            k, _ = _label(first_a + i, first_b + j, h_in, h_out)
            q[k] += Fraction(qi) * Fraction(qj)
            p[k] += Fraction(pi) * Fraction(qj) + Fraction(qi) * Fraction(pj)
    return dict(q), dict(p)


def split_stage(first_a: int, qa: list[float], first_b: int, qb: list[float], h_in: float, h_out: float) -> dict[int, float]:
    """Lemma C's split of the sum's Q-masses onto the output grid (40 digits, rounded to float at the end)."""
    out: dict[int, mpmath.mpf] = defaultdict(lambda: mpmath.mpf(0))
    with mpmath.workdps(_DPS):
        for i, qi in enumerate(qa):
            for j, qj in enumerate(qb):
                k, w = _label(first_a + i, first_b + j, h_in, h_out)
                mass = mpmath.mpf(qi) * mpmath.mpf(qj)
                out[k] += mass * (1 - w)
                out[k + 1] += mass * w
        return {k: float(v) for k, v in out.items()}

"""The transcendental charges of the Laplace and curve-known releases, at 60 digits, rounded up.

Every function here is a pure function of exact rationals, computed with mpmath only (no float libm call
decides a digit), so ``verify()`` recomputes each stored charge bit for bit on any machine:

* :func:`laplace_zcdp` — the tight zCDP of Lap(Δ/ε): ρ = ε + e^{−ε} − 1 (Harrison–Manurangsi 2026,
  FORC 2026 / arXiv 2510.25746, Thm on the Laplace mechanism: sup_{α>1} D_α/α is the limit α → 1, the KL
  divergence of the pair; ``tests/test_ledger_kinds.py`` re-checks that supremum against mpmath for ε from
  10⁻⁸ to 10³). Below ε²/2, the zCDP of an arbitrary ε-DP mechanism (Bun–Steinke Prop 1.4).
* :func:`laplace_rdp` — D_α of the Laplace pair at one order (Mironov 2017 Prop 6).
* :func:`zcdp_epsilon` / :func:`renyi_epsilon` — the (ε, δ) a ρ-zCDP or a stated Rényi curve certifies at
  a δ share, by the conversion (α, r)-RDP ⇒ (r + log(1 − 1/α) − (log δ + log α)/(α − 1), δ)-DP
  (Canonne–Kamath–Steinke 2020 Prop 12 = Balle et al. 2020 Thm 21) at one order: the order is found by a
  golden-section search in mpmath (any order is valid; the search only decides tightness), rounded to a
  double, and the value at that exact order is rounded up. This is the closed-form route: the optimal
  conversion of :mod:`optcomp.rdp` is tighter but rests on a linear program whose digits depend on HiGHS and
  BLAS, which a stored charge cannot.
* :func:`renyi_at` — the bound a stated Rényi curve implies at an order: exact, and ``None`` above its
  largest order (nothing is implied there).

Precision: each value is computed with enough digits beyond :data:`._exact.DIGITS` to cover the
cancellation its formula has (``ε + expm1(−ε)`` loses about log₁₀(2/ε) digits), the extra counted from the
arguments' bit lengths (integers only), then rounded up by :func:`._exact.up`.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from fractions import Fraction

import mpmath

from optcomp.ledger._exact import DIGITS, up
from optcomp.rdp import DEFAULT_ORDERS

#: Digits kept beyond those a formula's cancellation loses (on top of :data:`._exact.DIGITS`).
_GUARD_DIGITS = 10
#: log(α − 1) range searched for the conversion's order (α from 1 + e^{−20} to 1 + e^{60}).
_LOG_ORDER_RANGE = (-20, 60)
#: Golden-section steps of that search (the bracket shrinks by 0.618 each: 150 steps reach 10⁻³⁰).
_ORDER_STEPS = 150
#: Working digits of the order search (the order only decides tightness; its value is recomputed at DIGITS).
_SEARCH_DIGITS = 30


def _lost_digits(x: Fraction) -> int:
    """An upper bound on the decimal digits a cancellation down to the value x (< 1) loses, from bit
    lengths only: ⌈log₁₀(1/x)⌉ + 1 for 0 < x < 1, 0 for x ≥ 1."""
    if x >= 1 or x <= 0:
        return 0
    bits = x.denominator.bit_length() - x.numerator.bit_length() + 1
    return bits * 30103 // 100000 + 1


def _mp(x: Fraction) -> mpmath.mpf:
    """x at the ambient precision (the quotient of its integers, rounded once)."""
    return mpmath.mpf(x.numerator) / x.denominator


def laplace_zcdp(epsilon: Fraction) -> Fraction:
    """ρ = ε + e^{−ε} − 1 rounded up: the Laplace mechanism's exact zCDP (module docstring). ε ≥ 0."""
    if epsilon <= 0:
        return Fraction(0)
    with mpmath.workdps(DIGITS + _GUARD_DIGITS + 2 * _lost_digits(epsilon)):
        e = _mp(epsilon)
        return up(e + mpmath.expm1(-e))


def laplace_rdp(epsilon: Fraction, alpha: Fraction) -> Fraction:
    """D_α of the Laplace pair with ε = Δ/b, rounded up (Mironov 2017 Prop 6):
    (1/(α−1))·log[α/(2α−1)·e^{(α−1)ε} + (α−1)/(2α−1)·e^{−αε}]."""
    if epsilon <= 0:
        return Fraction(0)
    lost = _lost_digits((alpha - 1) * alpha * epsilon * epsilon / 2)
    with mpmath.workdps(DIGITS + _GUARD_DIGITS + lost):
        e, a = _mp(epsilon), _mp(alpha)
        inner = a / (2 * a - 1) + (a - 1) / (2 * a - 1) * mpmath.exp(-(2 * a - 1) * e)
        return max(up(((a - 1) * e + mpmath.log(inner)) / (a - 1)), Fraction(0))


def cks_offset(alpha: mpmath.mpf, delta: mpmath.mpf) -> mpmath.mpf:
    """log(1 − 1/α) − (log δ + log α)/(α − 1): (α, τ)-RDP ⇒ (τ + offset, δ)-DP (CKS 2020 Prop 12)."""
    return mpmath.log(1 - 1 / alpha) - (mpmath.log(delta) + mpmath.log(alpha)) / (alpha - 1)


def zcdp_epsilon(rho: Fraction, delta: Fraction) -> Fraction:
    """The ε (rounded up) at which a ρ-zCDP mechanism is (ε, δ)-DP by CKS Prop 12 at one order α: the
    order minimising αρ + offset(α), searched in mpmath and rounded to a double, the value at that exact
    order rounded up (module docstring). ρ = 0 reveals nothing: ε = 0."""
    if rho <= 0:
        return Fraction(0)
    with mpmath.workdps(_SEARCH_DIGITS):
        r, d = _mp(rho), _mp(delta)

        def value(t: mpmath.mpf) -> mpmath.mpf:
            a = 1 + mpmath.exp(t)
            return a * r + cks_offset(a, d)

        lo, hi = mpmath.mpf(_LOG_ORDER_RANGE[0]), mpmath.mpf(_LOG_ORDER_RANGE[1])
        g = (mpmath.sqrt(5) - 1) / 2
        for _ in range(_ORDER_STEPS):
            x, y = hi - g * (hi - lo), lo + g * (hi - lo)
            lo, hi = (lo, y) if value(x) < value(y) else (x, hi)
        alpha = Fraction(float(1 + mpmath.exp((lo + hi) / 2)))
    if alpha <= 1:
        alpha = Fraction(2)
    with mpmath.workdps(DIGITS):
        a = _mp(alpha)
        return max(up(a * _mp(rho) + cks_offset(a, _mp(delta))), Fraction(0))


def renyi_at(orders: Sequence[Fraction], epsilons: Sequence[Fraction], alpha: Fraction) -> Fraction | None:
    """The bound on D_α implied by D_{αᵢ} ≤ εᵢ, exactly; ``None`` above the largest order.

    f(α) = (α − 1)D_α is convex in α with f(1) = 0 (van Erven–Harremoës 2014, Thm 11; log E_Q[(P/Q)^α] is
    log-convex by Hölder), so for stated points a ≤ α ≤ b (the point (1, 0) included) f(α) is at most the
    chord through (a, f_a) and (b, f_b); the bound is the least chord over all such pairs (the lower convex
    hull of the points), divided by α − 1 — with (1, 0) as a it is the monotone bound D_α ≤ D_b. Above the
    largest stated order every value is consistent with the statement (a law whose D_α jumps to any size
    there exists), so nothing is implied."""
    if alpha > orders[-1]:
        return None
    points = [(Fraction(1), Fraction(0))] + [(a, (a - 1) * e) for a, e in zip(orders, epsilons, strict=True)]
    best: Fraction | None = None
    for (a, fa), (b, fb) in itertools.combinations(points, 2):
        if a == alpha or b == alpha:
            chord = fa if a == alpha else fb
        elif a < alpha < b:
            chord = fa + (fb - fa) * (alpha - a) / (b - a)
        else:
            continue
        best = chord if best is None or chord < best else best
    assert best is not None  # α ≤ the largest order: some pair spans it
    return best / (alpha - 1)


def renyi_epsilon(orders: Sequence[Fraction], epsilons: Sequence[Fraction], delta: Fraction) -> Fraction:
    """The ε (rounded up) at which a mechanism with the stated Rényi curve is (ε, δ)-DP: CKS Prop 12 at the
    best of the stated orders and of :data:`optcomp.rdp.DEFAULT_ORDERS` between them, each at the bound
    :func:`renyi_at` implies there (exact), converted at 60 digits."""
    grid = sorted({*orders, *(Fraction(a) for a in DEFAULT_ORDERS if orders[0] < Fraction(a) < orders[-1])})
    with mpmath.workdps(DIGITS):
        d = _mp(delta)
        values = []
        for alpha in grid:
            bound = renyi_at(orders, epsilons, alpha)
            assert bound is not None
            values.append(_mp(bound) + cks_offset(_mp(alpha), d))
        return max(up(min(values)), Fraction(0))

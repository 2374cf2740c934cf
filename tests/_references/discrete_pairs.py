"""δ(ε) of a k-fold composed finite pair (P, Q), exactly: max over both directions of
Σ_y max(0, P(y) − e^ε Q(y)) over the composed outcomes y (the Q = 0 atoms, the +∞ losses, included), 50 digits."""

from __future__ import annotations

import itertools

import mpmath


def hockey_stick(p: tuple[float, ...], q: tuple[float, ...], k: int, epsilon: float) -> mpmath.mpf:
    """max(δ_{P‖Q}(ε), δ_{Q‖P}(ε)) of the k-fold product pair, by enumeration (|outcomes|^k terms)."""
    with mpmath.workdps(50):
        e = mpmath.exp(mpmath.mpf(epsilon))

        def one(a: tuple[float, ...], b: tuple[float, ...]) -> mpmath.mpf:
            total = mpmath.mpf(0)
            for ys in itertools.product(range(len(a)), repeat=k):
                pa = mpmath.fprod(mpmath.mpf(a[y]) for y in ys)
                pb = mpmath.fprod(mpmath.mpf(b[y]) for y in ys)
                total += max(mpmath.mpf(0), pa - e * pb)
            return total

        return max(one(p, q), one(q, p))

"""Brute-force truths for matrix-mechanism sensitivities (exact rationals, every pattern, every sign).

Δ² = max_π sup_{‖g_i‖≤1} Σ_{i,j∈π} X_ij ⟨g_i, g_j⟩ with X = CᵀC ("(Amplified) Banded Matrix
Factorization", arXiv 2306.08153, §2). Two enumerations, both by definition and without optcomp code:

* :func:`brute_force_signed`: max over every allowed π and every sign vector s of ‖Σ s_i c_i‖² (g_i = s_i u):
  a lower bound on Δ² in general, and Δ² itself when X ≥ 0 (all signs +) or the columns of each π are
  orthogonal;
* :func:`brute_force_orthogonal`: max over π of Σ_{i∈π} ‖c_i‖² (g_i orthonormal), also a lower bound.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from fractions import Fraction
from itertools import combinations, pairwise, product


def patterns(n: int, kind: str, k: int = 1, b: int = 1) -> list[tuple[int, ...]]:
    """Every π: ``"single"``, ``"fixed_epoch"`` (k epochs of b = n/k) or ``"min_sep"`` (y − x ≥ b, |π| ≤ k)."""
    if kind == "single":
        return [(i,) for i in range(n)]
    if kind == "fixed_epoch":
        step = n // k
        return [tuple(range(j, n, step)) for j in range(step)]
    out = []
    for m in range(1, k + 1):
        for pi in combinations(range(n), m):
            if all(y - x >= b for x, y in pairwise(pi)):
                out.append(pi)
    return out


def _exact(x: object) -> Fraction:
    return x if isinstance(x, Fraction) else Fraction(float(x))  # type: ignore[arg-type]


def _columns(c: Sequence[Sequence[object]]) -> list[list[Fraction]]:
    rows, cols = len(c), len(c[0])
    return [[_exact(c[r][i]) for r in range(rows)] for i in range(cols)]


def blt_matrix(buf_decay: Sequence[float], output_scale: Sequence[float], n: int) -> list[list[Fraction]]:
    """The BLT strategy C[i + t, i] = c_t, c₀ = 1, c_t = Σ_j ω_j θ_j^{t−1}, exact (jax_privacy's convention)."""
    theta = [Fraction(x) for x in buf_decay]
    omega = [Fraction(x) for x in output_scale]
    coefs = [Fraction(1)] + [sum(w * th ** (t - 1) for w, th in zip(omega, theta)) for t in range(1, n)]
    return [[coefs[r - i] if r >= i else Fraction(0) for i in range(n)] for r in range(n)]


def brute_force_signed(c: Sequence[Sequence[object]], pis: Iterable[tuple[int, ...]]) -> Fraction:
    """max_π max_s ‖Σ_{i∈π} s_i c_i‖², exact."""
    cols = _columns(c)
    best = Fraction(0)
    for pi in pis:
        for signs in product((1, -1), repeat=len(pi) - 1):
            v = list(cols[pi[0]])
            for s, i in zip(signs, pi[1:]):
                v = [a + s * b for a, b in zip(v, cols[i])]
            best = max(best, sum(x * x for x in v))
    return best


def brute_force_orthogonal(c: Sequence[Sequence[object]], pis: Iterable[tuple[int, ...]]) -> Fraction:
    """max_π Σ_{i∈π} ‖c_i‖², exact."""
    cols = _columns(c)
    return max(sum(sum(x * x for x in cols[i]) for i in pi) for pi in pis)


def toeplitz_matrix(coefs: Sequence[Fraction], n: int) -> list[list[Fraction]]:
    """C[i + t, i] = coefs[t] (t < len(coefs)), exact."""
    return [[coefs[r - i] if 0 <= r - i < len(coefs) else Fraction(0) for i in range(n)] for r in range(n)]


#: Peers' numbers for the design note's workloads (``shared/design/matrix-mechanisms.md`` §4.6), pinned with
#: the call that produced them:
#: * Gboard es-ES tree (σ = 7, n = 2000, min_sep 314, ≤ 6 participations, δ = 1e-10): dp_accounting
#:   ``PLDAccountant`` on ``GaussianDpEvent(7/√79)`` → 8.5260935; the launch notebook's RDP → 8.90
#:   (dp_accounting ``RdpAccountant``, default orders: 8.898605);
#: * ``SingleEpochTreeAggregationDpEvent(7.0, 2000)`` at δ = 1e-10: depth 11, μ = √11/7, GDP ε 2.927044;
#:   dp_accounting RDP 3.065535;
#: * amplified BandMF (n = 2000, 64 bands, BSR, q = 500/781, 32 rounds, σ = 6, δ = 1e-5): dp_accounting
#:   ``PLDAccountant`` on ``SelfComposed(PoissonSampled(q, Gaussian(6)), 32)`` → 2.518605; jax_privacy 2.0
#:   ``DpsgdTrainingAccountant(cycle_length=64)`` → 2.5186051; dp_accounting RDP → 2.7408.
GBOARD_PLD_EPSILON = 8.5260935
GBOARD_RDP_EPSILON = 8.898605
TREE_EVENT_GDP_EPSILON = 2.927044
TREE_EVENT_RDP_EPSILON = 3.065535
BANDMF_PLD_EPSILON = 2.518605
BANDMF_PER_COLUMN_UPPER = 2.5104


def poisson_product_delta(shifts: Sequence[float], q: float, epsilon: float) -> float:
    """δ(ε) of ⊗_{i=1,2} ((1 − q)N(0, 1) + qN(μ_i, 1)) against N(0, I₂), the larger of both directions.

    The explicit pair of amplified BandMF with a public partition (docs/matrix.md P5): one group's two
    blocks, projected on c_i gᵀ, are independent Poisson-subsampled Gaussians with μ_i = ‖c_i‖/(σζ).
    The inner integral over y is in closed form (the likelihood ratio of the second factor is monotone in
    y, so the positive part is a half-line y > y* or y < y*); the outer one over x is scipy's adaptive
    quadrature on [−12, 12 + μ₁] (tails beyond are below 1e-30).
    """
    import math

    from scipy import integrate

    mu1, mu2 = shifts
    e = math.exp(epsilon)

    def phi(t: float) -> float:
        return math.exp(-t * t / 2) / math.sqrt(2 * math.pi)

    def sf(t: float) -> float:
        return 0.5 * math.erfc(t / math.sqrt(2))

    def cut(c: float) -> float:  # p₂/φ = (1 − q) + q·e^{μ₂y − μ₂²/2} equals c at y*
        return (math.log((c - (1 - q)) / q) + mu2 * mu2 / 2) / mu2

    def remove(x: float) -> float:  # ∫ (p₁p₂ − e^ε φφ)₊ dy
        a, b = (1 - q) * phi(x) + q * phi(x - mu1), phi(x)
        c = e * b / a
        y = -math.inf if c <= 1 - q else cut(c)
        return max(a * ((1 - q) * sf(y) + q * sf(y - mu2)) - e * b * sf(y), 0.0)

    def add(x: float) -> float:  # ∫ (φφ − e^ε p₁p₂)₊ dy
        a, b = (1 - q) * phi(x) + q * phi(x - mu1), phi(x)
        c = b / (e * a)
        if c <= 1 - q:
            return 0.0
        y = cut(c)
        return max(b * sf(-y) - e * a * ((1 - q) * sf(-y) + q * sf(mu2 - y)), 0.0)

    lo, hi = -12.0, 12.0 + mu1
    return max(
        integrate.quad(f, lo, hi, epsabs=1e-15, epsrel=1e-11, limit=500)[0] for f in (remove, add)
    )

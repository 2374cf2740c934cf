"""An adversary for private selection, written for the soundness audit independently of ``optcomp.selection``.

Best of K runs of a base with output law P (dataset D) or P' (neighbour D') on finitely many outputs, the
candidates compared in an order the analyst chooses (any function of the output, so any permutation of the
outputs — and, with a randomised score, any interleaving of *pieces* of the outputs): the released output
i has probability φ(F_i) − φ(F_{i−1}), F the CDF along the order and φ(x) = E[x^K]; with K = 0 nothing (⊥)
is released, with probability φ(0) under both datasets. Everything here is exact at 50 digits (mpmath):

* :func:`pgf_of` — φ of an ``optcomp.selection`` law, from the law's parameters and the pmf's closed forms
  (truncated negative binomial: Σ_{k≥1} C(k+η−1, k)(cx)^k = (1 − cx)^{−η} − 1; logarithmic; Poisson;
  binomial), not from the package's float formulas;
* :func:`worst_order_delta` — max over *every* order and both directions of the released law's hockey-stick
  divergence (n ≤ 7 outputs; pgf values cached per subset of outputs, the prefix sets of the orders);
* :func:`split` — the pair with each output cut into pieces (a randomised score; same likelihood ratio);
* :func:`searched_order_delta` — for many outputs: a hill climb over orders (swaps and block moves) from the
  two monotone-loss orders and random ones, in floats, the best order re-evaluated at 50 digits;
* :func:`threshold_log_ratio` — Liu–Talwar's known-threshold release exactly (a set of outputs above the
  threshold, stopping probability γ after each below it): the largest |log likelihood ratio| of its outputs;
* :func:`gaussian_bins` / :func:`laplace_bins` — a base's output law on bins of the real line at 50 digits
  (a coarsening is a post-processing: the selection of the binned pair lower-bounds the continuous one's).

Each value is a δ (or ε) some selection *attains*, so it is a lower bound of the worst case over orders:
no certified upper end may be below it.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable, Sequence

import mpmath
import numpy as np

DPS = 50
Pgf = Callable[[mpmath.mpf], mpmath.mpf]


def pgf_of(law: object) -> Pgf:
    """φ(x) = E[x^K] at 50 digits for a law of :mod:`optcomp.selection` (read from its parameters)."""
    name = type(law).__name__
    if name == "Poisson":
        mu = mpmath.mpf(law.mean)  # type: ignore[attr-defined]
        return lambda x: mpmath.exp(mu * (x - 1))
    if name == "Binomial":
        n, p = int(law.n), mpmath.mpf(law.p)  # type: ignore[attr-defined]
        return lambda x: (1 - p + p * x) ** n
    if name == "TruncatedNegativeBinomial":
        eta, gamma = mpmath.mpf(law.eta), mpmath.mpf(law.gamma)  # type: ignore[attr-defined]
        c = 1 - gamma
        if eta == 0:
            return lambda x: mpmath.log(1 - c * x) / mpmath.log(gamma)
        norm = gamma ** (-eta) - 1
        return lambda x: ((1 - c * x) ** (-eta) - 1) / norm
    raise TypeError(f"unknown law {law!r}")


def _mp(values: Sequence[float]) -> list[mpmath.mpf]:
    return [mpmath.mpf(v) for v in values]


def released(p: Sequence[float], q: Sequence[float], order: Sequence[int], pgf: Pgf) -> tuple[list[mpmath.mpf], list[mpmath.mpf]]:
    """The released laws (⊥ first, then the outputs in ``order``) under both datasets, 50 digits."""
    with mpmath.workdps(DPS):
        out = []
        for masses in (_mp(p), _mp(q)):
            law, cum = [pgf(mpmath.mpf(0))], mpmath.mpf(0)
            for i in order:
                law.append(pgf(cum + masses[i]) - pgf(cum))
                cum += masses[i]
            out.append(law)
        return out[0], out[1]


def hockey(a: Sequence[mpmath.mpf], b: Sequence[mpmath.mpf], epsilon: float) -> mpmath.mpf:
    """max(H_{e^ε}(a‖b), H_{e^ε}(b‖a)) of two laws on the same outputs."""
    with mpmath.workdps(DPS):
        e = mpmath.exp(mpmath.mpf(epsilon))
        return max(mpmath.fsum(max(x - e * y, 0) for x, y in zip(a, b)), mpmath.fsum(max(y - e * x, 0) for x, y in zip(a, b)))


def worst_order_delta(p: Sequence[float], q: Sequence[float], pgf: Pgf, epsilon: float) -> tuple[mpmath.mpf, tuple[int, ...]]:
    """(max over every order and both directions of the selection's δ(ε), an order attaining it); n ≤ 7."""
    n = len(p)
    if n > 7:
        raise ValueError("exhaustive orders for at most 7 outputs")
    with mpmath.workdps(DPS):
        pm, qm, e = _mp(p), _mp(q), mpmath.exp(mpmath.mpf(epsilon))
        gp: dict[int, mpmath.mpf] = {}
        gq: dict[int, mpmath.mpf] = {}
        for mask in range(1 << n):
            members = [i for i in range(n) if mask >> i & 1]
            gp[mask] = pgf(mpmath.fsum(pm[i] for i in members))
            gq[mask] = pgf(mpmath.fsum(qm[i] for i in members))
        best, best_order = mpmath.mpf(0), tuple(range(n))
        for order in itertools.permutations(range(n)):
            fwd, bwd, prefix = mpmath.mpf(0), mpmath.mpf(0), 0
            for i in order:
                nxt = prefix | (1 << i)
                a, b = gp[nxt] - gp[prefix], gq[nxt] - gq[prefix]
                fwd += max(a - e * b, 0)
                bwd += max(b - e * a, 0)
                prefix = nxt
            if max(fwd, bwd) > best:
                best, best_order = max(fwd, bwd), order
        return best, best_order


def split(p: Sequence[float], q: Sequence[float], fractions: Sequence[Sequence[float]]) -> tuple[list[float], list[float]]:
    """Each output i cut into pieces of shares ``fractions[i]`` (summing to 1): the same likelihood ratio on
    every piece; a run whose score is randomised within an output releases exactly this pair's pieces."""
    ps, qs = [], []
    for a, b, shares in zip(p, q, fractions):
        for s in shares:
            ps.append(a * s)
            qs.append(b * s)
    return ps, qs


def _float_pgf(law: object) -> Callable[[np.ndarray], np.ndarray]:
    name = type(law).__name__
    if name == "Poisson":
        mu = float(law.mean)  # type: ignore[attr-defined]
        return lambda x: np.exp(mu * (x - 1.0))
    if name == "Binomial":
        n, p = int(law.n), float(law.p)  # type: ignore[attr-defined]
        return lambda x: (1.0 - p + p * x) ** n
    eta, gamma = float(law.eta), float(law.gamma)  # type: ignore[attr-defined]
    c = 1.0 - gamma
    if eta == 0.0:
        return lambda x: np.log1p(-c * x) / math.log(gamma)
    return lambda x: np.expm1(-eta * np.log1p(-c * x)) / math.expm1(-eta * math.log(gamma))


def _float_delta(p: np.ndarray, q: np.ndarray, order: np.ndarray, fpgf: Callable[[np.ndarray], np.ndarray], e: float) -> float:
    fp = np.minimum(np.concatenate([[0.0], np.cumsum(p[order])]), 1.0)
    fq = np.minimum(np.concatenate([[0.0], np.cumsum(q[order])]), 1.0)
    a, b = np.diff(fpgf(fp)), np.diff(fpgf(fq))
    return float(max(np.maximum(a - e * b, 0.0).sum(), np.maximum(b - e * a, 0.0).sum()))


def searched_order_delta(
    p: Sequence[float], q: Sequence[float], law: object, epsilon: float, *, seed: int = 0, restarts: int = 6, steps: int = 400
) -> tuple[mpmath.mpf, list[int]]:
    """A hill climb over orders of many outputs (swaps and moves of one output), started from both monotone
    likelihood-ratio orders and random ones, evaluated in floats; the best order's δ(ε) at 50 digits (an
    attained value: a lower bound of the worst case)."""
    rng = random.Random(seed)
    pa, qa = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    fpgf, e, n = _float_pgf(law), math.exp(epsilon), len(p)
    with np.errstate(divide="ignore"):
        ratio = np.log(pa) - np.log(qa)
    starts = [np.argsort(ratio, kind="stable"), np.argsort(-ratio, kind="stable")]
    starts += [np.array(rng.sample(range(n), n)) for _ in range(max(0, restarts - 2))]
    best_order, best = starts[0], -1.0
    for order in starts:
        order = order.copy()
        value = _float_delta(pa, qa, order, fpgf, e)
        for _ in range(steps):
            trial = order.copy()
            i, j = rng.randrange(n), rng.randrange(n)
            if rng.random() < 0.5:
                trial[i], trial[j] = trial[j], trial[i]
            else:
                item = trial[i]
                trial = np.insert(np.delete(trial, i), j, item)
            v = _float_delta(pa, qa, trial, fpgf, e)
            if v >= value:
                order, value = trial, v
        if value > best:
            best, best_order = value, order
    a, b = released(p, q, [int(i) for i in best_order], pgf_of(law))
    return hockey(a, b, epsilon), [int(i) for i in best_order]


def threshold_laws(p: Sequence[float], q: Sequence[float], above: Sequence[float], gamma: float) -> tuple[list[mpmath.mpf], list[mpmath.mpf]]:
    """Liu–Talwar's known threshold exactly: output i is above the threshold with probability ``above[i]`` (a
    randomised score; 0 or 1 for a deterministic one); run, release the first candidate above it, else stop
    (⊥) with probability γ. Released: ⊥ with γF/(1 − cF), output i (above) with p_i·above_i/(1 − cF), where F
    is the mass below the threshold and c = 1 − γ. Laws ⊥ first, 50 digits."""
    with mpmath.workdps(DPS):
        g = mpmath.mpf(gamma)
        c = 1 - g
        out = []
        for masses in (_mp(p), _mp(q)):
            t = _mp(above)
            below = mpmath.fsum(m * (1 - s) for m, s in zip(masses, t))
            denom = 1 - c * below
            out.append([g * below / denom] + [m * s / denom for m, s in zip(masses, t)])
        return out[0], out[1]


def max_log_ratio(a: Sequence[mpmath.mpf], b: Sequence[mpmath.mpf]) -> mpmath.mpf:
    """The pure ε of a pair of laws on the same outputs: max |log a_i/b_i| over outputs with mass (∞ if one side
    is 0 where the other is not)."""
    with mpmath.workdps(DPS):
        worst = mpmath.mpf(0)
        for x, y in zip(a, b):
            if x == 0 and y == 0:
                continue
            if x == 0 or y == 0:
                return mpmath.inf
            worst = max(worst, abs(mpmath.log(x / y)))
        return worst


def threshold_worst_epsilon(p: Sequence[float], q: Sequence[float], gamma: float) -> mpmath.mpf:
    """The largest pure ε of the known-threshold release over every deterministic set of outputs above the
    threshold (2ⁿ − 1 non-empty sets), both datasets' roles being symmetric in |log ratio|."""
    n = len(p)
    best = mpmath.mpf(0)
    for mask in range(1, 1 << n):
        above = [float(mask >> i & 1) for i in range(n)]
        a, b = threshold_laws(p, q, above, gamma)
        best = max(best, max_log_ratio(a, b))
    return best


def gaussian_bins(sigma: float, edges: Sequence[float], sensitivity: float = 1.0) -> tuple[list[mpmath.mpf], list[mpmath.mpf]]:
    """P = N(Δ, σ²), Q = N(0, σ²) (optcomp's Gaussian pair) on the bins (−∞, e₁], (e₁, e₂], …, (e_m, ∞)."""
    with mpmath.workdps(DPS):
        s, d = mpmath.mpf(sigma), mpmath.mpf(sensitivity)
        cuts = [mpmath.mpf(-mpmath.inf)] + _mp(edges) + [mpmath.mpf(mpmath.inf)]

        def masses(mean: mpmath.mpf) -> list[mpmath.mpf]:
            cdf = [mpmath.ncdf(x, mu=mean, sigma=s) if mpmath.isfinite(x) else (mpmath.mpf(0) if x < 0 else mpmath.mpf(1)) for x in cuts]
            return [cdf[i + 1] - cdf[i] for i in range(len(cuts) - 1)]

        return masses(d), masses(mpmath.mpf(0))


def laplace_bins(scale: float, edges: Sequence[float], sensitivity: float = 1.0) -> tuple[list[mpmath.mpf], list[mpmath.mpf]]:
    """P = Lap(Δ, b), Q = Lap(0, b) (optcomp's Laplace pair) on the bins of ``edges``."""
    with mpmath.workdps(DPS):
        b, d = mpmath.mpf(scale), mpmath.mpf(sensitivity)

        def cdf(x: mpmath.mpf, m: mpmath.mpf) -> mpmath.mpf:
            if x == -mpmath.inf:
                return mpmath.mpf(0)
            if x == mpmath.inf:
                return mpmath.mpf(1)
            z = (x - m) / b
            return mpmath.exp(z) / 2 if z < 0 else 1 - mpmath.exp(-z) / 2

        cuts = [mpmath.mpf(-mpmath.inf)] + _mp(edges) + [mpmath.mpf(mpmath.inf)]
        return tuple([cdf(cuts[i + 1], m) - cdf(cuts[i], m) for i in range(len(cuts) - 1)] for m in (d, mpmath.mpf(0)))  # type: ignore[return-value]


def dpgf_of(law: object) -> Pgf:
    """φ'(x) at 50 digits, the derivative of :func:`pgf_of`'s closed forms."""
    name = type(law).__name__
    if name == "Poisson":
        mu = mpmath.mpf(law.mean)  # type: ignore[attr-defined]
        return lambda x: mu * mpmath.exp(mu * (x - 1))
    if name == "Binomial":
        n, p = int(law.n), mpmath.mpf(law.p)  # type: ignore[attr-defined]
        return lambda x: n * p * (1 - p + p * x) ** (n - 1)
    eta, gamma = mpmath.mpf(law.eta), mpmath.mpf(law.gamma)  # type: ignore[attr-defined]
    c = 1 - gamma
    if eta == 0:
        return lambda x: c / ((1 - c * x) * mpmath.log(1 / gamma))
    norm = gamma ** (-eta) - 1
    return lambda x: eta * c * (1 - c * x) ** (-eta - 1) / norm


def monotone_order_delta_continuous(
    logpdf_p: Callable[[mpmath.mpf], mpmath.mpf], logpdf_q: Callable[[mpmath.mpf], mpmath.mpf],
    cdf_p: Callable[[mpmath.mpf], mpmath.mpf], cdf_q: Callable[[mpmath.mpf], mpmath.mpf],
    law: object, epsilon: float, *, span: tuple[float, float], increasing: bool, dps: int = 30,
) -> mpmath.mpf:
    """δ(ε) of best-of-K on a continuous pair on the line, candidates ordered by the output itself (ascending,
    or descending), one direction (P against e^ε P'): ∫ (φ'(F(y))p(y) − e^ε φ'(F'(y))p'(y))₊ dy by quadrature
    over ``span`` cut in 80 pieces (the tails beyond it must be negligible for the spans used)."""
    dpgf = dpgf_of(law)
    with mpmath.workdps(dps):
        e = mpmath.exp(mpmath.mpf(epsilon))

        def integrand(y: mpmath.mpf) -> mpmath.mpf:
            fp = cdf_p(y) if increasing else 1 - cdf_p(y)
            fq = cdf_q(y) if increasing else 1 - cdf_q(y)
            v = dpgf(fp) * mpmath.exp(logpdf_p(y)) - e * dpgf(fq) * mpmath.exp(logpdf_q(y))
            return v if v > 0 else mpmath.mpf(0)

        return mpmath.quad(integrand, mpmath.linspace(span[0], span[1], 81))


__all__ = [
    "dpgf_of",
    "gaussian_bins",
    "hockey",
    "laplace_bins",
    "max_log_ratio",
    "monotone_order_delta_continuous",
    "pgf_of",
    "released",
    "searched_order_delta",
    "split",
    "threshold_laws",
    "threshold_worst_epsilon",
    "worst_order_delta",
]


# -- helpers of tests/test_selection_audit.py (its mpmath work lives here) --------------------------------------
def mp_vector(values: Sequence[float]) -> list[mpmath.mpf]:
    """Floats as mpf values (exact)."""
    return [mpmath.mpf(x) for x in values]


def renyi(a: Sequence[mpmath.mpf], b: Sequence[mpmath.mpf], lam: float) -> mpmath.mpf:
    """D_λ(a ‖ b) of two discrete laws, 50 digits."""
    with mpmath.workdps(50):
        return mpmath.log(mpmath.fsum(x**lam * y ** (1 - lam) for x, y in zip(a, b) if x > 0)) / (lam - 1)


def rr_probabilities(epsilon: float) -> list[float]:
    """Randomized response's output law on one dataset, (e^ε, 1)/(1 + e^ε), each mass rounded to nearest."""
    e0 = mpmath.mpf(epsilon)
    return [float(mpmath.exp(e0) / (1 + mpmath.exp(e0))), float(1 / (1 + mpmath.exp(e0)))]


def theorem6_as_stated(p: Sequence[float], q: Sequence[float], pgf: Pgf, mean: float, lam: float) -> tuple[mpmath.mpf, mpmath.mpf]:
    """(Papernot–Steinke Thm 6's formula ρ + μδ̂ + log(μ)/(λ − 1) for the pair, the selection's exact D_λ
    over the order (1, 0), both directions), 50 digits."""
    with mpmath.workdps(50):
        a, b = released(p, q, [1, 0], pgf)
        exact = max(renyi(a, b, lam), renyi(b, a, lam))
        pm, qm = mp_vector(p), mp_vector(q)
        rho = max(renyi(pm, qm, lam), renyi(qm, pm, lam))
        eps_hat = mpmath.log(1 + 1 / mpmath.mpf(lam - 1))
        delta_hat = hockey(pm, qm, float(eps_hat))
        formula = rho + mean * delta_hat + mpmath.log(mean) / (lam - 1)
    return formula, exact


def location_family(kind: str, scale: float) -> tuple[Callable[[mpmath.mpf, int], mpmath.mpf], Callable[[mpmath.mpf, int], mpmath.mpf]]:
    """(log-density, CDF) of the Gaussian (``kind == "gauss"``) or Laplace law of ``scale`` at location m."""
    b = mpmath.mpf(scale)
    if kind == "gauss":
        def lp(y: mpmath.mpf, m: int) -> mpmath.mpf:
            return -((y - m) ** 2) / (2 * b * b) - mpmath.log(b * mpmath.sqrt(2 * mpmath.pi))

        def cdf(y: mpmath.mpf, m: int) -> mpmath.mpf:
            return mpmath.ncdf(y, mu=m, sigma=b)
    else:
        def lp(y: mpmath.mpf, m: int) -> mpmath.mpf:
            return -abs(y - m) / b - mpmath.log(2 * b)

        def cdf(y: mpmath.mpf, m: int) -> mpmath.mpf:
            z = (y - m) / b
            return mpmath.exp(z) / 2 if z < 0 else 1 - mpmath.exp(-z) / 2
    return lp, cdf


def exact_renyi_of_worst_order(p: Sequence[float], q: Sequence[float], law: object, lam: float) -> mpmath.mpf:
    """max over every order of the outputs and both directions of D_λ of the released laws (50 digits)."""
    pgf = pgf_of(law)
    best = mpmath.mpf(0)
    for order in itertools.permutations(range(len(p))):
        a, b = released(p, q, list(order), pgf)
        best = max(best, renyi(a, b, lam), renyi(b, a, lam))
    return best


def hockey_of_floats(p: Sequence[float], q: Sequence[float], epsilon: float) -> float:
    """The hockey-stick divergence of two float laws at ε, computed at 50 digits, as a float."""
    return float(hockey(mp_vector(p), mp_vector(q), epsilon))


def sup_abs_log_ratio(p: Sequence[float], q: Sequence[float]) -> mpmath.mpf:
    """max |log(p_i/q_i)| at 50 digits (both masses positive)."""
    with mpmath.workdps(50):
        return max(abs(mpmath.log(mpmath.mpf(a) / mpmath.mpf(b))) for a, b in zip(p, q))

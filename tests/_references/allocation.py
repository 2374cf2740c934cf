"""Truths for one balls-in-bins epoch (``docs/samplers.md`` Lemma A): the pair P_t = (1/t)Σᵢ N(eᵢ, σ²I),
Q_t = N(0, σ²I), whose likelihood ratio is S/t with S = Σᵢ Xᵢ, Xᵢ = e^{ℓᵢ}, ℓᵢ ~ N(−μ²/2, μ²) i.i.d.

* :func:`epoch_delta`: δ_rem(ε) = E_Q[(S/t − e^ε)₊] and δ_add(ε) = E_Q[(1 − e^ε S/t)₊] for t = 1, 2, 3
  by mpmath quadrature over t − 1 factors, the last one in closed form (the lognormal call/put:
  E[(X − k)₊] = Φ̄((ln k − μ²/2)/μ) − k·Φ̄((ln k + μ²/2)/μ), E[(k − X)₊] = k·Φ((ln k + μ²/2)/μ) −
  Φ((ln k − μ²/2)/μ)), every integral split at its kink.
* :func:`split_law`: the mean-preserving split of Lemma C on the grid x_j = t·e^{jh}, in 50-digit
  arithmetic, with factor cells from exact Gaussian integrals and exact split weights (no trimming, a
  wide window): an independent implementation to check the library's envelopes against, and its
  mean E[S′] = E[S; window] (mean preservation).
"""

from __future__ import annotations

import mpmath

_DPS = 20


def _call(k: mpmath.mpf, mu: mpmath.mpf) -> mpmath.mpf:
    """E[(X − k)₊] for X = e^ℓ, ℓ ~ N(−μ²/2, μ²)."""
    if k <= 0:
        return 1 - k
    lk = mpmath.log(k)
    return mpmath.ncdf(-(lk - mu * mu / 2) / mu) - k * mpmath.ncdf(-(lk + mu * mu / 2) / mu)


def _put(k: mpmath.mpf, mu: mpmath.mpf) -> mpmath.mpf:
    """E[(k − X)₊]."""
    if k <= 0:
        return mpmath.mpf(0)
    lk = mpmath.log(k)
    return k * mpmath.ncdf((lk + mu * mu / 2) / mu) - mpmath.ncdf((lk - mu * mu / 2) / mu)


def _density(x: mpmath.mpf, mu: mpmath.mpf) -> mpmath.mpf:
    return mpmath.npdf(x, -mu * mu / 2, mu)


def _expect(fn: object, c: mpmath.mpf, mu: mpmath.mpf, depth: int) -> mpmath.mpf:
    """E[fn(c − X₁ − … − X_depth, μ)] by nested quadrature over ℓ, split where c − X crosses 0."""
    if depth == 0:
        return fn(c, mu)  # type: ignore[operator]
    lo, hi = -mu * mu / 2 - 10 * mu, -mu * mu / 2 + 10 * mu

    def inner(ell: mpmath.mpf) -> mpmath.mpf:
        return _density(ell, mu) * _expect(fn, c - mpmath.exp(ell), mu, depth - 1)

    pts = [lo, hi]
    if c > 0 and lo < mpmath.log(c) < hi:
        pts = [lo, mpmath.log(c), hi]
    mid = -mu * mu / 2
    pts = sorted({*pts, mid - 4 * mu, mid, mid + 4 * mu})
    return mpmath.quad(inner, pts, maxdegree=4)


def epoch_delta(sigma: float, t: int, epsilon: float) -> tuple[mpmath.mpf, mpmath.mpf]:
    """(δ_rem(ε), δ_add(ε)) of one balls-in-bins epoch with t ∈ {1, 2, 3} steps (module docstring)."""
    if t not in (1, 2, 3):
        raise ValueError("t must be 1, 2 or 3")
    with mpmath.workdps(_DPS):
        mu = 1 / mpmath.mpf(sigma)
        c = t * mpmath.exp(mpmath.mpf(epsilon))
        rem = _expect(lambda k, m: _call(k, m), c, mu, t - 1) / t
        # δ_add = E[(1 − e^ε S/t)₊] = (e^ε/t)·E[(t e^{−ε} − S)₊]
        k = t * mpmath.exp(-mpmath.mpf(epsilon))
        add = _expect(lambda kk, m: _put(kk, m), k, mu, t - 1) / k
        return rem, add


def split_law(sigma: float, t: int, h: float, j_lo: int, j_hi: int) -> tuple[dict[int, mpmath.mpf], mpmath.mpf]:
    """(Q′ on the grid indices, E[S; all factors in the window]) of Lemma C's split on x_j = t·e^{jh}.

    Factors are restricted to ℓ ∈ [ln t + j_lo·h, ln t + j_hi·h) (a sub-probability law, exact cell
    integrals); each cell's Q-mass q and P-mass m go to x_j and x_{j+1} as (q·x_{j+1} − m)/(x_{j+1} − x_j)
    and (m − q·x_j)/(x_{j+1} − x_j); sums are split the same way (exact weights); binary powering.
    """
    with mpmath.workdps(50):
        mu = 1 / mpmath.mpf(sigma)
        hm, lt = mpmath.mpf(h), mpmath.log(t)

        def x(j: int) -> mpmath.mpf:
            return t * mpmath.exp(j * hm)

        factor: dict[int, mpmath.mpf] = {}
        for j in range(j_lo, j_hi):
            a, b = lt + j * hm, lt + (j + 1) * hm
            q = mpmath.ncdf((b + mu * mu / 2) / mu) - mpmath.ncdf((a + mu * mu / 2) / mu)
            m = mpmath.ncdf((b - mu * mu / 2) / mu) - mpmath.ncdf((a - mu * mu / 2) / mu)
            factor[j] = factor.get(j, 0) + (q * x(j + 1) - m) / (x(j + 1) - x(j))
            factor[j + 1] = factor.get(j + 1, 0) + (m - q * x(j)) / (x(j + 1) - x(j))
        a, b = lt + j_lo * hm, lt + j_hi * hm
        mean = t * (mpmath.ncdf((b - mu * mu / 2) / mu) - mpmath.ncdf((a - mu * mu / 2) / mu)) * (
            mpmath.ncdf((b + mu * mu / 2) / mu) - mpmath.ncdf((a + mu * mu / 2) / mu)
        ) ** (t - 1)

        def combine(u: dict[int, mpmath.mpf], v: dict[int, mpmath.mpf]) -> dict[int, mpmath.mpf]:
            out: dict[int, mpmath.mpf] = {}
            for i, qi in u.items():
                for j, qj in v.items():
                    s = x(i) + x(j)
                    k = int(mpmath.floor(mpmath.log(s / t) / hm))
                    wgt = (s - x(k)) / (x(k + 1) - x(k))
                    out[k] = out.get(k, 0) + qi * qj * (1 - wgt)
                    out[k + 1] = out.get(k + 1, 0) + qi * qj * wgt
            return out

        result: dict[int, mpmath.mpf] | None = None
        power, bits = factor, t
        while bits:
            if bits & 1:
                result = power if result is None else combine(result, power)
            bits >>= 1
            if bits:
                power = combine(power, power)
        assert result is not None
        return result, mean


def split_mass_and_mean(law: dict[int, mpmath.mpf], t: int, h: float) -> tuple[mpmath.mpf, mpmath.mpf]:
    """(Σ Q′, Σ x·Q′) of a split law on x_j = t·e^{jh}, in 50 digits."""
    with mpmath.workdps(50):
        hm = mpmath.mpf(h)
        return mpmath.fsum(law.values()), mpmath.fsum(q * t * mpmath.exp(k * hm) for k, q in law.items())


def weight_table_errors(
    h_in: float, h_out: float, groups: tuple[tuple[int, int, int], ...], w_hi: object, om_hi: object, far: int
) -> list[str]:
    """Where a tabulated offset f(d) misplaces x_j(1 + e^{−d·h_in}) on the output grid (step h_out, the input
    point x_j being y_{r·j}, r = h_in/h_out) or an upper weight is below the exact
    w(d) = (1 + e^{−d·h_in} − e^{f·h_out})/(e^{(f+1)h_out} − e^{f·h_out}) (or 1 − w(d)), or exceeds it by
    1e-12; and whether w(far) = e^{−far·h_in}/expm1(h_out) ≤ 1/2. In 40 digits."""
    out = []
    with mpmath.workdps(40):
        hi, ho = mpmath.mpf(h_in), mpmath.mpf(h_out)
        for f, d0, d1 in groups:
            for d in range(d0, d1):
                s = 1 + mpmath.exp(-d * hi)
                if not mpmath.exp(f * ho) <= s < mpmath.exp((f + 1) * ho):
                    out.append(f"offset at d={d}")
                exact = (s - mpmath.exp(f * ho)) / (mpmath.exp((f + 1) * ho) - mpmath.exp(f * ho))
                if not exact <= w_hi[d] <= exact + 1e-12:  # type: ignore[index]
                    out.append(f"w at d={d}")
                if not 1 - exact <= om_hi[d] <= 1 - exact + 1e-12:  # type: ignore[index]
                    out.append(f"1 - w at d={d}")
        if mpmath.exp(-far * hi) / mpmath.expm1(ho) > 0.5:
            out.append("far")
    return out


def lower_weights(h: float, groups: tuple[tuple[int, int, int], ...], far: int) -> tuple[list[float], list[float], float]:
    """(w_lo, om_lo, expm1_hi): the split weights w(d) and 1 − w(d) of d < far rounded *down* from their
    40-digit values, and e^h − 1 rounded *up* (the far field's weight e^{−dh}/expm1(h) then rounds down):
    the other envelope of the library's tables (design note §3.4 step 2, "w_lo = round-down")."""

    def down(x: mpmath.mpf) -> float:
        v = float(x)
        return v if mpmath.mpf(v) <= x else float(mpmath.mpf(v) - mpmath.mpf(v) * mpmath.mpf(2) ** -52)

    def up(x: mpmath.mpf) -> float:
        v = float(x)
        return v if mpmath.mpf(v) >= x else float(mpmath.mpf(v) + mpmath.mpf(v) * mpmath.mpf(2) ** -52)

    w_lo, om_lo = [0.0] * far, [0.0] * far
    with mpmath.workdps(40):
        hm = mpmath.mpf(h)
        for f, d0, d1 in groups:
            for d in range(d0, d1):
                s = 1 + mpmath.exp(-d * hm)
                exact = (s - mpmath.exp(f * hm)) / (mpmath.exp((f + 1) * hm) - mpmath.exp(f * hm))
                w_lo[d], om_lo[d] = max(down(exact), 0.0), max(down(1 - exact), 0.0)
        expm1_hi = up(mpmath.expm1(hm))
    return w_lo, om_lo, expm1_hi


def factor_cell_integrals(mu: float, t: int, h: float, j: int) -> tuple[float, float, float, float]:
    """(q, r, up, down) of the factor cell λ ∈ [jh, (j+1)h), λ = ℓ − ln t ~ N(−μ²/2 − ln t, μ²) under Q, in 30
    digits: the Q-mass, E_Q[e^{λ−jh}; cell], and the split's masses to x_{j+1} and x_j,
    ∫ (e^{λ−jh} − 1)/(e^h − 1) φ and ∫ (e^h − e^{λ−jh})/(e^h − 1) φ (``_allocation_cells``)."""
    with mpmath.workdps(30):
        m, s = -mpmath.mpf(mu) ** 2 / 2 - mpmath.log(t), mpmath.mpf(mu)
        a, hm = j * mpmath.mpf(h), mpmath.mpf(h)
        e1 = mpmath.expm1(hm)

        def dens(v: mpmath.mpf) -> mpmath.mpf:
            return mpmath.npdf(a + v, m, s)

        q = mpmath.quad(dens, [0, hm])
        r = mpmath.quad(lambda v: mpmath.exp(v) * dens(v), [0, hm])
        up = mpmath.quad(lambda v: mpmath.expm1(v) / e1 * dens(v), [0, hm])
        down = mpmath.quad(lambda v: (mpmath.exp(hm) - mpmath.exp(v)) / e1 * dens(v), [0, hm])
        return float(q), float(r), float(up), float(down)

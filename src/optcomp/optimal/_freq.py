"""The split engine's envelopes in the frequency domain (design: second-order certified brackets, §3).

Each envelope of :mod:`._split` is the law of a sum of independent *items*, each with at most four
lattice points ±B, ±(B + 1): the upper end's dominating mixture (λ·RR_a + (1 − λ)·RR_b, B = A), and the
lower end's quantised pair (P and the tilted Q̂ of RR_ε on ±C, B = C). A tree of windowed convolutions
(:mod:`._tree`) spends most of its time on the leaves, which span Σ 2B_i lattice points — about √k
times the final window. Here the exponentially tilted law v of the whole sum is instead obtained on a
window [lo, lo + N) from its characteristic function at the few *alive* DFT frequencies:

    v_N(p) = (1/N) Σ_f Φ(f) e^{2πi p f/N},   Φ(f) = e^{2πi lo f/N} Π_i φ_i(2πf/N)^{c_i},

with φ_i the item's tilted characteristic function in closed form (k·(#alive) work) and one inverse real
FFT of size N. v_N is the N-periodic folding of v (v_N(p) = Σ_m v(lo + p + mN)). Soundness, step by step
(all errors are absolute in tilted units unless said otherwise, and go into the envelope's direction):

1. *Rounded masses.* The item masses are computed in floating point as m̃ = exp(ℓ + θx − log M̃_i); the
   exact law of these numbers (the "computed law") differs pointwise from the exact tilted law by a
   relative factor e^{±η}, η = Σ c_i η_i with η_i bounding the rounding of ℓ, θx, the subtraction and exp
   (log M̃_i is the same float on both sides of the untilting, so its own error cancels). A mass that
   underflows is off by at most 2⁻¹⁰⁷⁴ absolutely: ≤ 4n·2⁻¹⁰⁷⁴ in total variation over the n items, far
   below the per-entry bound of steps 2–4 (which carries a relative 64u margin for it).
2. *Dead frequencies.* For any positive masses m_a at points x_a with s = Σ m_a,
   |φ(ω)|² = s² − 2 Σ_{a<b} m_a m_b (1 − cos(d_ab ω)), d_ab = |x_a − x_b|, so
   log|φ(ω)| ≤ log s − Σ_{a<b} m_a m_b (1 − cos(d_ab ω))/s² (√(1 − y) ≤ e^{−y/2}). Summed over items this
   is log s_tot − h(f), h(f) = Σ_d X_d (1 − cos(2π d f/N)), X_d = Σ c_i m_a m_b/s_i² over pairs with d_ab ≡ d
   (mod N) — evaluated at every f by one real FFT (with :func:`optcomp._rounding.fft_error_bound`, X_d
   rounded down). So |Φ(f)| ≤ B(f) := exp(log s_tot − h_lo(f)) at *every* bin; bins with B(f) ≤ e^{−70}
   are not computed (set to 0) and cost (1/N)·Σ_dead w_f B(f) per point (w_f = 2 for a bin and its
   conjugate).
3. *Alive frequencies.* φ̃_i = Σ m̃ e^{−iωx} from integer phases ((x·f) mod N exactly), |φ̃_i − φ_i| ≤
   128u·s_i (phase ≤ 19u, e^{−iω(B+1)} as a product ≤ 63u, products and sums); Φ̃ = exp(Σ c_i Log φ̃_i +
   shift), with |Σ c_i Log φ̃_i − Σ c_i Log φ_i| ≤ E_S := Σ c_i [τ_i/(|φ̃_i| − 2τ_i) + 4u(|Log φ̃_i| + 1)] +
   (n + 4)u Σ c_i |Log φ̃_i| + 32u, τ_i = 128u·s_i (|log(1 + z)| ≤ |z|/(1 − |z|); up to 2πi:
   the exponential does not see it), so |Φ̃ − Φ| ≤ |Φ̃|(expm1(E_S)(1 + 4u) + 8u). A bin where that bound
   exceeds B(f) is zeroed and charged B(f) instead.
4. *Inverse transform.* Higham's bound for the FFT, ‖ŷ − y‖₂ ≤ log₂(n)·5u·‖y‖₂ (with the factor-4 margin
   of :func:`fft_error_bound`), and ‖y‖₂ = ‖Φ̃‖₂/√N (Parseval) bound each output entry.
5. *Folding.* v_N ≥ v on the window, so the upper end (and Q̂ on the lower end) may use v_N as is; the
   lower end's P uses v_N − (tilted P-mass outside the window), bounded by Chernoff from the closed-form
   log-MGF K(t) = Σ c_i log Σ m̃ e^{tx} (rounded up).
6. *Outside the window.* Upper end: the untilted P-mass above the window goes to the +∞ atom, the mass
   below it is moved up to the window's first index (a larger loss keeps domination), both bounded by
   Chernoff, log P(L ≥ h) ≤ η + log M − (t + θ)h + K(t) for t + θ ≥ 0 (≤ h: t + θ ≤ 0). Lower end: both
   vectors are cropped to the window (a post-processing: those outcomes are mapped to a symbol ⊥).

The functions return ``None`` only where integer phases would pass 2⁶² (the caller then uses the tree);
more than ``_MAX_WORK`` (alive bins × items) is refused with a ``ValueError`` naming the cost, never
handed to the tree (whose windows can lose underflowed mass under the huge tilts such inputs need).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy import fft as sfft

from optcomp._numerics import GENEROUS_RELATIVE_SLACK, SMALLEST_SUBNORMAL, TINY_PAD, FloatArray
from optcomp._rounding import fft_error_bound, next_down, next_up, rounding_error, widen_down, widen_up
from optcomp.optimal._solve import Weights

#: Half-width of the window in tilted standard deviations (tightness only, never soundness).
WINDOW_SDS = 10.0
#: Bins whose certified |Φ| bound is below e^{_LOG_DEAD} are not computed.
_LOG_DEAD = -70.0
#: Most (alive bins) × (items) evaluated; beyond it the call is refused (ValueError) rather than handed
#: to the tree, whose windows can lose underflowed mass under the huge tilts such inputs need.
_MAX_WORK = 2e10
#: At most this many items (and items × window ≤ _DIRECT_WORK), with the window on the whole support,
#: are composed directly (:func:`direct`): few nearly deterministic items have |Φ| ≈ 1 at every bin,
#: and the transform's absolute per-entry errors would add up over the window.
_DIRECT_ITEMS = 64.0
_DIRECT_WORK = 4e7
#: Items × bins per block of the alive evaluation (memory).
_BLOCK = 1 << 19
#: Per-item bound on |φ̃_i − φ_i| / s_i (four products of a mass by an integer-phase e^{−iωx}).
_PHI_ERR = rounding_error(128.0)
_TWO_PI = 2.0 * math.pi
#: A window side is widened while the tilted mass beyond it may exceed e^{_LOG_EDGE}.
_LOG_EDGE = -45.0
#: Supports up to this many points are transformed whole (exact on small lattices).
_FULL_SUPPORT = 1 << 15
#: A window side may be widened to the support's end where the support has at most this many points.
_MAX_FULL = 1 << 23


class Law(NamedTuple):
    """Independent items on ±base, ±(base + 1), with tilted masses m̃ (columns +B, −B, +(B+1), −(B+1))."""

    base: np.ndarray  # (k,) int64
    m: FloatArray  # (k, 4)
    c: FloatArray  # (k,) counts
    log_m: float  # Σ c_i log M̃_i as computed (its rounding is part of eta)
    eta: float  # relative (log) error of the computed law against the exact one, incl. log_m's sum
    four: bool  # whether the ±(B + 1) columns are used
    logm: FloatArray  # (k, 4) log of the tilted masses (−inf only for a true 0; no underflow), for the log-MGF


def _points(base: np.ndarray) -> np.ndarray:
    b = base[:, None]
    return np.concatenate([b, -b, b + 1, -(b + 1)], axis=1)


def make_law(
    base: np.ndarray, logp: FloatArray, logp_err: FloatArray, counts: FloatArray, theta: float
) -> Law:
    """Tilt and normalise per item. ``logp`` (k, 4): log masses (−inf allowed); ``logp_err``: their error."""
    x = _points(base).astype(np.float64)
    with np.errstate(invalid="ignore"):
        lt = logp + theta * x
    mx = np.max(lt, axis=1)
    with np.errstate(divide="ignore"):
        log_mi = mx + np.log(np.sum(np.exp(lt - mx[:, None]), axis=1))
        m = np.exp(lt - log_mi[:, None])
    fin = np.isfinite(lt)
    absmax = np.max(np.where(fin, np.abs(lt), 0.0), axis=1)
    spread = np.max(np.where(fin, np.abs(lt - log_mi[:, None]), 0.0), axis=1)
    eta_i = rounding_error(4.0, np.abs(theta) * np.max(np.abs(x), axis=1) + absmax + spread + 4.0) + logp_err
    terms = counts * log_mi
    log_m = float(np.sum(terms))
    # products c·log M̃ and their sum ((k + 4)u ≥ γ_k of dot_error_bound, any summation order) are in η
    # Σ c·η_i: non-negative terms, one product and ≤ n − 1 additions each (γ_n), so n + 2 units cover it
    eta = widen_up(float(np.sum(counts * eta_i)), counts.size + 2) + rounding_error(base.size + 4.0, float(np.sum(np.abs(terms))))
    # log m̃ straight from the logs, never as log(exp(·)): a tilted mass that underflows to 0 in m can carry
    # O(1) untilted probability (e^{θ|x|} with θ|x| in the thousands), and the Chernoff bounds of steps 5-6
    # must see it (found by review: 20 × (3, 0) + 2000 × (0.001, 0) at δ_g = 0.5 returned [0, 0], truth
    # 53.61). Its rounding is that of lt and log M̃_i, within η_i's terms and log_mgf's magnitude slack.
    with np.errstate(invalid="ignore"):
        logm = np.where(np.isfinite(lt), lt - log_mi[:, None], -math.inf)
    four = bool(np.any(np.isfinite(logm[:, 2:])))
    return Law(base.astype(np.int64), m, counts, log_m, eta, four, logm)


def moments(law: Law) -> tuple[float, float]:
    """Tilted mean and variance of the index (floating point; used only to place the window)."""
    x = _points(law.base).astype(np.float64)
    mean_i = np.sum(law.m * x, axis=1)
    var_i = np.maximum(np.sum(law.m * x * x, axis=1) - mean_i**2, 0.0)
    return float(np.sum(law.c * mean_i)), float(np.sum(law.c * var_i))


def log_mgf(law: Law, t: float) -> float:
    """An upper bound on K(t) = Σ c_i log Σ_x m̃_x e^{tx} (the computed law's tilted log-MGF)."""
    x = _points(law.base).astype(np.float64)
    cols = 4 if law.four else 2
    with np.errstate(invalid="ignore"):
        lt = law.logm[:, :cols] + t * x[:, :cols]
    mx = np.max(lt, axis=1)
    with np.errstate(invalid="ignore"):
        row = mx + np.log(np.sum(np.exp(lt - mx[:, None]), axis=1))
    terms = law.c * row
    total = float(np.sum(terms))
    # log m̃ (u|·|), t·x, the sums/exp/log of a row (8u·(|row| + magnitudes + 4)), c·row and the sum
    mag = np.abs(mx) + np.abs(t) * (law.base.astype(np.float64) + 1.0)
    slack = rounding_error(8.0, float(np.sum(law.c * (np.abs(row) + mag + 4.0)))) + rounding_error(law.base.size + 4.0, float(np.sum(np.abs(terms))))
    return total + slack


def _dead_bound(law: Law, n: int) -> FloatArray:
    """log B(f) ≥ log|Φ(f)| for every bin f = 0 … n//2 (module docstring, step 2)."""
    x = _points(law.base)
    s = widen_up(np.sum(law.m, axis=1), 4)  # ≥ the exact sum of the m̃
    # Σ c_i log s_i ≤ Σ c_i (s_i − 1) (s_i − 1 is exact near 1), summed with its rounding bound.
    dev = law.c * (s - 1.0)
    log_s = float(np.sum(dev)) + rounding_error(law.base.size + 4.0, float(np.sum(np.abs(dev)))) + TINY_PAD
    cols = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)] if law.four else [(0, 1)]
    scale = widen_down(law.c / (s * s), 8)
    dmax = int(np.max(np.abs(x))) * 2 + 2 if x.size else 2
    xd = np.zeros(dmax + 1)
    for a, b in cols:
        w = law.m[:, a] * law.m[:, b] * scale
        xd += np.bincount(np.abs(x[:, a] - x[:, b]), weights=w, minlength=dmax + 1)
    # bincount sums sequentially (≤ #terms·u relative), two more roundings per term
    xd = widen_down(xd, len(cols) * law.base.size + 8.0)
    if dmax >= n:  # cos(2πdf/n) is n-periodic in d: fold exactly
        folded = np.zeros(n)
        np.add.at(folded, np.arange(dmax + 1) % n, xd)
        xd = widen_down(folded, dmax / n + 2.0)
    xd[0] = 0.0  # d ≡ 0 contributes 1 − cos = 0
    total = math.fsum(xd.tolist())
    full = np.zeros(n)
    full[: xd.size] = xd
    re = sfft.rfft(full).real
    # Higham: per-bin error ≤ ‖ΔY‖₂ ≤ c·log₂(n)·u·‖Y‖₂, ‖Y‖₂ = √n·‖X‖₂ (Parseval).
    # squares (u), fsum (correctly rounded, u), n· (u), √ (halves them, + u): ≤ 3 roundings
    norm = widen_up(math.sqrt(n * math.fsum((xd * xd).tolist())), 8)
    err = fft_error_bound(1 << max(1, math.ceil(math.log2(n))), norm, 0) + rounding_error(4.0, total)
    h = np.maximum(total - re - err, 0.0)
    return np.asarray(log_s - h, dtype=np.float64)


def _alive_values(laws: list[Law], freqs: np.ndarray, n: int, lo: int) -> list[tuple[np.ndarray, FloatArray]]:
    """Φ̃ at the given bins and a bound on |Φ̃ − Φ| (module docstring, step 3), in real arithmetic.

    All ``laws`` have the same bases (the trigonometric part is shared).
    """
    base = laws[0].base[:, None]
    k = base.shape[0]
    four = any(law.four for law in laws)
    outs = [(np.zeros(freqs.size, dtype=np.complex128), np.full(freqs.size, math.inf)) for _ in laws]
    prep = []
    for law in laws:
        s = widen_up(np.sum(law.m, axis=1), 4)
        m = law.m
        prep.append(
            (
                law.c[:, None],
                float(np.sum(law.c)),
                (m[:, 0] + m[:, 1])[:, None],
                (m[:, 1] - m[:, 0])[:, None],
                (m[:, 2] + m[:, 3])[:, None],
                (m[:, 3] - m[:, 2])[:, None],
                (_PHI_ERR * s)[:, None],
            )
        )
    step = max(1, _BLOCK // max(k, 1))
    w = _TWO_PI / n
    for i0 in range(0, freqs.size, step):
        f = freqs[i0 : i0 + step]
        ang = ((base * f[None, :]) % n).astype(np.float64)
        ang *= w
        cs, sn = np.cos(ang), np.sin(ang)
        del ang
        if four:
            a1 = (f % n).astype(np.float64) * w
            c1, s1 = np.cos(a1)[None, :], np.sin(a1)[None, :]
            cs1, sn1 = cs * c1 - sn * s1, sn * c1 + cs * s1
        shift = ((lo * f) % n).astype(np.float64) * w
        for (c, ntot, msum, mdif, msum1, mdif1, tau), (out, err), law in zip(prep, outs, laws):
            # φ = m₀e^{−iθ} + m₁e^{iθ} (+ m₂e^{−i(θ+ω)} + m₃e^{i(θ+ω)}), θ = ωB, ω = 2πf/n
            re = msum * cs
            im = mdif * sn
            if law.four:
                re += msum1 * cs1
                im += mdif1 * sn1
            mod2 = re * re + im * im
            ok = np.all(mod2 > 16.0 * tau * tau, axis=0)
            with np.errstate(divide="ignore", invalid="ignore"):
                mod = np.sqrt(mod2)
                lmod = np.log(mod)
                arg = np.arctan2(im, re)
                del re, im, mod2
                t_re = np.sum(c * lmod, axis=0)
                t_im = np.sum(c * arg, axis=0)
                alg = np.abs(lmod) + np.abs(arg)
                e_s = np.sum(c * (tau / (mod - 2.0 * tau) + (rounding_error(ntot + 8.0)) * alg), axis=0)
            e_s = e_s + rounding_error(4.0, ntot) + rounding_error(2.0, np.abs(t_re) + np.abs(t_im)) + rounding_error(32.0)
            val = np.exp(t_re) * np.exp(1j * (t_im + shift))
            e = np.abs(val) * (widen_up(np.expm1(e_s), 4) + rounding_error(8.0))
            good = ok & np.isfinite(e) & np.isfinite(val)
            out[i0 : i0 + step] = np.where(good, val, 0.0)
            err[i0 : i0 + step] = np.where(good, e, math.inf)
    return outs


class Window(NamedTuple):
    lo: int
    n: int
    #: log of Chernoff bounds on the first law's tilted mass below / above the window
    log_below: float
    log_above: float


def support(law: Law) -> tuple[int, int]:
    """Least and largest index of the sum (every item at its extreme points)."""
    top = law.base + 1 if law.four else law.base
    span = int(np.sum(law.c.astype(np.int64) * top))
    return -span, span


def window(laws: list[Law], sds: float = WINDOW_SDS) -> Window:
    """A window [lo, lo + n) around all tilted laws (clipped to their support), n a fast real-FFT length.

    A side is widened (heavy tails: a few large items flipping) until the Chernoff bound on the first
    law's tilted mass beyond it is below e^{_LOG_EDGE}; those bounds are returned with the window.
    """
    lo_f, hi_f = math.inf, -math.inf
    s_lo, s_hi = 0, 0
    for law in laws:
        mean, var = moments(law)
        h = sds * math.sqrt(var) + 4.0
        smin, smax = support(law)
        s_lo, s_hi = min(s_lo, smin), max(s_hi, smax)
        lo_f, hi_f = min(lo_f, max(mean - h, smin)), max(hi_f, min(mean + h, smax))
    tails = [-math.inf, -math.inf]
    if s_hi - s_lo + 1 <= max(_FULL_SUPPORT, 2.0 * (hi_f - lo_f)):
        lo_f, hi_f = s_lo, s_hi  # the whole support: no folding, no cut
    else:
        for side, upper in enumerate((False, True)):
            for attempt in range(8):
                edge = hi_f + 1.0 if upper else lo_f - 1.0
                tails[side] = _tail(laws[0], edge, upper, None)
                if tails[side] < _LOG_EDGE:
                    break
                if attempt >= 5 and s_hi - s_lo + 1 <= _MAX_FULL:
                    # a few far clusters (nearly deterministic large items): take the whole side
                    grow = math.inf
                else:
                    grow = 0.5 * (hi_f - lo_f) + 1.0
                if upper:
                    hi_f = min(hi_f + grow, s_hi)
                else:
                    lo_f = max(lo_f - grow, s_lo)
    lo = math.floor(lo_f)
    n = max(int(sfft.next_fast_len(math.ceil(hi_f) - lo + 1, real=True)), 64)
    n += n & 1  # even: bins 0 … n/2
    # lo ≤ lo_f and lo + n ≥ hi_f + 1: the bounds at the evaluated edges cover the final ones (monotone)
    return Window(lo, n, tails[0], tails[1])


def direct(law: Law, lo: int, n: int) -> tuple[FloatArray, FloatArray]:
    """The computed law on [lo, lo + n) ⊇ support by sequential shifted sums (positive terms only).

    Each item adds at most four products and three sums per entry: relative error ≤ 5u per item and
    entry (e^{5Nu} after N items), plus at most 4·2⁻¹⁰⁷⁴ absolute per item where a product underflows.
    Unreachable entries stay exactly 0. Returns (ṽ, per-entry bound on |ṽ − v|).
    """
    v = np.zeros(n)
    v[-lo] = 1.0
    steps = 0
    for b, row, c in zip(law.base.tolist(), law.m, law.c.tolist()):
        offs = [(b, row[0]), (-b, row[1]), (b + 1, row[2]), (-(b + 1), row[3])]
        for _ in range(int(c)):
            new = np.zeros(n)
            for off, mass in offs:
                if mass <= 0.0:
                    continue
                if off >= 0:
                    new[off:] += mass * v[: n - off]
                else:
                    new[: n + off] += mass * v[-off:]
            v = new
            steps += 1
    eta = rounding_error(5.0 * steps)  # exact: an integer times a power of two
    err = v * widen_up(math.expm1(eta), 4) + 4.0 * steps * SMALLEST_SUBNORMAL
    return v, err


def transform(laws: list[Law], win: Window) -> list[tuple[FloatArray, FloatArray | float]] | None:
    """Per law (same bases): (ṽ on the window, a bound on |ṽ − v_N| per entry); None: use the tree."""
    lo, n = win.lo, win.n
    items = float(np.sum(laws[0].c))
    smin, smax = support(laws[0])
    if items <= _DIRECT_ITEMS and items * n <= _DIRECT_WORK and lo <= smin and lo + n - 1 >= smax:
        return [direct(law, lo, n) for law in laws]
    base = laws[0].base
    xmax = int(np.max(np.abs(base))) + 1 if base.size else 1
    if float(xmax) * n >= 2.0**62 or float(abs(lo)) * n >= 2.0**62:
        return None
    log_bs = [_dead_bound(law, n) for law in laws]
    alive = np.flatnonzero(np.max(np.stack(log_bs), axis=0) > _LOG_DEAD)
    work = alive.size * float(max(base.size, 1)) * len(laws)
    if work > _MAX_WORK:
        raise ValueError(
            f"this composition needs about {work:.2g} characteristic-function evaluations (limit {_MAX_WORK:.2g}): "
            "ask for a larger tolerance, or pool equal epsilons"
        )
    wf = np.full(log_bs[0].size, 2.0)
    wf[0] = 1.0
    wf[-1] = 1.0  # n even: the Nyquist bin is its own conjugate
    dead = np.ones(wf.size, dtype=bool)
    dead[alive] = False
    got = _alive_values(laws, alive, n, lo)
    res: list[tuple[FloatArray, FloatArray | float]] = []
    for log_b, (vals, errs) in zip(log_bs, got):
        bnd = widen_up(np.exp(log_b), 64)
        errs = np.minimum(errs, bnd[alive])
        vals = np.where(errs >= bnd[alive], 0.0, vals)  # |Φ| ≤ B: zero is as good
        spec = np.zeros(wf.size, dtype=np.complex128)
        spec[alive] = vals
        bin_err = widen_up(float(np.sum(wf[alive] * errs)) + float(np.sum(wf[dead] * bnd[dead])), 64)
        norm2 = widen_up(math.sqrt(float(np.sum(wf[alive] * np.abs(vals) ** 2)) / n), 64)
        out = sfft.irfft(spec, n)
        e = bin_err / n + fft_error_bound(1 << max(1, math.ceil(math.log2(n))), norm2, 0)
        res.append((np.asarray(out, dtype=np.float64), widen_up(e, 64)))
    return res


def _tilted_moments(law: Law, t: float) -> tuple[float, float]:
    """K'(t), K''(t) of the computed law (floating point; only to pick Chernoff parameters)."""
    cols = 4 if law.four else 2
    xs = _points(law.base)[:, :cols].astype(np.float64)
    with np.errstate(invalid="ignore"):
        lt = law.logm[:, :cols] + t * xs
    lt -= np.max(lt, axis=1)[:, None]
    w = np.exp(lt)
    w /= np.sum(w, axis=1)[:, None]
    wx = w * xs
    mean_i = np.sum(wx, axis=1)
    var_i = np.maximum(np.sum(wx * xs, axis=1) - mean_i**2, 0.0)
    return float(np.dot(law.c, mean_i)), float(np.dot(law.c, var_i))


def _tail(law: Law, h: float, upper: bool, theta: float | None) -> float:
    """log of a Chernoff bound on the mass at index ≥ h (``upper``) or ≤ h (else).

    ``theta`` None: the computed (tilted) law itself, log P_v(L ≥ h) ≤ K(t) − t·h for t ≥ 0 (≤ h: t ≤ 0).
    ``theta`` = θ: the untilted P-law, log P(L ≥ h) ≤ η + log M − (t + θ)·h + K(t) for t + θ ≥ 0 (≤ h:
    t + θ ≤ 0), since P(j) ≤ e^{η + log M − θj}·v(j) (module docstring, step 1). Every t of the right sign
    gives a valid bound; t is chosen by Newton steps on K'(t) = h, then bisection once bracketed (the
    objective is convex in t, so its minimiser lies between the last t short of h and the first past it).
    """
    smin, smax = support(law)
    if (upper and h > smax) or (not upper and h < smin):
        return -math.inf  # no mass there at all
    shift = 0.0 if theta is None else theta
    sign = 1.0 if upper else -1.0
    t = -shift  # s = 0: the total mass
    best = log_mgf(law, t)
    mean, var = _tilted_moments(law, t)
    if sign * (h - mean) > 0.0:
        past: float | None = None
        for _ in range(8):
            t_new = t + (h - mean) / max(var, TINY_PAD)
            if not math.isfinite(t_new):
                break
            m_new, v_new = _tilted_moments(law, t_new)
            if sign * (h - m_new) <= 0.0:
                past = t_new
                break
            t, mean, var = t_new, m_new, v_new
            if sign * (h - mean) < 0.05 * math.sqrt(var):
                break
        if past is not None:
            for _ in range(24):
                # bisection in s = t + shift, geometric while the near end is still s = 0 or far off
                near_s, past_s = t + shift, past + shift
                if near_s == 0.0:
                    mid_s = past_s / 8.0
                elif abs(past_s) > 4.0 * abs(near_s):
                    mid_s = math.copysign(math.sqrt(near_s * past_s), past_s)
                else:
                    mid_s = 0.5 * (near_s + past_s)
                mid = mid_s - shift
                m_mid, v_mid = _tilted_moments(law, mid)
                if sign * (h - m_mid) > 0.0:
                    t = mid
                    if sign * (h - m_mid) < 0.05 * math.sqrt(v_mid):
                        break  # the objective is within ~1e-3 of its minimum
                else:
                    past = mid
        if sign * (t + shift) >= 0.0:
            best = min(best, log_mgf(law, t) - (t + shift) * h)
    if theta is not None:
        best += law.eta + law.log_m
    return best + GENEROUS_RELATIVE_SLACK * (abs(best) + 1.0)


def upper_weights(law: Law, theta: float, step: float) -> Weights | None:
    """Upper envelope from the dominating mixture's computed law (module docstring, steps 1–6)."""
    win = window([law])
    got = transform([law], win)
    if got is None:
        return None
    arr, err = got[0]
    lo, n = win.lo, win.n
    j = lo + np.arange(n, dtype=np.float64)
    eta = law.eta + rounding_error(8.0, abs(law.log_m) + abs(theta) * float(np.max(np.abs(j))) + 4.0)
    with np.errstate(divide="ignore"):
        lv = np.log(np.maximum(arr, 0.0) + err)
    logw = lv + law.log_m - theta * j + (eta + rounding_error(4.0, np.abs(lv)))
    log_above = _tail(law, float(lo + n), True, theta)
    log_below = _tail(law, float(lo - 1), False, theta)
    if log_below > -math.inf:
        logw[0] = np.logaddexp(logw[0], log_below + rounding_error(64.0))
    t = j * step
    keep = t > 0
    logw = np.minimum(logw[keep], 0.0)
    inf_p = min(1.0, widen_up(math.exp(min(log_above, 0.0)), 64)) if log_above > -math.inf else 0.0
    return Weights(next_up(t[keep]), logw, inf_p)


def lower_weights(lp: Law, lq: Law, theta: float, step: float) -> Weights | None:
    """Lower envelope (dominated quantised pair) from the computed laws of P and tilted Q̂."""
    win = window([lp, lq])
    got = transform([lp, lq], win)
    if got is None:
        return None
    (ap, ep), (aq, eq) = got
    lo, n = win.lo, win.n
    outside = math.exp(win.log_above) + math.exp(win.log_below)  # lp's tilted mass outside (step 5)
    j = lo + np.arange(n, dtype=np.float64)
    pv = np.maximum(ap - ep - widen_up(outside, 64), 0.0)
    qv = np.maximum(aq, 0.0) + eq
    keep = pv > 0
    j, pv, qv = j[keep], pv[keep], qv[keep]
    jmax = float(np.max(np.abs(j), initial=0.0))
    eta_p = lp.eta + rounding_error(8.0, abs(lp.log_m) + abs(theta) * jmax + 4.0)
    eta_q = lq.eta + rounding_error(8.0, abs(lq.log_m) + abs(theta) * jmax + 4.0)
    lpv, lqv = np.log(pv), np.log(qv)
    logp = lpv + lp.log_m - theta * j - (eta_p + rounding_error(4.0, np.abs(lpv)))
    logq = lqv + lq.log_m - theta * j + (eta_q + rounding_error(4.0, np.abs(lqv))) - j * step
    s = logp - logq
    s = next_down(s - rounding_error(8.0, np.abs(logp) + np.abs(logq) + np.abs(j * step)))
    pos = s > 0
    order = np.argsort(s[pos], kind="stable")
    return Weights(s[pos][order], logp[pos][order], 0.0)

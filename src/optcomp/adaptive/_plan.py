"""The steps of an adaptive composition with bounded-range steps, in the order they run; the lattice; the
windows of the backward recursion (``docs/selection.md`` §2.4).

**Steps.** :class:`BRRun` is ``count`` consecutive ε-BR steps (each its own transform: the analyst adapts
between them); :class:`FixedRun` is a maximal run of consecutive fixed pairs, one transform (fixed pairs
commute: their composed loss law is the same in any order, so the block is one lattice kernel). The order of
BR and fixed steps is kept: under adaptivity it matters (Cesar–Rogers 2021), and a fixed step run *before* a
BR step is worth more to the analyst than one run after it.

**Lattice.** x_n = n·h with h = u/M, u the smallest BR ε; h is rounded up so that M·h ≥ u, and every BR step
uses m_j = ⌈ε_j/h⌉ lattice cells (its upper end is that of the (m_j·h)-BR family, which contains the ε_j one;
its lower end uses ε_j itself). When every ε_j is an exact float multiple of u and M is a power of two, the
lattice is exact for every step (m_j·h = ε_j). M is kept a power of two when a fixed law has atoms, so that
atoms at multiples of u (a permute-and-flip step of the same ε) sit on the lattice.

**Windows** (only the tightness depends on them: outside a window the curve is read by certified rules,
:class:`~optcomp.adaptive._curve.Curve`). After the first d transforms the recursion reads δ_rest at x − S_d,
S_d the privacy loss so far. BR losses have conditional range width ε_j and conditional mean in
[0, KL_max(ε_j)], so by Azuma–Hoeffding S_d leaves [−s, D_d + s] (plus the fixed blocks' supports) with
probability ≤ e^{−2s²/V_d}, V_d = Σ ε_j². A path that leaves on the right reads U(b) where δ_rest ≤ P(rest loss
> b) ≤ e^{−2(b − D_rest)²/V_rest}; one that leaves on the left costs at most e^{a}. The window at depth d is the
smallest with both products below η/(4·transforms), η the absolute δ error a query allows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from optcomp._numerics import Accuracy
from optcomp._rounding import next_up
from optcomp.mechanisms import PrivacyLossLaw
from optcomp.mechanisms.bounded_range import kl_max
from optcomp.pld import LatticeKernel, lattice_kernels

#: Points of the grid on which a window's Hoeffding margin s is chosen (the first that passes).
_MARGIN_POINTS = 65
#: Largest refinement of the fixed blocks' kernel lattice.
_MAX_REFINEMENT = 8
#: Smallest absolute δ error a window is sized for (below it the logarithm is what matters, not the value).
_ETA_FLOOR = 1e-300
#: Largest denominator q of a common lattice unit u/q of the BR ε's, and the relative distance from a multiple
#: of it that counts as near (:func:`unit`; tightness only).
_MAX_DENOMINATOR = 12
_NEAR_MULTIPLE_RTOL = 1e-9


@dataclass(frozen=True)
class BRRun:
    """``count`` consecutive ε-BR steps."""

    epsilon: float
    count: int


@dataclass(frozen=True)
class FixedRun:
    """A run of consecutive fixed pairs: (remove law, add law or ``None`` if symmetric, count) each."""

    laws: tuple[tuple[PrivacyLossLaw, PrivacyLossLaw | None, int], ...]

    @property
    def count(self) -> int:
        return sum(k for _, _, k in self.laws)

    def direction(self, add: bool) -> list[tuple[PrivacyLossLaw, int]]:
        return [((a if a is not None else r) if add else r, k) for r, a, k in self.laws]


Run = BRRun | FixedRun


def symmetric(runs: tuple[Run, ...]) -> bool:
    """Whether every fixed law is the same in both directions (the BR family is closed under the swap)."""
    return all(a is None for run in runs if isinstance(run, FixedRun) for _, a, _ in run.laws)


def _exact_multiple(value: float, unit: float) -> bool:
    k = round(value / unit)
    return k >= 1 and Fraction(k) * Fraction(unit) == Fraction(value)


def _near_multiple(value: float, unit: float) -> bool:
    k = round(value / unit)
    return k >= 1 and abs(value - k * unit) <= _NEAR_MULTIPLE_RTOL * value


def unit(runs: tuple[Run, ...]) -> tuple[float, bool]:
    """(u, power_of_two): the lattice unit and whether the lattice must refine by powers of two (every BR ε
    an exact multiple of u and some fixed law with atoms, module docstring).

    u is the smallest BR ε, or u/q for the least q ≤ ``_MAX_DENOMINATOR`` that makes every BR ε a near multiple
    of it (ε's 0.1 and 0.15: u = 0.05). Tightness only: each step's upper end is that of the (m·h)-BR family,
    m·h ≥ ε, so an ε far from a lattice multiple costs up to h per step (first order in h: the refinement then
    stalls); near multiples cost only rounding."""
    eps = [r.epsilon for r in runs if isinstance(r, BRRun)]
    u = min(eps)
    atoms = any(law.atom_losses.size for run in runs if isinstance(run, FixedRun) for law, _, _ in run.laws)
    if not all(_near_multiple(e, u) for e in eps):
        for q in range(2, _MAX_DENOMINATOR + 1):
            if all(_near_multiple(e, u / q) for e in eps):
                return u / q, False
    return u, atoms and all(_exact_multiple(e, u) for e in eps)


def lattice_step(u: float, cells: int) -> float:
    """h = u/cells rounded up until cells·h ≥ u (exact comparison of reals)."""
    h = u / cells
    while Fraction(cells) * Fraction(h) < Fraction(u):
        h = next_up(h)
    return h


def cells_of(epsilon: float, h: float) -> int:
    """m = ⌈ε/h⌉ exactly: m·h ≥ ε > (m − 1)·h."""
    m = max(1, math.ceil(epsilon / h))
    exact, step = Fraction(epsilon), Fraction(h)
    while m * step < exact:
        m += 1
    while m > 1 and (m - 1) * step >= exact:
        m -= 1
    return m


@dataclass(frozen=True)
class Transform:
    """One transform of the recursion at one lattice step: a BR step (``epsilon``, ``cells``) or a fixed block
    (its kernels per direction), with its loss range in lattice units (``low``, ``high``) and its concentration
    parameters: its mean loss lies in [``drift_low``, ``drift_high``] and ``spread`` is its Hoeffding width (the
    range ε of a BR step; for a fixed block 2√2 standard deviations of its kernel, a placement only)."""

    epsilon: float
    cells: int
    kernels: tuple[tuple[LatticeKernel, LatticeKernel], ...]
    low: int
    high: int
    drift_low: float
    drift_high: float
    spread: float


def _moments(kernel: LatticeKernel) -> tuple[float, float]:
    """Mean and standard deviation of the loss under a kernel's P-masses (a window placement only)."""
    mass = float(np.sum(kernel.values))
    if mass <= 0.0:
        return 0.0, 0.0
    loss = (kernel.first + np.arange(kernel.values.size)) * kernel.step
    mean = float(np.dot(kernel.values, loss)) / mass
    var = float(np.dot(kernel.values, (loss - mean) ** 2)) / mass
    return mean, math.sqrt(max(var, 0.0))


def kernel_refinement(runs: tuple[Run, ...]) -> int:
    """r, a power of two: fixed blocks' kernels are built on a lattice r times finer than the BR steps'. Both
    ends are off by O(k·h²) over k steps, so a block of many fixed steps beside few BR steps is given
    r ≈ √(its count/(4·the BR count)), capped at ``_MAX_REFINEMENT`` (only the work depends on it)."""
    br = sum(r.count for r in runs if isinstance(r, BRRun))
    fixed = max((r.count for r in runs if isinstance(r, FixedRun)), default=0)
    want = min(math.sqrt(fixed / (4.0 * max(br, 1))) * math.sqrt(2.0), float(_MAX_REFINEMENT))
    return 1 << max(0, math.floor(math.log2(want))) if want >= 1.0 else 1


def transforms(runs: tuple[Run, ...], h: float, accuracy: Accuracy, directions: int, refine: int = 1) -> list[
    Transform
]:
    """The transforms of ``runs`` in order at lattice step h (fixed blocks' kernels built here, at h/``refine``)."""
    total_fixed = sum(r.count for r in runs if isinstance(r, FixedRun))
    out: list[Transform] = []
    for run in runs:
        if isinstance(run, BRRun):
            m = cells_of(run.epsilon, h)
            one = Transform(run.epsilon, m, (), -m, m, 0.0, kl_max(run.epsilon), run.epsilon)
            out.extend([one] * run.count)
            continue
        hf = h / refine  # exact: refine is a power of two
        kernels = tuple(lattice_kernels(run.direction(d == 1), hf, accuracy, total_fixed) for d in range(directions))
        least = min(min(u.first, v.first) for u, v in kernels) // refine
        most = -(-max(max(u.last, v.last) for u, v in kernels) // refine)
        moments = [_moments(u) for u, _ in kernels]
        spread = 2.0 * math.sqrt(2.0) * max(sd for _, sd in moments)
        out.append(Transform(0.0, 0, kernels, least, most, min(mu for mu, _ in moments),
                             max(mu for mu, _ in moments), spread))
    return out


def _margin(v: float, need: float) -> np.ndarray:
    """Candidate margins s ∈ [0, √(need·v/2)] (the last always passes 2s²/v ≥ need)."""
    top = math.sqrt(max(need, 0.0) * v / 2.0)
    return np.linspace(0.0, top, _MARGIN_POINTS)


def windows(steps: list[Transform], h: float, q_lo: int, q_hi: int, eta: float) -> list[tuple[int, int]]:
    """Index windows W_0 (the query's) … W_K (δ₀'s, the point 0) of the recursion (module docstring)."""
    k = len(steps)
    need = math.log(4.0 * max(k, 1) / max(eta, _ETA_FLOOR))
    v_before = np.concatenate([[0.0], np.cumsum([s.spread**2 for s in steps])])
    lo_before = np.concatenate([[0.0], np.cumsum([s.drift_low for s in steps])])
    hi_before = np.concatenate([[0.0], np.cumsum([s.drift_high for s in steps])])
    worst_lo = np.concatenate([[0], np.cumsum([s.low for s in steps])])
    worst_hi = np.concatenate([[0], np.cumsum([s.high for s in steps])])
    out: list[tuple[int, int]] = []
    for d in range(k):
        vd, vr = float(v_before[d]), float(v_before[-1] - v_before[d])
        rest_top = float(hi_before[-1] - hi_before[d])  # the rest's largest mean loss
        b = _right_edge(q_hi * h - float(lo_before[d]), vd, vr, rest_top, need)
        a = _left_edge(q_lo * h - float(hi_before[d]), vd, need)
        lo_idx = max(math.floor(a / h) - 1, q_lo - int(worst_hi[d]))
        hi_idx = min(math.ceil(b / h) + 1, q_hi - int(worst_lo[d]))
        out.append((lo_idx, max(hi_idx, lo_idx)))
    out.append((0, 0))
    return out


def _right_edge(centre: float, vd: float, vr: float, rest_top: float, need: float) -> float:
    """The smallest b = centre + s (s on a grid) with 2s²/V_d + 2((b − rest_top)_+)²/V_rest ≥ need."""
    if vd <= 0.0:
        return centre
    s = _margin(vd, need)
    b = centre + s
    over = np.maximum(b - rest_top, 0.0)
    tail = 2.0 * over**2 / vr if vr > 0 else np.where(over > 0, math.inf, 0.0)
    ok = 2.0 * s**2 / vd + tail >= need
    return float(b[int(np.argmax(ok))])


def _left_edge(centre: float, vd: float, need: float) -> float:
    """The largest a = centre − s (s on a grid) with 2s²/V_d + (−a)_+ ≥ need (the left reading's error is
    at most e^a per unit of probability)."""
    if vd <= 0.0:
        return centre
    s = _margin(vd, need + abs(centre))
    a = centre - s
    ok = 2.0 * s**2 / vd + np.maximum(-a, 0.0) >= need
    return float(a[int(np.argmax(ok))])


__all__ = [
    "BRRun",
    "FixedRun",
    "Run",
    "Transform",
    "cells_of",
    "kernel_refinement",
    "lattice_step",
    "symmetric",
    "transforms",
    "unit",
    "windows",
]

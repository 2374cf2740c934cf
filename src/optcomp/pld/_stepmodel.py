"""Where the automatic ε(δ) refinement starts: a per-step width model (speed only, never soundness).

Every pass of :meth:`optcomp.pld.PrivacyLossDistribution.epsilon` is certified whatever its grid step, so
the step schedule only decides how many passes (and how fine a last one) a query costs. The default
schedule starts at ``PLD_FIRST_STEP`` (10⁻²) and extrapolates the width model w ∝ Δ² from there. When the
per-step loss is much narrower than 10⁻² (q = 10⁻³ DP-SGD: one or two cells per step), that pass is far
from the asymptotic range and its extrapolation lands 7–40× short: three passes. For a composition of one
law per direction this module reads the standard deviation s of one step's loss from the law's own cells
and places the first pass where the model

    relative width ≈ c · (Δ/s)²

puts the target, with c = 0.3·e, e ∈ [1/2, 1) the elasticity of a Gaussian composition's ε in its loss
variance (``_WIDTH_PER_ELASTICITY``; measured c/e on the final passes of the 21 rows of
``benchmarks/bench_rows.py``: 0.07–0.26, ``docs/pld.md`` §0). On those rows the first pass meets the
target: one pass instead of three. A pass that misses is refined from its own width as before.
"""

from __future__ import annotations

import math

import numpy as np

from optcomp._numerics import PLD_FIRST_STEP, FloatArray
from optcomp._rounding import cell_log_masses
from optcomp.mechanisms import PrivacyLossLaw
from optcomp.pld._blocks import likely_two_level
from optcomp.pld._cells import cells, window

#: The ratio c = w·(s/Δ)² the first pass aims with is this times the elasticity e = d ln ε / d ln v of the
#: Gaussian (GDP) ε in the composed loss variance v = k·s² (e ≈ (μ + z)/(μ + 2z) for ε ≈ μ²/2 + zμ, μ = √v:
#: 1/2 for a narrow composition, → 1 for a wide one). The split pair's per-step error acts like extra
#: variance ∝ Δ² per step, so c ≈ e/4 for Gaussian-like compositions; non-Gaussian ones (few effective
#: steps, e.g. σ = 0.8, q = 10⁻³, T = 10³: c = 0.036) lie below. Measured c/e on the final passes of the
#: 21 ``bench_rows`` workloads: 0.07–0.26; 0.3 leaves a margin of 12 % or more on every one.
_WIDTH_PER_ELASTICITY = 0.3
#: z of the elasticity: Φ⁻¹(1 − 10⁻²) (a larger z lowers e; the δ of a query is not used, so that every
#: ε(δ) query of one PLD starts at the same step and reads one realisation).
_ELASTICITY_Z = 2.326
#: Two-level composition (:mod:`._blocks`, ``docs/pld.md`` §5a) about doubles the width at a given step.
_TWO_LEVEL_WIDTH = 2.0
#: The typical ratio c (the median of the same 21 rows: 0.13), used only to decide whether 10⁻² is too coarse.
_WIDTH_PER_S2 = 0.13
#: The coarse start is kept unless the model predicts a width above this at it: there the 10⁻² pass is in
#: the asymptotic range and extrapolates well (and brackets stay those of the plain refinement).
_FIRST_TOO_COARSE = 0.2
#: The model aims at no wider than this (a larger requested width would put the pass outside the model's
#: asymptotic range; the refinement goes on from there).
_AIM_CAP = 0.02
#: ε(δ) queries with δ below this keep the plain start: there the untilted FFT floor (about 1e-11) forces
#: tilted ends on full windows, whose cost grows like 1/Δ, and the width model's c is smaller (σ = 0.8,
#: q = 10⁻³, T = 10⁴ at δ = 1e-8: 0.039 against 0.097 at 1e-5), so the plain schedule's last step is
#: coarser and cheaper; below ``PLD_DEEP_DELTA`` a width may also be out of reach.
MODEL_DEEPEST_DELTA = 1e-7
#: The per-step standard deviation is that of the law's cells inside its P-tails of this mass ...
_SCALE_TAIL = 1e-6
#: ... on this many cells (2048 moves it by 0.2 % at most on the DP-SGD laws, and costs 0.35 ms more).
_SCALE_CELLS = 512
#: A window narrower than this, relative to its ends' magnitude, has no scale to model (one loss value
#: in all but rounding: two atoms at ln 0.5 computed 6e-16 apart once asked for cells of 1.3e-18).
_SCALE_MIN_SPAN = 1e-9


def loss_scale(law: PrivacyLossLaw) -> float | None:
    """The standard deviation of ``law``'s loss under P, from its upper cell masses on ``_SCALE_CELLS``
    cells inside its ``_SCALE_TAIL`` tails (cell midpoints; not the query's far wider bulk window, on
    which a subsampled law's long right tail would inflate it 2×); ``None`` when there is no finite,
    positive one (e.g. a law with atoms at ±∞ only)."""
    a, b = window(law, math.log(_SCALE_TAIL))
    if not (math.isfinite(a) and math.isfinite(b) and b - a > _SCALE_MIN_SPAN * max(abs(a), abs(b))):
        return None  # no spread (or atoms a few ulps apart: cells that fine would not index)
    step = (b - a) / _SCALE_CELLS
    first, lm_hi = _p_upper(law, step, (a, b))
    p = np.exp(lm_hi)
    total = float(np.sum(p))
    if not (np.all(np.isfinite(p)) and total > 0.0):
        return None
    x = (first + np.arange(p.size) + 0.5) * step
    p = p / total
    s = math.sqrt(float(np.sum(p * (x - float(np.sum(p * x))) ** 2)))
    return s if s > 0.0 and math.isfinite(s) else None


def _p_upper(law: PrivacyLossLaw, step: float, span: tuple[float, float]) -> tuple[int, FloatArray]:
    """(first cell, ``lm_hi``) of :func:`._cells.cells` on ``span``: for a law without atoms its P side
    alone (the same edges and the same :func:`~optcomp._rounding.cell_log_masses` call, bit for bit,
    without the Q side and the tails, which the scale does not read); else ``cells`` itself."""
    cont = law.continuous
    if law.atom_losses.size or cont is None:
        c = cells(law, step, span, 4 * _SCALE_CELLS)
        return c.first, c.lm_hi
    c_lo = math.floor(span[0] / step) - 1
    n = math.floor(span[1] / step) + 1 - c_lo + 1
    x = np.clip((c_lo + np.arange(n + 1, dtype=np.float64)) * step, cont.lower, cont.upper)
    return c_lo, cell_log_masses(cont.p_logcdf(x), cont.p_logsf(x))[2]


def first_step(
    laws: list[list[tuple[PrivacyLossLaw, int]]], target: float, support: float | None = None
) -> float | None:
    """The model-placed first grid step for a composition whose directions hold one law each, or ``None``
    (start at ``PLD_FIRST_STEP``): for heterogeneous compositions, laws with no finite scale, and laws
    whose per-step loss is wide enough that 10⁻² is in the asymptotic range (``_FIRST_TOO_COARSE``).

    Args:
        laws: the per-direction (law, count) lists of the composition.
        target: the requested relative width of the ε bracket.
        support: the span (in loss) of the first law's bulk window, when known: where the law is
            likely composed in two levels (:func:`._blocks.likely_two_level`) the model's c doubles.
    """
    if any(len(ls) != 1 for ls in laws):
        return None
    (law, count), z = laws[0][0], _ELASTICITY_Z
    s = loss_scale(law)
    if s is None or _WIDTH_PER_S2 * (PLD_FIRST_STEP / s) ** 2 <= _FIRST_TOO_COARSE:
        return None
    mu = s * math.sqrt(count)
    c = _WIDTH_PER_ELASTICITY * (mu + z) / (mu + 2 * z)
    if support is not None and likely_two_level(count, s, support):
        c *= _TWO_LEVEL_WIDTH
    step = s * math.sqrt(min(target, _AIM_CAP) / c)
    return step if 0.0 < step < PLD_FIRST_STEP else None

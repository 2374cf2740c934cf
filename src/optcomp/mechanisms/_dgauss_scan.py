"""The least σ of a discrete Gaussian meeting an (ε, δ) target, on a scan's resolution: ε is not monotone in σ.

The loss lattice (‖v‖² + 2v·x)/(2σ²) moves with σ, so ε(σ) at a fixed δ has bumps (Δ = 1, δ = 1e−9: ε = 5.97
at σ = 0.96, 6.37 at σ = 0.99) and a secant's root is only *a* boundary of the passing set. :func:`least_sigma`
(the one home of a discrete Gaussian's σ search: the planner's ``dgauss`` and
:func:`optcomp.calibrate.noise_for_target`'s) scans upward with :func:`optcomp._inverse_many.lowest_passing`,
skipping the σ-spans :func:`cleared_until` proves failing (:func:`epsilon_floor`: one outcome's certified
lower bound on ε over a whole span; or a scaling argument from one lattice composition), and returns the
least passing σ found with a proven floor below which every σ fails.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from optcomp._inverse import float_boundary
from optcomp._inverse_many import lowest_passing
from optcomp._numerics import GENEROUS_RELATIVE_SLACK, GridTooLargeError, LossScaleError

__all__ = ["Profile", "cleared_until", "epsilon_floor", "least_sigma", "proven_floor"]

#: Relative slack charged (downward) on each rounded step of the σ-span proofs.
_SLACK = GENEROUS_RELATIVE_SLACK


def _normaliser_above(sigma: float) -> float:
    """An upper bound on Z(σ) (σ ≥ 0) by two closed forms, rounding charged: Z ≤ 1 + σ√(2π) (each term
    x ≠ 0 is below the integral of e^{−t²/(2σ²)} over the unit before it) and, by Poisson summation,
    Z = σ√(2π)(1 + 2Σ_{k≥1} q^{k²}) ≤ σ√(2π)(1 + 2q/(1 − q)), q = e^{−2π²σ²}."""
    root = sigma * math.sqrt(2.0 * math.pi)
    q = math.exp(-2.0 * math.pi * math.pi * sigma * sigma)
    poisson = root * (1.0 + 2.0 * q / (1.0 - q)) if q < 0.5 else math.inf
    return min(1.0 + root, poisson) * (1.0 + _SLACK)


def epsilon_floor(lo: float, hi: float, worst: Sequence[int], copies: int, delta: float) -> float:
    """A certified lower bound on ε(δ) of ``copies`` releases of the shift ``worst`` at *every* σ in [lo, hi].

    One outcome of P already bounds δ(ε) from below: δ(ε) ≥ P(y) − e^ε Q(y) = P(y)(1 − e^{ε − L(y)}), so
    ε(δ) ≥ L(y) + ln(1 − δ/P(y)) wherever P(y) > δ. The outcomes taken are the diagonal ones, noise x ≥ 0
    in each of the m = copies·(non-zero entries) coordinates: L = (S₂ + 2x·S₁)/(2σ²) (S₁ = copies·Σ|v_t|,
    S₂ = copies·Σv_t²) is at least its value at σ = hi, and ln P = −m x²/(2σ²) − m ln Z(σ) at least
    −m x²/(2 lo²) − m ln Z̄(hi) (Z grows with σ; Z̄ from :func:`_normaliser_above`); every rounding is
    charged downward (relative 10⁻⁹). ``lo = 0`` is allowed (only x = 0 counts there). Returns 0 where no
    outcome has P(y) > δ. The bound is nearly tight for one coordinate at small δ (a single atom carries the
    discrete Gaussian's ε there) and weak for many coordinates; its use is to rule out whole ranges of σ
    in a scan for the least σ (``optcomp._inverse.lowest_passing``)."""
    shift = [abs(int(v)) for v in worst if v]
    m = copies * len(shift)
    s1, s2 = copies * sum(shift), copies * sum(v * v for v in shift)
    if m == 0 or not (0.0 <= lo <= hi) or hi == 0.0:
        return 0.0
    log_delta = math.log(delta)
    log_z = math.log(_normaliser_above(hi)) * (1.0 + _SLACK)
    room = -log_delta - m * log_z  # ln P(y) > ln δ needs m x²/(2 lo²) < room
    if room <= 0.0:
        return 0.0
    top = 0 if lo == 0.0 else min(10**6, math.floor(lo * math.sqrt(2.0 * room / m)))
    x = np.arange(0, top + 1, dtype=np.float64)
    log_p = -m * x * x / (2.0 * lo * lo) * (1.0 + _SLACK) - m * log_z if lo > 0.0 else -m * log_z + 0.0 * x
    loss = (s2 + 2.0 * x * s1) / (2.0 * hi * hi) * (1.0 - _SLACK)
    ok = log_p > log_delta + _SLACK
    if not ok.any():
        return 0.0
    bound = loss[ok] + np.log1p(-np.exp(log_delta - log_p[ok])) * (1.0 + _SLACK) - _SLACK
    return max(0.0, float(bound.max()))


class Profile(Protocol):
    """What :func:`cleared_until` reads of a composition at one σ: its certified ε(δ) and δ(ε) brackets."""

    def epsilon(self, delta: float) -> Any: ...
    def delta(self, epsilon: float) -> Any: ...


def cleared_until(
    lo: float,
    target: float,
    delta: float,
    worst: Sequence[int],
    copies: int,
    ratio: float,
    profile: Callable[[float], Profile | None] | None = None,
) -> float:
    """A y ≥ ``lo`` such that at every σ in [lo, y] ``copies`` releases of the shift ``worst`` have ε(δ) >
    ``target`` (certified; ``lo`` itself when nothing is cleared). For a scan for the least σ
    (:func:`optcomp._inverse.lowest_passing`): ε is not monotone in σ, so each span must be proved.

    Two proofs. (1) :func:`epsilon_floor` over [lo, lo·ratio^(2^j)], the span doubled while it holds
    (cheap; strong for one coordinate). (2) From the composition at σ = lo (``profile(lo)``, a certified
    bracket): for σ' = lo(1 + η), every composed outcome y has P_σ'(y) ≥ P_σ(y)·(Z(σ)/Z(σ'))^m (e^{−x²/(2σ²)}
    grows with σ) and loss L_σ'(y) = s·L_σ(y), s = (σ/σ')² ≥ (1 + η)⁻²; with 1 − e^{−su} ≥ s(1 − e^{−u})
    (u ≥ 0, s ≤ 1, concavity) this gives δ_σ'(ε) ≥ s·(Z(σ)/Z(σ'))^m·δ_σ(ε/s). So if the certified lower
    δ_σ(target·(1 + η)²) exceeds δ·(1 + η)²·R^m, R = Z̄(lo(1 + η))/Z_(lo) ≥ Z(σ')/Z(σ), then δ_σ'(target) >
    δ, i.e. ε_σ'(δ) > target, for every σ' in [lo, lo(1 + η)] (each factor is monotone in η). η is aimed
    from the certified lower ε at lo (η₀ with (1 + η₀)² = ε_lo/target) and shrunk by factors of 2.
    """
    shift = [abs(int(v)) for v in worst if v]
    m = copies * len(shift)
    end, span = lo, ratio
    while epsilon_floor(lo, lo * span, worst, copies, delta) > target and span < 1e6:
        end, span = lo * span, span * span
    if end > lo or profile is None:
        return end
    law = profile(lo)
    if law is None:
        return lo
    low = float(law.epsilon(delta).lower)
    if not (low > target):
        return lo
    z_low = max(1.0, lo * math.sqrt(2.0 * math.pi)) * (1.0 - _SLACK)
    grow = math.sqrt(low / target)
    for _ in range(6):
        if grow <= 1.0 + _SLACK:
            break
        r = _normaliser_above(lo * grow) / z_low
        need = math.exp(math.log(delta) + 2.0 * math.log(grow) + m * math.log(r)) * (1.0 + _SLACK)
        got = float(law.delta(target * grow * grow * (1.0 + _SLACK)).lower)
        if got > need:
            return lo * grow * (1.0 - _SLACK)
        grow = 1.0 + (grow - 1.0) / 2.0
    return lo


#: The least-σ scan (ε is not monotone in σ on the lattice): points a factor 1 + _SCAN_STEP apart, from
#: σ/_SCAN_WINDOW (σ the secant's answer) or the proven floor, whichever is higher.
_SCAN_STEP = 0.005
_SCAN_WINDOW = 4.0


def proven_floor(target: float, delta: float, worst: Sequence[int], copies: int) -> float:
    """The largest σ₀ found such that every σ ≤ σ₀ certainly has ε(δ) > ``target`` (:func:`epsilon_floor` on
    [0, σ₀]: the all-zero outcome's loss ‖v‖²·copies/(2σ²) alone); 0 where none is."""
    if not epsilon_floor(0.0, math.ulp(1.0), worst, copies, delta) > target:
        return 0.0
    found = float_boundary(lambda y: not epsilon_floor(0.0, y, worst, copies, delta) > target, name="sigma",
                           passing_above=True, start=math.ulp(1.0), first_gap=math.ulp(1.0), xtol=_SLACK)
    return 0.0 if found.fail is None else found.fail


def least_sigma(
    upper: Callable[[float], Any],
    profile: Callable[[float], Profile | None],
    target: float,
    delta: float,
    worst: Sequence[int],
    copies: int,
    *,
    passing: float,
    known_fail: float | None,
    rtol: float,
) -> tuple[float, float]:
    """The least σ, on the scan's resolution, whose certified upper ε (``upper(σ)``, a Bound or None) at δ of
    ``copies`` releases of ``worst`` is ≤ ``target``, below a ``passing`` σ a secant found (``known_fail``: its
    failing end): the one home of a discrete Gaussian's σ search (the planner's and
    :func:`optcomp.calibrate.noise_for_target`'s).

    ε is not monotone in σ (the loss lattice (‖v‖² + 2v·x)/(2σ²) moves with σ: Δ = 1, δ = 1e−9, ε = 5.97 at
    σ = 0.96 and 6.37 at σ = 0.99), so a secant's root is only *a* boundary. :func:`optcomp._inverse.
    lowest_passing` scans upward from max(σ/4, :func:`proven_floor`) by factors 1.005, skipping the spans
    :func:`cleared_until` proves failing, and refines the first passing point's cell to ``rtol``.

    Returns:
        ``(sigma, floor)``: the σ (evaluated, certified upper ε ≤ target; ``passing`` if nothing lower
        passes) and the proven floor (every σ at or below it fails: a certified lower end on the least σ).
    """
    floor = proven_floor(target, delta, worst, copies)
    ratio = 1.0 + _SCAN_STEP
    try:
        scan = lowest_passing(upper, target, name="sigma", passing=passing, lowest=max(passing / _SCAN_WINDOW, floor),
                              ratio=ratio, rtol=rtol, known_fail=known_fail,
                              cleared=lambda s: cleared_until(s, target, delta, worst, copies, ratio, profile))
    except (GridTooLargeError, LossScaleError):
        return passing, floor
    found = passing if scan.passing is None else min(passing, scan.passing)
    return found, min(floor, found)

"""ε(δ) at several δ of one PLD on one realisation, sharing the tilted ends and probes (the passes of
:mod:`optcomp.sweep`, ``docs/pld.md`` §6a).

:func:`epsilons` answers every δ of a set as a fixed-step pass of
:meth:`optcomp.pld.PrivacyLossDistribution.epsilon` does (``Accuracy(grid_step=step)``: the same
:class:`._pld._EpsilonMeasure`, directions and ends), with two differences, both speed only:

1. **Probes are shared.** A pass reads a direction at a coarser step first (``_probe_upper``); the probe
   realises that direction afresh for each query. Here one probe per (direction, step) serves every δ:
   the direction realised at a step is a function of the laws and the step alone (bit for bit).
2. **Tilted ends are shared.** The δ are answered deepest first; before a δ builds its own tilted end
   (:meth:`._realise.Direction._tilted_root`), the tilted end this call built for a deeper δ nearest in
   tilt (on a window level at least as deep as this δ needs) is tried: if the ε read with it is
   *resolved* by it — its FFT floor at that ε is within the share of the width target that the engine
   allows a tilted end (:meth:`._realise.Direction._resolves`, ``_TILT_AIM``) — that ε is kept, else the
   δ takes the plain route. An end tilted for a deeper ε carries its tilted mass above the shallower
   ones, so one end usually serves several δ (as in :meth:`._realise.Direction.delta_upper`).

Soundness: every end (any tilt, any window level, any step) is certified; the least upper ε over any set
of upper ends and the largest lower ε over any set of lower ends are certified ends (``docs/pld.md`` §6,
:mod:`._roots`). An answer depends on the PLD, the step and the *set* of δ asked (never on queries asked
before the call: the directions are realised afresh for it).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TypeVar

from optcomp._numerics import Bound, check_probability
from optcomp._threads import single_threaded
from optcomp.pld._lazy import Directions
from optcomp.pld._pld import PrivacyLossDistribution, _EpsilonMeasure
from optcomp.pld._query import LowerEnd, UpperEnd
from optcomp.pld._realise import _NEAR_XTOL, _PREDICTION_MARGIN, _THETAS, _TILT_TRIGGER, Direction
from optcomp.pld._roots import lower_root, upper_root

__all__ = ["epsilons"]

_End = TypeVar("_End", UpperEnd, LowerEnd)
#: A new tilted end is tried at the mildest tilt predicted to resolve δ within 1/this of the allowed floor
#: (the engine's first choice keeps 1/``_PREDICTION_MARGIN`` = 1/8): on DP-SGD σ = 0.89, q = 2·10⁻⁴,
#: T = 46,416, ε(10⁻⁸)'s lower end is resolved by θ = 16.7 on 933,120 points where the engine builds
#: θ = 22.6 on 4,665,600.
_MILD_MARGIN = 2.0
#: A shared or milder tilted end is kept where its floor adds at most this many times the engine's share
#: (``_TILT_AIM``: 2 % of the width target) to the bracket, i.e. 20 %; the engine's own route keeps 2 %.
#: The sweep checks every bracket against the target and refines what misses. On 20 random chains of the
#: issue-26 grid (1000 rows): the largest width moved from 9.99·10⁻⁵ to 9.99·10⁻⁵ and the mean from
#: 6.844·10⁻⁵ to 6.846·10⁻⁵ (target 10⁻⁴), while the costliest chain (σ = 0.89, q = 10⁻⁴) reads tilted
#: ends of 1–2·10⁶ points instead of 5·10⁶.
_SHARE = 10.0


class _Shared:
    """A direction whose ε ends first try the tilted ends built earlier in the same call (module doc).

    Only what :class:`._pld._EpsilonMeasure` reads of a direction: ``step``, ``epsilon_upper`` and
    ``epsilon_lower``."""

    def __init__(self, direction: Direction) -> None:
        self.d = direction

    @property
    def step(self) -> float:
        return self.d.step

    def epsilon_upper(self, delta: float) -> float:
        """:meth:`Direction.epsilon_upper`, or the ε read with a shared or milder tilted end (:meth:`_read`)."""
        d = self.d
        base = d.upper(0) if d.p_law < delta else None
        if base is None or base.unit_floor + d.cut <= _TILT_TRIGGER * (delta - d.p_law):
            return d.epsilon_upper(delta)

        def root(ends: list[UpperEnd]) -> float:
            return upper_root(ends, delta)

        return self._read(d._upper, d.upper, root, base, delta - d.p_law, delta, None)

    def epsilon_lower(self, delta: float, upper: float) -> float:
        """:meth:`Direction.epsilon_lower`, or the ε read with a shared or milder tilted end (:meth:`_read`)."""
        d = self.d
        base = d.lower(0) if d.p_inf_lo <= delta else None
        if base is None or base.unit_floor + d.cut <= _TILT_TRIGGER * (delta - d.p_inf_lo):
            return d.epsilon_lower(delta, upper)

        def root(ends: list[LowerEnd]) -> float:
            return lower_root(ends, delta, upper, d.p_inf_lo, d.acc.relative_width)

        return self._read(d._lower, d.lower, root, base, delta - d.p_inf_lo, delta, upper)

    def _read(self, memo: dict[tuple[int, int], _End | None], build: Callable[[int, int], _End | None],
              root: Callable[[list[_End]], float], base: _End, fin: float, delta: float,
              near: float | None) -> float:
        """The ε read with ``base`` and one tilted end that resolves δ (finite part ``fin``) there: first
        the end built earlier in this call nearest in tilt (:func:`_nearest`), then a new end at the
        mildest tilt predicted to resolve δ within 1/``_MILD_MARGIN`` of the allowed floor (``_SHARE``
        times the engine's), when that tilt is milder than the engine's own first choice (predicted
        within 1/``_PREDICTION_MARGIN`` of the engine's allowed floor: the prediction reads the untilted
        end's floor, and the tilted window grows fast with θ); else the
        engine's own tilted route (:meth:`Direction._tilted_root`, with the same arguments as
        ``epsilon_upper``/``epsilon_lower`` give it). ``near``: the ε that places the tilt (the upper ε
        for a lower end; ``None``: the untilted answer, as the engine places it)."""
        d = self.d
        level = d.win.level_for(delta - d.p_law)
        ti = d.theta_for_delta(delta, level)
        got = _nearest(memo, ti, level)
        if got is not None:
            out = root([base, got[1]])
            if self._resolved(got[1], got[0], out if near is None else near, fin, ti, out):
                return out
        if near is None:
            near = upper_root([base], delta, _NEAR_XTOL)  # type: ignore[list-item]
        if 0 < near < math.inf:
            allowed = _SHARE * d._share() * max(1.0, float(_THETAS[ti]) * near) * fin
            engine = d._cheapest(ti, near, allowed / (_SHARE * _PREDICTION_MARGIN), level, base.unit_floor)
            mild = d._cheapest(ti, near, allowed / _MILD_MARGIN, level, base.unit_floor)
            end = build(mild, level) if mild < engine else None
            if end is not None:
                out = root([base, end])
                if self._resolved(end, (mild, level), near, fin, ti, out):
                    return out
        return d._tilted_root(build, root, base, fin, ti, level, near)

    def _resolved(self, end: UpperEnd | LowerEnd, key: tuple[int, int], near: float, fin: float, ti: int,
                  at: float) -> bool:
        """Whether ``end`` (tilt index and window level ``key``) resolves δ's finite part ``fin`` at the ε
        read, ``at``: its floor there within ``_SHARE`` times the allowed share of
        :meth:`Direction._tilted_root` (which places it with δ's saddle tilt index ``ti`` and ε ≈ ``near``)."""
        d = self.d
        if not (0 < at < math.inf and 0 < near < math.inf):
            return False
        allowed = _SHARE * d._share() * max(1.0, float(_THETAS[ti]) * near) * fin
        return d._resolves(end, key[0], key[1], at, allowed)


def _nearest(ends: dict[tuple[int, int], _End | None], ti: int, level: int) -> tuple[tuple[int, int], _End] | None:
    """The built tilted end (θ index > 0) on a window level at least as deep as ``level`` nearest in tilt
    to ``ti`` (then the shallower level), with its key; ``None`` if there is none."""
    built = [(k, e) for k, e in ends.items() if k[0] > 0 and k[1] >= level and e is not None]
    if not built:
        return None
    return min(built, key=lambda ke: (abs(ke[0][0] - ti), ke[0][1]))


def epsilons(
    pld: PrivacyLossDistribution, step: float, deltas: Sequence[float], blocks: bool = True
) -> dict[float, Bound]:
    """Certified ε(δ) brackets for every δ in ``deltas`` on ``pld`` realised at grid step ``step`` (the
    module doc: a fixed-step pass of :meth:`PrivacyLossDistribution.epsilon` per δ, sharing probes and
    tilted ends). Raises what that pass raises (``GridTooLargeError`` at the memory cap)."""
    width = pld.accuracy.relative_width
    laws = pld._laws()
    fresh = Directions(step, len(laws), lambda i, memo: pld._realise(laws[i], step, memo, blocks))
    probes: dict[tuple[int, float], _Shared] = {}

    def probe(i: int, s: float) -> _Shared:
        if (i, s) not in probes:
            probes[(i, s)] = _Shared(pld._direction(i, s))
        return probes[(i, s)]

    shared = _LazyShared(fresh)
    out: dict[float, Bound] = {}
    with single_threaded():
        for d in sorted({check_probability("delta", x) for x in deltas}):  # deepest first
            measure = _EpsilonMeasure(d, width, probe)  # type: ignore[arg-type]
            out[d] = measure.run(shared)  # type: ignore[arg-type]
    return out


class _LazyShared(Sequence[_Shared]):
    """The directions of :class:`Directions`, each wrapped in :class:`_Shared` on first access (a
    direction never read is never realised, as in a plain pass)."""

    def __init__(self, dirs: Directions) -> None:
        self._dirs = dirs
        self._wrapped: dict[int, _Shared] = {}

    def __len__(self) -> int:
        return len(self._dirs)

    def __getitem__(self, i: int) -> _Shared:  # type: ignore[override]
        j = range(len(self._dirs))[i]
        if j not in self._wrapped:
            self._wrapped[j] = _Shared(self._dirs[j])
        return self._wrapped[j]

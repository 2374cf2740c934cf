"""Best-of-K selection of any base optcomp can compose: every route, the smallest certified answer.

:func:`select` takes the base (a :class:`~optcomp.Composition` — a DP-SGD run's included, ``dpsgd`` gives
its items —, one mechanism, or ``(mechanism, count)`` items) and the law of K, and returns a
:class:`Selection` whose :meth:`~Selection.epsilon` / :meth:`~Selection.delta` answer with a
:class:`SelectionBound`: the certified bracket, the route whose upper end it is, and every route's value.

Routes (``ROUTES``; each applies where its theorem's hypotheses hold, else it says why not):

* ``pure`` — a pure ε₀-DP base: (2 + η)ε₀ for K ~ D_{η,γ} (Papernot–Steinke Cor. 3; η = 1 is Liu–Talwar's
  3ε), ε₀ + μ·tanh(ε₀/2) for Poisson (``docs/private-selection.md`` §3); δ = 0.
* ``rdp-thm2`` / ``rdp-thm6`` — Papernot–Steinke Thm 2 / Thm 6 on the base's exact RDP curve
  (:mod:`optcomp.selection._rdp_routes`), Thm 6's δ̂ from the base's certified δ(ε) curve.
* ``profile`` — the privacy-profile bound of :mod:`optcomp.selection._profile` from the base's certified
  δ(ε) curve (its PLD or closed-form engine's upper ends).
* ``composition`` — K ≤ n (binomial laws): the selection is a post-processing of n runs, so the n-fold
  composition's certified ε/δ bounds it.

Lower ends: where the base is one mechanism (Gaussians merged into one), the exact best-of-K law of its
own pair ordered by privacy loss (``_exact``): an order an analyst's scores can produce, so its δ(ε) is
achieved and lower-bounds the worst case over orders. Otherwise the lower end is 0, named ``"none"``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

import numpy as np

from optcomp._inverse import float_boundary
from optcomp._items import merge_gaussians
from optcomp._numerics import (
    UNIT_ROUNDOFF,
    Accuracy,
    Bound,
    FloatArray,
    check_nonnegative,
    check_probability,
    round_up,
)
from optcomp.composition import compose
from optcomp.mechanisms import Mechanism, privacy_loss_laws
from optcomp.queries import Composition
from optcomp.rdp import RdpCurve
from optcomp.rdp import compose as rdp_compose
from optcomp.selection._exact import law_lower_delta
from optcomp.selection._profile import ProfileRoute
from optcomp.selection._rdp_routes import epsilon_hats, theorem2, theorem6
from optcomp.selection._repetitions import (
    Binomial,
    Poisson,
    Repetitions,
    TruncatedNegativeBinomial,
    check_repetitions,
)

#: The accuracy of the base's δ(ε) curve unless given (its upper ends feed the profile route and Thm 6).
PROFILE_ACCURACY = Accuracy(relative_width=1e-3)
#: Every route, with the theorem it implements.
ROUTES: dict[str, str] = {
    "pure": "pure eps0-DP base: (2+eta)*eps0 for D_{eta,gamma} (Papernot-Steinke Cor. 3; Liu-Talwar 3*eps0 "
    "for geometric K), eps0 + mu*tanh(eps0/2) for Poisson K",
    "rdp-thm2": "Papernot-Steinke Thm 2 on the base's exact RDP curve (RDP->DP: Canonne-Kamath-Steinke Prop. 12)",
    "rdp-thm6": "Papernot-Steinke Thm 6 on the base's exact RDP curve, delta-hat from its certified delta(eps) "
    "curve (RDP->DP: Canonne-Kamath-Steinke Prop. 12)",
    "profile": "privacy-profile bound from the base's certified delta(eps) curve (docs/private-selection.md sec. 4)",
    "composition": "n-fold composition of the base (K <= n: a post-processing of n runs)",
}
#: The relative width at which the profile route's ε(δ) search stops (its answer is an evaluated ε).
PROFILE_XTOL = 2.0**-20
#: Largest ε the searches and the base's curve extension go to.
EPSILON_CAP = 200.0
#: The base's δ(ε) curve is extended until its upper end is this factor below δ/E[K] (an ε query).
_CURVE_HEADROOM = 2.0**-12

Base = Composition | Mechanism | Sequence[Any]


@dataclass(frozen=True)
class RouteAnswer:
    """One route's certified upper end (``None``: not applicable, ``note`` says why) and how it was got."""

    route: str
    upper: float | None
    note: str


@dataclass(frozen=True)
class SelectionBound:
    """A certified answer about best-of-K selection.

    Attributes:
        quantity: ``"epsilon"`` (an ε(δ) bracket) or ``"delta"`` (a δ(ε) bracket).
        at: the δ (or ε) the question was asked at.
        bound: the bracket: ``upper`` the smallest certified upper end of the routes, ``lower`` the lower
            end named by ``lower_end`` (0 where none is known).
        route: the route whose upper end is ``bound.upper``.
        routes: every route's answer (:class:`RouteAnswer`), in ``ROUTES`` order.
        lower_end: how ``bound.lower`` was obtained, or ``"none"``.
        repetitions: the law of K, in words.
    """

    quantity: Literal["epsilon", "delta"]
    at: float
    bound: Bound
    route: str
    routes: tuple[RouteAnswer, ...]
    lower_end: str
    repetitions: str

    @property
    def lower(self) -> float:
        return self.bound.lower

    @property
    def upper(self) -> float:
        return self.bound.upper

    def route_value(self, route: str) -> float | None:
        """The upper end ``route`` certified (``None`` if it did not apply)."""
        return next((r.upper for r in self.routes if r.route == route), None)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the CLI's ``--json``)."""
        other = "delta" if self.quantity == "epsilon" else "epsilon"
        return {
            "quantity": self.quantity,
            other: self.at,
            "lower": self.bound.lower,
            "upper": self.bound.upper,
            "route": self.route,
            "lower_end": self.lower_end,
            "repetitions": self.repetitions,
            "routes": [{"route": r.route, "upper": r.upper, "note": r.note} for r in self.routes],
        }


def _as_composition(base: object, accuracy: Accuracy) -> Composition:
    if isinstance(base, Composition):
        return base
    if isinstance(base, list) or (isinstance(base, tuple) and not (len(base) == 2 and isinstance(base[1], int))):
        return compose(*base, accuracy=accuracy)
    return compose(cast(Any, base), accuracy=accuracy)  # a mechanism or one (mechanism, count) pair (validated there)


#: The rounding error charged on every stored loss value ℓ: ``_LOSS_UNITS``·u·|ℓ| + ``LOSS_FLOOR``. A law's loss
#: is typically log p − log q of float masses (p, q ≥ 2⁻¹⁰⁷⁴, so |log| ≤ 745): its error is about
#: u·(|log p| + |log q|) ≤ 2·10⁻¹³ whatever |ℓ| is — with p ≈ q far more than one ulp of ℓ (the audit found
#: a pair whose stored loss was 6e-17 below the exact one, and one with ℓ = 0 stored for 1.5e-16:
#: ``tests/test_selection_audit.py``). Masses merged per loss value cannot recover it, so it is a floor.
_LOSS_UNITS = 16.0
LOSS_FLOOR = 2.0**-40


def _loss_bound(magnitude: float) -> float:
    """An upper bound of the exact |L| whose stored (rounded) value has absolute value ``magnitude``."""
    return round_up(magnitude * (1.0 + _LOSS_UNITS * UNIT_ROUNDOFF) + LOSS_FLOOR)


def pure_epsilon(items: Sequence[tuple[Mechanism, int]]) -> float | None:
    """Σ count·sup|L| over the items, rounded up, when every law's privacy loss is bounded (pure DP:
    |L| ≤ ε₀ under both laws of the worst-case pair); ``None`` otherwise. Each stored loss value (atoms, a
    continuous part's end points) is charged its rounding error (:data:`LOSS_FLOOR`)."""
    total = 0.0
    for mechanism, count in items:
        worst = 0.0
        for law in privacy_loss_laws(mechanism):
            if law.p_inf > 0.0 or law.q_neg_inf > 0.0:
                return None
            if law.atom_losses.size:
                worst = max(worst, _loss_bound(float(np.max(np.abs(law.atom_losses)))))
            if law.continuous is not None:
                span = max(abs(law.continuous.lower), abs(law.continuous.upper))
                if not math.isfinite(span):
                    return None
                worst = max(worst, _loss_bound(span))
        total = round_up(total + count * worst)
    return total


def pure_route(eps0: float, law: Repetitions) -> float | None:
    """The pure route's ε (δ = 0) for a pure ε₀-DP base (module docstring), rounded up; ``None`` for
    a law without one here."""
    if isinstance(law, TruncatedNegativeBinomial):
        return round_up((2.0 + law.eta) * eps0)
    if isinstance(law, Poisson):
        return round_up(eps0 + round_up(law.mean * math.tanh(eps0 / 2.0)))
    return None


@dataclass
class Selection:
    """Best-of-K selection of a base (module docstring); build it with :func:`select`.

    Attributes:
        base: the base's composition (one run of it is one candidate).
        repetitions: the law of K.
        accuracy: the accuracy of the base's certified δ(ε) curve and its PLD queries.
    """

    base: Composition
    repetitions: Repetitions
    accuracy: Accuracy = PROFILE_ACCURACY
    _cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    # -- inputs, each computed once --------------------------------------------------------------------
    def _pure(self) -> float | None:
        if "pure" not in self._cache:
            self._cache["pure"] = pure_epsilon(self.base.items)
        pure: float | None = self._cache["pure"]
        return pure

    def _rdp(self) -> RdpCurve | str:
        """The base's RDP curve, or why there is none."""
        if "rdp" not in self._cache:
            try:
                self._cache["rdp"] = rdp_compose(*self.base.items)
            except NotImplementedError as exc:
                self._cache["rdp"] = f"no exact RDP curve for the base ({exc})"
        curve: RdpCurve | str = self._cache["rdp"]
        return curve

    def curve(self, floor: float | None = None) -> tuple[FloatArray, FloatArray]:
        """The base's certified δ(ε) curve (ε grid from 0, upper ends), extended past its end until the
        upper end is ≤ ``floor`` (or ε reaches ``EPSILON_CAP``)."""
        if "curve" not in self._cache:
            c = self.base.hockey_stick_curve(accuracy=self.accuracy)
            self._cache["curve"] = (np.asarray(c.epsilons, dtype=np.float64), np.asarray(c.upper, dtype=np.float64))
            self._cache.pop("profile", None)
        eps, up = self._cache["curve"]
        if floor is not None and up[-1] > floor and eps[-1] < EPSILON_CAP:
            step = max(0.25, float(eps[-1]) / 8.0)
            extra = np.minimum(float(eps[-1]) + step * np.arange(1, 33), EPSILON_CAP)
            _, more = self.base.delta_curve(extra, accuracy=self.accuracy)
            reach = int(np.argmax(more <= floor)) + 1 if np.any(more <= floor) else extra.size
            eps, up = np.concatenate([eps, extra[:reach]]), np.concatenate([up, more[:reach]])
            self._cache["curve"] = (eps, up)
            self._cache.pop("profile", None)
        return eps, up

    def _profile(self, floor: float | None = None) -> ProfileRoute:
        eps, up = self.curve(floor)
        if "profile" not in self._cache:
            self._cache["profile"] = ProfileRoute.build(self.repetitions, eps, up)
        route: ProfileRoute = self._cache["profile"]
        return route

    def _delta_hat(self, orders: FloatArray) -> FloatArray:
        """Certified upper ends of the base's δ at Thm 6's ε̂(λ): the curve point at or below ε̂."""
        eps, up = self.curve()
        hats = epsilon_hats(orders)
        idx = np.searchsorted(eps, hats, side="right") - 1
        return np.where(idx >= 0, up[np.maximum(idx, 0)], 1.0)

    def _rdp_selection(self) -> RdpCurve | str:
        """The selection's RDP curve by Thm 2 or Thm 6, or why neither applies."""
        curve = self._rdp()
        if isinstance(curve, str):
            return curve
        law = self.repetitions
        if isinstance(law, TruncatedNegativeBinomial):
            if law.eta < 0.0:
                return "Papernot-Steinke Thm 2 is applied for eta >= 0 only here"
            return theorem2(curve, law)
        if isinstance(law, Poisson):
            if law.mean < 1.0:
                return (f"Papernot-Steinke Thm 6 needs mean >= 1 (log(mean) < 0 below it: the formula falls "
                        f"below the selection's true RDP), got mean={law.mean:g}")
            return theorem6(curve, law, self._delta_hat(curve.orders))
        return f"no RDP theorem for {law.describe()}"

    def _rdp_route_name(self) -> str:
        return "rdp-thm6" if isinstance(self.repetitions, Poisson) else "rdp-thm2"

    def _single_mechanism(self) -> Mechanism | None:
        """The one mechanism the base runs (Gaussians merged), when its law is the run's own (not a
        dominating pair: ``Composition.dominated`` is ``None`` under ``lower_end="run"``); else ``None``."""
        if self.base.lower_end != "run" or self.base.dominated() is not None:
            return None
        merged = merge_gaussians(dict(self.base.items))
        if len(merged) == 1:
            ((mechanism, count),) = merged.items()
            if count == 1:
                return mechanism
        return None

    # -- the queries ---------------------------------------------------------------------------------
    def epsilon(self, delta: float) -> SelectionBound:
        """Certified bracket of the selection's ε(δ), every route tried (module docstring).

        Args:
            delta: δ in [0, 1).
        """
        d = check_probability("delta", delta)
        if d >= 1.0:
            raise ValueError(f"delta must be in [0, 1) for an epsilon of selection, got {delta!r}")
        answers = [self._route_epsilon(name, d) for name in ROUTES]
        upper, route = _best(answers)
        lower, lower_end = self._lower_epsilon(d, upper)
        return SelectionBound("epsilon", d, Bound(min(lower, upper), upper), route, tuple(answers), lower_end,
                              self.repetitions.describe())

    def delta(self, epsilon: float) -> SelectionBound:
        """Certified bracket of the selection's δ(ε), every route tried.

        Args:
            epsilon: ε ≥ 0.
        """
        e = check_nonnegative("epsilon", epsilon)
        answers = [self._route_delta(name, e) for name in ROUTES]
        upper, route = _best(answers)
        upper = min(upper, 1.0)
        mechanism = self._single_mechanism()
        if mechanism is None:
            lower, lower_end = 0.0, "none"
        else:
            lower, lower_end = law_lower_delta(mechanism, self.repetitions, e), _LOWER_END
        return SelectionBound("delta", e, Bound(min(lower, upper), upper), route, tuple(answers), lower_end,
                              self.repetitions.describe())

    # -- one route ------------------------------------------------------------------------------------
    def _route_epsilon(self, name: str, delta: float) -> RouteAnswer:
        law = self.repetitions
        if name == "pure":
            eps0 = self._pure()
            value = None if eps0 is None else pure_route(eps0, law)
            why = "the base is not pure DP (unbounded privacy loss)" if eps0 is None else f"pure eps0 = {eps0:.6g}"
            return RouteAnswer(name, value, why if value is not None or eps0 is None else f"no pure theorem for {law.describe()}")
        if name in ("rdp-thm2", "rdp-thm6"):
            if name != self._rdp_route_name():
                return RouteAnswer(name, None, f"for {'Poisson' if name == 'rdp-thm6' else 'truncated negative binomial'} K only")
            curve = self._rdp_selection()
            if isinstance(curve, str):
                return RouteAnswer(name, None, curve)
            if delta == 0.0:
                return RouteAnswer(name, None, "an RDP bound gives no finite epsilon at delta = 0")
            conv = curve.epsilon(delta)
            return RouteAnswer(name, conv.value, f"order {conv.order:g}")
        if name == "profile":
            return self._profile_epsilon(delta)
        return self._composition_route(lambda c: c.epsilon(delta, accuracy=self.accuracy).upper)

    def _route_delta(self, name: str, epsilon: float) -> RouteAnswer:
        law = self.repetitions
        if name == "pure":
            eps0 = self._pure()
            value = None if eps0 is None else pure_route(eps0, law)
            if value is None:
                return RouteAnswer(name, None, "the base is not pure DP" if eps0 is None else f"no pure theorem for {law.describe()}")
            if epsilon >= value:
                return RouteAnswer(name, 0.0, f"pure: delta = 0 from eps >= {value:.6g}")
            return RouteAnswer(name, None, f"pure: certifies delta = 0 only from eps >= {value:.6g}")
        if name in ("rdp-thm2", "rdp-thm6"):
            if name != self._rdp_route_name():
                return RouteAnswer(name, None, f"for {'Poisson' if name == 'rdp-thm6' else 'truncated negative binomial'} K only")
            curve = self._rdp_selection()
            if isinstance(curve, str):
                return RouteAnswer(name, None, curve)
            conv = curve.delta(epsilon)
            return RouteAnswer(name, conv.value, f"order {conv.order:g}")
        if name == "profile":
            value, et = self._profile().delta(epsilon)
            return RouteAnswer(name, value, f"eps-tilde {et:.6g}")
        return self._composition_route(lambda c: min(1.0, c.delta(epsilon, accuracy=self.accuracy).upper))

    def _composition_route(self, query: Callable[[Composition], float]) -> RouteAnswer:
        law = self.repetitions
        if not isinstance(law, Binomial):
            return RouteAnswer("composition", None, "K is unbounded")
        return RouteAnswer("composition", query(self.base.self_compose(law.n)), f"{law.n} runs composed")

    def _profile_epsilon(self, delta: float) -> RouteAnswer:
        if delta == 0.0:
            return RouteAnswer("profile", None, "a profile bound is positive at every finite epsilon here")
        mean = max(1.0, self.repetitions.mean)
        route = self._profile(floor=delta * _CURVE_HEADROOM / mean)
        useful = route.epsilons[route.t1 < delta]
        if useful.size == 0:
            return RouteAnswer("profile", None, "the base's certified delta curve never gets below delta/E[K]")
        start = max(float(useful[0]), 2.0**-20)

        def passes(eps: float) -> bool:
            return route.delta(eps, below=delta)[0] <= delta

        found = float_boundary(passes, name="epsilon", passing_above=True, start=start, first_gap=0.25 * start,
                               xtol=PROFILE_XTOL, lowest=0.0, highest=EPSILON_CAP)
        if found.passing is None:
            return RouteAnswer("profile", None, f"no epsilon up to {EPSILON_CAP:g} certifies delta")
        _, et = route.delta(found.passing, below=delta)
        return RouteAnswer("profile", found.passing, f"eps-tilde {et:.6g}")

    def _lower_epsilon(self, delta: float, upper: float) -> tuple[float, str]:
        """An ε whose certified lower δ exceeds ``delta`` (so ε(δ) is above it), or (0, "none")."""
        mechanism = self._single_mechanism()
        if mechanism is None:
            return 0.0, "none"
        law = self.repetitions

        def passes(eps: float) -> bool:
            return law_lower_delta(mechanism, law, eps) <= delta

        if passes(0.0):
            return 0.0, _LOWER_END
        top = upper if math.isfinite(upper) else EPSILON_CAP
        found = float_boundary(passes, name="epsilon", passing_above=True, fail=0.0, passing=top,
                               xtol=PROFILE_XTOL)
        return (found.fail or 0.0), _LOWER_END

    def statement(self, delta: float) -> str:
        """A short, honest privacy statement of the selection at ``delta`` (the CLI's ``--statement``)."""
        b = self.epsilon(delta)
        others = ", ".join(f"{r.route} {r.upper:.4g}" for r in b.routes if r.upper is not None and r.route != b.route)
        return (
            f"Releasing only the best of K runs ({b.repetitions}) of the base is ({b.upper:.4g}, {delta:g})-DP "
            f"(certified upper bound, route {b.route}: {ROUTES[b.route]}"
            + (f"; other routes: {others}" if others else "")
            + "). This holds if K is drawn independently of the data from exactly this law, every run's "
            "candidates are scored in one fixed total order (ties broken at random), and only the best "
            "candidate (with its score) is released."
        )


_LOWER_END = "exact best-of-K law of the base's own pair ordered by privacy loss (cells of the loss)"


def _best(answers: Sequence[RouteAnswer]) -> tuple[float, str]:
    valid = [(a.upper, a.route) for a in answers if a.upper is not None]
    if not valid:
        return math.inf, "none"
    value, route = min(valid, key=lambda t: t[0])
    return float(value), route


def select(base: Base, repetitions: Repetitions, *, accuracy: Accuracy = PROFILE_ACCURACY) -> Selection:
    """Best-of-K selection of ``base``: run it K times (K drawn from ``repetitions``, independently of the
    data) and release only the best candidate.

    Args:
        base: a :class:`~optcomp.Composition` (e.g. ``optcomp.compose(*dpsgd.Run.checked(...).items())``),
            one mechanism, or a list of mechanisms / ``(mechanism, count)`` items.
        repetitions: the law of K: :func:`Geometric`, :func:`Logarithmic`, :class:`TruncatedNegativeBinomial`,
            :class:`Poisson` or :class:`Binomial`.
        accuracy: the accuracy of the base's certified δ(ε) curve (default ``PROFILE_ACCURACY``).

    Returns:
        A :class:`Selection`: ``epsilon(δ)`` and ``delta(ε)`` give :class:`SelectionBound` answers.
    """
    law = check_repetitions("repetitions", repetitions)
    if not isinstance(accuracy, Accuracy):
        raise ValueError(f"accuracy must be an optcomp.Accuracy, got {accuracy!r}")  # noqa: TRY004 (contract: ValueError)
    return Selection(_as_composition(base, accuracy), law, accuracy)


__all__ = ["PROFILE_ACCURACY", "ROUTES", "RouteAnswer", "Selection", "SelectionBound", "pure_epsilon", "select"]

"""Converting a Rényi curve to (ε, δ): the closed form and the certified optimal conversion, both labelled.

:class:`RenyiConversion` answers δ(ε) and ε(δ) for a :class:`~optcomp.rdp.StatedCurve` by two routes:

* ``"closed_form"`` — Canonne–Kamath–Steinke Prop. 12 = Balle et al. Thm 21 (:mod:`._closed`), an upper
  end only;
* ``"optimal"`` — the largest δ(ε) over *all* privacy-loss laws whose Rényi divergences (both directions)
  stay under the curve: a linear program over laws on a grid of loss values (:mod:`._lp`), certified
  above by a dual certificate checked at every real loss value (:mod:`._dual`) and below by a finite
  witness law re-verified in interval arithmetic (:mod:`._witness`).

Each answer is a :class:`ConversionBound` (a :class:`~optcomp.Bound`) whose ``lower`` is the witness's
(for zCDP curves never below the Gaussian with μ = √(2ρ), which is exactly ρ-zCDP), whose ``upper`` is
the smaller certified upper end of the two routes, and whose ``route`` names the route that gave it; it
holds for **any** mechanism with that curve (``statement``). zCDP curves state infinitely many orders: the
LP uses finitely many (found by exchange), which only loosens the dual (a relaxation: still an upper
bound), while the witness is checked at every α > 1.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from optcomp._inverse import SearchBudgetExceeded, float_boundary, solve
from optcomp._numerics import (
    DEFAULT_ACCURACY,
    EPSILON_WIDTH_FLOOR,
    Accuracy,
    Bound,
    FloatArray,
    check_nonnegative,
    check_probability,
    round_down,
)
from optcomp._rounding import RDP_BINARY_ETA_FINITE, RDP_SCAN_FIRST_GAP, next_up, widen_up
from optcomp.fdp import gdp_delta_bound
from optcomp.rdp import _binary, _lp
from optcomp.rdp._binary import BinaryCertificate
from optcomp.rdp._closed import closed_form_delta, closed_form_epsilon
from optcomp.rdp._dual import DualCertificate, certify
from optcomp.rdp._stated import StatedCurve
from optcomp.rdp._witness import WitnessLaw, witness_from

#: The witness LP tightens the caps by η = this × ``Accuracy.relative_width`` (zCDP curves: the witness
#: needs slack between the LP's orders; finite curves only against rounding).
_ETA_ZCDP = 0.1
_ETA_FINITE = 0.01
#: zCDP curves: the LP's first orders, α − 1 geometric from this to 4× the closed form's order.
_FIRST_ORDER_GAP = 1e-3
_FIRST_ORDERS = 40
#: ε(δ): rounds of "solve at ε, read the witness's ε at δ" that improve the lower end.
_LOWER_ROUNDS = 3
#: Below this closed-form δ the LP is not attempted (its scale leaves the float range).
_TINY_DELTA = 1e-290
#: First outward step of a witness's ε search, relative to its start.
_FIRST_STEP = 1e-3
#: Evaluations of the optimal upper end's ε search.
_UPPER_BUDGET = 12

#: Two-point route: the witness's caps are tightened by this factor (zCDP: room between the orders the
#: search used; finite curves: room for rounding), then by ``_ETA_RETRY`` times it if the check fails.
_BINARY_ETA_ZCDP = 1e-8
_BINARY_ETA_FINITE = RDP_BINARY_ETA_FINITE
_ETA_RETRY = 100.0
#: Below this δ the two-point route is not attempted (its masses would leave the normal float range).
_BINARY_TINY = 1e-280
#: ε(δ) upper end: the search for the least certified ε stops at this fraction of the requested width.
_EPSILON_XTOL = 1e-3

#: What a composition's answer says about its lower end (``ConversionBound.with_lower``).
RUN_LOWER = ("lower end: a run of these items, each curve-known one replaced by a Gaussian meeting its curve "
             "(the summed curve's worst law is not shown to be a run of several items)")

#: What every answer says about its scope.
STATEMENT = ("holds for any mechanism whose Renyi curve (both directions: neighbouring datasets under a "
             "symmetric relation) is at most the stated one")


@dataclass(frozen=True, slots=True)
class ConversionBound(Bound):
    """A certified bracket of a Rényi curve's conversion, and how it was obtained.

    Attributes:
        route: ``"optimal"`` (a certificate of the optimal conversion gave the upper end) or
            ``"closed_form"`` (CKS/Balle did).
        closed_form: the closed form's upper end (and ``order``, the α it was read at).
        optimal: the optimal route's own bracket (``None`` where the LP was not run or failed).
        witness: the verified witness law whose δ gives ``lower`` (``None``: a Gaussian or 0 gave it); a
            two-atom law where the two-point route found it.
        statement: the scope (:data:`STATEMENT`) and what the curve states.
        certificate: the certificate of the optimal route's upper end (δ queries; for ε queries the one at
            the returned ε): a :class:`~optcomp.rdp.BinaryCertificate` (two-point route) or a
            :class:`~optcomp.rdp.DualCertificate` (linear program); ``None`` where the closed form answered.
    """

    route: str = "closed_form"
    closed_form: float = math.inf
    order: float = math.nan
    optimal: Bound | None = None
    witness: WitnessLaw | None = None
    statement: str = STATEMENT
    certificate: DualCertificate | BinaryCertificate | None = None

    def with_lower(self, lower: float) -> ConversionBound:
        """This answer with the lower end of a run of the items (``Composition.dominated``: each
        curve-known item replaced by a Gaussian meeting its curve). The witness law is dropped (it was the
        summed curve's, not a run's); ``optimal`` keeps the summed curve's own bracket."""
        return replace(self, lower=lower, witness=None,
                       statement=f"{self.statement}; {RUN_LOWER}")


_Found = tuple[Bound, WitnessLaw | None, DualCertificate | BinaryCertificate | None]


class RenyiConversion:
    """δ(ε) and ε(δ) of every law with a given Rényi curve, by both routes (module docstring)."""

    def __init__(self, curve: StatedCurve, *, accuracy: Accuracy = DEFAULT_ACCURACY) -> None:
        self.curve = curve
        self.accuracy = accuracy
        self.eta = (_ETA_ZCDP if curve.every_order else _ETA_FINITE) * accuracy.relative_width
        self._witnesses: list[WitnessLaw] = []
        self._optimal: dict[float, tuple[Bound, WitnessLaw | None, DualCertificate | None] | None] = {}
        self._binary: dict[float, _Found | None] = {}
        self._binary_eps: dict[float, tuple[WitnessLaw | None, float, float, BinaryCertificate | None]] = {}

    # -- the two-point route ---------------------------------------------------------------------------
    def _rows(self, order_hint: float) -> _binary.Rows:
        c = self.curve
        if c.rho is not None:
            return _binary.zcdp_rows(c.rho, _binary.first_zcdp_orders(order_hint))
        assert c.orders is not None and c.values is not None
        caps = np.asarray(next_up(widen_up((c.orders - 1.0) * c.values, 4)), dtype=np.float64)
        return _binary.Rows(c.orders, caps, None)

    def _pair(self, rows: _binary.Rows, objective: Callable[[float, float], float]) -> tuple[float, float, _binary.Rows, WitnessLaw | None]:
        """The best pair of the two-point search and its verified witness (``None`` if none verified)."""
        eta = _BINARY_ETA_ZCDP if self.curve.every_order else _BINARY_ETA_FINITE
        lp = lq = math.nan
        for tighten in (eta, eta * _ETA_RETRY):
            lp, lq, used = _binary.find_pair(rows, objective, rho=self.curve.rho, eta=tighten)
            law = _binary.witness_pair(lp, lq)
            if law is not None and law.meets(self.curve):
                self._witnesses.append(law)
                return lp, lq, used, law
        return lp, lq, used, None

    def binary_delta(self, epsilon: float) -> _Found | None:
        """The two-point route's bracket of δ(ε), its witness and its certificate (``docs/rdp.md`` §5), or
        ``None`` (not run: δ negligible; or nothing certified). Cached per ``epsilon``."""
        if epsilon in self._binary:
            return self._binary[epsilon]
        up_cf, order = closed_form_delta(self.curve, epsilon)
        found: _Found | None = None
        if up_cf > _BINARY_TINY and not (self.curve.rho is not None and self.curve.rho == 0.0) and epsilon < 700.0:
            gamma = math.exp(epsilon)
            try:
                lp, lq, rows, law = self._pair(self._rows(order), lambda a, b: math.exp(a) - gamma * math.exp(b))
                cert = _binary.certify_curve(rows, epsilon, lp, lq, rho=self.curve.rho) if math.isfinite(lp) else None
            except (ArithmeticError, ValueError):  # a pair at the float range's edge (p rounds to 1): no route
                law, cert = None, None
            lower = law.delta_bounds(epsilon)[0] if law is not None else 0.0
            upper = math.inf if cert is None else cert.bound
            if law is not None or cert is not None:
                found = (Bound(min(lower, upper), upper), law, cert)
        self._binary[epsilon] = found
        return found

    def _binary_epsilon(self, delta: float, closed: float, order: float) -> tuple[WitnessLaw | None, float, float, BinaryCertificate | None]:
        """ε(δ) by the two-point route: (witness, lower, upper, certificate at upper); ``upper`` is ``inf``
        where nothing certified beat the closed form's ε. The pair maximising log((p − δ)/q) gives the
        witness (its largest float ε with enclosed δ > ``delta``); the upper end is the least float ε (to
        ``_EPSILON_XTOL`` of the requested width) whose certificate proves δ ≤ ``delta``."""
        if delta in self._binary_eps:
            return self._binary_eps[delta]
        out: tuple[WitnessLaw | None, float, float, BinaryCertificate | None] = (None, 0.0, math.inf, None)
        if delta >= _BINARY_TINY and math.isfinite(closed):
            try:
                out = self._binary_epsilon_run(delta, closed, order)
            except (ArithmeticError, ValueError):  # a pair at the float range's edge (p rounds to 1): no route
                out = (None, 0.0, math.inf, None)
        self._binary_eps[delta] = out
        return out

    def _binary_epsilon_run(self, delta: float, closed: float, order: float) -> tuple[WitnessLaw | None, float, float, BinaryCertificate | None]:
        """The body of :meth:`_binary_epsilon` (may raise an arithmetic error at the float range's edge)."""
        def objective(lp: float, lq: float) -> float:
            p = math.exp(lp)  # below the q where p*(q) passes δ, p* grows with q: a unimodal surrogate
            return math.log(p - delta) - lq if p > delta else -1e6 + lp

        lp, lq, rows, law = self._pair(self._rows(order), objective)
        p = math.exp(lp) if math.isfinite(lp) else 0.0
        guess = math.log((p - delta) / math.exp(lq)) if p > delta else 0.0
        lower = _law_epsilon(law, delta, max(guess, 0.0)) if law is not None else 0.0
        certs: dict[float, BinaryCertificate | None] = {}

        def passes(e: float) -> bool:
            if e not in certs:
                certs[e] = _binary.certify_curve(rows, e, lp, lq, rho=self.curve.rho)
            cert = certs[e]
            return cert is not None and cert.bound <= delta

        upper, cert = math.inf, None
        if math.isfinite(lp):
            start = max(guess, 0.0)
            if start == 0.0 and passes(0.0):
                upper = 0.0
            else:
                found = float_boundary(passes, name="epsilon", passing_above=True, start=start,
                                       first_gap=max(start, 1e-3) * RDP_SCAN_FIRST_GAP,
                                       xtol=_EPSILON_XTOL * self.accuracy.relative_width, highest=closed)
                if found.passing is not None and found.passing < closed:
                    upper = found.passing
            cert = certs.get(upper)
        return (law, lower, upper, cert)

    # -- the LP at one ε -------------------------------------------------------------------------------
    def _problem(self, order_hint: float) -> _lp.Problem:
        c = self.curve
        if c.rho is not None:
            top = max(4.0 * (order_hint if math.isfinite(order_hint) else 2.0), 8.0)
            orders = 1.0 + np.geomspace(_FIRST_ORDER_GAP, top - 1.0, _FIRST_ORDERS)
            return _lp.Problem(orders, _lp.zcdp_caps(c.rho, orders), c.rho, c.rho)
        assert c.orders is not None and c.values is not None
        caps = np.asarray(next_up(widen_up((c.orders - 1.0) * c.values, 4)), dtype=np.float64)
        return _lp.Problem(c.orders, caps, None, None)

    def optimal_delta(self, epsilon: float) -> tuple[Bound, WitnessLaw | None, DualCertificate | None] | None:
        """The optimal route's bracket of δ(ε), its witness and its dual certificate, or ``None`` (not run:
        δ negligible, or the LP failed). The cached answer at ``epsilon`` if there is one."""
        if epsilon in self._optimal:
            return self._optimal[epsilon]
        found = self._solve_optimal(epsilon)
        self._optimal[epsilon] = found
        return found

    def _solve_optimal(self, epsilon: float) -> tuple[Bound, WitnessLaw | None, DualCertificate | None] | None:
        up_cf, order = closed_form_delta(self.curve, epsilon)
        if up_cf <= _TINY_DELTA or (self.curve.rho is not None and self.curve.rho == 0.0):
            return None
        problem = self._problem(order)
        try:
            sol, problem, grid = _lp.exchange(problem, epsilon, eta=self.eta, scale=up_cf)
            witness = witness_from(sol.losses, sol.masses)
            if witness is not None and not witness.meets(self.curve):
                witness = None
            lower = witness.delta_bounds(epsilon)[0] if witness is not None else 0.0
            dual_problem = _lp.Problem(problem.orders, problem.caps, problem.kl, None)
            dual, _, grid = _lp.exchange(dual_problem, epsilon, eta=0.0, scale=up_cf, losses=grid)
            window = (float(grid[0]), float(grid[-1]))
            polished = _lp.solve(dual_problem, grid, epsilon, eta=0.0, scale=up_cf, polish=True)
            found = [c for c in (certify(d, epsilon, problem.caps, problem.kl, window) for d in (dual, polished))
                     if c is not None]
            cert = min(found, key=lambda c: c.bound) if found else None
        except ArithmeticError:
            return None
        if witness is not None:
            self._witnesses.append(witness)
        upper = math.inf if cert is None else cert.bound
        return Bound(min(lower, upper), upper), witness, cert

    # -- δ(ε) ---------------------------------------------------------------------------------------------
    def _gaussian_lower(self, epsilon: float) -> float:
        """zCDP curves: δ(ε) of the Gaussian with μ = √(2ρ) (exactly ρ-zCDP), certified from below."""
        rho = self.curve.rho
        if rho is None or rho == 0.0:
            return 0.0
        return gdp_delta_bound(round_down(math.sqrt(2.0 * rho)), epsilon)[0]  # μ rounded down: δ grows with μ

    def delta(self, epsilon: float) -> ConversionBound:
        """Certified bracket of the largest δ(ε) over every law with the curve (module docstring): the
        two-point route first; the linear program too where that route is wider than the accuracy's
        relative width (in δ) or failed."""
        eps = check_nonnegative("epsilon", epsilon)
        up_cf, order = closed_form_delta(self.curve, eps)
        found = [self.binary_delta(eps)]
        if found[0] is None or found[0][0].relative_width > self.accuracy.relative_width:
            found.append(self.optimal_delta(eps))
        runs = [f for f in found if f is not None]
        low = max(runs, key=lambda f: f[0].lower, default=None)
        high = min(runs, key=lambda f: f[0].upper, default=None)
        opt = None if low is None or high is None else Bound(min(low[0].lower, high[0].upper), high[0].upper)
        lower = max(self._gaussian_lower(eps), opt.lower if opt is not None else 0.0)
        upper = min(up_cf, opt.upper if opt is not None else math.inf)
        route = "optimal" if opt is not None and opt.upper < up_cf else "closed_form"
        witness = low[1] if low is not None and opt is not None and lower == opt.lower else None
        return ConversionBound(min(lower, upper), upper, route, up_cf, order, opt, witness, self._statement(),
                               high[2] if route == "optimal" and high is not None else None)

    def delta_curve(self, epsilons: FloatArray) -> tuple[FloatArray, FloatArray]:
        """(lower, upper) of δ at each ε: the closed form above; below, the best of the witness laws found
        so far (one LP is solved first if there is none) and, for zCDP, the Gaussian."""
        if not self._witnesses and epsilons.size:
            self.optimal_delta(float(np.median(epsilons)))
        lower = np.array([max([self._gaussian_lower(float(e))] + [w.delta_bounds(float(e))[0] for w in self._witnesses])
                          for e in epsilons], dtype=np.float64)
        upper = np.array([closed_form_delta(self.curve, float(e))[0] for e in epsilons], dtype=np.float64)
        return np.minimum(lower, upper), upper

    # -- ε(δ) ---------------------------------------------------------------------------------------------
    def epsilon(self, delta: float) -> ConversionBound:
        """Certified bracket of the smallest ε with δ(ε) ≤ ``delta`` over every law with the curve.

        ``upper``: the smallest of the closed form's ε and the least float ε found whose certificate gives
        δ ≤ ``delta`` (two-point route: :meth:`_binary_epsilon`; linear program: :func:`optcomp._inverse.solve`
        between the lower end and the closed form); ``lower``: the largest float ε where a verified witness
        law (or, for zCDP, the Gaussian) still has δ > ``delta`` (:func:`optcomp._inverse.float_boundary`
        on the law's interval-enclosed δ). The linear program runs only where the two-point route's bracket
        is wider than the accuracy's relative width.
        """
        d = check_probability("delta", delta)
        if d >= 1.0:
            return ConversionBound(0.0, 0.0, "closed_form", 0.0, math.nan, None, None, self._statement())
        zero = self.curve.rho == 0.0 if self.curve.rho is not None else bool(np.all(self.curve.values == 0.0))
        if zero:
            return ConversionBound(0.0, 0.0, "closed_form", 0.0, math.nan, None, None, self._statement())
        if d == 0.0:
            return ConversionBound(math.inf, math.inf, "closed_form", math.inf, math.nan, None, None, self._statement())
        up_cf, order = closed_form_epsilon(self.curve, d)
        witness, lower, opt_upper, cert = self._binary_epsilon(d, up_cf, order)
        gauss = self._epsilon_gaussian(d, up_cf)
        if gauss > lower:
            witness, lower = None, gauss
        if Bound(min(lower, min(up_cf, opt_upper)), min(up_cf, opt_upper)).relative_width_above(EPSILON_WIDTH_FLOOR) \
                > self.accuracy.relative_width:
            lp_witness, lp_lower = self._epsilon_lower(d, up_cf)
            if lp_lower > lower:
                witness, lower = lp_witness, lp_lower
            lp_upper = self._epsilon_upper(d, lower, up_cf)
            if lp_upper < opt_upper:
                at = self._optimal.get(lp_upper)
                opt_upper, cert = lp_upper, at[2] if at is not None else None  # type: ignore[assignment]
        upper = min(up_cf, opt_upper)
        route = "optimal" if opt_upper < up_cf else "closed_form"
        opt = Bound(min(lower, opt_upper), opt_upper) if math.isfinite(opt_upper) else None
        return ConversionBound(min(lower, upper), upper, route, up_cf, order, opt, witness, self._statement(),
                               cert if route == "optimal" else None)

    def _epsilon_lower(self, delta: float, start: float) -> tuple[WitnessLaw | None, float]:
        """The best (witness, ε) with the witness's certified δ(ε) > ``delta``: LP at ε, read the witness
        at ``delta``, repeat from there (each round's ε is a certified lower end; the best is kept)."""
        best: tuple[WitnessLaw | None, float] = (None, 0.0)
        at = start
        for _ in range(_LOWER_ROUNDS):
            found = self.optimal_delta(at)
            if found is None or found[1] is None:
                break
            law = found[1]
            eps = _law_epsilon(law, delta, at)
            if eps <= best[1]:
                break
            best, at = (law, eps), eps
        return best

    def _epsilon_gaussian(self, delta: float, start: float) -> float:
        """zCDP: the largest float ε where the Gaussian's certified lower δ exceeds ``delta`` (else 0)."""
        if self.curve.rho is None or self._gaussian_lower(0.0) <= delta:
            return 0.0
        found = float_boundary(lambda e: self._gaussian_lower(e) <= delta, name="epsilon", passing_above=True,
                               passing=start if self._gaussian_lower(start) <= delta else None, start=start)
        return 0.0 if found.fail is None else found.fail

    def _epsilon_upper(self, delta: float, lower: float, closed: float) -> float:
        """The optimal route's ε upper end: the least ε found whose dual certificate gives δ ≤ ``delta``
        (:func:`optcomp._inverse.solve` between ``lower``, where a witness already exceeds ``delta``, and
        the closed form's ε, which passes), or ``inf`` where no certificate beat the closed form."""
        if not math.isfinite(closed) or closed <= lower or lower <= 0.0:
            return math.inf

        def upper_delta(e: float) -> float:
            found = self.optimal_delta(e)
            return math.inf if found is None else found[0].upper

        rtol = min(self.accuracy.relative_width / 4.0, 0.5 * (closed - lower) / closed)
        try:
            found = solve(upper_delta, delta, name="epsilon", guess=0.5 * (lower + closed), rtol=rtol,
                          fail=lower, passing=closed, budget=_UPPER_BUDGET)
        except SearchBudgetExceeded as exc:
            found = exc.bracket
        passing = found.passing
        return math.inf if passing is None or passing >= closed else passing

    def _statement(self) -> str:
        return f"{STATEMENT}: {self.curve.describe()}"


def _law_epsilon(law: WitnessLaw, delta: float, start: float) -> float:
    """The largest float ε where ``law``'s certified lower δ(ε) exceeds ``delta`` (0 if none)."""
    found = float_boundary(lambda e: law.delta_bounds(e)[0] <= delta, name="epsilon", passing_above=True,
                           start=max(start, 0.0), first_gap=max(start, 1.0) * _FIRST_STEP)
    return 0.0 if found.fail is None else found.fail

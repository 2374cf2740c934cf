"""Filter currencies: what a release costs, and the budget it must fit, as exact rationals.

A filter is *valid* for a budget when every fully adaptive analyst (parameters chosen from past
outputs) whose run it admits has a transcript meeting the budget (Rogers–Roth–Ullman–Vadhan 2016).
Each currency here is valid; the proofs are in ``docs/ledger.md`` §2:

* ``basic``: charge (ε_i, δ_i); admit while Σε_i ≤ ε and Σδ_i ≤ δ (Rogers–Roth–Ullman–Vadhan 2016:
  basic composition is a valid filter for adaptively chosen parameters; proof in the doc).
* ``approx-zcdp``: charge (½ε_i², δ_i) — (ε_i, δ_i)-DP is δ_i-approximately ½ε_i²-zCDP (Bun–Steinke
  2016, Prop 1.4 and its approximate form); admit while Σ½ε_i² ≤ ρ* and Σδ_i ≤ δ″, with
  ρ* = (√(L + ε) − √L)², L = ln(1/δ′), δ′ = δ − δ″ (Whitehouse–Ramdas–Rogers–Wu 2023, the approximate
  zCDP filter; ρ-zCDP ⇒ (ρ + 2√(ρL), δ′)-DP, Bun–Steinke Prop 1.3).
* ``zcdp``: charge ρ_i; admit while Σρ_i ≤ ρ_T, ρ_T the largest ρ whose zCDP converts to (ε, δ) by the
  RDP → DP conversion of Canonne–Kamath–Steinke 2020 Prop 12 at one order α* (stored). Valid: at every
  order α the charges (α, αρ_i) obey the Rényi filter of Feldman–Zrnic 2021 (their Rényi filter) with budget αρ_T.
* ``rdp``: charge ρ_i(α) at one order α fixed at creation (given, or the best of a grid for a declared
  workload); admit while Σρ_i(α) ≤ B(α) = ε − log(1 − 1/α) + (log δ + log α)/(α − 1) (Feldman–Zrnic,
  then CKS Prop 12) *or*, while every release so far is pure, Σε_i ≤ ε: the union of the rdp filter at
  (ε, δ) and the pure basic filter at (ε, 0), valid for (ε, δ + 0) by the union lemma of
  ``docs/ledger.md`` §2.5 — so it never halts before ``basic`` on a pure stream. (A configuration
  written before the union, a grid checked at every order, is read back and applied as it was.)
* ``gdp``: charge μ_i²; admit while Σμ_i² ≤ μ_T², μ_T the largest μ with δ_μ(ε) ≤ δ (Smith–Thakurta
  2022: GDP filters with the non-adaptive parameters; δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2),
  Dong–Roth–Su Cor. "GDP to DP", §2.4).

Thresholds are computed once, at creation, at 60 digits with mpmath and rounded *down* to rationals
(charges that are transcendental are rounded *up*), and each threshold is re-checked at that precision
(the check's value is stored in the certificate). A reopened ledger reads them back; it never
recomputes them. No natural optimal-composition filter is offered: it is not valid (§1 of the doc).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

import mpmath

from optcomp.ledger._costs import cks_offset, laplace_rdp, laplace_zcdp, renyi_at, renyi_epsilon, zcdp_epsilon
from optcomp.ledger._exact import DIGITS, decode, down, encode, exact, mpf, up
from optcomp.ledger._release import ApproxDP, BatchRelease, ChargeError, PureDP, Release, from_json
from optcomp.ledger._words import component_symbol, describe, number
from optcomp.rdp import DEFAULT_ORDERS, check_orders

Vector = tuple[Fraction, ...]
__all__ = ["CURRENCIES", "ChargeError", "Currency", "Vector", "best_order", "bulk_admitted", "from_config",
           "make_currency"]


@dataclass(frozen=True)
class Currency:
    """One filter currency with its budget: component names, exact thresholds and their certificate.

    Attributes:
        name: the registry key (``basic``, ``approx-zcdp``, ``zcdp``, ``rdp``, ``gdp``).
        epsilon, delta: the (ε, δ) budget the filter guarantees for every transcript.
        components: labels of the charge vector's components.
        thresholds: exact rationals T_j; a release is admitted iff spent_j + charge_j ≤ T_j for all j.
        certificate: how each threshold was obtained and checked (JSON-able).
        options: creation options (``delta_steps`` for approx-zcdp; ``orders`` — the one order — and
            ``basic_branch`` for rdp).
        branches: groups of component indices; a spent vector is within the budget iff *some* branch
            has every one of its components within its threshold (empty: one branch of every
            component). Several branches are a union of valid filters, each with its share of δ
            (``docs/ledger.md`` §2.5: the rdp currency is rdp ∪ pure basic, δ split δ + 0).
    """

    name: str
    epsilon: Fraction
    delta: Fraction
    components: tuple[str, ...]
    thresholds: Vector
    certificate: dict[str, Any]
    options: dict[str, Any]
    branches: tuple[tuple[int, ...], ...] = ()

    def _groups(self) -> tuple[tuple[int, ...], ...]:
        return self.branches or (tuple(range(len(self.thresholds))),)

    def within(self, spent: Vector) -> bool:
        """Whether ``spent`` is within the budget: some branch has spent_j ≤ T_j for all its j (exact)."""
        return any(all(spent[j] <= self.thresholds[j] for j in g) for g in self._groups())

    def exceeded(self, spent: Vector) -> str:
        """The components of ``spent`` above their thresholds, named (for a refusal's message)."""
        over = [component_symbol(self.components[j]) for j in range(len(spent)) if spent[j] > self.thresholds[j]]
        return "over in " + ", ".join(over) if over else "within"

    def copies(self, release: Release, spent: Vector) -> int:
        """How many more copies of ``release`` fit from ``spent`` (exact; −1: unlimited): for each branch
        the least ⌊(T_j − spent_j)/charge_j⌋, then the best branch."""
        ch = self.charge(release)
        best = 0
        for g in self._groups():
            if any(spent[j] > self.thresholds[j] for j in g):
                continue
            counts = [math.floor((self.thresholds[j] - spent[j]) / ch[j]) for j in g if ch[j] > 0]
            if not counts:
                return -1
            best = max(best, min(counts))
        return best

    def charge(self, release: Release) -> Vector:
        """The exact charge vector of ``release``; :class:`ChargeError` when this currency has none."""
        table = _CHARGES[self.name]
        if release.kind not in table:
            why = _NO_RULE.get((self.name, release.kind))
            raise ChargeError(f"the {self.name} currency cannot charge {describe(release)}: {why}" if why else
                              f"the {self.name} currency cannot charge a {release.kind} release "
                              f"(it charges {', '.join(sorted(table))})")
        return table[release.kind](self, release)

    def guarantee(self) -> str:
        """The transcript guarantee every run admitted by this filter has."""
        e, d = number(self.epsilon), number(self.delta)
        return {
            "basic": f"({e}, {d})-DP by basic composition under full adaptivity (RRUV 2016)",
            "approx-zcdp": f"({e}, {d})-DP: δ″-approximate ρ*-zCDP filter (Whitehouse et al. 2023)",
            "zcdp": f"ρ_T-zCDP, hence ({e}, {d})-DP (Feldman–Zrnic 2021; CKS 2020 Prop 12)",
            "rdp": (f"(α, B(α))-RDP for every α in the grid, hence ({e}, {d})-DP (Feldman–Zrnic 2021)"
                    if not self.branches else
                    f"({e}, {d})-DP: the union of the (α, B(α))-RDP filter at (ε, δ) (Feldman–Zrnic 2021) "
                    f"and the pure basic filter at (ε, 0) (RRUV 2016), δ split δ + 0 (docs/ledger.md §2.5)"),
            "gdp": f"μ_T-GDP, hence ({e}, {d})-DP (Smith–Thakurta 2022; Dong–Roth–Su §2.4)",
        }[self.name]

    def to_config(self) -> dict[str, Any]:
        """Exact JSON form, read back by :func:`from_config` without recomputation."""
        out: dict[str, Any] = {
            "name": self.name, "epsilon": encode(self.epsilon), "delta": encode(self.delta),
            "components": list(self.components), "thresholds": [encode(t) for t in self.thresholds],
            "certificate": self.certificate, "options": self.options}
        if self.branches:
            out["branches"] = [list(g) for g in self.branches]
        return out


def from_config(d: dict[str, Any]) -> Currency:
    """Inverse of :meth:`Currency.to_config` (a configuration without ``branches`` has one branch);
    ``ValueError`` for a currency this version does not know."""
    if d.get("name") not in _CHARGES or (d["name"] == "rdp" and not d["options"].get("orders")):
        raise ValueError(f"unknown currency configuration {d.get('name')!r}")
    return Currency(d["name"], decode(d["epsilon"]), decode(d["delta"]), tuple(d["components"]),
                    tuple(decode(t) for t in d["thresholds"]), d["certificate"], d["options"],
                    tuple(tuple(int(j) for j in g) for g in d.get("branches", [])))


# --- transcendental pieces, at DIGITS digits -----------------------------------------------------


_cks_offset = cks_offset


def _gdp_delta(mu: mpmath.mpf, eps: mpmath.mpf) -> mpmath.mpf:
    """δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (Dong–Roth–Su Cor. "GDP to DP", §2.4)."""
    return mpmath.ncdf(-eps / mu + mu / 2) - mpmath.exp(eps) * mpmath.ncdf(-eps / mu - mu / 2)


def _bisect(f: Callable[[mpmath.mpf], bool], lo: mpmath.mpf, hi: mpmath.mpf, steps: int = 220) -> mpmath.mpf:
    """Largest x in [lo, hi] (to 2^-steps relative) with f(x) true, f monotone true→false, f(lo) true."""
    for _ in range(steps):
        mid = (lo + hi) / 2
        if f(mid):
            lo = mid
        else:
            hi = mid
    return lo


@lru_cache(maxsize=4096)
def rr_rdp(epsilon: Fraction, alpha: Fraction) -> Fraction:
    """ρ(α) of randomized response RR(ε), the worst ε-DP mechanism (Mironov 2017 Prop 5), rounded up:
    (1/(α−1))·log[p^α(1−p)^{1−α} + (1−p)^α p^{1−α}], p = e^ε/(1+e^ε)."""
    with mpmath.workdps(DIGITS):
        e, a = mpf(epsilon), mpf(alpha)
        lp, lq = -mpmath.log1p(mpmath.exp(-e)), -mpmath.log1p(mpmath.exp(e))
        v = mpmath.log(mpmath.exp(a * lp + (1 - a) * lq) + mpmath.exp(a * lq + (1 - a) * lp)) / (a - 1)
        return max(up(v), Fraction(0))


@lru_cache(maxsize=4096)
def pure_mu_squared(epsilon: Fraction) -> Fraction:
    """μ(ε)² rounded up, μ(ε) = 2Φ⁻¹(e^ε/(1+e^ε)): every ε-DP mechanism is μ(ε)-GDP, tightly (the
    trade-off curves of RR(ε) and G_μ touch at α = 1/(1+e^ε); Dong–Roth–Su §2.4)."""
    with mpmath.workdps(DIGITS):
        e = mpf(epsilon)
        p = 1 / (1 + mpmath.exp(-e))
        mu = 2 * mpmath.sqrt(2) * mpmath.erfinv(2 * p - 1)
        return up(mu * mu)


# --- construction ---------------------------------------------------------------------------------


def _basic(eps: Fraction, delta: Fraction, opts: dict[str, Any]) -> Currency:
    return Currency("basic", eps, delta, ("epsilon", "delta"), (eps, delta),
                    {"rule": "sum(epsilon_i) <= epsilon and sum(delta_i) <= delta", "rounding": "exact"}, {})


def _approx_zcdp(eps: Fraction, delta: Fraction, opts: dict[str, Any]) -> Currency:
    d2 = exact("delta_steps", opts.get("delta_steps", 0))
    if not 0 <= d2 < delta:
        raise ValueError(f"delta_steps must be in [0, delta) = [0, {float(delta):g}), got {float(d2):g}")
    with mpmath.workdps(DIGITS):
        L = -mpmath.log(mpf(delta - d2))
        rho = down((mpmath.sqrt(L + mpf(eps)) - mpmath.sqrt(L)) ** 2)
        r = mpf(rho)
        check = r + 2 * mpmath.sqrt(r * L)
        if not check <= mpf(eps):
            raise ArithmeticError("approx-zcdp threshold failed its 60-digit check")
    cert = {"rho_star": encode(rho), "delta_prime": encode(delta - d2), "delta_steps": encode(d2),
            "conversion": "rho-zCDP => (rho + 2 sqrt(rho ln(1/delta')), delta')-DP (Bun-Steinke Prop 1.3)",
            "check_epsilon_at_threshold": mpmath.nstr(check, 30)}
    return Currency("approx-zcdp", eps, delta, ("rho", "delta"), (rho, d2), cert, {"delta_steps": encode(d2)})


def _zcdp_order(eps: float, log_delta: float) -> float:
    """The order α maximising ρ(α) = (ε − offset(α))/α, the largest ρ whose (α, αρ)-RDP converts to
    (ε, δ) at α (golden-section search on log(α − 1) in floats: any α is valid, this one is good)."""

    def neg_rho(t: float) -> float:
        a = 1.0 + math.exp(t)
        return -(eps - (math.log1p(-1.0 / a) - (log_delta + math.log(a)) / (a - 1.0))) / a

    lo, hi, g = -12.0, 40.0, (math.sqrt(5.0) - 1.0) / 2.0
    for _ in range(120):
        x, y = hi - g * (hi - lo), lo + g * (hi - lo)
        lo, hi = (lo, y) if neg_rho(x) < neg_rho(y) else (x, hi)
    return 1.0 + math.exp((lo + hi) / 2.0)


def _zcdp(eps: Fraction, delta: Fraction, opts: dict[str, Any]) -> Currency:
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1) for the zcdp currency, got {float(delta):g}")
    with mpmath.workdps(DIGITS):
        e, d = mpf(eps), mpf(delta)
        alpha = Fraction(_zcdp_order(float(eps), float(mpmath.log(d))))  # stored exactly; ρ_T solved there
        rho = down((e - _cks_offset(mpf(alpha), d)) / mpf(alpha))
        if rho <= 0:
            raise ValueError(f"epsilon = {float(eps):g} is too small for a zcdp budget at delta = {float(delta):g}")
        a = mpf(alpha)
        check = a * mpf(rho) + _cks_offset(a, d)
        if not check <= e:
            raise ArithmeticError("zcdp threshold failed its 60-digit check")
    cert = {"rho": encode(rho), "alpha": encode(alpha),
            "conversion": "rho-zCDP => (alpha, alpha rho)-RDP => (epsilon, delta)-DP (CKS 2020 Prop 12)",
            "check_epsilon_at_threshold": mpmath.nstr(check, 30)}
    return Currency("zcdp", eps, delta, ("rho",), (rho,), cert, {})


def _rdp_order(eps: Fraction, delta: Fraction, opts: dict[str, Any]) -> tuple[Fraction, dict[str, Any] | None]:
    """The one order of an rdp currency: the given one, or the best of the grid for a declared workload."""
    grid = check_orders(opts.get("orders", DEFAULT_ORDERS))
    workload = opts.get("workload")
    if workload is not None:
        release = workload if isinstance(workload, Release) else from_json(workload)
        return Fraction(best_order(release, eps, delta, [float(a) for a in grid])), release.to_json()
    if len(grid) != 1:
        raise ValueError("orders: the rdp currency takes one order (orders=[α]) or a declared workload "
                         "(workload=PureDP('0.01'), which picks the best order of the grid for it): a grid "
                         f"of {len(grid)} orders admits only what its worst order admits")
    return Fraction(float(grid[0])), None


def _rdp(eps: Fraction, delta: Fraction, opts: dict[str, Any]) -> Currency:
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1) for the rdp currency, got {float(delta):g}")
    alpha, workload = _rdp_order(eps, delta, opts)
    with mpmath.workdps(DIGITS):
        budget = down(mpf(eps) - _cks_offset(mpf(alpha), mpf(delta)))
    if budget <= 0:
        raise ValueError(f"orders: α = {float(alpha):g} leaves no RDP budget at (ε, δ) = "
                         f"({float(eps):g}, {float(delta):g}); choose another order")
    cert = {"orders": [encode(alpha)], "workload": workload,
            "conversion": "(alpha, B(alpha))-RDP => (epsilon, delta)-DP (CKS 2020 Prop 12)",
            "rule": "admit while sum rho_i(alpha) <= B(alpha) [delta] or, all releases pure so far, "
                    "sum epsilon_i <= epsilon [0]: a union of two valid filters, delta split delta + 0"}
    return Currency("rdp", eps, delta, (f"alpha={float(alpha):g}", "epsilon", "non-pure releases"),
                    (budget, eps, Fraction(0)), cert, {"orders": [encode(alpha)], "basic_branch": True},
                    ((0,), (1, 2)))


def _gdp(eps: Fraction, delta: Fraction, opts: dict[str, Any]) -> Currency:
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1) for the gdp currency, got {float(delta):g}")
    with mpmath.workdps(DIGITS):
        e, d = mpf(eps), mpf(delta)
        hi = mpmath.mpf(1)
        while _gdp_delta(hi, e) <= d:
            hi *= 2
        def meets(m: mpmath.mpf) -> bool:
            return bool(_gdp_delta(m, e) <= d)

        mu = _bisect(meets, mpmath.mpf(2) ** -200, hi)
        mu2 = down(mu * mu)
        check = _gdp_delta(mpmath.sqrt(mpf(mu2)), e)
        if not check <= d:
            raise ArithmeticError("gdp threshold failed its 60-digit check")
    cert = {"mu_squared": encode(mu2), "mu": mpmath.nstr(mpmath.sqrt(mpf(mu2)), 30),
            "conversion": "mu-GDP => (epsilon, delta_mu(epsilon))-DP (Dong-Roth-Su Cor. GDP to DP, Sec. 2.4)",
            "check_delta_at_threshold": mpmath.nstr(check, 30)}
    return Currency("gdp", eps, delta, ("mu^2",), (mu2,), cert, {})


_FACTORIES: dict[str, Callable[[Fraction, Fraction, dict[str, Any]], Currency]] = {
    "basic": _basic,
    "approx-zcdp": _approx_zcdp,
    "zcdp": _zcdp,
    "rdp": _rdp,
    "gdp": _gdp,
}
#: The creation options each currency takes (any other is refused).
_OPTIONS: dict[str, set[str]] = {"approx-zcdp": {"delta_steps"}, "rdp": {"orders", "workload"}}
#: The shipped filter currencies (every one valid under full adaptivity; ``docs/ledger.md`` §2).
CURRENCIES: tuple[str, ...] = tuple(_FACTORIES)


def make_currency(name: str, epsilon: object, delta: object, **options: Any) -> Currency:
    """Build currency ``name`` for the budget (ε, δ), thresholds rounded down and checked.

    Args:
        name: one of :data:`CURRENCIES`.
        epsilon: ε > 0 (exact: int, float, Fraction, decimal string).
        delta: δ ∈ [0, 1) (``zcdp``, ``rdp``, ``gdp``, ``approx-zcdp``: δ > 0).
        options: ``delta_steps`` (approx-zcdp: δ″, the part of δ kept for Σδ_i, default 0),
            ``orders`` and ``workload`` (rdp: one order α, or a declared workload — a release — whose
            best order in ``orders`` (default :data:`optcomp.rdp.DEFAULT_ORDERS`) is chosen by
            :func:`best_order`; a grid of several orders without a workload is refused, since an
            intersection admits only what its worst order admits). The rdp currency is the union of
            the rdp filter at (ε, δ) and the pure basic filter at (ε, 0), so it never halts before
            ``basic`` on a stream of pure releases (``docs/ledger.md`` §2.5).
    """
    if name not in _FACTORIES:
        raise ValueError(f"currency must be one of {', '.join(CURRENCIES)}, got {name!r}")
    eps, d = exact("epsilon", epsilon), exact("delta", delta)
    if eps <= 0:
        raise ValueError(f"epsilon must be > 0, got {epsilon!r}")
    if not 0 <= d < 1:
        raise ValueError(f"delta must be in [0, 1), got {delta!r}")
    if name == "approx-zcdp" and d <= 0:
        raise ValueError(f"delta must be in (0, 1) for the approx-zcdp currency, got {delta!r}")
    allowed = _OPTIONS.get(name, set())
    unknown = set(options) - allowed
    if unknown:
        raise ValueError(f"the {name} currency takes no option {', '.join(sorted(unknown))} "
                         f"(its options: {', '.join(sorted(allowed)) or 'none'})")
    return _FACTORIES[name](eps, d, options)


def best_order(release: Release, epsilon: object, delta: object,
               orders: Sequence[float] = DEFAULT_ORDERS) -> float:
    """The order α of ``orders`` at which the most copies of ``release`` fit an rdp filter at (ε, δ)
    (to fix a one-order grid at creation; the choice uses no data, so it is free)."""
    best: tuple[int, float] = (-1, float(orders[0]))
    for a in orders:
        try:
            c = make_currency("rdp", epsilon, delta, orders=[a])
        except ValueError:
            continue
        ch = c.charge(release)[0]
        n = int(c.thresholds[0] // ch) if ch else 2**63
        if n > best[0]:
            best = (n, float(a))
    return best[1]


# --- charges ----------------------------------------------------------------------------------------


def _sum(vectors: Sequence[Vector]) -> Vector:
    return tuple(sum(col, Fraction(0)) for col in zip(*vectors, strict=True))


def _no_delta(release: ApproxDP, name: str) -> PureDP:
    """An (ε, 0) black box as the pure release it is; a δ > 0 one has no charge in ``name``."""
    if release.delta:
        raise ChargeError(f"the {name} currency charges only δ = 0 black boxes, got δ = {float(release.delta):g}")
    return PureDP(release.epsilon)


def _batch_epsilon(release: BatchRelease) -> Fraction:
    """Certified upper end of the optimal composition of a batch at its δ (MV Thm 1.5, KOV Thm III.3)."""
    from optcomp import optimal

    pairs = [(float(i.epsilon), float(getattr(i, "delta", 0))) for i in release.items]
    if any(Fraction(p[0]) < i.epsilon or Fraction(p[1]) < getattr(i, "delta", 0)
           for p, i in zip(pairs, release.items, strict=True)):
        pairs = [(float(up(mpf(i.epsilon))), float(up(mpf(Fraction(getattr(i, "delta", 0))))))
                 for i in release.items]
    # optimal directly, not compose (issue 25, decided): verify() recomputes this stored charge bit for
    # bit, so it is pinned to one computation, optimal.epsilon at its default tolerance (width ≤ 1e-3).
    # compose(...).epsilon(δ) at the default Accuracy refines further (30 distinct ε in [0.02, 0.1],
    # δ = 1e-6: 1.4268669298507815 here, 1.4264062035813871 there), so ledgers written before would fail
    # verify(); a loose Accuracy matches only through optimal's internal Goal translation, and the router
    # sends batches with an ε_i > optimal.HUGE_EPS to the grid (1600.9999974190791 vs …98868).
    # Listed in tests/test_style.py AROUND_COMPOSE and docs/architecture.md.
    b = optimal.epsilon(pairs, float(release.delta))
    return exact("batch epsilon", b.upper)


def _with_basic(c: Currency, rdp: Vector, epsilon: Fraction | None = None) -> Vector:
    """An rdp charge with the pure basic branch's components appended (when the currency has that
    branch): (ε, 0) for a pure release, (0, 1) for any other (it closes the basic branch for good)."""
    if not c.options.get("basic_branch"):
        return rdp
    return (*rdp, epsilon, Fraction(0)) if epsilon is not None else (*rdp, Fraction(0), Fraction(1))


def _converted(release: Any, name: str) -> tuple[Fraction, Fraction]:
    """(ε, δ) of a release known by its zCDP ρ or its Rényi curve, at the δ share it declares: the
    closed-form conversion (CKS Prop 12; :mod:`._costs`). Without a share the (ε, δ) currencies have no
    charge for it: refused by name, saying what to add."""
    if release.delta is None:
        example = {"zcdp": "zcdp:rho=0.1,delta=1e-7", "renyi": "renyi:orders=2;8;32,epsilons=0.1;0.5;2,delta=1e-7",
                   "discrete_gaussian": "dgauss:sigma=4,delta=1e-7"}[release.kind]
        raise ChargeError(f"the {name} currency charges {describe(release)} as the (ε, δ)-DP its conversion "
                          "certifies at a δ share the release declares, and it declares none: give one "
                          f"(delta=…, e.g. {example}; docs/ledger.md §2.9)")
    if release.kind == "renyi":
        return renyi_epsilon(release.orders, release.epsilons, release.delta), release.delta
    return zcdp_epsilon(release.rho, release.delta), release.delta


def _renyi_at_order(c: Currency, r: Any) -> Vector:
    """A stated Rényi curve at the rdp currency's order: the bound it implies there (:func:`._costs.renyi_at`);
    refused by name above its largest order, where nothing is implied."""
    out = []
    for a in c.options["orders"]:
        alpha = decode(a)
        bound = renyi_at(r.orders, r.epsilons, alpha)
        if bound is None:
            raise ChargeError(f"the rdp currency charges D_α at its order α = {number(alpha)}, and "
                              f"{describe(r)} states nothing there (its largest order is {number(r.orders[-1])}; "
                              "RDP above the stated orders is not implied by them: docs/ledger.md §2.9); "
                              f"state the curve at α = {number(alpha)} or above")
        out.append(bound)
    return _with_basic(c, tuple(out))


#: Why a currency has no charge rule for a kind (the refusal's message names it).
_NO_RULE: dict[tuple[str, str], str] = {
    ("zcdp", "renyi"): "ρ-zCDP needs D_α ≤ αρ at every order α > 1, and a curve stated at finitely many orders "
    "implies nothing above its largest one (docs/ledger.md §2.9); charge it in an rdp ledger, or state its ρ "
    "(zcdp:rho=…) if the mechanism has one",
    ("gdp", "zcdp"): "the GDP filter charges μ² of μ-GDP steps and has no δ to spend on a conversion, and no "
    "μ-GDP bound of an arbitrary ρ-zCDP mechanism is certified here (docs/ledger.md §2.9); charge it in a "
    "zcdp, rdp, approx-zcdp or basic (with delta=…) ledger",
    ("gdp", "renyi"): "the GDP filter charges μ² of μ-GDP steps and has no δ to spend on a conversion, and a "
    "Rényi curve implies no μ-GDP bound (docs/ledger.md §2.9); charge it in an rdp, or an approx-zcdp or "
    "basic ledger with delta=…",
    ("gdp", "discrete_gaussian"): "it is not Δ/σ-GDP — its ε can exceed the Gaussian's at the same σ "
    "(docs/dgauss.md §4) — and no μ-GDP bound of it is certified here, nor has the GDP filter a δ to spend on "
    "a conversion (docs/ledger.md §2.9); charge it in a zcdp, rdp, approx-zcdp or basic (with delta=…) ledger",
}

Charge = Callable[[Currency, Any], Vector]
_CHARGES: dict[str, dict[str, Charge]] = {
    "basic": {
        "pure": lambda c, r: (r.epsilon, Fraction(0)),
        "approx": lambda c, r: (r.epsilon, r.delta),
        "batch": lambda c, r: (_batch_epsilon(r), r.delta),
        "laplace": lambda c, r: (r.epsilon, Fraction(0)),
        "zcdp": lambda c, r: _converted(r, "basic"),
        "renyi": lambda c, r: _converted(r, "basic"),
        "discrete_gaussian": lambda c, r: _converted(r, "basic"),
    },
    "approx-zcdp": {
        "pure": lambda c, r: (r.epsilon**2 / 2, Fraction(0)),
        "approx": lambda c, r: (r.epsilon**2 / 2, r.delta),
        "gaussian": lambda c, r: (r.mu_squared / 2, Fraction(0)),
        "zcdp": lambda c, r: (r.rho, Fraction(0)),
        "batch": lambda c, r: _sum([c.charge(i) for i in r.items]),
        "laplace": lambda c, r: (laplace_zcdp(r.epsilon), Fraction(0)),
        "renyi": lambda c, r: c.charge(ApproxDP(*_converted(r, "approx-zcdp"))),
        "discrete_gaussian": lambda c, r: (r.rho, Fraction(0)),
    },
    "zcdp": {
        "pure": lambda c, r: (r.epsilon**2 / 2,),
        "approx": lambda c, r: c.charge(_no_delta(r, "zcdp")),
        "gaussian": lambda c, r: (r.mu_squared / 2,),
        "zcdp": lambda c, r: (r.rho,),
        "batch": lambda c, r: _sum([c.charge(i) for i in r.items]),
        "laplace": lambda c, r: (laplace_zcdp(r.epsilon),),
        "discrete_gaussian": lambda c, r: (r.rho,),
    },
    "rdp": {
        "pure": lambda c, r: _with_basic(c, tuple(rr_rdp(r.epsilon, decode(a)) for a in c.options["orders"]),
                                         r.epsilon),
        "approx": lambda c, r: c.charge(_no_delta(r, "rdp")),
        "gaussian": lambda c, r: _with_basic(c, tuple(decode(a) * r.mu_squared / 2 for a in c.options["orders"])),
        "zcdp": lambda c, r: _with_basic(c, tuple(decode(a) * r.rho for a in c.options["orders"])),
        "batch": lambda c, r: _sum([c.charge(i) for i in r.items]),
        "laplace": lambda c, r: _with_basic(c, tuple(laplace_rdp(r.epsilon, decode(a)) for a in c.options["orders"]),
                                            r.epsilon),
        "renyi": _renyi_at_order,
        "discrete_gaussian": lambda c, r: _with_basic(c, tuple(decode(a) * r.rho for a in c.options["orders"])),
    },
    "gdp": {
        "pure": lambda c, r: (pure_mu_squared(r.epsilon),),
        "approx": lambda c, r: c.charge(_no_delta(r, "gdp")),
        "gaussian": lambda c, r: (r.mu_squared,),
        "batch": lambda c, r: _sum([c.charge(i) for i in r.items]),
        "laplace": lambda c, r: (pure_mu_squared(r.epsilon),),
    },
}


def bulk_admitted(currency: Currency, release: Release, count: int, spent: Vector | None = None) -> int:
    """How many of ``count`` successive copies of ``release`` a filter admits from ``spent`` (default
    empty): the ledger's exact rule Σ + charge ≤ T, iterated one charge at a time per component — on
    integers scaled by the common denominator, so 10⁶ steps take a fraction of a second — then the
    best of the currency's branches (tests and benchmarks)."""
    s = spent if spent is not None else tuple(Fraction(0) for _ in currency.thresholds)
    ch = currency.charge(release)
    den = math.lcm(*(x.denominator for x in (*s, *ch, *currency.thresholds)))
    per: list[int] = []
    for sj, cj, tj in zip(s, ch, currency.thresholds, strict=True):
        acc, step, top = int(sj * den), int(cj * den), int(tj * den)
        n = 0
        while n < count and acc + step <= top:
            acc += step
            n += 1
            if step == 0:
                n = count
        per.append(n)
    groups = currency.branches or (tuple(range(len(per))),)
    return max(min(per[j] for j in g) for g in groups)

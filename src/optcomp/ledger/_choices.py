"""The ledger's release kinds for choices: bounded-range steps and private selection (issue 34, item 4).

* ``br`` (:class:`BoundedRangeRelease`): one ε-bounded-range step — an exponential-mechanism step, a Gumbel
  noisy max, one round of top-k peeling (Durfee–Rogers 2019). It is ε-DP, and ρ-zCDP with the tight
  ρ = KL_max(ε) = ε/(e^ε − 1) − 1 + ln((e^ε − 1)/ε) ≤ ε²/8 (Cesar–Rogers 2021;
  :func:`optcomp.mechanisms.bounded_range.kl_max`), so the currencies charge: ``basic`` (ε, 0); ``zcdp`` and
  ``approx-zcdp`` ρ = KL_max(ε) (against ε²/2 for a pure-ε box: about 4× less); ``rdp`` at each order α the
  smaller of RR(ε)'s Rényi divergence (every ε-DP mechanism is below it) and α·KL_max(ε) (zCDP), with the pure
  basic branch's ε; ``gdp`` μ(ε)² as any ε-DP release. Every charge is valid under a fully adaptive analyst
  because each is a bound that holds for every member of the BR family, whatever t the analyst picks.
  Optimal composition of BR steps (:mod:`optcomp.adaptive`) is no filter (``docs/ledger.md`` §2.1), so the
  ledger does not use it.
* ``select`` (:class:`SelectionRelease`): the best of K runs of a pure ε₀-DP base, K drawn from a law fixed
  in advance, one candidate released. It is charged as the pure ε-DP release it is: (2 + η)·ε₀ for a
  truncated negative binomial K (Papernot–Steinke 2022 Thm 2's pure case; ``geometric`` η = 1 is
  Liu–Talwar's 3ε₀, ``logarithmic`` η = 0 gives 2ε₀), ε₀ + μ·tanh(ε₀/2) for a Poisson(μ) K (Papernot–Steinke
  Thm 6's pure case) — the pure route of :mod:`optcomp.selection`, here in exact arithmetic.

Charges are exact rationals rounded up (:func:`~optcomp.ledger._exact.up`), computed at enough digits that
the cancellation in KL_max at small ε leaves :data:`~optcomp.ledger._exact.DIGITS` significant ones.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any, ClassVar

import mpmath

from optcomp.ledger import _currency, _release
from optcomp.ledger._exact import DIGITS, Number, decode, encode, exact, up
from optcomp.ledger._release import PureDP, Release
from optcomp.ledger._words import RELEASE_WORDS, ReleaseWords, _value_text
from optcomp.mechanisms import BoundedRange

#: Laws of K with their η (a truncated negative binomial); ``negative-binomial`` takes η from the user.
TNB_LAWS: dict[str, Fraction | None] = {"geometric": Fraction(1), "logarithmic": Fraction(0),
                                        "negative-binomial": None}
#: Every law a ``select`` release names.
LAWS = (*TNB_LAWS, "poisson")


def _nonneg(name: str, value: object) -> Fraction:
    x = exact(name, value)
    if x < 0:
        raise ValueError(f"{name} must be ≥ 0, got {value!r}")
    return x


def _digits(x: Fraction) -> int:
    """Working digits for a value whose leading terms cancel to O(x²): DIGITS plus twice log10(1/x)."""
    return DIGITS + 2 * max(0, math.ceil(math.log10(x.denominator) - math.log10(max(x.numerator, 1))) + 2)


@lru_cache(maxsize=4096)
def br_rho(epsilon: Fraction) -> Fraction:
    """KL_max(ε) = ε/(e^ε − 1) − 1 + ln((e^ε − 1)/ε), the tight zCDP ρ of one ε-BR step, rounded up (and never
    above the exact ε²/8, which bounds it)."""
    if epsilon == 0:
        return Fraction(0)
    with mpmath.workdps(_digits(epsilon)):
        e = mpmath.mpf(epsilon.numerator) / epsilon.denominator
        value = e / mpmath.expm1(e) - 1 + mpmath.log(mpmath.expm1(e) / e)
        return min(up(value), epsilon**2 / 8)


@dataclass(frozen=True, slots=True)
class BoundedRangeRelease(Release):
    """One ε-bounded-range step: an exponential-mechanism step, a Gumbel noisy max, one round of top-k
    peeling (module docstring: its charges and why they hold under adaptivity)."""

    kind: ClassVar[str] = "br"
    epsilon: Fraction

    def __init__(self, epsilon: Number) -> None:
        object.__setattr__(self, "epsilon", _nonneg("epsilon", epsilon))

    @property
    def rho(self) -> Fraction:
        """The tight zCDP ρ = KL_max(ε), rounded up."""
        return br_rho(self.epsilon)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "epsilon": encode(self.epsilon)}


@dataclass(frozen=True, slots=True)
class SelectionRelease(Release):
    """The best of K runs of a pure ε₀-DP base, K ~ ``law`` (module docstring).

    Attributes:
        epsilon: the base's ε₀ ≥ 0.
        law: ``geometric``, ``logarithmic``, ``negative-binomial`` (with ``eta`` > −1) or ``poisson``
            (with ``mean`` > 0).
        parameter: η of a truncated negative binomial, or the Poisson mean μ.
    """

    kind: ClassVar[str] = "select"
    epsilon: Fraction
    law: str
    parameter: Fraction

    def __init__(self, epsilon: Number, law: str, *, eta: Number | None = None, mean: Number | None = None) -> None:
        if law not in LAWS:
            raise ValueError(f"law must be one of {', '.join(LAWS)}, got {law!r}")
        fixed = TNB_LAWS.get(law)
        if law == "poisson":
            if mean is None or eta is not None:
                raise ValueError("a poisson selection takes mean (> 0) and no eta")
            parameter = exact("mean", mean)
            if parameter <= 0:
                raise ValueError(f"mean must be > 0, got {mean!r}")
        elif fixed is not None:
            if mean is not None or (eta is not None and exact("eta", eta) != fixed):
                raise ValueError(f"a {law} selection has η = {fixed} and no mean")
            parameter = fixed
        else:
            if eta is None or mean is not None:
                raise ValueError("a negative-binomial selection takes eta (> −1) and no mean")
            parameter = exact("eta", eta)
            if parameter <= -1:
                raise ValueError(f"eta must be > −1, got {eta!r}")
        object.__setattr__(self, "epsilon", _nonneg("epsilon", epsilon))
        object.__setattr__(self, "law", law)
        object.__setattr__(self, "parameter", parameter)

    @property
    def pure_epsilon(self) -> Fraction:
        """The selection's ε (δ = 0), exact for a negative binomial K, rounded up for a Poisson K."""
        if self.law != "poisson":
            return (2 + self.parameter) * self.epsilon
        with mpmath.workdps(DIGITS):
            e = mpmath.mpf(self.epsilon.numerator) / self.epsilon.denominator
            mu = mpmath.mpf(self.parameter.numerator) / self.parameter.denominator
            return up(e + mu * mpmath.tanh(e / 2))

    def to_json(self) -> dict[str, Any]:
        key = "mean" if self.law == "poisson" else "eta"
        return {"kind": self.kind, "epsilon": encode(self.epsilon), "law": self.law, key: encode(self.parameter)}


def _select_from_json(d: dict[str, Any]) -> SelectionRelease:
    law = str(d["law"])
    return SelectionRelease(d["epsilon"], law, eta=d.get("eta"), mean=d.get("mean"))


def _br_rdp(c: _currency.Currency, r: BoundedRangeRelease) -> _currency.Vector:
    orders = [decode(a) for a in c.options["orders"]]
    rdp = tuple(min(_currency.rr_rdp(r.epsilon, a), a * r.rho) for a in orders)
    return _currency._with_basic(c, rdp, r.epsilon)


def _as_pure(c: _currency.Currency, r: SelectionRelease) -> _currency.Vector:
    return c.charge(PureDP(r.pure_epsilon))


_release._DECODERS.update({"br": lambda d: BoundedRangeRelease(d["epsilon"]), "select": _select_from_json})
for _name, _charge in (
    ("basic", lambda c, r: (r.epsilon, Fraction(0))),
    ("approx-zcdp", lambda c, r: (r.rho, Fraction(0))),
    ("zcdp", lambda c, r: (r.rho,)),
    ("rdp", _br_rdp),
    ("gdp", lambda c, r: (_currency.pure_mu_squared(r.epsilon),)),
):
    _currency._CHARGES[_name]["br"] = _charge
    _currency._CHARGES[_name]["select"] = _as_pure
RELEASE_WORDS.update({
    "br": ReleaseWords("exponential mechanism (ε-bounded range)", (("epsilon", "ε"),)),
    "select": ReleaseWords("best of K runs", render=lambda s: (
        f"best of K runs of a pure ε₀ = {_value_text(s.get('epsilon', '?'))} base, K ~ {s.get('law', '?')}"
        + (f" (μ = {_value_text(s['mean'])})" if "mean" in s else
           f" (η = {_value_text(s['eta'])})" if s.get("law") == "negative-binomial" and "eta" in s else ""))),
})


@_release.from_mechanism.register
def _(mechanism: BoundedRange) -> Release:
    return BoundedRangeRelease(mechanism.epsilon)


__all__ = ["LAWS", "BoundedRangeRelease", "SelectionRelease", "br_rho"]

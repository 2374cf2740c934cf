"""A ledger in the user's words: the one formatter from releases, charges and budgets to text a person reads.

Every table, page and message of the ledger (``optcomp ledger report``/``released``/``charge``/``export``,
the ``/ledger`` page, refusals and conflicts) goes through here; JSON keeps the exact values
(``float.hex`` / ``p/q``) in their own fields and only *adds* these texts beside them.

* :func:`number` — an exact rational as a decimal: exactly when its decimal expansion is short (``1/100`` →
  ``0.01``, ``4`` → ``4``, ``1/1000000`` → ``1e-6``); a double that is not a short decimal by its shortest
  round-trip spelling (the float ``0.1`` → ``0.1``, which reads back as that very double); any other
  rational to ``digits`` significant digits, marked ``≈`` when rounded to nearest, or rounded
  *outwards* (``direction="up"``/``"down"``) when the text is a bound a user may type back (a smallest σ
  shown rounded up still fits).
* :data:`RELEASE_WORDS` — a registry keyed by release kind (``Release.kind``): the mechanism's name and
  its parameters' symbols, so ``gaussian`` with σ = 4, Δ = 1 reads "Gaussian, σ = 4, Δ = 1". A new
  release kind (an exponential mechanism, a Rényi curve, a discrete Gaussian) plugs in with one entry;
  a kind this version does not know is still shown by name with decimal parameters, never as hex.
* :func:`component_symbol` / :func:`amounts` — a currency's components as symbols (ρ, ε, δ, μ², ρ(α = 22))
  with their amounts ("ρ = 0.03125").
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_EVEN, Context, Decimal
from fractions import Fraction
from typing import Any, Literal

from optcomp.ledger._exact import decode

#: Most significant digits an exact decimal may have to be printed exactly (else it is rounded).
EXACT_DIGITS = 15
#: Significant digits of a rounded amount (spent, remaining, thresholds) on the page and in tables.
AMOUNT_DIGITS = 4
#: Most significant digits of a charge printed exactly (a release's charge is often a short exact decimal).
CHARGE_EXACT_DIGITS = 8
#: Significant digits of a "what still fits" bound (σ rounded up, ε rounded down).
FIT_DIGITS = 5
#: Largest denominator printed as a fraction ``p/q`` (a user's ``1/3``) rather than rounded.
SMALL_DENOMINATOR = 1000
#: Plain decimals between these magnitudes; scientific notation (``1e-6``, ``2.5e9``) outside.
_PLAIN = (Fraction(1, 10**4), Fraction(10**9))

Direction = Literal["nearest", "up", "down"]
_ROUNDING = {"nearest": ROUND_HALF_EVEN, "up": ROUND_CEILING, "down": ROUND_FLOOR}


def _terminating(x: Fraction) -> tuple[int, int] | None:
    """(digits, exponent) with x = digits·10^exponent when x is a terminating decimal, else None."""
    d, twos, fives = x.denominator, 0, 0
    while d % 2 == 0:
        d, twos = d // 2, twos + 1
    while d % 5 == 0:
        d, fives = d // 5, fives + 1
    if d != 1:
        return None
    k = max(twos, fives)
    digits = x.numerator * 10**k // x.denominator
    exponent = -k
    while digits and digits % 10 == 0:
        digits, exponent = digits // 10, exponent + 1
    return digits, exponent


def _spell(digits: int, exponent: int) -> str:
    """digits·10^exponent as a plain decimal, or in scientific notation outside :data:`_PLAIN`."""
    sign, text = ("-" if digits < 0 else ""), str(abs(digits))
    value = Fraction(abs(digits)) * Fraction(10) ** exponent
    if digits == 0:
        return "0"
    if _PLAIN[0] <= value < _PLAIN[1]:
        if exponent >= 0:
            return sign + text + "0" * exponent
        point = len(text) + exponent
        return sign + (text[:point] if point > 0 else "0") + "." + ("0" * max(0, -point)) + text[max(0, point):]
    mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
    return f"{sign}{mantissa}e{exponent + len(text) - 1}"


def _rounded(x: Fraction, digits: int, direction: Direction) -> tuple[int, int]:
    ctx = Context(prec=digits, rounding=_ROUNDING[direction])
    d = ctx.divide(Decimal(x.numerator), Decimal(x.denominator))
    t = d.as_tuple()
    mantissa = int("".join(map(str, t.digits))) * (-1 if t.sign else 1)
    exponent = int(t.exponent)
    while mantissa and mantissa % 10 == 0:
        mantissa, exponent = mantissa // 10, exponent + 1
    return mantissa, exponent


def number(value: Fraction | float | str, *, digits: int | None = None, direction: Direction = "nearest",
           exact_digits: int | None = None) -> str:
    """``value`` as a person reads it (module docstring): exact when short, else rounded and marked.

    Args:
        value: a rational, a float, an int, or a stored exact text (``p/q`` or ``float.hex``).
        digits: significant digits of a rounded result; ``None``: a declared parameter (exact if the
            decimal has at most :data:`EXACT_DIGITS` digits, the shortest double spelling, ``p/q`` with a
            small denominator, else 6 digits).
        direction: ``nearest`` (the text is prefixed ``≈`` when it is not exact), ``up`` or ``down``
            (the text is a bound on the safe side, without ``≈``).
        exact_digits: a decimal of at most this many significant digits is printed exactly, not rounded
            to ``digits`` (default: ``digits``, or :data:`EXACT_DIGITS` when ``digits`` is None).
    """
    x = decode(value) if isinstance(value, str) else Fraction(value)
    exact = _terminating(x)
    limit = exact_digits if exact_digits is not None else EXACT_DIGITS if digits is None else digits
    if exact is not None and len(str(abs(exact[0]))) <= limit:
        return _spell(*exact)
    if digits is None:
        as_float = float(x)
        if Fraction(as_float) == x:  # its shortest round-trip spelling, exponent unpadded: 1e-06 → 1e-6
            return re.sub(r"e([+-]?)0*(\d)", lambda m: "e" + m.group(1).replace("+", "") + m.group(2), repr(as_float))
        if x.denominator <= SMALL_DENOMINATOR:
            return f"{x.numerator}/{x.denominator}"
        digits = 6
    text = _spell(*_rounded(x, digits, direction))
    return text if direction != "nearest" else "≈" + text


# --- releases -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReleaseWords:
    """How one release kind reads: ``name`` and its parameters as ``(field, symbol)`` pairs, in order.

    ``render`` replaces the generic "name, symbol = value, …" for kinds that are not a flat list of
    numbers (a batch of releases)."""

    name: str
    parameters: tuple[tuple[str, str], ...] = ()
    render: Callable[[dict[str, Any]], str] | None = None


def _batch_words(spec: dict[str, Any]) -> str:
    items = [describe_spec(i) for i in spec.get("items", [])]
    groups = Counter(items)
    shown = [f"{n} × {text}" if n > 1 else text for text, n in list(groups.items())[:3]]
    more = f"; and {len(groups) - 3} more kinds" if len(groups) > 3 else ""
    return (f"batch of {len(items)} ({'; '.join(shown)}{more}), composed optimally at "
            f"δ = {number(spec.get('delta', '0'))}")


def _share_words(spec: dict[str, Any]) -> str:
    """", δ share = 1e-7" when the release declares the δ an (ε, δ) currency converts it at."""
    return f", δ share = {_value_text(spec['delta'])}" if "delta" in spec else ""


def _renyi_words(spec: dict[str, Any]) -> str:
    n = len(spec.get("orders", []))
    return f"Rényi curve at {n} order{'s' if n != 1 else ''}{_share_words(spec)}"


_NORM_WORDS = {"l1": "ℓ₁", "l2": "ℓ₂", "linf": "ℓ∞"}


def _dgauss_words(spec: dict[str, Any]) -> str:
    text = f"discrete Gaussian, σ = {_value_text(spec.get('sigma', '?'))}, Δ = {_value_text(spec.get('sensitivity', 1))}"
    if spec.get("norm", "l2") != "l2":
        text += f" ({_NORM_WORDS.get(str(spec['norm']), str(spec['norm']))})"
    if "dimension" in spec:
        text += ", any dimension" if spec["dimension"] is None else f", dimension {spec['dimension']}"
    return text + _share_words(spec)


#: Release kind → its words. One entry per kind (``docs/ledger.md``, "Adding a release kind").
RELEASE_WORDS: dict[str, ReleaseWords] = {
    "pure": ReleaseWords("pure DP", (("epsilon", "ε"),)),
    "approx": ReleaseWords("approximate DP", (("epsilon", "ε"), ("delta", "δ"))),
    "gaussian": ReleaseWords("Gaussian", (("sigma", "σ"), ("sensitivity", "Δ"))),
    "zcdp": ReleaseWords("zCDP", (("rho", "ρ"), ("delta", "δ share"))),
    "batch": ReleaseWords("batch", render=_batch_words),
    "laplace": ReleaseWords("Laplace", (("scale", "b"), ("sensitivity", "Δ"))),
    "renyi": ReleaseWords("Rényi curve", render=_renyi_words),
    "discrete_gaussian": ReleaseWords("discrete Gaussian", render=_dgauss_words),
}


def _value_text(value: object) -> str:
    try:
        return number(value if isinstance(value, (int, float, Fraction)) else str(value))
    except (ValueError, ZeroDivisionError, OverflowError, TypeError):
        return str(value)


def describe_spec(spec: object) -> str:
    """A stored release (its JSON object, exact values) in words: "Gaussian, σ = 4, Δ = 1".

    A kind without an entry in :data:`RELEASE_WORDS` is shown by its name and its parameters as
    decimals (never as hexadecimal floats)."""
    if not isinstance(spec, dict):
        return str(spec)
    kind = str(spec.get("kind", "?"))
    words = RELEASE_WORDS.get(kind)
    if words is not None and words.render is not None:
        return words.render(spec)
    if words is None:
        params = [(k, k) for k in spec if k != "kind"]
        name = kind
    else:
        params, name = list(words.parameters), words.name
    parts = [f"{symbol} = {_value_text(spec[field])}" for field, symbol in params if field in spec]
    return ", ".join([name, *parts])


def describe(release: Any) -> str:
    """A release in words (:func:`describe_spec` of ``release.to_json()``): ``PureDP("0.01")`` →
    "pure DP, ε = 0.01"; ``GaussianRelease(4)`` → "Gaussian, σ = 4, Δ = 1"."""
    return describe_spec(release.to_json())


# --- currencies and their components --------------------------------------------------------------

#: Component label → symbol (the rdp order's component, ``alpha=22``, reads ρ(α = 22)).
COMPONENT_SYMBOLS: dict[str, str] = {"epsilon": "ε", "delta": "δ", "rho": "ρ", "mu^2": "μ²",
                                     "non-pure releases": "non-pure releases"}
_ALPHA = re.compile(r"^alpha=(.+)$")

#: Currency name → how its filter reads.
CURRENCY_WORDS: dict[str, str] = {"basic": "basic composition filter", "approx-zcdp": "approximate-zCDP filter",
                                  "zcdp": "zCDP filter", "rdp": "Rényi (RDP) filter", "gdp": "Gaussian DP filter"}


def component_symbol(component: str) -> str:
    """``rho`` → ρ, ``mu^2`` → μ², ``alpha=22`` → ρ(α = 22); an unknown label as it is."""
    m = _ALPHA.match(component)
    if m:
        return f"ρ(α = {m.group(1)})"
    return COMPONENT_SYMBOLS.get(component, component)


def equation(symbol: str, text: str) -> str:
    """"ρ = 0.0625", or "ρ ≈ 0.02565" when ``text`` is a rounded value (it starts with ≈)."""
    return f"{symbol} ≈ {text[1:]}" if text.startswith("≈") else f"{symbol} = {text}"


def amounts(components: Sequence[str], values: Sequence[Fraction], *, digits: int = AMOUNT_DIGITS,
            skip_zero: bool = True) -> str:
    """"ρ = 0.03125" (one ``symbol = amount`` per component, exact up to :data:`CHARGE_EXACT_DIGITS` digits —
    a Gaussian of σ = 8 costs ρ = 0.0078125 —, else to ``digits``; zero components left out unless all
    are zero, which reads "nothing")."""
    parts = [equation(component_symbol(c), number(v, digits=digits, exact_digits=max(digits, CHARGE_EXACT_DIGITS)))
             for c, v in zip(components, values, strict=True) if v or not skip_zero]
    return ", ".join(parts) if parts else "nothing"


def budget_text(epsilon: Fraction, delta: Fraction) -> str:
    """"ε = 2, δ = 1e-6"."""
    return f"ε = {number(epsilon)}, δ = {number(delta)}"


def percent(fraction: Fraction) -> str:
    """A spent fraction as a percentage to 3 significant digits, rounded up ("72.1 %"; "100 %" only when
    all of it is spent; "> 100 %" never happens inside a valid ledger)."""
    if fraction <= 0:
        return "0 %"
    if 999 / Fraction(1000) < fraction < 1:
        return "> 99.9 %"
    return number(fraction * 100, digits=3, direction="up") + " %"

"""Exact numbers for the ledger: parameters stored exactly, charges as rationals, outward rounding.

* :func:`exact` turns a user's number into a :class:`fractions.Fraction` without loss: an ``int``, a
  ``Fraction``, a decimal string (``"0.01"`` is exactly 1/100) or a ``float`` (its exact binary value,
  so ``0.01`` is 0.01000000000000000020816681711721685…, slightly above 1/100).
* :func:`encode` / :func:`decode` store such a number exactly in text: a float as ``float.hex`` (a
  ``"0x…"`` string), any other rational as ``"p/q"``; ``decode(encode(x)) == x`` always.
* :func:`down` / :func:`up` round an mpmath value computed at :data:`DIGITS` significant digits to a
  rational on the conservative side: first moved outwards by the relative margin :data:`MARGIN`
  (10⁻⁴⁰, far above the evaluation error of a well-conditioned formula at 60 digits, ~10⁻⁵⁸), then
  floored (ceiled) on the dyadic grid 2⁻:data:`DYADIC_BITS`. Transcendental thresholds and charges are
  rounded once, at creation or at charge time, so admission itself is an exact rational comparison.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

import mpmath

#: Working precision (decimal digits) of every transcendental threshold or charge.
DIGITS: int = 60
#: Relative outward margin applied before rounding to a rational (covers mpmath's evaluation error): the
#: double nearest 1e-40, exactly, whatever mpmath's precision at import. (It was ``mpf(10) ** -40`` at the
#: ambient precision of the import: a process that had set ``mpmath.mp.dps = 50`` first got another margin
#: and rounded some charges onto another point of the 2^-192 grid, which verify() in a default process
#: then refused. The double is the value every default-precision process had.)
MARGIN: mpmath.mpf = mpmath.mpf(1e-40)
#: Rounded values live on the dyadic grid 2^-DYADIC_BITS (keeps Fraction arithmetic small and fast).
DYADIC_BITS: int = 192

_DECIMAL = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
_RATIO = re.compile(r"^[+-]?\d+/\d+$")

Number = int | float | Fraction | str


def exact(name: str, value: object) -> Fraction:
    """``value`` as an exact rational; ``ValueError`` naming ``name`` for NaN, ±inf, bool or junk.

    Args:
        name: the parameter's name, for the error message.
        value: ``int``, ``float`` (its exact binary value), ``Fraction``, or a string: decimal
            (``"0.01"``, ``"2e-5"``), a ratio ``"p/q"`` or a ``float.hex`` string.
    """
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a finite number, got {value!r}")  # noqa: TRY004 (STYLE: ValueError)
    if isinstance(value, Fraction):
        return value
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{name} must be a finite number, got {value!r}")
        return Fraction(value)
    if isinstance(value, str):
        s = value.strip()
        if s.lower().lstrip("+-").startswith("0x"):
            try:
                return Fraction(float.fromhex(s))
            except (ValueError, OverflowError):
                pass
        elif _DECIMAL.match(s) or (_RATIO.match(s) and not s.endswith("/0")):
            return Fraction(s)
        raise ValueError(f"{name} must be a finite number (decimal, p/q or float.hex), got {value!r}")
    raise ValueError(f"{name} must be a finite number, got {value!r}")


def encode(x: Fraction) -> str:
    """Exact text form of ``x``: ``float.hex`` when ``x`` is a double, else ``"p/q"`` (or ``"p"``)."""
    try:
        f = float(x)
    except OverflowError:
        f = math.inf
    if math.isfinite(f) and Fraction(f) == x:
        return f.hex()
    return str(x)


def decode(s: str) -> Fraction:
    """Inverse of :func:`encode` (also accepts anything :func:`exact` accepts)."""
    return exact("stored value", s)


def _to_mpf(x: object) -> mpmath.mpf:
    with mpmath.workdps(DIGITS):
        return mpmath.mpf(x)


def down(x: object) -> Fraction:
    """A rational ≤ x: x (an mpmath value at :data:`DIGITS` digits) moved down by :data:`MARGIN`
    relatively, floored on the grid 2^-:data:`DYADIC_BITS`."""
    with mpmath.workdps(DIGITS):
        v = _to_mpf(x)
        v = v - abs(v) * MARGIN
        return Fraction(int(mpmath.floor(v * mpmath.mpf(2) ** DYADIC_BITS)), 2**DYADIC_BITS)


def up(x: object) -> Fraction:
    """A rational ≥ x (mirror of :func:`down`)."""
    with mpmath.workdps(DIGITS):
        v = _to_mpf(x)
        v = v + abs(v) * MARGIN
        return Fraction(int(mpmath.ceil(v * mpmath.mpf(2) ** DYADIC_BITS)), 2**DYADIC_BITS)


def mpf(x: Fraction) -> mpmath.mpf:
    """``x`` as an mpmath number at :data:`DIGITS` digits (p/q divided at that precision)."""
    with mpmath.workdps(DIGITS):
        return mpmath.mpf(x.numerator) / x.denominator

"""The ledger's one formatter (:mod:`optcomp.ledger._words`, issue 36): releases and amounts as a person reads
them — decimal, exact where the value is exact, a stored double read back as the very double, a bound
rounded on the safe side — and one entry per release kind in the registry, never a hexadecimal float."""

from __future__ import annotations

import math
import re
from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from optcomp.ledger import (
    RELEASE_WORDS,
    ApproxDP,
    BatchRelease,
    BoundedRangeRelease,
    DiscreteGaussianRelease,
    GaussianRelease,
    LaplaceRelease,
    PureDP,
    RenyiRelease,
    SelectionRelease,
    ZCDPRelease,
    describe,
    describe_spec,
    encode,
    number,
)
from optcomp.ledger._release import _DECODERS

HEX_FLOAT = re.compile(r"0x[0-9a-f]+(\.[0-9a-f]*)?p[+-]?\d+", re.IGNORECASE)

#: One release of every kind, its parameters given as floats (stored as float.hex), and how it reads.
EXAMPLES: list[tuple[Any, str]] = [
    (PureDP(0.5), "pure DP, ε = 0.5"),
    (ApproxDP(0.1, 1e-7), "approximate DP, ε = 0.1, δ = 1e-7"),
    (GaussianRelease(4.0), "Gaussian, σ = 4, Δ = 1"),
    (GaussianRelease(7.3, sensitivity=0.5), "Gaussian, σ = 7.3, Δ = 0.5"),
    (ZCDPRelease(0.01, delta=1e-9), "zCDP, ρ = 0.01, δ share = 1e-9"),
    (LaplaceRelease(20.0), "Laplace, b = 20, Δ = 1"),
    (RenyiRelease([2.0, 8.0], [0.1, 0.5]), "Rényi curve at 2 orders"),
    (DiscreteGaussianRelease(30.0, 2, dimension=3), "discrete Gaussian, σ = 30, Δ = 2, dimension 3"),
    (BatchRelease([PureDP(0.1)] * 3 + [ApproxDP(0.2, 1e-8)], 1e-6),
     "batch of 4 (3 × pure DP, ε = 0.1; approximate DP, ε = 0.2, δ = 1e-8), composed optimally at δ = 1e-6"),
    (BoundedRangeRelease(0.25), "exponential mechanism (ε-bounded range), ε = 0.25"),
    (SelectionRelease(0.1, "poisson", mean=3.0), "best of K runs of a pure ε₀ = 0.1 base, K ~ poisson (μ = 3)"),
]


def test_every_release_kind_has_one_entry_in_the_registry() -> None:
    """The registry covers every kind the ledger stores (the decoders' keys, ``_choices`` included)."""
    assert set(_DECODERS) <= set(RELEASE_WORDS)
    assert {type(r).kind for r, _ in EXAMPLES} == set(_DECODERS)


@pytest.mark.parametrize(("release", "words"), EXAMPLES, ids=[type(r).__name__ for r, _ in EXAMPLES])
def test_each_kind_reads_in_decimals(release: Any, words: str) -> None:
    assert describe(release) == words and not HEX_FLOAT.search(words)
    assert HEX_FLOAT.search(str(release.to_json())) or type(release).kind in ("renyi", "batch")  # stored exact


def test_an_unknown_kind_is_still_decimal() -> None:
    """A kind this version does not know (a newer ledger's) reads by its name with decimal parameters."""
    text = describe_spec({"kind": "future", "epsilon": encode(Fraction(0.3)), "rate": "1/3"})
    assert text == "future, epsilon = 0.3, rate = 1/3"


@pytest.mark.parametrize(("value", "text"), [
    (Fraction(1, 100), "0.01"), (4, "4"), (Fraction(1, 10**6), "1e-6"), (0.1, "0.1"), ("0x1.999999999999ap-4", "0.1"),
    ("0x1.0000000000000p+2", "4"), (Fraction(1, 3), "1/3"), (2.5e9, "2.5e9"), (5e-324, "5e-324"), (1e300, "1e300"),
    (Fraction(10**20 + 1, 10**20), "≈1"), (0, "0"),
])
def test_declared_values_read_exactly(value: Any, text: str) -> None:
    assert number(value) == text


@given(st.floats(min_value=0, allow_nan=False, allow_infinity=False))
def test_a_stored_double_reads_back_as_that_double(x: float) -> None:
    """A parameter stored as float.hex is shown by a decimal that parses to the very same double."""
    text = number(x.hex())
    assert float(text) == x and not text.startswith("≈") and not HEX_FLOAT.search(text)


@given(st.fractions(min_value=Fraction(1, 10**12), max_value=Fraction(10**8)), st.integers(2, 8))
def test_bounds_are_rounded_on_the_safe_side(x: Fraction, digits: int) -> None:
    """``up`` never shows less than the value and ``down`` never more, each within one unit of the last
    digit shown (a smallest σ shown rounded up still fits; a largest ε shown rounded down still fits)."""
    up = Fraction(Decimal(number(x, digits=digits, direction="up")))
    down = Fraction(Decimal(number(x, digits=digits, direction="down")))
    unit = Fraction(10) ** (math.ceil(math.log10(x)) - digits + 1)  # the last digit's unit, or 10× it
    assert down <= x <= up and up - x < unit and x - down < unit

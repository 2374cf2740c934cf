"""optcomp.compose: validation, and end-to-end brackets around exact closed forms."""

from __future__ import annotations

import math

import pytest

import optcomp
from optcomp import Gaussian, compose


@pytest.mark.parametrize("count", [0, -1, 1.5, True, math.nan])
def test_count_validation(count: object) -> None:
    with pytest.raises(ValueError, match="count"):
        compose((Gaussian(1.0), count))


def test_empty_and_malformed_items() -> None:
    with pytest.raises(ValueError, match="at least one"):
        compose()
    with pytest.raises(ValueError, match="pair"):
        compose((Gaussian(1.0), 2, 3))
    with pytest.raises(TypeError, match="mechanism"):
        compose(["not", "hashable"])
    with pytest.raises(TypeError, match="accuracy"):
        compose(Gaussian(1.0), accuracy=1e-4)  # type: ignore[arg-type]


def test_compose_is_exported() -> None:
    assert optcomp.compose is compose

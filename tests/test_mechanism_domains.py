"""Declared parameter domains: every mechanism validates exactly its declared domains.

Valid draws (from the domain itself, ``tests/strategies.py``) construct; invalid ones raise a
``ValueError`` naming the parameter, its range and the value. Also: the call convention (the defining
parameter positional, the rest keyword-only) and the lazy submodules of ``import optcomp``.
"""

from __future__ import annotations

import dataclasses
import importlib
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import optcomp
from optcomp.mechanisms import (
    DiscreteGaussian,
    DiscreteLaplace,
    EpsilonDelta,
    Gaussian,
    KaryRandomizedResponse,
    Laplace,
    Mechanism,
    PoissonSubsampled,
    RandomizedResponse,
    ShiftedTruncatedLaplace,
    SubsampledWithoutReplacement,
    TruncatedLaplace,
)
from tests.strategies import invalid, valid

#: Each specification class with one valid value for every field (the baseline a draw perturbs).
BASELINES: dict[type, dict[str, Any]] = {
    Gaussian: {"sigma": 1.0, "sensitivity": 1.0},
    Laplace: {"scale": 1.0, "sensitivity": 1.0},
    TruncatedLaplace: {"scale": 1.0, "truncation": 2.0, "sensitivity": 1.0},
    DiscreteLaplace: {"scale": 1.0, "sensitivity": 1},
    DiscreteGaussian: {"sigma": 1.0, "sensitivity": 1.0, "dimension": 1, "norm": "l2", "shift": None},
    ShiftedTruncatedLaplace: {"scale": 2.0, "mean": 10.0, "sensitivity": 1},
    EpsilonDelta: {"epsilon": 1.0, "delta": 1e-3},
    RandomizedResponse: {"epsilon": 1.0},
    KaryRandomizedResponse: {"epsilon": 1.0, "k": 3},
    PoissonSubsampled: {"mechanism": Gaussian(1.0), "sampling_rate": 0.1},
    SubsampledWithoutReplacement: {"mechanism": Gaussian(1.0), "sampling_rate": 0.1},
}
FIELDS = [(cls, name) for cls in BASELINES for name in cls.domains]


def build(cls: type, values: dict[str, Any]) -> Any:
    """Construct with the defining (first) field positional and the rest as keywords."""
    first, *rest = (f.name for f in dataclasses.fields(cls) if f.init)
    return cls(values[first], **{name: values[name] for name in rest})


def test_every_declared_field_exists_and_baselines_construct() -> None:
    for cls, values in BASELINES.items():
        names = {f.name for f in dataclasses.fields(cls) if f.init}
        assert set(cls.domains) <= names, cls
        assert isinstance(build(cls, values), Mechanism)


@pytest.mark.parametrize(("cls", "name"), FIELDS, ids=lambda x: getattr(x, "__name__", x))
@given(data=st.data())
def test_values_in_the_declared_domain_construct(cls: type, name: str, data: st.DataObject) -> None:
    value = data.draw(valid(cls.domains[name]))
    if cls is TruncatedLaplace and name == "sensitivity":
        value = min(value, 1e3)  # keep the law cheap; any positive value is valid
    mechanism = build(cls, {**BASELINES[cls], name: value})
    assert getattr(mechanism, name) == value


@pytest.mark.parametrize(("cls", "name"), FIELDS, ids=lambda x: getattr(x, "__name__", x))
@given(data=st.data())
def test_values_outside_the_declared_domain_are_named_value_errors(
    cls: type, name: str, data: st.DataObject
) -> None:
    value = data.draw(invalid(cls.domains[name]))
    with pytest.raises(ValueError, match=rf"^{name} must be .*, got ") as info:
        build(cls, {**BASELINES[cls], name: value})
    assert str(cls.domains[name]) in str(info.value)


@pytest.mark.parametrize("cls", [c for c in BASELINES if len(c.domains) > 1], ids=lambda c: c.__name__)
def test_only_the_defining_parameter_is_positional(cls: type) -> None:
    values = BASELINES[cls]
    fields = [f.name for f in dataclasses.fields(cls) if f.init]
    with pytest.raises(TypeError, match="positional"):
        cls(*(values[name] for name in fields))


def test_keyword_parameters_read_back_and_sensitivity_is_never_positional() -> None:
    assert Laplace(10.0, sensitivity=2.0).epsilon == 0.2
    assert EpsilonDelta(0.5, delta=1e-6).delta == 1e-6
    assert TruncatedLaplace(1.0, truncation=3.0).truncation == 3.0
    with pytest.raises(TypeError):
        Laplace(1.0, 2.0)  # type: ignore[misc]  # the sensitivity is never set by position


@pytest.mark.parametrize("name", ["bounds", "calibrate", "dpsgd", "fdp", "mechanisms", "optimal", "pld", "region"])
def test_submodules_are_attributes_of_a_fresh_import(name: str) -> None:
    code = f"import optcomp, types; assert isinstance(optcomp.{name}, types.ModuleType)"
    subprocess.run([sys.executable, "-c", code], check=True, env=None)


def test_unknown_attribute_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_thing"):
        optcomp.no_such_thing  # noqa: B018
    assert importlib.import_module("optcomp.dpsgd") is optcomp.dpsgd

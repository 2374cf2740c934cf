"""The one mechanism-name table: the CLI's ``--mech`` kinds, the planner's ``mechanism`` names and the
planner page's menu are all read from ``optcomp.mechanisms.MECHANISM_NAMES``.

(The page as a browser draws it: ``tests/test_web_browser.py::test_mechanism_menu_is_the_table``.)
"""

from __future__ import annotations

import re
import warnings
from importlib import resources
from typing import Any, get_args

import pytest
from click.testing import CliRunner

from optcomp import mechanisms
from optcomp.cli._common import cli
from optcomp.cli.account import KINDS, build_item
from optcomp.mechanisms import MECHANISM_NAMES, mechanism_spellings, planner_mechanisms
from optcomp.planner import plan_from_dict
from optcomp.planner._schema import MECHANISM_ALIASES, MECHANISMS, MechanismName

#: The least parameters that build each entry's mechanism (a new entry needs one here).
EXAMPLE_KEYS: dict[str, dict[str, Any]] = {
    "laplace": {"scale": 2.0},
    "gaussian": {"sigma": 1.5},
    "discrete_laplace": {"scale": 2.0},
    "epsdelta": {"eps": 0.5, "delta": 1e-6},
    "rr": {"eps": 0.5},
    "staircase": {"eps": 0.5},
    "dgauss": {"sigma": 1.5},
    "zcdp": {"rho": 0.5},
    "renyi": {"orders": [2.0, 4.0], "epsilons": [0.5, 1.0]},
    "exponential": {"eps": 0.1},
    "permute_and_flip": {"eps": 0.5},
    "laplace_noisy_max": {"eps": 0.5},
}


def _plan(mechanism: str) -> dict[str, Any]:
    stat: dict[str, Any] = {"name": "n", "kind": "count", "mechanism": mechanism}
    entry = mechanism_spellings().get(mechanism)
    if entry is not None and entry.name == "exponential":  # the exponential mechanism releases a quantile
        stat = {**stat, "kind": "quantile", "candidates": 10}
    return {"epsilon": 1.0, "delta": 1e-6, "statistics": [stat]}


def test_table_is_well_formed() -> None:
    assert [e.name for e in MECHANISM_NAMES] == list(EXAMPLE_KEYS)
    spellings = [s for e in MECHANISM_NAMES for s in (e.name, *e.aliases)]
    assert len(spellings) == len(set(spellings)), "a spelling names two mechanisms"
    for e in MECHANISM_NAMES:
        assert getattr(mechanisms, e.spec.__name__) is e.spec  # a public class of optcomp.mechanisms
        assert all(re.fullmatch(r"[a-z][a-z_]*", s) for s in (e.name, *e.aliases))
        assert e.label and e.keys


def test_cli_kinds_are_the_table() -> None:
    assert KINDS == {s: e.spec.__name__ for s, e in mechanism_spellings().items()}
    for e in MECHANISM_NAMES:
        for spelling in (e.name, *e.aliases, e.name.upper()):
            mech, count = build_item({"kind": spelling, **EXAMPLE_KEYS[e.name], "count": 3})
            assert type(mech) is e.spec and count == 3
    with pytest.raises(ValueError, match="mechanism kind must be one of " + ", ".join(sorted(KINDS))):
        build_item({"kind": "exponentially"})


def test_cli_help_lists_every_spelling() -> None:
    text = CliRunner().invoke(cli, ["account", "--help"], terminal_width=200).output
    for e in MECHANISM_NAMES:
        assert re.search(rf"^\s+{e.name}\s+{re.escape(e.keys)}$", text, re.MULTILINE), e.name
        for alias in e.aliases:
            assert re.search(rf"^\s+{alias}\s+the same as {e.name}$", text, re.MULTILINE), alias


def test_planner_names_are_the_tables_planner_entries() -> None:
    offered = [e for e in MECHANISM_NAMES if e.planner]
    assert tuple(e.name for e in offered) == MECHANISMS == get_args(MechanismName)
    assert MECHANISM_ALIASES == {a: e.name for e in offered for a in e.aliases}
    assert planner_mechanisms() == tuple(offered)
    for e in offered:
        for spelling in (e.name, *e.aliases):
            assert plan_from_dict(_plan(spelling)).statistics[0].mechanism == e.name
    for e in MECHANISM_NAMES:
        if not e.planner:
            with pytest.raises(ValueError, match="field 'mechanism' must be one of " + ", ".join(MECHANISMS)):
                plan_from_dict(_plan(e.name))


def test_web_menu_comes_from_the_table() -> None:
    pytest.importorskip("starlette")
    pytest.importorskip("httpx")
    with warnings.catch_warnings():  # starlette's note that its TestClient will move to httpx2
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient
    from optcomp.web import create_app

    got = TestClient(create_app()).get("/api/mechanisms")
    assert got.status_code == 200
    assert got.json() == {"ok": True, "mechanisms": [
        {"name": e.name, "label": e.label, "aliases": list(e.aliases)} for e in MECHANISM_NAMES if e.planner]}
    script = (resources.files("optcomp.web") / "static" / "app.js").read_text(encoding="utf-8")
    for e in MECHANISM_NAMES:  # the page spells no label: its menu is what the server sends
        assert f'"{e.label}"' not in script, e.label

"""The command line starts without the numerical stack (issue 27, item 16): ``import optcomp``,
``import optcomp.cli``, ``optcomp --help`` and ``optcomp --version`` import no numpy, scipy or mpmath
and no command module; each command's module loads when that command runs. Checked on ``sys.modules`` in
a fresh interpreter, not timed (no timed unit tests: the measured start-up times are in the report).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from optcomp.cli import COMMANDS, _register
from optcomp.cli._common import cli

HEAVY = ("numpy", "scipy", "mpmath", "matplotlib")
SRC = str(Path(__file__).resolve().parents[1] / "src")

_PROBE = """
import contextlib, io, json, sys
{body}
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in {heavy!r} or m.startswith("optcomp."))))
"""


def _loaded_after(body: str) -> list[str]:
    """The heavy and optcomp modules loaded in a fresh interpreter after running ``body``."""
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    code = _PROBE.format(body=body, heavy=HEAVY)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    loaded: list[str] = json.loads(out.splitlines()[-1])
    return loaded


def _heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if m.split(".")[0] in HEAVY]


def _run_cli(*args: str) -> str:
    return f"""
from optcomp.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    status = main({list(args)!r})
assert status == 0, status
"""


@pytest.mark.parametrize("body", ["import optcomp", "import optcomp.cli", _run_cli("--version"), _run_cli("--help")],
                         ids=["import optcomp", "import optcomp.cli", "--version", "--help"])
def test_start_up_imports_no_numerical_stack(body: str) -> None:
    loaded = _loaded_after(body)
    assert _heavy(loaded) == [], f"{body!r} imported {_heavy(loaded)[:5]}"
    commands = sorted({module for module, _ in COMMANDS.values()} & set(loaded))
    assert commands == [], f"{body!r} imported command modules {commands}"


def test_a_command_loads_only_its_own_module() -> None:
    loaded = _loaded_after(_run_cli("compose", "--eps", "0.1", "--delta", "0", "-k", "10", "--target-delta", "1e-6"))
    assert "optcomp.cli.compose" in loaded
    others = sorted({module for module, _ in COMMANDS.values()} - {"optcomp.cli.compose"} & set(loaded))
    assert others == [], f"compose imported {others}"


def test_the_registry_matches_the_commands() -> None:
    """Every command is registered under the module that defines it, with its own first sentence as the
    line ``optcomp --help`` shows before the module is loaded."""
    _register()
    ctx = cli.make_context("optcomp", ["--help"], resilient_parsing=True)
    assert set(cli.commands) == set(COMMANDS), "a command is defined but not in optcomp.cli.COMMANDS (or vice versa)"
    for name, (module, line) in COMMANDS.items():
        command = cli.get_command(ctx, name)
        assert command is not None and command.callback is not None
        assert command.callback.__module__ == module or getattr(command, "commands", None) is not None, name
        assert command.get_short_help_str(limit=1000) == line, f"COMMANDS[{name!r}] differs from the command's help"


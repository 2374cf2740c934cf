"""``make test`` on a fresh machine (issue 32, item 3): what it runs, what it installs, and what CI adds.

* README opens with exactly the two set-up commands, and neither it nor the Makefile calls ``make test``'s suite
  "the whole suite" (it is the fast one: not ``slow``);
* ``make test`` and ``.ci/run`` get Chromium and PostgreSQL from one script, ``.ci/system-deps`` (installed as root,
  named otherwise), so a user's ``make test`` runs the browser and PostgreSQL tests as CI does;
* ``.ci/run`` runs the numerics-sensitive tests (marked ``numerics``) again under ``OPENBLAS_CORETYPE=Prescott``.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import NUMERICS_FILES

ROOT = Path(__file__).resolve().parents[1]


def _target(makefile: str, name: str) -> tuple[list[str], list[str]]:
    """(prerequisites, recipe lines) of a Makefile target."""
    m = re.search(rf"^{re.escape(name)}:([^\n]*)\n((?:\t[^\n]*\n)*)", makefile, re.MULTILINE)
    assert m, f"no target {name}"
    return m.group(1).split(), [line.strip() for line in m.group(2).splitlines()]


def test_readme_opens_with_the_two_commands_and_names_the_fast_suite() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first_block = readme.split("```")[1].strip().splitlines()
    assert [line.split("#")[0].strip() for line in first_block] == ["make demo", "make test"]
    assert "not `slow`" in first_block[1] or "fast suite" in first_block[1]
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for name, text in (("README.md", readme), ("Makefile", makefile)):
        assert not re.search(r"make test[^\n]*whole suite", text), f"{name} says make test runs the whole suite"


def test_make_test_and_ci_share_one_system_deps_script() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    prerequisites, _ = _target(makefile, "test")
    assert "system-deps" in prerequisites and "lint" in prerequisites
    _, recipe = _target(makefile, "system-deps")
    assert any(".ci/system-deps" in line for line in recipe)
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^make test$", ci, re.MULTILINE) and "apt-get" not in ci  # installs only through make test
    script = ROOT / ".ci" / "system-deps"
    assert os.access(script, os.X_OK)
    text = script.read_text(encoding="utf-8")
    assert "chromium" in text and "postgresql" in text and "==" not in text  # Debian's packages, nothing pinned


def test_system_deps_installs_or_names_the_packages(tmp_path: Path) -> None:
    """As a user without root or sudo: exit 0, and either nothing is missing (silent) or one line names the
    Debian packages and the command that installs them."""
    stub = tmp_path / "bin"
    stub.mkdir()
    (stub / "id").write_text("#!/bin/sh\necho 1000\n", encoding="utf-8")
    (stub / "id").chmod(0o755)
    for tool in ("ls", "env"):
        real = next((Path(d) / tool for d in ("/usr/bin", "/bin") if (Path(d) / tool).exists()), None)
        if real is not None:
            (stub / tool).symlink_to(real)
    out = subprocess.run(["/bin/bash", str(ROOT / ".ci" / "system-deps")], env={"PATH": str(stub)},
                         capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 0, out.stderr
    if out.stderr:
        assert out.stderr.count("\n") == 1 and "apt-get install" in out.stderr, out.stderr
        assert re.search(r"\b(chromium|postgresql)\b", out.stderr)


def test_ci_runs_the_numerics_tests_under_a_second_kernel() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"OPENBLAS_CORETYPE=Prescott .*pytest[^\n]*-m \"numerics and not slow\"", ci)
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '"numerics:' in pyproject
    missing = sorted(name for name in NUMERICS_FILES if not (ROOT / "tests" / name).exists())
    assert not missing, missing


@pytest.mark.skipif(os.geteuid() != 0 or "MAKELEVEL" not in os.environ,
                    reason="checked under `make test` as root, which installs the packages first (it names them otherwise)")
def test_as_root_make_test_has_installed_chromium_and_postgresql() -> None:
    """Under ``make test`` as root, its system-deps step ran first: Chromium and initdb are present, so the
    browser and PostgreSQL tests are not skipped for want of them."""
    from tests.test_web_browser import _chromium

    assert _chromium() is not None
    from tests.conftest import _pg_bindir

    assert _pg_bindir() is not None

"""The README and docs say what the code does (issue 27, item 15).

Every Python snippet of README.md and of the docs listed in :data:`DOCS` runs, and every value it shows
with ``# → VALUE`` is compared with the computed one; every ``$ optcomp ...`` example whose output is
shown runs and its output is compared with the lines shown. The conventions and tolerances are in
``tests/_doc_snippets.py``. Timings are not re-measured: every time quoted in the README must be a cell
of a ``benchmarks/RESULTS*.md`` file (where the README says its numbers come from).

A failure names the document, the line, the statement or command, and the value that differs; several
are reported at once.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests._doc_snippets import fences, run_console, run_python, write_named_files

ROOT = Path(__file__).resolve().parents[1]

#: The documents checked (README.md and the docs whose snippets show values).
#: docs/ledger.md is not listed: its snippet is a sketch (``noisy_count(data)``) and the ledger's docs are
#: being rewritten (issue 27, items A, B, 8, 13).
DOCS = ["README.md", "docs/fdp.md", "docs/interop.md", "docs/optimal.md", "docs/planner.md", "docs/pld.md"]

#: Python snippets that need an optional package: skipped, with the reason, where it is missing.
NEEDS = {"dp_accounting": "the interop extra (dp-accounting)", "opacus": "Opacus", "torch": "PyTorch"}


def _check_document(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    path = ROOT / name
    monkeypatch.chdir(tmp_path)  # files a snippet writes (run.json, a ledger) land here, not in the tree
    monkeypatch.setenv("COLUMNS", "80")  # rich tables are drawn as the docs show them
    monkeypatch.syspath_prepend(str(ROOT))
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    namespace: dict[str, Any] = {"__name__": "__doc_snippet__"}
    failures: list[str] = []
    for block in fences(path):
        if block.lang == "python":
            missing = [p for p in NEEDS if re.search(rf"^\s*(from|import) {p}\b", block.text, re.MULTILINE)
                       and not _importable(p)]
            if missing:
                continue
            failures += run_python(block, namespace, name)
        elif block.lang == "console":
            failures += run_console(block, name, skip=_shows_a_missing_package)
        elif block.lang in ("toml", "json"):
            write_named_files(block)
    return failures


def _shows_a_missing_package(shown: str) -> bool:
    """An example whose output shows an optional package's answer, where that package is not installed."""
    return any(package in shown and not _importable(package) for package in NEEDS)


def _importable(package: str) -> bool:
    try:
        __import__(package)
    except ImportError:
        return False
    return True


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", DOCS)
def test_snippets_show_what_the_code_computes(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    failures = _check_document(name, tmp_path, monkeypatch)
    assert not failures, f"{len(failures)} snippet value(s) in {name} differ from the code:\n\n" + "\n\n".join(failures)


# ---------------------------------------------------------------------------------------------
# Timings: cells of benchmarks/RESULTS*.md
# ---------------------------------------------------------------------------------------------

_TIME = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s?(ms|s)\b")


def _benchmark_cells() -> set[str]:
    """The numbers in the table rows of benchmarks/RESULTS*.md."""
    cells: set[str] = set()
    for path in sorted((ROOT / "benchmarks").glob("RESULTS*.md")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("|"):
                cells.update(re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?![\d.]*e)", line))
    return cells


def _quotes_a_cell(value: str, cells: set[str]) -> bool:
    """``value`` is a cell, or a cell rounded to ``value``'s decimals (0.62 quotes 0.623)."""
    decimals = len(value.partition(".")[2])
    return value in cells or any(len(c.partition(".")[2]) > decimals and f"{float(c):.{decimals}f}" == value
                                 for c in cells)


def test_readme_timings_are_benchmark_cells() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    cells = _benchmark_cells()
    missing = [f"README.md:{text.count(chr(10), 0, m.start()) + 1}: {m.group(1)} {m.group(2)}"
               for m in _TIME.finditer(text) if not _quotes_a_cell(m.group(1), cells)]
    assert not missing, "timings quoted in README.md that are not a cell of benchmarks/RESULTS*.md:\n" + "\n".join(missing)


# ---------------------------------------------------------------------------------------------
# The comparison rules themselves
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("shown", "computed", "ok"),
    [
        ("Bound(19.34467145, 19.34467145)", "Bound(lower=19.344671447940, upper=19.344671448030)", True),
        ("Bound(96.71582795, …)", "Bound(lower=96.71582795347035, upper=96.71582795413079)", True),
        ("(21.618…, 1e-06)", "(21.61841885847918, 1e-06)", True),
        ("(21.618…, 1e-06)", "(21.61841885847918, 1.0000000000000019e-06)", False),  # exact without a '.'
        ("(21.619…, 1e-06)", "(21.61841885847918, 1e-06)", False),
        ("0.728500793…", "0.7285007935686504", True),
        ("Bound(1.63231, 1.63244)", "Bound(lower=1.632311202, upper=1.63245)", True),  # one unit of the last digit
        ("Bound(1.63231, 1.63244)", "Bound(lower=1.632311202, upper=1.632455)", False),  # 1.5 units
        ("engine pld", "engine grid", False),
        ("[inf, inf]", "Bound(lower=inf, upper=inf)", True),
    ],
)
def test_comparison_rules(shown: str, computed: str, ok: bool) -> None:
    from tests._doc_snippets import compare

    assert (compare(shown, computed) is None) is ok, compare(shown, computed)

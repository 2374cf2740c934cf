"""The README and docs say what the code does (issue 27, item 15).

Every Python snippet of README.md and of the docs listed in :data:`DOCS` runs, and every value it shows
with ``# → VALUE`` is compared with the computed one; every ``$ optcomp ...`` example whose output is
shown runs and its output is compared with the lines shown. The conventions and tolerances are in
``tests/_doc_snippets.py``. Timings are not re-measured: every time quoted in the README or in docs/*.md
must be a cell of a ``benchmarks/RESULTS*.md`` file (where the README says its numbers come from) — of
the RESULTS file its paragraph names, where it names one — unless :data:`NOT_MEASURED` lists it as a
setting or a target; a table copied from a RESULTS file (same header row) has only that file's rows.

A failure names the document, the line, the statement or command, and the value that differs; several
are reported at once.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

import pytest

from tests._doc_snippets import fences, run_console, run_python, write_named_files

ROOT = Path(__file__).resolve().parents[1]

#: The documents checked (README.md and the docs whose snippets show values).
#: docs/ledger.md is not listed: its snippet is a sketch (``noisy_count(data)``) and the ledger's docs are
#: being rewritten (issue 27, items A, B, 8, 13).
DOCS = ["README.md", "docs/dgauss.md", "docs/fdp.md", "docs/interop.md", "docs/optimal.md", "docs/planner.md", "docs/pld.md",
        "docs/private-selection.md", "docs/rdp.md",
        "docs/selection.md"]

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

#: A time quoted in prose or a table: a number (or a range ``2–5.6``, both ends checked) and a unit.
_TIME = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?:\s?[–-]\s?(\d+(?:\.\d+)?))?\s?(ms|s|min|minutes?|seconds?)\b")

#: A time in the prose of a RESULTS file (a script's own summary lines, e.g. RESULTS_sweep.md's).
_RESULTS_PROSE_TIME = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s?(?:ms|s)\b")

#: The documents whose timings are checked: the README and every page of docs/.
TIMED_DOCS = ["README.md", *sorted(f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md"))]

#: Times that are settings, limits or targets, not measurements (the phrase that states it, and why); only
#: that phrase is exempt, other times on its line are checked.
NOT_MEASURED = {
    "docs/ledger.md": {"a 60 s busy timeout": "SQLite's busy timeout, a setting",
                       "≤ 10 s on SQLite": "the issue's target"},
    "docs/optimal.md": {"> 120 s refused": "the MV cost-estimate limit", "(refused above 120 s)": "the same limit"},
    "docs/planner.md": {"debounced by 250 ms": "the page's debounce, a setting",
                        "time limit of 30 s": "the server's per-request limit, a setting"},
    "docs/pld.md": {"the issue's 2 s target": "the issue's target"},
}


def _benchmark_cells(name: str | None = None) -> set[str]:
    """The numbers in the table rows of benchmarks/RESULTS*.md (or of ``benchmarks/NAME``), and the times
    their prose states."""
    cells: set[str] = set()
    for path in sorted((ROOT / "benchmarks").glob(name or "RESULTS*.md")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("|"):
                cells.update(re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?![\d.]*e)", line))
            else:
                cells.update(m.group(1) for m in _RESULTS_PROSE_TIME.finditer(line))
    return cells


def _quotes_a_cell(value: str, cells: set[str]) -> bool:
    """``value`` is a cell, or a cell rounded to ``value``'s decimals (0.62 quotes 0.623)."""
    decimals = len(value.partition(".")[2])
    return value in cells or any(len(c.partition(".")[2]) > decimals and f"{float(c):.{decimals}f}" == value
                                 for c in cells)


def _named_results(paragraph: str) -> list[str]:
    return sorted(set(re.findall(r"RESULTS(?:_[a-z]+)?\.md", paragraph)))


def _units(text: str) -> list[tuple[int, str]]:
    """(first line number, text) of each paragraph, list item and table of ``text``."""
    units: list[tuple[int, list[str]]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        starts = (not units or not line.strip() or not units[-1][1][-1].strip()
                  or re.match(r"\s*([*-]|\d+\.) ", line) is not None
                  or line.startswith("|") != units[-1][1][-1].startswith("|"))
        if starts:
            units.append((number, []))
        units[-1][1].append(line)
    return [(number, "\n".join(lines)) for number, lines in units if "".join(lines).strip()]


def _misquoted_timings(name: str) -> list[str]:
    """Every time in document ``name`` that is not a benchmark cell. Where a paragraph or list item names
    RESULTS files (or introduces the table right after it), its times must be cells of those files."""
    all_cells, settings = _benchmark_cells(), NOT_MEASURED.get(name, {})
    missing: list[str] = []
    named: list[str] = []
    for first, unit in _units((ROOT / name).read_text(encoding="utf-8")):
        named = _named_results(unit) or (named if unit.startswith("|") else [])
        cells = set().union(*(_benchmark_cells(f) for f in named)) if named else all_cells
        for offset, line in enumerate(unit.splitlines()):
            for setting in settings:
                line = line.replace(setting, "")
            for m in _TIME.finditer(line):
                missing += [f"{name}:{first + offset}: {value} {m.group(3)} (not a cell of "
                            f"{' or '.join(named) or 'any RESULTS*.md'})"
                            for value in filter(None, (m.group(1), m.group(2))) if not _quotes_a_cell(value, cells)]
    return missing


def _headers(lines: list[str]) -> set[str]:
    """The header rows of the markdown tables in ``lines``."""
    return {line.strip() for line, below in itertools.pairwise(lines) if line.startswith("|") and below.startswith("|-")}


def _stale_copied_rows(name: str) -> list[str]:
    """Rows of a table copied from a RESULTS file (its header row is one of that file's) that are not rows
    of that file: table cells carry no unit, so a stale copy's times escape :func:`_misquoted_timings`."""
    results = {path.name: path.read_text(encoding="utf-8").splitlines()
               for path in (ROOT / "benchmarks").glob("RESULTS*.md")}
    lines = (ROOT / name).read_text(encoding="utf-8").splitlines()
    stale: list[str] = []
    for i, line in enumerate(lines[:-1]):
        if not (line.startswith("|") and lines[i + 1].startswith("|-")):
            continue
        sources = [rows for rows in results.values() if line.strip() in _headers(rows)]
        if not sources:
            continue
        known = {row.strip() for rows in sources for row in rows}
        end = i + 2
        while end < len(lines) and lines[end].startswith("|"):
            end += 1
        stale += [f"{name}:{j + 1}: a row of a RESULTS table that the RESULTS file does not have"
                  for j in range(i + 1, end) if lines[j].strip() not in known]
    return stale


@pytest.mark.parametrize("name", TIMED_DOCS)
def test_copied_results_tables_are_current(name: str) -> None:
    stale = _stale_copied_rows(name)
    assert not stale, "\n".join(stale)


@pytest.mark.parametrize("name", TIMED_DOCS)
def test_timings_are_benchmark_cells(name: str) -> None:
    stale = [s for s in NOT_MEASURED.get(name, {}) if s not in (ROOT / name).read_text(encoding="utf-8")]
    assert not stale, f"NOT_MEASURED lists phrases {name} no longer has: {stale}"
    missing = _misquoted_timings(name)
    assert not missing, f"timings quoted in {name} that are not a cell of benchmarks/RESULTS*.md:\n" + "\n".join(missing)


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

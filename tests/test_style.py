"""Project conventions that a grep can check (STYLE.md: one place for numbers; issue 16: a rounding vocabulary).

The certificate is auditable only if every rounding slack is stated in the words of
``optcomp._numerics`` (``widen_up``, ``rounding_error``, ``sum_error_bound``, ``log_sum_exp_up``, …)
and every tiny number is a named constant there. The engine rules below read code tokens only
(docstrings and comments may quote any number).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "optcomp"
TINY_FLOAT = re.compile(r"\b\d*\.?\d+e-1\d\b")
#: The homes of named slack: the tolerances (``_numerics``) and the rounding vocabulary (``_rounding``).
NUMERICS_HOMES = ("_numerics.py", "_rounding.py")

#: The engines: certified numerics whose slack must be named (the rest of the tree is checked by
#: ``test_tiny_float_literals_live_in_numerics`` only).
ENGINES = ("optimal/", "pld/", "fdp/", "mechanisms/", "bounds.py", "rdp.py", "region.py", "calibrate.py", "dpsgd.py")

#: Engine files that still carry unnamed slack: to convert (owned by other work in flight when the
#: vocabulary landed; each is listed with what remains so the next engineer finds it).
TO_CONVERT: dict[str, str] = {}

#: A literal this small (or 2**-N with N ≥ 16) is a tolerance or a slack: it must be named in _numerics.
TINY_LITERAL = 1e-5
#: Names that spell the unit roundoff or an ulp inline.
ROUNDOFF_NAMES = {"_U", "_ULP", "DBL_EPS", "UNIT_ROUNDOFF", "nextafter", "spacing"}


def _engine_files() -> list[Path]:
    return sorted(
        p
        for p in SRC.rglob("*.py")
        if p.relative_to(SRC).as_posix() not in NUMERICS_HOMES and str(p.relative_to(SRC)).startswith(ENGINES)
    )


def _code_tokens(path: Path) -> list[tokenize.TokenInfo]:
    skip = {tokenize.STRING, tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}
    toks = tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline)
    return [t for t in toks if t.type not in skip]


def _unnamed_slack(path: Path) -> list[str]:
    """Tiny literals, 2**-N literals and inline unit-roundoff arithmetic in one engine file's code."""
    toks = _code_tokens(path)
    where = str(path.relative_to(SRC))
    named = _named_constant_lines(path)
    out: list[str] = []
    for i, t in enumerate(toks):
        if t.start[0] in named:
            continue
        if t.type == tokenize.NUMBER and "j" not in t.string.lower():
            value = float(t.string.replace("_", "")) if not t.string.startswith("0x") else float(int(t.string, 16))
            tail = [x.string for x in toks[i + 1 : i + 3]]
            if tail == ["**", "-"] and i + 3 < len(toks) and toks[i + 3].type == tokenize.NUMBER:
                if float(toks[i + 3].string) >= 16:
                    out.append(f"{where}:{t.start[0]}: {t.string}**-{toks[i + 3].string}")
            elif 0.0 < value < TINY_LITERAL:
                out.append(f"{where}:{t.start[0]}: {t.string}")
        elif t.type == tokenize.NAME and t.string in ROUNDOFF_NAMES:
            prev = toks[i - 1].string if i else ""
            nxt = toks[i + 1].string if i + 1 < len(toks) else ""
            if prev in ("import", ",", "(") and toks[i - 1].start[0] == t.start[0] and _in_import(toks, i):
                continue
            if t.string == "UNIT_ROUNDOFF" and "*" not in (prev, nxt):
                continue  # passed on as a value (e.g. a long-double/double choice), not arithmetic slack
            out.append(f"{where}:{t.start[0]}: {t.string}")
    return out


#: ``NAME = <literal>`` / ``NAME: float = <literal>`` at module level: a named (and documented) constant.
_NAMED_CONSTANT = re.compile(r"^_?[A-Z][A-Z0-9_]*(\s*:\s*\w+)?\s*=\s*[-+]?[\d.]+(e-?\d+)?\s*(#.*)?$")


def _named_constant_lines(path: Path) -> set[int]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return {n for n, line in enumerate(lines, 1) if _NAMED_CONSTANT.match(line)}


def _in_import(toks: list[tokenize.TokenInfo], i: int) -> bool:
    j = i
    while j > 0 and toks[j].string not in ("import", "from"):
        if toks[j].string in ("=", "return", "def"):
            return False
        j -= 1
    return toks[j].string == "import"


def test_tiny_float_literals_live_in_numerics() -> None:
    offenders = [
        f"{path.relative_to(SRC)}:{n}"
        for path in SRC.rglob("*.py")
        if path.relative_to(SRC).as_posix() not in NUMERICS_HOMES
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if TINY_FLOAT.search(line.split("#", 1)[0])
    ]
    assert offenders == [], f"tolerance-like literals outside _numerics.py: {offenders}"


def test_engines_state_their_slack_in_the_rounding_vocabulary() -> None:
    """Engine code names every slack: no tiny literals, no `k * _U`, no bare nextafter (issue 16, item 4)."""
    offenders = [o for p in _engine_files() if str(p.relative_to(SRC)) not in TO_CONVERT for o in _unnamed_slack(p)]
    assert offenders == [], f"unnamed slack in engine code (use optcomp._numerics' vocabulary): {offenders}"


def test_to_convert_list_names_engine_files() -> None:
    """Every exempted file exists and is an engine file (drop an entry once its file is converted)."""
    stale = [name for name in TO_CONVERT if not (SRC / name).exists() or not name.startswith(ENGINES)]
    assert stale == [], f"remove from TO_CONVERT (converted or gone): {stale}"


def test_the_rule_catches_inline_slack(tmp_path: Path) -> None:
    bad = SRC / "optimal" / "_style_probe_never_committed.py"
    assert not bad.exists()
    probe = tmp_path / "probe.py"
    probe.write_text(
        "x = y * (1.0 + 4.0 * _U)\nz = 1e-9 * w\nv = 2.0**-30\nt = math.nextafter(s, 1.0)\nok = 0.01\n_NAMED = 1e-9\n"
    )
    got = [o.split(": ", 1)[1] for o in _unnamed_slack_at(probe)]
    assert got == ["_U", "1e-9", "2.0**-30", "nextafter"]


def _unnamed_slack_at(path: Path) -> list[str]:
    """:func:`_unnamed_slack` for a file outside the tree (the rule's own test)."""
    global SRC
    saved, SRC = SRC, path.parent
    try:
        return _unnamed_slack(path)
    finally:
        SRC = saved


def test_library_never_imports_peers() -> None:
    offenders = [
        str(path.relative_to(SRC))
        for path in SRC.rglob("*.py")
        if re.search(r"^\s*(import|from)\s+(dp_accounting|prv_accountant)\b", path.read_text(encoding="utf-8"), re.MULTILINE)
    ]
    assert offenders == []


def _mpmath_imports(path: Path) -> list[str]:
    """Lines of ``path`` that import mpmath (``import mpmath``, ``import mpmath as mp``, ``from mpmath …``),
    at any depth (a function-level import counts too)."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    hits = []
    for node in ast.walk(tree):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        if any(n == "mpmath" or n.startswith("mpmath.") for n in names):
            hits.append(f"{path.name}:{node.lineno}")
    return hits


def test_tests_take_their_references_from_tests_references() -> None:
    """Independent truths live in ``tests/_references`` only (issue 16, item 5): a test that needs a
    high-precision value imports a named, documented reference function instead of importing mpmath."""
    tests = Path(__file__).resolve().parent
    references = tests / "_references"
    offenders = [
        hit
        for path in sorted(tests.rglob("*.py"))
        if references not in path.parents and path != references.with_suffix(".py")
        for hit in _mpmath_imports(path)
    ]
    assert offenders == [], f"import mpmath only in tests/_references (add a reference function there): {offenders}"


def test_the_mpmath_rule_catches_every_spelling(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("import mpmath\nimport mpmath as mp\nfrom mpmath import mpf\ndef f():\n    import mpmath\nimport math\n")
    assert _mpmath_imports(probe) == ["probe.py:1", "probe.py:2", "probe.py:3", "probe.py:5"]


#: Room sizes (issue 16's "done when"): a module a reader can hold, a function that does one thing.
MAX_MODULE_LINES = 600
MAX_FUNCTION_BODY_LINES = 80


def test_modules_and_functions_stay_small() -> None:
    """Every module of src/optcomp ≤ 600 lines; every function ≤ 80 lines of body (docstring excluded)."""
    too_long: list[str] = []
    for path in sorted(SRC.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        where = str(path.relative_to(SRC))
        if source.count("\n") > MAX_MODULE_LINES:
            too_long.append(f"{where}: {source.count(chr(10))} lines")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                body = node.body[1:] if ast.get_docstring(node) else node.body
                lines = (body[-1].end_lineno or 0) - body[0].lineno + 1 if body else 0
                if lines > MAX_FUNCTION_BODY_LINES:
                    too_long.append(f"{where}: {node.name} has {lines} lines of body")
    assert not too_long, too_long

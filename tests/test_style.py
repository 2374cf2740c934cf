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
import typing
from pathlib import Path

from optcomp.engines import EngineName

SRC = Path(__file__).resolve().parents[1] / "src" / "optcomp"
TINY_FLOAT = re.compile(r"\b\d*\.?\d+e-1\d\b")
#: The homes of named slack: the tolerances (``_numerics``) and the rounding vocabulary (``_rounding``).
NUMERICS_HOMES = ("_numerics.py", "_rounding.py")

#: The engines: certified numerics whose slack must be named (the rest of the tree is checked by
#: ``test_tiny_float_literals_live_in_numerics`` only).
ENGINES = ("optimal/", "pld/", "fdp/", "mechanisms/", "adaptive/", "bounds.py", "rdp/", "region.py", "calibrate.py",
           "dpsgd.py")

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


#: Room sizes (issue 16's "done when", issue 33 item 4): a module a reader can hold, a function that does one
#: thing.
MAX_MODULE_LINES = 500
MAX_FUNCTION_BODY_LINES = 80
#: Modules above ``MAX_MODULE_LINES``, each with the reason it is one module (issue 33: size by design, not
#: held by the cap). Still at most ``LONG_MODULE_LINES``.
LONG_MODULES: dict[str, str] = {
    "_numerics.py": "floor 0: every named tolerance with its derivation, Bound, Accuracy, Domain and the check_* "
    "validators — the one place for numbers (STYLE.md); two modules would be two places",
    "_inverse.py": "the one inverse solver (issue 25): solve, the coarse-to-fine layer and float_boundary, each "
    "with its safe-side proof (the batched half is _inverse_many)",
    "queries.py": "the queries floor's frozen value: Composition (routing rule, grid, group) and its RunBracket "
    "call each other (a Composition's run lower ends are its run bracket's), so a split is an import cycle; "
    "the pure functions of items live in _items.py",
    "dpsgd.py": "the sampler table and DP-SGD's public API with its contracts; 600 → ~560 lines while absorbing "
    "_dpsgd_tradeoff (its import cycle), the batch Run.answers and the inverses' δ floor, by deleting the "
    "duplicated merges, lower-item rules, per-function sampler parameters and the stepped sampler's names (issue 33)",
    "pld/_realise.py": "one direction realised at one grid step with its tilted ends: the engine's data flow "
    "(docs/pld.md §5–6), one frozen value and the caches it fills",
    "fdp/_tradeoff.py": "the trade-off function types (DRS §2) and their certified piecewise-linear evaluation, "
    "inverse and envelopes: one value hierarchy",
    "fdp/_compose.py": "f-DP composition (DRS §3): the tensor product and both central limit theorems with their "
    "certified bands",
    "bounds.py": "the classic composition theorems (basic, DRV, lecture notes, KOV), each a closed form with its "
    "safe-side rounding",
    "interop/_dp_event.py": "dp_accounting's event table (one row per event class) and its walk into items",
    "ledger/_store.py": "one storage interface (Tx) over its two backends, SQLite and PostgreSQL, with the schema, "
    "triggers and isolation each needs (module docstring): a backend split off would import the other's schema",
    "ledger/_ledger.py": "the ledger's one write protocol (docs/ledger.md §4): charge, release, void and replay "
    "under one lock",
    "cli/account.py": "the account and dpsgd commands (parse → one call → format), their options and outputs",
    "ledger/_currency.py": "the filter currencies (docs/ledger.md §2): each one's charge rule and budget as exact "
    "rationals with its validity proof cited, one table",
    "mechanisms/_allocation_grid.py": "one balls-in-bins epoch's upper law by certified mean-preserving splits on "
    "geometric grids (docs/samplers.md §5 Lemma C): the recursion, its tails and counted work",
}
LONG_MODULE_LINES = 600


def test_modules_and_functions_stay_small() -> None:
    """Every module of src/optcomp ≤ 500 lines (≤ 600 with a reason in ``LONG_MODULES``); every function ≤ 80
    lines of body (docstring excluded)."""
    too_long: list[str] = []
    for path in sorted(SRC.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        where = path.relative_to(SRC).as_posix()
        cap = LONG_MODULE_LINES if where in LONG_MODULES else MAX_MODULE_LINES
        if source.count("\n") > cap:
            too_long.append(f"{where}: {source.count(chr(10))} lines")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                body = node.body[1:] if ast.get_docstring(node) else node.body
                lines = (body[-1].end_lineno or 0) - body[0].lineno + 1 if body else 0
                if lines > MAX_FUNCTION_BODY_LINES:
                    too_long.append(f"{where}: {node.name} has {lines} lines of body")
    assert not too_long, too_long


def test_long_module_reasons_are_current() -> None:
    """Every module listed in ``LONG_MODULES`` exists and is still above ``MAX_MODULE_LINES`` (else drop it)."""
    stale = [m for m in LONG_MODULES if not (SRC / m).exists()
             or (SRC / m).read_text(encoding="utf-8").count("\n") <= MAX_MODULE_LINES]
    assert stale == [], f"remove from LONG_MODULES: {stale}"


# -- the floors, executable (issue 25): docs/architecture.md's chart as a table -----------------------

#: The floor of every room of ``src/optcomp`` (a top-level module or package; ``optcomp`` is the package
#: root, the queries floor's public face). 0 is the bottom. A module may import rooms on lower floors; an
#: import of a room on its own floor (sideways) or above (climbing) fails unless listed below with its
#: reason. Imports inside a room are free. ``docs/architecture.md`` draws the same chart.
FLOORS: dict[str, int] = {
    # foundations
    "_numerics": 0,
    "_keyvalues": 0,
    "_rounding": 1,
    "_inverse": 1,
    "_inverse_many": 1,
    "_threads": 1,
    # what ran
    "mechanisms": 2,
    # the engines
    "pld": 3,
    "optimal": 3,
    "fdp": 3,
    "bounds": 3,
    "rdp": 3,
    "region": 3,
    "adaptive": 3,
    # the queries floor
    "_items": 4,
    "queries": 4,
    "engines": 4,
    "composition": 4,
    "optcomp": 4,
    # applications
    "calibrate": 5,
    "dpsgd": 5,
    "planner": 5,
    "ledger": 5,
    "matrix": 5,
    "sweep": 5,
    "interop": 5,
    "reproduce": 5,
    "selection": 5,
    # interfaces
    "cli": 6,
    "web": 6,
    "plot": 6,
}

#: (importer, imported) on one floor, with the reason the sideways import is part of the design.
SIDEWAYS: dict[tuple[str, str], str] = {
    ("composition", "queries"): "compose builds the frozen Composition the queries floor defines",
    ("_inverse_many", "_inverse"): "lowest_passing refines its first passing cell with solve / float_boundary",
    ("queries", "engines"): "the router hands back one of the engines (Composition.route)",
    ("queries", "_items"): "the composition's items arranged (pooled or in order, Gaussians merged, the dominated counterparts a run bracket's lower composition takes)",
    ("composition", "_items"): "compose arranges the items it validated (pooled, or in order with a bounded-range step)",
    ("optcomp", "composition"): "the package root re-exports compose",
    ("optcomp", "queries"): "the package root re-exports Composition",
    ("region", "optimal"): "the privacy region of black boxes is read off optimal's δ(ε)",
    ("region", "fdp"): "the privacy region of a trade-off function (fdp) is its δ(ε) curve",
    ("adaptive", "pld"): "a block of fixed steps enters the bounded-range recursion as the grid's certified lattice "
    "kernels (pld.lattice_kernels: split and pooled pairs, FFT-composed)",
    ("optimal", "bounds"): "KOV Cor V.1 (bounds.py, its one home) next to optimal.calibrate",
    ("rdp", "fdp"): "a zCDP conversion's lower end is never below the Gaussian with mu = sqrt(2 rho) (exactly "
    "rho-zCDP), whose certified delta is fdp.gdp_delta_bound",
    ("dpsgd", "calibrate"): "noise_multiplier/steps are calibrate.noise_for_target (the one calibrator)",
    ("matrix", "calibrate"): "a matrix mechanism's noise is calibrated by calibrate.noise_for_target",
    ("matrix", "dpsgd"): "DP-MF training runs reuse the DP-SGD sampler table",
    ("sweep", "dpsgd"): "a sweep evaluates DP-SGD runs",
    ("interop", "dpsgd"): "an Opacus history is a DP-SGD run (the sampler table)",
    ("interop", "selection"): "a RepeatAndSelectDpEvent is a selection (optcomp.selection) over its event's composition",
    ("reproduce", "dpsgd"): "the papers' DP-SGD tables",
    ("reproduce", "calibrate"): "the papers' calibration tables (KOV Thm V.3)",
    ("ledger", "planner"): "a plan-mode ledger takes its slots from a planner allocation",
    ("cli", "plot"): "optcomp plot fronts optcomp.plot",
    ("cli", "web"): "optcomp serve starts the web app",
}

#: (importer, imported) climbing a floor, with its reason (each such import sits inside a function).
CLIMBING: dict[tuple[str, str], str] = {}

#: Imports of another room's private module or name (``optcomp.x._y``, ``from optcomp.x import _y``),
#: with the reason it has no public name yet.
PRIVATE_IMPORTS: dict[tuple[str, str], str] = {}

#: Applications (floor 5) that reach a composition engine (``optimal``, ``pld.PrivacyLossDistribution``)
#: instead of going through ``compose`` (issue 25): (importer, dotted name) → why.
AROUND_COMPOSE: dict[tuple[str, str], str] = {
    ("ledger", "optcomp.optimal"): "the batch charge (_currency._batch_epsilon) is stored and verify() recomputes "
    "it bit for bit: pinned to optimal.epsilon at its default tolerance; compose's default Accuracy refines "
    "further and its router sends ε_i > optimal.HUGE_EPS to the grid (both change stored charges)",
    ("reproduce", "optcomp.optimal"): "the papers' tables are optimal's own numbers (MV Thms 1.4–1.7, KOV Thm "
    "III.3 at the papers' tolerances and methods), reproduced as published",
}


def _room_of(path: Path, src: Path) -> str:
    rel = path.relative_to(src)
    return "optcomp" if rel.parts == ("__init__.py",) else rel.parts[0].removesuffix(".py")


def _imports(path: Path, src: Path) -> list[tuple[int, str, str]]:
    """(line, room imported, dotted name) of every ``optcomp`` import in ``path``, at any depth (a
    function-level import counts). ``from optcomp import x`` is room x when x is a module of ``src``,
    else the package root."""
    out: list[tuple[int, str, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            spelled = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            spelled = [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        for name in spelled:
            parts = name.split(".")
            if parts[0] != "optcomp":
                continue
            room = parts[1] if len(parts) > 1 else "optcomp"
            if room not in ("optcomp",) and not ((src / f"{room}.py").exists() or (src / room).is_dir()):
                room = "optcomp"  # an attribute of the package root (from optcomp import compose)
            out.append((node.lineno, room, name))
    return out


def layering_violations(src: Path) -> tuple[list[str], set[tuple[str, str]]]:
    """Imports that climb, go sideways or reach into another room's private names without a listed
    reason; and the listed exceptions that were used."""
    bad: list[str] = []
    used: set[tuple[str, str]] = set()
    for path in sorted(src.rglob("*.py")):
        room = _room_of(path, src)
        where = path.relative_to(src).as_posix()
        if room not in FLOORS:
            bad.append(f"{where}: room {room!r} is not in FLOORS (add it to the chart)")
            continue
        for line, other, name in _imports(path, src):
            if other == room:
                continue
            private = [p for p in name.split(".")[2:] if p.startswith("_")]
            if private and (room, name) not in PRIVATE_IMPORTS:
                bad.append(f"{where}:{line}: {room} imports the private {name}")
            used.add((room, name))
            if other not in FLOORS:
                bad.append(f"{where}:{line}: {name}: room {other!r} is not in FLOORS")
                continue
            pair = (room, other)
            if FLOORS[other] == FLOORS[room] and pair not in SIDEWAYS:
                bad.append(f"{where}:{line}: {room} imports {other} sideways (floor {FLOORS[room]})")
            elif FLOORS[other] > FLOORS[room] and pair not in CLIMBING:
                bad.append(f"{where}:{line}: {room} (floor {FLOORS[room]}) imports {other} (floor {FLOORS[other]})")
            used.add(pair)
            around = other == "optimal" or name == "optcomp.pld.PrivacyLossDistribution"
            if around and FLOORS[room] == FLOORS["ledger"] and (room, name) not in AROUND_COMPOSE:
                bad.append(f"{where}:{line}: {room} imports {name}: an application goes through compose")
    return bad, used


def test_imports_follow_the_floors() -> None:
    """Every import of src/optcomp points down the chart, or is a listed exception (docs/architecture.md)."""
    bad, _ = layering_violations(SRC)
    assert bad == [], "\n".join(bad)


def test_every_listed_layering_exception_is_used() -> None:
    _, used = layering_violations(SRC)
    stale = [k for k in (*SIDEWAYS, *CLIMBING, *PRIVATE_IMPORTS, *AROUND_COMPOSE) if k not in used]
    assert stale == [], f"remove these exceptions (the import is gone): {stale}"


def test_the_floor_rule_catches_a_planted_upward_import(tmp_path: Path) -> None:
    """The rule's own probe: an engine importing an application (inside a function), a sideways import
    between engines, a private cross-room import and an application calling optimal around compose each
    fail it."""
    src = tmp_path / "optcomp"
    for room in ("pld", "mechanisms", "fdp", "optimal", "planner"):
        (src / room).mkdir(parents=True)
        (src / room / "__init__.py").write_text("")
    (src / "__init__.py").write_text("")
    (src / "dpsgd.py").write_text("def epsilon() -> None: ...\n")
    (src / "rdp.py").write_text("")
    (src / "pld" / "_law_user.py").write_text("from optcomp.mechanisms import Gaussian\n")  # downward: fine
    (src / "pld" / "_probe.py").write_text(
        "def f():\n    from optcomp.dpsgd import epsilon\n    return epsilon\n"
        "import optcomp.rdp\nfrom optcomp.fdp._gdp import _log_delta_with_error\n"
    )
    (src / "planner" / "_probe.py").write_text("def f():\n    from optcomp import optimal\n")  # around compose
    bad, _ = layering_violations(src)
    assert sorted(b.split(": ", 1)[1] for b in bad) == [
        "planner imports optcomp.optimal: an application goes through compose",
        "pld (floor 3) imports dpsgd (floor 5)",
        "pld imports fdp sideways (floor 3)",
        "pld imports rdp sideways (floor 3)",
        "pld imports the private optcomp.fdp._gdp._log_delta_with_error",
    ]


# -- one home for inversion (issue 25): no hand-written search loop outside _inverse --------------------

#: Names whose rebinding inside a loop marks a bracket being shrunk (a search).
_BRACKET_NAMES = {"lo", "hi", "low", "high", "mid", "left", "right", "lo_i", "hi_i"}

#: Loops that look like searches (a bracket end rebound, or a step doubled/halved, inside the loop) and
#: are not inverses of a certified value: ``path::function`` → what the loop is.
SEARCH_LOOPS_ALLOWED: dict[str, str] = {
    "cli/fdp.py::curve_rows": "chunks a table's rows",
    "cli/fdp.py::rows": "chunks a table's rows",
    "plot.py::plot_tradeoff": "draws a bracket's two curves",
    "rdp/_curves.py::poisson_subsampled_gaussian": "interpolates between integer orders (lo = floor α)",
    "fdp/_subsample.py::_lower_vertices": "walks the vertices of a convex curve",
    "fdp/_tradeoff.py::_evaluate": "f⁻¹ of a given trade-off function (its own inverse, to 2⁻⁶⁴; no certified value)",
    "ledger/_currency.py::_bisect": "60-digit mpmath thresholds (the ledger's exact arithmetic; _inverse is float64)",
    "ledger/_currency.py::_gdp": "60-digit mpmath threshold μ_T (the ledger's exact arithmetic), through _bisect",
    "ledger/_currency.py::_zcdp_order": "golden-section maximisation of ρ(α) (an optimisation: any α is valid)",
    "ledger/_costs.py::zcdp_epsilon": "golden-section minimisation of the CKS ε over α at 30 digits (an "
    "optimisation: any α is valid; the value at the order found is recomputed at 60 digits)",
    "optimal/_freq.py::_tail": "the frequency engine's tail window (where a tilted mass falls below its bound)",
    "optimal/_mv.py::_search": "MV Thm 1.7's algorithm as published (method='mv')",
    "optimal/_route.py::epsilon_rest": "grid-step refinement towards an accuracy (not an inverse)",
    "optimal/_route.py::delta_rest": "grid-step refinement towards an accuracy (not an inverse)",
    "optimal/_split.py::tilt_lambda": "the tilt λ of a Chernoff window (an optimisation)",
    "planner/_model.py::solve": "an uncertified central-limit guess that only places a certified search",
    "planner/_model.py::_central_limit_epsilon": "an uncertified central-limit guess (only places a search)",
    "pld/_cells.py::_tail_point": "a law's truncation point (a window, not a parameter)",
    "pld/_curve.py::place": "places a curve's points where it bends",
    "pld/_curve.py::run": "one realisation per curve point group",
    "pld/_pld.py::run": "grid refinement towards an accuracy",
    "adaptive/_engine.py::epsilon": "lattice refinement towards an accuracy (its inverses are _inverse.float_boundary)",
    "pld/_realise.py::_argmin": "ternary search for the best tilt on an index grid (an optimisation)",
    "matrix/_sensitivity.py::tree_pattern_value": "walks the tree's levels (node length doubles)",
    "matrix/_strategy.py::column_norms_squared": "prefix sums of coefficients (lo/hi: band ends)",
    "matrix/_tree.py::tree_brute_force": "enumerates the tree's nodes level by level (the brute-force reference)",
    "mechanisms/_allocation_grid.py::_band_upper": "one band of the split convolution (lo/hi: offset range)",
    "mechanisms/_allocation_cells.py::window": "the factor window's lower end ℓ_min (a window, not a "
    "parameter: its tail is charged separately)",
    "mechanisms/_allocation_lower.py::_band": "one band of the merge convolution (lo/hi: offset range)",
    "rdp/_binary.py::_p_star": "the two-point witness's feasibility bisection in logit p (the pair found is "
    "re-verified in exact arithmetic; no certified value is inverted)",
    "rdp/_binary.py::_worst_orders": "golden-section maximisation over orders (an optimisation: the exchange "
    "checks every order it adds)",
    "rdp/_binary.py::_kkt_solve": "Newton's method on the KKT system at 240 bits (the tangent plane it gives is "
    "checked by interval arithmetic)",
}

#: Inverses of certified values still hand-rolled, each with who owns the file and what replaces it.
SEARCH_LOOPS_TO_CONVERT: dict[str, str] = {}


def _search_loops(path: Path, src: Path) -> list[str]:
    """``path::function`` of every loop whose body rebinds a bracket name or doubles/halves a step."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    where = path.relative_to(src).as_posix()
    found: list[str] = []
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    owner = {id(n): f.name for f in functions for n in ast.walk(f)}  # innermost last: overwritten
    for loop in ast.walk(tree):
        if not isinstance(loop, (ast.For, ast.While)):
            continue
        stack: list[ast.AST] = [*loop.body, *loop.orelse]
        hit = False
        while stack and not hit:
            n = stack.pop()
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                continue
            if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                names = {x.id for t in targets for x in ast.walk(t) if isinstance(x, ast.Name)}
                doubling = (
                    isinstance(n, ast.AugAssign)
                    and isinstance(n.op, (ast.Mult, ast.Div))
                    and isinstance(n.value, ast.Constant)
                    and n.value.value in (2, 2.0, 0.5)
                )
                hit = bool(names & _BRACKET_NAMES) or doubling
            stack.extend(ast.iter_child_nodes(n))
        if hit:
            found.append(f"{where}::{owner.get(id(loop), '<module>')}")
    return found


def test_no_hand_written_search_loop_outside_inverse() -> None:
    """Inverses of certified values live in ``_inverse`` (issue 25): every other search-shaped loop is a
    named non-parameter loop, or a named inverse still to convert."""
    found = {f for p in sorted(SRC.rglob("*.py")) if p.name not in ("_inverse.py", "_inverse_many.py") for f in _search_loops(p, SRC)}
    unlisted = sorted(found - set(SEARCH_LOOPS_ALLOWED) - set(SEARCH_LOOPS_TO_CONVERT))
    assert unlisted == [], f"hand-written search loops (use optcomp._inverse): {unlisted}"
    stale = sorted((set(SEARCH_LOOPS_ALLOWED) | set(SEARCH_LOOPS_TO_CONVERT)) - found)
    assert stale == [], f"remove from the lists (the loop is gone): {stale}"


def test_the_search_loop_rule_catches_a_bisection(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "def smallest(ok):\n    lo, hi = 0.0, 1.0\n    while not ok(hi):\n        hi *= 2.0\n"
        "    for _ in range(60):\n        mid = 0.5 * (lo + hi)\n        lo, hi = (lo, mid) if ok(mid) else (mid, hi)\n"
        "    return hi\n\ndef fine(xs):\n    total = 0.0\n    for x in xs:\n        total += x\n    return total\n"
    )
    assert _search_loops(probe, tmp_path) == ["probe.py::smallest", "probe.py::smallest"]


# -- no import cycles (issue 33 item 4): the module graph, imports inside functions included ------------


def _module_of(path: Path, src: Path) -> str:
    """The dotted module name of ``path`` (a package's ``__init__.py`` is the package)."""
    parts = list(path.relative_to(src.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(src: Path) -> dict[str, set[str]]:
    """module → the modules of ``src`` it imports, at any depth (inside functions and ``TYPE_CHECKING``
    blocks too). ``from a.b import c`` is module ``a.b.c`` when that is a module, else ``a.b``; a name that is
    no module resolves to its longest module prefix (``from optcomp import compose`` is the package root)."""
    paths = {_module_of(p, src): p for p in sorted(src.rglob("*.py"))}

    def resolve(name: str) -> str | None:
        while name and name not in paths:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {m: set() for m in paths}
    for module, path in paths.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, *([node.module] if node.module else [])])
                names = [f"{base}.{a.name}" if f"{base}.{a.name}" in paths else base for a in node.names]
            else:
                continue
            for name in names:
                target = resolve(name) if name.split(".")[0] == src.name else None
                if target is not None and target != module:
                    graph[module].add(target)
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted: the import cycles."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(cycles)


def test_no_import_cycles() -> None:
    """No module of src/optcomp reaches itself through imports, counting imports inside functions and
    ``TYPE_CHECKING`` blocks (issue 33: five cycles before; a cycle is a layering the floors cannot see)."""
    assert import_cycles(import_graph(SRC)) == []


def test_the_cycle_rule_catches_a_planted_cycle(tmp_path: Path) -> None:
    """The rule's own probe: a cycle through a function-level import, one through ``TYPE_CHECKING``, one through
    a relative import into a package's ``__init__``; an acyclic import beside them is not reported."""
    src = tmp_path / "optcomp"
    (src / "pkg").mkdir(parents=True)
    (src / "__init__.py").write_text("")
    (src / "a.py").write_text("from optcomp.b import f\n")
    (src / "b.py").write_text("def f():\n    from optcomp import a\n    return a\n")
    (src / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from optcomp.d import X\n")
    (src / "d.py").write_text("import optcomp.c\nX = 1\n")
    (src / "pkg" / "__init__.py").write_text("from optcomp.pkg._one import g\n")
    (src / "pkg" / "_one.py").write_text("def g():\n    from . import h\n    return h\nh = 1\n")
    (src / "e.py").write_text("from optcomp.a import f\n")  # imports into a cycle: not part of it
    assert import_cycles(import_graph(src)) == [
        ["optcomp.a", "optcomp.b"], ["optcomp.c", "optcomp.d"], ["optcomp.pkg", "optcomp.pkg._one"]]


# -- one merge of a run's ends (issue 33 item 5): only the run bracket takes a lower end from another bracket -


#: ``Bound(min(…), …)`` calls that are not the run bracket's merge: an engine clipping the two ends of *one*
#: computation (its own lower end to its own upper end), or a bracket on a parameter (``path::function`` → why).
MERGES_ALLOWED: dict[str, str] = {
    "queries.py::merge": "RunBracket.merge: the one merge of a run's ends (lower from the dominated composition)",
    "calibrate.py::noise_for_target": "the calibrated parameter's bracket (a noise, not a run's ε or δ)",
    "optimal/_huge.py::shifted_delta": "the optimal engine clips its own lower end to its own upper end",
    "optimal/_mv.py::epsilon_mv": "MV Thm 1.7's search clips its own lower end to its own upper end",
    "optimal/_solve.py::epsilon_from_envelopes": "one pair of envelopes' ε ends, the lower clipped to the upper",
    "optimal/_solve.py::delta_from_envelopes": "one pair of envelopes' δ ends, the lower clipped to the upper",
    "pld/_pld.py::run": "the grid's ε measure clips its intersected lower end to its upper end (one query)",
    "pld/_lattice.py::delta": "the lattice engine clips its own tilted lower end to its own upper end (one query)",
    "pld/_lattice.py::epsilon": "the lattice engine's search clips its failing ε to its passing one",
    "adaptive/_engine.py::epsilon": "the adaptive recursion intersects its own passes' ends (one engine, one query)",
    "rdp/_convert.py::_solve_optimal": "the LP witness's lower end clipped to its dual certificate's upper end",
    "rdp/_convert.py::epsilon": "the conversion's witness or Gaussian lower end clipped to its own upper end",
    "selection/_select.py::epsilon": "a selection's exact best-of-K lower end (only where the base's law is the "
    "run's own: Composition.dominated is None) clipped to the theorems' upper end",
    "selection/_select.py::delta": "as selection/_select.py::epsilon, for δ(ε)",
    "adaptive/_nonadaptive.py::nonadaptive_delta": "DDR Thm 3's certified sum clips its own lower end to its own "
    "upper end (one closed form, one query)",
    "rdp/_convert.py::binary_delta": "the two-point witness's δ clipped to its tangent-plane certificate's (one "
    "conversion)",
    "rdp/_convert.py::delta": "the conversion's witness lower end clipped to its own certified upper end (one query)",
}


def _merges(path: Path, src: Path) -> list[str]:
    """``path::function`` of every ``Bound(min(…), …)`` or ``Bound(np.minimum(…), …)``: a lower end clipped to
    an upper end, the shape of "lower end from one bracket, upper end from another"."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    where = path.relative_to(src).as_posix()
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    owner = {id(n): f.name for f in functions for n in ast.walk(f)}  # innermost last: overwritten
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Bound"):
            continue
        first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "lower"), None)
        if isinstance(first, ast.Call) and (
            (isinstance(first.func, ast.Name) and first.func.id == "min")
            or (isinstance(first.func, ast.Attribute) and first.func.attr == "minimum")
        ):
            found.append(f"{where}::{owner.get(id(node), '<module>')}")
    return found


def test_run_ends_are_merged_only_by_the_run_bracket() -> None:
    """"Lower end from the dominated composition, upper end from the dominating one" has one home,
    ``queries.RunBracket.merge`` (issue 33: six copies before); every other ``Bound(min(`` is listed."""
    found = {f for p in sorted(SRC.rglob("*.py")) for f in _merges(p, SRC)}
    assert sorted(found - set(MERGES_ALLOWED)) == [], "merge a run's ends with queries.RunBracket, not by hand"
    assert sorted(set(MERGES_ALLOWED) - found) == [], "remove from MERGES_ALLOWED (the clip is gone)"


def test_the_merge_rule_catches_a_planted_merge(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "def bracket(up, low):\n    return Bound(min(low.lower, up.upper), up.upper)\n"
        "def curve(up, lo):\n    return Bound(lower=np.minimum(lo, up), upper=up)\n"
        "def fine(a, b):\n    return Bound(a, max(a, b))\n"
    )
    assert _merges(probe, tmp_path) == ["probe.py::bracket", "probe.py::curve"]


# -- one router (issue 33 item 5): no code outside it branches on which engine answers ------------------


#: The engines' names, read from ``optcomp.engines.EngineName`` (a new engine is covered as it is named).
ENGINE_NAMES = frozenset(typing.get_args(EngineName))

#: Engine-name branches outside the router still to remove, with what replaces them.
ENGINE_BRANCHES_TO_CONVERT: dict[str, str] = {
    "planner/_accounting.py::_mechanism_aware": "issue 33 item 2, left: the planner's search evaluates the grid at a "
    "fixed step proportional to its budget (one realisation per evaluation, deterministic along the search) and the "
    "adaptive recursion at a coarser width whose upper end has converged; one accuracy for every route would "
    "change the planner's answers or its cost",
}


def _engine_branches(path: Path, src: Path) -> list[str]:
    """``path::function`` of every comparison of an engine's name (``x.engine()``, ``x.engine``,
    ``x.route(…).name``, ``engine.name``, a name bound to ``x.engine(…)``) with one of :data:`ENGINE_NAMES`."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    where = path.relative_to(src).as_posix()
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    owner = {id(n): f.name for f in functions for n in ast.walk(f)}

    def names_engine_call(x: ast.expr) -> bool:
        return isinstance(x, ast.Call) and isinstance(x.func, ast.Attribute) and x.func.attr == "engine"

    # a local name bound to an engine readout (``engine = c.engine(a)``) is an engine name too
    bound = {t.id for n in ast.walk(tree) if isinstance(n, ast.Assign) and names_engine_call(n.value)
             for t in n.targets if isinstance(t, ast.Name)}

    def names_engine(x: ast.expr) -> bool:
        if isinstance(x, ast.Name):
            return x.id in bound
        if isinstance(x, ast.Call):
            x = x.func
        if not isinstance(x, ast.Attribute):
            return False
        if x.attr == "engine":
            return True
        held = x.value.func if isinstance(x.value, ast.Call) else x.value
        spelled = held.attr if isinstance(held, ast.Attribute) else getattr(held, "id", "")
        return x.attr == "name" and ("engine" in spelled or spelled == "route")

    def an_engine_name(x: ast.expr) -> bool:
        items = x.elts if isinstance(x, (ast.Tuple, ast.List, ast.Set)) else [x]
        return any(isinstance(e, ast.Constant) and e.value in ENGINE_NAMES for e in items)

    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(names_engine(a) for a in sides) and any(an_engine_name(a) for a in sides):
                found.append(f"{where}::{owner.get(id(node), '<module>')}")
    return found


def test_no_engine_name_branch_outside_the_router() -> None:
    """Which engine answers is decided once, by ``queries.Composition._decide``; ``engine()`` only reports it
    (issue 33). Branches still to remove are listed with what replaces them."""
    found = {f for p in sorted(SRC.rglob("*.py")) if p.name != "queries.py" for f in _engine_branches(p, SRC)}
    assert sorted(found - set(ENGINE_BRANCHES_TO_CONVERT)) == [], "ask the engine, do not branch on its name"
    assert sorted(set(ENGINE_BRANCHES_TO_CONVERT) - found) == [], "remove from ENGINE_BRANCHES_TO_CONVERT"


def test_the_engine_name_rule_catches_a_planted_branch(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "def a(c):\n    return c.engine() != 'grid'\n"
        "def b(c, acc):\n    return c.route(acc).name in ('gdp', 'optimal')\n"
        "def d(engine):\n    return 'grid' == engine.name\n"
        "def e(event):\n    return event.engine == 'none' or event.kind == 'grid'\n"
    )
    assert _engine_branches(probe, tmp_path) == ["probe.py::a", "probe.py::b", "probe.py::d"]


# -- one refinement schedule (issue 33 item 2): its constants and the relative width live in pld/_refine.py --

#: The module that owns the grid step's refinement schedule.
SCHEDULE_HOME = "pld/_refine.py"
#: Names a refinement constant goes by (passes, ratio cap, margin, order estimate, coarsening, warm start).
_REFINEMENT_NAME = re.compile(r"^_?MAX_PASSES$|STEP_RATIO|STEP_MARGIN|MODEL_MARGIN|^_?ASYMPTOTIC$|^_?ORDER_RANGE$"
                              r"|^_?WIDTH_ORDER$|COARSEN|WARM_RATIO|^_?GROWTH")
#: Other refinement schedules, each an engine's or a caller's own (not a grid step), with why.
OWN_SCHEDULES: dict[str, str] = {
    "adaptive/_engine.py::MAX_PASSES": "the bounded-range recursion refines its lattice's cell count, not a grid "
    "step (docs/selection.md §2.3); its margin and order clamp are the schedule's (imported)",
    "optimal/_route.py::_MAX_PASSES": "the optimal engine doubles MV's point count until its Goal is met",
    "planner/_accounting.py::_MAX_COARSENINGS": "the planner's fixed-step evaluation (ENGINE_BRANCHES_TO_CONVERT)",
    "planner/_accounting.py::_BLACK_BOX_COARSENINGS": "coarser widths asked of the optimal engine, not a grid step",
}


def _refinement_constants(path: Path, src: Path) -> list[str]:
    """Refinement constants outside the schedule: a module-level name that reads like one, a literal 0.85
    (the step margin) in code, or a relative width spelled by hand, ``(… upper − … lower) / …``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    where = path.relative_to(src).as_posix()
    found = []
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        names = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
        found += [f"{where}::{n}" for n in names if _REFINEMENT_NAME.search(n)]

    def spelled(x: ast.expr, end: str) -> bool:
        name = x.attr if isinstance(x, ast.Attribute) else getattr(x, "id", "")
        return isinstance(name, str) and name.endswith(end)

    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and node.value == 0.85:
            found.append(f"{where}:{node.lineno}: 0.85")
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and isinstance(node.left, ast.BinOp) \
                and isinstance(node.left.op, ast.Sub) and spelled(node.left.left, "upper") \
                and spelled(node.left.right, "lower"):
            found.append(f"{where}:{node.lineno}: relative width")
    return found


#: Relative widths spelled outside the schedule, each with why it is not one of the schedule's two.
OWN_WIDTHS: dict[str, str] = {
    "adaptive/_engine.py": "the recursion's δ widths on whole arrays, relative to the upper end with no floor",
}


def test_refinement_constants_live_in_the_schedule() -> None:
    """The grid step's refinement (first step, order estimate, margin, ratio cap, coarsening, pass limit, the
    relative width) exists once, in ``pld/_refine.py`` (issue 33 item 2: three copies before)."""
    found = [f for p in sorted(SRC.rglob("*.py")) if p.relative_to(SRC).as_posix() != SCHEDULE_HOME
             for f in _refinement_constants(p, SRC)]
    bad = [f for f in found if f not in OWN_SCHEDULES and not (f.endswith("relative width") and f.split(":")[0] in OWN_WIDTHS)]
    assert bad == [], "refinement constants and relative widths belong to pld/_refine.py"
    stale = [k for k in OWN_SCHEDULES if k not in found] + [k for k in OWN_WIDTHS if not any(f.startswith(k + ":") for f in found)]
    assert stale == [], "remove from OWN_SCHEDULES / OWN_WIDTHS"


def test_the_refinement_rule_catches_planted_constants(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "_MAX_PASSES = 7\nSTEP_MARGIN: float = 0.8\nOTHER = 3\n"
        "def f(step, w, t):\n    return step * min(0.7, 0.85 * (t / w) ** 0.5)\n"
        "def g(b):\n    return (b.upper - b.lower) / max(b.upper, 0.01)\n"
        "def h(hi, lo):\n    return (hi - lo) / hi\n"
    )
    assert sorted(_refinement_constants(probe, tmp_path)) == [
        "probe.py:5: 0.85", "probe.py:7: relative width", "probe.py::STEP_MARGIN", "probe.py::_MAX_PASSES"]

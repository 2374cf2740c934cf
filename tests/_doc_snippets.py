"""Reading and checking the code shown in README.md and docs/*.md (used by tests/test_readme.py).

The conventions a document follows so that its numbers are checked:

* A ```` ```python ```` block runs statement by statement, all blocks of one document in one namespace
  and in document order (a later block may use an earlier block's names). A statement whose last line
  ends in ``# → VALUE`` (or is followed by a comment-only line ``# → VALUE``) is evaluated and compared
  with VALUE; VALUE ends at the first ``": "``, two spaces or
  ``";"`` outside brackets (what follows is prose), and continues on the next comment lines while its
  brackets are open.
* A ```` ```console ```` block: each ``$ optcomp ...`` line followed by output lines runs in-process
  (``optcomp.cli.main``, 80 columns, the document's working directory) and its stdout + stderr is
  compared with the lines shown (box-drawing and punctuation ignored); output shown with lines that are
  only ``…`` is an excerpt: each part between them must appear in the output, in order. The exit status
  must be 2 exactly when the output shown is an ``optcomp: error:`` line. Commands shown without output
  are not run.
* A ```` ```toml ```` block whose first line is ``# NAME.toml ...`` is written to NAME.toml first, so
  that commands can read it.
* Numbers: a number quoted with a decimal point matches within
  ``tolerances.DOC_LAST_DIGIT_UNITS`` units of its last quoted digit (documents round, and brackets are
  rounded outwards); one quoted without a decimal point (``1000``, ``1e-06``) must be exact; ``21.618…``
  means "these leading digits" (the value lies in [21.618, 21.619)); a lone ``…`` matches any number.
  Words must appear in the same order (the actual text may have more, e.g. ``lower=``).
"""

from __future__ import annotations

import ast
import contextlib
import io
import re
import shlex
import tokenize
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from tests.tolerances import DOC_LAST_DIGIT_UNITS

ARROW = "→"
_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_TOKEN = re.compile(rf"(?P<num>(?<![\w.]){_NUMBER}(?P<trunc>…)?(?![\w]))|(?P<any>…)|(?P<inf>(?<!\w)[-+]?inf(?!\w))"
                    r"|(?P<word>[^\W\d_][\w]*)")
_BOX = re.compile("[\u2500-\u257f]")


@dataclass(frozen=True)
class Block:
    """One fenced block: its language, the 1-based line of its first content line, and its text."""

    lang: str
    line: int
    text: str


def fences(path: Path) -> list[Block]:
    """The fenced code blocks of a Markdown file, in order."""
    blocks: list[Block] = []
    lang: str | None = None
    start = 0
    body: list[str] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if lang is None and line.startswith("```"):
            lang, start, body = line[3:].strip(), number + 1, []
        elif lang is not None and line.startswith("```"):
            blocks.append(Block(lang, start, "\n".join(body) + "\n"))
            lang = None
        elif lang is not None:
            body.append(line)
    return blocks


# ---------------------------------------------------------------------------------------------
# Comparing a shown value with a computed one
# ---------------------------------------------------------------------------------------------

def tokens(text: str) -> list[tuple[str, str]]:
    """(kind, text) tokens: numbers ("num", "trunc"), "any" (a lone …), "inf" and words; the rest is ignored."""
    out: list[tuple[str, str]] = []
    for m in _TOKEN.finditer(_BOX.sub(" ", text)):
        if m.group("num"):
            out.append(("trunc" if m.group("trunc") else "num", m.group("num").rstrip("…")))
        elif m.group("any"):
            out.append(("any", "…"))
        elif m.group("inf"):
            out.append(("num", m.group("inf")))
        else:
            out.append(("word", m.group("word")))
    return out


def _unit(quoted: str) -> float:
    """Units of the last quoted digit that a match may differ by (0: exact)."""
    mantissa, _, exponent = quoted.lower().partition("e")
    if "." not in mantissa:
        return 0.0
    decimals = len(mantissa.split(".")[1])
    return DOC_LAST_DIGIT_UNITS * 10.0 ** (int(exponent or 0) - decimals)


def number_matches(kind: str, quoted: str, actual: str) -> bool:
    """Whether the computed number ``actual`` (its text) matches the shown ``quoted``."""
    if kind == "any":
        return True
    if "inf" in quoted or "inf" in actual:
        return quoted.lstrip("+") == actual.lstrip("+")
    q, a = float(quoted), float(actual)
    if kind == "trunc":  # leading digits: a ∈ [q, q + one unit of the last digit), away from 0
        step = 10.0 ** (int(quoted.lower().partition("e")[2] or 0) - len(quoted.lower().partition("e")[0].split(".")[1]))
        return abs(q) <= abs(a) < abs(q) + step and (a >= 0) == (q >= 0)
    unit = _unit(quoted)
    if unit == 0.0:
        return Decimal(quoted) == Decimal(actual) or q == a
    return abs(a - q) <= unit * (1 + 1e-9)


def _token_matches(want: tuple[str, str], got: tuple[str, str]) -> bool:
    if want[0] == "word" or got[0] == "word":
        return want == got
    return got[0] == "num" and number_matches(want[0], want[1], got[1])


def compare_excerpt(shown: str, actual_text: str) -> str | None:
    """Like :func:`compare` for output shown with ``…`` lines: each part between them must appear,
    token for token, in the output, the parts in order."""
    got = tokens(actual_text)
    start = 0
    parts = re.split(r"^\s*…\s*$", shown, flags=re.MULTILINE)
    for number, part in enumerate(parts, start=1):
        want = tokens(part)
        if not want:
            continue
        for at in range(start, len(got) - len(want) + 1):
            if all(_token_matches(w, g) for w, g in zip(want, got[at:at + len(want)], strict=True)):
                start = at + len(want)
                break
        else:
            return f"part {number} of the excerpt ({part.strip()[:60]!r}…) is not in the output with these values"
    return None


def compare(shown: str, actual_text: str) -> str | None:
    """None if ``actual_text`` shows the same numbers (within the stated tolerance) and words as ``shown``;
    otherwise which value differs."""
    want = tokens(shown)
    got = tokens(actual_text)
    want_numbers = [t for t in want if t[0] != "word"]
    got_numbers = [t for t in got if t[0] == "num"]
    if len(want_numbers) != len(got_numbers):
        return f"{len(want_numbers)} numbers shown, {len(got_numbers)} computed"
    for i, ((kind, q), (_, a)) in enumerate(zip(want_numbers, got_numbers, strict=True)):
        if not number_matches(kind, q, a):
            return f"number #{i + 1}: shown {q}{'…' if kind == 'trunc' else ''}, computed {a}"
    got_words = iter(w for k, w in got if k == "word")
    for kind, word in want:
        if kind == "word" and not any(word == w for w in got_words):
            return f"word {word!r} is not in the output (in this order)"
    return None


# ---------------------------------------------------------------------------------------------
# Python blocks
# ---------------------------------------------------------------------------------------------

def _comments(source: str) -> dict[int, str]:
    """Line number (1-based, in ``source``) → the comment on that line, without the ``#``."""
    out: dict[int, str] = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            out[tok.start[0]] = tok.string[1:]
    return out


def _expected_after(comments: dict[int, str], line: int) -> str | None:
    """The VALUE of a ``# → VALUE`` comment on ``line`` (continued on later comment lines while open)."""
    text = comments.get(line, "").strip()
    if not text.startswith(ARROW):
        return None
    text = text[len(ARROW):].strip()
    value, depth, i = [], 0, 0
    while True:
        while i < len(text):
            c = text[i]
            if depth == 0 and (text.startswith(": ", i) or text.startswith("  ", i) or c == ";"):
                return "".join(value).strip()
            depth += c in "([{"
            depth -= c in ")]}"
            value.append(c)
            i += 1
        if depth <= 0 or (line + 1) not in comments:
            return "".join(value).strip()
        line += 1
        text, i = comments[line].strip(), 0
        value.append(" ")


@dataclass(frozen=True)
class Check:
    """One statement of a Python block: where it is, its source, and the value shown for it (if any)."""

    line: int
    source: str
    expected: str | None


def python_checks(block: Block) -> Iterator[Check]:
    comments = _comments(block.text)
    tree = ast.parse(block.text)
    lines = block.text.splitlines()
    for stmt in tree.body:
        end = stmt.end_lineno or stmt.lineno
        source = "\n".join(lines[stmt.lineno - 1:end])
        expected = None
        if isinstance(stmt, ast.Expr):  # the value on its last line, or on the comment-only line below it
            below = end + 1 if end < len(lines) and lines[end].lstrip().startswith("#") else end
            expected = _expected_after(comments, end) or _expected_after(comments, below)
        yield Check(block.line + stmt.lineno - 1, source, expected)


def run_python(block: Block, namespace: dict[str, Any], where: str) -> list[str]:
    """Run a block's statements; the failures, each naming the document line, the statement and the value."""
    failures: list[str] = []
    for check in python_checks(block):
        label = f"{where}:{check.line}: `{check.source.strip().splitlines()[0]}`"
        try:
            if check.expected is None:
                exec(compile(check.source, where, "exec"), namespace)  # noqa: S102 - the document's own snippet
                continue
            value = eval(compile(check.source.strip(), where, "eval"), namespace)
        except Exception as exc:  # noqa: BLE001 - a snippet that raises is reported with its line
            failures.append(f"{label} raised {type(exc).__name__}: {exc}")
            continue
        problem = compare(check.expected, repr(value))
        if problem is not None:
            failures.append(f"{label}: {problem}\n    shown:    {check.expected}\n    computed: {value!r}")
    return failures


# ---------------------------------------------------------------------------------------------
# Console blocks
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Command:
    line: int
    argv: list[str]
    shown: str


def console_commands(block: Block) -> Iterator[Command]:
    """``$ optcomp ...`` lines that are followed by output, with that output."""
    current: tuple[int, str] | None = None
    shown: list[str] = []
    for offset, text in enumerate([*block.text.splitlines(), "$ "]):
        if text.startswith("$ "):
            if current is not None and any(s.strip() for s in shown):
                argv = shlex.split(current[1], comments=True)
                if argv and argv[0] == "optcomp":
                    yield Command(current[0], argv[1:], "\n".join(shown))
            current, shown = (block.line + offset, text[2:]), []
        else:
            shown.append(text)


def run_console(block: Block, where: str, skip: Callable[[str], bool] = lambda shown: False) -> list[str]:
    """Run a block's commands that show output (except where ``skip(shown)``); the failures, each naming
    the document line, the command and the value that differs."""
    from optcomp.cli import main

    failures: list[str] = []
    for command in console_commands(block):
        if skip(command.shown):
            continue
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(command.argv)
        printed = out.getvalue() + err.getvalue()
        label = f"{where}:{command.line}: `optcomp {shlex.join(command.argv)}`"
        excerpt = re.search(r"^\s*…\s*$", command.shown, flags=re.MULTILINE) is not None
        problem = (compare_excerpt if excerpt else compare)(command.shown, printed)
        if problem is None and (status == 2) != ("optcomp: error:" in command.shown):
            problem = f"exit status {status}"
        if problem is not None:
            failures.append(f"{label} (exit {status}): {problem}\n--- shown:\n{command.shown}\n--- printed:\n{printed}")
    return failures


def write_named_files(block: Block) -> None:
    """A ``toml``/``json`` block whose first line is ``# NAME.ext ...`` is written to NAME.ext (cwd)."""
    first = block.text.splitlines()[0] if block.text.strip() else ""
    m = re.match(r"#\s*([\w.-]+\.(?:toml|json))\b", first)
    if m:
        Path(m.group(1)).write_text(block.text, encoding="utf-8")


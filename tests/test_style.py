"""Project conventions that a grep can check (STYLE.md: one place for numbers)."""

from __future__ import annotations

import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "optcomp"
TINY_FLOAT = re.compile(r"\b\d*\.?\d+e-1\d\b")


def test_tiny_float_literals_live_in_numerics() -> None:
    offenders = [
        f"{path.relative_to(SRC)}:{n}"
        for path in SRC.rglob("*.py")
        if path.name != "_numerics.py"
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if TINY_FLOAT.search(line.split("#", 1)[0])
    ]
    assert offenders == [], f"tolerance-like literals outside _numerics.py: {offenders}"


def test_library_never_imports_peers() -> None:
    offenders = [
        str(path.relative_to(SRC))
        for path in SRC.rglob("*.py")
        if re.search(r"^\s*(import|from)\s+(dp_accounting|prv_accountant)\b", path.read_text(encoding="utf-8"), re.MULTILINE)
    ]
    assert offenders == []

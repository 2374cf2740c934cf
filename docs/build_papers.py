"""Fill docs/papers.md from docs/papers.md.in and the committed output of ``optcomp reproduce --all --output docs/img``.

Run: ``PYTHONPATH=src python docs/build_papers.py``. Runtimes are not quoted: docs timings are
``benchmarks/RESULTS*.md`` cells (tests/test_readme.py).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from optcomp.reproduce._core import markdown_checks

HERE = Path(__file__).resolve().parent


def main() -> None:
    text = (HERE / "papers.md.in").read_text(encoding="utf-8")

    def table(match: re.Match[str]) -> str:
        return markdown_checks(json.loads((HERE / "img" / f"{match.group(1)}.json").read_text(encoding="utf-8")))

    text = re.sub(r"@TABLE:([a-z0-9-]+)@", table, text)
    (HERE / "papers.md").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()

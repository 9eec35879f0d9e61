"""bench/RESULTS.md: each benchmark owns one `## …` section and replaces only that one (appending it the first
time), leaving the others as they are."""
from __future__ import annotations

import re
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"


def write_section(heading: str, text: str, path: Path = RESULTS) -> None:
    """Replace the section that starts with the line `## {heading}` by `text` (which starts with that line)."""
    old = path.read_text() if path.exists() else "# Benchmark results\n"
    pat = re.compile(rf"^## {re.escape(heading)}\n.*?(?=^## |\Z)", re.S | re.M)
    body = text.rstrip("\n") + "\n"
    new = pat.sub(lambda _: body + "\n", old) if pat.search(old) else old.rstrip("\n") + "\n\n" + body
    path.write_text(new.rstrip("\n") + "\n")

"""benchmarks/RESULTS.md is shared by several benchmarks: each owns one marked section."""

from __future__ import annotations

import re
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
HEADER = "# Benchmark results\n\nThe latest numbers of every benchmark under benchmarks/ (`python -m benchmarks` and the modules named in each section).\n"


def replace_section(begin: str, end: str, section: str) -> None:
    """Write `section` (which starts with `begin` and ends with `end`) in place of the old one, or append it."""
    text = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else HEADER
    if begin in text and end in text:
        text = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _: section, text, flags=re.DOTALL)
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    RESULTS.write_text(text, encoding="utf-8")

"""benchmarks/RESULTS.md is shared by several benchmarks: each owns one marked section."""

from __future__ import annotations

import re
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
HEADER = (
    "# Benchmark results\n\nRegenerate the gate-corpus and vector sections with one command, on a quiet machine if you can:\n"
    "`python -m benchmarks` (1k and 20k brains grown through the tools, cached under benchmarks/.cache/;\n"
    "add `--sizes 1k,20k,200k` for the 200k brain). The other sections name their own modules.\n"
)


def replace_section(begin: str, end: str, section: str) -> None:
    """Write `section` (which starts with `begin` and ends with `end`) in place of the old one, or append it."""
    text = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else HEADER
    if begin in text and end in text:
        text = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _: section, text, flags=re.DOTALL)
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    RESULTS.write_text(text, encoding="utf-8")

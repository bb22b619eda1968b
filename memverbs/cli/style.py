"""How listings look: colour that honours NO_COLOR and pipes, and table / csv / jsonl / json output.

Colour is on only when stdout is a terminal, NO_COLOR is unset (https://no-color.org) and TERM is
not "dumb"; FORCE_COLOR turns it on regardless (for pagers such as `less -R`).
"""

from __future__ import annotations

import csv
import json
import os
import re
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import TextIO

FORMATS = ("table", "csv", "jsonl", "json")

# The columns of free text, which a table may cut to fit; every other column is printed whole.
PROSE = frozenset({"title", "fact", "text", "detail", "snippet", "summary", "provenance"})
_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")
_CODES = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "blue": "34", "magenta": "35", "cyan": "36"}


def colour_on(stream: TextIO | None = None) -> bool:
    stream = stream or sys.stdout
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    if os.environ.get("TERM") == "dumb":
        return False
    return bool(getattr(stream, "isatty", lambda: False)())


def paint(text: str, style: str, stream: TextIO | None = None) -> str:
    if not text or not colour_on(stream):
        return text
    codes = ";".join(_CODES[s] for s in style.split())
    return f"\033[{codes}m{text}\033[0m"


def day(iso_text: str | None) -> str:
    """2026-11-30T16:04:47.123Z → 2026-11-30 16:04 (UTC); empty for None."""
    if not iso_text:
        return ""
    return iso_text[:16].replace("T", " ")


def emit(rows: Sequence[dict], columns: Sequence[str], fmt: str, *, empty: str = "(nothing)") -> None:
    """Print rows as an aligned table, CSV, JSON Lines or one JSON array (all columns, as given)."""
    if fmt == "json":
        print(json.dumps(list(rows), indent=2, ensure_ascii=False))
        return
    if fmt == "jsonl":
        for row in rows:
            print(json.dumps(row, ensure_ascii=False))
        return
    if fmt == "csv":
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(columns)
        for row in rows:
            writer.writerow(["" if row.get(c) is None else row.get(c) for c in columns])
        return
    if not rows:
        print(empty)
        return
    cells = [[_cell(row.get(c)) for c in columns] for row in rows]
    widths = [max(len(c), *(width(r[i]) for r in cells)) for i, c in enumerate(columns)]
    # Identifiers (slugs, ids) are printed whole: a person copies them into the next command. Only
    # prose columns are cut, to what the terminal leaves them (60 characters when not a terminal).
    prose = [i for i, c in enumerate(columns) if c in PROSE]
    if prose:
        room = 60
        if sys.stdout.isatty():
            import shutil  # noqa: PLC0415

            fixed = sum(w for i, w in enumerate(widths) if i not in prose) + 2 * (len(columns) - 1)
            room = max(20, (shutil.get_terminal_size().columns - fixed) // len(prose))
        for r in cells:
            for i in prose:
                if width(r[i]) > room:
                    r[i] = _cut(r[i], room - 1) + "…"
        widths = [max(len(c), *(width(r[i]) for r in cells)) for i, c in enumerate(columns)]
    print(paint("  ".join(c.upper().replace("_", " ").ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip(), "bold"))
    for r in cells:
        print("  ".join(_pad(v, w) for v, w in zip(r, widths, strict=True)).rstrip())


def print_aligned(table: Sequence[Sequence[str]]) -> None:
    """Rows of strings (the header first) in left-aligned columns, never cut: the listings whose
    cells are identifiers a person copies (tokens, OAuth clients)."""
    widths = [max(width(row[i]) for row in table) for i in range(len(table[0]))]
    for row in table:
        print("  ".join(_pad(cell, w) for cell, w in zip(row, widths, strict=True)).rstrip())


def width(text: str) -> int:
    """The columns a terminal gives `text`: two for a wide character (CJK, fullwidth forms), none for a
    combining mark or a zero-width one, one for the rest; so `日本` lines up with `ab` + 2 spaces."""
    if text.isascii():
        return len(text)
    import unicodedata  # noqa: PLC0415 - loaded already by the names module; only a non-ASCII cell asks

    return sum(0 if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf")
               else 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in text)


def _pad(text: str, columns: int) -> str:
    return text + " " * max(0, columns - width(text))


def _cut(text: str, columns: int) -> str:
    """The longest start of `text` that fits in `columns`."""
    out, used = [], 0
    for ch in text:
        used += width(ch)
        if used > columns:
            break
        out.append(ch)
    return "".join(out)


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    text = str(value)
    if _ISO.match(text):
        return day(text)
    return text.replace("\n", " ")

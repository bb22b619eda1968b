"""Our entries in a TOML file (Codex, Grok): one marked block, written with tomli-w.

The TOML parsers of these harnesses reject unknown keys and their own CLIs
rewrite the file without comments, so memverbs keeps everything it owns in a
single block between two marker comments, appended at the end (TOML tables may
appear in any order). Install replaces the block, uninstall cuts it out; every
byte outside it stays as the user left it (our lines use the file's own line
ending). The result is parsed with tomllib before anything is written.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass

import tomli_w

from memverbs.installers.files import newline_of
from memverbs.server.errors import MemverbsError

BEGIN = "# >>> memverbs >>> managed by `memverbs install`; `memverbs uninstall` removes this block"
END = "# <<< memverbs <<<"
# Top-level keys cannot follow a table, so the few memverbs sets go in a second block at the top.
TOP_BEGIN = "# >>> memverbs top-level >>> managed by `memverbs install`"
TOP_END = "# <<< memverbs top-level <<<"


@dataclass(frozen=True)
class Markers:
    """The marker lines of one kind of block: `memverbs install`'s, or `memverbs connect --install`'s.

    Each owner finds, replaces and removes only its own block; the other's is
    "outside" to it, so a second `[mcp_servers.memverbs]` is caught by the conflict check."""

    name: str
    begin: str
    end: str
    top_begin: str
    top_end: str


LOCAL = Markers("local", BEGIN, END, TOP_BEGIN, TOP_END)
REMOTE = Markers(
    "remote",
    "# >>> memverbs remote >>> managed by `memverbs connect --install`; `memverbs disconnect` removes this block",
    "# <<< memverbs remote <<<",
    "# >>> memverbs remote top-level >>> managed by `memverbs connect --install`",
    "# <<< memverbs remote top-level <<<",
)
MARKERS = {m.name: m for m in (LOCAL, REMOTE)}


class TomlEditError(MemverbsError, ValueError):
    """The TOML file cannot be read or edited safely; the message says where."""


def parse(text: str, where: str) -> dict:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TomlEditError(f"{where} is not valid TOML ({exc})") from exc


def split(text: str, begin: str = BEGIN, end_marker: str = END) -> tuple[str, str | None, str]:
    """(before, block, after): our block (markers included) and what surrounds it."""
    start = text.find(begin)
    if start < 0:
        return text, None, ""
    end = text.find(end_marker, start)
    if end < 0:
        raise TomlEditError("the memverbs block has a start marker but no end marker")
    end += len(end_marker)
    if text.startswith("\r\n", end):
        end += 2
    elif text.startswith("\n", end):
        end += 1
    return text[:start], text[start:end], text[end:]


def upsert(text: str, data: dict, top: dict | None = None, markers: Markers = LOCAL) -> str:
    """Our block (re)written at the end, and `top` — top-level keys — in the top block."""
    nl = newline_of(text)

    def lines(*parts: str) -> str:
        return "".join(part.replace("\n", nl) + nl for part in parts)

    text = remove_top(text, markers)
    if top:
        text = lines(markers.top_begin, tomli_w.dumps(top).rstrip(), markers.top_end) + text
    before, _, after = split(text, markers.begin, markers.end)
    outside = before + after
    if outside and not outside.endswith("\n"):
        outside += nl
    sep = nl if outside and not outside.endswith(nl + nl) and not outside.endswith("\n\n") else ""
    block = lines(markers.begin, tomli_w.dumps(data).rstrip(), markers.end)
    return outside + sep + block


def remove_top(text: str, markers: Markers = LOCAL) -> str:
    before, block, after = split(text, markers.top_begin, markers.top_end)
    return text if block is None else before + after


def remove(text: str, markers: Markers = LOCAL) -> str:
    text = remove_top(text, markers)
    before, block, after = split(text, markers.begin, markers.end)
    if block is None:
        return text
    # Drop the blank line upsert put in front of the block.
    nl = newline_of(text)
    if before.endswith(nl + nl):
        before = before[: -len(nl)]
    elif before.endswith("\n\n"):
        before = before[:-1]
    return before + after

"""Harness transcripts, read into one shape: who said what, when, which tools ran and how they ended.

Each harness keeps its own sessions (docs/hooks.md, "Capture"); one reader each, under readers/:
Claude Code's and Codex's JSONL files, Grok Build's ACP update stream, OpenClaw's session events
(a JSONL file or its SQLite store) and opencode's SQLite store; reading.py opens a transcript with
its harness's reader. This module is what they share: the shapes, and reading lines.

A reader turns the harness's entries into events:
* `Said("user", …)` — only what the user typed (authorship.py decides, entry by entry); what the
  harness wrote in the user's turn is `Said("harness", …, label=…)`: kept apart, never a fact;
* `Said("assistant", …)`;
* `ToolRun` — a command or a file edit and how it ended, yielded when its result arrives (or, never
  answered, at the end); its output only as much as an outcome needs.

Reading streams: `Transcript.stream()` yields events as it reads, holding only the tool calls
still waiting for their result, so a 100 MB transcript costs the memory of its largest line (a
line over MAX_LINE is skipped unread). A line that does not parse, or whose shape no reader
expects, is skipped and counted (`Transcript.skipped`), never an error: a transcript is being
written while it is read. `Transcript.resume_at` is the last position (a byte offset in a file, a
row in a store) where the reader held nothing half-read: a capture stopped there resumes from it
(state.py).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import BinaryIO
from urllib.parse import quote

MAX_LINE = 4 << 20  # a longer line (a pasted file, an image) carries nothing capture keeps
OUTPUT_KEEP = 4_000  # a tool's output is read for its outcome only; its head and tail are enough
MAX_PENDING = 256  # tool calls waiting for a result, at most; an older one is taken as never answered
EDIT_TOOLS = {"Edit", "Write", "MultiEdit", "NotebookEdit", "apply_patch", "edit", "write", "patch", "search_replace"}
SHELL_TOOLS = {"Bash", "exec_command", "shell", "local_shell", "bash", "run_terminal_cmd", "run_terminal_command"}
READERS = ("claude", "codex", "grok", "openclaw", "opencode")  # a harness with a reader of its own; any other is told from the file


class BadShape(ValueError):
    """An entry that is not the shape its reader expects (a message that is a list, content that is a
    number, a tool call's id that is an object): skipped and counted, like a line that is not JSON."""


def expect(condition: bool) -> None:
    if not condition:
        raise BadShape


def a_dict(value: object) -> dict:
    """`value`, which must be an object (a dict) for its entry to be read."""
    if not isinstance(value, dict):
        raise BadShape
    return value


# What reading a line of unexpected shape raises: that line is skipped and counted.
BAD_SHAPE = (BadShape, TypeError, ValueError, AttributeError, KeyError, IndexError, RecursionError, UnicodeError)


@dataclass
class Said:
    role: str  # "user" | "assistant" | "harness" (written by the harness in the user's turn)
    text: str
    at: str | None = None  # ISO time it was said, when the transcript says
    label: str = ""  # for "harness": what wrote it (bash-stdout, task-notification, compaction-summary, …)


@dataclass
class ToolRun:
    name: str
    command: str | None = None  # a shell command
    paths: list[str] = field(default_factory=list)  # files an edit tool changed
    ok: bool | None = None  # None: no result seen (the session ended, or the harness did not say)
    output: str = ""
    call_id: str | None = None
    remembered: str | None = None  # the fact, when this was a memverbs `remember` call


Event = Said | ToolRun


@dataclass
class Transcript:
    harness: str
    session_id: str
    path: str
    cwd: str | None = None
    started: str | None = None  # ISO timestamp of the first entry
    skipped: int = 0  # lines that could not be read
    start: int = 0  # where reading begins: 0, or a stopped capture's resume point
    resume_at: int = 0  # the last position where nothing was half-read
    settled: bool = False  # read to its end with nothing half-read: `resume_at` is the end
    store_session: str | None = None  # the session's id inside a SQLite store
    events: list[Event] | None = field(default=None, repr=False)  # read already (reading.read_transcript), or given
    reader: Callable[[Transcript], Iterator[Event]] | None = field(default=None, repr=False)  # its harness's (reading.py)

    def stream(self) -> Iterator[Event]:
        if self.events is not None:
            yield from self.events
        elif self.reader is not None:
            yield from self.reader(self)

    def _read(self) -> list[Event]:
        if self.events is None:
            self.events = list(self.stream())
        return self.events

    def said(self, role: str) -> list[str]:
        return [e.text for e in self._read() if isinstance(e, Said) and e.role == role]

    def runs(self) -> list[ToolRun]:
        return [e for e in self._read() if isinstance(e, ToolRun)]


# -- reading lines --------------------------------------------------------------------------------


def entries(path: str, start: int = 0) -> Iterator[tuple[dict | None, int]]:
    """Each JSONL line from byte `start` as `(object, offset after the line)`; `(None, offset)` for a line
    that is too long, not JSON, or not an object. A line over MAX_LINE is skipped without being held."""
    try:
        fh = open(path, "rb")  # noqa: SIM115 - closed by the with below; bytes: a bad encoding is one line's loss
    except OSError:
        return
    with fh:
        if start:
            fh.seek(start)
        offset = start
        while True:
            raw = fh.readline(MAX_LINE + 1)
            if not raw:
                return
            offset += len(raw)
            if len(raw) > MAX_LINE and not raw.endswith(b"\n"):
                offset += _skip_line(fh)
                yield None, offset
                continue
            if raw.strip():
                yield parse_entry(raw), offset


def _skip_line(fh: BinaryIO) -> int:
    skipped = 0
    while True:
        chunk = fh.readline(1 << 20)
        skipped += len(chunk)
        if not chunk or chunk.endswith(b"\n"):
            return skipped


def parse_entry(raw: str | bytes) -> dict | None:
    """One JSONL line or stored event as an object; None when it is too long, not JSON (deep nesting
    included), or not an object."""
    if len(raw) > MAX_LINE:
        return None
    try:
        entry = json.loads(raw)
        if _ESCAPED_SURROGATE.search(raw if isinstance(raw, bytes) else raw.encode("utf-8", "surrogatepass")):
            json.dumps(entry, ensure_ascii=False).encode("utf-8")  # a lone surrogate cannot be stored: the line is lost
    except (ValueError, RecursionError):  # UnicodeEncodeError is a ValueError
        return None
    return entry if isinstance(entry, dict) else None


_ESCAPED_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")


def guarded(t: Transcript, handle: Callable[[dict], Iterator[Event]], entry: dict | None) -> Iterator[Event]:
    """The events of one entry, or none (and one more skipped) when it is not the shape its reader expects."""
    if entry is None:
        t.skipped += 1
        return
    try:
        produced = list(handle(entry))
    except BAD_SHAPE:
        t.skipped += 1
        return
    yield from produced


# -- pieces of entries ----------------------------------------------------------------------------


def text_of(value: object) -> str | None:
    """An optional string field (an id, a directory): absent is fine, another shape makes the entry a bad one."""
    if value is None or isinstance(value, str):
        return value
    raise BadShape


def call_id(value: object) -> str:
    """A tool call's id as the string its result refers to; an id of any other shape makes the entry a bad one."""
    if value is None:
        return ""
    expect(isinstance(value, str | int) and not isinstance(value, bool))
    return str(value)



def stamp(value: object) -> str | None:
    """An ISO time from an ISO string, or from epoch seconds or milliseconds."""
    if isinstance(value, str) and len(value) >= 10 and value[4:5] == "-":
        return value
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        seconds = value / 1000 if value > 1e11 else value
        try:
            return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        except (OverflowError, OSError, ValueError):
            return None
    return None


def flatten(content: object, limit: int = OUTPUT_KEEP * 4) -> str:
    """The text in a tool result's content (a string, or blocks nested any depth), up to about `limit` characters."""
    out: list[str] = []
    size = 0
    stack: list[object] = [content]
    while stack and size < limit:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
            size += len(item)
        elif isinstance(item, list):
            stack.extend(reversed(item))
        elif isinstance(item, dict):
            if isinstance(item.get("text"), str):
                stack.append(item["text"])
            else:
                stack.append(item.get("content"))
    return "\n".join(out)


def clip(text: str) -> str:
    if len(text) <= OUTPUT_KEEP:
        return text
    half = OUTPUT_KEEP // 2
    return text[:half] + "\n…\n" + text[-half:]


class Pending:
    """Tool calls waiting for their result, oldest first, at most MAX_PENDING."""

    def __init__(self) -> None:
        self._runs: dict[str, ToolRun] = {}

    def start(self, run: ToolRun) -> Iterator[ToolRun]:
        """Hold `run` until its result; yields a call pushed out unanswered (the oldest, past the bound)."""
        key = run.call_id or f"#{len(self._runs)}-{id(run)}"
        self._runs[key] = run
        while len(self._runs) > MAX_PENDING:
            yield self._runs.pop(next(iter(self._runs)))

    def finish(self, key: str) -> ToolRun | None:
        return self._runs.pop(key, None) if key else None

    def get(self, key: str) -> ToolRun | None:
        return self._runs.get(key) if key else None

    def drain(self) -> Iterator[ToolRun]:
        """The calls never answered (the session ended, or was cut)."""
        runs, self._runs = list(self._runs.values()), {}
        yield from runs

    def __bool__(self) -> bool:
        return bool(self._runs)


def tool_run(name: str, call: str, args: dict, *, shell: bool = False, edit: bool = False,
             paths: tuple[str, ...] = ("file_path", "path")) -> ToolRun:
    """A tool call as a run: its command when it runs one (a shell tool, or `shell`), its file when it
    edits one (an edit tool, or `edit`; the file under the first of `paths` its arguments have)."""
    run = ToolRun(name=name, call_id=call or None, remembered=remembered_fact(name, args))
    if (shell or name in SHELL_TOOLS) and isinstance(args.get("command"), str):
        run.command = args["command"]
    elif edit or name in EDIT_TOOLS:
        run.paths = [args[key] for key in paths if isinstance(args.get(key), str)][:1]
    return run


# -- a memverbs `remember` call ----------------------------------------------------------------

# Whatever prefix its harness gives MCP tools (`mcp__memverbs__remember`, `memverbs_remember`, a
# Codex namespace's bare `remember`).
_REMEMBER_TOOL = re.compile(r"(?:^|[_.:/-])remember$")


def remembered_fact(name: str, args: object) -> str | None:
    """The fact a memverbs `remember` call saved, else None: capture keeps none of it twice."""
    if not _REMEMBER_TOOL.search(name) or not isinstance(args, dict):
        return None
    fact = args.get("fact")
    return fact if isinstance(fact, str) and fact.strip() else None


# -- SQLite stores ---------------------------------------------------------------------------------


def is_sqlite(path: str) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def store_query(path: str, sql: str, params: tuple = ()) -> list[tuple]:
    """Rows from a harness's SQLite store, opened read-only (the store is the harness's, and live);
    none when it cannot be read."""
    import sqlite3  # noqa: PLC0415 - the SQLite stores' readers only

    uri = "file:" + quote(os.path.abspath(path)) + "?mode=ro"
    try:
        db = sqlite3.connect(uri, uri=True, timeout=5)
    except sqlite3.Error:
        return []
    try:
        return db.execute(sql, params).fetchall()
    except sqlite3.Error:
        return []
    finally:
        db.close()

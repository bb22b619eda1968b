"""Opening a transcript: its harness (given, or told from the file), and that harness's reader.

`open_transcript` is for streaming (the capture engine reads a session once, from a checkpoint's
position when there is one); `read_transcript` reads it whole into memory, for small transcripts
and tests. transcript.py holds the shapes; readers/ one reader per harness.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

from memverbs.server.capture.readers import claude, codex, grok, openclaw, opencode
from memverbs.server.capture.transcript import Event, Transcript, entries, is_sqlite, store_query

_READERS: dict[str, Callable[[Transcript], Iterator[Event]]] = {
    "codex": codex.read, "grok": grok.read, "openclaw": openclaw.read, "opencode": opencode.read,
}


def open_transcript(path: str | os.PathLike[str], harness: str | None = None, session_id: str | None = None,
                    start: int = 0) -> Transcript:
    """The transcript at `path`, to be streamed by its harness's reader (`harness`, or told from the
    file's first lines) from `start`. `session_id` picks one session out of a store that holds many."""
    path = os.fspath(path)
    harness = harness or sniff(path)
    return Transcript(harness=harness, session_id=session_id or Path(path).stem, path=path, start=start,
                      resume_at=start, store_session=session_id, reader=_READERS.get(harness, claude.read))


def read_transcript(path: str | os.PathLike[str], harness: str | None = None, session_id: str | None = None) -> Transcript:
    """The whole transcript at `path`, read (its events in memory: for small transcripts and tests)."""
    t = open_transcript(path, harness, session_id)
    t.events = list(t.stream())
    return t


def sniff(path: str) -> str:
    """`codex` for a rollout file (its first line is `session_meta`), `grok` for an ACP update stream,
    `openclaw` or `opencode` for its session file or SQLite store, else `claude`."""
    if is_sqlite(path):
        return "opencode" if _sqlite_tables(path) >= {"session", "message", "part"} else "openclaw"
    for n, (entry, _) in enumerate(entries(path)):
        if n >= 5:
            break
        if entry is None:
            continue
        if entry.get("type") == "session" and "version" in entry:
            return "openclaw"
        if entry.get("type") in ("session_meta", "response_item", "event_msg", "turn_context"):
            return "codex"
        if isinstance(entry.get("params"), dict) and str(entry.get("method", "")).endswith("session/update"):
            return "grok"
        if "sessionId" in entry or entry.get("type") in ("user", "assistant", "queue-operation", "summary"):
            return "claude"
    return "claude"




def _sqlite_tables(path: str) -> set[str]:
    return {name for (name,) in store_query(path, "SELECT name FROM sqlite_master WHERE type = 'table'")}

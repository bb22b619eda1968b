"""opencode: no transcript file; its SQLite store `~/.local/share/opencode/opencode.db` (under
`$XDG_DATA_HOME`) holds every session, read-only by session id.

`session` (`directory`), `message` (`data.role`, `data.time.created`) and `part` rows: `text`
(a `synthetic` one is opencode's own, never the user's), `tool` with `state.input`,
`state.status` and `state.metadata.exit`; a `file` part (an attached file) is nobody's words.
Parts are read a page at a time, in order; each tool part is complete in itself.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import partial

from memverbs.server.capture.readers import user_turn
from memverbs.server.capture.transcript import (
    MAX_LINE,
    Event,
    Said,
    ToolRun,
    Transcript,
    call_id,
    clip,
    guarded,
    stamp,
    store_query,
    tool_run,
)

PAGE = 500


def read(t: Transcript) -> Iterator[Event]:
    sid = t.store_session
    t.session_id = sid or ""
    if not sid:
        return
    for directory, created in store_query(t.path, "SELECT directory, time_created FROM session WHERE id = ?", (sid,)):
        t.cwd = directory if isinstance(directory, str) and directory else None
        t.started = stamp(created)
    messages: dict[object, tuple[object, str | None]] = {}
    for mid, data in store_query(t.path, "SELECT id, data FROM message WHERE session_id = ?", (sid,)):
        message = _json_obj(data)
        when = message.get("time")
        messages[mid] = (message.get("role"), stamp(when.get("created")) if isinstance(when, dict) else None)
    offset = t.start
    while True:
        rows = store_query(t.path, "SELECT message_id, data FROM part WHERE session_id = ? ORDER BY time_created, id "
                                   "LIMIT ? OFFSET ?", (sid, PAGE, offset))
        for message_id, data in rows:
            offset += 1
            role, at = messages.get(message_id, (None, None))
            part = _json_obj(data)
            yield from guarded(t, partial(_part, role=role, at=at), part if part else None)
            t.resume_at = offset
        if len(rows) < PAGE:
            t.settled = True
            return


def _part(part: dict, role: object, at: str | None) -> Iterator[Event]:
    if part.get("type") == "text" and isinstance(part.get("text"), str):
        if part.get("synthetic"):
            if role == "user" and part["text"].strip():
                yield Said("harness", part["text"].strip(), at, "synthetic")
        elif role == "user":
            yield from user_turn(_unquote_prompt(part["text"]), at)
        elif role == "assistant" and part["text"].strip():
            yield Said("assistant", part["text"].strip(), at)
    elif part.get("type") == "tool" and role == "assistant":
        yield _tool(part)


def _json_obj(raw: object) -> dict:
    try:
        value = json.loads(raw) if isinstance(raw, str) and len(raw) <= MAX_LINE else None
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def _unquote_prompt(text: str) -> str:
    # `opencode run "…"` stores the prompt inside a pair of double quotes.
    stripped = text.strip()
    return stripped[1:-1] if len(stripped) >= 2 and stripped[0] == stripped[-1] == '"' else text


def _tool(part: dict) -> ToolRun:
    name = str(part.get("tool") or "")
    raw_state = part.get("state")
    state: dict = raw_state if isinstance(raw_state, dict) else {}
    raw_args = state.get("input")
    run = tool_run(name, call_id(part.get("callID")), raw_args if isinstance(raw_args, dict) else {},
                   paths=("filePath", "file_path", "path"))
    status = state.get("status")
    meta = state.get("metadata")
    code = meta.get("exit") if isinstance(meta, dict) else None
    if status == "error":
        run.ok = False
    elif status == "completed":
        run.ok = code == 0 if isinstance(code, int) else True
    run.output = clip(str(state.get("output") or state.get("error") or ""))
    return run

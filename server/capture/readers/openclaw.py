"""OpenClaw: its session events — `session` (`cwd`), then `message`s whose `message.role` is `user`,
`assistant` (content blocks `text` and `toolCall`) or `toolResult` (`details.exitCode`, `isError`).

In the JSONL file a plugin event names (`sessionFile`) or, since OpenClaw keeps them in SQLite, the
`transcript_events` rows of one session in `~/.openclaw/agents/<agent>/agent/openclaw-agent.sqlite`
(read-only, a page of rows at a time; a zstd-compressed row, an event over OpenClaw's inline size,
is skipped). A user message's text is OpenClaw's prompt body: the user's words inside an envelope
of event lines, metadata blocks and media notes, which authorship.py takes apart.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from memverbs.server.capture.readers import read_entries, user_turn
from memverbs.server.capture.transcript import (
    Event,
    Pending,
    Said,
    ToolRun,
    Transcript,
    a_dict,
    call_id,
    clip,
    entries,
    expect,
    flatten,
    is_sqlite,
    parse_entry,
    stamp,
    store_query,
    text_of,
    tool_run,
)

PAGE = 500  # rows read at a time from the store
_PATCH_FILES = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.MULTILINE)


def read(t: Transcript) -> Iterator[Event]:
    pending = Pending()
    source = _rows(t) if is_sqlite(t.path) else entries(t.path, t.start)
    yield from read_entries(t, source, lambda e: _entry(t, e, pending), pending)
    yield from pending.drain()


def _rows(t: Transcript) -> Iterator[tuple[dict | None, int]]:
    """One session's events from the store, from row `t.start` on, as `(event, next row)`."""
    if not t.store_session:
        return
    after = t.start - 1
    while True:
        rows = store_query(t.path, "SELECT seq, event_json FROM transcript_events WHERE session_id = ? AND seq > ? "
                                   "ORDER BY seq LIMIT ?", (t.store_session, after, PAGE))
        for seq, raw in rows:
            after = seq
            if raw is None:
                continue  # a compressed (large) event: it carries nothing capture keeps, and is not a bad line
            yield (parse_entry(raw) if isinstance(raw, str) else None), seq + 1
        if len(rows) < PAGE:
            return


def _entry(t: Transcript, entry: dict, pending: Pending) -> Iterator[Event]:
    kind = entry.get("type")
    if kind == "session":
        t.session_id = t.store_session or text_of(entry.get("id")) or t.session_id
        t.cwd = t.cwd or text_of(entry.get("cwd"))
        t.started = t.started or stamp(entry.get("timestamp"))
        return
    if kind != "message":
        return
    message = a_dict(entry.get("message"))
    at = stamp(entry.get("timestamp")) or stamp(message.get("timestamp"))
    t.started = t.started or at
    role = message.get("role")
    content = message.get("content")
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    expect((content is None and role == "toolResult") or isinstance(content, list))
    blocks = [a_dict(b) for b in content or []]
    if role == "user":
        yield from user_turn("\n".join(b["text"] for b in blocks if isinstance(b.get("text"), str)), at)
    elif role == "assistant":
        for block in blocks:
            if block.get("type") == "text" and isinstance(block.get("text"), str) and block["text"].strip():
                yield Said("assistant", block["text"].strip(), at)
            elif block.get("type") == "toolCall":
                yield from pending.start(_tool(block))
    elif role == "toolResult":
        done = pending.finish(call_id(message.get("toolCallId")))
        if done is not None:
            details = message.get("details")
            code = details.get("exitCode") if isinstance(details, dict) else None
            done.output = clip(flatten(content))
            done.ok = False if message.get("isError") else code == 0 if isinstance(code, int) else True
            yield done


def _tool(block: dict) -> ToolRun:
    name = str(block.get("name") or "")
    raw = block.get("arguments")
    args: dict = raw if isinstance(raw, dict) else {}
    if name == "apply_patch":
        run = tool_run(name, call_id(block.get("id")), args)
        run.paths = _PATCH_FILES.findall(str(args.get("input") or args.get("patch") or ""))
        return run
    return tool_run(name, call_id(block.get("id")), args, shell=name == "exec", paths=("path", "file_path"))

"""Claude Code: `~/.claude/projects/<dashed cwd>/<session id>.jsonl`.

`user` and `assistant` entries whose `message.content` is a string or a list of `text`,
`tool_use` and `tool_result` blocks. Not the user speaking, whatever the role says: `isMeta`
entries (a slash command's expanded prompt, caveats), `isCompactSummary` and
`isVisibleInTranscriptOnly` entries (a compaction's summary), text beside a tool result (hook
feedback, an interruption notice), and what authorship.py finds the harness wrote in a typed turn.
A sidechain (a subagent's conversation, whose "user" is the agent that delegated) is not read.
Hook output and attachments are entries of their own types, never read as anyone's words.
"""

from __future__ import annotations

from collections.abc import Iterator

from memverbs.server.capture.readers import read_entries, user_turn
from memverbs.server.capture.transcript import (
    BadShape,
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
    stamp,
    text_of,
    tool_run,
)


def read(t: Transcript) -> Iterator[Event]:
    pending = Pending()
    yield from read_entries(t, entries(t.path, t.start), lambda e: _entry(t, e, pending), pending)
    yield from pending.drain()


def _entry(t: Transcript, entry: dict, pending: Pending) -> Iterator[Event]:
    kind = entry.get("type")
    if kind not in ("user", "assistant"):
        return
    t.session_id = text_of(entry.get("sessionId")) or t.session_id
    t.cwd = t.cwd or text_of(entry.get("cwd"))
    at = stamp(entry.get("timestamp"))
    t.started = t.started or at
    if entry.get("isSidechain"):
        return
    content = a_dict(entry.get("message")).get("content")
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise BadShape
    blocks = [a_dict(b) for b in content]
    if kind == "assistant":
        for block in blocks:
            if block.get("type") == "text" and isinstance(block.get("text"), str) and block["text"].strip():
                yield Said("assistant", block["text"].strip(), at)
            elif block.get("type") == "tool_use":
                yield from pending.start(_tool(block))
        return
    texts = [b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)]
    results = [b for b in blocks if b.get("type") == "tool_result"]
    for block in results:
        done = pending.finish(call_id(block.get("tool_use_id")))
        if done is not None:
            done.output = clip(flatten(block.get("content")))
            done.ok = not block.get("is_error", False)
            yield done
    text = "\n".join(texts)
    if not text.strip():
        return
    written_by = ("meta" if entry.get("isMeta") else "compaction-summary" if entry.get("isCompactSummary")
                  or entry.get("isVisibleInTranscriptOnly") else "tool-result-text" if results else None)
    if written_by is not None:
        yield Said("harness", text.strip(), at, written_by)
    else:
        yield from user_turn(text, at)


def _tool(block: dict) -> ToolRun:
    raw = block.get("input")
    expect(raw is None or isinstance(raw, dict))
    return tool_run(str(block.get("name") or ""), call_id(block.get("id")), raw or {}, paths=("file_path", "notebook_path", "path"))

"""Grok Build: `~/.grok/sessions/<url-encoded cwd>/<session id>/updates.jsonl`.

The ACP `session/update` stream: `user_message_chunk` / `agent_message_chunk` (a message may come
in several chunks, joined here), `tool_call` (`rawInput`) and `tool_call_update` (`status`, and
`rawOutput` with the command's `exit_code`). The user's prompt comes wrapped in `<user_query>`;
anything else Grok adds to the user's turn is authorship.py's to tell apart.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote

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
    stamp,
    text_of,
    tool_run,
)


class _Message:
    """The message being streamed, chunk by chunk."""

    def __init__(self) -> None:
        self.speaker: str | None = None
        self.chunks: list[str] = []
        self.at: str | None = None

    def flush(self) -> Iterator[Said]:
        text = "".join(self.chunks).strip()
        speaker, at = self.speaker, self.at
        self.chunks, self.speaker, self.at = [], None, None
        if speaker == "user":
            yield from user_turn(text, at)
        elif speaker == "assistant" and text:
            yield Said("assistant", text, at)


def read(t: Transcript) -> Iterator[Event]:
    folder = Path(t.path).parent
    # The session's folder is named after its id, and its parent after the working directory, url-encoded.
    if t.store_session is None:
        t.session_id = folder.name
    t.cwd = t.cwd or _cwd(folder.parent.name)
    pending, message = Pending(), _Message()
    yield from read_entries(t, entries(t.path, t.start), lambda e: _entry(t, e, pending, message), pending,
                            busy=lambda: message.speaker is not None)
    yield from message.flush()
    yield from pending.drain()


def _entry(t: Transcript, entry: dict, pending: Pending, message: _Message) -> Iterator[Event]:
    if not str(entry.get("method", "")).endswith("session/update"):
        return
    params = a_dict(entry.get("params"))
    update = a_dict(params.get("update"))
    t.session_id = text_of(params.get("sessionId")) or t.session_id
    meta = entry.get("_meta") if isinstance(entry.get("_meta"), dict) else update.get("_meta")
    at = stamp(entry.get("timestamp")) or (stamp(meta.get("agentTimestampMs")) if isinstance(meta, dict) else None)
    t.started = t.started or at
    kind = update.get("sessionUpdate")
    if kind in ("user_message_chunk", "agent_message_chunk"):
        who = "user" if kind == "user_message_chunk" else "assistant"
        if who != message.speaker:
            yield from message.flush()
            message.speaker, message.at = who, at
        text = a_dict(update.get("content")).get("text", "")
        expect(isinstance(text, str))
        message.chunks.append(text)
    elif kind == "tool_call":
        yield from message.flush()
        yield from pending.start(_tool(update))
    elif kind == "tool_call_update" and update.get("status") in ("completed", "failed"):
        done = pending.finish(call_id(update.get("toolCallId")))
        if done is not None:
            done.output, done.ok = _output(update)
            raw = update.get("rawOutput")
            if isinstance(raw, dict) and isinstance(raw.get("current_dir"), str):
                t.cwd = t.cwd or raw["current_dir"]  # a store-less copy of the file: the shell's directory
            yield done
    elif kind == "turn_completed":
        yield from message.flush()


def _cwd(name: str) -> str | None:
    cwd = unquote(name)
    return cwd if cwd.startswith("/") else None


def _tool(update: dict) -> ToolRun:
    meta_raw = update.get("_meta")
    tool_meta = meta_raw.get("x.ai/tool") if isinstance(meta_raw, dict) else None
    meta: dict = tool_meta if isinstance(tool_meta, dict) else {}
    raw = update.get("rawInput")
    return tool_run(str(meta.get("name") or update.get("title") or ""), call_id(update.get("toolCallId")),
                    raw if isinstance(raw, dict) else {}, shell=meta.get("kind") == "execute", edit=meta.get("kind") == "edit",
                    paths=("file_path", "path", "target_file"))


def _output(update: dict) -> tuple[str, bool | None]:
    raw = update.get("rawOutput")
    out: dict = raw if isinstance(raw, dict) else {}
    text = out.get("output_for_prompt")
    if not isinstance(text, str):
        content = update.get("content")
        blocks = content if isinstance(content, list) else []
        text = flatten([c.get("content") if isinstance(c, dict) and c.get("type") == "content" else "" for c in blocks])
    code = out.get("exit_code")
    if update.get("status") == "failed" or out.get("timed_out"):
        return clip(text), False
    return clip(text), code == 0 if isinstance(code, int) else True

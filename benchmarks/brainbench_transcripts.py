"""A replayed conversation written where, and as, each harness keeps its sessions, for capture to read.

The entry shapes follow what the real harnesses wrote in benchmarks/data/capture/ (recorded with
Claude Code 2.1.197, Codex 0.171.0 and OpenClaw 2026.9.6), trimmed to the fields a session of plain
conversation has. What memverbs's hooks injected is written as the harness records it — Claude Code an
`attachment` entry (`hook_additional_context`, after the prompt it came with; the session start's also as
`hook_success` with the hook's stdout, as Claude Code 2.1.197 was seen to write them), Codex a `developer` message, OpenClaw nothing (its
`prependContext` is not kept in the history) — so a capture that took injected text for the user's
words would show here as facts nobody said.

Each turn is dated by its fixture `ts` (write-back fixtures carry one on every turn); a turn without one
comes 20 s after the one before, the first at the session's start.
"""

from __future__ import annotations

import json
import os
import sqlite3
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from benchmarks.brainbench_data import Turn
    from benchmarks.brainbench_score import Delivery

CLAUDE_VERSION = "2.1.197"
CODEX_VERSION = "0.171.0"
STEP_S = 20.0


def turn_times(turns: list[Turn], started: float) -> list[float]:
    """Epoch seconds of each turn: its `ts`, else 20 s after the previous turn."""
    out: list[float] = []
    last = started - STEP_S
    for t in turns:
        stamp = _parse(t.ts) if t.ts else None
        last = stamp if stamp is not None else last + STEP_S
        out.append(last)
    return out


def _parse(ts: str) -> float | None:
    try:
        return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{int(epoch * 1000) % 1000:03d}Z"


def uuid7(epoch: float) -> str:
    """A time-ordered UUID (version 7), as Codex names its threads."""
    ms = int(epoch * 1000)
    rand = int.from_bytes(os.urandom(10), "big")
    value = (ms << 80) | (0x7 << 76) | ((rand >> 68) & 0xFFF) << 64 | (0b10 << 62) | (rand & ((1 << 62) - 1))
    return str(uuid.UUID(int=value))


def _jsonl(path: Path, entries: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries), encoding="utf-8")


# -- Claude Code: ~/.claude/projects/<dashed cwd>/<session id>.jsonl ------------------------------


def claude_path(user_home: Path, cwd: Path, session_id: str) -> Path:
    dashed = "".join(c if c.isalnum() else "-" for c in str(cwd))
    return user_home / ".claude" / "projects" / dashed / f"{session_id}.jsonl"


def write_claude(path: Path, session_id: str, cwd: Path, turns: list[Turn], given: dict[int, Delivery],
                 start: Delivery, started: float) -> None:
    common = {"isSidechain": False, "userType": "external", "entrypoint": "cli", "cwd": str(cwd), "sessionId": session_id,
              "version": CLAUDE_VERSION, "gitBranch": ""}
    entries: list[dict] = []
    parent: str | None = None

    def add(entry: dict, when: float) -> None:
        nonlocal parent
        uid = str(uuid.uuid4())
        entries.append({"parentUuid": parent, **entry, "uuid": uid, "timestamp": iso(when), **common})
        parent = uid

    def hook_context(text: str, event: str, when: float) -> None:
        if text:
            tool_use = event if event == "SessionStart" else f"hook-{uuid.uuid4()}"
            add({"type": "attachment", "attachment": {"type": "hook_additional_context", "content": [text],
                                                      "hookName": event, "toolUseID": tool_use, "hookEvent": event}}, when)

    times = turn_times(turns, started)
    first = times[0] if times else started
    if start.raw:
        add({"type": "attachment", "attachment": {
            "type": "hook_success", "hookName": "SessionStart:startup", "toolUseID": str(uuid.uuid4()), "hookEvent": "SessionStart",
            "content": "", "stdout": start.raw.get("stdout", ""), "stderr": "", "exitCode": 0,
            "command": start.raw.get("command", ""), "durationMs": round(start.ms)}}, first)
    hook_context(start.parts.get("session-start", ""), "SessionStart", first)
    for turn, when in zip(turns, times, strict=True):
        if turn.role == "user":
            add({"type": "user", "message": {"role": "user", "content": turn.text}, "promptId": str(uuid.uuid4()),
                 "permissionMode": "default"}, when)
            if turn.turn_id in given:
                hook_context(given[turn.turn_id].parts.get("prompt", ""), "UserPromptSubmit", when)
        else:
            add({"type": "assistant", "requestId": f"req_{uuid.uuid4().hex[:24]}",
                 "message": {"id": f"msg_{uuid.uuid4().hex[:24]}", "type": "message", "role": "assistant",
                             "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": turn.text}],
                             "stop_reason": "end_turn", "stop_sequence": None,
                             "usage": {"input_tokens": 10, "output_tokens": 5}}}, when)
    _jsonl(path, entries)


# -- Codex: $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl -------------------------------


def codex_path(user_home: Path, session_id: str, started: float) -> Path:
    day = datetime.fromtimestamp(started, UTC)
    return (user_home / ".codex" / "sessions" / day.strftime("%Y") / day.strftime("%m") / day.strftime("%d")
            / f"rollout-{day.strftime('%Y-%m-%dT%H-%M-%S')}-{session_id}.jsonl")


def write_codex(path: Path, session_id: str, cwd: Path, turns: list[Turn], given: dict[int, Delivery],
                start: Delivery, started: float) -> None:
    """As Codex 0.171.0 was seen to write it: each turn's context (`<environment_context>` as a user-role
    message the user never typed), the session start's hook context as a developer message before the
    first prompt, a prompt hook's after its prompt, both marked `hooks.additional_context`."""
    times = turn_times(turns, started)
    first = times[0] if times else started
    entries: list[dict] = []

    def add(kind: str, payload: dict, when: float) -> None:
        entries.append({"timestamp": iso(when), "type": kind, "payload": payload})

    def message(role: str, text: str, when: float, turn_id: str, kinds: str, provenance: str) -> None:
        add("response_item", {"type": "message", "id": f"msg_{uuid.uuid4()}", "role": role,
                              "content": [{"type": "output_text" if role == "assistant" else "input_text", "text": text}],
                              "internal_chat_message_metadata_passthrough": {
                                  "turn_id": turn_id, "create_time": when, "content_item_kinds": [kinds],
                                  "content_item_metadata": [{"provenance": {"type": provenance}}]}}, when)

    add("session_meta", {"id": session_id, "session_id": session_id, "timestamp": iso(first), "cwd": str(cwd),
                         "originator": "codex_exec", "cli_version": CODEX_VERSION, "source": "exec", "model_provider": "openai"},
        first)
    day = datetime.fromtimestamp(first, UTC).strftime("%Y-%m-%d")
    environment = (f"<environment_context>\n  <cwd>{cwd}</cwd>\n  <shell>bash</shell>\n  <current_date>{day}</current_date>\n"
                   "  <timezone>Etc/UTC</timezone>\n</environment_context>")
    pack = start.parts.get("session-start", "")
    turn_id, environment_sent = "", False
    for turn, when in zip(turns, times, strict=True):
        if turn.role == "user":
            turn_id = str(uuid.uuid4())
            add("event_msg", {"type": "task_started", "turn_id": turn_id}, when)
            if not environment_sent:  # the session's first turn; again only when it changes
                message("user", environment, when, turn_id, "environment_context", "harness")
                environment_sent = True
            add("turn_context", {"turn_id": turn_id, "cwd": str(cwd), "approval_policy": "never", "model": "gpt-5-codex",
                                 "summary": "none"}, when)
            if pack:
                message("developer", pack, when, turn_id, "hooks.additional_context", "harness")
                pack = ""
            message("user", turn.text, when, turn_id, "user.text", "user")
            add("event_msg", {"type": "item_completed", "turn_id": turn_id,
                              "item": {"type": "UserMessage", "id": str(uuid.uuid4()), "content": [{"type": "text", "text": turn.text}]}},
                when)
            context = given[turn.turn_id].parts.get("prompt", "") if turn.turn_id in given else ""
            if context:
                message("developer", context, when, turn_id, "hooks.additional_context", "harness")
        else:
            message("assistant", turn.text, when, turn_id, "unknown", "model")
            add("event_msg", {"type": "task_complete", "turn_id": turn_id, "last_agent_message": turn.text}, when)
    _jsonl(path, entries)


# -- OpenClaw: the agent's SQLite store, one `transcript_events` row per session event ---------------


def openclaw_store(user_home: Path, agent: str) -> Path:
    return user_home / ".openclaw" / "agents" / agent / "agent" / "openclaw-agent.sqlite"


def openclaw_message(turn: Turn) -> dict:
    """A turn as OpenClaw's session messages hold it (and as `before_prompt_build` receives its history)."""
    if turn.role == "user":
        return {"role": "user", "content": turn.text}
    return {"role": "assistant", "content": [{"type": "text", "text": turn.text}], "stopReason": "stop"}


def write_openclaw(user_home: Path, agent: str, session_id: str, cwd: Path, turns: list[Turn], started: float) -> Path:
    times = turn_times(turns, started)
    first = times[0] if times else started
    events: list[tuple[dict, float]] = [({"type": "session", "version": 4, "id": session_id, "timestamp": iso(first),
                                          "cwd": str(cwd)}, first)]
    parent: str | None = None
    for turn, when in zip(turns, times, strict=True):
        eid = str(uuid.uuid4())
        message = {**openclaw_message(turn), "timestamp": int(when * 1000)}
        if turn.role == "user":
            message["__openclaw"] = {"senderIsOwner": True}
        events.append(({"type": "message", "id": eid, "parentId": parent, "timestamp": iso(when), "message": message}, when))
        parent = eid
    db = openclaw_store(user_home, agent)
    db.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(db)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("CREATE TABLE IF NOT EXISTS transcript_events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, "
                     "event_json TEXT, created_at INTEGER NOT NULL, event_zstd BLOB, event_utf8_bytes INTEGER, "
                     "navigation_json TEXT, PRIMARY KEY (session_id, seq)) STRICT")
        conn.executemany("INSERT INTO transcript_events VALUES (?, ?, ?, ?, NULL, NULL, NULL)",
                         [(session_id, n, json.dumps(e, ensure_ascii=False), int(w * 1000))
                          for n, (e, w) in enumerate(events)])
        conn.commit()
    finally:
        conn.close()
    return db

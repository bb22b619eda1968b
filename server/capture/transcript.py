"""Harness transcripts, read into one shape: who said what, which tools ran and how they ended.

Each harness keeps its own JSON Lines file per session (docs/hooks.md, "Capture"):
* Claude Code: `~/.claude/projects/<dashed cwd>/<session id>.jsonl` — `user` and `assistant`
  entries whose `message.content` holds text, `tool_use` and `tool_result` blocks; `isMeta`,
  `isCompactSummary` and sidechain (subagent) entries are not the user speaking;
* Codex: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl` — `session_meta`, then
  `response_item`s: `message` (user, assistant, developer), `function_call` /
  `function_call_output` (`exec_command`, `shell`), `custom_tool_call` (`apply_patch`);
* OpenClaw: its session events — `session` (`cwd`), then `message`s whose `message.role` is
  `user`, `assistant` (content blocks `text` and `toolCall`) or `toolResult` (`details.exitCode`,
  `isError`) — in the JSONL file a plugin event names (`sessionFile`) or, since OpenClaw keeps
  them in SQLite, the `transcript_events` rows of one session in
  `~/.openclaw/agents/<agent>/agent/openclaw-agent.sqlite` (read-only; a zstd-compressed row, an
  event over OpenClaw's inline size, is skipped);
* opencode: no transcript file; its SQLite store `~/.local/share/opencode/opencode.db` (under
  `$XDG_DATA_HOME`) holds every session: `session` (`directory`), `message` (`data.role`) and
  `part` rows (`text`, `synthetic` text opencode adds, `tool` with `state.input`, `state.status`
  and `state.metadata.exit`), read-only by session id;
* Grok Build: `~/.grok/sessions/<url-encoded cwd>/<session id>/updates.jsonl` — the ACP
  `session/update` stream: `user_message_chunk` / `agent_message_chunk` (a message may come in
  several chunks), `tool_call` (`rawInput`) and `tool_call_update` (`status`, and `rawOutput` with
  the command's `exit_code`).

Only what a session record and a fact can use is kept: the user's own words (harness-injected
context — environment blocks, command caveats, system reminders, a compaction's summary — is
not the user), the assistant's text, and each tool run's command or file and whether it
succeeded. A line that does not parse is skipped, never an error: a transcript is being written
while it is read.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote, unquote

MAX_LINE = 4 << 20  # a longer line (a pasted file, an image) carries nothing capture keeps
OUTPUT_KEEP = 4_000  # a tool's output is read for its outcome only; its head and tail are enough
EDIT_TOOLS = {"Edit", "Write", "MultiEdit", "NotebookEdit", "apply_patch", "edit", "write", "patch", "search_replace"}
SHELL_TOOLS = {"Bash", "exec_command", "shell", "local_shell", "bash", "run_terminal_cmd", "run_terminal_command"}
# What a harness puts in the user's turn that the user did not write.
_INJECTED = re.compile(
    r"^\s*(?:<(?:environment_context|user_instructions|skills_instructions|permissions|local-command-[a-z]+|"
    r"command-name|command-message|command-args|system-reminder|user-prompt-submit-hook|turn_aborted|subagent)\b"
    r"|# AGENTS\.md|Caveat: The messages below|This session is being continued from a previous conversation)",
    re.IGNORECASE,
)
_SYSTEM_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL | re.IGNORECASE)
_EXIT_CODE = re.compile(r"(?:Process exited with code|Exit code:?|exit code:?|exited with)\s*(-?\d+)")


@dataclass
class Said:
    role: str  # "user" | "assistant"
    text: str


@dataclass
class ToolRun:
    name: str
    command: str | None = None  # a shell command
    paths: list[str] = field(default_factory=list)  # files an edit tool changed
    ok: bool | None = None  # None: no result seen (the session ended, or the harness did not say)
    output: str = ""
    call_id: str | None = None
    remembered: str | None = None  # the fact, when this was a memverbs `remember` call


@dataclass
class Transcript:
    harness: str
    session_id: str
    path: str
    cwd: str | None = None
    started: str | None = None  # ISO timestamp of the first entry
    events: list[Said | ToolRun] = field(default_factory=list)

    def said(self, role: str) -> list[str]:
        return [e.text for e in self.events if isinstance(e, Said) and e.role == role]

    def runs(self) -> list[ToolRun]:
        return [e for e in self.events if isinstance(e, ToolRun)]


READERS = ("claude", "codex", "grok", "openclaw", "opencode")  # a harness with a reader of its own; any other is told from the file


# A `remember` call, whatever prefix its harness gives MCP tools (`mcp__memverbs__remember`,
# `memverbs_remember`, a Codex namespace's bare `remember`).
_REMEMBER_TOOL = re.compile(r"(?:^|[_.:/-])remember$")


def remembered_fact(name: str, args: object) -> str | None:
    """The fact a memverbs `remember` call saved, else None: capture keeps none of it twice."""
    if not _REMEMBER_TOOL.search(name) or not isinstance(args, dict):
        return None
    fact = args.get("fact")
    return fact if isinstance(fact, str) and fact.strip() else None


def read_transcript(path: str | os.PathLike[str], harness: str | None = None, session_id: str | None = None) -> Transcript:
    """The transcript at `path`, read by its harness's reader (`harness`, or told from the file's first
    lines). `session_id` picks one session out of a store that holds many (OpenClaw's SQLite file)."""
    path = os.fspath(path)
    harness = harness or sniff(path)
    if harness == "openclaw":
        return _read_openclaw(path, session_id)
    if harness == "opencode":
        return _read_opencode(path, session_id)
    if harness == "codex":
        return _read_codex(path)
    if harness == "grok":
        return _read_grok(path)
    return _read_claude(path, harness or "claude")


def sniff(path: str) -> str:
    """`codex` for a rollout file (its first line is `session_meta`), `grok` for an ACP update stream,
    `openclaw` or `opencode` for its session file or SQLite store, else `claude`."""
    if is_sqlite(path):
        return "opencode" if _sqlite_tables(path) >= {"session", "message", "part"} else "openclaw"
    for entry in _entries(path, limit=5):
        if entry.get("type") == "session" and "version" in entry:
            return "openclaw"
        if entry.get("type") in ("session_meta", "response_item", "event_msg", "turn_context"):
            return "codex"
        if isinstance(entry.get("params"), dict) and str(entry.get("method", "")).endswith("session/update"):
            return "grok"
        if "sessionId" in entry or entry.get("type") in ("user", "assistant", "queue-operation", "summary"):
            return "claude"
    return "claude"


def _entries(path: str, limit: int | None = None) -> Iterator[dict]:
    try:
        fh = open(path, "rb")  # noqa: SIM115 - closed by the with below; bytes: a bad encoding is one line's loss
    except OSError:
        return
    with fh:
        for n, raw in enumerate(fh):
            if limit is not None and n >= limit:
                return
            entry = _entry(raw)
            if entry is not None:
                yield entry


def _entry(raw: str | bytes) -> dict | None:
    """One JSONL line or stored event as an object; None when it is longer than MAX_LINE (nothing
    capture keeps is that large), not JSON, or not an object."""
    if len(raw) > MAX_LINE:
        return None
    try:
        entry = json.loads(raw)
    except ValueError:
        return None
    return entry if isinstance(entry, dict) else None


def user_text(text: str) -> str | None:
    """The user's own words in a user turn, or None when the harness wrote it."""
    text = _SYSTEM_REMINDER.sub("", text).strip()
    if not text or _INJECTED.match(text):
        return None
    return text


def _clip(text: str) -> str:
    if len(text) <= OUTPUT_KEEP:
        return text
    half = OUTPUT_KEEP // 2
    return text[:half] + "\n…\n" + text[-half:]


# -- Claude Code ------------------------------------------------------------------------------


def _read_claude(path: str, harness: str) -> Transcript:
    t = Transcript(harness=harness, session_id=Path(path).stem, path=path)
    pending: dict[str, ToolRun] = {}
    for entry in _entries(path):
        kind = entry.get("type")
        if kind not in ("user", "assistant"):
            continue
        t.session_id = entry.get("sessionId") or t.session_id
        t.cwd = t.cwd or entry.get("cwd")
        t.started = t.started or entry.get("timestamp")
        if entry.get("isSidechain") or entry.get("isCompactSummary") or entry.get("isVisibleInTranscriptOnly"):
            continue
        message = entry.get("message") or {}
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        for block in blocks:
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype == "text" and isinstance(block.get("text"), str):
                if kind == "user":
                    if entry.get("isMeta"):
                        continue
                    said = user_text(block["text"])
                    if said:
                        t.events.append(Said("user", said))
                elif block["text"].strip():
                    t.events.append(Said("assistant", block["text"].strip()))
            elif btype == "tool_use" and kind == "assistant":
                run = _claude_tool(block)
                pending[run.call_id or ""] = run
                t.events.append(run)
            elif btype == "tool_result" and kind == "user":
                done = pending.pop(block.get("tool_use_id") or "", None)
                if done is not None:
                    run = done
                    run.output = _clip(_flatten(block.get("content")))
                    run.ok = not block.get("is_error", False)
    return t


def _claude_tool(block: dict) -> ToolRun:
    name = str(block.get("name") or "")
    raw = block.get("input")
    args: dict = raw if isinstance(raw, dict) else {}
    run = ToolRun(name=name, call_id=block.get("id"), remembered=remembered_fact(name, args))
    if name in SHELL_TOOLS and isinstance(args.get("command"), str):
        run.command = args["command"]
    elif name in EDIT_TOOLS:
        target = args.get("file_path") or args.get("notebook_path") or args.get("path")
        if isinstance(target, str):
            run.paths = [target]
    return run


def _flatten(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_flatten(c) for c in content)
    if isinstance(content, dict):
        if isinstance(content.get("text"), str):
            return content["text"]
        return _flatten(content.get("content"))
    return ""


# -- Codex ------------------------------------------------------------------------------------


def _read_codex(path: str) -> Transcript:
    t = Transcript(harness="codex", session_id=_codex_id(path), path=path)
    pending: dict[str, ToolRun] = {}
    for entry in _entries(path):
        raw_payload = entry.get("payload")
        payload: dict = raw_payload if isinstance(raw_payload, dict) else {}
        kind = entry.get("type")
        if kind == "session_meta":
            t.session_id = payload.get("id") or payload.get("session_id") or t.session_id
            t.cwd = t.cwd or payload.get("cwd")
            t.started = t.started or payload.get("timestamp") or entry.get("timestamp")
            continue
        if kind == "turn_context":
            t.cwd = t.cwd or payload.get("cwd")
            continue
        if kind != "response_item":
            continue
        ptype = payload.get("type")
        if ptype == "message":
            role = payload.get("role")
            text = "\n".join(
                c.get("text", "") for c in payload.get("content") or [] if isinstance(c, dict) and isinstance(c.get("text"), str)
            )
            if role == "user":
                said = user_text(text)
                if said:
                    t.events.append(Said("user", said))
            elif role == "assistant" and text.strip():
                t.events.append(Said("assistant", text.strip()))
        elif ptype in ("function_call", "custom_tool_call", "local_shell_call"):
            run = _codex_tool(payload)
            pending[run.call_id or ""] = run
            t.events.append(run)
        elif ptype in ("function_call_output", "custom_tool_call_output"):
            done = pending.pop(payload.get("call_id") or "", None)
            if done is not None:
                run = done
                run.output, run.ok = _codex_output(payload.get("output"))
    return t


def _codex_id(path: str) -> str:
    m = re.search(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})", os.path.basename(path))
    return m.group(1) if m else Path(path).stem


def _codex_tool(payload: dict) -> ToolRun:
    name = str(payload.get("name") or payload.get("type") or "")
    run = ToolRun(name=name, call_id=payload.get("call_id") or payload.get("id"))
    raw = payload.get("arguments") if "arguments" in payload else payload.get("input")
    args: object = raw
    if isinstance(raw, str):
        try:
            args = json.loads(raw)
        except ValueError:
            args = raw
    if isinstance(payload.get("action"), dict):  # local_shell_call
        args = payload["action"]
    run.remembered = remembered_fact(name, args)
    if name == "apply_patch" or (isinstance(args, str) and "*** Begin Patch" in args):
        patch = args if isinstance(args, str) else (args.get("input") or args.get("patch") or "") if isinstance(args, dict) else ""
        run.paths = re.findall(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", str(patch), re.MULTILINE)
        run.name = "apply_patch"
    elif isinstance(args, dict):
        command = args.get("cmd") or args.get("command")
        if isinstance(command, list):
            command = command[-1] if len(command) >= 3 and command[1] in ("-lc", "-c") else " ".join(map(str, command))
        if isinstance(command, str):
            run.command = command
    return run


def _codex_output(output: object) -> tuple[str, bool | None]:
    text = output if isinstance(output, str) else json.dumps(output) if output is not None else ""
    ok: bool | None = None
    try:
        parsed = json.loads(text) if text.startswith("{") else None
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        code = (parsed.get("metadata") or {}).get("exit_code")
        text = str(parsed.get("output", text))
        if isinstance(code, int):
            ok = code == 0
    if ok is None:
        m = _EXIT_CODE.search(text[:400])
        if m:
            ok = int(m.group(1)) == 0
        elif "Success. Updated the following files" in text:
            ok = True
    return _clip(text), ok


# -- Grok Build -------------------------------------------------------------------------------


def _read_grok(path: str) -> Transcript:
    folder = Path(path).parent
    # The session's folder is named after its id, and its parent after the working directory, url-encoded.
    t = Transcript(harness="grok", session_id=folder.name, path=path, cwd=_grok_cwd(folder.parent.name))
    runs: dict[str, ToolRun] = {}
    chunks: list[str] = []
    speaker: str | None = None

    def flush() -> None:
        nonlocal speaker
        text = "".join(chunks).strip()
        chunks.clear()
        if speaker == "user":
            said = user_text(_USER_QUERY.sub(r"\1", text))
            if said:
                t.events.append(Said("user", said))
        elif speaker == "assistant" and text:
            t.events.append(Said("assistant", text))
        speaker = None

    for entry in _entries(path):
        params = entry.get("params")
        if not isinstance(params, dict) or not isinstance(params.get("update"), dict):
            continue
        update: dict = params["update"]
        t.session_id = params.get("sessionId") or t.session_id
        if t.started is None and isinstance(entry.get("timestamp"), int | float):
            t.started = datetime.fromtimestamp(entry["timestamp"], UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        kind = update.get("sessionUpdate")
        if kind in ("user_message_chunk", "agent_message_chunk"):
            who = "user" if kind == "user_message_chunk" else "assistant"
            if who != speaker:
                flush()
                speaker = who
            content = update.get("content")
            if isinstance(content, dict) and isinstance(content.get("text"), str):
                chunks.append(content["text"])
        elif kind == "tool_call":
            flush()
            run = _grok_tool(update)
            runs[run.call_id or ""] = run
            t.events.append(run)
        elif kind == "tool_call_update" and update.get("status") in ("completed", "failed"):
            done = runs.get(str(update.get("toolCallId") or ""))
            if done is not None:
                done.output, done.ok = _grok_output(update)
                raw = update.get("rawOutput")
                if isinstance(raw, dict) and isinstance(raw.get("current_dir"), str):
                    t.cwd = t.cwd or raw["current_dir"]  # a store-less copy of the file: the shell's directory
        elif kind == "turn_completed":
            flush()
    flush()
    return t


_USER_QUERY = re.compile(r"^\s*<user_query>\s*(.*?)\s*</user_query>\s*$", re.DOTALL)


def _grok_cwd(name: str) -> str | None:
    cwd = unquote(name)
    return cwd if cwd.startswith("/") else None


def _grok_tool(update: dict) -> ToolRun:
    meta = (update.get("_meta") or {}).get("x.ai/tool") or {}
    name = str(meta.get("name") or update.get("title") or "")
    raw = update.get("rawInput")
    args: dict = raw if isinstance(raw, dict) else {}
    run = ToolRun(name=name, call_id=str(update.get("toolCallId") or ""), remembered=remembered_fact(name, args))
    if (name in SHELL_TOOLS or meta.get("kind") == "execute") and isinstance(args.get("command"), str):
        run.command = args["command"]
    elif name in EDIT_TOOLS or meta.get("kind") == "edit":
        target = args.get("file_path") or args.get("path") or args.get("target_file")
        if isinstance(target, str):
            run.paths = [target]
    return run


def _grok_output(update: dict) -> tuple[str, bool | None]:
    raw = update.get("rawOutput")
    out: dict = raw if isinstance(raw, dict) else {}
    text = out.get("output_for_prompt")
    if not isinstance(text, str):
        text = _flatten([c.get("content") if isinstance(c, dict) and c.get("type") == "content" else "" for c in update.get("content") or []])
    code = out.get("exit_code")
    if update.get("status") == "failed" or out.get("timed_out"):
        return _clip(text), False
    return _clip(text), code == 0 if isinstance(code, int) else True


# -- OpenClaw ---------------------------------------------------------------------------------


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


def _sqlite_tables(path: str) -> set[str]:
    return {name for (name,) in store_query(path, "SELECT name FROM sqlite_master WHERE type = 'table'")}


def _openclaw_rows(path: str, session_id: str | None) -> Iterator[dict]:
    """One session's events from OpenClaw's SQLite store."""
    if not session_id:
        return
    rows = store_query(path, "SELECT event_json FROM transcript_events WHERE session_id = ? ORDER BY seq", (session_id,))
    for (raw,) in rows:
        entry = _entry(raw) if isinstance(raw, str) else None  # a compressed (large) event carries nothing capture keeps
        if entry is not None:
            yield entry


def _read_openclaw(path: str, session_id: str | None) -> Transcript:
    store = is_sqlite(path)
    t = Transcript(harness="openclaw", session_id=session_id or Path(path).stem, path=path)
    pending: dict[str, ToolRun] = {}
    for entry in _openclaw_rows(path, session_id) if store else _entries(path):
        kind = entry.get("type")
        if kind == "session":
            t.session_id = session_id or entry.get("id") or t.session_id
            t.cwd = t.cwd or entry.get("cwd")
            t.started = t.started or entry.get("timestamp")
            continue
        message = entry.get("message")
        if kind != "message" or not isinstance(message, dict):
            continue
        t.started = t.started or entry.get("timestamp")
        role = message.get("role")
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content if isinstance(content, list) else []
        if role == "user":
            said = user_text("\n".join(b["text"] for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str)))
            if said:
                t.events.append(Said("user", said))
        elif role == "assistant":
            for block in blocks:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "text" and isinstance(block.get("text"), str) and block["text"].strip():
                    t.events.append(Said("assistant", block["text"].strip()))
                elif block.get("type") == "toolCall":
                    run = _openclaw_tool(block)
                    pending[run.call_id or ""] = run
                    t.events.append(run)
        elif role == "toolResult":
            done = pending.pop(str(message.get("toolCallId") or ""), None)
            if done is not None:
                details = message.get("details")
                code = details.get("exitCode") if isinstance(details, dict) else None
                done.output = _clip(_flatten(content))
                done.ok = False if message.get("isError") else code == 0 if isinstance(code, int) else True
    return t


def _openclaw_tool(block: dict) -> ToolRun:
    name = str(block.get("name") or "")
    raw = block.get("arguments")
    args: dict = raw if isinstance(raw, dict) else {}
    run = ToolRun(name=name, call_id=str(block.get("id") or ""), remembered=remembered_fact(name, args))
    if name in ("exec", *SHELL_TOOLS) and isinstance(args.get("command"), str):
        run.command = args["command"]
    elif name == "apply_patch":
        patch = args.get("input") or args.get("patch") or ""
        run.paths = re.findall(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", str(patch), re.MULTILINE)
    elif name in EDIT_TOOLS:
        target = args.get("path") or args.get("file_path")
        if isinstance(target, str):
            run.paths = [target]
    return run


# -- opencode ---------------------------------------------------------------------------------


def _read_opencode(path: str, session_id: str | None) -> Transcript:
    t = Transcript(harness="opencode", session_id=session_id or "", path=path)
    if not session_id:
        return t
    for directory, created in store_query(path, "SELECT directory, time_created FROM session WHERE id = ?", (session_id,)):
        t.cwd = directory if isinstance(directory, str) and directory else None
        if isinstance(created, int):
            t.started = datetime.fromtimestamp(created / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    roles = {mid: _json_obj(data).get("role") for mid, data in
             store_query(path, "SELECT id, data FROM message WHERE session_id = ?", (session_id,))}
    parts = store_query(path, "SELECT message_id, data FROM part WHERE session_id = ? ORDER BY time_created, id", (session_id,))
    for message_id, data in parts:
        part, role = _json_obj(data), roles.get(message_id)
        if part.get("type") == "text" and isinstance(part.get("text"), str) and not part.get("synthetic"):
            if role == "user":
                said = user_text(_unquote_prompt(part["text"]))
                if said:
                    t.events.append(Said("user", said))
            elif role == "assistant" and part["text"].strip():
                t.events.append(Said("assistant", part["text"].strip()))
        elif part.get("type") == "tool" and role == "assistant":
            t.events.append(_opencode_tool(part))
    return t


def _json_obj(raw: object) -> dict:
    try:
        value = json.loads(raw) if isinstance(raw, str) and len(raw) <= MAX_LINE else None
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _unquote_prompt(text: str) -> str:
    # `opencode run "…"` stores the prompt inside a pair of double quotes.
    stripped = text.strip()
    return stripped[1:-1] if len(stripped) >= 2 and stripped[0] == stripped[-1] == '"' else text


def _opencode_tool(part: dict) -> ToolRun:
    name = str(part.get("tool") or "")
    raw_state = part.get("state")
    state: dict = raw_state if isinstance(raw_state, dict) else {}
    raw_args = state.get("input")
    args: dict = raw_args if isinstance(raw_args, dict) else {}
    run = ToolRun(name=name, call_id=str(part.get("callID") or ""), remembered=remembered_fact(name, args))
    if name in SHELL_TOOLS and isinstance(args.get("command"), str):
        run.command = args["command"]
    elif name in EDIT_TOOLS:
        target = args.get("filePath") or args.get("file_path") or args.get("path")
        if isinstance(target, str):
            run.paths = [target]
    status = state.get("status")
    meta = state.get("metadata")
    code = meta.get("exit") if isinstance(meta, dict) else None
    if status == "error":
        run.ok = False
    elif status == "completed":
        run.ok = code == 0 if isinstance(code, int) else True
    run.output = _clip(str(state.get("output") or state.get("error") or ""))
    return run

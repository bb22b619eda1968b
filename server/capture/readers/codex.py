"""Codex: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`.

`session_meta`, then `response_item`s: `message` (user, assistant, developer), `function_call` /
`function_call_output` (`exec_command`, `shell`), `custom_tool_call` (`apply_patch`),
`local_shell_call`. Developer messages (instructions, hook output) are nobody's words; user
messages carry Codex's contextual fragments (`<environment_context>`, `<user_shell_command>`,
`# AGENTS.md instructions`, a compaction's summary …), which authorship.py tells apart.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

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
    remembered_fact,
    stamp,
    text_of,
)

_EXIT_CODE = re.compile(r"(?:Process exited with code|Exit code:?|exit code:?|exited with)\s*(-?\d+)")
_PATCH_FILES = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.MULTILINE)


def read(t: Transcript) -> Iterator[Event]:
    if t.session_id == Path(t.path).stem:
        t.session_id = _id_from_name(t.path)
    pending = Pending()
    yield from read_entries(t, entries(t.path, t.start), lambda e: _entry(t, e, pending), pending)
    yield from pending.drain()


def _entry(t: Transcript, entry: dict, pending: Pending) -> Iterator[Event]:
    kind = entry.get("type")
    raw_payload = entry.get("payload")
    expect((raw_payload is None and kind not in ("session_meta", "response_item")) or isinstance(raw_payload, dict))
    payload: dict = raw_payload or {}
    at = stamp(entry.get("timestamp"))
    if kind == "session_meta":
        t.session_id = text_of(payload.get("id")) or text_of(payload.get("session_id")) or t.session_id
        t.cwd = t.cwd or text_of(payload.get("cwd"))
        t.started = t.started or stamp(payload.get("timestamp")) or at
        return
    if kind == "turn_context":
        t.cwd = t.cwd or text_of(payload.get("cwd"))
        return
    if kind != "response_item":
        return
    ptype = payload.get("type")
    if ptype == "message":
        role = payload.get("role")
        content = payload.get("content")
        expect(isinstance(content, list | str))
        parts = [a_dict(c).get("text", "") for c in content] if isinstance(content, list) else [content]
        expect(all(isinstance(part, str) for part in parts))
        text = "\n".join(str(part) for part in parts)
        if role == "user":
            yield from user_turn(text, at)
        elif role == "assistant" and text.strip():
            yield Said("assistant", text.strip(), at)
    elif ptype in ("function_call", "custom_tool_call", "local_shell_call"):
        yield from pending.start(_tool(payload))
    elif ptype in ("function_call_output", "custom_tool_call_output"):
        done = pending.finish(call_id(payload.get("call_id")))
        if done is not None:
            done.output, done.ok = _output(payload.get("output"))
            yield done


def _id_from_name(path: str) -> str:
    m = re.search(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})", os.path.basename(path))
    return m.group(1) if m else Path(path).stem


def _tool(payload: dict) -> ToolRun:
    name = str(payload.get("name") or payload.get("type") or "")
    run = ToolRun(name=name, call_id=call_id(payload.get("call_id")) or call_id(payload.get("id")) or None)
    raw = payload.get("arguments") if "arguments" in payload else payload.get("input")
    args: object = raw
    if isinstance(raw, str):
        try:
            args = json.loads(raw)
        except (ValueError, RecursionError):
            args = raw
    if isinstance(payload.get("action"), dict):  # local_shell_call
        args = payload["action"]
    run.remembered = remembered_fact(name, args)
    if name == "apply_patch" or (isinstance(args, str) and "*** Begin Patch" in args):
        patch = args if isinstance(args, str) else (args.get("input") or args.get("patch") or "") if isinstance(args, dict) else ""
        run.paths = _PATCH_FILES.findall(str(patch))
        run.name = "apply_patch"
    elif isinstance(args, dict):
        command = args.get("cmd") or args.get("command")
        if isinstance(command, list):
            command = command[-1] if len(command) >= 3 and command[1] in ("-lc", "-c") else " ".join(map(str, command))
        if isinstance(command, str):
            run.command = command
    return run


def _output(output: object) -> tuple[str, bool | None]:
    text = output if isinstance(output, str) else json.dumps(output) if output is not None else ""
    ok: bool | None = None
    try:
        parsed = json.loads(text) if text.startswith("{") else None
    except (ValueError, RecursionError):
        parsed = None
    if isinstance(parsed, dict):
        meta = parsed.get("metadata")
        code = meta.get("exit_code") if isinstance(meta, dict) else None
        text = str(parsed.get("output", text))
        if isinstance(code, int):
            ok = code == 0
    if ok is None:
        m = _EXIT_CODE.search(text[:400])
        if m:
            ok = int(m.group(1)) == 0
        elif "Success. Updated the following files" in text:
            ok = True
    return clip(text), ok

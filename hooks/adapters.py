"""One small adapter per harness: its stdin payload in, its injection format out.

Claude Code and Codex read `hookSpecificOutput.additionalContext` (Codex takes
Claude's format); Grok Build and our own opencode/OpenClaw plugins read plain
text. Each adapter caps the text below what its harness will inject: Claude
Code diverts hook output over 10,000 characters to a file, so the whole JSON
line must stay under that.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from types import MappingProxyType

from memverbs.hooks.basics import prompt_of
from memverbs.hooks.events import EVENT_MOMENTS, Harness, HookEvent, HookInputError, Moment

# The events a local install wires for Claude Code and Codex (Codex takes Claude's names).
# The session's end, each turn's end and a compaction carry `transcript_path`: capture reads it
# (hooks/capture.py; `Stop` is rate-limited per session there).
_CLAUDE_EVENTS = MappingProxyType({
    "SessionStart": Moment.SESSION_START,
    "UserPromptSubmit": Moment.HEARTBEAT,
    "SessionEnd": Moment.CAPTURE,
    "Stop": Moment.CAPTURE,
    "PreCompact": Moment.CAPTURE,
})

TRUNCATED = "\n… (memory context truncated to fit the harness's limit)"


def cap(text: str, limit: int) -> str:
    """Cut at a line boundary so a section is never half a line."""
    if len(text) <= limit:
        return text
    room = limit - len(TRUNCATED)
    cut = text.rfind("\n", 0, room)
    return text[: cut if cut > 0 else room] + TRUNCATED


class Adapter:
    harness: Harness
    max_chars = 9_000
    # Does the model see what session-start and post-compact print? Grok drops it: its pack
    # then goes out with the session's first PostToolUse instead.
    delivers_start = True
    # Does the model see what the prompt hook prints? Grok drops it: the reflex's pointers then wait
    # for the session's next PostToolUse (hooks/reflex.py).
    delivers_prompt = True
    # The harness's hook events `memverbs install` wires, and the moment each runs: the installer
    # module reads them from here, so an event's moment has one home. (A plugin harness wires its
    # events in its JS plugin instead.)
    wired: Mapping[str, Moment] = MappingProxyType({})
    # Events that also run `hook capture` beside their `wired` moment (a harness whose event has two jobs).
    captures: tuple[str, ...] = ()

    def parse(self, payload: dict, moment: Moment | None, session_flag: str | None) -> HookEvent:
        session = session_flag or _first_str(payload, "session_id", "sessionId", "sessionID")
        if not session:
            raise HookInputError("no session id")
        event_name = _first_str(payload, "hook_event_name", "hookEventName", "event")
        source = _first_str(payload, "source")
        if moment is None:
            moment = EVENT_MOMENTS.get((event_name or "").lower().replace("_", ""))
            if moment is None:
                raise HookInputError("cannot tell the moment")
        if moment is Moment.SESSION_START and source == "compact":
            moment = Moment.POST_COMPACT
        prompt = prompt_of(payload) if moment is Moment.HEARTBEAT else None
        return HookEvent(self.harness, moment, session[:200], event_name, source, _first_str(payload, "cwd", "workspaceRoot"),
                         prompt or None)

    def render(self, text: str, event: HookEvent) -> str:
        return cap(text, self.max_chars)


class ClaudeAdapter(Adapter):
    harness = Harness.CLAUDE
    wired = _CLAUDE_EVENTS

    def render(self, text: str, event: HookEvent) -> str:
        name = event.event_name or ("UserPromptSubmit" if event.moment is Moment.HEARTBEAT else "SessionStart")
        body = cap(text, self.max_chars)
        return json.dumps({"hookSpecificOutput": {"hookEventName": name, "additionalContext": body}}, ensure_ascii=False)


class CodexAdapter(ClaudeAdapter):
    harness = Harness.CODEX


class GrokAdapter(Adapter):
    """Grok Build drops SessionStart, PostCompact and UserPromptSubmit output; PostToolUse's
    `hookSpecificOutput.additionalContext` reaches the model after the tool result (capped at
    10,000 characters by Grok)."""

    harness = Harness.GROK
    delivers_start = False
    delivers_prompt = False
    # SessionStart sets the session's cursor (its output is dropped); the pack and what changed reach
    # the model through PostToolUse; a compaction (PreCompact, PostCompact) re-arms the pack.
    wired = MappingProxyType({
        "SessionStart": Moment.SESSION_START,
        "UserPromptSubmit": Moment.HEARTBEAT,
        "PostToolUse": Moment.POST_TOOL,
        "PreCompact": Moment.POST_COMPACT,
        "PostCompact": Moment.POST_COMPACT,
    })
    # Grok fires Claude-style SessionEnd and Stop with `transcript_path` (its updates.jsonl), and
    # PreCompact before a compaction: each also hands the transcript to capture.
    captures = ("PreCompact", "SessionEnd", "Stop")

    def render(self, text: str, event: HookEvent) -> str:
        if event.moment is not Moment.POST_TOOL:
            return cap(text, self.max_chars)
        body = cap(text, self.max_chars)
        return json.dumps({"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": body}}, ensure_ascii=False)


class OpencodeAdapter(Adapter):
    harness = Harness.OPENCODE


class OpenclawAdapter(Adapter):
    harness = Harness.OPENCLAW


class PlainAdapter(Adapter):
    harness = Harness.PLAIN


ADAPTERS: dict[Harness, Adapter] = {
    a.harness: a for a in (ClaudeAdapter(), CodexAdapter(), GrokAdapter(), OpencodeAdapter(), OpenclawAdapter(), PlainAdapter())
}


def _first_str(payload: dict, *keys: str) -> str | None:
    for key in keys:
        value = payload.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None

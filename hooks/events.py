"""What a lifecycle hook is told: which harness, which moment, which session."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Harness(StrEnum):
    CLAUDE = "claude"
    CODEX = "codex"
    GROK = "grok"
    OPENCODE = "opencode"
    OPENCLAW = "openclaw"
    PLAIN = "plain"


class Moment(StrEnum):
    SESSION_START = "session-start"
    POST_COMPACT = "post-compact"
    HEARTBEAT = "heartbeat"
    POST_TOOL = "post-tool"  # Grok: PostToolUse is the one event whose additionalContext reaches its model


# Harness event names (Claude's vocabulary, shared by Codex and Grok) → our moments.
EVENT_MOMENTS = {
    "sessionstart": Moment.SESSION_START,
    "postcompact": Moment.POST_COMPACT,
    "userpromptsubmit": Moment.HEARTBEAT,
    "posttooluse": Moment.POST_TOOL,
    "precompact": Moment.POST_COMPACT,  # Grok drops compaction hooks' output: either one re-arms the pack
}


@dataclass(frozen=True)
class HookEvent:
    harness: Harness
    moment: Moment
    session_id: str
    event_name: str | None = None  # the harness's own name, echoed back where its output format wants it
    source: str | None = None  # SessionStart's startup | resume | clear | compact
    cwd: str | None = None


class HookInputError(ValueError):
    """The harness sent something we cannot read; the hook stays silent."""

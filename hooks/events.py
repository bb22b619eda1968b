"""What a lifecycle hook is told: which harness, which moment, which session."""

from __future__ import annotations

from enum import StrEnum

from memverbs.server.errors import MemverbsError
from memverbs.server.record import Frozen


class Harness(StrEnum):
    CLAUDE = "claude"
    CODEX = "codex"
    GROK = "grok"
    OPENCODE = "opencode"
    OPENCLAW = "openclaw"
    PLAIN = "plain"


# The harnesses `memverbs install` knows, for the light paths (the CLI's help, the hooks); the
# harness table (installers/registry.py) is the full account, tested to list exactly these.
INSTALLABLE = tuple(h.value for h in Harness if h is not Harness.PLAIN)


class Moment(StrEnum):
    SESSION_START = "session-start"
    POST_COMPACT = "post-compact"
    HEARTBEAT = "heartbeat"
    POST_TOOL = "post-tool"  # Grok: PostToolUse is the one event whose additionalContext reaches its model
    CAPTURE = "capture"  # the session's end or a compaction: its transcript becomes memory (hooks/capture.py)


# Harness event names (Claude's vocabulary, shared by Codex and Grok) → our moments.
EVENT_MOMENTS = {
    "sessionstart": Moment.SESSION_START,
    "postcompact": Moment.POST_COMPACT,
    "userpromptsubmit": Moment.HEARTBEAT,
    "posttooluse": Moment.POST_TOOL,
    "precompact": Moment.POST_COMPACT,  # Grok drops compaction hooks' output: either one re-arms the pack
}


class HookEvent(Frozen):
    __slots__ = ("cwd", "event_name", "harness", "moment", "prompt", "session_id", "source")
    harness: Harness
    moment: Moment
    session_id: str
    event_name: str | None  # the harness's own name, echoed back where its output format wants it
    source: str | None  # SessionStart's startup | resume | clear | compact
    cwd: str | None
    # The user's prompt (a heartbeat's): what the reflex looks for names in (hooks/reflex.py). Held in
    # memory for this one run, never stored or logged; kept out of the record's repr.
    prompt: str | None

    def __init__(self, harness: Harness, moment: Moment, session_id: str, event_name: str | None = None,
                 source: str | None = None, cwd: str | None = None, prompt: str | None = None) -> None:
        super().__init__(harness=harness, moment=moment, session_id=session_id, event_name=event_name, source=source,
                         cwd=cwd, prompt=prompt)

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__ if n != "prompt")
        return f"HookEvent({shown}, prompt={'…' if self.prompt else None})"


class HookError(MemverbsError):
    """A hook could not produce its context; the runner records `code` in the hooks log and stays silent."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


class HookInputError(HookError):
    """The harness sent something we cannot read."""

    def __init__(self, message: str) -> None:
        super().__init__("bad_input")
        self.message = message


class HookFailure(HookError):
    """A verb answered with an error envelope; its error code is the diagnostic (`verb_<code>`)."""

    def __init__(self, verb_code: str) -> None:
        super().__init__(f"verb_{verb_code}")


class RemoteHookError(HookError):
    """The remote brain could not answer (`remote_unreachable`, `remote_401`, `remote_timeout`, …)."""

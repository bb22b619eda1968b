"""A prompt's pointers when nothing else changed: the launcher's fast path answers it here.

On every prompt (Claude Code and Codex `UserPromptSubmit`, opencode's `chat.message`, OpenClaw's
`before_prompt_build`, Grok's `UserPromptSubmit` delivered at its next `PostToolUse`), when the brain
says nothing changed since the session's cursor, the prompt's pointers are all there is to say. Which
pointers a prompt earns is server/verbs/pointers.py's to decide (the reflex's part of what the model
reads, server/verbs/readout.py); they are read here on the hook's plain connection (server/brain/plain.py:
the launcher's fast path on SQLite, the runner on Postgres), no brain object opened, and written in the
harness's shape. A prompt that names nothing costs the name index's lookup and nothing more.

The prompt is read and dropped: never stored, logged or sent anywhere.
"""

from __future__ import annotations

import time

from memverbs.server.verbs import pointers as choose

# Not `typing.TYPE_CHECKING`: the cheap path loads this module, and typing would cost it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from memverbs.server.verbs.pointers import Reads


def answer(reads: Reads, root: str, harness: str, session: str, source: str, prompt: str) -> str:
    """A prompt's answer when nothing else changed: the harness's output with the pointers, or "" (nothing
    new named, or a harness that shows them at a later moment)."""
    named = choose.find_named(reads, source, prompt)
    if not named.mentions:
        return ""  # the common case: nothing named, and nothing more loaded or read
    import os  # noqa: PLC0415 - loaded with the interpreter

    from memverbs.hooks.adapters import ADAPTERS  # noqa: PLC0415
    from memverbs.hooks.events import Harness, HookEvent, Moment  # noqa: PLC0415
    from memverbs.hooks.state import SessionState  # noqa: PLC0415

    adapter = ADAPTERS[Harness(harness)]
    state = SessionState.load(os.path.join(root, "hooks", "sessions"), harness, session)
    now = time.time_ns() // 1_000_000
    if not adapter.delivers_prompt:
        later = choose.pointers(reads, source, prompt, state, now, mark=False, named=named)
        if later:
            choose.wait(state, later)
            state.save()
        return ""
    given = choose.pointers(reads, source, prompt, state, now, named=named)
    if not given:
        return ""
    state.save()
    return adapter.render(choose.pointers_text(given), HookEvent(adapter.harness, Moment.HEARTBEAT, session))

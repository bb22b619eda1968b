"""Session start and after compaction: rehydrate the agent with a context pack.

Both moments do the same thing — the pack is deterministic — except that after a compaction the
session has banked entities to bring back. What the pack holds is server/verbs/readout.py's to
decide; here the hook asks for it, through the brain the harness is wired to (the local dispatcher,
or a remote brain over HTTP), and records what the session was given. The session's delta cursor is
established in the same moment (readout's), so the first heartbeat reports what changed since the
session began rather than nothing.
"""

from __future__ import annotations

import os

from memverbs.server.verbs import readout

TYPE_CHECKING = False  # typing's flag, without importing typing on a hook's start

if TYPE_CHECKING:
    from memverbs.hooks.adapters import Adapter
    from memverbs.hooks.brain_side import BrainSide


def rehydrate(hook: BrainSide, adapter: Adapter) -> str:
    """The pack, from `hook` (the local `Hook` or a `RemoteHook`), with the session's state brought up to
    date: what it was shown, the pack itself for a start the harness announces twice (hooks/state.py),
    and whether the model has seen it (a harness that drops start-up output, Grok, shows it with the
    first PostToolUse instead, with the pointers a prompt left for that moment)."""
    from memverbs.hooks.basics import reflex_on  # noqa: PLC0415
    from memverbs.hooks.events import Moment  # noqa: PLC0415
    from memverbs.hooks.state import collect_idle  # noqa: PLC0415

    event, state = hook.event, hook.state
    collect_idle(os.path.dirname(state.path))
    tool_call = event.moment is Moment.POST_TOOL
    ask = readout.Ask(readout.START, event.session_id, configured=hook.settings.hook_entities, user=hook.settings.hook_user,
                      banked=list(state.entities), project=hook.own_project(), now_ms=hook.now_ms,
                      waiting=tool_call and reflex_on(hook.settings.hook_reflex))
    text = readout.read_out(hook, ask, state).text
    if event.moment is Moment.SESSION_START and text:
        state.keep_pack(text)
    state.packed = tool_call or adapter.delivers_start
    if tool_call:
        state.last_heartbeat_ms = hook.now_ms
    return text

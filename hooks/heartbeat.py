"""Heartbeat: only what changed since the session's last wake, O(changes), and what the prompt names.

It runs on every prompt. The launcher's fast path first asks the brain, on a plain connection,
whether anything is newer than the session's delta cursor (server/brain/plain.py: one indexed read,
the brain not even opened); when nothing is, it answers the prompt's pointers itself (hooks/reflex.py)
on that connection. Only a change comes here: the full `delta`, and the pointers in the same message
(one block of memory per prompt, not two). Nothing changed and nothing named → nothing printed.

What the message says — which of the delta's news this session was not shown, what another
project's news it leaves out, which pointers the prompt earns — is server/verbs/readout.py's to decide.
"""

from __future__ import annotations

from memverbs.hooks.adapters import ADAPTERS
from memverbs.hooks.basics import reflex_on
from memverbs.hooks.events import Moment
from memverbs.server.verbs import readout

TYPE_CHECKING = False  # typing's flag, without importing typing on a hook's start

if TYPE_CHECKING:
    from memverbs.hooks.brain_side import BrainSide
    from memverbs.hooks.state import SessionState

TOOL_BEAT_INTERVAL_MS = 10_000  # Grok's PostToolUse fires per tool call: a tool-heavy turn looks once per interval


def tool_beat_due(state: SessionState, now_ms: int) -> bool:
    return now_ms - state.last_heartbeat_ms >= TOOL_BEAT_INTERVAL_MS


def heartbeat(hook: BrainSide, *, changed: bool = True) -> str:
    """The delta text and the pointers; "" when nothing changed and nothing new is named.
    `changed=False`: the brain said nothing changed since the cursor, so no delta is asked for."""
    event, state = hook.event, hook.state
    state.last_heartbeat_ms = hook.now_ms
    reflex = reflex_on(hook.settings.hook_reflex)
    prompt = event.prompt if reflex and event.moment is Moment.HEARTBEAT else None
    ask = readout.Ask(readout.BEAT, event.session_id, configured=hook.settings.hook_entities, project=hook.own_project(),
                      prompt=prompt, now_ms=hook.now_ms, changed=changed, delivers=ADAPTERS[event.harness].delivers_prompt,
                      waiting=reflex and event.moment is not Moment.HEARTBEAT)
    return readout.read_out(hook, ask, state).text

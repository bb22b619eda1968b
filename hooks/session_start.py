"""Session start and after compaction: rehydrate the agent with a context pack.

Both moments do the same thing — the pack is deterministic — except that after a
compaction the session has banked entities to bring back. The session's delta
cursor is established here too, so the first heartbeat reports what changed
since the session began rather than nothing.
"""

from __future__ import annotations

from memverbs.hooks.heartbeat import fact_key
from memverbs.hooks.standing import standing_entities, touched
from memverbs.server.context import LOCAL_LANE

PACK_BUDGET_TOKENS = 2_000  # ~8,000 chars of text: inside every harness's injection limit


def rehydrate(hook) -> str:
    event, state = hook.event, hook.state
    entities = standing_entities(hook.brain, hook.source, hook.settings.hook_entities, state.entities)
    body = hook.call(
        "context_pack",
        {"entities": ",".join(entities), "budget_tokens": PACK_BUDGET_TOKENS, "session_id": event.session_id},
    )
    if hook.brain.cursor(hook.source, LOCAL_LANE, event.session_id) is None:
        hook.call("delta", {"session_id": event.session_id})  # a first wake: establishes the cursor, reports nothing
    state.bank(touched(body))
    state.unseen(body["facts"], fact_key)  # the next heartbeat need not repeat them
    return body["text"]

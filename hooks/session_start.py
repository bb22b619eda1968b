"""Session start and after compaction: rehydrate the agent with a context pack.

Both moments do the same thing — the pack is deterministic — except that after a
compaction the session has banked entities to bring back. The session's delta
cursor is established here too, so the first heartbeat reports what changed
since the session began rather than nothing.
"""

from __future__ import annotations

from memverbs.hooks.heartbeat import fact_key, page_key
from memverbs.hooks.standing import standing_entities, touched
from memverbs.server.context import LOCAL_LANE
from memverbs.server.timeparse import iso

PACK_BUDGET_TOKENS = 2_000  # ~8,000 chars of text: inside every harness's injection limit


def pack_params(brain, source: str, configured: str, banked: list[str], session_id: str) -> dict:
    """The context_pack call a session start makes (`memverbs ui`'s pack preview makes the same one)."""
    entities = standing_entities(brain, source, configured, banked)
    return {"entities": ",".join(entities), "budget_tokens": PACK_BUDGET_TOKENS, "session_id": session_id}


def rehydrate(hook) -> str:
    event, state = hook.event, hook.state
    body = hook.call("context_pack", pack_params(hook.brain, hook.source, hook.settings.hook_entities, state.entities, event.session_id))
    if hook.brain.cursor(hook.source, LOCAL_LANE, event.session_id) is None:
        hook.call("delta", {"session_id": event.session_id})  # a first wake: establishes the cursor, reports nothing
    state.bank(touched(body))
    # What the pack just showed, the next heartbeat need not repeat (delta re-delivers
    # the last moments before a wake, at least once).
    state.unseen(body["facts"], fact_key)
    shown = hook.brain.pages_by_slugs(hook.source, [c["slug"] for c in body["cards"]], allow_private=False)
    state.unseen([{"slug": slug, "updated_at": iso(row["updated_at"])} for slug, row in shown.items()], page_key)
    return body["text"]

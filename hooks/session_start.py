"""Session start and after compaction: rehydrate the agent with a context pack.

Both moments do the same thing — the pack is deterministic — except that after a
compaction the session has banked entities to bring back. The session's delta
cursor is established here too, so the first heartbeat reports what changed
since the session began rather than nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memverbs.hooks.heartbeat import card_key, fact_key, page_key
from memverbs.hooks.standing import touched

if TYPE_CHECKING:
    from memverbs.hooks.brain_side import BrainSide

PACK_BUDGET_TOKENS = 2_000  # ~8,000 chars of text: inside every harness's injection limit


def pack_params(standing: list[str], session_id: str) -> dict:
    """The context_pack call a session start makes (`memverbs ui`'s pack preview makes the same one)."""
    return {"entities": ",".join(standing), "budget_tokens": PACK_BUDGET_TOKENS, "session_id": session_id}


def rehydrate(hook: BrainSide) -> str:
    """`hook` is the local `Hook` or a `RemoteHook` (brain_side.py): the same four questions, either brain."""
    event, state = hook.event, hook.state
    body = hook.call("context_pack", pack_params(hook.standing(), event.session_id))
    if not hook.has_cursor():
        hook.call("delta", {"session_id": event.session_id})  # a first wake: establishes the cursor, reports nothing
        state.cursor_set = True
    state.bank(touched(body))
    # What the pack just showed, the next heartbeat need not repeat (delta re-delivers
    # the last moments before a wake, at least once).
    state.unseen(body["facts"], fact_key)
    stamps = hook.page_stamps(body["cards"])
    state.unseen(stamps, page_key)
    state.unseen(stamps, card_key)
    return body["text"]

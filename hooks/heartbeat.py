"""Heartbeat: only what changed since the session's last wake, O(changes).

Rate-limited: a chatty turn loop (UserPromptSubmit fires on every prompt) pays
for one delta per interval; between them the hook returns without touching the
brain. Nothing changed → nothing printed.

delta delivers at least once (a fact recorded after the last delivered page
comes again on the next wake); an agent's context is no place for repeats, so
the hook drops what this session was already shown.
"""

from __future__ import annotations

import os

from memverbs.hooks.standing import touched
from memverbs.server.verbs.render import render_delta

DELTA_BUDGET_TOKENS = 1_500
DEFAULT_INTERVAL_S = 30


def interval_ms() -> int:
    try:
        return max(0, int(float(os.environ.get("MEMVERBS_HOOK_HEARTBEAT_INTERVAL_S", DEFAULT_INTERVAL_S)) * 1000))
    except ValueError:
        return DEFAULT_INTERVAL_S * 1000


def due(state, now_ms: int) -> bool:
    """Is this session owed a heartbeat, or did it have one within the interval?"""
    return now_ms - state.last_heartbeat_ms >= interval_ms()


def heartbeat(hook) -> str:
    """The delta text; "" when nothing changed."""
    event, state = hook.event, hook.state
    state.last_heartbeat_ms = hook.now_ms
    body = hook.call(
        "delta",
        {"session_id": event.session_id, "entities": ",".join(state.entities[:8]), "budget_tokens": DELTA_BUDGET_TOKENS},
    )
    state.bank(touched(body))
    pages = state.unseen(body["pages"], page_key)
    facts = state.unseen(body["facts"], fact_key)
    threads = state.unseen(body["threads"], lambda t: f"thread\0{t['kind']}\0{t['text']}\0{t['date']}")
    if not (pages or facts or threads):
        return ""
    return render_delta(body["since"], pages, facts, threads)


def page_key(page: dict) -> str:
    return f"page\0{page['slug']}\0{page['updated_at']}"


def fact_key(fact: dict) -> str:
    return f"fact\0{fact['entity_slug']}\0{fact['fact']}\0{fact['valid_from']}"

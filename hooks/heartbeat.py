"""Heartbeat: only what changed since the session's last wake, O(changes), and what the prompt names.

It runs on every prompt. The launcher's fast path first asks `changes.py` whether
anything is newer than the session's delta cursor (one indexed read, the brain not
even opened); when nothing is, it answers the prompt's reflex itself (hooks/reflex.py)
on that connection. Only a change comes here: the full `delta`, and the reflex's
pointers in the same message (one block of memory per prompt, not two). Nothing
changed and nothing named → nothing printed.

delta delivers at least once (a fact recorded after the last delivered page
comes again on the next wake); an agent's context is no place for repeats, so
the hook drops what this session was already shown.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memverbs.hooks.adapters import ADAPTERS
from memverbs.hooks.basics import reflex_on
from memverbs.hooks.events import Moment
from memverbs.hooks.standing import touched
from memverbs.server.projects import PROJECT_PREFIX
from memverbs.server.verbs.render import render_delta
from memverbs.server.verbs.shapes import split_entities

if TYPE_CHECKING:
    from memverbs.hooks.brain_side import BrainSide
    from memverbs.hooks.state import SessionState

DELTA_BUDGET_TOKENS = 1_500
TOOL_BEAT_INTERVAL_MS = 10_000  # Grok's PostToolUse fires per tool call: a tool-heavy turn looks once per interval


def tool_beat_due(state: SessionState, now_ms: int) -> bool:
    return now_ms - state.last_heartbeat_ms >= TOOL_BEAT_INTERVAL_MS


def heartbeat(hook: BrainSide, *, changed: bool = True) -> str:
    """The delta text and the reflex's pointers; "" when nothing changed and nothing new is named.
    `changed=False`: the brain said nothing changed since the cursor, so no delta is asked for."""
    event, state = hook.event, hook.state
    state.last_heartbeat_ms = hook.now_ms
    if not changed:
        named = named_lines(hook)
        return render_delta("", [], [], [], named=named) if named else ""
    body = hook.call(
        "delta",
        {"session_id": event.session_id, "entities": ",".join(state.entities[:8]), "budget_tokens": DELTA_BUDGET_TOKENS},
    )
    project = hook.project_slug()
    if project is not None:
        # delta puts this project's news first; what is about another project's entity, one this session
        # never asked about, stays out of its context as it stays out of its pack (the brain keeps it).
        asked = {project, *state.entities, *split_entities(hook.settings.hook_entities)}
        body["facts"] = [f for f in body["facts"] if not _other_project(f.get("entity_slug"), asked)]
    state.bank(touched(body))
    pages = state.unseen(body["pages"], page_key)
    facts = state.unseen(body["facts"], fact_key)
    threads = state.unseen(body["threads"], lambda t: f"thread\0{t['kind']}\0{t['text']}\0{t['date']}")
    named = named_lines(hook)
    if not (pages or facts or threads or named):
        return ""
    return render_delta(body["since"], pages, facts, threads, named=named)


def named_lines(hook: BrainSide) -> list[str]:
    """The reflex's lines for this moment: the prompt's pointers, or those a harness that drops the
    prompt hook's output (Grok) kept for now. After the delta, so what it just showed is not repeated."""
    from memverbs.hooks import reflex  # noqa: PLC0415 - only a heartbeat with a prompt or pointers waiting

    event, state = hook.event, hook.state
    reads = hook.reads()
    if reads is None or not reflex_on(hook.settings.hook_reflex):
        return []
    if event.moment is Moment.HEARTBEAT and event.prompt:
        if not ADAPTERS[event.harness].delivers_prompt:
            reflex.wait(state, reflex.pointers(reads, hook.settings.source, event.prompt, state, hook.now_ms, mark=False))
            return []
        given = reflex.pointers(reads, hook.settings.source, event.prompt, state, hook.now_ms)
    elif state.pending and event.moment is not Moment.HEARTBEAT:
        given = reflex.pointers_for(reads, hook.settings.source, state.pending, state, hook.now_ms)
        reflex.give(state, given)
        state.pending = []
    else:
        return []
    return reflex.lines(given)


def _other_project(entity: str | None, asked: set[str]) -> bool:
    return entity is not None and entity.startswith(PROJECT_PREFIX) and entity not in asked


def page_key(page: dict) -> str:
    return f"page\0{page['slug']}\0{page['updated_at']}"


def card_key(page: dict) -> str:
    """A page whose card (title, summary, facts) a pack showed: the reflex need not point to it again."""
    return f"card\0{page['slug']}\0{page['updated_at']}"


def fact_key(fact: dict) -> str:
    return f"fact\0{fact['entity_slug']}\0{fact['fact']}\0{fact['valid_from']}"

"""context_pack: cards + open threads + hot facts for session boundaries. Zero LLM."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memverbs.server.context import VerbContext
from memverbs.server.errors import PROTOCOL_VERSION, invalid
from memverbs.server.names import estimate_tokens, looks_like_slug
from memverbs.server.protocol.params import budget as parse_budget
from memverbs.server.timeparse import now_ms, parse_instant, parse_when
from memverbs.server.verbs.budget import budget_fields, pack_two
from memverbs.server.verbs.cards import build_card, card_threads, find_entity
from memverbs.server.verbs.hot import hot_facts
from memverbs.server.verbs.render import render_pack
from memverbs.server.verbs.shapes import split_entities

if TYPE_CHECKING:
    from memverbs.server.brain.base import Row

SINCE_SUGGESTION = 'Pass an ISO 8601 datetime, e.g. since: "2026-08-11T00:00:00Z", or a time ago such as "30d" or "24h".'


def parse_window_since(verb: str, raw: str | None) -> int | None:
    """`since` as ISO 8601, or as the CLI's `--since` takes it ("30d", "-7d", "2w", "yesterday"): a
    leniency on the wire (docs/protocol.md Part B), read by the one parser both use."""
    if raw is None or not raw.strip():
        return None
    at = parse_when(raw)
    if at is None:
        raise invalid(f'{verb}: since is not a parseable timestamp: "{raw[:60]}"', SINCE_SUGGESTION)
    return at


def pack_pages(ctx: VerbContext, names: list[str], *, allow_private: bool) -> list[Row]:
    """The page of each resolvable name, in order; a miss adds nothing, a repeat adds nothing twice."""
    pages: list[Row] = []
    seen: set[str] = set()
    for name in names:
        found = find_entity(ctx, name, allow_private=allow_private)
        if not found or found[0].page["slug"] in seen:
            continue
        seen.add(found[0].page["slug"])
        pages.append(found[0].page)
    return pages


def pack_cards(ctx: VerbContext, names: list[str], *, include_private: bool, now: int) -> list[dict]:
    """One card per resolvable name (pack_pages)."""
    allow_private = include_private or ctx.remote_private_pages
    return [
        build_card(ctx, page, include_private=include_private, allow_private=allow_private, now=now)
        for page in pack_pages(ctx, names, allow_private=allow_private)
    ]


def pack_threads(ctx: VerbContext, names: list[str], *, include_private: bool, now: int) -> list[dict]:
    """The open threads of pack_cards' cards, in order, without the rest of each card (its edges, aliases
    and counts): what delta reports for its entities, on every heartbeat that delivers."""
    allow_private = include_private or ctx.remote_private_pages
    return [
        thread
        for page in pack_pages(ctx, names, allow_private=allow_private)
        for thread in card_threads(ctx, page["slug"], include_private=include_private, now=now)
    ]


def thread_after(thread: dict, since: int | None) -> bool:
    if since is None:
        return True
    at = parse_instant(thread["date"]) if thread.get("date") else None
    return at is not None and at > since


def context_pack(ctx: VerbContext, params: dict) -> dict:
    since = parse_window_since("context_pack", params.get("since"))
    names = split_entities(params["entities"])
    include_private = params.get("include_private") is True and ctx.caller.reads_private
    now = now_ms()
    cards = [
        {
            "slug": c["entity"]["slug"],
            "title": c["entity"]["title"],
            "type": c["entity"]["type"],
            "summary": c["summary"],
            "open_threads": c["open_threads"],
            "edges": c["edges"],
            "backlink_count": c["backlink_count"],
        }
        for c in pack_cards(ctx, names, include_private=include_private, now=now)
    ]
    session = (params.get("session_id") or "").strip() or None
    project = ctx.project_slug()
    # Facts about every requested entity, a page or not (a project's entity often has none).
    about = list(dict.fromkeys([c["slug"] for c in cards] + [n for n in names if looks_like_slug(n)]))
    threaded = frozenset(t["text"] for c in cards for t in c["open_threads"] if t["kind"] == "commitment")
    facts = hot_facts(ctx, about, session, world_only=not include_private, now=now, project=project, threaded=threaded)

    budget = parse_budget(params.get("budget_tokens"))
    fields: dict = {}
    if budget is not None:
        a, b = pack_two(
            cards,
            lambda c: estimate_tokens(f"{c['title']} {c['summary']} {' '.join(t['text'] for t in c['open_threads'])}"),
            facts,
            lambda f: estimate_tokens(f["fact"]),
            budget,
        )
        cards, facts = a.kept, b.kept
        fields = budget_fields(budget, a, b)
    threads = [t for c in cards for t in c["open_threads"] if thread_after(t, since)]
    body = {
        "protocol_version": PROTOCOL_VERSION,
        "entities": names,
        "cards": cards,
        "open_threads": threads,
        "facts": facts,
        "text": render_pack(cards, threads, facts, project=_named(ctx, project)),
    }
    body.update(fields)
    return body


def _named(ctx: VerbContext, slug: str | None) -> tuple[str, str] | None:
    project = ctx.caller.project
    return (project.name, slug) if project is not None and slug is not None else None

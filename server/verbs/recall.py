"""recall: facts (one arm, by precedence) and, with a query, page results. Zero LLM.

With a query the facts arm is ranked by it (server/verbs/fact_search.py): `facts` holds only
the facts it finds, best first, so an agent never has to tell a match from padding. A query
that finds none answers `facts: []` with `facts_note` saying so, and `recent_facts`: the arm's
newest facts, under their own key, for a caller that can still use them as context (PROTOCOL.md
Part B, docs/protocol.md).

memverbs honours `since` in every facts arm (PROTOCOL.md B2): it narrows the
entity and session arms too, and an unparseable value is invalid_params rather
than a silent empty answer.
"""

from __future__ import annotations

import math

from memverbs.server.brain.base import FactFilter
from memverbs.server.context import VerbContext
from memverbs.server.errors import PROTOCOL_VERSION, invalid
from memverbs.server.names import estimate_tokens
from memverbs.server.protocol.params import budget as parse_budget
from memverbs.server.timeparse import now_ms, parse_since
from memverbs.server.verbs.budget import budget_fields, pack, pack_two
from memverbs.server.verbs.cards import resolve_entity_slug
from memverbs.server.verbs.fact_search import rank_facts, with_limit
from memverbs.server.verbs.search import search_pages
from memverbs.server.verbs.shapes import recall_fact

DEFAULT_LIMIT = 50
MAX_LIMIT = 100


def recall_limit(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return DEFAULT_LIMIT
    if value != int(value) or value <= 0:
        return DEFAULT_LIMIT
    return min(int(value), MAX_LIMIT)


def facts_filter(ctx: VerbContext, params: dict, now: int, limit: int) -> FactFilter:
    """The facts arm recall's params choose (also the CLI's paging and true total)."""
    since = None
    if params.get("since") is not None and params["since"].strip():
        since = parse_since(params["since"], now)
        if since is None:
            raise invalid(
                f'recall: since is not a parseable timestamp: "{params["since"][:60]}"',
                'Pass an ISO 8601 date or datetime, e.g. since: "2026-08-11T00:00:00Z" (or "24h ago").',
            )
    entity = (params.get("entity") or "").strip()
    session = (params.get("session_id") or "").strip()
    if params.get("supersessions") is True:
        arm = "supersessions"
    elif entity:
        arm = "entity"
    elif session:
        arm = "session"
    else:
        arm = "recent"
    return FactFilter(
        arm=arm,
        now=now,
        world_only=not ctx.caller.reads_private,
        active_only=params.get("include_expired") is not True,
        limit=limit,
        entity_slug=resolve_entity_slug(ctx, entity) if arm == "entity" else None,
        session_id=session if arm == "session" else None,
        since=since,
    )


RECENT_CONTEXT = 5  # recent_facts: a glance at what the arm holds, not a second answer
NO_MATCH = "no fact matches the query"


def arm_facts(ctx: VerbContext, f: FactFilter, query: str) -> list:
    """The facts arm's rows: in the contract's order, or with a query only the facts it finds, best first."""
    if not query:
        return ctx.brain.facts(ctx.source, f)
    return rank_facts(ctx, query, f, f.limit)


def recall(ctx: VerbContext, params: dict) -> dict:
    now = now_ms()
    limit = recall_limit(params.get("limit"))
    f = facts_filter(ctx, params, now, limit)
    query = (params.get("query") or "").strip()
    facts = [recall_fact(r) for r in arm_facts(ctx, f, query)]
    facts_found = bool(facts)
    recent: list[dict] | None = None
    if query and not facts_found:
        recent = [recall_fact(r) for r in ctx.brain.facts(ctx.source, with_limit(f, min(f.limit, RECENT_CONTEXT)))] or None
    grep = params.get("grep")
    if grep:
        # grep belongs to the facts arm (limit, then grep); the budget packs what the arm returns.
        needle = grep.lower()
        facts = [x for x in facts if needle in x["fact"].lower()]
        if recent is not None:
            recent = [x for x in recent if needle in x["fact"].lower()]

    results: list[dict] | None = None
    degraded: str | None = None
    if query:
        results, degraded = search_pages(ctx, query, limit, allow_private=ctx.pages_private_ok)

    budget = parse_budget(params.get("budget_tokens"))
    packed_facts, packed_results = facts, results
    fields: dict = {}
    if budget is not None:
        a, b = pack_two(
            facts,
            lambda x: estimate_tokens(x["fact"]),
            results or [],
            lambda r: estimate_tokens(r["title"]) + estimate_tokens(r["chunk"]),
            budget,
        )
        packed_facts = a.kept
        packed_results = b.kept if results is not None else None
        if results is None:
            b.dropped = 0
        fields = budget_fields(budget, a, b)
        if recent:
            # What the answer left: context fills it, and what does not fit is not an answer dropped.
            left = budget - fields["budget_used"]
            c = pack(recent, lambda x: estimate_tokens(x["fact"]), left) if left > 0 else None
            recent = c.kept if c is not None else []
            fields["budget_used"] += c.used if c is not None else 0

    body: dict = {"facts": packed_facts, "total": len(packed_facts)}
    if params.get("include_pending") is True:
        body["pending_consolidation_count"] = 0  # memverbs has no consolidation queue
    body["protocol_version"] = PROTOCOL_VERSION
    if packed_results is not None:
        body["results"] = packed_results
        if degraded is not None:  # absent when the hybrid path ran
            body["search_degraded"] = degraded
        if packed_results and ctx.caller.trusted:
            # Only the owner's reads mark pages retrieved: last_retrieved_at breaks resolution ties
            # for every caller, so an untrusted read (a read-only token's) must not steer them.
            ctx.brain.touch_retrieved(ctx.source, [r["slug"] for r in packed_results], now)
    if query and not facts_found:
        body["facts_note"] = NO_MATCH
        if recent is not None:
            body["recent_facts"] = recent
    body.update(fields)
    return body

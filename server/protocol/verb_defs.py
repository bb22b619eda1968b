"""The seven MEMORY_VERBS v1 tool definitions, in the reference's tools/list order.

Names, param names, types, declaration order, enums and annotations are frozen
by the protocol; descriptions are ours (only synthesize's `[EXPENSIVE` prefix is
checked by conformance).
"""

from __future__ import annotations

from memverbs.server.protocol.model import Operation, Param

KINDS = ("event", "preference", "commitment", "belief", "fact")
VISIBILITIES = ("world", "private")

_SINCE_ISO = "ISO 8601 date or datetime, e.g. 2026-08-11T00:00:00Z"

REMEMBER = Operation(
    name="remember",
    description=(
        "MEMORY VERB (v1): save ONE fact with mandatory attribution. Returns {id, status, status_text, "
        "entity_slug, valid_until, protocol_version}; branch on status (inserted | duplicate | superseded), "
        "never on status_text. Set entity whenever the fact is about a specific person, company or project: "
        "entity-scoped recall will not find unattributed facts. visibility defaults to world (readable by every "
        "agent connected to this brain); private facts are readable only by the local CLI."
    ),
    params=(
        Param("fact", "string", "The fact, one self-contained sentence.", required=True),
        Param(
            "provenance",
            "string",
            'Where this came from, free text up to 500 chars, stored verbatim (e.g. "conversation 2026-06-12").',
            required=True,
        ),
        Param(
            "ttl",
            "string",
            'Expiry: duration shorthand ("30d", "12h", "45m") or an absolute ISO 8601 timestamp. '
            "ISO-8601 durations (P30D) are rejected. Omitted: never expires.",
        ),
        Param("entity", "string", "Entity name or slug the fact is about, e.g. people/alice-example."),
        Param("kind", "string", "What sort of fact this is.", enum=KINDS, default="fact"),
        Param("visibility", "string", "world (default) or private (local CLI reads only).", enum=VISIBILITIES, default="world"),
    ),
    scope="write",
    mutating=True,
    annotations={"title": "remember (memory write)", "idempotentHint": True},
    verb=True,
    handler="memverbs.server.verbs.remember:remember",
)

ENTITY = Operation(
    name="entity",
    description=(
        "MEMORY VERB (v1): one person/company/project card by name, alias or slug, zero LLM. Resolution "
        "precedence: alias > exact title > slug/slug-suffix; ties break on most recently touched. A hit returns "
        "the card (aka, summary, last_touched, open_threads, edges, backlink_count, active_fact_count) plus "
        "runners-up in suggestions; a miss returns found:false with keyword near-misses. Never errors on a miss."
    ),
    params=(Param("name", "string", "Entity name, alias or slug.", required=True),),
    scope="read",
    mutating=False,
    annotations={"title": "entity (card lookup, zero LLM)", "readOnlyHint": True},
    verb=True,
    handler="memverbs.server.verbs.entity:entity",
)

SYNTHESIZE = Operation(
    name="synthesize",
    description=(
        "[EXPENSIVE / SLOW — makes LLM calls, seconds-to-minutes latency, costs money] MEMORY VERB (v1): "
        "answer a question by combining evidence across pages. Prefer recall/entity for lookups; use synthesize "
        "only when the answer requires combining evidence. Returns {answer, sources, gaps, cost, "
        "synthesis_status, pages_gathered, takes_gathered, warnings}. With no LLM configured it returns the "
        "unavailable error with a fix, never a fake answer."
    ),
    params=(
        Param("question", "string", "The question to answer.", required=True),
        Param("since", "string", "Only evidence from this time on (YYYY-MM-DD, YYYY-MM or ISO 8601)."),
        Param("until", "string", "Only evidence up to this time (YYYY-MM-DD, YYYY-MM or ISO 8601)."),
    ),
    scope="read",
    mutating=False,
    annotations={"title": "synthesize (slow, costly — LLM-backed)", "readOnlyHint": True},
    verb=True,
    handler="memverbs.server.verbs.synthesize:synthesize",
)

FORGET = Operation(
    name="forget",
    description=(
        "MEMORY VERB (v1): expire a fact by its opaque string id (from remember's id or recall's "
        "facts[].fact_id — never a page slug). Facts are expired with an audit trail, never deleted. "
        "Idempotent: forgetting an already-expired fact returns expired:false; an unknown id is not_found."
    ),
    params=(
        Param("id", "string", "The fact id (a string, e.g. \"42\").", required=True),
        Param("reason", "string", "Why, kept in the audit trail."),
    ),
    scope="write",
    mutating=True,
    annotations={"title": "forget (expire a fact)", "destructiveHint": True, "idempotentHint": True},
    verb=True,
    handler="memverbs.server.verbs.forget:forget",
)

RECALL = Operation(
    name="recall",
    description=(
        "MEMORY VERB (v1): retrieve saved facts and, with query, budget-packed page snippets. entity scopes "
        "the facts arm; query runs the search arm over pages; both may be combined. since (ISO 8601) filters "
        "facts by event time. limit is a per-arm cap (default 50, max 100). budget_tokens packs server-side: "
        "facts first, then results; budget_used and dropped_count report what fit. With no embedding provider "
        "the search arm is keyword-only and search_degraded says so — never an error."
    ),
    params=(
        Param("entity", "string", "Entity name or slug whose facts to return."),
        Param("query", "string", "Search the pages for this text."),
        Param("budget_tokens", "number", "Token budget for the whole response (chars/4 estimate)."),
        Param("since", "string", f"Only facts whose event time is at or after this ({_SINCE_ISO})."),
        Param("session_id", "string", "Only facts recorded in this session."),
        Param("include_expired", "boolean", "Also return expired facts.", default=False),
        Param("supersessions", "boolean", "Return the supersession audit trail instead."),
        Param("limit", "number", "Per-arm cap, default 50, max 100."),
        Param("grep", "string", "Case-insensitive substring filter on fact text."),
        Param("include_pending", "boolean", "Also report pending_consolidation_count."),
    ),
    scope="read",
    mutating=False,
    annotations={"title": "recall (memory read)", "readOnlyHint": True},
    verb=True,
    handler="memverbs.server.verbs.recall:recall",
)

CONTEXT_PACK = Operation(
    name="context_pack",
    description=(
        "MEMORY VERB (v1): one deterministic, budget-packed bundle for a set of standing entities — entity "
        "cards, open threads and hot facts — for session boundaries: call it at session start and right after "
        "compaction. entities is comma-separated, capped at 8. World-only unless a trusted local caller passes "
        "include_private. text is the pre-rendered block to inject. Zero LLM."
    ),
    params=(
        Param("entities", "string", "Comma-separated entity names or slugs (first 8 used).", required=True),
        Param("budget_tokens", "number", "Token budget: cards first, then facts."),
        Param("since", "string", f"Only open threads dated after this ({_SINCE_ISO})."),
        Param("session_id", "string", "Prefer facts recorded in this session."),
        Param("include_private", "boolean", "Trusted local callers only: include private facts and pages.", default=False),
    ),
    scope="read",
    mutating=False,
    annotations={"title": "context_pack (boundary bundle)", "readOnlyHint": True},
    verb=True,
    handler="memverbs.server.verbs.context_pack:context_pack",
)

DELTA = Operation(
    name="delta",
    description=(
        "MEMORY VERB (v1): what changed since T, for heartbeats — pages updated after the cursor (oldest "
        "first), facts recorded after it, and open-thread events after it. Pass since (ISO 8601) or a stable "
        "session_id whose cursor carries the last wake (the first call establishes it). Delivery is "
        "at-least-once: has_more:true means call again; stateless callers pass next_cursor.since and "
        "next_cursor.slug back as since and since_slug. Zero LLM."
    ),
    params=(
        Param("since", "string", f"Changes after this instant ({_SINCE_ISO})."),
        Param("since_slug", "string", "Keyset tiebreak: with since, resume after this slug."),
        Param("entities", "string", "Comma-separated entities whose thread updates to include (first 8)."),
        Param("budget_tokens", "number", "Token budget: pages first, then facts."),
        Param("session_id", "string", "Stable session id; the server keeps its cursor."),
        Param("include_private", "boolean", "Trusted local callers only: include private facts and pages."),
    ),
    scope="read",
    mutating=False,
    annotations={"title": "delta (what changed since)", "readOnlyHint": True},
    verb=True,
    handler="memverbs.server.verbs.delta:delta",
)

VERB_OPERATIONS: tuple[Operation, ...] = (REMEMBER, ENTITY, SYNTHESIZE, FORGET, RECALL, CONTEXT_PACK, DELTA)

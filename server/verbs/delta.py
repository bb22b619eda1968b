"""delta: what changed since a cursor, for heartbeats. Zero LLM; O(changes).

Pages come oldest first through the keyset (updated_at, slug), so a cluster of
pages sharing one timestamp drains across wakes instead of livelocking. A
session cursor (source, client lane, session) advances only to the newest page
actually delivered: at-least-once, never silently lost. Cursor reads and writes
fail open to a stateless delta. Untrusted callers never see private pages here
either (PROTOCOL.md B3), and a facts overflow sets has_more (B4) — with facts
delivered oldest first and the cursor held before the first undelivered one, so
following has_more drains them all.
"""

from __future__ import annotations

from collections.abc import Callable

from memverbs.server.context import VerbContext
from memverbs.server.errors import PROTOCOL_VERSION, BrainError, invalid
from memverbs.server.names import estimate_tokens
from memverbs.server.protocol.params import budget as parse_budget
from memverbs.server.timeparse import iso, now_ms
from memverbs.server.verbs import readout
from memverbs.server.verbs.budget import budget_fields, pack_two
from memverbs.server.verbs.context_pack import parse_window_since
from memverbs.server.verbs.shapes import brief_fact, split_entities

TYPE_CHECKING = False  # typing's flag, without importing typing on a hook's start
if TYPE_CHECKING:
    from typing import TypeVar

    T = TypeVar("T")

PAGE_LIMIT = 50
FACT_LIMIT = 50
BULK_MS_LIMIT = 1_000
IN_FLIGHT_LAG_MS = 2000  # covers transactions that stamp updated_at when they start


def delta(ctx: VerbContext, params: dict) -> dict:
    brain, source, client = ctx.brain, ctx.source, ctx.caller.client_id
    since = parse_window_since("delta", params.get("since"))
    raw_session = params.get("session_id")
    session = raw_session[:200] if raw_session and raw_session.strip() else None
    include_private = params.get("include_private") is True and ctx.caller.reads_private
    budget = parse_budget(params.get("budget_tokens"))
    now = now_ms()

    row = _fail_open(lambda: brain.cursor(source, client, session)) if session else None
    effective = since if since is not None else (row["last_wake_at"] if row else None)
    if effective is None:
        if session is not None:
            return _first_wake(ctx, session, budget, now)
        raise invalid(
            "delta requires `since` (ISO 8601) or a `session_id` with an established cursor.",
            "Pass since (e.g. since: \"2026-08-11T00:00:00Z\") for a stateless delta, or a stable session_id: "
            "the first call establishes the cursor and later calls return what changed since the previous one.",
        )

    since_slug = params.get("since_slug")
    if since_slug is None and row is not None and row["cursor_slug"]:
        since_slug = row["cursor_slug"]
    allow_private = include_private or ctx.remote_private_pages
    page_rows = brain.changed_pages(source, effective, since_slug, limit=PAGE_LIMIT + 1, allow_private=allow_private)
    page_overflow = len(page_rows) > PAGE_LIMIT
    pages = [
        {"slug": r["slug"], "source_id": r["source_id"], "title": r["title"] or r["slug"], "updated_at": iso(r["updated_at"])}
        for r in page_rows[:PAGE_LIMIT]
    ]
    page_times = [r["updated_at"] for r in page_rows[:PAGE_LIMIT]]
    fact_rows, fact_overflow = _fact_batch(ctx, effective, include_private, now)
    facts = [brief_fact(r, r["confidence"]) for r in fact_rows]
    fact_times = [r["created_at"] for r in fact_rows]
    threads = readout.threads_of(ctx, split_entities(params.get("entities")), include_private=include_private, now=now,
                                 since=effective)

    fields: dict = {}
    dropped_pages = dropped_facts = 0
    if budget is not None:
        a, b = pack_two(
            pages, lambda p: estimate_tokens(f"{p['title']} {p['slug']}"), facts, lambda f: estimate_tokens(f["fact"]), budget
        )
        pages, facts = a.kept, b.kept
        dropped_pages, dropped_facts = a.dropped, b.dropped
        fields = budget_fields(budget, a, b)
    has_more = page_overflow or fact_overflow or dropped_pages > 0 or dropped_facts > 0

    # How far this wake delivered everything. Facts come oldest first, so when some were
    # not delivered (overflow or budget) the cursor stops just before the first of them.
    facts_complete = not fact_overflow and dropped_facts == 0
    fact_bound = None
    if not facts_complete:
        fact_bound = (fact_times[len(facts)] if len(facts) < len(fact_times) else fact_times[-1] + 1) - 1
    advance: tuple[int, str] | None = None
    if pages:
        last_at, last_slug = page_times[len(pages) - 1], pages[-1]["slug"]
        advance = (last_at, last_slug) if fact_bound is None or fact_bound >= last_at else (fact_bound, "")
        next_cursor = {"since": iso(advance[0]), "slug": advance[1]}
        handed_back = advance[0]
    elif facts and fact_bound is not None:
        # No page changed at all (pages are packed first): the facts alone move the cursor.
        # Facts are stamped under the write lock, so no in-flight lag is needed for them.
        advance = (fact_bound, "")
        next_cursor = {"since": iso(advance[0]), "slug": ""}
        handed_back = advance[0]
    else:
        next_cursor = {"since": iso(effective), "slug": since_slug or ""}
        handed_back = effective
        if not has_more:
            advance = (now - IN_FLIGHT_LAG_MS, "")
    if session is not None and advance is not None:
        _fail_open(lambda: brain.save_cursor(source, client, session, advance[0], advance[1], now))

    # This project's news first; the cursor above was decided on the delivery order.
    project = ctx.project_slug()
    facts = readout.project_first(facts, fact_rows, project)
    if "ask" in ctx.extras:  # a trusted in-process caller (a hook): the slug it would otherwise read again
        ctx.extras["aside"] = {"project": project}
    since_iso = iso(effective)
    body = {
        "protocol_version": PROTOCOL_VERSION,
        "since": since_iso,
        "pages": pages,
        "facts": facts,
        "threads": threads,
        "text": readout.delta_text(since_iso, pages, facts, threads),
        "has_more": has_more,
        "next_cursor": next_cursor,
    }
    body.update(fields)
    # Where the next call starts: a session's stored cursor (unchanged when nothing advanced it),
    # else the cursor handed back.
    if session is not None:
        body["redelivery"] = redelivery(advance[0] if advance is not None else effective, now)
    else:
        body["redelivery"] = redelivery(handed_back, now)
    return body


def redelivery(after: int, now: int) -> dict:
    """Additive: delivery is at-least-once, and this says how far. A change recorded after `after`
    (pages by updated_at, facts by when they were recorded) may come again on the next call, even
    if this one delivered it; nothing at or before it does. The session cursor trails a page-less
    wake by IN_FLIGHT_LAG_MS so a write still in flight is never skipped; a cursor stopped at the
    last delivered page re-reads the facts recorded after that page. Clients de-duplicate pages by
    (slug, updated_at) and facts by (fact, entity_slug, valid_from)."""
    return {"after": iso(after), "window_ms": max(now - after, 0),
            "dedupe_by": {"pages": ["slug", "updated_at"], "facts": ["fact", "entity_slug", "valid_from"]}}


def _fact_batch(ctx: VerbContext, since: int, include_private: bool, now: int) -> tuple[list, bool]:
    """Facts recorded after `since`, oldest first: up to 50, never splitting a millisecond.

    A batch that ends inside a millisecond could not be resumed from an instant cursor,
    so it is cut back to the last whole millisecond — or, when one millisecond alone holds
    more than 50 facts (a bulk import), widened to all of it.
    """
    rows = ctx.brain.facts_recorded_after(
        ctx.source, since, world_only=not include_private, now=now, limit=FACT_LIMIT + 1
    )
    if len(rows) <= FACT_LIMIT:
        return rows, False
    boundary = rows[FACT_LIMIT]["created_at"]
    whole = [r for r in rows[:FACT_LIMIT] if r["created_at"] < boundary]
    if whole:
        return whole, True
    same = ctx.brain.facts_recorded_at(ctx.source, boundary, world_only=not include_private, now=now, limit=BULK_MS_LIMIT)
    return same, True


def _first_wake(ctx: VerbContext, session: str, budget: int | None, now: int) -> dict:
    """A new session: establish its cursor and report nothing yet.

    The stored cursor trails now by the in-flight lag, like every page-less
    advance: a page written in the same instant is delivered (perhaps twice)
    rather than never.
    """
    brain, source, client = ctx.brain, ctx.source, ctx.caller.client_id
    _fail_open(lambda: brain.start_cursor(source, client, session, now - IN_FLIGHT_LAG_MS, now))
    at = iso(now)
    body: dict[str, object] = {
        "protocol_version": PROTOCOL_VERSION,
        "since": at,
        "pages": [],
        "facts": [],
        "threads": [],
        "text": "",
        "has_more": False,
        "next_cursor": {"since": at, "slug": ""},
    }
    if budget is not None:
        body.update(budget_tokens=budget, budget_used=0, dropped_count=0)
    body["redelivery"] = redelivery(now - IN_FLIGHT_LAG_MS, now)
    return body


def _fail_open(action: Callable[[], T]) -> T | None:
    """Cursor state is an optimisation: an outage degrades to a stateless delta, never an error."""
    try:
        return action()
    except BrainError:
        return None

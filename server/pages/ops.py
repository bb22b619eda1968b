"""Page operations (starter/full surfaces): the same envelope style as the verbs.

Untrusted callers never read a private page: get_page answers not_found for it,
exactly as for a slug that does not exist.
"""

from __future__ import annotations

import json
import re

from memverbs.server.brain.sqlite_pages import PageDraft
from memverbs.server.context import VerbContext
from memverbs.server.errors import PROTOCOL_VERSION, VerbError, invalid
from memverbs.server.names import normalize_alias
from memverbs.server.pages.links import adopt_dangling_links, resolve_links
from memverbs.server.pages.markdown import PageFormatError, parse_page, without_private_rows
from memverbs.server.timeparse import iso, now_ms
from memverbs.server.verbs.search import search_pages

_SLUG = re.compile(r"^[a-z0-9][a-z0-9_-]*(?:/[a-z0-9][a-z0-9_-]*)*$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_SLUG_HINT = 'Slugs are lowercase path segments of a-z, 0-9, "-" and "_", e.g. "people/alice-example".'


def _slug(value: str, name: str = "slug") -> str:
    slug = value.strip()
    if not _SLUG.match(slug):
        raise invalid(f'{name} "{value[:80]}" is not a valid slug.', _SLUG_HINT)
    return slug


def _not_found(slug: str) -> VerbError:
    return VerbError(
        "not_found",
        f'No page with slug "{slug}".',
        "Check the slug with list_pages or search; put_page creates a page.",
    )


def _limit(value: object, default: int, cap: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value) or value <= 0:
        return default
    return min(int(value), cap)


def put_page(ctx: VerbContext, params: dict) -> dict:
    slug = _slug(params["slug"])
    try:
        parsed = parse_page(params["content"])
    except PageFormatError as exc:
        raise invalid(f"put_page: {exc}", "Fix the page's frontmatter block (between the --- lines) and retry.") from exc
    for to_slug, *_ in parsed.links:
        if not to_slug:
            raise invalid("put_page: a link has an empty target.", "Give every [[link]] and links: entry a slug.")
    draft = PageDraft(
        slug=slug,
        title=parsed.title or slug,
        type=parsed.type,
        body=parsed.body,
        frontmatter=parsed.frontmatter,
        summary=parsed.summary,
        visibility=parsed.visibility,
        aliases=parsed.aliases,
        links=resolve_links(ctx, slug, parsed.links, private_page=parsed.visibility == "private"),
        timeline=parsed.timeline,
    )
    created = ctx.brain.save_page(ctx.source, draft, now_ms())
    adopt_dangling_links(ctx, draft)
    if ctx.providers is not None and ctx.providers.embeddings_configured:
        from memverbs.server.verbs.semantic import embed_page  # noqa: PLC0415 - numpy only with a provider

        embed_page(ctx, slug)  # best effort: a failure leaves the page to `memverbs reindex`
    return {
        "slug": slug,
        "status": "created" if created else "updated",
        "title": draft.title,
        "type": draft.type,
        "visibility": draft.visibility,
        "aliases": len(parsed.aliases),
        "links": len(parsed.links),
        "timeline_entries": len(parsed.timeline),
        "protocol_version": PROTOCOL_VERSION,
    }


def get_page(ctx: VerbContext, params: dict) -> dict:
    slug = params["slug"].strip()
    row = ctx.brain.page(ctx.source, slug, allow_private=ctx.pages_private_ok)
    if row is None:
        raise _not_found(slug)
    brain, source = ctx.brain, ctx.source
    return {
        "slug": row["slug"],
        "title": row["title"],
        "type": row["type"],
        "visibility": row["visibility"],
        "frontmatter": json.loads(row["frontmatter"]),
        # Private facts-fence rows are for trusted readers only, like every private fact.
        "body": row["body"] if ctx.caller.trusted else without_private_rows(row["body"]),
        "aliases": brain.aliases_of(source, slug),
        "links": [
            {"to": r["to_slug"], "type": r["link_type"], "link_source": r["link_source"], "context": r["context"]}
            for r in brain.page_links(source, slug)
        ],
        "timeline": [
            {"date": r["date"], "summary": r["summary"], "detail": r["detail"]}
            for r in brain.timeline_newest(source, slug, limit=100)
        ],
        "created_at": iso(row["created_at"]),
        "updated_at": iso(row["updated_at"]),
        "last_retrieved_at": iso(row["last_retrieved_at"]),
        "protocol_version": PROTOCOL_VERSION,
    }


def list_pages(ctx: VerbContext, params: dict) -> dict:
    rows = ctx.brain.list_pages(
        ctx.source,
        type_=params.get("type"),
        prefix=params.get("prefix"),
        limit=_limit(params.get("limit"), 50, 500),
        allow_private=ctx.pages_private_ok,
    )
    pages = [{"slug": r["slug"], "title": r["title"], "type": r["type"], "updated_at": iso(r["updated_at"])} for r in rows]
    return {"pages": pages, "total": len(pages), "protocol_version": PROTOCOL_VERSION}


def search(ctx: VerbContext, params: dict) -> dict:
    query = params["query"].strip()
    if not query:
        raise invalid("query must be a non-empty string.", 'Say what to look for, e.g. query: "payments provider".')
    results, degraded = search_pages(ctx, query, _limit(params.get("limit"), 10, 100), allow_private=ctx.pages_private_ok)
    body: dict = {"results": results}
    if degraded is not None:
        body["search_degraded"] = degraded
    body["protocol_version"] = PROTOCOL_VERSION
    return body


def add_timeline_entry(ctx: VerbContext, params: dict) -> dict:
    slug = params["slug"].strip()
    date = params["date"].strip()
    summary = params["summary"].strip()
    if not _DATE.match(date):
        raise invalid(f'date "{date[:40]}" is not YYYY-MM-DD.', 'Pass the event date as YYYY-MM-DD, e.g. "2026-08-11".')
    if not summary:
        raise invalid("summary must be a non-empty string.", "Say in one line what happened.")
    if ctx.brain.page(ctx.source, slug, allow_private=ctx.pages_private_ok) is None:
        raise _not_found(slug)
    entry_id = ctx.brain.add_timeline_entry(ctx.source, slug, date, summary, params.get("detail"), now_ms())
    return {"slug": slug, "id": str(entry_id), "date": date, "summary": summary, "protocol_version": PROTOCOL_VERSION}


def whoami(ctx: VerbContext, params: dict) -> dict:
    c = ctx.caller
    return {
        "source_id": c.source_id,
        "client_id": c.client_id,
        "remote": c.remote,
        "scopes": sorted(c.scopes),
        "surface": ctx.extras.get("surface"),
        "protocol_version": PROTOCOL_VERSION,
    }


def delete_page(ctx: VerbContext, params: dict) -> dict:
    slug = params["slug"].strip()
    if ctx.brain.page(ctx.source, slug, allow_private=ctx.pages_private_ok) is None:
        raise _not_found(slug)
    deleted = ctx.brain.delete_page(ctx.source, slug, now_ms())
    return {"slug": slug, "deleted": deleted, "protocol_version": PROTOCOL_VERSION}


def add_link(ctx: VerbContext, params: dict) -> dict:
    from_slug = _slug(params["from"], "from")
    to_slug = _slug(params["to"], "to")
    link_type = params["link_type"].strip()
    if not link_type:
        raise invalid("link_type must be a non-empty string.", 'Name the relation, e.g. link_type: "works_at".')
    link_source = (params.get("link_source") or "manual").strip()
    if link_source not in ("manual", "mentions"):
        raise invalid(
            f'link_source "{link_source[:40]}" is not one of: manual, mentions.',
            "Use manual for a relation you assert, mentions for a passing mention (kept off entity cards).",
        )
    if ctx.brain.page(ctx.source, from_slug, allow_private=ctx.pages_private_ok) is None:
        raise _not_found(from_slug)
    added = ctx.brain.add_link(ctx.source, from_slug, to_slug, link_type, link_source, params.get("context"), now_ms())
    return {"from": from_slug, "to": to_slug, "link_type": link_type, "added": added, "protocol_version": PROTOCOL_VERSION}


def add_alias(ctx: VerbContext, params: dict) -> dict:
    slug = params["slug"].strip()
    alias = params["alias"].strip()
    norm = normalize_alias(alias)
    if not norm:
        raise invalid("alias must be a non-empty string.", 'Pass the other name, e.g. alias: "Ali".')
    if ctx.brain.page(ctx.source, slug, allow_private=ctx.pages_private_ok) is None:
        raise _not_found(slug)
    added = ctx.brain.add_alias(ctx.source, slug, alias, norm)
    return {"slug": slug, "alias": alias, "alias_norm": norm, "added": added, "protocol_version": PROTOCOL_VERSION}

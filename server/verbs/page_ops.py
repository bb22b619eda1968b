"""Page operations (starter/full surfaces): the same envelope style as the verbs.

Untrusted callers never read a private page: get_page answers not_found for it,
exactly as for a slug that does not exist. Nor do they change one: the writes that
take a page answer not_found for it as for a missing page, and put_page over a
private or deleted page is refused with one `scope_denied` that says neither which
nor anything the page holds (docs/protocol.md, "Private pages over MCP").
"""

from __future__ import annotations

import json
import re

from memverbs.server.brain.base import PageDraft, Row, SlugHidden
from memverbs.server.context import VerbContext
from memverbs.server.errors import PROTOCOL_VERSION, VerbError, invalid
from memverbs.server.names import normalize_alias, valid_slug
from memverbs.server.pages.markdown import (
    PageFormatError,
    ParsedPage,
    declare_private,
    has_kept_marker,
    keep_private_rows,
    parse_page,
    private_rows,
    restore_kept_rows,
    without_private_rows,
)
from memverbs.server.people import owns
from memverbs.server.timeparse import iso, now_ms
from memverbs.server.verbs.fact_search import search_facts
from memverbs.server.verbs.links import adopt_dangling_links, ask, resolve_links
from memverbs.server.verbs.search import search_pages

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_SLUG_HINT = (
    'Slugs are lowercase path segments of a-z, 0-9, "-" and "_", e.g. "people/alice-example" '
    '(or with the letters of scripts that have no Latin spelling, as a file name gives them: "notes/日本").'
)


def _slug(value: str, name: str = "slug") -> str:
    slug = value.strip()
    if not valid_slug(slug):
        raise invalid(f'{name} "{value[:80]}" is not a valid slug.', _SLUG_HINT)
    return slug


def _not_found(slug: str) -> VerbError:
    return VerbError(
        "not_found",
        f'No page with slug "{slug}".',
        "Check the slug with list_pages or search; put_page creates a page.",
    )


def _no_writable_page(ctx: VerbContext, slug: str) -> VerbError:
    """A write to a page that is missing, deleted or (for an untrusted caller) private: one answer for all."""
    if ctx.caller.trusted:
        return _not_found(slug)
    return VerbError(
        "not_found",
        f'No page with slug "{slug}".',
        "Check the slug with list_pages or search; put_page creates a page. Pages this connection cannot "
        "see are changed only on the brain's own machine, with the memverbs CLI.",
    )


def _hidden_slug(slug: str) -> VerbError:
    """put_page over a page an untrusted caller may not see. The same answer for a private and a
    deleted page, so it never tells which (or anything the page holds)."""
    return VerbError(
        "scope_denied",
        f'put_page cannot write "{slug}": the slug is taken by a page this connection may not change (a private or deleted page).',
        "Write the page under another slug. Private and deleted pages are changed only on the brain's own "
        "machine, with the memverbs CLI (memverbs put-page SLUG FILE).",
    )


def _not_theirs(slug: str, page: Row) -> VerbError:
    """put_page making another person's page private: a world page stays the team's, and its owner's."""
    return VerbError(
        "scope_denied",
        f'put_page cannot make "{slug}" private: it is another person\'s page (person {page["owner"]}), and only a '
        "page's owner changes its visibility.",
        "Leave visibility out (or world) to rewrite the shared page, or keep private notes in a private page of "
        "your own under another slug.",
    )


def _private_rows_not_theirs(slug: str) -> VerbError:
    return invalid(
        f'put_page: the page "{slug}" is another person\'s, and the [private] rows of a page are its owner\'s: '
        "new [private] rows in it would be shown to them, not kept for you.",
        "Remove the new [private] rows, and keep private notes in a private page of your own or a private fact "
        "(remember with visibility private).",
    )


def _limit(value: object, default: int, cap: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value) or value <= 0:
        return default
    return min(int(value), cap)


def checked_page(slug: str, content: str) -> tuple[str, ParsedPage]:
    """put_page's checks of what it is given, writing nothing: the slug and the page it parses to.
    `import --dry-run` runs these too, so a dry run finds every error the real run would."""
    slug = _slug(slug)
    try:
        parsed = parse_page(content)
    except PageFormatError as exc:
        raise invalid(f"put_page: {exc}", "Fix the page's frontmatter block (between the --- lines) and retry.") from exc
    for to_slug, *_ in parsed.links:
        if not to_slug:
            raise invalid("put_page: a link has an empty target.", "Give every [[link]] and links: entry a slug.")
    return slug, parsed


def put_page(ctx: VerbContext, params: dict) -> dict:
    slug, parsed = checked_page(params["slug"], params["content"])
    content = params["content"]

    def build(existing: Row | None) -> PageDraft:
        return _draft(ctx, slug, content, parsed, existing)

    # What resolving the page's links will ask travels with the write lock (pages_store.save_page).
    targets = [to for to, _, source, _ in parsed.world_links + parsed.private_links if source == "markdown"]
    try:
        created, draft = ctx.brain.save_page(ctx.source, slug, build, now_ms(), by=ctx.caller.client_id,
                                             links=ask(ctx, slug, targets))
    except SlugHidden:
        raise _hidden_slug(slug) from None
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


def _draft(ctx: VerbContext, slug: str, content: str, parsed: ParsedPage, existing: Row | None) -> PageDraft:
    """What put_page saves over `existing` (the slug's row in any state, or None).

    Untrusted callers may not replace a page they cannot see (private, or deleted), and
    their write-back keeps the private facts-fence rows they were never shown. A file that
    export wrote without private rows gets the page's rows back where it marks them cut,
    whoever writes it. A page that was private stays private unless the markdown says
    `visibility: world`. An MCP caller's text is merged into the page's source first
    (frontmatter_merge.py): the frontmatter keys it did not change keep their bytes. (The answer counts only what the caller sent, never what was kept
    for the owner.)
    """
    hidden = existing is not None and (existing["deleted_at"] is not None or existing["visibility"] != "world")
    if hidden and not ctx.caller.trusted:
        raise _hidden_slug(slug)
    if ctx.caller.remote and existing is not None and existing["deleted_at"] is None and existing["markdown"]:
        # An agent rebuilt the page from get_page's values: what it did not change keeps the source's bytes.
        from memverbs.server.pages.frontmatter_merge import merged_source  # noqa: PLC0415 - MCP writes over a page only

        merged = merged_source(existing["markdown"], content)
        if merged != content:
            content, parsed = merged, parse_page(merged)
    markdown = content
    theirs = existing is not None and not owns(int(existing["owner"]), ctx.person(), ctx.brain.backend)
    if theirs and parsed.visibility == "private":
        raise _not_theirs(slug, existing)
    merged = parsed.body
    if has_kept_marker(merged):
        merged = restore_kept_rows(existing["body"] if existing is not None else "", merged)
    elif existing is not None and not (ctx.caller.trusted and existing["owner"] == ctx.person()):
        # Whoever was not shown the page's private rows (an untrusted writer, or another person)
        # keeps them for the page's owner.
        merged = keep_private_rows(existing["body"], merged)
    if theirs and existing is not None and private_rows(merged) - private_rows(existing["body"]):
        raise _private_rows_not_theirs(slug)
    if merged != parsed.body:
        markdown = content[: len(content) - len(parsed.body)] + merged
        parsed = parse_page(markdown)  # the kept rows' links and dates are the page's too
    visibility = parsed.visibility
    frontmatter = dict(parsed.frontmatter)
    if visibility is None:
        visibility = "private" if existing is not None and existing["visibility"] == "private" else "world"
        if visibility == "private":
            frontmatter["visibility"] = "private"
            markdown = declare_private(markdown)
    private_page = visibility == "private"
    links = resolve_links(ctx, slug, parsed.world_links, private_page=private_page)
    world_keys = {link[:3] for link in links}
    return PageDraft(
        slug=slug,
        title=parsed.title or ctx.extras.get("file_name") or _undeclared_title(existing, slug) or slug,
        type=parsed.type,
        body=parsed.body,
        frontmatter=frontmatter,
        summary=parsed.summary,
        visibility=visibility,
        aliases=parsed.aliases,
        links=links,
        timeline=parsed.world_timeline,
        markdown=markdown,
        # What only the private view declares is stored marked private: trusted readers only.
        private_links=[
            link for link in resolve_links(ctx, slug, parsed.private_links, private_page=private_page) if link[:3] not in world_keys
        ],
        private_timeline=parsed.private_timeline,
    )


def _undeclared_title(existing: Row | None, slug: str) -> str | None:
    """The title a page keeps when new text declares none: the one its note's file name gave it (a
    title its old text declared, or its slug, goes with that text). The markdown sync tells put_page
    a note's file name; an agent's later write of the same page keeps it."""
    if existing is None or existing["deleted_at"] is not None or not existing["title"] or existing["title"] == slug:
        return None
    try:
        declared = parse_page(existing["markdown"] or "").title
    except PageFormatError:
        return None
    return None if declared is not None else existing["title"]


def get_page(ctx: VerbContext, params: dict) -> dict:
    slug = params["slug"].strip()
    row = ctx.brain.page(ctx.source, slug, allow_private=ctx.pages_private_ok)
    if row is None:
        raise _not_found(slug)
    # The page's private facts-fence rows are its writer's: read through their trusted clients and
    # read:private tokens only (links and timeline rows are filtered by the brain likewise).
    brain, source, trusted = ctx.brain, ctx.source, ctx.private_rows_of(row)
    return {
        "slug": row["slug"],
        "title": row["title"],
        "type": row["type"],
        "visibility": row["visibility"],
        "frontmatter": json.loads(row["frontmatter"]),
        # Private facts-fence rows are for trusted readers only, like every private fact.
        "body": row["body"] if trusted else without_private_rows(row["body"]),
        "aliases": brain.aliases_of(source, slug),
        "links": [
            {"to": r["to_slug"], "type": r["link_type"], "link_source": r["link_source"], "context": r["context"]}
            for r in brain.page_links(source, slug, allow_private=ctx.pages_private_ok, private_rows=trusted)
        ],
        "timeline": [
            {"date": r["date"], "summary": r["summary"], "detail": r["detail"]}
            for r in brain.timeline_newest(source, slug, limit=100, private_rows=trusted)
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
    # Additive: the facts the query finds (world-visible only for untrusted callers), best first.
    body["facts"] = search_facts(ctx, query, _limit(params.get("limit"), 10, 100), now_ms())
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
    entry_id = ctx.brain.add_timeline_entry(
        ctx.source, slug, date, summary, params.get("detail"), now_ms(), allow_private=ctx.caller.trusted
    )
    if entry_id is None:
        raise _no_writable_page(ctx, slug)
    return {"slug": slug, "id": str(entry_id), "date": date, "summary": summary, "protocol_version": PROTOCOL_VERSION}


def whoami(ctx: VerbContext, params: dict) -> dict:
    c = ctx.caller
    person = ctx.person()
    return {
        "source_id": c.source_id,
        "client_id": c.client_id,
        "remote": c.remote,
        "scopes": sorted(c.scopes),
        "surface": ctx.extras.get("surface"),
        # Whose private rows it writes (and, with read:private, reads): the token's person, or the login's.
        "person": (ctx.brain.person_name(person) if person else None) or "nobody",
        "protocol_version": PROTOCOL_VERSION,
    }


def delete_page(ctx: VerbContext, params: dict) -> dict:
    slug = params["slug"].strip()
    deleted = ctx.brain.delete_page(ctx.source, slug, now_ms(), allow_private=ctx.caller.trusted)
    if deleted is None:
        raise _no_writable_page(ctx, slug)
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
    added = ctx.brain.add_link(
        ctx.source, from_slug, to_slug, link_type, link_source, params.get("context"), now_ms(), allow_private=ctx.caller.trusted
    )
    if added is None:
        raise _no_writable_page(ctx, from_slug)
    return {"from": from_slug, "to": to_slug, "link_type": link_type, "added": added, "protocol_version": PROTOCOL_VERSION}


def add_alias(ctx: VerbContext, params: dict) -> dict:
    slug = params["slug"].strip()
    alias = params["alias"].strip()
    norm = normalize_alias(alias)
    if not norm:
        raise invalid("alias must be a non-empty string.", 'Pass the other name, e.g. alias: "Ali".')
    added = ctx.brain.add_alias(ctx.source, slug, alias, norm, now_ms(), allow_private=ctx.caller.trusted)
    if added is None:
        raise _no_writable_page(ctx, slug)
    return {"slug": slug, "alias": alias, "alias_norm": norm, "added": added, "protocol_version": PROTOCOL_VERSION}

"""Entity resolution and the entity card, shared by entity, context_pack and delta.

Resolution precedence is frozen: alias (rank 0) > exact title or slug (rank 1)
> slug suffix (rank 2); ties go to the most recently touched page. Every read
is an index lookup (aliases by normalised form, titles by their key (names.title_key), slug
suffixes through the reversed-slug index), so a card costs the same on a 200K
brain as on an empty one.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memverbs.server.context import VerbContext
from memverbs.server.names import looks_like_slug, normalize_alias, slug_of_name, slugify, title_key
from memverbs.server.record import Record
from memverbs.server.timeparse import iso

TYPE_CHECKING = False  # typing's flag, without importing typing on a hook's start

if TYPE_CHECKING:
    from memverbs.server.brain.base import Row

MAX_RUNNERS_UP = 3
MAX_THREADS = 3
MAX_EDGES = 10
RECENT_EVENT_DAYS = 90
CARD_TIMELINE = 5  # newest timeline entries a card reads (its last date, its recent events)


class Candidate(Record):
    __slots__ = ("page", "rank")
    rank: int
    page: Row

    def __init__(self, rank: int, page: Row) -> None:
        super().__init__(rank=rank, page=page)

    @property
    def touched(self) -> int:
        return max(self.page["updated_at"] or 0, self.page["last_retrieved_at"] or 0)


def find_entity(ctx: VerbContext, name: str, *, allow_private: bool) -> list[Candidate]:
    """Every page `name` can mean, best first (empty on a miss)."""
    brain, source = ctx.brain, ctx.source
    ranks: dict[str, int] = {}
    pages: dict[str, object] = {}

    alias_slugs = brain.alias_slugs(source, normalize_alias(name))
    for slug in alias_slugs:
        ranks[slug] = 0

    key = slugify(name) or name
    for row in brain.pages_titled(source, title_key(name), allow_private=allow_private):
        pages[row["slug"]] = row
        ranks[row["slug"]] = min(ranks.get(row["slug"], 1), 1)
    exact = {slugify(name), name} - {""}
    for slug, row in brain.pages_by_slugs(source, sorted(exact), allow_private=allow_private).items():
        pages[slug] = row
        ranks[slug] = min(ranks.get(slug, 1), 1)
    for row in brain.pages_with_suffix(source, key, allow_private=allow_private):
        pages.setdefault(row["slug"], row)
        ranks[row["slug"]] = min(ranks.get(row["slug"], 2), 2)

    missing = [s for s in alias_slugs if s not in pages]
    pages.update(brain.pages_by_slugs(source, missing, allow_private=allow_private))
    found = [Candidate(ranks[slug], row) for slug, row in pages.items()]
    # Rank first, then most recently touched; slug last so ties are deterministic.
    found.sort(key=lambda c: c.page["slug"])
    found.sort(key=lambda c: (c.rank, -c.touched))
    return found


def resolve_entity_slug(ctx: VerbContext, raw: str | None) -> str | None:
    """The canonical slug remember and recall agree on for an entity string (§4.3); never None for non-empty input."""
    name = (raw or "").strip()
    if not name:
        return None
    brain, source = ctx.brain, ctx.source
    # Resolution sees only pages the caller may see: a private page's slug, title or alias must not
    # come back to an untrusted caller as the canonical slug (that would reveal it exists).
    visible = ctx.pages_private_ok
    if looks_like_slug(name) and brain.pages_by_slugs(source, [name], allow_private=visible):
        return name
    by_alias = brain.pages_by_slugs(source, brain.alias_slugs(source, normalize_alias(name)), allow_private=visible)
    if len(by_alias) == 1:
        return next(iter(by_alias))
    if "/" not in name and len(name.split()) == 1 and "-" not in slugify(name):
        tok = slugify(name)
        if tok:
            found: set[str] = set()
            for folder in ("people", "companies"):
                base = f"{folder}/{tok}"
                found |= set(brain.pages_by_slugs(source, [base], allow_private=visible))
                found |= {r["slug"] for r in brain.pages_with_prefix(source, base + "-", allow_private=visible, limit=2)}
            if len(found) == 1:
                return found.pop()
    # A page's title names it, whatever the title is made of (one word, accents, CJK) and wherever
    # the page lives ("Kubernetes" → tech/k8s), folded alike on both backends (names.title_key).
    titled = brain.pages_titled(source, title_key(name), allow_private=visible)
    if titled:
        return max(titled, key=lambda r: (r["updated_at"], r["slug"]))["slug"]
    return slug_of_name(name) or name


def build_card(ctx: VerbContext, page: Row, *, include_private: bool, allow_private: bool, now: int) -> dict:
    """The entity card. `include_private` widens facts and the page's private facts-fence rows
    (its summary, and the links and timeline rows they declare: trusted-local only); `allow_private`
    says whether private pages may appear as its edges and backlinks."""
    from memverbs.server.pages.synopsis import safe_summary  # noqa: PLC0415 - delta's threads need no synopsis

    brain, source, slug = ctx.brain, ctx.source, page["slug"]
    timeline = brain.timeline_newest(source, slug, limit=CARD_TIMELINE, private_rows=include_private)
    edges = [
        {"type": e["link_type"], "direction": "out", "slug": e["slug"], "context": e["context"] or None}
        for e in brain.edges_out(source, slug, MAX_EDGES, allow_private=allow_private, private_rows=include_private)
    ]
    if len(edges) < MAX_EDGES:
        edges += [
            {"type": e["link_type"], "direction": "in", "slug": e["slug"], "context": e["context"] or None}
            for e in brain.edges_in(
                source, slug, MAX_EDGES - len(edges), allow_private=allow_private, private_rows=include_private
            )
        ]
    return {
        "entity": {"slug": slug, "title": page["title"] or slug, "type": page["type"]},
        "aka": brain.aliases_of(source, slug),
        # The page's own private facts-fence rows are its owner's (the facts and rows above are the brain's to filter).
        "summary": safe_summary(page["body"], page["summary"], include_private=include_private and ctx.private_rows_of(page)),
        "last_touched": {
            "updated_at": iso(page["updated_at"]),
            "last_retrieved_at": iso(page["last_retrieved_at"]),
            "last_timeline_date": timeline[0]["date"] if timeline else None,
        },
        "open_threads": open_threads(ctx, slug, timeline, include_private=include_private, now=now),
        "edges": edges,
        "backlink_count": brain.backlink_count(source, slug, allow_private=allow_private, private_rows=include_private),
        "active_fact_count": brain.active_fact_count(source, slug, world_only=not include_private, now=now),
    }


def card_threads(ctx: VerbContext, slug: str, *, include_private: bool, now: int) -> list[dict]:
    """A card's open_threads, without building the card."""
    timeline = ctx.brain.timeline_newest(ctx.source, slug, limit=CARD_TIMELINE, private_rows=include_private)
    return open_threads(ctx, slug, timeline, include_private=include_private, now=now)


def open_threads(ctx: VerbContext, slug: str, timeline: list[Row], *, include_private: bool, now: int) -> list[dict]:
    threads = [
        {"kind": "commitment", "text": r["fact"], "date": iso(r["valid_from"])}
        for r in ctx.brain.active_commitments(
            ctx.source, slug, world_only=not include_private, now=now, limit=MAX_THREADS
        )
    ]
    horizon = (datetime.fromtimestamp(now / 1000, UTC) - timedelta(days=RECENT_EVENT_DAYS)).strftime("%Y-%m-%d")
    for entry in timeline:
        if len(threads) >= MAX_THREADS:
            break
        if entry["date"] >= horizon:
            threads.append({"kind": "recent_event", "text": entry["summary"], "date": entry["date"]})
    return threads


def near_misses(ctx: VerbContext, name: str, *, allow_private: bool) -> list[dict]:
    from memverbs.server.verbs.search import keyword_search  # noqa: PLC0415 - only an unresolved name searches

    return [
        {"slug": r["slug"], "title": r["title"] or r["slug"], "create_safety": r["create_safety"]}
        for r in keyword_search(ctx, name, MAX_RUNNERS_UP, allow_private=allow_private)
    ]

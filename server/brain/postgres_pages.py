"""Pages, aliases, links and timeline in the Postgres brain (the SQLite store's twin, query for query).

Every read is isolated to one source and takes `allow_private`: untrusted
callers pass False and private pages simply are not there for them. Keyword
search runs on the weighted `search` tsvector (title A, body B).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import nullcontext

from memverbs.server import people
from memverbs.server.brain.base import (
    PAGE_HISTORY_KEEP,
    PageDraft,
    SearchQuery,
    SlugHidden,
    draft_aliases,
    page_owner,
    replaced_text,
)
from memverbs.server.brain.postgres_base import OWNER_SQL, PIPELINE, Conn, PostgresBase, first
from memverbs.server.brain.postgres_rows import Row
from memverbs.server.brain.postgres_search import RANK_WEIGHTS, snippet, tsquery
from memverbs.server.brain.sqlite_pages import _prefix_upper, reverse
from memverbs.server.names import title_key
from memverbs.server.terms import around, spaceless

# A page a caller may see: not deleted, and world-visible unless the one parameter allows private pages.
LIVE_PAGE = "deleted_at IS NULL AND (%s OR visibility = 'world')"
_PAGE_COLS = "slug, title, type, summary, body, visibility, updated_at, last_retrieved_at, owner"


class PageStore(PostgresBase):
    # -- single pages --------------------------------------------------------

    def page(self, source: str, slug: str, *, allow_private: bool = True) -> Row | None:
        return self.one(
            f"SELECT id, {_PAGE_COLS}, frontmatter, markdown, created_at FROM pages WHERE source_id = %s AND slug = %s AND {LIVE_PAGE}",
            (source, slug, allow_private),
        )

    # The page's history (any state: a deleted page's history is how it is brought back).
    def page_versions(self, source: str, slug: str) -> list[Row]:
        return self.query(
            "SELECT v.version, v.title, v.visibility, OCTET_LENGTH(v.markdown) AS bytes, v.written_at, v.replaced_at, v.replaced_by "
            "FROM page_versions v JOIN pages p ON p.id = v.page_id WHERE p.source_id = %s AND p.slug = %s ORDER BY v.version DESC",
            (source, slug),
        )

    def page_version(self, source: str, slug: str, version: int) -> Row | None:
        return self.one(
            "SELECT v.version, v.title, v.visibility, v.markdown, v.written_at, v.replaced_at, v.replaced_by "
            "FROM page_versions v JOIN pages p ON p.id = v.page_id WHERE p.source_id = %s AND p.slug = %s AND v.version = %s",
            (source, slug, version),
        )

    def pages_by_slugs(self, source: str, slugs: list[str], *, allow_private: bool) -> dict:
        slugs = list(slugs)
        if not slugs:
            return {}
        if len(slugs) == 1:
            # The common case (entity resolution probes one slug): `slug = ANY(array)` costs the
            # server about twice a plain equality on the same index, and the client an array dump.
            rows = self.query(
                f"SELECT {_PAGE_COLS} FROM pages WHERE source_id = %s AND slug = %s AND {LIVE_PAGE}",
                (source, slugs[0], allow_private),
            )
        else:
            rows = self.query(
                f"SELECT {_PAGE_COLS} FROM pages WHERE source_id = %s AND slug = ANY(%s) AND {LIVE_PAGE}",
                (source, slugs, allow_private),
            )
        return {r["slug"]: r for r in rows}

    # -- entity resolution ---------------------------------------------------

    def alias_slugs(self, source: str, alias_norm: str) -> list[str]:
        rows = self.query("SELECT DISTINCT slug FROM aliases WHERE source_id = %s AND alias_norm = %s", (source, alias_norm))
        return [r[0] for r in rows]

    def pages_titled(self, source: str, key: str, *, allow_private: bool) -> list:
        return self.query(
            f"SELECT {_PAGE_COLS} FROM pages WHERE source_id = %s AND title_key = %s AND {LIVE_PAGE}",
            (source, key, allow_private),
        )

    def pages_with_suffix(self, source: str, tail: str, *, allow_private: bool, limit: int = 50) -> list:
        lo = reverse("/" + tail)
        return self.query(
            f"SELECT {_PAGE_COLS} FROM pages WHERE source_id = %s AND slug_rev >= %s AND slug_rev < %s AND {LIVE_PAGE} LIMIT %s",
            (source, lo, _prefix_upper(lo), allow_private, limit),
        )

    def pages_with_prefix(self, source: str, prefix: str, *, allow_private: bool, limit: int = 50) -> list:
        return self.query(
            f"SELECT {_PAGE_COLS} FROM pages WHERE source_id = %s AND slug >= %s AND slug < %s AND {LIVE_PAGE} LIMIT %s",
            (source, prefix, _prefix_upper(prefix), allow_private, limit),
        )

    # -- card parts ----------------------------------------------------------

    def aliases_of(self, source: str, slug: str) -> list[str]:
        rows = self.query(
            "SELECT DISTINCT alias_norm FROM aliases WHERE source_id = %s AND slug = %s ORDER BY alias_norm", (source, slug)
        )
        return [r[0] for r in rows]

    def timeline_newest(self, source: str, slug: str, limit: int = 5, *, private_rows: bool) -> list:
        return self.query(
            "SELECT date, summary, detail FROM timeline WHERE source_id = %s AND slug = %s AND (%s OR private_row = 0) "
            "ORDER BY date DESC, id DESC LIMIT %s",
            (source, slug, private_rows, limit),
        )

    # Edges and backlinks count only pages the caller may see (see the SQLite store).
    _VISIBLE_FROM = (
        "JOIN pages f ON f.source_id = l.source_id AND f.slug = l.from_slug AND f.deleted_at IS NULL "
        "AND (%s OR f.visibility = 'world')"
    )
    _VISIBLE_TO = (
        "LEFT JOIN pages t ON t.source_id = l.source_id AND t.slug = l.to_slug "
        "WHERE (t.id IS NULL OR (t.deleted_at IS NULL AND (%s OR t.visibility = 'world')))"
    )

    def edges_out(self, source: str, slug: str, limit: int, *, allow_private: bool, private_rows: bool) -> list:
        return self.query(
            f"SELECT l.link_type, l.to_slug AS slug, l.context FROM links l {self._VISIBLE_TO} "
            "AND l.source_id = %s AND l.from_slug = %s AND l.link_source IS DISTINCT FROM 'mentions' "
            "AND (%s OR l.private_row = 0) ORDER BY l.id LIMIT %s",
            (allow_private, source, slug, private_rows, limit),
        )

    def edges_in(self, source: str, slug: str, limit: int, *, allow_private: bool, private_rows: bool) -> list:
        return self.query(
            f"SELECT l.link_type, l.from_slug AS slug, l.context FROM links l {self._VISIBLE_FROM} "
            "WHERE l.source_id = %s AND l.to_slug = %s AND l.link_source IS DISTINCT FROM 'mentions' "
            "AND (%s OR l.private_row = 0) ORDER BY l.id LIMIT %s",
            (allow_private, source, slug, private_rows, limit),
        )

    def backlink_count(self, source: str, slug: str, *, allow_private: bool, private_rows: bool) -> int:
        return self.aggregate(
            f"SELECT count(*) FROM links l {self._VISIBLE_FROM} "
            "WHERE l.source_id = %s AND l.to_slug = %s AND l.link_source IS DISTINCT FROM 'mentions' "
            "AND (%s OR l.private_row = 0)",
            (allow_private, source, slug, private_rows),
        )[0]

    # -- lists and search ----------------------------------------------------

    def list_pages(self, source: str, *, type_: str | None, prefix: str | None, limit: int, allow_private: bool) -> list[Row]:
        sql = f"SELECT {_PAGE_COLS} FROM pages WHERE source_id = %s AND {LIVE_PAGE}"
        args: list = [source, allow_private]
        if type_:
            sql += " AND type = %s"
            args.append(type_)
        if prefix:
            sql += " AND slug >= %s AND slug < %s"
            args += [prefix, _prefix_upper(prefix)]
        sql += " ORDER BY updated_at DESC, slug LIMIT %s"
        args.append(limit)
        return self.query(sql, tuple(args))

    def count_pages(self, source: str, *, type_: str | None, prefix: str | None, allow_private: bool,
                    visibility: str | None = None, updated_since: int | None = None) -> int:
        """How many live pages list_pages would list with no limit (the CLI's "50 of 158")."""
        sql = f"SELECT count(*) AS n FROM pages WHERE source_id = %s AND {LIVE_PAGE}"
        args: list = [source, allow_private]
        for clause, value in (("type = %s", type_), ("visibility = %s", visibility), ("updated_at >= %s", updated_since)):
            if value is not None and value != "":
                sql += " AND " + clause
                args.append(value)
        if prefix:
            sql += " AND slug >= %s AND slug < %s"
            args += [prefix, _prefix_upper(prefix)]
        row = self.one(sql, tuple(args))
        return int(row["n"]) if row is not None else 0

    def keyword_search(self, source: str, query: SearchQuery, *, limit: int, allow_private: bool,
                       snippets: bool = True) -> list:
        """Pages matching the query, best first (title weighs ten times the body, as bm25(10, 1) does)."""
        if any(spaceless(t) for t in query.terms):
            return self._substring_search(source, query, limit=limit, allow_private=allow_private)
        q = tsquery(query)
        if q is None:
            return []
        # Rank normalisation 1 (÷ 1 + log length) stands in for bm25's preference for shorter pages.
        rows = self.query(
            "SELECT p.slug, p.title, p.body, ts_rank(%s::real[], p.search, q, 1) AS rank, p.owner "
            "FROM pages p, to_tsquery('simple', %s) q WHERE p.search @@ q AND p.source_id = %s AND p.deleted_at IS NULL "
            "AND (%s OR p.visibility = 'world') ORDER BY rank DESC, p.id LIMIT %s",
            (RANK_WEIGHTS, q, source, allow_private, limit),
        )
        # The snippet as FTS5's snippet(…, 48) cuts it: the body window with the most query terms.
        index = {"slug": 0, "title": 1, "body": 2, "chunk": 3, "rank": 4, "owner": 5}
        return [Row((r[0], r[1], r[2], snippet(r[2], query.terms) if snippets else None, r[3], r[4]), index) for r in rows]

    def _substring_search(self, source: str, query: SearchQuery, *, limit: int, allow_private: bool) -> list:
        """The SQLite store's substring search (a word of a script written without spaces), as a scan of the source's pages."""
        terms = [" ".join(query.terms)] if query.mode == "title_phrase" else list(query.terms)
        in_title = "strpos(lower(coalesce(p.title, '')), %s) > 0"
        anywhere = f"({in_title} OR strpos(lower(p.body), %s) > 0)"
        conds, args = [], []
        for t in terms:
            conds.append(in_title if query.mode == "title_phrase" else anywhere)
            args += [t] if query.mode == "title_phrase" else [t, t]
        rank = " + ".join(f"({in_title})::int" for _ in terms)
        rows = self.query(
            f"SELECT p.slug, p.title, p.body, {rank} AS rank, p.owner FROM pages p "
            f"WHERE ({(' OR ' if query.mode == 'any' else ' AND ').join(conds)}) AND p.source_id = %s AND p.deleted_at IS NULL "
            "AND (%s OR p.visibility = 'world') ORDER BY rank DESC, p.updated_at DESC, p.slug LIMIT %s",
            (*terms, *args, source, allow_private, limit),
        )
        index = {"slug": 0, "title": 1, "body": 2, "chunk": 3, "rank": 4, "owner": 5}
        return [Row((r[0], r[1], r[2], around(r[2] or "", terms), r[3], r[4]), index) for r in rows]

    def aliased_slugs(self, source: str, slugs: list[str], alias_norm: str) -> set[str]:
        if not slugs:
            return set()
        rows = self.query(
            "SELECT slug FROM aliases WHERE source_id = %s AND alias_norm = %s AND slug = ANY(%s)",
            (source, alias_norm, list(slugs)),
        )
        return {r[0] for r in rows}

    def changed_pages(self, source: str, since: int, since_slug: str | None, *, limit: int, allow_private: bool) -> list[Row]:
        """Pages changed after the keyset cursor (updated_at, slug), oldest first."""
        args: tuple[object, ...]
        if since_slug is None:
            where, args = "updated_at > %s", (since,)
        else:
            where, args = "(updated_at > %s OR (updated_at = %s AND slug > %s))", (since, since, since_slug)
        return self.query(
            f"SELECT slug, source_id, title, updated_at FROM pages WHERE source_id = %s AND {where} AND {LIVE_PAGE} "
            "ORDER BY updated_at, slug LIMIT %s",
            (source, *args, allow_private, limit),
        )

    # -- writes --------------------------------------------------------------

    def save_page(self, source: str, slug: str, build: Callable[[Row | None], PageDraft], now: int,
                  *, by: str = "local") -> tuple[bool, PageDraft]:
        """Create or replace a page; True when created (or revived).

        `build` gets the slug's current row (live, deleted or private alike; None if there is
        none) under the write lock and returns the draft to save, or raises to refuse (the
        transaction is rolled back): who may replace what is decided on the row that will
        actually be replaced. A text it replaces goes to the page's history, marked replaced
        by `by`, in the same transaction.
        """
        with self.write() as db:
            existing = db.execute(
                "SELECT id, visibility, body, deleted_at, markdown, title, updated_at, owner FROM pages WHERE source_id = %s AND slug = %s",
                (source, slug),
            ).fetchone()
            draft = build(existing)
            kept = replaced_text(existing, draft)
            owner = page_owner(existing, draft, people.current().person)  # None: the session's person
            values = (
                draft.title,
                draft.type,
                draft.body,
                json.dumps(draft.frontmatter, default=str),
                draft.summary,
                draft.visibility,
                draft.markdown,
                now,
                title_key(draft.title) if draft.title is not None else None,
                owner,
            )
            # Nothing below is read back but the new page's id: the statements travel as one batch
            # (two for a new page), so the write lock is held for a round trip or two here rather
            # than one per statement.
            with db.pipeline() if PIPELINE else nullcontext():
                if existing is None:
                    # A slug no row answered for may be another person's private page, which this
                    # session cannot see: then nothing is inserted, and the write is refused as a
                    # private page is to anyone who may not change it (SlugHidden).
                    inserted = db.execute(
                        "INSERT INTO pages (source_id, slug, slug_rev, title, type, body, frontmatter, summary, visibility, "
                        f"markdown, updated_at, title_key, owner, created_at, origin) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, "
                        f"{OWNER_SQL}, %s, %s) ON CONFLICT (source_id, slug) DO NOTHING RETURNING id",
                        (source, draft.slug, reverse(draft.slug), *values, now, by),
                    ).fetchone()
                    if inserted is None:
                        raise SlugHidden(slug)
                    page_id = inserted[0]
                else:
                    page_id = existing["id"]
                    if kept is not None:
                        db.execute(
                            "INSERT INTO page_versions (page_id, version, markdown, title, visibility, written_at, replaced_at, replaced_by, owner) "
                            "VALUES (%s, COALESCE((SELECT MAX(version) FROM page_versions WHERE page_id = %s), 0) + 1, "
                            "%s, %s, %s, %s, %s, %s, %s)",
                            (page_id, page_id, kept, existing["title"], existing["visibility"], existing["updated_at"], now, by,
                             existing["owner"]),
                        )
                        db.execute(
                            "DELETE FROM page_versions WHERE page_id = %s AND version <= "
                            "(SELECT MAX(version) FROM page_versions WHERE page_id = %s) - %s",
                            (page_id, page_id, PAGE_HISTORY_KEEP),
                        )
                    db.execute(
                        "UPDATE pages SET title = %s, type = %s, body = %s, frontmatter = %s, summary = %s, visibility = %s, "
                        f"markdown = %s, updated_at = %s, title_key = %s, owner = {OWNER_SQL}, deleted_at = NULL, origin = %s "
                        "WHERE id = %s",
                        (*values, by, page_id),
                    )
                self._write_chunks(db, source, page_id, draft.title, draft.body)
                # What the markdown declares is replaced; what was added by hand is kept.
                db.execute(
                    "DELETE FROM aliases WHERE source_id = %s AND slug = %s AND origin = 'frontmatter'", (source, draft.slug)
                )
                for alias, norm in draft_aliases(draft):
                    db.execute(
                        "INSERT INTO aliases (source_id, slug, alias, alias_norm, origin) VALUES (%s, %s, %s, %s, 'frontmatter') "
                        "ON CONFLICT DO NOTHING",
                        (source, draft.slug, alias, norm),
                    )
                db.execute(
                    "DELETE FROM links WHERE source_id = %s AND from_slug = %s AND link_source IN ('markdown', 'frontmatter')",
                    (source, draft.slug),
                )
                links, timeline = draft.rows()
                for (to_slug, link_type, link_source, context), private in links:
                    db.execute(
                        "INSERT INTO links (source_id, from_slug, to_slug, link_type, link_source, context, created_at, private_row, owner) "
                        f"VALUES (%s, %s, %s, %s, %s, %s, %s, %s, {OWNER_SQL}) ON CONFLICT DO NOTHING",
                        (source, draft.slug, to_slug, link_type, link_source, context, now, private, owner),
                    )
                db.execute(
                    "DELETE FROM timeline WHERE source_id = %s AND slug = %s AND origin = 'markdown'", (source, draft.slug)
                )
                for (date, summary, detail), private in timeline:
                    # A row added by hand that the markdown now declares (write-back put it there) is the
                    # markdown's from here on: kept twice, the timeline would list it twice.
                    db.execute(
                        "DELETE FROM timeline WHERE source_id = %s AND slug = %s AND origin = 'manual' AND date = %s AND summary = %s",
                        (source, draft.slug, date, summary),
                    )
                    db.execute(
                        "INSERT INTO timeline (source_id, slug, date, summary, detail, origin, created_at, private_row, owner) "
                        f"VALUES (%s, %s, %s, %s, %s, 'markdown', %s, %s, {OWNER_SQL})",
                        (source, draft.slug, date, summary, detail, now, private, owner),
                    )
        return existing is None or existing["deleted_at"] is not None, draft

    # The writes below change a live page the caller may see, checked in the write's own
    # transaction (under the write lock); they answer None when there is no such page (missing,
    # deleted or, for an untrusted caller, private), so a caller cannot tell those apart.

    def _writable(self, db: Conn, source: str, slug: str, allow_private: bool) -> bool:
        row = db.execute(
            f"SELECT 1 FROM pages WHERE source_id = %s AND slug = %s AND {LIVE_PAGE}", (source, slug, allow_private)
        ).fetchone()
        return row is not None

    def delete_page(self, source: str, slug: str, now: int, *, allow_private: bool) -> bool | None:
        with self.write() as db:
            cur = db.execute(
                f"UPDATE pages SET deleted_at = %s, updated_at = %s WHERE source_id = %s AND slug = %s AND {LIVE_PAGE}",
                (now, now, source, slug, allow_private),
            )
            if cur.rowcount == 0:
                return None
            db.execute(
                "DELETE FROM chunks WHERE page_id = (SELECT id FROM pages WHERE source_id = %s AND slug = %s)", (source, slug)
            )
            return True

    def add_alias(self, source: str, slug: str, alias: str, alias_norm: str, now: int, *, allow_private: bool) -> bool | None:
        with self.write() as db:
            if not self._writable(db, source, slug, allow_private):
                return None
            cur = db.execute(
                "INSERT INTO aliases (source_id, slug, alias, alias_norm, origin) VALUES (%s, %s, %s, %s, 'manual') "
                "ON CONFLICT DO NOTHING",
                (source, slug, alias, alias_norm),
            )
            if cur.rowcount == 0:
                return False
            # The page's file-relevant state changed (write-back renders it into the note's aliases):
            # stamped like add_timeline_entry, so a synced folder gets it without waiting for a page write.
            db.execute("UPDATE pages SET updated_at = %s WHERE source_id = %s AND slug = %s", (now, source, slug))
            return True

    def add_link(
        self, source: str, from_slug: str, to_slug: str, link_type: str, link_source: str, context: str | None, now: int, *, allow_private: bool
    ) -> bool | None:
        """A link belongs to its `from` page, so only that page must be writable."""
        with self.write() as db:
            if not self._writable(db, source, from_slug, allow_private):
                return None
            cur = db.execute(
                "INSERT INTO links (source_id, from_slug, to_slug, link_type, link_source, context, created_at) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                (source, from_slug, to_slug, link_type, link_source, context, now),
            )
            if cur.rowcount == 0:
                return False
            db.execute("UPDATE pages SET updated_at = %s WHERE source_id = %s AND slug = %s", (now, source, from_slug))
            return True

    def add_timeline_entry(
        self, source: str, slug: str, date: str, summary: str, detail: str | None, now: int, *, allow_private: bool
    ) -> int | None:
        with self.write() as db:
            if not self._writable(db, source, slug, allow_private):
                return None
            entry_id = first(db.execute(
                "INSERT INTO timeline (source_id, slug, date, summary, detail, origin, created_at) "
                "VALUES (%s, %s, %s, %s, %s, 'manual', %s) RETURNING id",
                (source, slug, date, summary, detail, now),
            ))[0]
            db.execute("UPDATE pages SET updated_at = %s WHERE source_id = %s AND slug = %s", (now, source, slug))
            return entry_id

    def touch_retrieved(self, source: str, slugs: list[str], now: int) -> None:
        if not slugs:
            return
        with self.write() as db:
            db.execute(
                "UPDATE pages SET last_retrieved_at = %s WHERE source_id = %s AND slug = ANY(%s)", (now, source, list(slugs))
            )

    def adopt_links(self, source: str, slug: str, names: list[str], *, from_private_only: bool = False) -> int:
        """Point body links whose target is one of `names` and names no live page at `slug` (see the
        SQLite store). A link that would duplicate one the page already has is dropped instead, one
        row at a time: SQLite's UPDATE OR IGNORE, which Postgres has no statement for."""
        if not names:
            return 0
        dangling = (
            "l.source_id = %s AND l.to_slug = ANY(%s) AND l.link_source = 'markdown' AND l.from_slug != %s "
            "AND NOT EXISTS (SELECT 1 FROM pages p WHERE p.source_id = l.source_id AND p.slug = l.to_slug "
            "AND p.deleted_at IS NULL)"
        )
        if from_private_only:
            dangling += (
                " AND EXISTS (SELECT 1 FROM pages f WHERE f.source_id = l.source_id AND f.slug = l.from_slug "
                "AND f.visibility = 'private')"
            )
        args = (source, list(names), slug)
        if self.one(f"SELECT 1 FROM links l WHERE {dangling} LIMIT 1", args) is None:
            return 0  # the common case: nothing waits for this page, and no write transaction is spent
        moved = 0
        with self.write() as db:
            rows = db.execute(f"SELECT l.id, l.from_slug, l.link_type FROM links l WHERE {dangling} ORDER BY l.id", args).fetchall()
            for r in rows:
                taken = db.execute(
                    "SELECT 1 FROM links WHERE source_id = %s AND from_slug = %s AND to_slug = %s AND link_type = %s "
                    "AND link_source = 'markdown'",
                    (source, r["from_slug"], slug, r["link_type"]),
                ).fetchone()
                if taken is None:
                    db.execute("UPDATE links SET to_slug = %s WHERE id = %s", (slug, r["id"]))
                    moved += 1
                else:  # the page already links here both ways: drop the now-duplicate dangling row
                    db.execute("DELETE FROM links WHERE id = %s", (r["id"],))
        return moved

    def rename_page(self, source: str, old: str, new: str, now: int, *, title: tuple[str, str] | None = None) -> None:
        """Move a page to a new slug with everything that hangs off it: aliases, links, timeline, facts.
        `title` (was, becomes): a title that is `was` (it came from the old file name) becomes `becomes`."""
        with self.write() as db:
            # A soft-deleted page at the new slug gives way (its row only, never a live page: callers check).
            gone = db.execute(
                "SELECT id FROM pages WHERE source_id = %s AND slug = %s AND deleted_at IS NOT NULL", (source, new)
            ).fetchone()
            if gone is not None:
                db.execute("DELETE FROM chunks WHERE page_id = %s", (gone["id"],))
                db.execute("DELETE FROM page_versions WHERE page_id = %s", (gone["id"],))
                db.execute("DELETE FROM pages WHERE id = %s", (gone["id"],))
            # The rows that hang off the page by its slug are taken up while the page is still at the old
            # slug and put down once it is at the new one: row-level security shows (and lets an update
            # write) a page's rows only with their page, so they cannot be updated across the move.
            # SQLite's UPDATE OR IGNORE: rows the new slug already has stay, the old slug's copies go.
            aliases = db.execute(
                "DELETE FROM aliases WHERE source_id = %s AND slug = %s RETURNING id, alias, alias_norm, origin", (source, old)
            ).fetchall()
            links = db.execute(
                "DELETE FROM links WHERE source_id = %s AND from_slug = %s "
                "RETURNING id, to_slug, link_type, link_source, context, created_at, private_row, owner",
                (source, old),
            ).fetchall()
            timeline = db.execute(
                "DELETE FROM timeline WHERE source_id = %s AND slug = %s "
                "RETURNING id, date, summary, detail, origin, created_at, private_row, owner",
                (source, old),
            ).fetchall()
            db.execute(
                "UPDATE pages SET slug = %s, slug_rev = %s, updated_at = %s WHERE source_id = %s AND slug = %s",
                (new, reverse(new), now, source, old),
            )
            if title is not None:
                db.execute(
                    "UPDATE pages SET title = %s, title_key = %s WHERE source_id = %s AND slug = %s AND title = %s",
                    (title[1], title_key(title[1]), source, new, title[0]),
                )
            with db.cursor() as cur:
                cur.executemany(
                    "INSERT INTO aliases (source_id, slug, alias, alias_norm, origin) VALUES (%s, %s, %s, %s, %s) "
                    "ON CONFLICT DO NOTHING",
                    [(source, new, r["alias"], r["alias_norm"], r["origin"]) for r in sorted(aliases, key=lambda r: r["id"])],
                )
                cur.executemany(
                    "INSERT INTO links (source_id, from_slug, to_slug, link_type, link_source, context, created_at, private_row, owner) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                    [(source, new, r["to_slug"], r["link_type"], r["link_source"], r["context"], r["created_at"],
                      r["private_row"], r["owner"]) for r in sorted(links, key=lambda r: r["id"])],
                )
                cur.executemany(
                    "INSERT INTO timeline (source_id, slug, date, summary, detail, origin, created_at, private_row, owner) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                    [(source, new, r["date"], r["summary"], r["detail"], r["origin"], r["created_at"], r["private_row"],
                      r["owner"]) for r in sorted(timeline, key=lambda r: r["id"])],
                )
            db.execute(
                "UPDATE links a SET to_slug = %s WHERE a.source_id = %s AND a.to_slug = %s AND NOT EXISTS "
                "(SELECT 1 FROM links b WHERE b.source_id = a.source_id AND b.to_slug = %s AND b.from_slug = a.from_slug "
                "AND b.link_type = a.link_type AND b.link_source IS NOT DISTINCT FROM a.link_source)",
                (new, source, old, new),
            )
            db.execute("DELETE FROM links WHERE source_id = %s AND to_slug = %s", (source, old))
            db.execute("UPDATE facts SET entity_slug = %s WHERE source_id = %s AND entity_slug = %s", (new, source, old))

    def page_links(self, source: str, slug: str, *, allow_private: bool, private_rows: bool) -> list:
        return self.query(
            f"SELECT l.to_slug, l.link_type, l.link_source, l.context FROM links l {self._VISIBLE_TO} "
            "AND l.source_id = %s AND l.from_slug = %s AND (%s OR l.private_row = 0) ORDER BY l.id",
            (allow_private, source, slug, private_rows),
        )

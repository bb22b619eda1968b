"""Pages, aliases, links and timeline in the SQLite brain.

Every read is isolated to one source and takes `allow_private`: untrusted
callers pass False and private pages simply are not there for them.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable

from memverbs.server import people
from memverbs.server.brain.base import (
    PAGE_HISTORY_KEEP,
    PageDraft,
    Row,
    SearchQuery,
    draft_aliases,
    page_owner,
    replaced_text,
)
from memverbs.server.brain.sqlite_base import SqliteBase
from memverbs.server.brain.sqlite_fts import fts5_match
from memverbs.server.names import title_key
from memverbs.server.terms import around, spaceless

# A page a caller may see: not deleted, and world-visible unless the one parameter allows private pages.
LIVE_PAGE = "deleted_at IS NULL AND (? OR visibility = 'world')"
_PAGE_COLS = "slug, title, type, summary, body, visibility, updated_at, last_retrieved_at, owner"


def reverse(slug: str) -> str:
    return slug[::-1]


def _prefix_upper(prefix: str) -> str:
    """The smallest string greater than every string starting with `prefix`."""
    return prefix[:-1] + chr(ord(prefix[-1]) + 1)


class _SubstringHit(dict):
    """A substring hit as keyword_search's rows read (slug, title, body, chunk), by name."""

    def __init__(self, row: sqlite3.Row, chunk: str) -> None:
        super().__init__(slug=row["slug"], title=row["title"], body=row["body"], chunk=chunk, rank=row["rank"], owner=row["owner"])


class PageStore(SqliteBase):
    # -- single pages --------------------------------------------------------

    def page(self, source: str, slug: str, *, allow_private: bool = True) -> sqlite3.Row | None:
        return self.one(
            f"SELECT id, {_PAGE_COLS}, frontmatter, markdown, created_at FROM pages WHERE source_id = ? AND slug = ? AND {LIVE_PAGE}",
            (source, slug, allow_private),
        )

    # The page's history (any state: a deleted page's history is how it is brought back).
    def page_versions(self, source: str, slug: str) -> list[sqlite3.Row]:
        return self.query(
            "SELECT v.version, v.title, v.visibility, LENGTH(CAST(v.markdown AS BLOB)) AS bytes, v.written_at, v.replaced_at, v.replaced_by "
            "FROM page_versions v JOIN pages p ON p.id = v.page_id WHERE p.source_id = ? AND p.slug = ? ORDER BY v.version DESC",
            (source, slug),
        )

    def page_version(self, source: str, slug: str, version: int) -> sqlite3.Row | None:
        return self.one(
            "SELECT v.version, v.title, v.visibility, v.markdown, v.written_at, v.replaced_at, v.replaced_by "
            "FROM page_versions v JOIN pages p ON p.id = v.page_id WHERE p.source_id = ? AND p.slug = ? AND v.version = ?",
            (source, slug, version),
        )

    def pages_by_slugs(self, source: str, slugs: list[str], *, allow_private: bool) -> dict[str, sqlite3.Row]:
        if not slugs:
            return {}
        marks = ",".join("?" * len(slugs))
        rows = self.query(
            f"SELECT {_PAGE_COLS} FROM pages WHERE source_id = ? AND slug IN ({marks}) AND {LIVE_PAGE}",
            (source, *slugs, allow_private),
        )
        return {r["slug"]: r for r in rows}

    # -- entity resolution ---------------------------------------------------

    def alias_slugs(self, source: str, alias_norm: str) -> list[str]:
        # Pinned: on a brain without statistics SQLite may prefer the (source_id, slug, alias_norm)
        # key and scan every alias of the source; aliases_lookup makes it one index range.
        rows = self.query(
            "SELECT DISTINCT slug FROM aliases INDEXED BY aliases_lookup WHERE source_id = ? AND alias_norm = ?", (source, alias_norm)
        )
        return [r[0] for r in rows]

    def pages_titled(self, source: str, key: str, *, allow_private: bool) -> list[sqlite3.Row]:
        return self.query(
            f"SELECT {_PAGE_COLS} FROM pages WHERE source_id = ? AND title_key = ? AND {LIVE_PAGE}",
            (source, key, allow_private),
        )

    def pages_with_suffix(self, source: str, tail: str, *, allow_private: bool, limit: int = 50) -> list[sqlite3.Row]:
        """Live pages whose slug ends with '/<tail>', through the reversed-slug index."""
        lo = reverse("/" + tail)
        return self.query(
            f"SELECT {_PAGE_COLS} FROM pages WHERE source_id = ? AND slug_rev >= ? AND slug_rev < ? AND {LIVE_PAGE} LIMIT ?",
            (source, lo, _prefix_upper(lo), allow_private, limit),
        )

    def pages_with_prefix(self, source: str, prefix: str, *, allow_private: bool, limit: int = 50) -> list[sqlite3.Row]:
        return self.query(
            f"SELECT {_PAGE_COLS} FROM pages WHERE source_id = ? AND slug >= ? AND slug < ? AND {LIVE_PAGE} LIMIT ?",
            (source, prefix, _prefix_upper(prefix), allow_private, limit),
        )

    # -- card parts ----------------------------------------------------------

    def aliases_of(self, source: str, slug: str) -> list[str]:
        rows = self.query(
            "SELECT DISTINCT alias_norm FROM aliases WHERE source_id = ? AND slug = ? ORDER BY alias_norm", (source, slug)
        )
        return [r[0] for r in rows]

    def timeline_newest(self, source: str, slug: str, limit: int = 5, *, private_rows: bool) -> list[sqlite3.Row]:
        return self.query(
            "SELECT date, summary, detail FROM timeline WHERE source_id = ? AND slug = ? AND (? OR private_row = 0) "
            "ORDER BY date DESC, id DESC LIMIT ?",
            (source, slug, private_rows, limit),
        )

    # Edges and backlinks count only pages the caller may see: a link from a private or deleted
    # page must not reveal that page (its slug, or even that it exists).
    _VISIBLE_FROM = "JOIN pages f ON f.source_id = l.source_id AND f.slug = l.from_slug AND f.deleted_at IS NULL AND (? OR f.visibility = 'world')"
    # An out-edge may point at a slug with no page yet (that is fine to show), never at a hidden one.
    _VISIBLE_TO = (
        "LEFT JOIN pages t ON t.source_id = l.source_id AND t.slug = l.to_slug "
        "WHERE (t.id IS NULL OR (t.deleted_at IS NULL AND (? OR t.visibility = 'world')))"
    )

    def edges_out(self, source: str, slug: str, limit: int, *, allow_private: bool, private_rows: bool) -> list[sqlite3.Row]:
        return self.query(
            f"SELECT l.link_type, l.to_slug AS slug, l.context FROM links l {self._VISIBLE_TO} "
            "AND l.source_id = ? AND l.from_slug = ? AND l.link_source IS NOT 'mentions' AND (? OR l.private_row = 0) "
            "ORDER BY l.id LIMIT ?",
            (allow_private, source, slug, private_rows, limit),
        )

    def edges_in(self, source: str, slug: str, limit: int, *, allow_private: bool, private_rows: bool) -> list[sqlite3.Row]:
        return self.query(
            f"SELECT l.link_type, l.from_slug AS slug, l.context FROM links l {self._VISIBLE_FROM} "
            "WHERE l.source_id = ? AND l.to_slug = ? AND l.link_source IS NOT 'mentions' AND (? OR l.private_row = 0) "
            "ORDER BY l.id LIMIT ?",
            (allow_private, source, slug, private_rows, limit),
        )

    def backlink_count(self, source: str, slug: str, *, allow_private: bool, private_rows: bool) -> int:
        return self.aggregate(
            f"SELECT count(*) FROM links l {self._VISIBLE_FROM} "
            "WHERE l.source_id = ? AND l.to_slug = ? AND l.link_source IS NOT 'mentions' AND (? OR l.private_row = 0)",
            (allow_private, source, slug, private_rows),
        )[0]

    # -- lists and search ----------------------------------------------------

    def list_pages(self, source: str, *, type_: str | None, prefix: str | None, limit: int, allow_private: bool) -> list[sqlite3.Row]:
        sql = f"SELECT {_PAGE_COLS} FROM pages WHERE source_id = ? AND {LIVE_PAGE}"
        args: list = [source, allow_private]
        if type_:
            sql += " AND type = ?"
            args.append(type_)
        if prefix:
            sql += " AND slug >= ? AND slug < ?"
            args += [prefix, _prefix_upper(prefix)]
        sql += " ORDER BY updated_at DESC, slug LIMIT ?"
        args.append(limit)
        return self.query(sql, tuple(args))

    def count_pages(self, source: str, *, type_: str | None, prefix: str | None, allow_private: bool,
                    visibility: str | None = None, updated_since: int | None = None) -> int:
        """How many live pages list_pages would list with no limit (the CLI's "50 of 158")."""
        sql = f"SELECT count(*) AS n FROM pages WHERE source_id = ? AND {LIVE_PAGE}"
        args: list = [source, allow_private]
        for clause, value in (("type = ?", type_), ("visibility = ?", visibility), ("updated_at >= ?", updated_since)):
            if value is not None and value != "":
                sql += " AND " + clause
                args.append(value)
        if prefix:
            sql += " AND slug >= ? AND slug < ?"
            args += [prefix, _prefix_upper(prefix)]
        row = self.one(sql, tuple(args))
        return int(row["n"]) if row is not None else 0

    def keyword_search(self, source: str, query: SearchQuery, *, limit: int, allow_private: bool,
                       snippets: bool = True) -> list[Row]:
        """Pages matching the query, best first (title weighs more than body)."""
        if any(spaceless(t) for t in query.terms):
            return self._substring_search(source, query, limit=limit, allow_private=allow_private)
        match = fts5_match(query)
        if not snippets:
            # Rank in the index alone and read only the best pages' rows: joining first reads every
            # matching page's row (its body, through overflow pages) before the sort and LIMIT. Most
            # of the best matches pass the filter (one source, live, world). The index's matches that
            # do not pass come after those that do, as empty rows, so the answer also says when the
            # index matched fewer than it was asked for (`matched`, none at all when no row comes
            # back): then it ranked them all and the answer is whole; when it matched more and too
            # few pass, the whole ranking below decides. Ties go by id, so both forms agree.
            rows = self.query(
                "SELECT p.slug, p.title, p.body, NULL AS chunk, hits.rank AS rank, p.owner, hits.matched AS matched FROM "
                "(SELECT rowid, rank, count(*) OVER () AS matched FROM (SELECT rowid, bm25(pages_fts, 10.0, 1.0) AS rank "
                "FROM pages_fts WHERE pages_fts MATCH ? ORDER BY rank, rowid LIMIT ?)) hits LEFT JOIN pages p "
                "ON p.id = hits.rowid AND p.source_id = ? AND p.deleted_at IS NULL AND (? OR p.visibility = 'world') "
                "ORDER BY p.id IS NULL, hits.rank, p.id LIMIT ?",
                (match, limit * 4, source, allow_private, limit),
            )
            passing = [r for r in rows if r["slug"] is not None]
            if len(passing) == limit or not rows or rows[0]["matched"] < limit * 4:
                return passing
        chunk = "snippet(pages_fts, 1, '', '', '…', 48)" if snippets else "NULL"
        return self.query(
            f"SELECT p.slug, p.title, p.body, {chunk} AS chunk, "
            "bm25(pages_fts, 10.0, 1.0) AS rank, p.owner "
            "FROM pages_fts JOIN pages p ON p.id = pages_fts.rowid "
            "WHERE pages_fts MATCH ? AND p.source_id = ? AND p.deleted_at IS NULL AND (? OR p.visibility = 'world') "
            "ORDER BY rank, p.id LIMIT ?",
            (match, source, allow_private, limit),
        )

    def _substring_search(self, source: str, query: SearchQuery, *, limit: int, allow_private: bool) -> list[Row]:
        """A query holding a word of a script written without spaces: its terms are found as substrings
        (through pages_trigram from three characters on, by a scan below), pages naming them in the title first."""
        conds, args = [], []
        terms = [" ".join(query.terms)] if query.mode == "title_phrase" else list(query.terms)
        for t in terms:
            if query.mode == "title_phrase":
                conds.append("instr(lower(coalesce(p.title, '')), ?) > 0")
                args.append(t)
            elif len(t) >= 3:
                conds.append("p.id IN (SELECT rowid FROM pages_trigram WHERE pages_trigram MATCH ?)")
                args.append('"' + t.replace('"', '""') + '"')
            else:
                conds.append("(instr(lower(coalesce(p.title, '')), ?) > 0 OR instr(lower(p.body), ?) > 0)")
                args += [t, t]
        in_title = " + ".join("(instr(lower(coalesce(p.title, '')), ?) > 0)" for _ in terms)
        rows = self.query(
            f"SELECT p.slug, p.title, p.body, {in_title} AS rank, p.owner FROM pages p "
            f"WHERE ({(' OR ' if query.mode == 'any' else ' AND ').join(conds)}) AND p.source_id = ? AND p.deleted_at IS NULL "
            "AND (? OR p.visibility = 'world') ORDER BY rank DESC, p.updated_at DESC, p.slug LIMIT ?",
            (*terms, *args, source, allow_private, limit),
        )
        return [_SubstringHit(r, around(r["body"] or "", terms)) for r in rows]

    def aliased_slugs(self, source: str, slugs: list[str], alias_norm: str) -> set[str]:
        if not slugs:
            return set()
        marks = ",".join("?" * len(slugs))
        rows = self.query(
            f"SELECT slug FROM aliases WHERE source_id = ? AND alias_norm = ? AND slug IN ({marks})",
            (source, alias_norm, *slugs),
        )
        return {r[0] for r in rows}

    def changed_pages(self, source: str, since: int, since_slug: str | None, *, limit: int, allow_private: bool) -> list[sqlite3.Row]:
        """Pages changed after the keyset cursor (updated_at, slug), oldest first."""
        args: tuple[object, ...]
        if since_slug is None:
            where, args = "updated_at > ?", (since,)
        else:
            where, args = "(updated_at > ? OR (updated_at = ? AND slug > ?))", (since, since, since_slug)
        return self.query(
            f"SELECT slug, source_id, title, updated_at FROM pages WHERE source_id = ? AND {where} AND {LIVE_PAGE} "
            "ORDER BY updated_at, slug LIMIT ?",
            (source, *args, allow_private, limit),
        )

    # -- writes --------------------------------------------------------------

    def save_page(self, source: str, slug: str, build: Callable[[sqlite3.Row | None], PageDraft], now: int,
                  *, by: str = "local") -> tuple[bool, PageDraft]:
        """Create or replace a page; True when created (or revived).

        `build` gets the slug's current row (live, deleted or private alike; None if there is
        none) under the write lock and returns the draft to save, or raises to refuse: who may
        replace what is decided on the row that will actually be replaced. A text it replaces
        goes to the page's history, marked replaced by `by`, in the same transaction.
        """
        with self.write() as db:
            existing = db.execute(
                "SELECT id, visibility, body, deleted_at, markdown, title, updated_at, owner FROM pages WHERE source_id = ? AND slug = ?",
                (source, slug),
            ).fetchone()
            draft = build(existing)
            kept = replaced_text(existing, draft)
            owner = page_owner(existing, draft, people.current().person or people.OWNER)
            if kept is not None:
                db.execute(
                    "INSERT INTO page_versions (page_id, version, markdown, title, visibility, written_at, replaced_at, replaced_by, owner) "
                    "VALUES (?, COALESCE((SELECT MAX(version) FROM page_versions WHERE page_id = ?), 0) + 1, ?, ?, ?, ?, ?, ?, ?)",
                    (existing["id"], existing["id"], kept, existing["title"], existing["visibility"], existing["updated_at"], now, by,
                     existing["owner"]),
                )
                db.execute(
                    "DELETE FROM page_versions WHERE page_id = ? AND version <= "
                    "(SELECT MAX(version) FROM page_versions WHERE page_id = ?) - ?",
                    (existing["id"], existing["id"], PAGE_HISTORY_KEEP),
                )
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
            if existing is None:
                page_id = self.inserted_id(db.execute(
                    "INSERT INTO pages (source_id, slug, slug_rev, title, type, body, frontmatter, summary, visibility, "
                    "markdown, updated_at, title_key, owner, created_at, origin) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (source, draft.slug, reverse(draft.slug), *values, now, by),
                ))
            else:
                page_id = existing["id"]
                db.execute(
                    "UPDATE pages SET title = ?, type = ?, body = ?, frontmatter = ?, summary = ?, visibility = ?, "
                    "markdown = ?, updated_at = ?, title_key = ?, owner = ?, deleted_at = NULL, origin = ? WHERE id = ?",
                    (*values, by, page_id),
                )
            self._write_chunks(db, source, page_id, draft.title, draft.body)
            # What the markdown declares is replaced; what was added by hand is kept.
            db.execute("DELETE FROM aliases WHERE source_id = ? AND slug = ? AND origin = 'frontmatter'", (source, draft.slug))
            for alias, norm in draft_aliases(draft):
                db.execute(
                    "INSERT OR IGNORE INTO aliases (source_id, slug, alias, alias_norm, origin) VALUES (?, ?, ?, ?, 'frontmatter')",
                    (source, draft.slug, alias, norm),
                )
            db.execute(
                "DELETE FROM links WHERE source_id = ? AND from_slug = ? AND link_source IN ('markdown', 'frontmatter')",
                (source, draft.slug),
            )
            links, timeline = draft.rows()
            for (to_slug, link_type, link_source, context), private in links:
                db.execute(
                    "INSERT OR IGNORE INTO links (source_id, from_slug, to_slug, link_type, link_source, context, created_at, private_row, owner) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (source, draft.slug, to_slug, link_type, link_source, context, now, private, owner),
                )
            db.execute("DELETE FROM timeline WHERE source_id = ? AND slug = ? AND origin = 'markdown'", (source, draft.slug))
            for (date, summary, detail), private in timeline:
                # A row added by hand that the markdown now declares (write-back put it there) is the
                # markdown's from here on: kept twice, the timeline would list it twice.
                db.execute(
                    "DELETE FROM timeline WHERE source_id = ? AND slug = ? AND origin = 'manual' AND date = ? AND summary = ?",
                    (source, draft.slug, date, summary),
                )
                db.execute(
                    "INSERT INTO timeline (source_id, slug, date, summary, detail, origin, created_at, private_row, owner) "
                    "VALUES (?, ?, ?, ?, ?, 'markdown', ?, ?, ?)",
                    (source, draft.slug, date, summary, detail, now, private, owner),
                )
        return existing is None or existing["deleted_at"] is not None, draft

    # The writes below change a live page the caller may see, checked in the write's own
    # transaction; they answer None when there is no such page (missing, deleted or, for an
    # untrusted caller, private), so a caller cannot tell those apart.

    def _writable(self, db: sqlite3.Connection, source: str, slug: str, allow_private: bool) -> bool:
        return (
            db.execute(f"SELECT 1 FROM pages WHERE source_id = ? AND slug = ? AND {LIVE_PAGE}", (source, slug, allow_private)).fetchone()
            is not None
        )

    def delete_page(self, source: str, slug: str, now: int, *, allow_private: bool) -> bool | None:
        with self.write() as db:
            cur = db.execute(
                f"UPDATE pages SET deleted_at = ?, updated_at = ? WHERE source_id = ? AND slug = ? AND {LIVE_PAGE}",
                (now, now, source, slug, allow_private),
            )
            if cur.rowcount == 0:
                return None
            db.execute(
                "DELETE FROM chunks WHERE page_id = (SELECT id FROM pages WHERE source_id = ? AND slug = ?)", (source, slug)
            )
            return True

    def add_alias(self, source: str, slug: str, alias: str, alias_norm: str, now: int, *, allow_private: bool) -> bool | None:
        with self.write() as db:
            if not self._writable(db, source, slug, allow_private):
                return None
            cur = db.execute(
                "INSERT OR IGNORE INTO aliases (source_id, slug, alias, alias_norm, origin) VALUES (?, ?, ?, ?, 'manual')",
                (source, slug, alias, alias_norm),
            )
            if cur.rowcount == 0:
                return False
            # The page's file-relevant state changed (write-back renders it into the note's aliases):
            # stamped like add_timeline_entry, so a synced folder gets it without waiting for a page write.
            db.execute("UPDATE pages SET updated_at = ? WHERE source_id = ? AND slug = ?", (now, source, slug))
            return True

    def add_link(
        self, source: str, from_slug: str, to_slug: str, link_type: str, link_source: str, context: str | None, now: int, *, allow_private: bool
    ) -> bool | None:
        """A link belongs to its `from` page, so only that page must be writable."""
        with self.write() as db:
            if not self._writable(db, source, from_slug, allow_private):
                return None
            cur = db.execute(
                "INSERT OR IGNORE INTO links (source_id, from_slug, to_slug, link_type, link_source, context, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (source, from_slug, to_slug, link_type, link_source, context, now),
            )
            if cur.rowcount == 0:
                return False
            db.execute("UPDATE pages SET updated_at = ? WHERE source_id = ? AND slug = ?", (now, source, from_slug))
            return True

    def add_timeline_entry(self, source: str, slug: str, date: str, summary: str, detail: str | None, now: int, *, allow_private: bool) -> int | None:
        with self.write() as db:
            if not self._writable(db, source, slug, allow_private):
                return None
            cur = db.execute(
                "INSERT INTO timeline (source_id, slug, date, summary, detail, origin, created_at) VALUES (?, ?, ?, ?, ?, 'manual', ?)",
                (source, slug, date, summary, detail, now),
            )
            db.execute("UPDATE pages SET updated_at = ? WHERE source_id = ? AND slug = ?", (now, source, slug))
            return self.inserted_id(cur)

    def touch_retrieved(self, source: str, slugs: list[str], now: int) -> None:
        if not slugs:
            return
        marks = ",".join("?" * len(slugs))
        with self.write() as db:
            db.execute(
                f"UPDATE pages SET last_retrieved_at = ? WHERE source_id = ? AND slug IN ({marks})", (now, source, *slugs)
            )

    def adopt_links(self, source: str, slug: str, names: list[str], *, from_private_only: bool = False) -> int:
        """Point body links whose target is one of `names` and names no live page at `slug`.

        `from_private_only` (for a private page): only links from private pages, so a world page's
        links never come to name a private page."""
        if not names:
            return 0
        marks = ",".join("?" * len(names))
        dangling = (  # links_in by name: the planner would otherwise scan every link of the source
            f"source_id = ? AND to_slug IN ({marks}) AND link_source = 'markdown' AND from_slug != ? "
            "AND NOT EXISTS (SELECT 1 FROM pages p WHERE p.source_id = links.source_id AND p.slug = links.to_slug "
            "AND p.deleted_at IS NULL)"
        )
        if from_private_only:
            dangling += (
                " AND EXISTS (SELECT 1 FROM pages f WHERE f.source_id = links.source_id AND f.slug = links.from_slug "
                "AND f.visibility = 'private')"
            )
        args = (source, *names, slug)
        if self.one(f"SELECT 1 FROM links INDEXED BY links_in WHERE {dangling} LIMIT 1", args) is None:
            return 0  # the common case: nothing waits for this page, and no write transaction is spent
        with self.write() as db:
            moved = db.execute(f"UPDATE OR IGNORE links INDEXED BY links_in SET to_slug = ? WHERE {dangling}", (slug, *args)).rowcount
            # A page that already links here both ways keeps one link: drop the now-duplicate dangling row.
            db.execute(f"DELETE FROM links INDEXED BY links_in WHERE {dangling}", args)
            return moved

    def rename_page(self, source: str, old: str, new: str, now: int, *, title: tuple[str, str] | None = None) -> None:
        """Move a page to a new slug with everything that hangs off it: aliases, links, timeline, facts.
        `title` (was, becomes): a title that is `was` (it came from the old file name) becomes `becomes`."""
        with self.write() as db:
            # A soft-deleted page at the new slug gives way (its row only, never a live page: callers check).
            gone = db.execute("SELECT id FROM pages WHERE source_id = ? AND slug = ? AND deleted_at IS NOT NULL", (source, new)).fetchone()
            if gone is not None:
                db.execute("DELETE FROM chunks WHERE page_id = ?", (gone["id"],))
                db.execute("DELETE FROM page_versions WHERE page_id = ?", (gone["id"],))
                db.execute("DELETE FROM pages WHERE id = ?", (gone["id"],))
            db.execute(
                "UPDATE pages SET slug = ?, slug_rev = ?, updated_at = ? WHERE source_id = ? AND slug = ?",
                (new, reverse(new), now, source, old),
            )
            if title is not None:
                db.execute(
                    "UPDATE pages SET title = ?, title_key = ? WHERE source_id = ? AND slug = ? AND title = ?",
                    (title[1], title_key(title[1]), source, new, title[0]),
                )
            db.execute("UPDATE OR IGNORE aliases SET slug = ? WHERE source_id = ? AND slug = ?", (new, source, old))
            db.execute("DELETE FROM aliases WHERE source_id = ? AND slug = ?", (source, old))
            db.execute("UPDATE OR IGNORE links SET from_slug = ? WHERE source_id = ? AND from_slug = ?", (new, source, old))
            db.execute("UPDATE OR IGNORE links SET to_slug = ? WHERE source_id = ? AND to_slug = ?", (new, source, old))
            db.execute("DELETE FROM links WHERE source_id = ? AND (from_slug = ? OR to_slug = ?)", (source, old, old))
            db.execute("UPDATE timeline SET slug = ? WHERE source_id = ? AND slug = ?", (new, source, old))
            db.execute("UPDATE facts SET entity_slug = ? WHERE source_id = ? AND entity_slug = ?", (new, source, old))

    def page_links(self, source: str, slug: str, *, allow_private: bool, private_rows: bool) -> list[sqlite3.Row]:
        # Mentions too (get_page lists every link); a link to a page the caller may not see is not listed.
        return self.query(
            f"SELECT l.to_slug, l.link_type, l.link_source, l.context FROM links l {self._VISIBLE_TO} "
            "AND l.source_id = ? AND l.from_slug = ? AND (? OR l.private_row = 0) ORDER BY l.id",
            (allow_private, source, slug, private_rows),
        )

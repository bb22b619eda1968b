"""Pages, aliases, links and timeline, on either backend (keyword search: `page_search.py`).

Every read is isolated to one source and takes `allow_private`: untrusted callers pass False and
private pages simply are not there for them. On Postgres, row-level security also hides another
person's private rows from the session, which the writes below allow for (`SlugHidden`, and
`rename_page` carrying a page's rows across its move).
"""

from __future__ import annotations

import json
from collections.abc import Callable

from memverbs.server import people
from memverbs.server.brain.base import PAGE_HISTORY_KEEP, SlugHidden, draft_aliases, page_owner, replaced_text
from memverbs.server.brain.names_store import drop_names, write_names
from memverbs.server.brain.page_links import PageLinks, prefix_upper, reverse
from memverbs.server.brain.page_search import PageSearch
from memverbs.server.brain.store import first
from memverbs.server.names import title_key

TYPE_CHECKING = False  # typing's flag, without importing typing on a hook's start

if TYPE_CHECKING:
    from memverbs.server.brain.base import LinkQuestions, PageDraft, Row
    from memverbs.server.brain.store import Tx

# A page a caller may see: not deleted, and world-visible unless the one parameter allows private pages.
LIVE_PAGE = "deleted_at IS NULL AND (? OR visibility = 'world')"
# A row that belongs to a page (a link from it, a timeline entry of it) is in the page's owner's name.
_PAGE_OWNER = "SELECT owner FROM pages WHERE source_id = ? AND slug = ?"
_PAGE_COLS = "slug, title, type, summary, body, visibility, updated_at, last_retrieved_at, owner"


class PageStore(PageSearch, PageLinks):
    # -- single pages --------------------------------------------------------

    def page(self, source: str, slug: str, *, allow_private: bool = True) -> Row | None:
        return self.one(
            f"SELECT id, {_PAGE_COLS}, frontmatter, markdown, created_at FROM pages WHERE source_id = ? AND slug = ? AND {LIVE_PAGE}",
            (source, slug, allow_private),
        )

    # The page's history (any state: a deleted page's history is how it is brought back).
    def page_versions(self, source: str, slug: str) -> list[Row]:
        return self.query(
            f"SELECT v.version, v.title, v.visibility, {self.dialect.text_bytes('v.markdown')} AS bytes, v.written_at, "
            "v.replaced_at, v.replaced_by FROM page_versions v JOIN pages p ON p.id = v.page_id "
            "WHERE p.source_id = ? AND p.slug = ? ORDER BY v.version DESC",
            (source, slug),
        )

    def page_version(self, source: str, slug: str, version: int) -> Row | None:
        """One kept text, as the brain's person may read it: another person's page's private facts-fence
        rows are sealed (a restore of it keeps the owner's rows where it marks them)."""
        row = self.one(
            "SELECT v.version, v.title, v.visibility, v.markdown, v.written_at, v.replaced_at, v.replaced_by, v.owner "
            "FROM page_versions v JOIN pages p ON p.id = v.page_id WHERE p.source_id = ? AND p.slug = ? AND v.version = ?",
            (source, slug, version),
        )
        if row is None or row["owner"] == (people.current().person or self.session_person()):
            return row
        from memverbs.server.pages.markdown import sealed_source  # noqa: PLC0415 - the hooks' path never reads history

        return {**dict(zip(row.keys(), row, strict=True)), "markdown": sealed_source(row["markdown"])}

    def pages_by_slugs(self, source: str, slugs: list[str], *, allow_private: bool) -> dict[str, Row]:
        if not slugs:
            return {}
        # The common case (entity resolution probes one slug) is a plain equality: on Postgres
        # `= ANY(array)` costs the server about twice that on the same index, and the client an array dump.
        among, args = ("slug = ?", (slugs[0],)) if len(slugs) == 1 else self.dialect.any_of("slug", slugs)
        rows = self.query(
            f"SELECT {_PAGE_COLS} FROM pages WHERE source_id = ? AND {among} AND {LIVE_PAGE}",
            (source, *args, allow_private),
        )
        return {r["slug"]: r for r in rows}

    # -- entity resolution ---------------------------------------------------

    def alias_slugs(self, source: str, alias_norm: str) -> list[str]:
        rows = self.query(
            f"SELECT DISTINCT slug FROM {self.dialect.aliases_by_name} WHERE source_id = ? AND alias_norm = ?", (source, alias_norm)
        )
        return [r[0] for r in rows]

    def pages_titled(self, source: str, key: str, *, allow_private: bool) -> list[Row]:
        return self.query(
            f"SELECT {_PAGE_COLS} FROM pages WHERE source_id = ? AND title_key = ? AND {LIVE_PAGE}",
            (source, key, allow_private),
        )

    def pages_with_suffix(self, source: str, tail: str, *, allow_private: bool, limit: int = 50) -> list[Row]:
        """Live pages whose slug ends with '/<tail>', through the reversed-slug index."""
        lo = reverse("/" + tail)
        return self.query(
            f"SELECT {_PAGE_COLS} FROM pages WHERE source_id = ? AND slug_rev >= ? AND slug_rev < ? AND {LIVE_PAGE} LIMIT ?",
            (source, lo, prefix_upper(lo), allow_private, limit),
        )

    def pages_with_prefix(self, source: str, prefix: str, *, allow_private: bool, limit: int = 50) -> list[Row]:
        return self.query(
            f"SELECT {_PAGE_COLS} FROM pages WHERE source_id = ? AND slug >= ? AND slug < ? AND {LIVE_PAGE} LIMIT ?",
            (source, prefix, prefix_upper(prefix), allow_private, limit),
        )

    # -- card parts ----------------------------------------------------------

    def aliases_of(self, source: str, slug: str) -> list[str]:
        rows = self.query(
            "SELECT DISTINCT alias_norm FROM aliases WHERE source_id = ? AND slug = ? ORDER BY alias_norm", (source, slug)
        )
        return [r[0] for r in rows]

    def timeline_newest(self, source: str, slug: str, limit: int = 5, *, private_rows: bool) -> list[Row]:
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

    def edges_out(self, source: str, slug: str, limit: int, *, allow_private: bool, private_rows: bool) -> list[Row]:
        return self.query(
            f"SELECT l.link_type, l.to_slug AS slug, l.context FROM links l {self._VISIBLE_TO} "
            f"AND l.source_id = ? AND l.from_slug = ? AND l.link_source {self.dialect.differs} 'mentions' AND (? OR l.private_row = 0) "
            "ORDER BY l.id LIMIT ?",
            (allow_private, source, slug, private_rows, limit),
        )

    def edges_in(self, source: str, slug: str, limit: int, *, allow_private: bool, private_rows: bool) -> list[Row]:
        return self.query(
            f"SELECT l.link_type, l.from_slug AS slug, l.context FROM links l {self._VISIBLE_FROM} "
            f"WHERE l.source_id = ? AND l.to_slug = ? AND l.link_source {self.dialect.differs} 'mentions' AND (? OR l.private_row = 0) "
            "ORDER BY l.id LIMIT ?",
            (allow_private, source, slug, private_rows, limit),
        )

    def backlink_count(self, source: str, slug: str, *, allow_private: bool, private_rows: bool) -> int:
        return int(self.aggregate(
            f"SELECT count(*) FROM links l {self._VISIBLE_FROM} "
            f"WHERE l.source_id = ? AND l.to_slug = ? AND l.link_source {self.dialect.differs} 'mentions' AND (? OR l.private_row = 0)",
            (allow_private, source, slug, private_rows),
        )[0])

    def page_links(self, source: str, slug: str, *, allow_private: bool, private_rows: bool) -> list[Row]:
        # Mentions too (get_page lists every link); a link to a page the caller may not see is not listed.
        return self.query(
            f"SELECT l.to_slug, l.link_type, l.link_source, l.context FROM links l {self._VISIBLE_TO} "
            "AND l.source_id = ? AND l.from_slug = ? AND (? OR l.private_row = 0) ORDER BY l.id",
            (allow_private, source, slug, private_rows),
        )

    # -- lists ---------------------------------------------------------------

    def list_pages(self, source: str, *, type_: str | None, prefix: str | None, limit: int, allow_private: bool) -> list[Row]:
        sql = f"SELECT {_PAGE_COLS} FROM pages WHERE source_id = ? AND {LIVE_PAGE}"
        args: list[object] = [source, allow_private]
        if type_:
            sql += " AND type = ?"
            args.append(type_)
        if prefix:
            sql += " AND slug >= ? AND slug < ?"
            args += [prefix, prefix_upper(prefix)]
        sql += " ORDER BY updated_at DESC, slug LIMIT ?"
        args.append(limit)
        return self.query(sql, tuple(args))

    def count_pages(self, source: str, *, type_: str | None, prefix: str | None, allow_private: bool,
                    visibility: str | None = None, updated_since: int | None = None) -> int:
        """How many live pages list_pages would list with no limit (the CLI's "50 of 158")."""
        sql = f"SELECT count(*) AS n FROM pages WHERE source_id = ? AND {LIVE_PAGE}"
        args: list[object] = [source, allow_private]
        for clause, value in (("type = ?", type_), ("visibility = ?", visibility), ("updated_at >= ?", updated_since)):
            if value is not None and value != "":
                sql += " AND " + clause
                args.append(value)
        if prefix:
            sql += " AND slug >= ? AND slug < ?"
            args += [prefix, prefix_upper(prefix)]
        row = self.one(sql, tuple(args))
        return int(row["n"]) if row is not None else 0

    def aliased_slugs(self, source: str, slugs: list[str], alias_norm: str) -> set[str]:
        if not slugs:
            return set()
        among, args = self.dialect.any_of("slug", slugs)
        rows = self.query(f"SELECT slug FROM aliases WHERE source_id = ? AND alias_norm = ? AND {among}", (source, alias_norm, *args))
        return {r[0] for r in rows}

    def changed_pages(self, source: str, since: int, since_slug: str | None, *, limit: int, allow_private: bool) -> list[Row]:
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

    def save_page(self, source: str, slug: str, build: Callable[[Row | None], PageDraft], now: int,
                  *, by: str = "local", links: LinkQuestions | None = None) -> tuple[bool, PageDraft]:
        """Create or replace a page; True when created (or revived).

        `build` gets the slug's current row (live, deleted or private alike; None if there is
        none) under the write lock and returns the draft to save, or raises to refuse (the
        transaction is rolled back): who may replace what is decided on the row that will
        actually be replaced. A text it replaces goes to the page's history, marked replaced
        by `by`, in the same transaction.
        """
        owner_sql = self.dialect.owner()
        # The statements travel in batches (Postgres's pipeline): the lock, the row it replaces, whether
        # the slug is a page hidden from this session and what its links ask in the first round trip;
        # everything it writes with COMMIT, in the second. So the brain-wide write lock is held for two
        # round trips, never one per statement or per link.
        with self.batched_write() as db:
            sent = self.ahead(lambda: db.execute(
                "SELECT id, visibility, body, deleted_at, markdown, title, updated_at, owner FROM pages WHERE source_id = ? AND slug = ?",
                (source, slug),
            ))
            asked = self.ahead(lambda: db.execute(*self._link_statement(source, links))) if links else None
            # Aliases added by hand stay through a save: the name index needs them beside the draft's.
            manual_sent = self.ahead(lambda: db.execute(
                "SELECT alias FROM aliases WHERE source_id = ? AND slug = ? AND origin = 'manual' ORDER BY id", (source, slug)))
            hidden_sql = self.dialect.page_hidden
            hidden = self.ahead(lambda: db.execute(hidden_sql, (source, slug))) if hidden_sql else None
            existing = sent().fetchone()
            manual = [row[0] for row in manual_sent().fetchall()] if existing is not None else []
            if existing is None and hidden is not None and first(hidden())[0]:
                # The slug is another person's private page, which this session cannot see: it is refused
                # as a private page is to anyone who may not change it.
                raise SlugHidden(slug)
            if asked is not None and links is not None:
                self._links_answered = (source, links, asked().fetchall())
            try:
                draft = build(existing)
            finally:
                self._links_answered = None
            kept = replaced_text(existing, draft)
            writer = people.current().person
            owner = page_owner(existing, draft, writer)  # None: the owner() the dialect gives
            # The page's private rows are its owner's: another person's rewrite keeps them as they are
            # (the text keeps them too: verbs/page_ops.py), so only the world rows are written again.
            own_rows = existing is None or existing["owner"] == (writer if writer is not None else self.session_person())
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
            page: int | str
            if existing is None:
                # No row, and none hidden: under the write lock nothing can take the slug meanwhile, so the
                # insert is not read back (its id is found by the statements that need it).
                db.execute(
                    "INSERT INTO pages (source_id, slug, slug_rev, title, type, body, frontmatter, summary, visibility, "
                    "markdown, updated_at, title_key, owner, created_at, origin) "
                    f"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, {owner_sql}, ?, ?)",
                    (source, draft.slug, reverse(draft.slug), *values, now, by),
                )
                page = draft.slug
            else:
                page = page_id = existing["id"]
                if kept is not None:
                    db.execute(
                        "INSERT INTO page_versions (page_id, version, markdown, title, visibility, written_at, replaced_at, "
                        "replaced_by, owner, by_person) VALUES (?, COALESCE((SELECT MAX(version) FROM page_versions "
                        f"WHERE page_id = ?), 0) + 1, ?, ?, ?, ?, ?, ?, ?, {owner_sql})",
                        (page_id, page_id, kept, existing["title"], existing["visibility"], existing["updated_at"], now, by,
                         existing["owner"], writer),
                    )
                    db.execute(
                        "DELETE FROM page_versions WHERE page_id = ? AND version <= "
                        "(SELECT MAX(version) FROM page_versions WHERE page_id = ?) - ?",
                        (page_id, page_id, PAGE_HISTORY_KEEP),
                    )
                db.execute(
                    "UPDATE pages SET title = ?, type = ?, body = ?, frontmatter = ?, summary = ?, visibility = ?, "
                    f"markdown = ?, updated_at = ?, title_key = ?, owner = {owner_sql}, deleted_at = NULL, origin = ? WHERE id = ?",
                    (*values, by, page_id),
                )
            self._write_chunks(db, source, page, draft.title, draft.body)
            self._write_page_rows(db, source, draft, now, owner_sql, owner, manual, own_rows=own_rows)
        return existing is None or existing["deleted_at"] is not None, draft

    @staticmethod
    def _write_page_rows(db: Tx, source: str, draft: PageDraft, now: int, owner_sql: str, owner: int | None,
                         manual_aliases: list[str], *, own_rows: bool = True) -> None:
        """The aliases, links and timeline rows the page's markdown declares: what it declared before
        is replaced, what was added by hand is kept; and the page's names (the name index). Without
        `own_rows` (a rewrite by someone other than the page's owner) its private rows stay as they
        are: they are the owner's."""
        mine = "" if own_rows else " AND private_row = 0"
        db.execute("DELETE FROM aliases WHERE source_id = ? AND slug = ? AND origin = 'frontmatter'", (source, draft.slug))
        for alias, norm in draft_aliases(draft):
            db.execute(
                "INSERT INTO aliases (source_id, slug, alias, alias_norm, origin) VALUES (?, ?, ?, ?, 'frontmatter') "
                "ON CONFLICT DO NOTHING",
                (source, draft.slug, alias, norm),
            )
        write_names(db, source, draft.slug, draft.title, draft.type, [a for a, _ in draft_aliases(draft)] + manual_aliases)
        db.execute(
            f"DELETE FROM links WHERE source_id = ? AND from_slug = ? AND link_source IN ('markdown', 'frontmatter'){mine}",
            (source, draft.slug),
        )
        links, timeline = draft.rows()
        if not own_rows:
            links = [row for row in links if not row[1]]
            timeline = [row for row in timeline if not row[1]]
        add_link = (
            "INSERT INTO links (source_id, from_slug, to_slug, link_type, link_source, context, created_at, private_row, owner) "
            f"VALUES (?, ?, ?, ?, ?, ?, ?, ?, {owner_sql}) ON CONFLICT DO NOTHING"
        )
        for (to_slug, link_type, link_source, context), private in links:
            db.execute(add_link, (source, draft.slug, to_slug, link_type, link_source, context, now, private, owner))
        db.execute(f"DELETE FROM timeline WHERE source_id = ? AND slug = ? AND origin = 'markdown'{mine}", (source, draft.slug))
        add_entry = (
            "INSERT INTO timeline (source_id, slug, date, summary, detail, origin, created_at, private_row, owner) "
            f"VALUES (?, ?, ?, ?, ?, 'markdown', ?, ?, {owner_sql})"
        )
        for (date, summary, detail), private in timeline:
            # A row added by hand that the markdown now declares (write-back put it there) is the
            # markdown's from here on: kept twice, the timeline would list it twice.
            db.execute(
                "DELETE FROM timeline WHERE source_id = ? AND slug = ? AND origin = 'manual' AND date = ? AND summary = ?",
                (source, draft.slug, date, summary),
            )
            db.execute(add_entry, (source, draft.slug, date, summary, detail, now, private, owner))

    # The writes below change a live page the caller may see, checked in the write's own
    # transaction (under the write lock); they answer None when there is no such page (missing,
    # deleted or, for an untrusted caller, private), so a caller cannot tell those apart.

    @staticmethod
    def _writable(db: Tx, source: str, slug: str, allow_private: bool) -> bool:
        row = db.execute(f"SELECT 1 FROM pages WHERE source_id = ? AND slug = ? AND {LIVE_PAGE}", (source, slug, allow_private)).fetchone()
        return row is not None

    def delete_page(self, source: str, slug: str, now: int, *, allow_private: bool) -> bool | None:
        with self.write() as db:
            cur = db.execute(
                f"UPDATE pages SET deleted_at = ?, updated_at = ? WHERE source_id = ? AND slug = ? AND {LIVE_PAGE}",
                (now, now, source, slug, allow_private),
            )
            if cur.rowcount == 0:
                return None
            db.execute("DELETE FROM chunks WHERE page_id = (SELECT id FROM pages WHERE source_id = ? AND slug = ?)", (source, slug))
            drop_names(db, source, slug)
            return True

    def add_alias(self, source: str, slug: str, alias: str, alias_norm: str, now: int, *, allow_private: bool) -> bool | None:
        with self.write() as db:
            if not self._writable(db, source, slug, allow_private):
                return None
            cur = db.execute(
                "INSERT INTO aliases (source_id, slug, alias, alias_norm, origin) VALUES (?, ?, ?, ?, 'manual') ON CONFLICT DO NOTHING",
                (source, slug, alias, alias_norm),
            )
            if cur.rowcount == 0:
                return False
            page = db.execute("SELECT title, type FROM pages WHERE source_id = ? AND slug = ?", (source, slug)).fetchone()
            write_names(db, source, slug, page[0], page[1])
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
                "INSERT INTO links (source_id, from_slug, to_slug, link_type, link_source, context, created_at, owner) "
                f"VALUES (?, ?, ?, ?, ?, ?, ?, ({_PAGE_OWNER})) ON CONFLICT DO NOTHING",
                (source, from_slug, to_slug, link_type, link_source, context, now, source, from_slug),
            )
            if cur.rowcount == 0:
                return False
            db.execute("UPDATE pages SET updated_at = ? WHERE source_id = ? AND slug = ?", (now, source, from_slug))
            return True

    def add_timeline_entry(self, source: str, slug: str, date: str, summary: str, detail: str | None, now: int, *, allow_private: bool) -> int | None:
        with self.write() as db:
            if not self._writable(db, source, slug, allow_private):
                return None
            entry_id = int(first(db.execute(
                "INSERT INTO timeline (source_id, slug, date, summary, detail, origin, created_at, owner) "
                f"VALUES (?, ?, ?, ?, ?, 'manual', ?, ({_PAGE_OWNER})) RETURNING id",
                (source, slug, date, summary, detail, now, source, slug),
            ))[0])
            db.execute("UPDATE pages SET updated_at = ? WHERE source_id = ? AND slug = ?", (now, source, slug))
            return entry_id

    def touch_retrieved(self, source: str, slugs: list[str], now: int) -> None:
        if not slugs:
            return
        among, args = self.dialect.any_of("slug", slugs)
        with self.write() as db:
            db.execute(f"UPDATE pages SET last_retrieved_at = ? WHERE source_id = ? AND {among}", (now, source, *args))

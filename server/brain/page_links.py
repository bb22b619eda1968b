"""A page among the others: what its links name, and what follows a page that moves.

The link rule's questions about a page's links, asked all at once (`link_candidates`; the rule
itself is server/verbs/links.py); dangling links that name a page once it is saved (`adopt_links`);
a page moved to another slug with everything that hangs off it (`rename_page`); links pointed at the
page that took another's place (`repoint_links`). Written once for both backends (store.py); on
Postgres, row-level security shows a session a page's rows only with their page, which the moves
below allow for.
"""

from __future__ import annotations

from memverbs.server.brain.names_store import drop_names, write_names
from memverbs.server.brain.store import Store
from memverbs.server.names import title_key

TYPE_CHECKING = False  # typing's flag, without importing typing on a hook's start

if TYPE_CHECKING:
    from memverbs.server.brain.base import LinkQuestions, Row
    from memverbs.server.brain.store import Tx


def reverse(slug: str) -> str:
    return slug[::-1]


def prefix_upper(prefix: str) -> str:
    """The smallest string greater than every string starting with `prefix`."""
    return prefix[:-1] + chr(ord(prefix[-1]) + 1)


class PageLinks(Store):
    # What a page write sent with its lock for its links (pages_store.save_page): (source, questions, rows).
    _links_answered: tuple[str, LinkQuestions, list[Row]] | None = None

    def link_candidates(self, source: str, questions: LinkQuestions) -> list[Row]:
        """Everything the link rule asks about a page's links, in one statement (server/verbs/links.py):
        rows (kind, key, slug, visibility) — 'slug': a live page at `key`; 'suffix': up to 50 live pages
        whose slug ends with '/<key>'; 'title': the live pages titled `key` (a title key); 'alias': the
        live pages the alias `key` names. Only pages `questions.allow_private` lets the caller see. A
        page write sends them with its write lock (`save_page`): then they are answered from there."""
        if not questions:
            return []
        sent = self._links_answered
        if sent is not None and sent[0] == source and sent[1].covers(questions):
            return sent[2]  # the rows answer more questions than these: the extra ones are never looked up
        return self.query(*self._link_statement(source, questions))

    def _link_statement(self, source: str, questions: LinkQuestions) -> tuple[str, tuple]:
        ranges = [(key, reverse("/" + key), prefix_upper(reverse("/" + key))) for key in questions.suffixes]
        return self.dialect.link_candidates(source, list(questions.slugs), ranges, list(questions.title_keys),
                                            list(questions.alias_norms), questions.allow_private)

    def adopt_links(self, source: str, slug: str, names: list[str], *, from_private_only: bool = False) -> int:
        """Point body links whose target is one of `names` and names no live page at `slug`.

        `from_private_only` (for a private page): only links from private pages, so a world page's
        links never come to name a private page. A link that would duplicate one the page already
        has is dropped instead (the oldest of such twins moves)."""
        if not names:
            return 0
        among, named = self.dialect.any_of("l.to_slug", names)
        dangling = (
            f"l.source_id = ? AND {among} AND l.link_source = 'markdown' AND l.from_slug != ? "
            "AND NOT EXISTS (SELECT 1 FROM pages p WHERE p.source_id = l.source_id AND p.slug = l.to_slug "
            "AND p.deleted_at IS NULL)"
        )
        if from_private_only:
            dangling += (
                " AND EXISTS (SELECT 1 FROM pages f WHERE f.source_id = l.source_id AND f.slug = l.from_slug "
                "AND f.visibility = 'private')"
            )
        args = (source, *named, slug)
        links = self.dialect.links_by_target
        if self.one(f"SELECT 1 FROM {links} WHERE {dangling} LIMIT 1", args) is None:
            return 0  # the common case: nothing waits for this page, and no write transaction is spent
        moved = 0
        with self.write() as db:
            for r in db.execute(f"SELECT l.id, l.from_slug, l.link_type FROM {links} WHERE {dangling} ORDER BY l.id", args).fetchall():
                taken = db.execute(
                    "SELECT 1 FROM links WHERE source_id = ? AND from_slug = ? AND to_slug = ? AND link_type = ? "
                    "AND link_source = 'markdown'",
                    (source, r["from_slug"], slug, r["link_type"]),
                ).fetchone()
                if taken is None:
                    db.execute("UPDATE links SET to_slug = ? WHERE id = ?", (slug, r["id"]))
                    moved += 1
                else:  # the page already links here both ways: drop the now-duplicate dangling row
                    db.execute("DELETE FROM links WHERE id = ?", (r["id"],))
        return moved

    def rename_page(self, source: str, old: str, new: str, now: int, *, title: tuple[str, str] | None = None) -> None:
        """Move a page to a new slug with everything that hangs off it: aliases, links, timeline, facts.
        `title` (was, becomes): a title that is `was` (it came from the old file name) becomes `becomes`.
        Rows the new slug already has stay; the old slug's copies of them go."""
        with self.write() as db:
            # A soft-deleted page at the new slug gives way (its row only, never a live page: callers check).
            gone = db.execute("SELECT id FROM pages WHERE source_id = ? AND slug = ? AND deleted_at IS NOT NULL", (source, new)).fetchone()
            if gone is not None:
                db.execute("DELETE FROM chunks WHERE page_id = ?", (gone["id"],))
                db.execute("DELETE FROM page_versions WHERE page_id = ?", (gone["id"],))
                db.execute("DELETE FROM pages WHERE id = ?", (gone["id"],))
            # The rows that hang off the page by its slug are taken up while the page is still at the
            # old slug and put down once it is at the new one: Postgres's row-level security shows
            # (and lets an update write) a page's rows only with their page, so they cannot be
            # updated across the move.
            aliases = db.execute(
                "DELETE FROM aliases WHERE source_id = ? AND slug = ? RETURNING id, alias, alias_norm, origin", (source, old)
            ).fetchall()
            links = db.execute(
                "DELETE FROM links WHERE source_id = ? AND from_slug = ? "
                "RETURNING id, to_slug, link_type, link_source, context, created_at, private_row, owner",
                (source, old),
            ).fetchall()
            timeline = db.execute(
                "DELETE FROM timeline WHERE source_id = ? AND slug = ? RETURNING id, date, summary, detail, origin, created_at, private_row, owner",
                (source, old),
            ).fetchall()
            db.execute(
                "UPDATE pages SET slug = ?, slug_rev = ?, updated_at = ? WHERE source_id = ? AND slug = ?",
                (new, reverse(new), now, source, old),
            )
            if title is not None:
                db.execute(
                    "UPDATE pages SET title = ?, title_key = ? WHERE source_id = ? AND slug = ? AND title = ?",
                    (title[1], title_key(title[1]), source, new, title[0]),
                )
            db.executemany(
                "INSERT INTO aliases (source_id, slug, alias, alias_norm, origin) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                [(source, new, r["alias"], r["alias_norm"], r["origin"]) for r in sorted(aliases, key=_by_id)],
            )
            db.executemany(
                "INSERT INTO links (source_id, from_slug, to_slug, link_type, link_source, context, created_at, private_row, owner) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                [(source, new, r["to_slug"], r["link_type"], r["link_source"], r["context"], r["created_at"], r["private_row"],
                  r["owner"]) for r in sorted(links, key=_by_id)],
            )
            db.executemany(
                "INSERT INTO timeline (source_id, slug, date, summary, detail, origin, created_at, private_row, owner) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(source, new, r["date"], r["summary"], r["detail"], r["origin"], r["created_at"], r["private_row"], r["owner"])
                 for r in sorted(timeline, key=_by_id)],
            )
            self._repoint(db, source, old, new)
            db.execute("UPDATE facts SET entity_slug = ? WHERE source_id = ? AND entity_slug = ?", (new, source, old))
            drop_names(db, source, old)
            page = db.execute("SELECT title, type FROM pages WHERE source_id = ? AND slug = ?", (source, new)).fetchone()
            if page is not None:
                write_names(db, source, new, page[0], page[1])

    def repoint_links(self, source: str, old: str, new: str) -> None:
        """Point every link to `old` at `new` (a page that took another's place: a note moved between folders)."""
        with self.write() as db:
            self._repoint(db, source, old, new)

    def _repoint(self, db: Tx, source: str, old: str, new: str) -> None:
        """Links to `old` now name `new`; one that would duplicate a link `new` already has goes instead."""
        db.execute(
            "UPDATE links AS a SET to_slug = ? WHERE a.source_id = ? AND a.to_slug = ? AND NOT EXISTS "
            "(SELECT 1 FROM links b WHERE b.source_id = a.source_id AND b.to_slug = ? AND b.from_slug = a.from_slug "
            f"AND b.link_type = a.link_type AND b.link_source {self.dialect.same} a.link_source)",
            (new, source, old, new),
        )
        db.execute("DELETE FROM links WHERE source_id = ? AND to_slug = ?", (source, old))


def _by_id(row: Row) -> int:
    return int(row["id"])

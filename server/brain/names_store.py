"""The name index's table (`entity_names`), on either backend: what server/name_index.py looks names up in.

Every row is derived from a page and its aliases (name_index.page_names), so the index is written
where they are: in the same transaction as the page's save, an alias added, a rename or a delete
(pages_store.py calls `write_names` / `drop_names` there). An entity with facts and no page is
named by its slug read as words, written by a trigger on the facts (the schema step's
`facts_entity_name`). `rebuild_names` writes every row again, for the schema step that creates the
table and for a restored backup.
"""

from __future__ import annotations

from memverbs.server.brain.store import Store

TYPE_CHECKING = False  # typing's flag, without importing typing on a hook's start

if TYPE_CHECKING:
    from memverbs.server.brain.base import Row
    from memverbs.server.brain.store import Tx
    from memverbs.server.name_index import Named

# Keys per statement: far below either backend's parameter limit (a text gives a few thousand at most).
KEY_BATCH = 5_000


def page_aliases(db: Tx, source: str, slug: str, *, origin: str | None = None) -> list[str]:
    """The page's aliases (of one origin: `frontmatter` or `manual`), oldest first."""
    sql = "SELECT alias FROM aliases WHERE source_id = ? AND slug = ?" + (" AND origin = ?" if origin else "") + " ORDER BY id"
    return [r[0] for r in db.execute(sql, (source, slug, origin) if origin else (source, slug)).fetchall()]


def write_names(db: Tx, source: str, slug: str, title: str | None, type_: str | None, aliases: list[str] | None = None) -> None:
    """The page's rows, computed afresh from its title, type, slug and `aliases` (None: every alias it has now).

    A caller inside a Postgres pipeline passes the aliases: a read there would wait for the batch."""
    from memverbs.server.name_index import page_names  # noqa: PLC0415 - a page write's, not every brain open's

    if aliases is None:
        aliases = page_aliases(db, source, slug)
    db.execute("DELETE FROM entity_names WHERE source_id = ? AND slug = ?", (source, slug))
    names = page_names(title, slug, type_, aliases)
    if names:
        db.executemany("INSERT INTO entity_names (source_id, name_key, slug, how) VALUES (?, ?, ?, ?)",
                       [(source, key, slug, how) for key, how in names])


def drop_names(db: Tx, source: str, slug: str) -> None:
    """A page gone (deleted, or moved away with its facts): its names go; while facts are still filed
    under its slug, the slug read as words names them, as the facts' trigger would have it."""
    from memverbs.server.name_index import slug_key  # noqa: PLC0415

    db.execute("DELETE FROM entity_names WHERE source_id = ? AND slug = ?", (source, slug))
    db.execute(
        "INSERT INTO entity_names (source_id, name_key, slug, how) SELECT ?, ?, ?, 'slug' "
        "WHERE EXISTS (SELECT 1 FROM facts WHERE source_id = ? AND entity_slug = ?) ON CONFLICT DO NOTHING",
        (source, slug_key(slug), slug, source, slug),
    )


def rebuild_all(conn: Tx) -> None:
    """Every live page's rows, from scratch (the schema step's fill, a restored backup)."""
    from memverbs.server.name_index import page_names, slug_key  # noqa: PLC0415

    conn.execute("DELETE FROM entity_names")
    pages = conn.execute("SELECT source_id, slug, title, type FROM pages WHERE deleted_at IS NULL ORDER BY id").fetchall()
    aliases: dict[tuple[str, str], list[str]] = {}
    for source, slug, alias in conn.execute("SELECT source_id, slug, alias FROM aliases ORDER BY id").fetchall():
        aliases.setdefault((source, slug), []).append(alias)
    rows = [(source, key, slug, how)
            for source, slug, title, type_ in pages
            for key, how in page_names(title, slug, type_, aliases.get((source, slug), []))]
    paged = {(source, slug) for source, slug, _, _ in pages}
    rows += [(source, key, slug, "slug")
             for source, slug in conn.execute("SELECT DISTINCT source_id, entity_slug FROM facts WHERE entity_slug IS NOT NULL").fetchall()
             if (source, slug) not in paged and (key := slug_key(slug))]
    for at in range(0, len(rows), 1000):
        conn.executemany("INSERT INTO entity_names (source_id, name_key, slug, how) VALUES (?, ?, ?, ?)",
                         rows[at : at + 1000])


class NameStore(Store):
    def named_pages(self, source: str, keys: list[str], *, allow_private: bool) -> list[Row]:
        """The index's rows for `keys` (name_key, slug, how, type, title) whose pages the caller may see."""
        from memverbs.server.name_index import named_sql  # noqa: PLC0415

        out: list[Row] = []
        for at in range(0, len(keys), KEY_BATCH):
            among, args = self.dialect.any_of("n.name_key", keys[at : at + KEY_BATCH])
            out += self.query(named_sql(among), (source, *args, allow_private, allow_private))
        return out

    def named_in(self, source: str, text: str, *, allow_private: bool = False) -> Named:
        """What `text` names in `source` (server/name_index.py's rules over this brain's index;
        capture files what a session said under these)."""
        from memverbs.server.name_index import find  # noqa: PLC0415

        return find(text, lambda keys: self.named_pages(source, keys, allow_private=allow_private))

    def rebuild_names(self) -> None:
        with self.write() as db:
            rebuild_all(db)

"""Keyword search over pages, on either backend: the full-text index, else a substring scan.

The full-text match (FTS5 with bm25 on SQLite, the weighted `search` tsvector with ts_rank on
Postgres: title ten times the body) is the dialect's (`Dialect.text_match`, `pages_ranked`); the
rules — which queries are substring searches, how a substring hit ranks and reads — are here.
Every read is isolated to one source and takes `allow_private`: untrusted callers pass False and
private pages simply are not there for them.

And `rows_of`: whose private facts-fence rows the caller may read (a person; None: nobody's).
What a caller may not read must not move what it gets either: a world page ranked on every word
of its body would rise or fall with the words of its private rows, and a guess at them could be
checked against a page tuned to sit just beside it. So the ranking, and which pages match at all,
read the world view — each page as if the private rows this caller may not read did not exist
(and, on SQLite, whose bm25 counts every page of its index, as if private pages did not exist
either): `Dialect.pages_ranked`, and `_body` for the substring scan.
"""

from __future__ import annotations

from memverbs.server.brain.store import Store
from memverbs.server.terms import around, spaceless

TYPE_CHECKING = False  # typing's flag, without importing typing on a hook's start

if TYPE_CHECKING:
    from memverbs.server.brain.base import Row, SearchQuery


class _SubstringHit(dict):
    """A substring hit as keyword_search's rows read (slug, title, body, chunk, rank, owner), by name."""

    def __init__(self, row: Row, chunk: str) -> None:
        super().__init__(slug=row["slug"], title=row["title"], body=row["body"], chunk=chunk, rank=row["rank"], owner=row["owner"])


class PageSearch(Store):
    def keyword_search(self, source: str, query: SearchQuery, *, limit: int, allow_private: bool,
                       snippets: bool = True, rows_of: int | None = None) -> list[Row]:
        """Pages matching the query, best first (title weighs more than body)."""
        if any(spaceless(t) for t in query.terms):
            return self._substring_search(source, query, limit=limit, allow_private=allow_private, rows_of=rows_of)
        match = self.dialect.text_match(query)
        if match is None:
            return []
        in_index = self.dialect.pages_ranked_in_index(rows_of, allow_private)
        if not snippets and in_index is not None:
            # The best pages as the index alone ranks them (Dialect.pages_ranked_in_index). When as
            # many pass the filter as were asked for, or the index matched fewer than it was asked
            # for (`matched`; no row at all: none), it ranked them all and the answer is whole; when
            # it matched more and too few pass, the whole ranking below decides.
            rows = self.query(in_index, (match, limit * 4, source, allow_private, limit))
            passing = [r for r in rows if r["slug"] is not None]
            if len(passing) == limit or not rows or rows[0]["matched"] < limit * 4:
                return passing
        rows = self.query(self.dialect.pages_ranked(snippets, rows_of, allow_private), (match, source, allow_private, limit))
        return self.dialect.page_hits(rows, query, snippets)

    def _substring_search(self, source: str, query: SearchQuery, *, limit: int, allow_private: bool,
                          rows_of: int | None) -> list[Row]:
        """A query holding a word of a script written without spaces: its terms are found as substrings
        (through the dialect's substring index where it has one, else by a scan of the source's pages),
        pages naming them in the title first."""
        in_title = self.dialect.contains("lower(coalesce(p.title, ''))", "?")
        anywhere = f"({in_title} OR {self.dialect.contains(f'lower({_body(rows_of)})', '?')})"
        conds: list[str] = []
        args: list[object] = []
        terms = [" ".join(query.terms)] if query.mode == "title_phrase" else list(query.terms)
        for t in terms:
            if query.mode == "title_phrase":
                cond, more = in_title, [t]
            elif (indexed := self.dialect.substring_index(t)) is not None and rows_of is not None:
                cond, more = indexed[0], [indexed[1]]
            elif indexed is not None:
                # The index holds the whole body: a page it finds must hold the term where the caller can read it.
                cond, more = f"({indexed[0]} AND {anywhere})", [indexed[1], t, t]
            else:
                cond, more = anywhere, [t, t]
            conds.append(cond)
            args += more
        rank = " + ".join(self.dialect.as_int(in_title) for _ in terms)
        rows = self.query(
            f"SELECT p.slug, p.title, p.body, {rank} AS rank, p.owner FROM pages p "
            f"WHERE ({(' OR ' if query.mode == 'any' else ' AND ').join(conds)}) AND p.source_id = ? AND p.deleted_at IS NULL "
            "AND (? OR p.visibility = 'world') ORDER BY rank DESC, p.updated_at DESC, p.slug LIMIT ?",
            (*terms, *args, source, allow_private, limit),
        )
        return [_SubstringHit(r, around(r["body"] or "", terms)) for r in rows]


def _body(rows_of: int | None) -> str:
    """The page's text as the caller may read it: its private facts-fence rows cut, but those of
    `rows_of`'s own pages (the world-text SQL function both backends have: postgres_schema.WORLD_SEARCH,
    sqlite_schema.register)."""
    if rows_of is None:
        return "memverbs_world_body(p.body)"
    return f"CASE WHEN p.owner = {int(rows_of)} THEN p.body ELSE memverbs_world_body(p.body) END"

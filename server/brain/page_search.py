"""Keyword search over pages, on either backend: the full-text index, else a substring scan.

The full-text match (FTS5 with bm25 on SQLite, the weighted `search` tsvector with ts_rank on
Postgres: title ten times the body) is the dialect's (`Dialect.text_match`, `pages_ranked`); the
rules — which queries are substring searches, how a substring hit ranks and reads — are here.
Every read is isolated to one source and takes `allow_private`: untrusted callers pass False and
private pages simply are not there for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memverbs.server.brain.store import Store
from memverbs.server.terms import around, spaceless

if TYPE_CHECKING:
    from memverbs.server.brain.base import Row, SearchQuery


class _SubstringHit(dict):
    """A substring hit as keyword_search's rows read (slug, title, body, chunk, rank, owner), by name."""

    def __init__(self, row: Row, chunk: str) -> None:
        super().__init__(slug=row["slug"], title=row["title"], body=row["body"], chunk=chunk, rank=row["rank"], owner=row["owner"])


class PageSearch(Store):
    def keyword_search(self, source: str, query: SearchQuery, *, limit: int, allow_private: bool,
                       snippets: bool = True) -> list[Row]:
        """Pages matching the query, best first (title weighs more than body)."""
        if any(spaceless(t) for t in query.terms):
            return self._substring_search(source, query, limit=limit, allow_private=allow_private)
        match = self.dialect.text_match(query)
        if match is None:
            return []
        in_index = self.dialect.pages_ranked_in_index
        if not snippets and in_index is not None:
            # The best pages as the index alone ranks them (Dialect.pages_ranked_in_index). When as
            # many pass the filter as were asked for, or the index matched fewer than it was asked
            # for (`matched`; no row at all: none), it ranked them all and the answer is whole; when
            # it matched more and too few pass, the whole ranking below decides.
            rows = self.query(in_index, (match, limit * 4, source, allow_private, limit))
            passing = [r for r in rows if r["slug"] is not None]
            if len(passing) == limit or not rows or rows[0]["matched"] < limit * 4:
                return passing
        rows = self.query(self.dialect.pages_ranked(snippets), (match, source, allow_private, limit))
        return self.dialect.page_hits(rows, query, snippets)

    def _substring_search(self, source: str, query: SearchQuery, *, limit: int, allow_private: bool) -> list[Row]:
        """A query holding a word of a script written without spaces: its terms are found as substrings
        (through the dialect's substring index where it has one, else by a scan of the source's pages),
        pages naming them in the title first."""
        in_title = self.dialect.contains("lower(coalesce(p.title, ''))", "?")
        anywhere = f"({in_title} OR {self.dialect.contains('lower(p.body)', '?')})"
        conds: list[str] = []
        args: list[object] = []
        terms = [" ".join(query.terms)] if query.mode == "title_phrase" else list(query.terms)
        for t in terms:
            if query.mode == "title_phrase":
                cond, more = in_title, [t]
            elif (indexed := self.dialect.substring_index(t)) is not None:
                cond, more = indexed[0], [indexed[1]]
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

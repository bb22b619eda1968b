"""SQLite's spelling of the pieces `dialect.Dialect` names (FTS5, plain integers for owners, …)."""

from __future__ import annotations

import sqlite3

from memverbs.server.brain.base import SearchQuery
from memverbs.server.brain.dialect import Dialect
from memverbs.server.errors import BrainError
from memverbs.server.people import OWNER


class SqliteDialect(Dialect):
    name = "sqlite"

    write_failures = (BrainError, sqlite3.Error)

    # -- rows and owners ---------------------------------------------------------------------------

    def owner(self, mark: str = "?") -> str:
        # One person per file: whoever the call names (people.current()), else the owner, whom a
        # SQLite file's connection is (people.Actor).
        return f"coalesce({mark}, {OWNER})"

    # -- tokens ------------------------------------------------------------------------------------

    # -- cursors -----------------------------------------------------------------------------------

    # -- projects ----------------------------------------------------------------------------------

    # Named: the index is partial and already in the newest-first order these reads want, and a
    # planner without statistics (memverbs never runs ANALYZE) may take another one.
    facts_by_project = "facts INDEXED BY facts_project"

    # -- sync --------------------------------------------------------------------------------------

    same = "IS"  # SQLite's IS NOT DISTINCT FROM arrived only in 3.39
    # Named: SQLite would otherwise range-scan the pages once per synced file (seconds at 10,000 files).
    pages_by_change = "pages INDEXED BY pages_changed"

    # -- pages -------------------------------------------------------------------------------------

    def text_match(self, query: SearchQuery) -> str:
        return fts5_match(query)

    def pages_ranked(self, snippets: bool) -> str:
        return _PAGES_RANKED_SNIPPETS if snippets else _PAGES_RANKED

    # Rank in the index alone and read only the best pages' rows: joining first reads every
    # matching page's row (its body, through overflow pages) before the sort and LIMIT. Most of the
    # best matches pass the filter (one source, live, world). The index's matches that do not pass
    # come after those that do, as empty rows, so the answer also says when the index matched
    # fewer than it was asked for (`matched`). Ties go by id, as in `pages_ranked`.
    pages_ranked_in_index = (
        "SELECT p.slug, p.title, p.body, NULL AS chunk, hits.rank AS rank, p.owner, hits.matched AS matched FROM "
        "(SELECT rowid, rank, count(*) OVER () AS matched FROM (SELECT rowid, bm25(pages_fts, 10.0, 1.0) AS rank "
        "FROM pages_fts WHERE pages_fts MATCH ? ORDER BY rank, rowid LIMIT ?)) hits LEFT JOIN pages p "
        "ON p.id = hits.rowid AND p.source_id = ? AND p.deleted_at IS NULL AND (? OR p.visibility = 'world') "
        "ORDER BY p.id IS NULL, hits.rank, p.id LIMIT ?"
    )

    def as_int(self, condition: str) -> str:
        return f"({condition})"  # a comparison is 1 or 0 already

    def substring_index(self, term: str) -> tuple[str, str] | None:
        # pages_trigram finds a substring of three characters or more; a shorter one is scanned for.
        if len(term) < 3:
            return None
        return "p.id IN (SELECT rowid FROM pages_trigram WHERE pages_trigram MATCH ?)", _quoted(term)

    # Named: on a brain without statistics SQLite may prefer the (source_id, slug, alias_norm) key
    # and scan every alias of the source, or scan every link of the source.
    aliases_by_name = "aliases INDEXED BY aliases_lookup"
    links_by_target = "links l INDEXED BY links_in"
    differs = "IS NOT"  # SQLite's IS DISTINCT FROM arrived only in 3.39

    def text_bytes(self, expr: str) -> str:
        return f"LENGTH(CAST({expr} AS BLOB))"

    # -- facts -------------------------------------------------------------------------------------

    # -- browse ------------------------------------------------------------------------------------

    greatest_of = "max"  # the scalar max(): SQLite has no greatest()
    position_of = "instr"

    def among(self, column: str, values: list[str]) -> tuple[str, list[object]]:
        return f"{column} IN ({', '.join(['?'] * len(values))})", list(values)

    def text_table(self, name: str, column: str, values: list[str]) -> tuple[str, list[object]]:
        return f"{name}({column}) AS (VALUES {', '.join(['(?)'] * len(values))})", list(values)

    # -- vectors -----------------------------------------------------------------------------------

    def any_of(self, column: str, values: list) -> tuple[str, tuple]:
        # No array parameters in SQLite: one mark per value.
        return f"{column} IN ({','.join('?' * len(values))})", tuple(values)


def _quoted(term: str) -> str:
    # A quoted FTS5 string is taken literally; a double quote inside is written twice.
    return '"' + term.replace('"', '""') + '"'


def _term(query: SearchQuery, i: int) -> str:
    prefix = query.prefix(i)
    term = _quoted(query.terms[i])
    return f"({term} OR {_quoted(prefix)}*)" if prefix else term


def fts5_match(query: SearchQuery) -> str:
    """A `SearchQuery` as an FTS5 MATCH expression: the only place that syntax is spelled."""
    if query.mode == "title_phrase":
        return "title : " + _quoted(" ".join(query.terms))
    quoted = [_term(query, i) for i in range(len(query.terms))]
    if query.mode == "any":
        return " OR ".join(quoted)
    return " AND ".join(quoted)


_PAGES_RANKED = (
    "SELECT p.slug, p.title, p.body, {chunk} AS chunk, bm25(pages_fts, 10.0, 1.0) AS rank, p.owner "
    "FROM pages_fts JOIN pages p ON p.id = pages_fts.rowid "
    "WHERE pages_fts MATCH ? AND p.source_id = ? AND p.deleted_at IS NULL AND (? OR p.visibility = 'world') "
    "ORDER BY rank, p.id LIMIT ?"
)
_PAGES_RANKED_SNIPPETS = _PAGES_RANKED.format(chunk="snippet(pages_fts, 1, '', '', '…', 48)")
_PAGES_RANKED = _PAGES_RANKED.format(chunk="NULL")

SQLITE = SqliteDialect()

"""SQLite's spelling of the pieces `dialect.Dialect` names (FTS5, plain integers for owners, …)."""

from __future__ import annotations

import sqlite3

from memverbs.server.brain.base import SearchQuery
from memverbs.server.brain.dialect import Dialect
from memverbs.server.brain.facts_store import FACT_COLS, FACT_COLS_F
from memverbs.server.errors import BrainError
from memverbs.server.people import OWNER
from memverbs.server.timeparse import now_ms


class SqliteDialect(Dialect):
    name = "sqlite"

    write_failures = (BrainError, sqlite3.Error)

    # -- rows, owners and lists (every store) ------------------------------------------------------

    def owner(self, mark: str = "?") -> str:
        # One person per file: whoever the call names (people.current()), else the owner, whom a
        # SQLite file's connection is (people.Actor).
        return f"coalesce({mark}, {OWNER})"

    def any_of(self, column: str, values: list) -> tuple[str, tuple]:
        # No array parameters in SQLite: one mark per value.
        return f"{column} IN ({','.join('?' * len(values))})", tuple(values)

    # -- tokens ------------------------------------------------------------------------------------

    # -- cursors -----------------------------------------------------------------------------------

    # -- projects ----------------------------------------------------------------------------------

    # Named: the index is partial and already in the newest-first order these reads want, and a
    # planner without statistics (memverbs never runs ANALYZE) may take another one.
    facts_by_project = "facts INDEXED BY facts_project"
    statements_by_project = "facts INDEXED BY facts_project_statements"

    # -- sync --------------------------------------------------------------------------------------

    same = "IS"  # SQLite's IS NOT DISTINCT FROM arrived only in 3.39
    # Named: SQLite would otherwise range-scan the pages once per synced file (seconds at 10,000 files).
    pages_by_change = "pages INDEXED BY pages_changed"

    page_hidden = None  # one person's file: the connection sees every row

    # One statement of parts (SQLite prepares one quickly, whatever its length).
    def link_candidates(self, source: str, slugs: list[str], ranges: list[tuple[str, str, str]], title_keys: list[str],
                        alias_norms: list[str], allow_private: bool) -> tuple[str, tuple]:
        live = "deleted_at IS NULL AND (? OR visibility = 'world')"
        parts: list[str] = []
        args: list[object] = []
        for kind, column, values in (("slug", "slug", slugs), ("title", "title_key", title_keys)):
            if values:
                parts.append(f"SELECT '{kind}' AS kind, {column} AS key, slug, visibility FROM pages WHERE source_id = ? "
                             f"AND {column} IN ({','.join('?' * len(values))}) AND {live}")
                args += [source, *values, allow_private]
        if alias_norms:
            parts.append(
                f"SELECT DISTINCT 'alias' AS kind, aliases.alias_norm AS key, p.slug, p.visibility FROM {self.aliases_by_name} "
                "JOIN pages p ON p.source_id = aliases.source_id AND p.slug = aliases.slug WHERE aliases.source_id = ? "
                f"AND aliases.alias_norm IN ({','.join('?' * len(alias_norms))}) AND p.deleted_at IS NULL "
                "AND (? OR p.visibility = 'world')"
            )
            args += [source, *alias_norms, allow_private]
        for key, lo, hi in ranges:
            parts.append("SELECT * FROM (SELECT 'suffix' AS kind, ? AS key, slug, visibility FROM pages WHERE source_id = ? "
                         f"AND slug_rev >= ? AND slug_rev < ? AND {live} LIMIT 50)")
            args += [key, source, lo, hi, allow_private]
        return " UNION ALL ".join(parts), tuple(args)

    # One person's file: every folder is its owner's.
    def file_claims(self, source: str, slug: str, file_hash: str) -> str:
        return (
            "(SELECT sf.folder_id, sf.rel_path, sf.slug, sf.file_hash, sf.synced_at, f.root, f.host, 1 AS person, 1 AS mine "
            f"FROM sync_files sf JOIN sync_folders f ON f.id = sf.folder_id WHERE f.source_id = {source} "
            f"AND sf.slug = coalesce({slug}, sf.slug) AND sf.file_hash = coalesce({file_hash}, sf.file_hash) AND sf.slug <> '')"
        )

    def prefix_claims(self, source: str) -> str:
        return (f"(SELECT id AS folder_id, slug_prefix, host, 1 AS person, 1 AS mine FROM sync_folders "
                f"WHERE source_id = {source} AND mode = 'sync')")

    # -- pages -------------------------------------------------------------------------------------

    def text_match(self, query: SearchQuery) -> str:
        return fts5_match(query)

    def pages_ranked(self, snippets: bool, rows_of: int | None, allow_private: bool) -> str:
        index = _index(rows_of, allow_private)
        return (_PAGES_RANKED_SNIPPETS if snippets else _PAGES_RANKED).format(index=index)

    # Rank in the index alone and read only the best pages' rows: joining first reads every
    # matching page's row (its body, through overflow pages) before the sort and LIMIT. Most of the
    # best matches pass the filter (one source, live, world). The index's matches that do not pass
    # come after those that do, as empty rows, so the answer also says when the index matched
    # fewer than it was asked for (`matched`). Ties go by id, as in `pages_ranked`.
    def pages_ranked_in_index(self, rows_of: int | None, allow_private: bool) -> str | None:
        index = _index(rows_of, allow_private)
        return (
            "SELECT p.slug, p.title, p.body, NULL AS chunk, hits.rank AS rank, p.owner, hits.matched AS matched FROM "
            f"(SELECT rowid, rank, count(*) OVER () AS matched FROM (SELECT rowid, bm25({index}, 10.0, 1.0) AS rank "
            f"FROM {index} WHERE {index} MATCH ? ORDER BY rank, rowid LIMIT ?)) hits LEFT JOIN pages p "
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

    insert_fact = (
        "INSERT INTO facts (source_id, fact, fact_norm, kind, entity_slug, visibility, notability, provenance, "
        "source_session, context, confidence, valid_from, valid_until, created_at, project, search_terms, owner) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, coalesce(?12, ?14), ?13, ?14, ?15, ?16, "
        f"coalesce(?17, {OWNER}))"  # the owner as owner() writes it
    )
    # An INSERT cannot sit in a CTE here, and in process the checks one by one cost no round trip.
    remember_fact = None
    # Pinned: unpinned, the planner walks every fact of the source in valid_from order to
    # skip the sort, a full scan for entities with few facts (docs/architecture.md, "Query plans").
    facts_by_entity = "facts INDEXED BY facts_entity"

    def recorded_at(self, now: int) -> int:
        # This process's clock (one host shares the file), read after BEGIN IMMEDIATE took the lock.
        return max(now, now_ms())

    def inserted_fact_id(self, cursor: sqlite3.Cursor) -> int:
        # The rowid, as the driver keeps it: RETURNING would cost the hot write a row read.
        assert cursor.lastrowid is not None, "an INSERT sets lastrowid"
        return cursor.lastrowid

    def fact_params(self, values: tuple[object, ...]) -> tuple[object, ...] | dict[str, object]:
        return values  # by position: binding by name costs a remember more than the statement's numbers

    def ranked_terms(self, query: SearchQuery) -> tuple[object, ...] | None:
        return (fts5_match(query),) if query.terms else None

    def facts_ranked(self, where: str, terms: tuple[object, ...], world: bool) -> str:
        index = _facts_index(world)
        return (
            f"SELECT {FACT_COLS}, -bm25({index}) AS score FROM {index} JOIN facts ON facts.id = {index}.rowid "
            f"WHERE {index} MATCH ? AND {where} ORDER BY bm25({index}), id DESC LIMIT ?"
        )

    def facts_ranked_in_index(self, where: str, world: bool) -> str | None:
        index = _facts_index(world)
        return (
            f"SELECT {FACT_COLS}, -hits.score AS score, hits.matched AS matched FROM (SELECT rowid, score, "
            f"count(*) OVER () AS matched FROM (SELECT rowid, bm25({index}) AS score FROM {index} "
            f"WHERE {index} MATCH ? ORDER BY score, rowid DESC LIMIT ?)) hits JOIN facts ON facts.id = hits.rowid "
            f"WHERE {where} ORDER BY hits.score, id DESC LIMIT ?"
        )

    def facts_matching(
        self, query: SearchQuery, where: str, args: list[object], limit: int, world: bool
    ) -> tuple[str, list[object]] | None:
        index = _facts_index(world)
        return (
            f"SELECT {FACT_COLS_F} FROM {index} JOIN facts f ON f.id = {index}.rowid "
            f"WHERE {index} MATCH ? AND {where} ORDER BY bm25({index}) LIMIT ?",
            [fts5_match(query), *args, limit],
        )

    # -- browse ------------------------------------------------------------------------------------

    greatest_of = "max"  # the scalar max(): SQLite has no greatest()
    position_of = "instr"

    def text_table(self, name: str, column: str, values: list[str]) -> tuple[str, list[object]]:
        return f"{name}({column}) AS (VALUES {', '.join(['(?)'] * len(values))})", list(values)

    # -- vectors -----------------------------------------------------------------------------------


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


def _index(rows_of: int | None, allow_private: bool) -> str:
    """The keyword index a caller's ranking reads: the world view's (sqlite_schema.WORLD_INDEX) for a
    caller who may read no private page and no private row, so bm25's statistics and a page's words
    are what it can read; the whole index otherwise. FTS5 ranks by one index's statistics, so a
    caller who may read some private material (its own rows, or private pages through
    search.remote_private_pages) ranks over all of it."""
    return "pages_world_fts" if rows_of is None and not allow_private else "pages_fts"


def _facts_index(world: bool) -> str:
    """The facts index a ranking reads: for world facts only, the one that holds only them
    (sqlite_schema.WORLD_INDEX), so bm25's statistics count no private fact."""
    return "facts_world_fts" if world else "facts_fts"


_PAGES_RANKED = (
    "SELECT p.slug, p.title, p.body, {chunk} AS chunk, bm25({{index}}, 10.0, 1.0) AS rank, p.owner "
    "FROM {{index}} JOIN pages p ON p.id = {{index}}.rowid "
    "WHERE {{index}} MATCH ? AND p.source_id = ? AND p.deleted_at IS NULL AND (? OR p.visibility = 'world') "
    "ORDER BY rank, p.id LIMIT ?"
)
_PAGES_RANKED_SNIPPETS = _PAGES_RANKED.format(chunk="snippet({index}, 1, '', '', '…', 48)")
_PAGES_RANKED = _PAGES_RANKED.format(chunk="NULL")

SQLITE = SqliteDialect()

"""SQLite's spelling of the pieces `dialect.Dialect` names (FTS5, plain integers for owners, …)."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from memverbs.server.brain.dialect import Dialect
from memverbs.server.brain.facts_store import FACT_COLS, FACT_COLS_F
from memverbs.server.brain.sqlite_fts import fts5_match
from memverbs.server.errors import BrainError
from memverbs.server.people import OWNER
from memverbs.server.timeparse import now_ms

if TYPE_CHECKING:
    from memverbs.server.brain.base import SearchQuery


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

    def facts_ranked(self, where: str) -> str:
        return (
            f"SELECT {FACT_COLS}, -bm25(facts_fts) AS score FROM facts_fts JOIN facts ON facts.id = facts_fts.rowid "
            f"WHERE facts_fts MATCH ? AND {where} ORDER BY bm25(facts_fts), id DESC LIMIT ?"
        )

    def facts_ranked_in_index(self, where: str) -> str | None:
        return (
            f"SELECT {FACT_COLS}, -hits.score AS score, hits.matched AS matched FROM (SELECT rowid, score, "
            f"count(*) OVER () AS matched FROM (SELECT rowid, bm25(facts_fts) AS score FROM facts_fts "
            f"WHERE facts_fts MATCH ? ORDER BY score, rowid DESC LIMIT ?)) hits JOIN facts ON facts.id = hits.rowid "
            f"WHERE {where} ORDER BY hits.score, id DESC LIMIT ?"
        )

    def facts_matching(
        self, query: SearchQuery, where: str, args: list[object], limit: int
    ) -> tuple[str, list[object]] | None:
        return (
            f"SELECT {FACT_COLS_F} FROM facts_fts JOIN facts f ON f.id = facts_fts.rowid "
            f"WHERE facts_fts MATCH ? AND {where} ORDER BY bm25(facts_fts) LIMIT ?",
            [fts5_match(query), *args, limit],
        )

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


SQLITE = SqliteDialect()

"""SQLite's spelling of the pieces `dialect.Dialect` names (FTS5, plain integers for owners, …)."""

from __future__ import annotations

import sqlite3

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


SQLITE = SqliteDialect()

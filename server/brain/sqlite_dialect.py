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

    # -- sync --------------------------------------------------------------------------------------

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


SQLITE = SqliteDialect()

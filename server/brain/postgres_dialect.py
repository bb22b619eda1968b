"""Postgres's spelling of the pieces `dialect.Dialect` names (tsvector, row owners for row-level security, …)."""

from __future__ import annotations

import psycopg

from memverbs.server.brain.dialect import Dialect
from memverbs.server.errors import BrainError


class PostgresDialect(Dialect):
    name = "postgres"

    write_failures = (BrainError, psycopg.Error)

    # -- rows and owners ---------------------------------------------------------------------------

    def owner(self, mark: str = "?") -> str:
        # The call's person, else the person the session is (memverbs_person(): the login's, or the
        # role the session took for the caller), so row-level security sees the row as theirs.
        return f"coalesce({mark}::bigint, memverbs_person())"

    # -- tokens ------------------------------------------------------------------------------------

    # -- cursors -----------------------------------------------------------------------------------

    # -- projects ----------------------------------------------------------------------------------

    facts_by_project = "facts"  # the planner finds facts_project itself

    # -- sync --------------------------------------------------------------------------------------

    same = "IS NOT DISTINCT FROM"
    pages_by_change = "pages"  # the planner finds pages_changed itself

    # -- pages -------------------------------------------------------------------------------------

    # -- facts -------------------------------------------------------------------------------------

    # -- browse ------------------------------------------------------------------------------------

    greatest_of = "greatest"
    position_of = "strpos"

    def among(self, column: str, values: list[str]) -> tuple[str, list[object]]:
        return f"{column} = ANY(?)", [list(values)]  # one array parameter, however many values

    def text_table(self, name: str, column: str, values: list[str]) -> tuple[str, list[object]]:
        # "C": the bytewise order SQLite gives text, whatever the database's collation.
        return f'{name} AS (SELECT unnest(?::text[]) COLLATE "C" AS {column})', [list(values)]

    # -- vectors -----------------------------------------------------------------------------------

    def any_of(self, column: str, values: list) -> tuple[str, tuple]:
        # One array parameter: the statement's text is the same for any number of values.
        return f"{column} = ANY(?)", (list(values),)


POSTGRES = PostgresDialect()

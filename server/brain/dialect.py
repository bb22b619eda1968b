"""What the two SQL dialects say differently, named once: each backend's dialect supplies its own text.

The store concepts (`store.py`) write every statement both backends read the same way themselves;
a piece one backend spells its own way is a member of `Dialect`, and each backend's dialect
module gives it: `sqlite_dialect.SqliteDialect` and `postgres_dialect.PostgresDialect`. The pieces
are grouped by the store concept that asks for them. A piece is either a fixed statement or
fragment (a class attribute) or, where its text depends on the call, a method that writes it.
"""

from __future__ import annotations


class Dialect:
    name: str
    # What a best-effort write (bookkeeping a request must never fail on) lets go: the brain's own
    # error, or the driver's, as a statement inside a write may raise it.
    write_failures: tuple[type[Exception], ...]

    # -- rows and owners ---------------------------------------------------------------------------

    def owner(self, mark: str = "?") -> str:
        """The owner a new row is written under, given the call's person as the parameter `mark`."""
        raise NotImplementedError

    # -- tokens ------------------------------------------------------------------------------------

    # -- cursors -----------------------------------------------------------------------------------

    # -- projects ----------------------------------------------------------------------------------

    # The facts table as a project's reads name it in FROM: through the index on (source_id, project).
    facts_by_project: str

    # -- sync --------------------------------------------------------------------------------------

    # The comparison under which NULL equals NULL (a watch claim's compare-and-swap).
    same: str
    # The pages table as sync's "changed since" reads name it in FROM: through pages_changed.
    pages_by_change: str

    # -- pages -------------------------------------------------------------------------------------

    # -- facts -------------------------------------------------------------------------------------

    # -- browse ------------------------------------------------------------------------------------

    # -- vectors -----------------------------------------------------------------------------------

    def any_of(self, column: str, values: list) -> tuple[str, tuple]:
        """`column` is one of `values`: the condition, and the parameters it takes in its place."""
        raise NotImplementedError

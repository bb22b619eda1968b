"""What every store concept is written against: one Python class per concept, on either backend.

A store concept (`pages_store.PageStore`, `facts_store.FactStore`, `tokens_store.TokenStore`, …)
holds the logic, the row shaping and the rules once. It talks to storage through the members
below, which each backend's base class provides (`sqlite_base.SqliteBase`,
`postgres_base.PostgresBase`), and writes its SQL once, in the one form both backends read:

* **`?` placeholders.** SQLite runs the text as it is; the Postgres base rewrites each `?` to
  psycopg's `%s` (and a literal `%` to `%%`) once per distinct statement (`postgres_base.pg_sql`).
  A statement written for Postgres alone may still use `%s`: a statement without a `?` is passed
  through untouched, so pass a literal `%` as a parameter in a statement that has no `?`.
* **What both dialects share**: `INSERT … RETURNING`, `ON CONFLICT … DO UPDATE … excluded.`,
  `coalesce`, window functions, `LIMIT`/`OFFSET`.
* **What they do not** (full-text syntax, the owner a row is written under, casts, vector
  distance, per-backend locking) is asked of `self.dialect` (`dialect.Dialect`): each backend's
  dialect module (`sqlite_dialect.py`, `postgres_dialect.py`) supplies its own SQL for each such
  named piece, and a third backend is a third dialect, not a third copy of the stores.

A store inherits `Store`, so it is typed on its own; the members one store borrows from a sibling
are declared at the end (the composed brain's MRO puts the sibling's definition first).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager

from memverbs.server.errors import BrainError

TYPE_CHECKING = False  # typing's flag, without importing typing on a hook's start

if TYPE_CHECKING:
    from typing import Any, Protocol, TypeVar

    from memverbs.server.brain.base import FactFilter, Row
    from memverbs.server.brain.dialect import Dialect

    Params = tuple[Any, ...] | list[Any] | dict[str, Any]
    T = TypeVar("T")
else:
    Protocol = object  # the statement interfaces are the type checker's (as in base.py)
    Params = object
# last_used_at is for people, to the minute; a write per request would only add lock traffic.
TOUCH_EVERY_MS = 60_000


class Cursor(Protocol):
    """What a statement answers, on either driver."""

    @property
    def rowcount(self) -> int: ...
    def fetchone(self) -> Any: ...
    def fetchall(self) -> list[Any]: ...
    def __iter__(self) -> Iterator[Any]: ...


class Tx(Protocol):
    """A write transaction's connection (`Store.write()`): statements in the shared `?` form."""

    def execute(self, sql: str, params: Params = ..., /) -> Cursor: ...
    def executemany(self, sql: str, seq: Iterable[Params], /) -> Any: ...


def check_owner_acts() -> None:
    """Refuse to read or write every person's rows (a backup of the whole brain, its restore,
    `migrate`) in a call that acts for someone other than the brain's owner."""
    from memverbs.server import people  # noqa: PLC0415

    person = people.current().person
    if person not in (None, people.OWNER):
        raise BrainError(
            f"only the brain's owner reads or writes every person's rows; this call acts for person {person}",
            "Run it from the owner's CLI (the home whose brain.url logs in as the role that owns the brain).",
        )


def first(cursor: Cursor) -> Row:
    """The row a statement always answers (`INSERT … RETURNING`, an aggregate without GROUP BY)."""
    row = cursor.fetchone()
    assert row is not None, "the statement answers one row by construction"
    return row


class Store:
    """The members a backend's base class provides to every store concept."""

    dialect: Dialect
    backend: str

    if TYPE_CHECKING:
        def write(self) -> AbstractContextManager[Tx]: ...
        def query(self, sql: str, params: Params = ()) -> list[Row]: ...
        def one(self, sql: str, params: Params = ()) -> Row | None: ...
        # Inside a write: the statements sent from here as one batch, where the driver can.
        def pipelined(self, db: Any) -> AbstractContextManager[object]: ...
        # One consistent read of the whole brain (backups, migrate), and, inside it or a write, every
        # person's rows for the brain's owner (each base says how).
        def snapshot(self) -> AbstractContextManager[Any]: ...
        def whole_brain(self) -> AbstractContextManager[None]: ...

        # -- the hot writes' transactions (each backend's fastest; see its base) ------------
        def batched_write(self) -> AbstractContextManager[Tx]:
            """`write()` whose statements travel in batches where the driver can (Postgres's pipeline)."""
        def locked_statement(self, sql: str, params: Params = ()) -> Row:
            """One statement answering one row, as its own write transaction, lock and statement together."""
        def ahead(self, send: Callable[[], T]) -> Callable[[], T]:
            """A read inside `batched_write()`, sent now where statements travel in batches (it joins
            the next round trip), run when its answer is asked for where they do not."""

        # -- what a backend computes in this process instead of asking its SQL ---------------
        def facts_ranked_in_process(
            self, terms: Sequence[str], where: str, args: list[object], columns: str, *, limit: int,
            among: list[int] | None, world: bool = False,
        ) -> list[Row] | None:
            """facts_store's ranked arm (`columns` and `score` of the facts `where` allows that hold a
            term, best first) computed here (`world`: over the world facts alone); None: the dialect's
            ranking statements answer."""

        # -- members a store borrows from a sibling store ---------------------------------
        def fact_where(self, source: str, f: FactFilter) -> tuple[str, list[object]]: ...
        # people_store.PeopleStore (or the composed brain): the person the connection is
        def session_person(self) -> int: ...
        # vectors_store.VectorStore: a page write's chunks, a fact's vector and remember's dedup bucket
        def _write_chunks(self, db: Tx, source: str, page: int | str, title: str | None, body: str) -> None: ...
        def _store_fact_vectors(self, db: Tx, space_id: int, items: list[tuple[int, bytes]], now: int) -> None: ...
        def _bucket_vectors(
            self, db: Tx, source: str, entity_slug: str, visibility: str, space_id: int, now: int
        ) -> list[Row]: ...

    def touch_last_used(self, table: str, row_id: int, last_used_at: int | None, now: int) -> None:
        """Record that a credential's row (an access token, an OAuth client) was used: at most once a
        minute, best-effort (a busy brain skips the bookkeeping, never the authenticated request)."""
        if last_used_at is not None and now - last_used_at < TOUCH_EVERY_MS:
            return
        try:
            with self.write() as db:
                db.execute(f"UPDATE {table} SET last_used_at = ? WHERE id = ?", (now, row_id))
        except self.dialect.write_failures:
            pass

    def aggregate(self, sql: str, params: Params = ()) -> Row:
        """The one row of an aggregate query (`SELECT count(*) …`), which always answers one."""
        row = self.one(sql, params)
        assert row is not None, "an aggregate query without GROUP BY answers one row"
        return row

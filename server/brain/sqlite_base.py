"""What every SQLite store shares: the connection, its transactions and the storage-error translation.

`SqliteBrain` is composed of stores (`pages_store.PageStore`, `facts_store.FactStore`, …), one per
concern. Each store inherits `SqliteBase`, so it is typed on its own: the connection and `write()`,
`query()` and `one()` are here (the members one store borrows from a sibling are declared on
`store.Store`).
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext

from memverbs.server.brain.sqlite_dialect import SQLITE
from memverbs.server.brain.store import Params, Store, check_owner_acts, first
from memverbs.server.errors import BrainCorrupt, BrainError, BrainLocked

TYPE_CHECKING = False  # typing's flag, without importing typing on a hook's start
if TYPE_CHECKING:
    from pathlib import Path
    from typing import TypeVar

    T = TypeVar("T")


class SqliteBase(Store):
    dialect = SQLITE
    backend = "sqlite"

    def __init__(
        self, db: sqlite3.Connection, path: str | os.PathLike[str], *, busy_timeout_ms: int = 10_000,
        deadline: float | None = None
    ) -> None:
        self.db = db
        self.file = os.fspath(path)  # the brain's file as a string: a hook's start does without pathlib
        self.busy_timeout_ms = busy_timeout_ms
        self.deadline = deadline  # a time.monotonic() no lock is waited for past (a hook's); None: no such time
        self._busy_set = busy_timeout_ms  # the connection's busy timeout now (open() set it)

    @property
    def path(self) -> Path:
        """The brain's file as a Path (pathlib is loaded by the first caller that wants one)."""
        from pathlib import Path  # noqa: PLC0415

        return Path(self.file)

    def _bound_wait(self) -> None:
        """Give the next lock wait what is left before the deadline, if there is one.

        SQLite's busy wait is C code no signal interrupts, and a hook meets the write lock more
        than once when a write it may skip fails (delta's cursor, then its cleanup): each wait
        would start the whole busy timeout again. One PRAGMA, only on a brain with a deadline."""
        if self.deadline is not None:
            left = int((self.deadline - time.monotonic()) * 1000)
            wait = max(0, min(self.busy_timeout_ms, left))
            if wait != self._busy_set:  # far from the deadline the timeout stays the whole one: no statement
                self.db.execute(f"PRAGMA busy_timeout = {wait}")
                self._busy_set = wait

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: IMMEDIATE (queue for the write lock up front), commit or roll back."""
        try:
            self._bound_wait()
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.DatabaseError as exc:
            raise translate(exc, self.file) from exc
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        try:
            self.db.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            raise translate(exc, self.file) from exc

    # The hot writes' transactions, as the shared stores ask for them (store.Store): SQLite runs
    # in this process, so nothing is gained by batching statements and a write is `write()`.
    batched_write = write

    @contextmanager
    def snapshot(self) -> Iterator[sqlite3.Connection]:
        """One consistent read: every read inside the block sees the brain at one moment, whatever
        other connections commit meanwhile (a read transaction on WAL's snapshot), so a backup holds
        no row that points at a row it lacks. Nothing may be written inside it."""
        try:
            self._bound_wait()
            self.db.execute("BEGIN")
            self.db.execute("SELECT 1 FROM sqlite_master LIMIT 1")  # the snapshot is taken at the first read
        except sqlite3.DatabaseError as exc:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            raise translate(exc, self.file) from exc
        try:
            yield self.db
        finally:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")

    @contextmanager
    def whole_brain(self) -> Iterator[None]:
        """Every person's rows, for the brain's owner: on SQLite the file's user, whose connection
        reads every row already (docs/postgres.md, "People and privacy"); a call acting for another
        person is refused."""
        check_owner_acts()
        yield

    def locked_statement(self, sql: str, params: Params = ()) -> sqlite3.Row:
        """One statement answering one row, as its own write transaction (BEGIN IMMEDIATE takes the lock)."""
        with self.write() as db:
            row: sqlite3.Row = first(db.execute(sql, params))
            return row

    @staticmethod
    def ahead(send: Callable[[], T]) -> Callable[[], T]:
        """A read inside a write, run only when its answer is asked for: in process there is no
        round trip to share, and a check an earlier one made moot then costs nothing."""
        return send

    def facts_ranked_in_process(
        self, terms: Sequence[str], where: str, args: list[object], columns: str, *, limit: int,
        among: list[int] | None, world: bool = False,
    ) -> list[sqlite3.Row] | None:
        """FTS5's bm25 ranking over postings this process keeps per brain file (sqlite_fact_rank.py)."""
        # Imported by the first ranked recall: its locks and arrays are no part of a hook's start.
        from memverbs.server.brain.sqlite_fact_rank import rank_in_process  # noqa: PLC0415

        return rank_in_process(self, self.file, self.db, terms, where, args, columns, limit=limit, among=among, world=world)

    def pipelined(self, db: sqlite3.Connection) -> AbstractContextManager[object]:
        """The statements a write sends from here as one batch where the driver can (Postgres's
        pipeline): SQLite runs each in process as it comes, so there is nothing to batch."""
        return nullcontext()

    def query(self, sql: str, params: Params = ()) -> list[sqlite3.Row]:
        try:
            self._bound_wait()  # a reader waits too, on a rollback-journal brain's exclusive lock
            return self.db.execute(sql, params).fetchall()
        except sqlite3.DatabaseError as exc:
            raise translate(exc, self.file) from exc

    def one(self, sql: str, params: Params = ()) -> sqlite3.Row | None:
        try:
            self._bound_wait()
            row: sqlite3.Row | None = self.db.execute(sql, params).fetchone()
        except sqlite3.DatabaseError as exc:
            raise translate(exc, self.file) from exc
        return row


_LOCKED = {sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED}
_CORRUPT = {sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB}
_UNWRITABLE = {sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM}


def translate(exc: sqlite3.Error, path: str | os.PathLike[str]) -> BrainError:
    """The storage failure as memverbs's own type, decided by SQLite's result code (its primary
    code: the low byte), never by the message's words. An error without a code (one the sqlite3
    module raises itself, e.g. on a closed connection) is a plain BrainError."""
    text = str(exc)
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    if primary in _LOCKED:
        return BrainLocked(
            # SQLite cannot say who holds the file's write lock: another process, or another
            # connection of this one (an HTTP server's worker threads each have their own).
            f"brain {path} is locked: another connection (of this process or another) held its write lock past "
            f"brain.busy_timeout_ms ({text})",
            "A long write holds the brain; retry in a moment. If it persists, find the stuck process (`fuser` on "
            "the brain file) and stop it.",
        )
    if primary in _CORRUPT:
        return BrainCorrupt(
            f"brain {path} is corrupt ({text})",
            f"Move {path} aside and restore a backup, or run `memverbs init` for a fresh brain; "
            "`sqlite3 <file> .recover` can salvage rows.",
        )
    if primary in _UNWRITABLE:
        return BrainError(f"brain {path} cannot be written ({text})", f"Check the permissions of {path} and its folder.")
    return BrainError(f"brain {path} failed: {text}", "Run `memverbs doctor` for a diagnosis.")

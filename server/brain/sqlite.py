"""SqliteBrain: the embedded default brain, one file under `$MEMVERBS_HOME`.

Several processes share one brain (the stdio servers of different harnesses,
hooks, the CLI): WAL lets readers run beside a writer, every write transaction
starts with BEGIN IMMEDIATE so two writers queue on the busy timeout instead of
deadlocking on a lock upgrade, and a write is committed before it is
acknowledged. Storage errors become BrainError here, once, with the fix.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from memverbs.server.brain import migrations
from memverbs.server.brain.sqlite_browse import BrowseStore
from memverbs.server.brain.sqlite_facts import FactStore
from memverbs.server.brain.sqlite_pages import PageStore
from memverbs.server.brain.sqlite_sessions import CursorStore
from memverbs.server.brain.sqlite_sync import SyncStore
from memverbs.server.brain.sqlite_tokens import TokenStore
from memverbs.server.brain.sqlite_vectors import VectorStore
from memverbs.server.errors import BrainCorrupt, BrainError, BrainLocked, BrainMissing


class SqliteBrain(PageStore, FactStore, CursorStore, TokenStore, VectorStore, BrowseStore, SyncStore):
    backend = "sqlite"

    def __init__(self, db: sqlite3.Connection, path: Path) -> None:
        self.db = db
        self.path = path

    @classmethod
    def open(cls, path: Path, *, create: bool = False, busy_timeout_ms: int = 10_000) -> SqliteBrain:
        """Open (and with `create`, initialise) the brain at `path`, schema current or refused."""
        if not create and not path.is_file():
            raise BrainMissing(
                f"no brain at {path}",
                "Run `memverbs init` to create one (or point MEMVERBS_HOME at the home that has it).",
            )
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(path, isolation_level=None, timeout=busy_timeout_ms / 1000, check_same_thread=False)
        except (sqlite3.Error, OSError) as exc:
            raise BrainError(f"cannot open brain {path}: {exc}", f"Check that {path.parent} is writable.") from exc
        try:
            db.row_factory = sqlite3.Row
            db.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
            if db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")  # durable across process crashes in WAL mode
            db.execute("PRAGMA foreign_keys = ON")
            if create:
                migrations.migrate(db, path)
            else:
                migrations.check_not_future(db, path)
                waiting = migrations.pending(db)
                if waiting:
                    migrations.migrate(db, path)
        except sqlite3.DatabaseError as exc:
            db.close()
            raise translate(exc, path) from exc
        return cls(db, path)

    @classmethod
    def open_read_only(cls, path: Path) -> SqliteBrain:
        """A look without writing anything (doctor): no migrations, no journal-mode change."""
        try:
            db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5, check_same_thread=False)
        except sqlite3.Error as exc:
            raise translate(exc, path) from exc
        db.row_factory = sqlite3.Row
        return cls(db, path)

    def close(self) -> None:
        self.db.close()

    def describe(self) -> str:
        return str(self.path)

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: IMMEDIATE (queue for the write lock up front), commit or roll back."""
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.DatabaseError as exc:
            raise translate(exc, self.path) from exc
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
            raise translate(exc, self.path) from exc

    def query(self, sql: str, params: tuple | dict = ()) -> list[sqlite3.Row]:
        try:
            return self.db.execute(sql, params).fetchall()
        except sqlite3.DatabaseError as exc:
            raise translate(exc, self.path) from exc

    def one(self, sql: str, params: tuple | dict = ()):
        try:
            return self.db.execute(sql, params).fetchone()
        except sqlite3.DatabaseError as exc:
            raise translate(exc, self.path) from exc

    # -- health, for doctor -------------------------------------------------

    def schema_status(self) -> dict:
        try:
            return {
                "applied": migrations.applied(self.db),
                "pending": [m.name for m in migrations.pending(self.db)],
                "unknown": migrations.unknown(self.db),
            }
        except sqlite3.DatabaseError as exc:
            raise translate(exc, self.path) from exc

    def integrity(self) -> str:
        return self.db.execute("PRAGMA quick_check").fetchone()[0]

    def counts(self, source_id: str) -> dict:
        pages = self.one("SELECT count(*) FROM pages WHERE source_id = ? AND deleted_at IS NULL", (source_id,))[0]
        facts = self.one("SELECT count(*) FROM facts WHERE source_id = ?", (source_id,))[0]
        return {"pages": pages, "facts": facts}


_LOCKED = {sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED}
_CORRUPT = {sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB}
_UNWRITABLE = {sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM}


def translate(exc: sqlite3.DatabaseError, path: Path) -> BrainError:
    """The storage failure as memverbs's own type, decided by SQLite's result code (its primary
    code: the low byte), never by the message's words. An error without a code (one the sqlite3
    module raises itself, e.g. on a closed connection) is a plain BrainError."""
    text = str(exc)
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    if primary in _LOCKED:
        return BrainLocked(
            f"brain {path} is locked by another process ({text})",
            "Another memverbs process holds a long write; retry in a moment. If it persists, find the stuck "
            "process (`fuser` on the brain file) and stop it.",
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

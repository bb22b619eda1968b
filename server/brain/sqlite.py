"""SqliteBrain: the embedded default brain, one file under `$MEMVERBS_HOME`.

Several processes share one brain (the stdio servers of different harnesses,
hooks, the CLI): WAL lets readers run beside a writer, every write transaction
starts with BEGIN IMMEDIATE so two writers queue on the busy timeout instead of
deadlocking on a lock upgrade, and a write is committed before it is
acknowledged. Storage errors become BrainError once, with the fix (`sqlite_base.translate`).
"""

from __future__ import annotations

import os
import sqlite3

from memverbs.server.brain import sqlite_migrate, sqlite_schema
from memverbs.server.brain.browse_store import BrowseStore
from memverbs.server.brain.cursors_store import CursorStore
from memverbs.server.brain.facts_store import FactStore
from memverbs.server.brain.health_store import HealthStore
from memverbs.server.brain.names_store import NameStore
from memverbs.server.brain.oauth_store import OAuthStore
from memverbs.server.brain.pages_store import PageStore
from memverbs.server.brain.people_store import PeopleStore
from memverbs.server.brain.projects_store import ProjectStore
from memverbs.server.brain.sqlite_base import translate
from memverbs.server.brain.sqlite_vector_index import SqliteVectors
from memverbs.server.brain.sync_store import SyncStore
from memverbs.server.brain.tokens_store import TokenStore
from memverbs.server.errors import BrainError, BrainMissing

TYPE_CHECKING = False  # typing's flag, without importing typing on a hook's start
if TYPE_CHECKING:
    pass


class SqliteBrain(PageStore, NameStore, FactStore, ProjectStore, CursorStore, TokenStore, SqliteVectors, BrowseStore, SyncStore, OAuthStore,
                  PeopleStore, HealthStore):
    @classmethod
    def open(
        cls, path: str | os.PathLike[str], *, create: bool = False, busy_timeout_ms: int = 10_000,
        deadline: float | None = None
    ) -> SqliteBrain:
        """Open (and with `create`, initialise) the brain at `path`, schema current or refused; with a
        `deadline` (a time.monotonic()), no later lock wait outlives it."""
        folder = os.path.dirname(os.fspath(path)) or "."  # os.path, not pathlib: a hook's every start opens it
        if not create and not os.path.isfile(path):
            raise BrainMissing(
                f"no brain at {path}",
                "Run `memverbs init` to create one (or point MEMVERBS_HOME at the home that has it).",
            )
        try:
            os.makedirs(folder, exist_ok=True)
            db = sqlite3.connect(path, isolation_level=None, timeout=busy_timeout_ms / 1000, check_same_thread=False)
        except (sqlite3.Error, OSError) as exc:
            raise BrainError(f"cannot open brain {path}: {exc}", f"Check that {folder} is writable.") from exc
        try:
            db.row_factory = sqlite3.Row
            sqlite_schema.register(db)  # before any step or write: the pages' triggers call it
            db.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
            if db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")  # durable across process crashes in WAL mode
            # Schema steps run before foreign keys are enforced, as SQLite's way to rebuild a table asks
            # (a rebuilt parent table would otherwise take its children's rows down with the old one).
            if create:
                sqlite_migrate.migrate(db, path)
            elif not sqlite_migrate.current(db):  # one read: every open pays for it (a hook's too)
                from memverbs.server.brain import migrations  # noqa: PLC0415 - a brain that is not current

                done = sqlite_migrate.applied(db)
                migrations.check_not_future(done, path)
                if migrations.pending(done):
                    sqlite_migrate.migrate(db, path)
            db.execute("PRAGMA foreign_keys = ON")
        except sqlite3.DatabaseError as exc:
            db.close()
            raise translate(exc, path) from exc
        return cls(db, path, busy_timeout_ms=busy_timeout_ms, deadline=deadline)

    @classmethod
    def open_read_only(cls, path: str | os.PathLike[str]) -> SqliteBrain:
        """A look without writing anything (doctor): no migrations, no journal-mode change."""
        try:
            db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5, check_same_thread=False)
        except sqlite3.Error as exc:
            raise translate(exc, path) from exc
        db.row_factory = sqlite3.Row
        sqlite_schema.register(db)  # an untrusted caller's substring search reads the world text through it
        return cls(db, path)

    def close(self) -> None:
        self.db.close()

    def describe(self) -> str:
        return str(self.path)

    # -- health, for doctor -------------------------------------------------

    def applied_steps(self) -> list[str]:
        try:
            return sqlite_migrate.applied(self.db)
        except sqlite3.DatabaseError as exc:
            raise translate(exc, self.file) from exc

    def integrity(self) -> str:
        return self.db.execute("PRAGMA quick_check").fetchone()[0]

    def brain_bytes(self) -> int:
        """The file and its write-ahead log: what the brain occupies on disk."""
        return sum(p.stat().st_size for p in (self.path, self.path.with_name(self.path.name + "-wal")) if p.exists())


"""PostgresBrain: one brain shared by many memverbs processes and hosts, on a Postgres server.

The guarantees are SQLite's, kept the same way:

* **Writers queue.** Every write transaction first takes one transaction-level
  advisory lock (`pg_advisory_xact_lock`), the counterpart of SQLite's
  `BEGIN IMMEDIATE`: writes are serialised across every process and host on
  the brain, so remember's dedup check and its insert cannot interleave with
  another's, and ids and recording times follow commit order (delta's keyset
  cursors, and the vector index's "ids above the last seen" tail, rely on it).
  Reads never wait for it.
* **A write is committed before it is acknowledged** (the transaction commits
  before the method returns).
* **Storage errors become BrainError here, once, with the fix.** A server that
  is down, restarting or unreachable is `unavailable` (dispatch's envelope),
  never `internal`; the pool drops broken connections and reconnects, so the
  brain recovers by itself when the server is back. A password is never put in
  a message.

Connections come from a psycopg-pool pool that is created on the first query,
not at open, and is shared by every brain object of a process on the same URL
(the HTTP server opens one brain per worker thread). A hook asks for a pool
of one.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from memverbs.server.brain import postgres_migrations as pgmig
from memverbs.server.brain.factory import redact
from memverbs.server.brain.postgres_browse import BrowseStore
from memverbs.server.brain.postgres_facts import FactStore
from memverbs.server.brain.postgres_pages import PageStore
from memverbs.server.brain.postgres_rows import row_factory
from memverbs.server.brain.postgres_sessions import CursorStore
from memverbs.server.brain.postgres_sync import SyncStore
from memverbs.server.brain.postgres_tokens import TokenStore
from memverbs.server.brain.postgres_vectors import VectorStore
from memverbs.server.errors import BrainCorrupt, BrainError, BrainLocked, BrainMissing, invalid
from memverbs.server.timeparse import now_ms

WRITE_LOCK = 0x6D656D76  # "memv": the advisory lock every write transaction holds
MIGRATE_LOCK = WRITE_LOCK + 1
CONNECT_TIMEOUT_S = 5
POOL_WAIT_S = 1.0
IDLE_CHECK_S = 2.0


_last_used: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _check_if_idle(conn: psycopg.Connection) -> None:
    """The pool's check on hand-out: a round trip only for a connection idle long enough that the
    server may have gone away meanwhile (a check on every call would double the cost of a query)."""
    if time.monotonic() - _last_used.get(conn, 0.0) > IDLE_CHECK_S:
        ConnectionPool.check_connection(conn)


class _SharedPool:
    """A process's pool for one URL and size, closed when the last brain using it closes."""

    _all: dict[tuple[str, int], _SharedPool] = {}
    _lock = threading.Lock()

    def __init__(self, url: str, size: int, timeout_s: float, password: str | None = None) -> None:
        self.key = (url, size)
        self.users = 0
        self.pool = ConnectionPool(
            url,
            min_size=1,
            max_size=size,
            timeout=timeout_s,
            open=False,
            check=_check_if_idle,  # a connection the server dropped is replaced, not handed out
            kwargs={"autocommit": True, "row_factory": row_factory, "connect_timeout": CONNECT_TIMEOUT_S,
                    **_password_kwarg(password)},
            name="memverbs-brain",
        )

    @classmethod
    def acquire(cls, url: str, size: int, timeout_s: float, password: str | None = None) -> _SharedPool:
        with cls._lock:
            shared = cls._all.get((url, size))
            if shared is None:
                shared = cls._all[(url, size)] = cls(url, size, timeout_s, password)
                shared.pool.open(wait=False)
            shared.users += 1
            return shared

    def release(self) -> None:
        with self._lock:
            self.users -= 1
            if self.users > 0:
                return
            self._all.pop(self.key, None)
        self.pool.close(timeout=1)


class _Retry(Exception):
    """A pooled connection turned out dead before the read ran: take another one."""


class PostgresBrain(PageStore, FactStore, CursorStore, TokenStore, VectorStore, BrowseStore, SyncStore):
    backend = "postgres"

    def __init__(
        self, url: str, *, pool_size: int = 4, busy_timeout_ms: int = 10_000, pgvector: bool = False,
        password: str | None = None,
    ) -> None:
        self.url = url
        self.where = redact(url)
        self._password = password  # from the OS keyring (password.py), else None: libpq finds it
        self.pool_size = pool_size
        self.busy_timeout_ms = busy_timeout_ms
        self.pgvector = pgvector
        self._shared: _SharedPool | None = None
        self._lock = threading.Lock()

    # -- opening ---------------------------------------------------------------

    @classmethod
    def open(
        cls, url: str, *, create: bool = False, read_only: bool = False, busy_timeout_ms: int = 10_000, pool_size: int = 4,
        password: str | None = None,
    ) -> PostgresBrain:
        """Check (with `create`, initialise) the schema over one short connection; the pool waits for the first query.

        `password` is the one memverbs keeps in the OS keyring for this brain; without it libpq
        looks where it always does (the URL, PGPASSWORD, ~/.pgpass)."""
        where = redact(url)
        try:
            conn = psycopg.connect(
                url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S, row_factory=row_factory, **_password_kwarg(password)
            )
        except psycopg.Error as exc:
            raise translate(exc, url, password) from exc
        try:
            done = set(applied(conn))
            if not done and not create and not read_only:
                raise BrainMissing(
                    f"no brain in the database {where}",
                    "Run `memverbs init` to create one there (or point brain.url at the database that has it).",
                )
            check_not_future(done, where)
            if not read_only and (create or any(m.name not in done for m in pgmig.MIGRATIONS)):
                migrate(conn, where)
            pgvector = _has_pgvector(conn)
        except psycopg.Error as exc:
            raise translate(exc, url, password) from exc
        finally:
            conn.close()
        return cls(url, pool_size=pool_size, busy_timeout_ms=busy_timeout_ms, pgvector=pgvector, password=password)

    def close(self) -> None:
        with self._lock:
            shared, self._shared = self._shared, None
        if shared is not None:
            shared.release()

    def describe(self) -> str:
        return self.where

    def _pool(self) -> ConnectionPool:
        with self._lock:
            if self._shared is None:
                self._shared = _SharedPool.acquire(
                    self.url, self.pool_size, max(self.busy_timeout_ms, 1_000) / 1000, self._password
                )
            return self._shared.pool

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection]:
        """A pooled connection (autocommit), storage errors translated.

        When the pool has none to give within POOL_WAIT_S (every connection busy, or the server was
        away and the pool is still backing off), the call opens one connection of its own: it
        fails at once with the real reason while the server is down, and works the moment the
        server is back, so no call waits out the pool's reconnect schedule.
        """
        pool = self._pool()
        try:
            conn = pool.getconn(timeout=min(self.busy_timeout_ms / 1000, POOL_WAIT_S))
        except PoolTimeout:
            conn = None
        except psycopg.Error as exc:
            raise translate(exc, self.url, self._password) from exc
        if conn is None:
            try:
                conn = psycopg.connect(
                    self.url, autocommit=True, row_factory=row_factory, connect_timeout=CONNECT_TIMEOUT_S,
                    **_password_kwarg(self._password),
                )
            except psycopg.Error as exc:
                raise translate(exc, self.url, self._password) from exc
            release = conn.close
        else:
            def release() -> None:
                _last_used[conn] = time.monotonic()
                pool.putconn(conn)

        try:
            yield conn
        except psycopg.DataError as exc:
            if "NUL (0x00)" in str(exc):
                # Postgres text cannot hold U+0000 (SQLite's can): the caller's text, not the brain, is the problem.
                raise invalid(
                    "The text holds a NUL character (U+0000), which a Postgres brain cannot store.",
                    "Remove the NUL characters from the text and retry; nothing was written.",
                ) from exc
            raise translate(exc, self.url, self._password) from exc
        except psycopg.Error as exc:
            raise translate(exc, self.url, self._password) from exc
        finally:
            release()

    # -- transactions ----------------------------------------------------------

    @contextmanager
    def write(self) -> Iterator[psycopg.Connection]:
        """One write transaction, serialised with every other writer on the brain; commit or roll back."""
        with self.connection() as conn, conn.transaction():
            # A writer waits for the lock as long as SQLite's busy timeout, then gives up (`unavailable`).
            conn.execute(f"SET LOCAL lock_timeout = {int(self.busy_timeout_ms)}")
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
            yield conn

    @staticmethod
    def clock(db: psycopg.Connection) -> int:
        """The database server's time in epoch ms, read inside a write transaction.

        Facts' recording times (delta's fact cursor compares them) are stamped with it under the
        write lock, so hosts whose clocks lag still stamp in commit order.
        """
        return db.execute("SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint").fetchone()[0]

    def query(self, sql: str, params: tuple | dict = ()) -> list:
        return self._read(lambda conn: conn.execute(sql, params).fetchall())

    def one(self, sql: str, params: tuple | dict = ()):
        return self._read(lambda conn: conn.execute(sql, params).fetchone())

    def _read(self, run):
        """A read, tried once more on a fresh connection if the server had dropped the pooled one
        (reads are idempotent; the pool discards the broken connection)."""
        for attempt in (1, 2):
            try:
                with self.connection() as conn:
                    try:
                        return run(conn)
                    except psycopg.OperationalError:
                        if attempt == 1 and conn.broken:
                            raise _Retry from None
                        raise
            except _Retry:
                continue
        raise AssertionError("unreachable")

    # -- health, for doctor ----------------------------------------------------

    def schema_status(self) -> dict:
        with self.connection() as conn:
            done = applied(conn)
        known = {m.name for m in pgmig.MIGRATIONS}
        return {
            "applied": done,
            "pending": [m.name for m in pgmig.MIGRATIONS if m.name not in done],
            "unknown": [n for n in done if n not in known],
        }

    def integrity(self) -> str:
        self.one("SELECT 1")
        return "ok"

    def counts(self, source_id: str) -> dict:
        pages = self.one("SELECT count(*) FROM pages WHERE source_id = %s AND deleted_at IS NULL", (source_id,))[0]
        facts = self.one("SELECT count(*) FROM facts WHERE source_id = %s", (source_id,))[0]
        return {"pages": pages, "facts": facts}

    def server_info(self) -> dict:
        """For doctor: the server version and the extensions the brain uses."""
        row = self.one("SELECT current_setting('server_version') AS version, current_database() AS db")
        ext = self.query("SELECT extname, extversion FROM pg_extension ORDER BY extname")
        return {"version": row["version"], "database": row["db"], "extensions": {r[0]: r[1] for r in ext}}


# -- migrations: the SQLite registry's rules, on Postgres ------------------------------


def applied(conn: psycopg.Connection) -> list[str]:
    if conn.execute("SELECT to_regclass('_migrations')").fetchone()[0] is None:
        return []
    return [r[0] for r in conn.execute("SELECT name FROM _migrations ORDER BY name")]


def check_not_future(done: set[str] | list[str], where: str) -> None:
    known = {m.name for m in pgmig.MIGRATIONS}
    newer = sorted(n for n in done if n not in known)
    if newer:
        raise BrainError(
            f"brain {where} has schema steps this memverbs does not know ({', '.join(newer)}): "
            "it was written by a newer memverbs",
            "Upgrade memverbs (pip install -U memverbs) to use this brain; nothing in it was changed.",
        )


def migrate(conn: psycopg.Connection, where: str) -> list[str]:
    """Apply pending steps, each in one transaction with its record row; returns the names applied here."""
    ran: list[str] = []
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATE_LOCK,))
        conn.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at BIGINT NOT NULL)")
    for step in pgmig.MIGRATIONS:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATE_LOCK,))  # migrators queue, then see each other's steps
            done = set(applied(conn))
            check_not_future(done, where)
            if step.name in done:
                continue
            conn.execute("INSERT INTO _migrations (name, applied_at) VALUES (%s, %s)", (step.name, now_ms()))
            conn.execute(step.sql)
        ran.append(step.name)
    _enable_pgvector(conn)
    return ran


def _enable_pgvector(conn: psycopg.Connection) -> None:
    """Use pgvector when the server has it: the extension (if this role may create it) and the column."""
    available = conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone()
    if available is None:
        return
    try:
        with conn.transaction():
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except psycopg.errors.InsufficientPrivilege:
        return  # an operator can `CREATE EXTENSION vector` later; until then the exact scan serves
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
        conn.execute(pgmig.PGVECTOR_COLUMN)
    _backfill_embeddings(conn)


def _backfill_embeddings(conn: psycopg.Connection, batch: int = 1000) -> None:
    """Vectors stored before pgvector was installed get their `embedding` and their space its HNSW index."""
    from memverbs.server.brain.postgres_vectors import hnsw_index_sql, vector_literal  # noqa: PLC0415

    while True:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
            rows = conn.execute(
                "SELECT id, vector FROM text_vectors WHERE embedding IS NULL ORDER BY id LIMIT %s", (batch,)
            ).fetchall()
            if not rows:
                break
            with conn.cursor() as cur:
                cur.executemany(
                    "UPDATE text_vectors SET embedding = %s::vector WHERE id = %s",
                    [(vector_literal(bytes(r[1])), r[0]) for r in rows],
                )
    with conn.transaction():
        for space_id, dims in conn.execute("SELECT id, dims FROM vector_spaces").fetchall():
            conn.execute(hnsw_index_sql(space_id, dims))


def _has_pgvector(conn: psycopg.Connection) -> bool:
    row = conn.execute(
        "SELECT 1 FROM information_schema.columns WHERE table_name = 'text_vectors' AND column_name = 'embedding' "
        "AND table_schema = current_schema()"
    ).fetchone()
    return row is not None


# -- errors ------------------------------------------------------------------------------


def _password_kwarg(password: str | None) -> dict:
    """libpq's `password` parameter, which beats PGPASSWORD and ~/.pgpass; nothing when None."""
    return {"password": password} if password else {}


def _clean(exc: BaseException, url: str, keyring_password: str | None = None) -> str:
    """The error's text, with the URL's password (if any) and the keyring's never in it."""
    from urllib.parse import unquote, urlsplit  # noqa: PLC0415

    text = str(exc).strip().replace("\n", " ")
    try:
        password = urlsplit(url).password
    except ValueError:
        password = None
    for secret in filter(None, {password, unquote(password) if password else None, keyring_password}):
        text = text.replace(secret, "***")
    return text.replace(url, redact(url))


def translate(exc: psycopg.Error, url: str, keyring_password: str | None = None) -> BrainError:
    where = redact(url)
    text = _clean(exc, url, keyring_password)
    state = getattr(exc, "sqlstate", None) or ""
    if state in ("28P01", "28000") or "password authentication failed" in text or "no password supplied" in text:
        if keyring_password:
            fix = ("The password memverbs keeps in the OS keyring for this brain was refused: store the right one with "
                   "`memverbs brain-password set` (docs/postgres.md).")
        else:
            fix = ("Check the user in brain.url and its password: `memverbs brain-password set` keeps it in the OS "
                   "keyring, or give it in PGPASSWORD or ~/.pgpass (docs/postgres.md).")
        return BrainError(f"the Postgres server refused the credentials for {where} ({text})", fix)
    if state == "3D000":
        return BrainError(
            f"the database in {where} does not exist ({text})",
            "Create it (`createdb`) and run `memverbs init`, or correct brain.url.",
        )
    if state == "42501":
        return BrainError(
            f"the role in {where} may not do this ({text})",
            "Grant the role ownership of the brain's schema (docs/postgres.md).",
        )
    if state in ("40P01", "55P03"):  # deadlock detected, lock not available (lock_timeout)
        return BrainLocked(
            f"brain {where} is locked by another process ({text})",
            "Another memverbs process holds a long write; retry in a moment. If it persists, find the stuck "
            "session in pg_stat_activity and end it (pg_terminate_backend).",
        )
    if state in ("XX001", "XX002"):  # data_corrupted, index_corrupted: the server found damaged pages
        return BrainCorrupt(
            f"brain {where} is corrupt: the Postgres server reports damaged data ({text})",
            "For a damaged index, REINDEX the table the server names; for damaged table data, restore the "
            "database from a backup (pg_dump or the provider's snapshots). The server's log has the detail.",
        )
    if isinstance(exc, psycopg.OperationalError) or state.startswith(("08", "57P")):
        return BrainError(
            f"brain {where} is unavailable ({text})",
            "Check that the Postgres server is running and reachable (`pg_isready`), and that brain.url is right; "
            "memverbs reconnects by itself when it is back.",
        )
    return BrainError(f"brain {where} failed: {text}", "Run `memverbs doctor` for a diagnosis.")

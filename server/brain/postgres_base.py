"""What every Postgres store shares: the pooled connection, its transactions and the error translation.

`PostgresBrain` is composed of stores (`pages_store.PageStore`, `facts_store.FactStore`, …),
one per concern. Each store inherits `PostgresBase`, so it is typed on its own: the pool,
`connection()`, `write()`, `query()` and `one()` are here (the members one store borrows from a
sibling are declared on `store.Store`).
"""

from __future__ import annotations

import functools
import os
import re
import socket
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext, suppress
from typing import Any, ClassVar, Self, TypeVar

import psycopg
from psycopg import pq
from psycopg_pool import ConnectionPool, PoolTimeout

from memverbs.server import people
from memverbs.server.brain import waits
from memverbs.server.brain.location import redact
from memverbs.server.brain.postgres_dialect import POSTGRES
from memverbs.server.brain.postgres_rows import Row, row_factory
from memverbs.server.brain.store import Params, Store, check_owner_acts, first
from memverbs.server.errors import BrainCorrupt, BrainError, BrainLocked, invalid

T = TypeVar("T")


@functools.lru_cache(maxsize=4096)
def pg_sql(sql: str) -> str:
    """A statement in the stores' shared form (`?` placeholders, store.py) in psycopg's (`%s`).

    A statement without a `?` is psycopg's already (the Postgres-only ones) and passes untouched;
    in one with a `?`, a literal `%` is doubled so psycopg reads it as a `%`. Cached: the stores'
    statements are constants, so a call after the first is one dictionary lookup."""
    if "?" not in sql:
        return sql
    return sql.replace("%", "%%").replace("?", "%s")


class BrainCursor(psycopg.Cursor[Row]):
    """A cursor that reads the stores' shared statement form (`pg_sql`)."""

    def execute(
        self, query: Any, params: psycopg.abc.Params | None = None, *, prepare: bool | None = None,
        binary: bool | None = None,
    ) -> Self:
        if isinstance(query, str):
            query = pg_sql(query)
        return super().execute(query, params, prepare=prepare, binary=binary)

    def executemany(
        self, query: Any, params_seq: Iterable[psycopg.abc.Params], *, returning: bool = False
    ) -> None:
        if isinstance(query, str):
            query = pg_sql(query)
        super().executemany(query, params_seq, returning=returning)


class BrainConnection(psycopg.Connection[Row]):
    """Every connection of a Postgres brain: its rows read like sqlite3.Row (postgres_rows), its
    statements may be in the stores' shared form (`BrainCursor`), and like sqlite3's it runs a
    statement over many parameter rows itself (`executemany`), so a store's write reads the same
    on both backends."""

    def executemany(self, query: psycopg.abc.Query, params_seq: Iterable[psycopg.abc.Params]) -> BrainCursor:
        cursor = self.cursor()
        cursor.executemany(query, params_seq)
        return cursor  # type: ignore[return-value]  # cursor_factory is BrainCursor (CONNECTION_KWARGS)


# What every connection of a brain is opened with (the pool's, an overflow one, open()'s check).
CONNECTION_KWARGS: dict[str, object] = {"autocommit": True, "row_factory": row_factory, "cursor_factory": BrainCursor}
Conn = BrainConnection

WRITE_LOCK = 0x6D656D76  # "memv": the advisory lock every write transaction holds
# The lock, and how long the server waited for it: clock_timestamp() is read after the CTE has
# produced its row, i.e. once the lock is granted; statement_timestamp() is when the statement began.
_TAKE_WRITE_LOCK = (
    "WITH granted AS MATERIALIZED (SELECT pg_advisory_xact_lock(%s)) "
    "SELECT (extract(epoch FROM clock_timestamp() - statement_timestamp()) * 1000)::float8 FROM granted"
)
# Who holds the write lock now (a bigint advisory key is classid = high half, objid = low half, objsubid 1).
_LOCK_HOLDER = (
    "SELECT a.pid, a.application_name, a.client_addr::text AS addr, a.state, "
    "extract(epoch FROM now() - a.xact_start)::float8 AS held_s "
    "FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
    "WHERE l.locktype = 'advisory' AND l.granted AND l.classid = 0 AND l.objid = %s::bigint::oid AND l.objsubid = 1"
)
# The owner a row is written under: the call's person (server/people.py), else the person the
# session is (memverbs_person(): the login's, or the role the session took for the caller).
OWNER_SQL = "coalesce(%s::bigint, memverbs_person())"
PIPELINE = psycopg.Pipeline.is_supported()  # libpq ≥ 14 (the binary wheel's is)
CONNECT_TIMEOUT_S = 5
POOL_WAIT_S = 1.0
WAIT_NOTED_MS = 5.0  # a wait shorter than this is the machinery's own time, not a queue
IDLE_CHECK_S = 2.0


_last_used: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# The session state (role, memverbs.person) each connection was last given for an actor
# (`_act_as`); a fresh connection is the login itself.
_sessions: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
FRESH_SESSION = ("none", "")
_SET_SESSION = "SELECT set_config('role', %s, false), set_config('memverbs.person', %s, false)"
# Who each person's role is, per brain URL: {person id: role or None}; person 1 is the tables' owner.
_roles: dict[str, tuple[float, dict[int, str | None]]] = {}
ROLES_TTL_S = 30.0
# The server-side pid of every connection this process has open: a lock timeout says whether the
# writer it waited for is this very process (then the cause is here, not "another process").
_backends: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# libpq's fallback: the name pg_stat_activity shows unless brain.url sets application_name itself.
APPLICATION = f"memverbs {os.getpid()}@{socket.gethostname()}"[:63]


def _configure(conn: Conn, lock_timeout_ms: int) -> None:
    """Once per new connection: a writer waits for the write lock as long as SQLite's busy timeout,
    then gives up (`unavailable`). Set for the session rather than per transaction (`SET LOCAL`),
    which saves every write a round trip; nothing in memverbs changes it afterwards. A busy timeout
    of 0 means "do not wait", as it does for SQLite; Postgres reads a lock_timeout of 0 as "wait
    forever", so it becomes the shortest wait Postgres has, 1 ms."""
    conn.execute(f"SET lock_timeout = {max(int(lock_timeout_ms), 1)}")
    _backends[conn] = conn.info.backend_pid


def _check_if_idle(conn: Conn) -> None:
    """The pool's check on hand-out: a round trip only for a connection idle long enough that the
    server may have gone away meanwhile (a check on every call would double the cost of a query)."""
    if time.monotonic() - _last_used.get(conn, 0.0) > IDLE_CHECK_S:
        ConnectionPool.check_connection(conn)


class _SharedPool:
    """A process's pool for one URL, size and lock timeout, closed when the last brain using it closes."""

    _all: ClassVar[dict[tuple[str, int, int], _SharedPool]] = {}
    _lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, url: str, size: int, busy_timeout_ms: int, password: str | None = None) -> None:
        self.key = (url, size, busy_timeout_ms)
        self.users = 0
        self.size = size
        self._counts = threading.Lock()
        # What calls waited for since the pool opened: doctor's pool line (`stats`).
        self.calls = self.pool_waits = self.overflows = self.lock_waits = 0
        self.pool_wait_max_ms = self.lock_wait_max_ms = 0.0
        self.pool: ConnectionPool[Conn] = ConnectionPool(
            url,
            connection_class=BrainConnection,
            min_size=1,
            max_size=size,
            timeout=max(busy_timeout_ms, 1_000) / 1000,
            open=False,
            configure=lambda conn: _configure(conn, busy_timeout_ms),
            check=_check_if_idle,  # a connection the server dropped is replaced, not handed out
            # libpq's `password` beats PGPASSWORD and ~/.pgpass; psycopg drops it when None, leaving them to libpq.
            kwargs={**CONNECTION_KWARGS, "connect_timeout": CONNECT_TIMEOUT_S,
                    "password": password, "fallback_application_name": APPLICATION},
            name="memverbs-brain",
        )

    @classmethod
    def acquire(cls, url: str, size: int, busy_timeout_ms: int, password: str | None = None) -> _SharedPool:
        with cls._lock:
            key = (url, size, busy_timeout_ms)
            shared = cls._all.get(key)
            if shared is None:
                shared = cls._all[key] = cls(url, size, busy_timeout_ms, password)
                shared.pool.open(wait=False)
            shared.users += 1
            return shared

    def note_wait(self, ms: float) -> None:
        """A call got (or gave up on) a pooled connection after `ms`."""
        waits.note("pool_wait_ms", ms)
        with self._counts:
            self.calls += 1
            if ms >= WAIT_NOTED_MS:
                self.pool_waits += 1
                self.pool_wait_max_ms = max(self.pool_wait_max_ms, ms)

    def note_overflow(self) -> None:
        with self._counts:
            self.overflows += 1

    def note_lock_wait(self, ms: float) -> None:
        """The server granted a write the brain-wide lock after `ms`."""
        waits.note("lock_wait_ms", ms)
        if ms >= WAIT_NOTED_MS:
            with self._counts:
                self.lock_waits += 1
                self.lock_wait_max_ms = max(self.lock_wait_max_ms, ms)

    def stats(self) -> dict[str, object]:
        with self._counts:
            return {"size": self.size, "opened": True, "calls": self.calls, "pool_waits": self.pool_waits,
                    "pool_wait_max_ms": round(self.pool_wait_max_ms), "overflows": self.overflows,
                    "lock_waits": self.lock_waits, "lock_wait_max_ms": round(self.lock_wait_max_ms)}

    def release(self) -> None:
        with self._lock:
            self.users -= 1
            if self.users > 0:
                return
            self._all.pop(self.key, None)
        self.pool.close(timeout=1)


class _Retry(Exception):
    """A pooled connection turned out dead before the read ran: take another one."""


class PostgresBase(Store):
    dialect = POSTGRES
    backend = "postgres"

    def __init__(
        self, url: str, *, pool_size: int = 4, busy_timeout_ms: int = 10_000, pgvector: bool = False,
        password: str | None = None, deadline: float | None = None,
    ) -> None:
        self.url = url
        self.where = redact(url)
        self._password = password  # from the OS keyring (password.py), else None: libpq finds it
        self.pool_size = pool_size
        self.busy_timeout_ms = busy_timeout_ms
        self.pgvector = pgvector
        self.deadline = deadline  # a time.monotonic() no lock is waited for past (a hook's); None: no such time
        self._shared: _SharedPool | None = None
        self._lock = threading.Lock()
        self._held = threading.local()  # .conn: this thread's open write() transaction, if any

    def close(self) -> None:
        with self._lock:
            shared, self._shared = self._shared, None
        if shared is not None:
            shared.release()

    def _shared_pool(self) -> _SharedPool:
        with self._lock:
            if self._shared is None:
                self._shared = _SharedPool.acquire(self.url, self.pool_size, self.busy_timeout_ms, self._password)
            return self._shared

    @contextmanager
    def connection(self) -> Iterator[Conn]:
        """A pooled connection (autocommit), storage errors translated.

        Inside this thread's `write()`, the write's own connection: the reads a write makes while
        it holds the brain-wide lock (put_page resolving its links, say) run in its transaction
        and never wait for another pooled connection — a writer that holds the lock while it waits
        for the pool starves every writer queued behind it, and they hold the pool's connections.

        When the pool has none to give within POOL_WAIT_S (every connection busy, or the server was
        away and the pool is still backing off), the call opens one connection of its own: it
        fails at once with the real reason while the server is down, and works the moment the
        server is back, so no call waits out the pool's reconnect schedule. Both waits are noted
        (`waits`: the usage log; `pool_stats`: doctor).
        """
        held = getattr(self._held, "conn", None)
        if held is not None:
            yield held  # errors are translated by the write that owns it
            return
        shared = self._shared_pool()
        pool = shared.pool
        # A queue only when every connection the pool may open is in use; a wait for the pool to
        # open one more (a server's first calls) is the cost of connecting, not a pool too small.
        measures = pool.get_stats()
        full = measures["pool_available"] == 0 and measures["pool_size"] >= measures["pool_max"]
        asked = time.monotonic()
        try:
            conn = pool.getconn(timeout=min(self.busy_timeout_ms / 1000, POOL_WAIT_S))
        except PoolTimeout:
            conn = None
        except psycopg.Error as exc:
            raise translate(exc, self.url, self._password) from exc
        finally:
            shared.note_wait((time.monotonic() - asked) * 1000 if full else 0.0)
        if conn is None:
            shared.note_overflow()
            try:
                conn = BrainConnection.connect(
                    self.url, **CONNECTION_KWARGS, connect_timeout=CONNECT_TIMEOUT_S,  # type: ignore[arg-type]
                    password=self._password, fallback_application_name=APPLICATION,
                )
                _configure(conn, self.busy_timeout_ms)
            except psycopg.Error as exc:
                if conn is not None:
                    conn.close()
                raise translate(exc, self.url, self._password) from exc
            release = conn.close
        else:
            def release() -> None:
                _last_used[conn] = time.monotonic()
                pool.putconn(conn)

        try:
            self._act_as(conn)
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
            holder = _lock_holder(conn) if getattr(exc, "sqlstate", None) == "55P03" else None
            raise translate(exc, self.url, self._password, holder=holder, waited_ms=self.busy_timeout_ms) from exc
        finally:
            release()

    def _act_as(self, conn: Conn) -> None:
        """Give the session the call's person (server/people.py), so row-level security shows it
        world rows and that person's private rows only: the person's role (SET ROLE, when it is not
        the login), or for a person without a role the owner's session naming them
        (`memverbs.person`). Whether the call may read even those (a token without read:private may
        not) is the verbs' rule, as on SQLite. One round trip, and only when the connection was last
        used for someone else: the single-user default never pays it."""
        want = self._session_for(people.current(), conn)
        if _sessions.get(conn, FRESH_SESSION) == want:
            return
        try:
            conn.execute(_SET_SESSION, want)
        except psycopg.errors.InsufficientPrivilege as exc:
            raise BrainError(
                f"the brain's login {conn.info.user!r} may not act as the role {want[0]!r} of the person this call is for",
                f"As the brain's owner, run `GRANT \"{want[0]}\" TO \"{conn.info.user}\"` (memverbs people add does it "
                "when it may), or give that person's clients their own login.",
            ) from exc
        _sessions[conn] = want

    def _session_for(self, actor: people.Actor, conn: Conn) -> tuple[str, str]:
        if actor.person is None:
            return ("none", "")
        roles = self._people_roles(conn, refresh=False)
        if actor.person not in roles:
            roles = self._people_roles(conn, refresh=True)
        if actor.person not in roles:  # nobody: a session that can read and write no private row
            return ("none", "0")
        role = roles[actor.person]
        if role is None:
            return ("none", str(actor.person))
        return ("none" if role == conn.info.user else role, "")

    def _people_roles(self, conn: Conn, *, refresh: bool) -> dict[int, str | None]:
        cached = _roles.get(self.url)
        if cached is not None and not refresh and time.monotonic() - cached[0] < ROLES_TTL_S:
            return cached[1]
        rows = conn.execute(
            "SELECT 1::bigint, pg_get_userbyid(relowner)::text FROM pg_class WHERE oid = 'people'::regclass "
            "UNION ALL SELECT id, role FROM people"
        ).fetchall()
        roles = {int(r[0]): r[1] for r in rows}
        _roles[self.url] = (time.monotonic(), roles)
        return roles

    def pool_stats(self) -> dict[str, object]:
        """This process's pool for the brain, for doctor: its size and what calls waited for."""
        shared = self._shared
        return shared.stats() if shared is not None else {"size": self.pool_size, "opened": False}

    def _lock_granted(self, cursor: psycopg.Cursor[Row]) -> None:
        """Note how long the server waited for the write lock (the `_TAKE_WRITE_LOCK` cursor's one row)."""
        row = cursor.fetchone()
        if row is not None and self._shared is not None:
            self._shared.note_lock_wait(float(row[0]))

    # -- transactions ----------------------------------------------------------

    @contextmanager
    def write(self) -> Iterator[Conn]:
        """One write transaction, serialised with every other writer on the brain; commit or roll back.

        The wait for the lock is bounded by the connection's lock_timeout (`_configure`). Reads made
        on this thread inside the block run on its connection (`connection()`), so the lock is never
        held while another pooled connection is awaited; a write begun inside the block joins it."""
        held = getattr(self._held, "conn", None)
        if held is not None:
            yield held  # the outer write's transaction holds the lock, and commits (or rolls back) both
            return
        with self.connection() as conn, conn.transaction():
            self._lock_granted(self._take_write_lock(conn))
            self._held.conn = conn
            try:
                yield conn
            finally:
                self._held.conn = None

    @contextmanager
    def snapshot(self) -> Iterator[Conn]:
        """One consistent read: every read this thread makes inside the block sees the brain at one
        moment (REPEATABLE READ, READ ONLY), whatever commits meanwhile, so a backup holds no row
        that points at a row it lacks. A write inside it fails: the transaction is read only."""
        if getattr(self._held, "conn", None) is not None:
            raise AssertionError("a snapshot is its own transaction, not one inside a write")
        with self.connection() as conn:
            conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            self._held.conn = conn
            try:
                yield conn
            finally:
                self._held.conn = None
                if not conn.broken and conn.info.transaction_status != pq.TransactionStatus.IDLE:
                    with suppress(psycopg.Error):  # an error inside is the one to report
                        conn.execute("ROLLBACK")

    @contextmanager
    def whole_brain(self) -> Iterator[None]:
        """Inside this thread's snapshot or write: every person's rows, for the brain's owner.

        Row-level security holds the owner's login to world rows and its own private ones, as it
        holds everyone (FORCE). A backup of the whole brain, its restore and `migrate` need every
        row, so the owner's session lifts that for the one transaction: the `whole_brain` policy
        (schema step 0023) admits every row to the owner's login while `memverbs.whole_brain` is
        on, set transaction-locally here. Any other login is refused, with the role it needs."""
        check_owner_acts()
        conn = getattr(self._held, "conn", None)
        if conn is None:
            raise AssertionError("whole_brain() runs inside a snapshot() or a write()")
        row = conn.execute(
            "SELECT memverbs_person(), pg_get_userbyid(relowner)::text, current_user::text "
            "FROM pg_class WHERE oid = 'people'::regclass"
        ).fetchone()
        if row is None or row[0] != people.OWNER:
            owner, login = (row[1], row[2]) if row is not None else ("?", conn.info.user)
            raise BrainError(
                f"only the brain's owner reads and writes every person's rows, and the login {login!r} is not "
                f"the owner of {self.where} (the role {owner!r} is)",
                f"Run it as {owner!r}: for this one command, point brain.url at that role, e.g. "
                f"MEMVERBS_BRAIN__URL='postgresql://{owner}@HOST/DB' (`memverbs docs postgres`, \"Backups, restores and migrate\").",
            )
        conn.execute("SELECT set_config('memverbs.whole_brain', 'on', true)")
        try:
            yield
        finally:
            if not conn.broken and conn.info.transaction_status == pq.TransactionStatus.INTRANS:
                conn.execute("SELECT set_config('memverbs.whole_brain', '', true)")

    def _take_write_lock(self, conn: Conn) -> psycopg.Cursor[Row]:
        """Queue for the write lock; with a deadline, wait only for what is left of it.

        The lock_timeout then holds for this transaction alone (`set_config(…, true)`, which a
        pipeline's implicit transaction honours too). The wait ends on the server, with the
        `lock_not_available` a lock_timeout gives, rather than under a signal that would leave the
        connection mid-query (a hook's deadline: hooks/runner.py). The cursor's one row is how long
        the server waited (`_lock_granted`)."""
        if self.deadline is not None:
            left = int((self.deadline - time.monotonic()) * 1000)
            timeout = max(1, min(self.busy_timeout_ms, left))  # 0 would mean "wait forever"
            conn.execute("SELECT set_config('lock_timeout', %s, true)", (f"{timeout}ms",))
        return conn.execute(_TAKE_WRITE_LOCK, (WRITE_LOCK,))

    @contextmanager
    def batched_write(self) -> Iterator[Conn]:
        """One write transaction as `write()`, its statements sent in batches (psycopg's pipeline mode).

        A statement is queued, not sent: BEGIN, the write lock and what the block queues travel
        together when the block first reads a result (one round trip), and whatever is queued
        after the last read travels with COMMIT. A block that reads nothing inside (its cursors
        are read after it) is one round trip in all, and then the lock is held only while the
        server runs the statements — never while this process waits for a core or the network,
        which on a busy host is most of a write's time. Don't read `rowcount` inside the block: a
        queued statement has none yet. The transaction is explicit, not the pipeline's implicit
        one: the block runs Python between its statements, and should that fail, the Sync that
        ends the pipeline would commit an implicit transaction's statements queued before (an
        explicit one is rolled back below). Where libpq has no pipeline mode the statements run
        one by one. Begun inside a `write()` block, it joins that write's transaction instead.
        """
        held = getattr(self._held, "conn", None)
        if held is not None:
            yield held  # no BEGIN/COMMIT of its own: they would end the outer transaction early
            return
        with self.connection() as conn:
            try:
                with conn.pipeline() if PIPELINE else nullcontext():
                    conn.execute("BEGIN")
                    lock = self._take_write_lock(conn)
                    self._held.conn = conn  # a read the block makes runs here, in its transaction (`connection()`)
                    try:
                        yield conn
                    finally:
                        self._held.conn = None
                    conn.execute("COMMIT")
            except BaseException:
                # A failed statement leaves the block aborted (the rest of the batch, COMMIT
                # included, was skipped): end it before the connection goes back to the pool.
                if not conn.broken and conn.info.transaction_status != pq.TransactionStatus.IDLE:
                    with suppress(psycopg.Error):  # the statement's own error is the one to report
                        conn.rollback()
                raise
            self._lock_granted(lock)

    def locked_statement(self, sql: str, params: Params = ()) -> Row:
        """One statement that answers one row, run as its own write transaction: the write lock
        and the statement travel in one batch, two statements and one round trip in all.

        `batched_write()` for a write that is a single statement. No BEGIN and no COMMIT: in
        pipeline mode the server runs everything before the batch's Sync as one implicit
        transaction, which commits at the Sync if every statement succeeded and rolls back if
        one failed — safe here because nothing runs between the two statements (`batched_write()`
        says why its blocks keep an explicit transaction). The statement still reads a snapshot
        taken after the lock was granted (each statement of a READ COMMITTED transaction takes its
        own), so it sees every write committed before. Inside a `write()` block, it runs in that
        write's transaction."""
        held = getattr(self._held, "conn", None)
        if held is not None:
            return first(held.execute(sql, params))
        with self.connection() as conn:
            with conn.pipeline() if PIPELINE else conn.transaction():
                lock = self._take_write_lock(conn)
                cursor = conn.execute(sql, params)
            self._lock_granted(lock)
            return first(cursor)

    @staticmethod
    def ahead(send: Callable[[], T]) -> Callable[[], T]:
        """A read inside `batched_write()`, sent now: it is queued and travels with the block's next
        round trip; its answer is read when asked for."""
        sent = send()
        return lambda: sent

    def facts_ranked_in_process(
        self, terms: Sequence[str], where: str, args: list[object], columns: str, *, limit: int,
        among: list[int] | None, world: bool = False,
    ) -> list[Row] | None:
        return None  # the server ranks (postgres_dialect's facts_ranked): a process keeps no postings

    def pipelined(self, db: Conn) -> AbstractContextManager[object]:
        """Inside a `write()`, the statements sent from here as one batch (psycopg's pipeline mode):
        a statement is queued, not sent, until the block reads a result or ends, so a write that
        reads back little holds the write lock for a round trip or two rather than one per statement.
        Where libpq has no pipeline mode the statements run one by one."""
        return db.pipeline() if PIPELINE else nullcontext()

    def query(self, sql: str, params: Params = ()) -> list[Row]:
        return self._read(lambda conn: conn.execute(sql, params).fetchall())

    def one(self, sql: str, params: Params = ()) -> Row | None:
        return self._read(lambda conn: conn.execute(sql, params).fetchone())


    def _read(self, run: Callable[[Conn], T]) -> T:
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


# -- errors ------------------------------------------------------------------------------


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


def _lock_holder(conn: Conn) -> str | None:
    """Who holds the brain's write lock now, in words, read on the connection whose wait just timed out
    (its transaction was rolled back, so it is free); None when that cannot be read."""
    if conn.broken or conn.info.transaction_status != pq.TransactionStatus.IDLE:
        return None
    try:
        row = conn.execute(_LOCK_HOLDER, (WRITE_LOCK,)).fetchone()
    except psycopg.Error:
        return None
    if row is None:
        return "nobody holds it now: the write it waited for has finished since"
    ours = {pid for c, pid in list(_backends.items()) if not c.closed}
    held = f"for {row['held_s']:.1f} s" if row["held_s"] is not None else "in a transaction"
    app = row["application_name"] or "no application name"
    if row["pid"] in ours:
        who = f"this very process ({APPLICATION}, server pid {row['pid']})"
    elif app.startswith("memverbs "):
        who = f"another memverbs process ({app}, server pid {row['pid']})"
    else:
        who = f"a session that is not a memverbs server's ({app!r}, server pid {row['pid']}, from {row['addr'] or 'a local socket'})"
    return f"held by {who} {held}, now {row['state'] or 'unknown'}"


def _refused(exc: psycopg.Error, url: str, where: str, text: str) -> BrainError:
    """A statement the login's privileges or the row policies refused: the fix names what is missing."""
    from urllib.parse import urlsplit  # noqa: PLC0415

    try:
        login = urlsplit(url).username or "the login"
    except ValueError:
        login = "the login"
    if "row-level security" in text:
        return BrainError(
            f"the brain {where} refused a row: row-level security lets each person write world rows and their own "
            f"private rows only ({text})",
            "A restore (`memverbs import` of a full export) and `memverbs migrate` write every person's rows: run them "
            "as the role that owns the brain's tables (`memverbs docs postgres`, \"Backups, restores and migrate\").",
        )
    schema = re.search(r'permission denied for schema "?([^" ]+)', text)
    if schema:
        return BrainError(
            f"the role {login!r} may not create the brain's tables in {where} ({text})",
            f"As an administrator: `GRANT CREATE ON SCHEMA \"{schema.group(1)}\" TO \"{login}\"`, or make it the "
            f"database's owner (`ALTER DATABASE … OWNER TO \"{login}\"`), then run `memverbs init` again.",
        )
    return BrainError(
        f"the role {login!r} may not do this in {where} ({text})",
        "A teammate's role gets the brain's tables from `memverbs people add NAME --role ROLE` (run again after an "
        "upgrade); the schema and the people are the owner's: run that as the role that owns the brain's tables "
        "(`memverbs docs postgres`).",
    )


def translate(
    exc: psycopg.Error, url: str, keyring_password: str | None = None, *, holder: str | None = None,
    waited_ms: int | None = None, tried: str | None = None,
) -> BrainError:
    """`keyring_password` is the password that was sent (never shown); `tried` says whose it was when it
    is not the keyring's (`brain-password set` checks the one just typed)."""
    where = redact(url)
    text = _clean(exc, url, keyring_password)
    state = getattr(exc, "sqlstate", None) or ""
    if state in ("28P01", "28000") or "password authentication failed" in text or "no password supplied" in text:
        if tried:
            refused = tried
            fix = "Check the password (and the user in brain.url) and try again; nothing was stored."
        elif keyring_password:
            refused = "the password memverbs keeps in the OS keyring for this brain"
            fix = "Store the right one with `memverbs brain-password set` (`memverbs docs postgres`)."
        else:
            from memverbs.server.brain.password import password_source  # noqa: PLC0415

            source = password_source(url, None)
            refused = {"the URL": "the password in brain.url", "PGPASSWORD": "the password in PGPASSWORD"}.get(
                source, "the password libpq found in ~/.pgpass, if any (no other was given)")
            fix = ("Check the user in brain.url and its password: `memverbs brain-password set` keeps it in the OS "
                   "keyring, or give it in PGPASSWORD or ~/.pgpass (`memverbs docs postgres`).")
        return BrainError(f"the Postgres server refused the credentials for {where}: it refused {refused} ({text})", fix)
    if state == "3D000":
        return BrainError(
            f"the database in {where} does not exist ({text})",
            "Create it (`createdb`) and run `memverbs init`, or correct brain.url.",
        )
    if state == "42501":
        return _refused(exc, url, where, text)
    if state == "40P01":  # deadlock detected: two transactions waited for each other, this one was chosen
        return BrainLocked(
            f"brain {where}: a write lost a deadlock with another transaction and was rolled back ({text})",
            "Retry the call; nothing was written. If it recurs, something outside memverbs locks the brain's tables.",
        )
    if state == "55P03":  # lock_timeout: the brain-wide write lock was not granted in time
        waited = f" for {waited_ms} ms" if waited_ms is not None else ""
        cause = holder or "its holder could not be read"
        return BrainLocked(
            f"brain {where} is locked: a write waited{waited} for the brain's write lock and gave up — {cause} ({text})",
            "Retry in a moment; nothing was written. If it persists, look up the holder in pg_stat_activity and end "
            "it (pg_terminate_backend); a slow writer on this host may also need a larger brain.busy_timeout_ms.",
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

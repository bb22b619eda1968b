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
* **Storage errors become BrainError once, with the fix** (`postgres_base.translate`). A server that
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

import psycopg

from memverbs.server.brain import migrations
from memverbs.server.brain.browse_store import BrowseStore
from memverbs.server.brain.cursors_store import CursorStore
from memverbs.server.brain.facts_store import FactStore
from memverbs.server.brain.health_store import HealthStore
from memverbs.server.brain.location import redact
from memverbs.server.brain.names_store import NameStore
from memverbs.server.brain.oauth_store import OAuthStore
from memverbs.server.brain.pages_store import PageStore
from memverbs.server.brain.people_store import PeopleStore
from memverbs.server.brain.postgres_base import (
    CONNECT_TIMEOUT_S,
    CONNECTION_KWARGS,
    BrainConnection,
    translate,
)
from memverbs.server.brain.postgres_migrate import applied, has_pgvector, migrate, owns_brain, teammate_tables
from memverbs.server.brain.postgres_schema import BACKEND_READ_ONLY
from memverbs.server.brain.postgres_vector_index import PostgresVectors
from memverbs.server.brain.projects_store import ProjectStore
from memverbs.server.brain.store import first
from memverbs.server.brain.stores import declared_tables
from memverbs.server.brain.sync_store import SyncStore
from memverbs.server.brain.tokens_store import TokenStore
from memverbs.server.errors import BrainError, BrainMissing

_login_person: dict[str, int] = {}  # brain URL → the person its login is (session_person)


class PostgresBrain(PageStore, NameStore, FactStore, ProjectStore, CursorStore, TokenStore, PostgresVectors, BrowseStore, SyncStore, OAuthStore,
                    PeopleStore, HealthStore):
    # -- opening ---------------------------------------------------------------

    @classmethod
    def open(
        cls, url: str, *, create: bool = False, read_only: bool = False, busy_timeout_ms: int = 10_000, pool_size: int = 4,
        password: str | None = None, deadline: float | None = None,
    ) -> PostgresBrain:
        """Check (with `create`, initialise) the schema over one short connection; the pool waits for the first query.

        `password` is the one memverbs keeps in the OS keyring for this brain; without it libpq
        looks where it always does (the URL, PGPASSWORD, ~/.pgpass). With a `deadline` (a
        time.monotonic()), no write waits for the lock past it."""
        where = redact(url)
        try:
            conn = BrainConnection.connect(
                url, **CONNECTION_KWARGS, connect_timeout=CONNECT_TIMEOUT_S, password=password,  # type: ignore[arg-type]
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
            migrations.check_not_future(done, where)
            pending = migrations.pending(done)
            # A teammate's `init` (a login that does not own the tables) finds the brain as it is:
            # only the owner migrates it, or enables pgvector in it.
            if not read_only and (pending or (create and owns_brain(conn))):
                migrate(conn, where)
            pgvector = has_pgvector(conn)
        except psycopg.Error as exc:
            raise translate(exc, url, password) from exc
        finally:
            conn.close()
        return cls(url, pool_size=pool_size, busy_timeout_ms=busy_timeout_ms, pgvector=pgvector, password=password,
                   deadline=deadline)

    def describe(self) -> str:
        return self.where

    # -- people's roles (docs/postgres.md, "People and privacy") ------------------------------

    def session_person(self) -> int:
        """The person this login is (memverbs_person(): the owner for the tables' owner, else the
        person mapped to its role; 0 for a login that is nobody), asked once per brain URL."""
        from memverbs.server.people import current  # noqa: PLC0415

        named = current().person
        if named is not None:
            return named
        if self.url not in _login_person:
            row = self.one("SELECT memverbs_person()")
            _login_person[self.url] = int(row[0]) if row is not None and row[0] is not None else 0
        return _login_person[self.url]

    def owner_role(self) -> str:
        """The role that owns the brain's tables: person 1, the owner."""
        return str(self.aggregate("SELECT pg_get_userbyid(relowner)::text FROM pg_class WHERE oid = 'people'::regclass")[0])

    def grant_person_role(self, role: str, *, create: bool) -> list[str]:
        """Let `role` act as a teammate on this brain: created (LOGIN, no password) when `create`
        and it does not exist, granted the brain's tables (row-level security decides which rows),
        and granted to this login so a server may take it for that person's read:private tokens.
        Returns what was done, in words; BrainError when this login may not do one of them."""
        from psycopg import sql  # noqa: PLC0415

        done: list[str] = []
        ident = sql.Identifier(role)
        with self.connection() as conn:
            exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone() is not None
            try:
                if not exists:
                    if not create:
                        raise BrainError(f"there is no Postgres role {role!r}",
                                         f"Create it (`CREATE ROLE \"{role}\" LOGIN PASSWORD '…'`), or pass --create-role.")
                    conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(ident))
                    done.append(f"created the login role {role!r} (no password yet: ALTER ROLE \"{role}\" PASSWORD '…')")
                with conn.transaction():
                    both, read = teammate_tables()
                    schema = first(conn.execute("SELECT current_schema()"))[0]
                    conn.execute(sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(sql.Identifier(schema), ident))
                    conn.execute(sql.SQL("GRANT SELECT, INSERT, UPDATE, DELETE ON {} TO {}").format(
                        sql.SQL(", ").join(sql.Identifier(t) for t in both), ident))
                    conn.execute(sql.SQL("GRANT SELECT ON {} TO {}").format(
                        sql.SQL(", ").join(sql.Identifier(t) for t in read), ident))
                    conn.execute(sql.SQL("GRANT USAGE ON ALL SEQUENCES IN SCHEMA {} TO {}").format(sql.Identifier(schema), ident))
                done.append(f"granted {role!r} the brain's tables (row-level security: world rows and its own private rows)")
                if role != conn.info.user:
                    conn.execute(sql.SQL("GRANT {} TO {}").format(ident, sql.Identifier(conn.info.user)))
                    done.append(f"granted {role!r} to {conn.info.user!r}, so a server on this login may act for that person")
            except psycopg.errors.InsufficientPrivilege as exc:
                raise BrainError(
                    f"the login {conn.info.user!r} may not do that: {exc.diag.message_primary or exc}",
                    "Run it as the brain's owner with CREATEROLE (or have an administrator create the role and "
                    f"`GRANT \"{role}\" TO \"{conn.info.user}\"`), then `memverbs people add` again with --role.",
                ) from exc
        return done

    # -- health, for doctor ----------------------------------------------------

    def applied_steps(self) -> list[str]:
        with self.connection() as conn:
            return applied(conn)

    def integrity(self) -> str:
        self.one("SELECT 1")
        return "ok"

    def brain_bytes(self) -> int:
        """Tables, their indexes and TOAST: what the brain occupies on the server."""
        return int(self.aggregate(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c "
            "WHERE c.relkind = 'r' AND c.relnamespace = current_schema()::regnamespace AND c.relname = ANY(?)",
            ([*declared_tables(), *BACKEND_READ_ONLY],),
        )[0])

    def server_info(self) -> dict:
        """For doctor: the server version and the extensions the brain uses."""
        row = self.aggregate("SELECT current_setting('server_version') AS version, current_database() AS db")
        ext = self.query("SELECT extname, extversion FROM pg_extension ORDER BY extname")
        return {"version": row["version"], "database": row["db"], "extensions": {r[0]: r[1] for r in ext}}

"""Postgres's runner of the schema steps (`migrations.MIGRATIONS`), and pgvector where the server has it.

The rules are SQLite's: each step runs in one transaction with its record row, and a brain that
records a step this code does not know is refused untouched. Migrators on many hosts queue on a
transaction-level advisory lock (`MIGRATE_LOCK`) and then see each other's steps. Only the role
that owns the brain's tables migrates it (a teammate's login finds it as it is).

Whether pgvector can be used depends on the server, not on the schema's age, so it is not a
numbered step: whenever the extension is there, page vectors also get a `vector` column
(`postgres_schema.PGVECTOR_COLUMN`), filled in for the vectors stored before, with one HNSW index
per space; without it the vector arm scans exactly (postgres_vector_index.py).
"""

from __future__ import annotations

import psycopg

from memverbs.server.brain import migrations
from memverbs.server.brain import postgres_policies as policies
from memverbs.server.brain.postgres_base import WRITE_LOCK, Conn
from memverbs.server.brain.postgres_schema import BACKEND_READ_ONLY, PGVECTOR_COLUMN
from memverbs.server.brain.postgres_vector_index import hnsw_index_sql, vector_literal
from memverbs.server.brain.rows import READ, RW
from memverbs.server.brain.store import first
from memverbs.server.brain.stores import declared_tables
from memverbs.server.timeparse import now_ms

MIGRATE_LOCK = WRITE_LOCK + 1


def applied(conn: Conn) -> list[str]:
    if first(conn.execute("SELECT to_regclass('_migrations')"))[0] is None:
        return []
    return [r[0] for r in conn.execute("SELECT name FROM _migrations ORDER BY name")]


def owns_brain(conn: Conn) -> bool:
    """Whether this login owns the brain's tables (or there is no brain yet to own)."""
    row = conn.execute(
        "SELECT pg_get_userbyid(relowner) = current_user FROM pg_class WHERE oid = to_regclass('_migrations')"
    ).fetchone()
    return row is None or bool(row[0])


def migrate(conn: Conn, where: str) -> list[str]:
    """Apply pending steps, each in one transaction with its record row; returns the names applied here."""
    ran: list[str] = []
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATE_LOCK,))
        conn.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at BIGINT NOT NULL)")
    for step in migrations.MIGRATIONS:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATE_LOCK,))  # migrators queue, then see each other's steps
            done = set(applied(conn))
            migrations.check_not_future(done, where)
            if step.name in done:
                continue
            conn.execute("INSERT INTO _migrations (name, applied_at) VALUES (%s, %s)", (step.name, now_ms()))
            for work in step.work("postgres"):
                if isinstance(work, str):
                    conn.execute(work)
                elif isinstance(work, migrations.Secure):
                    conn.execute(secure_sql(work))
                else:
                    work(conn)
        ran.append(step.name)
    _enable_pgvector(conn)
    return ran


def secure_sql(secure: migrations.Secure) -> str:
    """A step's `Secure`: each table's row policies as its declared kind derives them; with
    `teammates`, also the owner's whole-brain policy and the teammates' grants."""
    declared = declared_tables()
    sql = []
    for table in secure.tables:
        whose = declared[table].whose
        policies_sql = policies.policies_for(table, whose)
        sql.append(policies_sql)
        if secure.teammates:
            sql.append(policies.grant_teammates(table, whose))
            if policies_sql:
                sql.append(policies.whole_brain_policy(table))
    return "".join(sql)


def teammate_tables() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What `people add NAME --role ROLE` grants the role: (the tables it reads and writes, those it
    only reads), as each table's declared kind grants; row-level security decides which rows."""
    declared = declared_tables()
    return (tuple(t for t, d in declared.items() if d.whose.grant == RW),
            tuple(t for t, d in declared.items() if d.whose.grant == READ) + BACKEND_READ_ONLY)


def _enable_pgvector(conn: Conn) -> None:
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
        conn.execute(PGVECTOR_COLUMN)
    backfill_embeddings(conn)


def backfill_embeddings(conn: Conn, batch: int = 1000) -> None:
    """Vectors stored before pgvector was installed get their `embedding` and their space its HNSW index."""
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


def has_pgvector(conn: Conn) -> bool:
    row = conn.execute(
        "SELECT 1 FROM information_schema.columns WHERE table_name = 'text_vectors' AND column_name = 'embedding' "
        "AND table_schema = current_schema()"
    ).fetchone()
    return row is not None

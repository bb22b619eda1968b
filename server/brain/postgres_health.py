"""`memverbs doctor` on a Postgres brain: the connection, the schema version, the extensions.

Nothing here raises: every failure is a problem line with its fix, and no line
ever holds the URL's password.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from memverbs.server.brain.location import BrainLocation
from memverbs.server.errors import BrainError, BrainMissing

if TYPE_CHECKING:
    from memverbs.server.brain.postgres import PostgresBrain

Row = tuple[str, str, str, str | None]  # name, status (ok|warn|fail), detail, fix
DAY_MS = 86_400_000
POOL_WAIT_WARN_MS = 100  # a call that waited this long for a pooled connection: the pool is too small
LOCK_WAIT_WARN_MS = 1000  # writers queued this long behind the brain-wide lock


def postgres_checks(where: BrainLocation, usage_log: Path | None = None) -> list[Row]:
    try:
        from memverbs.server.brain.postgres import PostgresBrain  # noqa: PLC0415
    except ImportError:
        return [("brain", "fail", f"brain.url is {where} but psycopg is not installed", "pip install 'memverbs[postgres]'")]
    from memverbs.server.brain.password import keyring_password, password_source  # noqa: PLC0415

    password = keyring_password(where.dsn, where.keyring)
    source = password_source(where.dsn, where.keyring)
    if where.keyring is not None and password is None and source.startswith("the OS keyring"):
        return [(
            "brain",
            "fail",
            f"{where}: the OS keyring ({where.keyring or 'default backend'}) has no password for this brain, "
            "though `memverbs brain-password set` stored one",
            "Store it again with `memverbs brain-password set` (the keyring may be locked, or was changed by hand).",
        )]
    try:
        brain = PostgresBrain.open(where.dsn, read_only=True, pool_size=1, password=password)
    except BrainError as exc:
        return [("brain", "fail", exc.message, exc.fix)]
    try:
        info = brain.server_info()
        status = brain.schema_status()
        rows: list[Row] = [("brain", "ok", f"{where}: Postgres {info['version']}, connected (password: {source})", None)]
        if status["unknown"]:
            rows.append((
                "schema",
                "fail",
                f"the brain has schema steps this memverbs does not know ({', '.join(status['unknown'])}): a newer memverbs wrote it",
                "Upgrade memverbs (pip install -U memverbs); the brain was not changed.",
            ))
        elif not status["applied"]:
            rows.append(("schema", "fail", "no brain in this database yet", "Run `memverbs init` to create one."))
        elif status["pending"]:
            rows.append((
                "schema",
                "warn",
                f"{len(status['pending'])} migration(s) pending: {', '.join(status['pending'])}",
                "Run `memverbs init` to apply them.",
            ))
        else:
            rows.append(("schema", "ok", f"current ({len(status['applied'])} steps)", None))
        rows.append(_pgvector_row(brain, info))
        rows.append(_writers_row(brain, usage_log))
        if "0018_people" in status["applied"]:
            rows.append(people_row(brain))
        return rows
    except BrainMissing as exc:
        return [("brain", "fail", exc.message, exc.fix)]
    except BrainError as exc:
        return [("brain", "fail", exc.message, exc.fix)]
    finally:
        brain.close()


def _pgvector_row(brain: PostgresBrain, info: dict) -> Row:
    """Whether pgvector is in use and, when not, exactly why: not on the server, on it but not created
    in this database (and whether this role may create it), or created but not yet used by the brain."""
    ext = info["extensions"]
    kind = brain.vector_index_kind()
    if "vector" in ext and brain.pgvector:
        return ("extensions", "ok", f"vector {ext['vector']}: the vector arm runs on {kind}", None)
    if "vector" in ext:
        return ("extensions", "warn", f"pgvector {ext['vector']} is created in this database but the brain does not use "
                f"it yet: the vector arm runs an {kind}", "Run `memverbs init` to add the vector column and its indexes.")
    vector = brain.one(
        "SELECT a.default_version, r.rolsuper, current_user AS role FROM pg_available_extensions a, pg_roles r "
        "WHERE a.name = 'vector' AND r.rolname = current_user"
    )
    if vector is None:
        return ("extensions", "warn", f"pgvector is not installed on the Postgres server: the vector arm runs an {kind}",
                "Install pgvector on the server (a package such as postgresql-16-pgvector, or an image that has it; "
                "`memverbs docs postgres`), then run `memverbs init`.")
    create = f'CREATE EXTENSION vector;  -- in database "{info["database"]}"'
    if vector["rolsuper"]:
        return ("extensions", "warn", f"pgvector {vector['default_version']} is installed on the server but not created "
                f"in this database: the vector arm runs an {kind}", "Run `memverbs init`: it creates the extension.")
    return ("extensions", "warn", f"pgvector {vector['default_version']} is installed on the server, but the role "
            f"{vector['role']!r} may not create it in this database: the vector arm runs an {kind}",
            f"Have a superuser (or the database owner, on services that allow it) run `{create}`, then run "
            "`memverbs init` (`memverbs docs postgres`).")


def people_row(brain: PostgresBrain) -> Row:
    """Who this login is among the brain's people, and whether row-level security holds it: a
    superuser or BYPASSRLS login reads every person's private rows, whatever the policies say."""
    me = brain.aggregate(
        "SELECT current_user AS role, r.rolsuper OR r.rolbypassrls AS bypass, memverbs_person() AS person, "
        "(SELECT count(*) FROM people) AS people FROM pg_roles r WHERE r.rolname = current_user"
    )
    names = {1: "owner"} | {int(r["id"]): r["name"] for r in brain.people()}
    who = names.get(me["person"]) if me["person"] is not None else None
    detail = (f"{me['people'] + 1} person(s) ({', '.join(names.values())}); this login ({me['role']!r}) is "
              f"{who or 'nobody'}")
    if me["bypass"]:
        if me["people"]:
            return ("people", "warn", detail + ", and bypasses row-level security: it reads every person's private rows",
                    "Give memverbs a plain role that owns the database (ALTER DATABASE … OWNER TO it, and the tables), "
                    "not a superuser or a BYPASSRLS role (`memverbs docs postgres`).")
        return ("people", "ok", detail + " (a superuser: row-level security does not hold it; fine while it is the "
                "brain's only person)", None)
    if who is None:
        return ("people", "warn", detail + ": it reads world rows only and writes no private row",
                f"Add it as a person: `memverbs people add NAME --role {me['role']}` (as the brain's owner).")
    return ("people", "ok", detail + "; row-level security keeps other people's private rows from it", None)


def _writers_row(brain: PostgresBrain, usage_log: Path | None) -> Row:
    """Writers queued now (sessions waiting for the brain-wide lock), connections against the server's
    limit, and what the last day's MCP calls on this home waited for (the usage log's wait keys)."""
    from memverbs.server.brain.postgres_base import WRITE_LOCK  # noqa: PLC0415
    from memverbs.server.timeparse import now_ms, parse_instant  # noqa: PLC0415
    from memverbs.server.usage import read_events  # noqa: PLC0415

    live = brain.aggregate(
        "SELECT count(*) FILTER (WHERE l.pid IS NOT NULL) AS queued, count(*) AS sessions, "
        "current_setting('max_connections')::int AS max "
        "FROM pg_stat_activity a LEFT JOIN pg_locks l ON l.pid = a.pid AND l.locktype = 'advisory' AND NOT l.granted "
        "AND l.classid = 0 AND l.objid = %s::bigint::oid AND l.objsubid = 1 WHERE a.datname = current_database()",
        (WRITE_LOCK,),
    )
    detail = (f"{live['queued']} writer(s) queued for the write lock now; {live['sessions']} session(s) on this "
              f"database, server limit {live['max']}")
    horizon = now_ms() - DAY_MS
    events = [e for e in read_events(usage_log) if (parse_instant(e["ts"]) or 0) >= horizon] if usage_log else []
    pool = sorted(e["pool_wait_ms"] for e in events if isinstance(e.get("pool_wait_ms"), int))
    lock = sorted(e["lock_wait_ms"] for e in events if isinstance(e.get("lock_wait_ms"), int))
    if events:
        detail += (f"; last 24 h of this home's MCP calls ({len(events)}): {len(pool)} waited for a pooled connection"
                   f"{f' (longest {pool[-1]} ms)' if pool else ''}, {len(lock)} waited for the write lock"
                   f"{f' (longest {lock[-1]} ms)' if lock else ''}")
    if pool and pool[-1] >= POOL_WAIT_WARN_MS:
        return ("writers", "warn", detail, "Calls waited for a connection: raise brain.pool_size (a `serve --http` "
                "pool is at least its worker count) and the server's max_connections with it.")
    if lock and lock[-1] >= LOCK_WAIT_WARN_MS:
        return ("writers", "warn", detail, "Writers queued behind the brain-wide write lock for a second or more: "
                "look for long transactions in pg_stat_activity; brain.busy_timeout_ms bounds the wait.")
    return ("writers", "ok", detail, None)

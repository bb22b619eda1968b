"""`memverbs doctor` on a Postgres brain: the connection, the schema version, the extensions.

Nothing here raises: every failure is a problem line with its fix, and no line
ever holds the URL's password.
"""

from __future__ import annotations

from memverbs.server.brain.factory import BrainLocation
from memverbs.server.errors import BrainError, BrainMissing

Row = tuple[str, str, str, str | None]  # name, status (ok|warn|fail), detail, fix


def postgres_checks(where: BrainLocation) -> list[Row]:
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
        ext = info["extensions"]
        if "vector" in ext and brain.pgvector:
            rows.append(
                ("extensions", "ok", f"vector {ext['vector']}: the vector arm runs on {brain.vector_index_kind()}", None)
            )
        else:
            rows.append((
                "extensions",
                "warn",
                f"pgvector is not in use: the vector arm runs an {brain.vector_index_kind()}",
                "Install pgvector on the server and `CREATE EXTENSION vector` in this database (docs/postgres.md), "
                "then run `memverbs init`.",
            ))
        return rows
    except BrainMissing as exc:
        return [("brain", "fail", exc.message, exc.fix)]
    except BrainError as exc:
        return [("brain", "fail", exc.message, exc.fix)]
    finally:
        brain.close()

"""Which brain the settings name, and the one place a brain is opened.

`brain.url` picks the backend: empty (the default) means the SQLite file at
`brain.path` in the home; `sqlite:///relative/or/absolute.db` or a bare path is
a SQLite file too; `postgresql://…` (or `postgres://…`) is a Postgres database.
Backends are imported only when opened, so a hook on the SQLite default never
imports psycopg.
"""

from __future__ import annotations

from memverbs.server.brain.location import BrainLocation, redact
from memverbs.server.errors import ConfigError

TYPE_CHECKING = False  # typing's flag, without importing typing on a hook's start

if TYPE_CHECKING:
    from memverbs.server.brain.base import Brain
    from memverbs.server.home import Home

POSTGRES_SCHEMES = ("postgresql", "postgres")


def locate(url: str, home: Home, default_path: str) -> BrainLocation:
    """The brain named by `brain.url` (empty: the file `brain.path`), relative paths under the home."""
    url = (url or "").strip()
    if not url:
        return BrainLocation("sqlite", path=home.place(default_path))
    scheme = url.split(":", 1)[0].lower() if "://" in url else ""
    if scheme in POSTGRES_SCHEMES:
        from memverbs.server.brain.password import keyring_backend_for  # noqa: PLC0415 - stdlib; one small file read

        return BrainLocation("postgres", url=url, keyring=keyring_backend_for(home.root, url))
    if scheme == "sqlite":
        # sqlite:///brain.db is relative to the home, sqlite:////abs/brain.db absolute (SQLAlchemy's spelling).
        rest = url.split("://", 1)[1]
        if not rest.startswith("/") or rest == "/":
            raise ConfigError(f"brain.url {url!r} names no file", "Write sqlite:///brain.db (home-relative) or sqlite:////abs/path.db.")
        return BrainLocation("sqlite", path=home.place(rest[1:]))
    if scheme:
        raise ConfigError(
            f"brain.url {redact(url)!r} has an unknown scheme {scheme!r}",
            "Use a file path, sqlite:///brain.db, or postgresql://user@host/dbname.",
        )
    return BrainLocation("sqlite", path=home.place(url))


def open_brain(
    location: BrainLocation,
    *,
    create: bool = False,
    read_only: bool = False,
    busy_timeout_ms: int = 10_000,
    pool_size: int = 4,
    build_graphs: bool = False,
    deadline: float | None = None,
) -> Brain:
    """Open the brain at `location`: with `create`, initialise it; its schema is current or refused.

    `read_only` is doctor's look: nothing is written, pending migrations included. `build_graphs`
    says the process lives long enough to build a big SQLite brain's vector graph in the
    background (a server); Postgres keeps its HNSW index in the database, so it has no such step.
    `deadline` (a time.monotonic(), a hook's) bounds every later lock wait: each gets what is left of it.
    """
    if location.backend == "postgres":
        try:
            from memverbs.server.brain.postgres import PostgresBrain  # noqa: PLC0415 - psycopg only for Postgres
        except ImportError as exc:
            raise ConfigError(
                f"brain.url is {location} but the Postgres driver is not installed ({exc.name})",
                "pip install 'memverbs[postgres]' (psycopg and psycopg-pool), or set brain.url back to a SQLite file.",
            ) from exc

        from memverbs.server.brain.password import keyring_password  # noqa: PLC0415

        return PostgresBrain.open(
            location.dsn, create=create, read_only=read_only, busy_timeout_ms=busy_timeout_ms, pool_size=pool_size,
            password=keyring_password(location.dsn, location.keyring), deadline=deadline,
        )
    from memverbs.server.brain.sqlite import SqliteBrain  # noqa: PLC0415

    file = location.sqlite_file
    assert file is not None, "a sqlite location has a file"
    if read_only:
        return SqliteBrain.open_read_only(file)
    brain = SqliteBrain.open(file, create=create, busy_timeout_ms=busy_timeout_ms, deadline=deadline)
    brain.build_graphs = build_graphs
    return brain

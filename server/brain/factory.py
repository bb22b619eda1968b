"""Which brain the settings name, and the one place a brain is opened.

`brain.url` picks the backend: empty (the default) means the SQLite file at
`brain.path` in the home; `sqlite:///relative/or/absolute.db` or a bare path is
a SQLite file too; `postgresql://…` (or `postgres://…`) is a Postgres database.
Backends are imported only when opened, so a hook on the SQLite default never
imports psycopg.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit, urlunsplit

from memverbs.server.errors import ConfigError
from memverbs.server.record import Frozen

if TYPE_CHECKING:
    from memverbs.server.brain.base import Brain
    from memverbs.server.home import Home

POSTGRES_SCHEMES = ("postgresql", "postgres")


class BrainLocation(Frozen):
    """Where a brain lives: a SQLite file, or a Postgres connection URL (which may hold a password).

    `keyring` names the keyring backend holding a Postgres brain's password ("" for keyring's
    default) when `memverbs brain-password set` stored one and the URL has none (password.py);
    the password itself is read only when the brain is opened.
    """

    __slots__ = ("backend", "keyring", "path", "url")
    backend: Literal["sqlite", "postgres"]
    path: Path | None
    url: str | None
    keyring: str | None

    def __init__(self, backend: Literal["sqlite", "postgres"], path: Path | None = None, url: str | None = None,
                 keyring: str | None = None) -> None:
        super().__init__(backend=backend, path=path, url=url, keyring=keyring)

    def __str__(self) -> str:
        return str(self.path) if self.backend == "sqlite" else redact(self.url or "")

    def exists(self) -> bool | None:
        """Whether the brain is already there; None when only opening it can tell (a server database)."""
        return self.file.is_file() if self.backend == "sqlite" else None

    @property
    def file(self) -> Path:
        """A SQLite brain's file (`locate` sets it for every sqlite location)."""
        assert self.path is not None, "a sqlite location has a path"
        return self.path

    @property
    def dsn(self) -> str:
        """A Postgres brain's connection URL (`locate` sets it for every postgres location)."""
        assert self.url is not None, "a postgres location has a URL"
        return self.url


def redact(url: str) -> str:
    """A connection URL fit to print: the password, if any, replaced by ***."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable URL>"
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))


def locate(url: str, home: Home, default_path: str) -> BrainLocation:
    """The brain named by `brain.url` (empty: the file `brain.path`), relative paths under the home."""
    url = (url or "").strip()
    if not url:
        return BrainLocation("sqlite", path=home.resolve(default_path))
    scheme = url.split(":", 1)[0].lower() if "://" in url else ""
    if scheme in POSTGRES_SCHEMES:
        from memverbs.server.brain.password import keyring_backend_for  # noqa: PLC0415 - stdlib; one small file read

        return BrainLocation("postgres", url=url, keyring=keyring_backend_for(home.root, url))
    if scheme == "sqlite":
        # sqlite:///brain.db is relative to the home, sqlite:////abs/brain.db absolute (SQLAlchemy's spelling).
        rest = url.split("://", 1)[1]
        if not rest.startswith("/") or rest == "/":
            raise ConfigError(f"brain.url {url!r} names no file", "Write sqlite:///brain.db (home-relative) or sqlite:////abs/path.db.")
        return BrainLocation("sqlite", path=home.resolve(rest[1:]))
    if scheme:
        raise ConfigError(
            f"brain.url {redact(url)!r} has an unknown scheme {scheme!r}",
            "Use a file path, sqlite:///brain.db, or postgresql://user@host/dbname.",
        )
    return BrainLocation("sqlite", path=home.resolve(url))


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

    if read_only:
        return SqliteBrain.open_read_only(location.file)
    brain = SqliteBrain.open(location.file, create=create, busy_timeout_ms=busy_timeout_ms, deadline=deadline)
    brain.build_graphs = build_graphs
    return brain

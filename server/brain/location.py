"""Where a brain lives (a SQLite file or a Postgres URL), and a URL fit to print.

Apart from factory.py, which opens brains and so imports the backends: the backends and everything
that only names or prints a location import this instead.
"""

from __future__ import annotations

import os

from memverbs.server.record import Frozen

TYPE_CHECKING = False  # typing's flag, without importing typing on a hook's start
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Literal


class BrainLocation(Frozen):
    """Where a brain lives: a SQLite file, or a Postgres connection URL (which may hold a password).

    `keyring` names the keyring backend holding a Postgres brain's password ("" for keyring's
    default) when `memverbs brain-password set` stored one and the URL has none (password.py);
    the password itself is read only when the brain is opened.
    """

    __slots__ = ("backend", "keyring", "sqlite_file", "url")
    backend: Literal["sqlite", "postgres"]
    sqlite_file: str | None  # a SQLite brain's file, as a string (what a hook opens: no pathlib); `path` as a Path
    url: str | None
    keyring: str | None

    def __init__(self, backend: Literal["sqlite", "postgres"], path: str | os.PathLike[str] | None = None,
                 url: str | None = None, keyring: str | None = None) -> None:
        super().__init__(backend=backend, sqlite_file=None if path is None else os.fspath(path), url=url, keyring=keyring)

    def __str__(self) -> str:
        return str(self.path) if self.backend == "sqlite" else redact(self.url or "")

    @property
    def path(self) -> Path | None:
        from pathlib import Path  # noqa: PLC0415 - a hook's start reads `sqlite_file`

        return None if self.sqlite_file is None else Path(self.sqlite_file)

    def exists(self) -> bool | None:
        """Whether the brain is already there; None when only opening it can tell (a server database)."""
        return self.file.is_file() if self.backend == "sqlite" else None

    @property
    def file(self) -> Path:
        """A SQLite brain's file (`locate` sets it for every sqlite location)."""
        path = self.path
        assert path is not None, "a sqlite location has a path"
        return path

    @property
    def dsn(self) -> str:
        """A Postgres brain's connection URL (`locate` sets it for every postgres location)."""
        assert self.url is not None, "a postgres location has a URL"
        return self.url


def redact(url: str) -> str:
    """A connection URL fit to print: the password, if any, replaced by ***."""
    from urllib.parse import urlsplit, urlunsplit  # noqa: PLC0415 - a Postgres brain's; not a SQLite hook's

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

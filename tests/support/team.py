"""A team's Postgres set-up, as a deployment has it: the brain owned by a plain `CREATEROLE` role (not a
superuser, which no row-level security holds), and each teammate a login role of their own.

`PlainOwner` makes the owner's role and databases it owns (each a URL logging in as that role);
`Team` adds people with roles, each with a CLI home logged in as their role.
"""

from __future__ import annotations

import uuid
from pathlib import Path

from helpers import init_home

from memverbs.server.home import Home
from memverbs.server.runtime import Runtime


class PlainOwner:
    """A plain login role with CREATEROLE and the empty databases it owns on `server`."""

    def __init__(self, server, tag: str | None = None) -> None:
        self.server = server
        self.tag = tag or uuid.uuid4().hex[:8]
        self.role = f"own_{self.tag}"
        self.databases: list[str] = []
        self.roles: list[str] = []
        server.admin(f'CREATE ROLE "{self.role}" LOGIN CREATEROLE')

    def database(self) -> str:
        """A new, empty database owned by the owner's role: its URL, as the owner."""
        name = f"b{len(self.databases)}_{self.tag}"
        self.server.admin(f'CREATE DATABASE "{name}" OWNER "{self.role}" TEMPLATE template0')
        self.databases.append(name)
        return self.url(name)

    def url(self, db: str, user: str | None = None) -> str:
        return self.server.url(db, user=user or self.role)

    def role_name(self, name: str) -> str:
        """The name of a teammate's role (made by `people add --create-role` or `login`), dropped at the end."""
        role = f"{name}_{self.tag}"
        self.roles.append(role)
        return role

    def login(self, name: str) -> str:
        """A teammate's login role, as an administrator makes one."""
        role = self.role_name(name)
        self.server.admin(f'CREATE ROLE "{role}" LOGIN')
        return role

    def superuser_url(self, url: str) -> str:
        """The same database as the server's superuser (who reads every row: the tests' referee)."""
        db = url.split("@/", 1)[1].split("?", 1)[0]
        return self.server.url(db)

    def close(self) -> None:
        for db in self.databases:
            self.server.admin(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
        for role in [*self.roles, self.role]:
            self.server.admin(f'DROP ROLE IF EXISTS "{role}"')


def home_for(root: Path, url: str, monkeypatch) -> Runtime:
    """A CLI home at `root` whose brain.url is `url` (made the process's home: the CLI acts in it)."""
    monkeypatch.setenv("MEMVERBS_HOME", str(root))
    if url:
        monkeypatch.setenv("MEMVERBS_BRAIN__URL", url)
    else:  # the home's own SQLite file
        monkeypatch.delenv("MEMVERBS_BRAIN__URL", raising=False)
    init_home(root)
    return Runtime(Home(root))


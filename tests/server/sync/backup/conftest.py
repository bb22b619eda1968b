"""Backups and restores on every backend, their Postgres brains a team's: owned by a plain role, so the
row policies hold the owner's login as a deployment's do (a superuser, the other tests' owner, is
held by none of them)."""

from __future__ import annotations

import pytest
from team import PlainOwner


@pytest.fixture
def plain_owner(request, brain_backend):
    """On Postgres, the plain role this directory's brains belong to (None on SQLite)."""
    if brain_backend == "sqlite":
        yield None
        return
    servers = request.getfixturevalue("pg_servers")
    server = servers.get("plain") if brain_backend == "postgres-plain" else (servers.get("pgvector") or servers.get("plain"))
    if server is None:
        pytest.skip("no Postgres server on this machine")
    owner = PlainOwner(server)
    yield owner
    owner.close()


@pytest.fixture
def brain_url(plain_owner):
    return plain_owner.database() if plain_owner else None


@pytest.fixture
def other_brain_url(plain_owner):
    return plain_owner.database() if plain_owner else None

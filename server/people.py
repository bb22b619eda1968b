"""A brain's people: who a call acts for, and whose private rows it may read.

A brain knows its people (docs/postgres.md, "People and privacy"). Person 1 is the brain's owner:
on SQLite the file's user, on Postgres the role that owns the brain's tables. The others are rows
of the `people` table (`memverbs people add`). Every fact, page and private links/timeline row
records the person who wrote it (`owner`); a private one is read by its owner alone.

A call acts for one person (`Actor`): a CLI home for the person it logs in as (the owner on
SQLite), a token for its person (`memverbs auth create --for`), an OAuth client for the owner who
consented. `reads_private` says whether the call may read that person's private rows: the trusted
local caller may, a token only with the `read:private` scope. The actor is set once per call at the
edge (`acting`, in dispatch) and read by the brain: on Postgres it picks the session's role, so
row-level security decides what the call sees; each backend writes its rows under its person.

Stdlib only: the hook path imports it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from memverbs.server.record import Frozen

OWNER = 1
OWNER_NAME = "owner"
READ_PRIVATE = "read:private"  # the token scope that lets a token read its own person's private rows
NAME = re.compile(r"^[a-z][a-z0-9_-]{0,62}$")


class Actor(Frozen):
    """Who a call acts for. `person` None: the person the brain's connection is (the login's on
    Postgres, the owner on SQLite) — the trusted CLI's default, which changes nothing for one user."""

    __slots__ = ("person", "reads_private")
    person: int | None
    reads_private: bool

    def __init__(self, person: int | None = None, reads_private: bool = True) -> None:
        super().__init__(person=person, reads_private=reads_private)


DEFAULT = Actor()
_actor: ContextVar[Actor | None] = ContextVar("memverbs_actor", default=None)


def current() -> Actor:
    return _actor.get() or DEFAULT


@contextmanager
def acting(actor: Actor | None) -> Iterator[Actor | None]:
    """Run the block as `actor` (this thread, or this task); the previous actor afterwards."""
    token = _actor.set(actor)
    try:
        yield actor
    finally:
        _actor.reset(token)


def owns(owner: int, person: int, backend: str) -> bool:
    """Whether `person` owns a row whose owner is `owner`: only they make it private (or world again),
    or write its private rows. A SQLite brain is one person's file, whose owner (person 1) owns every
    row in it."""
    return owner == person or (person == OWNER and backend == "sqlite")


def check_name(name: str) -> str | None:
    """The problem with a person's name, or None when it is fine."""
    if name == OWNER_NAME:
        return f"{OWNER_NAME!r} is the brain's owner, who is always there"
    if not NAME.match(name):
        return (
            f"person name {name!r} must be 1-63 characters of lowercase letters, digits, '_' or '-', "
            "starting with a letter"
        )
    return None

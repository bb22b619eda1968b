"""SQLite's runner of the schema steps (`migrations.MIGRATIONS`): one transaction a step.

`SqliteBrain.open` runs the steps before it turns foreign keys on, as SQLite's way to rebuild a
table asks (a rebuilt parent table would otherwise take its children's rows down with the old
one). Each step's transaction begins IMMEDIATE, so two processes opening one old brain queue on
the busy timeout; the one that comes second fails on the step's record row and leaves it be.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from memverbs.server.brain import migrations, sqlite_schema
from memverbs.server.timeparse import now_ms

TYPE_CHECKING = False  # typing's flag, without importing typing on a hook's start

if TYPE_CHECKING:
    from memverbs.server.brain.migrations import Step


def current(db: sqlite3.Connection) -> bool:
    """Whether the brain records every step this memverbs knows, and nothing else, by one read; False
    when unsure (a brain with no record yet, or one a newer memverbs wrote): the caller then reads
    the record and compares it with the list."""
    try:
        count, last = db.execute("SELECT count(*), max(name) FROM _migrations").fetchone()
    except sqlite3.OperationalError:  # no record table: a new brain
        return False
    return bool(count == migrations.STEP_COUNT and last == migrations.LAST_STEP)


def applied(db: sqlite3.Connection) -> list[str]:
    exists = db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_migrations'").fetchone()
    if not exists:
        return []
    return [r[0] for r in db.execute("SELECT name FROM _migrations ORDER BY name")]


def pending(db: sqlite3.Connection) -> list[Step]:

    return migrations.pending(applied(db))


def unknown(db: sqlite3.Connection) -> list[str]:
    """Steps recorded in the brain that this code does not know: a newer memverbs wrote them."""

    return migrations.unknown(applied(db))


def check_not_future(db: sqlite3.Connection, path: object) -> None:

    migrations.check_not_future(applied(db), path)


def migrate(db: sqlite3.Connection, path: object = "brain") -> list[str]:
    """Apply pending steps, each in one transaction; returns the names applied here."""

    check_not_future(db, path)
    sqlite_schema.register(db)  # the functions a step's triggers and fills call
    db.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)")
    done: list[str] = []
    for step in pending(db):
        try:
            db.execute("BEGIN IMMEDIATE")
            # The record row goes first: a process that applied this step meanwhile has it already.
            db.execute("INSERT INTO _migrations (name, applied_at) VALUES (?, ?)", (step.name, now_ms()))
            for work in step.work("sqlite"):
                if isinstance(work, str):
                    for statement in statements(work):
                        db.execute(statement)
                elif not isinstance(work, migrations.Secure):  # row policies are Postgres's (Step.work)
                    work(db)
            db.execute("COMMIT")
        except sqlite3.IntegrityError:
            _rollback(db)  # another process applied this step first
            continue
        except BaseException:
            _rollback(db)
            raise
        done.append(step.name)
    return done


def statements(script: str) -> Iterator[str]:
    """A script's statements one by one: `executescript` would commit the step's transaction first."""
    statement = ""
    for piece in script.split(";"):
        statement += piece + ";"
        if sqlite3.complete_statement(statement):  # not inside a quote, a comment or a trigger's body
            if statement.strip(" \n;"):
                yield statement
            statement = ""


def _rollback(db: sqlite3.Connection) -> None:
    if db.in_transaction:
        db.execute("ROLLBACK")

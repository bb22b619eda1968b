"""Has anything changed for a session since its delta cursor? One indexed read.

A heartbeat runs on every prompt, and almost always nothing changed: answering that
must cost next to nothing. So this opens no `SqliteBrain` (schema checks, pragmas,
migrations) and no dispatcher — one plain connection and one query that walks the
`pages_changed` and `facts_created` indexes from the session's cursor. It errs towards
"changed": private pages and expired facts count too (the delta filters them), and any
doubt — no cursor yet, no brain, an old schema, a lock — answers None, "ask delta",
whose path classifies the failure properly.

A Postgres brain gets the same read over one plain psycopg connection (no pool, no
`PostgresBrain`, whose stores import far more): the twin below walks the same indexes.
"""

from __future__ import annotations

import os
import sqlite3

# Not `typing.TYPE_CHECKING`: importing typing would cost an unchanged heartbeat (hooks/fastpath.py) a few
# milliseconds; type checkers read this constant the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from memverbs.server.brain.location import BrainLocation

# The page arm mirrors delta's keyset (updated_at, slug); an empty cursor slug means
# "strictly after the instant", as in delta. It is a range of pages_changed from the cursor's instant
# (`updated_at >=` first, the keyset within it), named: without statistics the planner took another
# index that pins only the source, and so walked every page of a brain with nothing new (7 ms at
# 10,000 pages, on every prompt).
_QUERY = """
SELECT EXISTS (
         SELECT 1 FROM pages p INDEXED BY pages_changed
         WHERE p.source_id = c.source_id AND p.deleted_at IS NULL AND p.updated_at >= c.last_wake_at
           AND (p.updated_at > c.last_wake_at OR (c.cursor_slug != '' AND p.slug > c.cursor_slug)))
    OR EXISTS (SELECT 1 FROM facts f WHERE f.source_id = c.source_id AND f.created_at > c.last_wake_at)
FROM session_cursors c
WHERE c.source_id = ? AND c.client_id = ? AND c.session_id = ?
"""
BUSY_MS = 200
# The same read on Postgres, shaped for its planner: an EXISTS over "rows after the cursor" is
# planned before the cursor is known (a third of the rows assumed to match), so on a quiet brain
# it would scan them all to find none. Instead each arm reads the newest entry of its index once —
# pages_changed (source_id, updated_at, slug) walked backwards, facts_created (source_id,
# created_at) through max() — and compares it with the cursor: the newest page is after the keyset
# (updated_at, slug) exactly when some page is. An empty cursor slug means "strictly after the
# instant": (updated_at, slug) > (instant + 1 ms, ''), every slug being longer than ''.
_PG_QUERY = """
SELECT COALESCE((p.updated_at, p.slug) > (c.last_wake_at + (c.cursor_slug = '')::int, c.cursor_slug), false)
    OR COALESCE(f.newest > c.last_wake_at, false)
FROM session_cursors c
LEFT JOIN LATERAL (SELECT updated_at, slug FROM pages
                   WHERE source_id = c.source_id AND deleted_at IS NULL
                   ORDER BY updated_at DESC, slug DESC LIMIT 1) p ON true
LEFT JOIN LATERAL (SELECT max(created_at) AS newest FROM facts WHERE source_id = c.source_id) f ON true
WHERE c.source_id = %s AND c.client_id = %s AND c.session_id = %s
"""
PG_CONNECT_TIMEOUT_S = 2  # libpq's smallest; the hook's own deadline still bounds the wait


def connect(brain: str | os.PathLike[str], busy_ms: int = BUSY_MS) -> sqlite3.Connection | None:
    """One plain connection to an existing SQLite brain (read-write, never created); None when it cannot be had."""
    try:
        return sqlite3.connect(f"{_file_uri(brain)}?mode=rw", uri=True, timeout=busy_ms / 1000)
    except (sqlite3.Error, OSError, ValueError):
        return None


def changed_on(db: sqlite3.Connection, source: str, lane: str, session: str) -> bool | None:
    """True/False when the session's cursor answers on `db`; None when only a full delta can tell."""
    try:
        row = db.execute(_QUERY, (source, lane, session)).fetchone()
    except sqlite3.Error:
        return None
    return None if row is None else bool(row[0])


def changed_since_cursor(
    brain: str | os.PathLike[str], source: str, lane: str, session: str, busy_ms: int = BUSY_MS
) -> bool | None:
    """True/False when the cursor answers; None when only a full delta can tell."""
    db = connect(brain, busy_ms)
    if db is None:
        return None
    try:
        return changed_on(db, source, lane, session)
    finally:
        db.close()


def changed_in(where: BrainLocation, source: str, lane: str, session: str) -> bool | None:
    """The check for the configured brain, whichever backend holds it."""
    db = plain_connection(where)
    if db is None:
        return None
    try:
        return changed_on_plain(db, where.backend, source, lane, session)
    finally:
        db.close()


def plain_connection(where: BrainLocation) -> Any:
    """One plain DB-API connection to the configured brain (sqlite3's, or psycopg's in autocommit, the
    brain's keyring password given): no brain object, no pool. None when it cannot be had; the full
    path says why, classified. The caller closes it."""
    if where.backend != "postgres":
        return connect(where.path) if where.path is not None else None
    if not where.url:
        return None
    try:
        import psycopg  # noqa: PLC0415 - only a Postgres brain pays for the driver

        from memverbs.server.brain.password import keyring_password  # noqa: PLC0415 - stdlib unless a note names the keyring
    except ImportError:
        return None  # no driver: the full path says so, classified
    password = keyring_password(where.url, where.keyring)
    try:
        return psycopg.connect(where.url, autocommit=True, connect_timeout=PG_CONNECT_TIMEOUT_S, password=password)
    except (psycopg.Error, OSError, ValueError):
        return None  # unreachable, refused: the full path classifies it


def changed_on_plain(db: Any, backend: str, source: str, lane: str, session: str) -> bool | None:
    """changed_on for a plain connection of either backend."""
    if backend != "postgres":
        return changed_on(db, source, lane, session)
    import psycopg  # noqa: PLC0415 - loaded by plain_connection already

    try:
        row = db.execute(_PG_QUERY, (source, lane, session)).fetchone()
    except (psycopg.Error, OSError, ValueError):
        return None  # an old schema, a dropped connection: the full path classifies it
    return None if row is None else bool(row[0])


def _file_uri(path: str | os.PathLike[str]) -> str:
    """A `file:` URI SQLite reads back as `path` (without pathlib, which the hook's fast path does not import):
    only `%`, `?` and `#` mean something inside a SQLite URI's path."""
    absolute = os.path.abspath(os.fspath(path))
    return "file:" + absolute.replace("%", "%25").replace("?", "%3f").replace("#", "%23")

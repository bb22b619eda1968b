"""A brain's hook operations on a plain DB-API connection: what a hook asks before, or instead of, opening a brain.

A hook runs on every prompt, and almost always nothing changed: answering that must cost next to
nothing. So these operations open no `SqliteBrain` (schema checks, pragmas, migrations, every
store composed) and no dispatcher: one plain connection (`sqlite3`'s, or psycopg's in autocommit on
a Postgres brain, no pool) and the few statements below. They are the store layer's, written once
for both backends like every store's (`?` marks, rewritten to psycopg's `%s`), and they read what
the stores write:

* `changed(source, lane, session)` — has anything changed for a session since its delta cursor? One
  indexed read that walks the `pages_changed` and `facts_created` indexes from the cursor. It errs
  towards "changed": private pages and expired facts count too (delta filters them), and any doubt —
  no cursor yet, an old schema, a lock — answers None, "ask delta", whose path classifies the failure.
* `named`, `pages`, `facts` — the per-prompt reflex's reads (server/verbs/readout.py chooses the pointers):
  the name index's lookup, the named pages' titles and summaries, an entity's newest facts; world-visible
  only, as the packs read them.

Imports `os` and `sqlite3` only (`psycopg` on a Postgres brain, when a connection is made), so
hooks/fastpath.py can answer an unchanged heartbeat on it.
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

BUSY_MS = 200
PG_CONNECT_TIMEOUT_S = 2  # libpq's smallest; the hook's own deadline still bounds the wait
MAX_KEYS = 5_000  # name keys per statement: far below SQLite's parameter limit

# The page arm mirrors delta's keyset (updated_at, slug); an empty cursor slug means
# "strictly after the instant", as in delta. It is a range of pages_changed from the cursor's instant
# (`updated_at >=` first, the keyset within it), named: without statistics the planner took another
# index that pins only the source, and so walked every page of a brain with nothing new (7 ms at
# 10,000 pages, on every prompt).
CHANGED = """
SELECT EXISTS (
         SELECT 1 FROM pages p INDEXED BY pages_changed
         WHERE p.source_id = c.source_id AND p.deleted_at IS NULL AND p.updated_at >= c.last_wake_at
           AND (p.updated_at > c.last_wake_at OR (c.cursor_slug != '' AND p.slug > c.cursor_slug)))
    OR EXISTS (SELECT 1 FROM facts f WHERE f.source_id = c.source_id AND f.created_at > c.last_wake_at)
FROM session_cursors c
WHERE c.source_id = ? AND c.client_id = ? AND c.session_id = ?
"""
# The same read on Postgres, shaped for its planner: an EXISTS over "rows after the cursor" is
# planned before the cursor is known (a third of the rows assumed to match), so on a quiet brain
# it would scan them all to find none. Instead each arm reads the newest entry of its index once —
# pages_changed (source_id, updated_at, slug) walked backwards, facts_created (source_id,
# created_at) through max() — and compares it with the cursor: the newest page is after the keyset
# (updated_at, slug) exactly when some page is. An empty cursor slug means "strictly after the
# instant": (updated_at, slug) > (instant + 1 ms, ''), every slug being longer than ''.
PG_CHANGED = """
SELECT COALESCE((p.updated_at, p.slug) > (c.last_wake_at + (c.cursor_slug = '')::int, c.cursor_slug), false)
    OR COALESCE(f.newest > c.last_wake_at, false)
FROM session_cursors c
LEFT JOIN LATERAL (SELECT updated_at, slug FROM pages
                   WHERE source_id = c.source_id AND deleted_at IS NULL
                   ORDER BY updated_at DESC, slug DESC LIMIT 1) p ON true
LEFT JOIN LATERAL (SELECT max(created_at) AS newest FROM facts WHERE source_id = c.source_id) f ON true
WHERE c.source_id = ? AND c.client_id = ? AND c.session_id = ?
"""
# delta's session cursors (cursors_store.py runs these too): one row per (source, client lane, session).
CURSOR = "SELECT last_wake_at, cursor_slug FROM session_cursors WHERE source_id = ? AND client_id = ? AND session_id = ?"
SAVE_CURSOR = (
    "INSERT INTO session_cursors (source_id, client_id, session_id, last_wake_at, cursor_slug, created_at, updated_at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (source_id, client_id, session_id) DO UPDATE SET "
    "last_wake_at = excluded.last_wake_at, cursor_slug = excluded.cursor_slug, updated_at = excluded.updated_at"
)
GC_IDLE_CURSORS = "DELETE FROM session_cursors WHERE updated_at < ?"
GC_LANE_CURSORS = (
    "DELETE FROM session_cursors WHERE source_id = ? AND client_id = ? AND session_id NOT IN ("
    " SELECT session_id FROM session_cursors WHERE source_id = ? AND client_id = ? ORDER BY updated_at DESC LIMIT ?)"
)
# The reflex's reads, world-visible only. `{among}` is a list of values (`IN (?, …)`, or `= ANY(?)`).
# A page's body's first stretch only when it has no summary: its first prose sentence stands in.
PAGES = (
    "SELECT slug, title, summary, CASE WHEN summary IS NULL OR summary = '' THEN substr(body, 1, 2000) END, updated_at "
    "FROM pages WHERE source_id = ? AND slug {among} AND deleted_at IS NULL AND visibility = 'world'"
)
# facts_store.entity_facts's rows, world-visible and active, for one entity: through facts_entity.
FACTS = (
    "SELECT id, fact, kind, valid_from FROM {facts} WHERE source_id = ? AND entity_slug = ? "
    "AND expired_at IS NULL AND (valid_until IS NULL OR valid_until > ?) AND visibility = 'world' "
    "ORDER BY valid_from DESC, id DESC LIMIT ?"
)


def connect(brain: str | os.PathLike[str], busy_ms: int = BUSY_MS) -> sqlite3.Connection | None:
    """One plain connection to an existing SQLite brain (read-write, never created); None when it cannot be had."""
    try:
        return sqlite3.connect(f"{_file_uri(brain)}?mode=rw", uri=True, timeout=busy_ms / 1000)
    except (sqlite3.Error, OSError, ValueError):
        return None


def open_plain(where: BrainLocation, busy_ms: int = BUSY_MS) -> PlainBrain | None:
    """The configured brain on a plain connection (the brain's keyring password given on Postgres): no
    brain object, no pool. None when it cannot be had; the full path says why, classified. Close it."""
    if where.backend != "postgres":
        db = connect(where.sqlite_file, busy_ms) if where.sqlite_file is not None else None
        return PlainBrain(db) if db is not None else None
    if not where.url:
        return None
    try:
        import psycopg  # noqa: PLC0415 - only a Postgres brain pays for the driver

        from memverbs.server.brain.password import keyring_password  # noqa: PLC0415 - stdlib unless a note names the keyring
    except ImportError:
        return None  # no driver: the full path says so, classified
    password = keyring_password(where.url, where.keyring)
    try:
        conn = psycopg.connect(where.url, autocommit=True, connect_timeout=PG_CONNECT_TIMEOUT_S, password=password)
    except (psycopg.Error, OSError, ValueError):
        return None  # unreachable, refused: the full path classifies it
    return PlainBrain(conn, "postgres")


class PlainBrain:
    """A plain connection and the operations above: sqlite3's, or psycopg's on a Postgres brain (whose
    row-level security still applies)."""

    def __init__(self, db: Any, backend: str = "sqlite") -> None:
        self.db, self.postgres = db, backend == "postgres"
        if self.postgres:
            import psycopg  # noqa: PLC0415 - loaded by open_plain already

            self._errors: tuple[type[Exception], ...] = (psycopg.Error, OSError, ValueError)
        else:
            self._errors = (sqlite3.Error,)

    def close(self) -> None:
        self.db.close()

    def _run(self, sql: str, args: tuple) -> list[tuple]:
        return self.db.execute(sql.replace("?", "%s") if self.postgres else sql, args).fetchall()

    def _among(self, template: str, head: tuple, values: list, tail: tuple = ()) -> list[tuple]:
        if self.postgres:
            among, args = "= ANY(?)", (list(values),)
        else:
            among, args = f"IN ({','.join('?' * len(values))})", tuple(values)
        return self._run(template.format(among=among), (*head, *args, *tail))

    def changed(self, source: str, lane: str, session: str) -> bool | None:
        """True/False when the session's cursor answers; None when only a full delta can tell."""
        try:
            rows = self._run(PG_CHANGED if self.postgres else CHANGED, (source, lane, session))
        except self._errors:
            return None  # an old schema, a lock, a dropped connection: the full path classifies it
        return bool(rows[0][0]) if rows else None

    def named(self, source: str, keys: list[str]) -> list[tuple]:
        """The name index's rows for `keys` (server/name_index.py), world-visible pages and facts only."""
        from memverbs.server.name_index import named_sql  # noqa: PLC0415 - a prompt's reads only

        template = named_sql("n.name_key {among}")
        rows: list[tuple] = []
        for at in range(0, len(keys), MAX_KEYS):
            rows += self._among(template, (source,), keys[at : at + MAX_KEYS], (False, False))
        return rows

    def pages(self, source: str, slugs: list[str]) -> dict[str, tuple]:
        """slug → (title, summary, the body's head when there is no summary, updated_at), world pages only."""
        return {r[0]: tuple(r[1:]) for r in self._among(PAGES, (source,), slugs)}

    def facts(self, source: str, slug: str, now: int, limit: int) -> list[tuple]:
        """An entity's newest active world facts: (id, fact, kind, valid_from)."""
        sql = FACTS.format(facts="facts" if self.postgres else "facts INDEXED BY facts_entity")
        return self._run(sql, (source, slug, now, limit))


def _file_uri(path: str | os.PathLike[str]) -> str:
    """A `file:` URI SQLite reads back as `path` (without pathlib, which the hook's fast path does not import):
    only `%`, `?` and `#` mean something inside a SQLite URI's path."""
    absolute = os.path.abspath(os.fspath(path))
    return "file:" + absolute.replace("%", "%25").replace("?", "%3f").replace("#", "%23")

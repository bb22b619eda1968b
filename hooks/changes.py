"""Has anything changed for a session since its delta cursor? One indexed read.

A heartbeat runs on every prompt, and almost always nothing changed: answering that
must cost next to nothing. So this opens no `SqliteBrain` (schema checks, pragmas,
migrations) and no dispatcher — one plain connection and one query that walks the
`pages_changed` and `facts_created` indexes from the session's cursor. It errs towards
"changed": private pages and expired facts count too (the delta filters them), and any
doubt — no cursor yet, no brain, an old schema, a lock — answers None, "ask delta",
whose path classifies the failure properly.
"""

from __future__ import annotations

import os
import sqlite3

# The page arm mirrors delta's keyset (updated_at, slug); an empty cursor slug means
# "strictly after the instant", as in delta.
_QUERY = """
SELECT EXISTS (
         SELECT 1 FROM pages p
         WHERE p.source_id = c.source_id AND p.deleted_at IS NULL
           AND (p.updated_at > c.last_wake_at
                OR (c.cursor_slug != '' AND p.updated_at = c.last_wake_at AND p.slug > c.cursor_slug)))
    OR EXISTS (SELECT 1 FROM facts f WHERE f.source_id = c.source_id AND f.created_at > c.last_wake_at)
FROM session_cursors c
WHERE c.source_id = ? AND c.client_id = ? AND c.session_id = ?
"""
BUSY_MS = 200


def changed_since_cursor(
    brain: str | os.PathLike[str], source: str, lane: str, session: str, busy_ms: int = BUSY_MS
) -> bool | None:
    """True/False when the cursor answers; None when only a full delta can tell."""
    try:
        db = sqlite3.connect(f"{_file_uri(brain)}?mode=rw", uri=True, timeout=busy_ms / 1000)
    except (sqlite3.Error, OSError, ValueError):
        return None
    try:
        row = db.execute(_QUERY, (source, lane, session)).fetchone()
    except sqlite3.Error:
        return None
    finally:
        db.close()
    return None if row is None else bool(row[0])


def _file_uri(path: str | os.PathLike[str]) -> str:
    """A `file:` URI SQLite reads back as `path` (without pathlib, which the hook's fast path does not import):
    only `%`, `?` and `#` mean something inside a SQLite URI's path."""
    absolute = os.path.abspath(os.fspath(path))
    return "file:" + absolute.replace("%", "%25").replace("?", "%3f").replace("#", "%23")

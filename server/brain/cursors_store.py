"""delta's session cursors: one row per (source, client lane, session)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memverbs.server.brain.store import Store

if TYPE_CHECKING:
    from memverbs.server.brain.base import Row

IDLE_MS = 7 * 24 * 3600 * 1000
KEEP_PER_LANE = 1000


class CursorStore(Store):
    def cursor(self, source: str, client: str, session: str) -> Row | None:
        return self.one(
            "SELECT last_wake_at, cursor_slug FROM session_cursors WHERE source_id = ? AND client_id = ? AND session_id = ?",
            (source, client, session),
        )

    def save_cursor(self, source: str, client: str, session: str, last_wake_at: int, slug: str, now: int) -> None:
        with self.write() as db:
            db.execute(
                "INSERT INTO session_cursors (source_id, client_id, session_id, last_wake_at, cursor_slug, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (source_id, client_id, session_id) DO UPDATE SET "
                "last_wake_at = excluded.last_wake_at, cursor_slug = excluded.cursor_slug, updated_at = excluded.updated_at",
                (source, client, session, last_wake_at, slug, now, now),
            )

    def gc_cursors(self, now: int, source: str | None = None, client: str | None = None) -> int:
        """Drop cursors idle for 7 days, and all but the newest 1000 of a lane."""
        with self.write() as db:
            gone = db.execute("DELETE FROM session_cursors WHERE updated_at < ?", (now - IDLE_MS,)).rowcount
            if source is not None and client is not None:
                gone += db.execute(
                    "DELETE FROM session_cursors WHERE source_id = ? AND client_id = ? AND session_id NOT IN ("
                    " SELECT session_id FROM session_cursors WHERE source_id = ? AND client_id = ?"
                    " ORDER BY updated_at DESC LIMIT ?)",
                    (source, client, source, client, KEEP_PER_LANE),
                ).rowcount
            return gone

"""delta's session cursors: one row per (source, client lane, session).

The statements are written once in server/brain/plain.py, beside the change check a hook runs on its plain
connection against the same rows.
"""

from __future__ import annotations

from memverbs.server.brain.plain import CURSOR, GC_IDLE_CURSORS, GC_LANE_CURSORS, SAVE_CURSOR
from memverbs.server.brain.store import Store

TYPE_CHECKING = False  # typing's flag, without importing typing on a hook's start

if TYPE_CHECKING:
    from memverbs.server.brain.base import Row
    from memverbs.server.brain.store import Tx

IDLE_MS = 7 * 24 * 3600 * 1000
KEEP_PER_LANE = 1000


class CursorStore(Store):
    def cursor(self, source: str, client: str, session: str) -> Row | None:
        return self.one(CURSOR, (source, client, session))

    def save_cursor(self, source: str, client: str, session: str, last_wake_at: int, slug: str, now: int) -> None:
        with self.write() as db:
            db.execute(SAVE_CURSOR, (source, client, session, last_wake_at, slug, now, now))

    def start_cursor(self, source: str, client: str, session: str, last_wake_at: int, now: int) -> None:
        """A new session's cursor, and the collection `gc_cursors` makes, in one write: a session start
        commits (and later checkpoints) once, not twice."""
        with self.write() as db:
            db.execute(SAVE_CURSOR, (source, client, session, last_wake_at, "", now, now))
            self._collect(db, now, source, client)

    def gc_cursors(self, now: int, source: str | None = None, client: str | None = None) -> int:
        """Drop cursors idle for 7 days, and all but the newest 1000 of a lane."""
        with self.write() as db:
            return self._collect(db, now, source, client)

    @staticmethod
    def _collect(db: Tx, now: int, source: str | None, client: str | None) -> int:
        gone = db.execute(GC_IDLE_CURSORS, (now - IDLE_MS,)).rowcount
        if source is not None and client is not None:
            gone += db.execute(GC_LANE_CURSORS, (source, client, source, client, KEEP_PER_LANE)).rowcount
        return gone

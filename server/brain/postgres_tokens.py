"""Access tokens in the Postgres brain: hashes only, revoked rather than deleted (an audit trail)."""

from __future__ import annotations

from memverbs.server.brain.base import TokenNameTaken
from memverbs.server.brain.postgres_base import PostgresBase, first
from memverbs.server.brain.postgres_rows import Row
from memverbs.server.brain.sqlite_tokens import TOKEN_COLS, TOUCH_EVERY_MS
from memverbs.server.errors import BrainError
from memverbs.server.people import OWNER


class TokenStore(PostgresBase):
    def create_token(self, *, name: str, token_hash: str, token_hint: str, scopes: str, surface: str,
                     source_id: str, client_id: str, now: int, person: int = OWNER) -> int:
        with self.write() as db:
            # Writers are serialised, so checking first is exact (and leaves no failed statement behind).
            if db.execute("SELECT 1 FROM access_tokens WHERE name = %s AND revoked_at IS NULL", (name,)).fetchone():
                raise TokenNameTaken(name)
            return first(db.execute(
                "INSERT INTO access_tokens (name, token_hash, token_hint, scopes, surface, source_id, client_id, created_at, person) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
                (name, token_hash, token_hint, scopes, surface, source_id, client_id, now, person),
            ))[0]

    def tokens(self, *, include_revoked: bool = False) -> list:
        where = "" if include_revoked else "WHERE revoked_at IS NULL"
        return self.query(f"SELECT {TOKEN_COLS} FROM access_tokens {where} ORDER BY created_at, id")

    def live_token(self, token_hash: str) -> Row | None:
        return self.one(
            f"SELECT {TOKEN_COLS} FROM access_tokens WHERE token_hash = %s AND revoked_at IS NULL", (token_hash,)
        )

    def revoke_token(self, name: str, now: int) -> int:
        with self.write() as db:
            return db.execute(
                "UPDATE access_tokens SET revoked_at = %s WHERE name = %s AND revoked_at IS NULL", (now, name)
            ).rowcount

    def touch_token(self, token_id: int, last_used_at: int | None, now: int) -> None:
        """Record use, at most once a minute per token; best-effort."""
        if last_used_at is not None and now - last_used_at < TOUCH_EVERY_MS:
            return
        try:
            with self.write() as db:
                db.execute("UPDATE access_tokens SET last_used_at = %s WHERE id = %s", (now, token_id))
        except BrainError:  # bookkeeping must never fail an authenticated request
            pass

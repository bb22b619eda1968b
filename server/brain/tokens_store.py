"""Access tokens: hashes only, revoked rather than deleted (an audit trail)."""

from __future__ import annotations

from memverbs.server.brain.base import TokenNameTaken
from memverbs.server.brain.store import Store, first
from memverbs.server.people import OWNER

TYPE_CHECKING = False  # typing's flag, without importing typing on a hook's start

if TYPE_CHECKING:
    from memverbs.server.brain.base import Row

TOKEN_COLS = "id, name, token_hint, scopes, surface, source_id, client_id, created_at, last_used_at, revoked_at, person"


class TokenStore(Store):
    def create_token(self, *, name: str, token_hash: str, token_hint: str, scopes: str, surface: str,
                     source_id: str, client_id: str, now: int, person: int = OWNER) -> int:
        with self.write() as db:
            # Writers are serialised, so checking first is exact (and on Postgres leaves no failed
            # statement behind to abort the transaction).
            if db.execute("SELECT 1 FROM access_tokens WHERE name = ? AND revoked_at IS NULL", (name,)).fetchone():
                raise TokenNameTaken(name)
            return int(first(db.execute(
                "INSERT INTO access_tokens (name, token_hash, token_hint, scopes, surface, source_id, client_id, created_at, person) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                (name, token_hash, token_hint, scopes, surface, source_id, client_id, now, person),
            ))[0])

    def tokens(self, *, include_revoked: bool = False) -> list[Row]:
        where = "" if include_revoked else "WHERE revoked_at IS NULL"
        return self.query(f"SELECT {TOKEN_COLS} FROM access_tokens {where} ORDER BY created_at, id")

    def live_token(self, token_hash: str) -> Row | None:
        """The unrevoked token with this hash, or None."""
        return self.one(
            f"SELECT {TOKEN_COLS} FROM access_tokens WHERE token_hash = ? AND revoked_at IS NULL", (token_hash,)
        )

    def revoke_token(self, name: str, now: int) -> int:
        """Revoke the live token called `name`; returns how many were revoked (0 or 1)."""
        with self.write() as db:
            return db.execute(
                "UPDATE access_tokens SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL", (now, name)
            ).rowcount

    def touch_token(self, token_id: int, last_used_at: int | None, now: int) -> None:
        self.touch_last_used("access_tokens", token_id, last_used_at, now)

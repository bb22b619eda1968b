"""OAuth clients and their credentials, in either backend: the same SQL on SQLite and Postgres.

Every credential (a pending consent request, an authorization code, an access or a
refresh token) is one `oauth_tokens` row keyed by the SHA-256 of its value, as
`access_tokens` are: the brain can check a credential and can never give one back.
A used request, code or refresh token is marked `revoked_at` in the same write
that issues what replaces it (`oauth_exchange`), so two racing uses cannot both
win. The statements are written once, in the stores' shared form (store.py).
"""

from __future__ import annotations

from memverbs.server.brain.store import Store

TYPE_CHECKING = False  # typing's flag, without importing typing on a hook's start

if TYPE_CHECKING:
    from memverbs.server.brain.base import Row

CLIENT_COLS = "id, client_id, name, metadata, secret_hash, lane, created_at, last_used_at, revoked_at"
CREDENTIAL_COLS = (
    "t.id, t.client_ref, t.kind, t.family, t.scopes, t.surface, t.source_id, t.resource, t.redirect_uri, "
    "t.code_challenge, t.state, t.attempts, t.expires_at, t.created_at, t.revoked_at, "
    "c.client_id, c.name, c.lane, c.last_used_at AS client_last_used_at, c.revoked_at AS client_revoked_at"
)
ISSUED = ("client_ref", "kind", "token_hash", "family", "scopes", "surface", "source_id", "resource",
          "redirect_uri", "code_challenge", "state", "expires_at", "created_at")


class OAuthStore(Store):
    # -- clients ------------------------------------------------------------------------------

    def oauth_add_client(self, *, client_id: str, name: str, metadata: str, secret_hash: str | None, lane: str,
                         now: int) -> int:
        with self.write() as db:
            row = db.execute("INSERT INTO oauth_clients (client_id, name, metadata, secret_hash, lane, created_at) "
                                "VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
                            (client_id, name, metadata, secret_hash, lane, now)).fetchone()
            return int(row[0])

    def oauth_client(self, client_id: str) -> Row | None:
        """A live (unrevoked) client by its OAuth client_id."""
        return self.one(f"SELECT {CLIENT_COLS} FROM oauth_clients WHERE client_id = ? AND revoked_at IS NULL",
                        (client_id,))

    def oauth_clients(self, *, include_revoked: bool = False) -> list[Row]:
        where = "" if include_revoked else "WHERE revoked_at IS NULL"
        return self.query(f"SELECT {CLIENT_COLS} FROM oauth_clients {where} ORDER BY created_at, id")

    def oauth_revoke_client(self, client_ref: int, now: int) -> int:
        """Revoke a client and every credential it holds; 1 if it was live, else 0."""
        with self.write() as db:
            done = db.execute("UPDATE oauth_clients SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                             (now, client_ref)).rowcount
            db.execute("UPDATE oauth_tokens SET revoked_at = ? WHERE client_ref = ? AND revoked_at IS NULL",
                      (now, client_ref))
            return int(done)

    def oauth_live_clients(self) -> int:
        return int(self.aggregate("SELECT count(*) FROM oauth_clients WHERE revoked_at IS NULL")[0])

    def oauth_forget_unused_clients(self, before: int) -> int:
        """Delete the clients registered before `before` that never got a credential and were never used:
        a registration nobody finished (a flood of them would otherwise stay, counted against the cap)."""
        with self.write() as db:
            return int(db.execute(
                "DELETE FROM oauth_clients WHERE created_at < ? AND last_used_at IS NULL AND NOT EXISTS "
                "(SELECT 1 FROM oauth_tokens t WHERE t.client_ref = oauth_clients.id)", (before,)).rowcount)

    def oauth_touch_client(self, client_ref: int, last_used_at: int | None, now: int) -> None:
        self.touch_last_used("oauth_clients", client_ref, last_used_at, now)

    # -- credentials --------------------------------------------------------------------------

    def oauth_credential(self, kind: str, token_hash: str) -> Row | None:
        """The credential of this kind with this hash, with its client's id, name, lane and state —
        used and revoked ones too, so a replay can be recognised."""
        return self.one(f"SELECT {CREDENTIAL_COLS} FROM oauth_tokens t JOIN oauth_clients c ON c.id = t.client_ref "
            "WHERE t.token_hash = ? AND t.kind = ?", (token_hash, kind))

    def oauth_exchange(self, used: int | None, issue: list[dict], now: int) -> list[int] | None:
        """In one write: mark credential `used` spent (unless it already was: None, nothing issued),
        then insert each of `issue` (`ISSUED` columns; a `family` of None is the row's own id)."""
        with self.write() as db:
            if used is not None and db.execute(
                "UPDATE oauth_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", (now, used)
            ).rowcount != 1:
                return None
            ids = []
            marks = ", ".join("?" for _ in ISSUED)
            for item in issue:
                values = tuple(now if col == "created_at" else item.get(col) for col in ISSUED)
                new_id = int(db.execute(f"INSERT INTO oauth_tokens ({', '.join(ISSUED)}) VALUES ({marks}) RETURNING id",
                                       values).fetchone()[0])
                if item.get("family") is None:
                    db.execute("UPDATE oauth_tokens SET family = ? WHERE id = ?", (new_id, new_id))
                ids.append(new_id)
            return ids

    def oauth_forget_expired(self, before: int, *, requests_before: int | None = None) -> int:
        """Delete credentials that expired before `before` (consent requests: before `requests_before`,
        when given): nothing can use them any more (every check compares the expiry), and a replay of
        one is refused as unknown."""
        with self.write() as db:
            gone = db.execute("DELETE FROM oauth_tokens WHERE expires_at < ?", (before,)).rowcount
            if requests_before is not None:
                gone += db.execute("DELETE FROM oauth_tokens WHERE kind = 'request' AND expires_at < ?",
                                   (requests_before,)).rowcount
            return int(gone)

    def oauth_pending(self, client_ref: int, now: int) -> tuple[int, int]:
        """(this client's, everyone's) live consent requests: unanswered and unexpired."""
        row = self.aggregate(
            "SELECT count(*) FILTER (WHERE client_ref = ?), count(*) FROM oauth_tokens "
            "WHERE kind = 'request' AND revoked_at IS NULL AND expires_at > ?", (client_ref, now))
        return int(row[0]), int(row[1])

    def oauth_revoke_family(self, family: int, now: int) -> int:
        """End an authorization: every live credential descending from it."""
        with self.write() as db:
            return int(db.execute("UPDATE oauth_tokens SET revoked_at = ? WHERE family = ? AND revoked_at IS NULL",
                                 (now, family)).rowcount)

    def oauth_failed_attempt(self, token_id: int) -> int:
        """Count one wrong owner login against a pending request; returns the count so far."""
        with self.write() as db:
            row = db.execute("UPDATE oauth_tokens SET attempts = attempts + 1 WHERE id = ? RETURNING attempts",
                            (token_id,)).fetchone()
            return int(row[0]) if row is not None else 0

    def oauth_live_grants(self, now: int) -> list[Row]:
        """Every unexpired, unrevoked access and refresh token (no hashes): what each client holds now."""
        return self.query("SELECT client_ref, kind, scopes, surface, source_id, resource, expires_at, created_at FROM oauth_tokens "
            "WHERE kind IN ('access', 'refresh') AND revoked_at IS NULL AND expires_at > ? ORDER BY id", (now,))

    # -- the owner's login --------------------------------------------------------------------

    def oauth_add_owner_secret(self, *, kind: str, secret_hash: str, expires_at: int | None, now: int) -> int:
        """Keep an owner secret; a new password replaces the old one."""
        with self.write() as db:
            if kind == "password":
                db.execute("UPDATE oauth_owner_secrets SET used_at = ? WHERE kind = 'password' AND used_at IS NULL",
                          (now,))
            row = db.execute("INSERT INTO oauth_owner_secrets (kind, secret_hash, expires_at, created_at) "
                                "VALUES (?, ?, ?, ?) RETURNING id", (kind, secret_hash, expires_at, now)).fetchone()
            return int(row[0])

    def oauth_owner_secrets(self, kind: str, now: int) -> list[Row]:
        """The live owner secrets of a kind: never used (a password: not replaced), not expired."""
        return self.query("SELECT id, kind, secret_hash, expires_at, created_at FROM oauth_owner_secrets "
            "WHERE kind = ? AND used_at IS NULL AND (expires_at IS NULL OR expires_at > ?) ORDER BY id", (kind, now))

    def oauth_use_owner_secret(self, secret_id: int, now: int) -> bool:
        """Spend a one-time secret; False when another request spent it first."""
        with self.write() as db:
            return bool(db.execute("UPDATE oauth_owner_secrets SET used_at = ? WHERE id = ? AND used_at IS NULL",
                                  (now, secret_id)).rowcount == 1)

    def oauth_clear_owner_secrets(self, kind: str, now: int) -> int:
        with self.write() as db:
            return int(db.execute("UPDATE oauth_owner_secrets SET used_at = ? WHERE kind = ? AND used_at IS NULL",
                                 (now, kind)).rowcount)

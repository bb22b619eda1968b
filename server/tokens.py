"""Access tokens for remote brains: minting, hashing, and what a token grants.

A token is `mvb_` + 43 URL-safe characters (256 random bits). The brain keeps
only its SHA-256 (a lookup key that cannot be turned back into the token) and
a short hint to tell tokens apart; the token itself is shown once, at
creation. High entropy makes a plain, unsalted hash the right tool here: there
is nothing to brute-force, and lookups stay a single index probe.

Stdlib only: the CLI's `auth` commands and the HTTP server both use it.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memverbs.server.context import ALL_SCOPES, Caller
from memverbs.server.people import OWNER, READ_PRIVATE

if TYPE_CHECKING:
    from memverbs.server.brain.base import Row

PREFIX = "mvb_"
HINT_CHARS = 4  # after the prefix: enough to tell tokens apart in `auth list`, nothing to guess with
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
CLIENT_PREFIX = "token:"  # lanes are 'token:<name>': never 'local', never the auth-less 'remote'
SCOPE_ORDER = ("read", "write", READ_PRIVATE)
# What a token may be granted: the verbs' scopes, and read:private (its person's private rows; it implies read).
TOKEN_SCOPES = ALL_SCOPES | {READ_PRIVATE}


def mint() -> str:
    return PREFIX + secrets.token_urlsafe(32)


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def hint(token: str) -> str:
    return token[: len(PREFIX) + HINT_CHARS] + "…"


def looks_like_token(token: str) -> bool:
    return token.startswith(PREFIX) and len(token) > len(PREFIX) + 20


def check_name(name: str) -> str | None:
    """The problem with a token name, or None when it is fine."""
    if not NAME.match(name):
        return (
            f"token name {name!r} must be 1-64 characters of letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return None


def parse_scopes(text: str) -> frozenset[str]:
    """`read,write` → the scope set; raises ValueError naming the bad entry. `read:private` implies `read`."""
    scopes = frozenset(s.strip() for s in text.split(",") if s.strip())
    bad = sorted(scopes - TOKEN_SCOPES)
    if bad or not scopes:
        raise ValueError(
            f"unknown scope {bad[0]!r}" if bad else "no scope given"
        )
    return scopes | {"read"} if READ_PRIVATE in scopes else scopes


def scopes_text(scopes: frozenset[str] | set[str]) -> str:
    return ",".join(s for s in SCOPE_ORDER if s in scopes)


def client_id_for(name: str) -> str:
    return CLIENT_PREFIX + name


@dataclass(frozen=True)
class Grant:
    """What one valid token lets its holder do: read per request from the token's row (or an OAuth credential's)."""

    token_id: int
    name: str
    client_id: str
    scopes: frozenset[str]
    surface: str
    source_id: str
    # Where the grant came from: "token" (a static token's row) or "oauth" (an OAuth client's access token,
    # server/oauth/); `token_id` is then the client's row. Every fence downstream reads the fields above only.
    kind: str = "token"
    # The person the token acts for (server/people.py): its private writes are theirs, and with
    # read:private it reads their private rows (and nobody else's). OAuth clients act for the owner.
    person: int = OWNER

    @classmethod
    def from_row(cls, row: Row) -> Grant:
        return cls(
            token_id=row["id"],
            name=row["name"],
            client_id=row["client_id"],
            scopes=frozenset(s for s in row["scopes"].split(",") if s),
            surface=row["surface"],
            source_id=row["source_id"],
            person=row["person"],
        )

    def caller(self) -> Caller:
        """A remote caller on the token's own cursor lane, for the token's person, with its scopes
        (world rows only, unless read:private lets it read its person's private rows)."""
        return Caller.mcp(self.source_id, self.client_id, self.scopes, person=self.person)

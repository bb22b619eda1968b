"""What the authorization server issues, and the `Grant` an OAuth access token gives.

Every credential is 256 random bits behind a prefix that names its kind (so the
bearer gate knows which table to ask, and a leaked value says what it is), and
the brain keeps only its SHA-256, as for static tokens. Access tokens are short
(an hour) and bound to this server's public `/mcp` URL (RFC 8707); refresh tokens
last 30 days and are rotated on every use; codes live 5 minutes, a consent
request 10.

No MCP SDK: `memverbs auth clients` reads it.
"""

from __future__ import annotations

import hashlib
import secrets
from typing import TYPE_CHECKING

from memverbs.server import tokens
from memverbs.server.protocol.surfaces import SURFACES, narrower

if TYPE_CHECKING:
    from memverbs.server.brain.base import Row

ACCESS_PREFIX = "mva_"
REFRESH_PREFIX = "mvr_"
CODE_PREFIX = "mvc_"
REQUEST_PREFIX = "mvq_"
PREFIXES = {"access": ACCESS_PREFIX, "refresh": REFRESH_PREFIX, "code": CODE_PREFIX, "request": REQUEST_PREFIX}

ACCESS_TTL_S = 3600
REFRESH_TTL_S = 30 * 86400
CODE_TTL_S = 300
REQUEST_TTL_S = 600

ACCESS_SCOPES = ("read", "write")
SURFACE_SCOPE = "surface:"  # a client may ask for less than the full surface: `surface:verbs`
SUPPORTED_SCOPES = (*ACCESS_SCOPES, *(SURFACE_SCOPE + s for s in SURFACES))
LANE_PREFIX = "oauth:"  # a client's cursor lane and usage-log client: never 'local', never 'token:…'


def mint(kind: str) -> str:
    return PREFIXES[kind] + secrets.token_urlsafe(32)


def digest(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8")).hexdigest()


def is_access_token(value: str) -> bool:
    return value.startswith(ACCESS_PREFIX) and len(value) > len(ACCESS_PREFIX) + 20


def lane_for(client_id: str) -> str:
    return LANE_PREFIX + client_id


def parse_request(scopes: list[str] | None, ceiling: str) -> tuple[frozenset[str], str]:
    """What a client asked for (OAuth scopes) → access scopes and a surface, capped by the ceiling.
    No access scope asked: read and write (the owner can untick write on the consent page)."""
    asked = set(scopes or ())
    access = frozenset(s for s in ACCESS_SCOPES if s in asked) or frozenset(ACCESS_SCOPES)
    surfaces = [s for s in SURFACES if SURFACE_SCOPE + s in asked]
    # Scopes add up, and each surface holds the narrower ones: several asked (a client asking for every
    # scope the metadata lists does) means the widest of them.
    surface = surfaces[-1] if surfaces else ceiling
    return access, narrower(surface, ceiling)


def scope_list(scopes_text: str, surface: str) -> list[str]:
    """A grant as OAuth scopes, for token responses and the SDK's scope checks."""
    return [s for s in ACCESS_SCOPES if s in scopes_text.split(",")] + [SURFACE_SCOPE + surface]


def grant_from(row: Row) -> tokens.Grant:
    """The `Grant` an access-token row (joined with its client) gives: the same shape a static token's
    row gives, so every verb, fence and surface rule downstream applies unchanged."""
    return tokens.Grant(
        token_id=row["client_ref"],
        name=row["name"],
        client_id=row["lane"],
        scopes=frozenset(s for s in row["scopes"].split(",") if s),
        surface=row["surface"],
        source_id=row["source_id"],
        kind="oauth",
    )

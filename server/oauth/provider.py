"""The MCP SDK's authorization-server provider, answered from the brain.

The SDK's handlers parse and validate every request (PKCE S256 included) and call
these methods for what only the brain knows. Every brain call runs on the HTTP
server's worker threads (`run`), each with its own connection.

Replays end what they could have stolen: a code presented a second time, or a
refresh token presented after it was rotated, revokes every credential issued
from the same authorization (OAuth 2.1 §4.1.2, §4.3.1; RFC 6819 §5.2.2.3).
"""

from __future__ import annotations

import base64
import binascii
import hmac
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import unquote

from mcp.server.auth.middleware.client_auth import AuthenticationError, ClientAuthenticator
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    OAuthAuthorizationServerProvider,
    RefreshToken,
    RegistrationError,
    TokenError,
)
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from starlette.requests import Request

from memverbs.server.brain.base import Brain
from memverbs.server.oauth import callbacks, credentials, limits
from memverbs.server.timeparse import now_ms

T = TypeVar("T")
Run = Callable[[Callable[[Brain], T]], Awaitable[T]]


@dataclass(frozen=True)
class OAuthConfig:
    issuer: str  # the authorization server's identifier: the public URL's origin
    resource: str  # the public /mcp URL: every access token's audience (RFC 8707)
    ceiling: str  # the server's surface: no grant is wider
    source_id: str  # the source every grant reads and writes
    registration: str  # known | any | off (callbacks.py)
    extra_redirects: frozenset[str] = frozenset()


def same_resource(given: str, resource: str) -> bool:
    """RFC 8707 indicators compare as URLs; a trailing slash aside, exactly."""
    return given.strip().removesuffix("/") == resource.removesuffix("/")


class RegistrationsFull(Exception):
    """The brain holds as many OAuth clients as it keeps (limits.MAX_CLIENTS): answered 503, nothing stored."""


class Code(AuthorizationCode):
    row_id: int
    client_ref: int
    surface: str


class Refresh(RefreshToken):
    row_id: int
    client_ref: int
    family: int
    surface: str


class Access(AccessToken):
    family: int


class BrainProvider(OAuthAuthorizationServerProvider[Code, Refresh, Access]):
    def __init__(self, config: OAuthConfig, run: Run) -> None:
        self.config = config
        self.run = run

    # -- clients --------------------------------------------------------------------------------

    async def client_record(self, client_id: str) -> tuple[OAuthClientInformationFull, str | None] | None:
        row = await self.run(lambda b: b.oauth_client(client_id))
        if row is None:
            return None
        info = OAuthClientInformationFull.model_validate_json(row["metadata"])
        # Any client may ask for any scope this server has: what it gets is the owner's decision on
        # the consent page, capped by the surface ceiling (RFC 7591 §2 lets a server replace `scope`).
        info.scope = " ".join(credentials.SUPPORTED_SCOPES)
        return info, row["secret_hash"]

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        record = await self.client_record(client_id)
        return record[0] if record else None

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        why = limits.registration_problem(client_info)
        if why:
            raise RegistrationError("invalid_client_metadata", why)
        for uri in client_info.redirect_uris or ():
            why = callbacks.problem(str(uri), self.config.registration, self.config.extra_redirects)
            if why:
                raise RegistrationError("invalid_redirect_uri", why)
        secret = client_info.client_secret
        metadata = client_info.model_dump_json(exclude={"client_secret"}, exclude_none=True)
        name = (client_info.client_name or "").strip()[:100] or "unnamed client"

        def store(brain: Brain) -> None:
            now = now_ms()
            brain.oauth_forget_unused_clients(now - limits.UNUSED_CLIENT_TTL_S * 1000)
            if brain.oauth_live_clients() >= limits.MAX_CLIENTS:
                raise RegistrationsFull()
            brain.oauth_add_client(client_id=client_info.client_id, name=name, metadata=metadata,
                                   secret_hash=credentials.digest(secret) if secret else None,
                                   lane=credentials.lane_for(client_info.client_id), now=now)

        await self.run(store)

    # -- authorization --------------------------------------------------------------------------

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        if params.resource is not None and not same_resource(params.resource, self.config.resource):
            raise AuthorizeError("invalid_target", f"This server is the resource {self.config.resource}, not {params.resource}.")
        if not params.redirect_uri_provided_explicitly:
            raise AuthorizeError("invalid_request", "redirect_uri is required.")
        scopes, surface = credentials.parse_request(params.scopes, self.config.ceiling)
        request_id = credentials.mint("request")

        def store(brain: Brain) -> None:
            row = brain.oauth_client(client.client_id)
            if row is None:
                raise AuthorizeError("unauthorized_client", "This client was revoked.")
            # Each new authorization sweeps the consent requests that expired and the credentials that
            # expired over a day ago, so the table stays the size of what is live.
            now = now_ms()
            brain.oauth_forget_expired(now - 86_400_000, requests_before=now)
            mine, everyone = brain.oauth_pending(row["id"], now)
            if mine >= limits.MAX_PENDING_PER_CLIENT or everyone >= limits.MAX_PENDING:
                raise AuthorizeError("temporarily_unavailable", "Too many authorizations are waiting for the owner's "
                                     "answer; finish or abandon one, or try again in a few minutes.")
            brain.oauth_exchange(None, [self._issue(row["id"], "request", request_id, None, scopes, surface,
                                                    credentials.REQUEST_TTL_S, redirect_uri=str(params.redirect_uri),
                                                    code_challenge=params.code_challenge, state=params.state)], now_ms())

        await self.run(store)
        return f"{self.config.issuer}/consent?request={request_id}"

    def _issue(self, client_ref: int, kind: str, value: str, family: int | None, scopes: frozenset[str] | list[str],
               surface: str, ttl_s: int, **extra: Any) -> dict:
        return {"client_ref": client_ref, "kind": kind, "token_hash": credentials.digest(value), "family": family,
                "scopes": ",".join(s for s in credentials.ACCESS_SCOPES if s in scopes), "surface": surface,
                "source_id": self.config.source_id, "resource": self.config.resource,
                "expires_at": now_ms() + ttl_s * 1000, **extra}

    async def load_authorization_code(self, client: OAuthClientInformationFull, authorization_code: str) -> Code | None:
        row = await self._credential("code", authorization_code, client)
        if row is None:
            return None
        return Code(code=authorization_code, scopes=credentials.scope_list(row["scopes"], row["surface"]),
                    expires_at=row["expires_at"] / 1000, client_id=row["client_id"], code_challenge=row["code_challenge"],
                    redirect_uri=row["redirect_uri"], redirect_uri_provided_explicitly=True, resource=row["resource"],
                    subject=row["lane"], row_id=row["id"], client_ref=row["client_ref"], surface=row["surface"])

    async def exchange_authorization_code(self, client: OAuthClientInformationFull, authorization_code: Code) -> OAuthToken:
        code = authorization_code
        return await self._tokens(code.client_ref, code.row_id, code.row_id, code.scopes, code.surface, "authorization code")

    # -- refresh --------------------------------------------------------------------------------

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> Refresh | None:
        row = await self._credential("refresh", refresh_token, client)
        if row is None:
            return None
        return Refresh(token=refresh_token, client_id=row["client_id"],
                       scopes=credentials.scope_list(row["scopes"], row["surface"]), expires_at=row["expires_at"] // 1000,
                       resource=row["resource"], subject=row["lane"], row_id=row["id"], client_ref=row["client_ref"],
                       family=row["family"], surface=row["surface"])

    async def exchange_refresh_token(self, client: OAuthClientInformationFull, refresh_token: Refresh,
                                     scopes: list[str]) -> OAuthToken:
        # The SDK has already refused any scope the refresh token does not hold; a narrower surface asked
        # for here narrows the new tokens too, a wider one cannot be asked (it is not in the token's scopes).
        surfaces = [s.removeprefix(credentials.SURFACE_SCOPE) for s in scopes if s.startswith(credentials.SURFACE_SCOPE)]
        surface = refresh_token.surface
        for asked in surfaces:
            surface = credentials.narrower(asked, surface)
        token = refresh_token
        return await self._tokens(token.client_ref, token.row_id, token.family, scopes, surface, "refresh token")

    async def _tokens(self, client_ref: int, used: int, family: int, scopes: list[str], surface: str,
                      what: str) -> OAuthToken:
        """Spend the code or refresh token `used` and issue a new access and refresh token, in one write."""
        access, refresh = credentials.mint("access"), credentials.mint("refresh")
        issue = [self._issue(client_ref, "access", access, family, scopes, surface, credentials.ACCESS_TTL_S),
                 self._issue(client_ref, "refresh", refresh, family, scopes, surface, credentials.REFRESH_TTL_S)]
        if await self.run(lambda b: b.oauth_exchange(used, issue, now_ms())) is None:
            raise TokenError("invalid_grant", f"The {what} was already used.")
        return OAuthToken(access_token=access, token_type="Bearer", expires_in=credentials.ACCESS_TTL_S,
                          scope=" ".join(credentials.scope_list(",".join(scopes), surface)), refresh_token=refresh)

    # -- access tokens and revocation -------------------------------------------------------------

    async def load_access_token(self, token: str) -> Access | None:
        row = await self._credential("access", token, None)
        if row is None:
            return None
        return Access(token=token, client_id=row["client_id"], scopes=credentials.scope_list(row["scopes"], row["surface"]),
                      expires_at=row["expires_at"] // 1000, resource=row["resource"], subject=row["lane"],
                      family=row["family"])

    async def revoke_token(self, token: Access | Refresh) -> None:
        family = token.family
        await self.run(lambda b: b.oauth_revoke_family(family, now_ms()))

    async def _credential(self, kind: str, value: str, client: OAuthClientInformationFull | None) -> Any:
        """The live credential `value` of `kind` (of `client`, when given), or None. A spent code or
        refresh token presented again is a replay: everything issued from its authorization ends."""
        if not value.startswith(credentials.PREFIXES[kind]):
            return None

        def look(brain: Brain) -> Any:
            row = brain.oauth_credential(kind, credentials.digest(value))
            if row is None or row["client_revoked_at"] is not None:
                return None
            if client is not None and row["client_id"] != client.client_id:
                return None
            if row["revoked_at"] is not None:
                if kind in ("code", "refresh") and row["family"] is not None:
                    brain.oauth_revoke_family(row["family"], now_ms())
                return None
            return row

        return await self.run(look)


class HashedSecretAuthenticator(ClientAuthenticator):
    """The SDK's client authentication, against a hashed client secret.

    The SDK compares a presented secret with the plain secret its provider returns; the brain keeps
    only the SHA-256 of a client's secret (as of every other credential), so this reads the presented
    one the same ways (HTTP Basic, or `client_secret` in the form) and compares digests.
    """

    def __init__(self, provider: BrainProvider) -> None:
        super().__init__(provider)
        self.brain_provider = provider

    async def authenticate_request(self, request: Request) -> OAuthClientInformationFull:
        form = await request.form()
        client_id = form.get("client_id")
        if not isinstance(client_id, str) or not client_id:
            raise AuthenticationError("Missing client_id")
        record = await self.brain_provider.client_record(client_id)
        if record is None:
            raise AuthenticationError("Invalid client_id")
        client, secret_hash = record
        presented: str | None = None
        header = request.headers.get("Authorization", "")
        if client.token_endpoint_auth_method == "client_secret_basic":
            if not header.startswith("Basic "):
                raise AuthenticationError("Missing or invalid Basic authentication in Authorization header")
            try:
                basic_id, _, presented = base64.b64decode(header[6:], validate=True).decode("utf-8").partition(":")
            except (ValueError, UnicodeDecodeError, binascii.Error) as exc:
                raise AuthenticationError("Invalid Basic authentication header") from exc
            if unquote(basic_id) != client_id:
                raise AuthenticationError("Client ID mismatch in Basic auth")
            presented = unquote(presented)
        elif client.token_endpoint_auth_method == "client_secret_post":
            value = form.get("client_secret")
            presented = value if isinstance(value, str) else None
        elif client.token_endpoint_auth_method != "none":
            raise AuthenticationError(f"Unsupported auth method: {client.token_endpoint_auth_method}")
        if client.token_endpoint_auth_method != "none" or secret_hash is not None:
            if secret_hash is None:
                raise AuthenticationError("Client is registered for secret-based authentication but has no stored secret")
            if not presented:
                raise AuthenticationError("Client secret is required")
            if not hmac.compare_digest(credentials.digest(presented), secret_hash):
                raise AuthenticationError("Invalid client_secret")
            if client.client_secret_expires_at and client.client_secret_expires_at < int(time.time()):
                raise AuthenticationError("Client secret has expired")
        return client

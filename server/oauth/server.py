"""The OAuth endpoints `serve --http` mounts beside `/health`, and what its bearer gate asks of OAuth.

Routes (the SDK's handlers, answered by `provider.BrainProvider`):

* `/.well-known/oauth-protected-resource/mcp` (and at the root) — RFC 9728;
* `/.well-known/oauth-authorization-server` — RFC 8414, advertising `iss` in
  authorization responses (RFC 9207), PKCE S256 only, public and secret clients;
* `/authorize`, `/consent` (consent.py), `/token`, `/register` (unless
  `oauth.registration = off`), `/revoke`.

They are unauthenticated by nature, so each is kept cheap (limits.py): the gate
in transport/http.py asks `admit` (the route's pace, its declared body size)
before it reads a body, and reads it under `body_limit`, a few KiB.
`/revoke` is RFC 7009's for public clients too: `token` and `client_id`, no secret.

For the gate: `verify` turns a live access token into the same `Grant` a static
token gives; `challenge` is the 401's `resource_metadata` parameter; and
`needs_scope` names the scope a `tools/call` lacks, which the gate answers
`403 insufficient_scope` so a client can ask the owner for more (step-up).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import anyio
from mcp.server.auth.handlers.authorize import AuthorizationHandler
from mcp.server.auth.handlers.metadata import MetadataHandler, ProtectedResourceMetadataHandler
from mcp.server.auth.handlers.register import RegistrationHandler
from mcp.server.auth.handlers.token import TokenErrorResponse, TokenHandler
from mcp.server.auth.json_response import PydanticJSONResponse
from mcp.server.auth.middleware.client_auth import AuthenticationError
from mcp.server.auth.routes import build_metadata, build_resource_metadata_url, cors_middleware
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from mcp.shared.auth import ProtectedResourceMetadata
from pydantic import AnyHttpUrl, ConfigDict, TypeAdapter
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from memverbs.server import tokens
from memverbs.server.oauth import callbacks, credentials, limits
from memverbs.server.oauth.consent import CONSENT_PATH, Consent
from memverbs.server.oauth.provider import (
    BrainProvider,
    HashedSecretAuthenticator,
    OAuthConfig,
    RegistrationsFull,
    Run,
    same_resource,
)
from memverbs.server.protocol.registry import BY_NAME
from memverbs.server.protocol.surfaces import allowed, narrower
from memverbs.server.timeparse import now_ms

if TYPE_CHECKING:
    from starlette.types import Receive, Scope, Send

    from memverbs.server.brain.base import Brain
    from memverbs.server.settings import Settings

PRM_ROOT = "/.well-known/oauth-protected-resource"
# Issuers compare as exact strings (RFC 8414 §3.3, RFC 9207 §2.4): an origin keeps its empty path, no "/" added.
_URL = TypeAdapter(AnyHttpUrl, config=ConfigDict(url_preserve_empty_path=True))


def configure(settings: Settings | None, ceiling: str, source_id: str, public_url: str,
              listening: str) -> tuple[OAuthConfig | None, str]:
    """The authorization server's settings for `serve --http`, or None when OAuth stays off; and a line saying which.

    The resource identifier is the URL clients connect to: `public_url` (`--public-url`, else
    `oauth.public_url`) behind a proxy, else the address listened on. The issuer is its origin;
    RFC 8414 wants it https, loopback aside.
    """
    from memverbs.server.settings import OAuthSettings  # noqa: PLC0415 - loaded already by the runtime

    # A config that does not load still serves (every call answers `unavailable`); OAuth takes its defaults.
    oauth = settings.oauth if settings is not None else OAuthSettings()
    if not oauth.enabled:
        return None, "OAuth is off (oauth.enabled = false): static tokens only"
    resource = (public_url or oauth.public_url or listening).strip().rstrip("/")
    parts = urlsplit(resource)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        return None, f"OAuth is off: the public URL {resource!r} is not an http(s) URL of /mcp — static tokens only"
    if parts.scheme != "https" and not callbacks.is_loopback_callback(resource):
        return None, (f"OAuth is off: {resource} is plain http on a non-loopback address. Serve it behind TLS and set "
                      "oauth.public_url (or --public-url) to the https URL clients use — static tokens only")
    issuer = f"{parts.scheme}://{parts.netloc}"
    config = OAuthConfig(issuer=issuer, resource=resource, ceiling=ceiling, source_id=source_id,
                         registration=oauth.registration, extra_redirects=callbacks.parse_extra(oauth.redirect_uris))
    return config, f"OAuth 2.1 for connectors at {issuer} (resource {resource}; approve with `memverbs auth approve`)"


class OAuthServer:
    def __init__(self, config: OAuthConfig, run: Run) -> None:
        self.config = config
        self.provider = BrainProvider(config, run)
        registration = ClientRegistrationOptions(
            enabled=config.registration != "off", valid_scopes=list(credentials.SUPPORTED_SCOPES),
            default_scopes=list(credentials.ACCESS_SCOPES))
        issuer = _URL.validate_python(config.issuer)
        self.metadata = build_metadata(issuer, None, registration, RevocationOptions(enabled=True))
        self.metadata.authorization_response_iss_parameter_supported = True  # consent.py sends `iss` (RFC 9207)
        self.metadata.token_endpoint_auth_methods_supported = ["none", "client_secret_post", "client_secret_basic"]
        self.metadata.revocation_endpoint_auth_methods_supported = ["none", "client_secret_post", "client_secret_basic"]
        self.resource_metadata = ProtectedResourceMetadata(
            resource=_URL.validate_python(config.resource), authorization_servers=[issuer],
            scopes_supported=list(credentials.SUPPORTED_SCOPES), resource_name="memverbs brain")
        self.resource_metadata_url = str(build_resource_metadata_url(_URL.validate_python(config.resource)))
        self.authenticator = HashedSecretAuthenticator(self.provider)
        self.token_handler = TokenHandler(self.provider, self.authenticator)
        self.registration = RegistrationHandler(self.provider, registration)
        self.paces = limits.Paces()
        self.consent = Consent(config, run)
        prm = cors_middleware(ProtectedResourceMetadataHandler(self.resource_metadata).handle, ["GET", "OPTIONS"])
        routes = [
            Route(urlsplit(self.resource_metadata_url).path, endpoint=prm, methods=["GET", "OPTIONS"]),
            Route(PRM_ROOT, endpoint=prm, methods=["GET", "OPTIONS"]),
            Route("/.well-known/oauth-authorization-server",
                  endpoint=cors_middleware(MetadataHandler(self.metadata).handle, ["GET", "OPTIONS"]), methods=["GET", "OPTIONS"]),
            Route("/authorize", endpoint=self.authorize_endpoint(AuthorizationHandler(self.provider)), methods=["GET", "POST"]),
            Route(CONSENT_PATH, endpoint=self.consent.handle, methods=["GET", "POST"]),
            Route("/token", endpoint=cors_middleware(self.token, ["POST", "OPTIONS"]), methods=["POST", "OPTIONS"]),
            Route("/revoke", endpoint=cors_middleware(self.revoke, ["POST", "OPTIONS"]), methods=["POST", "OPTIONS"]),
        ]
        if registration.enabled:
            routes.append(Route("/register", endpoint=cors_middleware(self.register, ["POST", "OPTIONS"]),
                                methods=["POST", "OPTIONS"]))
        self.paths = frozenset(r.path for r in routes)
        self.app = Starlette(routes=routes)

    # -- the routes ---------------------------------------------------------------------------

    def owns(self, path: str) -> bool:
        return path in self.paths

    def body_limit(self, path: str) -> int:
        return limits.body_limit(path)

    async def admit(self, scope: Scope) -> tuple[int, dict, list[tuple[bytes, bytes]]] | None:
        """What the gate refuses from a request's head besides its size, before its body is read: a
        source, or everyone, over the route's pace (429, after limits.REFUSAL_DELAY_S). None admits it."""
        path = scope["path"]
        if scope["method"] in ("OPTIONS", "HEAD"):
            return None  # CORS preflights: nothing read, stored or hashed
        wait = self.paces.wait(path, limits.peer(scope))
        if wait > 0:
            await anyio.sleep(min(wait, limits.REFUSAL_DELAY_S))
            seconds = max(1, round(wait))
            return 429, {"error": "temporarily_unavailable", "error_description": (
                f"Too many requests to {path}; try again in {seconds} s.")}, [(b"retry-after", str(seconds).encode())]
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)

    def authorize_endpoint(self, handler: AuthorizationHandler) -> Any:
        issuer = self.config.issuer

        async def authorize(request: Request) -> Response:
            response = await handler.handle(request)
            # RFC 9207: error redirects to the client carry `iss` too (the SDK's handler adds it to none).
            if isinstance(response, RedirectResponse):
                location = response.headers["location"]
                parts = urlsplit(location)
                query = parse_qsl(parts.query, keep_blank_values=True)
                if not location.startswith(issuer + "/") and any(k == "error" for k, _ in query) and \
                        not any(k == "iss" for k, _ in query):
                    response.headers["location"] = urlunsplit(parts._replace(query=urlencode([*query, ("iss", issuer)])))
            return response

        return authorize

    async def token(self, request: Request) -> Response:
        # RFC 8707 §2: a token request naming another resource is `invalid_target`. The SDK's handler
        # does not pass `resource` on for these grants, so it is checked here (the form is cached).
        form = await request.form()
        resource = form.get("resource")
        if isinstance(resource, str) and not same_resource(resource, self.config.resource):
            return PydanticJSONResponse(
                content=TokenErrorResponse(error="invalid_target",
                                           error_description=f"This server is the resource {self.config.resource}."),
                status_code=400, headers={"Cache-Control": "no-store", "Pragma": "no-cache"})
        return await self.token_handler.handle(request)

    async def register(self, request: Request) -> Response:
        try:
            return await self.registration.handle(request)
        except RegistrationsFull:
            return JSONResponse({"error": "temporarily_unavailable", "error_description": (
                "This brain holds as many OAuth clients as it keeps. Its owner can revoke unused ones with "
                "`memverbs auth clients --revoke`; a registration nobody used is forgotten after a day.")},
                status_code=503, headers={"Retry-After": "3600", "Cache-Control": "no-store"})

    async def revoke(self, request: Request) -> Response:
        """RFC 7009: the client authenticates as it does at /token (a public client by its client_id
        alone), and a token of its own ends with everything issued from the same authorization.
        An unknown token, or another client's, is answered 200 all the same (§2.2)."""
        headers = {"Cache-Control": "no-store", "Pragma": "no-cache"}
        try:
            client = await self.authenticator.authenticate_request(request)
        except AuthenticationError as exc:
            return JSONResponse({"error": "invalid_client", "error_description": exc.message}, status_code=401,
                                headers=headers)
        form = await request.form()
        token = form.get("token")
        if not isinstance(token, str) or not token:
            return JSONResponse({"error": "invalid_request", "error_description": "token is required."}, status_code=400,
                                headers=headers)
        loaders = [self.provider.load_access_token, lambda t: self.provider.load_refresh_token(client, t)]
        if form.get("token_type_hint") == "refresh_token":  # a hint it does not know is ignored (§2.1)
            loaders.reverse()
        for load in loaders:
            found = await load(token)
            if found is not None:
                if found.client_id == client.client_id:
                    await self.provider.revoke_token(found)
                break
        return Response(status_code=200, headers=headers)

    # -- what the bearer gate asks ----------------------------------------------------------------

    def verify(self, brain: Brain, token: str) -> tokens.Grant | None:
        """The grant of a live access token issued for this resource, or None. Runs on a worker thread."""
        row = brain.oauth_credential("access", credentials.digest(token))
        now = now_ms()
        if row is None or row["revoked_at"] is not None or row["client_revoked_at"] is not None:
            return None
        if row["expires_at"] <= now or not same_resource(row["resource"], self.config.resource):
            return None
        brain.oauth_touch_client(row["client_ref"], row["client_last_used_at"], now)
        return credentials.grant_from(row)

    def challenge(self) -> str:
        return f'resource_metadata="{self.resource_metadata_url}"'

    def needs_scope(self, body: bytes, grant: tokens.Grant, ceiling: str) -> str | None:
        """The scope a `tools/call` in `body` needs and `grant` lacks, for a tool the grant can see
        (a hidden tool stays `unknown_tool`, as for every caller); else None."""
        try:
            message = json.loads(body)
        except ValueError:
            return None
        if not isinstance(message, dict) or message.get("method") != "tools/call":
            return None
        params = message.get("params")
        name = params.get("name") if isinstance(params, dict) else None
        op = BY_NAME.get(name) if isinstance(name, str) else None
        if op is None or op.name not in allowed(narrower(ceiling, grant.surface)) or op.scope in grant.scopes:
            return None
        return op.scope

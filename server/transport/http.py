"""`memverbs serve --http`: MCP streamable HTTP at `/mcp` for remote brains, `/health` for probes.

Every request but `/health` needs a bearer token (`memverbs auth create`); no
token, an unknown one or a revoked one is a 401 with a `WWW-Authenticate`
header, decided from the request's head before its body is read (`admit`):
an unauthenticated upload is answered at once and none of it is kept. A valid token becomes a
`Grant` on the request, and each MCP request builds its caller from it: remote
(world-only), the token's own cursor lane and usage-log client, the token's
scopes, and the surface `min(server ceiling, token surface)`. The token's row
is read on every request, so a revocation takes effect at once.
With OAuth on (`server/oauth/`), its endpoints are answered beside `/health` and
its access tokens are one more kind of bearer token behind the same gate, giving
the same `Grant`.

The MCP SDK runs stateless with JSON responses, as the reference's OAuth HTTP
mode is stateless: any request can go to any worker, nothing is kept between
requests, and a reverse proxy needs no SSE buffering rules.

Verb calls and token checks are synchronous SQLite work. They run on worker
threads (a bounded pool), each thread with its own connection — an sqlite3
connection is never used by two threads at once — so a slow write does not
stall the event loop for every other client. SQLite's WAL lets the readers run
beside the one writer; writers queue on the busy timeout.

Imported only by `memverbs serve --http`: nothing else pays for uvicorn.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import signal
import socket
import threading
import weakref
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar, TypeVarTuple, Unpack
from urllib.parse import urlsplit

import anyio
import anyio.to_thread
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from memverbs.server import tokens
from memverbs.server.brain.base import Brain
from memverbs.server.dispatch import Dispatcher, Outcome
from memverbs.server.errors import PROTOCOL_VERSION, MemverbsError
from memverbs.server.oauth import credentials as oauth_credentials
from memverbs.server.oauth.provider import OAuthConfig
from memverbs.server.oauth.server import OAuthServer, configure
from memverbs.server.protocol.surfaces import allowed, narrower
from memverbs.server.runtime import Runtime
from memverbs.server.timeparse import now_ms
from memverbs.server.transport import http_limits
from memverbs.server.transport.diagnostics import say
from memverbs.server.transport.mcp_server import build_server

T = TypeVar("T")
Ts = TypeVarTuple("Ts")

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 3131
MCP_PATH = "/mcp"
HEALTH_PATH = "/health"
WORKERS = 16  # threads (and so SQLite connections) serving calls at once
GRANT = "memverbs.grant"  # the ASGI scope key the bearer gate fills
REALM = 'Bearer realm="memverbs"'
Refusal = tuple[int, dict, list[tuple[bytes, bytes]]]  # status, JSON body, extra headers: a request turned away


class ThreadBrains:
    """One brain connection per worker thread, opened on first use, all closed at shutdown."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self._local = threading.local()
        self._open: weakref.WeakSet[Brain] = weakref.WeakSet()
        self._lock = threading.Lock()

    def get(self) -> Brain:
        brain = getattr(self._local, "brain", None)
        if brain is None:
            brain = self.runtime.open_brain()  # raises BrainError/ConfigError: the caller reports them
            self._local.brain = brain
            with self._lock:
                self._open.add(brain)
        return brain

    def close_all(self) -> None:
        with self._lock:
            open_now = list(self._open)
            self._open = weakref.WeakSet()
        for brain in open_now:
            with contextlib.suppress(Exception):
                brain.close()


class RemoteBrainApp:
    """The ASGI application: a bearer gate in front of `/health` and the SDK's `/mcp` endpoint."""

    def __init__(self, runtime: Runtime, ceiling: str, *, on_ready: Callable[[], None] | None = None,
                 oauth: OAuthConfig | None = None) -> None:
        self.runtime = runtime
        self.ceiling = ceiling
        self.brains = ThreadBrains(runtime)
        self.limiter: anyio.CapacityLimiter | None = None
        self.on_ready = on_ready
        self.origins = http_limits.Origins.from_settings(runtime.settings)
        # OAuth 2.1 beside the static tokens (server/oauth/): its routes sit beside /health, its access
        # tokens are one more kind of bearer token behind the same gate.
        self.oauth = OAuthServer(oauth, self.with_brain) if oauth is not None else None
        server = build_server(self.dispatcher_for, offload=self.offload)
        self.manager = StreamableHTTPSessionManager(app=server, stateless=True, json_response=True)
        self.inner = Starlette(
            routes=[
                Route(HEALTH_PATH, self.health, methods=["GET", "HEAD"]),
                Route(MCP_PATH, endpoint=StreamableHTTPASGIApp(self.manager)),
            ],
            lifespan=self.lifespan,
        )

    # -- lifecycle ----------------------------------------------------------

    @contextlib.asynccontextmanager
    async def lifespan(self, app: Starlette) -> AsyncIterator[None]:
        self.limiter = anyio.CapacityLimiter(WORKERS)
        async with self.manager.run():
            if self.on_ready is not None:
                self.on_ready()
            yield
        self.brains.close_all()

    async def in_thread(self, fn: Callable[[Unpack[Ts]], T], *args: *Ts) -> T:
        assert self.limiter is not None, "the app's lifespan has not started"
        return await anyio.to_thread.run_sync(fn, *args, limiter=self.limiter)

    async def offload(self, thunk: Callable[[], Outcome]) -> Outcome:
        return await self.in_thread(thunk)

    async def with_brain(self, fn: Callable[[Brain], T]) -> T:
        return await self.in_thread(lambda: fn(self.brains.get()))

    # -- per request --------------------------------------------------------

    def dispatcher_for(self, ctx: Any) -> Dispatcher:
        """Who is calling, from the grant the bearer gate put on this HTTP request."""
        request = getattr(ctx, "request", None)
        grant = request.scope.get(GRANT) if request is not None else None
        if not isinstance(grant, tokens.Grant):
            # Unreachable behind the gate; if it ever happens, fail closed rather than guess a caller.
            raise RuntimeError("no authenticated grant on this request")
        return self.runtime.mcp_dispatcher(
            narrower(self.ceiling, grant.surface),
            grant.caller(),
            open_brain=self.brains.get,
            usage_client=grant.client_id,
        )

    def verify(self, token: str) -> tokens.Grant | None:
        """The live token's grant, or None. Runs on a worker thread (SQLite)."""
        brain = self.brains.get()
        if self.oauth is not None and oauth_credentials.is_access_token(token):
            return self.oauth.verify(brain, token)
        row = brain.live_token(tokens.digest(token))
        if row is None:
            return None
        brain.touch_token(row["id"], row["last_used_at"], now_ms())
        return tokens.Grant.from_row(row)

    async def health(self, request: Request) -> JSONResponse:
        try:
            await self.in_thread(lambda: self.brains.get().ping())
        except MemverbsError as exc:
            _log(f"health: brain unavailable: {exc.message}")
            return JSONResponse({"status": "unavailable", "protocol_version": PROTOCOL_VERSION}, status_code=503)
        return JSONResponse({"status": "ok", "protocol": "MEMORY_VERBS", "protocol_version": PROTOCOL_VERSION})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] == HEALTH_PATH:
            await self.inner(scope, receive, send)
            return
        # OAuth's own endpoints (metadata, authorize, consent, token, register, revoke) are how a client
        # without a token gets one: they skip the token gate, never the Host check or the body limits.
        # They are answered under their own small body caps and paces (oauth/limits.py), asked here from the head.
        oauth_route = self.oauth is not None and self.oauth.owns(scope["path"]) and self.origins.host_ok(_header(scope, b"host"))
        limit = self.oauth.body_limit(scope["path"]) if oauth_route and self.oauth is not None else http_limits.MAX_BODY_BYTES
        if oauth_route and self.oauth is not None:
            refusal = (413, _too_large(limit), []) if http_limits.declared_size(scope) > limit else await self.oauth.admit(scope)
        else:
            refusal = await self.admit(scope)
        if refusal is not None:
            await _refuse(scope, receive, send, refusal)
            return
        body: bytes | None = None
        if scope["method"] == "POST":
            try:
                body, trailing = await http_limits.read_body(receive, limit)
            except TimeoutError:
                await _json(send, 408, {"error": "request_timeout", "error_description": (
                    f"The request body did not arrive within {http_limits.BODY_TIMEOUT_S:g} s.")}, [(b"connection", b"close")])
                return
            except http_limits.BodyTooLarge:
                await _json(send, 413, _too_large(limit), [(b"connection", b"close")])
                return
            receive = http_limits.replay(body, trailing, receive)
        if oauth_route:
            assert self.oauth is not None
            await self.oauth(scope, receive, send)
            return
        if self.oauth is not None and body is not None and scope[GRANT].kind == "oauth":
            needed = self.oauth.needs_scope(body, scope[GRANT], self.ceiling)
            if needed is not None:  # OAuth clients can ask the owner for more (step-up): say which scope
                status, answer, headers = _deny("insufficient_scope", f"This call needs the {needed} scope.",
                                                self.oauth.challenge(), status=403, scope_needed=needed)
                await _json(send, status, answer, headers)
                return
        await self.inner(scope, receive, send)

    async def admit(self, scope: Scope) -> Refusal | None:
        """Everything decided from the request's head, before a byte of its body is read: Host, Origin,
        a declared size over the limit, the bearer token, the method. None admits the request (its
        grant is then on the scope); else the answer that refuses it. So a caller without a valid
        token costs the server a header parse and a token lookup, never a buffered body.
        """
        if not self.origins.host_ok(_header(scope, b"host")):
            return 421, {"error": "misdirected_request", "error_description": (
                "This Host is not one memverbs serves. Behind a reverse proxy, add its public name to "
                "http.allowed_hosts (`memverbs docs remote`).")}, []
        if not self.origins.origin_ok(_header(scope, b"origin")):
            return 403, {"error": "forbidden_origin", "error_description": (
                "Requests from this web origin are refused. Add it to http.allowed_origins if it is yours.")}, []
        if http_limits.declared_size(scope) > http_limits.MAX_BODY_BYTES:
            return 413, _too_large(), []
        challenge = self.oauth.challenge() if self.oauth is not None else None
        token = _bearer(scope)
        if token is None:
            return _deny(None, "A bearer token is required: Authorization: Bearer <token>.", challenge)
        if not (tokens.looks_like_token(token) or (self.oauth is not None and oauth_credentials.is_access_token(token))):
            return _deny("invalid_token", "Not a memverbs token.", challenge)
        try:
            grant = await self.in_thread(self.verify, token)
        except MemverbsError as exc:
            _log(f"cannot check a token: {exc.message} ({exc.fix})")
            return 503, {"error": "unavailable", "error_description": "The brain cannot serve requests right now."}, []
        if grant is None:
            return _deny("invalid_token", "The token is unknown, expired or revoked.", challenge)
        if scope["path"] == MCP_PATH and scope["method"] != "POST":
            # Stateless: no server-to-client stream to open (GET) and no session to end (DELETE).
            return 405, {"error": "method_not_allowed", "error_description": "POST JSON-RPC to /mcp."}, [(b"allow", b"POST")]
        scope[GRANT] = grant
        # The SDK's own notion of the caller: stateful sessions (if ever enabled) stay bound to it.
        scope["user"] = AuthenticatedUser(
            AccessToken(token=f"id:{grant.kind}:{grant.token_id}", client_id=grant.client_id, scopes=sorted(grant.scopes),
                        subject=f"{grant.kind}:{grant.token_id}")
        )
        return None


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return value.decode("latin-1")
    return None


def _too_large(limit: int = http_limits.MAX_BODY_BYTES) -> dict:
    return {"error": "payload_too_large", "error_description": f"A request body here is limited to {limit} bytes; send smaller calls."}


def _bearer(scope: Scope) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == b"authorization":
            text = value.decode("latin-1").strip()
            scheme, _, credential = text.partition(" ")
            if scheme.lower() == "bearer" and credential.strip():
                return credential.strip()
            return None
    return None


def _deny(error: str | None, description: str, resource_metadata: str | None = None, *,
          status: int = 401, scope_needed: str | None = None) -> Refusal:
    # RFC 6750 §3: no error code when no credential was sent at all. RFC 9728 §5.1: with OAuth on,
    # every challenge points at the protected-resource metadata.
    challenge = REALM if error is None else f'{REALM}, error="{error}", error_description="{description}"'
    if scope_needed is not None:
        challenge += f', scope="{scope_needed}"'
    if resource_metadata is not None:
        challenge += f", {resource_metadata}"
    body = {"error": error or "unauthorized", "error_description": description}
    return status, body, [(b"www-authenticate", challenge.encode())]


async def _refuse(scope: Scope, receive: Receive, send: Send, refusal: Refusal) -> None:
    """Answer a request whose body was never read, and keep none of it.

    The answer goes out at once, whole (its Content-Length says so), and the connection closes
    after it. A body still on its way is first read and dropped, within bounds
    (`http_limits.discard_rest`): closing with unread bytes makes the kernel reset the connection,
    and a reset can overtake the answer, so a client that sends its whole body before reading
    (most do) would see "connection reset" instead of why. A client that stalls has its answer
    already; it is closed when it finishes or at the drain's bounds.
    """
    status, body, headers = refusal
    if not http_limits.body_coming(scope):
        await _json(send, status, body, headers)
        return
    await _json(send, status, body, [*headers, (b"connection", b"close")],
                linger=receive if http_limits.worth_draining(scope) else None)


async def _json(send: Send, status: int, body: dict, headers: list[tuple[bytes, bytes]] | None = None,
                linger: Receive | None = None) -> None:
    """Send a JSON answer; with `linger`, drop what is left of the request's body before ending it."""
    data = json.dumps(body).encode()
    await send({
        "type": "http.response.start",
        "status": status,
        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()), *(headers or [])],
    })
    if linger is None:
        await send({"type": "http.response.body", "body": data})
        return
    # The answer's bytes first (the client can read them now), the end of the response after the drain:
    # ending it closes the connection, after which the server would read nothing more.
    await send({"type": "http.response.body", "body": data, "more_body": True})
    await http_limits.discard_rest(linger)
    await send({"type": "http.response.body", "body": b""})


def _log(text: str) -> None:
    say(f"memverbs: {text}")


# -- binding and running ------------------------------------------------------


def is_loopback(host: str) -> bool:
    """True when every address `host` names is a loopback address (127.0.0.0/8, ::1)."""
    bare = host.strip("[]")
    try:
        return ipaddress.ip_address(bare).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(bare, None, type=socket.SOCK_STREAM)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(str(i[4][0]).split("%")[0]).is_loopback for i in infos)


def bind(host: str, port: int) -> socket.socket:
    bare = host.strip("[]")
    family, kind, proto, _, address = socket.getaddrinfo(bare, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        # Listening before the server starts: a client that connects early waits instead of being refused.
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{MCP_PATH}"


def serve_http(runtime: Runtime, ceiling: str, *, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT,
               behind_tls_proxy: bool = False, public_url: str | None = None) -> int:
    import uvicorn  # noqa: PLC0415 - only this command needs it

    if not is_loopback(host) and not behind_tls_proxy:
        _log(
            f"WARNING: listening on {host}, which is reachable from other machines, over plain HTTP: bearer tokens "
            "and memories would cross the network unencrypted. Terminate TLS in front of memverbs (a reverse proxy, "
            "see `memverbs docs remote`) and pass --behind-tls-proxy, or bind to 127.0.0.1."
        )
    try:
        sock = bind(host, port)
    except OSError as exc:
        _log(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
        say("  fix: pick a free port with --port (0 picks one), or stop the process using it.")
        return 1
    url = url_of(sock)
    if runtime.config_error is not None:
        _log(f"{runtime.config_error.message} — {runtime.config_error.fix}")
    live = None
    runtime.workers = WORKERS  # a Postgres pool as large as the threads that use it
    try:
        brain = runtime.open_brain()  # applies pending migrations once, before the workers open theirs
        try:
            brain.gc_cursors(now_ms())  # idle delta cursors, once per boot
            live = len(brain.tokens())
        finally:
            brain.close()
    except MemverbsError as exc:
        _log(f"{exc.message} — {exc.fix}")

    def ready() -> None:
        count = len(allowed(ceiling))
        _log(f"MCP server (HTTP) listening at {url} — surface ceiling {ceiling} ({count} tools) (MEMORY_VERBS v1)")
        if live == 0:
            _log("no access tokens yet, so every request is refused: create one with `memverbs auth create NAME`")

    oauth, oauth_note = configure(runtime.settings, ceiling, runtime.source, public_url or "", url)
    app = RemoteBrainApp(runtime, ceiling, on_ready=ready, oauth=oauth)
    if oauth is not None:
        app.origins.hosts.add((urlsplit(oauth.resource).netloc).lower())  # the public name names this server
    _log(oauth_note)
    if not is_loopback(host) and host.strip("[]") not in ("0.0.0.0", "::", ""):
        app.origins.hosts.add(host.strip().lower())  # the address it was told to listen on names it
    config = uvicorn.Config(app, lifespan="on", log_level="warning", access_log=False, timeout_graceful_shutdown=5,
                            server_header=False, http=http_limits.HeadDeadlineProtocol,
                            limit_concurrency=http_limits.MAX_CONNECTIONS, timeout_keep_alive=5)
    server = uvicorn.Server(config)
    # uvicorn shuts down gracefully on SIGINT/SIGTERM and then re-raises the signal under the handlers it
    # found; these make that a quiet return, so the brains are closed and the exit status is 0.
    def stop(*_: object) -> None:
        server.should_exit = True

    quiet = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        server.run(sockets=[sock])
    finally:
        for sig, handler in quiet.items():
            signal.signal(sig, handler)
        sock.close()
        app.brains.close_all()
        runtime.close()
    _log("MCP server (HTTP) stopped")
    return 0

"""What `memverbs serve --http` refuses from a request's head and its pace: slow, oversized or rebinding requests.

* A connection gets HEAD_TIMEOUT_S to deliver a request's head (and again
  after each response it keeps alive); a slow-loris that trickles headers is
  closed, so it cannot hold a slot forever. uvicorn itself has no such clock.
* A body is read only once the request's head has passed every check
  (Host, Origin, a declared size, the bearer token: http.py's `admit`); a
  request refused on its head is answered at once, and the body on its way
  is read and dropped, within bounds, before the connection closes, so the
  client gets the answer rather than a reset and the server keeps nothing.
* An admitted request's body must arrive within BODY_TIMEOUT_S and stay
  under its route's cap: MAX_BODY_BYTES on `/mcp` (the same cap as one stdio
  frame), a few KiB on the OAuth routes (server/oauth/server.py says which);
  a body that declares more is refused from its head, one that grows past it
  as it comes: 408 or 413, before anything parses it.
* How many requests a source address may make is the OAuth routes' question
  (server/oauth/limits.py's paces), asked before they read a body.
* At most MAX_CONNECTIONS connections at once (uvicorn answers 503 above it).
* The `Host` and `Origin` headers must name this server (MCP's guidance
  against DNS rebinding: a web page must not reach a loopback server through
  a name it controls). Loopback names are always allowed; a reverse proxy's
  public name is added with `http.allowed_hosts` / `http.allowed_origins`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable
from urllib.parse import urlsplit

import anyio
from starlette.types import Message, Receive, Scope
from uvicorn.protocols.http.h11_impl import H11Protocol

from memverbs.server.errors import MemverbsError
from memverbs.server.transport.wire import MAX_FRAME_BYTES

HEAD_TIMEOUT_S = 10.0
READ_BYTES = 64 * 1024  # what one read of a connection takes from its socket
BODY_TIMEOUT_S = 30.0
MAX_BODY_BYTES = MAX_FRAME_BYTES
DRAIN_BYTES = MAX_BODY_BYTES  # how much of a refused body is read and dropped so its 413 is not lost
DRAIN_TIMEOUT_S = 5.0
MAX_CONNECTIONS = 2048
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]", "::1")


class HeadDeadlineProtocol(H11Protocol):
    """uvicorn's h11 protocol, closing a connection whose next request head does not arrive in time."""

    head_timeout_s = HEAD_TIMEOUT_S

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        # asyncio's socket transport reads 256 KiB at a time, and each of 400 uploads in flight at once
        # held that (200 MB); a smaller read costs a large body a few more calls. (uvloop's transport,
        # where installed, has its own buffer and no such attribute: it keeps it.)
        with contextlib.suppress(AttributeError):
            transport.max_size = READ_BYTES  # type: ignore[attr-defined]
        self._arm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        timer = getattr(self, "_head_timer", None)
        if timer is not None:
            timer.cancel()
        super().connection_lost(exc)

    def _arm(self) -> None:
        timer = getattr(self, "_head_timer", None)
        if timer is not None:
            timer.cancel()
        self._head_timer = self.loop.call_later(self.head_timeout_s, self._expire, self.cycle)

    def _expire(self, cycle_then: object) -> None:
        if self.cycle is cycle_then and not self.transport.is_closing():  # no new request began
            self.transport.close()


class Origins:
    """The Host / Origin allow-list: loopback always, plus the configured names."""

    def __init__(self, hosts: Iterable[str] = (), origins: Iterable[str] = ()) -> None:
        self.hosts = {h.strip().lower() for h in hosts if h.strip()}
        self.origins = {o.strip().lower().rstrip("/") for o in origins if o.strip()}

    @classmethod
    def from_settings(cls, settings: object) -> Origins:
        http = getattr(settings, "http", None)
        if http is None:
            return cls()
        return cls(http.allowed_hosts.split(","), http.allowed_origins.split(","))

    def host_ok(self, host: str | None) -> bool:
        if not host:
            return False
        host = host.strip().lower()
        name = _name(host)
        return name in LOOPBACK_NAMES or host in self.hosts or name in self.hosts

    def origin_ok(self, origin: str | None) -> bool:
        if origin is None:
            return True  # not a browser: a CLI or an agent, which DNS rebinding cannot drive
        origin = origin.strip().lower().rstrip("/")
        if origin in self.origins:
            return True
        parts = urlsplit(origin)
        return parts.scheme in ("http", "https") and _name(parts.netloc) in LOOPBACK_NAMES


def _name(hostport: str) -> str:
    """`example.com:8080` → `example.com`; `[::1]:3131` → `[::1]`."""
    if hostport.startswith("["):
        return hostport[: hostport.find("]") + 1] if "]" in hostport else hostport
    return hostport.rsplit(":", 1)[0] if hostport.count(":") == 1 else hostport


class BodyTooLarge(MemverbsError):
    """A request body over the limit: answered 413, its rest discarded, never parsed (`discard_rest`)."""


async def read_body(receive: Receive, limit: int = MAX_BODY_BYTES) -> tuple[bytes, list[Message]]:
    """The whole request body within BODY_TIMEOUT_S and `limit` bytes, and the messages to replay.

    Raises TimeoutError (slow client) or BodyTooLarge.
    """
    chunks: list[bytes] = []
    size = 0
    with anyio.fail_after(BODY_TIMEOUT_S):
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return b"".join(chunks), [message]
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                break
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks), []
    # Over the limit: drained outside the body's clock, so a body refused near its end is a 413, not a 408.
    if message.get("more_body", False):
        await discard_rest(receive)
    raise BodyTooLarge(f"the request body is over {limit} bytes", "Send a smaller request.")


async def discard_rest(receive: Receive) -> None:
    """Read and drop what is left of a refused body — at most DRAIN_BYTES, for at most DRAIN_TIMEOUT_S.

    A server that closes a connection with unread bytes in its receive buffer makes the kernel
    reset it, and a reset can overtake the 413 already sent: the client would see "connection reset"
    instead of the answer that says why (the lingering close nginx does for the same reason). A
    client still sending after the bounds gets the reset; its body was not going to be read anyway.
    """
    drained = 0
    with anyio.move_on_after(DRAIN_TIMEOUT_S):
        while drained <= DRAIN_BYTES:
            message = await receive()
            if message["type"] != "http.request":
                return
            drained += len(message.get("body", b""))
            if not message.get("more_body", False):
                return


def declared_size(scope: Scope) -> int:
    """The body's size its Content-Length declares; 0 when none (chunked, or no body)."""
    for key, value in scope.get("headers", ()):
        if key == b"content-length":
            text = value.decode("latin-1").strip()
            return int(text) if text.isdigit() else 0
    return 0


def body_coming(scope: Scope) -> bool:
    """Whether the request has a body on its way (a refusal then lingers over it and closes)."""
    return declared_size(scope) > 0 or any(key == b"transfer-encoding" for key, _ in scope.get("headers", ()))


def worth_draining(scope: Scope) -> bool:
    """Whether a refused body's rest is read and dropped before the close (`discard_rest`). Not when
    the client asked `Expect: 100-continue` (it sends nothing until told, and reading would tell it),
    nor when the body declares more than the drain would ever read."""
    expects = any(key == b"expect" and value.strip().lower() == b"100-continue" for key, value in scope.get("headers", ()))
    return not expects and declared_size(scope) <= MAX_BODY_BYTES + DRAIN_BYTES


def replay(body: bytes, trailing: list[Message], receive: Receive) -> Receive:
    """A `receive` that gives the buffered body first, then whatever the connection says next."""
    queue: list[Message] = [{"type": "http.request", "body": body, "more_body": False}, *trailing]

    async def again() -> Message:
        if queue:
            return queue.pop(0)
        return await receive()

    return again

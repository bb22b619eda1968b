"""Hooks on a remote brain: `context_pack` and `delta` over HTTP, without the MCP SDK.

A harness wired to a remote brain (`memverbs connect URL --install <harness>`) has no
local brain to read, so its hooks ask the connected server. A hook runs on every
session start and prompt, so the call is the smallest thing the server accepts: one
JSON-RPC `tools/call` POSTed over a plain socket (the server runs stateless with JSON
responses: no `initialize`, no session). Not `http.client`: it imports the `email` package
(and `ssl` even for plain HTTP), about a third of a cold remote hook's start-up; one request
with `Connection: close` needs only the status line and the body's framing. The caller is
the token's client, so the server files the session's delta cursor on that token's own
lane, keyed by the harness's session id — `'local'` stays the local hooks' lane.

Every failure is a code for the hooks log, never output: `remote_unreachable`,
`remote_401`, `remote_timeout`, `remote_http_<status>`, `remote_bad_reply`,
`remote_no_token`. The socket timeout is what is left of the hook's deadline minus a
margin, so a slow server ends as `remote_timeout` rather than the runner's `deadline`.
"""

from __future__ import annotations

import json
import os
import time

from memverbs.hooks.events import HookFailure, RemoteHookError
from memverbs.server.home import REMOTE_RECEIPT, Home

TYPE_CHECKING = False  # typing's flag, without importing typing on a hook's start

if TYPE_CHECKING:
    from memverbs.hooks.events import HookEvent
    from memverbs.hooks.state import SessionState
    from memverbs.server.quickconfig import QuickSettings
    from memverbs.server.verbs.readout import Ask

MARGIN_S = 0.15
MAX_REPLY = 4 << 20
MAX_HEAD = 64 << 10  # a reply's status line and headers; more is no server of ours


def remote_url(home: Home, harness: str) -> str | None:
    """The remote brain this harness's hooks use, or None for the local brain.

    `connect --install` records the URL in the harness's remote receipt; while it is
    there, the harness's MCP server is that brain, and so are its hooks."""
    try:
        # Home.receipt's file, spelled with os.path: a hook's start does without pathlib.
        with open(os.path.join(home.dir, "integrations", harness, REMOTE_RECEIPT), encoding="utf-8") as fh:
            receipt = json.load(fh)
    except (OSError, ValueError):
        return None
    url = receipt.get("remote_url") if isinstance(receipt, dict) else None
    return url if isinstance(url, str) and url.startswith(("http://", "https://")) else None


class RemoteBrain:
    """One verb call per request against the remote brain's MCP endpoint."""

    def __init__(self, url: str, token: str, deadline: float) -> None:
        self.url, self.token, self.deadline = url, token, deadline
        self._ids = 0

    def call(self, verb: str, params: dict) -> dict:
        from urllib.parse import urlsplit  # noqa: PLC0415 - a remote brain's hook only (a local one asks remote_url alone)

        parts = urlsplit(self.url)
        timeout = self.deadline - time.monotonic() - MARGIN_S
        if timeout <= 0:
            raise RemoteHookError("remote_timeout")
        if parts.hostname is None:
            raise RemoteHookError("remote_unreachable")  # a URL with no host names no server to reach
        self._ids += 1
        body = json.dumps(
            {"jsonrpc": "2.0", "id": self._ids, "method": "tools/call", "params": {"name": verb, "arguments": params}}
        ).encode("utf-8")
        head = (
            f"POST {parts.path or '/'} HTTP/1.1\r\nHost: {parts.netloc.rpartition('@')[2]}\r\n"
            f"Authorization: Bearer {self.token}\r\nContent-Type: application/json\r\n"
            f"Accept: application/json, text/event-stream\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        )
        try:
            raw = _exchange(parts.scheme == "https", parts.hostname, parts.port, head.encode("latin-1") + body, timeout)
        except TimeoutError as exc:
            raise RemoteHookError("remote_timeout") from exc
        except (OSError, UnicodeError) as exc:
            raise RemoteHookError("remote_unreachable") from exc
        status, data = _response(raw)
        if status != 200:
            raise RemoteHookError(f"remote_{status}" if status in (401, 403) else f"remote_http_{status}")
        return _tool_body(data)


def _exchange(https: bool, host: str, port: int | None, request: bytes, timeout: float) -> bytes:
    """Send one request and read the whole reply: to its framed end, or to the close we asked for."""
    import socket  # noqa: PLC0415 - only remote hooks pay for it

    sock = socket.create_connection((host, port or (443 if https else 80)), timeout=timeout)
    try:
        if https:
            import ssl  # noqa: PLC0415 - only an https brain pays for it

            sock = ssl.create_default_context().wrap_socket(sock, server_hostname=host)
        sock.sendall(request)
        reply = bytearray()
        body_at, framing = -1, b""
        while chunk := sock.recv(65536):
            reply += chunk
            if len(reply) > MAX_REPLY:
                raise RemoteHookError("remote_bad_reply")
            if body_at < 0:
                # Look for the blank line only where it can newly end: a reply trickling in stays linear.
                end = reply.find(b"\r\n\r\n", max(0, len(reply) - len(chunk) - 3))
                if end < 0:
                    if len(reply) > MAX_HEAD:
                        raise RemoteHookError("remote_bad_reply")
                    continue
                body_at, framing = end + 4, _framing(bytes(reply[:end]))
            if _complete(reply, body_at, framing):
                break  # a server that keeps the connection open anyway does not hold the hook
        return bytes(reply)
    finally:
        sock.close()


def _headers(head: bytes) -> dict[bytes, bytes]:
    headers = {}
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        headers[name.strip().lower()] = value.strip().lower()
    return headers


def _framing(head: bytes) -> bytes:
    """How the body ends: b"chunked", the Content-Length as sent, or b"" (at the close)."""
    headers = _headers(head)
    if headers.get(b"transfer-encoding") == b"chunked":
        return b"chunked"
    return headers.get(b"content-length", b"")


def _complete(reply: bytearray, body_at: int, framing: bytes) -> bool:
    if framing == b"chunked":
        return reply.endswith(b"0\r\n\r\n")
    return framing.isdigit() and len(reply) - body_at >= int(framing)  # a bad length reads to the close


def _response(raw: bytes) -> tuple[int, bytes]:
    """The status and the body of an HTTP/1.1 reply (Content-Length, chunked, or up to the close)."""
    head, sep, rest = raw.partition(b"\r\n\r\n")
    status_line = head.split(b"\r\n", 1)[0].split(None, 2)
    if not sep or len(status_line) < 2 or not status_line[0].startswith(b"HTTP/") or not status_line[1].isdigit():
        raise RemoteHookError("remote_unreachable")  # not an HTTP server answering
    framing = _framing(head)
    try:
        if framing == b"chunked":
            return int(status_line[1]), _dechunk(rest)
        return int(status_line[1]), rest[: int(framing)] if framing else rest
    except ValueError as exc:
        raise RemoteHookError("remote_bad_reply") from exc


def _dechunk(data: bytes) -> bytes:
    out: list[bytes] = []
    pos = 0
    while True:
        end = data.index(b"\r\n", pos)
        field = data[pos:end].split(b";")[0].strip()
        if not field or field.strip(b"0123456789abcdefABCDEF"):
            raise ValueError("a chunk size is hex digits")  # a sign would walk backwards: never ending
        size = int(field, 16)
        if size == 0:
            return b"".join(out)
        out.append(data[end + 2 : end + 2 + size])
        pos = end + 2 + size + 2


def _tool_body(data: bytes) -> dict:
    try:
        reply = json.loads(data)
        result = reply["result"]
        body = json.loads(result["content"][0]["text"])
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise RemoteHookError("remote_bad_reply") from exc
    if not isinstance(body, dict):
        raise RemoteHookError("remote_bad_reply")
    if result.get("isError") or "error" in body:
        raise HookFailure(str(body.get("error", "error"))[:40])
    return body


class RemoteHook:
    """What a moment needs, on a remote brain: the same surface as the local `Hook`."""

    def __init__(
        self, url: str, event: HookEvent, settings: QuickSettings, state: SessionState, now_ms: int, deadline: float
    ) -> None:
        from memverbs.remote.credentials import token_for  # noqa: PLC0415 - env first; keyring only without it

        self.event, self.settings, self.state, self.now_ms = event, settings, state, now_ms
        self.source = settings.source
        token = token_for(url)
        # A token that cannot go into a header line as it is (a stray newline) is no token to send.
        if not token or not (token.isascii() and token.isprintable()) or " " in token:
            raise RemoteHookError("remote_no_token")
        self.remote = RemoteBrain(url, token, deadline)

    # a `readout.Side`: a remote brain over HTTP, asked only what the protocol's wire carries
    in_process = False

    def call(self, verb: str, params: dict, ask: Ask | None = None) -> tuple[dict, dict]:
        return self.remote.call(verb, params), {}

    def own_project(self) -> str | None:
        """The project's own slug: the remote brain's registry is not read from here (a round trip)."""
        from memverbs.server.projects import find_project  # noqa: PLC0415

        project = find_project(self.event.cwd)
        return project.slug if project is not None else None

    def reads(self) -> None:
        """No pointers on a remote brain: the protocol has no name lookup (its agents pull with `entity`)."""
        return None

    def close(self) -> None:
        pass

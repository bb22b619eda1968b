"""Hooks on a remote brain: `context_pack` and `delta` over HTTP, without the MCP SDK.

A harness wired to a remote brain (`memverbs connect URL --install <harness>`) has no
local brain to read, so its hooks ask the connected server. A hook runs on every
session start and prompt, so the call is the smallest thing the server accepts: one
JSON-RPC `tools/call` POSTed with `http.client` (the server runs stateless with JSON
responses: no `initialize`, no session). The caller is the token's client, so the
server files the session's delta cursor on that token's own lane, keyed by the
harness's session id — `'local'` stays the local hooks' lane.

Every failure is a code for the hooks log, never output: `remote_unreachable`,
`remote_401`, `remote_timeout`, `remote_http_<status>`, `remote_bad_reply`,
`remote_no_token`. The socket timeout is what is left of the hook's deadline minus a
margin, so a slow server ends as `remote_timeout` rather than the runner's `deadline`.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from memverbs.hooks.events import HookFailure, RemoteHookError
from memverbs.server.home import REMOTE_RECEIPT, Home

if TYPE_CHECKING:
    from memverbs.hooks.events import HookEvent
    from memverbs.hooks.state import SessionState
    from memverbs.server.quickconfig import QuickSettings

MARGIN_S = 0.15
MAX_REPLY = 4 << 20


def remote_url(home: Home, harness: str) -> str | None:
    """The remote brain this harness's hooks use, or None for the local brain.

    `connect --install` records the URL in the harness's remote receipt; while it is
    there, the harness's MCP server is that brain, and so are its hooks."""
    try:
        receipt = json.loads(home.receipt(harness, REMOTE_RECEIPT).read_text(encoding="utf-8"))
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
        import http.client  # noqa: PLC0415 - only remote hooks pay for it

        parts = urlsplit(self.url)
        timeout = self.deadline - time.monotonic() - MARGIN_S
        if timeout <= 0:
            raise RemoteHookError("remote_timeout")
        if parts.hostname is None:
            raise RemoteHookError("remote_unreachable")  # a URL with no host names no server to reach
        conn: http.client.HTTPConnection
        if parts.scheme == "https":
            conn = http.client.HTTPSConnection(parts.hostname, parts.port, timeout=timeout)
        else:
            conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
        self._ids += 1
        body = json.dumps(
            {"jsonrpc": "2.0", "id": self._ids, "method": "tools/call", "params": {"name": verb, "arguments": params}}
        )
        headers = {
            "Authorization": f"Bearer {self.token}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        try:
            conn.request("POST", parts.path or "/", body, headers)
            response = conn.getresponse()
            data = response.read(MAX_REPLY)
        except TimeoutError as exc:
            raise RemoteHookError("remote_timeout") from exc
        except (OSError, http.client.HTTPException) as exc:
            raise RemoteHookError("remote_unreachable") from exc
        finally:
            conn.close()
        if response.status != 200:
            raise RemoteHookError(f"remote_{response.status}" if response.status in (401, 403) else f"remote_http_{response.status}")
        return _tool_body(data)


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
        from memverbs.remote.record import token_for  # noqa: PLC0415 - env first; keyring only without it

        self.event, self.settings, self.state, self.now_ms = event, settings, state, now_ms
        token = token_for(url)
        if not token:
            raise RemoteHookError("remote_no_token")
        self.remote = RemoteBrain(url, token, deadline)

    def call(self, verb: str, params: dict) -> dict:
        return self.remote.call(verb, params)

    def standing(self) -> list[str]:
        """Configured, then banked; a remote brain's recent entities are not worth a second round trip
        (the pack's hot-facts arm warms a new session anyway)."""
        from memverbs.hooks.standing import standing_entities  # noqa: PLC0415

        return standing_entities(self.settings.hook_entities, self.state.entities)

    def has_cursor(self) -> bool:
        return self.state.cursor_set

    def page_stamps(self, cards: list[dict]) -> list[dict]:
        return []  # the pack's cards carry no page times; a page edited just before the start may come once more

    def close(self) -> None:
        pass

"""MCP roots: the project a client says it works in, when it can say so.

A stdio server's project is first its working directory's (server/projects.py). A client
that declares the `roots` capability at `initialize` is asked `roots/list` once it has sent
`notifications/initialized`, and again on each `notifications/roots/list_changed`. The first
`file://` root that lies in a git working tree is then the connection's project; an answer with
none (or an error, or no answer) leaves the working directory's.

A tool call that arrives while a request is outstanding waits for its answer, so a call the
client sends after it changed its roots runs in the new ones; never long: at most ROOTS_WAIT_S,
and a client that once let that pass is never waited for again on its connection (its late
answers still apply to the calls after them). Pure bookkeeping plus file reads: no SDK import,
and a client without roots pays nothing.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from memverbs.server.projects import find_project
from memverbs.server.transport import wire

if TYPE_CHECKING:
    from memverbs.server.projects import Project

# A client answers roots/list from its own message loop, within milliseconds; the bound only
# matters for one that declares the capability and never answers.
ROOTS_WAIT_S = 2.0
_ID_PREFIX = "memverbs-roots-"
_MAX_ROOTS = 64  # a workspace of more folders than this is not one project anyway


class Roots:
    """One connection's roots: the requests it sends, the answers it takes, the project they name."""

    def __init__(self, fallback: Project | None, wait_s: float = ROOTS_WAIT_S) -> None:
        self.fallback = fallback  # the working directory's project
        self.project = fallback
        self.wait_s = wait_s
        self._lock = threading.Lock()
        self._seq = 0
        self._answered = threading.Event()
        self._answered.set()  # nothing asked: nothing to wait for
        self._silent = False  # a request went unanswered past the bound: never wait on this client again

    def ask(self) -> bytes:
        """The `roots/list` request to send; the calls after it wait for its answer (bounded)."""
        with self._lock:
            self._seq += 1
            msg_id = f"{_ID_PREFIX}{self._seq}"
            if not self._silent:
                self._answered.clear()
        return wire.line({"jsonrpc": "2.0", "id": msg_id, "method": "roots/list"})

    def take(self, msg: dict) -> bool:
        """Apply a response if it answers one of this connection's roots/list requests (True), else False."""
        msg_id = msg.get("id")
        if "method" in msg or not isinstance(msg_id, str) or not msg_id.startswith(_ID_PREFIX):
            return False
        result = msg.get("result")
        found = project_of_roots(result.get("roots")) if isinstance(result, dict) else None
        with self._lock:
            if msg_id == f"{_ID_PREFIX}{self._seq}":  # an older answer is overtaken by the newer request
                self.project = found or self.fallback
                self._answered.set()
        return True

    def current(self) -> Project | None:
        """The connection's project for the next call: an outstanding answer is awaited, at most `wait_s`."""
        if not self._silent and not self._answered.wait(self.wait_s):
            self._silent = True
            self._answered.set()
        with self._lock:
            return self.project


def project_of_roots(roots: Any) -> Project | None:
    """The project of the first `file://` root inside a git working tree, or None."""
    if not isinstance(roots, list):
        return None
    for root in roots[:_MAX_ROOTS]:
        uri = root.get("uri") if isinstance(root, dict) else None
        path = file_path(uri) if isinstance(uri, str) else None
        project = find_project(path) if path else None
        if project is not None:
            return project
    return None


def file_path(uri: str) -> str | None:
    """The local path a `file://` URI names (`file:///a/b`, `file://localhost/a/b`), else None."""
    from urllib.parse import unquote, urlsplit  # noqa: PLC0415 - paid only by a client that offers roots

    try:
        parts = urlsplit(uri)
    except ValueError:
        return None
    if parts.scheme.lower() != "file" or parts.netloc.lower() not in ("", "localhost"):
        return None
    path = unquote(parts.path)
    return path if path.startswith("/") and "\x00" not in path else None

"""A fast front for `memverbs serve` over stdio: answer while the SDK loads, then hand over.

A harness spawns the server at every session start and waits about a second
for `initialize` and `tools/list` (Codex then drops the tools for the first
turn). Importing the official MCP SDK alone takes ~0.55 s here, so the process
starts answering before it is loaded: a background thread imports the SDK
while this front answers the legacy handshake (`initialize`,
`notifications/initialized`, `ping`, `tools/list`) and `tools/call` itself —
tool calls go through the same Dispatcher the SDK server uses, so the bodies
are identical. At the first message after the SDK is ready, the front hands
the connection over for good: it replays the `initialize` it answered (the
SDK's duplicate reply is dropped) and the SDK serves everything from then on.
Any message the front does not know makes it wait for the SDK first.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable
from typing import BinaryIO

from memverbs import __version__
from memverbs.server.dispatch import Dispatcher
from memverbs.server.protocol.surfaces import tool_defs
from memverbs.server.transport.encoding import encode

# The handshake versions the SDK negotiates (tests pin these against mcp_types.version).
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_HANDSHAKE = "2025-11-25"
REPLAY_ID = "memverbs-front-initialize"


class ProtocolOut:
    """stdout reserved for the protocol: fd 1 is pointed at stderr so a stray print cannot corrupt it."""

    def __init__(self) -> None:
        sys.stdout.flush()
        self.fd = os.dup(1)
        os.dup2(2, 1)
        self.lock = threading.Lock()

    def write_line(self, line: str) -> None:
        data = (line + "\n").encode()
        with self.lock:
            view = memoryview(data)
            while view:
                view = view[os.write(self.fd, view) :]


class Loader(threading.Thread):
    """Imports the SDK and builds the server off the main thread."""

    def __init__(self, build: Callable[[], object]) -> None:
        super().__init__(name="memverbs-sdk-loader", daemon=True)
        self.build = build
        self.server: object | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.server = self.build()
        except BaseException as exc:  # noqa: BLE001 - reported on the main thread at handover
            self.error = exc

    @property
    def ready(self) -> bool:
        return not self.is_alive()


class Front:
    def __init__(self, dispatcher: Dispatcher, out: ProtocolOut) -> None:
        self.dispatcher = dispatcher
        self.out = out
        self.initialize: dict | None = None  # the client's request, replayed to the SDK
        self.initialized_seen = False

    def handle(self, raw: bytes) -> bool:
        """Answer one message locally; False means the SDK must take it."""
        try:
            msg = json.loads(raw)
        except ValueError:
            return False
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
            return False
        method, msg_id, params = msg.get("method"), msg.get("id"), msg.get("params") or {}
        if method == "initialize" and self.initialize is None and msg_id is not None:
            requested = params.get("protocolVersion")
            version = requested if requested in HANDSHAKE_VERSIONS else LATEST_HANDSHAKE
            self.initialize = msg
            return self._reply(msg_id, {
                "capabilities": {"tools": {"listChanged": False}},
                "protocolVersion": version,
                "serverInfo": {"name": "memverbs", "version": __version__},
            })
        if self.initialize is None:
            return False  # not the legacy handshake (or a newer era): the SDK decides
        if method == "notifications/initialized" and msg_id is None:
            self.initialized_seen = True
            return True
        if method == "ping" and msg_id is not None:
            return self._reply(msg_id, {})
        if method == "tools/list" and msg_id is not None:
            return self._reply(msg_id, {"tools": tool_defs(self.dispatcher.surface)})
        if method == "tools/call" and msg_id is not None and isinstance(params.get("name"), str):
            arguments = params.get("arguments")
            return self._reply(msg_id, encode(self.dispatcher.call(params["name"], arguments)))
        return False

    def _reply(self, msg_id, result: dict) -> bool:
        self.out.write_line(json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": result}, ensure_ascii=False, separators=(",", ":")))
        return True

    def replay(self) -> list[str]:
        """What the SDK must see first to be in the state the client believes in."""
        lines = []
        if self.initialize is not None:
            lines.append(json.dumps({**self.initialize, "id": REPLAY_ID}))
            if self.initialized_seen:
                lines.append(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        return lines


def serve(dispatcher: Dispatcher, build_server: Callable[[], object], run_sdk: Callable, stdin: BinaryIO | None = None) -> None:
    """Front until the SDK is loaded, then `run_sdk(server, first_lines, stdin, out)` for the rest."""
    stdin = stdin or sys.stdin.buffer
    out = ProtocolOut()
    loader = Loader(build_server)
    loader.start()
    front = Front(dispatcher, out)
    pending: list[str] = []
    while not loader.ready:
        line = stdin.readline()
        if not line:
            return  # the client left before the SDK was needed
        if not line.strip() or front.handle(line):
            continue
        pending.append(line.decode("utf-8", errors="replace"))
        break
    loader.join()
    if loader.error is not None:
        raise loader.error
    run_sdk(loader.server, front.replay() + pending, stdin, out)

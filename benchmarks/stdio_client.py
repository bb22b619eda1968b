"""A raw MCP stdio client: spawn a server command, speak newline-delimited JSON-RPC, time each call.

Client-side wall time from writing the request to reading its response: what a
harness waits for, transport included. No SDK on this side, so the client adds
only a JSON encode/decode and a pipe round trip to what it measures.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import time
from pathlib import Path


class ServerError(RuntimeError):
    """The server exited, answered with a JSON-RPC error, or a tool result was not JSON."""


class StdioClient:
    def __init__(self, command: list[str] | str, env: dict | None = None, cwd: Path | None = None) -> None:
        argv = shlex.split(command) if isinstance(command, str) else command
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     env=env or dict(os.environ), cwd=cwd)
        self._next = 0
        self.server_info = self.request("initialize", {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "memverbs-bench", "version": "1"},
        })[0].get("serverInfo", {})
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _send(self, msg: dict) -> None:
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()

    def request(self, method: str, params: dict | None = None) -> tuple[dict, float]:
        """(result, milliseconds) of one request, timed from send to its response."""
        self._next += 1
        want = self._next
        msg = {"jsonrpc": "2.0", "id": want, "method": method}
        if params is not None:
            msg["params"] = params
        start = time.perf_counter()
        self._send(msg)
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise ServerError(f"server exited during {method} (exit {self.proc.poll()})")
            reply = json.loads(line)
            if reply.get("id") == want:
                break
        elapsed = (time.perf_counter() - start) * 1000
        if "error" in reply:
            raise ServerError(f"{method} failed: {reply['error']}")
        return reply["result"], elapsed

    def call(self, tool: str, arguments: dict) -> tuple[dict, float, bool]:
        """(body, milliseconds, is_error) of one tools/call; the body is the tool's JSON text."""
        result, elapsed = self.request("tools/call", {"name": tool, "arguments": arguments})
        content = result.get("content") or [{}]
        try:
            body = json.loads(content[0].get("text", ""))
        except ValueError as exc:
            raise ServerError(f"{tool} answered non-JSON text: {content[0].get('text', '')[:200]!r}") from exc
        return body, elapsed, bool(result.get("isError"))

    def ping(self) -> float:
        return self.request("ping")[1]

    def tools(self) -> list[str]:
        return [t["name"] for t in self.request("tools/list", {})[0]["tools"]]

    def close(self) -> None:
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()

    def __enter__(self) -> StdioClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

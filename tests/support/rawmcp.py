"""A bare JSON-RPC-over-stdio peer: sees exactly the bytes a harness sees, no SDK in between."""

from __future__ import annotations

import json
import selectors
import subprocess
import time


class RawMcp:
    def __init__(self, argv: list[str], env: dict, cwd: str | None = None) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                     cwd=cwd)
        self.next_id = 0
        self.stdout_lines: list[str] = []

    def send(self, method: str, params: dict | None = None, *, notify: bool = False) -> dict | None:
        msg: dict = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        if not notify:
            self.next_id += 1
            msg["id"] = self.next_id
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()
        if notify:
            return None
        while True:
            reply = json.loads(self._readline())
            if reply.get("id") == msg["id"]:
                return reply

    def frame(self, raw: bytes, reply_id=None, *, expect: bool = True) -> bytes | None:
        """Send one raw line; return the raw reply line (the one with `reply_id`, or the next one)."""
        self.proc.stdin.write(raw + b"\n")
        self.proc.stdin.flush()
        if not expect:
            return None
        while True:
            line = self._readline().encode()
            if reply_id is None or json.loads(line).get("id") == reply_id:
                return line

    def handshake(self) -> dict:
        init = self.send(
            "initialize",
            {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw-test", "version": "1"}},
        )
        self.send("notifications/initialized", notify=True)
        return init

    def call(self, name: str, arguments: dict) -> dict:
        return self.send("tools/call", {"name": name, "arguments": arguments})["result"]

    def _readline(self, timeout: float = 20.0) -> str:
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if sel.select(timeout=0.1):
                line = self.proc.stdout.readline().decode()
                if not line:
                    raise EOFError(self.proc.stderr.read().decode())
                self.stdout_lines.append(line)
                return line
        raise TimeoutError("no reply from the server")

    def close(self) -> str:
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        return self.proc.stderr.read().decode()

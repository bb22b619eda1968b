"""`memverbs serve` over stdio: the harness spawns it and speaks MCP on its pipes.

stdout is the protocol; the banner and any diagnostics go to stderr. The stdio
front (stdio_front.py) answers the handshake and early tool calls while the SDK
imports; the SDK's server then serves the rest of the connection.
"""

from __future__ import annotations



from memverbs.server.errors import MemverbsError
from memverbs.server.protocol.surfaces import allowed
from memverbs.server.runtime import Runtime
from memverbs.server.timeparse import now_ms
from memverbs.server.transport import stdio_front
from memverbs.server.transport.diagnostics import say


class _ReplayStdin:
    """The SDK's stdin: the front's replay and pending lines first, then the live pipe."""

    def __init__(self, first: list[str], stdin) -> None:
        self.first = list(first)
        self.stdin = stdin

    def __aiter__(self):
        return self

    async def __anext__(self) -> str:
        import anyio  # noqa: PLC0415

        if self.first:
            return self.first.pop(0)
        line = await anyio.to_thread.run_sync(self.stdin.readline, abandon_on_cancel=True)
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")


class _FilteredStdout:
    """The SDK's stdout: drops its answer to the replayed initialize (the client already has one)."""

    def __init__(self, out: stdio_front.ProtocolOut) -> None:
        self.out = out

    async def write(self, text: str) -> None:
        for line in text.splitlines():
            if line and f'"id":"{stdio_front.REPLAY_ID}"' not in line.replace(" ", ""):
                self.out.write_line(line)

    async def flush(self) -> None:
        return None


def _one_at_a_time():
    """Run calls on a worker thread, one at a time: the process has one SQLite connection."""
    import anyio  # noqa: PLC0415

    limiter: list = []

    async def offload(thunk):
        if not limiter:
            limiter.append(anyio.CapacityLimiter(1))
        return await anyio.to_thread.run_sync(thunk, limiter=limiter[0])

    return offload


def serve_stdio(runtime: Runtime, surface: str) -> None:
    dispatcher = runtime.mcp_dispatcher(surface)
    count = len(allowed(surface))
    what = f"{count} memory verbs" if surface == "verbs" else f"{count} tools ({surface} surface)"
    say(f"Starting memverbs MCP server (stdio) — serving {what} (MEMORY_VERBS v1)...")
    if runtime.config_error is not None:
        say(f"memverbs: {runtime.config_error.message} — {runtime.config_error.fix}")
    try:
        runtime.brain().gc_cursors(now_ms())  # idle delta cursors, once per boot
    except MemverbsError as exc:
        say(f"memverbs: {exc.message} — {exc.fix}")

    def build():
        from memverbs.server.transport.mcp_server import build_server  # noqa: PLC0415 - the slow import, off the main thread

        return build_server(lambda ctx: dispatcher, offload=_one_at_a_time())

    def run_sdk(server, first_lines, stdin, out) -> None:
        import anyio  # noqa: PLC0415
        from mcp.server.stdio import stdio_server  # noqa: PLC0415

        async def main() -> None:
            async with stdio_server(stdin=_ReplayStdin(first_lines, stdin), stdout=_FilteredStdout(out)) as (read, write):
                await server.run(read, write, server.create_initialization_options())

        anyio.run(main)

    try:
        stdio_front.serve(dispatcher, build, run_sdk)
    except KeyboardInterrupt:
        pass
    finally:
        runtime.close()




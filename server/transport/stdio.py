"""`memverbs serve` over stdio: the harness spawns it and speaks MCP on its pipes.

stdout is the protocol; the banner and any diagnostics go to stderr.
"""

from __future__ import annotations

import sys

import anyio
from mcp.server.stdio import stdio_server

from memverbs.server.errors import MemverbsError
from memverbs.server.protocol.surfaces import allowed
from memverbs.server.runtime import Runtime
from memverbs.server.timeparse import now_ms
from memverbs.server.transport.mcp_server import build_server


def serve_stdio(runtime: Runtime, surface: str) -> None:
    dispatcher = runtime.mcp_dispatcher(surface)
    server = build_server(lambda ctx: dispatcher)
    count = len(allowed(surface))
    what = f"{count} memory verbs" if surface == "verbs" else f"{count} tools ({surface} surface)"
    print(f"Starting memverbs MCP server (stdio) — serving {what} (MEMORY_VERBS v1)...", file=sys.stderr)
    if runtime.config_error is not None:
        print(f"memverbs: {runtime.config_error.message} — {runtime.config_error.fix}", file=sys.stderr)
    try:
        runtime.brain().gc_cursors(now_ms())  # idle delta cursors, once per boot
    except MemverbsError as exc:
        print(f"memverbs: {exc.message} — {exc.fix}", file=sys.stderr)

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    try:
        anyio.run(main)
    except KeyboardInterrupt:
        pass
    finally:
        runtime.close()

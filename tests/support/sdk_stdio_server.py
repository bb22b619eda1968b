"""The reference peer: memverbs's tools served by the official MCP SDK over stdio, nothing of memverbs's wire.

    python sdk_stdio_server.py [SURFACE]

Tests send the same frames here and to `memverbs serve` and compare the bytes
that come back, so the two cannot drift apart unnoticed.
"""

from __future__ import annotations

import os
import sys

import anyio
from mcp.server.stdio import stdio_server

from memverbs.server.context import Caller
from memverbs.server.projects import find_project
from memverbs.server.runtime import Runtime
from memverbs.server.transport.mcp_server import build_server


def main() -> None:
    runtime = Runtime()
    # The caller `memverbs serve` builds: an MCP caller in its working directory's project.
    caller = Caller.mcp(runtime.source, project=find_project(os.getcwd()))
    dispatcher = runtime.mcp_dispatcher(sys.argv[1] if len(sys.argv) > 1 else "full", caller)
    server = build_server(lambda ctx: dispatcher)

    async def serve() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(serve)


if __name__ == "__main__":
    main()

"""`memverbs serve`: the MCP server over stdio."""

from __future__ import annotations


def run_serve(args) -> int:
    from memverbs.server.runtime import Runtime  # noqa: PLC0415
    from memverbs.server.transport.stdio import serve_stdio  # noqa: PLC0415

    runtime = Runtime()
    serve_stdio(runtime, runtime.surface(args.surface))
    return 0

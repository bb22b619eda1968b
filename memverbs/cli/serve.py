"""`memverbs serve`: the MCP server over stdio, or over streamable HTTP for remote brains."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse


def run_serve(args: argparse.Namespace) -> int:
    from memverbs.cli.output import fail  # noqa: PLC0415
    from memverbs.server.runtime import Runtime  # noqa: PLC0415

    if not args.http and (args.host is not None or args.port is not None or args.behind_tls_proxy or args.public_url):
        return fail("--host, --port, --behind-tls-proxy and --public-url only apply to --http", "Add --http to serve over HTTP.",
                    code=2)

    # stdio: the first answer must not wait for pydantic-settings (see Runtime.quick).
    runtime = Runtime() if args.http else Runtime.quick()
    runtime.build_graphs = True  # lives long enough to build a big brain's vector graph aside
    surface = runtime.surface(args.surface)
    if args.http:
        # uvicorn and the SDK's HTTP stack are imported only here.
        from memverbs.server.transport.http import DEFAULT_HOST, DEFAULT_PORT, serve_http  # noqa: PLC0415

        return serve_http(
            runtime,
            surface,
            host=args.host if args.host is not None else DEFAULT_HOST,
            port=args.port if args.port is not None else DEFAULT_PORT,
            behind_tls_proxy=args.behind_tls_proxy,
            public_url=args.public_url,
        )
    from memverbs.server.transport.stdio import serve_stdio  # noqa: PLC0415

    serve_stdio(runtime, surface)
    return 0

"""The MCP binding: tools/list and tools/call on the official SDK's low-level server.

Results are encoded by encoding.py (the stdio wire uses the same function, so
the bytes cannot differ). Each result also carries what protocol revision
2026-07-28 requires (`resultType`; `ttlMs`/`cacheScope` on tools/list — private
and immediately stale, the tools depend on the caller's token): a client that
negotiates that revision (Grok's, over HTTP) is otherwise answered "Handler
returned an invalid result". The SDK sieves these keys out for older revisions,
so their bytes do not change. Built explicitly from a dispatcher factory (no module-level server object) so
HTTP and the stdio hand-over for 2026-era clients share it; nothing here writes to stdout.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from mcp import types
from mcp.server import CacheHint
from mcp.server.lowlevel import Server

from memverbs import __version__
from memverbs.server.dispatch import Dispatcher, Outcome
from memverbs.server.protocol.surfaces import tool_defs
from memverbs.server.transport.encoding import encode

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

Offload = Callable[[Callable[[], Outcome]], Awaitable[Outcome]]


def build_server(dispatcher_for: Callable[[Any], Dispatcher], offload: Offload | None = None) -> Server:
    """An SDK server whose every request asks `dispatcher_for(ctx)` who is calling.

    `offload` runs a call off the event loop, so a slow one (an embedding or chat
    request to a provider) never stalls pings and cancellations: stdio passes one
    that serialises calls on a worker thread (its one connection), HTTP one that
    spreads them over a pool of threads with a connection each. Without it a call
    runs inline.
    """

    async def list_tools(ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None) -> dict[str, Any]:
        return {"tools": tool_defs(dispatcher_for(ctx).surface), "resultType": "complete"}

    async def call_tool(ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams) -> dict[str, Any]:
        dispatcher = dispatcher_for(ctx)
        if offload is None:
            outcome = dispatcher.call(params.name, params.arguments)
        else:
            outcome = await offload(lambda: dispatcher.call(params.name, params.arguments))
        return {**encode(outcome), "resultType": "complete"}

    return Server(
        "memverbs",
        version=__version__,
        # The handlers answer plain dicts, which the SDK accepts as the result: the frozen wire shape stays
        # exactly as encode() builds it (the stubs ask for the result models).
        on_list_tools=list_tools,  # type: ignore[arg-type]
        on_call_tool=call_tool,  # type: ignore[arg-type]
        cache_hints={"tools/list": CacheHint(ttl_ms=0, scope="private")},
    )

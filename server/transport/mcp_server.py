"""The MCP binding: tools/list and tools/call on the official SDK's low-level server.

A verb's body travels as one pretty-printed JSON text block (indent 2) in
`content[0]`; `isError` is absent on success and true on error; there is no
`structuredContent` and no `outputSchema` (PROTOCOL.md §2). Unknown-parameter
warnings add a second text block and `_meta.warnings`, as the reference does.

Built explicitly from a dispatcher factory (no module-level server object) so
stdio and HTTP share it; nothing here writes to stdout.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from mcp.server.lowlevel import Server

from memverbs import __version__
from memverbs.server.dispatch import Dispatcher, Outcome
from memverbs.server.protocol.surfaces import tool_defs


def encode(outcome: Outcome) -> dict[str, Any]:
    content = [{"type": "text", "text": json.dumps(outcome.body, indent=2, ensure_ascii=False)}]
    if outcome.warnings:
        content.append({"type": "text", "text": "\n".join(outcome.warnings)})
    result: dict[str, Any] = {"content": content}
    if outcome.is_error:
        result["isError"] = True
    if outcome.meta:
        result["_meta"] = outcome.meta
    return result


Offload = Callable[[Callable[[], Outcome]], Awaitable[Outcome]]


def build_server(dispatcher_for: Callable[[Any], Dispatcher], offload: Offload | None = None) -> Server:
    """An SDK server whose every request asks `dispatcher_for(ctx)` who is calling.

    Without `offload` a call runs inline: stdio has one client, and verbs are fast,
    synchronous SQLite work on the process's one connection. HTTP serves many
    clients at once and passes an `offload` that runs the call on a worker thread
    (with that thread's own connection), so the event loop keeps accepting requests.
    """

    async def list_tools(ctx, params) -> dict[str, Any]:
        return {"tools": tool_defs(dispatcher_for(ctx).surface)}

    async def call_tool(ctx, params) -> dict[str, Any]:
        dispatcher = dispatcher_for(ctx)
        if offload is None:
            outcome = dispatcher.call(params.name, params.arguments)
        else:
            outcome = await offload(lambda: dispatcher.call(params.name, params.arguments))
        return encode(outcome)

    return Server("memverbs", version=__version__, on_list_tools=list_tools, on_call_tool=call_tool)

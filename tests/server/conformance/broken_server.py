"""A deliberately broken MCP server, for proving the conformance runner catches lies.

    python broken_server.py MODE

It serves the real memverbs dispatcher on stdio, then breaks one thing per MODE:
drop_status, absorbed, numeric_fact_id, private_in_card, provenance_success,
five_verbs (an honest server without the additive context_pack/delta).
"""

from __future__ import annotations

import sys

import anyio
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from memverbs.server.dispatch import Outcome
from memverbs.server.protocol.surfaces import tool_defs
from memverbs.server.runtime import Runtime
from memverbs.server.transport.mcp_server import encode

MODE = sys.argv[1]


def main() -> None:
    runtime = Runtime()
    honest = runtime.mcp_dispatcher("full")
    trusted = runtime.local_dispatcher()
    hidden = {"context_pack", "delta"} if MODE == "five_verbs" else set()

    def call(name: str, args: dict) -> Outcome:
        if name in hidden:
            return honest.call("no_such_tool", {})
        if MODE == "provenance_success" and name == "remember" and "provenance" not in args:
            args = {**args, "provenance": "made up by the server"}
        out = (trusted if MODE == "private_in_card" and name == "entity" else honest).call(name, args)
        body = out.body
        if not out.is_error and name == "remember":
            if MODE == "drop_status":
                body.pop("status", None)
            elif MODE == "absorbed":
                body["status"] = "absorbed"
        if not out.is_error and name == "recall" and MODE == "numeric_fact_id":
            for fact in body["facts"]:
                fact["fact_id"] = int(fact["fact_id"])
        return out

    async def list_tools(ctx, params):
        return {"tools": [t for t in tool_defs("full") if t["name"] not in hidden]}

    async def call_tool(ctx, params):
        return encode(call(params.name, dict(params.arguments or {})))

    server = Server("broken-memverbs", on_list_tools=list_tools, on_call_tool=call_tool)

    async def serve() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(serve)


if __name__ == "__main__":
    main()

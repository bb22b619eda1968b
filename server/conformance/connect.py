"""Connecting to a target endpoint with the official MCP client: stdio command or streamable HTTP.

`target` None spawns this memverbs (`python -m memverbs serve`); an `http(s)://`
URL is streamable HTTP (with an optional bearer token); anything else is a
command line, split the way a shell would (quotes respected).
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp_types import Implementation, TextContent

from memverbs import __version__

HTTP = re.compile(r"^https?://", re.IGNORECASE)
CLIENT_INFO = Implementation(name="memverbs-conformance", version=__version__)


@dataclass
class Endpoint:
    session: ClientSession

    async def list_tools(self) -> list[dict]:
        result = await self.session.list_tools()
        return [t.model_dump(by_alias=True, exclude_none=True) for t in result.tools]

    async def call_tool(self, name: str, arguments: dict) -> tuple[str, bool]:
        result = await self.session.call_tool(name, arguments)
        text = "\n".join(block.text for block in result.content if isinstance(block, TextContent))
        return text, bool(result.is_error)


def describe(target: str | None) -> str:
    return target or "self (stdio)"


@asynccontextmanager
async def connect(target: str | None, token: str | None = None, env: dict | None = None) -> AsyncIterator[Endpoint]:
    if target and HTTP.match(target):
        import httpx2  # noqa: PLC0415 - only HTTP targets pay for it
        from mcp.client.streamable_http import streamable_http_client  # noqa: PLC0415

        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
            async with streamable_http_client(target, http_client=http) as streams:
                async with ClientSession(streams[0], streams[1], client_info=CLIENT_INFO) as session:
                    await session.initialize()
                    yield Endpoint(session)
        return
    argv = shlex.split(target) if target else [sys.executable, "-m", "memverbs", "serve"]
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(env if env is not None else os.environ))
    with open(os.devnull, "w") as quiet:
        async with stdio_client(params, errlog=quiet) as (read, write):
            async with ClientSession(read, write, client_info=CLIENT_INFO) as session:
                await session.initialize()
                yield Endpoint(session)

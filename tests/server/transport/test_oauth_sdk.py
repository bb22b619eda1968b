"""A client we did not write: the MCP SDK's own `OAuthClientProvider` against a real `serve --http`.

It discovers the protected-resource and authorization-server metadata from the 401,
registers itself, runs the PKCE authorization (the owner approves on the consent page
with a code from `memverbs auth approve`), exchanges the code, lists and calls tools,
then refreshes its token when it expires — over real HTTP on loopback.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import anyio
import httpx
import httpx2
import pytest
from helpers import init_home
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from mcp_types import TextContent
from oauth_support import CALLBACK, approval_code, clean_env, query

from benchmarks.http_load import RemoteServer


class MemoryStorage:
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None
        self.history: list[OAuthToken] = []

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens
        self.history.append(tokens)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    return init_home(tmp_path_factory.mktemp("oauth-sdk") / "home").root


@pytest.fixture(scope="module")
def server(home):
    with RemoteServer(home, env=clean_env(home)) as srv:
        yield srv
        assert srv.stop() == 0, srv.stderr()


def owner_approves(memverbs_cmd, home, seen: dict):
    """The browser's part: follow /authorize to the consent page, approve with a fresh approval code."""

    async def redirect_handler(url: str) -> None:
        asked = httpx.get(url, timeout=30)
        assert asked.status_code == 302, asked.text
        page = httpx.get(asked.headers["location"], timeout=30)
        assert page.status_code == 200 and "memverbs SDK test" in page.text, page.text
        form = {"request": query(asked.headers["location"])["request"], "decision": "approve", "surface": "full",
                "owner_secret": approval_code(memverbs_cmd, home), "scope": ["read", "write"]}
        answered = httpx.post(asked.headers["location"].split("?")[0], data=form, timeout=30)
        assert answered.status_code == 303, answered.text
        seen["callback"] = answered.headers["location"]
        seen["authorize_url"] = url

    async def callback_handler() -> AuthorizationCodeResult:
        got = query(seen["callback"])
        return AuthorizationCodeResult(code=got["code"], state=got.get("state"), iss=got.get("iss"))

    return redirect_handler, callback_handler


def test_the_sdk_client_completes_the_whole_flow(server, home, memverbs_cmd):
    storage, seen = MemoryStorage(), {}
    redirect_handler, callback_handler = owner_approves(memverbs_cmd, home, seen)
    provider = OAuthClientProvider(
        server.url, OAuthClientMetadata(client_name="memverbs SDK test", redirect_uris=[CALLBACK],
                                        token_endpoint_auth_method="client_secret_post"),
        storage, redirect_handler=redirect_handler, callback_handler=callback_handler)

    async def session_calls(http: httpx2.AsyncClient) -> tuple[list[str], dict]:
        async with streamable_http_client(server.url, http_client=http) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                tools = [t.name for t in (await session.list_tools()).tools]
                result = await session.call_tool("whoami", {})
                assert not result.is_error, result.content
                block = result.content[0]
                assert isinstance(block, TextContent)
                return tools, json.loads(block.text)

    async def flow() -> None:
        async with httpx2.AsyncClient(auth=provider, timeout=30) as http:
            tools, me = await session_calls(http)
            assert {"recall", "remember", "put_page"} <= set(tools)
            assert me["client_id"] == f"oauth:{storage.client.client_id}" and me["scopes"] == ["read", "write"]
            first = storage.tokens
            assert first is not None and first.refresh_token and first.access_token.startswith("mva_")
            # the access token expires: the SDK refreshes it (rotation: a new refresh token too) and carries on
            provider.context.token_expiry_time = time.time() - 1
            _, again = await session_calls(http)
            assert again["client_id"] == me["client_id"]
            second = storage.tokens
            assert second.access_token != first.access_token and second.refresh_token != first.refresh_token

    anyio.run(flow)
    # what the SDK sent: PKCE S256 and the resource indicator (RFC 8707), and it accepted our `iss`
    sent = query(seen["authorize_url"])
    assert sent["code_challenge_method"] == "S256" and sent["resource"] == server.url
    assert query(seen["callback"])["iss"] == server.base
    # a secret client: the brain keeps the secret's hash only, never the secret
    assert storage.client.client_secret and storage.client.client_secret.encode() not in (home / "brain.db").read_bytes()
    assert storage.history[-1].access_token.encode() not in (home / "brain.db").read_bytes()

"""The private-page write rules hold for real MCP callers: stdio right at start-up and on a server
that has been up a while, and HTTP with a token. Every one of them is untrusted."""

import json
import os
import time

import httpx
import pytest
from helpers import page
from rawmcp import RawMcp

from benchmarks.http_load import HEADERS, RemoteServer, make_token

SECRET = "WIRE-SENTINEL-6021"


@pytest.fixture
def owner(local, runtime):
    page(local, "people/wire-secret", "Wire Secret", visibility="private", body=SECRET)
    runtime.close()  # the servers below open the brain themselves
    return local


def row(home):
    from memverbs.server.runtime import Runtime

    runtime = Runtime(home)  # the home's configured brain, whichever backend
    try:
        found = runtime.brain().one("SELECT title, body, visibility, updated_at FROM pages WHERE slug = 'people/wire-secret'")
        return tuple(found)
    finally:
        runtime.close()


def body_of(result: dict) -> tuple[dict, bool]:
    return json.loads(result["content"][0]["text"]), bool(result.get("isError"))


@pytest.mark.parametrize("pause", [0.0, 2.0], ids=["at-start", "warm"])
def test_stdio_put_page_over_a_private_page_is_refused(owner, home, memverbs_cmd, env, pause):
    before = row(home)
    peer = RawMcp([*memverbs_cmd, "serve", "--surface", "full"], env)
    try:
        peer.handshake()
        time.sleep(pause)  # 0: the front answers; 2 s: the SDK has taken over
        body, is_error = body_of(peer.call("put_page", {"slug": "people/wire-secret", "content": "# Mine\n"}))
        assert is_error and body["error"] == "scope_denied" and SECRET not in json.dumps(body)
        body, is_error = body_of(peer.call("add_alias", {"slug": "people/wire-secret", "alias": "Wiry"}))
        assert is_error and body["error"] == "not_found"
    finally:
        peer.close()
    assert row(home) == before


def test_http_put_page_over_a_private_page_is_refused(owner, home):
    before = row(home)
    token = make_token(home.root, "wire")
    # Only the brain's location passes through the environment (a Postgres brain lives in brain.url).
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVERBS_") or k == "MEMVERBS_BRAIN__URL"}
    with RemoteServer(home.root, env=env) as server:
        request = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "put_page", "arguments": {"slug": "people/wire-secret", "content": "# Mine\n"}}}
        response = httpx.post(server.url, json=request, headers={**HEADERS, "Authorization": f"Bearer {token}"}, timeout=30)
        body, is_error = body_of(response.json()["result"])
        server.stop()
    assert is_error and body["error"] == "scope_denied" and SECRET not in json.dumps(body)
    assert row(home) == before

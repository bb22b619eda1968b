"""A fact made private vanishes from real MCP callers at once — a stdio server and an HTTP server
that are already running, through recall, entity, context_pack and delta — and comes back only
when the owner widens it again with explicit intent."""

import json
import os

import httpx
from rawmcp import RawMcp

from benchmarks.http_load import HEADERS, RemoteServer, make_token
from memverbs.server.timeparse import now_ms

SECRET = "WIRE-FACT-SENTINEL-4471"
CALLS = [
    ("recall", {"entity": "people/alice", "include_expired": True}),
    ("recall", {"query": SECRET}),
    ("entity", {"name": "people/alice"}),
    ("context_pack", {"entities": "people/alice", "include_private": True}),
    ("delta", {"since": "1970-01-01T00:00:00Z", "include_private": True}),
]


def seeded(local, runtime) -> int:
    local.ok("put_page", slug="people/alice", content="---\ntitle: Alice\n---\n# Alice\n")
    fid = int(local.ok("remember", fact=f"Alice {SECRET} owes us a review", provenance="t", entity="people/alice",
                       kind="commitment")["id"])
    runtime.close()  # the servers below open the brain themselves
    return fid


def change(home, fid: int, visibility: str) -> None:
    """The owner's edit, from another process's connection while the server runs (as the CLI or UI)."""
    from memverbs.server.runtime import Runtime

    runtime = Runtime(home)
    try:
        runtime.brain().set_fact_visibility(runtime.source, fid, visibility, widen=visibility == "world",
                                            reason="test", actor="test", now=now_ms())
    finally:
        runtime.close()


def seen(call) -> list[bool]:
    """For each view, whether the answer carries the sentinel (each answer must be a success)."""
    out = []
    for tool, params in CALLS:
        result = call(tool, params)
        assert not result.get("isError"), result
        out.append(SECRET in json.dumps(result))
    return out


def test_stdio_caller_loses_a_fact_made_private_and_regains_it_widened(local, runtime, home, memverbs_cmd, env):
    fid = seeded(local, runtime)
    peer = RawMcp([*memverbs_cmd, "serve", "--surface", "full"], env)
    try:
        peer.handshake()
        assert all(seen(peer.call))
        change(home, fid, "private")
        assert not any(seen(peer.call))
        change(home, fid, "world")
        assert seen(peer.call)[0]  # recall lists it again
    finally:
        peer.close()


def test_http_caller_loses_a_fact_made_private(local, runtime, home):
    fid = seeded(local, runtime)
    token = make_token(home.root, "wire")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVERBS_") or k == "MEMVERBS_BRAIN__URL"}
    with RemoteServer(home.root, env=env) as server:
        ids = iter(range(1, 100))

        def call(tool: str, params: dict) -> dict:
            request = {"jsonrpc": "2.0", "id": next(ids), "method": "tools/call", "params": {"name": tool, "arguments": params}}
            response = httpx.post(server.url, json=request, headers={**HEADERS, "Authorization": f"Bearer {token}"}, timeout=30)
            return response.json()["result"]

        assert all(seen(call))
        change(home, fid, "private")
        assert not any(seen(call))
        change(home, fid, "world")
        assert seen(call)[0]
        server.stop()

"""memverbs's own stdio wire gives the bytes the official SDK's server gives, frame for frame.

The reference peer (tests/support/sdk_stdio_server.py) serves the same dispatcher
through the SDK's low-level server and its stdio transport. Any drift — a key
order, a negotiated version, an error code, an escape — fails here.
"""

import json
import re
import sys
from pathlib import Path

from helpers import init_home
from rawmcp import RawMcp

REFERENCE = Path(__file__).parents[2] / "support" / "sdk_stdio_server.py"
ODD_TEXT = "line\u2028sep\u2029para\u0085nel\rcr\x00nul\x0bvt\x0cff\x1cfs\x1dgs\x1ers\u000a lf \\ \" é 😀 \u200b"


def _conversation(version: str) -> list[tuple[dict, bool]]:
    def req(i, method, params=None):
        msg = {"jsonrpc": "2.0", "id": i, "method": method}
        if params is not None:
            msg["params"] = params
        return msg, True

    return [
        req(1, "tools/list"),  # before initialize: -32602, as the SDK's gate answers
        req(2, "initialize", {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "eq", "version": "1"}}),
        ({"jsonrpc": "2.0", "method": "notifications/initialized"}, False),
        req(3, "ping"),
        req("four", "ping", {}),
        req(5, "tools/list", {}),
        req(6, "tools/call", {"name": "remember", "arguments": {"fact": ODD_TEXT, "provenance": "eq", "entity": "people/odd"}}),
        req(7, "tools/call", {"name": "recall", "arguments": {"entity": "people/odd"}}),
        req(8, "tools/call", {"name": "recall", "arguments": {"entty": "people/odd", "grep": ODD_TEXT[:4]}}),
        req(9, "tools/call", {"name": "entity", "arguments": {"name": ODD_TEXT}}),
        req(10, "tools/call", {"name": "entity", "arguments": {}}),
        req(11, "tools/call", {"name": "no_such_tool", "arguments": {}}),
        req(12, "tools/call", {"name": "put_page", "arguments": {"slug": "people/odd", "content": f"# Odd\n\n{ODD_TEXT}"}}),
        req(13, "tools/call", {"name": "get_page", "arguments": {"slug": "people/odd"}}),
        req(14, "tools/call", {"name": "entity"}),
        req(15, "tools/call", {"arguments": {}}),
        req(16, "tools/call", {"name": "entity", "arguments": [1]}),
        req(17, "no/such/method"),
        req(18, "logging/setLevel", {"level": "debug"}),
        req(19, "resources/list"),
        req(20, "tools/call", {"name": "context_pack", "arguments": {"entities": "people/odd"}, "_meta": {"progressToken": 7}}),
        req(21, "initialize", {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "eq", "version": "2"}}),
        ({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}}, False),
        ({"jsonrpc": "2.0", "id": 22, "result": {}}, False),  # a response to nothing: ignored by both
        req(23, "ping"),
    ]


VOLATILE = re.compile(rb'(\\"(?:latency_ms|created_at|updated_at|valid_from|ts|as_of|id|fact_id|cursor)\\": )(\\"[^\\]*\\"|[0-9]+)')


VERSIONS = ["2024-11-05", "2025-06-18", "2025-11-25", "1999-01-01"]


def _talk(argv, env) -> tuple[list[bytes], list[bytes]]:
    """One connection through the conversation at every version in turn (re-initialising renegotiates):
    the replies with per-run values (ids, times, latencies) masked, and the raw replies."""
    peer = RawMcp(argv, env)
    masked, raw = [], []
    try:
        for version in VERSIONS:
            for msg, answered in _conversation(version):
                line = peer.frame(json.dumps(msg, ensure_ascii=False).encode(), msg.get("id"), expect=answered)
                if line is not None:
                    raw.append(line)
                    masked.append(VOLATILE.sub(rb"\1<v>", line))
        return masked, raw
    finally:
        peer.close()


def test_stdio_bytes_equal_the_sdk_servers(tmp_path, memverbs_cmd, env):
    ours_home, sdk_home = init_home(tmp_path / "ours"), init_home(tmp_path / "sdk")
    ours, raw = _talk([*memverbs_cmd, "serve", "--surface", "full"], {**env, "MEMVERBS_HOME": str(ours_home.root)})
    theirs, _ = _talk([sys.executable, str(REFERENCE), "full"], {**env, "MEMVERBS_HOME": str(sdk_home.root)})
    assert len(ours) == len(theirs) == len(VERSIONS) * 22
    for mine, reference in zip(ours, theirs, strict=True):
        assert mine == reference
    # The odd text came back intact, inside one frame, through both.
    recalled = json.loads(json.loads(raw[6])["result"]["content"][0]["text"])
    assert recalled["facts"][0]["fact"] == ODD_TEXT
    assert [json.loads(raw[i])["result"]["protocolVersion"] for i in range(1, len(raw), 22)] == [
        "2024-11-05", "2025-06-18", "2025-11-25", "2025-11-25"]


MODERN_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
               "io.modelcontextprotocol/clientInfo": {"name": "eq", "version": "1"},
               "io.modelcontextprotocol/clientCapabilities": {}}


def test_a_2026_era_client_is_served_by_the_sdk_with_the_same_bytes(tmp_path, memverbs_cmd, env):
    """A client that opens with the per-request envelope gets the SDK itself (memverbs hands the connection over)."""
    frames = [
        {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": MODERN_META}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": MODERN_META}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "entity", "arguments": {"name": ODD_TEXT}, "_meta": MODERN_META}},
        {"jsonrpc": "2.0", "id": 4, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "eq", "version": "1"}}},
    ]

    def talk(argv, home):
        peer = RawMcp(argv, {**env, "MEMVERBS_HOME": str(home.root)})
        try:
            return [VOLATILE.sub(rb"\1<v>", peer.frame(json.dumps(f).encode(), f["id"])) for f in frames]
        finally:
            peer.close()

    ours = talk([*memverbs_cmd, "serve", "--surface", "full"], init_home(tmp_path / "ours"))
    theirs = talk([sys.executable, str(REFERENCE), "full"], init_home(tmp_path / "sdk"))
    assert ours == theirs
    assert b'"supportedVersions":["2026-07-28"]' in ours[0] and b'"error"' in ours[3]

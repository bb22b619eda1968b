"""`memverbs serve --http` as a real subprocess on 127.0.0.1: tokens, scopes, surfaces, privacy, lanes, load.

Each test mints its own tokens straight into the brain (what `memverbs auth create`
does); the server reads token rows per request, so they work at once.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
from pathlib import Path

import httpx
import pytest
from helpers import Client, init_home

from benchmarks.http_load import HEADERS, RemoteServer, call_body, make_token, run_load
from memverbs.server.dispatch import unknown_tool
from memverbs.server.home import Home
from memverbs.server.protocol.registry import VERB_NAMES
from memverbs.server.protocol.schemas import ERROR_SCHEMA, validate
from memverbs.server.protocol.surfaces import allowed
from memverbs.server.runtime import Runtime


def clean_env(home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVERBS_")}
    env["MEMVERBS_HOME"] = str(home)
    return env


@pytest.fixture(scope="module")
def brain_home(tmp_path_factory) -> Path:
    return init_home(tmp_path_factory.mktemp("remote") / "home").root


@pytest.fixture(scope="module")
def server(brain_home):
    with RemoteServer(brain_home, env=clean_env(brain_home)) as srv:
        yield srv
        # Graceful shutdown: SIGTERM ends it cleanly, with a status of 0.
        assert srv.stop() == 0, srv.stderr()
    assert "MCP server (HTTP) stopped" in srv.stderr()


@pytest.fixture(scope="module")
def local(brain_home):
    """The trusted in-process caller on the same brain (the operator's CLI)."""
    runtime = Runtime(Home(brain_home))
    yield Client(runtime.local_dispatcher())
    runtime.close()


def post(server, token: str | None, body: dict | None = None, **kw) -> httpx.Response:
    headers = dict(HEADERS)
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return httpx.post(server.url, json=body or call_body(1, "recall", {}), headers=headers, timeout=30, **kw)


def rpc(server, token: str, method: str, params: dict) -> dict:
    response = post(server, token, {"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    assert response.status_code == 200, response.text
    return response.json()["result"]


def call(server, token: str, tool: str, **arguments) -> tuple[dict, bool]:
    result = rpc(server, token, "tools/call", {"name": tool, "arguments": arguments})
    assert len(result["content"]) == 1
    return json.loads(result["content"][0]["text"]), bool(result.get("isError"))


def tool_names(server, token: str) -> list[str]:
    return [t["name"] for t in rpc(server, token, "tools/list", {})["tools"]]


def test_conformance_passes_over_http(server, brain_home, memverbs_cmd):
    token = make_token(brain_home, "conformance")
    proc = subprocess.run(  # `--token -`: the token arrives on stdin, never on the command line
        [*memverbs_cmd, "protocol", "conformance", "--target", server.url, "--token", "-", "--json"],
        env=clean_env(brain_home), input=token, capture_output=True, text=True, timeout=120,
    )
    report = json.loads(proc.stdout)
    assert [r for r in report["results"] if r["status"] == "fail"] == []
    assert proc.returncode == 0 and report["ok"] is True and report["passed"] >= 27
    assert "--token puts the token" not in proc.stderr


def test_read_only_token_gets_scope_denied_on_remember_and_forget(server, brain_home, local):
    fact = local.ok("remember", fact="a fact to keep", provenance="test", entity="people/scoped")
    token = make_token(brain_home, "reader", scopes="read")
    for tool, arguments in (("remember", {"fact": "x", "provenance": "p"}), ("forget", {"id": fact["id"]})):
        body, is_error = call(server, token, tool, **arguments)
        assert is_error and body["error"] == "scope_denied", body
        assert list(body) == ["error", "message", "suggestion", "protocol_version"]
        assert body["protocol_version"] == 1 and body["suggestion"].strip() and "write" in body["message"]
        assert validate(body, ERROR_SCHEMA) == []
    # reads still work, and the fact was not forgotten
    body, is_error = call(server, token, "recall", entity="people/scoped")
    assert not is_error and [f["fact"] for f in body["facts"]] == ["a fact to keep"]


def test_verbs_surface_token_cannot_see_or_call_put_page(server, brain_home):
    verbs_only = make_token(brain_home, "verbs-only", surface="verbs")
    full = make_token(brain_home, "full-surface")
    assert sorted(tool_names(server, verbs_only)) == sorted(VERB_NAMES)
    assert "put_page" in tool_names(server, full)
    content = "---\ntitle: Hidden\n---\n# Hidden\n"
    result = rpc(server, verbs_only, "tools/call", {"name": "put_page", "arguments": {"slug": "x/y", "content": content}})
    # byte-identical to a tool that does not exist at all: nothing about the hidden set leaks
    assert result == {"content": [{"type": "text", "text": json.dumps(unknown_tool("put_page", allowed("verbs")), indent=2)}],
                      "isError": True}
    missing = rpc(server, verbs_only, "tools/call", {"name": "no_such_tool", "arguments": {}})
    assert json.loads(missing["content"][0]["text"]) == unknown_tool("no_such_tool", allowed("verbs"))
    body, _ = call(server, full, "get_page", slug="x/y")
    assert body["error"] == "not_found"  # the hidden call wrote nothing


def test_a_client_on_protocol_2026_07_28_gets_valid_results(server, brain_home):
    """Grok's client negotiates revision 2026-07-28 over HTTP, whose results must carry `resultType`
    (and tools/list `ttlMs`/`cacheScope`); without them the SDK answered "Handler returned an
    invalid result" and Grok saw no tools. Older revisions never see those keys."""
    token = make_token(brain_home, "modern-client")
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}

    def modern(method: str, params: dict, **headers: str) -> dict:
        response = httpx.post(
            server.url,
            json={"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}},
            headers={**HEADERS, "Authorization": f"Bearer {token}", "MCP-Protocol-Version": "2026-07-28",
                     "Mcp-Method": method, **headers},
            timeout=30,
        )
        assert response.status_code == 200 and "error" not in response.json(), response.text
        return response.json()["result"]

    listed = modern("tools/list", {})
    assert (listed["resultType"], listed["cacheScope"], listed["ttlMs"]) == ("complete", "private", 0)
    assert "recall" in [t["name"] for t in listed["tools"]]
    called = modern("tools/call", {"name": "recall", "arguments": {}}, **{"Mcp-Name": "recall"})
    assert called["resultType"] == "complete" and json.loads(called["content"][0]["text"])["protocol_version"] == 1
    assert set(rpc(server, token, "tools/list", {})) == {"tools"}
    assert "resultType" not in rpc(server, token, "tools/call", {"name": "recall", "arguments": {}})


def test_server_surface_is_a_ceiling_for_every_token(brain_home):
    full = make_token(brain_home, "under-a-ceiling")
    with RemoteServer(brain_home, "--surface", "verbs", env=clean_env(brain_home)) as capped:
        assert sorted(tool_names(capped, full)) == sorted(VERB_NAMES)
        body, is_error = call(capped, full, "put_page", slug="a/b", content="# b\n")
        assert is_error and body == unknown_tool("put_page", allowed("verbs"))


def test_no_wrong_or_revoked_token_is_401(server, brain_home, memverbs_cmd):
    assert httpx.get(f"{server.base}/health", timeout=10).json()["status"] == "ok"  # probes need no token
    token = make_token(brain_home, "soon-revoked")
    assert post(server, token).status_code == 200
    refused = {
        "no token": post(server, None),
        "wrong token": post(server, "mvb_" + "x" * 43),
        "not a memverbs token": post(server, "hunter2"),
        "basic auth": httpx.post(server.url, json=call_body(1, "recall", {}), headers={**HEADERS, "Authorization": "Basic dTpw"}),
    }
    revoke = subprocess.run([*memverbs_cmd, "auth", "revoke", "soon-revoked"], env=clean_env(brain_home),
                            capture_output=True, text=True, timeout=60)
    assert revoke.returncode == 0, revoke.stderr
    refused["revoked token"] = post(server, token)
    refused["revoked token, tools/list"] = post(server, token, {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
    for why, response in refused.items():
        assert response.status_code == 401, why
        assert response.headers["www-authenticate"].startswith('Bearer realm="memverbs"'), why
    assert 'error="invalid_token"' in refused["revoked token"].headers["www-authenticate"]
    assert "error=" not in refused["no token"].headers["www-authenticate"]  # RFC 6750: no code without a credential
    # other paths are behind the same gate
    assert httpx.get(f"{server.base}/anything", timeout=10).status_code == 401


def test_private_facts_never_reach_any_http_caller(server, brain_home, local):
    local.ok("remember", fact="PRIV-SENTINEL-FACT salary is secret", provenance="t", entity="people/privy",
             visibility="private", kind="commitment")
    local.ok("remember", fact="world fact about privy", provenance="t", entity="people/privy")
    local.ok("put_page", slug="people/privy", content="---\ntitle: Privy\n---\n# Privy\n\nPublic page.\n")
    local.ok("put_page", slug="notes/hidden", content="---\ntitle: PRIV-SENTINEL-PAGE\nvisibility: private\n---\n# PRIV-SENTINEL-PAGE\n")
    assert "PRIV-SENTINEL-FACT" in json.dumps(local.ok("recall", entity="people/privy"))  # it is there, locally
    tokens = [make_token(brain_home, "privacy-rw"), make_token(brain_home, "privacy-ro", scopes="read"),
              make_token(brain_home, "privacy-verbs", surface="verbs")]
    reads = [
        ("recall", {"entity": "people/privy", "include_expired": True}),
        ("recall", {"query": "PRIV-SENTINEL salary secret"}),
        ("recall", {"since": "1970-01-01T00:00:00Z"}),
        ("entity", {"name": "people/privy"}),
        ("context_pack", {"entities": "people/privy,notes/hidden", "include_private": True}),
        ("delta", {"since": "1970-01-01T00:00:00Z", "include_private": True, "entities": "people/privy"}),
        ("search", {"query": "PRIV-SENTINEL-PAGE"}),
        ("get_page", {"slug": "notes/hidden"}),
        ("list_pages", {}),
    ]
    seen_world = False
    for token in tokens:
        for tool, arguments in reads:
            result = rpc(server, token, "tools/call", {"name": tool, "arguments": arguments})
            text = json.dumps(result)
            assert "PRIV-SENTINEL" not in text, (tool, arguments)
            seen_world |= "world fact about privy" in text
    assert seen_world
    # a private fact written over HTTP is just as invisible to every HTTP reader
    _body, _ = call(server, tokens[0], "remember", fact="PRIV-SENTINEL-REMOTE", provenance="t", entity="people/privy",
                   visibility="private")
    for token in tokens:
        assert "PRIV-SENTINEL" not in json.dumps(call(server, token, "recall", entity="people/privy")[0])


def test_tokens_keep_separate_delta_cursors_and_never_reach_local(server, brain_home, local):
    local_first = local.ok("delta", session_id="shared-session")  # the trusted lane's cursor
    lane = sqlite3.connect(brain_home / "brain.db")
    local_row = lane.execute("SELECT last_wake_at, updated_at FROM session_cursors WHERE client_id = 'local'").fetchall()
    alice, named_local = make_token(brain_home, "alice"), make_token(brain_home, "local")
    assert call(server, named_local, "whoami")[0]["client_id"] == "token:local"

    first = call(server, alice, "delta", session_id="shared-session")[0]
    assert first["pages"] == [] and first["text"] == ""  # alice's first wake: her own lane is new
    page = "---\ntitle: Lane Page\n---\n# Lane Page\n"
    assert not call(server, alice, "put_page", slug="lanes/one", content=page)[1]
    got = call(server, alice, "delta", session_id="shared-session")[0]
    assert [p["slug"] for p in got["pages"]][-1] == "lanes/one"  # (pages from the 2-second first-wake lag may precede it)
    again = call(server, alice, "delta", session_id="shared-session")[0]
    assert again["pages"] == []  # alice's cursor moved past it
    # the token named 'local' has a lane of its own: a first wake, not alice's cursor and not the trusted one
    other = call(server, named_local, "delta", session_id="shared-session")[0]
    assert other["pages"] == [] and other["since"] != got["since"]

    lanes = {r[0] for r in lane.execute("SELECT client_id FROM session_cursors WHERE session_id = 'shared-session'")}
    assert lanes == {"local", "token:alice", "token:local"}
    assert lane.execute("SELECT last_wake_at, updated_at FROM session_cursors WHERE client_id = 'local'").fetchall() == local_row
    lane.close()
    assert local_first["protocol_version"] == 1
    # each token is its own usage-log client, and every HTTP call is remote
    events = [json.loads(line) for line in (brain_home / "integrations" / "memory-verbs" / "usage.jsonl").read_text().splitlines()]
    delta_clients = {e.get("client_id") for e in events if e["verb"] == "delta" and e.get("client_id")}
    assert {"token:alice", "token:local"} <= delta_clients
    assert all(e["remote"] is True for e in events)


def test_fifty_concurrent_clients_get_no_5xx(server, brain_home, local):
    for i in range(50):  # the entities the load mix reads
        local.ok("put_page", slug=f"people/load-target-{i}", content=f"---\ntitle: Load Target {i}\n---\n# Load Target {i}\n")
    token = make_token(brain_home, "load")
    report = asyncio.run(run_load(server.url, token, clients=50, seconds=3.0, max_requests_per_client=200))
    print("HTTP load:", json.dumps(report))
    assert report["status_5xx"] == 0 and report["transport_errors"] == 0, report
    assert report["tool_errors"] == 0, report["tool_error_samples"]
    assert report["statuses"] == {"200": report["requests"]} and report["requests"] >= 50

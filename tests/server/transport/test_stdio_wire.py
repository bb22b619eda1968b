"""The stdio wire, byte for byte: what every harness sees from `memverbs serve`."""

import json
import os

import pytest
from helpers import init_home
from rawmcp import RawMcp

from memverbs.server.protocol.surfaces import SURFACES, tool_defs

SNAPSHOT = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "snapshots", "tools_full.json")


@pytest.fixture
def serve(memverbs_cmd, env):
    peers = []

    def start(*args: str, **extra_env) -> RawMcp:
        peer = RawMcp([*memverbs_cmd, "serve", *args], {**env, **extra_env})
        peers.append(peer)
        return peer

    yield start
    for peer in peers:
        peer.close()


@pytest.fixture(scope="module")
def verbs_peer(tmp_path_factory, memverbs_cmd):
    """One verbs-surface server shared by the tests that only call it (each call stands alone)."""
    home = init_home(tmp_path_factory.mktemp("wire") / "home")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVERBS_")}
    env["MEMVERBS_HOME"] = str(home.root)
    peer = RawMcp([*memverbs_cmd, "serve", "--surface", "verbs"], env)
    peer.initialized = peer.handshake()
    yield peer
    peer.close()


def test_initialize_identifies_memverbs(verbs_peer):
    init = verbs_peer.initialized["result"]
    assert init["serverInfo"]["name"] == "memverbs"
    assert "tools" in init["capabilities"]


@pytest.mark.parametrize("surface", SURFACES)
def test_tools_list_per_surface(serve, surface):
    peer = serve("--surface", surface)
    peer.handshake()
    tools = peer.send("tools/list", {})["result"]["tools"]
    assert tools == tool_defs(surface)
    assert all("outputSchema" not in t for t in tools)


def test_tool_definitions_match_the_snapshot(serve):
    """The frozen tool list: a change here is a wire change and must show in review."""
    peer = serve()
    peer.handshake()
    tools = peer.send("tools/list", {})["result"]["tools"]
    if os.environ.get("MEMVERBS_UPDATE_SNAPSHOTS") == "1":
        with open(SNAPSHOT, "w", encoding="utf-8") as fh:
            json.dump(tools, fh, indent=2, ensure_ascii=False)
            fh.write("\n")
    with open(SNAPSHOT, encoding="utf-8") as fh:
        assert tools == json.load(fh)
    synth = next(t for t in tools if t["name"] == "synthesize")
    assert synth["description"].startswith("[EXPENSIVE")
    assert [list(p) for p in next(t for t in tools if t["name"] == "remember")["inputSchema"]["properties"].values()][4] == [
        "type", "description", "enum", "default",
    ]


def test_success_is_one_pretty_text_block_without_is_error(verbs_peer):
    peer = verbs_peer
    result = peer.call("remember", {"fact": "wire fact", "provenance": "test"})
    assert set(result) <= {"content", "_meta", "resultType"}, result
    assert "isError" not in result and "structuredContent" not in result
    [block] = result["content"]
    body = json.loads(block["text"])
    assert block["text"] == json.dumps(body, indent=2, ensure_ascii=False)
    assert body["status"] == "inserted"


def test_error_is_an_envelope_with_is_error_true(verbs_peer):
    peer = verbs_peer
    result = peer.call("remember", {"fact": "x", "provenance": "  "})
    assert result["isError"] is True
    assert json.loads(result["content"][0]["text"])["error"] == "provenance_required"


def test_unknown_param_warning_block_and_meta(verbs_peer):
    peer = verbs_peer
    result = peer.call("recall", {"entty": "people/x"})
    assert len(result["content"]) == 2
    assert result["content"][1]["text"].startswith('warning: unknown parameter "entty" ignored — did you mean "entity"?')
    assert result["_meta"]["warnings"] == [{"code": "unknown_param", "param": "entty", "suggestion": "entity"}]


def test_hidden_tool_bytes_equal_unknown(verbs_peer):
    peer = verbs_peer
    hidden = peer.call("put_page", {"slug": "a", "content": "b"})
    unknown = peer.call("put_pagf", {"slug": "a", "content": "b"})
    assert hidden["content"][0]["text"].replace("put_page", "X") == unknown["content"][0]["text"].replace("put_pagf", "X")
    assert hidden["isError"] is True and unknown["isError"] is True


def test_stdout_carries_only_protocol(serve):
    peer = serve()
    peer.handshake()
    peer.call("entity", {"name": "nobody"})
    peer.call("synthesize", {"question": "q"})
    stderr = peer.close()
    assert all(json.loads(line)["jsonrpc"] == "2.0" for line in peer.stdout_lines)
    assert "Starting memverbs MCP server (stdio)" in stderr


def test_usage_log_lines(serve, home):
    peer = serve("--surface", "verbs")
    peer.handshake()
    peer.call("entity", {"name": "nobody"})
    peer.call("remember", {"fact": "x"})
    peer.call("recall", {"budget_tokens": 100})
    peer.close()
    lines = [json.loads(line) for line in home.usage_log.read_text().splitlines()]
    assert [e["verb"] for e in lines] == ["entity", "remember", "recall"]
    assert list(lines[0]) == ["ts", "brain_id", "verb", "surface", "remote", "ok", "latency_ms", "source_id", "entity_found"]
    assert lines[0]["entity_found"] is False and lines[0]["remote"] is True and lines[0]["surface"] == "verbs"
    assert lines[1]["ok"] is False
    assert lines[2]["budget_dropped"] == 0


def test_missing_brain_answers_unavailable(serve, home):
    (home.root / "brain.db").unlink()
    peer = serve("--surface", "verbs")
    peer.handshake()
    assert len(peer.send("tools/list", {})["result"]["tools"]) == 7
    result = peer.call("recall", {})
    body = json.loads(result["content"][0]["text"])
    assert result["isError"] is True and body["error"] == "unavailable" and "memverbs init" in body["suggestion"]


def test_malformed_config_serves_verbs_and_answers_unavailable(serve, home):
    home.config_path.write_text("this is = = not toml")
    peer = serve()
    peer.handshake()
    assert len(peer.send("tools/list", {})["result"]["tools"]) == 7  # fail closed to the smallest surface
    body = json.loads(peer.call("recall", {})["content"][0]["text"])
    assert body["error"] == "unavailable" and "TOML" in body["message"]


def test_force_surface_only_narrows(serve):
    peer = serve("--surface", "full", MEMVERBS_MCP_FORCE_SURFACE="verbs")
    peer.handshake()
    assert len(peer.send("tools/list", {})["result"]["tools"]) == 7


@pytest.mark.parametrize("pause", [0.0, 2.0])
def test_the_answer_is_the_same_early_and_late(serve, pause):
    """A call in the server's first second and one after it (once the full settings are checked) look alike."""
    import time

    peer = serve("--surface", "verbs")
    peer.handshake()
    time.sleep(pause)
    result = peer.call("entity", {"name": "nobody-here", "zz": 1})
    assert set(result) <= {"content", "_meta", "resultType"}, result
    body = json.loads(result["content"][0]["text"])
    assert body["found"] is False and body["suggestions"] == []
    assert result["content"][1]["text"].startswith('warning: unknown parameter "zz"')
    assert result["_meta"]["warnings"] == [{"code": "unknown_param", "param": "zz"}]
    assert peer.send("ping", {})["result"] == {}
    tools = peer.send("tools/list", {})["result"]["tools"]
    assert [t["name"] for t in tools][:2] == ["remember", "entity"]


def test_wire_handshake_versions_match_the_sdk():
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION

    from memverbs.server.transport.wire import HANDSHAKE_VERSIONS, LATEST_HANDSHAKE

    assert tuple(HANDSHAKE_PROTOCOL_VERSIONS) == HANDSHAKE_VERSIONS and LATEST_HANDSHAKE == LATEST_HANDSHAKE_VERSION


def test_a_config_only_the_full_settings_refuse_makes_calls_unavailable_after_the_first(serve, home):
    """The first answer does not wait for the full settings; once checked, a bad config fails closed."""
    home.config_path.write_text("[brain]\nbusy_timeout_ms = 100\n[llm]\nmax_tokens = 1\n")  # below the minimum
    peer = serve("--surface", "verbs")
    peer.handshake()
    peer.call("entity", {"name": "first"})
    body = json.loads(peer.call("recall", {})["content"][0]["text"])
    assert body["error"] == "unavailable" and "max_tokens" in body["message"], body


def test_the_first_answer_imports_no_sdk_and_no_settings(memverbs_cmd, env):
    """What the stdio server imported by the time its first tool result was written."""
    import subprocess
    import sys

    probe = (
        "import sys, runpy, threading\n"
        "from memverbs.server.transport import stdio\n"
        "orig = stdio.Calls.run\n"
        "def run(self):\n"
        "    after = self.after_first\n"
        "    def report():\n"
        "        heavy = [m for m in ('mcp', 'pydantic', 'pydantic_settings', 'numpy', 'httpx', 'anyio') if m in sys.modules]\n"
        "        sys.stderr.write('HEAVY=' + ','.join(heavy) + '\\n')\n"
        "        after()\n"
        "    self.after_first = report\n"
        "    orig(self)\n"
        "stdio.Calls.run = run\n"
        "sys.argv = ['memverbs', 'serve', '--surface', 'verbs']\n"
        "from memverbs.cli.main import main\n"
        "main()\n"
    )
    frames = (
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},'
        '"clientInfo":{"name":"t","version":"1"}}}\n'
        '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"entity","arguments":{"name":"x"}}}\n'
    )
    done = subprocess.run([sys.executable, "-c", probe], input=frames.encode(), capture_output=True, env=env, timeout=60)
    heavy = [line for line in done.stderr.decode().splitlines() if line.startswith("HEAVY=")]
    assert heavy == ["HEAVY="], done.stderr.decode()[-2000:]


def test_a_stdio_server_started_in_a_repository_files_what_it_remembers_under_that_project(tmp_path, memverbs_cmd, env):
    """A harness starts its server in the session's directory: an agent's fact with no entity named is the
    project's, and the pack it asks for names the project and leads with its memory."""
    import subprocess

    from rawmcp import RawMcp

    repo = tmp_path / "code" / "comet"
    (repo / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run(["git", "remote", "add", "origin", "https://github.com/acme/comet.git"], cwd=repo, check=True)
    peer = RawMcp([*memverbs_cmd, "serve"], env, cwd=str(repo / "src"))
    try:
        peer.handshake()
        said = json.loads(peer.call("remember", {"fact": "Comet builds with zig", "provenance": "agent"})["content"][0]["text"])
        assert said["entity_slug"] == "projects/comet"
        pack = json.loads(peer.call("context_pack", {"entities": "people/nobody"})["content"][0]["text"])
        assert pack["text"].split("\n")[1] == "Project: comet (`projects/comet`)"
        assert "- " + said["entity_slug"] not in pack["text"] and ": Comet builds with zig" in pack["text"]
    finally:
        peer.close()

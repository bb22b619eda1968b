"""MCP roots: a client that offers them names the project `memverbs serve` works in, over its own working directory."""

import json
import os
import subprocess
import warnings
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp_types import TextContent
from rawmcp import RawMcp

from memverbs.server.transport.roots import Roots, file_path, project_of_roots


def _repo(path: Path, remote: str) -> Path:
    (path / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=path, check=True)
    subprocess.run(["git", "remote", "add", "origin", remote], cwd=path, check=True)
    return path


def _remember(session: ClientSession, fact: str):
    async def go() -> dict:
        result = await session.call_tool("remember", {"fact": fact, "provenance": "agent"})
        text = "".join(b.text for b in result.content if isinstance(b, TextContent))
        assert not result.is_error, text
        return json.loads(text)

    return go()


def test_the_sdk_clients_root_names_the_project_and_a_change_of_roots_moves_it(tmp_path, memverbs_cmd, env):
    """The server starts outside any repository; the client's root inside one makes what it remembers that
    project's, and after `roots/list_changed` the next call files under the new root's project."""
    comet = _repo(tmp_path / "code" / "comet", "https://github.com/acme/comet.git")
    nova = _repo(tmp_path / "code" / "nova", "git@github.com:acme/nova.git")
    outside = tmp_path / "nowhere"
    outside.mkdir()
    offered = [(comet / "src").as_uri()]
    asked: list[int] = []

    async def list_roots(ctx) -> types.ListRootsResult:
        asked.append(1)
        return types.ListRootsResult(roots=[types.Root(uri=uri) for uri in offered])

    async def main() -> tuple[dict, dict, dict]:
        params = StdioServerParameters(command=memverbs_cmd[0], args=[*memverbs_cmd[1:], "serve"], env=env,
                                       cwd=str(outside))
        with open(os.devnull, "w") as quiet:
            async with stdio_client(params, errlog=quiet) as (read, write):
                async with ClientSession(read, write, list_roots_callback=list_roots) as session:
                    await session.initialize()
                    first = await _remember(session, "Comet builds with zig")
                    offered[:] = [(tmp_path / "nowhere").as_uri(), nova.as_uri()]
                    with warnings.catch_warnings():  # roots are deprecated only in the 2026-07-28 era
                        warnings.simplefilter("ignore")
                        await session.send_roots_list_changed()
                    second = await _remember(session, "Nova ships on Fridays")
                    offered[:] = [outside.as_uri()]  # no repository among the roots: the working directory's
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        await session.send_roots_list_changed()
                    third = await _remember(session, "A thought from nowhere")
                    return first, second, third

    first, second, third = anyio.run(main)
    assert first["entity_slug"] == "projects/comet"
    assert second["entity_slug"] == "projects/nova"
    assert third["entity_slug"] is None  # no project: no entity defaulted
    assert len(asked) == 3


def test_a_client_that_offers_roots_and_never_answers_is_waited_for_once_and_briefly(tmp_path, memverbs_cmd, env):
    """The working directory's project stands and the call is answered: the wait is bounded, and spent once."""
    repo = _repo(tmp_path / "code" / "comet", "https://github.com/acme/comet.git")
    peer = RawMcp([*memverbs_cmd, "serve"], env, cwd=str(repo / "src"))
    try:
        peer.send("initialize", {"protocolVersion": "2025-06-18", "capabilities": {"roots": {"listChanged": True}},
                                 "clientInfo": {"name": "mute", "version": "1"}})
        peer.send("notifications/initialized", notify=True)
        said = json.loads(peer.call("remember", {"fact": "Comet builds with zig", "provenance": "agent"})["content"][0]["text"])
        again = json.loads(peer.call("remember", {"fact": "Comet lints with ruff", "provenance": "agent"})["content"][0]["text"])
    finally:
        peer.close()
    assert said["entity_slug"] == again["entity_slug"] == "projects/comet"
    asks = [json.loads(line) for line in peer.stdout_lines if '"roots/list"' in line]
    assert [a["method"] for a in asks] == ["roots/list"] and "params" not in asks[0]


def test_a_client_without_the_capability_is_never_asked(tmp_path, memverbs_cmd, env):
    peer = RawMcp([*memverbs_cmd, "serve"], env, cwd=str(tmp_path))
    try:
        peer.handshake()
        peer.call("recall", {})
    finally:
        peer.close()
    assert not [line for line in peer.stdout_lines if "roots/list" in line]


def test_roots_answers_apply_only_to_the_newest_request_and_fall_back_to_the_working_directory(tmp_path):
    comet = _repo(tmp_path / "comet", "https://github.com/acme/comet.git")
    nova = _repo(tmp_path / "nova", "https://github.com/acme/nova.git")
    fallback = project_of_roots([{"uri": nova.as_uri()}])
    roots = Roots(fallback, wait_s=0.05)
    old, new = json.loads(roots.ask())["id"], json.loads(roots.ask())["id"]
    assert roots.take({"jsonrpc": "2.0", "id": old, "result": {"roots": [{"uri": comet.as_uri()}]}})
    assert roots.project == fallback  # overtaken by the newer request
    assert roots.take({"jsonrpc": "2.0", "id": new, "result": {"roots": [{"uri": (comet / "src").as_uri()}]}})
    assert roots.current().slug == "projects/comet"
    roots.ask()
    assert roots.take({"jsonrpc": "2.0", "id": json.loads(roots.ask())["id"], "error": {"code": -32601, "message": "no"}})
    assert roots.current() == fallback
    assert not roots.take({"jsonrpc": "2.0", "id": 7, "result": {}})  # not ours: left to the wire


def test_only_local_file_uris_name_a_path():
    assert file_path("file:///home/a%20b/repo") == "/home/a b/repo"
    assert file_path("file://localhost/srv/x") == "/srv/x"
    assert file_path("file://elsewhere/srv/x") is None
    assert file_path("https://example.org/repo") is None
    assert file_path("file:relative") is None
    assert project_of_roots("not a list") is None
    assert project_of_roots([{"uri": 5}, "x", {"name": "no uri"}]) is None


def test_a_server_whose_client_offers_no_roots_never_loads_them():
    """The cold start stays as it was: the roots module is imported only once a client declares them."""
    import sys

    probe = "import sys, memverbs.server.transport.stdio; print('memverbs.server.transport.roots' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.strip() == "False"

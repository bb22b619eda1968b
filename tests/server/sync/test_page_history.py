"""Page history: an overwrite of a page's text keeps the text it replaced, with who and when, and
`memverbs page-restore` puts it back through put_page (so a synced file gets it back too)."""

from __future__ import annotations

from vaults import write

from memverbs.server.brain.base import PAGE_HISTORY_KEEP
from memverbs.server.context import Caller

NOTE = "---\ntitle: Plan\n---\n" + "".join(f"- step {n}: ship the payments rewrite in May, then tell finance\n" for n in range(100))
AGENT = "---\ntitle: Plan\n---\nThe plan moved to the team wiki. Ask Alice for the link; she keeps it current and private to the team. She answers on Mondays.\n"


def test_a_6kb_note_replaced_by_an_agents_small_put_page_is_recoverable(tmp_path, runtime, cli, cli_json, local):
    assert len(NOTE.encode()) > 6000 and len(AGENT.encode()) == 147
    root = tmp_path / "v"
    write(root / "plan.md", NOTE)
    assert cli_json("sync", root, "--prefix", "notes")[1]["created"] == 1
    agent = runtime.mcp_dispatcher("full", Caller.mcp(runtime.source, "token:claude"))
    assert not agent.call("put_page", {"slug": "notes/plan", "content": AGENT}).is_error
    assert cli_json("sync", root, "--prefix", "notes")[1]["written_back"] == 1
    assert "team wiki" in (root / "plan.md").read_text()  # the file followed the agent: the note is gone from both

    code, hist = cli_json("page-history", "notes/plan")
    assert code == 0 and len(hist["versions"]) == 1
    v1 = hist["versions"][0]
    assert (v1["version"], v1["replaced_by"], v1["bytes"]) == (1, "token:claude", len(NOTE.encode()))
    assert v1["written_at"] <= v1["replaced_at"] == hist["current_updated_at"]
    code, out, _ = cli("page-history", "notes/plan", "--show", "1")
    assert code == 0 and out == NOTE

    code, out, _ = cli("page-restore", "notes/plan", "1")
    assert code == 0 and "restored notes/plan to version 1" in out
    assert "step 99" in local.ok("get_page", slug="notes/plan")["body"]
    assert cli_json("sync", root, "--prefix", "notes")[1]["written_back"] == 1
    assert (root / "plan.md").read_text() == NOTE  # write-back brings the note back to its file
    # The restore is an overwrite like any other: the agent's text is kept in turn.
    versions = cli_json("page-history", "notes/plan")[1]["versions"]
    assert [(v["version"], v["replaced_by"], v["bytes"]) for v in versions] == [(2, "local", 147), (1, "token:claude", len(NOTE.encode()))]


def test_a_sync_pass_keeps_what_it_replaces_and_a_rename_keeps_the_history(tmp_path, cli_json, local):
    root = tmp_path / "v"
    write(root / "plan.md", "# Plan\nv1 from the brain's point of view\n")
    cli_json("sync", root)
    local.ok("put_page", slug="plan", content="# Plan\nv2 by hand in the CLI\n")
    cli_json("sync", root)  # written back
    write(root / "plan.md", "# Plan\nv3 from the editor\n")
    cli_json("sync", root)
    versions = cli_json("page-history", "plan")[1]["versions"]
    assert [v["replaced_by"] for v in versions] == ["sync", "local"]
    # Re-applying the same text keeps nothing new: a pass over an unchanged file, or the same put_page.
    local.ok("put_page", slug="plan", content="# Plan\nv3 from the editor\n")
    assert len(cli_json("page-history", "plan")[1]["versions"]) == 2
    (root / "plan.md").rename(root / "roadmap.md")
    assert cli_json("sync", root)[1]["renamed"] == 1
    assert [v["version"] for v in cli_json("page-history", "roadmap")[1]["versions"]] == [2, 1]


def test_the_history_is_capped_oldest_first(runtime, local):
    for n in range(PAGE_HISTORY_KEEP + 5):
        local.ok("put_page", slug="notes/busy", content=f"# Busy\nrevision {n}\n")
    rows = runtime.brain().page_versions(runtime.source, "notes/busy")
    assert len(rows) == PAGE_HISTORY_KEEP
    assert rows[0]["version"] == PAGE_HISTORY_KEEP + 4 and rows[-1]["version"] == 5
    assert "revision 4" in runtime.brain().page_version(runtime.source, "notes/busy", 5)["markdown"]
    assert runtime.brain().page_version(runtime.source, "notes/busy", 4) is None


def test_history_is_local_only_and_refuses_unknown_pages_and_versions(cli, local, remote):
    local.ok("put_page", slug="notes/secret", content="---\ntitle: Secret\nvisibility: private\n---\nold private plans\n")
    local.ok("put_page", slug="notes/secret", content="---\ntitle: Secret\nvisibility: private\n---\nnew private plans\n")
    # No MCP tool serves a page's history (a private page's old text is as private as the page) ...
    assert remote.err("page_history", slug="notes/secret")["error"] == "unknown_tool"
    # ... and the CLI refuses to take it over --remote.
    code, _, err = cli("--remote", "page-history", "notes/secret")
    assert code == 1 and "local brain only" in err
    code, _, err = cli("page-history", "notes/nothing")
    assert code == 1 and 'no page "notes/nothing"' in err
    code, _, err = cli("page-restore", "notes/secret", "7")
    assert code == 1 and "has no version 7" in err and "page-history notes/secret" in err
    code, out, _ = cli("page-history", "notes/secret")
    assert code == 0 and "private" in out and "1 earlier version" in out

"""Agents' work reaches the folder: a page born in the brain under a synced folder's prefix gets a
file, at the path a person would give it, never over a file already there; aliases and links added
alone are written back without waiting for the page's next write."""

from __future__ import annotations

import json
import os
import subprocess
import time

import pytest
from vaults import write

AGENT_PAGE = "---\ntitle: 'Q3 Plan: draft'\ntype: project\n---\nShip the importer by [[people/alice]].\n"


def files_below(root) -> set[str]:
    """The folder's notes and files, not memverbs's own `.memverbs/` (the folder's identity)."""
    found = {os.path.relpath(os.path.join(d, f), root).replace(os.sep, "/") for d, _, fs in os.walk(root) for f in fs}
    return {f for f in found if not f.startswith(".memverbs/")}


def test_a_page_an_agent_creates_under_the_prefix_gets_a_readable_file(tmp_path, cli_json, local, remote):
    root = tmp_path / "v"
    write(root / "Projects" / "Atlas.md", "# Atlas\n")
    cli_json("sync", root, "--prefix", "notes")
    remote.ok("put_page", slug="notes/projects/q3-plan-draft", content=AGENT_PAGE)  # an MCP agent
    local.ok("put_page", slug="elsewhere/kept-out", content="# Not the folder's\n")
    assert cli_json("sync", "--status")[1]["folders"][0]["pending_write_back"] == 1  # waiting for its file
    _code, rep = cli_json("sync", root, "--prefix", "notes")
    assert rep["written_back"] == 1 and rep["errors"] == 0, rep
    assert cli_json("sync", "--status")[1]["folders"][0]["pending_write_back"] == 0
    # In the folder the user already has for that slug, named by the title, the page's text byte for byte.
    assert files_below(root) == {"Projects/Atlas.md", "Projects/Q3 Plan draft.md"}
    assert (root / "Projects" / "Q3 Plan draft.md").read_text() == AGENT_PAGE
    # The file maps back to the same page: a second pass changes nothing, and an edit of the file is the page's.
    _code, rep = cli_json("sync", root, "--prefix", "notes")
    assert (rep["created"], rep["updated"], rep["written_back"]) == (0, 0, 0), rep
    (root / "Projects" / "Q3 Plan draft.md").write_text(AGENT_PAGE.replace("the importer", "the exporter"))
    _code, rep = cli_json("sync", root, "--prefix", "notes")
    assert rep["updated"] == 1 and rep["created"] == 0, rep
    assert "the exporter" in local.ok("get_page", slug="notes/projects/q3-plan-draft")["body"]
    pages = [p["slug"] for p in local.ok("list_pages", prefix="notes/")["pages"]]
    assert sorted(pages) == ["notes/projects/atlas", "notes/projects/q3-plan-draft"]


def test_a_title_that_would_not_map_back_falls_back_to_the_slug(tmp_path, cli_json, local):
    root = tmp_path / "v"
    root.mkdir()
    cli_json("sync", root, "--prefix", "notes")
    local.ok("put_page", slug="notes/weekly", content="# Week 48 / review\n\nNotes.\n")
    local.ok("put_page", slug="notes/team/standup", content="# Daily standup\n\nNotes.\n")
    cli_json("sync", root, "--prefix", "notes")
    assert files_below(root) == {"weekly.md", "team/standup.md"}


def test_a_file_in_the_way_is_a_conflict_never_overwritten(tmp_path, cli_json, local):
    root = tmp_path / "v"
    broken = "---\ntitle: [unclosed\n---\nThe user's own words.\n"
    write(root / "Plan.md", broken)  # fails to apply as it stands: no page, no file record
    cli_json("sync", root, "--prefix", "notes")
    local.ok("put_page", slug="notes/plan", content="# Plan\n\nThe agent's plan.\n")
    _code, rep = cli_json("sync", root, "--prefix", "notes")
    assert rep["conflicts"] == [{"file": "Plan.md", "slug": "notes/plan", "cause": "file_won"}], rep
    assert (root / "Plan.md").read_text() == broken and files_below(root) == {"Plan.md"}
    _code, status = cli_json("sync", "--status")
    [conflict] = status["folders"][0]["conflicts"]
    assert "The agent's plan." in conflict["brain_content"] and conflict["file"] == "Plan.md"
    _code, rep = cli_json("sync", root, "--prefix", "notes")  # recorded once, not every pass
    assert rep["conflicts"] == [] and len(cli_json("sync", "--status")[1]["folders"][0]["conflicts"]) == 1


def test_a_folder_without_a_prefix_files_only_pages_created_since_it_was_synced(tmp_path, cli_json, local):
    local.ok("put_page", slug="older/page", content="# Older\n")
    root = tmp_path / "v"
    write(root / "a.md", "# A\n")
    cli_json("sync", root)
    local.ok("put_page", slug="people/new-person", content="# New Person\n\nMet at the offsite.\n")
    cli_json("sync", root)
    assert files_below(root) == {"a.md", "people/New Person.md"}


def test_a_more_specific_folder_keeps_its_own_pages(tmp_path, cli_json, local):
    wide, work = tmp_path / "all", tmp_path / "work"
    wide.mkdir()
    work.mkdir()
    cli_json("sync", wide)
    cli_json("sync", work, "--prefix", "work")
    local.ok("put_page", slug="work/roadmap", content="# Roadmap\n")
    cli_json("sync", wide)
    cli_json("sync", work, "--prefix", "work")
    assert files_below(wide) == set() and files_below(work) == {"Roadmap.md"}


def test_a_page_that_came_from_a_file_is_never_given_one_back(tmp_path, cli_json, local, runtime):
    """A page whose file's record was lost (an orphan: the note was moved and the move was missed) came
    from the folder: a file is not made for it again beside the one the user moved."""
    root = tmp_path / "v"
    write(root / "a.md", "# A\n")
    cli_json("sync", root, "--prefix", "notes")
    brain = runtime.brain()
    [folder] = brain.sync_folder_rows(runtime.source)
    brain.sync_forget_file(folder["id"], "a.md")
    (root / "a.md").unlink()
    _code, rep = cli_json("sync", root, "--prefix", "notes")
    assert rep["written_back"] == 0 and files_below(root) == set(), rep
    assert local.ok("get_page", slug="notes/a")["title"] == "A"  # left for orphan detection, not filed


def test_a_symlinked_folder_is_never_followed(tmp_path, cli_json, local):
    root, outside = tmp_path / "v", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    os.symlink(outside, root / "projects")
    cli_json("sync", root, "--prefix", "notes")
    local.ok("put_page", slug="notes/projects/secret", content="# Secret\n")
    code, rep = cli_json("sync", root, "--prefix", "notes")
    assert code == 1 and "symlink" in rep["error_files"][0]["reason"], rep
    assert list(outside.iterdir()) == []


def test_create_inside_never_replaces_and_never_writes_through(tmp_path):
    from memverbs.server.files import OutsideFolder, create_inside

    (tmp_path / "mine.md").write_text("mine")
    with pytest.raises(FileExistsError):
        create_inside(tmp_path, "mine.md", b"theirs")
    assert (tmp_path / "mine.md").read_text() == "mine"
    target = tmp_path / "target.txt"
    target.write_text("kept")
    os.symlink(target, tmp_path / "link.md")
    with pytest.raises(FileExistsError):
        create_inside(tmp_path, "link.md", b"theirs")
    assert target.read_text() == "kept" and os.path.islink(tmp_path / "link.md")
    os.symlink(tmp_path, tmp_path / "loop")
    with pytest.raises(OutsideFolder):
        create_inside(tmp_path, "loop/new.md", b"x")
    create_inside(tmp_path, "new/deeper/n.md", b"fresh")
    assert (tmp_path / "new" / "deeper" / "n.md").read_bytes() == b"fresh"
    assert sorted(p.name for p in (tmp_path / "new" / "deeper").iterdir()) == ["n.md"]  # no temp file left


@pytest.mark.parametrize("op", ["add_alias", "add_link"])
def test_an_alias_or_link_added_alone_is_written_back(tmp_path, cli_json, local, remote, op):
    root = tmp_path / "v"
    write(root / "alice.md", "---\naliases: [Ali]\n---\n# Alice\n")
    write(root / "acme.md", "# Acme\n")
    cli_json("sync", root)
    if op == "add_alias":
        remote.ok("add_alias", slug="alice", alias="A. Example")
        want = "---\naliases: [Ali, A. Example]\n---\n# Alice\n"
    else:
        remote.ok("add_link", **{"from": "alice", "to": "acme", "link_type": "works_at"})
        want = "---\naliases: [Ali]\nlinks:\n  works_at: [acme]\n---\n# Alice\n"
    _code, rep = cli_json("sync", root)
    assert rep["written_back"] == 1, rep
    assert (root / "alice.md").read_text() == want
    _code, rep = cli_json("sync", root)
    assert (rep["updated"], rep["written_back"]) == (0, 0), rep


@pytest.mark.slow
def test_a_running_watcher_files_an_agents_page_promptly(tmp_path, env, memverbs_cmd, remote):
    root = tmp_path / "v"
    write(root / "a.md", "# A\n")
    proc = subprocess.Popen([*memverbs_cmd, "sync", str(root), "--prefix", "notes", "--watch", "--json"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert json.loads(proc.stdout.readline())["event"] == "start"
        remote.ok("put_page", slug="notes/meeting-notes", content="# Meeting notes\n\nAgreed on Friday.\n")
        remote.ok("add_alias", slug="notes/a", alias="First")
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not ((root / "Meeting notes.md").exists() and "First" in (root / "a.md").read_text()):
            time.sleep(0.05)
        assert (root / "Meeting notes.md").read_text() == "# Meeting notes\n\nAgreed on Friday.\n"
        assert (root / "a.md").read_text() == "---\naliases: [First]\n---\n# A\n"
        # The watcher sees its own new file as unchanged: no second page, no conflict.
        time.sleep(1.0)
        assert sorted(p["slug"] for p in remote.ok("list_pages", prefix="notes/")["pages"]) == ["notes/a", "notes/meeting-notes"]
        assert proc.poll() is None
    finally:
        proc.kill()
        proc.wait(10)

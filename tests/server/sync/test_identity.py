"""A synced folder is its id (`.memverbs/folder.json`) on a host, never its path alone: a teammate's folder
at the same path (MEMVERBS_HOST stands in for the other machine sharing the brain) neither deletes nor
adopts another's pages, two folders never share a slug prefix, and a slug both folders' notes map to is
a conflict, never an overwrite."""

from __future__ import annotations

import json
import os
import shutil

from vaults import write

from memverbs.server.runtime import Runtime
from memverbs.server.sync.state import SyncState


def _folders(home) -> list:
    rt = Runtime(home)
    try:
        return SyncState(rt.brain(), rt.source).folders()
    finally:
        rt.close()


def test_a_folder_gets_an_id_kept_in_it_that_the_walk_skips_without_a_word(tmp_path, cli_json, home):
    root = tmp_path / "v"
    write(root / "a.md", "# A\n")
    _code, rep = cli_json("sync", root)
    uid = json.loads((root / ".memverbs" / "folder.json").read_text())["id"]
    assert rep["skipped_files"] == [] and rep["created"] == 1, rep
    assert [f.uid for f in _folders(home)] == [uid]
    _code, rep = cli_json("sync", root)
    assert (rep["unchanged"], rep["skipped_files"]) == (1, []), rep
    assert json.loads((root / ".memverbs" / "folder.json").read_text())["id"] == uid  # written once


def test_a_teammates_folder_at_the_same_path_neither_deletes_nor_adopts_pages(tmp_path, cli, cli_json, local, home, monkeypatch):
    root = tmp_path / "notes"
    write(root / "work.md", "# Work\nship in May\n")
    monkeypatch.setenv("MEMVERBS_HOST", "alice-laptop")
    assert cli_json("sync", root)[0] == 0
    local.ok("remember", fact="Work ships in May", provenance="test", entity="work")
    # Bob's machine: another folder at the very same path (his own notes), syncing into the same brain.
    shutil.move(root, tmp_path / "alice-notes")
    write(root / "personal.md", "# Personal\nbuy milk\n")
    monkeypatch.setenv("MEMVERBS_HOST", "bob-desktop")
    code, _out, err = cli("sync", root)
    assert code == 1 and "--prefix" in err and "alice-laptop" in err, err
    assert local.ok("get_page", slug="work")["body"] == "# Work\nship in May\n", "Alice's page was deleted or replaced"
    assert local.err("get_page", slug="personal")["error"] == "not_found"
    code, rep = cli_json("sync", root, "--prefix", "bob")
    assert code == 0 and (rep["created"], rep["deleted"]) == (1, 0), rep
    # Back on Alice's machine: her folder at that path, her pages as they were, Bob's untouched.
    shutil.move(root, tmp_path / "bob-notes")
    shutil.move(tmp_path / "alice-notes", root)
    monkeypatch.setenv("MEMVERBS_HOST", "alice-laptop")
    code, rep = cli_json("sync", root)
    assert code == 0 and (rep["deleted"], rep["created"], rep["unchanged"]) == (0, 0, 1), rep
    assert local.ok("entity", name="work")["card"]["active_fact_count"] == 1
    assert local.ok("get_page", slug="bob/personal")
    assert sorted((f.host, f.prefix) for f in _folders(home)) == [("alice-laptop", ""), ("bob-desktop", "bob")]


def test_sync_watch_alone_skips_a_folder_at_a_synced_path_that_is_another_folder(tmp_path, cli, cli_json, monkeypatch):
    root = tmp_path / "notes"
    write(root / "a.md", "# A\n")
    cli_json("sync", root)
    shutil.rmtree(root)
    write(root / "b.md", "# B\n")
    write(root / ".memverbs" / "folder.json", json.dumps({"id": "0" * 32}))
    code, _out, err = cli("sync", "--watch")
    assert code == 1 and "another id" in err, err


def test_two_folders_may_not_claim_one_slug_space(tmp_path, cli, cli_json, local):
    write(tmp_path / "work" / "plan.md", "# Plan\nWork: ship in May\n")
    write(tmp_path / "home" / "plan.md", "# Plan\nPersonal: buy milk\n")
    assert cli_json("sync", tmp_path / "work")[0] == 0
    code, _out, err = cli("sync", tmp_path / "home")
    assert code == 1 and "--prefix" in err and str(tmp_path / "work") in err, err
    assert "ship in May" in local.ok("get_page", slug="plan")["body"]
    assert cli_json("sync", tmp_path / "work")[1]["written_back"] == 0
    assert "ship in May" in (tmp_path / "work" / "plan.md").read_text()
    code, _out, err = cli("sync", tmp_path / "home", "--watch")
    assert code == 1 and "--prefix" in err, err
    assert cli_json("sync", tmp_path / "home", "--prefix", "home")[0] == 0
    assert "buy milk" in local.ok("get_page", slug="home/plan")["body"]


def test_a_slug_two_folders_notes_map_to_is_a_conflict_never_an_overwrite(tmp_path, cli, cli_json, local):
    write(tmp_path / "all" / "notes" / "plan.md", "# Plan\nWork: ship in May\n")
    write(tmp_path / "notes" / "plan.md", "# Plan\nPersonal: buy milk\n")
    assert cli_json("sync", tmp_path / "all")[0] == 0
    code, rep = cli_json("sync", tmp_path / "notes", "--prefix", "notes")
    assert code == 1 and rep["created"] == 0, rep
    assert "another synced folder" in rep["error_files"][0]["reason"], rep
    assert "ship in May" in local.ok("get_page", slug="notes/plan")["body"]
    _code, status = cli_json("sync", "--status")
    by_root = {f["root"]: f for f in status["folders"]}
    clash = by_root[str(tmp_path / "notes")]
    assert [(c["file"], c["slug"]) for c in clash["conflicts"]] == [("plan.md", "notes/plan")]
    assert [f["file"] for f in clash["failing_files"]] == ["plan.md"]
    assert cli_json("sync", tmp_path / "notes", "--prefix", "notes")[0] == 1
    assert len(cli_json("sync", "--status")[1]["folders"][1]["conflicts"]) == 1  # one conflict, not one per pass
    rep = cli_json("sync", tmp_path / "all")[1]
    assert rep["written_back"] == 0 and "ship in May" in (tmp_path / "all" / "notes" / "plan.md").read_text()
    assert "buy milk" in (tmp_path / "notes" / "plan.md").read_text()
    assert "conflict" in cli("doctor")[1]


def test_a_folder_synced_before_ids_is_adopted_by_its_first_pass(tmp_path, cli_json, home, local):
    root = tmp_path / "v"
    write(root / "a.md", "# A\n")
    rt = Runtime(home)
    try:  # a row as an earlier memverbs left it: a path, no host, no id
        rt.brain().sync_folder(rt.source, os.path.realpath(root), "", "sync", 1)
    finally:
        rt.close()
    code, rep = cli_json("sync", root)
    assert code == 0 and rep["created"] == 1, rep
    (folder,) = _folders(home)
    assert folder.uid == json.loads((root / ".memverbs" / "folder.json").read_text())["id"]
    assert folder.host is not None


def test_a_moved_folder_is_the_same_folder_and_a_copy_is_another(tmp_path, cli, cli_json, home, local):
    write(tmp_path / "v" / "a.md", "# A\n")
    cli_json("sync", tmp_path / "v")
    local.ok("remember", fact="A matters", provenance="test", entity="a")
    os.rename(tmp_path / "v", tmp_path / "moved")
    code, rep = cli_json("sync", tmp_path / "moved")
    assert code == 0 and (rep["unchanged"], rep["created"], rep["deleted"]) == (1, 0, 0), rep
    assert [f.root for f in _folders(home)] == [str(tmp_path / "moved")]
    assert "the folder is gone" not in cli("doctor")[1]
    assert local.ok("entity", name="a")["card"]["active_fact_count"] == 1
    shutil.copytree(tmp_path / "moved", tmp_path / "copy")
    code, rep = cli_json("sync", tmp_path / "copy", "--prefix", "copy")
    assert code == 0 and rep["created"] == 1, rep
    ids = {f.root: f.uid for f in _folders(home)}
    assert len(ids) == 2 and len(set(ids.values())) == 2, ids
    assert local.ok("get_page", slug="a") and local.ok("get_page", slug="copy/a")

"""Folders fail safe: a synced folder that is gone, emptied of its identity or replaced deletes nothing,
is marked unavailable (status and doctor say why), and is taken up again once it is back — by a pass,
and by the watcher, which used to go deaf once its folder was removed. A note moved into another
synced folder keeps its page. A conflict says what happened."""

from __future__ import annotations

import json
import shutil
import signal

import pytest
from vaults import wait_for, write

from memverbs.server.sync.identity import IDENTITY_FILE


def _pages(local) -> set[str]:
    return {p["slug"] for p in local.ok("list_pages", limit=500)["pages"]}


def test_a_removed_folder_deletes_nothing_and_is_taken_up_again_when_it_is_back(tmp_path, cli, cli_json, local):
    root = tmp_path / "v"
    for i in range(3):
        write(root / f"n{i}.md", f"# Note {i}\n")
    assert cli_json("sync", root)[0] == 0
    keep = tmp_path / "copy"
    shutil.copytree(root, keep)
    shutil.rmtree(root)

    root.mkdir()  # `sync DIR` needs the path; an empty folder at it is not the synced one (no identity, no notes)
    code, rep = cli_json("sync", root)
    assert code == 1 and "empty and has lost its" in rep["unavailable"] and rep["deleted"] == 0
    assert _pages(local) == {"n0", "n1", "n2"}
    status = cli_json("sync", "--status")[1]["folders"][0]
    assert status["unavailable"] and status["unavailable_since"]
    doctor = cli("doctor")[1]
    assert "are kept as they are" in doctor and "nothing is deleted" in doctor

    root.rmdir()
    shutil.copytree(keep, root)  # back, with its identity
    write(root / "n1.md", "# Note 1\nedited while it was away\n")
    code, rep = cli_json("sync", root)
    assert code == 0 and "unavailable" not in rep and rep["updated"] == 1 and rep["deleted"] == 0
    assert cli_json("sync", "--status")[1]["folders"][0]["unavailable"] is None
    assert "edited while it was away" in local.ok("get_page", slug="n1")["body"]


def test_another_folder_at_the_path_deletes_nothing(tmp_path, cli, cli_json, local):
    root = tmp_path / "v"
    write(root / "a.md", "# A\n")
    cli_json("sync", root)
    shutil.rmtree(root)
    write(root / "other.md", "# Other\n")
    write(root / IDENTITY_FILE, json.dumps({"id": "f" * 32}))  # a different folder's identity
    code, _, err = cli("sync", root)  # a folder of its own, refused the slug space the old one holds
    assert code == 1 and "--prefix" in err and "a" in _pages(local)
    folder = cli_json("sync", "--status")[1]["folders"][0]
    assert folder["unavailable"] is None and folder["files"] == 1  # the old folder's state is untouched


def test_a_folder_that_lost_only_its_identity_file_is_still_itself(tmp_path, cli_json, local):
    root = tmp_path / "v"
    write(root / "a.md", "# A\n")
    write(root / "b.md", "# B\n")
    cli_json("sync", root)
    (root / IDENTITY_FILE).unlink()
    (root / "b.md").unlink()
    code, rep = cli_json("sync", root)
    assert code == 0 and rep["deleted"] == 1 and _pages(local) == {"a"}  # its notes are there: a real delete


@pytest.mark.slow
def test_the_watcher_keeps_the_pages_of_a_removed_folder_and_hears_it_come_back(tmp_path, watcher, local, cli_json):
    root = tmp_path / "v"
    for i in range(3):
        write(root / f"n{i}.md", f"# Note {i}\n")
    proc = watcher(root)
    keep = tmp_path / "copy"
    shutil.copytree(root, keep)
    shutil.rmtree(root)
    wait_for(lambda: cli_json("sync", "--status")[1]["folders"][0]["unavailable"], "the watcher to mark it unavailable")
    assert _pages(local) == {"n0", "n1", "n2"}
    shutil.copytree(keep, root)
    write(root / "n2.md", "# Note 2\nzebraword after the return\n")
    wait_for(lambda: local.ok("search", query="zebraword")["results"], "the watcher to hear the folder again")
    write(root / "n3.md", "# Note 3\nquaggaword, saved later\n")  # and it keeps listening
    wait_for(lambda: local.ok("search", query="quaggaword")["results"], "a later save")
    assert _pages(local) == {"n0", "n1", "n2", "n3"}
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=10)


@pytest.mark.parametrize("first", ["the folder it left", "the folder it came to"])
def test_a_note_moved_into_another_folder_keeps_its_page(tmp_path, cli_json, local, first):
    a, b = tmp_path / "a", tmp_path / "b"
    write(a / "plan.md", "# Plan\nship it\n")
    write(b / "index.md", "# Index\n")
    write(a / "refs.md", "# Refs\nsee [[plan]]\n")
    cli_json("sync", a, "--prefix", "a")
    cli_json("sync", b, "--prefix", "b")
    local.ok("remember", fact="the plan ships on Friday", provenance="test", entity="a/plan")
    shutil.move(a / "plan.md", b / "plan.md")
    order = [(a, "a"), (b, "b")] if first == "the folder it left" else [(b, "b"), (a, "a")]
    for root, prefix in order:
        cli_json("sync", root, "--prefix", prefix)
    card = local.ok("entity", name="b/plan")["card"]
    assert card["active_fact_count"] == 1, card
    assert local.err("get_page", slug="a/plan")["error"] == "not_found"
    links = {link["to"] for link in local.ok("get_page", slug="a/refs")["links"]}
    assert "b/plan" in links and "a/plan" not in links


def test_a_conflict_where_another_folder_kept_the_slug_says_so(tmp_path, cli, cli_json):
    a, b = tmp_path / "a", tmp_path / "b"
    write(a / "shared.md", "# Shared\nfrom a\n")
    cli_json("sync", a, "--prefix", "team")
    write(b / "shared.md", "# Shared\nfrom b\n")
    code, out, _ = cli("import", b, "--prefix", "team")  # an import may share a prefix; its note clashes on the slug
    assert code == 1 and "the file won" not in out
    status = cli_json("sync", "--status")[1]["folders"]
    conflict = next(c for f in status for c in f["conflicts"])
    assert conflict["cause"] == "slug_taken" and "not applied" in conflict["said"]
    assert "another synced folder's note holds team/shared" in cli("sync", "--status")[1]

"""Moves keep identity: any move of a note keeps its page, facts, aliases and links, in the watcher and in a
full pass. A page whose note is gone with no move found is an orphan, which `sync --status` and `doctor` name."""

from __future__ import annotations

import os
import time

import pytest
from vaults import wait_for, write

pytestmark = pytest.mark.slow






def _with_identity(local, slug: str) -> None:
    """A fact, an alias added by hand and a page linking to it: what a move must carry along."""
    local.ok("remember", fact=f"{slug} matters", provenance="test", entity=slug)
    local.ok("add_alias", slug=slug, alias=f"Alias of {slug.replace('/', ' ')}")


def _kept(local, old: str, new: str) -> None:
    card = local.ok("entity", name=new)["card"]
    assert card["entity"]["slug"] == new, card
    assert card["active_fact_count"] == 1, card
    page = local.ok("get_page", slug=new)
    assert f"alias of {old.replace('/', ' ')}" in page["aliases"], page
    assert local.err("get_page", slug=old)["error"] == "not_found", f"{old} is still live: an orphan"


MOVES = {
    # name: (files before, shell-like steps, old slug, new slug)
    "into a new folder": ({"note.md": "# Note\nbody\n"}, [("mkdir", "X"), ("mv", "note.md", "X/note.md")], "note", "x/note"),
    "into a new parent": ({"note.md": "# Note\nbody\n"}, [("mkdir", "a/b"), ("mv", "note.md", "a/b/note.md")], "note", "a/b/note"),
    "into an existing folder": ({"note.md": "# Note\nbody\n", "Y/other.md": "# Other\n"},
                                [("mv", "note.md", "Y/note.md")], "note", "y/note"),
    "across folders": ({"p/note.md": "# Note\nbody\n", "q/other.md": "# Other\n"},
                       [("mv", "p/note.md", "q/note.md")], "p/note", "q/note"),
    "note and folder renamed at once": ({"p/note.md": "# Note\nbody\n"},
                                        [("mv", "p/note.md", "p/renamed.md"), ("mv", "p", "r")], "p/note", "r/renamed"),
    "out of a folder into a new one, the old folder removed": ({"p/note.md": "# Note\nbody\n"},
                                                               [("mkdir", "Z"), ("mv", "p/note.md", "Z/note.md"), ("rmdir", "p")],
                                                               "p/note", "z/note"),
}


def _do(root, steps) -> None:
    for step in steps:
        if step[0] == "mkdir":
            os.makedirs(root / step[1])
        elif step[0] == "rmdir":
            os.rmdir(root / step[1])
        else:
            os.rename(root / step[1], root / step[2])


@pytest.mark.parametrize("name", list(MOVES))
def test_the_watcher_keeps_a_moved_notes_page(name, tmp_path, local, watcher):
    files, steps, old, new = MOVES[name]
    root = tmp_path / "v"
    for rel, text in files.items():
        write(root / rel, text)
    watcher(root)
    _with_identity(local, old)
    _do(root, steps)
    wait_for(lambda: local("get_page", slug=new)[0] is not None and local("get_page", slug=old)[1], f"the move to {new}")
    time.sleep(0.5)  # any late event (the folder's own) has settled too
    _kept(local, old, new)


@pytest.mark.parametrize("name", list(MOVES))
def test_a_full_pass_keeps_a_moved_notes_page(name, tmp_path, cli_json, local):
    files, steps, old, new = MOVES[name]
    root = tmp_path / "v"
    for rel, text in files.items():
        write(root / rel, text)
    cli_json("sync", root)
    _with_identity(local, old)
    _do(root, steps)
    _code, rep = cli_json("sync", root)
    assert rep["renamed"] == 1 and rep["deleted"] == 0 and rep["created"] == 0, rep
    _kept(local, old, new)


def test_a_full_pass_follows_a_note_moved_and_edited_while_nobody_watched(tmp_path, cli_json, local):
    root = tmp_path / "v"
    write(root / "inbox" / "Standup notes.md", "# Standup\nfirst\n")
    write(root / "inbox" / "other.md", "# Other\n")
    cli_json("sync", root)
    _with_identity(local, "inbox/standup-notes")
    os.makedirs(root / "archive" / "2026")
    os.rename(root / "inbox" / "Standup notes.md", root / "archive" / "2026" / "Standup notes.md")
    write(root / "archive" / "2026" / "Standup notes.md", "# Standup\nfirst\nand an edit made after the move\n")
    _code, rep = cli_json("sync", root)
    assert (rep["renamed"], rep["deleted"], rep["created"]) == (1, 0, 0), rep
    _kept(local, "inbox/standup-notes", "archive/2026/standup-notes")
    assert "an edit made after the move" in local.ok("get_page", slug="archive/2026/standup-notes")["body"]


def test_an_orphaned_page_is_named_by_status_and_doctor(tmp_path, cli, cli_json, local, home):
    """A page whose note is gone while the page stayed live (left behind by an earlier memverbs that lost a
    move) is reported, with the note it probably became."""
    from memverbs.server.runtime import Runtime
    from memverbs.server.sync.state import SyncState

    root = tmp_path / "v"
    write(root / "note.md", "# Note\nbody\n")
    cli_json("sync", root)
    _with_identity(local, "note")
    os.makedirs(root / "X")
    os.rename(root / "note.md", root / "X" / "note.md")
    # What the old watcher did: the new file became a page of its own and the old file's row was forgotten.
    rt = Runtime(home)
    try:
        state = SyncState(rt.brain(), rt.source)
        folder = state.folders()[0]
        state.forget(folder, "note.md")
    finally:
        rt.close()
    local.ok("put_page", slug="x/note", content="# Note\nbody\n")
    cli_json("sync", root)
    _code, status = cli_json("sync", "--status")
    orphans = status["folders"][0]["orphans"]
    assert [o["slug"] for o in orphans] == ["note"], orphans
    assert orphans[0]["facts"] == 1 and orphans[0]["moved_to"] == "X/note.md", orphans
    _code, out, _ = cli("sync", "--status")
    assert "orphan" in out and "note" in out
    _code, out, _ = cli("doctor")
    assert "orphan" in out and "note (1 fact" in out, out


def test_a_watcher_killed_in_the_middle_of_a_move_loses_nothing(tmp_path, local, watcher):
    """kill -9 while a moved note's delete is held (or before its create is applied): the next watcher's
    start-up pass pairs the gone note with the new file, so the page keeps its facts and aliases."""
    import signal

    root = tmp_path / "v"
    write(root / "note.md", "# Note\nbody\n")
    proc = watcher(root)
    _with_identity(local, "note")
    os.makedirs(root / "X")
    os.rename(root / "note.md", root / "X" / "note.md")
    time.sleep(0.3)  # the folder's walk may have run; the held delete has not come due
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    watcher(root)
    _kept(local, "note", "x/note")

"""Conflicts you can settle, and files that fail as they stand: `sync --status` shows both sides and a diff,
`sync --resolve NOTE --keep file|brain|both` settles one, and doctor fails (names each) while any is outstanding."""

from __future__ import annotations

import pytest
from vaults import write


@pytest.fixture
def conflicted(tmp_path, cli_json, local):
    """A synced note both an agent and an editor changed since the last pass: the editor's file won."""
    root = tmp_path / "v"
    write(root / "alice.md", "# Alice\nRuns payments.\nLikes tea.\n")
    cli_json("sync", root)
    local.ok("put_page", slug="alice", content="# Alice\nRuns payments and billing.\nLikes tea.\n")
    write(root / "alice.md", "# Alice\nRuns payments.\nLikes tea.\nMoved to Lisbon.\n")
    assert cli_json("sync", root)[1]["conflicts"] == [{"file": "alice.md", "slug": "alice", "cause": "file_won"}]
    return root


def sync_doctor_line(cli) -> tuple[int, str]:
    code, out, _ = cli("doctor")
    lines = [line for line in out.splitlines() if line[2:].startswith("sync ")]
    assert len(lines) == 1, out
    return code, lines[0]


def test_status_shows_each_conflict_with_both_sides_and_a_diff(conflicted, cli, cli_json):
    conflict = cli_json("sync", "--status")[1]["folders"][0]["conflicts"][0]
    assert "Runs payments and billing." in conflict["brain_content"]
    assert conflict["file_content"] == "# Alice\nRuns payments.\nLikes tea.\nMoved to Lisbon.\n"
    assert "-Runs payments and billing.\n" in conflict["diff"] and "+Moved to Lisbon.\n" in conflict["diff"]
    code, out, _ = cli("sync", "--status")
    assert code == 0
    assert "-Runs payments and billing." in out and "+Moved to Lisbon." in out
    assert "settle it: memverbs sync --resolve alice.md --keep file|brain|both" in out


def test_keep_brain_puts_the_kept_version_back_in_the_page_and_the_file(conflicted, cli, cli_json, local):
    code, out, _ = cli("sync", "--resolve", conflicted / "alice.md", "--keep", "brain")
    assert code == 0 and "settled #" in out
    assert "Runs payments and billing." in (conflicted / "alice.md").read_text()
    assert "Moved to Lisbon" not in local.ok("get_page", slug="alice")["body"]
    assert cli_json("sync", "--status")[1]["folders"][0]["conflicts"] == []
    # The file's version it replaced is in the page's history, not lost.
    versions = cli_json("page-history", "alice")[1]["versions"]
    assert any("Moved to Lisbon" in cli("page-history", "alice", "--show", v["version"])[1] for v in versions)
    assert cli_json("sync", conflicted)[1]["conflicts"] == []  # the next pass finds both sides in step


def test_keep_file_settles_it_and_doctor_stops_failing(conflicted, cli, cli_json, local):
    code, line = sync_doctor_line(cli)
    assert code == 1 and line.startswith("✗") and "1 conflict(s): alice.md (#" in line
    assert cli("sync", "--resolve", "alice", "--keep", "file")[0] == 0
    assert (conflicted / "alice.md").read_text() == "# Alice\nRuns payments.\nLikes tea.\nMoved to Lisbon.\n"
    assert "Moved to Lisbon." in local.ok("get_page", slug="alice")["body"]
    assert cli_json("sync", "--status")[1]["folders"][0]["conflicts"] == []
    code, line = sync_doctor_line(cli)
    assert line.startswith("✓"), line


def test_keep_both_puts_each_differing_part_between_markers(conflicted, cli, local):
    code, out, _ = cli("sync", "--resolve", "alice.md", "--keep", "both")
    assert code == 0 and "markers" in out
    text = (conflicted / "alice.md").read_text()
    assert "<<<<<<< file\nRuns payments.\n======= brain (conflict #" in text
    assert "Runs payments and billing.\n>>>>>>> brain\n" in text
    assert "Moved to Lisbon." in text and text.count("Likes tea.") == 1  # what both sides share, once
    assert "Runs payments and billing." in local.ok("get_page", slug="alice")["body"]


def test_resolve_says_what_it_needs(conflicted, cli):
    code, _, err = cli("sync", "--resolve", "bob.md", "--keep", "file")
    assert code == 1 and 'no open conflict for "bob.md"' in err and "alice.md (#" in err
    code, _, err = cli("sync", "--resolve", "alice.md")
    assert code == 2 and "--resolve and --keep go together" in err
    code, _, err = cli("sync", "--keep", "brain")
    assert code == 2


def test_a_file_that_fails_as_it_stands_is_named_not_pending(tmp_path, cli, cli_json, local):
    root = tmp_path / "v"
    write(root / "good.md", "# Good\n")
    write(root / "bad.md", "---\ntitle: [unclosed\n---\nbody\n")
    write(root / "big.md", "# Big\n" + "x" * 5000)
    assert cli_json("sync", root, "--max-bytes", "4096")[0] == 1
    folder = cli_json("sync", "--status")[1]["folders"][0]
    assert (folder["pending_files"], folder["lag"]) == (0, "none")  # not pending for ever, with lag growing
    failing = {f["file"]: f for f in folder["failing_files"]}
    assert set(failing) == {"bad.md", "big.md"}
    assert failing["bad.md"]["outcome"] == "errors" and "YAML" in failing["bad.md"]["reason"]
    assert failing["big.md"]["outcome"] == "skipped" and "too large" in failing["big.md"]["reason"]
    code, line = sync_doctor_line(cli)
    assert code == 1 and "2 file(s) failing: bad.md (" in line and "big.md (" in line
    # An edit is pending again (it may fix it); once it applies, nothing is outstanding.
    write(root / "bad.md", "---\ntitle: Fixed\n---\nbody\n")
    (root / "big.md").unlink()
    assert cli_json("sync", "--status")[1]["folders"][0]["pending_files"] == 1
    assert cli_json("sync", root)[0] == 0
    assert local.ok("get_page", slug="bad")["title"] == "Fixed"
    folder = cli_json("sync", "--status")[1]["folders"][0]
    assert (folder["pending_files"], folder["failing_files"]) == (0, [])
    assert sync_doctor_line(cli)[1].startswith("✓")


@pytest.mark.sqlite_only  # rewinds the schema with SQLite's own DDL
def test_doctor_reads_a_brain_from_before_failing_files_and_hosts_were_kept(tmp_path, home, cli, cli_json):
    """doctor never migrates: a brain one step behind still gets its sync rows, not 'cannot read the sync state'."""
    import sqlite3

    root = tmp_path / "v"
    write(root / "a.md", "# A\n")
    cli_json("sync", root)
    db = sqlite3.connect(home.root / "brain.db")
    db.executescript(
        "DROP INDEX sync_folders_identity; DROP INDEX sync_folders_by_path; DROP INDEX sync_files_by_slug; "
        "ALTER TABLE sync_folders DROP COLUMN folder_uid; DELETE FROM _migrations WHERE name = '0019_folder_identity'; "
        "DROP TABLE sync_failures; DROP TABLE page_versions; ALTER TABLE sync_folders DROP COLUMN host; "
        "ALTER TABLE sync_folders DROP COLUMN watcher_host; DELETE FROM _migrations WHERE name = '0017_page_history';"
    )
    db.close()
    _code, line = sync_doctor_line(cli)
    assert line.startswith("✓") and "1 files" in line, line


def test_keep_brain_for_a_note_whose_file_is_gone_writes_the_file_again(conflicted, cli, cli_json, local):
    (conflicted / "alice.md").unlink()
    assert "the file is gone" in cli("sync", "--status")[1]
    code, out, _ = cli("sync", "--resolve", "alice.md", "--keep", "brain")
    assert code == 0 and "was gone" in out
    assert "Runs payments and billing." in (conflicted / "alice.md").read_text()
    assert "Runs payments and billing." in local.ok("get_page", slug="alice")["body"]
    rep = cli_json("sync", conflicted)[1]
    assert (rep["deleted"], rep["conflicts"]) == (0, [])
    assert cli_json("sync", "--status")[1]["folders"][0]["conflicts"] == []

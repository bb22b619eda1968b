"""Each install step kind on its own: apply, revert, idempotence, and the refusals.

Real files in a temporary folder and, for CliCommand, a real child process; the steps are
driven the way base.run_install and run_uninstall drive them (a Context, a receipt record).
"""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

import pytest

from memverbs.installers import toml_block
from memverbs.installers.command_steps import CliCommand
from memverbs.installers.harness_cli import run_cli
from memverbs.installers.json_steps import JsonArrayItem, JsonArrayValue, JsonEntry
from memverbs.installers.steps import Context, InstallError, remove_empty_dirs
from memverbs.installers.text_steps import MD_BEGIN, MD_END, MarkedBlock, OwnedFile, TomlBlock


def ctx(tmp_path: Path, *, dry_run: bool = False) -> Context:
    return Context(backups=tmp_path / "backups", dry_run=dry_run)


def ours(value: object) -> bool:
    return isinstance(value, dict) and value.get("by") == "memverbs"


ENTRY = {"by": "memverbs", "command": "memverbs serve"}


# -- Context -----------------------------------------------------------------------------------


def test_a_dry_run_writes_nothing_and_shows_the_diff(tmp_path):
    path = tmp_path / "cfg.json"
    path.write_text('{"a": 1}\n', encoding="utf-8")
    rehearsal = ctx(tmp_path, dry_run=True)
    JsonEntry(path, ["mcp", "memverbs"], ENTRY, ours).apply(rehearsal)
    assert path.read_text(encoding="utf-8") == '{"a": 1}\n'
    assert not (tmp_path / "backups").exists()
    [change] = rehearsal.diffs()
    assert change.startswith(f"--- {path} (before)") and '"memverbs": {' in change
    assert rehearsal.read(path) != path.read_text(encoding="utf-8")  # later steps see the overlay


def test_a_real_write_backs_the_file_up_once_and_records_the_folders_it_made(tmp_path):
    existing = tmp_path / "cfg.json"
    existing.write_text("{}\n", encoding="utf-8")
    c = ctx(tmp_path)
    JsonEntry(existing, ["x"], ENTRY, ours).apply(c)
    JsonEntry(existing, ["y"], ENTRY, ours).apply(c)
    assert [p.name.split(".")[0] for p in (tmp_path / "backups").iterdir()] == ["cfg"]
    deep = tmp_path / "new" / "deeper" / "cfg.json"
    JsonEntry(deep, ["x"], ENTRY, ours).apply(c)
    assert c.created_dirs == [str(tmp_path / "new"), str(tmp_path / "new" / "deeper")]


def test_remove_empty_dirs_keeps_a_folder_someone_used(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "c" / "d").mkdir(parents=True)
    (tmp_path / "c" / "theirs.txt").write_text("x", encoding="utf-8")
    remove_empty_dirs([str(tmp_path / p) for p in ("a", "a/b", "c", "c/d")])
    assert not (tmp_path / "a").exists()
    assert (tmp_path / "c" / "theirs.txt").exists() and not (tmp_path / "c" / "d").exists()


# -- JsonEntry ---------------------------------------------------------------------------------


def test_json_entry_round_trip_gives_the_file_back_byte_for_byte(tmp_path):
    path = tmp_path / "cfg.jsonc"
    original = '{\n  // the user\'s comment\n  "theme": "dark",\n}\n'
    path.write_text(original, encoding="utf-8")
    step = JsonEntry(path, ["mcp", "servers", "memverbs"], ENTRY, ours)
    record = step.apply(ctx(tmp_path))
    assert json.loads(json.dumps(record))["created_parents"] == ["mcp", "mcp.servers"]
    assert "the user's comment" in path.read_text(encoding="utf-8")
    again = step.apply(ctx(tmp_path))  # idempotent: the same entry, replaced in place
    text = path.read_text(encoding="utf-8")
    assert text.count('"memverbs": {') == 1
    assert again["created_parents"] == []
    JsonEntry.revert(record, ctx(tmp_path), ours)
    assert path.read_text(encoding="utf-8") == original


def test_json_entry_refuses_a_foreign_entry_and_a_broken_file_untouched(tmp_path):
    path = tmp_path / "cfg.json"
    foreign = '{"mcp": {"memverbs": {"by": "someone else"}}}\n'
    path.write_text(foreign, encoding="utf-8")
    with pytest.raises(InstallError, match="did not write"):
        JsonEntry(path, ["mcp", "memverbs"], ENTRY, ours).apply(ctx(tmp_path))
    broken = '{"mcp": '
    path.write_text(broken, encoding="utf-8")
    with pytest.raises(InstallError, match="does not parse") as caught:
        JsonEntry(path, ["mcp", "memverbs"], ENTRY, ours).apply(ctx(tmp_path))
    assert caught.value.fix
    assert path.read_text(encoding="utf-8") == broken


def test_json_entry_revert_leaves_an_entry_someone_replaced(tmp_path):
    path = tmp_path / "cfg.json"
    record = JsonEntry(path, ["mcp", "memverbs"], ENTRY, ours).apply(ctx(tmp_path))
    path.write_text('{"mcp": {"memverbs": {"by": "the user now"}}}\n', encoding="utf-8")
    JsonEntry.revert(record, ctx(tmp_path), ours)
    assert json.loads(path.read_text(encoding="utf-8"))["mcp"]["memverbs"] == {"by": "the user now"}


def test_json_entry_on_a_file_it_created_removes_the_file(tmp_path):
    path = tmp_path / "cfg.json"
    record = JsonEntry(path, ["mcp", "memverbs"], ENTRY, ours).apply(ctx(tmp_path))
    assert record["created_file"] is True
    JsonEntry.revert(record, ctx(tmp_path))
    assert not path.exists()


def test_json_entry_keeps_a_blank_file_blank(tmp_path):
    path = tmp_path / "cfg.json"
    path.write_text("\n\n", encoding="utf-8")
    record = JsonEntry(path, ["memverbs"], ENTRY, ours).apply(ctx(tmp_path))
    JsonEntry.revert(record, ctx(tmp_path))
    assert path.read_text(encoding="utf-8") == "\n\n"


# -- JsonArrayItem -----------------------------------------------------------------------------


def test_json_array_item_appends_once_and_leaves_the_users_items(tmp_path):
    path = tmp_path / "settings.json"
    original = '{"hooks": {"SessionStart": [{"by": "user"}]}}\n'
    path.write_text(original, encoding="utf-8")
    step = JsonArrayItem(path, ["hooks", "SessionStart"], ENTRY, ours)
    record = step.apply(ctx(tmp_path))
    step.apply(ctx(tmp_path))  # idempotent: ours replaced, never doubled
    groups = json.loads(path.read_text(encoding="utf-8"))["hooks"]["SessionStart"]
    assert groups == [{"by": "user"}, ENTRY]
    JsonArrayItem.revert(record, ctx(tmp_path), ours)
    assert json.loads(path.read_text(encoding="utf-8")) == json.loads(original)


def test_json_array_item_removes_only_the_containers_it_made(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text('{"hooks": {}}\n', encoding="utf-8")
    record = JsonArrayItem(path, ["hooks", "UserPromptSubmit"], ENTRY, ours).apply(ctx(tmp_path))
    assert record["created_parents"] == ["hooks.UserPromptSubmit"]
    JsonArrayItem.revert(record, ctx(tmp_path), ours)
    assert json.loads(path.read_text(encoding="utf-8")) == {"hooks": {}}  # the user's empty table stays


def test_json_array_item_refuses_a_non_array_in_the_way(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text('{"hooks": {"SessionStart": "not a list"}}\n', encoding="utf-8")
    with pytest.raises((InstallError, ValueError)):
        JsonArrayItem(path, ["hooks", "SessionStart"], ENTRY, ours).apply(ctx(tmp_path))
    assert "not a list" in path.read_text(encoding="utf-8")


# -- JsonArrayValue ----------------------------------------------------------------------------


def test_json_array_value_replaces_a_stale_value_and_reverts_cleanly(tmp_path):
    path = tmp_path / "openclaw.json"
    path.write_text('{"plugins": {"load": {"paths": ["/theirs", "/old/plugin/openclaw"]}}}\n', encoding="utf-8")
    step = JsonArrayValue(path, ["plugins", "load", "paths"], "/new/plugin/openclaw", lambda v: v == "/old/plugin/openclaw")
    record = step.apply(ctx(tmp_path))
    step.apply(ctx(tmp_path))
    assert json.loads(path.read_text(encoding="utf-8"))["plugins"]["load"]["paths"] == ["/theirs", "/new/plugin/openclaw"]
    JsonArrayValue.revert(record, ctx(tmp_path))
    assert json.loads(path.read_text(encoding="utf-8"))["plugins"]["load"]["paths"] == ["/theirs"]


def test_json_array_value_on_a_new_file_leaves_no_file(tmp_path):
    path = tmp_path / "openclaw.json"
    record = JsonArrayValue(path, ["plugins", "allow"], "memverbs").apply(ctx(tmp_path))
    JsonArrayValue.revert(record, ctx(tmp_path))
    assert not path.exists()


# -- TomlBlock ---------------------------------------------------------------------------------


def test_toml_block_round_trip_keeps_every_byte_outside_it(tmp_path):
    path = tmp_path / "config.toml"
    original = '# my settings\nmodel = "x"\r\n\r\n[profile]\nname = "me"\n'
    path.write_text(original, encoding="utf-8", newline="")
    step = TomlBlock(path, {"mcp_servers": {"memverbs": {"command": "memverbs"}}}, top={"grace_ms": 5000, "model": "ours"})
    record = step.apply(ctx(tmp_path))
    step.apply(ctx(tmp_path))  # idempotent: the block is replaced, not repeated
    text = path.read_bytes().decode("utf-8")
    assert text.count(toml_block.BEGIN) == 1
    data = tomllib.loads(text)
    assert data["mcp_servers"]["memverbs"]["command"] == "memverbs"
    assert data["grace_ms"] == 5000 and data["model"] == "x"  # a top-level key the user set stays theirs
    TomlBlock.revert(record, ctx(tmp_path))
    assert path.read_bytes().decode("utf-8") == original


def test_toml_block_data_can_follow_earlier_steps(tmp_path):
    path = tmp_path / "config.toml"
    seen: list[str | None] = []

    def data(c: Context) -> dict:
        seen.append(c.read(tmp_path / "other.json"))
        return {"x": {"n": 1}}

    c = ctx(tmp_path, dry_run=True)
    c.overlay[tmp_path / "other.json"] = "from an earlier step"
    TomlBlock(path, data).apply(c)
    assert seen == ["from an earlier step"]


def test_toml_block_refuses_a_conflict_and_a_broken_file_untouched(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text('[mcp_servers.memverbs]\ncommand = "theirs"\n', encoding="utf-8")

    def conflicts(outside: dict) -> str | None:
        return "already defined" if "memverbs" in outside.get("mcp_servers", {}) else None

    with pytest.raises(InstallError, match="already defined"):
        TomlBlock(path, {"mcp_servers": {"memverbs": {}}}, conflicts).apply(ctx(tmp_path))
    path.write_text("[broken\n", encoding="utf-8")
    with pytest.raises(InstallError, match="untouched"):
        TomlBlock(path, {"a": {"b": 1}}).apply(ctx(tmp_path))
    assert path.read_text(encoding="utf-8") == "[broken\n"


def test_local_and_remote_blocks_are_each_removed_by_their_own_owner(tmp_path):
    path = tmp_path / "config.toml"
    local = TomlBlock(path, {"a": {"x": 1}}).apply(ctx(tmp_path))
    remote = TomlBlock(path, {"b": {"y": 2}}, markers=toml_block.REMOTE).apply(ctx(tmp_path))
    assert remote["markers"] == "remote" and "markers" not in local
    TomlBlock.revert(local, ctx(tmp_path))
    assert tomllib.loads(path.read_text(encoding="utf-8")) == {"b": {"y": 2}}
    TomlBlock.revert(remote, ctx(tmp_path))
    assert path.read_text(encoding="utf-8").strip() == ""  # the remote step found the file there: it stays


# -- OwnedFile ---------------------------------------------------------------------------------


def test_owned_file_writes_replaces_its_own_and_refuses_anyone_elses(tmp_path):
    path = tmp_path / "plugin" / "memverbs.js"
    step = OwnedFile(path, "// memverbs-marker v2\n", "memverbs-marker")
    record = step.apply(ctx(tmp_path))
    path.write_text("// memverbs-marker v1\n", encoding="utf-8")
    step.apply(ctx(tmp_path))
    assert path.read_text(encoding="utf-8") == "// memverbs-marker v2\n"
    theirs = tmp_path / "plugin" / "theirs.js"
    theirs.write_text("// someone's plugin\n", encoding="utf-8")
    with pytest.raises(InstallError, match="not written by memverbs"):
        OwnedFile(theirs, "// memverbs-marker\n", "memverbs-marker").apply(ctx(tmp_path))
    assert theirs.read_text(encoding="utf-8") == "// someone's plugin\n"
    OwnedFile.revert(record, ctx(tmp_path))
    assert not path.exists()


def test_owned_file_revert_leaves_a_file_someone_rewrote(tmp_path):
    path = tmp_path / "hooks.json"
    record = OwnedFile(path, "memverbs-marker\n", "memverbs-marker").apply(ctx(tmp_path))
    path.write_text("now the user's\n", encoding="utf-8")
    OwnedFile.revert(record, ctx(tmp_path))
    assert path.read_text(encoding="utf-8") == "now the user's\n"


# -- MarkedBlock -------------------------------------------------------------------------------


@pytest.mark.parametrize("original", ["", "# Rules\r\nBe kind.\r\n", "no newline at the end"])
def test_marked_block_round_trip_gives_the_file_back(tmp_path, original):
    path = tmp_path / "AGENTS.md"
    if original:
        path.write_bytes(original.encode("utf-8"))
    step = MarkedBlock(path, "Call context_pack first.\n")
    record = step.apply(ctx(tmp_path))
    step.apply(ctx(tmp_path))
    text = path.read_bytes().decode("utf-8")
    assert text.count(MD_BEGIN) == 1 and text.count(MD_END) == 1
    assert "Call context_pack first." in text
    MarkedBlock.revert(record, ctx(tmp_path))
    if original:
        assert path.read_bytes().decode("utf-8") == original
    else:
        assert not path.exists()


def test_marked_block_refuses_a_half_removed_block(tmp_path):
    path = tmp_path / "AGENTS.md"
    path.write_text(f"{MD_BEGIN}\nleft alone\n", encoding="utf-8")
    with pytest.raises(InstallError, match="no end marker"):
        MarkedBlock(path, "body").apply(ctx(tmp_path))


# -- CliCommand --------------------------------------------------------------------------------


def _touch(path: Path) -> list[str]:
    return [sys.executable, "-c", f"import pathlib; pathlib.Path({str(path)!r}).write_text('made')"]


def _remove(path: Path) -> list[str]:
    return [sys.executable, "-c", f"import pathlib; pathlib.Path({str(path)!r}).unlink()"]


def test_cli_command_runs_its_command_and_its_undo(tmp_path):
    made = tmp_path / "registered"
    step = CliCommand(_touch(made), _remove(made), "register")
    rehearsal = ctx(tmp_path, dry_run=True)
    step.apply(rehearsal)
    assert not made.exists() and rehearsal.commands == ["$ " + " ".join(_touch(made))]
    record = step.apply(ctx(tmp_path))
    assert made.read_text(encoding="utf-8") == "made"
    CliCommand.revert(record, ctx(tmp_path))
    assert not made.exists()


def test_cli_command_puts_a_kept_file_back(tmp_path):
    kept = tmp_path / "openclaw.json"
    kept.write_text("// the user's comments\n{}\n", encoding="utf-8")
    kept.chmod(0o644)
    rewrite = [sys.executable, "-c", f"import os, pathlib; p = pathlib.Path({str(kept)!r}); p.write_text('{{}}'); os.chmod(p, 0o600)"]
    CliCommand(rewrite, ["true"], "ledger", keep=kept).apply(ctx(tmp_path))
    assert kept.read_text(encoding="utf-8") == "// the user's comments\n{}\n"
    assert kept.stat().st_mode & 0o777 == 0o644


def test_cli_failures_are_install_errors(tmp_path):
    with pytest.raises(InstallError, match="not on PATH"):
        run_cli([str(tmp_path / "no-such-harness"), "mcp", "add"])
    failing = [sys.executable, "-c", "import sys; sys.stderr.write('bad flag\\n'); sys.exit(3)"]
    with pytest.raises(InstallError, match="bad flag"):
        CliCommand(failing, ["true"], "register").apply(ctx(tmp_path))
    # A step with no undo only clears the way: its failure (nothing to remove) is not one.
    CliCommand(failing, [], "clear the way").apply(ctx(tmp_path))

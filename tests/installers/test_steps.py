"""Each install step on its own, on real files: apply makes exactly its change, revert gives the
user's bytes back, a dry run touches nothing, and what is not ours is refused."""

from __future__ import annotations

import json
import sys

import pytest

from memverbs.installers.steps import (
    CliCommand,
    Context,
    InstallError,
    JsonArrayItem,
    JsonArrayValue,
    JsonEntry,
    MarkedBlock,
    OwnedFile,
    TomlBlock,
)

USER_JSON = '{\n  // the user\'s own comment\n  "theme": "dark"\n}\n'


def ours(value: object) -> bool:
    return isinstance(value, dict) and value.get("command") == "memverbs"


@pytest.fixture
def ctx(tmp_path) -> Context:
    return Context(backups=tmp_path / "backups")


def test_a_json_entry_is_added_beside_the_users_and_removed_to_the_same_bytes(ctx, tmp_path):
    path = tmp_path / "settings.json"
    path.write_text(USER_JSON)
    step = JsonEntry(path, ["mcp", "servers", "memverbs"], {"command": "memverbs"}, ours)
    record = step.apply(ctx)
    data = path.read_text()
    assert "// the user's own comment" in data and '"memverbs"' in data
    assert record["created_parents"] == ["mcp", "mcp.servers"]
    assert list((tmp_path / "backups").iterdir())  # the original was backed up before the first write
    JsonEntry.revert(record, ctx, ours)
    assert path.read_text() == USER_JSON


def test_a_json_entry_the_user_wrote_is_refused_and_not_touched(ctx, tmp_path):
    path = tmp_path / "settings.json"
    path.write_text('{"mcp": {"servers": {"memverbs": {"command": "theirs"}}}}')
    with pytest.raises(InstallError, match="did not write"):
        JsonEntry(path, ["mcp", "servers", "memverbs"], {"command": "memverbs"}, ours).apply(ctx)
    assert json.loads(path.read_text())["mcp"]["servers"]["memverbs"] == {"command": "theirs"}


def test_a_dry_run_writes_into_the_overlay_and_shows_the_diff(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text(USER_JSON)
    dry = Context(backups=tmp_path / "backups", dry_run=True)
    JsonEntry(path, ["mcp"], {"command": "memverbs"}, ours).apply(dry)
    assert path.read_text() == USER_JSON and not (tmp_path / "backups").exists()
    [shown] = dry.diffs()
    assert '+  "mcp"' in shown or '"mcp"' in shown


def test_an_array_item_replaces_ours_instead_of_doubling_and_leaves_nothing_it_created(ctx, tmp_path):
    path = tmp_path / "hooks.json"
    step = JsonArrayItem(path, ["hooks", "SessionStart"], {"command": "memverbs"}, ours)
    first = step.apply(ctx)
    again = step.apply(ctx)  # a re-install: it finds the containers there (the receipt keeps the first's)
    assert json.loads(path.read_text())["hooks"]["SessionStart"] == [{"command": "memverbs"}]
    assert (first["created_parents"], again["created_parents"]) == (["hooks", "hooks.SessionStart"], [])
    JsonArrayItem.revert(first, ctx, ours)
    assert not path.exists()  # the install created the file: uninstall takes it away again


def test_an_array_value_replaces_a_stale_one_of_ours(ctx, tmp_path):
    path = tmp_path / "openclaw.json"
    path.write_text('{"plugins": {"load": {"paths": ["/theirs", "/old/memverbs"]}}}')
    record = JsonArrayValue(path, ["plugins", "load", "paths"], "/new/memverbs",
                            stale=lambda v: str(v).endswith("/memverbs")).apply(ctx)
    assert json.loads(path.read_text())["plugins"]["load"]["paths"] == ["/theirs", "/new/memverbs"]
    JsonArrayValue.revert(record, ctx)
    assert json.loads(path.read_text())["plugins"]["load"]["paths"] == ["/theirs"]


def test_a_toml_block_keeps_the_users_keys_and_goes_away_whole(ctx, tmp_path):
    path = tmp_path / "config.toml"
    original = 'model = "o3"\n'
    path.write_text(original)
    record = TomlBlock(path, {"mcp_servers": {"memverbs": {"command": "memverbs"}}}, top={"model": "ignored"}).apply(ctx)
    text = path.read_text()
    assert text.startswith(original) and 'command = "memverbs"' in text and "ignored" not in text
    TomlBlock.revert(record, ctx)
    assert path.read_text() == original


def test_a_toml_block_refuses_a_conflicting_entry_outside_it(ctx, tmp_path):
    path = tmp_path / "config.toml"
    path.write_text('[mcp_servers.memverbs]\ncommand = "theirs"\n')
    step = TomlBlock(path, {"mcp_servers": {"memverbs": {"command": "memverbs"}}},
                     conflicts=lambda outside: "memverbs is already configured" if "mcp_servers" in outside else None)
    with pytest.raises(InstallError, match="already configured"):
        step.apply(ctx)


def test_an_owned_file_is_written_whole_and_someone_elses_is_refused(ctx, tmp_path):
    path = tmp_path / "plugin" / "memverbs.js"
    record = OwnedFile(path, "// memverbs plugin\n", "memverbs plugin").apply(ctx)
    assert path.read_text() == "// memverbs plugin\n"
    OwnedFile.revert(record, ctx)
    assert not path.exists()
    path.write_text("// the user's\n")
    with pytest.raises(InstallError, match="not written by memverbs"):
        OwnedFile(path, "// memverbs plugin\n", "memverbs plugin").apply(ctx)


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_marked_block_is_appended_in_the_files_line_ending_and_cut_back_out(ctx, tmp_path, newline):
    path = tmp_path / "AGENTS.md"
    original = f"# My rules{newline}Be brief.{newline}"
    path.write_bytes(original.encode())
    step = MarkedBlock(path, "Use memverbs.\nRecall first.")
    step.apply(ctx)
    record = step.apply(ctx)  # a re-install replaces the block in place
    data = path.read_bytes().decode()
    assert data.count("Use memverbs.") == 1 and f"Use memverbs.{newline}Recall first." in data
    MarkedBlock.revert(record, ctx)
    assert path.read_bytes() == original.encode()


def test_a_cli_step_runs_the_harness_command_and_its_undo(ctx, tmp_path):
    marker = tmp_path / "registered"
    step = CliCommand([sys.executable, "-c", f"open({str(marker)!r}, 'w').close()"],
                      [sys.executable, "-c", f"import os; os.remove({str(marker)!r})"], "register")
    record = step.apply(ctx)
    assert marker.exists() and ctx.commands[0].startswith("$ ")
    CliCommand.revert(record, ctx)
    assert not marker.exists()


def test_a_failing_cli_step_is_an_install_error_with_its_output(ctx):
    step = CliCommand([sys.executable, "-c", "import sys; sys.exit('no such profile')"], ["true"], "register")
    with pytest.raises(InstallError, match="no such profile"):
        step.apply(ctx)

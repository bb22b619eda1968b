"""The user's bytes beyond our entry: line endings, a byte-order mark, comments, empty containers."""

import json

import pytest

from memverbs.installers import toml_block
from memverbs.installers.files import atomic_write_through, read_text
from memverbs.installers.json_steps import JsonArrayItem, JsonEntry
from memverbs.installers.jsonc import JsonDoc
from memverbs.installers.steps import Context
from memverbs.installers.text_steps import MarkedBlock, TomlBlock

BOM = b"\xef\xbb\xbf"


def ours(value):
    return isinstance(value, dict) and value.get("ours") is True


def entry_round_trip(tmp_path, original: bytes) -> tuple[bytes, bytes]:
    path = tmp_path / "settings.json"
    path.write_bytes(original)
    record = JsonEntry(path, ["mcpServers", "memverbs"], {"command": "m"}, owned=lambda v: True).apply(
        Context(backups=tmp_path / "bk")
    )
    installed = path.read_bytes()
    JsonEntry.revert(record, Context(backups=tmp_path / "bk"))
    return installed, path.read_bytes()


@pytest.mark.parametrize("newline", [b"\n", b"\r\n"])
def test_a_bom_file_is_edited_and_keeps_its_bom(tmp_path, newline):
    original = BOM + b'{' + newline + b'  "model": "x"' + newline + b'}' + newline
    installed, uninstalled = entry_round_trip(tmp_path, original)
    assert installed.startswith(BOM + b"{" + newline)
    assert installed.count(BOM) == 1
    assert json.loads(installed[len(BOM) :])["mcpServers"]["memverbs"] == {"command": "m"}
    assert uninstalled == original


def test_read_text_drops_the_bom_and_keeps_crlf(tmp_path):
    path = tmp_path / "a.json"
    path.write_bytes(BOM + b'{"a": 1}\r\n')
    assert read_text(path) == '{"a": 1}\r\n'
    atomic_write_through(path, '{"a": 2}\r\n')
    assert path.read_bytes() == BOM + b'{"a": 2}\r\n'


def test_a_new_file_gets_no_bom(tmp_path):
    path = tmp_path / "new.json"
    atomic_write_through(path, "{}\n")
    assert path.read_bytes() == b"{}\n"


def test_crlf_insert_uses_crlf_everywhere(tmp_path):
    installed, uninstalled = entry_round_trip(tmp_path, b'{\r\n  "model": "x"\r\n}\r\n')
    assert b"\n" not in installed.replace(b"\r\n", b"")
    assert uninstalled == b'{\r\n  "model": "x"\r\n}\r\n'


def test_crlf_hook_item_into_a_missing_array_round_trips(tmp_path):
    path = tmp_path / "settings.json"
    original = b'{\r\n  "model": "x"\r\n}\r\n'
    path.write_bytes(original)
    record = JsonArrayItem(path, ["hooks", "SessionStart"], {"ours": True, "hooks": []}, ours).apply(Context(backups=tmp_path / "bk"))
    assert b"\n" not in path.read_bytes().replace(b"\r\n", b"")
    JsonArrayItem.revert(record, Context(backups=tmp_path / "bk"), ours)
    assert path.read_bytes() == original


def test_crlf_toml_block_round_trips(tmp_path):
    path = tmp_path / "config.toml"
    original = b'# mine\r\nmodel = "x"\r\n\r\n[tui]\r\ntheme = "dark"\r\n'
    path.write_bytes(original)
    step = TomlBlock(path, {"mcp_servers": {"memverbs": {"command": "m", "args": ["serve"]}}}, top={"grace": 5})
    record = step.apply(Context(backups=tmp_path / "bk"))
    installed = path.read_bytes()
    assert b"\n" not in installed.replace(b"\r\n", b"")
    assert toml_block.parse(installed.decode(), "config.toml")["mcp_servers"]["memverbs"]["command"] == "m"
    step.apply(Context(backups=tmp_path / "bk"))  # a re-install replaces the block in place
    assert path.read_bytes() == installed
    TomlBlock.revert(record, Context(backups=tmp_path / "bk"))
    assert path.read_bytes() == original


def test_crlf_marked_block_round_trips(tmp_path):
    path = tmp_path / "AGENTS.md"
    original = b"# Agents\r\n\r\nBe nice.\r\n"
    path.write_bytes(original)
    step = MarkedBlock(path, "line one\nline two\n")
    record = step.apply(Context(backups=tmp_path / "bk"))
    installed = path.read_bytes()
    assert b"line one\r\nline two\r\n" in installed
    assert b"\n" not in installed.replace(b"\r\n", b"")
    step.apply(Context(backups=tmp_path / "bk"))
    assert path.read_bytes() == installed
    MarkedBlock.revert(record, Context(backups=tmp_path / "bk"))
    assert path.read_bytes() == original


@pytest.mark.parametrize(
    "original",
    [
        '{\n  "mcp": {\n    // add servers here\n  }\n}\n',
        '{\r\n  "mcp": {\r\n    // add servers here\r\n  }\r\n}\r\n',
        '{\n  "mcp": { /* none yet */ }\n}\n',
        '{\n  "mcp": { // none yet\n  }\n}\n',
        '{\n  "mcp": {\n    /* a */\n    // b\n  }\n}\n',
        '{\n  "mcp": {}\n}\n',
    ],
)
def test_comments_in_an_empty_container_survive_install_and_uninstall(original):
    doc = JsonDoc(original)
    doc.set(["mcp", "memverbs"], {"type": "local"})
    assert doc.get(["mcp", "memverbs"]) == {"type": "local"}
    for comment in ("// add servers here", "/* none yet */", "// none yet", "/* a */", "// b"):
        assert (comment in doc.text) == (comment in original)
    doc.delete(["mcp", "memverbs"])
    assert doc.text == original


def test_cutting_the_only_item_with_a_trailing_comma_keeps_the_comment():
    original = '{\n  "a": [\n    // mine\n  ]\n}\n'
    doc = JsonDoc('{\n  "a": [\n    {"ours": true},\n    // mine\n  ]\n}\n')
    assert doc.remove_items(["a"], ours) == 1
    assert doc.text == original


def test_hook_containers_the_install_created_are_removed(tmp_path):
    path = tmp_path / "settings.json"
    original = '{\n  "model": "x"\n}\n'
    path.write_text(original)
    record = JsonArrayItem(path, ["hooks", "SessionStart"], {"ours": True}, ours).apply(Context(backups=tmp_path / "bk"))
    assert record["created_parents"] == ["hooks", "hooks.SessionStart"]
    JsonArrayItem.revert(record, Context(backups=tmp_path / "bk"), ours)
    assert path.read_text() == original


def test_a_users_empty_hooks_object_stays_while_our_array_goes(tmp_path):
    path = tmp_path / "settings.json"
    original = '{\n  "hooks": {}\n}\n'
    path.write_text(original)
    record = JsonArrayItem(path, ["hooks", "SessionStart"], {"ours": True}, ours).apply(Context(backups=tmp_path / "bk"))
    assert record["created_parents"] == ["hooks.SessionStart"]
    JsonArrayItem.revert(record, Context(backups=tmp_path / "bk"), ours)
    assert path.read_text() == original

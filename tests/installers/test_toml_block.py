"""The marked TOML block: written with tomli-w, removed byte-exactly."""

import tomllib

import pytest

from memverbs.installers import toml_block

USER = 'model = "gpt-5"  # mine\n\n[mcp_servers.other]\ncommand = "x"  # keep\n'
OURS = {"mcp_servers": {"memverbs": {"command": "/bin/memverbs", "args": ["serve"], "env": {"A": "1"}}}}


def test_upsert_then_remove_is_byte_identical():
    out = toml_block.upsert(USER, OURS, top={"mcp_optional_startup_grace_ms": 5000})
    parsed = tomllib.loads(out)
    assert parsed["mcp_servers"]["memverbs"]["env"] == {"A": "1"} and parsed["mcp_optional_startup_grace_ms"] == 5000
    assert parsed["mcp_servers"]["other"] == {"command": "x"}
    assert toml_block.remove(out) == USER


def test_upsert_is_idempotent():
    once = toml_block.upsert(USER, OURS)
    assert toml_block.upsert(once, OURS) == once
    assert once.count(toml_block.BEGIN) == 1


def test_empty_file_round_trip():
    assert toml_block.remove(toml_block.upsert("", OURS)) == ""


def test_a_broken_block_is_refused():
    with pytest.raises(toml_block.TomlEditError):
        toml_block.split(USER + toml_block.BEGIN + "\n[x]\n")

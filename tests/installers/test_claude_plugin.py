"""The Claude Code plugin and marketplace in this repository load in the real CLI."""

import json
from pathlib import Path

import pytest
from harnesses import require_cli, run, throwaway_home

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "plugin" / "memverbs"


def test_manifests_are_consistent():
    claude = json.loads((PLUGIN / ".claude-plugin" / "plugin.json").read_text())
    codex = json.loads((PLUGIN / ".codex-plugin" / "plugin.json").read_text())
    market = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text())
    assert claude["name"] == codex["name"] == market["plugins"][0]["name"] == "memverbs"
    assert (ROOT / market["plugins"][0]["source"]).resolve() == PLUGIN
    for path in (codex["skills"], codex["mcpServers"], codex["hooks"]):
        assert path.startswith("./") and (PLUGIN / path).exists()
    for name in ("hooks.json", "codex-hooks.json"):
        harness = "claude" if name == "hooks.json" else "codex"
        commands = [h["command"] for groups in json.loads((PLUGIN / "hooks" / name).read_text())["hooks"].values()
                    for g in groups for h in g["hooks"]]
        assert all(c.startswith("memverbs hook ") and c.endswith(f"--harness {harness}") for c in commands)


@pytest.fixture
def claude(tmp_path):
    return require_cli("claude"), throwaway_home(tmp_path)


def test_marketplace_add_and_install(claude):
    cli, env = claude
    home = env["HOME"]
    run([cli, "plugin", "marketplace", "add", str(ROOT)], env, cwd=home)
    run([cli, "plugin", "install", "memverbs@memverbs"], env, cwd=home)
    assert "✔ enabled" in run([cli, "plugin", "list"], env, cwd=home).stdout
    listed = run([cli, "mcp", "list"], env, cwd=home).stdout
    assert "plugin:memverbs:memverbs" in listed and "✔ Connected" in listed

"""`memverbs install codex` against the real Codex CLI: config.toml, hooks.json and trust."""

import json
import subprocess
from pathlib import Path

import pytest
from harnesses import memverbs, require_cli, run, throwaway_home

USER_CONFIG = """model = "gpt-5"  # my model

[mcp_servers.other]
command = "echo"  # keep this comment
args = ["hi"]
"""
USER_HOOKS = '{\n  "hooks": {\n    "Stop": [{"hooks": [{"type": "command", "command": "echo bye"}]}]\n  }\n}\n'


@pytest.fixture
def codex(tmp_path):
    cli = require_cli("codex")
    env = throwaway_home(tmp_path)
    home = Path(env["CODEX_HOME"])
    (home / "config.toml").write_text(USER_CONFIG)
    (home / "hooks.json").write_text(USER_HOOKS)
    return cli, env, home


def hooks_trust(cli, env, cwd):
    """What Codex itself says about the hooks (its app-server's hooks/list)."""
    proc = subprocess.Popen([cli, "app-server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, env=env, cwd=cwd)
    try:
        def send(msg):
            proc.stdin.write(json.dumps(msg) + "\n")
            proc.stdin.flush()

        def reply(i):
            for line in proc.stdout:
                msg = json.loads(line)
                if msg.get("id") == i:
                    return msg

        send({"id": 0, "method": "initialize", "params": {"clientInfo": {"name": "memverbs-test", "version": "0"}}})
        reply(0)
        send({"method": "initialized"})
        send({"id": 1, "method": "hooks/list", "params": {"cwds": [str(cwd)]}})
        return reply(1)
    finally:
        proc.kill()
        proc.wait()


def walk(node):
    if isinstance(node, dict):
        if "trustStatus" in node:
            yield node
        for value in node.values():
            yield from walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from walk(value)


def test_install_registers_and_trusts_then_uninstall_restores_bytes(codex):
    cli, env, home = codex
    run([memverbs(), "install", "codex"], env, cwd=home)
    listed = json.loads(run([cli, "mcp", "list", "--json"], env, cwd=home).stdout)
    ours = next(s for s in listed if s["name"] == "memverbs")
    assert ours["transport"]["args"] == ["serve", "--surface", "verbs"] and ours["enabled"] is True
    assert {s["name"] for s in listed} == {"memverbs", "other"}

    hooks = [h for h in walk(hooks_trust(cli, env, home)) if "memverbs" in json.dumps(h)]
    # SessionStart, UserPromptSubmit, and capture's SessionEnd, Stop and PreCompact: all trusted by Codex itself
    assert len(hooks) == 5 and all(h["trustStatus"] == "trusted" for h in hooks), [(h["key"], h["trustStatus"]) for h in hooks]
    assert sum("hook capture --harness codex" in json.dumps(h) for h in hooks) == 3

    run([memverbs(), "uninstall", "codex"], env, cwd=home)
    assert (home / "config.toml").read_text() == USER_CONFIG
    assert (home / "hooks.json").read_text() == USER_HOOKS
    assert "memverbs" not in run([cli, "mcp", "list"], env, cwd=home).stdout


def test_install_twice_gives_one_entry(codex):
    _cli, env, home = codex
    run([memverbs(), "install", "codex"], env, cwd=home)
    run([memverbs(), "install", "codex"], env, cwd=home)
    text = (home / "config.toml").read_text()
    assert text.count("[mcp_servers.memverbs]") == 1 and text.count("mcp_optional_startup_grace_ms") == 1
    hooks = json.loads((home / "hooks.json").read_text())["hooks"]
    assert len(hooks["SessionStart"]) == 1 and len(hooks["UserPromptSubmit"]) == 1
    assert len(hooks["SessionEnd"]) == 1 and len(hooks["PreCompact"]) == 1 and len(hooks["Stop"]) == 2  # the user's, ours


def test_malformed_config_is_refused_untouched(codex):
    _cli, env, home = codex
    (home / "config.toml").write_text("model = = broken\n")
    proc = run([memverbs(), "install", "codex"], env, cwd=home, check=False)
    assert proc.returncode != 0 and "not valid TOML" in proc.stderr
    assert (home / "config.toml").read_text() == "model = = broken\n"
    assert (home / "hooks.json").read_text() == USER_HOOKS


def test_a_foreign_memverbs_table_is_refused(codex):
    _cli, env, home = codex
    (home / "config.toml").write_text(USER_CONFIG + '\n[mcp_servers.memverbs]\ncommand = "gbrain"\n')
    proc = run([memverbs(), "install", "codex"], env, cwd=home, check=False)
    assert proc.returncode != 0 and "already defined" in proc.stderr

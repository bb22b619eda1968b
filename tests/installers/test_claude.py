"""`memverbs install claude` against the real Claude Code CLI, in a throwaway home."""

import json
from pathlib import Path

import pytest
from harnesses import memverbs, require_cli, run, throwaway_home

FOREIGN_SETTINGS = """{
  // my own settings, with a comment Claude Code tolerates
  "model": "opus",
  "hooks": {
    "SessionStart": [
      {"matcher": "startup", "hooks": [{"type": "command", "command": "echo hello"}]}
    ]
  }
}
"""


@pytest.fixture
def claude(tmp_path):
    cli = require_cli("claude")
    env = throwaway_home(tmp_path)
    return cli, env, Path(env["HOME"])


def mcp_list(cli, env, home):
    return run([cli, "mcp", "list"], env, cwd=home).stdout


def test_install_twice_is_seen_connected_once_and_uninstall_leaves_the_user_intact(claude):
    cli, env, home = claude
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(FOREIGN_SETTINGS)
    run([cli, "mcp", "add", "other", "--scope", "user", "--", "echo", "hi"], env, cwd=home)

    out = run([memverbs(), "install", "claude"], env, cwd=home).stdout
    assert "memverbs installed into claude" in out
    run([memverbs(), "install", "claude"], env, cwd=home)  # twice: still one of each (one cycle: claude calls cost seconds)
    listed = mcp_list(cli, env, home)
    assert listed.count("memverbs:") == 1 and "✔ Connected" in listed.split("memverbs:")[1].splitlines()[0]
    hooks = json.loads("\n".join(line for line in settings.read_text().splitlines() if "//" not in line))["hooks"]
    assert next(g["hooks"][0]["command"] for g in hooks["SessionStart"]) == "echo hello"
    assert "hook session-start --harness claude" in hooks["SessionStart"][1]["hooks"][0]["command"]
    assert "hook heartbeat --harness claude" in hooks["UserPromptSubmit"][0]["hooks"][0]["command"]
    assert len(hooks["SessionStart"]) == 2 and len(hooks["UserPromptSubmit"]) == 1
    for event in ("SessionEnd", "Stop", "PreCompact"):  # capture: wired once each, removed by uninstall
        assert [g["hooks"][0]["command"].endswith("hook capture --harness claude") for g in hooks[event]] == [True]

    run([memverbs(), "uninstall", "claude"], env, cwd=home)
    listed = mcp_list(cli, env, home)
    assert "memverbs" not in listed and "other:" in listed
    assert settings.read_text() == FOREIGN_SETTINGS


def test_malformed_settings_are_refused_untouched(claude):
    _cli, env, home = claude
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": {')
    proc = run([memverbs(), "install", "claude"], env, cwd=home, check=False)
    assert proc.returncode != 0 and "does not parse" in proc.stderr and "fix:" in proc.stderr
    assert settings.read_text() == '{"hooks": {'
    assert "Traceback" not in proc.stderr


def test_dry_run_writes_nothing(claude):
    cli, env, home = claude
    out = run([memverbs(), "install", "claude", "--dry-run"], env, cwd=home).stdout
    assert "claude mcp add memverbs --scope user" in out and "+++ " in out and "hook session-start" in out
    assert not (home / ".claude" / "settings.json").exists()
    assert "memverbs" not in mcp_list(cli, env, home)
    assert not (home / ".memverbs" / "integrations" / "claude" / "receipt.json").exists()


def test_project_scope_writes_mcp_json(claude):
    _cli, env, home = claude
    project = home.parent / "project"
    run([memverbs(), "install", "claude", "--scope", "project"], env, cwd=project)
    entry = json.loads((project / ".mcp.json").read_text())["mcpServers"]["memverbs"]
    assert entry["args"] == ["serve", "--surface", "verbs"]
    assert (project / ".claude" / "settings.json").exists()
    run([memverbs(), "uninstall", "claude"], env, cwd=project)
    assert not (project / ".mcp.json").exists() and not (project / ".claude" / "settings.json").exists()


def test_never_double_wires_across_settings_files(claude):
    _cli, env, home = claude
    project = home.parent / "project"
    run([memverbs(), "install", "claude", "--scope", "project"], env, cwd=project)
    out = run([memverbs(), "install", "claude"], env, cwd=project).stdout
    assert "SessionStart hook not added" in out and "project settings" in out
    user_settings = home / ".claude" / "settings.json"
    assert not user_settings.exists() or "hook session-start" not in user_settings.read_text()


def test_a_foreign_server_named_memverbs_is_not_replaced(claude):
    cli, env, home = claude
    run([cli, "mcp", "add", "memverbs", "--scope", "user", "--", "some-other-tool"], env, cwd=home)
    proc = run([memverbs(), "install", "claude"], env, cwd=home, check=False)
    assert proc.returncode != 0 and "did not register" in proc.stderr
    assert "some-other-tool" in mcp_list(cli, env, home)


def test_the_plugin_provides_the_server_so_install_registers_no_second_one(claude):
    cli, env, home = claude
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"enabledPlugins": {"memverbs@memverbs": true}}\n')

    out = run([memverbs(), "install", "claude"], env, cwd=home).stdout
    assert "Server not registered: the memverbs Claude Code plugin (memverbs@memverbs) already provides it" in out
    assert "memverbs:" not in mcp_list(cli, env, home)
    assert "hook session-start" not in settings.read_text()  # the plugin brings its hooks too

    doctor = json.loads(run([memverbs(), "doctor", "--json"], env, cwd=home, check=False).stdout)
    plugin = next(c for c in doctor["checks"] if c["name"] == "claude-plugin")
    assert plugin["status"] == "ok" and "memverbs@memverbs" in plugin["detail"]


def test_doctor_warns_when_the_plugin_and_a_registration_both_serve(claude):
    _cli, env, home = claude
    run([memverbs(), "install", "claude", "--no-hooks"], env, cwd=home)
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(exist_ok=True)
    settings.write_text('{"enabledPlugins": {"memverbs@memverbs": true}}\n')
    doctor = json.loads(run([memverbs(), "doctor", "--json"], env, cwd=home, check=False).stdout)
    plugin = next(c for c in doctor["checks"] if c["name"] == "claude-plugin")
    assert plugin["status"] == "warn" and "claude mcp remove memverbs" in plugin["fix"]

"""`memverbs doctor` per harness: installed, still wired, trusted, hooks healthy — with the fix."""

import json
from pathlib import Path

import pytest
from harnesses import memverbs, require_cli, run, throwaway_home


def doctor(env, cwd) -> dict:
    proc = run([memverbs(), "doctor", "--json"], env, cwd=cwd, check=False)
    assert "Traceback" not in proc.stderr
    return {c["name"]: c for c in json.loads(proc.stdout)["checks"]}


@pytest.fixture
def codex(tmp_path):
    require_cli("codex")
    env = throwaway_home(tmp_path)
    run([memverbs(), "install", "codex"], env, cwd=env["HOME"])
    return env, Path(env["CODEX_HOME"])


def test_a_healthy_install_reports_ok(codex):
    env, _ = codex
    checks = doctor(env, env["HOME"])
    assert checks["harness:codex"]["status"] == "ok" and "user scope" in checks["harness:codex"]["detail"]
    assert checks["hooks:codex"]["status"] == "ok"
    assert "harness:claude" not in checks  # not installed there: nothing to say


def test_untrusted_hooks_are_named_with_the_fix(codex):
    env, home = codex
    hooks = json.loads((home / "hooks.json").read_text())
    hooks["hooks"]["SessionStart"].insert(0, {"hooks": [{"type": "command", "command": "echo mine"}]})
    (home / "hooks.json").write_text(json.dumps(hooks))  # ours moved: its trust key no longer matches
    check = doctor(env, env["HOME"])["harness:codex"]
    assert check["status"] == "fail" and "not trusted" in check["detail"] and "memverbs install codex" in check["fix"]
    run([memverbs(), "install", "codex"], env, cwd=env["HOME"])
    assert doctor(env, env["HOME"])["harness:codex"]["status"] == "ok"


def test_a_removed_entry_and_a_broken_file_are_named(codex):
    env, home = codex
    config = home / "config.toml"
    config.write_text(config.read_text().replace("[mcp_servers.memverbs]", "[mcp_servers.memverbs_gone]"))
    assert doctor(env, env["HOME"])["harness:codex"]["status"] == "ok"  # the block is still ours
    config.write_text("broken = = toml")
    check = doctor(env, env["HOME"])["harness:codex"]
    assert check["status"] == "fail" and "not valid TOML" in check["detail"]


def test_failing_hook_runs_are_reported(codex):
    env, _home = codex
    (Path(env["MEMVERBS_HOME"]) / "brain.db").unlink()
    run([memverbs(), "hook", "session-start", "--harness", "codex"], env, cwd=env["HOME"], input='{"session_id": "s"}')
    checks = doctor(env, env["HOME"])
    assert checks["hooks:codex"]["status"] == "warn" and "no_brain" in checks["hooks:codex"]["detail"]
    assert "memverbs init" in checks["hooks:codex"]["fix"]

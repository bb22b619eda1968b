"""The hook launcher file the installers write (hooks/launcher.py): each harness's hooks run it by a
short command, an install of an earlier form is upgraded in place, and the file goes with the last
receipt that records it. Real harness CLIs, real installs, the hooks run as the harness runs them."""

import json
import shlex
import subprocess
from pathlib import Path

import payloads
import pytest
from harnesses import memverbs, require_cli, run, throwaway_home

from memverbs.hooks.launcher import LAUNCHER_MARK, bootstrap_argv
from memverbs.installers.base import hook_moment


@pytest.fixture
def world(tmp_path):
    require_cli("codex")
    require_cli("grok")
    env = throwaway_home(tmp_path)
    home = Path(env["HOME"])
    run([memverbs(), "remember", "Dana owns the billing service", "--provenance", "t", "--entity", "people/dana"], env, cwd=home)
    return env, home


def commands(path: Path) -> list[str]:
    doc = json.loads(path.read_text())
    return [h["command"] for groups in doc["hooks"].values() for g in groups for h in g["hooks"]]


def session_start(command: str, env: dict, cwd: Path) -> subprocess.CompletedProcess:
    payload = dict(payloads.CLAUDE_SESSION_START, cwd=str(cwd))
    return subprocess.run(["/bin/sh", "-c", command], input=json.dumps(payload), capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=60)


def test_each_hook_is_a_short_command_that_runs_the_launcher(world):
    env, home = world
    run([memverbs(), "install", "codex"], env, cwd=home)
    launcher = home / ".memverbs" / "bin" / "memverbs-hook"
    ours = [c for c in commands(home / ".codex" / "hooks.json") if hook_moment(c)]
    assert ours and all(c.startswith(f"{launcher} ") and len(c) <= 160 for c in ours), ours
    assert LAUNCHER_MARK in launcher.read_text()
    start = next(c for c in ours if hook_moment(c) == "session-start")
    proc = session_start(start.replace("--harness codex", "--harness claude"), env, home)
    assert proc.returncode == 0 and "Dana owns the billing service" in proc.stdout, proc.stderr


def test_an_install_of_the_earlier_one_liner_is_upgraded_and_uninstalled_cleanly(world):
    env, home = world
    hooks = home / ".codex" / "hooks.json"
    before = hooks.read_text() if hooks.exists() else None
    run([memverbs(), "install", "codex"], env, cwd=home)
    fresh = hooks.read_text()
    # What an earlier memverbs wrote: the bootstrap one-liner in every hook, and no launcher step.
    old = shlex.join(bootstrap_argv())
    launcher = home / ".memverbs" / "bin" / "memverbs-hook"
    hooks.write_text(hooks.read_text().replace(json.dumps(str(launcher))[1:-1], json.dumps(old)[1:-1]))
    receipt = home / ".memverbs" / "integrations" / "codex" / "receipt.json"
    record = json.loads(receipt.read_text())
    record["steps"] = [s for s in record["steps"] if s.get("path") != str(launcher)]
    receipt.write_text(json.dumps(record))
    launcher.unlink()
    assert all(" -I -S -c " in c for c in commands(hooks) if hook_moment(c))
    run([memverbs(), "install", "codex"], env, cwd=home)  # the upgrade: each old hook replaced, none doubled
    assert hooks.read_text() == fresh and launcher.exists()
    run([memverbs(), "uninstall", "codex"], env, cwd=home)
    assert not launcher.exists() and not launcher.parent.exists()
    assert (hooks.read_text() if hooks.exists() else None) == before  # as it was before the first install


def test_the_launcher_stays_while_another_harness_runs_it(world):
    env, home = world
    launcher = home / ".memverbs" / "bin" / "memverbs-hook"
    run([memverbs(), "install", "codex"], env, cwd=home)
    run([memverbs(), "install", "grok"], env, cwd=home)
    run([memverbs(), "uninstall", "codex"], env, cwd=home)
    assert launcher.exists()  # grok's hooks still run it
    grok_hooks = [c for c in commands(home / ".grok" / "hooks" / "memverbs.json") if hook_moment(c) == "session-start"]
    proc = session_start(grok_hooks[0].replace("--harness grok", "--harness claude"), env, home)
    assert proc.returncode == 0 and "Dana owns the billing service" in proc.stdout, proc.stderr
    run([memverbs(), "uninstall", "grok"], env, cwd=home)
    assert not launcher.exists()


def test_doctor_says_when_the_launcher_is_gone(world):
    env, home = world
    run([memverbs(), "install", "codex"], env, cwd=home)
    (home / ".memverbs" / "bin" / "memverbs-hook").unlink()
    proc = run([memverbs(), "doctor"], env, cwd=home, check=False)
    assert "memverbs-hook is gone" in proc.stdout and "memverbs install codex" in proc.stdout, proc.stdout

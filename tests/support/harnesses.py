"""Real harness CLIs in throwaway homes, for installer and end-to-end tests.

A CLI that is not on PATH skips its tests locally; CI sets
MEMVERBS_REQUIRE_HARNESSES=1 (after installing them from the npm registry), where a
missing CLI fails instead of hiding behind a skip.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from runcli import run_cli
from tiers import require_e2e


def require_cli(name: str) -> str:
    require_e2e(f"the {name} CLI")
    found = shutil.which(name)
    if found:
        return found
    if os.environ.get("MEMVERBS_REQUIRE_HARNESSES") == "1":
        pytest.fail(f"{name} is not on PATH but MEMVERBS_REQUIRE_HARNESSES=1")
    pytest.skip(f"{name} is not installed")


def throwaway_home(root: Path) -> dict:
    """An environment whose HOME (and every harness home) is under `root`, with an initialised brain."""
    home = root / "home"
    home.mkdir(parents=True)
    project = root / "project"
    project.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMVERBS_", "CODEX_", "CLAUDE_", "GROK_", "XDG_"))}
    env.update(
        HOME=str(home),
        MEMVERBS_HOME=str(home / ".memverbs"),
        CODEX_HOME=str(home / ".codex"),
        XDG_CONFIG_HOME=str(home / ".config"),
        PATH=os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")]),
        DISABLE_AUTOUPDATER="1",
        DISABLE_TELEMETRY="1",
        DISABLE_ERROR_REPORTING="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        OPENCODE_DISABLE_AUTOUPDATE="1",
        OPENCODE_DISABLE_MODELS_FETCH="1",
        OPENCODE_DISABLE_LSP_DOWNLOAD="1",
        OPENCODE_DISABLE_SHARE="1",
        OPENCODE_DISABLE_DEFAULT_PLUGINS="1",
    )
    (home / ".codex").mkdir()
    run([memverbs(), "init"], env, cwd=project)
    return env


def memverbs() -> str:
    beside = Path(sys.executable).parent / "memverbs"
    return str(beside) if beside.exists() else "memverbs"


# What needs the real process: hooks read and write file descriptors 0 and 1 themselves, and
# `serve` speaks MCP on them.
OWN_PROCESS = {"hook", "serve"}


def run(argv: list[str], env: dict, *, cwd: Path | str | None = None, check: bool = True, timeout: float = 120, input: str | None = None):
    """Run a command as a subprocess would. `memverbs` itself runs in process through `main(argv)`
    (tests/support/runcli.py), except the commands in OWN_PROCESS; the harness CLIs it drives are
    real processes either way."""
    if argv[0] == memverbs() and not OWN_PROCESS & set(argv[1:2]):
        proc = run_cli(*argv[1:], env=env, cwd=cwd, stdin=input)
    else:
        proc = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout, input=input,
                              stdin=None if input is not None else subprocess.DEVNULL)
    if check and proc.returncode != 0:
        raise AssertionError(f"{argv} exited {proc.returncode}\nstdout: {proc.stdout}\nstderr: {proc.stderr}")
    return proc

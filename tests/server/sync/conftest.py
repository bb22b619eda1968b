"""Sync tests drive the real CLI entry point in-process against a real brain and real files
(on every backend, as the rest of tests/server: the sync state lives in the brain)."""

from __future__ import annotations

import json
import subprocess

import pytest

from memverbs.cli.main import main


@pytest.fixture
def cli(home, capsys):
    """Run `memverbs ARGS…` in-process; returns (exit code, stdout, stderr)."""

    def run(*args: str):
        code = main([str(a) for a in args])
        out = capsys.readouterr()
        return code, out.out, out.err

    return run


@pytest.fixture
def cli_json(cli):
    def run(*args: str):
        code, out, _ = cli(*args, "--json")
        return code, json.loads(out)

    return run


@pytest.fixture
def watcher(env, memverbs_cmd):
    """Start `memverbs sync ROOT --watch` as a real process; returns once its start-up pass is done
    (events from then on are live). Killed at the test's end."""
    procs = []

    def start(root, *extra):
        proc = subprocess.Popen([*memverbs_cmd, "sync", str(root), "--watch", "--json", *extra],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        procs.append(proc)
        first = json.loads(proc.stdout.readline())
        assert first["event"] == "start", first
        return proc

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)

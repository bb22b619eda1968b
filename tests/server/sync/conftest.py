"""Sync tests drive the real CLI entry point in-process against a real brain and real files
(on every backend, as the rest of tests/server: the sync state lives in the brain)."""

from __future__ import annotations

import json

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

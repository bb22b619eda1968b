"""Shared fixtures: a real brain in a throwaway home, and callers of every posture."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from memverbs.server.home import Home
from memverbs.server.runtime import Runtime

from helpers import Client, init_home


@pytest.fixture
def home(tmp_path, monkeypatch) -> Home:
    """An initialised MEMVERBS_HOME with an empty brain; the environment points at it."""
    root = tmp_path / "home"
    monkeypatch.setenv("MEMVERBS_HOME", str(root))
    for var in ("MEMVERBS_SOURCE", "MEMVERBS_MCP_SURFACE", "MEMVERBS_MCP_FORCE_SURFACE", "MEMVERBS_REMOTE_PRIVATE_PAGES"):
        monkeypatch.delenv(var, raising=False)
    return init_home(root)


@pytest.fixture
def runtime(home):
    rt = Runtime(home)
    yield rt
    rt.close()


@pytest.fixture
def local(runtime) -> Client:
    """The trusted in-process caller (CLI / hooks): lane 'local'."""
    return Client(runtime.local_dispatcher())


@pytest.fixture
def remote(runtime) -> Client:
    """An untrusted MCP caller on the full surface (what stdio clients are)."""
    return Client(runtime.mcp_dispatcher("full"))


@pytest.fixture
def memverbs_cmd() -> list[str]:
    """The command that runs this memverbs in a subprocess."""
    exe = shutil.which("memverbs")
    return [exe] if exe else [sys.executable, "-m", "memverbs"]


@pytest.fixture
def env(home) -> dict:
    e = dict(os.environ)
    e["MEMVERBS_HOME"] = str(home.root)
    return e


SNAPSHOTS = Path(__file__).parent / "snapshots"

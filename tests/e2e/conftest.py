"""End to end: real harness CLIs, our installer and hooks, a fake model API on 127.0.0.1.

Each test gets a throwaway home whose brain has a standing entity configured
(`hooks.entities = people/alice`), her page and one fact (`world`), and a `FakeModel`
that is always shut down (`fake_api`). At teardown no process may still carry the
throwaway HOME.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from fake_model import FakeModel
from harness_e2e import ALICE_PAGE, ENTITY, SEED_FACT, World, kill, processes_with_home
from harnesses import throwaway_home

CAPTURE_GRACE_S = 20


@pytest.fixture
def world(tmp_path):
    env = throwaway_home(tmp_path)
    w = World(env, Path(env["HOME"]), tmp_path / "project")
    w.memverbs("config", "set", "hooks.entities", ENTITY)
    w.memverbs("put-page", ENTITY, input=ALICE_PAGE)
    w.remember(SEED_FACT)
    yield w
    # A session's end starts detached capture workers (bounded by their own clocks): give them a
    # moment to finish; one still running after that is a stray.
    deadline = time.monotonic() + CAPTURE_GRACE_S
    while processes_with_home(w.home) and time.monotonic() < deadline:
        time.sleep(0.1)
    strays = processes_with_home(w.home)
    for pid in strays:
        kill(pid)
    assert not strays, f"processes still running with the throwaway HOME (killed now): {strays}"


@pytest.fixture
def fake_api():
    with FakeModel() as api:
        yield api
    assert not api.errors, api.errors


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """On a failure, show what the hooks did and how each harness run ended."""
    outcome = yield
    report = outcome.get_result()
    world = getattr(item, "funcargs", {}).get("world")
    if report.when != "call" or not report.failed or world is None:
        return
    report.sections.append(("memverbs hooks log", "\n".join(json.dumps(e) for e in world.hook_log())))
    for n, proc in enumerate(world.runs):
        report.sections.append((f"harness run {n}: {' '.join(proc.args[:3])}",
                                f"exit {proc.returncode}\nstdout: {proc.stdout[-2000:]}\nstderr: {proc.stderr[-2000:]}"))

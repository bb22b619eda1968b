"""One watcher per folder, a claim that a `kill -9` does not leave stuck, and `sync --watch` alone watching
only this machine's folders (MEMVERBS_HOST stands in for a second machine sharing the brain)."""

from __future__ import annotations

import json
import signal
import subprocess

import pytest
from vaults import wait_for, write

from memverbs.server.runtime import Runtime
from memverbs.server.sync.state import STALE_MS, SyncState
from memverbs.server.timeparse import now_ms

pytestmark = pytest.mark.slow




@pytest.fixture
def start(env, memverbs_cmd):
    procs = []

    def run(*args, host: str | None = None):
        proc = subprocess.Popen([*memverbs_cmd, "sync", *map(str, args), "--watch", "--json"],
                                env={**env, **({"MEMVERBS_HOST": host} if host else {})},
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        procs.append(proc)
        return proc

    yield run
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)


def started(proc) -> None:
    first = json.loads(proc.stdout.readline())
    assert first["event"] == "start", first


def test_a_second_watcher_on_a_watched_folder_is_refused_and_a_killed_ones_claim_is_taken_over(tmp_path, start, local):
    root = tmp_path / "v"
    write(root / "a.md", "# A\n")
    first = start(root)
    started(first)
    second = start(root)
    _out, err = second.communicate(timeout=60)
    assert second.returncode == 1 and f"is already watched, by pid {first.pid} on " in err and "One watcher per folder" in err
    # kill -9 leaves the claim in the brain, but a dead pid on this machine is stale at once.
    first.send_signal(signal.SIGKILL)
    first.wait(10)
    third = start(root)
    started(third)
    write(root / "b.md", "# B\nzebraword\n")
    wait_for(lambda: local.ok("search", query="zebraword")["results"], "the new watcher to apply a save")


def test_another_machines_claim_is_taken_over_once_its_heartbeat_is_stale(tmp_path, home, start, cli_json):
    root = tmp_path / "v"
    write(root / "a.md", "# A\n")
    cli_json("sync", root)
    rt = Runtime(home)
    try:
        state = SyncState(rt.brain(), rt.source)
        folder = state.folders()[0]
        # A watcher on another machine: its pid means nothing here, only its heartbeat counts.
        assert rt.brain().sync_watcher_claim(folder.id, (None, None, None), (999_999, "laptop-b", now_ms()))
        refused = start(root)
        _out, err = refused.communicate(timeout=60)
        assert refused.returncode == 1 and "already watched, by pid 999999 on laptop-b" in err
        assert rt.brain().sync_watcher_beat(folder.id, 999_999, "laptop-b", now_ms() - STALE_MS - 1_000)  # it went silent
    finally:
        rt.close()
    taken = start(root)
    started(taken)
    status = wait_for(lambda: [f for f in cli_json("sync", "--status")[1]["folders"] if f["watching"]], "the heartbeat")
    assert status[0]["watcher_pid"] == taken.pid


def test_watch_alone_watches_only_this_machines_folders(tmp_path, start, cli_json, env, memverbs_cmd):
    mine, theirs = tmp_path / "mine", tmp_path / "theirs"
    write(mine / "a.md", "# Mine\n")
    write(theirs / "b.md", "# Theirs\n")
    cli_json("sync", mine, "--prefix", "me")
    done = subprocess.run([*memverbs_cmd, "sync", str(theirs), "--prefix", "them", "--json"],
                          env={**env, "MEMVERBS_HOST": "teammate-box"}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    proc = start()
    started(proc)
    status = wait_for(lambda: [f for f in cli_json("sync", "--status")[1]["folders"] if f["watching"]], "the heartbeat")
    assert [f["root"] for f in status] == [str(mine)]
    proc.send_signal(signal.SIGTERM)
    _out, err = proc.communicate(timeout=10)
    assert f"not watching {theirs}: it is synced from teammate-box" in err
